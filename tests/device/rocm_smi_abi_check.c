/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves dmaconn's ROCm SMI declarations (src/backends/rocm_smi_api.h)
 * against AMD's <rocm_smi/rocm_smi.h>.  Built twice: with DMACONN_ABI_OURS
 * it expands the constants and sizes against dmaconn's header; without, it
 * sees only the real header, checks every prototype of RSMI_FUNCTIONS at
 * compile time and compares the two lists when run.
 * Build: cc -Isrc/backends tests/device/rocm_smi_abi_check.c (twice, see
 *        tests/CMakeLists.txt); Debian's librocm-smi-dev has the header.
 */
#include <stddef.h>
#include <stdio.h>

struct abi_item {
	const char *name;
	long long value;
};

#ifdef DMACONN_ABI_OURS
#include "rocm_smi_api.h"

#define C_(x) { #x, (long long)(x) },
#define S_(t) { "sizeof(" #t ")", (long long)sizeof(t) },
extern const struct abi_item rsmi_abi_ours[];
extern const size_t rsmi_abi_ours_count;
const struct abi_item rsmi_abi_ours[] = { RSMI_ABI_ITEMS(C_, S_) };
const size_t rsmi_abi_ours_count = sizeof(rsmi_abi_ours) / sizeof(rsmi_abi_ours[0]);

#else
#include <rocm_smi/rocm_smi.h>
#define DMACONN_RSMI_REAL_HEADER
#include "rocm_smi_api.h"

#define SAME_TYPE_(fn, ret, params, required)                                           \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&fn), ret(*) params),    \
		       "prototype of " #fn " differs from rocm_smi.h");
RSMI_FUNCTIONS(SAME_TYPE_)

#define C_(x) { #x, (long long)(x) },
#define S_(t) { "sizeof(" #t ")", (long long)sizeof(t) },
static const struct abi_item abi_real[] = { RSMI_ABI_ITEMS(C_, S_) };

extern const struct abi_item rsmi_abi_ours[];
extern const size_t rsmi_abi_ours_count;

int main(void)
{
	size_t n = sizeof(abi_real) / sizeof(abi_real[0]), bad = 0, fns = 0;
	if (n != rsmi_abi_ours_count) {
		printf("FAIL item lists differ in length: %zu vs %zu\n", n, rsmi_abi_ours_count);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		int same = abi_real[i].value == rsmi_abi_ours[i].value;
		bad += !same;
		if (!same)
			printf("FAIL %s: rocm_smi.h %lld, dmaconn %lld\n", abi_real[i].name,
			       abi_real[i].value, rsmi_abi_ours[i].value);
	}
#define COUNT_(fn, ret, params, required) fns++;
	RSMI_FUNCTIONS(COUNT_)
	printf("rocm_smi ABI: %zu constants/sizes compared, %zu mismatches; %zu prototypes identical "
	       "(checked at compile time)\n%zu passed, %zu failed\n",
	       n, bad, fns, n - bad, bad);
	return bad != 0;
}
#endif
