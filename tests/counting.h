/* SPDX-License-Identifier: BSD-3-Clause */
/* What the tests that count vendor calls share: their first two arguments,
 * a replay file and the counting stand-in (count_vendor.c), put in place,
 * and the stand-in's counter. */
#ifndef DC_TEST_COUNTING_H
#define DC_TEST_COUNTING_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DMACONN_REPLAY is argv[1], DMACONN_REPLAY_LIBRARY argv[2], warnings
 * quiet; with fewer than min arguments, usage and exit 2.  Returns the
 * stand-in's dmaconn_test_calls (its handle stays open), or NULL. */
static int (*counting_setup(int argc, char **argv, int min, const char *usage))(const char *)
{
	int (*calls)(const char *) = NULL;
	if (argc < min) {
		fprintf(stderr, "usage: %s\n", usage);
		exit(2);
	}
	setenv("DMACONN_REPLAY", argv[1], 1);
	setenv("DMACONN_REPLAY_LIBRARY", argv[2], 1);
	setenv("DMACONN_QUIET", "1", 1);
	void *h = dlopen(argv[2], RTLD_NOW);
	void *sym = h ? dlsym(h, "dmaconn_test_calls") : NULL;
	if (sym)
		memcpy(&calls, &sym, sizeof(calls));
	return calls;
}

#endif
