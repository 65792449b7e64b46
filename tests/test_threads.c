/* Many threads racing the first detection: one detection, one result. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

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

int main(void)
{
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_CUDA, "slow", slow, NULL), DMACONN_OK);
	race(DMACONN_DEVICE_CUDA, "slow");
	CHECK_INT(atomic_load(&detections), 1);
	race(DMACONN_DEVICE_CUDA, "nvlink");
	dmaconn_shutdown();
	return check_done("test_threads");
}
