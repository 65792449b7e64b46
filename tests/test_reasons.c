/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reasons for the zeros of the cuda views, on a recorded machine:
 *
 *   test_reasons FILE [TYPE/]CONNECTION CODE [TEXT [PAIRS [DOWN]]]
 *
 * replays FILE ("-": none, the live tree below DMACONN_SYSFS_ROOT), detects
 * TYPE/CONNECTION (TYPE cuda when left out), and checks that every off-diagonal
 * 0 has a reason and a text, that no other pair has one (but a cuda/nvlink
 * pair that lost links: nvlink_down), and that CODE is among the reasons
 * given (with TEXT in its text, when given and not "-").
 *
 * PAIRS: exactly the pairs that carry CODE, comma-separated: "I>J" the pair
 * I -> J, "I" every pair with GPU I at either end, "none" no pair (then
 * CODE must be absent).  DOWN: every GPU's nvlink_down_links, "I:L,L/I:L"
 * ("none": no GPU has it).
 */
#include <stdlib.h>

#include "check.h"
#include "dmaconn.h"

/* Whether PAIRS names i -> j. */
static int listed(const char *pairs, int i, int j)
{
	for (const char *p = pairs; *p;) {
		char *end;
		long a = strtol(p, &end, 10);
		if (end == p)
			return 0; /* "none" */
		if (*end == '>') {
			const char *q = end + 1;
			long b = strtol(q, &end, 10);
			if (a == i && b == j)
				return 1;
		} else if (a == i || a == j) {
			return 1;
		}
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

/* GPU d's nvlink_down_links as DOWN gives it, or NULL. */
static const char *down_of(const char *down, int d, char *buf, size_t len)
{
	for (const char *p = down; *p;) {
		char *end;
		long a = strtol(p, &end, 10);
		if (end == p || *end != ':')
			return NULL;
		const char *list = end + 1, *stop = strchr(list, '/');
		size_t n = stop ? (size_t)(stop - list) : strlen(list);
		if (a == d) {
			snprintf(buf, len, "%.*s", (int)n, list);
			return buf;
		}
		p = stop ? stop + 1 : list + n;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 7) {
		fprintf(stderr, "usage: test_reasons FILE CONNECTION CODE [TEXT [PAIRS [DOWN]]]\n");
		return 2;
	}
	const char *want_text = argc > 4 && strcmp(argv[4], "-") != 0 ? argv[4] : NULL;
	const char *pairs = argc > 5 ? argv[5] : NULL, *down = argc > 6 ? argv[6] : NULL;
	if (strcmp(argv[1], "-") != 0)
		CHECK_INT(dmaconn_set_replay_file(argv[1]), DMACONN_OK);
	dmaconn_device_type type = DMACONN_DEVICE_CUDA;
	char tname[32];
	const char *conn = argv[2], *slash = strchr(argv[2], '/');
	if (slash && (size_t)(slash - argv[2]) < sizeof(tname)) {
		snprintf(tname, sizeof(tname), "%.*s", (int)(slash - argv[2]), argv[2]);
		CHECK_INT(dmaconn_device_type_parse(tname, &type), DMACONN_OK);
		conn = slash + 1;
	}
	int thinned_ok = type == DMACONN_DEVICE_CUDA && !strcmp(conn, "nvlink");
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(type, conn, &r), DMACONN_OK);
	int n = dmaconn_result_size(r), found = 0, zeros = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const char *code = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON);
			const char *text = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT);
			int has = code && !strcmp(code, argv[3]);
			if (pairs && has != listed(pairs, i, j)) {
				fprintf(stderr, "%s: pair %d -> %d %s the reason %s (%s)\n", argv[1], i, j,
					has ? "has" : "lacks", argv[3], code ? code : "no reason");
				CHECK(has == listed(pairs, i, j));
			}
			if (dmaconn_result_get(r, i, j) != 0) {
				/* With links: a reason only for links lost. */
				if (code || text)
					CHECK(thinned_ok && code && !strcmp(code, DMACONN_REASON_NVLINK_DOWN) && text && *text);
				continue;
			}
			zeros++;
			CHECK(code != NULL && text != NULL && *text);
			found |= has && (!want_text || strstr(text, want_text));
		}
	for (int d = 0; down && d < n; d++) {
		char buf[256];
		const char *want = down_of(down, d, buf, sizeof(buf));
		const char *got = dmaconn_result_device_get(r, d, DMACONN_PROP_NVLINK_DOWN_LINKS);
		if (!want != !got || (want && strcmp(want, got) != 0)) {
			fprintf(stderr, "%s: GPU %d: nvlink_down_links %s, expected %s\n", argv[1], d, got ? got : "none",
				want ? want : "none");
			CHECK(0);
		}
	}
	/* The pairs with links carry their reason too. */
	for (int i = 0; i < n && !found; i++)
		for (int j = 0; j < n && !found; j++) {
			const char *code = i == j ? NULL : dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON);
			const char *text = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT);
			found = code && !strcmp(code, argv[3]) && text && (!want_text || strstr(text, want_text));
		}
	if (!pairs || strcmp(pairs, "none") != 0) {
		if (!found)
			fprintf(stderr, "%s %s: no pair has the reason %s%s%s\n", argv[1], argv[2], argv[3],
				want_text ? " with " : "", want_text ? want_text : "");
		CHECK(found);
	}
	if (!pairs)
		CHECK(zeros > 0);
	dmaconn_result_release(r);
	dmaconn_shutdown();
	return check_done("test_reasons");
}
