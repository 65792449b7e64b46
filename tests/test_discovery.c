/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Each vendor is discovered once per process: a bare run of every built-in
 * detector asks each vendor library once (counted by count_vendor.c, the
 * replay component's stand-in), dmaconn_detect_fresh() discovers again and
 * dmaconn_clear_cache() forgets what was discovered.
 *
 * usage: test_discovery REPLAY COUNTING-COMPONENT VENDOR...
 * where each VENDOR ("nvml", "kfd", "level_zero") is one the replay file
 * lets the detectors reach.
 */
#include <stdlib.h>

#include "check.h"
#include "counting.h"
#include "dmaconn.h"

static int (*calls)(const char *vendor);

static void detect_all(void)
{
	dmaconn_device_type types[16];
	const char *conns[16];
	int n = dmaconn_list_detectors(types, conns, 16);
	CHECK_INT(n, 8);
	for (int k = 0; k < n && k < 16; k++) {
		dmaconn_result *r = NULL;
		/* Passive: cuda/verified must not run its helper here. */
		CHECK_INT(dmaconn_detect_passive(types[k], conns[k], &r), DMACONN_OK);
		dmaconn_result_release(r);
	}
}

static dmaconn_device_type type_of(const char *vendor)
{
	return !strcmp(vendor, "nvml") ? DMACONN_DEVICE_CUDA
	       : !strcmp(vendor, "kfd") ? DMACONN_DEVICE_ROCM : DMACONN_DEVICE_XPU;
}

int main(int argc, char **argv)
{
	calls = counting_setup(argc, argv, 4, "test_discovery REPLAY COUNTING-COMPONENT VENDOR...");
	CHECK(calls != NULL);
	if (!calls)
		return check_done("discovery");
	detect_all();

	for (int v = 3; v < argc; v++) {
		const char *vendor = argv[v];
		/* Six detectors, two per vendor: one discovery each. */
		CHECK_INT(calls(vendor), 1);
	}
	/* Cached results: nothing asked again. */
	detect_all();
	for (int v = 3; v < argc; v++)
		CHECK_INT(calls(argv[v]), 1);

	/* A fresh detection discovers again, its vendor only. */
	for (int v = 3; v < argc; v++) {
		dmaconn_result *r = NULL;
		int before[8];
		for (int w = 3; w < argc && w < 11; w++)
			before[w - 3] = calls(argv[w]);
		CHECK_INT(dmaconn_detect_fresh(type_of(argv[v]), "p2p", &r), DMACONN_OK);
		CHECK(dmaconn_result_size(r) > 0);
		dmaconn_result_release(r);
		for (int w = 3; w < argc && w < 11; w++)
			CHECK_INT(calls(argv[w]), before[w - 3] + (w == v));
	}

	/* Clearing the cache forgets the models: the next detections discover
	 * each vendor once more. */
	dmaconn_clear_cache();
	detect_all();
	for (int v = 3; v < argc; v++)
		CHECK_INT(calls(argv[v]), 3);

	dmaconn_shutdown();
	return check_done("discovery");
}
