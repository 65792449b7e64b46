/* The public API: errors, results, the builder, the registry and its cache. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "backends/backend.h"

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

int dc_fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
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

/* ----------------------------------------------------------------- strings */

int dc_strings_push(struct dc_strings *s, const char *str)
{
	if (s->count == s->cap) {
		int ncap = s->cap ? s->cap * 2 : 4;
		char **grown = realloc(s->items, (size_t)ncap * sizeof(*grown));
		if (!grown)
			return -1;
		s->items = grown;
		s->cap = ncap;
	}
	char *copy = strdup(str);
	if (!copy)
		return -1;
	s->items[s->count++] = copy;
	return 0;
}

void dc_strings_clear(struct dc_strings *s)
{
	for (int i = 0; i < s->count; i++)
		free(s->items[i]);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

/* ---------------------------------------------------------------- warnings */

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static dmaconn_warning_fn sink_fn;
static void *sink_data;

void dmaconn_set_warning_handler(dmaconn_warning_fn fn, void *user_data)
{
	pthread_mutex_lock(&sink_lock);
	sink_fn = fn;
	sink_data = user_data;
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
	if (sink_fn)
		sink_fn(message, sink_data);
	else if (!quiet())
		fprintf(stderr, "dmaconn: warning: %s\n", message);
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
	if (p->count == p->cap) {
		int ncap = p->cap ? p->cap * 2 : 8;
		struct dc_prop *grown = realloc(p->items, (size_t)ncap * sizeof(*grown));
		if (!grown) {
			free(v);
			return -1;
		}
		p->items = grown;
		p->cap = ncap;
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

static void result_free(dmaconn_result *r)
{
	for (int i = 0; r->devices && i < r->n; i++)
		dc_props_clear(&r->devices[i]);
	for (size_t i = 0; r->pairs && i < (size_t)r->n * (size_t)r->n; i++)
		dc_props_clear(&r->pairs[i]);
	free(r->pairs);
	free(r->devices);
	free(r->matrix);
	free(r->connection);
	dc_strings_clear(&r->warnings);
	free(r);
}

dmaconn_result *dmaconn_result_retain(dmaconn_result *r)
{
	if (r)
		atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	return r;
}

void dmaconn_result_release(dmaconn_result *r)
{
	if (r && atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1)
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
	if (!r || k < 0 || k >= r->warnings.count)
		return NULL;
	return r->warnings.items[k];
}

static const struct dc_props *device_props(const dmaconn_result *r, int i)
{
	return r && i >= 0 && i < r->n ? &r->devices[i] : NULL;
}

int dmaconn_result_device_property_count(const dmaconn_result *r, int i)
{
	const struct dc_props *p = device_props(r, i);
	return p ? p->count : 0;
}

const char *dmaconn_result_device_property_key(const dmaconn_result *r, int i, int k)
{
	const struct dc_props *p = device_props(r, i);
	return p && k >= 0 && k < p->count ? p->items[k].key : NULL;
}

const char *dmaconn_result_device_property_value(const dmaconn_result *r, int i, int k)
{
	const struct dc_props *p = device_props(r, i);
	return p && k >= 0 && k < p->count ? p->items[k].value : NULL;
}

const char *dmaconn_result_device_get(const dmaconn_result *r, int i, const char *key)
{
	return dc_props_get(device_props(r, i), key);
}

static const struct dc_props *pair_props(const dmaconn_result *r, int i, int j)
{
	if (!r || !r->pairs || i < 0 || j < 0 || i >= r->n || j >= r->n)
		return NULL;
	return &r->pairs[(size_t)i * (size_t)r->n + (size_t)j];
}

int dmaconn_result_pair_property_count(const dmaconn_result *r, int i, int j)
{
	const struct dc_props *p = pair_props(r, i, j);
	return p ? p->count : 0;
}

const char *dmaconn_result_pair_property_key(const dmaconn_result *r, int i, int j, int k)
{
	const struct dc_props *p = pair_props(r, i, j);
	return p && k >= 0 && k < p->count ? p->items[k].key : NULL;
}

const char *dmaconn_result_pair_property_value(const dmaconn_result *r, int i, int j, int k)
{
	const struct dc_props *p = pair_props(r, i, j);
	return p && k >= 0 && k < p->count ? p->items[k].value : NULL;
}

const char *dmaconn_result_pair_get(const dmaconn_result *r, int i, int j, const char *key)
{
	return dc_props_get(pair_props(r, i, j), key);
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

int dmaconn_builder_set_device_property(dmaconn_builder *b, int i, const char *key,
					const char *value)
{
	if (!b || !key || !value)
		return dc_fail(DMACONN_EINVAL, "dmaconn_builder_set_device_property: NULL argument");
	if (i < 0 || i >= b->r->n)
		return dc_fail(DMACONN_ERANGE, "device %d out of range", i);
	if (dc_props_set(&b->r->devices[i], key, value) != 0) {
		b->oom = 1;
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
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
	if (!r->pairs && !(r->pairs = calloc((size_t)r->n * (size_t)r->n, sizeof(*r->pairs))))
		goto oom;
	if (dc_props_set(&r->pairs[(size_t)i * (size_t)r->n + (size_t)j], key, value) != 0)
		goto oom;
	return DMACONN_OK;
oom:
	b->oom = 1;
	return dc_fail(DMACONN_ENOMEM, "out of memory");
}

int dmaconn_builder_warn(dmaconn_builder *b, const char *fmt, ...)
{
	if (!b || !fmt)
		return dc_fail(DMACONN_EINVAL, "dmaconn_builder_warn: NULL argument");
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (dc_strings_push(&b->r->warnings, msg) != 0) {
		b->oom = 1;
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	if (!b->quiet)
		dc_warning_emit(msg);
	return DMACONN_OK;
}

int dmaconn_builder_add_warning(dmaconn_builder *b, const char *message)
{
	if (!b || !message)
		return dc_fail(DMACONN_EINVAL, "dmaconn_builder_add_warning: NULL argument");
	if (dc_strings_push(&b->r->warnings, message) != 0) {
		b->oom = 1;
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	return DMACONN_OK;
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
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

/* ---------------------------------------------------------------- registry */

/*
 * One entry per registered pair, holding its cached result.  Entries are
 * never freed before dmaconn_shutdown(), so a thread waiting on one never
 * sees it vanish; unregistering only marks it removed.
 */
struct entry {
	struct entry *next;
	dmaconn_device_type type;
	char *connection;
	dmaconn_detector_fn fn;
	void *user_data;
	int builtin;
	int removed;
	int running;
	pthread_t runner;
	dmaconn_result *cached;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cond = PTHREAD_COND_INITIALIZER;
static struct entry *entries;   /* registration order */
static int builtins_registered; /* under reg_lock */

static struct entry *entry_new(dmaconn_device_type type, const char *connection,
			       dmaconn_detector_fn fn, void *user_data, int builtin)
{
	struct entry *e = calloc(1, sizeof(*e));
	if (!e || !(e->connection = strdup(connection))) {
		free(e);
		return NULL;
	}
	e->type = type;
	e->fn = fn;
	e->user_data = user_data;
	e->builtin = builtin;
	return e;
}

static void entry_append(struct entry *e)
{
	struct entry **tail = &entries;
	while (*tail)
		tail = &(*tail)->next;
	*tail = e;
}

/* Registers the built-in detectors on first use; reg_lock held. */
static int ensure_builtins(void)
{
	if (builtins_registered)
		return 0;
	for (const struct dc_backend *const *be = dc_backends; *be; be++) {
		for (int v = 0; v < (*be)->nviews; v++) {
			struct entry *e = entry_new((*be)->type, (*be)->views[v].connection,
						    (*be)->views[v].detect, NULL, 1);
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
		if (!e->removed && e->type == type && !strcmp(e->connection, connection))
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
		e->removed = 1;
		old = e->cached;
		e->cached = NULL;
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
		if (e->removed)
			continue;
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
enum { DETECT_CACHED, DETECT_FRESH, DETECT_NODE };

static int run_detector(dmaconn_detector_fn fn, void *user_data, dmaconn_device_type type,
			const char *connection, int mode, dmaconn_result **out)
{
	dmaconn_result *r = calloc(1, sizeof(*r));
	if (!r || !(r->connection = strdup(connection))) {
		free(r);
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	}
	atomic_init(&r->refs, 1);
	r->type = type;
	dmaconn_builder b = { .r = r, .quiet = mode == DETECT_NODE };
	last_error[0] = '\0';
	if (mode == DETECT_NODE)
		dc_set_node_scope(1);
	dc_set_rediscover(mode == DETECT_FRESH);
	dc_config_begin();
	int rc = fn(&b, user_data);
	dc_config_end();
	dc_set_rediscover(0);
	if (mode == DETECT_NODE)
		dc_set_node_scope(0);
	if (rc == DMACONN_OK && b.oom)
		rc = dc_fail(DMACONN_ENOMEM, "out of memory while detecting %s over %s",
			     dmaconn_device_type_name(type), connection);
	if (rc != DMACONN_OK) {
		if (rc != DMACONN_EREPLAY && rc != DMACONN_ENOMEM) {
			if (!last_error[0])
				dc_fail(rc, "detector for %s over %s failed (%d)",
					dmaconn_device_type_name(type), connection, rc);
			rc = DMACONN_EDETECTOR;
		}
		result_free(r);
		return rc;
	}
	*out = r;
	return DMACONN_OK;
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
		if (mode == DETECT_CACHED && e->cached) {
			*out = dmaconn_result_retain(e->cached);
			pthread_mutex_unlock(&reg_lock);
			return dc_ok();
		}
		if (!e->running)
			break;
		if (pthread_equal(e->runner, pthread_self())) {
			pthread_mutex_unlock(&reg_lock);
			return dc_fail(DMACONN_EBUSY, "detection of %s over %s is already running on this thread",
				       dmaconn_device_type_name(type), connection);
		}
		/* Another thread is detecting this pair: its result serves us too,
		 * unless we asked for a fresh one. */
		pthread_cond_wait(&reg_cond, &reg_lock);
	}
	e->running = 1;
	e->runner = pthread_self();
	pthread_mutex_unlock(&reg_lock);

	dmaconn_result *r = NULL;
	rc = run_detector(e->fn, e->user_data, type, connection, mode, &r);

	dmaconn_result *old = NULL;
	pthread_mutex_lock(&reg_lock);
	e->running = 0;
	if (rc == DMACONN_OK && !e->removed && mode != DETECT_NODE) {
		old = e->cached;
		e->cached = dmaconn_result_retain(r);
	}
	pthread_cond_broadcast(&reg_cond);
	pthread_mutex_unlock(&reg_lock);
	dmaconn_result_release(old);
	if (rc != DMACONN_OK)
		return rc;
	*out = r;
	return dc_ok();
}

int dmaconn_detect(dmaconn_device_type type, const char *connection, dmaconn_result **out)
{
	return detect(type, connection, DETECT_CACHED, out);
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
	rc = run_detector(fn, user_data, type, connection, DETECT_FRESH, out);
	return rc == DMACONN_OK ? dc_ok() : rc;
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
 * detections that ran on threads it does not have (and their waiters).  A warning handler must
 * therefore not fork.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&sink_lock);
	pthread_mutex_lock(&reg_lock);
	for (const struct dc_backend *const *be = dc_backends; *be; be++)
		(*be)->atfork(DC_FORK_PREPARE);
	dc_replay_fork(DC_FORK_PREPARE);
}

static void fork_release(int phase)
{
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
	/* Threads that waited on it are gone, and glibc's broadcast would wait
	 * for them to wake: a fresh condition variable. */
	pthread_cond_init(&reg_cond, NULL);
	fork_release(DC_FORK_CHILD);
}

__attribute__((constructor)) static void install_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void dmaconn_shutdown(void)
{
	pthread_mutex_lock(&reg_lock);
	struct entry *e = entries;
	entries = NULL;
	builtins_registered = 0;
	pthread_mutex_unlock(&reg_lock);
	while (e) {
		struct entry *next = e->next;
		dmaconn_result_release(e->cached);
		free(e->connection);
		free(e);
		e = next;
	}
	dmaconn_set_warning_handler(NULL, NULL);
	for (const struct dc_backend *const *be = dc_backends; *be; be++)
		(*be)->shutdown();
	dc_replay_shutdown();
}
