/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading NVML (or a stand-in with the same ABI) and naming its return codes. */
#ifndef DMACONN_NVML_LOAD_H
#define DMACONN_NVML_LOAD_H

#include <stddef.h>

#include "nvml_api.h"

struct nvml_api {
	void *handle;
#define NVML_API_MEMBER_(name, ret, params, required) ret(*name) params;
	NVML_ALL_FUNCTIONS(NVML_API_MEMBER_)
#undef NVML_API_MEMBER_
};

/*
 * dlopens `path` (a soname or an absolute path) and resolves every function
 * of NVML_ALL_FUNCTIONS.  `hidden`, when not NULL, names symbols to treat as
 * missing.  Returns 0, or -1 with a one-line reason in err (library not
 * found, or a required symbol missing); the table is then closed.
 */
int nvml_api_open(struct nvml_api *api, const char *path, int (*hidden)(const char *symbol),
		  char *err, size_t errlen);
/* Resolves the table from an already open handle (which it takes over). */
int nvml_api_bind(struct nvml_api *api, void *handle, const char *path,
		  int (*hidden)(const char *symbol), char *err, size_t errlen);
void nvml_api_close(struct nvml_api *api);

/* "NVML_ERROR_UNKNOWN", "NVML_SUCCESS", or NULL for a code NVML does not define. */
const char *nvml_return_name(nvmlReturn_t r);
/* Accepts "NVML_ERROR_UNKNOWN", "ERROR_UNKNOWN", "UNKNOWN", "SUCCESS", ... Returns 0 or -1. */
int nvml_return_parse(const char *name, nvmlReturn_t *out);

#endif
