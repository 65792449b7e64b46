/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What dmaconn_placement_detect() adds to a detection, in process, on the
 * replay DMACONN_REPLAY names (bench/placement.py passes the 8-GPU, 8-NIC
 * DGX H100 of tests/topologies-placement/).  Each round: a fresh detection
 * of cuda/nvlink (NVML discovered again, the placement facts included), then
 * the placement on top of it.  Prints the median and the quartiles of both,
 * in microseconds, one JSON object.  No assertion: figures only.
 *
 *     DMACONN_REPLAY=FILE bench/placement [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dmaconn.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double at(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[(int)(q * (n - 1) + 0.5)];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	if (rounds < 1)
		rounds = 1;
	double *detect = calloc((size_t)rounds, sizeof(*detect)), *place = calloc((size_t)rounds, sizeof(*place));
	int n = 0, nics = 0;
	for (int r = 0; detect && place && r < rounds; r++) {
		dmaconn_result *res = NULL;
		dmaconn_placement *p = NULL;
		double t0 = now_us();
		if (dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "nvlink", &res) != DMACONN_OK)
			return fprintf(stderr, "detect: %s\n", dmaconn_last_error()), 1;
		double t1 = now_us();
		if (dmaconn_placement_detect(DMACONN_DEVICE_CUDA, &p) != DMACONN_OK)
			return fprintf(stderr, "placement: %s\n", dmaconn_last_error()), 1;
		double t2 = now_us();
		detect[r] = t1 - t0;
		place[r] = t2 - t1;
		n = dmaconn_placement_size(p);
		nics = dmaconn_placement_nic_count(p);
		dmaconn_placement_free(p);
		dmaconn_result_release(res);
	}
	if (!detect || !place)
		return 1;
	printf("{\"devices\": %d, \"nics\": %d, \"rounds\": %d, "
	       "\"detect_us\": {\"p25\": %.1f, \"median\": %.1f, \"p75\": %.1f}, "
	       "\"placement_us\": {\"p25\": %.1f, \"median\": %.1f, \"p75\": %.1f}}\n",
	       n, nics, rounds, at(detect, rounds, 0.25), at(detect, rounds, 0.5), at(detect, rounds, 0.75),
	       at(place, rounds, 0.25), at(place, rounds, 0.5), at(place, rounds, 0.75));
	free(detect);
	free(place);
	dmaconn_shutdown();
	return 0;
}
