/* SPDX-License-Identifier: BSD-3-Clause */
/* The top-level sections of a topology file, and who reads them: the
 * component's table, naming each vendor library's section once (its code is
 * in its directory, src/backends/VENDOR/replay/).  "host" lives here, being
 * a single string. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_internal.h"
#include "replay_nvml.h"
#include "replay_ze.h"

static char *host;

static int read_host(const char *file, json_t *value)
{
	if (!json_is_string(value) || !json_string_length(value) || json_string_length(value) > 255)
		return replay_bad(file, "host", "expected the node's name, a string of 1 to 255 characters");
	free(host);
	host = strdup(json_string_value(value));
	return host ? 0 : replay_bad(file, "host", "out of memory");
}

static void release_host(void)
{
	free(host);
	host = NULL;
}

/* A recording names the node it was made on (or the replayed node). */
static void record_host(json_t *root)
{
	char name[256] = "";
	if (replay_active()) {
		if (host)
			json_object_set_new(root, "host", json_string(host));
		return;
	}
	if (gethostname(name, sizeof(name) - 1) == 0 && name[0])
		json_object_set_new(root, "host", json_string(name));
}

const char *replay_host(void)
{
	return host;
}

/* In the order read, and written into a recording. */
const struct replay_section replay_sections[] = {
	{ "nvml", replay_nvml_read, replay_nvml_release, replay_nvml_record, replay_nvml_load_error,
	  replay_nvml_table, replay_nvml_library, replay_nvml_missing, replay_nvml_record_begin,
	  replay_nvml_record_table },
	{ "host", read_host, release_host, record_host, NULL, NULL, NULL, NULL, NULL, NULL },
	{ "files", replay_files_read, replay_files_release, replay_files_record, NULL, NULL, NULL, NULL, NULL, NULL },
	{ "level_zero", replay_ze_read, replay_ze_release, replay_ze_record, replay_ze_load_error, replay_ze_table,
	  replay_ze_library, replay_ze_missing, replay_ze_record_begin, replay_ze_record_table },
	{ "verification", replay_verification_read, replay_verification_release, replay_verification_record, NULL,
	  NULL, NULL, NULL, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
};

const struct replay_section *replay_library_section(const char *which)
{
	for (const struct replay_section *sec = replay_sections; which && sec->key; sec++)
		if (sec->load_error && !strcmp(sec->key, which))
			return sec;
	return NULL;
}

const char *replay_library_load_error(const char *which)
{
	const struct replay_section *sec = replay_library_section(which);
	return sec ? sec->load_error() : "not recorded";
}

int replay_table(const char *which, void *api, char *err, size_t errlen)
{
	const struct replay_section *sec = replay_library_section(which);
	if (!sec) {
		snprintf(err, errlen, "the replay has no library \"%s\"", which ? which : "");
		return -1;
	}
	return sec->table(api, err, errlen);
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

int replay_lacks(void *api, size_t size, const char *library, const char *fn, const char *kind, char *err,
		 size_t errlen)
{
	snprintf(err, errlen, "%s lacks %s (not %s?)", library, fn, kind);
	memset(api, 0, size);
	return -1;
}
