/* SPDX-License-Identifier: BSD-3-Clause */
/* The environment as detectors see it, and the optional replay component. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "internal.h"
#include "pci.h"
#include "replay_abi.h"

static pthread_mutex_t replay_lock = PTHREAD_MUTEX_INITIALIZER;
static void *replay_handle;
static const struct dmaconn_replay_ops *replay;
static char replay_error[1024];
static int replay_tried;
static char replay_path[4096];
static char replay_file_set[4096]; /* dmaconn_set_replay_file(), "" for none */

/* Passes the file set by dmaconn_set_replay_file to the loaded component
 * (replay_lock held); 0, or -1 with replay_error. */
static int pass_replay_file(void)
{
	if (!replay_file_set[0])
		return 0;
	int (*use)(const char *) = NULL;
	void *sym = dlsym(replay_handle, DMACONN_REPLAY_USE_FILE);
	memcpy(&use, &sym, sizeof(use));
	if (!use) {
		snprintf(replay_error, sizeof(replay_error), "the replay component cannot replay a file it is given");
		return -1;
	}
	if (use(replay_file_set) != 0) {
		snprintf(replay_error, sizeof(replay_error),
			 "the replay component already replays another file than %.900s", replay_file_set);
		return -1;
	}
	return 0;
}

const char *dc_replay_file(void)
{
	if (replay_file_set[0])
		return replay_file_set;
	const char *file = secure_getenv("DMACONN_REPLAY");
	return file && *file ? file : NULL;
}

int dmaconn_set_replay_file(const char *path)
{
	if (path && strlen(path) >= sizeof(replay_file_set))
		return dc_fail(DMACONN_EINVAL, "replay file path too long");
	pthread_mutex_lock(&replay_lock);
	int rc = DMACONN_OK;
	char before[sizeof(replay_file_set)];
	snprintf(before, sizeof(before), "%s", replay_file_set);
	snprintf(replay_file_set, sizeof(replay_file_set), "%s", path ? path : "");
	if (replay_handle && replay_file_set[0] && pass_replay_file() != 0) {
		rc = dc_fail(DMACONN_EBUSY, "%s", replay_error);
		replay_error[0] = '\0';
		snprintf(replay_file_set, sizeof(replay_file_set), "%s", before);
	}
	pthread_mutex_unlock(&replay_lock);
	return rc;
}

/* The replay component beside this library, found through dladdr, so that a
 * build tree and an installed tree both work without LD_LIBRARY_PATH.
 * *present tells whether there is one: then its own load error counts (a
 * library it needs is missing, say), not that of a search elsewhere. */
static void *open_sibling(int *present, char *path, size_t size)
{
	*present = 0;
	Dl_info info;
	if (!dladdr((void *)&dc_replay_open, &info) || !info.dli_fname || info.dli_fname[0] != '/')
		return NULL;
	const char *slash = strrchr(info.dli_fname, '/');
	int len = snprintf(path, size, "%.*s/%s", (int)(slash - info.dli_fname),
			   info.dli_fname, DMACONN_REPLAY_SONAME);
	if (len < 0 || (size_t)len >= size || access(path, R_OK) != 0)
		return NULL;
	*present = 1;
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* Loads the component once (replay_lock held); 0, or -1 with replay_error. */
static int load_replay(void)
{
	const char *override = secure_getenv("DMACONN_REPLAY_LIBRARY");
	void *h = NULL;
	char tried[4096] = "";
	if (override && *override) {
		if (override[0] != '/') {
			snprintf(replay_error, sizeof(replay_error),
				 "DMACONN_REPLAY_LIBRARY must be an absolute path, not '%s'", override);
			return -1;
		}
		h = dlopen(override, RTLD_NOW | RTLD_LOCAL);
	} else {
		int present;
		h = open_sibling(&present, tried, sizeof(tried));
		if (!h && !present) {
			tried[0] = '\0';
			h = dlopen(DMACONN_REPLAY_SONAME, RTLD_NOW | RTLD_LOCAL);
		}
	}
	if (!h) {
		/* The loader's answer names what is missing (the component, or a
		 * library it needs); the copy beside this library is named too. */
		const char *why = dlerror();
		snprintf(replay_error, sizeof(replay_error), "the replay component %.700s%scannot be loaded: %s", tried,
			 *tried ? " " : "", why ? why : DMACONN_REPLAY_SONAME " not found");
		return -1;
	}
	dmaconn_replay_ops_fn get;
	void *sym = dlsym(h, "dmaconn_replay_ops");
	memcpy(&get, &sym, sizeof(get));
	const struct dmaconn_replay_ops *ops = sym ? get() : NULL;
	if (!ops || ops->abi_version != DMACONN_REPLAY_ABI_VERSION) {
		snprintf(replay_error, sizeof(replay_error),
			 "the replay component does not speak replay ABI %d", DMACONN_REPLAY_ABI_VERSION);
		dlclose(h);
		return -1;
	}
	Dl_info info;
	if (!dladdr(sym, &info) || !info.dli_fname ||
	    (size_t)snprintf(replay_path, sizeof(replay_path), "%s", info.dli_fname) >= sizeof(replay_path)) {
		snprintf(replay_error, sizeof(replay_error), "cannot locate the replay component");
		dlclose(h);
		return -1;
	}
	replay_handle = h;
	replay = ops;
	if (pass_replay_file() != 0) {
		replay_handle = NULL;
		replay = NULL;
		dlclose(h);
		return -1;
	}
	return 0;
}

/* The component that records, while dmaconn_record() runs. */
static const struct dmaconn_replay_ops *recorder;

void dc_record_table(const char *vendor, void *table, const char *library, const char *load_error)
{
	pthread_mutex_lock(&replay_lock);
	const struct dmaconn_replay_ops *r = recorder;
	pthread_mutex_unlock(&replay_lock);
	if (r)
		r->record_table(vendor, table, library, load_error);
}

int dc_recording(void)
{
	pthread_mutex_lock(&replay_lock);
	int on = recorder != NULL;
	pthread_mutex_unlock(&replay_lock);
	return on;
}

void dc_record_file(const char *path, const char *data, size_t len)
{
	pthread_mutex_lock(&replay_lock);
	const struct dmaconn_replay_ops *r = recorder;
	pthread_mutex_unlock(&replay_lock);
	if (r)
		r->record_file(path, data, len);
}

void dc_record_pci_gpus(const struct dc_pci *gpus, int n)
{
	pthread_mutex_lock(&replay_lock);
	const struct dmaconn_replay_ops *r = recorder;
	pthread_mutex_unlock(&replay_lock);
	char(*ids)[DMACONN_REPLAY_BUS_ID_SIZE] = r && n > 0 ? calloc((size_t)n, sizeof(*ids)) : NULL;
	for (int i = 0; ids && i < n; i++)
		dc_pci_format(&gpus[i], ids[i]);
	if (r && (ids || n <= 0))
		r->record_pci_gpus(ids, n > 0 ? n : 0);
	free(ids);
}

int dmaconn_record(const char *path)
{
	if (!path || !*path)
		return dc_fail(DMACONN_EINVAL, "no file to record to");
	pthread_mutex_lock(&replay_lock);
	if (!replay_tried) {
		replay_tried = 1;
		load_replay();
	}
	const struct dmaconn_replay_ops *ops = replay;
	char why[1024];
	snprintf(why, sizeof(why), "%s", replay_error);
	pthread_mutex_unlock(&replay_lock);
	if (!ops)
		return dc_fail(DMACONN_EUNAVAILABLE, "cannot record: %s",
			       why[0] ? why : "the replay component has no recorder");
	if (dc_replay_file() && ops->load_error())
		return dc_fail(DMACONN_EREPLAY, "cannot record: %s", ops->load_error());
	/* Every detector once, its vendor libraries' tables wrapped; no other
	 * thread detects meanwhile. */
	int rc = dc_record_enter();
	if (rc != DMACONN_OK)
		return rc;
	/* The recording pins the variables that decide device order: every
	 * backend's visibility variables, each once (at its first row). */
	const char *pinned[32];
	int npinned = 0;
	for (const struct dc_backend *const *b = dc_backends; *b; b++)
		for (int i = 0; i < (*b)->nvisibility; i++) {
			const struct dc_visibility *v = &(*b)->visibility[i];
			if (dc_visibility_of(v->name) == v && npinned < DC_COUNT_OF(pinned) - 1)
				pinned[npinned++] = v->name;
		}
	pinned[npinned] = NULL;
	ops->record_begin(pinned);
	pthread_mutex_lock(&replay_lock);
	recorder = ops;
	pthread_mutex_unlock(&replay_lock);
	rc = dc_record_run();
	/* What multi-node detection asks of the node, which no detector reads. */
	if (rc == DMACONN_OK)
		dmaconn_host_imex(NULL, 0);
	pthread_mutex_lock(&replay_lock);
	recorder = NULL;
	pthread_mutex_unlock(&replay_lock);
	char tool[64], err[1024] = "";
	snprintf(tool, sizeof(tool), "dmaconn %s", dmaconn_version_string());
	if (rc == DMACONN_OK && ops->record_write(path, tool, err, sizeof(err)) != 0)
		rc = dc_fail(DMACONN_EREPLAY, "cannot record: %s", err);
	dc_record_leave();
	return rc;
}

int dc_replay_open(void **handle, const struct dmaconn_replay_ops **ops, char *err, size_t errlen)
{
	const char *file = dc_replay_file();
	if (!file)
		return 0;
	pthread_mutex_lock(&replay_lock);
	if (!replay_tried) {
		replay_tried = 1;
		load_replay();
	}
	const char *why = replay ? replay->load_error() : replay_error;
	int rc = -1;
	if (!why) {
		/* A reference of the caller's own, so that it can dlclose freely. */
		*handle = dlopen(replay_path, RTLD_NOW | RTLD_LOCAL);
		*ops = replay;
		rc = *handle ? 1 : -1;
		why = "cannot reopen the replay component";
	}
	if (rc < 0)
		snprintf(err, errlen, "%s", why);
	pthread_mutex_unlock(&replay_lock);
	return rc;
}

int dc_replay_check(void)
{
	void *h;
	const struct dmaconn_replay_ops *ops;
	char why[1024]; /* as long as the replay component's load error */
	int rc = dc_replay_open(&h, &ops, why, sizeof(why));
	if (rc < 0)
		return dc_fail(DMACONN_EREPLAY, "%s", why);
	if (rc > 0)
		dlclose(h);
	return DMACONN_OK;
}

const struct dmaconn_replay_ops *dc_replay_ops(void)
{
	const char *file = dc_replay_file();
	if (!file)
		return NULL;
	pthread_mutex_lock(&replay_lock);
	if (!replay_tried) {
		replay_tried = 1;
		load_replay();
	}
	const struct dmaconn_replay_ops *ops = replay && !replay->load_error() ? replay : NULL;
	pthread_mutex_unlock(&replay_lock);
	return ops;
}

/* ------------------------------------------------------------ configuration */

static _Thread_local struct dc_config config;
static _Thread_local int config_depth; /* detections under way on this thread */

static char *config_string(const char *name)
{
	const char *v = secure_getenv(name);
	char *copy = v && *v ? strdup(v) : NULL;
	/* Out of memory must not read as unset (another library, another
	 * tree): the detection fails instead (dmaconn.c). */
	if (v && *v && !copy)
		config.oom = 1;
	return copy;
}

static int config_flag(const char *name)
{
	const char *v = secure_getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

static void config_clear(void)
{
	free(config.sysfs_root);
	for (int i = 0; i < DC_CONFIG_LIBRARIES; i++)
		free(config.library[i]);
	for (int i = 0; i < DC_CONFIG_VARIABLES; i++)
		free(config.variable[i]);
	memset(&config, 0, sizeof(config));
}

static void config_read(void)
{
	config_clear();
	config.sysfs_root = config_string("DMACONN_SYSFS_ROOT");
	int k = 0;
	for (const struct dc_backend *const *b = dc_backends; *b; b++)
		for (int i = 0; i < (*b)->nlibraries && k < DC_CONFIG_LIBRARIES; i++)
			config.library[k++] = config_string((*b)->libraries[i].override);
	k = 0;
	for (const struct dc_backend *const *b = dc_backends; *b; b++)
		for (int i = 0; i < (*b)->nvariables && k < DC_CONFIG_VARIABLES; i++)
			config.variable[k++] = config_string((*b)->variables[i]);
	config.replay_live_env = config_flag("DMACONN_REPLAY_LIVE_ENV");
}

void dc_config_begin(void)
{
	if (config_depth++ == 0)
		config_read();
}

void dc_config_end(void)
{
	if (config_depth > 0 && --config_depth == 0)
		config_clear();
}

const struct dc_config *dc_config(void)
{
	if (config_depth == 0)
		config_read();
	return &config;
}

const char *dc_config_variable(const char *name)
{
	const struct dc_config *c = dc_config();
	int k = 0;
	for (const struct dc_backend *const *b = dc_backends; *b; b++)
		for (int i = 0; i < (*b)->nvariables && k < DC_CONFIG_VARIABLES; i++, k++)
			if (!strcmp((*b)->variables[i], name))
				return c->variable[k];
	return NULL;
}

/* ---------------------------------------------------------------- scope */

static _Thread_local int node_scope;
static _Thread_local int rediscover;

int dc_set_rediscover(int on)
{
	int was = rediscover;
	rediscover = on;
	return was;
}

int dc_rediscover(void)
{
	return rediscover;
}

int dc_set_node_scope(int on)
{
	int was = node_scope;
	node_scope = on;
	return was;
}

const struct dc_visibility *dc_visibility_of(const char *name)
{
	for (const struct dc_backend *const *b = dc_backends; *b; b++)
		for (int i = 0; i < (*b)->nvisibility; i++)
			if (!strcmp((*b)->visibility[i].name, name))
				return &(*b)->visibility[i];
	return NULL;
}

const struct dc_library *dc_library_of(const char *var, int *index)
{
	int k = 0;
	for (const struct dc_backend *const *b = dc_backends; *b; b++)
		for (int i = 0; i < (*b)->nlibraries; i++, k++)
			if (!strcmp((*b)->libraries[i].override, var)) {
				*index = k;
				return &(*b)->libraries[i];
			}
	return NULL;
}

int dc_library_override(const char *var, const char **path, char *why, size_t len)
{
	const struct dc_config *c = dc_config();
	int k;
	const char *value = dc_library_of(var, &k) && k < DC_CONFIG_LIBRARIES ? c->library[k] : secure_getenv(var);
	*path = NULL;
	if (!value || !*value)
		return 0;
	if (value[0] != '/') {
		snprintf(why, len, "%s must be an absolute path, not '%.300s'", var, value);
		return -1;
	}
	*path = value;
	return 0;
}

void dc_load_hint(char *why, size_t len, const char *what, const char *hint)
{
	char prefix[128], detail[1024];
	int n = snprintf(prefix, sizeof(prefix), "cannot load %s: ", what);
	if (n < 0 || (size_t)n >= sizeof(prefix) || strncmp(why, prefix, (size_t)n))
		return;
	snprintf(detail, sizeof(detail), "%s", why + n);
	snprintf(why, len, "cannot load %s (%s): %.600s", what, hint, detail);
}

void dc_call_failedv(char *why, size_t len, const char *error, const char *fmt, va_list ap)
{
	char call[256];
	vsnprintf(call, sizeof(call), fmt, ap);
	snprintf(why, len, "%s failed: %s", call, error);
}

int dc_init_once(pthread_mutex_t *lock, int *state, char *error, int (*init)(char *error), char *why,
		 size_t len)
{
	pthread_mutex_lock(lock);
	if (*state == 0) {
		*state = -1;
		if (init(error) == 0)
			*state = 1;
	}
	int rc = *state == 1 ? 0 : -1;
	if (rc)
		snprintf(why, len, "%s", error);
	pthread_mutex_unlock(lock);
	return rc;
}

int dc_open_live(const struct dc_library *lib, int (*open_fn)(const char *path, char *why, size_t len),
		 void (*record_fn)(const char *library, int rc, const char *why), char *why, size_t len)
{
	const char *path;
	if (dc_library_override(lib->override, &path, why, len) != 0) {
		record_fn(NULL, -1, why);
		return -1;
	}
	int rc = open_fn(path ? path : lib->soname, why, len);
	record_fn(path ? path : lib->soname, rc, why);
	if (rc != 0 && !path && lib->hint)
		dc_load_hint(why, len, lib->what, lib->hint);
	return rc;
}

const char *dc_getenv(const char *name)
{
	const struct dc_visibility *vis = node_scope ? dc_visibility_of(name) : NULL;
	if (vis && vis->hides)
		return NULL;
	if (vis && vis->node_value)
		return vis->node_value;
	const struct dmaconn_replay_ops *ops = dc_replay_ops();
	const char *value;
	if (ops && !dc_config()->replay_live_env && ops->getenv(name, &value))
		return value;
	return secure_getenv(name);
}

const char *dmaconn_host_id(void)
{
	static _Thread_local char id[4200]; /* "replay:" and a path */
	const char *file = dc_replay_file();
	if (file) {
		const struct dmaconn_replay_ops *ops = dc_replay_ops();
		const char *host = ops && ops->host ? ops->host() : NULL;
		if (host && *host) {
			snprintf(id, sizeof(id), "%s", host);
		} else {
			/* No name in the file: the file itself is the node. */
			char *abs = realpath(file, NULL);
			snprintf(id, sizeof(id), "replay:%s", abs ? abs : file);
			free(abs);
		}
		return id;
	}
	if (gethostname(id, sizeof(id) - 1) != 0 || !id[0])
		snprintf(id, sizeof(id), "localhost");
	id[sizeof(id) - 1] = '\0';
	return id;
}

void dc_replay_fork(int phase)
{
	if (phase == DC_FORK_PREPARE)
		pthread_mutex_lock(&replay_lock);
	else
		pthread_mutex_unlock(&replay_lock);
}

void dc_replay_shutdown(void)
{
	pthread_mutex_lock(&replay_lock);
	if (replay_handle)
		dlclose(replay_handle);
	replay_handle = NULL;
	replay = NULL;
	replay_tried = 0;
	replay_error[0] = '\0';
	pthread_mutex_unlock(&replay_lock);
}
