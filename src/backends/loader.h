/*
 * One loader for every vendor library dmaconn dlopens (NVML, Level Zero,
 * ROCm SMI, the CUDA driver): each library's X-macro table (nvml_api.h,
 * ze_api.h, rocm_smi_api.h, cuda_api.h) becomes an array of dc_symbol, and
 * dc_lib_bind() fills the function pointers from a handle.  Libraries are
 * opened RTLD_LOCAL, never into the global scope.
 */
#ifndef DMACONN_LOADER_H
#define DMACONN_LOADER_H

#include <stddef.h>

struct dc_symbol {
	const char *name;     /* as exported, e.g. "nvmlInit_v2" */
	const char *fallback; /* an older name with the same signature, or NULL */
	void *slot;           /* the function pointer to fill */
	int required;         /* a missing required symbol makes the library unusable */
};

/* One dc_symbol per function of an X(name, ret, params, required) table, for
 * an api struct whose members carry the functions' names. */
#define DC_SYMBOL_OF(api, fn, required) { #fn, NULL, &(api)->fn, (required) }

/*
 * Fills every slot from handle (NULL where the symbol is missing, or where
 * hidden(name) says to treat it as missing).  Returns NULL, or the name of
 * the first required symbol missing (the slots are then all NULL).
 */
const char *dc_lib_bind(void *handle, const struct dc_symbol *syms, size_t n,
			int (*hidden)(const char *symbol));

/* dlopens path (a soname or an absolute path) RTLD_NOW | RTLD_LOCAL; NULL
 * with "cannot load WHAT: <dlerror>" in err. */
void *dc_lib_open(const char *path, const char *what, char *err, size_t errlen);

#endif
