/* SPDX-License-Identifier: BSD-3-Clause */
#include "nvml_load.h"

#include "../loader.h"

#include <string.h>
#include <strings.h>

/* NVML's own documentation allows dlclose after nvmlShutdown; callers that
 * keep function pointers never close the table while they are in use. */
DC_API_LOADER(struct nvml_api, nvml_api, NVML_ALL_FUNCTIONS, "NVML", "an NVML library")

static const struct dc_code_name nvml_names[] = {
#define NVML_NAME_(sym, value) { value, "NVML_" #sym },
	NVML_RETURN_CODES(NVML_NAME_)
#undef NVML_NAME_
};

const char *nvml_return_name(nvmlReturn_t r)
{
	return dc_code_name(nvml_names, sizeof(nvml_names) / sizeof(nvml_names[0]), r);
}

int nvml_return_parse(const char *name, nvmlReturn_t *out)
{
	if (!strncasecmp(name, "NVML_", 5))
		name += 5;
	for (size_t i = 0; i < sizeof(nvml_names) / sizeof(nvml_names[0]); i++) {
		const char *full = nvml_names[i].name + 5; /* "ERROR_UNKNOWN" / "SUCCESS" */
		const char *bare = strncmp(full, "ERROR_", 6) ? full : full + 6;
		if (!strcasecmp(name, full) || !strcasecmp(name, bare)) {
			*out = (nvmlReturn_t)nvml_names[i].code;
			return 0;
		}
	}
	return -1;
}
