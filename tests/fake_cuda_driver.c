/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fake libcuda.so.1 for machines without a GPU: just enough of the driver
 * for dmaconn-verify-helper, exporting the same symbols (the prototypes come
 * from src/backends/cuda_verify/cuda_api.h, so the compiler checks every definition).
 *
 * Device memory is host memory; copies are memcpy; the kernel cannot run
 * PTX, so cuLaunchKernel recognises the one function cuModuleGetFunction
 * hands out and does what the kernel does, on the buffers in its
 * parameters.  A kernel touching another device's memory without peer
 * access enabled fails the next cuCtxSynchronize with
 * CUDA_ERROR_ILLEGAL_ADDRESS, as on a GPU.  Events read the host clock.
 *
 * Behaviour from the environment:
 *   FAKE_CUDA_DEVICES=N      devices (default 2, at most 64)
 *   FAKE_CUDA_NO_PEER=0-1,.. pairs i->j without peer access
 *   FAKE_CUDA_FAIL=cuX[:d],.. cuX fails (for device d only, when given; the
 *                            device of a call is its device argument, else
 *                            the current context's): CUDA_ERROR_PEER_ACCESS_
 *                            UNSUPPORTED for cuCtxEnablePeerAccess,
 *                            CUDA_ERROR_UNKNOWN for the others
 *   FAKE_CUDA_CORRUPT=1      the kernel stores one wrong value
 *   FAKE_CUDA_CRASH=1        abort() in cuLaunchKernel
 *   FAKE_CUDA_HANG=1         sleep(1000) in cuLaunchKernel
 *   FAKE_CUDA_HANG_DEVICE=d  the same, for kernels launched on device d only
 *   FAKE_CUDA_NO_DRIVER=1    cuInit fails with CUDA_ERROR_NO_DEVICE
 *   FAKE_CUDA_CRASH_AT_EXIT=1  abort() when the process exits, after its
 *                            whole report
 *   FAKE_CUDA_MARKER=F       cuInit creates the file F first (this driver
 *                            was loaded and initialised)
 *   FAKE_CUDA_GRANDCHILD=F   cuInit starts a child that sleeps forever with
 *                            the helper's stdout and stderr open, and writes
 *                            "<child pid> <helper pid>" to the file F
 *   FAKE_CUDA_GRANDCHILD_ESCAPE=1  that child leaves the helper's process
 *                            group and session (setsid), through a child of
 *                            its own that exits (so it is no child of the
 *                            helper either); the pid written is the escaped one's
 *   FAKE_CUDA_PCI=a,b,..     PCI bus ids of devices 0, 1, ... (default
 *                            0000:1A:00.0 upward)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_PROTO_(sym, fallback, params) FAKE_EXPORT dc_CUresult sym params;
DC_CU_FUNCS(FAKE_PROTO_)
#undef FAKE_PROTO_

#define MAX_DEVICES 64
#define KERNEL_NAME "dmaconn_peer_check"

struct CUctx_st {
	int dev;
	int refs;
	unsigned char peer[MAX_DEVICES]; /* peer access enabled to device k */
};

struct CUmod_st {
	int dev;
};

struct CUfunc_st {
	int magic;
};

struct CUevent_st {
	struct timespec at;
	int recorded;
};

struct alloc {
	struct alloc *next;
	char *base;
	size_t size;
	int dev;
};

static int initialised, ndev;
static struct CUctx_st ctxs[MAX_DEVICES];
static struct CUctx_st *current;
static struct CUfunc_st kernel_fn = { 0x6b65726e };
static struct alloc *allocs;
static dc_CUresult pending; /* reported by the next cuCtxSynchronize */

/* ----------------------------------------------------------- environment */

static int env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

static int no_peer(int i, int j)
{
	const char *list = getenv("FAKE_CUDA_NO_PEER");
	for (const char *p = list; p && *p;) {
		int a, b, used = 0;
		if (sscanf(p, "%d-%d%n", &a, &b, &used) == 2 && a == i && b == j)
			return 1;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return 0;
}

/* The code FAKE_CUDA_FAIL asks fn to fail with on device dev (-1: none), or 0. */
static dc_CUresult injected(const char *fn, int dev)
{
	const char *list = getenv("FAKE_CUDA_FAIL");
	size_t len = strlen(fn);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t tok = end ? (size_t)(end - p) : strlen(p);
		if (tok >= len && !strncmp(p, fn, len) &&
		    (tok == len || (p[len] == ':' && atoi(p + len + 1) == dev)))
			return !strcmp(fn, "cuCtxEnablePeerAccess") ? DC_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
								   : DC_CUDA_ERROR_UNKNOWN;
		p = end ? end + 1 : NULL;
	}
	return DC_CUDA_SUCCESS;
}

#define ENTER(fn, dev)                                                          \
	do {                                                                    \
		if (!initialised)                                               \
			return DC_CUDA_ERROR_NOT_INITIALIZED;                   \
		dc_CUresult inj_ = injected(fn, (dev));                         \
		if (inj_)                                                       \
			return inj_;                                            \
	} while (0)

#define CUR_DEV (current ? current->dev : -1)

static int valid_dev(dc_CUdevice d)
{
	return d >= 0 && d < ndev;
}

/* The allocation holding [p, p+len), or NULL. */
static struct alloc *find_alloc(dc_CUdeviceptr p, size_t len)
{
	for (struct alloc *a = allocs; a; a = a->next) {
		uintptr_t base = (uintptr_t)a->base;
		if (p >= base && p - base <= a->size && len <= a->size - (p - base))
			return a;
	}
	return NULL;
}

static void *host_ptr(dc_CUdeviceptr p)
{
	return (void *)(uintptr_t)p;
}

/* ------------------------------------------------------------ the driver */

static void crash_at_exit(void)
{
	abort();
}

/* FAKE_CUDA_GRANDCHILD: a child that would outlive the helper. */
static void start_grandchild(const char *file)
{
	fflush(NULL);
	int escape = getenv("FAKE_CUDA_GRANDCHILD_ESCAPE") != NULL, link[2] = { -1, -1 };
	if (escape && pipe(link) != 0)
		return;
	pid_t child = fork();
	if (child == 0 && escape) {
		/* A daemon's double fork: the grandchild's pid goes up the pipe. */
		pid_t escaped = fork();
		if (escaped == 0) {
			setsid();
			for (;;)
				pause();
		}
		ssize_t w = write(link[1], &escaped, sizeof(escaped));
		_exit(w == (ssize_t)sizeof(escaped) ? 0 : 1);
	}
	if (child == 0) {
		for (;;)
			pause();
	}
	if (escape) {
		close(link[1]);
		pid_t escaped = -1;
		if (child < 0 || read(link[0], &escaped, sizeof(escaped)) != (ssize_t)sizeof(escaped))
			escaped = -1;
		close(link[0]);
		waitpid(child, NULL, 0);
		child = escaped;
	}
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%ld %ld\n", (long)child, (long)getpid());
		if (fclose(f) == 0)
			rename(tmp, file);
	}
}

dc_CUresult cuInit(unsigned int flags)
{
	if (flags != 0)
		return DC_CUDA_ERROR_INVALID_VALUE;
	const char *marker = getenv("FAKE_CUDA_MARKER");
	FILE *m = marker && *marker ? fopen(marker, "w") : NULL;
	if (m)
		fclose(m);
	if (env_flag("FAKE_CUDA_NO_DRIVER"))
		return DC_CUDA_ERROR_NO_DEVICE;
	if (env_flag("FAKE_CUDA_CRASH_AT_EXIT"))
		atexit(crash_at_exit);
	const char *grandchild = getenv("FAKE_CUDA_GRANDCHILD");
	if (grandchild && *grandchild)
		start_grandchild(grandchild);
	const char *n = getenv("FAKE_CUDA_DEVICES");
	ndev = n && *n ? atoi(n) : 2;
	if (ndev < 0)
		ndev = 0;
	if (ndev > MAX_DEVICES)
		ndev = MAX_DEVICES;
	for (int i = 0; i < MAX_DEVICES; i++)
		ctxs[i].dev = i;
	initialised = 1;
	return injected("cuInit", -1);
}

dc_CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return DC_CUDA_ERROR_INVALID_VALUE;
	*version = 13000;
	return DC_CUDA_SUCCESS;
}

struct code_text {
	dc_CUresult code;
	const char *text;
};

static const struct code_text names[] = {
#define FAKE_NAME_(name, value) { value, #name },
	DC_CU_RESULTS(FAKE_NAME_)
#undef FAKE_NAME_
};

/* The text of code in table (n entries), or NULL. */
static const char *text_of(const struct code_text *table, size_t n, dc_CUresult code)
{
	for (size_t k = 0; k < n; k++)
		if (table[k].code == code)
			return table[k].text;
	return NULL;
}

dc_CUresult cuGetErrorName(dc_CUresult error, const char **str)
{
	*str = text_of(names, sizeof(names) / sizeof(names[0]), error);
	return *str ? DC_CUDA_SUCCESS : DC_CUDA_ERROR_INVALID_VALUE;
}

/* The driver's own texts of the errors the tests see; "fake driver error"
 * for the other known codes. */
static const struct code_text texts[] = {
	{ DC_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices" },
	{ DC_CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered" },
	{ DC_CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected" },
	{ DC_CUDA_ERROR_UNKNOWN, "unknown error" },
};

dc_CUresult cuGetErrorString(dc_CUresult error, const char **str)
{
	*str = text_of(texts, sizeof(texts) / sizeof(texts[0]), error);
	if (!*str && text_of(names, sizeof(names) / sizeof(names[0]), error))
		*str = "fake driver error";
	return *str ? DC_CUDA_SUCCESS : DC_CUDA_ERROR_INVALID_VALUE;
}

dc_CUresult cuDeviceGetCount(int *count)
{
	ENTER("cuDeviceGetCount", -1);
	*count = ndev;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuDeviceGet(dc_CUdevice *device, int ordinal)
{
	ENTER("cuDeviceGet", ordinal);
	if (!valid_dev(ordinal))
		return DC_CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuDeviceGetName(char *name, int len, dc_CUdevice dev)
{
	ENTER("cuDeviceGetName", dev);
	if (!valid_dev(dev))
		return DC_CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "Fake GPU %d", dev);
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuDeviceGetPCIBusId(char *bus, int len, dc_CUdevice dev)
{
	ENTER("cuDeviceGetPCIBusId", dev);
	if (!valid_dev(dev))
		return DC_CUDA_ERROR_INVALID_DEVICE;
	const char *list = getenv("FAKE_CUDA_PCI");
	for (int k = 0; list && *list; k++) {
		size_t tok = strcspn(list, ",");
		if (k == dev) {
			snprintf(bus, (size_t)len, "%.*s", (int)tok, list);
			return DC_CUDA_SUCCESS;
		}
		list += tok + (list[tok] == ',');
	}
	snprintf(bus, (size_t)len, "0000:%02X:00.0", 0x1a + dev); /* upper case, as CUDA */
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuDeviceGetUuid_v2(dc_CUuuid *uuid, dc_CUdevice dev)
{
	ENTER("cuDeviceGetUuid_v2", dev);
	if (!valid_dev(dev))
		return DC_CUDA_ERROR_INVALID_DEVICE;
	for (int k = 0; k < 16; k++)
		uuid->bytes[k] = (char)(k == 15 ? dev : 0xf0 + k);
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuDeviceCanAccessPeer(int *can, dc_CUdevice dev, dc_CUdevice peer)
{
	ENTER("cuDeviceCanAccessPeer", dev);
	if (!valid_dev(dev) || !valid_dev(peer))
		return DC_CUDA_ERROR_INVALID_DEVICE;
	*can = dev != peer && !no_peer(dev, peer);
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuDeviceGetP2PAttribute(int *value, dc_CUdevice_P2PAttribute attr, dc_CUdevice src,
				    dc_CUdevice dst)
{
	ENTER("cuDeviceGetP2PAttribute", src);
	if (!valid_dev(src) || !valid_dev(dst) || src == dst)
		return DC_CUDA_ERROR_INVALID_DEVICE;
	int peer = !no_peer(src, dst);
	switch (attr) {
	case DC_CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
		*value = 0;
		return DC_CUDA_SUCCESS;
	case DC_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
	case DC_CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
		*value = peer;
		return DC_CUDA_SUCCESS;
	case DC_CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
		*value = 0;
		return DC_CUDA_SUCCESS;
	}
	return DC_CUDA_ERROR_INVALID_VALUE;
}

dc_CUresult cuDevicePrimaryCtxRetain(dc_CUcontext *ctx, dc_CUdevice dev)
{
	ENTER("cuDevicePrimaryCtxRetain", dev);
	if (!valid_dev(dev))
		return DC_CUDA_ERROR_INVALID_DEVICE;
	ctxs[dev].refs++;
	*ctx = &ctxs[dev];
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuDevicePrimaryCtxRelease_v2(dc_CUdevice dev)
{
	ENTER("cuDevicePrimaryCtxRelease_v2", dev);
	if (!valid_dev(dev) || ctxs[dev].refs <= 0)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	ctxs[dev].refs--;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuDevicePrimaryCtxReset_v2(dc_CUdevice dev)
{
	ENTER("cuDevicePrimaryCtxReset_v2", dev);
	if (!valid_dev(dev))
		return DC_CUDA_ERROR_INVALID_DEVICE;
	memset(ctxs[dev].peer, 0, sizeof(ctxs[dev].peer));
	for (int k = 0; k < ndev; k++)
		ctxs[k].peer[dev] = 0;
	pending = DC_CUDA_SUCCESS;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuCtxSetCurrent(dc_CUcontext ctx)
{
	ENTER("cuCtxSetCurrent", ctx ? ctx->dev : -1);
	current = ctx;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuCtxSynchronize(void)
{
	ENTER("cuCtxSynchronize", CUR_DEV);
	if (!current)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	return pending;
}

dc_CUresult cuCtxEnablePeerAccess(dc_CUcontext peer, unsigned int flags)
{
	ENTER("cuCtxEnablePeerAccess", CUR_DEV);
	if (!current || !peer)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	if (flags != 0)
		return DC_CUDA_ERROR_INVALID_VALUE;
	if (peer == current || no_peer(current->dev, peer->dev))
		return DC_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
	if (current->peer[peer->dev])
		return DC_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
	current->peer[peer->dev] = 1;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuCtxDisablePeerAccess(dc_CUcontext peer)
{
	ENTER("cuCtxDisablePeerAccess", CUR_DEV);
	if (!current || !peer)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	if (!current->peer[peer->dev])
		return DC_CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
	current->peer[peer->dev] = 0;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuMemAlloc_v2(dc_CUdeviceptr *ptr, size_t size)
{
	ENTER("cuMemAlloc_v2", CUR_DEV);
	if (!current)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	if (!size)
		return DC_CUDA_ERROR_INVALID_VALUE;
	struct alloc *a = malloc(sizeof(*a));
	char *mem = malloc(size);
	if (!a || !mem) {
		free(a);
		free(mem);
		return DC_CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->base = mem;
	a->size = size;
	a->dev = current->dev;
	a->next = allocs;
	allocs = a;
	*ptr = (dc_CUdeviceptr)(uintptr_t)mem;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuMemFree_v2(dc_CUdeviceptr ptr)
{
	ENTER("cuMemFree_v2", CUR_DEV);
	for (struct alloc **pa = &allocs; *pa; pa = &(*pa)->next) {
		if ((uintptr_t)(*pa)->base == ptr) {
			struct alloc *a = *pa;
			*pa = a->next;
			free(a->base);
			free(a);
			return DC_CUDA_SUCCESS;
		}
	}
	return DC_CUDA_ERROR_INVALID_VALUE;
}

dc_CUresult cuMemcpyHtoD_v2(dc_CUdeviceptr dst, const void *src, size_t n)
{
	ENTER("cuMemcpyHtoD_v2", CUR_DEV);
	if (!find_alloc(dst, n))
		return DC_CUDA_ERROR_INVALID_VALUE;
	memcpy(host_ptr(dst), src, n);
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuMemcpyDtoH_v2(void *dst, dc_CUdeviceptr src, size_t n)
{
	ENTER("cuMemcpyDtoH_v2", CUR_DEV);
	if (!find_alloc(src, n))
		return DC_CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, host_ptr(src), n);
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuMemcpyPeer(dc_CUdeviceptr dst, dc_CUcontext dst_ctx, dc_CUdeviceptr src,
			 dc_CUcontext src_ctx, size_t n)
{
	ENTER("cuMemcpyPeer", src_ctx ? src_ctx->dev : -1);
	struct alloc *d = find_alloc(dst, n), *s = find_alloc(src, n);
	if (!dst_ctx || !src_ctx)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	if (!d || !s || d->dev != dst_ctx->dev || s->dev != src_ctx->dev)
		return DC_CUDA_ERROR_INVALID_VALUE;
	memmove(host_ptr(dst), host_ptr(src), n);
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuMemsetD32_v2(dc_CUdeviceptr dst, unsigned int value, size_t count)
{
	ENTER("cuMemsetD32_v2", CUR_DEV);
	if (count > SIZE_MAX / 4 || !find_alloc(dst, count * 4) || dst % 4)
		return DC_CUDA_ERROR_INVALID_VALUE;
	uint32_t *p = host_ptr(dst);
	for (size_t k = 0; k < count; k++)
		p[k] = value;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuModuleLoadData(dc_CUmodule *mod, const void *image)
{
	ENTER("cuModuleLoadData", CUR_DEV);
	if (!current)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	/* "JIT": accept PTX text of the right version that defines the kernel. */
	const char *ptx = image;
	if (!ptx || strncmp(ptx, ".version ", 9) != 0 || !strstr(ptx, ".entry " KERNEL_NAME "("))
		return DC_CUDA_ERROR_INVALID_PTX;
	struct CUmod_st *m = malloc(sizeof(*m));
	if (!m)
		return DC_CUDA_ERROR_OUT_OF_MEMORY;
	m->dev = current->dev;
	*mod = m;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuModuleGetFunction(dc_CUfunction *fn, dc_CUmodule mod, const char *name)
{
	ENTER("cuModuleGetFunction", CUR_DEV);
	if (!mod)
		return DC_CUDA_ERROR_INVALID_HANDLE;
	if (strcmp(name, KERNEL_NAME) != 0)
		return DC_CUDA_ERROR_NOT_FOUND;
	*fn = &kernel_fn;
	return DC_CUDA_SUCCESS;
}

/* Frees what a create call returned: a module, an event. */
static dc_CUresult free_handle(void *handle)
{
	if (!handle)
		return DC_CUDA_ERROR_INVALID_HANDLE;
	free(handle);
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuModuleUnload(dc_CUmodule mod)
{
	ENTER("cuModuleUnload", CUR_DEV);
	return free_handle(mod);
}

/* May the current device access n bytes at p?  Returns the memory or NULL. */
static void *kernel_access(dc_CUdeviceptr p, size_t n)
{
	struct alloc *a = find_alloc(p, n);
	if (!a || (a->dev != current->dev && !current->peer[a->dev]))
		return NULL;
	return host_ptr(p);
}

dc_CUresult cuLaunchKernel(dc_CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
			   dc_CUstream stream, void **params, void **extra)
{
	ENTER("cuLaunchKernel", CUR_DEV);
	(void)shared;
	(void)stream;
	if (!current)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	if (f != &kernel_fn || !params || extra)
		return DC_CUDA_ERROR_INVALID_VALUE;
	if (env_flag("FAKE_CUDA_CRASH"))
		abort();
	const char *hang_dev = getenv("FAKE_CUDA_HANG_DEVICE");
	if (env_flag("FAKE_CUDA_HANG") || (hang_dev && *hang_dev && atoi(hang_dev) == CUR_DEV))
		sleep(1000);
	if (pending)
		return pending;

	/* dmaconn_peer_check(u32 *data, u32 *ctr32, u64 *ctr64, u32 *mismatch, u32 n, u32 seed) */
	dc_CUdeviceptr p_data, p_ctr32, p_ctr64, p_mismatch;
	uint32_t n, seed;
	memcpy(&p_data, params[0], sizeof(p_data));
	memcpy(&p_ctr32, params[1], sizeof(p_ctr32));
	memcpy(&p_ctr64, params[2], sizeof(p_ctr64));
	memcpy(&p_mismatch, params[3], sizeof(p_mismatch));
	memcpy(&n, params[4], sizeof(n));
	memcpy(&seed, params[5], sizeof(seed));
	uint64_t threads = (uint64_t)gx * gy * gz * bx * by * bz;
	uint32_t *data = kernel_access(p_data, (size_t)n * 8);
	uint32_t *ctr32 = kernel_access(p_ctr32, 4);
	uint64_t *ctr64 = kernel_access(p_ctr64, 8);
	uint32_t *mismatch = kernel_access(p_mismatch, 4);
	if (!data || !ctr32 || !ctr64 || !mismatch) {
		pending = DC_CUDA_ERROR_ILLEGAL_ADDRESS; /* sticky, seen at the next sync */
		return DC_CUDA_SUCCESS;
	}
	int corrupt = env_flag("FAKE_CUDA_CORRUPT");
	for (uint32_t t = 0; t < n && t < threads; t++) {
		uint32_t a = seed + t * 0x9E3779B1u;
		if (data[t] != a)
			++*mismatch;
		uint32_t b = ~a;
		data[n + t] = corrupt && t == 7 ? b ^ 1u : b;
		if (data[n + t] != (corrupt && t == 7 ? b ^ 1u : b))
			++*mismatch;
		++*ctr32;
		*ctr64 += (uint64_t)(t + 1) * 0x100000001ull;
	}
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuEventCreate(dc_CUevent *ev, unsigned int flags)
{
	ENTER("cuEventCreate", CUR_DEV);
	if (!current)
		return DC_CUDA_ERROR_INVALID_CONTEXT;
	if (flags != DC_CU_EVENT_DEFAULT)
		return DC_CUDA_ERROR_INVALID_VALUE;
	struct CUevent_st *e = calloc(1, sizeof(*e));
	if (!e)
		return DC_CUDA_ERROR_OUT_OF_MEMORY;
	*ev = e;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuEventRecord(dc_CUevent ev, dc_CUstream stream)
{
	ENTER("cuEventRecord", CUR_DEV);
	(void)stream;
	if (!ev)
		return DC_CUDA_ERROR_INVALID_HANDLE;
	clock_gettime(CLOCK_MONOTONIC, &ev->at);
	ev->recorded = 1;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuEventSynchronize(dc_CUevent ev)
{
	ENTER("cuEventSynchronize", CUR_DEV);
	return ev ? DC_CUDA_SUCCESS : DC_CUDA_ERROR_INVALID_HANDLE;
}

dc_CUresult cuEventElapsedTime_v2(float *ms, dc_CUevent start, dc_CUevent end)
{
	ENTER("cuEventElapsedTime_v2", CUR_DEV);
	if (!start || !end || !start->recorded || !end->recorded)
		return DC_CUDA_ERROR_INVALID_HANDLE;
	double d = (double)(end->at.tv_sec - start->at.tv_sec) * 1e3 +
		   (double)(end->at.tv_nsec - start->at.tv_nsec) / 1e6;
	*ms = (float)d;
	return DC_CUDA_SUCCESS;
}

dc_CUresult cuEventDestroy_v2(dc_CUevent ev)
{
	ENTER("cuEventDestroy_v2", CUR_DEV);
	return free_handle(ev);
}
