/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one JSON form of a result (Jansson), as docs/json-output.md
 * describes it: {"device_type", "connection_type", "matrix", "devices":
 * [{"ordinal", properties...}], "pairs": [{"from", "to", properties...}],
 * "warnings", and "unavailable": true where dmaconn_result_unavailable()}.
 * The CLI's --json writes it (element by element), the verdict cache
 * stores it, a recording's "verification" section holds its pairs.
 *
 * A property's JSON type comes from dc_prop_kind(): integers, numbers and
 * booleans are typed, every other key is a string.  Built from the public
 * header and Jansson only, into each component that reads or writes JSON.
 */
#ifndef DMACONN_CODEC_H
#define DMACONN_CODEC_H

#include <jansson.h>
#include <stddef.h>

#include "dmaconn.h"

enum dc_prop_kind {
	DC_PROP_STRING,
	DC_PROP_INT,
	DC_PROP_NUMBER,
	DC_PROP_BOOL, /* "yes"/"no" in results ("1"/"0" from the verify helper) */
	DC_PROP_CLIQUES /* "type:id,..." in results, [{"type", "id"}, ...] in JSON */
};

/* The JSON type of the property key (DC_PROP_STRING for any key not typed). */
enum dc_prop_kind dc_prop_kind(const char *key);

struct dc_codec {
	/*
	 * DC_CODEC_EXACT: what is stored to be read back (the cache, a
	 * recording): a value is typed only where it reads back as the same
	 * text ("393.70" stays a string), and a string that is not UTF-8
	 * fails the encoding.  Otherwise (the CLI) a typed key's value is
	 * its type, or null where it does not read as one.
	 */
	unsigned flags;
	/* Replaces what is not UTF-8 in a key or a value: a malloc'd copy,
	 * NULL when nothing needs replacing.  NULL: nothing is replaced. */
	char *(*fix)(const char *s);
};
#define DC_CODEC_EXACT 1u

/* Results are read up to this many devices. */
#define DC_CODEC_MAX_DEVICES 65536

/* The value of property key (NULL: null); NULL when out of memory or, with
 * DC_CODEC_EXACT, when text is not UTF-8. */
json_t *dc_codec_value(const struct dc_codec *c, const char *key, const char *text);

/* The length of the UTF-8 character at p (before end), as Jansson accepts
 * one: 0 when it is not one (a stray byte, an overlong form, a surrogate,
 * past U+10FFFF); *cp its code point. */
int dc_codec_utf8_char(const unsigned char *p, const unsigned char *end, unsigned *cp);

/* s with each byte that is not part of valid UTF-8 replaced by U+FFFD, and
 * with controls also each control character (C0 with tab and line breaks,
 * DEL, C1, U+2028, U+2029); malloc'd, NULL when nothing needs a change (or
 * out of memory). */
char *dc_codec_utf8_clean(const char *s, int controls);

/* dc_codec_utf8_clean(s, 0): a dc_codec's fix for writers with no text
 * cleaning of their own (the verify helper). */
char *dc_codec_utf8_fix(const char *s);

/* s as a JSON string, what is not UTF-8 replaced through c->fix; NULL
 * when that fails. */
json_t *dc_codec_string(const struct dc_codec *c, const char *s);

/* The text a result holds for the JSON value of key: strings as they are,
 * integers in decimal, numbers in the fewest digits that read back, booleans
 * "yes"/"no" ("true"/"false" for a key not typed boolean).  malloc'd; NULL
 * for anything else (null, arrays, objects) or out of memory. */
char *dc_codec_text(const char *key, const json_t *value);

/* Sets obj's key to the value of key unless obj has it (a repeated
 * property keeps its first value); -1 when that fails. */
int dc_codec_set_first(const struct dc_codec *c, json_t *obj, const char *key, const char *value);

/* Device i as {"ordinal", properties...}, pair (i, j) as {"from", "to",
 * properties...}; a repeated key keeps its first value.  NULL when out of
 * memory or a value cannot be encoded. */
json_t *dc_codec_device(const struct dc_codec *c, const dmaconn_result *r, int i);
json_t *dc_codec_pair(const struct dc_codec *c, const dmaconn_result *r, int i, int j);

/* The whole result (pairs with properties only); NULL as above. */
json_t *dc_codec_result(const struct dc_codec *c, const dmaconn_result *r);

/*
 * Sets b to the result doc describes, checked whole before anything is set
 * (sizes, ordinals, pairs in range and once each, values read as their
 * text).  *unavailable: doc's "unavailable".  0, or -1 with why filled
 * (nothing set), -2 when out of memory.
 */
int dc_codec_read(const json_t *doc, dmaconn_builder *b, int *unavailable, char *why, size_t len);

#endif
