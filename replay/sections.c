/* SPDX-License-Identifier: BSD-3-Clause */
/* The top-level sections of a topology file beyond NVML's, and who reads
 * them; "host" lives here, being a single string; and whether the vendor
 * libraries other than NVML loaded in a recording. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_internal.h"
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

const struct replay_section replay_sections[] = {
	{ "host", read_host, release_host, record_host },
	{ "files", replay_files_read, replay_files_release, replay_files_record },
	{ "level_zero", replay_ze_read, replay_ze_release, replay_ze_record },
	{ "verification", replay_verification_read, replay_verification_release, replay_verification_record },
	{ NULL, NULL, NULL, NULL },
};

const char *replay_library_load_error(const char *which)
{
	return which && !strcmp(which, "level_zero") ? replay_ze_load_error() : "not recorded";
}

int replay_lacks(void *api, size_t size, const char *library, const char *fn, const char *kind, char *err,
		 size_t errlen)
{
	snprintf(err, errlen, "%s lacks %s (not %s?)", library, fn, kind);
	memset(api, 0, size);
	return -1;
}
