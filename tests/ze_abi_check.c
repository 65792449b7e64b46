/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves dmaconn's Level Zero declarations against Intel's ze_api.h (Debian:
 * libze-dev): this file sees only the real header.  Constants, sizes and
 * offsets are compared with the same items expanded against
 * src/backends/ze_api.h (ze_abi_ours.c); each function of ZE_FUNCTIONS must
 * have exactly the real prototype, checked at compile time.  CTest builds
 * and runs it wherever level_zero/ze_api.h is found.
 */
#include <level_zero/ze_api.h>
#include <stddef.h>
#include <stdio.h>

#include "ze_abi_items.h"
#include "ze_functions.h"

#define SAME_TYPE_(fn, ret, params, required)                                           \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&fn), ret(*) params),    \
		       "prototype of " #fn " differs from ze_api.h");
ZE_FUNCTIONS(SAME_TYPE_)

/* dmaconn declares every enumeration as uint32_t: Level Zero's are 32 bits. */
_Static_assert(sizeof(ze_result_t) == 4 && (ze_result_t)-1 > 0, "ze_result_t is not an unsigned 32-bit type");

#define C_(x) { #x, (long long)(x) },
#define S_(t) { "sizeof(" #t ")", (long long)sizeof(t) },
#define O_(t, m) { "offsetof(" #t ", " #m ")", (long long)offsetof(t, m) },
static const struct abi_item abi_real[] = { ZE_ABI_ITEMS(C_, S_, O_) };

extern const struct abi_item ze_abi_ours[];
extern const size_t ze_abi_ours_count;

int main(void)
{
	size_t n = sizeof(abi_real) / sizeof(abi_real[0]), bad = 0;
	if (n != ze_abi_ours_count) {
		printf("FAIL item lists differ in length: %zu vs %zu\n", n, ze_abi_ours_count);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		int same = abi_real[i].value == ze_abi_ours[i].value;
		bad += !same;
		if (!same)
			printf("FAIL %s: ze_api.h %lld, dmaconn %lld\n", abi_real[i].name, abi_real[i].value,
			       ze_abi_ours[i].value);
	}
	size_t fns = 0;
#define COUNT_(fn, ret, params, required) fns++;
	ZE_FUNCTIONS(COUNT_)
	printf("Level Zero ABI: %zu constants/sizes/offsets compared, %zu mismatches; %zu prototypes "
	       "identical (checked at compile time) (ZE_API_VERSION_CURRENT %d.%d)\n",
	       n, bad, fns, ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT), ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT));
	return bad != 0;
}
