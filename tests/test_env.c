/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Library overrides from the environment are absolute paths or nothing:
 * a relative DMACONN_NVML_LIBRARY, DMACONN_REPLAY_LIBRARY, DMACONN_CUDA_LIBRARY
 * (read by the verify helper) or DMACONN_VERIFY_HELPER is refused with a
 * message naming the variable, and nothing is loaded or run from it -- even
 * where the relative path names an existing library from the working
 * directory (the loader would open it relative to the directory).
 *
 *   test_env TESTS_BUILD_DIR HELPER REPLAY_FILE
 *
 * TESTS_BUILD_DIR holds fakecuda/libcuda.so.1, whose constructor creates the
 * file DMACONN_TEST_CUDA_MARKER names: the marker proves whether it was
 * loaded (in this process or in the helper).  HELPER is the absolute path of
 * dmaconn-verify-helper, REPLAY_FILE a topology file (absolute).
 */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

#define FAKE "fakecuda/libcuda.so.1" /* relative to TESTS_BUILD_DIR */

static const char *marker;
static char collected[16384];

static void collect(const char *message, void *user_data)
{
	(void)user_data;
	size_t n = strlen(collected);
	snprintf(collected + n, sizeof(collected) - n, "%s\n", message);
}

static void clean(void)
{
	dmaconn_shutdown();
	static const char *const vars[] = { "DMACONN_NVML_LIBRARY", "DMACONN_REPLAY_LIBRARY", "DMACONN_REPLAY",
					    "DMACONN_CUDA_LIBRARY", "DMACONN_VERIFY_HELPER" };
	for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++)
		unsetenv(vars[k]);
	collected[0] = '\0';
	dmaconn_set_warning_handler(collect, NULL);
	unlink(marker);
}

static int loaded(void)
{
	return access(marker, F_OK) == 0;
}

/* Detects cuda/nvlink; returns the result's warnings and the sink's. */
static int detect_nvlink(void)
{
	dmaconn_result *r = NULL;
	int rc = dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r);
	for (int k = 0; k < dmaconn_result_warning_count(r); k++)
		collect(dmaconn_result_warning(r, k), NULL);
	dmaconn_result_release(r);
	return rc;
}

/* Runs dmaconn_verify; its warnings and pair reasons go to `collected`. */
static void verify(void)
{
	dmaconn_verify_result *v = NULL;
	CHECK_INT(dmaconn_verify(DMACONN_DEVICE_CUDA, 30000, &v), DMACONN_OK);
	for (int k = 0; k < dmaconn_verify_warning_count(v); k++)
		collect(dmaconn_verify_warning(v, k), NULL);
	int n = dmaconn_verify_size(v);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && dmaconn_verify_pair_get(v, i, j, "reason"))
				collect(dmaconn_verify_pair_get(v, i, j, "reason"), NULL);
	dmaconn_verify_result_free(v);
}

int main(int argc, char **argv)
{
	marker = getenv("DMACONN_TEST_CUDA_MARKER");
	if (argc != 4 || !marker || argv[2][0] != '/' || argv[3][0] != '/') {
		fprintf(stderr, "usage: DMACONN_TEST_CUDA_MARKER=FILE test_env TESTS_BUILD_DIR /abs/HELPER /abs/REPLAY\n");
		return 2;
	}
	const char *helper = argv[2], *replay = argv[3];
	CHECK_INT(chdir(argv[1]), 0);
	CHECK(access(FAKE, R_OK) == 0); /* the relative paths below do name a library */
	char fake_abs[4096];
	CHECK(realpath(FAKE, fake_abs) != NULL);
	setenv("DMACONN_SYSFS_ROOT", "/nonexistent", 1);
	unsetenv("CUDA_VISIBLE_DEVICES");

	/* NVML. */
	static const char *const relative[] = { FAKE, "./" FAKE, "libnvidia-ml.so.1", "../tests/" FAKE };
	for (size_t k = 0; k < sizeof(relative) / sizeof(relative[0]); k++) {
		clean();
		setenv("DMACONN_NVML_LIBRARY", relative[k], 1);
		CHECK_INT(detect_nvlink(), DMACONN_OK);
		CHECK_CONTAINS(collected, "DMACONN_NVML_LIBRARY must be an absolute path");
		CHECK(!loaded());
	}

	/* The replay component. */
	clean();
	setenv("DMACONN_REPLAY", replay, 1);
	setenv("DMACONN_REPLAY_LIBRARY", FAKE, 1);
	CHECK_INT(detect_nvlink(), DMACONN_EREPLAY);
	CHECK_CONTAINS(dmaconn_last_error(), "DMACONN_REPLAY_LIBRARY must be an absolute path");
	CHECK(!loaded());
	CHECK_INT(dmaconn_record("recorded-by-test-env.json"), DMACONN_EUNAVAILABLE);
	CHECK_CONTAINS(dmaconn_last_error(), "DMACONN_REPLAY_LIBRARY must be an absolute path");
	CHECK(access("recorded-by-test-env.json", F_OK) != 0);
	CHECK(!loaded());

	/* The verify helper, and the CUDA driver the helper loads. */
	clean();
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	setenv("DMACONN_VERIFY_HELPER", "../dmaconn-verify-helper", 1);
	CHECK(access("../dmaconn-verify-helper", X_OK) == 0);
	verify();
	CHECK_CONTAINS(collected, "DMACONN_VERIFY_HELPER must be an absolute path");

	clean();
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	setenv("DMACONN_VERIFY_HELPER", helper, 1);
	setenv("DMACONN_CUDA_LIBRARY", FAKE, 1);
	verify();
	CHECK_CONTAINS(collected, "DMACONN_CUDA_LIBRARY must be an absolute path");
	CHECK(!loaded());

	/* Controls: the same library by absolute path is loaded, and seen. */
	clean();
	setenv("DMACONN_NVML_LIBRARY", fake_abs, 1);
	CHECK_INT(detect_nvlink(), DMACONN_OK);
	CHECK_CONTAINS(collected, "lacks nvmlInit_v2");
	CHECK(loaded());

	clean();
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	setenv("DMACONN_VERIFY_HELPER", helper, 1);
	setenv("DMACONN_CUDA_LIBRARY", fake_abs, 1);
	verify();
	CHECK(loaded()); /* the helper loaded it (and found it is no driver) */

	clean();
	dmaconn_set_warning_handler(NULL, NULL);
	return check_done("test_env");
}
