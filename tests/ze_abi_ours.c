/* SPDX-License-Identifier: BSD-3-Clause */
/* The Level Zero ABI items as dmaconn declares them (src/backends/ze_api.h). */
#include <stddef.h>

#include "ze_abi_items.h"
#include "ze_api.h"

#define C_(x) { #x, (long long)(x) },
#define S_(t) { "sizeof(" #t ")", (long long)sizeof(t) },
#define O_(t, m) { "offsetof(" #t ", " #m ")", (long long)offsetof(t, m) },
extern const struct abi_item ze_abi_ours[];
extern const size_t ze_abi_ours_count;
const struct abi_item ze_abi_ours[] = { ZE_ABI_ITEMS(C_, S_, O_) };
const size_t ze_abi_ours_count = sizeof(ze_abi_ours) / sizeof(ze_abi_ours[0]);
