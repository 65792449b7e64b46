/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_set_replay_file(): a replay chosen through the API, with the
 * environment untouched, and the rule that a process replays one file.
 */
#include <stdlib.h>

#include "check.h"
#include "dmaconn.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_replay_file TOPOLOGY OTHER-TOPOLOGY\n");
		return 2;
	}
	unsetenv("DMACONN_REPLAY");
	setenv("DMACONN_QUIET", "1", 1);
	/* Nothing live can answer: only the replay can give two GPUs. */
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	setenv("DMACONN_SYSFS_ROOT", "/nonexistent", 1);

	char longpath[5000];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	CHECK_INT(dmaconn_set_replay_file(longpath), DMACONN_EINVAL);

	CHECK_INT(dmaconn_set_replay_file(argv[1]), DMACONN_OK);
	CHECK(getenv("DMACONN_REPLAY") == NULL);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_size(r), 2);
	CHECK_INT(dmaconn_result_warning_count(r), 0);
	CHECK(dmaconn_result_get(r, 0, 1) > 0);
	dmaconn_result_release(r);

	/* The file is loaded: the same path again is fine, another is refused. */
	CHECK_INT(dmaconn_set_replay_file(argv[1]), DMACONN_OK);
	CHECK_INT(dmaconn_set_replay_file(argv[2]), DMACONN_EBUSY);
	CHECK(strstr(dmaconn_last_error(), argv[2]) != NULL);
	CHECK_INT(dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "nvlink", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_size(r), 2);
	dmaconn_result_release(r);
	CHECK(getenv("DMACONN_REPLAY") == NULL);
	dmaconn_shutdown();
	return check_done("replay_file");
}
