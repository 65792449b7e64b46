/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves dmaconn's NVML declarations against NVIDIA's nvml.h: this file sees
 * only the real header.  Constants, sizes and offsets are compared with the
 * same items expanded against src/backends/nvml/nvml_api.h (nvml_abi_ours.c); each
 * function of NVML_ALL_FUNCTIONS must have exactly the real prototype.  The
 * maxima (nvml_abi_items.h) must equal the newest header's, built with
 * -DDMACONN_NVML_NEWEST='"VERSION"' (its nvidia-nvml-dev version), and be at
 * least any other header's.
 * Build: cc -I<cuda>/include -Isrc/backends tests/device/nvml_abi_check.c
 *        tests/device/nvml_abi_ours.c
 */
#include <nvml.h>
#include "nvml_abi_items.h"
#include "nvml_functions.h"

NVML_CORE_FUNCTIONS(ABI_SAME_PROTOTYPE)
NVML_MIG_FUNCTIONS(ABI_SAME_PROTOTYPE)
#ifdef DMACONN_NVML_NEWEST
NVML_NEWEST_FUNCTIONS(ABI_SAME_PROTOTYPE)
#endif

static const struct abi_item abi_real[] = { NVML_ABI_ITEMS(ABI_CONSTANT, ABI_SIZE, ABI_OFFSET) };
static const struct abi_item abi_real_maxima[] = { NVML_ABI_MAXIMA(ABI_CONSTANT) };
#ifdef DMACONN_NVML_NEWEST
static const struct abi_item abi_real_newest[] = { NVML_ABI_NEWEST_ITEMS(ABI_CONSTANT, ABI_SIZE, ABI_OFFSET) };
#endif

#ifdef DMACONN_NVML_NEWEST
#define NEWEST_COUNT NVML_NEWEST_FUNCTIONS(ABI_COUNT)
#else
#define NEWEST_COUNT
#endif

extern const struct abi_item abi_ours[], abi_ours_maxima[], abi_ours_newest[];
extern const size_t abi_ours_count;

/* The maxima: equal to the newest header's, at least an older one's. */
static size_t check_maxima(int newest)
{
	size_t bad = 0;
	for (size_t i = 0; i < ABI_COUNT_OF(abi_real_maxima); i++) {
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
	size_t n = ABI_COUNT_OF(abi_real), bad = abi_compare("nvml.h", abi_real, n, abi_ours, abi_ours_count);
#ifdef DMACONN_NVML_NEWEST
	const char *header = "nvidia-nvml-dev " DMACONN_NVML_NEWEST ", the newest dmaconn declares";
	bad += check_maxima(1);
	size_t extra = ABI_COUNT_OF(abi_real_newest);
	bad += abi_compare("nvml.h", abi_real_newest, extra, abi_ours_newest, extra);
#else
	const char *header = "any version: maxima at least the header's";
	bad += check_maxima(0);
	size_t extra = 0;
#endif
	char what[160];
	snprintf(what, sizeof(what), "NVML_API_VERSION %d; nvml.h of %s", NVML_API_VERSION, header);
	return abi_done("nvml", n + extra + ABI_COUNT_OF(abi_real_maxima), bad,
			0 NVML_CORE_FUNCTIONS(ABI_COUNT) NVML_MIG_FUNCTIONS(ABI_COUNT) NEWEST_COUNT, what);
}
