/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A replay component for tests and benchmarks: it stands between libdmaconn
 * and libdmaconn_replay (DMACONN_REPLAY_LIBRARY names it) and wraps the NVML
 * function table the real component hands on with what no recording holds
 * (replay_runtime.c does the same for Level Zero):
 *
 *  - the file's injected failures, "nvml.faults" (docs/replay-format.md):
 *    a call fails with "error", narrowed by "device", "link" and "peer",
 *    after "skip" matching calls, "times" times;
 *  - the driver's cost, for bench/: every NVML call but nvmlErrorString
 *    sleeps DMACONN_REPLAY_LATENCY_US microseconds, and the first
 *    nvmlDeviceGetHandleByIndex_v2 of each device DMACONN_REPLAY_ATTACH_US
 *    more (the GPU attach).
 *
 * Everything else -- the answers, the file's validation -- is the real
 * component's, this library's dependency.
 */
#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_load.h"
#include "replay_abi.h"
#include "ze_load.h"

#define TEST_EXPORT __attribute__((visibility("default")))
#define MAX_FAULTS 4096
#define MAX_HANDLES 8192 /* a power of two, above the 4096 devices a file may list */

/* ------------------------------------------------------------ functions */

static const char *const fn_names[NVML_FN_COUNT] = NVML_FN_NAMES;

/* The arguments a fault may be narrowed by, per function: from the shape
 * of its arguments (nvml_functions.h). */
enum { ARG_DEV = 1, ARG_LINK = 2, ARG_PEER = 4 };
enum {
	ARGS_NONE = 0, ARGS_SYS = 0, ARGS_TEXT = 0, ARGS_INDEX = ARG_DEV, ARGS_DEV = ARG_DEV, ARGS_DEV_MIG = ARG_DEV,
	ARGS_QUERY = ARG_DEV,
	/* FIELDS: link, the scope of per-link fields, failing just those entries */
	ARGS_LINK = ARG_DEV | ARG_LINK, ARGS_FIELDS = ARG_DEV | ARG_LINK, ARGS_PEER = ARG_DEV | ARG_PEER,
};
static const unsigned char fn_args[NVML_FN_COUNT] = {
#define NVML_FN_ARGS_(name, ret, params, required, args) [NVML_FN_##name] = ARGS_##args,
	NVML_FUNCTIONS_ARGS(NVML_FN_ARGS_)
#undef NVML_FN_ARGS_
};

/* ----------------------------------------------------------- the faults */

struct fault {
	enum nvml_fn_id fn;
	long long device, link, peer; /* -1: any */
	nvmlReturn_t error;
	unsigned long long skip, times, seen;
	bool limited; /* "times" given */
};

static struct {
	const char *error; /* NULL once the faults were read */
	char err[1024];
	unsigned int n;
	struct fault *faults;
} f;

static pthread_once_t f_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t f_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 3, 4))) static int bad(const char *file, const char *path, const char *fmt, ...)
{
	int n = snprintf(f.err, sizeof(f.err), "%s: %s: ", file, path);
	if (n >= 0 && (size_t)n < sizeof(f.err)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(f.err + n, sizeof(f.err) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int get_index(const char *file, json_t *v, const char *path, long long max, long long *out)
{
	if (!json_is_integer(v))
		return bad(file, path, "expected an integer");
	long long x = (long long)json_integer_value(v);
	if (x < 0 || x > max)
		return bad(file, path, "%lld is out of range (0 to %lld)", x, max);
	*out = x;
	return 0;
}

/* o's member key, which must be a string (expected says what it holds);
 * NULL with the error set otherwise.  p receives the member's path. */
static const char *string_member(const char *file, json_t *o, const char *path, const char *key,
				 const char *expected, char *p, size_t plen)
{
	json_t *v = json_object_get(o, key);
	snprintf(p, plen, "%s.%s", path, key);
	if (!v)
		bad(file, path, "\"%s\" is required", key);
	else if (!json_is_string(v))
		bad(file, p, "expected %s", expected);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int read_fault(const char *file, json_t *o, const char *path, struct fault *x)
{
	static const struct {
		const char *key;
		int arg;
	} narrow[] = { { "device", ARG_DEV }, { "link", ARG_LINK }, { "peer", ARG_PEER } };
	char p[256];
	long long v = 0;
	if (!json_is_object(o))
		return bad(file, path, "expected an object");
	const char *fn = string_member(file, o, path, "function", "an NVML function name", p, sizeof(p));
	if (!fn)
		return -1;
	int id = 0;
	while (id < NVML_FN_COUNT && strcmp(fn_names[id], fn))
		id++;
	if (id == NVML_FN_COUNT)
		return bad(file, p, "\"%s\" is not an NVML function that dmaconn calls", fn);
	if (id == NVML_FN_nvmlErrorString)
		return bad(file, p, "nvmlErrorString returns no code to fail with");
	x->fn = (enum nvml_fn_id)id;
	long long *where[] = { &x->device, &x->link, &x->peer };
	for (int k = 0; k < 3; k++) {
		json_t *a = json_object_get(o, narrow[k].key);
		*where[k] = -1;
		snprintf(p, sizeof(p), "%s.%s", path, narrow[k].key);
		if (a && !(fn_args[id] & narrow[k].arg))
			return bad(file, p, "%s has no %s argument", fn_names[id], narrow[k].key);
		if (a && get_index(file, a, p, UINT_MAX, where[k]))
			return -1;
	}
	const char *e = string_member(file, o, path, "error", "an NVML return code name such as \"NOT_SUPPORTED\"", p,
				      sizeof(p));
	if (!e)
		return -1;
	if (nvml_return_parse(e, &x->error))
		return bad(file, p, "unknown NVML return code \"%s\"", e);
	if (x->error == NVML_SUCCESS)
		return bad(file, p, "a fault needs an error, not SUCCESS");
	json_t *skip = json_object_get(o, "skip"), *times = json_object_get(o, "times");
	snprintf(p, sizeof(p), "%s.skip", path);
	if (skip && get_index(file, skip, p, LLONG_MAX, &v))
		return -1;
	x->skip = skip ? (unsigned long long)v : 0;
	snprintf(p, sizeof(p), "%s.times", path);
	if (times && get_index(file, times, p, LLONG_MAX, &v))
		return -1;
	x->limited = times != NULL;
	x->times = times ? (unsigned long long)v : 0;
	return 0;
}

/* The file libdmaconn passed (dmaconn_set_replay_file), else "". */
static char use_file[4096];

/* The replayed file, for replay_runtime.c too. */
const char *stand_in_file(void);
const char *stand_in_file(void)
{
	return use_file[0] ? use_file : secure_getenv("DMACONN_REPLAY");
}

int stand_in_ze_table(const struct dmaconn_replay_ops *real_ops, struct ze_api *api, char *err, size_t errlen);

/* Reads "nvml.faults" of the replayed file, the one libdmaconn passed or
 * else the one DMACONN_REPLAY names (the real component has checked the
 * rest of it). */
static void load(void)
{
	const char *file = stand_in_file();
	json_t *root = file && *file ? json_load_file(file, 0, NULL) : NULL;
	json_t *list = json_object_get(json_object_get(root, "nvml"), "faults");
	if (list) {
		size_t n = json_array_size(list);
		if (!json_is_array(list))
			bad(file, "nvml.faults", "expected an array of faults");
		else if (n > MAX_FAULTS)
			bad(file, "nvml.faults", "%zu faults, more than the %d supported", n, MAX_FAULTS);
		else if (n && !(f.faults = calloc(n, sizeof(*f.faults))))
			bad(file, "nvml.faults", "out of memory");
		else
			for (f.n = 0; f.n < n; f.n++) {
				char p[64];
				snprintf(p, sizeof(p), "nvml.faults[%u]", f.n);
				if (read_fault(file, json_array_get(list, f.n), p, &f.faults[f.n]))
					break;
			}
		if (f.err[0])
			f.error = f.err;
	}
	json_decref(root);
}

__attribute__((destructor)) static void release(void)
{
	free(f.faults);
	f.faults = NULL;
	f.n = 0;
}

/*
 * Counts the call against every fault it matches and returns the error of
 * the first that is active, or NVML_SUCCESS.  link_only: the per-link
 * entries of nvmlDeviceGetFieldValues, which only faults naming a link
 * address.
 */
static nvmlReturn_t fault(enum nvml_fn_id fn, long long dev, long long link, long long peer, bool link_only)
{
	nvmlReturn_t rc = NVML_SUCCESS;
	if (!f.n)
		return rc;
	pthread_mutex_lock(&f_lock);
	for (unsigned int i = 0; i < f.n; i++) {
		struct fault *x = &f.faults[i];
		if (x->fn != fn || (link_only && x->link < 0) || (x->device >= 0 && x->device != dev) ||
		    (x->link >= 0 && x->link != link) || (x->peer >= 0 && x->peer != peer))
			continue;
		if (x->seen < ULLONG_MAX)
			x->seen++;
		if (rc == NVML_SUCCESS && x->seen > x->skip && (!x->limited || x->seen - x->skip <= x->times))
			rc = x->error;
	}
	pthread_mutex_unlock(&f_lock);
	return rc;
}

/* A fork while another thread counted leaves the child a fresh lock. */
static void fault_lock_child(void)
{
	pthread_mutex_init(&f_lock, NULL);
}

/* --------------------------------------------------------------- latency */

static long latency_us, attach_us;

static long latency_env(const char *name)
{
	const char *v = secure_getenv(name);
	char *end;
	errno = 0;
	long us = v && *v ? strtol(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || us < 0)
		return 0;
	return us > 10000000 ? 10000000 : us;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
	while (us > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

__attribute__((constructor)) static void setup(void)
{
	latency_us = latency_env("DMACONN_REPLAY_LATENCY_US");
	attach_us = latency_env("DMACONN_REPLAY_ATTACH_US");
	pthread_atfork(NULL, NULL, fault_lock_child);
}

/* ------------------------------------------------------- device handles */

/* Handles given out, with their indices: an open-addressed table. */
static pthread_mutex_t h_lock = PTHREAD_MUTEX_INITIALIZER;
static nvmlDevice_t h_keys[MAX_HANDLES];
static unsigned int h_index[MAX_HANDLES];
static bool h_attached[MAX_HANDLES];

static size_t h_slot(nvmlDevice_t h)
{
	size_t s = ((uintptr_t)h >> 4) & (MAX_HANDLES - 1);
	while (h_keys[s] && h_keys[s] != h)
		s = (s + 1) & (MAX_HANDLES - 1);
	return s;
}

/* Remembers h as device index's; true the first time. */
static bool h_remember(nvmlDevice_t h, unsigned int index)
{
	pthread_mutex_lock(&h_lock);
	size_t s = h_slot(h);
	h_keys[s] = h;
	h_index[s] = index;
	bool first = !h_attached[s];
	h_attached[s] = true;
	pthread_mutex_unlock(&h_lock);
	return first;
}

/* The index of a handle given out, or -1. */
static long long h_lookup(nvmlDevice_t h)
{
	if (!h)
		return -1;
	pthread_mutex_lock(&h_lock);
	size_t s = h_slot(h);
	long long i = h_keys[s] ? (long long)h_index[s] : -1;
	pthread_mutex_unlock(&h_lock);
	return i;
}

/* ------------------------------------------------------------ wrappers */

static struct nvml_api real;
static atomic_int inits; /* successful nvmlInit_v2 calls less nvmlShutdown's */

/* The fault of a call made while NVML is initialised, else none: the real
 * component answers UNINITIALIZED first, as NVML does. */
static nvmlReturn_t fault_if_init(enum nvml_fn_id fn, long long dev, long long link, long long peer)
{
	sleep_us(latency_us);
	return atomic_load(&inits) > 0 ? fault(fn, dev, link, peer, false) : NVML_SUCCESS;
}

static nvmlReturn_t w_nvmlInit_v2(void)
{
	sleep_us(latency_us);
	nvmlReturn_t rc = fault(NVML_FN_nvmlInit_v2, -1, -1, -1, false);
	if (!rc && (rc = real.nvmlInit_v2()) == NVML_SUCCESS)
		atomic_fetch_add(&inits, 1);
	return rc;
}

static nvmlReturn_t w_nvmlShutdown(void)
{
	nvmlReturn_t rc = fault_if_init(NVML_FN_nvmlShutdown, -1, -1, -1);
	if (!rc && (rc = real.nvmlShutdown()) == NVML_SUCCESS)
		atomic_fetch_sub(&inits, 1);
	return rc;
}

/* The index of a peer's handle given out, or -2. */
static long long peer_of(nvmlDevice_t h)
{
	long long i = h_lookup(h);
	return i < 0 ? -2 : i;
}

/*
 * The wrapper of each function, from its row of the table: a function of no
 * device fails by any fault on it; one of a device (and a link, where it
 * takes one), or of a pair of devices, by faults naming them, and a handle
 * the real component never gave out gets its answer (INVALID_ARGUMENT).
 * The functions of other shapes are written below.
 */
#define W_SYS(fn, params)                                                     \
	static nvmlReturn_t w_##fn DC_NAMED(params)                          \
	{                                                                     \
		nvmlReturn_t rc = fault_if_init(NVML_FN_##fn, -1, -1, -1);         \
		return rc ? rc : real.fn DC_PASSED(params);                 \
	}
#define W_HANDLES(fn, params, e_, link)                                                  \
	static nvmlReturn_t w_##fn DC_NAMED(params)                                     \
	{                                                                                \
		long long d = h_lookup(a0), e = e_;                                      \
		nvmlReturn_t rc = d < 0 || e < -1 ? (sleep_us(latency_us), NVML_SUCCESS) \
						  : fault_if_init(NVML_FN_##fn, d, link, e);   \
		return rc ? rc : real.fn DC_PASSED(params);                            \
	}
#define W_DEV(fn, params) W_HANDLES(fn, params, -1, -1)
#define W_DEV_MIG(fn, params) W_DEV(fn, params)
#define W_QUERY(fn, params) W_DEV(fn, params)
#define W_LINK(fn, params) W_HANDLES(fn, params, -1, (long long)a1)
#define W_PEER(fn, params) W_HANDLES(fn, params, peer_of(a1), -1)
#define W_NONE(fn, params)
#define W_TEXT(fn, params)
#define W_INDEX(fn, params)
#define W_FIELDS(fn, params)
#define W_(fn, ret, params, required, args) W_##args(fn, params)
NVML_FUNCTIONS_ARGS(W_)
#undef W_

static nvmlReturn_t w_nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	sleep_us(latency_us);
	nvmlDevice_t h = NULL;
	nvmlReturn_t rc = real.nvmlDeviceGetHandleByIndex_v2(index, device ? &h : NULL);
	/* An index past the count (or no handle to fill) fails before any fault. */
	if (rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_UNINITIALIZED)
		return rc;
	nvmlReturn_t frc = fault(NVML_FN_nvmlDeviceGetHandleByIndex_v2, index, -1, -1, false);
	if (frc || rc)
		return frc ? frc : rc;
	if (h_remember(h, index) && attach_us)
		sleep_us(attach_us);
	*device = h;
	return NVML_SUCCESS;
}

/* Per-link fields fail alone, by faults naming their link; the state and
 * version fields also by faults on the per-link calls, which NVML answers
 * from the same source. */
static nvmlReturn_t w_nvmlDeviceGetFieldValues(nvmlDevice_t h, int n, nvmlFieldValue_t *values)
{
	long long d = h_lookup(h);
	nvmlReturn_t rc = d < 0 ? (sleep_us(latency_us), NVML_SUCCESS)
				: fault_if_init(NVML_FN_nvmlDeviceGetFieldValues, d, -1, -1);
	if (rc || (rc = real.nvmlDeviceGetFieldValues(h, n, values)) || d < 0)
		return rc;
	for (int i = 0; i < n; i++) {
		nvmlFieldValue_t *v = &values[i];
		enum nvml_fn_id same = v->fieldId == NVML_FI_DEV_NVLINK_GET_STATE	 ? NVML_FN_nvmlDeviceGetNvLinkState
				  : v->fieldId == NVML_FI_DEV_NVLINK_GET_VERSION ? NVML_FN_nvmlDeviceGetNvLinkVersion
										 : NVML_FN_COUNT;
		if (same == NVML_FN_COUNT && v->fieldId != NVML_FI_DEV_NVLINK_GET_SPEED)
			continue;
		/* A link the device lacks has no fault to fail with. */
		nvmlEnableState_t st;
		if (v->scopeId >= NVML_NVLINK_MAX_LINKS ||
		    (real.nvmlDeviceGetNvLinkState &&
		     real.nvmlDeviceGetNvLinkState(h, v->scopeId, &st) == NVML_ERROR_INVALID_ARGUMENT))
			continue;
		nvmlReturn_t frc = fault(NVML_FN_nvmlDeviceGetFieldValues, d, v->scopeId, -1, true);
		if (!frc && same != NVML_FN_COUNT)
			frc = fault(same, d, v->scopeId, -1, false);
		if (frc) {
			v->nvmlReturn = frc;
			memset(&v->value, 0, sizeof(v->value));
		}
	}
	return NVML_SUCCESS;
}

/* ------------------------------------------------------------------ ops */

static struct dmaconn_replay_ops ops;
static const struct dmaconn_replay_ops *real_ops;

static const char *load_error(void)
{
	const char *e = real_ops->load_error();
	if (e)
		return e;
	pthread_once(&f_once, load);
	return f.error;
}

/* The real table, each function present wrapped. */
#define w_nvmlErrorString real.nvmlErrorString
static int nvml_table(struct nvml_api *api, char *err, size_t errlen)
{
	int rc = real_ops->table("nvml", api, err, errlen);
	if (rc)
		return rc;
	real = *api;
#define WRAP_(fn, ret, params, required) api->fn = api->fn ? w_##fn : NULL;
	NVML_FUNCTIONS(WRAP_)
#undef WRAP_
	return 0;
}

/* The libraries' tables, wrapped: NVML's faults here, Level Zero's runtime
 * in replay_runtime.c. */
static int table(const char *which, void *api, char *err, size_t errlen)
{
	if (which && !strcmp(which, "nvml"))
		return nvml_table(api, err, errlen);
	if (which && !strcmp(which, "level_zero"))
		return stand_in_ze_table(real_ops, api, err, errlen);
	return real_ops->table(which, api, err, errlen);
}

TEST_EXPORT const struct dmaconn_replay_ops *dmaconn_replay_ops(void);
TEST_EXPORT const struct dmaconn_replay_ops *dmaconn_replay_ops(void)
{
	if (!real_ops) {
		void *h = dlopen(DMACONN_REPLAY_SONAME, RTLD_NOW | RTLD_NOLOAD);
		void *sym = h ? dlsym(h, "dmaconn_replay_ops") : NULL;
		dmaconn_replay_ops_fn get;
		memcpy(&get, &sym, sizeof(get));
		if (h)
			dlclose(h);
		real_ops = get();
		ops = *real_ops;
		ops.load_error = load_error;
		ops.table = table;
	}
	return &ops;
}

/* The file to replay goes to the real component; its faults are read here. */
TEST_EXPORT int dmaconn_replay_use_file(const char *path);
TEST_EXPORT int dmaconn_replay_use_file(const char *path)
{
	void *h = dlopen(DMACONN_REPLAY_SONAME, RTLD_NOW | RTLD_NOLOAD);
	void *sym = h ? dlsym(h, DMACONN_REPLAY_USE_FILE) : NULL;
	int (*use)(const char *);
	memcpy(&use, &sym, sizeof(use));
	if (h)
		dlclose(h);
	int rc = use ? use(path) : -1;
	if (rc == 0)
		snprintf(use_file, sizeof(use_file), "%s", path ? path : "");
	return rc;
}
