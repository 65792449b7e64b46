/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The recorder.  Each backend hands its vendor library's function table to
 * record_table(), which gives it to the library's section to wrap: every
 * call goes on (to the library, or to the replay being recorded) and its
 * answer, errors included, is kept and written as the reader reads it, so
 * that a recording holds exactly the answers the detectors used.  This
 * file writes the file: its own keys, then each section's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "replay_internal.h"

#define LOCK() pthread_mutex_lock(&replay_rec_lock)
#define UNLOCK() pthread_mutex_unlock(&replay_rec_lock)

pthread_mutex_t replay_rec_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------- the file */

static json_t *rec_recorded(const char *tool)
{
	char host[256] = "unknown", date[32] = "";
	struct utsname u;
	struct tm tm;
	time_t now = time(NULL);
	if (gethostname(host, sizeof(host) - 1) != 0)
		strcpy(host, "unknown");
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:o, s:o, s:s, s:o}", "tool", replay_text(tool, strlen(tool)), "host",
			 replay_text(host, strlen(host)), "date", date, "kernel",
			 uname(&u) == 0 ? replay_text(u.release, strlen(u.release)) : json_null());
}

/* The names of the variables that decide device order (record_begin's), a
 * JSON array, as the detectors read them; lock held. */
static json_t *pinned;

static json_t *rec_environment(bool *oom)
{
	const struct dmaconn_replay_ops *ops = replay_active() ? dmaconn_replay_ops() : NULL;
	json_t *env = json_object(), *name;
	size_t i;
	json_array_foreach(pinned, i, name) {
		const char *n = json_string_value(name), *v = NULL;
		if (!ops || !ops->getenv(n, &v))
			v = secure_getenv(n);
		replay_put(oom, env, n, v ? replay_text(v, strlen(v)) : json_null());
	}
	return env;
}

/* The NVIDIA PCI functions the count without NVML found, while recording. */
static json_t *pci_kept;

void replay_record_pci_gpus(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int count)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < count && i < REPLAY_MAX_DEVICES; i++)
		replay_append(&replay_rec_oom, arr, json_string(bus_ids[i]));
	LOCK();
	json_decref(pci_kept);
	pci_kept = arr;
	UNLOCK();
}

static int write_file(json_t *root, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "we");
	int bad = !f || json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 || fputc('\n', f) == EOF;
	int saved = errno;
	if (f && fclose(f) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	if (bad)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(saved ? saved : EIO));
	return bad ? -1 : 0;
}

__attribute__((destructor)) static void record_release(void)
{
	LOCK();
	json_decref(pci_kept);
	json_decref(pinned);
	pci_kept = pinned = NULL;
	UNLOCK();
}

void replay_record_begin(const char *const *vars)
{
	record_release();
	replay_rec_oom = false;
	for (const struct replay_section *sec = replay_sections; sec->key; sec++)
		if (sec->record_begin)
			sec->record_begin();
	json_t *names = json_array();
	for (size_t i = 0; vars && vars[i]; i++)
		replay_append(&replay_rec_oom, names, json_string(vars[i]));
	LOCK();
	pinned = names;
	UNLOCK();
}

int replay_record_write(const char *path, const char *tool, char *err, size_t errlen)
{
	const char *why = !path || !*path ? "no file to record to" : replay_active() ? replay_load_failure() : NULL;
	if (why) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	bool oom = false;
	json_t *root = json_object();
	replay_put(&oom, root, "dmaconn_topology", json_integer(REPLAY_FORMAT_VERSION));
	replay_put(&oom, root, "description", json_string("recorded by dmaconn"));
	replay_put(&oom, root, "recorded", rec_recorded(tool && *tool ? tool : "dmaconn"));
	LOCK();
	replay_put(&oom, root, "environment", rec_environment(&oom));
	replay_put(&oom, root, "pci_gpus", pci_kept ? json_incref(pci_kept) : json_array());
	UNLOCK();
	for (const struct replay_section *sec = replay_sections; sec->key; sec++)
		sec->record(root);
	int rc = -1;
	if (oom || replay_rec_oom)
		snprintf(err, errlen, "out of memory while recording");
	else
		rc = write_file(root, path, err, errlen);
	json_decref(root);
	return rc;
}

void replay_record_table(const char *vendor, void *table, const char *library_name, const char *load_error)
{
	const struct replay_section *sec = replay_library_section(vendor);
	if (sec)
		sec->record_table(table, library_name, load_error);
}

int replay_record_unwrapped(json_t *sec, const void *api, const char *library, const char *load_error,
			    const struct replay_section *lib)
{
	if (!api && !library && replay_active() && !lib->load_error()) {
		/* The replayed library lacked a required function: so it is recorded. */
		replay_library_record(sec, lib->library(), NULL, lib->missing());
		return 1;
	}
	if (!api)
		replay_library_record(sec, NULL, load_error ? load_error : "not loaded", NULL);
	return !api;
}
