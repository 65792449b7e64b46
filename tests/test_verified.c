/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "cuda"/"verified" connection type against a fake CUDA driver:
 *
 *   test_verified FAKE_LIBCUDA HELPER WORKDIR
 *       live: passes, failures of each capability, a pair that hangs, every
 *       way the helper can fail (each must give zeros, never a pass), and
 *       the passive detection, which must not start the helper;
 *   test_verified --replay FILE WORKDIR
 *       under replay: zeros with "not_verified_in_recording", helper never run.
 *
 * WORKDIR is a scratch directory for the marker helper (a script that
 * records that it ran).  NVML is pointed at a missing library, so "cuda"/
 * "p2p" sees no GPU and the helper alone gives the size.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

static const char *fake_vars[] = { "FAKE_CUDA_DEVICES", "FAKE_CUDA_NO_PEER", "FAKE_CUDA_FAIL",
				   "FAKE_CUDA_CORRUPT", "FAKE_CUDA_CRASH", "FAKE_CUDA_HANG",
				   "FAKE_CUDA_HANG_DEVICE", "FAKE_CUDA_NO_DRIVER",
				   "DMACONN_VERIFY_PAIR_TIMEOUT_MS" };
static const char *helper, *libcuda;
static char marker[4096], marker_helper[4096];

/* The factor on wall-clock budgets that the build sets for slow
 * (instrumented) programs: DMACONN_TEST_TIME_SCALE, else 1. */
static int time_scale(void)
{
	const char *s = getenv("DMACONN_TEST_TIME_SCALE");
	int k = s ? atoi(s) : 1;
	return k >= 1 && k <= 100 ? k : 1;
}

/* Every case gives a pair the same budget: 4 s times the build's factor.  A
 * passing pair sets up both devices and copies 64 MiB five times on the CPU:
 * about 0.07 s under ASan on an idle 2-core machine, 1 s with 24 busy
 * loops beside it and up to 12 s with 48. */
static void reset(void)
{
	for (size_t k = 0; k < sizeof(fake_vars) / sizeof(fake_vars[0]); k++)
		unsetenv(fake_vars[k]);
	setenv("DMACONN_VERIFY_HELPER", helper, 1);
	setenv("DMACONN_CUDA_LIBRARY", libcuda, 1);
	char budget[32];
	snprintf(budget, sizeof(budget), "%d", 4000 * time_scale());
	setenv("DMACONN_VERIFY_PAIR_TIMEOUT_MS", budget, 1);
}

static dmaconn_result *verified(void)
{
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "verified", &r), DMACONN_OK);
	return r;
}

static void check_pass_pair(const dmaconn_result *r, int i, int j)
{
	CHECK_INT(dmaconn_result_get(r, i, j), 1);
	CHECK_INT(dmaconn_result_pair_verified(r, i, j), 1);
	CHECK_STR(dmaconn_result_pair_get(r, i, j, DMACONN_PROP_VERIFIED), "pass");
	const char *caps[] = { DMACONN_PROP_READ_VERIFIED, DMACONN_PROP_WRITE_VERIFIED,
			       DMACONN_PROP_ATOMICS_32_VERIFIED, DMACONN_PROP_ATOMICS_64_VERIFIED,
			       DMACONN_PROP_READ_ADVERTISED, DMACONN_PROP_WRITE_ADVERTISED,
			       DMACONN_PROP_ATOMICS_32_ADVERTISED, DMACONN_PROP_ATOMICS_64_ADVERTISED };
	for (size_t k = 0; k < sizeof(caps) / sizeof(caps[0]); k++)
		CHECK_STR(dmaconn_result_pair_get(r, i, j, caps[k]), "yes");
	const char *gbps = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_GBPS);
	CHECK(gbps && atof(gbps) > 0);
	CHECK(dmaconn_result_pair_get(r, i, j, DMACONN_PROP_LATENCY_US) != NULL);
	CHECK(dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON) == NULL);
}

/* Every off-diagonal pair is 0 with this reason code. */
static void check_zeros(const dmaconn_result *r, const char *code)
{
	int n = dmaconn_result_size(r);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			CHECK_INT(dmaconn_result_get(r, i, j), 0);
			CHECK_INT(dmaconn_result_pair_verified(r, i, j), 0);
			if (i == j)
				continue;
			CHECK_STR(dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON), code);
			const char *t = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT);
			CHECK(t && *t);
		}
}

static void test_pass(void)
{
	reset();
	setenv("FAKE_CUDA_DEVICES", "3", 1);
	dmaconn_result *r = verified();
	CHECK_INT(dmaconn_result_size(r), 3);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			if (i != j)
				check_pass_pair(r, i, j);
	CHECK_INT(dmaconn_result_warning_count(r), 0);
	CHECK_STR(dmaconn_result_device_get(r, 1, DMACONN_PROP_PCI_BUS_ID), "0000:1b:00.0");
	dmaconn_result_release(r);
}

static void test_corrupt(void)
{
	reset();
	setenv("FAKE_CUDA_CORRUPT", "1", 1);
	dmaconn_result *r = verified();
	CHECK_INT(dmaconn_result_size(r), 2);
	check_zeros(r, DMACONN_REASON_VERIFY_FAILED);
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_WRITE_VERIFIED), "no");
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_WRITE_ADVERTISED), "yes");
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_VERIFIED), "fail");
	CHECK_CONTAINS(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_REASON_TEXT), "stores");
	CHECK_INT(dmaconn_result_pair_verified(r, 0, 2), 0); /* beyond its devices */
	CHECK_INT(dmaconn_result_pair_verified(r, -1, 0), 0);
	CHECK_INT(dmaconn_result_pair_verified(NULL, 0, 1), 0);
	dmaconn_result_release(r);
}

static void test_no_peer(void)
{
	reset();
	setenv("FAKE_CUDA_NO_PEER", "0-1", 1);
	dmaconn_result *r = verified();
	CHECK_INT(dmaconn_result_get(r, 0, 1), 0);
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_REASON), DMACONN_REASON_NO_PEER);
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_READ_ADVERTISED), "no");
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_READ_VERIFIED), "not_run");
	check_pass_pair(r, 1, 0);
	dmaconn_result_release(r);
}

/* Kernels on GPU 1 hang: its pairs are "hang", the others still answer
 * within the pair budget that reset() sets. */
static void test_hang(void)
{
	reset();
	setenv("FAKE_CUDA_DEVICES", "3", 1);
	setenv("FAKE_CUDA_HANG_DEVICE", "1", 1);
	dmaconn_result *r = verified();
	CHECK_INT(dmaconn_result_size(r), 3);
	for (int j = 0; j < 3; j += 2) {
		CHECK_INT(dmaconn_result_get(r, 1, j), 0);
		CHECK_STR(dmaconn_result_pair_get(r, 1, j, DMACONN_PROP_VERIFIED), "hang");
		CHECK_STR(dmaconn_result_pair_get(r, 1, j, DMACONN_PROP_REASON), DMACONN_REASON_VERIFY_HUNG);
	}
	check_pass_pair(r, 0, 1);
	check_pass_pair(r, 0, 2);
	check_pass_pair(r, 2, 0);
	check_pass_pair(r, 2, 1);
	CHECK(dmaconn_result_warning_count(r) > 0);
	dmaconn_result_release(r);
}

/* A run that checks nothing: zeros (over what the helper saw, if anything)
 * and a warning, never a pass. */
static void check_fail_closed(const char *what)
{
	dmaconn_result *r = verified();
	if (!r)
		return;
	fprintf(stderr, "  fail closed: %s: %d devices, %d warnings\n", what, dmaconn_result_size(r),
		dmaconn_result_warning_count(r));
	check_zeros(r, DMACONN_REASON_VERIFY_FAILED);
	CHECK(dmaconn_result_warning_count(r) > 0);
	dmaconn_result_release(r);
}

static void test_fail_closed(void)
{
	reset();
	setenv("DMACONN_VERIFY_HELPER", "/bin/false", 1);
	check_fail_closed("helper /bin/false");
	setenv("DMACONN_VERIFY_HELPER", "/bin/true", 1);
	check_fail_closed("helper /bin/true (says nothing)");
	setenv("DMACONN_VERIFY_HELPER", "/nonexistent/dmaconn-verify-helper", 1);
	check_fail_closed("helper missing");
	reset();
	setenv("DMACONN_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
	check_fail_closed("no libcuda");
	reset();
	setenv("FAKE_CUDA_NO_DRIVER", "1", 1);
	check_fail_closed("cuInit fails");
	reset();
	setenv("FAKE_CUDA_CRASH", "1", 1);
	dmaconn_result *r = verified();
	CHECK_INT(dmaconn_result_size(r), 2); /* devices were reported before the crash */
	check_zeros(r, DMACONN_REASON_VERIFY_FAILED);
	CHECK_CONTAINS(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_REASON_TEXT), "signal");
	dmaconn_result_release(r);
}

static void write_marker_helper(const char *dir)
{
	snprintf(marker, sizeof(marker), "%s/helper-ran", dir);
	snprintf(marker_helper, sizeof(marker_helper), "%s/marker-helper.sh", dir);
	unlink(marker);
	FILE *f = fopen(marker_helper, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\ntouch '%s'\nexit 1\n", marker);
	fclose(f);
	chmod(marker_helper, 0755);
}

/* Detections other than an explicit one of cuda/verified never run it. */
static void test_passive(void)
{
	reset();
	setenv("DMACONN_VERIFY_HELPER", marker_helper, 1);
	dmaconn_clear_cache();
	dmaconn_device_type types[64];
	const char *conns[64];
	int n = dmaconn_list_detectors(types, conns, 64);
	int seen = 0;
	for (int k = 0; k < n && k < 64; k++) {
		dmaconn_result *r = NULL;
		CHECK_INT(dmaconn_detect_passive(types[k], conns[k], &r), DMACONN_OK);
		if (types[k] == DMACONN_DEVICE_CUDA && !strcmp(conns[k], "verified")) {
			seen = 1;
			check_zeros(r, DMACONN_REASON_NOT_VERIFIED);
		}
		dmaconn_result_release(r);
	}
	CHECK(seen);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "p2p", &r), DMACONN_OK);
	dmaconn_result_release(r);
	CHECK_INT(access(marker, F_OK), -1);

	/* The explicit request runs it; a passive call then gets that result. */
	setenv("DMACONN_VERIFY_HELPER", helper, 1);
	dmaconn_result *v = NULL, *p = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "verified", &v), DMACONN_OK);
	CHECK_INT(dmaconn_result_get(v, 0, 1), 1);
	CHECK_INT(dmaconn_detect_passive(DMACONN_DEVICE_CUDA, "verified", &p), DMACONN_OK);
	CHECK(p == v);
	dmaconn_result_release(v);
	dmaconn_result_release(p);
}

static int run_replay(const char *file, const char *dir)
{
	write_marker_helper(dir);
	setenv("DMACONN_VERIFY_HELPER", marker_helper, 1);
	CHECK_INT(dmaconn_set_replay_file(file), DMACONN_OK);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "verified", &r), DMACONN_OK);
	CHECK(dmaconn_result_size(r) >= 2);
	check_zeros(r, DMACONN_REASON_NOT_RECORDED);
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_REASON_TEXT),
		  "not verified in this recording");
	dmaconn_result_release(r);
	CHECK_INT(access(marker, F_OK), -1);
	dmaconn_shutdown();
	return check_done("test_verified --replay");
}

/* A node whose NVML sees one GPU: nothing to prove, the helper is not
 * started (and nothing is cached, so no later run starts it either). */
static int run_one_gpu(const char *nvml, const char *dir)
{
	write_marker_helper(dir);
	char cache[4200];
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("DMACONN_CACHE_DIR", cache, 1);
	setenv("DMACONN_VERIFY_HELPER", marker_helper, 1);
	setenv("DMACONN_NVML_LIBRARY", nvml, 1);
	setenv("DMACONN_FAKE_NVML_GPUS", "1", 1);
	unsetenv("DMACONN_REPLAY");
	unsetenv("CUDA_VISIBLE_DEVICES");
	for (int k = 0; k < 2; k++) {
		dmaconn_result *r = NULL;
		CHECK_INT(k ? dmaconn_detect(DMACONN_DEVICE_CUDA, "verified", &r)
			    : dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "verified", &r),
			  DMACONN_OK);
		CHECK_INT(dmaconn_result_size(r), 1);
		CHECK_INT(dmaconn_result_get(r, 0, 0), 0);
		CHECK_INT(dmaconn_result_warning_count(r), 0);
		CHECK(dmaconn_result_device_get(r, 0, DMACONN_PROP_UUID) != NULL);
		dmaconn_result_release(r);
		dmaconn_clear_cache();
	}
	CHECK_INT(access(marker, F_OK), -1);
	dmaconn_shutdown();
	return check_done("test_verified --one-gpu");
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--replay"))
		return run_replay(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "--one-gpu"))
		return run_one_gpu(argv[2], argv[3]);
	if (argc != 4 || argv[1][0] != '/' || argv[2][0] != '/') {
		fprintf(stderr, "usage: test_verified /abs/libcuda.so.1 /abs/helper WORKDIR\n"
				"       test_verified --replay FILE WORKDIR\n");
		return 2;
	}
	libcuda = argv[1];
	helper = argv[2];
	write_marker_helper(argv[3]);
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	unsetenv("DMACONN_REPLAY");
	unsetenv("CUDA_VISIBLE_DEVICES");
	test_passive();
	test_pass();
	test_corrupt();
	test_no_peer();
	test_hang();
	test_fail_closed();
	dmaconn_shutdown();
	return check_done("test_verified");
}
