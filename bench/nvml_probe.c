/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where NVML's time goes on this machine: each call dmaconn makes, timed
 * alone; link states per link versus one nvmlDeviceGetFieldValues batch;
 * serial versus one thread per device.  Prints one line per measurement.
 * Build: cc -O2 -Isrc/backends -Isrc/backends/nvml bench/nvml_probe.c src/backends/nvml/nvml_load.c -ldl -lpthread
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_load.h"

static struct nvml_api nv;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define TIME(label, expr)                                                               \
	do {                                                                            \
		double t0_ = now_ms();                                                  \
		nvmlReturn_t r_ = (expr);                                               \
		printf("%-58s %8.3f ms  rc=%d\n", label, now_ms() - t0_, r_);           \
	} while (0)

struct dev_job {
	nvmlDevice_t h;
	int active;
	double ms;
};

static void *scan_states(void *arg)
{
	struct dev_job *j = arg;
	double t0 = now_ms();
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		nvmlEnableState_t st;
		if (nv.nvmlDeviceGetNvLinkState(j->h, l, &st) == NVML_SUCCESS && st)
			j->active++;
	}
	j->ms = now_ms() - t0;
	return NULL;
}

static void *scan_fields(void *arg)
{
	struct dev_job *j = arg;
	nvmlFieldValue_t fv[NVML_NVLINK_MAX_LINKS + 1];
	memset(fv, 0, sizeof(fv));
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		fv[l].fieldId = NVML_FI_DEV_NVLINK_GET_STATE;
		fv[l].scopeId = l;
	}
	fv[NVML_NVLINK_MAX_LINKS].fieldId = NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT;
	double t0 = now_ms();
	nvmlReturn_t r = nv.nvmlDeviceGetFieldValues(j->h, NVML_NVLINK_MAX_LINKS + 1, fv);
	j->ms = now_ms() - t0;
	j->active = 0;
	for (unsigned l = 0; r == NVML_SUCCESS && l < NVML_NVLINK_MAX_LINKS; l++)
		j->active += fv[l].nvmlReturn == NVML_SUCCESS && fv[l].value.uiVal;
	printf("  fields: rc=%d state[0] rc=%d v=%u type=%d; switch_count rc=%d v=%u\n", r,
	       fv[0].nvmlReturn, fv[0].value.uiVal, fv[0].valueType, fv[NVML_NVLINK_MAX_LINKS].nvmlReturn,
	       fv[NVML_NVLINK_MAX_LINKS].value.uiVal);
	return NULL;
}

static void run(const char *label, void *(*fn)(void *), struct dev_job *jobs, unsigned n, int threads)
{
	double t0 = now_ms();
	pthread_t t[64];
	for (unsigned i = 0; i < n; i++) {
		jobs[i].active = 0;
		if (threads)
			pthread_create(&t[i], NULL, fn, &jobs[i]);
		else
			fn(&jobs[i]);
	}
	for (unsigned i = 0; threads && i < n; i++)
		pthread_join(t[i], NULL);
	int active = 0;
	for (unsigned i = 0; i < n; i++)
		active += jobs[i].active;
	printf("%-58s %8.3f ms  active=%d\n", label, now_ms() - t0, active);
}

struct attach_job {
	unsigned int index;
	double ms;
};

static void *attach(void *arg)
{
	struct attach_job *j = arg;
	nvmlDevice_t h;
	nvmlEnableState_t st;
	double t0 = now_ms();
	nv.nvmlDeviceGetHandleByIndex_v2(j->index, &h);
	nv.nvmlDeviceGetNvLinkState(h, 0, &st);
	j->ms = now_ms() - t0;
	return NULL;
}

/*
 * "attach" / "noattach": in a fresh process, init (nvmlInit_v2, or
 * nvmlInitWithFlags(NVML_INIT_FLAG_NO_ATTACH)) and then every device's first
 * handle and NVLink query from a thread of its own: does the driver attach
 * GPUs concurrently, and does deferring the attach shorten init?
 */
static int attach_probe(int no_attach)
{
	char err[512];
	if (nvml_api_open(&nv, "libnvidia-ml.so.1", NULL, err, sizeof(err))) {
		printf("%s\n", err);
		return 1;
	}
	nvmlReturn_t (*init_flags)(unsigned int);
	void *sym = dlsym(nv.handle, "nvmlInitWithFlags");
	memcpy(&init_flags, &sym, sizeof(sym));
	double t0 = now_ms();
	nvmlReturn_t r = no_attach && sym ? init_flags(2) : nv.nvmlInit_v2();
	double t1 = now_ms();
	unsigned int n = 0;
	nv.nvmlDeviceGetCount_v2(&n);
	n = n > 64 ? 64 : n;
	pthread_t t[64];
	struct attach_job jobs[64];
	for (unsigned int i = 0; i < n; i++) {
		jobs[i] = (struct attach_job){ i, 0 };
		pthread_create(&t[i], NULL, attach, &jobs[i]);
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	double t2 = now_ms();
	printf("%s: init %.3f ms (rc=%d); %u devices' first handle + NVLink query in parallel %.3f ms (each:",
	       no_attach ? "nvmlInitWithFlags(NO_ATTACH)" : "nvmlInit_v2", t1 - t0, r, n, t2 - t1);
	for (unsigned int i = 0; i < n; i++)
		printf(" %.3f", jobs[i].ms);
	printf("); total %.3f ms\n", t2 - t0);
	return 0;
}

/* dmaconn's own sequence of calls, phase by phase. */
struct seq_job {
	unsigned int index;
	nvmlDevice_t h;
	int phase; /* 1 identity, 2 links, 3 both */
	double ms;
};

static void *seq_device(void *arg)
{
	struct seq_job *j = arg;
	double t0 = now_ms();
	if (j->phase & 1) {
		char buf[96];
		nvmlPciInfo_t pci;
		int a, b;
		nv.nvmlDeviceGetHandleByIndex_v2(j->index, &j->h);
		nv.nvmlDeviceGetPciInfo_v3(j->h, &pci);
		nv.nvmlDeviceGetUUID(j->h, buf, sizeof(buf));
		nv.nvmlDeviceGetName(j->h, buf, sizeof(buf));
		nv.nvmlDeviceGetCudaComputeCapability(j->h, &a, &b);
	}
	if (j->phase & 2) {
		unsigned int c, p;
		nvmlGpuFabricInfo_v3_t f;
		nvmlFieldValue_t fv[NVML_NVLINK_MAX_LINKS + 1];
		nv.nvmlDeviceGetMigMode(j->h, &c, &p);
		memset(&f, 0, sizeof(f));
		f.version = nvmlGpuFabricInfo_v3;
		nv.nvmlDeviceGetGpuFabricInfoV(j->h, &f);
		memset(fv, 0, sizeof(fv));
		for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			fv[l].fieldId = NVML_FI_DEV_NVLINK_GET_STATE;
			fv[l].scopeId = l;
		}
		fv[NVML_NVLINK_MAX_LINKS].fieldId = NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT;
		nv.nvmlDeviceGetFieldValues(j->h, NVML_NVLINK_MAX_LINKS + 1, fv);
	}
	j->ms = now_ms() - t0;
	return NULL;
}

static double seq_phase(struct seq_job *jobs, unsigned int n, int phase)
{
	pthread_t t[64];
	double t0 = now_ms();
	for (unsigned int i = 0; i < n; i++) {
		jobs[i].phase = phase;
		pthread_create(&t[i], NULL, seq_device, &jobs[i]);
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return now_ms() - t0;
}

static int sequence_probe(int one_pass)
{
	char err[512];
	double t0 = now_ms();
	if (nvml_api_open(&nv, "libnvidia-ml.so.1", NULL, err, sizeof(err))) {
		printf("%s\n", err);
		return 1;
	}
	double t1 = now_ms();
	nv.nvmlInit_v2();
	double t2 = now_ms();
	unsigned int n = 0;
	nv.nvmlDeviceGetCount_v2(&n);
	n = n > 64 ? 64 : n;
	struct seq_job jobs[64];
	memset(jobs, 0, sizeof(jobs));
	for (unsigned int i = 0; i < n; i++)
		jobs[i].index = i;
	if (one_pass) {
		double p = seq_phase(jobs, n, 3);
		printf("one pass: dlopen %.3f, init %.3f, identity+links per device in parallel %.3f; total %.3f ms\n",
		       t1 - t0, t2 - t1, p, now_ms() - t0);
	} else {
		double p1 = seq_phase(jobs, n, 1), p2 = seq_phase(jobs, n, 2);
		printf("two passes: dlopen %.3f, init %.3f, identity %.3f, links %.3f; total %.3f ms\n", t1 - t0,
		       t2 - t1, p1, p2, now_ms() - t0);
	}
	return 0;
}

/* Whether the CUDA driver library is mapped into this process. */
static int cuda_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	int found = 0;
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "/libcuda.so") != NULL;
	if (f)
		fclose(f);
	return found;
}

#define STEP(label, expr)                                                               \
	do {                                                                            \
		nvmlReturn_t r_ = (expr);                                               \
		printf("%-44s rc=%-4d libcuda mapped: %s\n", label, r_, cuda_mapped() ? "YES" : "no"); \
	} while (0)

/* "cudamap": which NVML call, if any, makes NVML map the CUDA driver. */
static int cudamap_probe(void)
{
	char err[512], buf[96];
	printf("%-44s        libcuda mapped: %s\n", "(start)", cuda_mapped() ? "YES" : "no");
	if (nvml_api_open(&nv, "libnvidia-ml.so.1", NULL, err, sizeof(err))) {
		printf("%s\n", err);
		return 1;
	}
	printf("%-44s        libcuda mapped: %s\n", "dlopen(libnvidia-ml.so.1)", cuda_mapped() ? "YES" : "no");
	nvmlDevice_t h;
	nvmlPciInfo_t pci;
	unsigned int n, c, p;
	int a, b;
	nvmlEnableState_t st;
	nvmlGpuFabricInfo_v3_t f;
	memset(&f, 0, sizeof(f));
	f.version = nvmlGpuFabricInfo_v3;
	STEP("nvmlInit_v2", nv.nvmlInit_v2());
	STEP("nvmlDeviceGetCount_v2", nv.nvmlDeviceGetCount_v2(&n));
	STEP("nvmlDeviceGetHandleByIndex_v2", nv.nvmlDeviceGetHandleByIndex_v2(0, &h));
	STEP("nvmlDeviceGetPciInfo_v3", nv.nvmlDeviceGetPciInfo_v3(h, &pci));
	STEP("nvmlDeviceGetUUID", nv.nvmlDeviceGetUUID(h, buf, sizeof(buf)));
	STEP("nvmlDeviceGetName", nv.nvmlDeviceGetName(h, buf, sizeof(buf)));
	STEP("nvmlDeviceGetCudaComputeCapability", nv.nvmlDeviceGetCudaComputeCapability(h, &a, &b));
	STEP("nvmlDeviceGetMigMode", nv.nvmlDeviceGetMigMode(h, &c, &p));
	STEP("nvmlDeviceGetGpuFabricInfoV", nv.nvmlDeviceGetGpuFabricInfoV(h, &f));
	STEP("nvmlDeviceGetNvLinkState", nv.nvmlDeviceGetNvLinkState(h, 0, &st));
	STEP("nvmlSystemGetCudaDriverVersion_v2", nv.nvmlSystemGetCudaDriverVersion_v2(&a));
	return 0;
}

int main(int argc, char **argv)
{
	char err[512];
	if (argc > 1 && !strcmp(argv[1], "cudamap"))
		return cudamap_probe();
	if (argc > 1 && (!strcmp(argv[1], "attach") || !strcmp(argv[1], "noattach")))
		return attach_probe(!strcmp(argv[1], "noattach"));
	if (argc > 1 && (!strcmp(argv[1], "twopass") || !strcmp(argv[1], "onepass")))
		return sequence_probe(!strcmp(argv[1], "onepass"));
	/* "lazy": how much of dlopen is binding NVML's own imports up front. */
	int lazy = argc > 1 && !strcmp(argv[1], "lazy");
	double t0 = now_ms();
	void *lib = dlopen("libnvidia-ml.so.1", (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL);
	double t1 = now_ms();
	if (!lib || nvml_api_bind(&nv, lib, "libnvidia-ml.so.1", NULL, err, sizeof(err))) {
		printf("cannot load NVML: %s\n", lib ? err : dlerror());
		return 1;
	}
	printf("%-58s %8.3f ms\n", lazy ? "dlopen(RTLD_LAZY)" : "dlopen(RTLD_NOW)", t1 - t0);
	printf("%-58s %8.3f ms\n", "dlsym of the 22 NVML functions", now_ms() - t1);
	if (lazy)
		return 0;
	TIME("nvmlInit_v2", nv.nvmlInit_v2());
	TIME("nvmlInit_v2 (again)", nv.nvmlInit_v2());
	unsigned n = 0;
	TIME("nvmlDeviceGetCount_v2", nv.nvmlDeviceGetCount_v2(&n));
	if (n > 64)
		n = 64;
	struct dev_job jobs[64];
	memset(jobs, 0, sizeof(jobs));
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t h;
		char buf[128];
		nvmlPciInfo_t pci;
		int a, b;
		unsigned c, p;
		nvmlGpuFabricInfo_v3_t f;
		nvmlEnableState_t st;
		nvmlIntNvLinkDeviceType_t type;
		nvmlGpuP2PStatus_t ps;
		nvmlGpuTopologyLevel_t lvl;
		printf("device %u\n", i);
		TIME("  nvmlDeviceGetHandleByIndex_v2", nv.nvmlDeviceGetHandleByIndex_v2(i, &h));
		jobs[i].h = h;
		TIME("  nvmlDeviceGetPciInfo_v3", nv.nvmlDeviceGetPciInfo_v3(h, &pci));
		TIME("  nvmlDeviceGetUUID", nv.nvmlDeviceGetUUID(h, buf, sizeof(buf)));
		TIME("  nvmlDeviceGetName", nv.nvmlDeviceGetName(h, buf, sizeof(buf)));
		TIME("  nvmlDeviceGetCudaComputeCapability", nv.nvmlDeviceGetCudaComputeCapability(h, &a, &b));
		TIME("  nvmlDeviceGetMigMode", nv.nvmlDeviceGetMigMode(h, &c, &p));
		memset(&f, 0, sizeof(f));
		f.version = nvmlGpuFabricInfo_v3;
		TIME("  nvmlDeviceGetGpuFabricInfoV (v3)", nv.nvmlDeviceGetGpuFabricInfoV(h, &f));
		printf("    fabric state=%u status=%d clique=%u\n", f.state, f.status, f.cliqueId);
		TIME("  nvmlDeviceGetNvLinkState(link 0)", nv.nvmlDeviceGetNvLinkState(h, 0, &st));
		TIME("  nvmlDeviceGetNvLinkState(link 17)", nv.nvmlDeviceGetNvLinkState(h, 17, &st));
		TIME("  nvmlDeviceGetNvLinkState(link 18)", nv.nvmlDeviceGetNvLinkState(h, 18, &st));
		TIME("  nvmlDeviceGetNvLinkRemoteDeviceType(link 0)", nv.nvmlDeviceGetNvLinkRemoteDeviceType(h, 0, &type));
		printf("    remote type=%d\n", type);
		TIME("  nvmlDeviceGetNvLinkRemotePciInfo_v2(link 0)", nv.nvmlDeviceGetNvLinkRemotePciInfo_v2(h, 0, &pci));
		printf("    remote bus id=%.32s\n", pci.busId);
		TIME("  nvmlDeviceGetNvLinkVersion(link 0)", nv.nvmlDeviceGetNvLinkVersion(h, 0, &c));
		nvmlFieldValue_t fv;
		memset(&fv, 0, sizeof(fv));
		fv.fieldId = NVML_FI_DEV_NVLINK_GET_SPEED;
		TIME("  nvmlDeviceGetFieldValues(GET_SPEED link 0)", nv.nvmlDeviceGetFieldValues(h, 1, &fv));
		printf("    speed rc=%d value=%u type=%d\n", fv.nvmlReturn, fv.value.uiVal, fv.valueType);
		if (i > 0) {
			TIME("  nvmlDeviceGetP2PStatus(READ)", nv.nvmlDeviceGetP2PStatus(jobs[0].h, h, 0, &ps));
			TIME("  nvmlDeviceGetTopologyCommonAncestor", nv.nvmlDeviceGetTopologyCommonAncestor(jobs[0].h, h, &lvl));
			printf("    p2p=%d ancestor=%d\n", ps, lvl);
		}
	}
	run("link states, per link, serial", scan_states, jobs, n, 0);
	run("link states, per link, a thread per device", scan_states, jobs, n, 1);
	run("link states, one field batch per device, serial", scan_fields, jobs, n, 0);
	run("link states, one field batch per device, threads", scan_fields, jobs, n, 1);
	return 0;
}
