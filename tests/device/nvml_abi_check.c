/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves dmaconn's NVML declarations against NVIDIA's nvml.h: this file sees
 * only the real header.  Constants, sizes and offsets are compared with the
 * same items expanded against src/backends/nvml_api.h (nvml_abi_ours.c); each
 * function of NVML_ALL_FUNCTIONS must have exactly the real prototype.
 * Build: cc -I<cuda>/include -Isrc/backends tests/device/nvml_abi_check.c
 *        tests/device/nvml_abi_ours.c
 */
#include <nvml.h>
#include <stddef.h>
#include <stdio.h>

#include "nvml_abi_items.h"
#include "nvml_functions.h"

#define SAME_TYPE_(fn, ret, params, required)                                           \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&fn), ret(*) params),    \
		       "prototype of " #fn " differs from nvml.h");
NVML_ALL_FUNCTIONS(SAME_TYPE_)

#define C_(x) { #x, (long long)(x) },
#define S_(t) { "sizeof(" #t ")", (long long)sizeof(t) },
#define O_(t, m) { "offsetof(" #t ", " #m ")", (long long)offsetof(t, m) },
static const struct abi_item abi_real[] = { NVML_ABI_ITEMS(C_, S_, O_) };

extern const struct abi_item abi_ours[];
extern const size_t abi_ours_count;

int main(void)
{
	size_t n = sizeof(abi_real) / sizeof(abi_real[0]), bad = 0;
	if (n != abi_ours_count) {
		printf("FAIL item lists differ in length: %zu vs %zu\n", n, abi_ours_count);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		int same = abi_real[i].value == abi_ours[i].value;
		bad += !same;
		if (!same)
			printf("FAIL %s: nvml.h %lld, dmaconn %lld\n", abi_real[i].name, abi_real[i].value,
			       abi_ours[i].value);
	}
	size_t fns = 0;
#define COUNT_(fn, ret, params, required) fns++;
	NVML_ALL_FUNCTIONS(COUNT_)
	printf("nvml ABI: %zu constants/sizes/offsets compared, %zu mismatches; %zu prototypes "
	       "identical (checked at compile time) (NVML_API_VERSION %d)\n",
	       n, bad, fns, NVML_API_VERSION);
	return bad != 0;
}
