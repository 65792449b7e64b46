/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The raw-NVML floor: what any NVLink detector must at least do, timed in
 * one fresh process: dlopen, nvmlInit_v2, the device count and handles, and
 * every link's state, serially, with no ordering, identity or remote
 * queries.  Prints one JSON line: {"init_ms", "floor_ms", "links"}, plus
 * init_ms's two parts: "open_ms" (dlopen and the dlsym of every symbol
 * dmaconn binds) and "nvmlinit_ms" (the nvmlInit_v2 call alone).
 */
#include <stdio.h>
#include <time.h>

#include "nvml_load.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
	struct nvml_api nv;
	char err[512];
	double t0 = now_ms();
	if (nvml_api_open(&nv, "libnvidia-ml.so.1", NULL, err, sizeof(err))) {
		fprintf(stderr, "nvml_floor: %s\n", err);
		return 1;
	}
	double opened = now_ms();
	nvmlReturn_t rc = nv.nvmlInit_v2();
	double init = now_ms() - t0, nvmlinit = now_ms() - opened;
	if (rc != NVML_SUCCESS) {
		fprintf(stderr, "nvml_floor: nvmlInit_v2 failed: %d\n", rc);
		return 1;
	}
	unsigned int n = 0;
	int links = 0;
	nv.nvmlDeviceGetCount_v2(&n);
	for (unsigned int i = 0; i < n; i++) {
		nvmlDevice_t h;
		if (nv.nvmlDeviceGetHandleByIndex_v2(i, &h))
			continue;
		for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			nvmlEnableState_t st;
			nvmlReturn_t r = nv.nvmlDeviceGetNvLinkState(h, l, &st);
			if (r == NVML_ERROR_INVALID_ARGUMENT)
				break;
			links += r == NVML_SUCCESS && st == NVML_FEATURE_ENABLED;
		}
	}
	printf("{\"init_ms\": %.3f, \"floor_ms\": %.3f, \"links\": %d, \"open_ms\": %.3f, \"nvmlinit_ms\": %.3f}\n",
	       init, now_ms() - t0, links, init - nvmlinit, nvmlinit);
	return 0;
}
