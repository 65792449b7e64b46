/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVML's pairs cost only for the GPUs a process sees: with
 * CUDA_VISIBLE_DEVICES naming k of n GPUs, cuda/p2p asks the P2P statuses
 * of the k*(k-1) visible pairs (four capabilities each: read, write,
 * atomics, NVLink) and the PCIe path of the visible unordered pairs NVLink
 * does not join, nothing of the others (counted by count_vendor.c, the
 * replay component's stand-in).
 *
 * usage: test_pair_cost REPLAY COUNTING-COMPONENT N NVLINKED
 * where the replay file has N GPUs, all joined by NVLink (NVLINKED 1: no
 * path is asked) or none (0: every pair's path is asked).
 */
#include <stdlib.h>

#include "check.h"
#include "counting.h"
#include "dmaconn.h"

static int (*calls)(const char *what);

#define CAPS 4

/* cuda/p2p seen through CUDA_VISIBLE_DEVICES=cvd (NULL: every GPU), each a
 * new discovery.  Returns the P2P status and path calls it made. */
static void detect(const char *cvd, int *p2p, int *path)
{
	int p0 = calls("nvml_p2p"), q0 = calls("nvml_path");
	dmaconn_result *r = NULL;
	if (cvd)
		setenv("CUDA_VISIBLE_DEVICES", cvd, 1);
	else
		unsetenv("CUDA_VISIBLE_DEVICES");
	CHECK_INT(dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "p2p", &r), DMACONN_OK);
	dmaconn_result_release(r);
	*p2p = calls("nvml_p2p") - p0;
	*path = calls("nvml_path") - q0;
}

int main(int argc, char **argv)
{
	calls = counting_setup(argc, argv, 5, "test_pair_cost REPLAY COUNTING-COMPONENT N NVLINKED");
	int n = atoi(argv[3]), nvlinked = atoi(argv[4]), p2p, path;
	CHECK(calls != NULL && n >= 3);
	if (!calls || n < 3)
		return check_done("pair_cost");

	/* One GPU seen: no pair, nothing asked. */
	detect("0", &p2p, &path);
	CHECK_INT(p2p, 0);
	CHECK_INT(path, 0);
	/* Two: one pair, both ways. */
	detect("1,0", &p2p, &path);
	CHECK_INT(p2p, 2 * CAPS);
	CHECK_INT(path, nvlinked ? 0 : 1);
	/* Three. */
	detect("2,0,1", &p2p, &path);
	CHECK_INT(p2p, 6 * CAPS);
	CHECK_INT(path, nvlinked ? 0 : 3);
	/* Every GPU: every pair. */
	detect(NULL, &p2p, &path);
	CHECK_INT(p2p, n * (n - 1) * CAPS);
	CHECK_INT(path, nvlinked ? 0 : n * (n - 1) / 2);
	return check_done("pair_cost");
}
