/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal test harness: CHECK* record failures with both values and go on;
 * check_done() prints a summary and gives the exit status. */
#ifndef DMACONN_CHECK_H
#define DMACONN_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

/* Counts one check; a failure prints FILE:LINE: and the message. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline void check_record(int ok, const char *file, int line, const char *fmt, ...)
{
	check_count++;
	if (ok)
		return;
	check_failures++;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

#define CHECK(cond) check_record(!!(cond), __FILE__, __LINE__, "CHECK failed: %s", #cond)

/* Both values are printed on failure. */
#define CHECK_INT(a, b)                                                                        \
	do {                                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);                            \
		check_record(a_ == b_, __FILE__, __LINE__, "%s == %s failed: %lld != %lld", #a, #b, \
			     a_, b_);                                                          \
	} while (0)

#define CHECK_STR(a, b)                                                                        \
	do {                                                                                   \
		const char *a_ = (a), *b_ = (b);                                               \
		check_record(a_ && b_ && !strcmp(a_, b_), __FILE__, __LINE__,                 \
			     "%s == %s failed: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",  \
			     b_ ? b_ : "(null)");                                              \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                                            \
	do {                                                                                   \
		const char *h_ = (hay), *n_ = (needle);                                        \
		check_record(h_ && strstr(h_, n_), __FILE__, __LINE__,                        \
			     "\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_);        \
	} while (0)

static inline int check_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_count - check_failures, check_failures);
	return check_failures ? 1 : 0;
}

#endif
