/* SPDX-License-Identifier: BSD-3-Clause */
/* The JSON form of a result: see codec.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "place_keys.h"

/*
 * The JSON type of every declared key, from the one table
 * (include/dmaconn_props.h): the library's typed getters, Python's typing and
 * docs/dmaconn.schema.json follow the same rows.  Hexadecimal, list, version
 * and int_string values are strings in JSON.  dc_prop_kind() is the one way
 * in; the codec is built into components that do not link libdmaconn, so it
 * reads the table itself rather than through dmaconn_property_type_of().
 */
static const struct {
	const char *key;
	enum dc_prop_kind kind;
} dc_codec_kinds[] = {
#define DC_CODEC_KIND_(name, key, type, scope, unit, doc) \
	{ key, DMACONN_TYPE_##type == DMACONN_TYPE_INT	  ? DC_PROP_INT :    \
	       DMACONN_TYPE_##type == DMACONN_TYPE_NUMBER ? DC_PROP_NUMBER : \
	       DMACONN_TYPE_##type == DMACONN_TYPE_BOOL	  ? DC_PROP_BOOL :   \
	       DMACONN_TYPE_##type == DMACONN_TYPE_CLIQUES ? DC_PROP_CLIQUES : \
							    DC_PROP_STRING },
	DMACONN_PROPERTIES(DC_CODEC_KIND_)
#undef DC_CODEC_KIND_
};

enum dc_prop_kind dc_prop_kind(const char *key)
{
	for (size_t k = 0; key && k < sizeof(dc_codec_kinds) / sizeof(dc_codec_kinds[0]); k++)
		if (!strcmp(dc_codec_kinds[k].key, key))
			return dc_codec_kinds[k].kind;
	return dc_place_int_key(key) ? DC_PROP_INT : DC_PROP_STRING;
}

/* ------------------------------------------------------------- values */

int dc_codec_utf8_char(const unsigned char *p, const unsigned char *end, unsigned *cp)
{
	unsigned c = *p;
	int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (n > end - p)
		return 0;
	*cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
	for (int k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (p[k] & 0x3fu);
	}
	if ((n == 3 && (*cp < 0x800 || (*cp >= 0xd800 && *cp <= 0xdfff))) || (n == 4 && (*cp < 0x10000 || *cp > 0x10ffff)))
		return 0;
	return n;
}

char *dc_codec_utf8_clean(const char *s, int controls)
{
	size_t n = strlen(s);
	const unsigned char *p = (const unsigned char *)s;
	char *out = NULL;
	size_t len = 0;
	for (size_t i = 0; i < n;) {
		unsigned cp = 0;
		size_t k = (size_t)dc_codec_utf8_char(p + i, p + n, &cp);
		int valid = k > 0, ok = valid;
		if (ok && controls)
			ok = !(cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029);
		if (!out && ok) {
			i += k;
			continue;
		}
		if (!out) {
			out = malloc(3 * n + 1);
			if (!out)
				return NULL;
			memcpy(out, s, i);
			len = i;
		}
		if (ok) {
			memcpy(out + len, s + i, k);
			len += k;
			i += k;
		} else {
			memcpy(out + len, "\xef\xbf\xbd", 3);
			len += 3;
			i += valid ? k : 1; /* a control: all of it */
		}
	}
	if (out)
		out[len] = '\0';
	return out;
}

char *dc_codec_utf8_fix(const char *s)
{
	return dc_codec_utf8_clean(s, 0);
}

json_t *dc_codec_string(const struct dc_codec *c, const char *s)
{
	char *fixed = c && c->fix ? c->fix(s) : NULL;
	json_t *v = json_string(fixed ? fixed : s);
	free(fixed);
	return v;
}

/* The fewest digits of v that read back as v, without an exponent where
 * that is short enough. */
static void dc_codec_real_text(double v, char *buf, size_t len)
{
	int plain = v == 0 || (fabs(v) >= 1e-4 && fabs(v) < 1e15);
	for (int prec = plain ? 0 : 1; prec <= 17; prec++) {
		snprintf(buf, len, plain ? "%.*f" : "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* Whether text is a whole C integer (no blank before, nothing after). */
static int dc_codec_int(const char *text, long long *out)
{
	char *end = NULL;
	if (!*text || *text == ' ' || (*text >= '\t' && *text <= '\r'))
		return 0;
	errno = 0;
	*out = strtoll(text, &end, 10);
	return !*end && !errno;
}

static int dc_codec_number(const char *text, double *out)
{
	char *end = NULL;
	if (!*text || *text == ' ' || (*text >= '\t' && *text <= '\r'))
		return 0;
	errno = 0;
	*out = strtod(text, &end);
	return !*end && !errno && isfinite(*out);
}

/* 1 true, 0 false, -1 neither; exact: only as results write them. */
static int dc_codec_bool(const char *text, int exact)
{
	if (!strcmp(text, "yes") || (!exact && (!strcmp(text, "true") || !strcmp(text, "1"))))
		return 1;
	if (!strcmp(text, "no") || (!exact && (!strcmp(text, "false") || !strcmp(text, "0"))))
		return 0;
	return -1;
}

/* Typed cliques, "multicast_pointer:7,unicast_pointer:5", as [{"type":
 * "multicast_pointer", "id": 7}, ...]; NULL when text reads otherwise (or
 * out of memory). */
static json_t *dc_codec_cliques(const char *text)
{
	json_t *a = json_array();
	const char *at = text;
	while (a && *at) {
		const char *colon = strchr(at, ':');
		char *end = NULL;
		if (!colon || colon == at || colon - at >= 64 || colon[1] < '0' || colon[1] > '9')
			break;
		errno = 0;
		unsigned long long id = strtoull(colon + 1, &end, 10);
		if (errno || id > 4294967295ULL || (*end && *end != ',') || (*end == ',' && !end[1]))
			break;
		json_t *type = json_stringn(at, (size_t)(colon - at));
		json_t *e = type ? json_pack("{s:o,s:I}", "type", type, "id", (json_int_t)id) : NULL;
		if (!e || json_array_append_new(a, e) != 0)
			break;
		at = *end ? end + 1 : end;
	}
	if (a && !*at)
		return a;
	json_decref(a);
	return NULL;
}

json_t *dc_codec_value(const struct dc_codec *c, const char *key, const char *text)
{
	int exact = c && (c->flags & DC_CODEC_EXACT);
	enum dc_prop_kind kind = dc_prop_kind(key);
	if (!text)
		return json_null();
	/* The typed value, and the text it reads back as. */
	json_t *typed = NULL;
	char back[64] = "";
	long long i;
	double d;
	int b;
	if (kind == DC_PROP_CLIQUES) {
		/* What is stored keeps the text, which reads back as it is. */
		if (exact)
			return dc_codec_string(NULL, text);
		typed = dc_codec_cliques(text);
		return typed ? typed : json_null();
	}
	if (kind == DC_PROP_INT && dc_codec_int(text, &i)) {
		typed = json_integer(i);
		snprintf(back, sizeof(back), "%lld", i);
	} else if (kind == DC_PROP_NUMBER && dc_codec_number(text, &d)) {
		typed = json_real(d);
		dc_codec_real_text(d, back, sizeof(back));
	} else if (kind == DC_PROP_BOOL && (b = dc_codec_bool(text, exact)) >= 0) {
		typed = json_boolean(b);
		snprintf(back, sizeof(back), "%s", text); /* exact: "yes" or "no" */
	}
	if (typed && (!exact || !strcmp(back, text)))
		return typed;
	json_decref(typed);
	if (kind != DC_PROP_STRING && !exact)
		return json_null();
	return dc_codec_string(exact ? NULL : c, text);
}

char *dc_codec_text(const char *key, const json_t *value)
{
	char buf[64];
	if (json_is_string(value))
		return strdup(json_string_value(value));
	if (json_is_integer(value))
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(value));
	else if (json_is_real(value))
		dc_codec_real_text(json_real_value(value), buf, sizeof(buf));
	else if (json_is_boolean(value))
		snprintf(buf, sizeof(buf), "%s",
			 dc_prop_kind(key) == DC_PROP_BOOL ? (json_is_true(value) ? "yes" : "no")
							   : (json_is_true(value) ? "true" : "false"));
	else
		return NULL;
	return strdup(buf);
}

int dc_codec_set_first(const struct dc_codec *c, json_t *obj, const char *key, const char *value)
{
	int exact = c && (c->flags & DC_CODEC_EXACT);
	char *fixed = !exact && c && c->fix ? c->fix(key) : NULL;
	const char *k = fixed ? fixed : key;
	int rc = 0;
	if (!json_object_get(obj, k))
		rc = json_object_set_new(obj, k, dc_codec_value(c, key, value));
	free(fixed);
	return rc;
}
