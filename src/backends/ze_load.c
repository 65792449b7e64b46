#include "ze_load.h"

#include "loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int ze_api_bind(struct ze_api *api, void *handle, const char *path, int (*hidden)(const char *symbol),
		char *err, size_t errlen)
{
	memset(api, 0, sizeof(*api));
	const struct dc_symbol syms[] = {
#define ZE_API_SYMBOL_(fn, ret, params, required) DC_SYMBOL_OF(api, fn, required),
		ZE_FUNCTIONS(ZE_API_SYMBOL_)
#undef ZE_API_SYMBOL_
	};
	const char *missing = dc_lib_bind(handle, syms, sizeof(syms) / sizeof(syms[0]), hidden);
	api->handle = handle;
	if (missing) {
		snprintf(err, errlen, "%s lacks %s (not a Level Zero loader?)", path, missing);
		ze_api_close(api);
		return -1;
	}
	return 0;
}

int ze_api_open(struct ze_api *api, const char *path, char *err, size_t errlen)
{
	memset(api, 0, sizeof(*api));
	void *h = dc_lib_open(path, "Level Zero", err, errlen);
	return h ? ze_api_bind(api, h, path, NULL, err, errlen) : -1;
}

void ze_api_close(struct ze_api *api)
{
	if (api->handle)
		dlclose(api->handle);
	memset(api, 0, sizeof(*api));
}

static const struct {
	ze_result_t code;
	const char *name;
} ze_names[] = {
#define ZE_NAME_(name, value) { value, #name },
	ZE_RESULT_CODES(ZE_NAME_)
#undef ZE_NAME_
};

#define ZE_NAMES (sizeof(ze_names) / sizeof(ze_names[0]))

const char *ze_result_name(ze_result_t r)
{
	for (size_t i = 0; i < ZE_NAMES; i++)
		if (ze_names[i].code == r)
			return ze_names[i].name;
	return NULL;
}

/* "ZE_RESULT_X" -> "X"; "ERROR_X" -> "X". */
static const char *shorten(const char *full)
{
	const char *s = full + strlen("ZE_RESULT_");
	return strncmp(s, "ERROR_", 6) ? s : s + 6;
}

const char *ze_result_short_name(ze_result_t r)
{
	const char *n = ze_result_name(r);
	return n ? shorten(n) : NULL;
}

int ze_result_parse(const char *name, ze_result_t *out)
{
	for (size_t i = 0; name && i < ZE_NAMES; i++) {
		const char *full = ze_names[i].name, *mid = full + strlen("ZE_RESULT_");
		if (!strcasecmp(name, full) || !strcasecmp(name, mid) || !strcasecmp(name, shorten(full))) {
			*out = ze_names[i].code;
			return 0;
		}
	}
	return -1;
}

const char *ze_result_describe(ze_result_t r, char *buf, size_t len)
{
	const char *n = ze_result_name(r);
	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "ze_result_t 0x%x", (unsigned int)r);
	return buf;
}
