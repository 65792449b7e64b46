/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves dmaconn's Level Zero declarations against Intel's ze_api.h (Debian:
 * libze-dev): this file sees only the real header.  Constants, sizes and
 * offsets are compared with the same items expanded against
 * src/backends/level_zero/ze_api.h (ze_abi_ours.c); each function of ZE_FUNCTIONS must
 * have exactly the real prototype, checked at compile time.  CTest builds
 * and runs it wherever level_zero/ze_api.h is found.
 */
#include <level_zero/ze_api.h>
#include "ze_abi_items.h"
#include "ze_functions.h"

ZE_FUNCTIONS(ABI_SAME_PROTOTYPE)

/* dmaconn declares every enumeration as uint32_t: Level Zero's are 32 bits. */
_Static_assert(sizeof(ze_result_t) == 4 && (ze_result_t)-1 > 0, "ze_result_t is not an unsigned 32-bit type");

static const struct abi_item abi_real[] = { ZE_ABI_ITEMS(ABI_CONSTANT, ABI_SIZE, ABI_OFFSET) };

extern const struct abi_item ze_abi_ours[];
extern const size_t ze_abi_ours_count;

int main(void)
{
	size_t n = ABI_COUNT_OF(abi_real);
	char what[64];
	snprintf(what, sizeof(what), "ZE_API_VERSION_CURRENT %d.%d", ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT),
		 ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT));
	return abi_done("Level Zero", n, abi_compare("ze_api.h", abi_real, n, ze_abi_ours, ze_abi_ours_count),
			0 ZE_FUNCTIONS(ABI_COUNT), what);
}
