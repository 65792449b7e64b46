/* SPDX-License-Identifier: BSD-3-Clause */
/* The ABI items as dmaconn declares them. */
#include <stddef.h>

#include "nvml_abi_items.h"
#include "nvml_api.h"

#define C_(x) { #x, (long long)(x) },
#define S_(t) { "sizeof(" #t ")", (long long)sizeof(t) },
#define O_(t, m) { "offsetof(" #t ", " #m ")", (long long)offsetof(t, m) },
const struct abi_item abi_ours[] = { NVML_ABI_ITEMS(C_, S_, O_) };
const size_t abi_ours_count = sizeof(abi_ours) / sizeof(abi_ours[0]);
const struct abi_item abi_ours_maxima[] = { NVML_ABI_MAXIMA(C_) };
const struct abi_item abi_ours_newest[] = { NVML_ABI_NEWEST_ITEMS(C_, S_, O_) };
