/* SPDX-License-Identifier: BSD-3-Clause */
#include "ze_load.h"

#include "../loader.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

DC_API_LOADER(struct ze_api, ze_api, ZE_FUNCTIONS, "Level Zero", "a Level Zero loader")

static const struct dc_code_name ze_names[] = {
#define ZE_NAME_(name, value) { value, #name },
	ZE_RESULT_CODES(ZE_NAME_)
#undef ZE_NAME_
};

#define ZE_NAMES (sizeof(ze_names) / sizeof(ze_names[0]))

const char *ze_result_name(ze_result_t r)
{
	return dc_code_name(ze_names, ZE_NAMES, (long)r);
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
			*out = (ze_result_t)ze_names[i].code;
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
