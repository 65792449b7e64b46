/* SPDX-License-Identifier: BSD-3-Clause */
/* The top-level sections of a topology file, and who reads them: the
 * component's table, naming each vendor library's section once (its code is
 * in its directory, src/backends/VENDOR/replay/). */
#include <string.h>

#include "replay_internal.h"
#include "replay_nvml.h"
#include "replay_ze.h"

/* In the order read, and written into a recording. */
const struct replay_section replay_sections[] = {
	{ "nvml", replay_nvml_read, replay_nvml_release, replay_nvml_record, replay_nvml_load_error, replay_nvml_table,
	  replay_nvml_library, replay_nvml_missing, replay_nvml_record_begin, replay_nvml_record_table },
	{ .key = "host", .read = replay_host_read, .record = replay_host_record },
	{ .key = "files", .read = replay_files_read, .release = replay_files_release, .record = replay_files_record,
	  .record_begin = replay_files_forget },
	{ "level_zero", replay_ze_read, replay_ze_release, replay_ze_record, replay_ze_load_error, replay_ze_table,
	  replay_ze_library, replay_ze_missing, replay_ze_record_begin, replay_ze_record_table },
	{ .key = "verification", .read = replay_verification_read, .release = replay_verification_release,
	  .record = replay_verification_record },
	{ .key = NULL },
};

const struct replay_section *replay_library_section(const char *which)
{
	for (const struct replay_section *sec = replay_sections; which && sec->key; sec++)
		if (sec->load_error && !strcmp(sec->key, which))
			return sec;
	return NULL;
}
