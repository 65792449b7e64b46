/* SPDX-License-Identifier: BSD-3-Clause */
/* Many threads racing the first detection: one detection, one result. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

enum { THREADS = 48 };

static atomic_int detections;
static pthread_barrier_t start;

static int slow(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	atomic_fetch_add(&detections, 1);
	struct timespec ts = { 0, 20 * 1000 * 1000 }; /* widen the race window */
	nanosleep(&ts, NULL);
	dmaconn_builder_set_size(b, 2);
	dmaconn_builder_set(b, 0, 1, 7);
	dmaconn_builder_set(b, 1, 0, 7);
	return DMACONN_OK;
}

struct job {
	dmaconn_device_type type;
	const char *conn;
	dmaconn_result *result;
	int rc;
};

static void *racer(void *arg)
{
	struct job *j = arg;
	pthread_barrier_wait(&start);
	j->rc = dmaconn_detect(j->type, j->conn, &j->result);
	return NULL;
}

static void race(dmaconn_device_type type, const char *conn)
{
	pthread_t threads[THREADS];
	struct job jobs[THREADS];
	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ type, conn, NULL, -100 };
		pthread_create(&threads[i], NULL, racer, &jobs[i]);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < THREADS; i++) {
		CHECK_INT(jobs[i].rc, DMACONN_OK);
		CHECK(jobs[i].result == jobs[0].result); /* the very same result */
	}
	dmaconn_result *r = jobs[0].result;
	int n = dmaconn_result_size(r);
	if (!strcmp(conn, "nvlink")) {
		/* DMACONN_REPLAY names the 2x H200 topology (NV18 through NVSwitch). */
		CHECK_INT(n, 2);
		CHECK_INT(dmaconn_result_get(r, 0, 1), 18);
		CHECK_INT(dmaconn_result_get(r, 1, 0), 18);
		CHECK_INT(dmaconn_result_warning_count(r), 0);
	} else {
		CHECK_INT(n, 2);
		CHECK_INT(dmaconn_result_get(r, 0, 1), 7);
	}
	for (int i = 0; i < THREADS; i++)
		dmaconn_result_release(jobs[i].result);
}

/*
 * The built-in views of every vendor, first detections racing fresh ones
 * and dmaconn_clear_cache() (which drops the discoveries they share): each
 * answer is the node's, whichever discovery it came from.
 */
static const struct view {
	dmaconn_device_type type;
	const char *conn;
	int n, cell; /* N and m[0][1] of the replayed node */
} views[] = {
	{ DMACONN_DEVICE_CUDA, "nvlink", 2, 18 },      { DMACONN_DEVICE_CUDA, "p2p", 2, 1 },
	{ DMACONN_DEVICE_ROCM, "infinity_fabric", 0, 0 }, { DMACONN_DEVICE_ROCM, "p2p", 0, 0 },
	{ DMACONN_DEVICE_XPU, "xelink", 0, 0 },        { DMACONN_DEVICE_XPU, "p2p", 0, 0 },
};
enum { NVIEWS = sizeof(views) / sizeof(views[0]) };

static atomic_int mixed_bad;

static void *mixed_racer(void *arg)
{
	long id = (long)arg;
	pthread_barrier_wait(&start);
	for (int k = 0; k < 12; k++) {
		const struct view *v = &views[(id + k) % NVIEWS];
		dmaconn_result *r = NULL;
		int rc = (id + k) % 3 == 0 ? dmaconn_detect_fresh(v->type, v->conn, &r)
					   : dmaconn_detect(v->type, v->conn, &r);
		/* The vendors without a device here say why, once. */
		int warned = v->n ? 0 : 1;
		if (rc != DMACONN_OK || dmaconn_result_size(r) != v->n || dmaconn_result_get(r, 0, 1) != v->cell ||
		    dmaconn_result_warning_count(r) != warned) {
			fprintf(stderr, "thread %ld: %s/%s: rc %d, N %d, %d warnings (%s)\n", id,
				dmaconn_device_type_name(v->type), v->conn, rc, dmaconn_result_size(r),
				dmaconn_result_warning_count(r), dmaconn_last_error());
			atomic_fetch_add(&mixed_bad, 1);
		}
		dmaconn_result_release(r);
		if ((id + k) % 5 == 4)
			dmaconn_clear_cache();
	}
	return NULL;
}

static void race_mixed(void)
{
	pthread_t threads[THREADS];
	pthread_barrier_init(&start, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&threads[i], NULL, mixed_racer, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&start);
	CHECK_INT(atomic_load(&mixed_bad), 0);
}

/*
 * dmaconn_record() while other threads detect: it loads the vendor libraries
 * afresh around its own detections, which must neither pull them from under
 * another thread's detection nor record that thread's calls.
 */
static atomic_int recording_done, record_bad;

static void *record_racer(void *arg)
{
	long id = (long)arg;
	for (int k = 0; !atomic_load(&recording_done); k++) {
		const struct view *v = &views[(id + k) % 2]; /* the CUDA views */
		dmaconn_result *r = NULL;
		int rc = k % 2 ? dmaconn_detect_fresh(v->type, v->conn, &r) : dmaconn_detect(v->type, v->conn, &r);
		if (rc != DMACONN_OK || dmaconn_result_size(r) != v->n || dmaconn_result_get(r, 0, 1) != v->cell) {
			fprintf(stderr, "thread %ld during a recording: %s: rc %d (%s)\n", id, v->conn, rc,
				dmaconn_last_error());
			atomic_fetch_add(&record_bad, 1);
		}
		dmaconn_result_release(r);
	}
	return NULL;
}

static void record_while_detecting(void)
{
	char dir[] = "/tmp/dmaconn-test-threads-XXXXXX", path[128];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/recorded.json", dir);
	pthread_t threads[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&threads[i], NULL, record_racer, (void *)i);
	for (int k = 0; k < 20; k++)
		CHECK_INT(dmaconn_record(path), DMACONN_OK);
	atomic_store(&recording_done, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(threads[i], NULL);
	CHECK_INT(atomic_load(&record_bad), 0);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_CUDA, "slow", slow, NULL), DMACONN_OK);
	race(DMACONN_DEVICE_CUDA, "slow");
	CHECK_INT(atomic_load(&detections), 1);
	race(DMACONN_DEVICE_CUDA, "nvlink");
	/* From nothing again: no result cached, nothing discovered or loaded. */
	dmaconn_shutdown();
	race_mixed();
	record_while_detecting();
	dmaconn_shutdown();
	return check_done("test_threads");
}
