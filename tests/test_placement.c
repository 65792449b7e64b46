/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_placement_detect() over a replayed machine, written out whole:
 * `test_placement TYPE FILE` prints every fact of the placement, one a line
 * ("node KEY=VALUE", "device I KEY=VALUE", "nic N KEY=VALUE",
 * "link I N KEY=VALUE", "order I = NIC NIC ...", "warning TEXT"), which
 * tests/placement_test.py compares with the machine's expected answer.
 * The accessors' edges (NULL, out of range) are checked on the way, and
 * that libcuda was never loaded (under replay).  FILE "" detects the live
 * machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dmaconn.h"

/* The facts of one place: the node, device a, NIC a, or the link (device a, NIC b). */
enum place { NODE, DEVICE, NIC, LINK };

/* Key k of the place's facts, or its value where value. */
static const char *fact(const dmaconn_placement *p, enum place at, int a, int b, int k, int value)
{
	switch (at) {
	case NODE:
		return value ? dmaconn_placement_property_value(p, k) : dmaconn_placement_property_key(p, k);
	case DEVICE:
		return value ? dmaconn_placement_device_property_value(p, a, k)
			     : dmaconn_placement_device_property_key(p, a, k);
	case NIC:
		return value ? dmaconn_placement_nic_property_value(p, a, k) : dmaconn_placement_nic_property_key(p, a, k);
	default:
		return value ? dmaconn_placement_link_property_value(p, a, b, k)
			     : dmaconn_placement_link_property_key(p, a, b, k);
	}
}

static void props(const char *what, int count, enum place at, const dmaconn_placement *p, int a, int b)
{
	for (int k = 0; k < count; k++)
		printf("%s %s=%s\n", what, fact(p, at, a, b, k, 0), fact(p, at, a, b, k, 1));
	CHECK(fact(p, at, a, b, count, 0) == NULL);
}

int main(int argc, char **argv)
{
	dmaconn_device_type type;
	if (argc != 3 || dmaconn_device_type_parse(argv[1], &type) != DMACONN_OK) {
		fprintf(stderr, "usage: test_placement cuda|rocm|xpu FILE\n");
		return 2;
	}
	CHECK_INT(dmaconn_set_replay_file(argv[2]), DMACONN_OK);
	CHECK_INT(dmaconn_placement_detect(type, NULL), DMACONN_EINVAL);
	dmaconn_placement *p = NULL;
	int rc = dmaconn_placement_detect(type, &p);
	CHECK_INT(rc, DMACONN_OK);
	if (rc != DMACONN_OK) {
		fprintf(stderr, "dmaconn_placement_detect: %s\n", dmaconn_last_error());
		return check_done("test_placement");
	}
	int n = dmaconn_placement_size(p), m = dmaconn_placement_nic_count(p);
	printf("devices %d nics %d\n", n, m);
	char label[64];
	props("node", dmaconn_placement_property_count(p), NODE, p, 0, 0);
	for (int i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "device %d", i);
		props(label, dmaconn_placement_device_property_count(p, i), DEVICE, p, i, 0);
	}
	for (int k = 0; k < m; k++) {
		snprintf(label, sizeof(label), "nic %d", k);
		props(label, dmaconn_placement_nic_property_count(p, k), NIC, p, k, 0);
		printf("nic %d paths =", k);
		for (int q = 0; q < m; q++) {
			const char *path = dmaconn_placement_nic_path(p, k, q);
			printf(" %s", q == k ? "X" : path ? path : "-");
		}
		printf("\n");
		CHECK(dmaconn_placement_nic_path(p, k, k) == NULL);
		CHECK(dmaconn_placement_nic_path(p, k, m) == NULL);
	}
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < m; k++) {
			snprintf(label, sizeof(label), "link %d %d", i, k);
			props(label, dmaconn_placement_link_property_count(p, i, k), LINK, p, i, k);
		}
		printf("order %d =", i);
		for (int r = 0; r < m; r++)
			printf(" %s", dmaconn_placement_nic_get(p, dmaconn_placement_device_nic(p, i, r), DMACONN_PROP_NAME));
		printf("\n");
		CHECK_INT(dmaconn_placement_device_nic(p, i, m), -1);
	}
	for (int k = 0; k < dmaconn_placement_warning_count(p); k++)
		printf("warning %s\n", dmaconn_placement_warning(p, k));
	/* The edges: out of range is NULL, 0 or -1, never a crash. */
	CHECK(dmaconn_placement_device_get(p, n, DMACONN_PROP_PCI_BUS_ID) == NULL);
	CHECK(dmaconn_placement_nic_get(p, -1, DMACONN_PROP_NAME) == NULL);
	CHECK(dmaconn_placement_link_get(p, 0, m, DMACONN_PROP_PATH) == NULL);
	CHECK_INT(dmaconn_placement_device_nic(p, -1, 0), -1);
	CHECK_INT(dmaconn_placement_size(NULL), 0);
	CHECK_INT(dmaconn_placement_nic_count(NULL), 0);
	CHECK(dmaconn_placement_warning(p, dmaconn_placement_warning_count(p)) == NULL);
	CHECK_INT(dmaconn_placement_device_type(p), type);
	dmaconn_placement_free(p);
	dmaconn_placement_free(NULL);
	/* CUDA was never loaded into this process. */
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	int cuda = 0;
	while (maps && fgets(line, sizeof(line), maps))
		cuda |= strstr(line, "libcuda.so") != NULL;
	if (maps)
		fclose(maps);
	CHECK(maps != NULL);
	/* Live, NVML 580's nvmlInit_v2 maps libcuda itself (it never calls
	 * cuInit): the check holds for replays. */
	if (argv[2][0])
		CHECK(!cuda);
	dmaconn_shutdown();
	return check_done("test_placement");
}
