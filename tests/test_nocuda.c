/*
 * Detection never loads CUDA.  The test runs with a fake libcuda.so.1
 * first on the library path whose constructor leaves a marker;
 * after detecting, neither the marker nor any CUDA library in the process
 * map may exist.  Loading the fake at the end proves the test can fail.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

/* Whether a CUDA driver or runtime library is mapped; prints the lines. */
static int cuda_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	int found = 0;
	while (f && fgets(line, sizeof(line), f)) {
		const char *base = strrchr(line, '/');
		if (base && (!strncmp(base, "/libcuda.so", 11) || !strncmp(base, "/libcudart.so", 13))) {
			found = 1;
			fprintf(stderr, "mapped: %s", line);
		}
	}
	if (f)
		fclose(f);
	return found;
}

int main(void)
{
	const char *marker = getenv("DMACONN_TEST_CUDA_MARKER");
	CHECK(marker != NULL);
	if (!marker)
		return check_done("test_nocuda");
	unlink(marker);

	dmaconn_device_type types[16];
	const char *conns[16];
	int count = dmaconn_list_detectors(types, conns, 16);
	for (int i = 0; i < count && i < 16; i++) {
		dmaconn_result *r = NULL;
		CHECK_INT(dmaconn_detect(types[i], conns[i], &r), DMACONN_OK);
		dmaconn_result_release(r);
	}
	CHECK(access(marker, F_OK) != 0);
	CHECK(!cuda_mapped());

	/* Positive control: the fake is found by soname and reports itself. */
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	CHECK(h != NULL);
	CHECK(access(marker, F_OK) == 0);
	CHECK(cuda_mapped());
	if (h)
		dlclose(h);
	unlink(marker);
	dmaconn_shutdown();
	return check_done("test_nocuda");
}
