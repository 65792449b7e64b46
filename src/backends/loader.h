/* SPDX-License-Identifier: BSD-3-Clause */
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

/*
 * dc_lib_bind() for a library dlopened from path: 0, or -1 with "PATH lacks
 * SYMBOL (not KIND?)" in err, the handle then closed (the slots all NULL).
 */
int dc_lib_bind_or_close(void *handle, const struct dc_symbol *syms, size_t n,
			 int (*hidden)(const char *symbol), const char *path, const char *kind, char *err,
			 size_t errlen);

/* dlcloses handle unless NULL. */
void dc_lib_close(void *handle);

/* A dc_symbol of an X(name, ret, params, required) table for `api`. */
#define DC_API_SYMBOL_(fn, ret, params, required) DC_SYMBOL_OF(api, fn, required),

/*
 * The bind, open and close functions of a vendor table: `type` holds `void
 * *handle` and one function pointer per entry of the X-macro `functions`;
 * what names the library in "cannot load WHAT: ...", kind in "PATH lacks
 * SYMBOL (not KIND?)".  nvml_load.h and ze_load.h declare what they do.
 */
#define DC_API_LOADER(type, prefix, functions, what, kind)                                                \
	int prefix##_bind(type *api, void *handle, const char *path, int (*hidden)(const char *symbol), \
			  char *err, size_t errlen)                                                     \
	{                                                                                               \
		memset(api, 0, sizeof(*api));                                                           \
		const struct dc_symbol syms[] = { functions(DC_API_SYMBOL_) };                          \
		if (dc_lib_bind_or_close(handle, syms, sizeof(syms) / sizeof(syms[0]), hidden, path,    \
					 kind, err, errlen) != 0)                                       \
			return -1;                                                                      \
		api->handle = handle;                                                                   \
		return 0;                                                                               \
	}                                                                                               \
	int prefix##_open(type *api, const char *path, int (*hidden)(const char *symbol), char *err,    \
			  size_t errlen)                                                                \
	{                                                                                               \
		memset(api, 0, sizeof(*api));                                                           \
		void *h = dc_lib_open(path, what, err, errlen);                                         \
		return h ? prefix##_bind(api, h, path, hidden, err, errlen) : -1;                       \
	}                                                                                               \
	void prefix##_close(type *api)                                                                  \
	{                                                                                               \
		dc_lib_close(api->handle);                                                              \
		memset(api, 0, sizeof(*api));                                                           \
	}

/* A vendor's result code and its name, as the X-macro tables list them. */
struct dc_code_name {
	long code;
	const char *name;
};

/* The name of code in table (n entries), or NULL. */
const char *dc_code_name(const struct dc_code_name *table, size_t n, long code);

#endif
