/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --format dot: one connection type of the node (or, with --mpi, of the job)
 * as a Graphviz graph (`dmaconn --format dot | dot -Tsvg`).
 *
 * One node per device; for cuda/nvlink one node per NVSwitch fabric domain
 * that devices reach through switches, with an edge from each device to it;
 * an edge per pair of devices joined directly (link count and GB/s per
 * direction), a lighter one labelled with the PCIe path class where a pair
 * has no link, and the warning colour, with the reason, for links the driver
 * reports down or disabled, a fabric registration that did not complete, and
 * a pair that verification (a cached verdict or a recording's) found
 * failing.  Nothing in the output depends on the time or on the order of
 * anything but the results: tests compare it byte for byte.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"

#define DOT_LINK "#1f4e8c"
#define DOT_PCIE "#9a9a9a"
#define DOT_WARN "#c62828"
#define DOT_FILL "#eef3fb"
#define DOT_SWITCH_FILL "#f1f1f1"

/* A growing string; on allocation failure it keeps what it has. */
struct dot_buf {
	char *s;
	size_t len, cap;
};

static void dot_add(struct dot_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dot_add(struct dot_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = (b->len + (size_t)n + 1) * 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return;
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* A new line of a label (the label's lines are joined by '\n'). */
static void dot_line(struct dot_buf *b)
{
	if (b->len)
		dot_add(b, "\n");
}

/* s as a DOT quoted string: quotes and backslashes escaped, a newline as
 * DOT's \n, other control characters as spaces, invalid UTF-8 replaced.
 * Graphviz reads "&...;" in any label as an entity: '&' is written &amp;,
 * so that "&#1;" (no character of XML) or "&#xD800;" (a surrogate) stays
 * text.  U+FFFE and U+FFFF, valid UTF-8 but no characters of XML, become
 * U+FFFD, or the SVG would not parse. */
static void dot_quoted(FILE *out, const char *s)
{
	char *fixed = cli_utf8_fix(s ? s : "");
	const char *p = fixed ? fixed : s ? s : "";
	putc('"', out);
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20 || c == 0x7f)
			putc(' ', out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c == 0xef && (unsigned char)p[1] == 0xbf && ((unsigned char)p[2] & 0xfe) == 0xbe) {
			fputs("\xef\xbf\xbd", out);
			p += 2;
		} else
			putc(c, out);
	}
	putc('"', out);
	free(fixed);
}

/* ------------------------------------------------------------------ facts */

/* An edge: ends a and c are device indices, or -1 - s for switch node s;
 * n edges of partitions of the same two cards drawn as one. */
struct dot_rec {
	int a, c, forward, n;
	char *label;
	const char *color, *extra;
	double pw;
	size_t seq;
};

struct dot_recs {
	struct dot_rec *v;
	size_t len, cap;
	int oom;
};

/* Above this many edges between devices (partitions of one card drawn as
 * one node first), dot takes minutes: the graph is a summary instead
 * (dmaconn(1)).  Edges to a switch do not count: a star draws quickly. */
#define DOT_MAX_EDGES 256

struct dot {
	FILE *out;
	const dmaconn_result *r;        /* the connection type drawn */
	const dmaconn_result *p2p;      /* the same device type's p2p (paths, rates), or NULL */
	const dmaconn_result *verified; /* cuda verdicts, or NULL */
	int *p2p_of, *verified_of;      /* device i of r in those, or -1 */
	dmaconn_device_type type;
	const char *conn;
	int n, mpi, nvlink;
	int *sw;                        /* per device: switch node, or -1 */
	char **sw_key;                  /* per switch node: its fabric domain ("" unknown) */
	int *sw_first;                  /* per switch node: its first device */
	int nsw;
	int *degraded;                  /* per device: links down beyond its peers' */
	int *card;                      /* per device: the first partition of its card, or NULL */
	int *members;                   /* per device: partitions of the card it heads */
	struct dot_recs *recs;          /* the edges, gathered before they are written */
};

static const char *dot_dev(const dmaconn_result *r, int i, const char *key)
{
	return dmaconn_result_device_get(r, i, key);
}

static const char *dot_pair(const dmaconn_result *r, int i, int j, const char *key)
{
	return dmaconn_result_pair_get(r, i, j, key);
}

/* An integer property of device i, or of the pair i -> j; def where
 * absent or not one. */
static long dot_dev_int(const dmaconn_result *r, int i, const char *key, long def)
{
	long long v;
	return dmaconn_result_device_int(r, i, key, &v) == DMACONN_OK && v >= LONG_MIN && v <= LONG_MAX ? (long)v
													  : def;
}

static long dot_pair_int(const dmaconn_result *r, int i, int j, const char *key, long def)
{
	long long v;
	return dmaconn_result_pair_int(r, i, j, key, &v) == DMACONN_OK && v >= LONG_MIN && v <= LONG_MAX ? (long)v
													    : def;
}

/* A number property of the pair i -> j, 0 where absent or not one. */
static double dot_pair_number(const dmaconn_result *r, int i, int j, const char *key)
{
	double v;
	return r && dmaconn_result_pair_number(r, i, j, key, &v) == DMACONN_OK ? v : 0;
}

/* Device i's list property ("5,11"): at most 64 items into v; how many
 * there are (0 where absent or malformed). */
static int dot_dev_list(const dmaconn_result *r, int i, const char *key, long long v[64])
{
	int n = 0;
	return dmaconn_result_device_list(r, i, key, v, 64, &n) == DMACONN_OK ? n : 0;
}

static int dot_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Device i of a in b (same bus id and, across ranks, same host), or -1. */
static int *dot_map(const dmaconn_result *a, const dmaconn_result *b)
{
	int n = dmaconn_result_size(a), m = b ? dmaconn_result_size(b) : 0;
	int *map = malloc(((size_t)n + 1) * sizeof(*map));
	if (!map)
		return NULL;
	for (int i = 0; i < n; i++) {
		const char *bus = dot_dev(a, i, DMACONN_PROP_PCI_BUS_ID);
		const char *host = dot_dev(a, i, DMACONN_PROP_HOST);
		map[i] = -1;
		if (b == a) {
			map[i] = i;
			continue;
		}
		for (int k = 0; bus && k < m && map[i] < 0; k++) {
			/* Same index first: the usual case, and exact for duplicates. */
			int at = (i + k) % m;
			if (dot_same(bus, dot_dev(b, at, DMACONN_PROP_PCI_BUS_ID)) &&
			    dot_same(host, dot_dev(b, at, DMACONN_PROP_HOST)))
				map[i] = at;
		}
	}
	return map;
}

static const char *dot_p2p(const struct dot *d, int i, int j, const char *key)
{
	if (!d->p2p || !d->p2p_of || d->p2p_of[i] < 0 || d->p2p_of[j] < 0)
		return NULL;
	return dot_pair(d->p2p, d->p2p_of[i], d->p2p_of[j], key);
}

/* A number (an integer) property of the pair in the p2p result, 0 where
 * unknown. */
static double dot_p2p_number(const struct dot *d, int i, int j, const char *key)
{
	if (!d->p2p || !d->p2p_of || d->p2p_of[i] < 0 || d->p2p_of[j] < 0)
		return 0;
	return dot_pair_number(d->p2p, d->p2p_of[i], d->p2p_of[j], key);
}

static long dot_p2p_int(const struct dot *d, int i, int j, const char *key)
{
	if (!d->p2p || !d->p2p_of || d->p2p_of[i] < 0 || d->p2p_of[j] < 0)
		return 0;
	return dot_pair_int(d->p2p, d->p2p_of[i], d->p2p_of[j], key, 0);
}

/* Links of the pair i -> j that join the two devices without a switch. */
static long dot_direct(const struct dot *d, int i, int j)
{
	long v = dmaconn_result_get(d->r, i, j);
	if (!d->nvlink || v <= 0)
		return v;
	if (dot_pair(d->r, i, j, DMACONN_PROP_NVLINK_DIRECT_LINKS))
		return dot_pair_int(d->r, i, j, DMACONN_PROP_NVLINK_DIRECT_LINKS, 0);
	/* Without the pair's fact: switch-attached devices meet at the switch. */
	return d->sw[i] >= 0 && d->sw[j] >= 0 ? 0 : v;
}

/* GB/s per direction of one link of device i (cuda, from p2p), 0 unknown. */
static double dot_rate(const struct dot *d, int i)
{
	for (int j = 0; j < d->n; j++) {
		if (j == i)
			continue;
		const char *gbps = dot_p2p(d, i, j, DMACONN_PROP_NVLINK_GBPS);
		long links = dot_p2p_int(d, i, j, DMACONN_PROP_NVLINK_LINKS);
		if (gbps && links > 0)
			return dot_p2p_number(d, i, j, DMACONN_PROP_NVLINK_GBPS) / (double)links;
	}
	return 0;
}

/* Whether the device's fabric registration lets it use its switch links. */
static int dot_fabric_ok(const struct dot *d, int i)
{
	const char *state = dot_dev(d->r, i, DMACONN_PROP_FABRIC_STATE);
	const char *status = dot_dev(d->r, i, DMACONN_PROP_FABRIC_STATUS);
	if (!state || !strcmp(state, "not_supported"))
		return 1;
	return !strcmp(state, DMACONN_FABRIC_STATE_COMPLETED) &&
	       (!status || !strcmp(status, DMACONN_FABRIC_STATUS_SUCCESS));
}

/* The fabric domain device i's switch links lead to, or "" where unknown:
 * cluster and clique, and the node for a node-local (all-zero) cluster. */
static char *dot_domain(const struct dot *d, int i)
{
	struct dot_buf b = { 0 };
	const char *cluster = dot_dev(d->r, i, DMACONN_PROP_CLUSTER_UUID);
	const char *clique = dot_dev(d->r, i, DMACONN_PROP_CLIQUE_ID);
	const char *node = dot_dev(d->r, i, DMACONN_PROP_NODE);
	if (cluster && clique && dot_fabric_ok(d, i)) {
		int zero = strspn(cluster, "0-") == strlen(cluster);
		dot_add(&b, "%s/%s", cluster, clique);
		if (zero)
			dot_add(&b, "@%s", node ? node : "");
	}
	if (!b.s)
		b.s = calloc(1, 1);
	return b.s;
}

/* Switch nodes of cuda/nvlink: one per fabric domain, in order of the first
 * device reaching it; a device whose domain is unknown joins the first
 * known one of its node, else one of unknown domain per node. */
static int dot_switches(struct dot *d)
{
	int n = d->n;
	d->sw = malloc(((size_t)n + 1) * sizeof(*d->sw));
	d->sw_key = calloc((size_t)n + 1, sizeof(*d->sw_key));
	d->sw_first = malloc(((size_t)n + 1) * sizeof(*d->sw_first));
	char **key = calloc((size_t)n + 1, sizeof(*key));
	if (!d->sw || !d->sw_key || !d->sw_first || !key) {
		free(key);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		d->sw[i] = -1;
		if (d->nvlink && dot_dev_int(d->r, i, DMACONN_PROP_NVLINK_SWITCH_LINKS, 0) > 0)
			key[i] = dot_domain(d, i);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < n; i++) {
			if (!key[i] || (pass == 0) != (*key[i] != '\0'))
				continue;
			const char *want = key[i];
			if (pass == 1) {
				/* Unknown: the first known domain of the node. */
				for (int k = 0; k < n && d->sw[i] < 0; k++)
					if (k != i && key[k] && *key[k] && d->sw[k] >= 0 &&
					    dot_same(dot_dev(d->r, i, DMACONN_PROP_NODE),
						     dot_dev(d->r, k, DMACONN_PROP_NODE)))
						d->sw[i] = d->sw[k];
				if (d->sw[i] >= 0)
					continue;
			}
			for (int s = 0; s < d->nsw && d->sw[i] < 0; s++)
				if (!strcmp(d->sw_key[s], want) &&
				    (*want || dot_same(dot_dev(d->r, i, DMACONN_PROP_NODE),
						       dot_dev(d->r, d->sw_first[s], DMACONN_PROP_NODE))))
					d->sw[i] = s;
			if (d->sw[i] < 0) {
				d->sw_key[d->nsw] = strdup(want);
				d->sw_first[d->nsw] = i;
				d->sw[i] = d->nsw++;
			}
		}
	}
	for (int i = 0; i < n; i++)
		free(key[i]);
	free(key);
	return 0;
}

/* Devices with links down beyond what their peers of the same model have:
 * a GPU fitted for bridges has inactive links by design, as many as its
 * twins; one with fewer active links than a twin has lost some. */
static void dot_degraded(struct dot *d)
{
	for (int i = 0; i < d->n; i++) {
		const char *down = dot_dev(d->r, i, DMACONN_PROP_NVLINK_INACTIVE_LINKS);
		long active = dot_dev_int(d->r, i, DMACONN_PROP_NVLINK_ACTIVE_LINKS, -1);
		d->degraded[i] = 0;
		for (int k = 0; down && active >= 0 && k < d->n && !d->degraded[i]; k++)
			d->degraded[i] = k != i &&
					 dot_same(dot_dev(d->r, i, DMACONN_PROP_NAME),
						  dot_dev(d->r, k, DMACONN_PROP_NAME)) &&
					 dot_dev_int(d->r, k, DMACONN_PROP_NVLINK_ACTIVE_LINKS, -1) > active;
	}
}

/* "5, 11" from {5, 11}, runs as ranges: "0-11" from {0, 1, ..., 11}. */
static void dot_link_list(struct dot_buf *b, const long long *v, int n)
{
	for (int k = 0; k < n;) {
		int run = k;
		while (run + 1 < n && v[run + 1] == v[run] + 1)
			run++;
		dot_add(b, k ? ", %lld" : "%lld", v[k]);
		if (run > k)
			dot_add(b, "%s%lld", run > k + 1 ? "-" : ", ", v[run]);
		k = run + 1;
	}
}

/* ----------------------------------------------------------------- output */

static const char *dot_link_noun(const struct dot *d, long links)
{
	if (d->type == DMACONN_DEVICE_CUDA)
		return links == 1 ? "NVLink" : "NVLinks";
	if (d->type == DMACONN_DEVICE_ROCM)
		return links == 1 ? "XGMI link" : "XGMI links";
	return links == 1 ? "Xe Link" : "Xe Links";
}

static double dot_penwidth(long links)
{
	return links >= 6 ? 4.0 : 1.0 + 0.5 * (double)links;
}

/* Keeps an edge for later (the label copied). */
static void dot_record(const struct dot *d, int a, int c, const char *label, const char *color, double pw,
		       const char *extra, int forward)
{
	struct dot_recs *rs = d->recs;
	if (rs->len == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		struct dot_rec *v = realloc(rs->v, cap * sizeof(*v));
		if (!v) {
			rs->oom = 1;
			return;
		}
		rs->v = v;
		rs->cap = cap;
	}
	char *copy = strdup(label);
	if (!copy) {
		rs->oom = 1;
		return;
	}
	rs->v[rs->len] = (struct dot_rec){ .a = a, .c = c, .forward = forward, .n = 1, .label = copy, .color = color,
					   .extra = extra, .pw = pw, .seq = rs->len };
	rs->len++;
}

static void dot_end(FILE *out, int e)
{
	if (e >= 0)
		fprintf(out, "d%d", e);
	else
		fprintf(out, "s%d", -1 - e);
}

/* A dashed PCIe path between devices drawn side by side: it ranks nothing,
 * and carries its text as an xlabel, placed after the layout.  A label on
 * such edges makes dot route splines around label nodes it cannot fit
 * ("Unable to reclaim box space in spline routing", from 6 PCIe-only GPUs). */
static const char dot_flat[] = ", style=dashed, constraint=false";

static void dot_write_edge(const struct dot *d, const struct dot_rec *e)
{
	struct dot_buf b = { 0 };
	if (e->n > 1)
		dot_add(&b, "%d partition pairs\n", e->n);
	dot_add(&b, "%s", e->label);
	putc('\t', d->out);
	dot_end(d->out, e->a);
	fputs(" -- ", d->out);
	dot_end(d->out, e->c);
	fputs(e->extra == dot_flat ? " [xlabel=" : " [label=", d->out);
	dot_quoted(d->out, b.s);
	fprintf(d->out, ", color=\"%s\", fontcolor=\"%s\", penwidth=%.1f%s%s];\n", e->color, e->color, e->pw,
		e->extra ? e->extra : "", e->forward ? ", dir=forward" : "");
	free(b.s);
}

static void dot_device(const struct dot *d, int i, const char *indent)
{
	const dmaconn_result *r = d->r;
	struct dot_buf b = { 0 };
	const char *name = dot_dev(r, i, DMACONN_PROP_NAME);
	const char *bus = dot_dev(r, i, DMACONN_PROP_PCI_BUS_ID);
	const char *tile = dot_dev(r, i, DMACONN_PROP_TILE);
	const char *mig = dot_dev(r, i, DMACONN_PROP_MIG);
	int card = d->card && d->members[i] > 1, warn = d->degraded[i];
	if (d->card && d->card[i] != i)
		return; /* drawn as its card */
	if (card) {
		long long *parts = malloc((size_t)d->n * sizeof(*parts));
		int nparts = 0;
		for (int k = i; parts && k < d->n; k++)
			if (d->card[k] == i)
				parts[nparts++] = k;
		dot_add(&b, "GPUs ");
		dot_link_list(&b, parts, nparts);
		dot_add(&b, " (%d partitions of one card)", d->members[i]);
		free(parts);
	} else {
		dot_add(&b, "GPU %d", i);
	}
	if (tile)
		dot_add(&b, " (tile %s)", tile);
	if (d->mpi) {
		const char *rank = dc_format_device(r, i, DMACONN_PROP_RANK);
		const char *local = dc_format_device(r, i, DMACONN_PROP_LOCAL_ORDINAL);
		dot_add(&b, ": rank %s, device %s", *rank ? rank : "?", *local ? local : "?");
	}
	dot_line(&b);
	dot_add(&b, "%s", name && *name ? name : "(unknown)");
	if (bus) {
		dot_line(&b);
		dot_add(&b, "%s", bus);
	}
	if (mig && strcmp(mig, "disabled")) {
		dot_line(&b);
		dot_add(&b, "MIG %s: no peer DMA", mig);
	}
	if (d->degraded[i]) {
		dot_line(&b);
		long long down[64];
		int ndown = dot_dev_list(r, i, DMACONN_PROP_NVLINK_INACTIVE_LINKS, down);
		dot_add(&b, "NVLink down: link%s ", ndown == 1 ? "" : "s");
		dot_link_list(&b, down, ndown < 64 ? ndown : 64);
	}
	/* What joins the card's partitions, one line per kind of edge. */
	for (size_t k = 0; card && k < d->recs->len; k++) {
		const struct dot_rec *e = &d->recs->v[k];
		if (e->a != i || e->c != i)
			continue;
		dot_line(&b);
		dot_add(&b, "partitions (%d pair%s): ", e->n, e->n == 1 ? "" : "s");
		for (const char *p = e->label; *p; p++)
			dot_add(&b, *p == '\n' ? ", " : "%c", *p);
		warn |= !strcmp(e->color, DOT_WARN);
	}
	fprintf(d->out, "%sd%d [label=", indent, i);
	dot_quoted(d->out, b.s);
	if (warn)
		fprintf(d->out, ", color=\"%s\", fontcolor=\"%s\", penwidth=2", DOT_WARN, DOT_WARN);
	fputs("];\n", d->out);
	free(b.s);
}

static void dot_switch(const struct dot *d, int s, const char *indent)
{
	struct dot_buf b = { 0 };
	const char *key = d->sw_key[s];
	int first = d->sw_first[s];
	const char *cluster = dot_dev(d->r, first, DMACONN_PROP_CLUSTER_UUID);
	const char *clique = dot_dev(d->r, first, DMACONN_PROP_CLIQUE_ID);
	dot_add(&b, "NVSwitch");
	if (!*key && d->nsw > 1) {
		dot_add(&b, "\nfabric domain unknown");
	} else if (*key && strchr(key, '@') == NULL && cluster) {
		dot_add(&b, "\nNVLink domain %.8s, clique %s", cluster, clique ? clique : "?");
	} else if (*key && d->nsw > 1 && !d->mpi) {
		dot_add(&b, "\nclique %s", clique ? clique : "?");
	}
	fprintf(d->out, "%ss%d [label=", indent, s);
	dot_quoted(d->out, b.s);
	fprintf(d->out, ", shape=hexagon, fillcolor=\"%s\"];\n", DOT_SWITCH_FILL);
	free(b.s);
}

/* Why device i cannot use its switch links: the result's reason for a
 * pair of it, else its fabric state. */
static void dot_fabric_reason(const struct dot *d, int i, struct dot_buf *b)
{
	for (int j = 0; j < d->n; j++) {
		for (int dir = 0; dir < 2; dir++) {
			int a = dir ? j : i, c = dir ? i : j;
			const char *code = a != c ? dot_pair(d->r, a, c, DMACONN_PROP_REASON) : NULL;
			const char *text = a != c ? dot_pair(d->r, a, c, DMACONN_PROP_REASON_TEXT) : NULL;
			if (code && text && !strncmp(code, "fabric_", 7)) {
				dot_add(b, "%s", text);
				return;
			}
		}
	}
	const char *state = dot_dev(d->r, i, DMACONN_PROP_FABRIC_STATE);
	const char *status = dot_dev(d->r, i, DMACONN_PROP_FABRIC_STATUS);
	dot_add(b, "NVSwitch fabric registration %s%s%s", state ? state : "unknown", status ? ": " : "",
		status ? status : "");
}

static void dot_switch_edge(const struct dot *d, int i)
{
	long links = dot_dev_int(d->r, i, DMACONN_PROP_NVLINK_SWITCH_LINKS, 0);
	int fabric_ok = dot_fabric_ok(d, i), warn = d->degraded[i] || !fabric_ok;
	double rate = dot_rate(d, i);
	struct dot_buf b = { 0 };
	dot_add(&b, "%ld %s", links, dot_link_noun(d, links));
	if (rate > 0 && fabric_ok)
		dot_add(&b, "\n%.1f GB/s", rate * (double)links);
	if (d->degraded[i]) {
		long long down[64];
		int ndown = dot_dev_list(d->r, i, DMACONN_PROP_NVLINK_INACTIVE_LINKS, down);
		dot_add(&b, "\n%d down (link%s ", ndown, ndown == 1 ? "" : "s");
		dot_link_list(&b, down, ndown < 64 ? ndown : 64);
		dot_add(&b, ")");
	}
	if (!fabric_ok) {
		dot_line(&b);
		dot_fabric_reason(d, i, &b);
	}
	/* The second half of a switch's devices below it, as on a baseboard. */
	int before = 0, all = 0;
	for (int k = 0; k < d->n; k++) {
		all += d->sw[k] == d->sw[i];
		before += k < i && d->sw[k] == d->sw[i];
	}
	int below = all > 2 && before >= (all + 1) / 2;
	dot_record(d, below ? -1 - d->sw[i] : i, below ? i : -1 - d->sw[i], b.s ? b.s : "", warn ? DOT_WARN : DOT_LINK,
		   dot_penwidth(links), fabric_ok ? NULL : ", style=dashed", 0);
	free(b.s);
}

/* Whether path is a PCIe path class (nvidia-smi's, or KFD's PCIE). */
static int dot_pcie_class(const char *path)
{
	static const char *const classes[] = { "PIX", "PXB", "PHB", "NODE", "SYS", "PCIE" };
	for (size_t k = 0; path && k < sizeof(classes) / sizeof(classes[0]); k++)
		if (!strcmp(path, classes[k]))
			return 1;
	return 0;
}

/* The verdict against a claimed pair i -> j, into b; 0 when none failed. */
static int dot_verify_failed(const struct dot *d, int i, int j, struct dot_buf *b)
{
	/* Against what the drawn type claims; drawing cuda/verified, every verdict. */
	if (!d->verified || !d->verified_of || d->verified_of[i] < 0 || d->verified_of[j] < 0 ||
	    (dmaconn_result_get(d->r, i, j) <= 0 && d->verified != d->r))
		return 0;
	int a = d->verified_of[i], c = d->verified_of[j];
	const char *v = dot_pair(d->verified, a, c, DMACONN_PROP_VERIFIED);
	if (!v || (strcmp(v, "fail") && strcmp(v, "hang")))
		return 0;
	const char *text = dot_pair(d->verified, a, c, DMACONN_PROP_REASON_TEXT);
	dot_line(b);
	dot_add(b, "%s", text ? text : !strcmp(v, "hang") ? "verification hung" : "verification failed");
	return 1;
}

/* The label of the direct links i -> j (value v, links of them direct). */
static void dot_link_label(const struct dot *d, int i, int j, long v, long links, struct dot_buf *b)
{
	const dmaconn_result *r = d->r;
	const char *conn = d->conn;
	if (d->nvlink || (d->type == DMACONN_DEVICE_ROCM && !strcmp(conn, "infinity_fabric")) ||
	    (d->type == DMACONN_DEVICE_XPU && !strcmp(conn, "xelink"))) {
		const char *xgmi = d->type == DMACONN_DEVICE_ROCM ? dot_pair(r, i, j, DMACONN_PROP_XGMI_LINKS) : NULL;
		if (xgmi && !strcmp(xgmi, "unknown"))
			dot_add(b, "XGMI, link count not reported");
		else
			dot_add(b, "%ld %s", links, dot_link_noun(d, links));
		double gbps = 0;
		if (d->nvlink)
			gbps = dot_rate(d, i) * (double)links;
		else if (d->type == DMACONN_DEVICE_ROCM)
			gbps = (double)dot_pair_int(r, i, j, DMACONN_PROP_MAX_BANDWIDTH_MBS, 0) / 1000.0;
		else
			gbps = dot_pair_number(r, i, j, DMACONN_PROP_XELINK_GBPS);
		if (gbps > 0)
			dot_add(b, "\n%.1f GB/s", gbps);
		return;
	}
	/* p2p, verified and others: what joins them, and what was measured. */
	const char *path = dot_pair(r, i, j, DMACONN_PROP_PATH);
	if (!path)
		path = dot_p2p(d, i, j, DMACONN_PROP_PATH);
	const char *gbps = dot_pair(r, i, j, DMACONN_PROP_GBPS);
	const char *nv = dot_p2p(d, i, j, DMACONN_PROP_NVLINK_GBPS);
	const char *xe = dot_p2p(d, i, j, DMACONN_PROP_XELINK_GBPS);
	if (!strcmp(conn, "verified"))
		dot_add(b, "verified");
	else if (!strcmp(conn, "p2p"))
		dot_add(b, "peer DMA");
	else
		dot_add(b, "%ld", v);
	if (path && strcmp(path, "?"))
		dot_add(b, ", %s", path);
	if (gbps)
		dot_add(b, "\n%.1f GB/s measured", dot_pair_number(r, i, j, DMACONN_PROP_GBPS));
	else if (nv || xe)
		dot_add(b, "\n%.1f GB/s", dot_p2p_number(d, i, j, nv ? DMACONN_PROP_NVLINK_GBPS : DMACONN_PROP_XELINK_GBPS));
}

/* Writes one edge i -- j: an arrow from i with forward, extra attributes
 * (", style=dashed") verbatim. */
static void dot_edge(const struct dot *d, int i, int j, const char *label, const char *color, double pw,
		     const char *extra, int forward)
{
	dot_record(d, i, j, label ? label : "", color, pw, extra, forward);
}

/* Whether the pair i -> j is a link the driver reports disabled (KFD). */
static int dot_disabled(const struct dot *d, int i, int j)
{
	const dmaconn_result *r = d->r;
	const char *type = dot_pair(r, i, j, DMACONN_PROP_LINK_TYPE);
	const char *enabled = dot_pair(r, i, j, DMACONN_PROP_ENABLED);
	if (!type) {
		type = dot_p2p(d, i, j, DMACONN_PROP_LINK_TYPE);
		enabled = dot_p2p(d, i, j, DMACONN_PROP_ENABLED);
	}
	return type && enabled && !strcmp(type, "XGMI") && !strcmp(enabled, "no");
}

/* The edges of the unordered pair i < j. */
static void dot_pair_edges(const struct dot *d, int i, int j)
{
	long v[2] = { dmaconn_result_get(d->r, i, j), dmaconn_result_get(d->r, j, i) };
	long direct[2] = { dot_direct(d, i, j), dot_direct(d, j, i) };
	struct dot_buf fail = { 0 }, there = { 0 }, back = { 0 };
	int f0 = dot_verify_failed(d, i, j, &there), f1 = dot_verify_failed(d, j, i, &back);
	int failed = f0 || f1;
	if (f0 && f1 && !strcmp(there.s, back.s)) {
		dot_add(&fail, "%s", there.s);
	} else {
		if (f0)
			dot_add(&fail, "%d -> %d: %s", i, j, there.s);
		if (f1)
			dot_add(&fail, "%s%d -> %d: %s", f0 ? "\n" : "", j, i, back.s);
	}
	free(there.s);
	free(back.s);
	if (direct[0] > 0 || direct[1] > 0) {
		int symmetric = v[0] == v[1] && direct[0] == direct[1];
		for (int k = 0; k < (symmetric ? 1 : 2); k++) {
			int a = k ? j : i, c = k ? i : j;
			if (direct[k] <= 0)
				continue;
			struct dot_buf b = { 0 };
			dot_link_label(d, a, c, v[k], direct[k], &b);
			const char *path = dot_pair(d->r, a, c, DMACONN_PROP_PATH);
			int pcie = !d->nvlink && dot_pcie_class(path);
			if (failed)
				dot_add(&b, "\n%s", fail.s);
			dot_edge(d, a, c, b.s, failed ? DOT_WARN : pcie ? DOT_PCIE : DOT_LINK,
				 pcie ? 1.0 : dot_penwidth(d->nvlink || strcmp(d->conn, "p2p") ? direct[k] : 1), NULL,
				 !symmetric);
			free(b.s);
		}
	} else if (failed) {
		/* Claimed through a switch: the verdict is drawn on its own. */
		struct dot_buf b = { 0 };
		long claimed = v[0] > v[1] ? v[0] : v[1];
		if (d->verified == d->r)
			dot_add(&b, "%s", fail.s);
		else
			dot_add(&b, "%ld %s claimed\n%s", claimed, dot_link_noun(d, claimed), fail.s);
		dot_edge(d, i, j, b.s, DOT_WARN, 1.0, ", style=dashed", 0);
		free(b.s);
	} else if (dot_disabled(d, i, j) || dot_disabled(d, j, i)) {
		dot_edge(d, i, j, "XGMI link disabled by the driver", DOT_WARN, 1.0, ", style=dashed", 0);
	} else if (v[0] <= 0 && v[1] <= 0 && (d->sw[i] < 0 || d->sw[i] != d->sw[j] || !dot_fabric_ok(d, i) ||
					   !dot_fabric_ok(d, j))) {
		const char *path = dot_pair(d->r, i, j, DMACONN_PROP_PATH);
		if (!dot_pcie_class(path))
			path = dot_p2p(d, i, j, DMACONN_PROP_PATH);
		if (dot_pcie_class(path))
			dot_edge(d, i, j, !strcmp(path, "PCIE") ? "PCIe" : path, DOT_PCIE, 1.0,
				 dot_flat, 0);
		else if (path && !strcmp(path, "MDFI"))
			dot_edge(d, i, j, "MDFI (tiles of one card)", DOT_PCIE, 2.0, NULL, 0);
	}
	free(fail.s);
}

/* Partitions of one card (KFD's partitions, a card's bus id, and host):
 * card[i] is the first of them.  NULL card where no card has two. */
static int dot_cards(struct dot *d)
{
	int grouped = 0;
	d->card = malloc(((size_t)d->n + 1) * sizeof(*d->card));
	d->members = calloc((size_t)d->n + 1, sizeof(*d->members));
	if (!d->card || !d->members)
		return -1;
	for (int i = 0; i < d->n; i++) {
		const char *bus = dot_dev(d->r, i, DMACONN_PROP_PCI_BUS_ID);
		d->card[i] = i;
		for (int k = 0; bus && dot_dev_int(d->r, i, DMACONN_PROP_PARTITIONS, 1) > 1 && k < i; k++)
			if (d->card[k] == k && dot_dev_int(d->r, k, DMACONN_PROP_PARTITIONS, 1) > 1 &&
			    dot_same(bus, dot_dev(d->r, k, DMACONN_PROP_PCI_BUS_ID)) &&
			    dot_same(dot_dev(d->r, i, DMACONN_PROP_HOST), dot_dev(d->r, k, DMACONN_PROP_HOST))) {
				d->card[i] = k;
				break;
			}
		grouped |= ++d->members[d->card[i]] > 1;
	}
	if (!grouped) {
		free(d->card);
		free(d->members);
		d->card = d->members = NULL;
	}
	return 0;
}

/* Orders edges by ends and look; alike ones compare equal. */
static int dot_rec_key_cmp(const struct dot_rec *a, const struct dot_rec *b)
{
	int c;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->c != b->c)
		return a->c < b->c ? -1 : 1;
	if (a->forward != b->forward)
		return a->forward - b->forward;
	if ((c = strcmp(a->color, b->color)) != 0 || (c = strcmp(a->extra ? a->extra : "", b->extra ? b->extra : "")))
		return c;
	if (a->pw != b->pw)
		return a->pw < b->pw ? -1 : 1;
	return strcmp(a->label, b->label);
}

static int dot_rec_cmp(const void *x, const void *y)
{
	const struct dot_rec *a = x, *b = y;
	int c = dot_rec_key_cmp(a, b);
	return c ? c : a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int dot_seq_cmp(const void *x, const void *y)
{
	const struct dot_rec *a = x, *b = y;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Edges of partitions as edges of their cards, alike ones merged (counted
 * in n), in the order of the first of each. */
static void dot_merge(struct dot *d)
{
	struct dot_recs *rs = d->recs;
	if (!d->card)
		return;
	for (size_t k = 0; k < rs->len; k++) {
		struct dot_rec *e = &rs->v[k];
		e->a = e->a >= 0 ? d->card[e->a] : e->a;
		e->c = e->c >= 0 ? d->card[e->c] : e->c;
		if (!e->forward && e->a >= 0 && e->c >= 0 && e->a > e->c) {
			int t = e->a;
			e->a = e->c;
			e->c = t;
		}
	}
	qsort(rs->v, rs->len, sizeof(*rs->v), dot_rec_cmp);
	size_t out = 0;
	for (size_t k = 0; k < rs->len; k++) {
		struct dot_rec *e = &rs->v[k];
		if (out && dot_rec_key_cmp(e, &rs->v[out - 1]) == 0) {
			rs->v[out - 1].n++;
			free(e->label);
			continue;
		}
		rs->v[out++] = *e;
	}
	rs->len = out;
	qsort(rs->v, rs->len, sizeof(*rs->v), dot_seq_cmp);
}

static int dot_kind_cmp(const void *x, const void *y)
{
	const struct dot_rec *a = x, *b = y;
	int c, wa = !strcmp(a->color, DOT_WARN), wb = !strcmp(b->color, DOT_WARN);
	if (wa != wb)
		return wb - wa;
	if ((c = strcmp(a->label, b->label)) != 0)
		return c;
	return strcmp(a->color, b->color);
}

/* Too many edges to draw: one node saying how many of each kind there are
 * (warnings first), the devices and the edges left out. */
static void dot_summary(const struct dot *d, size_t edges)
{
	struct dot_recs *rs = d->recs;
	struct dot_buf b = { 0 };
	int warn = 0, cards = 0;
	for (int i = 0; i < d->n; i++)
		cards += !d->card || d->card[i] == i;
	dot_add(&b, "%d device%s", d->n, d->n == 1 ? "" : "s");
	if (cards != d->n)
		dot_add(&b, " on %d card%s", cards, cards == 1 ? "" : "s");
	dot_add(&b, ", %zu edges between them: more than %d, not drawn (dmaconn --json lists every pair)", edges,
		DOT_MAX_EDGES);
	qsort(rs->v, rs->len, sizeof(*rs->v), dot_kind_cmp);
	int lines = 0;
	size_t more = 0;
	for (size_t k = 0; k < rs->len;) {
		size_t m = k;
		long count = 0;
		while (m < rs->len && !strcmp(rs->v[m].label, rs->v[k].label) && !strcmp(rs->v[m].color, rs->v[k].color))
			count += rs->v[m++].n;
		warn |= !strcmp(rs->v[k].color, DOT_WARN);
		if (lines++ < 16) {
			dot_add(&b, "\n%ld x ", count);
			for (const char *p = rs->v[k].label; *p; p++)
				dot_add(&b, *p == '\n' ? ", " : "%c", *p);
		} else {
			more++;
		}
		k = m;
	}
	if (more)
		dot_add(&b, "\nand %zu other kinds", more);
	fputs("\tsummary [label=", d->out);
	dot_quoted(d->out, b.s);
	fputs(", shape=box", d->out);
	if (warn)
		fprintf(d->out, ", color=\"%s\", fontcolor=\"%s\", penwidth=2", DOT_WARN, DOT_WARN);
	fputs("];\n", d->out);
	free(b.s);
}

/* The result to draw: the only one, else cuda/nvlink, rocm/infinity_fabric
 * or xpu/xelink, else the first with devices. */
static const dmaconn_result *dot_pick(const struct dc_format_input *in)
{
	static const struct {
		dmaconn_device_type type;
		const char *conn;
	} prefer[] = { { DMACONN_DEVICE_CUDA, "nvlink" },
		       { DMACONN_DEVICE_ROCM, "infinity_fabric" },
		       { DMACONN_DEVICE_XPU, "xelink" } };
	if (in->count == 1)
		return in->results[0];
	for (size_t p = 0; p < sizeof(prefer) / sizeof(prefer[0]); p++)
		for (int k = 0; k < in->count; k++)
			if (dmaconn_result_device_type(in->results[k]) == prefer[p].type &&
			    !strcmp(dmaconn_result_connection_type(in->results[k]), prefer[p].conn) &&
			    dmaconn_result_size(in->results[k]) > 0)
				return in->results[k];
	for (int k = 0; k < in->count; k++)
		if (dmaconn_result_size(in->results[k]) > 0)
			return in->results[k];
	return in->count ? in->results[0] : NULL;
}

static void dot_header(const struct dot *d, const struct dc_format_input *in)
{
	struct dot_buf b = { 0 };
	dot_add(&b, "%s/%s%s: %d device%s", dmaconn_device_type_name(d->type), d->conn,
		d->mpi ? " across MPI ranks" : "", d->n, d->n == 1 ? "" : "s");
	if (in->replay) {
		const char *base = strrchr(in->replay, '/');
		dot_add(&b, " (replay of %s)", base ? base + 1 : in->replay);
	}
	dot_add(&b, "\nblue: links (count, GB/s per direction); grey dashed: no link, PCIe path class; "
		    "red: link down or disabled, fabric or verification failed");
	fputs("graph dmaconn {\n", d->out);
	fputs("\tgraph [label=", d->out);
	dot_quoted(d->out, b.s);
	fputs(", labelloc=t, fontname=\"Helvetica\", fontsize=12, nodesep=0.5, ranksep=1.0];\n", d->out);
	fprintf(d->out,
		"\tnode [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", color=\"%s\", "
		"fontname=\"Helvetica\", fontsize=11];\n",
		DOT_FILL, DOT_LINK);
	fputs("\tedge [fontname=\"Helvetica\", fontsize=9];\n", d->out);
	free(b.s);
}

/* The devices (and node-local switches), in one cluster per node under --mpi. */
static void dot_nodes(const struct dot *d)
{
	if (!d->mpi) {
		for (int i = 0; i < d->n; i++)
			dot_device(d, i, "\t");
		for (int s = 0; s < d->nsw; s++)
			dot_switch(d, s, "\t");
		return;
	}
	for (int i = 0; i < d->n; i++) {
		const char *node = dot_dev(d->r, i, DMACONN_PROP_NODE);
		int first = 1;
		for (int k = 0; k < i && first; k++)
			first = !dot_same(node, dot_dev(d->r, k, DMACONN_PROP_NODE));
		if (!first)
			continue;
		const char *host = dot_dev(d->r, i, DMACONN_PROP_HOST);
		fprintf(d->out, "\tsubgraph \"cluster_node%s\" {\n\t\tlabel=", node ? node : "");
		dot_quoted(d->out, host ? host : "?");
		fputs(";\n\t\tstyle=rounded;\n", d->out);
		for (int k = i; k < d->n; k++)
			if (dot_same(node, dot_dev(d->r, k, DMACONN_PROP_NODE)))
				dot_device(d, k, "\t\t");
		for (int s = 0; s < d->nsw; s++)
			if (strchr(d->sw_key[s], '@') && dot_same(node, dot_dev(d->r, d->sw_first[s], DMACONN_PROP_NODE)))
				dot_switch(d, s, "\t\t");
		fputs("\t}\n", d->out);
	}
	for (int s = 0; s < d->nsw; s++)
		if (!strchr(d->sw_key[s], '@'))
			dot_switch(d, s, "\t");
}

int dc_format_dot(FILE *out, FILE *err, const struct dc_format_input *in)
{
	const dmaconn_result *r = dot_pick(in);
	if (!r) {
		/* As the text says it: a graph with nothing in it. */
		fputs("graph dmaconn {\n"
		      "\tgraph [label=\"no accelerators found\", labelloc=t, fontname=\"Helvetica\"];\n"
		      "}\n",
		      out);
		return 0;
	}
	struct dot d = { .out = out, .r = r, .type = dmaconn_result_device_type(r), .mpi = in->mpi };
	d.conn = dmaconn_result_connection_type(r);
	d.n = dmaconn_result_size(r);
	d.nvlink = d.type == DMACONN_DEVICE_CUDA && !strcmp(d.conn, "nvlink");
	dmaconn_result *own_p2p = NULL, *own_verified = NULL;
	d.p2p = !strcmp(d.conn, "p2p") ? r : dc_format_result(in, d.type, "p2p");
	if (!d.p2p && !in->mpi && dmaconn_detect(d.type, "p2p", &own_p2p) == DMACONN_OK)
		d.p2p = own_p2p;
	if (d.type == DMACONN_DEVICE_CUDA) {
		d.verified = !strcmp(d.conn, "verified") ? r : dc_format_result(in, d.type, "verified");
		/* Never GPU work: a cached verdict or the recording's, if any. */
		if (!d.verified && !in->mpi &&
		    dmaconn_detect_passive(DMACONN_DEVICE_CUDA, "verified", &own_verified) == DMACONN_OK)
			d.verified = own_verified;
	}
	d.p2p_of = d.p2p ? dot_map(r, d.p2p) : NULL;
	d.verified_of = d.verified ? dot_map(r, d.verified) : NULL;
	d.degraded = calloc((size_t)d.n + 1, sizeof(*d.degraded));
	struct dot_recs recs = { 0 };
	d.recs = &recs;
	int rc = 0;
	if (!d.degraded || dot_switches(&d) != 0 || dot_cards(&d) != 0 || (d.p2p && !d.p2p_of) ||
	    (d.verified && !d.verified_of)) {
		rc = 1;
	} else {
		if (d.nvlink)
			dot_degraded(&d);
		/* The edges first: how many there are decides what is drawn. */
		for (int i = 0; i < d.n; i++)
			if (d.sw[i] >= 0)
				dot_switch_edge(&d, i);
		for (int i = 0; i < d.n; i++)
			for (int j = i + 1; j < d.n; j++)
				dot_pair_edges(&d, i, j);
		dot_merge(&d);
		size_t edges = 0;
		for (size_t k = 0; k < recs.len; k++)
			edges += recs.v[k].a >= 0 && recs.v[k].c >= 0 && recs.v[k].a != recs.v[k].c;
		rc = recs.oom;
		if (!rc) {
			dot_header(&d, in);
			if (edges > DOT_MAX_EDGES) {
				dot_summary(&d, edges);
			} else {
				dot_nodes(&d);
				for (size_t k = 0; k < recs.len; k++)
					if (recs.v[k].a != recs.v[k].c)
						dot_write_edge(&d, &recs.v[k]);
			}
			fputs("}\n", out);
		}
	}
	if (rc)
		fputs("dmaconn: --format dot: out of memory\n", err);
	for (size_t k = 0; k < recs.len; k++)
		free(recs.v[k].label);
	free(recs.v);
	free(d.card);
	free(d.members);
	for (int s = 0; s < d.nsw; s++)
		free(d.sw_key[s]);
	free(d.sw_key);
	free(d.sw_first);
	free(d.sw);
	free(d.degraded);
	free(d.p2p_of);
	free(d.verified_of);
	dmaconn_result_release(own_p2p);
	dmaconn_result_release(own_verified);
	return rc;
}
