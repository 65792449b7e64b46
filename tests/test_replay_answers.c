/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay component's NVML table called directly, where a detector
 * never goes: an out argument of NULL answers INVALID_ARGUMENT as NVML
 * does, and a failed call leaves the caller's struct as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "nvml_load.h"
#include "replay_abi.h"

/* libdmaconn_replay's entry points. */
const struct dmaconn_replay_ops *dmaconn_replay_ops(void);
int dmaconn_replay_use_file(const char *path);

static const char topology[] =
	"{\"dmaconn_topology\": 2, \"nvml\": {\"devices\": ["
	"{\"uuid\": \"GPU-0\", \"pci\": {\"bus_id\": \"00000000:18:00.0\"},"
	" \"fabric\": {\"state\": 3, \"status\": \"SUCCESS\", \"clique_id\": 7}},"
	"{\"uuid\": \"GPU-1\", \"pci\": {\"bus_id\": \"00000000:19:00.0\"}, \"fabric\": {\"error\": \"NOT_SUPPORTED\"}}"
	"]}}\n";

int main(void)
{
	char file[] = "/tmp/dmaconn-replay-answers-XXXXXX", err[256];
	int fd = mkstemp(file);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w");
	CHECK(f && fputs(topology, f) >= 0 && fclose(f) == 0);
	CHECK_INT(dmaconn_replay_use_file(file), 0);
	struct nvml_api api;
	CHECK_INT(dmaconn_replay_ops()->table("nvml", &api, err, sizeof(err)), 0);
	nvmlDevice_t h[2];
	CHECK_INT(api.nvmlInit_v2(), NVML_SUCCESS);
	CHECK_INT(api.nvmlDeviceGetHandleByIndex_v2(0, &h[0]), NVML_SUCCESS);
	CHECK_INT(api.nvmlDeviceGetHandleByIndex_v2(1, &h[1]), NVML_SUCCESS);

	nvmlGpuFabricInfo_t info;
	CHECK_INT(api.nvmlDeviceGetGpuFabricInfo(h[0], &info), NVML_SUCCESS);
	CHECK_INT((int)info.cliqueId, 7);
	CHECK_INT((int)info.state, 3);
	CHECK_INT(api.nvmlDeviceGetGpuFabricInfo(h[0], NULL), NVML_ERROR_INVALID_ARGUMENT);
	/* A failure writes nothing, the cluster UUID included. */
	memset(&info, 0xa5, sizeof(info));
	CHECK_INT(api.nvmlDeviceGetGpuFabricInfo(h[1], &info), NVML_ERROR_NOT_SUPPORTED);
	CHECK_INT(info.clusterUuid[0], 0xa5);
	CHECK_INT(info.clusterUuid[NVML_GPU_FABRIC_UUID_LEN - 1], 0xa5);

	CHECK_INT(api.nvmlDeviceGetName(h[0], NULL, 64), NVML_ERROR_INVALID_ARGUMENT);
	CHECK_INT(api.nvmlDeviceGetGpuFabricInfoV(h[0], NULL), NVML_ERROR_INVALID_ARGUMENT);
	CHECK_INT(api.nvmlShutdown(), NVML_SUCCESS);
	unlink(file);
	return check_done("replay_answers");
}
