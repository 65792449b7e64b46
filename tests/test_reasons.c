/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reasons for the zeros of a view, on a recorded machine:
 *
 *   test_reasons FILE [TYPE/]CONNECTION CODE TEXT REASONS [DOWN]
 *
 * replays FILE ("-": none, the live tree below DMACONN_SYSFS_ROOT), detects
 * TYPE/CONNECTION (TYPE cuda when left out), and checks that every
 * off-diagonal 0 has a reason and a text, that a pair with links has none
 * (but a cuda/nvlink pair that lost links: nvlink_down), that REASONS is
 * exactly the reason of every pair, and that a pair carries CODE with TEXT
 * in its text (TEXT "-": any) when REASONS names CODE.
 *
 * REASONS: "none" (no pair has a reason), or "CODE=PAIRS CODE=PAIRS ..." where
 * PAIRS is comma-separated: "all" every pair, "I>J" the pair I -> J, "I-J"
 * both directions, "I" every pair with GPU I at either end; the first group
 * that names a pair gives its reason.  DOWN: every GPU's nvlink_down_links,
 * "I:L,L/I:L" ("none": no GPU has it).
 * tests/topologies-reasons/cases lists the cases (tests/README.md).
 */
#include <stdlib.h>

#include "check.h"
#include "dmaconn.h"

/* Whether PAIRS (up to stop) names i -> j. */
static int listed(const char *pairs, const char *stop, int i, int j)
{
	for (const char *p = pairs; p < stop;) {
		char *end;
		if (!strncmp(p, "all", 3))
			return 1;
		long a = strtol(p, &end, 10);
		if (end == p)
			return 0;
		if (*end == '>' || *end == '-') {
			int both = *end == '-';
			long b = strtol(end + 1, &end, 10);
			if ((a == i && b == j) || (both && a == j && b == i))
				return 1;
		} else if (a == i || a == j) {
			return 1;
		}
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

/* The reason REASONS gives i -> j, in buf, or NULL (none). */
static const char *expected_reason(const char *reasons, int i, int j, char *buf, size_t len)
{
	for (const char *g = reasons; g && *g && strcmp(g, "none") != 0;) {
		const char *eq = strchr(g, '='), *semi = strchr(g, ' ');
		const char *stop = semi ? semi : g + strlen(g);
		if (!eq || eq > stop)
			return NULL; /* not well_formed(): refused before */
		if (listed(eq + 1, stop, i, j)) {
			snprintf(buf, len, "%.*s", (int)(eq - g), g);
			return buf;
		}
		g = semi ? semi + 1 : NULL;
	}
	return NULL;
}

/* Whether REASONS is "none" or groups CODE=PAIRS, each PAIRS a comma list of
 * all, I>J, I-J or I, separated by one space. */
static int well_formed(const char *reasons)
{
	if (!strcmp(reasons, "none"))
		return 1;
	for (const char *g = reasons;;) {
		const char *p = strchr(g, '=');
		if (!p || p == g || memchr(g, ' ', (size_t)(p - g)))
			return 0;
		for (p++;; p++) {
			char *end;
			if (!strncmp(p, "all", 3)) {
				end = (char *)p + 3;
			} else {
				strtol(p, &end, 10);
				if (end == p || *p == '-' || *p == '+')
					return 0;
				if (*end == '>' || *end == '-') {
					const char *q = end + 1;
					strtol(q, &end, 10);
					if (end == q || *q == '-' || *q == '+')
						return 0;
				}
			}
			p = end;
			if (*p != ',')
				break;
		}
		if (!*p)
			return 1;
		if (*p != ' ')
			return 0;
		g = p + 1;
	}
}

/* Whether REASONS names code. */
static int names_code(const char *reasons, const char *code)
{
	size_t n = strlen(code);
	for (const char *g = reasons; g && *g; g = strchr(g, ' ') ? strchr(g, ' ') + 1 : NULL)
		if (!strncmp(g, code, n) && g[n] == '=')
			return 1;
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
	if (argc < 6 || argc > 7) {
		fprintf(stderr, "usage: test_reasons FILE CONNECTION CODE TEXT REASONS [DOWN]\n");
		return 2;
	}
	const char *want_code = argv[3], *want_text = strcmp(argv[4], "-") != 0 ? argv[4] : NULL;
	const char *reasons = argv[5], *down = argc > 6 ? argv[6] : NULL;
	if (!well_formed(reasons)) {
		fprintf(stderr, "REASONS %s: \"none\" or \"CODE=PAIRS ...\" (PAIRS: all, I>J, I-J or I, comma-separated)\n",
			reasons);
		return 2;
	}
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
	int n = dmaconn_result_size(r), found = 0;
	CHECK(n >= 2);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const char *code = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON);
			const char *text = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT);
			char buf[64];
			const char *want = expected_reason(reasons, i, j, buf, sizeof(buf));
			check_record(!want == !code && (!want || !strcmp(want, code)), __FILE__, __LINE__,
				     "%s %s: pair %d -> %d: reason %s, expected %s", argv[1], argv[2], i, j,
				     code ? code : "none", want ? want : "none");
			found |= code && !strcmp(code, want_code) && text && (!want_text || strstr(text, want_text));
			if (dmaconn_result_get(r, i, j) != 0) {
				/* With links: a reason only for links lost. */
				if (code || text)
					CHECK(thinned_ok && code && !strcmp(code, DMACONN_REASON_NVLINK_DOWN) && text && *text);
				continue;
			}
			CHECK(code != NULL && text != NULL && *text);
		}
	for (int d = 0; down && d < n; d++) {
		char buf[256];
		const char *want = down_of(down, d, buf, sizeof(buf));
		const char *got = dmaconn_result_device_get(r, d, DMACONN_PROP_NVLINK_DOWN_LINKS);
		check_record(!want == !got && (!want || !strcmp(want, got)), __FILE__, __LINE__,
			     "%s: GPU %d: nvlink_down_links %s, expected %s", argv[1], d, got ? got : "none",
			     want ? want : "none");
	}
	/* The case's code, with its text, where REASONS gives it. */
	if (names_code(reasons, want_code))
		check_record(found, __FILE__, __LINE__, "%s %s: no pair has the reason %s%s%s", argv[1], argv[2],
			     want_code, want_text ? " with " : "", want_text ? want_text : "");
	else
		check_record(!found, __FILE__, __LINE__, "%s %s: the reason %s is not in REASONS %s", argv[1],
			     argv[2], want_code, reasons);
	dmaconn_result_release(r);
	dmaconn_shutdown();
	return check_done("test_reasons");
}
