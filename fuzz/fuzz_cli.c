/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command line, in-process: the input, split at NUL bytes, is argv[1..]
 * of dmaconn_cli_main() (tools/cli.c).
 *
 * Nothing real is detected or written: DMACONN_REPLAY names a small topology
 * written at start-up (and loaded then, so that a --replay argument cannot
 * make the component read some other file), NVML, the verify helper and the
 * MPI component point at nothing, the working directory is a fresh empty
 * one, standard input and output are /dev/null, and inputs that could name
 * --record are skipped (it writes files).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "cli.h"
#include "dmaconn.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGS = 24 };

static char work_dir[64], replay_path[4096];

static void remove_work_dir(void)
{
	unlink(replay_path);
	if (chdir("/") == 0)
		rmdir(work_dir);
}

static const char topology[] =
	"{\"dmaconn_topology\": 1, \"pci_gpus\": [\"0000:00:06.0\", \"0000:00:07.0\"],\n"
	" \"nvml\": {\"devices\": [\n"
	"  {\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-e45afac4-9187-255f-1fb8-ab5d93a3bc6c\",\n"
	"   \"pci\": {\"bus_id\": \"00000000:00:06.0\"}, \"cuda_compute_capability\": [9, 0],\n"
	"   \"nvlink\": [{\"repeat\": 18, \"state\": 1, \"version\": 6, \"remote_type\": \"SWITCH\",\n"
	"                \"remote_pci\": {\"bus_id\": \"FFFFFFFF:FF:FF.0\"}}],\n"
	"   \"p2p\": [{\"peer\": 1, \"read\": \"OK\", \"write\": \"OK\", \"nvlink\": \"OK\", \"atomics\": \"OK\"}]},\n"
	"  {\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-474671f8-de03-86f7-a2ff-be8dbf78800f\",\n"
	"   \"pci\": {\"bus_id\": \"00000000:00:07.0\"}, \"cuda_compute_capability\": [9, 0],\n"
	"   \"nvlink\": [{\"repeat\": 18, \"state\": 1, \"version\": 6, \"remote_type\": \"SWITCH\",\n"
	"                \"remote_pci\": {\"bus_id\": \"FFFFFFFF:FF:FF.0\"}}],\n"
	"   \"p2p\": [{\"peer\": 0, \"read\": \"OK\", \"write\": \"OK\", \"nvlink\": \"OK\", \"atomics\": \"OK\"}]}]}}\n";

static void reset_environment(void)
{
	setenv("DMACONN_REPLAY", replay_path, 1);
	setenv("DMACONN_QUIET", "1", 1);
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	setenv("DMACONN_VERIFY_HELPER", "/nonexistent/dmaconn-verify-helper", 1);
	setenv("DMACONN_MPI_LIBRARY", "/nonexistent/libdmaconn_mpi.so.0", 1);
	setenv("DMACONN_SYSFS_ROOT", "/nonexistent", 1);
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("CUDA_DEVICE_ORDER");
	dmaconn_set_warning_handler(NULL, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(work_dir, sizeof(work_dir), "/tmp/dmaconn-fuzz-cli-XXXXXX");
	if (!mkdtemp(work_dir) || chdir(work_dir) != 0)
		abort();
	snprintf(replay_path, sizeof(replay_path), "%s/topology.json", work_dir);
	atexit(remove_work_dir);
	FILE *f = fopen(replay_path, "w");
	if (!f || fputs(topology, f) < 0 || fclose(f) != 0)
		abort();
	int null = open("/dev/null", O_WRONLY);
	if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
		abort();
	close(null);
	/* --format slurm-topology reads standard input: an empty one. */
	null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0)
		abort();
	close(null);
	reset_environment();
	/* Load the replay component with our file now. */
	dmaconn_result *r = NULL;
	if (dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r) != DMACONN_OK || dmaconn_result_size(r) != 2)
		abort();
	dmaconn_result_release(r);
	return 0;
}

/* Whether arg could be getopt_long's abbreviation of --record. */
static int names_record(const char *arg)
{
	if (strncmp(arg, "--", 2) != 0)
		return 0;
	size_t len = strcspn(arg, "=");
	return len > 2 && len <= strlen("--record") && !strncmp(arg, "--record", len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = "dmaconn";
	for (size_t pos = 0; size && pos <= size && argc <= MAX_ARGS;) {
		char *arg = copy + pos;
		if (names_record(arg))
			goto out;
		argv[argc++] = arg;
		pos += strlen(arg) + 1;
	}
	argv[argc] = NULL;
	reset_environment();
	dmaconn_cli_main(argc, argv);
	fflush(stdout);
out:
	free(copy);
	return 0;
}
