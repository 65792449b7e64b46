/* SPDX-License-Identifier: BSD-3-Clause */
/* A result as JSON and back: see codec.h (its values: codec.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* ------------------------------------------------------------- writing */

json_t *dc_codec_device(const struct dc_codec *c, const dmaconn_result *r, int i)
{
	json_t *d = json_object();
	int bad = !d || json_object_set_new(d, "ordinal", json_integer(i));
	for (int k = 0; !bad && k < dmaconn_result_device_property_count(r, i); k++)
		bad = dc_codec_set_first(c, d, dmaconn_result_device_property_key(r, i, k),
				     dmaconn_result_device_property_value(r, i, k));
	if (bad) {
		json_decref(d);
		return NULL;
	}
	return d;
}

json_t *dc_codec_pair(const struct dc_codec *c, const dmaconn_result *r, int i, int j)
{
	json_t *p = json_pack("{s:i, s:i}", "from", i, "to", j);
	int bad = !p;
	for (int k = 0; !bad && k < dmaconn_result_pair_property_count(r, i, j); k++)
		bad = dc_codec_set_first(c, p, dmaconn_result_pair_property_key(r, i, j, k),
				     dmaconn_result_pair_property_value(r, i, j, k));
	if (bad) {
		json_decref(p);
		return NULL;
	}
	return p;
}

/* Appends v to a (stealing it); -1 when v is NULL or that fails. */
static int dc_codec_append(json_t *a, json_t *v)
{
	return v ? json_array_append_new(a, v) : -1;
}

json_t *dc_codec_result(const struct dc_codec *c, const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	json_t *doc = json_object(), *matrix = json_array(), *devices = json_array(), *pairs = json_array(),
	       *warnings = json_array();
	int bad = !doc || !matrix || !devices || !pairs || !warnings;
	if (!bad) {
		bad |= json_object_set_new(doc, "device_type",
					   dc_codec_string(c, dmaconn_device_type_name(dmaconn_result_device_type(r))));
		bad |= json_object_set_new(doc, "connection_type",
					   dc_codec_string(c, dmaconn_result_connection_type(r)));
		bad |= json_object_set(doc, "matrix", matrix);
		bad |= json_object_set(doc, "devices", devices);
		bad |= json_object_set(doc, "pairs", pairs);
		bad |= json_object_set(doc, "warnings", warnings);
		if (dmaconn_result_unavailable(r))
			bad |= json_object_set_new(doc, "unavailable", json_true());
	}
	for (int i = 0; !bad && i < n; i++) {
		json_t *row = json_array();
		bad = dc_codec_append(matrix, row);
		for (int j = 0; !bad && j < n; j++)
			bad = dc_codec_append(row, json_integer(dmaconn_result_get(r, i, j)));
		bad = bad || dc_codec_append(devices, dc_codec_device(c, r, i));
		for (int j = 0; !bad && j < n; j++)
			if (i != j && dmaconn_result_pair_property_count(r, i, j) > 0)
				bad = dc_codec_append(pairs, dc_codec_pair(c, r, i, j));
	}
	for (int k = 0; !bad && k < dmaconn_result_warning_count(r); k++)
		bad = dc_codec_append(warnings, dc_codec_string(c, dmaconn_result_warning(r, k)));
	json_decref(matrix);
	json_decref(devices);
	json_decref(pairs);
	json_decref(warnings);
	if (bad) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* ------------------------------------------------------------- reading */

#define DC_CODEC_BAD(...) (snprintf(why, len, __VA_ARGS__), -1)

/* An ordinal member: an integer in [0, n). */
static int dc_codec_ordinal(const json_t *v, int n, int *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= n)
		return -1;
	*out = (int)json_integer_value(v);
	return 0;
}

/* The properties of obj but skip1/skip2, set through set (NULL: only
 * checked).  0, -1 (why), -2 out of memory. */
static int dc_codec_props(const json_t *obj, const char *skip1, const char *skip2, const char *where,
			  int (*set)(void *, const char *, const char *), void *arg, char *why, size_t len)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v)
	{
		if (!strcmp(key, skip1) || (skip2 && !strcmp(key, skip2)))
			continue;
		char *text = dc_codec_text(key, v);
		if (!text) {
			if (json_is_string(v) || json_is_number(v) || json_is_boolean(v))
				return -2;
			return DC_CODEC_BAD("%s: \"%s\" is not a string, a number or a boolean", where, key);
		}
		int rc = set ? set(arg, key, text) : 0;
		free(text);
		if (rc != DMACONN_OK)
			return rc == DMACONN_ENOMEM ? -2 : DC_CODEC_BAD("%s: \"%s\" is refused", where, key);
	}
	return 0;
}

struct dc_codec_at {
	dmaconn_builder *b;
	int i, j;
};

static int dc_codec_set_device(void *arg, const char *key, const char *value)
{
	struct dc_codec_at *at = arg;
	return dmaconn_builder_set_device_property(at->b, at->i, key, value);
}

static int dc_codec_set_pair(void *arg, const char *key, const char *value)
{
	struct dc_codec_at *at = arg;
	return dmaconn_builder_set_pair_property(at->b, at->i, at->j, key, value);
}

/* One pass over doc: checking (b NULL) or setting. */
static int dc_codec_pass(const json_t *doc, int n, dmaconn_builder *b, unsigned char *seen, char *why,
			 size_t len)
{
	const json_t *matrix = json_object_get(doc, "matrix"), *devices = json_object_get(doc, "devices"),
		     *pairs = json_object_get(doc, "pairs"), *warnings = json_object_get(doc, "warnings");
	char where[64];
	int rc;
	if (b && dmaconn_builder_set_size(b, n) != DMACONN_OK)
		return -2;
	for (int i = 0; i < n; i++) {
		const json_t *row = json_array_get(matrix, (size_t)i);
		if (!json_is_array(row) || json_array_size(row) != (size_t)n)
			return DC_CODEC_BAD("matrix[%d]: expected %d values", i, n);
		for (int j = 0; j < n; j++) {
			const json_t *v = json_array_get(row, (size_t)j);
			if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 0x7fffffff)
				return DC_CODEC_BAD("matrix[%d][%d]: expected a count", i, j);
			if (b && dmaconn_builder_set(b, i, j, (int)json_integer_value(v)) != DMACONN_OK)
				return -2;
		}
	}
	for (int i = 0; i < n; i++) {
		const json_t *d = json_array_get(devices, (size_t)i);
		int ord;
		snprintf(where, sizeof(where), "devices[%d]", i);
		if (!json_is_object(d) || dc_codec_ordinal(json_object_get(d, "ordinal"), n, &ord) || ord != i)
			return DC_CODEC_BAD("%s: expected an object with \"ordinal\": %d", where, i);
		struct dc_codec_at at = { b, i, -1 };
		if ((rc = dc_codec_props(d, "ordinal", NULL, where, b ? dc_codec_set_device : NULL, &at, why, len)))
			return rc;
	}
	size_t k;
	json_t *p;
	json_array_foreach((json_t *)pairs, k, p)
	{
		struct dc_codec_at at = { b, -1, -1 };
		snprintf(where, sizeof(where), "pairs[%zu]", k);
		if (!json_is_object(p) || dc_codec_ordinal(json_object_get(p, "from"), n, &at.i) ||
		    dc_codec_ordinal(json_object_get(p, "to"), n, &at.j) || at.i == at.j)
			return DC_CODEC_BAD("%s: expected \"from\" and \"to\", two devices", where);
		size_t bit = (size_t)at.i * (size_t)n + (size_t)at.j;
		if (!b) {
			if (seen[bit / 8] & (1u << bit % 8))
				return DC_CODEC_BAD("%s: the pair %d -> %d is listed twice", where, at.i, at.j);
			seen[bit / 8] |= (unsigned char)(1u << bit % 8);
		}
		if ((rc = dc_codec_props(p, "from", "to", where, b ? dc_codec_set_pair : NULL, &at, why, len)))
			return rc;
	}
	json_t *w;
	json_array_foreach((json_t *)warnings, k, w)
	{
		if (!json_is_string(w))
			return DC_CODEC_BAD("warnings[%zu]: expected a string", k);
		if (b && dmaconn_builder_add_warning(b, json_string_value(w)) == DMACONN_ENOMEM)
			return -2;
	}
	return 0;
}

int dc_codec_read(const json_t *doc, dmaconn_builder *b, int *unavailable, char *why, size_t len)
{
	const json_t *matrix = json_object_get(doc, "matrix"), *unav = json_object_get(doc, "unavailable");
	if (!json_is_object(doc))
		return DC_CODEC_BAD("expected a result object");
	if (!json_is_array(matrix) || json_array_size(matrix) > DC_CODEC_MAX_DEVICES)
		return DC_CODEC_BAD("matrix: expected an array of at most %d rows", DC_CODEC_MAX_DEVICES);
	int n = (int)json_array_size(matrix);
	if (!json_is_array(json_object_get(doc, "devices")) ||
	    json_array_size(json_object_get(doc, "devices")) != (size_t)n)
		return DC_CODEC_BAD("devices: expected %d devices, as the matrix has", n);
	if (!json_is_array(json_object_get(doc, "pairs")) || !json_is_array(json_object_get(doc, "warnings")))
		return DC_CODEC_BAD("\"pairs\" and \"warnings\" must be arrays");
	if (unav && !json_is_boolean(unav))
		return DC_CODEC_BAD("unavailable: expected a boolean");
	unsigned char *seen = calloc(((size_t)n * (size_t)n + 7) / 8 + 1, 1);
	if (!seen)
		return -2;
	int rc = dc_codec_pass(doc, n, NULL, seen, why, len);
	free(seen);
	if (rc == 0)
		rc = dc_codec_pass(doc, n, b, NULL, why, len);
	if (rc == 0 && unavailable)
		*unavailable = json_is_true(unav);
	return rc;
}
