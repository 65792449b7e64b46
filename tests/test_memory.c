/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory stays flat over many detections, and dmaconn_shutdown() gives back
 * what the library kept.
 *
 * On a replayed 2x H200 node (written by the test, with nvmlShutdown failing
 * so that shutdown's error path runs too): after a warm-up, CYCLES rounds of
 * detect / detect_fresh / clear_cache / retain / release for both CUDA
 * detectors, and rounds of dmaconn_shutdown() and detecting again, must
 * leave the heap where it was, give or take SLACK bytes.  The heap is measured with
 * mallinfo2() (glibc), or the sanitizer allocator's count in ASan/TSan
 * builds; under valgrind (DMACONN_TEST_WRAPPER) the rounds are fewer and
 * valgrind's leak check does the measuring.
 *
 * Prints what dmaconn_shutdown() gives back, i.e. what the library keeps
 * until exit without it (cached results, the registry, NVML's handle and
 * the replay component with its file).
 */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"
#include "heap.h"

#define SLACK (64 * 1024)

static const char topology[] =
	"{\"dmaconn_topology\": 1, \"pci_gpus\": [\"0000:00:06.0\", \"0000:00:07.0\"],\n"
	" \"nvml\": {\"faults\": [{\"function\": \"nvmlShutdown\", \"error\": \"UNKNOWN\"}],\n"
	"  \"devices\": [\n"
	"  {\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-e45afac4-9187-255f-1fb8-ab5d93a3bc6c\",\n"
	"   \"pci\": {\"bus_id\": \"00000000:00:06.0\"}, \"cuda_compute_capability\": [9, 0], \"mig_mode\": [0, 0],\n"
	"   \"fabric\": {\"state\": 3, \"status\": \"SUCCESS\"},\n"
	"   \"nvlink\": [{\"repeat\": 18, \"state\": 1, \"version\": 6, \"remote_type\": \"SWITCH\",\n"
	"                \"remote_pci\": {\"bus_id\": \"FFFFFFFF:FF:FF.0\"}, \"speed_mbps\": 26562}],\n"
	"   \"p2p\": [{\"peer\": 1, \"read\": \"OK\", \"write\": \"OK\", \"nvlink\": \"OK\", \"atomics\": \"OK\"}]},\n"
	"  {\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-474671f8-de03-86f7-a2ff-be8dbf78800f\",\n"
	"   \"pci\": {\"bus_id\": \"00000000:00:07.0\"}, \"cuda_compute_capability\": [9, 0], \"mig_mode\": [0, 0],\n"
	"   \"fabric\": {\"state\": 3, \"status\": \"SUCCESS\"},\n"
	"   \"nvlink\": [{\"repeat\": 18, \"state\": 1, \"version\": 6, \"remote_type\": \"SWITCH\",\n"
	"                \"remote_pci\": {\"bus_id\": \"FFFFFFFF:FF:FF.0\"}, \"speed_mbps\": 26562}],\n"
	"   \"p2p\": [{\"peer\": 0, \"read\": \"OK\", \"write\": \"CNS\", \"nvlink\": \"OK\", \"atomics\": \"OK\"}]}]}}\n";

static int detected(const char *conn, int fresh)
{
	dmaconn_result *r = NULL;
	int rc = fresh ? dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, conn, &r)
		       : dmaconn_detect(DMACONN_DEVICE_CUDA, conn, &r);
	int ok = rc == DMACONN_OK && dmaconn_result_size(r) == 2;
	if (ok && !strcmp(conn, "nvlink"))
		ok = dmaconn_result_get(r, 0, 1) == 18;
	if (ok && !strcmp(conn, "p2p")) /* 1 -> 0 has write CNS: no DMA */
		ok = dmaconn_result_get(r, 0, 1) == 1 && dmaconn_result_get(r, 1, 0) == 0 &&
		     dmaconn_result_warning_count(r) == 1;
	dmaconn_result_release(dmaconn_result_retain(r));
	dmaconn_result_release(r);
	if (!ok)
		fprintf(stderr, "%s: %s\n", conn, dmaconn_last_error());
	return ok;
}

static int cycle(int k)
{
	int ok = detected("nvlink", 0) && detected("p2p", 0) && detected("nvlink", 1) && detected("p2p", 1);
	if (k % 3 == 0)
		dmaconn_clear_cache();
	return ok;
}

int main(void)
{
	const char *wrapper = getenv("DMACONN_TEST_WRAPPER");
	int cycles = wrapper && *wrapper ? 100 : 2000, shutdowns = wrapper && *wrapper ? 5 : 100;
	char dir[] = "/tmp/dmaconn-test-memory-XXXXXX", path[128];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/topology.json", dir);
	FILE *f = fopen(path, "w");
	CHECK(f && fputs(topology, f) >= 0 && fclose(f) == 0);
	setenv("DMACONN_REPLAY", path, 1);
	setenv("DMACONN_QUIET", "1", 1);

	long long start = heap();
	int bad = 0;
	for (int k = 0; k < 20; k++)
		bad += !cycle(k);
	long long warm = heap();
	for (int k = 0; k < cycles; k++)
		bad += !cycle(k);
	long long after = heap();
	/* Shutdown and detect again: glibc's loader and thread caches settle
	 * over the first rounds (bounded: unchanged from 1000 to 3000 rounds),
	 * so measure from the tenth on. */
	long long settled = 0;
	for (int k = 0; k < shutdowns; k++) {
		dmaconn_shutdown();
		if (k == shutdowns / 5)
			settled = heap();
		bad += !cycle(k);
	}
	bad += !cycle(1); /* caches full again */
	long long kept = heap();
	dmaconn_shutdown();
	long long end = heap();
	CHECK_INT(bad, 0);

	printf("heap: %lld at start, %lld after the warm-up, %lld after %d cycles (%+lld); after shutdowns %lld "
	       "then %lld (%+lld over %d shutdown cycles); dmaconn_shutdown() gave back %lld bytes (what the "
	       "library keeps without it)\n",
	       start, warm, after, cycles, after - warm, settled, end, end - settled, shutdowns - shutdowns / 5,
	       kept - end);
	if (wrapper && *wrapper) {
		puts("under a wrapper: the wrapper checks for leaks");
	} else if (start == 0 && warm == 0) {
		puts("this allocator reports nothing: flatness not checked");
	} else {
		CHECK(after - warm < SLACK);
		CHECK(end - settled < SLACK);
		CHECK(kept - end > 0);
	}
	unlink(path);
	rmdir(dir);
	return check_done("test_memory");
}
