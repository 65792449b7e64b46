/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libdmaconn_mpi: DMA connectivity across the ranks of an MPI job, on top of
 * libdmaconn's public API (docs/multinode.md).
 *
 * Flow, every step collective over comm and taken by every rank whatever
 * happened to it before:
 *   1. the node: MPI's shared-memory domain (its lowest rank names it) plus
 *      dmaconn_host_id(), which a replay file sets;
 *   2. local detection (dmaconn_detect) and, when the domain holds other
 *      ranks, a detection over the whole node (dmaconn_detect_node);
 *   3. each rank's contribution, serialised in a small length-prefixed
 *      format, gathered everywhere (MPI_Allgather of the lengths, then
 *      MPI_Allgatherv);
 *   4. every rank builds the same result from the same bytes.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dmaconn_mpi.h"
#include "dmaconn_mpi_cli.h"
#include "linkmatrix.h"

#define MSG_SIZE 1024

/* ------------------------------------------------------------ errors */

struct failure {
	int err;
	char msg[MSG_SIZE];
};

static int fail_detector(dmaconn_builder *b, void *user_data)
{
	const struct failure *f = user_data;
	return dmaconn_builder_fail(b, f->err, "%s", f->msg);
}

/* Sets dmaconn_last_error() to the message and returns err. */
static int fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int err, const char *fmt, ...)
{
	struct failure f = { .err = err };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f.msg, sizeof(f.msg), fmt, ap);
	va_end(ap);
	dmaconn_result *r = NULL;
	dmaconn_result_build(DMACONN_DEVICE_CUDA, "mpi", fail_detector, &f, &r);
	dmaconn_result_release(r);
	return err;
}

static int mpi_failed(const char *call, int code)
{
	char text[MPI_MAX_ERROR_STRING] = "";
	int len = 0;
	if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "MPI error %d", code);
	return fail(DMACONN_EDETECTOR, "dmaconn_mpi_detect: %s failed: %s", call, text);
}

/* ------------------------------------------------------- the wire format */

/*
 * What one rank contributes; integers are 4 bytes, big-endian, str is a
 * u32 length and that many bytes (no NUL):
 *   "DMC1"                                magic and format version
 *   i32 status                            of dmaconn_detect (0 or DMACONN_E*)
 *   str host                              dmaconn_host_id()
 *   u32 domain                            lowest comm rank of its shared-memory domain
 *   str error                             dmaconn_last_error() when status != 0
 *   u32 n, n*n u32                        the local matrix
 *   n times: u32 k, k times (str, str)    device properties
 *   u32 w, w times str                    warnings
 *   i32 view status, str view error       of dmaconn_detect_node
 *   u32 m, m times str, m*m u32           the node view: device keys, matrix (m = 0: none)
 *   str imex, str imex text               dmaconn_host_imex() for "multicast" ("": ready, or not asked)
 *   u32 k, k times (u32 i*n+j, str, str)  reason and reason text of the local matrix's zeros
 *   u32 k, k times (u32 i*m+j, str, str)  the same of the node view's
 */
static const unsigned char magic[4] = { 'D', 'M', 'C', '2' };

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int oom;
};

static void put(struct wbuf *w, const void *data, size_t n)
{
	if (w->oom || n == 0)
		return;
	if (n > (size_t)INT_MAX - w->len) {
		w->oom = 1;
		return;
	}
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 512;
		while (cap < w->len + n)
			cap *= 2;
		unsigned char *p = realloc(w->p, cap);
		if (!p) {
			w->oom = 1;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, data, n);
	w->len += n;
}

static void put_u32(struct wbuf *w, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
			       (unsigned char)v };
	put(w, b, 4);
}

static void put_str(struct wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	put_u32(w, (uint32_t)n);
	put(w, s, n);
}

struct rbuf {
	const unsigned char *p;
	size_t len, pos;
	int bad; /* malformed */
	int oom;
};

static uint32_t get_u32(struct rbuf *r)
{
	if (r->bad || r->len - r->pos < 4) {
		r->bad = 1;
		return 0;
	}
	const unsigned char *b = r->p + r->pos;
	r->pos += 4;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static int get_i32(struct rbuf *r)
{
	uint32_t v = get_u32(r);
	return v <= INT_MAX ? (int)v : -(int)(~v) - 1;
}

/* A count of items of at least `each` bytes that must still fit. */
static int get_count(struct rbuf *r, size_t each, size_t limit)
{
	uint32_t n = get_u32(r);
	if (r->bad || n > limit || (uint64_t)n * each > r->len - r->pos) {
		r->bad = 1;
		return 0;
	}
	return (int)n;
}

static char *get_str(struct rbuf *r)
{
	uint32_t n = get_u32(r);
	if (r->bad || n > r->len - r->pos) {
		r->bad = 1;
		return NULL;
	}
	char *s = malloc((size_t)n + 1);
	if (!s) {
		r->oom = r->bad = 1;
		return NULL;
	}
	memcpy(s, r->p + r->pos, n);
	s[n] = '\0';
	r->pos += n;
	return s;
}

/* ------------------------------------------------------- contributions */

struct device {
	int nprops;
	char **keys, **values;
};

/* Why pairs of a matrix are 0: reason[i*n+j] and text[i*n+j], NULL where none. */
struct reasons {
	char **reason, **text;
};

struct contrib {
	int readable;
	int status;
	char *host, *error;
	int domain;
	int n;
	int *matrix;
	struct device *devs;
	int nwarn;
	char **warn;
	int view_status;
	char *view_error;
	int m;
	char **view_keys;
	int *view_matrix;
	char *imex, *imex_text;
	struct reasons why, view_why; /* of matrix and view_matrix */
};

static void strv_free(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void reasons_free(struct reasons *w, int n)
{
	strv_free(w->reason, n * n);
	strv_free(w->text, n * n);
}

static void contrib_free(struct contrib *c)
{
	reasons_free(&c->why, c->n);
	reasons_free(&c->view_why, c->m);
	free(c->imex);
	free(c->imex_text);
	free(c->host);
	free(c->error);
	free(c->matrix);
	for (int i = 0; c->devs && i < c->n; i++) {
		strv_free(c->devs[i].keys, c->devs[i].nprops);
		strv_free(c->devs[i].values, c->devs[i].nprops);
	}
	free(c->devs);
	strv_free(c->warn, c->nwarn);
	free(c->view_error);
	strv_free(c->view_keys, c->m);
	free(c->view_matrix);
	memset(c, 0, sizeof(*c));
}

static int *get_matrix(struct rbuf *r, int n)
{
	int *m = calloc((size_t)n * (size_t)n + 1, sizeof(int));
	if (!m) {
		r->oom = r->bad = 1;
		return NULL;
	}
	for (size_t k = 0; k < (size_t)n * (size_t)n; k++) {
		uint32_t v = get_u32(r);
		m[k] = v > INT_MAX ? 0 : (int)v;
	}
	return m;
}

static char **get_strv(struct rbuf *r, int n)
{
	char **v = calloc((size_t)n + 1, sizeof(*v));
	if (!v) {
		r->oom = r->bad = 1;
		return NULL;
	}
	for (int i = 0; i < n && !r->bad; i++)
		v[i] = get_str(r);
	return v;
}

/* The reasons of an n x n matrix's zeros: a count, then (index, reason, text). */
static void get_reasons(struct rbuf *r, struct reasons *w, int n)
{
	int k = get_count(r, 12, (size_t)n * (size_t)n);
	if (r->bad || k == 0)
		return;
	w->reason = calloc((size_t)n * (size_t)n + 1, sizeof(char *));
	w->text = calloc((size_t)n * (size_t)n + 1, sizeof(char *));
	if (!w->reason || !w->text) {
		r->oom = r->bad = 1;
		return;
	}
	for (int e = 0; e < k && !r->bad; e++) {
		uint32_t at = get_u32(r);
		char *reason = get_str(r), *text = get_str(r);
		if (!r->bad && ((uint64_t)at >= (uint64_t)n * (uint64_t)n || w->reason[at]))
			r->bad = 1;
		if (r->bad) {
			free(reason);
			free(text);
			return;
		}
		w->reason[at] = reason;
		w->text[at] = text;
	}
}

/* Parses one contribution; c->readable says whether it could. */
static void contrib_parse(struct contrib *c, const unsigned char *data, size_t len, int *oom)
{
	enum { MAX_DEVICES = 65536 };
	struct rbuf r = { data, len, 0, 0, 0 };
	memset(c, 0, sizeof(*c));
	if (len < 4 || memcmp(data, magic, 4) != 0) {
		r.bad = 1;
		goto out;
	}
	r.pos = 4;
	c->status = get_i32(&r);
	c->host = get_str(&r);
	c->domain = (int)get_u32(&r);
	c->error = get_str(&r);
	int n = get_count(&r, 0, MAX_DEVICES);
	if (!r.bad && (uint64_t)n * (uint64_t)n * 4 > r.len - r.pos)
		r.bad = 1;
	if (r.bad)
		goto out;
	c->n = n;
	c->matrix = get_matrix(&r, n);
	c->devs = calloc((size_t)n + 1, sizeof(*c->devs));
	if (!c->devs)
		r.oom = r.bad = 1;
	for (int i = 0; i < n && !r.bad; i++) {
		int k = get_count(&r, 8, INT_MAX / 2);
		c->devs[i].keys = calloc((size_t)k + 1, sizeof(char *));
		c->devs[i].values = calloc((size_t)k + 1, sizeof(char *));
		if (!c->devs[i].keys || !c->devs[i].values) {
			r.oom = r.bad = 1;
			break;
		}
		c->devs[i].nprops = k;
		for (int p = 0; p < k && !r.bad; p++) {
			c->devs[i].keys[p] = get_str(&r);
			c->devs[i].values[p] = get_str(&r);
		}
	}
	c->nwarn = get_count(&r, 4, INT_MAX / 2);
	if (!r.bad)
		c->warn = get_strv(&r, c->nwarn);
	c->view_status = get_i32(&r);
	c->view_error = get_str(&r);
	int m = get_count(&r, 4, MAX_DEVICES);
	if (!r.bad && (uint64_t)m * (uint64_t)m * 4 > r.len - r.pos)
		r.bad = 1;
	if (!r.bad) {
		c->m = m;
		c->view_keys = get_strv(&r, m);
		if (!r.bad)
			c->view_matrix = get_matrix(&r, m);
	}
	c->imex = get_str(&r);
	c->imex_text = get_str(&r);
	get_reasons(&r, &c->why, c->n);
	get_reasons(&r, &c->view_why, c->m);
	if (!r.bad && r.pos != r.len)
		r.bad = 1;
out:
	if (r.oom)
		*oom = 1;
	if (r.bad) {
		contrib_free(c);
		return;
	}
	c->readable = 1;
}

/* ------------------------------------------------------- this rank's part */

/* The name two ranks match a device by: its UUID, else its PCI address. */
static const char *result_key(const dmaconn_result *r, int i)
{
	const char *uuid = dmaconn_result_device_get(r, i, DMACONN_PROP_UUID);
	if (uuid && *uuid)
		return uuid;
	const char *bus = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID);
	return bus && *bus ? bus : "";
}

static void put_matrix(struct wbuf *w, const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			put_u32(w, (uint32_t)dmaconn_result_get(r, i, j));
}

/* Why r's zeros are 0, where it says. */
static void put_reasons(struct wbuf *w, const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	uint32_t k = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			put_u32(w, k);
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				const char *reason = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON);
				if (i == j || dmaconn_result_get(r, i, j) != 0 || !reason)
					continue;
				if (!pass) {
					k++;
					continue;
				}
				put_u32(w, (uint32_t)(i * n + j));
				put_str(w, reason);
				put_str(w, dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT));
			}
	}
}

/* Detects and serialises what this rank contributes. */
static void contribute(struct wbuf *w, dmaconn_device_type type, const char *connection, int domain,
		       int domain_size)
{
	char host[1024], error[MSG_SIZE] = "", view_error[MSG_SIZE] = "";
	snprintf(host, sizeof(host), "%s", dmaconn_host_id());
	dmaconn_result *r = NULL, *view = NULL;
	int status = dmaconn_detect(type, connection, &r), view_status = DMACONN_OK;
	if (status != DMACONN_OK)
		snprintf(error, sizeof(error), "%s", dmaconn_last_error());
	/* Other ranks share this node: their devices are found in a
	 * detection over all of it. */
	if (status == DMACONN_OK && domain_size > 1) {
		view_status = dmaconn_detect_node(type, connection, &view);
		if (view_status != DMACONN_OK)
			snprintf(view_error, sizeof(view_error), "%s", dmaconn_last_error());
	}
	int n = dmaconn_result_size(r);
	put(w, magic, 4);
	put_u32(w, (uint32_t)status);
	put_str(w, host);
	put_u32(w, (uint32_t)domain);
	put_str(w, error);
	put_u32(w, (uint32_t)n);
	put_matrix(w, r);
	for (int i = 0; i < n; i++) {
		int k = dmaconn_result_device_property_count(r, i);
		put_u32(w, (uint32_t)k);
		for (int p = 0; p < k; p++) {
			put_str(w, dmaconn_result_device_property_key(r, i, p));
			put_str(w, dmaconn_result_device_property_value(r, i, p));
		}
	}
	int nwarn = dmaconn_result_warning_count(r);
	put_u32(w, (uint32_t)nwarn);
	for (int k = 0; k < nwarn; k++)
		put_str(w, dmaconn_result_warning(r, k));
	put_u32(w, (uint32_t)view_status);
	put_str(w, view_error);
	int m = dmaconn_result_size(view);
	put_u32(w, (uint32_t)m);
	for (int i = 0; i < m; i++)
		put_str(w, result_key(view, i));
	put_matrix(w, view);
	/* Whether other nodes' GPUs may join this node's in a multicast
	 * object: IMEX; asked for multicast only. */
	char imex_text[MSG_SIZE] = "";
	const char *imex = strcmp(connection, "multicast") ? NULL : dmaconn_host_imex(imex_text, sizeof(imex_text));
	put_str(w, imex ? imex : "");
	put_str(w, imex ? imex_text : "");
	put_reasons(w, r);
	put_reasons(w, view);
	dmaconn_result_release(view);
	dmaconn_result_release(r);
}

/* ------------------------------------------------------- the global result */

struct assembly {
	int me, size;
	const char *label;      /* "cuda/nvlink" */
	const char *connection;
	struct contrib *c;      /* size entries */
};

static const char *dev_get(const struct contrib *c, int i, const char *key)
{
	const struct device *d = &c->devs[i];
	for (int p = 0; p < d->nprops; p++)
		if (!strcmp(d->keys[p], key))
			return d->values[p];
	return NULL;
}

static const char *dev_key(const struct contrib *c, int i)
{
	const char *uuid = dev_get(c, i, DMACONN_PROP_UUID);
	if (uuid && *uuid)
		return uuid;
	const char *bus = dev_get(c, i, DMACONN_PROP_PCI_BUS_ID);
	return bus && *bus ? bus : NULL;
}

/* Why entry at of a matrix is 0, where its detection said. */
struct why {
	const char *reason, *text;
};

static struct why why_at(const struct reasons *w, size_t at)
{
	struct why y = { NULL, NULL };
	if (w->reason) {
		y.reason = w->reason[at];
		y.text = w->text[at];
	}
	return y;
}

/* c's entry from device ka to device kb of its node: from its view of the
 * whole node, else its own matrix, and why it is 0 (*why).  0 when it does
 * not hold both. */
static int view_entry(const struct contrib *c, const char *ka, const char *kb, int *value, struct why *why)
{
	int ia = -1, ib = -1;
	if (c->m > 0) {
		for (int i = 0; i < c->m; i++) {
			if (ia < 0 && !strcmp(c->view_keys[i], ka))
				ia = i;
			if (ib < 0 && !strcmp(c->view_keys[i], kb))
				ib = i;
		}
		if (ia >= 0 && ib >= 0) {
			size_t at = (size_t)ia * (size_t)c->m + (size_t)ib;
			*value = c->view_matrix[at];
			*why = why_at(&c->view_why, at);
			return 1;
		}
		return 0;
	}
	for (int i = 0; i < c->n; i++) {
		const char *k = dev_key(c, i);
		if (k && ia < 0 && !strcmp(k, ka))
			ia = i;
		if (k && ib < 0 && !strcmp(k, kb))
			ib = i;
	}
	if (ia < 0 || ib < 0)
		return 0;
	size_t at = (size_t)ia * (size_t)c->n + (size_t)ib;
	*value = c->matrix[at];
	*why = why_at(&c->why, at);
	return 1;
}

/*
 * The entry from device ka to kb of one node, held by ranks r and s: the
 * view of either; for multicast, 1 only where both views that hold the pair
 * say so (an AND of every verdict), *by the rank whose 0 it is.  0 when
 * neither holds both.
 */
static int node_entry(const struct contrib *c, int r, int s, const char *ka, const char *kb, int multicast,
		      int *value, struct why *why, int *by)
{
	int vr = 0, vs = 0;
	struct why wr = { NULL, NULL }, ws = { NULL, NULL };
	int hr = view_entry(&c[r], ka, kb, &vr, &wr);
	int hs = (!hr || multicast) && view_entry(&c[s], ka, kb, &vs, &ws);
	if (hr && (!hs || vr <= 0 || !multicast)) {
		*value = vr;
		*why = wr;
		*by = r;
	} else if (hs) {
		*value = vs;
		*why = ws;
		*by = s;
	}
	return hr || hs;
}

static int nonzero_uuid(const char *u)
{
	for (; *u; u++)
		if (*u != '0' && *u != '-')
			return 1;
	return 0;
}

/* What the NVSwitch rule looks at in one device, found once. */
struct facts {
	int rank, local;
	const char *key;   /* dev_key() */
	int in_domain;     /* its NVSwitch fabric is usable across nodes: node below */
	struct dc_node node;
	long switch_links;
	/* cuda/multicast: its own capability and domain */
	int multicast_ok;       /* multicast_supported is 1 */
	const char *multicast_reason, *cluster, *multicast_clique;
	int has_cluster;        /* a non-zero cluster UUID, in uuid */
	unsigned char uuid[16];
};

/* A fabric cluster UUID as its 16 bytes; -1 unless 32 hex digits. */
static int parse_uuid(const char *s, unsigned char out[16])
{
	int nibbles = 0;
	for (; *s && nibbles <= 32; s++) {
		int v = *s >= '0' && *s <= '9' ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
			: *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (v < 0 && *s != '-')
			return -1;
		if (v >= 0 && nibbles < 32)
			out[nibbles / 2] = (unsigned char)(nibbles % 2 ? out[nibbles / 2] | v : v << 4);
		nibbles += v >= 0;
	}
	return nibbles == 32 ? 0 : -1;
}

static void find_facts(struct facts *f, const struct contrib *c, int r, int i)
{
	const char *state = dev_get(&c[r], i, DMACONN_PROP_FABRIC_STATE);
	const char *status = dev_get(&c[r], i, DMACONN_PROP_FABRIC_STATUS);
	const char *cluster = dev_get(&c[r], i, DMACONN_PROP_CLUSTER_UUID);
	const char *clique = dev_get(&c[r], i, DMACONN_PROP_CLIQUE_ID);
	const char *links = dev_get(&c[r], i, DMACONN_PROP_NVLINK_SWITCH_LINKS);
	memset(f, 0, sizeof(*f));
	f->rank = r;
	f->local = i;
	f->key = dev_key(&c[r], i);
	long long switch_links = 0, clique_id = -1;
	if (links && dmaconn_property_read_int(DMACONN_PROP_NVLINK_SWITCH_LINKS, links, &switch_links) != DMACONN_OK)
		switch_links = 0;
	f->switch_links = switch_links > 0 && switch_links <= INT_MAX ? (long)switch_links : 0;
	if (clique && dmaconn_property_read_int(DMACONN_PROP_CLIQUE_ID, clique, &clique_id) != DMACONN_OK)
		clique_id = -1;
	const char *multicast = dev_get(&c[r], i, DMACONN_PROP_MULTICAST_SUPPORTED);
	f->multicast_ok = multicast && !strcmp(multicast, "1");
	f->multicast_reason = dev_get(&c[r], i, DMACONN_PROP_MULTICAST_REASON);
	f->cluster = cluster;
	f->has_cluster = cluster && nonzero_uuid(cluster) && parse_uuid(cluster, f->uuid) == 0;
	f->multicast_clique = dev_get(&c[r], i, DMACONN_PROP_MULTICAST_CLIQUE_ID);
	if (!f->multicast_clique)
		f->multicast_clique = clique;
	/* Registered with the fabric manager, successfully ("SUCCESS" from
	 * writers that drop NVML's prefix), in a named domain. */
	if (state && !strcmp(state, DMACONN_FABRIC_STATE_COMPLETED) && status &&
	    (!strcmp(status, DMACONN_FABRIC_STATUS_SUCCESS) || !strcmp(status, "SUCCESS")) && cluster &&
	    nonzero_uuid(cluster) && parse_uuid(cluster, f->node.cluster) == 0 && clique_id >= 0 &&
	    clique_id <= UINT_MAX && f->switch_links > 0) {
		f->in_domain = 1;
		f->node.switch_usable = 1;
		f->node.has_domain = 1;
		f->node.clique = (unsigned int)clique_id;
	}
}

/* Devices of different nodes: one NVLink domain, through the switches. */
static int across_nodes(const struct assembly *a, const struct facts *fa, const struct facts *fb)
{
	long v = dc_switch_between(&fa->node, fa->switch_links, &fb->node, fb->switch_links);
	if (v <= 0)
		return 0;
	if (strcmp(a->connection, "nvlink") != 0)
		return 1;
	return v > INT_MAX ? INT_MAX : (int)v;
}

/* ---------------------------------------------- multicast across nodes */

static void textf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void textf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

/*
 * Whether GPUs a and b, on different nodes, can join one multicast object:
 * both can (multicast_supported), in one NVLink domain (the same non-zero
 * cluster UUID and multicast clique), with IMEX ready on both nodes.  1, or
 * 0 with the first cause in *code and, naming the rank, host and GPU that
 * caused it, in text; *imex_of gets the rank whose node is not ready for
 * IMEX when that is the cause (else -1).  The GPU of the lower rank is
 * looked at first: (b, a) has the same verdict and reason.
 */
static int multicast_across(const struct contrib *c, const struct facts *a, const struct facts *b, const char **code,
			    char *text, size_t len, int *imex_of)
{
	const struct facts *f[2] = { a->rank < b->rank ? a : b, a->rank < b->rank ? b : a };
	int cause = -1; /* the GPU (0, 1) or its node that makes it 0 */
	*imex_of = -1;
	*code = NULL;
	for (int k = 0; k < 2 && !*code; k++)
		if (!f[k]->multicast_ok) {
			*code = f[k]->multicast_reason && *f[k]->multicast_reason ? f[k]->multicast_reason
										: DMACONN_REASON_UNKNOWN;
			cause = k;
		}
	for (int k = 0; k < 2 && !*code; k++)
		if (!f[k]->has_cluster) {
			*code = DMACONN_REASON_DIFFERENT_CLUSTER;
			cause = k;
		}
	if (!*code && memcmp(f[0]->uuid, f[1]->uuid, 16) != 0)
		*code = DMACONN_REASON_DIFFERENT_CLUSTER;
	else if (!*code && (!f[0]->multicast_clique || !f[1]->multicast_clique ||
			    strcmp(f[0]->multicast_clique, f[1]->multicast_clique) != 0))
		*code = DMACONN_REASON_DIFFERENT_CLIQUE;
	for (int k = 0; k < 2 && !*code; k++) {
		const struct contrib *t = &c[f[k]->rank];
		if (t->imex && *t->imex) {
			*code = t->imex;
			cause = k;
			*imex_of = f[k]->rank;
		}
	}
	if (!*code)
		return 1;
	/* Only a 0 is put in words. */
	char at[2][MSG_SIZE / 2];
	for (int k = 0; k < 2; k++) {
		const char *bus = dev_get(&c[f[k]->rank], f[k]->local, DMACONN_PROP_PCI_BUS_ID);
		textf(at[k], sizeof(at[k]), "rank %d (%s) GPU %d (%s)", f[k]->rank, c[f[k]->rank].host, f[k]->local,
		      bus && *bus ? bus : "no bus id");
	}
	if (*imex_of >= 0)
		textf(text, len, "%s: its node is not ready for IMEX: %s", at[cause], c[*imex_of].imex_text);
	else if (cause >= 0 && !f[cause]->multicast_ok)
		textf(text, len, "%s cannot join a multicast object (%s)", at[cause], *code);
	else if (cause >= 0)
		textf(text, len, "%s is in no multi-node NVLink domain (cluster UUID %s)", at[cause],
		      f[cause]->cluster && *f[cause]->cluster ? f[cause]->cluster : "unknown");
	else if (!strcmp(*code, DMACONN_REASON_DIFFERENT_CLUSTER))
		textf(text, len, "%s is in NVLink domain %s, %s in %s", at[0], f[0]->cluster, at[1], f[1]->cluster);
	else
		textf(text, len, "%s is in multicast clique %s, %s in %s", at[0],
		      f[0]->multicast_clique ? f[0]->multicast_clique : "unknown", at[1],
		      f[1]->multicast_clique ? f[1]->multicast_clique : "unknown");
	return 0;
}

/* A warning about rank `about`: sent to the sink there, stored everywhere. */
static void note(dmaconn_builder *b, const struct assembly *a, int about, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void note(dmaconn_builder *b, const struct assembly *a, int about, const char *fmt, ...)
{
	char msg[MSG_SIZE];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (about == a->me)
		dmaconn_builder_warn(b, "%s", msg);
	else
		dmaconn_builder_add_warning(b, msg);
}

static int is_own_key(const char *key)
{
	return !strcmp(key, DMACONN_PROP_RANK) || !strcmp(key, DMACONN_PROP_HOST) || !strcmp(key, DMACONN_PROP_NODE) ||
	       !strcmp(key, DMACONN_PROP_LOCAL_ORDINAL);
}

static int assemble(dmaconn_builder *b, void *user_data)
{
	const struct assembly *a = user_data;
	const struct contrib *c = a->c;
	int size = a->size, rc = DMACONN_EINVAL;
	long total = 0;
	/* Per rank (per node for no_imex), in one block. */
	size_t per = (size_t)size + 1;
	int *first = calloc(4 * per, sizeof(int)); /* first global index of each rank */
	int *node = first ? first + per : NULL;  /* node number of each rank */
	int *unmatched = first ? first + 2 * per : NULL; /* a lower rank it could not pair with, + 1 */
	int *no_imex = first ? first + 3 * per : NULL; /* per node: a rank whose IMEX made a 0, + 1 */
	if (!first) {
		rc = dmaconn_builder_fail(b, DMACONN_ENOMEM, "out of memory for %d ranks", size);
		goto out;
	}
	int nodes = 0;
	for (int r = 0; r < size; r++) {
		first[r] = (int)total;
		if (c[r].readable && c[r].status == DMACONN_OK)
			total += c[r].n;
		if (total > 65536) {
			rc = dmaconn_builder_fail(b, DMACONN_EINVAL, "%ld devices across the ranks, more than dmaconn accepts",
						  total);
			goto out;
		}
		node[r] = -1;
		for (int s = 0; s < r && c[r].readable; s++) {
			if (c[s].readable && c[s].domain == c[r].domain && !strcmp(c[s].host, c[r].host)) {
				node[r] = node[s];
				break;
			}
		}
		if (node[r] < 0)
			node[r] = nodes++;
	}
	int n = (int)total;
	rc = dmaconn_builder_set_size(b, n);
	if (rc != DMACONN_OK)
		goto out;
	struct facts *f = calloc((size_t)n + 1, sizeof(*f));
	int *owner = calloc((size_t)n + 1, sizeof(int)), *dup = calloc((size_t)n + 1, sizeof(int));
	if (!f || !owner || !dup) {
		free(f);
		free(owner);
		free(dup);
		rc = dmaconn_builder_fail(b, DMACONN_ENOMEM, "out of memory for %d devices", n);
		goto out;
	}
	for (int r = 0; r < size; r++) {
		if (!c[r].readable || c[r].status != DMACONN_OK)
			continue;
		char num[32];
		for (int i = 0; i < c[r].n; i++) {
			int g = first[r] + i;
			owner[g] = r;
			find_facts(&f[g], c, r, i);
			snprintf(num, sizeof(num), "%d", r);
			dmaconn_builder_set_device_property(b, g, DMACONN_PROP_RANK, num);
			dmaconn_builder_set_device_property(b, g, DMACONN_PROP_HOST, c[r].host);
			snprintf(num, sizeof(num), "%d", node[r]);
			dmaconn_builder_set_device_property(b, g, DMACONN_PROP_NODE, num);
			snprintf(num, sizeof(num), "%d", i);
			dmaconn_builder_set_device_property(b, g, DMACONN_PROP_LOCAL_ORDINAL, num);
			for (int p = 0; p < c[r].devs[i].nprops; p++)
				if (!is_own_key(c[r].devs[i].keys[p]))
					dmaconn_builder_set_device_property(b, g, c[r].devs[i].keys[p],
									    c[r].devs[i].values[p]);
		}
	}
	int multicast = !strcmp(a->connection, "multicast");
	for (int g = 0; g < n; g++) {
		int r = owner[g], i = f[g].local;
		for (int h = 0; h < n; h++) {
			int s = owner[h], j = f[h].local, v = 0, by = r;
			struct why why = { NULL, NULL };
			char text[MSG_SIZE];
			if (g == h)
				continue;
			if (r == s) {
				v = c[r].matrix[(size_t)i * (size_t)c[r].n + (size_t)j];
				why = why_at(&c[r].why, (size_t)i * (size_t)c[r].n + (size_t)j);
			} else if (node[r] == node[s]) {
				const char *ka = f[g].key, *kb = f[h].key;
				if (ka && kb && !strcmp(ka, kb)) {
					if (h > g && !dup[h])
						dup[h] = g + 1; /* a second copy of device g */
					why.reason = DMACONN_REASON_UNKNOWN;
					why.text = "the same device, contributed by two ranks";
				} else if (!ka || !kb || !node_entry(c, r, s, ka, kb, multicast, &v, &why, &by)) {
					int lo = r < s ? r : s, hi = r < s ? s : r;
					if (!unmatched[hi])
						unmatched[hi] = lo + 1;
					why.reason = DMACONN_REASON_UNKNOWN;
					why.text = "neither rank on this node saw both devices";
				}
			} else if (multicast) {
				const char *code = NULL;
				int imex_of = -1;
				v = multicast_across(c, &f[g], &f[h], &code, text, sizeof(text), &imex_of);
				why.reason = code;
				why.text = text;
				by = -1;
				if (imex_of >= 0 && !no_imex[node[imex_of]])
					no_imex[node[imex_of]] = imex_of + 1;
			} else if (f[g].in_domain && f[h].in_domain) {
				v = across_nodes(a, &f[g], &f[h]);
			}
			if (v > 0) {
				dmaconn_builder_set(b, g, h, v);
			} else if (why.reason) {
				char said[MSG_SIZE + 300];
				if (by >= 0)
					snprintf(said, sizeof(said), "rank %d (%s): %s", by, c[by].host,
						 why.text ? why.text : "");
				dmaconn_builder_set_pair_property(b, g, h, DMACONN_PROP_REASON, why.reason);
				dmaconn_builder_set_pair_property(b, g, h, DMACONN_PROP_REASON_TEXT,
								  by >= 0 ? said : why.text ? why.text : "");
			}
		}
	}

	for (int r = 0; r < size; r++) {
		const char *host = c[r].readable ? c[r].host : "?";
		if (!c[r].readable) {
			note(b, a, r, "rank %d: its contribution cannot be read (do all ranks run the same dmaconn?); "
				      "it contributes no devices", r);
			continue;
		}
		if (c[r].status != DMACONN_OK) {
			note(b, a, r, "rank %d (%s): %s detection failed: %s; it contributes no devices", r, host,
			     a->label, c[r].error);
			continue;
		}
		for (int k = 0; k < c[r].nwarn; k++) {
			char msg[MSG_SIZE + 300];
			snprintf(msg, sizeof(msg), "rank %d (%s): %s", r, host, c[r].warn[k]);
			dmaconn_builder_add_warning(b, msg);
		}
		if (c[r].view_status != DMACONN_OK)
			note(b, a, r,
			     "rank %d (%s): detecting every device of its node failed: %s; its devices count "
			     "as unconnected to other ranks' devices on that node", r, host, c[r].view_error);
	}
	for (int k = 0; k < nodes; k++) {
		int copies = 0, example = -1;
		for (int g = 0; g < n; g++) {
			if (dup[g] && node[owner[g]] == k) {
				copies++;
				if (example < 0)
					example = g;
			}
		}
		if (!copies)
			continue;
		int orig = dup[example] - 1, r = owner[orig], s = owner[example];
		note(b, a, r,
		     "%s: %d device%s contributed by more than one rank (%s by ranks %d and %d); each copy "
		     "is a device of its own here, unconnected to its other copies: give each rank its "
		     "own GPUs (CUDA_VISIBLE_DEVICES) or run one rank per node",
		     c[r].host, copies, copies == 1 ? " is" : "s are", f[orig].key, r, s);
	}
	for (int k = 0; k < nodes; k++) {
		if (!no_imex[k])
			continue;
		int r = no_imex[k] - 1;
		note(b, a, r,
		     "rank %d (%s): not ready for IMEX (%s): %s; its GPUs are 0 in %s to other nodes' GPUs", r,
		     c[r].host, c[r].imex, c[r].imex_text, a->label);
	}
	for (int s = 0; s < size; s++) {
		if (!unmatched[s])
			continue;
		int r = unmatched[s] - 1;
		note(b, a, r,
		     "ranks %d and %d share node %s but neither saw both's devices; their devices count as "
		     "unconnected", r, s, c[r].host);
	}
	free(f);
	free(owner);
	free(dup);
	rc = DMACONN_OK;
out:
	free(first);
	return rc;
}

/* ------------------------------------------------------- the collective */

static int noop_detector(dmaconn_builder *b, void *user_data)
{
	(void)b;
	(void)user_data;
	return DMACONN_OK;
}

#define MPI_CHECK(call, what)                                                   \
	do {                                                                    \
		int mpi_rc_ = (call);                                           \
		if (mpi_rc_ != MPI_SUCCESS) {                                   \
			rc = mpi_failed(what, mpi_rc_);                         \
			goto out;                                               \
		}                                                               \
	} while (0)

/* Whether every rank has `ok`; -1 when the reduction itself failed. */
static int all_ok(MPI_Comm comm, int ok, int *rc)
{
	int all = 0, e = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
	if (e != MPI_SUCCESS) {
		*rc = mpi_failed("MPI_Allreduce", e);
		return -1;
	}
	return all;
}

int dmaconn_mpi_detect(MPI_Comm comm, dmaconn_device_type type, const char *connection,
		       dmaconn_result **out)
{
	if (out)
		*out = NULL;
	/* Argument errors, the same on every rank: the core names them. */
	if (!out || !dmaconn_device_type_name(type) || !connection || !*connection)
		return dmaconn_result_build(type, connection, noop_detector, NULL, out);
	int initialised = 0, finalised = 0;
	MPI_Initialized(&initialised);
	MPI_Finalized(&finalised);
	if (!initialised || finalised)
		return fail(DMACONN_EINVAL, "dmaconn_mpi_detect: MPI is %s", finalised ? "finalised" : "not initialised");
	if (comm == MPI_COMM_NULL)
		return fail(DMACONN_EINVAL, "dmaconn_mpi_detect: MPI_COMM_NULL");

	int rc = DMACONN_OK, me = 0, size = 0, domain = 0, domain_size = 1;
	struct wbuf w = { 0 };
	unsigned char small[96];
	int *lens = NULL, *displs = NULL;
	unsigned char *all = NULL;
	struct contrib *c = NULL;
	MPI_Comm shm = MPI_COMM_NULL;
	MPI_CHECK(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
	MPI_CHECK(MPI_Comm_size(comm, &size), "MPI_Comm_size");

	/* 1. The shared-memory domain, named by its lowest rank in comm. */
	MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm),
		  "MPI_Comm_split_type");
	MPI_CHECK(MPI_Comm_size(shm, &domain_size), "MPI_Comm_size");
	MPI_CHECK(MPI_Allreduce(&me, &domain, 1, MPI_INT, MPI_MIN, shm), "MPI_Allreduce");
	MPI_CHECK(MPI_Comm_free(&shm), "MPI_Comm_free");

	/* 2. Detect, serialise; out of memory, a record that says so. */
	contribute(&w, type, connection, domain, domain_size);
	if (w.oom) {
		free(w.p);
		w = (struct wbuf){ small, 0, sizeof(small), 0 }; /* fits: put() never grows it */
		put(&w, magic, 4);
		put_u32(&w, (uint32_t)DMACONN_ENOMEM);
		put_str(&w, "?");
		put_u32(&w, (uint32_t)domain);
		put_str(&w, "out of memory");
		for (int k = 0; k < 9; k++)
			put_u32(&w, 0); /* n, warnings, view status, view error, m, imex, its text, reasons, view's */
	}

	/* 3. Gather every contribution everywhere. */
	lens = calloc((size_t)size + 1, sizeof(int));
	displs = calloc((size_t)size + 1, sizeof(int));
	int ok = all_ok(comm, lens && displs, &rc);
	if (ok <= 0) {
		if (ok == 0)
			rc = fail(DMACONN_ENOMEM, "dmaconn_mpi_detect: out of memory on a rank");
		goto out;
	}
	int mine = (int)w.len;
	MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, lens, 1, MPI_INT, comm), "MPI_Allgather");
	size_t total = 0;
	for (int r = 0; r < size; r++) {
		displs[r] = (int)total;
		total += (size_t)lens[r];
		if (total > INT_MAX) {
			rc = fail(DMACONN_ENOMEM, "dmaconn_mpi_detect: the ranks' contributions exceed 2 GiB");
			goto out;
		}
	}
	all = malloc(total + 1);
	ok = all_ok(comm, all != NULL, &rc);
	if (ok <= 0) {
		if (ok == 0)
			rc = fail(DMACONN_ENOMEM, "dmaconn_mpi_detect: out of memory on a rank");
		goto out;
	}
	MPI_CHECK(MPI_Allgatherv(w.p, mine, MPI_BYTE, all, lens, displs, MPI_BYTE, comm), "MPI_Allgatherv");

	/* 4. The same result from the same bytes, on every rank. */
	c = calloc((size_t)size + 1, sizeof(*c));
	if (!c) {
		rc = fail(DMACONN_ENOMEM, "dmaconn_mpi_detect: out of memory");
		goto out;
	}
	int oom = 0;
	for (int r = 0; r < size; r++)
		contrib_parse(&c[r], all + displs[r], (size_t)lens[r], &oom);
	if (oom) {
		rc = fail(DMACONN_ENOMEM, "dmaconn_mpi_detect: out of memory");
		goto out;
	}
	char label[128];
	snprintf(label, sizeof(label), "%s/%s", dmaconn_device_type_name(type), connection);
	struct assembly a = { me, size, label, connection, c };
	rc = dmaconn_result_build(type, connection, assemble, &a, out);
out:
	if (shm != MPI_COMM_NULL)
		MPI_Comm_free(&shm);
	for (int r = 0; c && r < size; r++)
		contrib_free(&c[r]);
	free(c);
	free(all);
	free(lens);
	free(displs);
	if (w.p != small)
		free(w.p);
	return rc;
}

/* ------------------------------------------------------- the CLI's entry */

DMACONN_EXTERN int dmaconn_mpi_cli_v1(int *argc, char ***argv, int count, const dmaconn_device_type *types,
				      const char *const *connections, dmaconn_mpi_report_fn report,
				      void *user_data);

int dmaconn_mpi_cli_v1(int *argc, char ***argv, int count, const dmaconn_device_type *types,
		       const char *const *connections, dmaconn_mpi_report_fn report, void *user_data)
{
	int initialised = 0, rank = 0, status = 0;
	MPI_Initialized(&initialised);
	if (!initialised) {
		int e = MPI_Init(argc, argv);
		if (e != MPI_SUCCESS) {
			char text[MPI_MAX_ERROR_STRING] = "";
			int len = 0;
			MPI_Error_string(e, text, &len);
			fprintf(stderr, "dmaconn: MPI_Init failed: %s\n", text);
			return 1;
		}
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int k = 0; k < count; k++) {
		dmaconn_result *r = NULL;
		int rc = dmaconn_mpi_detect(MPI_COMM_WORLD, types[k], connections[k], &r);
		if (rc != DMACONN_OK)
			status = 1;
		if (rank == 0 && report && report(rc == DMACONN_OK ? r : NULL, k, count, user_data) != 0)
			status = 1;
		dmaconn_result_release(r);
	}
	if (!initialised)
		MPI_Finalize();
	return status;
}
