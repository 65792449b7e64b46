/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The property table (include/dmaconn_props.h) at run time, and the one
 * reader of property values: every typed getter, the CLI's JSON typing
 * and Python's come here, so that a value is read back from its text in
 * one place.
 */
#include "dmaconn.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "place_keys.h"

struct dc_prop {
	const char *key;
	dmaconn_property_type type;
	dmaconn_property_scope scope;
	const char *unit;
	const char *doc;
};

static const struct dc_prop dc_props[] = {
#define DC_PROP_ROW_(name, key, type, scope, unit, doc)                                                   \
	{ key, DMACONN_TYPE_##type, DMACONN_SCOPE_##scope, unit, doc },
	DMACONN_PROPERTIES(DC_PROP_ROW_)
#undef DC_PROP_ROW_
};

#define DC_NPROPS ((int)(sizeof(dc_props) / sizeof(dc_props[0])))

static const struct {
	const char *name, *json;
} dc_prop_types[] = {
#define DC_PROP_TYPE_ROW_(name, value, text, json) [value] = { text, json },
	DMACONN_PROPERTY_TYPES(DC_PROP_TYPE_ROW_)
#undef DC_PROP_TYPE_ROW_
};

static const struct dc_prop *dc_prop_find(const char *key)
{
	for (int k = 0; key && k < DC_NPROPS; k++)
		if (!strcmp(dc_props[k].key, key))
			return &dc_props[k];
	return NULL;
}

int dmaconn_property_count(void)
{
	return DC_NPROPS;
}

const char *dmaconn_property_key(int k)
{
	return k >= 0 && k < DC_NPROPS ? dc_props[k].key : NULL;
}

int dmaconn_placement_key_count(void)
{
	return DC_PLACE_NKEYS;
}

const char *dmaconn_placement_key(int k)
{
	return dc_place_key_at(k);
}

dmaconn_property_type dmaconn_property_type_of(const char *key)
{
	const struct dc_prop *p = dc_prop_find(key);
	return p ? p->type : dc_place_int_key(key) ? DMACONN_TYPE_INT : DMACONN_TYPE_STRING;
}

int dmaconn_property_scope_of(const char *key)
{
	const struct dc_prop *p = dc_prop_find(key);
	return p ? (int)p->scope : 0;
}

const char *dmaconn_property_unit(const char *key)
{
	const struct dc_prop *p = dc_prop_find(key);
	return p ? p->unit : NULL;
}

const char *dmaconn_property_doc(const char *key)
{
	const struct dc_prop *p = dc_prop_find(key);
	return p ? p->doc : NULL;
}

static int dc_prop_type_known(dmaconn_property_type type)
{
	return (int)type >= 0 && (size_t)type < sizeof(dc_prop_types) / sizeof(dc_prop_types[0]) &&
	       dc_prop_types[type].name;
}

const char *dmaconn_property_type_name(dmaconn_property_type type)
{
	return dc_prop_type_known(type) ? dc_prop_types[type].name : NULL;
}

const char *dmaconn_property_json_type(dmaconn_property_type type)
{
	return dc_prop_type_known(type) ? dc_prop_types[type].json : NULL;
}

/* Whether text can start a number: not empty, no leading space (strtoll
 * and strtod would skip it). */
static int dc_prop_starts(const char *text)
{
	return *text && *text != ' ' && (*text < '\t' || *text > '\r');
}

/* A whole integer of base 10 or 16 (an optional "0x" then), or -1. */
static int dc_prop_integer(const char *text, int base, long long *out)
{
	if (!dc_prop_starts(text))
		return -1;
	char *end = NULL;
	errno = 0;
	long long v;
	if (base == 16) {
		if (*text == '-' || *text == '+')
			return -1;
		unsigned long long u = strtoull(text, &end, 16);
		if (u > LLONG_MAX)
			return -1;
		v = (long long)u;
	} else {
		v = strtoll(text, &end, 10);
	}
	if (end == text || *end || errno)
		return -1;
	*out = v;
	return 0;
}

int dmaconn_property_read_int(const char *key, const char *value, long long *out)
{
	if (!key || !value || !out)
		return DMACONN_EINVAL;
	dmaconn_property_type t = dmaconn_property_type_of(key);
	if (t != DMACONN_TYPE_INT && t != DMACONN_TYPE_INT_STRING && t != DMACONN_TYPE_HEX)
		return DMACONN_EINVAL;
	return dc_prop_integer(value, t == DMACONN_TYPE_HEX ? 16 : 10, out) ? DMACONN_EINVAL : DMACONN_OK;
}

int dmaconn_property_read_number(const char *key, const char *value, double *out)
{
	if (!key || !value || !out)
		return DMACONN_EINVAL;
	if (dmaconn_property_type_of(key) != DMACONN_TYPE_NUMBER) {
		long long v;
		int rc = dmaconn_property_read_int(key, value, &v);
		if (rc == DMACONN_OK)
			*out = (double)v;
		return rc;
	}
	if (!dc_prop_starts(value))
		return DMACONN_EINVAL;
	char *end = NULL;
	errno = 0;
	double v = strtod(value, &end);
	if (end == value || *end || errno || !isfinite(v))
		return DMACONN_EINVAL;
	*out = v;
	return DMACONN_OK;
}

int dmaconn_property_read_bool(const char *key, const char *value, int *out)
{
	if (!key || !value || !out || dmaconn_property_type_of(key) != DMACONN_TYPE_BOOL)
		return DMACONN_EINVAL;
	if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "1"))
		*out = 1;
	else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "0"))
		*out = 0;
	else
		return DMACONN_EINVAL;
	return DMACONN_OK;
}

/* One run "A:V" or "A-B:V" at *p: 0 with the items and value, p moved past
 * it and its comma, or -1. */
static int dc_prop_run(const char **p, long long *a, long long *b, long long *v)
{
	char item[64];
	size_t len = strcspn(*p, ",");
	if (len == 0 || len >= sizeof(item) || ((*p)[len] == ',' && !(*p)[len + 1]))
		return -1;
	memcpy(item, *p, len);
	item[len] = '\0';
	char *colon = strchr(item, ':'), *dash = strchr(item, '-');
	if (!colon || (dash && dash > colon))
		return -1;
	*colon = '\0';
	if (dash)
		*dash = '\0';
	if (dc_prop_integer(item, 10, a) || dc_prop_integer(dash ? dash + 1 : item, 10, b) ||
	    dc_prop_integer(colon + 1, 10, v) || *a < 0 || *b < *a || *b >= INT_MAX || *v < 0)
		return -1;
	*p += len + ((*p)[len] == ',');
	return 0;
}

int dmaconn_property_read_runs(const char *key, const char *value, long long *out, int max, int *count)
{
	if (!key || !value || !count || max < 0 || (max > 0 && !out) ||
	    dmaconn_property_type_of(key) != DMACONN_TYPE_RUNS)
		return DMACONN_EINVAL;
	/* Checked whole before anything is written. */
	long long a, b, v, last = -1;
	for (const char *p = value; *p;) {
		if (dc_prop_run(&p, &a, &b, &v) || a <= last)
			return DMACONN_EINVAL;
		last = b;
	}
	for (int k = 0; k < max; k++)
		out[k] = 0;
	for (const char *p = value; *p;) {
		(void)dc_prop_run(&p, &a, &b, &v);
		for (long long k = a; k <= b && k < max; k++)
			out[k] = v;
	}
	*count = (int)(last + 1);
	return DMACONN_OK;
}

int dmaconn_property_read_list(const char *key, const char *value, long long *out, int max, int *count)
{
	if (!key || !value || !count || max < 0 || (max > 0 && !out))
		return DMACONN_EINVAL;
	dmaconn_property_type t = dmaconn_property_type_of(key);
	if (t != DMACONN_TYPE_LIST && t != DMACONN_TYPE_VERSION)
		return DMACONN_EINVAL;
	const char sep = t == DMACONN_TYPE_LIST ? ',' : '.';
	/* Checked whole before anything is written. */
	int n = 0;
	for (const char *p = value; *p;) {
		char item[32];
		size_t len = strcspn(p, (const char[]){ sep, '\0' });
		if (len == 0 || len >= sizeof(item) || (p[len] == sep && !p[len + 1]))
			return DMACONN_EINVAL;
		memcpy(item, p, len);
		item[len] = '\0';
		long long v;
		if (dc_prop_integer(item, 10, &v) || n == INT_MAX)
			return DMACONN_EINVAL;
		n++;
		p += len + (p[len] == sep);
	}
	if (t == DMACONN_TYPE_VERSION && n == 0)
		return DMACONN_EINVAL;
	int k = 0;
	for (const char *p = value; *p && k < max; k++) {
		size_t len = strcspn(p, (const char[]){ sep, '\0' });
		char item[32];
		memcpy(item, p, len);
		item[len] = '\0';
		(void)dc_prop_integer(item, 10, &out[k]);
		p += len + (p[len] == sep);
	}
	*count = n;
	return DMACONN_OK;
}

/* The text of device i's property (j < 0) or of the pair i -> j's, or why
 * there is none: the getters' checks, in the order the header gives. */
static int dc_prop_text(const dmaconn_result *r, int i, int j, const char *key, const void *out,
			const char **text)
{
	if (!r || !key || !out)
		return DMACONN_EINVAL;
	int n = dmaconn_result_size(r);
	if (i < 0 || i >= n || j >= n || j == i)
		return DMACONN_ERANGE;
	*text = j < 0 ? dmaconn_result_device_get(r, i, key) : dmaconn_result_pair_get(r, i, j, key);
	return *text ? DMACONN_OK : DMACONN_ENOENT;
}

/* j as dc_prop_text() takes a pair's: never the device's -1. */
#define DC_PAIR(j) ((j) < 0 ? INT_MAX : (j))

/* What a getter reads its text as, and into what. */
enum dc_prop_as { DC_AS_INT, DC_AS_NUMBER, DC_AS_BOOL, DC_AS_STR, DC_AS_LIST };

struct dc_prop_list {
	long long *out;
	int max, *count;
};

/* Every typed getter: the property's text, then the reader of its type. */
static int dc_prop_get(const dmaconn_result *r, int i, int j, const char *key, enum dc_prop_as as, void *out)
{
	const char *t;
	const struct dc_prop_list *l = out;
	int rc = dc_prop_text(r, i, j, key, as == DC_AS_LIST && l ? (const void *)l->count : out, &t);
	if (rc != DMACONN_OK)
		return rc;
	switch (as) {
	case DC_AS_INT:
		return dmaconn_property_read_int(key, t, out);
	case DC_AS_NUMBER:
		return dmaconn_property_read_number(key, t, out);
	case DC_AS_BOOL:
		return dmaconn_property_read_bool(key, t, out);
	case DC_AS_STR:
		*(const char **)out = t;
		return DMACONN_OK;
	case DC_AS_LIST:
		return dmaconn_property_read_list(key, t, l->out, l->max, l->count);
	}
	return DMACONN_EINVAL;
}

/* The getters of one type: device i's property, and the pair i -> j's. */
#define DC_PROP_GETTERS(suffix, type, as)                                                                  \
	int dmaconn_result_device_##suffix(const dmaconn_result *r, int i, const char *key, type *out)   \
	{                                                                                                \
		return dc_prop_get(r, i, -1, key, as, out);                                              \
	}                                                                                                \
	int dmaconn_result_pair_##suffix(const dmaconn_result *r, int i, int j, const char *key, type *out) \
	{                                                                                                \
		return dc_prop_get(r, i, DC_PAIR(j), key, as, out);                                      \
	}

DC_PROP_GETTERS(int, long long, DC_AS_INT)
DC_PROP_GETTERS(number, double, DC_AS_NUMBER)
DC_PROP_GETTERS(bool, int, DC_AS_BOOL)
DC_PROP_GETTERS(str, const char *, DC_AS_STR)

int dmaconn_result_device_list(const dmaconn_result *r, int i, const char *key, long long *out, int max,
			       int *count)
{
	struct dc_prop_list l = { out, max, count };
	return dc_prop_get(r, i, -1, key, DC_AS_LIST, count ? &l : NULL);
}

int dmaconn_result_pair_list(const dmaconn_result *r, int i, int j, const char *key, long long *out, int max,
			     int *count)
{
	struct dc_prop_list l = { out, max, count };
	return dc_prop_get(r, i, DC_PAIR(j), key, DC_AS_LIST, count ? &l : NULL);
}
