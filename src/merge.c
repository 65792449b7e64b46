/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The multi-node merge (docs/multinode.md): what each rank of a job
 * detected, as a record (JSON, below), into one result over every rank's
 * devices.  The one implementation: libdmaconn_mpi calls it after its
 * exchange, Python's dmaconn.global_matrix() through ctypes.  It needs no
 * MPI and no other process: every rank merges the same records alike.
 *
 * A record (dmaconn_rank_record() writes it; Python's rank_record() adds
 * its own choices to it; hand-made ones lack "dmaconn_record"):
 *   {"dmaconn_record": 1 (the format), "host": dmaconn_host_id(), "domain": MPI's shared-memory domain (absent
 *    without MPI: the host alone names the node), "device_type",
 *    "connection_type", "error": the detection's error or null,
 *    "matrix", "devices": [{properties}], "warnings",
 *    "contribute": the local ordinals contributed (absent: all),
 *    "pairs": [{"from", "to", "reason", "reason_text"}] of the matrix's
 *    zeros that say why, "view": null, {"keys": [uuid or bus id], "matrix",
 *    "pairs"} of dmaconn_detect_node(), or {"error"},
 *    "imex": {"reason": null or a code, "text"} of dmaconn_host_imex(),
 *    for multicast (absent: not known, a cause of its own)}
 * Property values are the result codec's (src/codec.h): typed where their
 * key is, read back to the result's text here.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmaconn.h"

/* ------------------------------------------------- the multi-node domain */

static int nonzero_uuid(const char *u)
{
	for (; *u; u++)
		if (*u != '0' && *u != '-')
			return 1;
	return 0;
}

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

dmaconn_domain_status dmaconn_nvlink_domain(const char *fabric_state, const char *fabric_status,
					    const char *cluster_uuid, const char *clique_id, unsigned char cluster[16],
					    unsigned int *clique)
{
	unsigned char uuid[16];
	long long id = -1;
	if (!fabric_state || !*fabric_state || !strcmp(fabric_state, "not_supported"))
		return DMACONN_DOMAIN_NO_FABRIC;
	if (strcmp(fabric_state, DMACONN_FABRIC_STATE_COMPLETED) != 0)
		return DMACONN_DOMAIN_NOT_REGISTERED;
	/* "SUCCESS" from writers that drop NVML's prefix. */
	if (!fabric_status || (strcmp(fabric_status, DMACONN_FABRIC_STATUS_SUCCESS) && strcmp(fabric_status, "SUCCESS")))
		return DMACONN_DOMAIN_FAILED;
	if (!cluster_uuid || parse_uuid(cluster_uuid, uuid) != 0 || !clique_id ||
	    dmaconn_property_read_int(DMACONN_PROP_CLIQUE_ID, clique_id, &id) != DMACONN_OK || id < 0 || id > UINT_MAX)
		return DMACONN_DOMAIN_NO_ID;
	if (!nonzero_uuid(cluster_uuid))
		return DMACONN_DOMAIN_ZERO_CLUSTER;
	if (id == 0)
		return DMACONN_DOMAIN_ZERO_CLIQUE;
	if (cluster)
		memcpy(cluster, uuid, sizeof(uuid));
	if (clique)
		*clique = (unsigned int)id;
	return DMACONN_DOMAIN_MEMBER;
}

#include "codec.h"
#include "linkmatrix.h"

#define MSG_SIZE 1024
#define DC_MERGE_VERSION 1 /* "dmaconn_record": another is unreadable */
#define MAX_DEVICES 65536

/* ------------------------------------------------------- a rank's record */

static int dc_merge_put(json_t *obj, const char *key, json_t *v)
{
	return v ? json_object_set_new(obj, key, v) : -1;
}

static json_t *dc_merge_matrix(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	json_t *m = json_array();
	for (int i = 0; m && i < n; i++) {
		json_t *row = json_array();
		for (int j = 0; row && j < n; j++)
			if (json_array_append_new(row, json_integer(dmaconn_result_get(r, i, j))))
				json_decref(row), row = NULL;
		if (!row || json_array_append_new(m, row))
			json_decref(m), m = NULL;
	}
	return m;
}

/* Why r's zeros are 0, where it says: [{"from", "to", "reason", "reason_text"}]. */
static json_t *dc_merge_reasons(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	json_t *pairs = json_array();
	for (int i = 0; pairs && i < n; i++)
		for (int j = 0; pairs && j < n; j++) {
			const char *reason = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON);
			const char *text = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT);
			if (i == j || dmaconn_result_get(r, i, j) != 0 || !reason)
				continue;
			if (json_array_append_new(pairs, json_pack("{s:i, s:i, s:s, s:s}", "from", i, "to", j, "reason",
								   reason, "reason_text", text ? text : "")))
				json_decref(pairs), pairs = NULL;
		}
	return pairs;
}

/* The rank's own result: matrix, devices (no "ordinal"), warnings. */
static int dc_merge_put_result(json_t *rec, const dmaconn_result *r)
{
	static const struct dc_codec exact = { DC_CODEC_EXACT, NULL };
	json_t *devices = json_array(), *warnings = json_array();
	int bad = dc_merge_put(rec, "matrix", dc_merge_matrix(r));
	bad |= dc_merge_put(rec, "devices", devices);
	bad |= dc_merge_put(rec, "warnings", warnings);
	bad |= dc_merge_put(rec, "pairs", dc_merge_reasons(r));
	for (int i = 0; !bad && i < dmaconn_result_size(r); i++) {
		json_t *d = dc_codec_device(&exact, r, i);
		bad = !d || json_object_del(d, "ordinal") || json_array_append_new(devices, d);
	}
	for (int k = 0; !bad && k < dmaconn_result_warning_count(r); k++)
		bad = json_array_append_new(warnings, dc_codec_string(&exact, dmaconn_result_warning(r, k)));
	return bad ? -1 : 0;
}

/* The name two ranks match a device by: its UUID, else its PCI address. */
static const char *dc_merge_result_key(const dmaconn_result *r, int i)
{
	const char *uuid = dmaconn_result_device_get(r, i, DMACONN_PROP_UUID);
	if (uuid && *uuid)
		return uuid;
	const char *bus = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID);
	return bus && *bus ? bus : "";
}

static json_t *dc_merge_view(dmaconn_device_type type, const char *connection)
{
	dmaconn_result *v = NULL;
	if (dmaconn_detect_node(type, connection, &v) != DMACONN_OK)
		return json_pack("{s:s}", "error", dmaconn_last_error());
	json_t *keys = json_array(), *view = json_object();
	int bad = !keys || !view;
	for (int i = 0; !bad && i < dmaconn_result_size(v); i++)
		bad = json_array_append_new(keys, json_string(dc_merge_result_key(v, i)));
	bad |= dc_merge_put(view, "keys", keys);
	keys = NULL;
	bad |= dc_merge_put(view, "matrix", dc_merge_matrix(v));
	bad |= dc_merge_put(view, "pairs", dc_merge_reasons(v));
	dmaconn_result_release(v);
	json_decref(keys);
	if (bad)
		json_decref(view), view = NULL;
	return view;
}

int dmaconn_rank_record(dmaconn_device_type type, const char *connection, unsigned flags, int domain,
			char **json)
{
	if (json)
		*json = NULL;
	const char *type_name = dmaconn_device_type_name(type);
	if (!json || !type_name || !connection || !*connection)
		return DMACONN_EINVAL;
	json_t *rec = json_object();
	int bad = !rec || dc_merge_put(rec, "dmaconn_record", json_integer(DC_MERGE_VERSION));
	bad |= dc_merge_put(rec, "host", json_string(dmaconn_host_id()));
	if (!bad && domain >= 0)
		bad = dc_merge_put(rec, "domain", json_integer(domain));
	bad |= dc_merge_put(rec, "device_type", json_string(type_name));
	bad |= dc_merge_put(rec, "connection_type", json_string(connection));
	/* Whether other nodes' GPUs may join this node's in a multicast
	 * object: IMEX; asked for multicast only. */
	if (!bad && !strcmp(connection, "multicast")) {
		char text[MSG_SIZE] = "";
		const char *reason = dmaconn_host_imex(text, sizeof(text));
		bad = dc_merge_put(rec, "imex", json_pack("{s:o, s:s}", "reason", reason ? json_string(reason) : json_null(),
							  "text", text));
	}
	dmaconn_result *r = NULL;
	if (!bad && dmaconn_detect(type, connection, &r) != DMACONN_OK) {
		bad = dc_merge_put(rec, "error", json_string(dmaconn_last_error()));
		bad |= dc_merge_put(rec, "matrix", json_array());
		bad |= dc_merge_put(rec, "devices", json_array());
		bad |= dc_merge_put(rec, "warnings", json_array());
	} else if (!bad) {
		bad = dc_merge_put(rec, "error", json_null()) || dc_merge_put_result(rec, r);
		/* Other ranks share this node: their devices are found in a
		 * detection over all of it. */
		bad |= dc_merge_put(rec, "view", flags & DMACONN_RECORD_NODE_VIEW ? dc_merge_view(type, connection)
										   : json_null());
	}
	dmaconn_result_release(r);
	if (!bad)
		*json = json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(rec);
	return *json ? DMACONN_OK : DMACONN_ENOMEM;
}

void dmaconn_record_free(char *json)
{
	free(json);
}

/* ------------------------------------------------------- reading records */

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
	int status; /* 0, or 1 when the rank's detection failed */
	char *host, *error;
	int domain; /* -1: none */
	int n;
	int *matrix;
	struct device *devs;
	int nwarn;
	char **warn;
	int ncontrib;
	int *contrib; /* the local ordinals contributed */
	char *view_error;
	int m;
	char **view_keys;
	int *view_matrix;
	char *imex, *imex_text; /* imex NULL: ready (or not asked) */
	struct reasons why, view_why; /* of matrix and view_matrix */
};

static void dc_merge_strv_free(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void dc_merge_reasons_free(struct reasons *w, int n)
{
	dc_merge_strv_free(w->reason, n * n);
	dc_merge_strv_free(w->text, n * n);
}

static void dc_merge_contrib_free(struct contrib *c)
{
	dc_merge_reasons_free(&c->why, c->n);
	dc_merge_reasons_free(&c->view_why, c->m);
	free(c->imex);
	free(c->imex_text);
	free(c->host);
	free(c->error);
	free(c->matrix);
	for (int i = 0; c->devs && i < c->n; i++) {
		dc_merge_strv_free(c->devs[i].keys, c->devs[i].nprops);
		dc_merge_strv_free(c->devs[i].values, c->devs[i].nprops);
	}
	free(c->devs);
	dc_merge_strv_free(c->warn, c->nwarn);
	free(c->contrib);
	free(c->view_error);
	dc_merge_strv_free(c->view_keys, c->m);
	free(c->view_matrix);
	memset(c, 0, sizeof(*c));
}

static char *dc_merge_dup(const json_t *s)
{
	return json_is_string(s) ? strdup(json_string_value(s)) : NULL;
}

/* An n x n matrix of non-negative integers (0 on the diagonal is not
 * checked: the merge never reads it); NULL when m is not one. */
static int *dc_merge_read_matrix(const json_t *m, int n)
{
	if (!json_is_array(m) || json_array_size(m) != (size_t)n)
		return NULL;
	int *out = calloc((size_t)n * (size_t)n + 1, sizeof(int));
	for (int i = 0; out && i < n; i++) {
		const json_t *row = json_array_get(m, (size_t)i);
		if (!json_is_array(row) || json_array_size(row) != (size_t)n)
			goto bad;
		for (int j = 0; j < n; j++) {
			const json_t *v = json_array_get(row, (size_t)j);
			if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT_MAX)
				goto bad;
			out[(size_t)i * (size_t)n + (size_t)j] = (int)json_integer_value(v);
		}
	}
	return out;
bad:
	free(out);
	return NULL;
}

/* An array of strings; NULL when a is not one. */
static char **dc_merge_read_strv(const json_t *a, int *count)
{
	if (!json_is_array(a) || json_array_size(a) > INT_MAX / 2)
		return NULL;
	int n = (int)json_array_size(a);
	char **v = calloc((size_t)n + 1, sizeof(*v));
	for (int i = 0; v && i < n; i++) {
		if (!(v[i] = dc_merge_dup(json_array_get(a, (size_t)i)))) {
			dc_merge_strv_free(v, n);
			return NULL;
		}
	}
	if (v)
		*count = n;
	return v;
}

/* The reasons of an n x n matrix's zeros ([{"from", "to", "reason",
 * "reason_text"}], absent: none); -1 when they are not that. */
static int dc_merge_read_reasons(struct reasons *w, const json_t *pairs, int n)
{
	if (!pairs || json_is_null(pairs) || (json_is_array(pairs) && !json_array_size(pairs)))
		return 0;
	if (!json_is_array(pairs) || json_array_size(pairs) > (size_t)n * (size_t)n)
		return -1;
	w->reason = calloc((size_t)n * (size_t)n + 1, sizeof(char *));
	w->text = calloc((size_t)n * (size_t)n + 1, sizeof(char *));
	if (!w->reason || !w->text)
		return -1;
	size_t k;
	const json_t *p;
	json_array_foreach((json_t *)pairs, k, p) {
		const json_t *from = json_object_get(p, "from"), *to = json_object_get(p, "to");
		const json_t *reason = json_object_get(p, "reason"), *text = json_object_get(p, "reason_text");
		if (!json_is_integer(from) || !json_is_integer(to) || !json_is_string(reason) ||
		    (text && !json_is_string(text)) || json_integer_value(from) < 0 || json_integer_value(from) >= n ||
		    json_integer_value(to) < 0 || json_integer_value(to) >= n)
			return -1;
		size_t at = (size_t)json_integer_value(from) * (size_t)n + (size_t)json_integer_value(to);
		if (w->reason[at])
			return -1;
		w->reason[at] = dc_merge_dup(reason);
		w->text[at] = text ? dc_merge_dup(text) : strdup("");
		if (!w->reason[at] || !w->text[at])
			return -1;
	}
	return 0;
}

static int dc_merge_read_device(struct device *d, const json_t *props)
{
	if (!json_is_object(props))
		return -1;
	size_t k = json_object_size(props);
	d->keys = calloc(k + 1, sizeof(char *));
	d->values = calloc(k + 1, sizeof(char *));
	if (!d->keys || !d->values)
		return -1;
	const char *key;
	const json_t *value;
	json_object_foreach((json_t *)props, key, value) {
		if (json_is_null(value))
			continue; /* a value the writer could not type */
		char *text = dc_codec_text(key, value), *name = strdup(key);
		if (!text || !name) {
			free(text);
			free(name);
			return -1;
		}
		d->keys[d->nprops] = name;
		d->values[d->nprops++] = text;
	}
	return 0;
}

static int dc_merge_read_view(struct contrib *c, const json_t *view)
{
	if (!view || json_is_null(view))
		return 0;
	if (json_is_string(json_object_get(view, "error")))
		return (c->view_error = dc_merge_dup(json_object_get(view, "error"))) ? 0 : -1;
	int m = 0;
	c->view_keys = dc_merge_read_strv(json_object_get(view, "keys"), &m);
	if (!c->view_keys || m > MAX_DEVICES)
		return -1;
	c->m = m;
	c->view_matrix = dc_merge_read_matrix(json_object_get(view, "matrix"), m);
	return c->view_matrix ? dc_merge_read_reasons(&c->view_why, json_object_get(view, "pairs"), m) : -1;
}

/* IMEX readiness: {"reason": null or a code, "text"}; absent: not known. */
static int dc_merge_read_imex(struct contrib *c, const json_t *imex)
{
	const json_t *reason = json_object_get(imex, "reason"), *text = json_object_get(imex, "text");
	if (!imex || json_is_null(imex)) {
		c->imex = strdup(DMACONN_REASON_UNKNOWN);
		c->imex_text = strdup("its record says nothing of IMEX");
		return c->imex && c->imex_text ? 0 : -1;
	}
	if (!json_is_object(imex) || (reason && !json_is_null(reason) && !json_is_string(reason)) ||
	    (text && !json_is_string(text)))
		return -1;
	if (json_is_string(reason) && *json_string_value(reason)) {
		c->imex = dc_merge_dup(reason);
		c->imex_text = text ? dc_merge_dup(text) : strdup("");
		return c->imex && c->imex_text ? 0 : -1;
	}
	return 0;
}

/* Reads one record; c->readable says whether it could. */
static void dc_merge_read(struct contrib *c, const char *text, dmaconn_device_type type, const char *connection)
{
	memset(c, 0, sizeof(*c));
	c->domain = -1;
	json_t *rec = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
	const json_t *domain = json_object_get(rec, "domain"), *error = json_object_get(rec, "error");
	const json_t *devs = json_object_get(rec, "devices"), *contribute = json_object_get(rec, "contribute");
	const char *t = json_string_value(json_object_get(rec, "device_type"));
	const char *conn = json_string_value(json_object_get(rec, "connection_type"));
	const json_t *version = json_object_get(rec, "dmaconn_record");
	if (!json_is_object(rec) || (version && json_integer_value(version) != DC_MERGE_VERSION) || !(c->host = dc_merge_dup(json_object_get(rec, "host"))) ||
	    (t && strcmp(t, dmaconn_device_type_name(type))) || (conn && strcmp(conn, connection)))
		goto bad;
	if (json_is_integer(domain) && json_integer_value(domain) >= 0 && json_integer_value(domain) <= INT_MAX)
		c->domain = (int)json_integer_value(domain);
	else if (domain && !json_is_null(domain))
		goto bad;
	if (json_is_string(error)) {
		c->status = 1;
		if (!(c->error = dc_merge_dup(error)))
			goto bad;
		c->readable = 1;
		goto out;
	}
	if (!json_is_array(devs) || json_array_size(devs) > MAX_DEVICES)
		goto bad;
	int n = (int)json_array_size(devs);
	c->n = n;
	c->devs = calloc((size_t)n + 1, sizeof(*c->devs));
	c->matrix = dc_merge_read_matrix(json_object_get(rec, "matrix"), n);
	if (!c->devs || !c->matrix)
		goto bad;
	for (int i = 0; i < n; i++)
		if (dc_merge_read_device(&c->devs[i], json_array_get(devs, (size_t)i)))
			goto bad;
	const json_t *warnings = json_object_get(rec, "warnings");
	if (warnings && !(c->warn = dc_merge_read_strv(warnings, &c->nwarn)))
		goto bad;
	/* The ordinals contributed: distinct, below n. */
	size_t k = contribute && !json_is_null(contribute) ? json_array_size(contribute) : (size_t)n;
	if (contribute && !json_is_null(contribute) && !json_is_array(contribute))
		goto bad;
	c->contrib = calloc(k + 1, sizeof(int));
	unsigned char *seen = calloc((size_t)n + 1, 1);
	int ok = c->contrib && seen;
	for (size_t e = 0; ok && e < k; e++) {
		const json_t *v = json_array_get(contribute, e);
		json_int_t i = contribute && !json_is_null(contribute) ? (json_is_integer(v) ? json_integer_value(v) : -1)
								      : (json_int_t)e;
		ok = i >= 0 && i < n && !seen[i];
		if (ok) {
			seen[i] = 1;
			c->contrib[c->ncontrib++] = (int)i;
		}
	}
	free(seen);
	if (!ok || dc_merge_read_view(c, json_object_get(rec, "view")) ||
	    dc_merge_read_reasons(&c->why, json_object_get(rec, "pairs"), n) ||
	    dc_merge_read_imex(c, json_object_get(rec, "imex")))
		goto bad;
	c->readable = 1;
	goto out;
bad:
	dc_merge_contrib_free(c);
	c->domain = -1;
out:
	json_decref(rec);
}

/* ------------------------------------------------------- the global result */

struct assembly {
	int me, size;
	char label[128];        /* "cuda/nvlink" */
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

/* A flag's value is set: "1", or yes/true as its key's type reads. */
static int dc_merge_flag(const char *key, const char *value)
{
	long long v = 0;
	int b = 0;
	return value && (!strcmp(value, "1") || (dmaconn_property_read_int(key, value, &v) == DMACONN_OK && v == 1) ||
			 (dmaconn_property_read_bool(key, value, &b) == DMACONN_OK && b));
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
	long long switch_links = 0;
	if (links && dmaconn_property_read_int(DMACONN_PROP_NVLINK_SWITCH_LINKS, links, &switch_links) != DMACONN_OK)
		switch_links = 0;
	f->switch_links = switch_links > 0 && switch_links <= INT_MAX ? (long)switch_links : 0;
	f->multicast_ok = dc_merge_flag(DMACONN_PROP_MULTICAST_SUPPORTED, dev_get(&c[r], i, DMACONN_PROP_MULTICAST_SUPPORTED));
	f->multicast_reason = dev_get(&c[r], i, DMACONN_PROP_MULTICAST_REASON);
	f->cluster = cluster;
	f->has_cluster = cluster && nonzero_uuid(cluster) && parse_uuid(cluster, f->uuid) == 0;
	f->multicast_clique = dev_get(&c[r], i, DMACONN_PROP_MULTICAST_CLIQUE_ID);
	if (!f->multicast_clique)
		f->multicast_clique = clique;
	/* In a multi-node domain, and with switch links to reach it by. */
	if (dmaconn_nvlink_domain(state, status, cluster, clique, f->node.cluster, &f->node.clique) ==
		    DMACONN_DOMAIN_MEMBER &&
	    f->switch_links > 0) {
		f->in_domain = 1;
		f->node.switch_usable = 1;
		f->node.has_domain = 1;
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
	       !strcmp(key, DMACONN_PROP_LOCAL_ORDINAL) || !strcmp(key, "ordinal");
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
			total += c[r].ncontrib;
		if (total > MAX_DEVICES) {
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
		for (int k = 0; k < c[r].ncontrib; k++) {
			int g = first[r] + k, i = c[r].contrib[k];
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
		if (c[r].view_error)
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
		/* The runtime's variable that gives a process its GPUs: cuda's
		 * first (HIP reads it too). */
		const char *hides = dmaconn_variable(DMACONN_DEVICE_CUDA, DMACONN_VARIABLE_VISIBILITY, 0);
		note(b, a, r,
		     "%s: %d device%s contributed by more than one rank (%s by ranks %d and %d); each copy "
		     "is a device of its own here, unconnected to its other copies: give each rank its "
		     "own GPUs (%s) or run one rank per node",
		     c[r].host, copies, copies == 1 ? " is" : "s are", f[orig].key, r, s,
		     hides ? hides : "a visibility variable");
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

static int dc_merge_noop(dmaconn_builder *b, void *user_data)
{
	(void)b;
	(void)user_data;
	return DMACONN_OK;
}

int dmaconn_merge(dmaconn_device_type type, const char *connection, const char *const *records, int count, int me,
		  dmaconn_result **out)
{
	if (out)
		*out = NULL;
	/* Argument errors: the core names them. */
	if (!out || !dmaconn_device_type_name(type) || !connection || !*connection || (count > 0 && !records) ||
	    count < 0)
		return dmaconn_result_build(type, count < 0 || (count > 0 && !records) ? NULL : connection,
					    dc_merge_noop, NULL, out);
	struct assembly a = { .me = me, .size = count, .connection = connection };
	snprintf(a.label, sizeof(a.label), "%s/%s", dmaconn_device_type_name(type), connection);
	a.c = calloc((size_t)count + 1, sizeof(*a.c));
	if (!a.c)
		return DMACONN_ENOMEM;
	for (int r = 0; r < count; r++)
		dc_merge_read(&a.c[r], records[r], type, connection);
	int rc = dmaconn_result_build(type, connection, assemble, &a, out);
	for (int r = 0; r < count; r++)
		dc_merge_contrib_free(&a.c[r]);
	free(a.c);
	return rc;
}
