/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVML's confidential computing state is asked once per discovery, whatever
 * it answers: the views that read it (cuda/p2p's pair stage, cuda/multicast's
 * driver stage) each stage it, and a second ask after a failed first one
 * would write the model while the other view reads it (counted by
 * count_vendor.c, the replay component's stand-in).
 *
 * usage: test_cc_once REPLAY COUNTING-COMPONENT
 */
#include "check.h"
#include "counting.h"
#include "dmaconn.h"

static int (*calls)(const char *what);

/* The CC state's calls made by detecting type/connection on the model the
 * process already has. */
static int asked(const char *connection)
{
	int c0 = calls("nvml_cc");
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, connection, &r), DMACONN_OK);
	dmaconn_result_release(r);
	return calls("nvml_cc") - c0;
}

int main(int argc, char **argv)
{
	calls = counting_setup(argc, argv, 3, "test_cc_once REPLAY COUNTING-COMPONENT");
	CHECK(calls != NULL);
	if (!calls)
		return check_done("cc_once");
	/* The first view that needs it asks; the other does not ask again. */
	CHECK_INT(asked("p2p"), 1);
	CHECK_INT(asked("multicast"), 0);
	/* A new discovery asks again, once, the other view first. */
	dmaconn_clear_cache();
	CHECK_INT(asked("multicast"), 1);
	CHECK_INT(asked("p2p"), 0);
	return check_done("cc_once");
}
