/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading the Level Zero loader (or a stand-in with the same ABI) and naming
 * its result codes; shared by the core and the replay component. */
#ifndef DMACONN_ZE_LOAD_H
#define DMACONN_ZE_LOAD_H

#include <stddef.h>

#include "ze_api.h"

#define ZE_LOADER_SONAME "libze_loader.so.1"

struct ze_api {
	void *handle;
#define ZE_API_MEMBER_(name, ret, params, required) ret(*name) params;
	ZE_FUNCTIONS(ZE_API_MEMBER_)
#undef ZE_API_MEMBER_
};

/*
 * Resolves every function of ZE_FUNCTIONS from `handle` (taken over: closed
 * on failure and by ze_api_close).  `hidden`, when not NULL, names symbols to
 * treat as missing.  Returns 0, or -1 with a one-line reason in err (a
 * required symbol missing; `path` names the library in it).
 */
int ze_api_bind(struct ze_api *api, void *handle, const char *path, int (*hidden)(const char *symbol),
		char *err, size_t errlen);
/* dlopens `path` (a soname or an absolute path) and binds it (hidden as for
 * ze_api_bind); -1 with the loader's message ("cannot load Level Zero: ...")
 * when it does not load. */
int ze_api_open(struct ze_api *api, const char *path, int (*hidden)(const char *symbol), char *err,
		size_t errlen);
void ze_api_close(struct ze_api *api);

/* "ZE_RESULT_ERROR_DEVICE_LOST", or NULL for a code API 1.4 does not define. */
const char *ze_result_name(ze_result_t r);
/* The name without "ZE_RESULT_" and without a leading "ERROR_", as topology
 * files write it: "DEVICE_LOST", "SUCCESS", "EXP_ERROR_DEVICE_IS_NOT_VERTEX";
 * NULL for an unknown code. */
const char *ze_result_short_name(ze_result_t r);
/* Accepts the full name, or it without "ZE_RESULT_" or "ZE_RESULT_ERROR_"
 * (case-insensitive).  Returns 0, or -1. */
int ze_result_parse(const char *name, ze_result_t *out);
/* The full name, or "ze_result_t 0x%x" for unknown codes, into buf. */
const char *ze_result_describe(ze_result_t r, char *buf, size_t len);

#endif
