/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn-verify-helper: the process that dmaconn_verify() spawns, so that
 * the CUDA driver is loaded here and never in the caller.  It checks peer
 * access between every ordered pair of visible GPUs by doing it, and reports
 * on stdout, one record per line (see "Output protocol" below).
 *
 * It loads libcuda.so.1 by soname, or the absolute path in
 * DMACONN_CUDA_LIBRARY (tests point that at a fake driver).  Device ordinals
 * are the driver's, so CUDA_VISIBLE_DEVICES, inherited from the caller,
 * applies as it does to the caller.
 *
 * For each ordered pair (i, j), i != j:
 *   - cuDeviceCanAccessPeer and cuDeviceGetP2PAttribute (access supported,
 *     native atomics, performance rank);
 *   - when access is possible: the primary contexts of i and j,
 *     cuCtxEnablePeerAccess from i to j, then a kernel on i (PTX below, JIT
 *     compiled by the driver) in which each of 1024 threads loads a value the
 *     host wrote into j's memory, stores a value into j's memory and loads it
 *     back, and adds atomically to a 32-bit and a 64-bit counter in j's
 *     memory; wrong loads are counted in i's memory.  The host then checks
 *     every stored value, both counters and the count of wrong loads;
 *   - copy bandwidth: the best of 3 timed cuMemcpyPeer of 64 MiB from i to j
 *     (after one untimed copy), in decimal GB/s (1e9 bytes per second);
 *   - latency: the median over 100 of the event-timed duration of a 4-byte
 *     cuMemcpyPeer from i to j, in microseconds (a copy's one-way latency as
 *     the GPU sees it, launch overhead on the GPU included).
 *
 * Output protocol (stdout): one JSON object per line, written as it
 * happens, its "record" member naming its type:
 *   {"record":"driver","version":13000}
 *   {"record":"device","ordinal":0,"pci":"0000:00:06.0","uuid":"GPU-...",
 *    "name":"NVIDIA H200"}
 *   {"record":"pair","from":0,"to":1,"status":"pass"|"fail"|"no_peer",
 *    "can_access_peer":"1","access_supported":"1","native_atomics":"1",
 *    "performance_rank":0,"gbps":"393.70","latency_us":2.1,
 *    "verified_read":"1",... [,"reason":"..."]}
 *   {"record":"done","pairs":2}
 * Each pair record is preceded by {"record":"begin","from":0,"to":1},
 * written before the pair is tried, so that a pair that never finishes can
 * be named.  With "--after I:J" the pairs up to and including I -> J (in
 * row order) are skipped and "done" counts the others.
 * Or, when nothing could be checked, {"record":"error","reason":"..."}
 * (after any device records).  A pair's other members are its properties,
 * written through the result codec (src/codec.h, DC_CODEC_EXACT): each
 * reads back (dc_codec_text) as the text the helper formatted.  Unknown
 * record types and members are to be ignored by readers.
 * Exit status: 0 when it reported (whatever the pairs' status), 2 otherwise.
 *
 * The caller runs it as the leader of a process group of its own and kills
 * that group when it is done with it.  Should the caller die first (SIGTERM,
 * Ctrl-C, a crash), the helper is sent SIGTERM and kills its group: nothing
 * it started outlives the verification.  What leaves the group (setsid, a
 * daemon's double fork) stays its child, as it is a subreaper: it kills and
 * reaps its children when it exits or is sent SIGTERM (not when SIGKILLed).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/codec.h"
#include "cuda_api.h"
#include "../loader.h"

#define THREADS_PER_BLOCK 256u
#define BLOCKS 4u
#define T (THREADS_PER_BLOCK * BLOCKS)
#define BW_BYTES ((size_t)64 << 20)
#define BW_REPS 3
#define LAT_REPS 100
#define LAT_BYTES 4

/* Layout of the small per-device buffer (bytes). */
#define DATA_OFF 0                      /* 2*T u32: [0,T) host-written, [T,2T) kernel-written */
#define CTR64_OFF (DATA_OFF + 8 * T)     /* u64 */
#define CTR32_OFF (CTR64_OFF + 8)        /* u32 */
#define MISMATCH_OFF (CTR32_OFF + 8)     /* u32, used on the kernel's own device */
#define SMALL_BYTES (MISMATCH_OFF + 8)

#define PATTERN_MUL 0x9E3779B1u
#define CTR64_MUL 0x100000001ull

/* The kernel.  Parameters: peer data, peer 32-bit counter, peer 64-bit
 * counter, local mismatch counter, n (threads), seed.  Thread t:
 *   a = seed + t * 0x9E3779B1
 *   if (peer[t] != a) mismatch++              (a load of host-written data)
 *   peer[n + t] = ~a; if (peer[n + t] != ~a) mismatch++   (store, load back)
 *   atomicAdd(ctr32, 1); atomicAdd(ctr64, (t + 1) * 0x100000001)
 * Loads and stores are volatile so that they reach memory. */
static const char kernel_ptx[] =
	".version 7.0\n"
	".target sm_52\n"
	".address_size 64\n"
	"\n"
	".visible .entry dmaconn_peer_check(\n"
	"\t.param .u64 p_data,\n"
	"\t.param .u64 p_ctr32,\n"
	"\t.param .u64 p_ctr64,\n"
	"\t.param .u64 p_mismatch,\n"
	"\t.param .u32 p_n,\n"
	"\t.param .u32 p_seed\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<4>;\n"
	"\t.reg .b32 %r<16>;\n"
	"\t.reg .b64 %rd<16>;\n"
	"\n"
	"\tld.param.u64 %rd1, [p_data];\n"
	"\tld.param.u64 %rd2, [p_ctr32];\n"
	"\tld.param.u64 %rd3, [p_ctr64];\n"
	"\tld.param.u64 %rd4, [p_mismatch];\n"
	"\tld.param.u32 %r1, [p_n];\n"
	"\tld.param.u32 %r2, [p_seed];\n"
	"\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tcvta.to.global.u64 %rd2, %rd2;\n"
	"\tcvta.to.global.u64 %rd3, %rd3;\n"
	"\tcvta.to.global.u64 %rd4, %rd4;\n"
	"\tmov.u32 %r3, %ctaid.x;\n"
	"\tmov.u32 %r4, %ntid.x;\n"
	"\tmov.u32 %r5, %tid.x;\n"
	"\tmad.lo.u32 %r6, %r3, %r4, %r5;\n"
	"\tsetp.ge.u32 %p1, %r6, %r1;\n"
	"\t@%p1 bra DONE;\n"
	"\tmov.u32 %r15, 0x9E3779B1;\n"
	"\tmad.lo.u32 %r7, %r6, %r15, %r2;\n"
	"\tmul.wide.u32 %rd5, %r6, 4;\n"
	"\tadd.u64 %rd6, %rd1, %rd5;\n"
	"\tld.volatile.global.u32 %r8, [%rd6];\n"
	"\tsetp.ne.u32 %p2, %r8, %r7;\n"
	"\t@%p2 atom.global.add.u32 %r9, [%rd4], 1;\n"
	"\tnot.b32 %r10, %r7;\n"
	"\tmul.wide.u32 %rd7, %r1, 4;\n"
	"\tadd.u64 %rd8, %rd6, %rd7;\n"
	"\tst.volatile.global.u32 [%rd8], %r10;\n"
	"\tld.volatile.global.u32 %r11, [%rd8];\n"
	"\tsetp.ne.u32 %p3, %r11, %r10;\n"
	"\t@%p3 atom.global.add.u32 %r12, [%rd4], 1;\n"
	"\tatom.global.add.u32 %r13, [%rd2], 1;\n"
	"\tadd.u32 %r14, %r6, 1;\n"
	"\tcvt.u64.u32 %rd9, %r14;\n"
	"\tmul.lo.u64 %rd10, %rd9, 4294967297;\n"
	"\tatom.global.add.u64 %rd11, [%rd3], %rd10;\n"
	"DONE:\n"
	"\tret;\n"
	"}\n";

static const char kernel_name[] = "dmaconn_peer_check";

static struct {
	void *lib;
#define DC_FIELD_(sym, fallback, params) dc_pfn_##sym sym;
	DC_CU_FUNCS(DC_FIELD_)
#undef DC_FIELD_
} cu;

/* ------------------------------------------------------------------ output */

/* Values as stored results hold them (src/codec.h): each reads back as the
 * text written here ("393.70" stays a string, "1" too), and what the driver
 * says that is not UTF-8 is replaced first. */
static const struct dc_codec record_codec = { DC_CODEC_EXACT, NULL };

/* A record being built: {"record": type, ...}; NULL when out of memory,
 * which every function below takes (the record is then not written). */
static json_t *record_start(const char *type)
{
	return json_pack("{s:s}", "record", type);
}

static void record_int(json_t *rec, const char *key, long long value)
{
	if (rec)
		json_object_set_new(rec, key, json_integer(value));
}

/* key = text, typed as the codec types the property key. */
static void record_put(json_t *rec, const char *key, const char *text)
{
	char *fixed = dc_codec_utf8_fix(text);
	if (rec)
		json_object_set_new(rec, key, dc_codec_value(&record_codec, key, fixed ? fixed : text));
	free(fixed);
}

static void record_vputf(json_t *rec, const char *key, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void record_vputf(json_t *rec, const char *key, const char *fmt, va_list ap)
{
	char value[1024];
	vsnprintf(value, sizeof(value), fmt, ap);
	record_put(rec, key, value);
}

static void record_putf(json_t *rec, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void record_putf(json_t *rec, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	record_vputf(rec, key, fmt, ap);
	va_end(ap);
}

/* Writes rec as one line (JSON escapes every line break) and frees it. */
static void record_emit(json_t *rec)
{
	char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
	if (text) {
		fputs(text, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	free(text);
	json_decref(rec);
}

static int fail_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail_run(const char *fmt, ...)
{
	json_t *rec = record_start("error");
	va_list ap;
	va_start(ap, fmt);
	record_vputf(rec, "reason", fmt, ap);
	va_end(ap);
	record_emit(rec);
	return 2;
}

/* "cuXxx: CUDA_ERROR_NAME (code): description" */
static void cu_error(char *buf, size_t len, const char *call, dc_CUresult rc)
{
	const char *name = NULL, *text = NULL;
	if (cu.cuGetErrorName && cu.cuGetErrorName(rc, &name) != DC_CUDA_SUCCESS)
		name = NULL;
	if (cu.cuGetErrorString && cu.cuGetErrorString(rc, &text) != DC_CUDA_SUCCESS)
		text = NULL;
	snprintf(buf, len, "%s: %s (%u)%s%s", call, name ? name : "CUDA error", rc, text ? ": " : "",
		 text ? text : "");
}

/* ----------------------------------------------------------------- loading */

static int load_driver(char *err, size_t errlen)
{
	const char *path = secure_getenv("DMACONN_CUDA_LIBRARY");
	if (path && *path && path[0] != '/') {
		snprintf(err, errlen, "DMACONN_CUDA_LIBRARY must be an absolute path, not '%s'", path);
		return -1;
	}
	const char *name = path && *path ? path : "libcuda.so.1";
	char why[512];
	cu.lib = dc_lib_open(name, "the CUDA driver", why, sizeof(why));
	if (!cu.lib) {
		snprintf(err, errlen, "cannot load the CUDA driver (%s): %s", name,
			 why + strlen("cannot load the CUDA driver: "));
		return -1;
	}
	const struct dc_symbol syms[] = {
#define DC_SYMBOL_(name_, fallback, params) { #name_, fallback, &cu.name_, 1 },
		DC_CU_FUNCS(DC_SYMBOL_)
#undef DC_SYMBOL_
	};
	const char *missing = dc_lib_bind(cu.lib, syms, sizeof(syms) / sizeof(syms[0]), NULL);
	if (missing) {
		snprintf(err, errlen, "the CUDA driver (%s) lacks %s", name, missing);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ devices */

struct dev {
	dc_CUdevice dev;
	dc_CUcontext ctx;
	dc_CUmodule mod;
	dc_CUfunction fn;
	dc_CUdeviceptr small, big;
	dc_CUevent ev[2];
	int retained, ready, broken;
	char why[512]; /* when broken */
};

static void dev_teardown(struct dev *d, int reset)
{
	if (d->retained) {
		cu.cuCtxSetCurrent(d->ctx);
		for (int k = 0; k < 2; k++)
			if (d->ev[k])
				cu.cuEventDestroy_v2(d->ev[k]);
		if (d->small)
			cu.cuMemFree_v2(d->small);
		if (d->big)
			cu.cuMemFree_v2(d->big);
		if (d->mod)
			cu.cuModuleUnload(d->mod);
		cu.cuCtxSetCurrent(NULL);
		cu.cuDevicePrimaryCtxRelease_v2(d->dev);
		/* Resetting clears a context that a failed kernel left unusable. */
		if (reset)
			cu.cuDevicePrimaryCtxReset_v2(d->dev);
	}
	d->ev[0] = d->ev[1] = NULL;
	d->small = d->big = 0;
	d->mod = NULL;
	d->fn = NULL;
	d->ctx = NULL;
	d->retained = d->ready = 0;
}

#define TRY(call, args)                                                         \
	do {                                                                    \
		dc_CUresult rc_ = cu.call args;                                 \
		if (rc_ != DC_CUDA_SUCCESS) {                                   \
			cu_error(why, whylen, #call, rc_);                      \
			goto fail;                                              \
		}                                                               \
	} while (0)

static int dev_setup(struct dev *d)
{
	if (d->ready)
		return 0;
	if (d->broken)
		return -1;
	char *why = d->why;
	size_t whylen = sizeof(d->why);
	TRY(cuDevicePrimaryCtxRetain, (&d->ctx, d->dev));
	d->retained = 1;
	TRY(cuCtxSetCurrent, (d->ctx));
	TRY(cuModuleLoadData, (&d->mod, kernel_ptx));
	TRY(cuModuleGetFunction, (&d->fn, d->mod, kernel_name));
	TRY(cuMemAlloc_v2, (&d->small, SMALL_BYTES));
	TRY(cuMemAlloc_v2, (&d->big, BW_BYTES));
	TRY(cuEventCreate, (&d->ev[0], DC_CU_EVENT_DEFAULT));
	TRY(cuEventCreate, (&d->ev[1], DC_CU_EVENT_DEFAULT));
	d->ready = 1;
	return 0;
fail:
	dev_teardown(d, 1);
	d->broken = 1;
	return -1;
}

/* --------------------------------------------------------------- one pair */

struct pair_out {
	int can_access, access_supported, native_atomics, rank;
	int have_access_supported, have_native_atomics, have_rank;
	int measured;
	int checked; /* the kernel ran: the four outcomes below are meaningful */
	int read_ok, write_ok, atomics32_ok, atomics64_ok;
	double gbps, latency_us;
	const char *status;
	char reason[1024];
};

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* The kernel check, bandwidth and latency for i -> j with both set up.
 * Returns 0 when every CUDA call succeeded (o->status says how the check
 * went), -1 on a CUDA error (reason in o->reason). */
static int check_pair(struct dev *di, struct dev *dj, int i, int j, struct pair_out *o)
{
	char *why = o->reason;
	size_t whylen = sizeof(o->reason);
	uint32_t *host = NULL;
	int enabled = 0;
	uint32_t seed = 0x5eed0000u ^ ((uint32_t)i << 8) ^ (uint32_t)j;

	host = calloc(1, SMALL_BYTES);
	if (!host) {
		snprintf(why, whylen, "out of host memory");
		return -1;
	}
	for (uint32_t t = 0; t < T; t++)
		host[t] = seed + t * PATTERN_MUL;

	TRY(cuCtxSetCurrent, (di->ctx));
	dc_CUresult rc = cu.cuCtxEnablePeerAccess(dj->ctx, 0);
	if (rc != DC_CUDA_SUCCESS && rc != DC_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
		cu_error(why, whylen, "cuCtxEnablePeerAccess", rc);
		goto fail;
	}
	enabled = rc == DC_CUDA_SUCCESS;

	/* Fresh values in j's buffer (the host-written half, a zeroed
	 * kernel-written half, zeroed counters) and a zeroed mismatch count. */
	TRY(cuMemcpyHtoD_v2, (dj->small, host, SMALL_BYTES));
	TRY(cuMemsetD32_v2, (di->small + MISMATCH_OFF, 0, 1));

	dc_CUdeviceptr p_data = dj->small + DATA_OFF, p_ctr32 = dj->small + CTR32_OFF,
		       p_ctr64 = dj->small + CTR64_OFF, p_mismatch = di->small + MISMATCH_OFF;
	unsigned int n = T;
	void *params[] = { &p_data, &p_ctr32, &p_ctr64, &p_mismatch, &n, &seed };
	TRY(cuLaunchKernel, (di->fn, BLOCKS, 1, 1, THREADS_PER_BLOCK, 1, 1, 0, NULL, params, NULL));
	TRY(cuCtxSynchronize, ());

	memset(host, 0, SMALL_BYTES);
	TRY(cuMemcpyDtoH_v2, (host, dj->small, SMALL_BYTES));
	uint32_t mismatch = 0;
	TRY(cuMemcpyDtoH_v2, (&mismatch, di->small + MISMATCH_OFF, sizeof(mismatch)));

	unsigned bad = 0, first = 0;
	uint32_t got = 0, want = 0;
	for (uint32_t t = 0; t < T; t++) {
		uint32_t a = seed + t * PATTERN_MUL;
		if (host[t] != a || host[T + t] != (uint32_t)~a) {
			if (!bad++) {
				first = t;
				got = host[t] != a ? host[t] : host[T + t];
				want = host[t] != a ? a : (uint32_t)~a;
			}
		}
	}
	uint32_t ctr32;
	uint64_t ctr64;
	memcpy(&ctr32, (const char *)host + CTR32_OFF, sizeof(ctr32));
	memcpy(&ctr64, (const char *)host + CTR64_OFF, sizeof(ctr64));
	uint64_t want64 = (uint64_t)T * (T + 1) / 2 * CTR64_MUL;

	/* Each capability on its own, so that a reader can tell which failed. */
	o->checked = 1;
	o->read_ok = mismatch == 0;
	o->write_ok = bad == 0;
	o->atomics32_ok = ctr32 == T;
	o->atomics64_ok = ctr64 == want64;
	o->status = "pass";
	if (bad) {
		o->status = "fail";
		snprintf(o->reason, sizeof(o->reason),
			 "stores: %u of %u values in GPU %d's memory wrong after the kernel on GPU %d "
			 "(first at %u: 0x%08x, expected 0x%08x)",
			 bad, T, j, i, first, got, want);
	} else if (mismatch) {
		o->status = "fail";
		snprintf(o->reason, sizeof(o->reason),
			 "loads: the kernel on GPU %d read %u wrong values from GPU %d's memory", i,
			 mismatch, j);
	} else if (ctr32 != T) {
		o->status = "fail";
		snprintf(o->reason, sizeof(o->reason),
			 "atomics: 32-bit counter on GPU %d is %u after %u atomic adds from GPU %d", j,
			 ctr32, T, i);
	} else if (ctr64 != want64) {
		o->status = "fail";
		snprintf(o->reason, sizeof(o->reason),
			 "atomics: 64-bit sum on GPU %d is %llu, expected %llu", j,
			 (unsigned long long)ctr64, (unsigned long long)want64);
	}

	/* Bandwidth: one untimed copy, then the best of BW_REPS. */
	float best = 0;
	TRY(cuMemcpyPeer, (dj->big, dj->ctx, di->big, di->ctx, BW_BYTES));
	for (int r = 0; r < BW_REPS; r++) {
		float ms = 0;
		TRY(cuEventRecord, (di->ev[0], NULL));
		TRY(cuMemcpyPeer, (dj->big, dj->ctx, di->big, di->ctx, BW_BYTES));
		TRY(cuEventRecord, (di->ev[1], NULL));
		TRY(cuEventSynchronize, (di->ev[1]));
		TRY(cuEventElapsedTime_v2, (&ms, di->ev[0], di->ev[1]));
		if (ms > 0 && (best == 0 || ms < best))
			best = ms;
	}
	/* Latency: the median of LAT_REPS small copies. */
	float lat[LAT_REPS];
	for (int r = 0; r < LAT_REPS; r++) {
		lat[r] = 0;
		TRY(cuEventRecord, (di->ev[0], NULL));
		TRY(cuMemcpyPeer, (dj->big, dj->ctx, di->big, di->ctx, LAT_BYTES));
		TRY(cuEventRecord, (di->ev[1], NULL));
		TRY(cuEventSynchronize, (di->ev[1]));
		TRY(cuEventElapsedTime_v2, (&lat[r], di->ev[0], di->ev[1]));
	}
	qsort(lat, LAT_REPS, sizeof(lat[0]), cmp_float);
	o->measured = 1;
	o->gbps = best > 0 ? (double)BW_BYTES / ((double)best * 1e-3) / 1e9 : 0;
	o->latency_us = (double)(lat[LAT_REPS / 2 - 1] + lat[LAT_REPS / 2]) / 2 * 1e3;

	if (enabled)
		cu.cuCtxDisablePeerAccess(dj->ctx);
	free(host);
	return 0;
fail:
	if (enabled)
		cu.cuCtxDisablePeerAccess(dj->ctx);
	free(host);
	return -1;
}

static void run_pair(struct dev *devs, int i, int j)
{
	struct pair_out o;
	memset(&o, 0, sizeof(o));
	char *why = o.reason;
	size_t whylen = sizeof(o.reason);
	struct dev *di = &devs[i], *dj = &devs[j];

	TRY(cuDeviceCanAccessPeer, (&o.can_access, di->dev, dj->dev));
	TRY(cuDeviceGetP2PAttribute,
	    (&o.access_supported, DC_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, di->dev, dj->dev));
	o.have_access_supported = 1;
	TRY(cuDeviceGetP2PAttribute, (&o.native_atomics,
				      DC_CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, di->dev,
				      dj->dev));
	o.have_native_atomics = 1;
	TRY(cuDeviceGetP2PAttribute,
	    (&o.rank, DC_CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, di->dev, dj->dev));
	o.have_rank = 1;

	if (!o.can_access) {
		o.status = "no_peer";
		snprintf(o.reason, sizeof(o.reason),
			 "the driver reports no peer access from GPU %d to GPU %d", i, j);
	} else if (dev_setup(di) != 0) {
		o.status = "fail";
		snprintf(o.reason, sizeof(o.reason), "GPU %d: %s", i, di->why);
	} else if (dev_setup(dj) != 0) {
		o.status = "fail";
		snprintf(o.reason, sizeof(o.reason), "GPU %d: %s", j, dj->why);
	} else if (check_pair(di, dj, i, j, &o) != 0) {
		o.status = "fail";
		/* The failed call may have left either context unusable. */
		dev_teardown(di, 1);
		dev_teardown(dj, 1);
	}
	goto out;
fail:
	o.status = "fail";
out:;
	json_t *rec = record_start("pair");
	record_int(rec, "from", i);
	record_int(rec, "to", j);
	record_put(rec, "status", o.status);
	record_putf(rec, "can_access_peer", "%d", o.can_access);
	if (o.have_access_supported)
		record_putf(rec, "access_supported", "%d", o.access_supported);
	if (o.have_native_atomics)
		record_putf(rec, "native_atomics", "%d", o.native_atomics);
	if (o.have_rank)
		record_putf(rec, "performance_rank", "%d", o.rank);
	if (o.checked) {
		record_putf(rec, "verified_read", "%d", o.read_ok);
		record_putf(rec, "verified_write", "%d", o.write_ok);
		record_putf(rec, "verified_atomics_32", "%d", o.atomics32_ok);
		record_putf(rec, "verified_atomics_64", "%d", o.atomics64_ok);
	}
	if (o.measured) {
		record_putf(rec, "gbps", "%.2f", o.gbps);
		record_putf(rec, "latency_us", "%.2f", o.latency_us);
	}
	if (o.reason[0])
		record_put(rec, "reason", o.reason);
	record_emit(rec);
}

/* ------------------------------------------------------------------- main */

static void uuid_string(const dc_CUuuid *u, char *out, size_t len)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	snprintf(out, len,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

/* The parent of the process whose /proc entry is name (its pid in *pid),
 * or -1. */
static pid_t parent_of(const char *name, pid_t *pid)
{
	char path[64] = "/proc/", buf[512];
	size_t len = strlen(path);
	long id = 0;
	for (const char *c = name; *c; c++) {
		if (*c < '0' || *c > '9' || len + 6 >= sizeof(path))
			return -1;
		path[len++] = *c;
		id = id * 10 + (*c - '0');
	}
	*pid = (pid_t)id;
	memcpy(path + len, "/stat", 6);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold anything, ')' included. */
	char *end = NULL;
	for (char *c = buf; *c; c++)
		if (*c == ')')
			end = c;
	if (!end || end[1] != ' ' || !end[2] || end[3] != ' ')
		return -1;
	long ppid = 0;
	for (const char *c = end + 4; *c >= '0' && *c <= '9'; c++)
		ppid = ppid * 10 + (*c - '0');
	return (pid_t)ppid;
}

/* A struct linux_dirent64, as getdents64 writes it. */
struct proc_entry {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* SIGKILLs this process's children, then reaps one, until none is left:
 * a child that dies hands its own children to us (a subreaper), and they are
 * found at the next look.  System calls only: it also runs in on_term. */
static void kill_children(void)
{
	pid_t self = getpid();
	for (;;) {
		int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return;
		char buf[4096] __attribute__((aligned(8)));
		long n;
		while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
			for (long off = 0; off < n;) {
				const struct proc_entry *e = (const struct proc_entry *)(void *)(buf + off);
				off += e->reclen;
				pid_t pid = 0;
				if (parent_of(e->name, &pid) == self)
					kill(pid, SIGKILL);
			}
		close(dir);
		pid_t r;
		while ((r = waitpid(-1, NULL, 0)) < 0 && errno == EINTR)
			;
		if (r < 0)
			return; /* no child left */
	}
}

static void kill_children_at_exit(void)
{
	int saved = errno;
	kill_children();
	errno = saved;
}

static volatile sig_atomic_t leads_group;

/* SIGTERM (also when the caller dies): the whole group goes, as the caller
 * would have made it go; run by hand in another's group, only ourselves. */
static void on_term(int sig)
{
	kill_children();
	if (leads_group)
		kill(0, SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void follow_caller(void)
{
	leads_group = getpgrp() == getpid();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	pid_t parent = getppid();
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	atexit(kill_children_at_exit);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		raise(SIGTERM); /* it died before we asked */
}

int main(int argc, char **argv)
{
	follow_caller();
	/* --after I:J resumes after the pair I -> J (the caller restarts us
	 * past a pair that hung). */
	int after_i = -1, after_j = -1;
	if (argc == 3 && !strcmp(argv[1], "--after")) {
		char *end;
		long a = strtol(argv[2], &end, 10);
		long b = *end == ':' ? strtol(end + 1, &end, 10) : -1;
		if (*end || a < 0 || b < 0 || a > 1 << 20 || b > 1 << 20)
			argc = 0;
		after_i = (int)a;
		after_j = (int)b;
	}
	if (argc != 1 && argc != 3) {
		fprintf(stderr, "usage: dmaconn-verify-helper [--after I:J]\n"
				"Checks CUDA peer access between all visible GPUs; run by "
				"dmaconn_verify().\n");
		return 2;
	}
	char err[1024];
	if (load_driver(err, sizeof(err)) != 0)
		return fail_run("%s", err);

	dc_CUresult rc = cu.cuInit(0);
	if (rc != DC_CUDA_SUCCESS) {
		cu_error(err, sizeof(err), "cuInit", rc);
		return fail_run("%s", err);
	}
	int version = 0;
	if (cu.cuDriverGetVersion(&version) == DC_CUDA_SUCCESS) {
		json_t *rec = record_start("driver");
		record_int(rec, "version", version);
		record_emit(rec);
	}
	int n = 0;
	rc = cu.cuDeviceGetCount(&n);
	if (rc != DC_CUDA_SUCCESS) {
		cu_error(err, sizeof(err), "cuDeviceGetCount", rc);
		return fail_run("%s", err);
	}
	struct dev *devs = calloc(n > 0 ? (size_t)n : 1, sizeof(*devs));
	if (!devs)
		return fail_run("out of memory");
	for (int i = 0; i < n; i++) {
		rc = cu.cuDeviceGet(&devs[i].dev, i);
		if (rc != DC_CUDA_SUCCESS) {
			cu_error(err, sizeof(err), "cuDeviceGet", rc);
			free(devs);
			return fail_run("GPU %d: %s", i, err);
		}
		char pci[64] = "", name[256] = "", uuid[64] = "";
		dc_CUuuid u;
		if (cu.cuDeviceGetPCIBusId(pci, (int)sizeof(pci), devs[i].dev) != DC_CUDA_SUCCESS)
			pci[0] = '\0';
		for (char *p = pci; *p; p++)
			if (*p >= 'A' && *p <= 'F')
				*p = (char)(*p - 'A' + 'a');
		if (cu.cuDeviceGetName(name, (int)sizeof(name), devs[i].dev) != DC_CUDA_SUCCESS)
			name[0] = '\0';
		if (cu.cuDeviceGetUuid_v2(&u, devs[i].dev) == DC_CUDA_SUCCESS)
			uuid_string(&u, uuid, sizeof(uuid));
		json_t *rec = record_start("device");
		record_int(rec, "ordinal", i);
		if (pci[0])
			record_put(rec, "pci", pci);
		if (uuid[0])
			record_put(rec, "uuid", uuid);
		if (name[0])
			record_put(rec, "name", name);
		record_emit(rec);
	}

	int pairs = 0;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j || i < after_i || (i == after_i && j <= after_j))
				continue;
			/* Announced first, so that the caller can name a pair that hangs. */
			json_t *rec = record_start("begin");
			record_int(rec, "from", i);
			record_int(rec, "to", j);
			record_emit(rec);
			run_pair(devs, i, j);
			pairs++;
		}
	}
	json_t *rec = record_start("done");
	record_int(rec, "pairs", pairs);
	record_emit(rec);

	for (int i = 0; i < n; i++)
		dev_teardown(&devs[i], 0);
	free(devs);
	/* libcuda stays loaded: unloading a driver mid-exit gains nothing. */
	return 0;
}
