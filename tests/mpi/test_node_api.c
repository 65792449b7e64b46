/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What multi-node detection needs from the core, checked without MPI: the
 * host identity, detection over the whole node, results built outside the
 * registry, and the fabric facts of cuda/nvlink devices.  One mode per run
 * (the replay file is fixed for a process's life):
 *
 *   test_node_api live                    host = gethostname; builder additions
 *   test_node_api host NAME               dmaconn_host_id() = NAME ("@file": "replay:" + realpath)
 *   test_node_api node NLOCAL NNODE VALUE NWARN
 *                                         dmaconn_detect sees NLOCAL devices, dmaconn_detect_node
 *                                         NNODE, every off-diagonal entry VALUE, NWARN warnings
 *                                         kept in it and none sent to the sink
 *   test_node_api fabric STATE STATUS UUID CLIQUE
 *                                         every device has these properties ("-": absent)
 *   test_node_api imex REASON TEXT [FILE] dmaconn_host_imex() gives REASON ("ready": NULL)
 *                                         and a text containing TEXT, twice; with FILE,
 *                                         after dmaconn_record(FILE)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "dmaconn.h"

static int emitted;

static void count_warning(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
	emitted++;
}

static int two_devices(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	CHECK(dmaconn_builder_set_size(b, 2) == DMACONN_OK);
	CHECK(dmaconn_builder_set(b, 0, 1, 7) == DMACONN_OK);
	CHECK(dmaconn_builder_warn(b, "announced %d", 1) == DMACONN_OK);
	CHECK(dmaconn_builder_add_warning(b, "kept") == DMACONN_OK);
	CHECK(dmaconn_builder_add_warning(b, NULL) == DMACONN_EINVAL);
	return DMACONN_OK;
}

static int failing(dmaconn_builder *b, void *user_data)
{
	return dmaconn_builder_fail(b, *(int *)user_data, "it went wrong: %s", "because");
}

static void live(void)
{
	char host[1024] = "";
	CHECK(gethostname(host, sizeof(host) - 1) == 0);
	CHECK_STR(dmaconn_host_id(), host);

	dmaconn_result *r = NULL;
	emitted = 0;
	CHECK(dmaconn_result_build(DMACONN_DEVICE_ROCM, "built", two_devices, NULL, &r) == DMACONN_OK);
	CHECK(dmaconn_result_size(r) == 2 && dmaconn_result_get(r, 0, 1) == 7);
	CHECK(dmaconn_result_device_type(r) == DMACONN_DEVICE_ROCM);
	CHECK_STR(dmaconn_result_connection_type(r), "built");
	CHECK(dmaconn_result_warning_count(r) == 2);
	CHECK_STR(dmaconn_result_warning(r, 0), "announced 1");
	CHECK_STR(dmaconn_result_warning(r, 1), "kept");
	CHECK(emitted == 1);
	dmaconn_result_release(r);
	/* Nothing registered, nothing cached. */
	CHECK(dmaconn_detect(DMACONN_DEVICE_ROCM, "built", &r) == DMACONN_ENODETECTOR);

	int err = DMACONN_EREPLAY;
	CHECK(dmaconn_result_build(DMACONN_DEVICE_CUDA, "x", failing, &err, &r) == DMACONN_EREPLAY && !r);
	CHECK_STR(dmaconn_last_error(), "it went wrong: because");
	err = 3; /* not a dmaconn error: the detector failed */
	CHECK(dmaconn_result_build(DMACONN_DEVICE_CUDA, "x", failing, &err, &r) == DMACONN_EDETECTOR);
	CHECK_STR(dmaconn_last_error(), "it went wrong: because");
	CHECK(dmaconn_result_build(DMACONN_DEVICE_CUDA, "x", NULL, NULL, &r) == DMACONN_EINVAL);
	CHECK(dmaconn_result_build(DMACONN_DEVICE_CUDA, "", two_devices, NULL, &r) == DMACONN_EINVAL);
	CHECK(dmaconn_result_build(DMACONN_DEVICE_CUDA, "x", two_devices, NULL, NULL) == DMACONN_EINVAL);

	/* Node-wide detection works, and is quiet, wherever detection does. */
	emitted = 0;
	CHECK(dmaconn_detect_node(DMACONN_DEVICE_CUDA, "nvlink", &r) == DMACONN_OK);
	CHECK(emitted == 0);
	dmaconn_result_release(r);
	CHECK(dmaconn_detect_node(DMACONN_DEVICE_CUDA, "bogus", &r) == DMACONN_ENODETECTOR);
}

static void host(const char *want)
{
	if (want[0] == '@') {
		char *abs = realpath(getenv("DMACONN_REPLAY"), NULL), expected[8192];
		CHECK(abs != NULL);
		snprintf(expected, sizeof(expected), "replay:%s", abs);
		CHECK_STR(dmaconn_host_id(), expected);
		free(abs);
	} else {
		CHECK_STR(dmaconn_host_id(), want);
	}
}

static void node(int nlocal, int nnode, int value, int nwarn)
{
	dmaconn_result *local = NULL, *all = NULL, *again = NULL;
	CHECK(dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &local) == DMACONN_OK);
	CHECK(dmaconn_result_size(local) == nlocal);
	emitted = 0;
	CHECK(dmaconn_detect_node(DMACONN_DEVICE_CUDA, "nvlink", &all) == DMACONN_OK);
	CHECK(emitted == 0);
	CHECK(dmaconn_result_warning_count(all) == nwarn);
	CHECK(dmaconn_result_size(all) == nnode);
	for (int i = 0; i < nnode; i++)
		for (int j = 0; j < nnode; j++)
			CHECK(dmaconn_result_get(all, i, j) == (i == j ? 0 : value));
	/* PCI bus order, whatever CUDA_DEVICE_ORDER says. */
	for (int i = 1; i < nnode; i++)
		CHECK(strcmp(dmaconn_result_device_get(all, i - 1, "pci_bus_id"),
			     dmaconn_result_device_get(all, i, "pci_bus_id")) < 0);
	/* Every visible device is one of the node's. */
	for (int i = 0; i < nlocal; i++) {
		int found = 0;
		for (int j = 0; j < nnode; j++)
			found += !strcmp(dmaconn_result_device_get(local, i, "uuid"),
					 dmaconn_result_device_get(all, j, "uuid"));
		CHECK(found == 1);
	}
	/* The cache still holds the visible devices' result. */
	CHECK(dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &again) == DMACONN_OK);
	CHECK(again == local);
	dmaconn_result_release(again);
	dmaconn_result_release(all);
	dmaconn_result_release(local);
}

static void fabric(char **want)
{
	static const char *const keys[] = { "fabric_state", "fabric_status", "cluster_uuid", "clique_id" };
	dmaconn_result *r = NULL;
	CHECK(dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r) == DMACONN_OK);
	CHECK(dmaconn_result_size(r) > 0);
	for (int i = 0; i < dmaconn_result_size(r); i++) {
		for (int k = 0; k < 4; k++) {
			const char *got = dmaconn_result_device_get(r, i, keys[k]);
			if (!strcmp(want[k], "-"))
				CHECK(got == NULL);
			else
				CHECK_STR(got, want[k]);
		}
	}
	dmaconn_result_release(r);
}

static void imex(const char *reason, const char *text, const char *record)
{
	if (record)
		CHECK(dmaconn_record(record) == DMACONN_OK);
	for (int k = 0; k < 2; k++) {
		char got[512] = "unset";
		const char *why = dmaconn_host_imex(got, sizeof(got));
		CHECK_STR(why ? why : "ready", reason);
		if (!strstr(got, text))
			CHECK_STR(got, text);
	}
	CHECK(dmaconn_host_imex(NULL, 0) == dmaconn_host_imex(NULL, 5));
}

int main(int argc, char **argv)
{
	dmaconn_set_warning_handler(count_warning, NULL);
	if (argc == 2 && !strcmp(argv[1], "live"))
		live();
	else if (argc == 3 && !strcmp(argv[1], "host"))
		host(argv[2]);
	else if (argc == 6 && !strcmp(argv[1], "node"))
		node(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	else if (argc == 6 && !strcmp(argv[1], "fabric"))
		fabric(argv + 2);
	else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "imex"))
		imex(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	else {
		fprintf(stderr, "usage: see the comment at the top of test_node_api.c\n");
		return 2;
	}
	dmaconn_shutdown();
	return check_done(argv[1]);
}
