/* SPDX-License-Identifier: BSD-3-Clause */
/* The public API: errors, results, the builder, the registry and its cache. */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "backends/backend.h"
#include "model/connections.h"

#define DC_STR_(x) #x
#define DC_STR(x) DC_STR_(x)

const char *dmaconn_version_string(void)
{
	return DC_STR(DMACONN_VERSION_MAJOR) "." DC_STR(DMACONN_VERSION_MINOR) "." DC_STR(
		DMACONN_VERSION_PATCH);
}

/* ------------------------------------------------------------------ errors */

static _Thread_local char last_error[512];

const char *dmaconn_strerror(int err)
{
	switch (err) {
#define DC_STRERROR_(name, value, text)                                                 \
	case value:                                                                     \
		return text;
		DMACONN_ERRORS(DC_STRERROR_)
#undef DC_STRERROR_
	}
	return "unknown error";
}

const char *dmaconn_err_name(int err)
{
	switch (err) {
#define DC_ERR_NAME_(name, value, text)                                                 \
	case value:                                                                     \
		return "DMACONN_" #name;
		DMACONN_ERRORS(DC_ERR_NAME_)
#undef DC_ERR_NAME_
	}
	return "DMACONN_EUNKNOWN";
}

const char *dmaconn_last_error(void)
{
	return last_error;
}

/* Formatted aside first: the arguments may include last_error itself
 * (a detector passing dmaconn_last_error()). */
__attribute__((format(printf, 2, 0))) static int fail_v(int err, const char *fmt, va_list ap)
{
	char msg[sizeof(last_error)];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	memcpy(last_error, msg, sizeof(last_error));
	return err;
}

int dc_fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err = fail_v(err, fmt, ap);
	va_end(ap);
	return err;
}

static int dc_ok(void)
{
	last_error[0] = '\0';
	return DMACONN_OK;
}

/* ------------------------------------------------------------ device types */

static const char *const type_names[] = { NULL, "cuda", "rocm", "xpu" };

const char *dmaconn_device_type_name(dmaconn_device_type type)
{
	if ((int)type <= 0 || (size_t)type >= sizeof(type_names) / sizeof(type_names[0]))
		return NULL;
	return type_names[type];
}

int dmaconn_device_type_parse(const char *name, dmaconn_device_type *out)
{
	for (size_t i = 1; name && out && i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (!strcasecmp(name, type_names[i])) {
			*out = (dmaconn_device_type)i;
			return dc_ok();
		}
	}
	return dc_fail(DMACONN_EINVAL, "unknown device type '%s' (expected cuda, rocm or xpu)",
		       name ? name : "(null)");
}

int dmaconn_driver_loaded(dmaconn_device_type type)
{
	int checked = 0;
	const char *root = dc_config()->sysfs_root;
	for (const struct dc_backend *const *b = dc_backends; *b; b++) {
		if ((*b)->type != type || !(*b)->present)
			continue;
		if ((*b)->present(root ? root : ""))
			return 1;
		checked = 1;
	}
	/* A type no backend can tell of is not hidden. */
	return !checked;
}

/* ----------------------------------------------------------------- strings */

int dc_grow(void *itemsp, int count, int *cap, size_t size, int first)
{
	if (count < *cap)
		return 0;
	/* The pointer is copied, not read through a void **, which may not
	 * alias the caller's typed pointer. */
	void *items;
	memcpy(&items, itemsp, sizeof(items));
	/* Neither the doubled count nor its bytes may wrap (to a block smaller
	 * than the capacity claimed). */
	if (*cap > INT_MAX / 2)
		return -1;
	int ncap = *cap ? *cap * 2 : first;
	if ((size_t)ncap > SIZE_MAX / size)
		return -1;
	void *grown = realloc(items, (size_t)ncap * size);
	if (!grown)
		return -1;
	memcpy(itemsp, &grown, sizeof(grown));
	*cap = ncap;
	return 0;
}

int dc_strings_push(struct dc_strings *s, const char *str)
{
	if (dc_grow(&s->items, s->count, &s->cap, sizeof(*s->items), 4) != 0)
		return -1;
	char *copy = strdup(str);
	if (!copy)
		return -1;
	s->items[s->count++] = copy;
	return 0;
}

const char *dc_strings_pushv(struct dc_strings *s, size_t max, int clean, const char *fmt, va_list ap)
{
	char text[1024];
	vsnprintf(text, max < sizeof(text) ? max : sizeof(text), fmt, ap);
	int oom = 0;
	char *cleaned = clean ? dc_text_clean(text, &oom) : NULL;
	int rc = oom ? -1 : dc_strings_push(s, cleaned ? cleaned : text);
	free(cleaned);
	return rc == 0 ? s->items[s->count - 1] : NULL;
}

void dc_strings_clear(struct dc_strings *s)
{
	for (int i = 0; i < s->count; i++)
		free(s->items[i]);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

const char *dc_strings_at(const struct dc_strings *s, int k)
{
	return s && k >= 0 && k < s->count ? s->items[k] : NULL;
}

/* ---------------------------------------------------------------- warnings */

/*
 * The handler runs with no lock held, so that it may call dmaconn: set
 * another handler, detect a pair that warns, and so on.  Calls in flight are
 * counted by generation: dmaconn_set_warning_handler() returns once no other
 * thread still runs a handler it replaced (the old user_data may then be
 * freed), except when its caller is itself inside a handler or a detector,
 * where waiting could mean waiting for itself.
 */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sink_idle = PTHREAD_COND_INITIALIZER;
static dmaconn_warning_fn sink_fn;
static void *sink_data;
static unsigned long sink_gen;
static long sink_current;  /* calls in flight of the installed handler */
static long sink_replaced; /* calls in flight of handlers since replaced */
static _Thread_local int in_handler;   /* handler calls on this thread */
static _Thread_local int in_detection; /* detectors running on this thread */
static _Thread_local int passive;      /* the running detector's dmaconn_detect_passive */

void dmaconn_set_warning_handler(dmaconn_warning_fn fn, void *user_data)
{
	pthread_mutex_lock(&sink_lock);
	sink_fn = fn;
	sink_data = user_data;
	sink_gen++;
	sink_replaced += sink_current;
	sink_current = 0;
	if (!in_handler && !in_detection)
		while (sink_replaced > 0)
			pthread_cond_wait(&sink_idle, &sink_lock);
	pthread_mutex_unlock(&sink_lock);
}

static int quiet(void)
{
	const char *q = secure_getenv("DMACONN_QUIET");
	return q && *q && strcmp(q, "0") != 0;
}

void dc_warning_emit(const char *message)
{
	pthread_mutex_lock(&sink_lock);
	dmaconn_warning_fn fn = sink_fn;
	void *data = sink_data;
	unsigned long gen = sink_gen;
	if (fn)
		sink_current++;
	pthread_mutex_unlock(&sink_lock);
	if (!fn) {
		if (!quiet())
			fprintf(stderr, "dmaconn: warning: %s\n", message);
		return;
	}
	in_handler++;
	fn(message, data);
	in_handler--;
	pthread_mutex_lock(&sink_lock);
	/* Counts never go below 0: a child of fork() starts from 0 while the
	 * forking thread may still be inside a handler. */
	if (gen == sink_gen) {
		if (sink_current > 0)
			sink_current--;
	} else if (sink_replaced > 0 && --sink_replaced == 0) {
		pthread_cond_broadcast(&sink_idle);
	}
	pthread_mutex_unlock(&sink_lock);
}

/* ----------------------------------------------------------------- results */

void dc_props_clear(struct dc_props *p)
{
	for (int i = 0; i < p->count; i++) {
		free(p->items[i].key);
		free(p->items[i].value);
	}
	free(p->items);
	memset(p, 0, sizeof(*p));
}

int dc_props_set(struct dc_props *p, const char *key, const char *value)
{
	char *v = strdup(value);
	if (!v)
		return -1;
	for (int k = 0; k < p->count; k++) {
		if (!strcmp(p->items[k].key, key)) {
			free(p->items[k].value);
			p->items[k].value = v;
			return 0;
		}
	}
	if (dc_grow(&p->items, p->count, &p->cap, sizeof(*p->items), 8) != 0) {
		free(v);
		return -1;
	}
	char *k = strdup(key);
	if (!k) {
		free(v);
		return -1;
	}
	p->items[p->count].key = k;
	p->items[p->count].value = v;
	p->count++;
	return 0;
}

const char *dc_props_get(const struct dc_props *p, const char *key)
{
	for (int k = 0; p && key && k < p->count; k++)
		if (!strcmp(p->items[k].key, key))
			return p->items[k].value;
	return NULL;
}

int dc_props_count(const struct dc_props *p)
{
	return p ? p->count : 0;
}

const char *dc_props_key_at(const struct dc_props *p, int k)
{
	return p && k >= 0 && k < p->count ? p->items[k].key : NULL;
}

const char *dc_props_value_at(const struct dc_props *p, int k)
{
	return p && k >= 0 && k < p->count ? p->items[k].value : NULL;
}

static void result_free(dmaconn_result *r)
{
	for (int i = 0; r->devices && i < r->n; i++)
		dc_props_clear(&r->devices[i]);
	dc_pairs_free(&r->pairs);
	free(r->devices);
	free(r->matrix);
	free(r->connection);
	dc_strings_clear(&r->warnings);
	free(r);
}

dmaconn_result *dmaconn_result_retain(dmaconn_result *r)
{
	if (r)
		dc_ref(&r->refs);
	return r;
}

void dmaconn_result_release(dmaconn_result *r)
{
	if (r && dc_unref(&r->refs))
		result_free(r);
}

dmaconn_device_type dmaconn_result_device_type(const dmaconn_result *r)
{
	return r ? r->type : (dmaconn_device_type)0;
}

const char *dmaconn_result_connection_type(const dmaconn_result *r)
{
	return r ? r->connection : NULL;
}

int dmaconn_result_size(const dmaconn_result *r)
{
	return r ? r->n : 0;
}

const int *dmaconn_result_matrix(const dmaconn_result *r)
{
	return r && r->n > 0 ? r->matrix : NULL;
}

int dmaconn_result_get(const dmaconn_result *r, int i, int j)
{
	if (!r || i < 0 || j < 0 || i >= r->n || j >= r->n)
		return 0;
	return r->matrix[(size_t)i * (size_t)r->n + (size_t)j];
}

int dmaconn_result_warning_count(const dmaconn_result *r)
{
	return r ? r->warnings.count : 0;
}

const char *dmaconn_result_warning(const dmaconn_result *r, int k)
{
	return r ? dc_strings_at(&r->warnings, k) : NULL;
}

int dmaconn_result_unavailable(const dmaconn_result *r)
{
	return r ? r->unavailable : 0;
}

static const struct dc_props *device_props(const dmaconn_result *r, int i)
{
	return r && i >= 0 && i < r->n ? &r->devices[i] : NULL;
}

int dmaconn_result_device_property_count(const dmaconn_result *r, int i)
{
	return dc_props_count(device_props(r, i));
}

const char *dmaconn_result_device_property_key(const dmaconn_result *r, int i, int k)
{
	return dc_props_key_at(device_props(r, i), k);
}

const char *dmaconn_result_device_property_value(const dmaconn_result *r, int i, int k)
{
	return dc_props_value_at(device_props(r, i), k);
}

const char *dmaconn_result_device_get(const dmaconn_result *r, int i, const char *key)
{
	return dc_props_get(device_props(r, i), key);
}

/* The pair's index in r->pairs, or SIZE_MAX out of range. */
static size_t pair_at(const dmaconn_result *r, int i, int j)
{
	if (!r || i < 0 || j < 0 || i >= r->n || j >= r->n)
		return SIZE_MAX;
	return (size_t)i * (size_t)r->n + (size_t)j;
}

int dmaconn_result_pair_property_count(const dmaconn_result *r, int i, int j)
{
	size_t k = pair_at(r, i, j);
	return k == SIZE_MAX ? 0 : dc_pairs_count(&r->pairs, k);
}

const char *dmaconn_result_pair_property_key(const dmaconn_result *r, int i, int j, int k)
{
	size_t at = pair_at(r, i, j);
	return at == SIZE_MAX ? NULL : dc_pairs_key(&r->pairs, at, k);
}

const char *dmaconn_result_pair_property_value(const dmaconn_result *r, int i, int j, int k)
{
	size_t at = pair_at(r, i, j);
	return at == SIZE_MAX ? NULL : dc_pairs_value(&r->pairs, at, k);
}

const char *dmaconn_result_pair_get(const dmaconn_result *r, int i, int j, const char *key)
{
	size_t at = pair_at(r, i, j);
	return at == SIZE_MAX ? NULL : dc_pairs_get(&r->pairs, at, key);
}

_Static_assert(sizeof(unsigned int) == sizeof(uint32_t), "pair list identifiers are 32-bit");

int dmaconn_result_pair_lists(const dmaconn_result *r, unsigned int *out, size_t count)
{
	if (!r || !out)
		return dc_fail(DMACONN_EINVAL, "dmaconn_result_pair_lists: NULL argument");
	size_t nn = (size_t)r->n * (size_t)r->n;
	if (count < nn)
		return dc_fail(DMACONN_ERANGE, "dmaconn_result_pair_lists: %zu entries for %zu pairs", count, nn);
	if (r->pairs.at)
		memcpy(out, r->pairs.at, nn * sizeof(*out));
	else
		memset(out, 0, nn * sizeof(*out));
	return dc_ok();
}

/* ----------------------------------------------------------------- builder */

int dmaconn_builder_set_size(dmaconn_builder *b, int n)
{
	if (!b || b->sized || n < 0 || n > 65536)
		return dc_fail(DMACONN_EINVAL, "dmaconn_builder_set_size: size %d refused", n);
	dmaconn_result *r = b->r;
	if (n > 0) {
		r->matrix = calloc((size_t)n * (size_t)n, sizeof(int));
		r->devices = calloc((size_t)n, sizeof(*r->devices));
		if (!r->matrix || !r->devices) {
			free(r->matrix);
			free(r->devices);
			r->matrix = NULL;
			r->devices = NULL;
			b->oom = 1;
			return dc_fail(DMACONN_ENOMEM, "out of memory for %d devices", n);
		}
	}
	r->n = n;
	dc_pairs_init(&r->pairs, (size_t)n * (size_t)n);
	b->sized = 1;
	return DMACONN_OK;
}

int dmaconn_builder_set(dmaconn_builder *b, int i, int j, int value)
{
	if (!b || i < 0 || j < 0 || i >= b->r->n || j >= b->r->n)
		return dc_fail(DMACONN_ERANGE, "matrix index (%d, %d) out of range", i, j);
	if (i == j && value != 0)
		return dc_fail(DMACONN_EINVAL, "the diagonal of a connectivity matrix is 0");
	if (value < 0)
		return dc_fail(DMACONN_EINVAL, "connectivity values are not negative");
	b->r->matrix[(size_t)i * (size_t)b->r->n + (size_t)j] = value;
	return DMACONN_OK;
}

/*
 * Text a detector hands over may come from sysfs or a vendor library and hold
 * anything; results and warnings hold valid UTF-8 without control
 * characters (no terminal escape sequences): an invalid byte, a C0/C1
 * control or a bidirectional control (which reorders what a terminal shows)
 * becomes U+FFFD, a tab or line break (U+2028 and U+2029 too) a space.
 * Returns NULL when s is fine as it is, else a malloc'd cleaned copy (*oom
 * set when that fails).
 */
static int text_reorders(unsigned cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

char *dc_text_clean(const char *s, int *oom)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p >= 0x20 && *p < 0x7f)
		p++;
	if (!*p)
		return NULL; /* printable ASCII: the common case */
	size_t len = strlen(s);
	char *out = malloc(3 * len + 1), *o = out;
	if (!out) {
		*oom = 1;
		return NULL;
	}
	int changed = 0;
	for (p = (const unsigned char *)s; *p;) {
		unsigned c = *p;
		int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
				      : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		unsigned cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		for (int k = 1; k < n; k++) {
			if ((p[k] & 0xc0) != 0x80) {
				n = 0;
				break;
			}
			cp = cp << 6 | (p[k] & 0x3fu);
		}
		/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
		if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
			n = 0;
		if ((n == 1 && (c == '\t' || c == '\n' || c == '\r')) ||
		    (n == 3 && (cp == 0x2028 || cp == 0x2029))) {
			*o++ = ' ';
			changed = 1;
		} else if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || text_reorders(cp)) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			changed = 1;
		} else {
			memcpy(o, p, (size_t)n);
			o += n;
		}
		p += n ? n : 1;
	}
	*o = '\0';
	if (!changed) {
		free(out);
		return NULL;
	}
	return out;
}

int dmaconn_builder_set_device_property(dmaconn_builder *b, int i, const char *key,
					const char *value)
{
	if (!b || !key || !value)
		return dc_fail(DMACONN_EINVAL, "dmaconn_builder_set_device_property: NULL argument");
	if (i < 0 || i >= b->r->n)
		return dc_fail(DMACONN_ERANGE, "device %d out of range", i);
	int oom = 0;
	char *k = dc_text_clean(key, &oom), *v = oom ? NULL : dc_text_clean(value, &oom);
	if (oom || dc_props_set(&b->r->devices[i], k ? k : key, v ? v : value) != 0) {
		free(k);
		free(v);
		b->oom = 1;
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	free(k);
	free(v);
	return DMACONN_OK;
}

int dmaconn_builder_set_pair_property(dmaconn_builder *b, int i, int j, const char *key,
				      const char *value)
{
	if (!b || !key || !value)
		return dc_fail(DMACONN_EINVAL, "dmaconn_builder_set_pair_property: NULL argument");
	dmaconn_result *r = b->r;
	if (i < 0 || j < 0 || i >= r->n || j >= r->n || i == j)
		return dc_fail(DMACONN_ERANGE, "pair (%d, %d) out of range", i, j);
	int oom = 0;
	char *k = dc_text_clean(key, &oom), *v = oom ? NULL : dc_text_clean(value, &oom);
	if (oom)
		goto oom;
	if (dc_pairs_set(&r->pairs, (size_t)i * (size_t)r->n + (size_t)j, k ? k : key, v ? v : value) != 0)
		goto oom;
	free(k);
	free(v);
	return DMACONN_OK;
oom:
	free(k);
	free(v);
	b->oom = 1;
	return dc_fail(DMACONN_ENOMEM, "out of memory");
}

const char *dc_builder_intern(dmaconn_builder *b, const char *text)
{
	int oom = 0;
	char *clean = dc_text_clean(text, &oom);
	const char *s = oom ? NULL : dc_pairs_intern(&b->r->pairs, clean ? clean : text);
	free(clean);
	if (!s) {
		b->oom = 1;
		dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	return s;
}

int dc_builder_set_pair_interned(dmaconn_builder *b, int i, int j, const char *ikey, const char *ivalue)
{
	dmaconn_result *r = b->r;
	if (i < 0 || j < 0 || i >= r->n || j >= r->n || i == j)
		return dc_fail(DMACONN_ERANGE, "pair (%d, %d) out of range", i, j);
	if (dc_pairs_set_interned(&r->pairs, (size_t)i * (size_t)r->n + (size_t)j, ikey, ivalue) != 0) {
		b->oom = 1;
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	return DMACONN_OK;
}

int dc_builder_set_pair_list(dmaconn_builder *b, int i, int j, const char *const *ikeys,
			     const char *const *ivalues, int count)
{
	dmaconn_result *r = b->r;
	if (i < 0 || j < 0 || i >= r->n || j >= r->n || i == j)
		return dc_fail(DMACONN_ERANGE, "pair (%d, %d) out of range", i, j);
	if (dc_pairs_set_list(&r->pairs, (size_t)i * (size_t)r->n + (size_t)j, ikeys, ivalues, count) != 0) {
		b->oom = 1;
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	return DMACONN_OK;
}

/*
 * Warnings by cause: a detector that warns once per pair (4,096 devices make
 * 16.7 M pairs) must not make as many warnings.  The cause of a warning is
 * its format string (the same sentence with other numbers), or the message
 * itself for "%s" and dmaconn_builder_add_warning().  The first message of a
 * cause is kept; when the detector returns it gains "(and N more like it)",
 * and only then do the warnings go to the sink, each cause once.
 */
struct dc_warn_meta {
	long long count;
	int emit;
};

struct dc_warn_table {
	char **keys; /* open addressing, cap a power of 2 */
	int *index;  /* the cause's warning in the result */
	size_t cap, used;
	struct dc_warn_meta *meta; /* per warning of the result */
	int meta_cap;
};

static size_t dc_warn_hash(const char *key)
{
	size_t h = 1469598103934665603u;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 1099511628211u;
	return h;
}

static int dc_warn_grow(struct dc_warn_table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 16;
	char **keys = calloc(ncap, sizeof(*keys));
	int *index = calloc(ncap, sizeof(*index));
	if (!keys || !index) {
		free(keys);
		free(index);
		return -1;
	}
	for (size_t k = 0; k < t->cap; k++) {
		if (!t->keys[k])
			continue;
		size_t h = (dc_warn_hash(t->keys[k] + 1) ^ (size_t)t->keys[k][0]) & (ncap - 1);
		while (keys[h])
			h = (h + 1) & (ncap - 1);
		keys[h] = t->keys[k];
		index[h] = t->index[k];
	}
	free(t->keys);
	free(t->index);
	t->keys = keys;
	t->index = index;
	t->cap = ncap;
	return 0;
}

static void dc_warn_table_free(struct dc_warn_table *t)
{
	for (size_t k = 0; t && k < t->cap; k++)
		free(t->keys[k]);
	if (t) {
		free(t->keys);
		free(t->index);
		free(t->meta);
	}
	free(t);
}

/* kind: 'f' when key is a format string, 'm' when it is the message.  With
 * message NULL, only counts a cause already seen: 1 when there is none. */
static int dc_warn_record(dmaconn_builder *b, char kind, const char *key, const char *message,
			  int emit)
{
	struct dc_warn_table *t = b->warn;
	struct dc_strings *w = &b->r->warnings;
	if (!message && (!t || !t->used))
		return 1;
	if (!t && !(t = b->warn = calloc(1, sizeof(*t))))
		goto oom;
	if (message && (t->used + 1) * 2 > t->cap && dc_warn_grow(t) != 0)
		goto oom;
	size_t h = (dc_warn_hash(key) ^ (size_t)kind) & (t->cap - 1);
	for (; t->keys[h]; h = (h + 1) & (t->cap - 1)) {
		if (t->keys[h][0] == kind && !strcmp(t->keys[h] + 1, key)) {
			t->meta[t->index[h]].count++;
			return DMACONN_OK;
		}
	}
	if (!message)
		return 1;
	if (dc_grow(&t->meta, w->count, &t->meta_cap, sizeof(*t->meta), 8) != 0)
		goto oom;
	int oom = 0;
	char *clean = dc_text_clean(message, &oom);
	size_t klen = strlen(key);
	char *k = oom ? NULL : malloc(klen + 2);
	if (k) {
		k[0] = kind;
		memcpy(k + 1, key, klen + 1);
	}
	if (!k || dc_strings_push(w, clean ? clean : message) != 0) {
		free(clean);
		free(k);
		goto oom;
	}
	free(clean);
	t->keys[h] = k;
	t->index[h] = w->count - 1;
	t->used++;
	t->meta[w->count - 1] = (struct dc_warn_meta){ 1, emit };
	return DMACONN_OK;
oom:
	b->oom = 1;
	return dc_fail(DMACONN_ENOMEM, "out of memory");
}

/* The detector has returned: each cause's warning says how often it came. */
static void dc_warn_finish(dmaconn_builder *b)
{
	struct dc_warn_table *t = b->warn;
	struct dc_strings *w = &b->r->warnings;
	for (int k = 0; t && k < w->count; k++) {
		if (t->meta[k].count < 2)
			continue;
		static const char more[] = " (and %lld more like it)";
		size_t len = strlen(w->items[k]) + sizeof(more) + 24;
		char *grown = malloc(len);
		if (!grown) {
			b->oom = 1;
			return;
		}
		snprintf(grown, len, "%s (and %lld more like it)", w->items[k], t->meta[k].count - 1);
		free(w->items[k]);
		w->items[k] = grown;
	}
}

/* Sends the warnings of a finished detection to the sink, each cause once;
 * the handler may call dmaconn, so the thread's last error is kept. */
static void dc_warn_emit_all(dmaconn_builder *b)
{
	struct dc_warn_table *t = b->warn;
	if (!t || b->quiet || !b->r)
		return;
	char saved[sizeof(last_error)];
	memcpy(saved, last_error, sizeof(saved));
	for (int k = 0; k < b->r->warnings.count; k++)
		if (t->meta[k].emit)
			dc_warning_emit(b->r->warnings.items[k]);
	memcpy(last_error, saved, sizeof(saved));
}

int dmaconn_builder_warn(dmaconn_builder *b, const char *fmt, ...)
{
	if (!b || !fmt)
		return dc_fail(DMACONN_EINVAL, "dmaconn_builder_warn: NULL argument");
	int by_format = strcmp(fmt, "%s") != 0;
	if (by_format && dc_warn_record(b, 'f', fmt, NULL, 1) == DMACONN_OK)
		return DMACONN_OK; /* a cause seen before: counted, not formatted */
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dc_warn_record(b, by_format ? 'f' : 'm', by_format ? fmt : msg, msg, 1);
}

int dmaconn_builder_add_warning(dmaconn_builder *b, const char *message)
{
	if (!b || !message)
		return dc_fail(DMACONN_EINVAL, "dmaconn_builder_add_warning: NULL argument");
	return dc_warn_record(b, 'm', message, message, 0);
}

int dmaconn_builder_fail(dmaconn_builder *b, int err, const char *fmt, ...)
{
	(void)b;
	if (err >= 0)
		err = DMACONN_EDETECTOR;
	if (!fmt)
		return dc_fail(err, "the detector failed");
	va_list ap;
	va_start(ap, fmt);
	err = fail_v(err, fmt, ap);
	va_end(ap);
	return err;
}

/* ---------------------------------------------------------------- registry */

/*
 * One entry per registered pair, holding its cached result, in registration
 * order.  Unregistering unlinks the entry and frees it, unless a thread is
 * running its detector: that thread frees it when the detector returns.
 * Threads waiting for a pair look it up again after every wake-up, so they
 * never hold an entry across a wait.
 */
struct entry {
	struct entry *next, *prev;
	dmaconn_device_type type;
	const char *connection; /* interned: see registry_name() */
	dmaconn_detector_fn fn;
	void *user_data;
	int builtin;
	int removed; /* unlinked while running: the runner frees it */
	int running;
	pthread_t runner;
	dmaconn_result *cached;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cond = PTHREAD_COND_INITIALIZER;
static struct entry *entries, *entries_tail; /* registration order */
static int builtins_registered;               /* under reg_lock */

/*
 * dmaconn_record() wraps the vendor libraries and unloads and reloads them
 * around its own detections (dc_record_enter ... dc_record_leave): while it
 * records, other threads' detections wait (reg_cond), and it starts once
 * those under way have ended.  A detection nested in a running detector
 * goes on: it is part of one that the recording waits for.  Under reg_lock.
 */
static int detecting;   /* detectors running, every thread */
static int recording;   /* a dmaconn_record() under way on recording_thread */
static pthread_t recording_thread;

static int record_holds_back(void)
{
	return recording && !in_detection && !pthread_equal(recording_thread, pthread_self());
}

/* A detection outside the registry (dmaconn_result_build) begins (held
 * back by a recording) or ends, counted for dmaconn_record(). */
static void counted_detection(int begin)
{
	pthread_mutex_lock(&reg_lock);
	while (begin && record_holds_back())
		pthread_cond_wait(&reg_cond, &reg_lock);
	detecting += begin ? 1 : -1;
	if (!begin)
		pthread_cond_broadcast(&reg_cond);
	pthread_mutex_unlock(&reg_lock);
}

/*
 * Connection names, each kept once until dmaconn_shutdown(): the strings
 * dmaconn_list_detectors() hands out stay valid however often their pair is
 * unregistered and registered again, and cycles of one name cost nothing.
 * reg_lock held.
 */
static char **reg_names; /* open addressing, cap a power of 2 */
static size_t reg_names_cap, reg_names_used;

static const char *registry_name(const char *name)
{
	if ((reg_names_used + 1) * 2 > reg_names_cap) {
		size_t ncap = reg_names_cap ? reg_names_cap * 2 : 16;
		char **grown = calloc(ncap, sizeof(*grown));
		if (!grown)
			return NULL;
		for (size_t k = 0; k < reg_names_cap; k++) {
			if (!reg_names[k])
				continue;
			size_t h = dc_warn_hash(reg_names[k]) & (ncap - 1);
			while (grown[h])
				h = (h + 1) & (ncap - 1);
			grown[h] = reg_names[k];
		}
		free(reg_names);
		reg_names = grown;
		reg_names_cap = ncap;
	}
	size_t h = dc_warn_hash(name) & (reg_names_cap - 1);
	for (; reg_names[h]; h = (h + 1) & (reg_names_cap - 1))
		if (!strcmp(reg_names[h], name))
			return reg_names[h];
	if (!(reg_names[h] = strdup(name)))
		return NULL;
	reg_names_used++;
	return reg_names[h];
}

static void registry_names_free(void)
{
	for (size_t k = 0; k < reg_names_cap; k++)
		free(reg_names[k]);
	free(reg_names);
	reg_names = NULL;
	reg_names_cap = reg_names_used = 0;
}

static struct entry *entry_new(dmaconn_device_type type, const char *connection,
			       dmaconn_detector_fn fn, void *user_data, int builtin)
{
	struct entry *e = calloc(1, sizeof(*e));
	if (!e || !(e->connection = registry_name(connection))) {
		free(e);
		return NULL;
	}
	e->type = type;
	e->fn = fn;
	e->user_data = user_data;
	e->builtin = builtin;
	return e;
}

static void entry_free(struct entry *e)
{
	dmaconn_result_release(e->cached);
	free(e);
}

/* reg_lock held. */
static void entry_append(struct entry *e)
{
	e->prev = entries_tail;
	e->next = NULL;
	if (entries_tail)
		entries_tail->next = e;
	else
		entries = e;
	entries_tail = e;
}

/* Takes e out of the list; frees it unless its detector runs.  reg_lock held;
 * returns its cached result for the caller to release after unlocking. */
static dmaconn_result *entry_remove(struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		entries = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		entries_tail = e->prev;
	e->next = e->prev = NULL;
	dmaconn_result *cached = e->cached;
	e->cached = NULL;
	if (e->running)
		e->removed = 1;
	else
		entry_free(e);
	return cached;
}

/* Registers the built-in detectors on first use; reg_lock held. */
static int ensure_builtins(void)
{
	if (builtins_registered)
		return 0;
	for (const struct dc_backend *const *be = dc_backends; *be; be++) {
		for (const struct dc_connection *c = NULL; (c = dc_connection_next(*be, c)) != NULL;) {
			struct entry *e = entry_new((*be)->type, c->name, (*be)->detect, NULL, 1);
			if (!e)
				return -1;
			entry_append(e);
		}
	}
	builtins_registered = 1;
	return 0;
}

static struct entry *find(dmaconn_device_type type, const char *connection)
{
	for (struct entry *e = entries; e; e = e->next)
		if (e->type == type && !strcmp(e->connection, connection))
			return e;
	return NULL;
}

static int check_pair(dmaconn_device_type type, const char *connection)
{
	if (!dmaconn_device_type_name(type))
		return dc_fail(DMACONN_EINVAL, "unknown device type %d", (int)type);
	if (!connection || !*connection)
		return dc_fail(DMACONN_EINVAL, "empty connection type");
	return DMACONN_OK;
}

int dmaconn_register_detector(dmaconn_device_type type, const char *connection,
			      dmaconn_detector_fn fn, void *user_data)
{
	int rc = check_pair(type, connection);
	if (rc)
		return rc;
	if (!fn)
		return dc_fail(DMACONN_EINVAL, "NULL detector function");
	pthread_mutex_lock(&reg_lock);
	if (ensure_builtins() != 0) {
		rc = dc_fail(DMACONN_ENOMEM, "out of memory");
	} else if (find(type, connection)) {
		rc = dc_fail(DMACONN_EEXIST, "a DMA connectivity detector for %s over %s is already registered",
			     dmaconn_device_type_name(type), connection);
	} else {
		struct entry *e = entry_new(type, connection, fn, user_data, 0);
		if (e)
			entry_append(e);
		rc = e ? dc_ok() : dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

int dmaconn_unregister_detector(dmaconn_device_type type, const char *connection)
{
	int rc = check_pair(type, connection);
	if (rc)
		return rc;
	dmaconn_result *old = NULL;
	pthread_mutex_lock(&reg_lock);
	struct entry *e = find(type, connection);
	if (!e || e->builtin) {
		rc = dc_fail(DMACONN_ENODETECTOR, "no run-time DMA connectivity detector for %s over %s",
			     dmaconn_device_type_name(type), connection);
	} else {
		old = entry_remove(e);
		/* Threads waiting for its detection look again and find none. */
		pthread_cond_broadcast(&reg_cond);
		rc = dc_ok();
	}
	pthread_mutex_unlock(&reg_lock);
	dmaconn_result_release(old);
	return rc;
}

int dmaconn_list_detectors(dmaconn_device_type *types, const char **connections, int max)
{
	int n = 0;
	pthread_mutex_lock(&reg_lock);
	ensure_builtins();
	for (struct entry *e = entries; e; e = e->next) {
		if (n < max) {
			if (types)
				types[n] = e->type;
			if (connections)
				connections[n] = e->connection;
		}
		n++;
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}

/* ---------------------------------------------------------------- detection */

/* How a detection runs: cached (dmaconn_detect), fresh and cached
 * (dmaconn_detect_fresh), or over the whole node, quiet and uncached
 * (dmaconn_detect_node). */
enum { DETECT_CACHED, DETECT_FRESH, DETECT_NODE, DETECT_PASSIVE, DETECT_RECORD, DETECT_RECORD_ENV };

int dc_detect_passive(void)
{
	return passive;
}

void dc_builder_provisional(dmaconn_builder *b)
{
	b->provisional = 1;
}

void dc_builder_unavailable(dmaconn_builder *b)
{
	b->r->unavailable = 1;
}

/* Runs fn into a new result b->r (NULL when that cannot be allocated); the
 * caller hands the warnings out and frees the builder with detect_end(). */
static int run_detector(dmaconn_builder *b, dmaconn_detector_fn fn, void *user_data,
			dmaconn_device_type type, const char *connection, int mode)
{
	memset(b, 0, sizeof(*b));
	dmaconn_result *r = calloc(1, sizeof(*r));
	if (!r || !(r->connection = strdup(connection))) {
		free(r);
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	atomic_init(&r->refs, 1);
	r->type = type;
	b->r = r;
	int node = mode == DETECT_NODE || mode == DETECT_RECORD;
	b->quiet = node || mode == DETECT_RECORD_ENV;
	last_error[0] = '\0';
	/* A detection nested in a detector runs as its own mode says, and
	 * gives the outer one back its own afterwards. */
	int outer_scope = dc_set_node_scope(node);
	int outer_fresh = dc_set_rediscover(mode == DETECT_FRESH);
	dc_config_begin();
	in_detection++;
	int outer_passive = passive;
	passive = mode == DETECT_PASSIVE || mode == DETECT_RECORD || mode == DETECT_RECORD_ENV;
	int rc = dc_config()->oom ? dc_fail(DMACONN_ENOMEM, "out of memory") : fn(b, user_data);
	passive = outer_passive;
	in_detection--;
	dc_config_end();
	dc_set_rediscover(outer_fresh);
	dc_set_node_scope(outer_scope);
	dc_warn_finish(b);
	if (rc == DMACONN_OK && b->oom)
		rc = dc_fail(DMACONN_ENOMEM, "out of memory while detecting %s over %s",
			     dmaconn_device_type_name(type), connection);
	if (rc != DMACONN_OK && rc != DMACONN_EREPLAY && rc != DMACONN_ENOMEM) {
		if (!last_error[0])
			dc_fail(rc, "detector for %s over %s failed (%d)", dmaconn_device_type_name(type),
				connection, rc);
		rc = DMACONN_EDETECTOR;
	}
	return rc;
}

/* The detection is over and its entry released: the warnings go to the sink
 * (whose handler may call dmaconn), then the result to the caller. */
static int detect_end(dmaconn_builder *b, int rc, dmaconn_result **out)
{
	dc_warn_emit_all(b);
	dc_warn_table_free(b->warn);
	b->warn = NULL;
	if (rc != DMACONN_OK) {
		if (b->r)
			result_free(b->r);
		return rc;
	}
	*out = b->r;
	return dc_ok();
}

static int detect(dmaconn_device_type type, const char *connection, int mode,
		  dmaconn_result **out)
{
	if (!out)
		return dc_fail(DMACONN_EINVAL, "NULL result pointer");
	*out = NULL;
	int rc = check_pair(type, connection);
	if (rc)
		return rc;

	pthread_mutex_lock(&reg_lock);
	if (ensure_builtins() != 0) {
		pthread_mutex_unlock(&reg_lock);
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	struct entry *e;
	for (;;) {
		e = find(type, connection);
		if (!e) {
			pthread_mutex_unlock(&reg_lock);
			return dc_fail(DMACONN_ENODETECTOR, "no DMA connectivity detector for %s over %s",
				       dmaconn_device_type_name(type), connection);
		}
		if ((mode == DETECT_CACHED || mode == DETECT_PASSIVE) && e->cached) {
			*out = dmaconn_result_retain(e->cached);
			pthread_mutex_unlock(&reg_lock);
			return dc_ok();
		}
		if (!e->running && !record_holds_back())
			break;
		if (e->running && pthread_equal(e->runner, pthread_self())) {
			pthread_mutex_unlock(&reg_lock);
			return dc_fail(DMACONN_EBUSY, "detection of %s over %s is already running on this thread",
				       dmaconn_device_type_name(type), connection);
		}
		/* Another thread is detecting this pair (its result serves us too,
		 * unless we asked for a fresh one), or recording. */
		pthread_cond_wait(&reg_cond, &reg_lock);
	}
	e->running = 1;
	e->runner = pthread_self();
	detecting++;
	dmaconn_detector_fn fn = e->fn;
	void *user_data = e->user_data;
	pthread_mutex_unlock(&reg_lock);

	dmaconn_builder b;
	rc = run_detector(&b, fn, user_data, type, connection, mode);

	dmaconn_result *old = NULL;
	pthread_mutex_lock(&reg_lock);
	e->running = 0;
	detecting--;
	if (e->removed) {
		entry_free(e); /* unregistered while its detector ran */
	} else if (rc == DMACONN_OK && mode != DETECT_NODE && mode != DETECT_RECORD && mode != DETECT_RECORD_ENV &&
		   !b.provisional) {
		old = e->cached;
		e->cached = dmaconn_result_retain(b.r);
	}
	pthread_cond_broadcast(&reg_cond);
	pthread_mutex_unlock(&reg_lock);
	dmaconn_result_release(old);
	return detect_end(&b, rc, out);
}

int dmaconn_detect(dmaconn_device_type type, const char *connection, dmaconn_result **out)
{
	return detect(type, connection, DETECT_CACHED, out);
}

int dmaconn_detect_passive(dmaconn_device_type type, const char *connection,
			   dmaconn_result **out)
{
	return detect(type, connection, DETECT_PASSIVE, out);
}

int dmaconn_detect_fresh(dmaconn_device_type type, const char *connection, dmaconn_result **out)
{
	return detect(type, connection, DETECT_FRESH, out);
}

int dmaconn_detect_node(dmaconn_device_type type, const char *connection, dmaconn_result **out)
{
	return detect(type, connection, DETECT_NODE, out);
}

int dmaconn_result_build(dmaconn_device_type type, const char *connection, dmaconn_detector_fn fn,
			 void *user_data, dmaconn_result **out)
{
	if (!out)
		return dc_fail(DMACONN_EINVAL, "NULL result pointer");
	*out = NULL;
	int rc = check_pair(type, connection);
	if (rc)
		return rc;
	if (!fn)
		return dc_fail(DMACONN_EINVAL, "NULL detector function");
	counted_detection(1);
	dmaconn_builder b;
	rc = run_detector(&b, fn, user_data, type, connection, DETECT_FRESH);
	counted_detection(0);
	return detect_end(&b, rc, out);
}

void dmaconn_clear_cache(void)
{
	pthread_mutex_lock(&reg_lock);
	for (struct entry *e = entries; e; e = e->next) {
		dmaconn_result_release(e->cached);
		e->cached = NULL;
	}
	pthread_mutex_unlock(&reg_lock);
	for (const struct dc_backend *const *be = dc_backends; *be; be++)
		if ((*be)->forget)
			(*be)->forget();
}

void dc_fork_locks(int phase, pthread_mutex_t *const *locks, int n)
{
	if (phase == DC_FORK_PREPARE)
		for (int k = 0; k < n; k++)
			pthread_mutex_lock(locks[k]);
	else
		while (n-- > 0)
			pthread_mutex_unlock(locks[n]);
}

/* The backends as before their first detection: their libraries reopen. */
static void backends_reset(void)
{
	dmaconn_clear_cache();
	for (const struct dc_backend *const *be = dc_backends; *be; be++)
		(*be)->shutdown();
}

int dc_record_enter(void)
{
	if (in_detection || in_handler)
		return dc_fail(DMACONN_EBUSY, "dmaconn_record() inside a %s", in_detection ? "detector" : "warning handler");
	pthread_mutex_lock(&reg_lock);
	while (recording)
		pthread_cond_wait(&reg_cond, &reg_lock);
	recording = 1;
	recording_thread = pthread_self();
	while (detecting > 0)
		pthread_cond_wait(&reg_cond, &reg_lock);
	pthread_mutex_unlock(&reg_lock);
	return DMACONN_OK;
}

void dc_record_leave(void)
{
	pthread_mutex_lock(&reg_lock);
	recording = 0;
	pthread_cond_broadcast(&reg_cond);
	pthread_mutex_unlock(&reg_lock);
}

int dc_record_run(void)
{
	if (in_detection || in_handler)
		return dc_fail(DMACONN_EBUSY, "dmaconn_record() inside a %s", in_detection ? "detector" : "warning handler");
	int n = dmaconn_list_detectors(NULL, NULL, 0);
	dmaconn_device_type *types = n > 0 ? calloc((size_t)n, sizeof(*types)) : NULL;
	const char **conns = n > 0 ? calloc((size_t)n, sizeof(*conns)) : NULL;
	char **owned = n > 0 ? calloc((size_t)n, sizeof(*owned)) : NULL;
	int rc = n < 0 ? n : DMACONN_OK;
	if (n > 0 && (!types || !conns || !owned))
		rc = dc_fail(DMACONN_ENOMEM, "out of memory");
	if (rc == DMACONN_OK && n > 0) {
		n = dmaconn_list_detectors(types, conns, n);
		for (int k = 0; k < n; k++)
			owned[k] = strdup(conns[k]);
		backends_reset();
		/* Over the whole node, then as the environment (which the
		 * recording pins) shows it: a failure on a device it hides must
		 * not keep out what the detectors ask of those it shows. */
		for (int pass = 0; pass < 2; pass++)
			for (int k = 0; k < n; k++) {
				dmaconn_result *r = NULL;
				if (owned[k] && detect(types[k], owned[k], pass ? DETECT_RECORD_ENV : DETECT_RECORD, &r) ==
						       DMACONN_OK)
					dmaconn_result_release(r);
			}
		/* What dmaconn_placement_detect() reads besides (NICs, NUMA nodes). */
		for (const struct dc_backend *const *be = dc_backends; *be; be++) {
			dmaconn_placement *pl = NULL;
			if (dmaconn_placement_detect((*be)->type, &pl) == DMACONN_OK)
				dmaconn_placement_free(pl);
		}
		backends_reset();
		dc_ok();
	}
	for (int k = 0; owned && k < n; k++)
		free(owned[k]);
	free(owned);
	free(types);
	free(conns);
	return rc;
}

/* ------------------------------------------------------------------- fork */

/*
 * fork() while other threads detect: the child has only the thread that
 * forked, so a lock another thread held at that moment would stay locked
 * forever, and a detection another thread was running would never finish
 * (its waiters would wait forever).  Before fork, the library's locks are
 * taken in the order the code nests them -- the warning sink (whose handler
 * may call dmaconn), the registry, each backend of the table (whose
 * initialisation opens the replay component), the replay component -- so that fork happens between
 * critical sections; both sides release them, and the child forgets the
 * detections that ran on threads it does not have (and their waiters) and
 * the warning handler calls in flight there.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&sink_lock);
	pthread_mutex_lock(&reg_lock);
	for (const struct dc_backend *const *be = dc_backends; *be; be++)
		(*be)->atfork(DC_FORK_PREPARE);
	dc_replay_fork(DC_FORK_PREPARE);
	dc_verify_fork(DC_FORK_PREPARE);
}

static void fork_release(int phase)
{
	dc_verify_fork(phase);
	dc_replay_fork(phase);
	size_t n = 0;
	while (dc_backends[n])
		n++;
	while (n-- > 0)
		dc_backends[n]->atfork(phase);
	pthread_mutex_unlock(&reg_lock);
	pthread_mutex_unlock(&sink_lock);
}

static void fork_parent(void)
{
	fork_release(DC_FORK_PARENT);
}

static void fork_child(void)
{
	for (struct entry *e = entries; e; e = e->next)
		if (e->running && !pthread_equal(e->runner, pthread_self()))
			e->running = 0;
	/* This thread's detections are the child's only ones; a recording on
	 * another thread is gone. */
	detecting = in_detection;
	if (recording && !pthread_equal(recording_thread, pthread_self()))
		recording = 0;
	/* Threads that waited on it are gone, and glibc's broadcast would wait
	 * for them to wake: a fresh condition variable. */
	pthread_cond_init(&reg_cond, NULL);
	pthread_cond_init(&sink_idle, NULL);
	sink_current = sink_replaced = 0;
	fork_release(DC_FORK_CHILD);
}

__attribute__((constructor)) static void install_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void dmaconn_shutdown(void)
{
	/* From inside a detector or a warning handler, the caller's own stack
	 * still uses what shutdown would free. */
	if (in_detection || in_handler) {
		dc_fail(DMACONN_EBUSY, "dmaconn_shutdown() inside a %s does nothing",
			in_detection ? "detector" : "warning handler");
		return;
	}
	pthread_mutex_lock(&reg_lock);
	struct entry *e = entries, *idle = NULL;
	int running = 0;
	entries = entries_tail = NULL;
	builtins_registered = 0;
	while (e) {
		struct entry *next = e->next;
		e->next = e->prev = NULL;
		if (e->running) {
			e->removed = 1; /* its runner frees it */
			running = 1;
		} else {
			e->next = idle;
			idle = e;
		}
		e = next;
	}
	pthread_mutex_unlock(&reg_lock);
	while (idle) {
		struct entry *next = idle->next;
		entry_free(idle);
		idle = next;
	}
	pthread_mutex_lock(&reg_lock);
	if (!running)
		registry_names_free();
	pthread_mutex_unlock(&reg_lock);
	dmaconn_set_warning_handler(NULL, NULL);
	for (const struct dc_backend *const *be = dc_backends; *be; be++)
		(*be)->shutdown();
	dc_replay_shutdown();
}
