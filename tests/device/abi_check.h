/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the ABI checks share (device/nvml_abi_check.c, device/rocm_smi_abi_check.c,
 * ze_abi_check.c): each vendor's X-macro list of constants, sizes and offsets
 * is expanded twice, once against dmaconn's declarations (the *_ours file)
 * and once against the vendor's header, into arrays of abi_item; abi_compare()
 * says every difference and abi_done() prints the summary.
 */
#ifndef DMACONN_ABI_CHECK_H
#define DMACONN_ABI_CHECK_H

#include <stddef.h>
#include <stdio.h>

struct abi_item {
	const char *name;
	long long value;
};

/* The three kinds of item, as the X-macro lists name them (C, S, O). */
#define ABI_CONSTANT(x) { #x, (long long)(x) },
#define ABI_SIZE(t) { "sizeof(" #t ")", (long long)sizeof(t) },
#define ABI_OFFSET(t, m) { "offsetof(" #t ", " #m ")", (long long)offsetof(t, m) },
#define ABI_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* FUNCTIONS(ABI_SAME_PROTOTYPE) in a file that sees only the vendor's
 * header: each declared prototype is exactly the real one, at compile time;
 * FUNCTIONS(ABI_COUNT) counts them (0 FUNCTIONS(ABI_COUNT)). */
#define ABI_SAME_PROTOTYPE(fn, ret, params, required)                                   \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&fn), ret(*) params),    \
		       "prototype of " #fn " differs from the vendor's header");
#define ABI_COUNT(fn, ret, params, required) +1

/* The items of the vendor's header against ours, one FAIL line a difference
 * with both values; returns how many differ (all when the lists do). */
static inline size_t abi_compare(const char *header, const struct abi_item *real, size_t n,
				 const struct abi_item *ours, size_t n_ours)
{
	if (n != n_ours) {
		printf("FAIL item lists differ in length: %zu vs %zu\n", n, n_ours);
		return n > n_ours ? n : n_ours;
	}
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		if (real[i].value != ours[i].value) {
			bad++;
			printf("FAIL %s: %s %lld, dmaconn %lld\n", real[i].name, header, real[i].value, ours[i].value);
		}
	return bad;
}

/* The summary; the exit status. */
static inline int abi_done(const char *vendor, size_t compared, size_t bad, size_t prototypes, const char *header)
{
	printf("%s ABI: %zu constants/sizes/offsets compared, %zu mismatches; %zu prototypes identical "
	       "(checked at compile time) (%s)\n%zu passed, %zu failed\n",
	       vendor, compared, bad, prototypes, header, compared - bad, bad);
	return bad != 0;
}

#endif
