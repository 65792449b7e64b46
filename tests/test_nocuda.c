/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Detection never initialises CUDA, and dmaconn never loads it.  The test
 * runs with a fake libcuda.so.1 first on the library path: loading it leaves
 * a marker, calling its cuInit another.  After every detector ran:
 * - cuInit was never called (by anyone in the process);
 * - with no real NVML in the process (no driver, or a replay), no CUDA
 *   library was loaded at all;
 * - with a real NVML, dmaconn adds nothing CUDA to what NVML's own
 *   initialisation does: a control child that only dlopens NVML and calls
 *   nvmlInit_v2 shows every sign the detection left (NVML 580 dlopens the real
 *   libcuda.so.1 by its own path and opens /dev/nvidia-uvm in nvmlInit_v2),
 *   and no CUDA runtime is mapped.
 * Loading the fake and calling cuInit at the end proves the markers work.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

static int mapped(const char *base_prefix)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	int found = 0;
	while (f && fgets(line, sizeof(line), f)) {
		const char *base = strrchr(line, '/');
		if (base && !strncmp(base + 1, base_prefix, strlen(base_prefix)))
			found = 1;
	}
	if (f)
		fclose(f);
	return found;
}

static int exists(const char *path, const char *suffix)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s%s", path, suffix);
	return access(buf, F_OK) == 0;
}

static void clear(const char *path)
{
	char buf[4096];
	unlink(path);
	snprintf(buf, sizeof(buf), "%s.init", path);
	unlink(buf);
}

static int cuda_initialised(void);

/* What NVML alone does (dlopen + nvmlInit_v2, in a fresh child): bit 4 set
 * when it maps libcuda, plus cuda_initialised()'s bits; -1 if it failed. */
static int nvml_alone(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
		void *init = h ? dlsym(h, "nvmlInit_v2") : NULL;
		int (*fn)(void);
		memcpy(&fn, &init, sizeof(fn));
		if (!init || fn() != 0)
			_exit(100);
		_exit((mapped("libcuda.so") ? 4 : 0) | cuda_initialised());
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) < 8 ? WEXITSTATUS(status) : -1;
}

/* Signs of CUDA initialisation in this process, as bits: 1 the UVM device
 * is open, 2 a thread of the driver's ("cuda-EvtHandlr", ...) runs. */
static int cuda_initialised(void)
{
	char path[512], target[512];
	int found = 0;
	for (int fd = 0; fd < 4096 && !found; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			found = strstr(target, "nvidia-uvm") != NULL;
		}
	}
	int signs = found;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	found = 0;
	while (d && !found && (e = readdir(d))) {
		char comm[64] = "";
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "re");
		if (f && fgets(comm, sizeof(comm), f))
			found = !strncmp(comm, "cuda", 4);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return signs | (found ? 2 : 0);
}

int main(void)
{
	const char *marker = getenv("DMACONN_TEST_CUDA_MARKER");
	CHECK(marker != NULL);
	if (!marker)
		return check_done("test_nocuda");
	clear(marker);

	dmaconn_device_type types[16];
	const char *conns[16];
	int count = dmaconn_list_detectors(types, conns, 16);
	for (int i = 0; i < count && i < 16; i++) {
		/* Only an explicit detection of cuda/verified starts GPU work (in
		 * its helper): every other detection, and a passive one of it,
		 * must not. */
		int explicit_verify = types[i] == DMACONN_DEVICE_CUDA && !strcmp(conns[i], "verified");
		dmaconn_result *r = NULL;
		if (!explicit_verify) {
			CHECK_INT(dmaconn_detect(types[i], conns[i], &r), DMACONN_OK);
			dmaconn_result_release(r);
			r = NULL;
		}
		CHECK_INT(dmaconn_detect_passive(types[i], conns[i], &r), DMACONN_OK);
		dmaconn_result_release(r);
	}
	CHECK(!exists(marker, ".init")); /* nobody initialised CUDA */
	if (!mapped("libnvidia-ml.so")) {
		CHECK(!exists(marker, ""));
		CHECK(!mapped("libcuda.so"));
		CHECK(!mapped("libcudart.so"));
	} else {
		int ours = (mapped("libcuda.so") ? 4 : 0) | cuda_initialised();
		int nvml = nvml_alone();
		printf("real NVML in use; after detection: libcuda %s, UVM device %s, CUDA driver thread %s; "
		       "after NVML's own nvmlInit_v2 alone: libcuda %s, UVM device %s, CUDA driver thread %s\n",
		       ours & 4 ? "mapped" : "not mapped", ours & 1 ? "open" : "not open", ours & 2 ? "running" : "none",
		       nvml & 4 ? "mapped" : "not mapped", nvml & 1 ? "open" : "not open", nvml & 2 ? "running" : "none");
		/* dmaconn adds nothing CUDA to what initialising NVML does by itself. */
		CHECK(nvml >= 0);
		CHECK((ours & ~nvml) == 0);
		CHECK(!mapped("libcudart.so"));
		if (ours & 4) {
			/* The real driver is loaded, so the fake cannot be: the
			 * marker control below would test the real one. */
			dmaconn_shutdown();
			return check_done("test_nocuda");
		}
	}

	/* Positive control: the fake is found by soname and reports itself. */
	clear(marker);
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	CHECK(h != NULL);
	CHECK(exists(marker, ""));
	CHECK(mapped("libcuda.so"));
	void *sym = h ? dlsym(h, "cuInit") : NULL;
	int (*cu_init)(unsigned int);
	memcpy(&cu_init, &sym, sizeof(cu_init));
	CHECK(sym && cu_init(0) == 0 && exists(marker, ".init"));
	if (h)
		dlclose(h);
	clear(marker);
	dmaconn_shutdown();
	return check_done("test_nocuda");
}
