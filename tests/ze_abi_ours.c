/* SPDX-License-Identifier: BSD-3-Clause */
/* The Level Zero ABI items as dmaconn declares them (src/backends/level_zero/ze_api.h). */
#include "ze_abi_items.h"
#include "ze_api.h"

extern const struct abi_item ze_abi_ours[];
extern const size_t ze_abi_ours_count;
const struct abi_item ze_abi_ours[] = { ZE_ABI_ITEMS(ABI_CONSTANT, ABI_SIZE, ABI_OFFSET) };
const size_t ze_abi_ours_count = ABI_COUNT_OF(ze_abi_ours);
