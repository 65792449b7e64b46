/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine behind format.h: one table of fields per object of the format,
 * read into C structures with the format's checks and messages, and
 * written from C answers when recording.
 */
#include "format.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pci.h"

char replay_err[1024];
bool replay_rec_oom;

/* A path too long for the buffer ends in "..." rather than misleads. */
static const char *path_end(char *buf, int n)
{
	if (n < 0 || n >= REPLAY_PATH_LEN)
		strcpy(buf + REPLAY_PATH_LEN - 4, "...");
	return buf;
}

const char *replay_sub(char *buf, const char *base, const char *key)
{
	return path_end(buf, snprintf(buf, REPLAY_PATH_LEN, "%s.%s", base, key));
}

const char *replay_item(char *buf, const char *base, size_t i)
{
	return path_end(buf, snprintf(buf, REPLAY_PATH_LEN, "%s[%zu]", base, i));
}

int replay_bad(const char *file, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(replay_err, sizeof(replay_err), "%s: %s: ", file, path);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof(replay_err))
		vsnprintf(replay_err + n, sizeof(replay_err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

const char *replay_name_of(const struct replay_name *t, int value)
{
	for (; t->name; t++)
		if (t->value == value)
			return t->name;
	return NULL;
}

int replay_value_of(const struct replay_name *t, const char *name, int *value)
{
	for (; t->name; t++)
		if (!strcasecmp(t->name, name)) {
			*value = t->value;
			return 0;
		}
	return -1;
}

int replay_get_int(const char *file, json_t *v, const char *path, long long min, long long max, long long *out)
{
	long long x = (long long)json_integer_value(v);
	*out = 0;
	if (!json_is_integer(v))
		return replay_bad(file, path, "expected an integer");
	if (x < min || x > max)
		return replay_bad(file, path, "%lld is out of range (%lld to %lld)", x, min, max);
	*out = x;
	return 0;
}

int fmt_code(const struct fmt_ctx *c, json_t *v, const char *path, int *rc)
{
	*rc = c->codes->failed;
	if (!json_is_string(v))
		return replay_bad(c->file, path, "%s", c->codes->expected);
	if (c->codes->parse(json_string_value(v), rc))
		return replay_bad(c->file, path, "%s \"%s\"", c->codes->unknown, json_string_value(v));
	return 0;
}

int fmt_error_object(const struct fmt_ctx *c, json_t *v, const char *path, int *rc)
{
	json_t *e = json_is_object(v) ? json_object_get(v, "error") : NULL;
	char p[REPLAY_PATH_LEN];
	if (!e)
		return 0;
	if (fmt_code(c, e, replay_sub(p, path, "error"), rc))
		return -1;
	return *rc ? 1 : replay_bad(c->file, p, "SUCCESS is not an error");
}

int fmt_array(const struct fmt_ctx *c, json_t *v, const char *path, const char *what, size_t max, size_t size,
	      void **out, size_t *n)
{
	*out = NULL;
	*n = json_array_size(v);
	if (!json_is_array(v))
		return replay_bad(c->file, path, "expected an array of %s", what);
	if (*n > max)
		return replay_bad(c->file, path, "%zu %s, more than the %zu supported", *n, what, max);
	if (*n && size && !(*out = calloc(*n, size)))
		return replay_bad(c->file, path, "out of memory");
	return 0;
}

/* Integers of 1, 2, 4 or 8 bytes, kept as the host keeps them. */
static void store(void *out, size_t size, long long x)
{
	uint8_t b = (uint8_t)x;
	uint16_t h = (uint16_t)x;
	uint32_t w = (uint32_t)x;
	memcpy(out, size == 1 ? (void *)&b : size == 2 ? (void *)&h : size == 4 ? (void *)&w : (void *)&x, size);
}

static long long load(const void *in, size_t size, bool sign)
{
	uint8_t b;
	uint16_t h;
	uint32_t w;
	long long x;
	memcpy(size == 1 ? (void *)&b : size == 2 ? (void *)&h : size == 4 ? (void *)&w : (void *)&x, in, size);
	return size == 1 ? (sign ? (int8_t)b : b)
	       : size == 2 ? (sign ? (int16_t)h : h)
	       : size == 4 ? (sign ? (long long)(int32_t)w : (long long)w)
			   : x;
}

static int get_int(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	long long x;
	if (replay_get_int(c->file, v, path, f->min, f->max, &x))
		return f->msg ? replay_bad(c->file, path, "%s", f->msg) : -1;
	store(out, f->size, x);
	return 0;
}

/* msg with its one "%s" or "%d" replaced by arg. */
static int bad_with(const struct fmt_ctx *c, const char *path, const char *msg, const char *arg)
{
	const char *at = strchr(msg, '%');
	if (!at || !at[1])
		return replay_bad(c->file, path, "%s", msg);
	return replay_bad(c->file, path, "%.*s%s%s", (int)(at - msg), msg, arg, at + 2);
}

static int get_name(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, int *out)
{
	char list[256] = "";
	size_t len = 0;
	if (json_is_string(v) && !replay_value_of(f->aux, json_string_value(v), out))
		return 0;
	for (const struct replay_name *e = f->aux; e->name && len < sizeof(list); e++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s\"%s\"", len ? ", " : "", e->name);
	return bad_with(c, path, f->msg ? f->msg : "expected one of %s", list);
}

/* "8-4-4-4-12" hex groups or 32 hex digits; loose: hyphens anywhere. */
static int parse_uuid(const char *s, bool loose, unsigned char out[16])
{
	size_t len = strlen(s), pos = 0;
	int n = 0;
	if (!loose && len != 32 && len != 36)
		return -1;
	for (; s[pos] && n < 32; pos++) {
		bool group = len == 36 && (pos == 8 || pos == 13 || pos == 18 || pos == 23);
		int h = dc_hexval((unsigned char)s[pos]);
		if (s[pos] == '-' && (loose || group))
			continue;
		if (h < 0 || (group && !loose))
			return -1;
		out[n / 2] = (unsigned char)(n % 2 ? (out[n / 2] | h) : h << 4);
		n++;
	}
	while (loose && s[pos] == '-')
		pos++;
	return n == 32 && !s[pos] ? 0 : -1;
}

int fmt_value(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	char p[REPLAY_PATH_LEN];
	struct fmt_field e = *f;
	long long all = 0;
	int x;
	switch (f->kind) {
	case FMT_UINT:
	case FMT_INT:
		return get_int(c, f, v, path, out);
	case FMT_STR:
		snprintf(p, sizeof(p), "%d", f->size - 1);
		if (f->msg && (!json_is_string(v) || json_string_length(v) >= f->size))
			return bad_with(c, path, f->msg, p);
		if (!json_is_string(v))
			return replay_bad(c->file, path, "expected a string");
		if (json_string_length(v) >= f->size)
			return replay_bad(c->file, path, "longer than %s's %s characters", c->vendor, p);
		memcpy(out, json_string_value(v), json_string_length(v) + 1);
		return 0;
	case FMT_NAME:
	case FMT_CODE:
		if (f->kind == FMT_NAME ? get_name(c, f, v, path, &x) : fmt_code(c, v, path, &x))
			return -1;
		if (x == 0 && (f->flags & FMT_FAIL))
			return replay_bad(c->file, path, "SUCCESS is not an error");
		store(out, f->size, x);
		return 0;
	case FMT_FLAGS:
		if (!json_is_array(v))
			return replay_bad(c->file, path, "expected an array of flag names");
		for (size_t i = 0; i < json_array_size(v); i++, all |= x)
			if (get_name(c, f, json_array_get(v, i), replay_item(p, path, i), &x))
				return -1;
		store(out, f->size, all);
		return 0;
	case FMT_UUID:
		if (!json_is_string(v) || parse_uuid(json_string_value(v), f->flags & FMT_LOOSE, out))
			return replay_bad(c->file, path, "%s",
					  f->msg		 ? f->msg
					  : f->flags & FMT_LOOSE ? "expected a UUID of 32 hex digits (hyphens allowed)"
								 : "expected a UUID, hyphenated or as 32 hex digits");
		return 0;
	case FMT_BOOL:
		if (!json_is_boolean(v))
			return replay_bad(c->file, path, "%s", f->msg ? f->msg : "expected true or false");
		store(out, f->size, json_is_true(v));
		return 0;
	case FMT_PAIR:
		e.msg = NULL;
		e.size = f->size / 2;
		if (!json_is_array(v) || json_array_size(v) != 2)
			return replay_bad(c->file, path, "%s", f->msg ? f->msg : "expected a pair [a, b]");
		for (size_t i = 0; i < 2; i++)
			if (get_int(c, &e, json_array_get(v, i), replay_item(p, path, i), (char *)out + i * e.size))
				return -1;
		return 0;
	case FMT_OBJ:
		if (!json_is_object(v))
			return replay_bad(c->file, path, "%s", f->msg ? f->msg : "expected an object");
		return fmt_read(c, f->aux, v, path, out);
	default:
		return ((const struct fmt_custom *)f->aux)->read(c, f, v, path, out);
	}
}

int fmt_read(const struct fmt_ctx *c, const struct fmt_field *fields, json_t *obj, const char *path, void *out)
{
	char p[REPLAY_PATH_LEN];
	if (!json_is_object(obj))
		return replay_bad(c->file, path, "expected an object");
	for (const struct fmt_field *f = fields; f->key; f++) {
		json_t *v = json_object_get(obj, f->key);
		int rc = f->absent, e = 0;
		replay_sub(p, path, f->key);
		if (!v && (f->flags & FMT_REQ))
			return replay_bad(c->file, path, "\"%s\" is required", f->key);
		if (v && f->rc && (e = fmt_error_object(c, v, p, &rc)) < 0)
			return -1;
		rc = v && !e ? 0 : rc;
		if (f->rc)
			memcpy((char *)out + f->rc - 1, &rc, sizeof(rc));
		if (v && !e && fmt_value(c, f, v, p, (char *)out + f->off))
			return -1;
	}
	return 0;
}

json_t *fmt_json(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	const struct replay_name *t = f->aux;
	char u[DC_UUID_TEXT_SIZE];
	const char *s;
	json_t *a;
	bool number = f->kind <= FMT_CODE && f->kind != FMT_STR;
	long long x = number ? load(in, f->size, f->kind == FMT_INT || f->min < 0) : 0;
	switch (f->kind) {
	case FMT_UINT:
	case FMT_INT:
		return json_integer(x);
	case FMT_STR:
		return replay_text(in, strnlen(in, f->size ? f->size - 1u : 0));
	case FMT_NAME:
		/* A value the table does not name is written as its last name
		 * (FMT_FIRST: its first). */
		s = replay_name_of(t, (int)x);
		while (!s && !(f->flags & FMT_FIRST) && t[1].name)
			t++;
		return json_string(s ? s : t->name);
	case FMT_FLAGS:
		a = json_array();
		for (; t->name; t++)
			if (x & t->value)
				replay_append(&replay_rec_oom, a, json_string(t->name));
		return a;
	case FMT_CODE:
		return json_string(c->name((int)x));
	case FMT_UUID:
		dc_uuid_format(in, u);
		return json_string(u);
	case FMT_BOOL:
		return json_boolean(load(in, f->size, false));
	case FMT_PAIR:
		return json_pack("[II]", (json_int_t)load(in, f->size / 2u, f->min < 0),
				 (json_int_t)load((const char *)in + f->size / 2, f->size / 2u, f->min < 0));
	case FMT_OBJ:
		return fmt_write(c, f->aux, in);
	default:
		return ((const struct fmt_custom *)f->aux)->write(c, f, in);
	}
}

json_t *fmt_error(const struct fmt_ctx *c, int rc)
{
	return json_pack("{s:s}", "error", c->name(rc));
}

json_t *fmt_answer(const struct fmt_ctx *c, const struct fmt_field *f, int rc, const void *in)
{
	return rc ? fmt_error(c, rc) : fmt_json(c, f, in);
}

json_t *fmt_write(const struct fmt_ctx *c, const struct fmt_field *fields, const void *in)
{
	json_t *o = json_object();
	bool oom = !o;
	for (const struct fmt_field *f = fields; o && f->key; f++) {
		int rc = 0;
		if (f->rc)
			memcpy(&rc, (const char *)in + f->rc - 1, sizeof(rc));
		replay_put(&oom, o, f->key, fmt_answer(c, f, rc, (const char *)in + f->off));
	}
	if (oom)
		json_decref(o);
	return oom ? NULL : o;
}

json_t *replay_text(const char *s, size_t n)
{
	json_t *v = json_stringn(s, n);
	char *clean = v ? NULL : malloc(n + 1);
	for (size_t i = 0; clean && i < n; i++)
		clean[i] = (unsigned char)s[i] < 0x80 && s[i] ? s[i] : '?';
	if (clean)
		v = json_stringn(clean, n);
	free(clean);
	return v;
}

void replay_put(bool *oom, json_t *obj, const char *key, json_t *v)
{
	if (!v || !obj || json_object_set_new(obj, key, v))
		*oom = true;
}

void replay_append(bool *oom, json_t *arr, json_t *v)
{
	if (!v || !arr || json_array_append_new(arr, v))
		*oom = true;
}

int replay_library_read(const struct fmt_ctx *c, json_t *sec, const char *path, struct replay_library *l)
{
	char p[REPLAY_PATH_LEN], q[REPLAY_PATH_LEN];
	json_t *v = json_object_get(sec, "library"), *e = json_is_object(v) ? json_object_get(v, "error") : NULL;
	size_t n;
	replay_sub(p, path, "library");
	if (v && !json_is_string(v) && !e)
		return replay_bad(c->file, p, "expected a library name or {\"error\": \"loader message\"}");
	if (e && !json_is_string(e))
		return replay_bad(c->file, replay_sub(q, p, "error"), "expected the loader's message");
	if (v && !(*(e ? &l->error : &l->name) = strdup(json_string_value(e ? e : v))))
		return replay_bad(c->file, p, "out of memory");
	if (e)
		return 0; /* nothing else can be reached */
	v = json_object_get(sec, "missing_functions");
	replay_sub(p, path, "missing_functions");
	if (v && fmt_array(c, v, p, "function names", 4096, sizeof(char *), (void **)&l->missing, &n))
		return -1;
	for (size_t i = 0; v && i < n; i++, l->nmissing++)
		if (!json_is_string(json_array_get(v, i)))
			return replay_bad(c->file, replay_item(q, p, i), "expected a function name");
		else if (!(l->missing[i] = strdup(json_string_value(json_array_get(v, i)))))
			return replay_bad(c->file, p, "out of memory");
	/* A bare name, or an error object like every other answer; here
	 * SUCCESS is a return code like the others. */
	v = json_object_get(sec, "init");
	e = json_is_object(v) ? json_object_get(v, "error") : NULL;
	replay_sub(p, path, "init");
	return v && fmt_code(c, e ? e : v, e ? replay_sub(q, p, "error") : p, &l->init) ? -1 : 0;
}

void replay_library_release(struct replay_library *l)
{
	for (int i = 0; i < l->nmissing; i++)
		free(l->missing[i]);
	free(l->missing), free(l->name), free(l->error);
	memset(l, 0, sizeof(*l));
}

bool replay_library_lacks(const struct replay_library *l, const char *fn)
{
	for (int i = 0; fn && i < l->nmissing; i++)
		if (!strcmp(l->missing[i], fn))
			return true;
	return false;
}

json_t *replay_library_missing(const struct replay_library *l)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < l->nmissing; i++)
		replay_append(&replay_rec_oom, arr, json_string(l->missing[i]));
	return arr;
}

void replay_library_record(json_t *sec, const char *name, const char *why, json_t *missing)
{
	const char *s = why ? why : name;
	json_t *v = replay_text(s, strlen(s));
	replay_put(&replay_rec_oom, sec, "library", why ? json_pack("{s:o}", "error", v) : v);
	if (missing)
		replay_put(&replay_rec_oom, sec, "missing_functions", missing);
}
