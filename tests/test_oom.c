/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Out of memory at every allocation of a detection, one at a time: the
 * test replaces malloc, calloc and realloc so that the k-th allocation
 * after arming (on the detecting thread) fails, for k = 1, 2, ... until a
 * detection makes no k-th allocation.  Each detection must then answer
 * DMACONN_ENOMEM, or DMACONN_OK with a result that claims nothing the
 * fault-free answer does not (same N, no cell above it) and that warns
 * where it says less; for Level Zero, whose devices are then counted
 * without it, another N with every cell 0 and a warning.  Heap use over a second sweep must not grow: no
 * error path keeps a reference or a buffer.
 *
 * usage: test_oom cuda   (DMACONN_REPLAY names the 2x H200 topology)
 *        test_oom cuda-library LIBRARY   (the stand-in NVML of fake_nvml_nvl.c)
 *        test_oom xpu    (DMACONN_REPLAY names two Data Center GPU Max)
 *        test_oom rocm KFD-TREE
 *        test_oom rocm-root KFD-TREE OTHER-TREE
 * The last form changes DMACONN_SYSFS_ROOT between detections instead: a
 * detection that cannot read the new tree must not answer from the old one.
 *
 * Not for sanitizer or valgrind builds, whose allocators it would bypass.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#include "check.h"
#include "dmaconn.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static _Thread_local long countdown; /* 0: off; else allocations until the one that fails */
static _Thread_local int fault_hit;

/* 1 when this allocation is to fail, with errno set as malloc sets it. */
static int fail_now(void)
{
	if (countdown == 0 || --countdown != 0)
		return 0;
	fault_hit = 1;
	errno = ENOMEM;
	return 1;
}

/* Default visibility: the build hides symbols, and these must serve the library. */
#define OOM_EXPORT __attribute__((visibility("default")))

/* The bytes in use, counted exactly (mallinfo2 counts chunks kept in
 * glibc's thread caches too). */
static long long live;

static void *counted(void *p)
{
	if (p)
		__atomic_add_fetch(&live, (long long)malloc_usable_size(p), __ATOMIC_RELAXED);
	return p;
}

static void uncount(void *p)
{
	if (p)
		__atomic_sub_fetch(&live, (long long)malloc_usable_size(p), __ATOMIC_RELAXED);
}

OOM_EXPORT void *malloc(size_t n)
{
	return fail_now() ? NULL : counted(__libc_malloc(n));
}

OOM_EXPORT void *calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : counted(__libc_calloc(n, size));
}

OOM_EXPORT void *realloc(void *p, size_t n)
{
	if (fail_now())
		return NULL;
	uncount(p);
	void *q = __libc_realloc(p, n);
	/* A failed realloc keeps p. */
	return counted(q ? q : (n ? p : NULL));
}

OOM_EXPORT void free(void *p)
{
	uncount(p);
	__libc_free(p);
}

static long warnings;
/* Level Zero out of memory counts the devices from sysfs, which a replay
 * file need not hold: N may then differ. */
static int counted_without_vendor;
/* The vendor library loaded afresh before each detection (shutdown, not
 * clear_cache), and what no warning may then say. */
static int from_shutdown;
static const char *never_warned;

static void count_warning(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
	warnings++;
}

struct answer {
	int n;
	int cells[64];
};

static int answer_of(const dmaconn_result *r, struct answer *a)
{
	a->n = dmaconn_result_size(r);
	if (a->n > 8)
		return -1;
	for (int i = 0; i < a->n * a->n; i++)
		a->cells[i] = dmaconn_result_get(r, i / a->n, i % a->n);
	return 0;
}

/* One armed detection: 1 when it made its k-th allocation (and was checked). */
static int armed(dmaconn_device_type type, const char *conn, int fresh, long k, const struct answer *want)
{
	dmaconn_result *r = NULL;
	long before = warnings;
	fault_hit = 0;
	countdown = k;
	int rc = fresh ? dmaconn_detect_fresh(type, conn, &r) : dmaconn_detect(type, conn, &r);
	countdown = 0;
	int hit = fault_hit;
	if (rc != DMACONN_OK && rc != DMACONN_ENOMEM) {
		fprintf(stderr, "%s k=%ld: %s (%s)\n", conn, k, dmaconn_err_name(rc), dmaconn_last_error());
		CHECK(rc == DMACONN_OK || rc == DMACONN_ENOMEM);
	}
	if (rc == DMACONN_OK) {
		struct answer got;
		CHECK_INT(answer_of(r, &got), 0);
		if (got.n != want->n && counted_without_vendor) {
			/* Counted another way, claiming nothing, and saying so. */
			int any = 0;
			for (int i = 0; i < got.n * got.n; i++)
				any += got.cells[i] != 0;
			CHECK_INT(any, 0);
			CHECK(dmaconn_result_warning_count(r) > 0);
		} else if (got.n != want->n) {
			fprintf(stderr, "%s k=%ld: N=%d, not %d\n", conn, k, got.n, want->n);
			CHECK_INT(got.n, want->n);
		} else {
			int less = 0, more = 0;
			for (int i = 0; i < got.n * got.n; i++) {
				less += got.cells[i] < want->cells[i];
				more += got.cells[i] > want->cells[i];
			}
			if (more || (less && dmaconn_result_warning_count(r) == 0))
				fprintf(stderr, "%s k=%ld: %d cells above, %d below (%d warnings): 0->1 %d, not %d\n",
					conn, k, more, less, dmaconn_result_warning_count(r), got.cells[1],
					want->cells[1]);
			CHECK_INT(more, 0);
			CHECK(!less || dmaconn_result_warning_count(r) > 0);
		}
		/* What went to the sink is what the result keeps, at most. */
		CHECK(warnings - before <= dmaconn_result_warning_count(r));
		for (int w = 0; never_warned && w < dmaconn_result_warning_count(r); w++) {
			const char *text = dmaconn_result_warning(r, w);
			if (strstr(text, never_warned)) {
				fprintf(stderr, "%s k=%ld: %s\n", conn, k, text);
				CHECK(!strstr(text, never_warned));
			}
		}
	}
	dmaconn_result_release(r);
	return hit;
}

static void fault_free(dmaconn_device_type type, const char *conn, struct answer *want)
{
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect_fresh(type, conn, &r), DMACONN_OK);
	CHECK_INT(answer_of(r, want), 0);
	dmaconn_result_release(r);
}

/* Every k for a detection after clear_cache (discovery made under the
 * fault) and for a fresh one over a kept discovery; returns the k's run. */
static long sweep(dmaconn_device_type type, const char *conn, const struct answer *want)
{
	long k = 1;
	for (;; k++) {
		if (from_shutdown) {
			dmaconn_shutdown();
			dmaconn_set_warning_handler(count_warning, NULL);
		} else {
			dmaconn_clear_cache();
		}
		if (!armed(type, conn, 0, k, want))
			break;
	}
	for (long f = 1;; f++, k++) {
		dmaconn_result *r = NULL;
		dmaconn_detect(type, conn, &r);
		dmaconn_result_release(r);
		if (!armed(type, conn, 1, f, want))
			break;
	}
	return k;
}

static long long heap(void)
{
	return __atomic_load_n(&live, __ATOMIC_RELAXED);
}

static void flat(dmaconn_device_type type, const char *const *conns, const struct answer *wants, int n)
{
	long runs = 0;
	for (int c = 0; c < n; c++)
		runs += sweep(type, conns[c], &wants[c]);
	long long first = heap();
	for (int c = 0; c < n; c++)
		sweep(type, conns[c], &wants[c]);
	long long second = heap();
	printf("%ld detections, each with one allocation failing; heap %+lld bytes over the second sweep\n", runs,
	       second - first);
	CHECK(second - first < 1024);
}

/* Two views of type: their answers without a fault (n devices, [0][1] the
 * value cell, unless -1), then every allocation of each failing in turn. */
static void both_views(dmaconn_device_type type, const char *a, const char *b, int n, int cell)
{
	const char *const conns[] = { a, b };
	struct answer wants[2];
	for (int c = 0; c < 2; c++)
		fault_free(type, conns[c], &wants[c]);
	CHECK_INT(wants[0].n, n);
	if (cell >= 0)
		CHECK_INT(wants[0].cells[1], cell);
	flat(type, conns, wants, 2);
}

/* root holds a KFD tree whose GPUs the other lacks: an allocation failing
 * while the new tree is read must not leave the old tree's answer. */
static void root_switch(const char *from, const char *to)
{
	struct answer want_to, want_from;
	setenv("DMACONN_SYSFS_ROOT", to, 1);
	dmaconn_clear_cache();
	fault_free(DMACONN_DEVICE_ROCM, "p2p", &want_to);
	setenv("DMACONN_SYSFS_ROOT", from, 1);
	dmaconn_clear_cache();
	fault_free(DMACONN_DEVICE_ROCM, "infinity_fabric", &want_from);
	CHECK(want_from.n != want_to.n);
	for (long k = 1;; k++) {
		setenv("DMACONN_SYSFS_ROOT", from, 1);
		dmaconn_clear_cache();
		dmaconn_result *r = NULL;
		CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "infinity_fabric", &r), DMACONN_OK);
		dmaconn_result_release(r);
		/* Another view, not cached yet, under the other tree. */
		setenv("DMACONN_SYSFS_ROOT", to, 1);
		if (!armed(DMACONN_DEVICE_ROCM, "p2p", 0, k, &want_to))
			break;
	}
}

int main(int argc, char **argv)
{
	setenv("DMACONN_NVML_THREADS", "1", 1); /* every allocation on the detecting thread */
	dmaconn_set_warning_handler(count_warning, NULL);
	if (argc == 2 && !strcmp(argv[1], "cuda")) {
		both_views(DMACONN_DEVICE_CUDA, "nvlink", "p2p", 2, 18);
	} else if (argc == 3 && !strcmp(argv[1], "cuda-library")) {
		/* NVML from DMACONN_NVML_LIBRARY, loaded and initialised under
		 * the fault: without it, the GPUs are counted from sysfs (none
		 * here), and never through another library than the one named. */
		setenv("DMACONN_NVML_LIBRARY", argv[2], 1);
		setenv("DMACONN_FAKE_NVML_GPUS", "2", 1);
		counted_without_vendor = 1;
		from_shutdown = 1;
		never_warned = "is the NVIDIA driver installed?";
		both_views(DMACONN_DEVICE_CUDA, "nvlink", "p2p", 2, 18);
	} else if (argc == 2 && !strcmp(argv[1], "xpu")) {
		counted_without_vendor = 1;
		both_views(DMACONN_DEVICE_XPU, "xelink", "p2p", 2, 2);
	} else if (argc == 3 && !strcmp(argv[1], "rocm")) {
		setenv("DMACONN_SYSFS_ROOT", argv[2], 1);
		both_views(DMACONN_DEVICE_ROCM, "infinity_fabric", "p2p", 2, -1);
	} else if (argc == 4 && !strcmp(argv[1], "rocm-root")) {
		root_switch(argv[2], argv[3]);
	} else {
		fprintf(stderr, "usage: test_oom cuda | test_oom cuda-library LIBRARY | test_oom xpu | test_oom rocm KFD-TREE | test_oom rocm-root KFD-TREE OTHER-TREE\n");
		return 2;
	}
	dmaconn_shutdown();
	return check_done("test_oom");
}
