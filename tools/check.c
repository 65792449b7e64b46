/* SPDX-License-Identifier: BSD-3-Clause */
/* `dmaconn check`: this node against what a good node looked like (a file
 * `dmaconn --json` wrote there) or against a rule (--expect-links N,
 * --fully-connected), as a monitoring plugin reports it: the exit status
 * and first line follow the Nagios plugin conventions (0 OK, 1 WARNING,
 * 2 CRITICAL, 3 UNKNOWN; "DMACONN STATE - text | perfdata"), and every
 * finding follows on a line of its own. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "dmaconn.h"

enum { CHECK_OK = 0, CHECK_WARNING = 1, CHECK_CRITICAL = 2, CHECK_UNKNOWN = 3 };

static const char *const check_state_names[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

/* The order findings are listed and the exit status chosen in: what is
 * wrong first, then what could not be told, then what will pass. */
static int check_rank(int state)
{
	static const int rank[] = { 0, 1, 3, 2 };
	return rank[state];
}

static const char check_help[] =
	"Usage: dmaconn check --expect FILE [-d TYPE -c CONNECTION] [--match position|identity]\n"
	"                     [--verify] [--replay FILE]\n"
	"       dmaconn check --expect-links N | --fully-connected [-d TYPE -c CONNECTION]\n"
	"\n"
	"Compares this node with FILE, what `dmaconn --json` printed on a good node\n"
	"(every detector in it, or the one -d/-c names): the device count, models,\n"
	"every matrix entry, link speeds where known, NVSwitch fabric state, and\n"
	"verified pairs when FILE has them (from the verdict cache, or --verify).\n"
	"Exit status and first line as a Nagios plugin: 0 OK, 1 WARNING (fabric\n"
	"registration in progress, an extra device), 2 CRITICAL (a missing GPU, fewer\n"
	"links, a lost pair, failed verification), 3 UNKNOWN (detection could not run,\n"
	"verification absent, a bad FILE or usage); then one line per finding.\n"
	"\n"
	"      --expect FILE        the good node's `dmaconn --json` output\n"
	"      --match position     devices paired by position and model (default:\n"
	"                           UUIDs differ between nodes)\n"
	"      --match identity     paired by UUID, else PCI bus id (the same node)\n"
	"      --expect-links N     every pair has at least N links (default -d cuda\n"
	"                           -c nvlink)\n"
	"      --fully-connected    every pair has connectivity\n"
	"      --verify             verify the pairs FILE has verdicts for, now\n"
	"      --replay FILE        check a recorded node instead of this one\n";

/* One line of the report. */
struct finding {
	int state;
	char *text;
};

struct check {
	struct finding *f;
	int nf;
	int devices, expected;   /* for the summary's performance data */
	char detectors[256];     /* the pairs compared, for the OK line */
};

static void check_say(struct check *c, int state, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check_say(struct check *c, int state, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (int k = 0; k < c->nf; k++)
		if (!strcmp(c->f[k].text, text)) {
			if (check_rank(state) > check_rank(c->f[k].state))
				c->f[k].state = state;
			return; /* said once, whichever detector found it */
		}
	struct finding *f = realloc(c->f, (size_t)(c->nf + 1) * sizeof(*f));
	char *copy = strdup(text);
	if (!f || !copy) {
		free(copy);
		if (f)
			c->f = f;
		fputs("DMACONN UNKNOWN - out of memory\n", stdout);
		exit(CHECK_UNKNOWN);
	}
	c->f = f;
	c->f[c->nf].state = state;
	c->f[c->nf].text = copy;
	c->nf++;
}

static void check_add_detector(struct check *c, const char *type, const char *conn)
{
	size_t len = strlen(c->detectors);
	snprintf(c->detectors + len, sizeof(c->detectors) - len, "%s%s/%s", len ? ", " : "", type, conn);
}

/* ------------------------------------------------------------ expectation */

/* One device of the expectation, or of this node (the same fields). */
struct dev {
	const char *name, *bus, *uuid, *fabric;
};

/* One result of the expectation file. */
struct expected {
	const char *type, *conn;
	int n;
	int *matrix;
	struct dev *devs;
	json_t *pairs; /* borrowed: [{from, to, ...}] */
};

static const char *check_jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* Reads one "results" entry; 0, or -1 with why. */
static int check_read_result(json_t *r, struct expected *e, char *why, size_t len)
{
	json_t *m = json_object_get(r, "matrix"), *d = json_object_get(r, "devices");
	e->type = json_string_value(json_object_get(r, "device_type"));
	e->conn = json_string_value(json_object_get(r, "connection_type"));
	e->pairs = json_object_get(r, "pairs");
	if (!e->type || !e->conn || !json_is_array(m) || !json_is_array(d) ||
	    json_array_size(m) != json_array_size(d) || json_array_size(d) > 1u << 15) {
		snprintf(why, len, "a result lacks device_type, connection_type, or a matrix as large as its devices");
		return -1;
	}
	e->n = (int)json_array_size(d);
	e->matrix = calloc((size_t)e->n * (size_t)e->n + 1, sizeof(int));
	e->devs = calloc((size_t)e->n + 1, sizeof(*e->devs));
	if (!e->matrix || !e->devs) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (int i = 0; i < e->n; i++) {
		json_t *row = json_array_get(m, (size_t)i), *dev = json_array_get(d, (size_t)i);
		if (!json_is_array(row) || json_array_size(row) != (size_t)e->n || !json_is_object(dev)) {
			snprintf(why, len, "%s/%s: matrix row %d or device %d is malformed", e->type, e->conn, i, i);
			return -1;
		}
		for (int j = 0; j < e->n; j++) {
			json_t *v = json_array_get(row, (size_t)j);
			if (!json_is_integer(v)) {
				snprintf(why, len, "%s/%s: matrix entry [%d][%d] is not an integer", e->type, e->conn, i, j);
				return -1;
			}
			e->matrix[i * e->n + j] = (int)json_integer_value(v);
		}
		e->devs[i].name = check_jstr(dev, DMACONN_PROP_NAME);
		e->devs[i].bus = check_jstr(dev, DMACONN_PROP_PCI_BUS_ID);
		e->devs[i].uuid = check_jstr(dev, DMACONN_PROP_UUID);
		e->devs[i].fabric = check_jstr(dev, DMACONN_PROP_FABRIC_STATE);
	}
	return 0;
}

/* A pair's member in the expectation's "pairs", or NULL. */
static json_t *check_exp_pair(const struct expected *e, int i, int j, const char *key)
{
	size_t k;
	json_t *p;
	json_array_foreach(e->pairs, k, p)
	{
		if (json_integer_value(json_object_get(p, "from")) == i &&
		    json_integer_value(json_object_get(p, "to")) == j)
			return json_object_get(p, key);
	}
	return NULL;
}

/* A `dmaconn --verify --json` document as the cuda/verified result it
 * stands for: its "verify" member becomes a "results" entry whose pairs
 * carry "verified" (pass, fail, no_peer).  0, or -1 when malformed. */
static int check_verify_doc(json_t *doc)
{
	json_t *v = json_object_get(doc, "verify"), *pairs = json_object_get(v, "pairs"), *p;
	if (!v)
		return 0;
	const char *type = json_string_value(json_object_get(v, "device_type"));
	if (!type || !json_is_array(pairs))
		return -1;
	json_int_t n = 0;
	size_t k;
	json_array_foreach(pairs, k, p)
	{
		json_int_t a = json_integer_value(json_object_get(p, "from")), b = json_integer_value(json_object_get(p, "to"));
		if (!json_is_integer(json_object_get(p, "from")) || !json_is_integer(json_object_get(p, "to")) || a < 0 ||
		    b < 0 || a >= 1 << 15 || b >= 1 << 15 || !json_is_string(json_object_get(p, "status")))
			return -1;
		n = a >= n ? a + 1 : b >= n ? b + 1 : n;
	}
	json_t *r = json_object(), *matrix = json_array(), *devices = json_array(), *rp = json_array();
	for (json_int_t i = 0; i < n; i++) {
		json_t *row = json_array();
		for (json_int_t j = 0; j < n; j++)
			json_array_append_new(row, json_integer(0));
		json_array_append_new(matrix, row);
		json_array_append_new(devices, json_object());
	}
	json_array_foreach(pairs, k, p)
	{
		json_t *q = json_deep_copy(p);
		json_object_set(q, DMACONN_PROP_VERIFIED, json_object_get(p, "status"));
		json_array_append_new(rp, q);
	}
	json_object_set_new(r, "device_type", json_string(type));
	json_object_set_new(r, "connection_type", json_string(DMACONN_PROP_VERIFIED));
	json_object_set_new(r, "matrix", matrix);
	json_object_set_new(r, "devices", devices);
	json_object_set_new(r, "pairs", rp);
	json_t *results = json_object_get(doc, "results");
	if (!json_is_array(results)) {
		results = json_array();
		json_object_set_new(doc, "results", results);
	}
	json_array_append_new(results, r);
	return 0;
}

/* ------------------------------------------------------------- this node */

static struct dev check_node_dev(const dmaconn_result *r, int i)
{
	struct dev d;
	const char *s;
	d.name = (s = dmaconn_result_device_get(r, i, DMACONN_PROP_NAME)) ? s : "";
	d.bus = (s = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID)) ? s : "";
	d.uuid = (s = dmaconn_result_device_get(r, i, DMACONN_PROP_UUID)) ? s : "";
	d.fabric = (s = dmaconn_result_device_get(r, i, DMACONN_PROP_FABRIC_STATE)) ? s : "";
	return d;
}

/* "GPU 3 (0000:5d:00.0)". */
static const char *check_gpu(char *buf, size_t len, int i, const struct dev *d)
{
	if (*d->bus)
		snprintf(buf, len, "GPU %d (%s)", i, d->bus);
	else
		snprintf(buf, len, "GPU %d", i);
	return buf;
}

/* Detection of a pair; NULL after an UNKNOWN finding when it could not run
 * (an error, or NVIDIA GPUs NVML did not describe: no driver, NVML failing). */
static dmaconn_result *check_detect(struct check *c, const char *tname, const char *conn, int verify)
{
	dmaconn_device_type type;
	dmaconn_result *r = NULL;
	if (dmaconn_device_type_parse(tname, &type) != DMACONN_OK) {
		check_say(c, CHECK_UNKNOWN, "%s/%s: unknown device type", tname, conn);
		return NULL;
	}
	int rc = verify ? dmaconn_detect(type, conn, &r) : dmaconn_detect_passive(type, conn, &r);
	if (rc != DMACONN_OK) {
		check_say(c, CHECK_UNKNOWN, "%s/%s: detection could not run: %s", tname, conn, dmaconn_last_error());
		return NULL;
	}
	int n = dmaconn_result_size(r);
	for (int i = 0; type == DMACONN_DEVICE_CUDA && strcmp(conn, DMACONN_PROP_VERIFIED) && i < n; i++) {
		if (dmaconn_result_device_get(r, i, DMACONN_PROP_NVML_INDEX))
			continue;
		/* The warning says why; said once for all of the vendor's detectors. */
		const char *w = dmaconn_result_warning_count(r) ? dmaconn_result_warning(r, 0) : "";
		size_t skip = strlen(tname) + strlen(conn) + 3;
		if (strlen(w) > skip && !strncmp(w, tname, strlen(tname)) && !strncmp(w + skip - 2, ": ", 2))
			w += skip;
		check_say(c, CHECK_UNKNOWN, "%s: detection could not run: NVML did not describe the %d NVIDIA GPU%s: %s",
			  tname, n, n == 1 ? "" : "s", w);
		dmaconn_result_release(r);
		return NULL;
	}
	if (n > c->devices)
		c->devices = n;
	check_add_detector(c, tname, conn);
	return r;
}

/* Whether GPU i waits for the NVSwitch fabric: its pairs read 0 until then. */
static int check_fabric_pending(const dmaconn_result *r, int i)
{
	const char *s = dmaconn_result_device_get(r, i, DMACONN_PROP_FABRIC_STATE);
	return s && !strcmp(s, "in_progress");
}

static void check_fabric(struct check *c, const char *tname, const dmaconn_result *r, int i, const char *expected)
{
	struct dev d = check_node_dev(r, i);
	char g[96];
	if (!*d.fabric || !strcmp(d.fabric, expected) || (!*expected && !strcmp(d.fabric, "completed")) ||
	    !strcmp(d.fabric, "not_supported"))
		return;
	if (check_fabric_pending(r, i))
		check_say(c, CHECK_WARNING,
			  "%s: %s: NVSwitch fabric registration still in progress (expected %s); its pairs count once "
			  "it completes", tname, check_gpu(g, sizeof(g), i, &d), *expected ? expected : "completed");
	else
		check_say(c, CHECK_CRITICAL, "%s: %s: NVSwitch fabric state expected %s, found %s", tname,
			  check_gpu(g, sizeof(g), i, &d), *expected ? expected : "completed", d.fabric);
}

/* A pair that reads less than it should, unless the fabric explains it. */
static void check_pair(struct check *c, const dmaconn_result *r, const char *label, int fi, int fj, int want,
		       int got, int sym, const char *what)
{
	if (check_fabric_pending(r, fi) || check_fabric_pending(r, fj))
		return; /* reported once per GPU, as the fabric */
	struct dev a = check_node_dev(r, fi), b = check_node_dev(r, fj);
	char ga[96], gb[96];
	const char *reason = dmaconn_result_pair_get(r, fi, fj, DMACONN_PROP_REASON);
	check_gpu(ga, sizeof(ga), fi, &a);
	check_gpu(gb, sizeof(gb), fj, &b);
	char wanted[64];
	if (what)
		snprintf(wanted, sizeof(wanted), "%s%d", what, want);
	else
		snprintf(wanted, sizeof(wanted), "connectivity");
	if (got == 0)
		check_say(c, CHECK_CRITICAL, "%s %s %s %s: lost pair: expected %s, found 0%s%s%s", label, ga,
			  sym ? "<->" : "->", gb, wanted, reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
	else
		check_say(c, CHECK_CRITICAL, "%s %s %s %s: fewer links: expected %s%d, found %d", label, ga,
			  sym ? "<->" : "->", gb, what, want, got);
}

/*
 * Per GPU, the NVLinks down behind the pair findings of result r (those
 * said since finding `first`), said before them: "cuda: GPU 3
 * (0000:5d:00.0): links 5 and 11 down" ("links 0-17" for a run).  Only
 * where the findings are CRITICAL: a GPU whose links were already down on
 * the good node adds nothing to a report that is otherwise OK.
 */
static void check_links_down(struct check *c, const char *tname, const dmaconn_result *r, int first)
{
	int critical = 0, before = c->nf;
	for (int k = first; k < c->nf; k++)
		critical |= c->f[k].state == CHECK_CRITICAL;
	for (int i = 0; critical && i < dmaconn_result_size(r); i++) {
		const char *list = dmaconn_result_device_get(r, i, DMACONN_PROP_NVLINK_DOWN_LINKS);
		int links[64], n = 0;
		for (char *end; list && *list && n < 64; list = *end == ',' ? end + 1 : "") {
			long v = strtol(list, &end, 10);
			if (end == list)
				break;
			links[n++] = (int)v;
		}
		if (!n)
			continue;
		char text[512], g[96];
		size_t o = 0;
		for (int k = 0; k < n && o < sizeof(text);) {
			int run = k;
			while (run + 1 < n && links[run + 1] == links[run] + 1)
				run++;
			if (run - k < 2)
				run = k; /* two in a row are named, not a range */
			int last = run + 1 >= n;
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%d", !k ? "" : last ? " and " : ", ", links[k]);
			if (run > k && o < sizeof(text))
				o += (size_t)snprintf(text + o, sizeof(text) - o, "-%d", links[run]);
			k = run + 1;
		}
		/* The list holds only links another visible GPU has active: of a
		 * GPU with none active, its other links may be down too. */
		const char *active = dmaconn_result_device_get(r, i, DMACONN_PROP_NVLINK_ACTIVE_LINKS);
		const char *inactive = dmaconn_result_device_get(r, i, DMACONN_PROP_NVLINK_INACTIVE_LINKS);
		int none = active && atoi(active) == 0 && inactive &&
			   strcmp(inactive, dmaconn_result_device_get(r, i, DMACONN_PROP_NVLINK_DOWN_LINKS)) != 0;
		struct dev d = check_node_dev(r, i);
		check_say(c, CHECK_CRITICAL, "%s: %s: link%s %s down%s", tname, check_gpu(g, sizeof(g), i, &d),
			  n == 1 ? "" : "s", text, none ? ", none active" : "");
	}
	/* Move the new lines [before, nf) ahead of [first, before). */
	for (int k = before; k < c->nf; k++) {
		struct finding f = c->f[k];
		memmove(c->f + first + 1, c->f + first, (size_t)(k - first) * sizeof(*c->f));
		c->f[first++] = f;
	}
}

/* ---------------------------------------------------------- comparisons */

/* map[i]: this node's device for the expectation's device i, or -1. */
static void check_match(const struct expected *e, const dmaconn_result *r, int identity, int *map, int *used)
{
	int n = dmaconn_result_size(r);
	for (int j = 0; j < n; j++)
		used[j] = 0;
	for (int i = 0; i < e->n; i++)
		map[i] = -1;
	if (identity || n != e->n) {
		/* By UUID (the same node), else by bus id (the same kind of node
		 * keeps its slots: a lost GPU must not shift its peers). */
		int by_uuid = identity;
		for (int pass = by_uuid ? 0 : 1; pass < 2; pass++)
			for (int i = 0; i < e->n; i++) {
				if (map[i] >= 0)
					continue;
				const char *want = pass == 0 ? e->devs[i].uuid : e->devs[i].bus;
				for (int j = 0; *want && j < n && map[i] < 0; j++) {
					struct dev d = check_node_dev(r, j);
					if (!used[j] && !strcmp(pass == 0 ? d.uuid : d.bus, want)) {
						map[i] = j;
						used[j] = 1;
					}
				}
			}
		int matched = 0;
		for (int i = 0; i < e->n; i++)
			matched += map[i] >= 0;
		if (identity || matched == (e->n < n ? e->n : n))
			return;
	}
	for (int i = 0; i < e->n; i++) {
		map[i] = i < n ? i : -1;
		if (i < n)
			used[i] = 1;
	}
	for (int j = e->n; j < n; j++)
		used[j] = 0;
}

static void check_against(struct check *c, const struct expected *e, int identity, int verify)
{
	int verified = !strcmp(e->conn, DMACONN_PROP_VERIFIED);
	char label[128], ga[96], gb[96];
	snprintf(label, sizeof(label), "%s/%s", e->type, e->conn);
	if (verified) {
		/* Only the verdicts the expectation holds are compared. */
		int any = 0;
		for (int i = 0; i < e->n; i++)
			for (int j = 0; j < e->n; j++) {
				const char *v = json_string_value(check_exp_pair(e, i, j, DMACONN_PROP_VERIFIED));
				any |= v && (!strcmp(v, "pass") || !strcmp(v, "fail") || !strcmp(v, "hang"));
			}
		if (!any)
			return;
	}
	if (e->n > c->expected)
		c->expected = e->n;
	dmaconn_result *r = check_detect(c, e->type, e->conn, verify && verified);
	if (!r)
		return;
	int n = dmaconn_result_size(r);
	int *map = calloc((size_t)e->n + 1, sizeof(int)), *used = calloc((size_t)n + 1, sizeof(int));
	if (!map || !used) {
		check_say(c, CHECK_UNKNOWN, "out of memory");
		goto out;
	}
	check_match(e, r, identity, map, used);
	int first = c->nf;
	if (verified && n != e->n) {
		/* The other detectors say what happened to the devices. */
		const char *w = dmaconn_result_warning_count(r) ? dmaconn_result_warning(r, 0) : "";
		check_say(c, CHECK_UNKNOWN, "%s: no verdict for the %d devices expected%s%s", label, e->n,
			  verify ? ": verification could not run: " : " (no cached verdict: run with --verify)",
			  verify ? w : "");
		goto out;
	}
	int absent = 0;
	if (n < e->n)
		check_say(c, CHECK_CRITICAL, "%s: expected %d devices, found %d", e->type, e->n, n);
	for (int i = 0; i < e->n; i++) {
		if (map[i] < 0) {
			check_say(c, CHECK_CRITICAL, "%s: missing GPU: expected %s, %s, found none", e->type,
				  check_gpu(ga, sizeof(ga), i, &e->devs[i]), *e->devs[i].name ? e->devs[i].name : "(unknown)");
			continue;
		}
		struct dev d = check_node_dev(r, map[i]);
		if (*e->devs[i].name && strcmp(e->devs[i].name, d.name))
			check_say(c, CHECK_CRITICAL, "%s: %s: model differs: expected %s, found %s", e->type,
				  check_gpu(ga, sizeof(ga), map[i], &d), e->devs[i].name, *d.name ? d.name : "(unknown)");
		check_fabric(c, e->type, r, map[i], e->devs[i].fabric);
	}
	for (int j = 0; j < n; j++) {
		struct dev d = check_node_dev(r, j);
		if (!used[j])
			check_say(c, CHECK_WARNING, "%s: extra device: %s, %s, not in the expectation", e->type,
				  check_gpu(ga, sizeof(ga), j, &d), *d.name ? d.name : "(unknown)");
	}
	for (int i = 0; i < e->n; i++) {
		for (int j = 0; j < e->n; j++) {
			int fi = map[i], fj = map[j];
			if (i == j || fi < 0 || fj < 0)
				continue;
			struct dev a = check_node_dev(r, fi), b = check_node_dev(r, fj);
			check_gpu(ga, sizeof(ga), fi, &a);
			check_gpu(gb, sizeof(gb), fj, &b);
			if (verified) {
				const char *want = json_string_value(check_exp_pair(e, i, j, DMACONN_PROP_VERIFIED));
				const char *got = dmaconn_result_pair_get(r, fi, fj, DMACONN_PROP_VERIFIED);
				if (!want || strcmp(want, "pass") || (got && !strcmp(got, "pass")))
					continue;
				if (got && (!strcmp(got, "fail") || !strcmp(got, "hang")))
					check_say(c, CHECK_CRITICAL, "%s %s -> %s: verification expected pass, found %s", label,
						  ga, gb, got);
				else
					absent++;
				continue;
			}
			int want = e->matrix[i * e->n + j], got = dmaconn_result_get(r, fi, fj);
			int sym = want == e->matrix[j * e->n + i] && got == dmaconn_result_get(r, fj, fi);
			const char *arrow = sym ? "<->" : "->";
			if (sym && j < i)
				continue; /* said with the pair (j, i) */
			if (got < want)
				check_pair(c, r, label, fi, fj, want, got, sym, "");
			else if (got > want)
				check_say(c, CHECK_WARNING, "%s %s %s %s: expected %d, found %d (more than the expectation)",
					  label, ga, arrow, gb, want, got);
			/* Link speed, where both know it: per link, as fewer links are
			 * said by the nvlink matrix. */
			json_t *ws = check_exp_pair(e, i, j, DMACONN_PROP_NVLINK_GBPS);
			json_t *wl = check_exp_pair(e, i, j, DMACONN_PROP_NVLINK_LINKS);
			const char *gs = dmaconn_result_pair_get(r, fi, fj, DMACONN_PROP_NVLINK_GBPS);
			const char *gl = dmaconn_result_pair_get(r, fi, fj, DMACONN_PROP_NVLINK_LINKS);
			if (json_is_number(ws) && gs && got > 0) {
				double w = json_number_value(ws), g = strtod(gs, NULL);
				int per_link = json_integer_value(wl) > 0 && gl && atoi(gl) > 0;
				if (per_link && (w /= (double)json_integer_value(wl)) > 0)
					g /= atoi(gl);
				if (g + 0.05 < w)
					check_say(c, CHECK_CRITICAL, "%s %s %s %s: slower links: expected %.1f GB/s%s, found %.1f GB/s",
						  label, ga, arrow, gb, w, per_link ? " per link" : "", g);
			}
		}
	}
	if (absent)
		check_say(c, CHECK_UNKNOWN, "%s: %d pair%s expected to pass %s no verdict (%s)", label, absent,
			  absent == 1 ? "" : "s", absent == 1 ? "has" : "have",
			  verify ? "verification could not run" : "none cached: run with --verify");
	check_links_down(c, e->type, r, first);
out:
	free(map);
	free(used);
	dmaconn_result_release(r);
}

/* --expect-links N and --fully-connected, on one detector's result. */
static void check_rule(struct check *c, const char *tname, const char *conn, int links, int full)
{
	dmaconn_result *r = check_detect(c, tname, conn, 0);
	char label[128];
	if (!r)
		return;
	snprintf(label, sizeof(label), "%s/%s", tname, conn);
	int n = dmaconn_result_size(r), first = c->nf;
	if (n == 0)
		check_say(c, CHECK_CRITICAL, "%s: no devices found", label);
	for (int i = 0; i < n; i++)
		check_fabric(c, tname, r, i, "");
	int want = links > 0 ? links : 1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int got = dmaconn_result_get(r, i, j);
			int sym = got == dmaconn_result_get(r, j, i);
			if (i == j || (sym && j < i) || got >= want || (!full && links <= 0))
				continue;
			if (got > 0 && links <= 0)
				continue;
			check_pair(c, r, label, i, j, want, got, sym, links > 0 ? "at least " : NULL);
		}
	check_links_down(c, tname, r, first);
	dmaconn_result_release(r);
}

/* ----------------------------------------------------------------- main */

static int check_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int check_usage(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("DMACONN UNKNOWN - usage: %s\n", msg);
	fputs("Try 'dmaconn check --help'.\n", stderr);
	return CHECK_UNKNOWN;
}

static void check_ignore_warning(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
}

static int check_report(struct check *c)
{
	int state = CHECK_OK, worst = -1, counts[4] = { 0 };
	for (int k = 0; k < c->nf; k++) {
		counts[c->f[k].state]++;
		if (check_rank(c->f[k].state) > check_rank(state)) {
			state = c->f[k].state;
			worst = k;
		} else if (worst < 0 && c->f[k].state == state && state != CHECK_OK) {
			worst = k;
		}
	}
	printf("DMACONN %s - ", check_state_names[state]);
	if (worst < 0)
		printf("%d device%s as expected (%s)", c->devices, c->devices == 1 ? "" : "s", c->detectors);
	else if (c->nf > 1)
		printf("%s (and %d more finding%s)", c->f[worst].text, c->nf - 1, c->nf == 2 ? "" : "s");
	else
		printf("%s", c->f[worst].text);
	printf(" | devices=%d;;;0", c->devices);
	if (c->expected)
		printf(" expected_devices=%d;;;0", c->expected);
	printf(" critical=%d;;;0 warning=%d;;;0 unknown=%d;;;0\n", counts[CHECK_CRITICAL], counts[CHECK_WARNING],
	       counts[CHECK_UNKNOWN]);
	for (int r = 3; r >= 1; r--)
		for (int k = 0; k < c->nf; k++)
			if (check_rank(c->f[k].state) == r)
				printf("%s: %s\n", check_state_names[c->f[k].state], c->f[k].text);
	return state;
}

int dc_check_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "expect", required_argument, NULL, 'e' },
		{ "device-type", required_argument, NULL, 'd' },
		{ "connection", required_argument, NULL, 'c' },
		{ "match", required_argument, NULL, 'm' },
		{ "expect-links", required_argument, NULL, 'L' },
		{ "fully-connected", no_argument, NULL, 'F' },
		{ "verify", no_argument, NULL, 'v' },
		{ "replay", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL, *tname = NULL, *conn = NULL, *replay = NULL;
	int identity = 0, links = 0, full = 0, verify = 0, opt;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":d:c:h", options, NULL)) != -1) {
		switch (opt) {
		case 'e':
			file = optarg;
			break;
		case 'd':
			tname = optarg;
			break;
		case 'c':
			conn = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "position") && strcmp(optarg, "identity"))
				return check_usage("--match takes position or identity");
			identity = !strcmp(optarg, "identity");
			break;
		case 'L': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || v < 1 || v > 1 << 20)
				return check_usage("--expect-links takes a number of links, at least 1");
			links = (int)v;
			break;
		}
		case 'F':
			full = 1;
			break;
		case 'v':
			verify = 1;
			break;
		case 'P':
			replay = optarg;
			break;
		case 'h':
			fputs(check_help, stdout);
			return CHECK_OK;
		case ':':
			return check_usage("option '%s' needs an argument", argv[optind - 1]);
		default:
			return check_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return check_usage("unexpected argument '%s'", argv[optind]);
	if (!file && !links && !full)
		return check_usage("give --expect FILE, --expect-links N or --fully-connected");
	if (!tname != !conn)
		return check_usage("-d and -c go together");
	if (verify && !file)
		return check_usage("--verify compares the verdicts of an --expect file");
	if (replay && (!*replay || dmaconn_set_replay_file(replay) != DMACONN_OK))
		return check_usage("--replay: %s", *replay ? dmaconn_last_error() : "needs a file name");
	dmaconn_set_warning_handler(check_ignore_warning, NULL);

	struct check c = { 0 };
	json_t *doc = NULL;
	if (file) {
		json_error_t jerr;
		doc = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
		json_t *results = json_object_get(doc, "results");
		const char *why = NULL;
		char buf[512];
		if (!doc)
			snprintf(buf, sizeof(buf), "%s", jerr.text), why = buf;
		else if (json_integer_value(json_object_get(doc, "version")) != 1)
			why = "not a dmaconn --json document of version 1";
		else if (json_object_get(doc, "error"))
			why = "it records a failed run";
		else if (check_verify_doc(doc) != 0)
			why = "its verify member is malformed";
		else if (!json_is_array(results = json_object_get(doc, "results")) || !json_array_size(results))
			why = "it holds no results";
		if (why) {
			printf("DMACONN UNKNOWN - cannot use --expect %s: %s\n", file, why);
			json_decref(doc);
			return CHECK_UNKNOWN;
		}
		size_t k;
		json_t *res;
		int compared = 0;
		json_array_foreach(results, k, res)
		{
			struct expected e = { 0 };
			if (check_read_result(res, &e, buf, sizeof(buf)) != 0) {
				printf("DMACONN UNKNOWN - cannot use --expect %s: %s\n", file, buf);
				free(e.matrix);
				free(e.devs);
				json_decref(doc);
				return CHECK_UNKNOWN;
			}
			if (!tname || (!strcmp(tname, e.type) && !strcmp(conn, e.conn))) {
				check_against(&c, &e, identity, verify);
				compared++;
			}
			free(e.matrix);
			free(e.devs);
		}
		if (!compared) {
			printf("DMACONN UNKNOWN - --expect %s has no %s/%s result\n", file, tname, conn);
			json_decref(doc);
			return CHECK_UNKNOWN;
		}
	}
	if (links || full)
		check_rule(&c, tname ? tname : "cuda", conn ? conn : "nvlink", links, full);
	int state = check_report(&c);
	for (int k = 0; k < c.nf; k++)
		free(c.f[k].text);
	free(c.f);
	json_decref(doc);
	return state;
}
