/* SPDX-License-Identifier: BSD-3-Clause */
/* The ABI items as dmaconn declares them. */
#include "nvml_abi_items.h"
#include "nvml_api.h"

const struct abi_item abi_ours[] = { NVML_ABI_ITEMS(ABI_CONSTANT, ABI_SIZE, ABI_OFFSET) };
const size_t abi_ours_count = ABI_COUNT_OF(abi_ours);
const struct abi_item abi_ours_maxima[] = { NVML_ABI_MAXIMA(ABI_CONSTANT) };
const struct abi_item abi_ours_newest[] = { NVML_ABI_NEWEST_ITEMS(ABI_CONSTANT, ABI_SIZE, ABI_OFFSET) };
