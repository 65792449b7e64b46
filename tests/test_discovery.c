/*
 * Each vendor is discovered once per process: a bare run of every built-in
 * detector asks each vendor library once (counted by count_vendor.c, the
 * replay component's stand-in), and dmaconn_detect_fresh() discovers again.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "check.h"
#include "dmaconn.h"

static int (*calls)(const char *vendor);

static void detect_all(int fresh)
{
	dmaconn_device_type types[16];
	const char *conns[16];
	int n = dmaconn_list_detectors(types, conns, 16);
	CHECK_INT(n, 6);
	for (int k = 0; k < n && k < 16; k++) {
		dmaconn_result *r = NULL;
		int rc = fresh ? dmaconn_detect_fresh(types[k], conns[k], &r) : dmaconn_detect(types[k], conns[k], &r);
		CHECK_INT(rc, DMACONN_OK);
		dmaconn_result_release(r);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_discovery REPLAY COUNTING-COMPONENT\n");
		return 2;
	}
	setenv("DMACONN_REPLAY", argv[1], 1);
	setenv("DMACONN_REPLAY_LIBRARY", argv[2], 1);
	setenv("DMACONN_QUIET", "1", 1);

	detect_all(0);
	void *h = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	void *sym = h ? dlsym(h, "dmaconn_test_calls") : NULL;
	CHECK(sym != NULL);
	if (!sym)
		return check_done("discovery");
	memcpy(&calls, &sym, sizeof(calls));

	/* Six detectors, two per vendor: one discovery each. */
	CHECK_INT(calls("nvml"), 1);
	CHECK_INT(calls("kfd"), 1);

	/* Cached results: nothing asked again. */
	detect_all(0);
	CHECK_INT(calls("nvml"), 1);
	CHECK_INT(calls("kfd"), 1);

	/* A fresh detection discovers again, once per detector asked. */
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "p2p", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_size(r), 2);
	dmaconn_result_release(r);
	CHECK_INT(calls("nvml"), 2);
	CHECK_INT(dmaconn_detect_fresh(DMACONN_DEVICE_ROCM, "p2p", &r), DMACONN_OK);
	dmaconn_result_release(r);
	CHECK_INT(calls("kfd"), 2);

	/* Clearing the cache forgets the model: the next detection discovers. */
	dmaconn_clear_cache();
	detect_all(0);
	CHECK_INT(calls("nvml"), 3);
	CHECK_INT(calls("kfd"), 3);

	dlclose(h);
	dmaconn_shutdown();
	return check_done("discovery");
}
