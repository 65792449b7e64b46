/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal test harness: CHECK* record failures with both values and go on;
 * check_done() prints a summary and gives the exit status. */
#ifndef DMACONN_CHECK_H
#define DMACONN_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                    \
	do {                                                                           \
		check_count++;                                                         \
		if (!(cond)) {                                                         \
			check_failures++;                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                      \
	} while (0)

#define CHECK_INT(a, b)                                                                \
	do {                                                                           \
		long long a_ = (long long)(a), b_ = (long long)(b);                    \
		check_count++;                                                         \
		if (a_ != b_) {                                                        \
			check_failures++;                                              \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, \
				__LINE__, #a, #b, a_, b_);                             \
		}                                                                      \
	} while (0)

#define CHECK_STR(a, b)                                                                \
	do {                                                                           \
		const char *a_ = (a), *b_ = (b);                                       \
		check_count++;                                                         \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                    \
			check_failures++;                                              \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",  \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",        \
				b_ ? b_ : "(null)");                                   \
		}                                                                      \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                                    \
	do {                                                                           \
		const char *h_ = (hay), *n_ = (needle);                                \
		check_count++;                                                         \
		if (!h_ || !strstr(h_, n_)) {                                          \
			check_failures++;                                              \
			fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, \
				__LINE__, h_ ? h_ : "(null)", n_);                     \
		}                                                                      \
	} while (0)

static inline int check_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_count - check_failures, check_failures);
	return check_failures ? 1 : 0;
}

#endif
