/* A stand-in libcuda.so.1 that reports being loaded: its constructor creates
 * the file named by DMACONN_TEST_CUDA_MARKER. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void loaded(void)
{
	const char *marker = getenv("DMACONN_TEST_CUDA_MARKER");
	FILE *f = marker ? fopen(marker, "w") : NULL;
	if (f)
		fclose(f);
}

int cuInit(unsigned int flags);
int cuInit(unsigned int flags)
{
	(void)flags;
	return 0;
}
