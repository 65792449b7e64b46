/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_verify() against a fake CUDA driver, no GPU needed:
 *
 *   test_verify FAKE_LIBCUDA HELPER
 *
 * FAKE_LIBCUDA is the absolute path of tests/fake_cuda_driver.c built as
 * libcuda.so.1 (in a directory of its own), HELPER the built
 * dmaconn-verify-helper.  Each scenario sets the fake's FAKE_CUDA_* variables
 * with setenv(); the helper inherits the environment when it is spawned.
 *
 * NVML is pointed at a missing library and sysfs at a tree without NVIDIA
 * devices, so that the "cuda"/"p2p" detector, when the core has it, sees no
 * GPU and the NVML cross-check is skipped: warnings then come from the
 * functional check alone.  The cross-check itself is tested against the
 * h200x2 replay when the core can replay it, and skipped otherwise.
 *
 *   test_verify --real [HELPER]
 *
 * runs on a GPU machine against the real driver and NVML: every pair must
 * pass or report no peer access, with no warnings, and the matrix is printed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

#define MAX_MSGS 64
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char *msgs[MAX_MSGS];
static int nmsgs;

static void on_warning(const char *message, void *user_data)
{
	(void)user_data;
	pthread_mutex_lock(&msg_lock);
	if (nmsgs < MAX_MSGS)
		msgs[nmsgs++] = strdup(message);
	pthread_mutex_unlock(&msg_lock);
}

static void clear_msgs(void)
{
	pthread_mutex_lock(&msg_lock);
	for (int k = 0; k < nmsgs; k++)
		free(msgs[k]);
	nmsgs = 0;
	pthread_mutex_unlock(&msg_lock);
}

static const char *fake_vars[] = { "FAKE_CUDA_DEVICES", "FAKE_CUDA_NO_PEER", "FAKE_CUDA_FAIL",
				   "FAKE_CUDA_CORRUPT", "FAKE_CUDA_CRASH", "FAKE_CUDA_HANG",
				   "FAKE_CUDA_NO_DRIVER", "FAKE_CUDA_PCI", "FAKE_CUDA_CRASH_AT_EXIT",
				   "FAKE_CUDA_GRANDCHILD" };
static const char *helper_path;

/* A clean environment for the next scenario. */
static void reset(void)
{
	for (size_t k = 0; k < sizeof(fake_vars) / sizeof(fake_vars[0]); k++)
		unsetenv(fake_vars[k]);
	setenv("DMACONN_VERIFY_HELPER", helper_path, 1);
	clear_msgs();
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static dmaconn_verify_result *verify(int timeout_ms)
{
	dmaconn_verify_result *v = NULL;
	CHECK_INT(dmaconn_verify(DMACONN_DEVICE_CUDA, timeout_ms, &v), DMACONN_OK);
	CHECK(v != NULL);
	return v;
}

/* The warning count, and the warnings equal what reached the sink. */
static void check_warnings(const dmaconn_verify_result *v, int expected)
{
	CHECK_INT(dmaconn_verify_warning_count(v), expected);
	pthread_mutex_lock(&msg_lock);
	CHECK_INT(nmsgs, dmaconn_verify_warning_count(v));
	for (int k = 0; k < nmsgs && k < dmaconn_verify_warning_count(v); k++)
		CHECK_STR(msgs[k], dmaconn_verify_warning(v, k));
	pthread_mutex_unlock(&msg_lock);
}

static void check_all_pass(const dmaconn_verify_result *v, int n)
{
	CHECK_INT(dmaconn_verify_size(v), n);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j) {
				CHECK_INT(dmaconn_verify_status_of(v, i, j), DMACONN_VERIFY_NO_PEER);
				CHECK_INT(dmaconn_verify_pair_property_count(v, i, j), 0);
				continue;
			}
			CHECK_INT(dmaconn_verify_status_of(v, i, j), DMACONN_VERIFY_PASS);
			CHECK_STR(dmaconn_verify_pair_get(v, i, j, "can_access_peer"), "1");
			CHECK_STR(dmaconn_verify_pair_get(v, i, j, "access_supported"), "1");
			CHECK_STR(dmaconn_verify_pair_get(v, i, j, "native_atomics"), "1");
			CHECK_STR(dmaconn_verify_pair_get(v, i, j, "performance_rank"), "0");
			const char *gbps = dmaconn_verify_pair_get(v, i, j, "gbps");
			const char *lat = dmaconn_verify_pair_get(v, i, j, "latency_us");
			CHECK(gbps && atof(gbps) > 0);
			CHECK(lat && atof(lat) >= 0);
			CHECK(dmaconn_verify_pair_get(v, i, j, "reason") == NULL);
		}
	}
}

/* Every pair fails and its reason contains `needle`. */
static void check_all_fail(const dmaconn_verify_result *v, const char *needle)
{
	int n = dmaconn_verify_size(v);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j) {
				CHECK_INT(dmaconn_verify_status_of(v, i, j), DMACONN_VERIFY_FAIL);
				CHECK_CONTAINS(dmaconn_verify_pair_get(v, i, j, "reason"), needle);
			}
}

static void test_arguments(void)
{
	dmaconn_verify_result *v = (dmaconn_verify_result *)&v;
	CHECK_INT(dmaconn_verify(DMACONN_DEVICE_ROCM, 0, &v), DMACONN_EUNAVAILABLE);
	CHECK(v == NULL);
	CHECK_CONTAINS(dmaconn_last_error(), "rocm");
	CHECK_INT(dmaconn_verify(DMACONN_DEVICE_XPU, 0, &v), DMACONN_EUNAVAILABLE);
	CHECK_INT(dmaconn_verify((dmaconn_device_type)99, 0, &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_verify(DMACONN_DEVICE_CUDA, 0, NULL), DMACONN_EINVAL);
	CHECK_INT(dmaconn_verify(DMACONN_DEVICE_CUDA, -1, &v), DMACONN_EINVAL);
	CHECK(v == NULL);
	dmaconn_verify_result_free(NULL);
	CHECK_INT(dmaconn_verify_size(NULL), 0);
	CHECK_INT(dmaconn_verify_status_of(NULL, 0, 1), DMACONN_VERIFY_FAIL);
	CHECK(dmaconn_verify_pair_get(NULL, 0, 1, "reason") == NULL);
	CHECK_INT(dmaconn_verify_pair_property_count(NULL, 0, 1), 0);
	CHECK(dmaconn_verify_pair_property_key(NULL, 0, 1, 0) == NULL);
	CHECK(dmaconn_verify_pair_property_value(NULL, 0, 1, 0) == NULL);
	CHECK_INT(dmaconn_verify_warning_count(NULL), 0);
	CHECK(dmaconn_verify_warning(NULL, 0) == NULL);
}

static void test_pass(int n)
{
	reset();
	char count[16];
	snprintf(count, sizeof(count), "%d", n);
	setenv("FAKE_CUDA_DEVICES", count, 1);
	dmaconn_verify_result *v = verify(0);
	check_all_pass(v, n);
	check_warnings(v, 0);
	CHECK_STR(dmaconn_last_error(), "");
	/* Properties in the helper's order; accessors bounded. */
	CHECK_STR(dmaconn_verify_pair_property_key(v, 0, 1, 0), "can_access_peer");
	CHECK_STR(dmaconn_verify_pair_property_value(v, 0, 1, 0), "1");
	int count01 = dmaconn_verify_pair_property_count(v, 0, 1);
	CHECK_INT(count01, 10);
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "verified_read"), "1");
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "verified_atomics_64"), "1");
	CHECK(dmaconn_verify_pair_property_key(v, 0, 1, count01) == NULL);
	CHECK(dmaconn_verify_pair_property_key(v, 0, 1, -1) == NULL);
	CHECK_INT(dmaconn_verify_status_of(v, 0, n), DMACONN_VERIFY_FAIL);
	CHECK_INT(dmaconn_verify_status_of(v, -1, 0), DMACONN_VERIFY_FAIL);
	CHECK(dmaconn_verify_pair_get(v, n, 0, "gbps") == NULL);
	CHECK(dmaconn_verify_warning(v, 0) == NULL);
	dmaconn_verify_result_free(v);
}

static void test_no_peer(void)
{
	reset();
	setenv("FAKE_CUDA_DEVICES", "3", 1);
	setenv("FAKE_CUDA_NO_PEER", "0-1,2-0", 1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 3);
	CHECK_INT(dmaconn_verify_status_of(v, 0, 1), DMACONN_VERIFY_NO_PEER);
	CHECK_INT(dmaconn_verify_status_of(v, 2, 0), DMACONN_VERIFY_NO_PEER);
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "can_access_peer"), "0");
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "access_supported"), "0");
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 0, 1, "reason"), "no peer access");
	CHECK(dmaconn_verify_pair_get(v, 0, 1, "gbps") == NULL);
	CHECK_INT(dmaconn_verify_status_of(v, 1, 0), DMACONN_VERIFY_PASS);
	CHECK_INT(dmaconn_verify_status_of(v, 0, 2), DMACONN_VERIFY_PASS);
	CHECK_INT(dmaconn_verify_status_of(v, 1, 2), DMACONN_VERIFY_PASS);
	CHECK_INT(dmaconn_verify_status_of(v, 2, 1), DMACONN_VERIFY_PASS);
	check_warnings(v, 0);
	dmaconn_verify_result_free(v);
}

/* dmaconn_verify_run(): the verification as a result, pair for pair what
 * dmaconn_verify() says, with "status" first; its warnings sent once. */
static void test_run_as_result(void)
{
	dmaconn_result *r = (dmaconn_result *)&r;
	CHECK_INT(dmaconn_verify_run(DMACONN_DEVICE_ROCM, 0, &r), DMACONN_EUNAVAILABLE);
	CHECK(r == NULL);
	CHECK_INT(dmaconn_verify_run(DMACONN_DEVICE_CUDA, 0, NULL), DMACONN_EINVAL);
	static const char *const names[] = { "pass", "fail", "no_peer" };
	for (int scenario = 0; scenario < 2; scenario++) {
		reset();
		/* Two pairs without peer access; a node without a driver. */
		setenv("FAKE_CUDA_DEVICES", "3", 1);
		setenv(scenario ? "FAKE_CUDA_NO_DRIVER" : "FAKE_CUDA_NO_PEER", scenario ? "1" : "0-1,2-0", 1);
		dmaconn_verify_result *v = verify(0);
		int sent = nmsgs;
		CHECK_INT(dmaconn_verify_run(DMACONN_DEVICE_CUDA, 0, &r), DMACONN_OK);
		CHECK_INT(nmsgs, 2 * sent); /* once for each run */
		CHECK_STR(dmaconn_result_connection_type(r), "verify");
		CHECK_INT(dmaconn_result_device_type(r), DMACONN_DEVICE_CUDA);
		int n = dmaconn_verify_size(v);
		CHECK_INT(dmaconn_result_size(r), n);
		CHECK_INT(n, scenario ? 0 : 3);
		for (int i = 0; i < n; i++) {
			CHECK(dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID) != NULL);
			for (int j = 0; j < n; j++) {
				if (i == j) {
					CHECK_INT(dmaconn_result_pair_property_count(r, i, j), 0);
					continue;
				}
				dmaconn_verify_status st = dmaconn_verify_status_of(v, i, j);
				CHECK_INT(dmaconn_result_get(r, i, j), st == DMACONN_VERIFY_PASS);
				CHECK_STR(dmaconn_result_pair_property_key(r, i, j, 0), "status");
				CHECK_STR(dmaconn_result_pair_property_value(r, i, j, 0), names[st]);
				int count = dmaconn_verify_pair_property_count(v, i, j);
				CHECK_INT(dmaconn_result_pair_property_count(r, i, j), count + 1);
				/* The same keys in the same order, the same values but
				 * what each run measured. */
				for (int k = 0; k < count; k++) {
					const char *key = dmaconn_verify_pair_property_key(v, i, j, k);
					CHECK_STR(dmaconn_result_pair_property_key(r, i, j, k + 1), key);
					if (strcmp(key, "gbps") && strcmp(key, "latency_us"))
						CHECK_STR(dmaconn_result_pair_property_value(r, i, j, k + 1),
							  dmaconn_verify_pair_property_value(v, i, j, k));
				}
			}
		}
		if (!scenario)
			CHECK_STR(dmaconn_result_pair_get(r, 0, 1, "status"), "no_peer");
		CHECK_INT(dmaconn_result_warning_count(r), scenario ? 1 : 0);
		CHECK_INT(dmaconn_result_warning_count(r), dmaconn_verify_warning_count(v));
		for (int k = 0; k < dmaconn_verify_warning_count(v); k++)
			CHECK_STR(dmaconn_result_warning(r, k), dmaconn_verify_warning(v, k));
		dmaconn_result_release(r);
		dmaconn_verify_result_free(v);
	}
}

static void test_no_driver(void)
{
	reset();
	setenv("FAKE_CUDA_NO_DRIVER", "1", 1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 0);
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "cuInit");
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "CUDA_ERROR_NO_DEVICE");
	CHECK_INT(dmaconn_verify_status_of(v, 0, 1), DMACONN_VERIFY_FAIL);
	dmaconn_verify_result_free(v);
}

static void test_access_denied(void)
{
	reset();
	setenv("FAKE_CUDA_FAIL", "cuCtxEnablePeerAccess:0", 1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 2);
	CHECK_INT(dmaconn_verify_status_of(v, 0, 1), DMACONN_VERIFY_FAIL);
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 0, 1, "reason"), "cuCtxEnablePeerAccess");
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 0, 1, "reason"), "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED");
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "can_access_peer"), "1");
	CHECK_INT(dmaconn_verify_status_of(v, 1, 0), DMACONN_VERIFY_PASS);
	check_warnings(v, 0);
	dmaconn_verify_result_free(v);

	/* A failing launch leaves the device usable for the next pair. */
	reset();
	setenv("FAKE_CUDA_DEVICES", "3", 1);
	setenv("FAKE_CUDA_FAIL", "cuLaunchKernel:1", 1);
	v = verify(0);
	CHECK_INT(dmaconn_verify_status_of(v, 1, 0), DMACONN_VERIFY_FAIL);
	CHECK_INT(dmaconn_verify_status_of(v, 1, 2), DMACONN_VERIFY_FAIL);
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 1, 2, "reason"), "cuLaunchKernel");
	CHECK_INT(dmaconn_verify_status_of(v, 0, 1), DMACONN_VERIFY_PASS);
	CHECK_INT(dmaconn_verify_status_of(v, 2, 1), DMACONN_VERIFY_PASS);
	CHECK_INT(dmaconn_verify_status_of(v, 0, 2), DMACONN_VERIFY_PASS);
	dmaconn_verify_result_free(v);
}

static void test_corrupt(void)
{
	reset();
	setenv("FAKE_CUDA_CORRUPT", "1", 1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 2);
	check_all_fail(v, "stores: 1 of 1024 values");
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 0, 1, "reason"), "first at 7");
	check_warnings(v, 0);
	dmaconn_verify_result_free(v);
}

static void test_crash(void)
{
	reset();
	setenv("FAKE_CUDA_CRASH", "1", 1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 2); /* its device records came first */
	check_all_fail(v, "killed by signal");
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 0, 1, "reason"), "SIGABRT");
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "signal");
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "every pair is marked failed");
	dmaconn_verify_result_free(v);
}

static void test_hang(void)
{
	reset();
	setenv("FAKE_CUDA_HANG", "1", 1);
	double t0 = now_s();
	dmaconn_verify_result *v = verify(2000);
	double elapsed = now_s() - t0;
	CHECK(elapsed >= 1.9);
	CHECK(elapsed < 10);
	CHECK_INT(dmaconn_verify_size(v), 2);
	check_all_fail(v, "timed out after 2000 ms");
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "timed out");
	dmaconn_verify_result_free(v);
}

static void test_missing_helper(void)
{
	reset();
	setenv("DMACONN_VERIFY_HELPER", "/nonexistent/dmaconn-verify-helper", 1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 0);
	CHECK_INT(dmaconn_verify_status_of(v, 0, 1), DMACONN_VERIFY_FAIL);
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "/nonexistent/dmaconn-verify-helper");
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "No such file");
	dmaconn_verify_result_free(v);

	reset();
	setenv("DMACONN_VERIFY_HELPER", "dmaconn-verify-helper", 1);
	v = verify(0);
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "absolute path");
	dmaconn_verify_result_free(v);

	/* A helper that exits non-zero without a word. */
	const char *falses[] = { "/bin/false", "/usr/bin/false" };
	for (size_t k = 0; k < 2; k++) {
		if (access(falses[k], X_OK) != 0)
			continue;
		reset();
		setenv("DMACONN_VERIFY_HELPER", falses[k], 1);
		v = verify(0);
		CHECK_INT(dmaconn_verify_size(v), 0);
		check_warnings(v, 1);
		CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "exited with status 1");
		dmaconn_verify_result_free(v);
		break;
	}
}

/* Helpers written as shell scripts: what the parser makes of odd output. */
static char tmpdir[256];

static const char *script(const char *name, const char *body)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return "/nonexistent";
	fprintf(f, "#!/bin/sh\n%s", body);
	fclose(f);
	chmod(path, 0700);
	return path;
}

static void test_protocol(void)
{
	char tmpl[] = "/tmp/dmaconn-verify-test-XXXXXX";
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/dmaconn-verify-test-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
		CHECK(mkdtemp(tmpdir) != NULL);
	}

	/* Unknown records and members, typed values, a pair not reported.
	 * Records are JSON lines (the protocol in tools/verify_helper.c),
	 * written by a quoted here-document: the shell interprets nothing. */
	reset();
	setenv("DMACONN_VERIFY_HELPER",
	       script("ok.sh", "cat <<'EOF'\n"
			       "{\"record\":\"future\",\"x\":{\"y\":[1]}}\n"
			       "{\"record\":\"device\",\"ordinal\":0,\"pci\":\"0000:01:00.0\"}\n"
			       "{\"record\":\"device\",\"ordinal\":1,\"pci\":\"0000:02:00.0\",\"extra\":[\"x\"]}\n"
			       "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"fail\","
			       "\"reason\":\"a b%c=d \\\"q\\\" \\\\ \\u00e9\",\"new_key\":7,\"gbps\":9.5,"
			       "\"performance_rank\":0,\"flag\":true,\"can_access_peer\":\"1\"}\n"
			       "\n"
			       "{\"record\":\"done\",\"pairs\":1}\n"
			       "EOF\n"),
	       1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 2);
	CHECK_INT(dmaconn_verify_status_of(v, 0, 1), DMACONN_VERIFY_FAIL);
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "reason"), "a b%c=d \"q\" \\ \xc3\xa9");
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "new_key"), "7");
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "gbps"), "9.5");
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "performance_rank"), "0");
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "flag"), "true");
	CHECK_STR(dmaconn_verify_pair_get(v, 0, 1, "can_access_peer"), "1");
	CHECK(dmaconn_verify_pair_get(v, 0, 1, "from") == NULL);
	CHECK(dmaconn_verify_pair_get(v, 0, 1, "record") == NULL);
	/* In the record's order, status (not a property) left out. */
	CHECK_INT(dmaconn_verify_pair_property_count(v, 0, 1), 6);
	CHECK_STR(dmaconn_verify_pair_property_key(v, 0, 1, 0), "reason");
	CHECK_STR(dmaconn_verify_pair_property_key(v, 0, 1, 5), "can_access_peer");
	CHECK_INT(dmaconn_verify_status_of(v, 1, 0), DMACONN_VERIFY_FAIL);
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 1, 0, "reason"), "did not report");
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "did not report 1 pairs");
	dmaconn_verify_result_free(v);

	/* A pair naming an unknown device. */
	reset();
	setenv("DMACONN_VERIFY_HELPER",
	       script("garbled.sh", "cat <<'EOF'\n"
				    "{\"record\":\"device\",\"ordinal\":0}\n{\"record\":\"device\",\"ordinal\":1}\n"
				    "{\"record\":\"pair\",\"from\":0,\"to\":5,\"status\":\"pass\"}\n"
				    "{\"record\":\"done\",\"pairs\":1}\nEOF\n"),
	       1);
	v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 2);
	check_all_fail(v, "garbled");
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "line 3");
	dmaconn_verify_result_free(v);

	/* What the protocol refuses: a line that is no JSON object, a member
	 * twice, a value that is no scalar, a number as text, a bad status, an
	 * encoded NUL, devices out of order. */
	const char *bad[] = { "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"pass\",\"reason\":{\"a\":1}}",
			      "{\"record\":\"pair\",\"from\":0,\"to\":1,\"to\":0,\"status\":\"pass\"}",
			      "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"pass\",\"gbps\":[1]}",
			      "{\"record\":\"pair\",\"from\":\"0\",\"to\":1,\"status\":\"pass\"}",
			      "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"maybe\"}",
			      "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":true}",
			      "[\"pair\",0,1]",
			      "pair from=0 to=1 status=pass",
			      "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"pass\"} trailing",
			      "{\"record\":\"pair\",\"from\":-1,\"to\":1,\"status\":\"pass\"}",
			      "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"pass\",\"reason\":\"a\\u0000b\"}" };
	for (size_t k = 0; k <= sizeof(bad) / sizeof(bad[0]); k++) {
		char body[1024];
		if (k < sizeof(bad) / sizeof(bad[0]))
			snprintf(body, sizeof(body),
				 "cat <<'EOF'\n{\"record\":\"device\",\"ordinal\":0}\n{\"record\":\"device\",\"ordinal\":1}\n"
				 "%s\n{\"record\":\"done\",\"pairs\":1}\nEOF\n",
				 bad[k]);
		else
			snprintf(body, sizeof(body), "cat <<'EOF'\n{\"record\":\"device\",\"ordinal\":1}\n"
						     "{\"record\":\"done\",\"pairs\":0}\nEOF\n");
		reset();
		setenv("DMACONN_VERIFY_HELPER", script("bad.sh", body), 1);
		v = verify(0);
		check_warnings(v, 1);
		CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "garbled");
		if (k < sizeof(bad) / sizeof(bad[0]))
			CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "line 3");
		check_all_fail(v, "garbled");
		dmaconn_verify_result_free(v);
	}

	/* Output that stops without 'done', with a word on stderr. */
	reset();
	setenv("DMACONN_VERIFY_HELPER",
	       script("short.sh", "cat <<'EOF'\n"
				  "{\"record\":\"device\",\"ordinal\":0}\n{\"record\":\"device\",\"ordinal\":1}\n"
				  "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"pass\"}\nEOF\n"
				  "echo 'it broke' >&2\n"),
	       1);
	v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 2);
	check_all_fail(v, "'done'");
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 0, 1, "reason"), "stderr: it broke");
	dmaconn_verify_result_free(v);

	/* Exit status 2 with an error record. */
	reset();
	setenv("DMACONN_VERIFY_HELPER",
	       script("error.sh", "cat <<'EOF'\n{\"record\":\"error\",\"reason\":\"no luck\"}\nEOF\nexit 2\n"), 1);
	v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 0);
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "could not check the GPUs: no luck");
	dmaconn_verify_result_free(v);

	/* A helper that closes its output but keeps running is still timed out. */
	reset();
	setenv("DMACONN_VERIFY_HELPER",
	       script("linger.sh", "exec >/dev/null 2>&1\nsleep 30\n"), 1);
	double t0 = now_s();
	v = verify(1000);
	CHECK(now_s() - t0 < 8);
	check_warnings(v, 1);
	CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "timed out after 1000 ms");
	dmaconn_verify_result_free(v);

	const char *names[] = { "ok.sh", "garbled.sh", "bad.sh", "short.sh", "error.sh", "linger.sh" };
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", tmpdir, names[k]);
		unlink(path);
	}
}

/* A helper that printed a full pass and then crashed is never a pass, also
 * for a caller that cannot see its exit status (SIGCHLD ignored, children
 * not kept as zombies, or reaped by the caller's own handler). */
static void reap_all(int sig)
{
	(void)sig;
	int saved = errno;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

static void test_unwaitable(void)
{
	reset();
	setenv("FAKE_CUDA_CRASH_AT_EXIT", "1", 1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 2);
	check_all_fail(v, "killed by signal");
	CHECK_CONTAINS(dmaconn_verify_pair_get(v, 0, 1, "reason"), "SIGABRT");
	dmaconn_verify_result_free(v);

	struct sigaction ign, nocldwait, reaper, old;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	nocldwait = ign;
	nocldwait.sa_handler = SIG_DFL;
	nocldwait.sa_flags = SA_NOCLDWAIT;
	reaper = ign;
	reaper.sa_handler = reap_all;
	reaper.sa_flags = SA_RESTART;
	const struct sigaction *modes[] = { &ign, &nocldwait, &reaper };
	const char *names[] = { "SIG_IGN", "SA_NOCLDWAIT", "a reaping handler" };
	for (int m = 0; m < 3; m++) {
		fprintf(stderr, "  SIGCHLD: %s\n", names[m]);
		reset();
		setenv("FAKE_CUDA_CRASH_AT_EXIT", "1", 1);
		CHECK_INT(sigaction(SIGCHLD, modes[m], &old), 0);
		v = verify(0);
		CHECK_INT(sigaction(SIGCHLD, &old, NULL), 0);
		CHECK_INT(dmaconn_verify_status_of(v, 0, 1), DMACONN_VERIFY_FAIL);
		CHECK_INT(dmaconn_verify_status_of(v, 1, 0), DMACONN_VERIFY_FAIL);
		check_warnings(v, 1);
		if (m < 2) {
			/* Not even started: its status could not be seen. */
			CHECK_INT(dmaconn_verify_size(v), 0);
			CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "was not run");
			CHECK_CONTAINS(dmaconn_verify_warning(v, 0), m ? "SA_NOCLDWAIT" : "ignores SIGCHLD");
		}
		dmaconn_verify_result_free(v);
	}
}

/* The helper's children die with it: one that would outlive the helper
 * (holding its output open) is killed, and the helper, which exited 0, is
 * not reported as timed out.  This process adopts the orphan to see it die. */
static void test_grandchild(int escape)
{
	reset();
	char pids[512];
	snprintf(pids, sizeof(pids), "%s/grandchild.pids", tmpdir);
	unlink(pids);
	setenv("FAKE_CUDA_GRANDCHILD", pids, 1);
	if (escape)
		setenv("FAKE_CUDA_GRANDCHILD_ESCAPE", "1", 1);
	CHECK_INT(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	dmaconn_verify_result *v = verify(0);
	check_all_pass(v, 2);
	check_warnings(v, 0);
	dmaconn_verify_result_free(v);
	long child = 0, helper = 0;
	FILE *f = fopen(pids, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(fscanf(f, "%ld %ld", &child, &helper), 2);
		fclose(f);
	}
	if (child > 0) {
		/* Bounded only so that a failure cannot hang the test. */
		int st = 0, got = 0, gone = 0;
		for (int k = 0; k < 3000 && !got && !gone; k++) {
			got = waitpid((pid_t)child, &st, WNOHANG) == (pid_t)child;
			/* Or the helper killed and reaped it itself. */
			gone = !got && kill((pid_t)child, 0) != 0 && errno == ESRCH;
			if (!got && !gone)
				usleep(10000);
		}
		CHECK(got || gone);
		CHECK(gone || (got && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL));
		if (!got && !gone) {
			kill((pid_t)child, SIGKILL);
			waitpid((pid_t)child, NULL, 0);
		}
	}
	CHECK_INT(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
	unlink(pids);
	unsetenv("FAKE_CUDA_GRANDCHILD_ESCAPE");
}

/* What the helper says is cleaned as results hold text: no escape
 * sequence, no line break (a forged line), no invalid UTF-8. */
static void check_clean(const char *s)
{
	CHECK(s != NULL);
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
		CHECK(*p >= 0x20 && *p != 0x7f);
	CHECK(s && !strstr(s, "\xff"));
	/* Bidirectional controls (U+061C, U+200E/F, U+202A-E, U+2066-9) reorder
	 * what a terminal shows; U+2028/9 end a line for some readers. */
	static const char *const reorder[] = { "\xd8\x9c", "\xe2\x80\x8e", "\xe2\x80\x8f", "\xe2\x80\xaa",
					       "\xe2\x80\xac", "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x81\xa9",
					       "\xe2\x80\xa8", "\xe2\x80\xa9" };
	for (size_t k = 0; s && k < sizeof(reorder) / sizeof(reorder[0]); k++)
		CHECK(!strstr(s, reorder[k]));
}

static void test_hostile_text(void)
{
	reset();
	setenv("DMACONN_VERIFY_HELPER",
	       script("hostile.sh",
		      "cat <<'EOF'\n"
		      "{\"record\":\"device\",\"ordinal\":0,\"pci\":\"0000:01:00.0\\u001b[2J\"}\n"
		      "{\"record\":\"device\",\"ordinal\":1,\"pci\":\"0000:02:00.0\"}\n"
		      "{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"fail\","
		      "\"reason\":\"red\\u001b[31m\\ndmaconn: ok\\ufffd\\u007f\\u0085\","
		      "\"k\\u0007ey\":\"v\\r\","
		      "\"bidi\":\"\\u202eKO ssap\\u202c\\u061c\\u200e\\u200f\\u202a\\u2066\\u2069"
		      "\\u2028forged\\u2029ok \\u2029\"}\n"
		      "{\"record\":\"pair\",\"from\":1,\"to\":0,\"status\":\"pass\"}\n"
		      "{\"record\":\"done\",\"pairs\":2}\n"
		      "EOF\n"),
	       1);
	dmaconn_verify_result *v = verify(0);
	CHECK_INT(dmaconn_verify_size(v), 2);
	CHECK_INT(dmaconn_verify_status_of(v, 1, 0), DMACONN_VERIFY_PASS);
	const char *why = dmaconn_verify_pair_get(v, 0, 1, "reason");
	check_clean(why);
	CHECK_CONTAINS(why, "red");
	CHECK_CONTAINS(why, "dmaconn: ok");
	CHECK_INT(dmaconn_verify_pair_property_count(v, 0, 1), 3);
	for (int k = 0; k < dmaconn_verify_pair_property_count(v, 0, 1); k++) {
		check_clean(dmaconn_verify_pair_property_key(v, 0, 1, k));
		check_clean(dmaconn_verify_pair_property_value(v, 0, 1, k));
	}
	dmaconn_verify_result_free(v);

	/* The error record, a garbled line and bytes that are not UTF-8
	 * reach the warnings. */
	const char *bodies[] = { "cat <<'EOF'\n{\"record\":\"error\",\"reason\":\"bad\\u001b[2J\\nforged\"}\nEOF\nexit 2\n",
				 "echo '{\"record\":\"device\",\"ordinal\":0}'\necho '{\"record\":\"device\",\"ordinal\":1}'\n"
				 "printf 'pair \\033[2J\\n'\necho '{\"record\":\"done\",\"pairs\":0}'\n",
				 "echo '{\"record\":\"device\",\"ordinal\":0}'\necho '{\"record\":\"device\",\"ordinal\":1}'\n"
				 "printf '{\"record\":\"pair\",\"from\":0,\"to\":1,\"status\":\"fail\",\"reason\":\"\\377\\033\"}\\n'\n"
				 "echo '{\"record\":\"done\",\"pairs\":1}'\n" };
	for (int k = 0; k < 3; k++) {
		reset();
		setenv("DMACONN_VERIFY_HELPER", script("hostile.sh", bodies[k]), 1);
		v = verify(0);
		check_warnings(v, 1);
		check_clean(dmaconn_verify_warning(v, 0));
		if (k > 0)
			CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "garbled");
		if (dmaconn_verify_size(v) == 2)
			check_clean(dmaconn_verify_pair_get(v, 0, 1, "reason"));
		dmaconn_verify_result_free(v);
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/hostile.sh", tmpdir);
	unlink(path);
}

/* The progress callback: from 0 to every pair, one call per pair. */
static int progress_calls, progress_last_done = -1, progress_total, progress_backwards;

static void on_progress(int done, int total, void *user_data)
{
	CHECK(user_data == &progress_calls);
	if (done < progress_last_done || (progress_total && total != progress_total))
		progress_backwards++;
	progress_calls++;
	progress_last_done = done;
	progress_total = total;
}

static void test_progress(void)
{
	reset();
	setenv("FAKE_CUDA_DEVICES", "3", 1);
	dmaconn_set_verify_progress(on_progress, &progress_calls);
	dmaconn_verify_result *v = verify(0);
	check_all_pass(v, 3);
	dmaconn_verify_result_free(v);
	CHECK_INT(progress_calls, 7);
	CHECK_INT(progress_total, 6);
	CHECK_INT(progress_last_done, 6);
	CHECK_INT(progress_backwards, 0);

	/* A hung pair counts as done; the restarted helper goes on counting. */
	reset();
	progress_calls = progress_total = progress_backwards = 0;
	progress_last_done = -1;
	setenv("FAKE_CUDA_DEVICES", "2", 1);
	setenv("FAKE_CUDA_HANG_DEVICE", "1", 1);
	/* The passing pair's budget: 4 s times the build's factor for slow
	 * (instrumented) programs. */
	const char *scale = getenv("DMACONN_TEST_TIME_SCALE");
	char budget[32];
	snprintf(budget, sizeof(budget), "%d", 4000 * (scale && atoi(scale) > 0 ? atoi(scale) : 1));
	setenv("DMACONN_VERIFY_PAIR_TIMEOUT_MS", budget, 1);
	v = verify(0);
	unsetenv("DMACONN_VERIFY_PAIR_TIMEOUT_MS");
	unsetenv("FAKE_CUDA_HANG_DEVICE");
	CHECK_INT(dmaconn_verify_status_of(v, 0, 1), DMACONN_VERIFY_PASS);
	CHECK_INT(dmaconn_verify_status_of(v, 1, 0), DMACONN_VERIFY_FAIL);
	dmaconn_verify_result_free(v);
	CHECK_INT(progress_total, 2);
	CHECK_INT(progress_last_done, 2);
	CHECK_INT(progress_backwards, 0);
	dmaconn_set_verify_progress(NULL, NULL);
}

/* Without DMACONN_VERIFY_HELPER the helper is looked for next to the library. */
static void test_sibling(void)
{
	reset();
	unsetenv("DMACONN_VERIFY_HELPER");
	Dl_info info;
	char path[4096] = "";
	if (dladdr((void *)&dmaconn_verify_size, &info) && info.dli_fname && strrchr(info.dli_fname, '/'))
		snprintf(path, sizeof(path), "%.*s/dmaconn-verify-helper",
			 (int)(strrchr(info.dli_fname, '/') - info.dli_fname), info.dli_fname);
	dmaconn_verify_result *v = verify(0);
	if (path[0] && access(path, X_OK) == 0) {
		check_all_pass(v, 2);
		check_warnings(v, 0);
	} else {
		printf("test_verify: no helper beside the library (%s): checking the message\n", path);
		check_warnings(v, 1);
		CHECK_CONTAINS(dmaconn_verify_warning(v, 0), "not found");
	}
	dmaconn_verify_result_free(v);
}

static void *verify_thread(void *arg)
{
	dmaconn_verify_result **out = arg;
	if (dmaconn_verify(DMACONN_DEVICE_CUDA, 0, out) != DMACONN_OK)
		*out = NULL;
	return NULL;
}

static void test_threads(void)
{
	reset();
	setenv("FAKE_CUDA_DEVICES", "3", 1);
	pthread_t t[3];
	dmaconn_verify_result *v[3] = { NULL, NULL, NULL };
	for (int k = 0; k < 3; k++)
		CHECK_INT(pthread_create(&t[k], NULL, verify_thread, &v[k]), 0);
	for (int k = 0; k < 3; k++) {
		pthread_join(t[k], NULL);
		CHECK(v[k] != NULL);
		if (v[k])
			check_all_pass(v[k], 3);
		dmaconn_verify_result_free(v[k]);
	}
}

/*
 * The NVML cross-check, against the h200x2 replay when the core can replay
 * it with a "cuda"/"p2p" detector: the fake is given the replay's GPUs (count
 * and PCI ids) and no peer access 0 -> 1; every pair where the replay's
 * matrix and the verdict disagree must be warned about, and no other.
 */
static void test_cross_check(const char *replay)
{
	reset();
	if (access(replay, R_OK) != 0) {
		printf("test_verify: cross-check skipped (%s missing)\n", replay);
		return;
	}
	char *nvml = getenv("DMACONN_NVML_LIBRARY") ? strdup(getenv("DMACONN_NVML_LIBRARY")) : NULL;
	unsetenv("DMACONN_NVML_LIBRARY");
	setenv("DMACONN_REPLAY", replay, 1);
	dmaconn_clear_cache();
	dmaconn_result *r = NULL;
	int rc = dmaconn_detect(DMACONN_DEVICE_CUDA, "p2p", &r);
	int n = rc == DMACONN_OK ? dmaconn_result_size(r) : 0;
	if (n < 2) {
		printf("test_verify: cross-check skipped (cuda/p2p replay: %s, %d GPUs)\n",
		       rc == DMACONN_OK ? "ok" : dmaconn_strerror(rc), n);
	} else {
		char pci[1024] = "", count[16];
		for (int i = 0; i < n; i++) {
			const char *b = dmaconn_result_device_get(r, i, "pci_bus_id");
			size_t len = strlen(pci);
			snprintf(pci + len, sizeof(pci) - len, "%s%s", i ? "," : "", b ? b : "");
		}
		snprintf(count, sizeof(count), "%d", n);
		setenv("FAKE_CUDA_DEVICES", count, 1);
		setenv("FAKE_CUDA_PCI", pci, 1);
		setenv("FAKE_CUDA_NO_PEER", "0-1", 1);
		clear_msgs();
		dmaconn_verify_result *v = verify(0);
		CHECK_INT(dmaconn_verify_size(v), n);
		int expected = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j && (dmaconn_result_get(r, i, j) != 0) !=
						      (dmaconn_verify_status_of(v, i, j) == DMACONN_VERIFY_PASS))
					expected++;
		CHECK(expected >= 0);
		int seen = 0;
		for (int k = 0; k < dmaconn_verify_warning_count(v); k++)
			seen += strstr(dmaconn_verify_warning(v, k), "NVML reports") != NULL;
		CHECK_INT(seen, expected);
		if (dmaconn_result_get(r, 0, 1)) {
			int found = 0;
			for (int k = 0; k < dmaconn_verify_warning_count(v); k++)
				found |= strstr(dmaconn_verify_warning(v, k), "GPU 0 -> 1: NVML reports peer read") != NULL;
			CHECK(found);
		}
		printf("test_verify: cross-check against %s: %d disagreements warned\n", replay, seen);
		dmaconn_verify_result_free(v);

		/* GPUs in another order than NVML's: no pair comparison. */
		reset();
		setenv("FAKE_CUDA_DEVICES", count, 1);
		setenv("FAKE_CUDA_PCI", "0000:ff:00.0", 1);
		v = verify(0);
		int order = 0;
		for (int k = 0; k < dmaconn_verify_warning_count(v); k++) {
			order += strstr(dmaconn_verify_warning(v, k), "not cross-checked") != NULL;
			CHECK(strstr(dmaconn_verify_warning(v, k), "NVML reports") == NULL);
		}
		CHECK_INT(order, 1);
		dmaconn_verify_result_free(v);
	}
	dmaconn_result_release(r);
	unsetenv("DMACONN_REPLAY");
	if (nvml)
		setenv("DMACONN_NVML_LIBRARY", nvml, 1);
	free(nvml);
	dmaconn_clear_cache();
}

static int run_real(const char *helper)
{
	if (helper)
		setenv("DMACONN_VERIFY_HELPER", helper, 1);
	dmaconn_set_warning_handler(on_warning, NULL);
	double t0 = now_s();
	dmaconn_verify_result *v = verify(0);
	double elapsed = now_s() - t0;
	int n = dmaconn_verify_size(v);
	printf("test_verify --real: %d GPUs in %.2f s\n", n, elapsed);
	CHECK(n > 0);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			dmaconn_verify_status st = dmaconn_verify_status_of(v, i, j);
			printf("  %d -> %d: %s", i, j,
			       st == DMACONN_VERIFY_PASS ? "pass" : st == DMACONN_VERIFY_NO_PEER ? "no_peer" : "FAIL");
			for (int k = 0; k < dmaconn_verify_pair_property_count(v, i, j); k++)
				printf(" %s=%s", dmaconn_verify_pair_property_key(v, i, j, k),
				       dmaconn_verify_pair_property_value(v, i, j, k));
			printf("\n");
			CHECK(st != DMACONN_VERIFY_FAIL);
		}
	}
	for (int k = 0; k < dmaconn_verify_warning_count(v); k++)
		printf("  warning: %s\n", dmaconn_verify_warning(v, k));
	check_warnings(v, 0);
	dmaconn_verify_result_free(v);
	clear_msgs();
	dmaconn_shutdown();
	return check_done("test_verify --real");
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--real"))
		return run_real(argc >= 3 ? argv[2] : NULL);
	if (argc < 3 || argv[1][0] != '/' || argv[2][0] != '/') {
		fprintf(stderr, "usage: test_verify /abs/fake/libcuda.so.1 /abs/dmaconn-verify-helper [replay.json]\n"
				"       test_verify --real [/abs/dmaconn-verify-helper]\n");
		return 2;
	}
	setenv("DMACONN_CUDA_LIBRARY", argv[1], 1);
	helper_path = argv[2];
	/* No NVML and no NVIDIA sysfs devices: the p2p detector sees no GPU. */
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	setenv("DMACONN_SYSFS_ROOT", "tests/sysfs/no-nvidia", 0);
	unsetenv("DMACONN_REPLAY");
	unsetenv("CUDA_VISIBLE_DEVICES");
	dmaconn_set_warning_handler(on_warning, NULL);
	/* The p2p detector's own warnings (no NVML) come once, when it first
	 * runs; have that happen now, so that the sink holds ours alone. */
	dmaconn_result *p2p = NULL;
	dmaconn_detect(DMACONN_DEVICE_CUDA, "p2p", &p2p);
	dmaconn_result_release(p2p);

	test_arguments();
	test_pass(2);
	test_pass(4);
	test_no_peer();
	test_run_as_result();
	test_no_driver();
	test_access_denied();
	test_corrupt();
	test_crash();
	test_hang();
	test_missing_helper();
	test_protocol();
	test_unwaitable();
	test_grandchild(0);
	test_grandchild(1); /* one that left the group and the session */
	test_hostile_text();
	test_progress();
	rmdir(tmpdir);
	test_sibling();
	test_threads();
	test_cross_check(argc >= 4 ? argv[3] : "tests/topologies/h200x2.json");

	clear_msgs();
	dmaconn_shutdown();
	return check_done("test_verify");
}
