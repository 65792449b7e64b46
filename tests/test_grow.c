/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dc_grow (src/dmaconn.c), the core's array doubling, at the limits of its
 * int capacity and size_t byte count: it refuses what it cannot represent
 * (-1, the array unchanged) instead of wrapping.  And dc_strings_pushv, the
 * formatted push of the placement's and the verifier's warnings.
 * src/dmaconn.c alone, with what it needs of the rest of the library stubbed.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "internal.h"
#include "backends/backend.h"
#include "model/connections.h"

const struct dc_backend *const dc_backends[] = { NULL };

const struct dc_connection *dc_connection_next(const struct dc_backend *be, const struct dc_connection *after)
{
	(void)be;
	(void)after;
	return NULL;
}

void dc_config_begin(void)
{
}

void dc_config_end(void)
{
}

const struct dc_config *dc_config(void)
{
	static const struct dc_config none;
	return &none;
}

void dc_replay_fork(int phase)
{
	(void)phase;
}

void dc_verify_fork(int phase)
{
	(void)phase;
}

void dc_replay_shutdown(void)
{
}

int dc_set_node_scope(int on)
{
	return on;
}

int dc_set_rediscover(int on)
{
	return on;
}

int dmaconn_placement_detect(dmaconn_device_type type, dmaconn_placement **out)
{
	(void)type;
	*out = NULL;
	return DMACONN_EUNAVAILABLE;
}

void dmaconn_placement_free(dmaconn_placement *p)
{
	(void)p;
}

__attribute__((format(printf, 4, 5))) static const char *pushf(struct dc_strings *s, size_t max, int clean,
								 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *text = dc_strings_pushv(s, max, clean, fmt, ap);
	va_end(ap);
	return text;
}

/* dc_strings_pushv: formatted, cut at max bytes (never past 1024), cleaned
 * on demand; the answer is the list's own copy. */
static void check_pushv(void)
{
	struct dc_strings s = { 0 };
	const char *t = pushf(&s, 512, 0, "GPU %d: %s", 3, "no answer");
	CHECK_STR(t, "GPU 3: no answer");
	CHECK_INT(s.count, 1);
	CHECK(t == dc_strings_at(&s, 0));
	CHECK_STR(pushf(&s, 8, 0, "%s", "abcdefghij"), "abcdefg");
	char longer[2000];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	CHECK_INT(strlen(pushf(&s, 512, 0, "%s", longer)), 511);
	CHECK_INT(strlen(pushf(&s, 4096, 0, "%s", longer)), 1023);
	/* Control bytes and broken UTF-8 kept as they are, or cleaned. */
	CHECK_STR(pushf(&s, 512, 0, "a%cb\xff", 1), "a\001b\xff");
	CHECK_STR(pushf(&s, 512, 1, "a%cb\xff", 1), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	CHECK_STR(pushf(&s, 512, 1, "line\tone"), "line one");
	CHECK_INT(s.count, 7);
	dc_strings_clear(&s);
}

int main(void)
{
	check_pushv();

	/* The ordinary case: first, then doubling. */
	int *items = NULL, cap = 0;
	CHECK_INT(dc_grow(&items, 0, &cap, sizeof(*items), 4), 0);
	CHECK_INT(cap, 4);
	CHECK(items != NULL);
	CHECK_INT(dc_grow(&items, 3, &cap, sizeof(*items), 4), 0);
	CHECK_INT(cap, 4);
	CHECK_INT(dc_grow(&items, 4, &cap, sizeof(*items), 4), 0);
	CHECK_INT(cap, 8);
	items[7] = 1;
	free(items);

	/* Doubling past INT_MAX: refused, nothing allocated or changed. */
	char *bytes = NULL;
	cap = INT_MAX / 2 + 1;
	CHECK_INT(dc_grow(&bytes, cap, &cap, 1, 16), -1);
	CHECK_INT(cap, INT_MAX / 2 + 1);
	CHECK(bytes == NULL);
	cap = INT_MAX;
	CHECK_INT(dc_grow(&bytes, cap, &cap, 1, 16), -1);
	CHECK_INT(cap, INT_MAX);
	CHECK(bytes == NULL);

	/* A byte count past SIZE_MAX: refused, not a wrapped (tiny) block. */
	struct big {
		char b[1];
	} *none = NULL;
	cap = 0;
	CHECK_INT(dc_grow(&none, 0, &cap, SIZE_MAX / 2 + 1, 2), -1);
	CHECK_INT(cap, 0);
	CHECK(none == NULL);
	char *some = malloc(1);
	cap = 1;
	CHECK_INT(dc_grow(&some, 1, &cap, SIZE_MAX / 2 + 1, 2), -1);
	CHECK_INT(cap, 1);
	CHECK(some != NULL);
	free(some); /* still the caller's */
	return check_done("test_grow");
}
