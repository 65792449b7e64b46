#include "nvml_load.h"

#include "loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int nvml_api_bind(struct nvml_api *api, void *handle, const char *path,
		  int (*hidden)(const char *symbol), char *err, size_t errlen)
{
	memset(api, 0, sizeof(*api));
	const struct dc_symbol syms[] = {
#define NVML_API_SYMBOL_(fn, ret, params, required) DC_SYMBOL_OF(api, fn, required),
		NVML_ALL_FUNCTIONS(NVML_API_SYMBOL_)
#undef NVML_API_SYMBOL_
	};
	const char *missing = dc_lib_bind(handle, syms, sizeof(syms) / sizeof(syms[0]), hidden);
	api->handle = handle;
	if (missing) {
		snprintf(err, errlen, "%s lacks %s (not an NVML library?)", path, missing);
		nvml_api_close(api);
		return -1;
	}
	return 0;
}

int nvml_api_open(struct nvml_api *api, const char *path, int (*hidden)(const char *symbol),
		  char *err, size_t errlen)
{
	memset(api, 0, sizeof(*api));
	void *h = dc_lib_open(path, "NVML", err, errlen);
	return h ? nvml_api_bind(api, h, path, hidden, err, errlen) : -1;
}

void nvml_api_close(struct nvml_api *api)
{
	/* NVML's own documentation allows dlclose after nvmlShutdown; callers
	 * that keep function pointers never get here while they are in use. */
	if (api->handle)
		dlclose(api->handle);
	memset(api, 0, sizeof(*api));
}

static const struct {
	nvmlReturn_t code;
	const char *name;
} nvml_names[] = {
#define NVML_NAME_(sym, value) { value, "NVML_" #sym },
	NVML_RETURN_CODES(NVML_NAME_)
#undef NVML_NAME_
};

const char *nvml_return_name(nvmlReturn_t r)
{
	for (size_t i = 0; i < sizeof(nvml_names) / sizeof(nvml_names[0]); i++)
		if (nvml_names[i].code == r)
			return nvml_names[i].name;
	return NULL;
}

int nvml_return_parse(const char *name, nvmlReturn_t *out)
{
	if (!strncasecmp(name, "NVML_", 5))
		name += 5;
	for (size_t i = 0; i < sizeof(nvml_names) / sizeof(nvml_names[0]); i++) {
		const char *full = nvml_names[i].name + 5; /* "ERROR_UNKNOWN" / "SUCCESS" */
		const char *bare = strncmp(full, "ERROR_", 6) ? full : full + 6;
		if (!strcasecmp(name, full) || !strcasecmp(name, bare)) {
			*out = nvml_names[i].code;
			return 0;
		}
	}
	return -1;
}
