/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libdmaconn_replay, the component: the topology file (docs/replay-format.md)
 * read once, on first use, its top level here and each section by whoever
 * owns it (replay_sections[]: the vendors' libraries in their directories,
 * src/backends/VENDOR/replay/), and the ops libdmaconn finds it by
 * (src/replay_abi.h).  After loading all is read-only, for any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pci.h"
#include "replay_internal.h"

#define MAX_ENTRIES 4096 /* environment, pci_gpus */

static const char *load_error; /* NULL once the file loaded, else replay_err */
static struct {
	json_t *env;	      /* "environment": name -> value, null: pinned unset */
	struct dc_pci *gpus;
	unsigned int ngpus;
	char *host;
} g;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void free_data(void)
{
	json_decref(g.env);
	free(g.gpus), free(g.host);
	for (const struct replay_section *sec = replay_sections; sec->key; sec++)
		if (sec->release)
			sec->release();
	memset(&g, 0, sizeof(g));
}

static int read_root(const struct fmt_ctx *c, json_t *root)
{
	char p[REPLAY_PATH_LEN];
	const char *key;
	json_t *v;
	size_t n;
	if (!json_is_object(root))
		return replay_bad(c->file, "(top level)", "expected an object");
	if (!(v = json_object_get(root, "dmaconn_topology")))
		return replay_bad(c->file, "(top level)",
				  "\"dmaconn_topology\" is required: this is not a dmaconn topology file");
	if (!json_is_integer(v))
		return replay_bad(c->file, "dmaconn_topology", "expected the format version, an integer");
	long long version = (long long)json_integer_value(v);
	if (version > REPLAY_FORMAT_VERSION)
		return replay_bad(c->file, "dmaconn_topology", "version %lld is newer than this reader's %d", version,
				  REPLAY_FORMAT_VERSION);
	if (version < 1)
		return replay_bad(c->file, "dmaconn_topology", "version %lld does not exist", version);
	json_t *env = json_object_get(root, "environment");
	if (env && !json_is_object(env))
		return replay_bad(c->file, "environment", "expected an object of strings and nulls");
	if (json_object_size(env) > MAX_ENTRIES)
		return replay_bad(c->file, "environment", "more than %d variables", MAX_ENTRIES);
	json_object_foreach(env, key, v) {
		if (!json_is_string(v) && !json_is_null(v))
			return replay_bad(c->file, replay_sub(p, "environment", key), "expected a string or null");
	}
	g.env = json_incref(env);
	if ((v = json_object_get(root, "pci_gpus"))) {
		if (fmt_array(c, v, "pci_gpus", "PCI bus ids", MAX_ENTRIES, sizeof(*g.gpus), (void **)&g.gpus, &n))
			return -1;
		for (g.ngpus = 0; g.ngpus < n; g.ngpus++) {
			json_t *b = json_array_get(v, g.ngpus);
			if (!json_is_string(b) || dc_pci_parse(json_string_value(b), json_string_length(b) + 1, &g.gpus[g.ngpus]))
				return replay_bad(c->file, replay_item(p, "pci_gpus", g.ngpus),
						  "expected a PCI bus id such as \"0000:00:06.0\"");
		}
	}
	for (const struct replay_section *sec = replay_sections; sec->key; sec++)
		if ((v = json_object_get(root, sec->key)) && sec->read(c->file, v))
			return -1;
	return 0;
}

/* "host": the node's name. */
int replay_host_read(const char *file, json_t *value)
{
	if (!json_is_string(value) || !json_string_length(value) || json_string_length(value) > 255)
		return replay_bad(file, "host", "expected the node's name, a string of 1 to 255 characters");
	free(g.host);
	g.host = strdup(json_string_value(value));
	return g.host ? 0 : replay_bad(file, "host", "out of memory");
}

/* A recording names the node it was made on (or the replayed node). */
void replay_host_record(json_t *root)
{
	char name[256] = "";
	if (replay_active() && g.host)
		snprintf(name, sizeof(name), "%s", g.host);
	else if (!replay_active() && gethostname(name, sizeof(name) - 1) != 0)
		name[0] = '\0';
	if (name[0])
		json_object_set_new(root, "host", json_string(name));
}

/* The file libdmaconn passed (dmaconn_replay_use_file), fixed once loaded:
 * load() stores the file it read there. */
static pthread_mutex_t g_file_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_file;
static int g_file_loaded;

/* The file passed, else DMACONN_REPLAY; lock held. */
static const char *chosen_file(void)
{
	const char *env = secure_getenv("DMACONN_REPLAY");
	return g_file && *g_file ? g_file : env ? env : "";
}

int replay_active(void)
{
	pthread_mutex_lock(&g_file_lock);
	int active = *chosen_file() != '\0';
	pthread_mutex_unlock(&g_file_lock);
	return active;
}

int dmaconn_replay_use_file(const char *path)
{
	path = path ? path : "";
	pthread_mutex_lock(&g_file_lock);
	char *copy = g_file_loaded ? NULL : strdup(path);
	/* The file is read once per process: only the same one after that. */
	int rc = g_file_loaded ? (g_file && !strcmp(g_file, path) ? 0 : -1) : copy ? 0 : -1;
	if (copy) {
		free(g_file);
		g_file = copy;
	}
	pthread_mutex_unlock(&g_file_lock);
	return rc;
}

/* Parses the file (or, fuzzing, data) into g: 0, or -1 with the load error in replay_err. */
static int load_json(const char *file, const char *data, size_t len)
{
	struct fmt_ctx c = { .file = file };
	struct stat st;
	json_error_t je;
	json_t *root = NULL;
	/* Opened without blocking, and only a regular file is read: a FIFO or
	 * a device would hang or never end. */
	int fd = data ? -1 : open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC), err = errno;
	FILE *f = NULL;
	if (fd >= 0 && fstat(fd, &st) != 0)
		err = errno;
	else if (fd >= 0 && !S_ISREG(st.st_mode))
		err = S_ISDIR(st.st_mode) ? EISDIR : 0;
	else if (fd >= 0 && (fcntl(fd, F_SETFL, 0) != 0 || !(f = fdopen(fd, "r"))))
		err = errno;
	if (fd >= 0 && !f)
		close(fd);
	if (data)
		root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	else if (!f && !err)
		snprintf(replay_err, sizeof(replay_err), "%s: not a regular file", file);
	else if (!f)
		snprintf(replay_err, sizeof(replay_err), "%s: cannot open: %s", file, strerror(err));
	else if (!(root = json_loadf(f, JSON_REJECT_DUPLICATES, &je)) && je.line > 0)
		snprintf(replay_err, sizeof(replay_err), "%s: line %d, column %d: %s", file, je.line, je.column, je.text);
	else if (!root)
		snprintf(replay_err, sizeof(replay_err), "%s: %s", file, je.text);
	if (f)
		fclose(f);
	int rc = root ? read_root(&c, root) : -1;
	load_error = rc ? replay_err : NULL;
	if (rc && root)
		free_data();
	json_decref(root);
	return rc;
}

static void fail(const char *why)
{
	snprintf(replay_err, sizeof(replay_err), "%s", why);
	load_error = replay_err;
}

static void load(void)
{
	pthread_mutex_lock(&g_file_lock);
	g_file_loaded = 1;
	char *file = strdup(chosen_file());
	if (file) {
		free(g_file);
		g_file = file;
	}
	file = g_file;
	pthread_mutex_unlock(&g_file_lock);
	if (file && *file)
		load_json(file, NULL, 0);
	else
		fail("DMACONN_REPLAY is not set");
}

static void load_nothing(void)
{
	fail("libdmaconn_replay is being unloaded");
}

/* Frees the file's data when the library goes, so that leak checkers stay quiet. */
__attribute__((destructor)) static void release(void)
{
	pthread_once(&g_once, load_nothing);
	free_data();
	load_nothing();
	pthread_mutex_lock(&g_file_lock);
	free(g_file);
	g_file = NULL;
	pthread_mutex_unlock(&g_file_lock);
}

bool replay_loaded(void)
{
	pthread_once(&g_once, load);
	return load_error == NULL;
}

const char *replay_load_failure(void)
{
	replay_loaded();
	return load_error;
}

/* ------------------------------------------------------------------- ops */

static int op_getenv(const char *name, const char **value)
{
	json_t *v = replay_loaded() && name ? json_object_get(g.env, name) : NULL;
	if (v && value)
		*value = json_string_value(v);
	return v != NULL;
}

static int op_pci_gpus(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int max)
{
	for (unsigned int i = 0; replay_loaded() && bus_ids && i < g.ngpus && (int)i < max; i++)
		dc_pci_format(&g.gpus[i], bus_ids[i]);
	return replay_loaded() ? (int)g.ngpus : 0;
}

static const char *op_library_load_error(const char *which)
{
	const struct replay_section *sec = replay_library_section(which);
	return sec ? sec->load_error() : "not recorded";
}

static int op_table(const char *which, void *api, char *err, size_t errlen)
{
	const struct replay_section *sec = replay_library_section(which);
	if (!sec) {
		snprintf(err, errlen, "the replay has no library \"%s\"", which ? which : "");
		return -1;
	}
	return sec->table(api, err, errlen);
}

int replay_lacks(void *api, size_t size, const char *library, const char *fn, const char *kind, char *err,
		 size_t errlen)
{
	snprintf(err, errlen, "%s lacks %s (not %s?)", library, fn, kind);
	memset(api, 0, size);
	return -1;
}

static const char *op_host(void)
{
	return g.host;
}

const struct dmaconn_replay_ops *dmaconn_replay_ops(void)
{
	static const struct dmaconn_replay_ops ops = {
		.abi_version = DMACONN_REPLAY_ABI_VERSION,
		.load_error = replay_load_failure,
		.getenv = op_getenv,
		.table = op_table,
		.library_load_error = op_library_load_error,
		.pci_gpus = op_pci_gpus,
		.read_file = replay_files_read_file,
		.list_dir = replay_files_list_dir,
		.host = op_host,
		.record_begin = replay_record_begin,
		.record_table = replay_record_table,
		.record_write = replay_record_write,
		.record_file = replay_files_note,
		.record_pci_gpus = replay_record_pci_gpus,
		.verification = replay_verification,
	};
	return &ops;
}

#ifdef DMACONN_FUZZING
/*
 * fuzz/fuzz_replay.c's entry points, compiled only into that target: parses
 * data as a topology file into the structures above (0 when accepted, -1
 * when refused; the tables then answer from them), and frees them.
 */
REPLAY_EXPORT int dmaconn_replay_fuzz_load(const char *data, size_t len);
REPLAY_EXPORT void dmaconn_replay_fuzz_release(void);
int dmaconn_replay_fuzz_load(const char *data, size_t len)
{
	pthread_once(&g_once, load_nothing); /* never read DMACONN_REPLAY */
	return load_json("fuzz", data, len);
}

void dmaconn_replay_fuzz_release(void)
{
	free_data();
}
#endif
