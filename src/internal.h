/* SPDX-License-Identifier: BSD-3-Clause */
/* What the parts of the core share: results, the builder, the environment. */
#ifndef DMACONN_INTERNAL_H
#define DMACONN_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "dmaconn.h"
#include "pairs.h"

struct dc_prop {
	char *key;
	char *value;
};

struct dc_props {
	struct dc_prop *items;
	int count, cap;
};

struct dc_strings {
	char **items;
	int count, cap;
};

struct dmaconn_result {
	atomic_int refs;
	dmaconn_device_type type;
	char *connection;
	int n;
	int *matrix;              /* n*n, row-major */
	struct dc_props *devices; /* n entries */
	struct dc_pairs pairs;    /* n*n pairs' properties (pairs.h) */
	struct dc_strings warnings;
	int unavailable; /* the detection could not run (dmaconn_result_unavailable) */
};

struct dmaconn_builder {
	struct dmaconn_result *r;
	int sized;
	int oom; /* an allocation failed: the detection fails with ENOMEM */
	int quiet; /* warnings stay in the result, none goes to the sink */
	int provisional; /* not to be cached: a passive answer (dc_detect_passive) */
	struct dc_warn_table *warn; /* the warnings' causes and counts (dmaconn.c) */
};

/* Takes a reference counted by refs; drops one, whether it was the last
 * (its owner is then to be freed). */
static inline void dc_ref(atomic_int *refs)
{
	atomic_fetch_add_explicit(refs, 1, memory_order_relaxed);
}

static inline int dc_unref(atomic_int *refs)
{
	return atomic_fetch_sub_explicit(refs, 1, memory_order_acq_rel) == 1;
}

/* Records the calling thread's message for dmaconn_last_error(); returns err. */
int dc_fail(int err, const char *fmt, ...)
#ifdef __GNUC__
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Sets (or replaces) key in p; -1 when out of memory. */
int dc_props_set(struct dc_props *p, const char *key, const char *value);
void dc_props_clear(struct dc_props *p);
const char *dc_props_get(const struct dc_props *p, const char *key);
/* The accessors' answers for p, which may be NULL (an index out of range):
 * 0 properties, NULL for a k out of range. */
int dc_props_count(const struct dc_props *p);
const char *dc_props_key_at(const struct dc_props *p, int k);
const char *dc_props_value_at(const struct dc_props *p, int k);

/*
 * Makes room for one more item in an array of *cap items of size bytes, count
 * of them used, whose pointer is at itemsp: doubles it when full (first items
 * when empty).  0, or -1 when out of memory or past INT_MAX items or SIZE_MAX
 * bytes (the array is then unchanged).
 */
int dc_grow(void *itemsp, int count, int *cap, size_t size, int first);

int dc_strings_push(struct dc_strings *s, const char *str);
/* A warning's text, formatted into a buffer of max bytes (at most 1024;
 * longer text is cut as vsnprintf cuts it) and, when clean, cleaned by
 * dc_text_clean(), pushed onto s: the string pushed (s owns it), or NULL when
 * out of memory. */
const char *dc_strings_pushv(struct dc_strings *s, size_t max, int clean, const char *fmt, va_list ap)
#ifdef __GNUC__
	__attribute__((format(printf, 4, 0)))
#endif
	;
void dc_strings_clear(struct dc_strings *s);
/* The k-th string of s (s may be NULL), NULL out of range. */
const char *dc_strings_at(const struct dc_strings *s, int k);

/* A pair property's text as the result stores it: cleaned (as the builder
 * cleans what it is given) and kept once per result; NULL when out of
 * memory (the builder's detection then fails). */
const char *dc_builder_intern(dmaconn_builder *b, const char *text);
/* dmaconn_builder_set_pair_property with key and value from dc_builder_intern. */
int dc_builder_set_pair_interned(dmaconn_builder *b, int i, int j, const char *ikey, const char *ivalue);
/* Sets count properties (distinct keys) at once, all from dc_builder_intern. */
int dc_builder_set_pair_list(dmaconn_builder *b, int i, int j, const char *const *ikeys,
			     const char *const *ivalues, int count);

/*
 * Text from outside (sysfs, a vendor library, the verify helper) as results
 * and warnings hold it: valid UTF-8 without control characters (bidirectional
 * controls and U+2028/9 included).  NULL when
 * s is fine as it is, else a malloc'd cleaned copy (*oom set when that
 * fails).
 */
char *dc_text_clean(const char *s, int *oom);

/* Sends a warning to the sink (the builder also stores it in its result). */
void dc_warning_emit(const char *message);

/* ---- environment (env.c) ---- */

/*
 * The configuration the detectors read, taken from the environment once per
 * detection: dmaconn.c brackets each detector with dc_config_begin() and
 * dc_config_end() (nested detections share the outer one's), so that a
 * variable changed while a detection runs does not change it halfway.
 * Strings are NULL when unset or empty.
 */
#define DC_CONFIG_LIBRARIES 8 /* at most, over every backend */
struct dc_config {
	char *sysfs_root;       /* DMACONN_SYSFS_ROOT */
	/* Each backend's libraries' override variables (DMACONN_NVML_LIBRARY,
	 * ...), as given, in the order of the backend table. */
	char *library[DC_CONFIG_LIBRARIES];
	int nvml_threads_set;   /* DMACONN_NVML_THREADS given: */
	long nvml_threads;      /* its value (strtol) */
	int nvml_batch;         /* 0 when DMACONN_NVML_NO_BATCH is set, not "0" */
	int replay_live_env;    /* DMACONN_REPLAY_LIVE_ENV set, not "0" */
	int oom;                /* a string could not be copied: unusable */
};

void dc_config_begin(void);
void dc_config_end(void);
/* The calling thread's detection's configuration; outside a detection, read
 * afresh and valid until the thread's next call.  Never NULL. */
const struct dc_config *dc_config(void);

/* An environment variable as the detectors must see it: pinned by the replay
 * file when one is active, otherwise secure_getenv(). */
const char *dc_getenv(const char *name);

/*
 * A vendor library's override variable (e.g. DMACONN_NVML_LIBRARY), as
 * dc_config() has it: 0 with *path the absolute path it names, or NULL when it is
 * unset or empty; -1 with "VAR must be an absolute path, not '...'" in why
 * when it names anything else (never a relative path, never the CWD).
 */
int dc_library_override(const char *var, const char **path, char *why, size_t len);

/* Formats "<call> failed: <error>" into why (len bytes), the call from fmt
 * and ap, at most 255 bytes of it. */
void dc_call_failedv(char *why, size_t len, const char *error, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/*
 * A vendor library's initialisation, lazy and sticky: under lock, the first
 * call runs init (0, or -1 with the reason in error) and *state keeps the
 * outcome (0 not tried, 1 ready, -1 unusable).  0 when ready, else -1 with
 * error copied into why.
 */
int dc_init_once(pthread_mutex_t *lock, int *state, char *error, int (*init)(char *error), char *why,
		 size_t len);

/*
 * Opens a vendor library live: the path its override variable names
 * (dc_library_override), else its soname.  open_fn binds it (0, or -1 with
 * the reason in why), then the recording gets record_fn(library, rc, why),
 * library NULL and rc -1 when the variable was refused.  A soname that does
 * not load gets the library's hint in why, as dc_load_hint() writes it for
 * its what.  Returns open_fn's answer, -1 for a refused variable.
 */
struct dc_library;
int dc_open_live(const struct dc_library *lib, int (*open_fn)(const char *path, char *why, size_t len),
		 void (*record_fn)(const char *library, int rc, const char *why), char *why, size_t len);

/* Turns "cannot load WHAT: detail" in why into "cannot load WHAT (HINT):
 * detail", for a library missing from its usual place. */
void dc_load_hint(char *why, size_t len, const char *what, const char *hint);

/*
 * The replay component, when DMACONN_REPLAY is set: 1 with *handle (a dlopen
 * handle of the component, a new reference the caller closes) and *ops; 0
 * when replay is off; -1 when it cannot be used (message in err).
 */
struct dmaconn_replay_ops;
/* The replay file: dmaconn_set_replay_file()'s, else DMACONN_REPLAY; NULL
 * when replay is off. */
const char *dc_replay_file(void);
int dc_replay_open(void **handle, const struct dmaconn_replay_ops **ops, char *err, size_t errlen);
/* Before a detection: DMACONN_OK when replay is off or its file usable, else
 * DMACONN_EREPLAY with the reason. */
int dc_replay_check(void);
/* 1 when replay is on and its file loaded; used to keep live sysfs out of a replay. */
const struct dmaconn_replay_ops *dc_replay_ops(void);
void dc_replay_shutdown(void);
/* While dmaconn_record() runs, a backend hands the function table of the
 * vendor library it loaded ("nvml", "level_zero"; NULL with load_error when
 * it did not load) to the recorder, which wraps it (replay_abi.h). */
void dc_record_table(const char *vendor, void *table, const char *library, const char *load_error);
/* While recording: a sysfs file read (src/sysfs.c), the NVIDIA PCI
 * functions counted without NVML. */
void dc_record_file(const char *path, const char *data, size_t len);
int dc_recording(void);
struct dc_pci;
void dc_record_pci_gpus(const struct dc_pci *gpus, int n);
/* dmaconn_record()'s detection: every detector once, over the whole node,
 * passive and uncached, between two resets of the backends (dmaconn.c). */
int dc_record_run(void);
/* Around a whole recording (dmaconn_record): enter waits for any other
 * recording and for the detections under way, then holds other threads'
 * detections back until leave; DMACONN_EBUSY inside a detector or a
 * warning handler. */
int dc_record_enter(void);
void dc_record_leave(void);

/* fork() while other threads work: DC_FORK_PREPARE takes the lock of a part,
 * DC_FORK_PARENT and DC_FORK_CHILD release it (dmaconn.c's pthread_atfork
 * handlers call these, and each backend's atfork, in the order code nests
 * the locks). */
enum { DC_FORK_PREPARE, DC_FORK_PARENT, DC_FORK_CHILD };
void dc_replay_fork(int phase);
void dc_verify_fork(int phase); /* the verify progress callback's lock (a leaf) */
/* While on, the calling thread's dc_getenv() hides the device-visibility
 * variables and answers CUDA_DEVICE_ORDER=PCI_BUS_ID: detection then covers
 * every device of the node (dmaconn_detect_node).  Returns the setting it
 * replaces (a nested detection restores it). */
int dc_set_node_scope(int on);
/* While on, the calling thread's detection is fresh (dmaconn_detect_fresh):
 * backends discover again instead of reusing their model.  Returns the
 * setting it replaces. */
int dc_set_rediscover(int on);
int dc_rediscover(void);

/* 1 while the calling thread runs a detector for dmaconn_detect_passive():
 * a detector that would start work on the devices answers without it, and
 * marks its result with dc_builder_provisional() so that the registry does
 * not keep it. */
int dc_detect_passive(void);
void dc_builder_provisional(dmaconn_builder *b);
/* The vendor's library or driver could not answer: the result is sized
 * without it, every pair 0 (dmaconn_result_unavailable). */
void dc_builder_unavailable(dmaconn_builder *b);

#endif
