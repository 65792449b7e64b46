/* SPDX-License-Identifier: BSD-3-Clause */
/* A stand-in libcuda.so.1 that reports being loaded: its constructor creates
 * the file named by DMACONN_TEST_CUDA_MARKER, and cuInit creates that name
 * with ".init" appended. */
#include <stdio.h>
#include <stdlib.h>

static void touch(const char *suffix)
{
	const char *marker = getenv("DMACONN_TEST_CUDA_MARKER");
	char path[4096];
	if (!marker || (size_t)snprintf(path, sizeof(path), "%s%s", marker, suffix) >= sizeof(path))
		return;
	FILE *f = fopen(path, "w");
	if (f)
		fclose(f);
}

__attribute__((constructor)) static void loaded(void)
{
	touch("");
}

__attribute__((visibility("default"))) int cuInit(unsigned int flags);
int cuInit(unsigned int flags)
{
	(void)flags;
	touch(".init");
	return 0;
}
