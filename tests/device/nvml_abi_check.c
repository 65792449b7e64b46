/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves dmaconn's NVML declarations against NVIDIA's nvml.h: this file sees
 * only the real header.  Constants, sizes and offsets are compared with the
 * same items expanded against src/backends/nvml_api.h (nvml_abi_ours.c); each
 * function of NVML_ALL_FUNCTIONS must have exactly the real prototype.  The
 * maxima (nvml_abi_items.h) must equal the newest header's, built with
 * -DDMACONN_NVML_NEWEST='"VERSION"' (its nvidia-nvml-dev version), and be at
 * least any other header's.
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
NVML_CORE_FUNCTIONS(SAME_TYPE_)
NVML_MIG_FUNCTIONS(SAME_TYPE_)
#ifdef DMACONN_NVML_NEWEST
NVML_NEWEST_FUNCTIONS(SAME_TYPE_)
#endif

#define C_(x) { #x, (long long)(x) },
#define S_(t) { "sizeof(" #t ")", (long long)sizeof(t) },
#define O_(t, m) { "offsetof(" #t ", " #m ")", (long long)offsetof(t, m) },
static const struct abi_item abi_real[] = { NVML_ABI_ITEMS(C_, S_, O_) };
static const struct abi_item abi_real_maxima[] = { NVML_ABI_MAXIMA(C_) };
#ifdef DMACONN_NVML_NEWEST
static const struct abi_item abi_real_newest[] = { NVML_ABI_NEWEST_ITEMS(C_, S_, O_) };
#endif

extern const struct abi_item abi_ours[], abi_ours_maxima[], abi_ours_newest[];
extern const size_t abi_ours_count;

/* The maxima: equal to the newest header's, at least an older one's. */
static size_t check_maxima(int newest)
{
	size_t bad = 0;
	for (size_t i = 0; i < sizeof(abi_real_maxima) / sizeof(abi_real_maxima[0]); i++) {
		long long real = abi_real_maxima[i].value, ours = abi_ours_maxima[i].value;
		int ok = newest ? real == ours : real <= ours;
		bad += !ok;
		if (!ok)
			printf("FAIL %s: nvml.h %lld, dmaconn %lld (%s)\n", abi_real_maxima[i].name, real, ours,
			       newest ? "dmaconn must declare the newest header's value" : "a header may not know more than dmaconn");
		else if (real != ours)
			printf("note %s: nvml.h %lld, dmaconn %lld (an older header; dmaconn declares the newest one's)\n",
			       abi_real_maxima[i].name, real, ours);
	}
	return bad;
}

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
#ifdef DMACONN_NVML_NEWEST
	const char *header = "nvidia-nvml-dev " DMACONN_NVML_NEWEST ", the newest dmaconn declares";
	bad += check_maxima(1);
	size_t extra = sizeof(abi_real_newest) / sizeof(abi_real_newest[0]);
	for (size_t i = 0; i < extra; i++) {
		int same = abi_real_newest[i].value == abi_ours_newest[i].value;
		bad += !same;
		if (!same)
			printf("FAIL %s: nvml.h %lld, dmaconn %lld\n", abi_real_newest[i].name, abi_real_newest[i].value,
			       abi_ours_newest[i].value);
	}
#else
	const char *header = "any version: maxima at least the header's";
	bad += check_maxima(0);
	size_t extra = 0;
#endif
	n += extra + sizeof(abi_real_maxima) / sizeof(abi_real_maxima[0]);
	size_t fns = 0;
#define COUNT_(fn, ret, params, required) fns++;
	NVML_CORE_FUNCTIONS(COUNT_)
	NVML_MIG_FUNCTIONS(COUNT_)
#ifdef DMACONN_NVML_NEWEST
	NVML_NEWEST_FUNCTIONS(COUNT_)
#endif
	printf("nvml ABI: %zu constants/sizes/offsets compared, %zu mismatches; %zu prototypes "
	       "identical (checked at compile time) (NVML_API_VERSION %d; nvml.h of %s)\n",
	       n, bad, fns, NVML_API_VERSION, header);
	return bad != 0;
}
