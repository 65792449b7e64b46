/* SPDX-License-Identifier: BSD-3-Clause */
#include "loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

const char *dc_lib_bind(void *handle, const struct dc_symbol *syms, size_t n,
			int (*hidden)(const char *symbol))
{
	for (size_t i = 0; i < n; i++) {
		void *sym = hidden && hidden(syms[i].name) ? NULL : dlsym(handle, syms[i].name);
		if (!sym && syms[i].fallback && !(hidden && hidden(syms[i].fallback)))
			sym = dlsym(handle, syms[i].fallback);
		if (!sym && syms[i].required) {
			void *none = NULL;
			for (size_t k = 0; k < n; k++)
				memcpy(syms[k].slot, &none, sizeof(none));
			return syms[i].name;
		}
		/* Through a void pointer: ISO C has no cast from object to
		 * function pointer, POSIX guarantees the representation. */
		memcpy(syms[i].slot, &sym, sizeof(sym));
	}
	return NULL;
}

void *dc_lib_open(const char *path, const char *what, char *err, size_t errlen)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		snprintf(err, errlen, "cannot load %s: %s", what, why ? why : path);
	}
	return h;
}

int dc_lib_bind_or_close(void *handle, const struct dc_symbol *syms, size_t n,
			 int (*hidden)(const char *symbol), const char *path, const char *kind, char *err,
			 size_t errlen)
{
	const char *missing = dc_lib_bind(handle, syms, n, hidden);
	if (!missing)
		return 0;
	snprintf(err, errlen, "%s lacks %s (not %s?)", path, missing, kind);
	dlclose(handle);
	return -1;
}

void dc_lib_close(void *handle)
{
	if (handle)
		dlclose(handle);
}

const char *dc_code_name(const struct dc_code_name *table, size_t n, long code)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].code == code)
			return table[i].name;
	return NULL;
}
