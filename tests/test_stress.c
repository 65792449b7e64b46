/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every thread-safe entry point at once: threads detect (cached and fresh),
 * clear the cache, register and unregister detectors (their own pairs and
 * one they share), list the detectors, swap the warning handler, hand
 * results to each other and read them through every accessor, on a
 * replayed node (DMACONN_REPLAY, the 2x H200 file: NV18, peer access OK).
 * Bounded: ROUNDS per thread (fewer under DMACONN_TEST_WRAPPER); meant for
 * ThreadSanitizer (-DDMACONN_TSAN=ON) as much as for the plain build.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dmaconn.h"

enum { THREADS = 12 };

static int rounds = 400;
static atomic_int failures;
static atomic_long warnings_a, warnings_b;
static pthread_barrier_t start;

/* A result handed from one thread to another. */
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static dmaconn_result *slot;

#define FAIL_IF(cond, ...)                                                             \
	do {                                                                           \
		if (cond) {                                                            \
			atomic_fetch_add(&failures, 1);                                \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
		}                                                                      \
	} while (0)

static void handler_a(const char *message, void *user_data)
{
	(void)user_data;
	if (message && *message)
		atomic_fetch_add(&warnings_a, 1);
}

static void handler_b(const char *message, void *user_data)
{
	(void)message;
	atomic_fetch_add((atomic_long *)user_data, 1);
}

/* A thread's own detector: an N=3 matrix holding its id, and a warning. */
static int own(dmaconn_builder *b, void *user_data)
{
	int id = (int)(long)user_data;
	dmaconn_builder_set_size(b, 3);
	dmaconn_builder_set(b, 0, 2, id + 1);
	dmaconn_builder_set_device_property(b, 2, "owner", "me");
	dmaconn_builder_set_pair_property(b, 0, 2, "id", "x");
	dmaconn_builder_warn(b, "own detector of thread %d", id);
	return DMACONN_OK;
}

/* The shared pair's detector: N=1 and nothing else. */
static int shared(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return dmaconn_builder_set_size(b, 1);
}

/* Reads every accessor of r and checks what is known of its pair. */
static void inspect(const dmaconn_result *r, const char *conn)
{
	int n = dmaconn_result_size(r);
	const int *m = dmaconn_result_matrix(r);
	if (!strcmp(conn, "nvlink") || !strcmp(conn, "p2p")) {
		int want = !strcmp(conn, "nvlink") ? 18 : 1;
		FAIL_IF(n != 2 || !m || m[1] != want || m[2] != want || m[0] || m[3],
			"%s: wrong result (n=%d)", conn, n);
		FAIL_IF(strcmp(dmaconn_result_connection_type(r), conn), "%s: wrong connection", conn);
		FAIL_IF(dmaconn_result_device_type(r) != DMACONN_DEVICE_CUDA, "%s: wrong type", conn);
		const char *bus = dmaconn_result_device_get(r, 1, "pci_bus_id");
		FAIL_IF(!bus || strcmp(bus, "0000:00:07.0"), "%s: device 1 is at %s", conn, bus ? bus : "(null)");
	}
	long sum = 0;
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < dmaconn_result_device_property_count(r, i); k++) {
			const char *key = dmaconn_result_device_property_key(r, i, k);
			const char *value = dmaconn_result_device_property_value(r, i, k);
			FAIL_IF(!key || !value || dmaconn_result_device_get(r, i, key) != value,
				"%s: device property %d/%d", conn, i, k);
			sum += (long)strlen(value);
		}
		for (int j = 0; j < n; j++) {
			sum += dmaconn_result_get(r, i, j);
			for (int k = 0; k < dmaconn_result_pair_property_count(r, i, j); k++) {
				const char *key = dmaconn_result_pair_property_key(r, i, j, k);
				const char *value = dmaconn_result_pair_property_value(r, i, j, k);
				FAIL_IF(!key || !value || dmaconn_result_pair_get(r, i, j, key) != value,
					"%s: pair property %d,%d/%d", conn, i, j, k);
			}
		}
	}
	for (int k = 0; k < dmaconn_result_warning_count(r); k++)
		sum += (long)strlen(dmaconn_result_warning(r, k));
	FAIL_IF(sum < 0, "impossible");
	FAIL_IF(dmaconn_result_get(r, -1, n) != 0, "%s: out-of-range get", conn);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	unsigned seed = (unsigned)id * 2654435761u + 1;
	char own_name[32];
	snprintf(own_name, sizeof(own_name), "stress-%d", id);
	pthread_barrier_wait(&start);
	for (int round = 0; round < rounds; round++) {
		seed = seed * 1103515245u + 12345u;
		int op = (int)((seed >> 16) % 12);
		dmaconn_result *r = NULL;
		int rc;
		switch (op) {
		case 0:
		case 1:
			rc = dmaconn_detect(DMACONN_DEVICE_CUDA, op ? "p2p" : "nvlink", &r);
			FAIL_IF(rc != DMACONN_OK, "detect: %s", dmaconn_last_error());
			if (r)
				inspect(r, op ? "p2p" : "nvlink");
			break;
		case 2:
		case 3:
			rc = dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, op == 3 ? "p2p" : "nvlink", &r);
			FAIL_IF(rc != DMACONN_OK, "detect_fresh: %s", dmaconn_last_error());
			if (r)
				inspect(r, op == 3 ? "p2p" : "nvlink");
			break;
		case 4:
			dmaconn_clear_cache();
			break;
		case 5:
			/* Its own pair: registered, detected, gone again. */
			rc = dmaconn_register_detector(DMACONN_DEVICE_CUDA, own_name, own, (void *)(long)id);
			FAIL_IF(rc != DMACONN_OK, "register %s: %s", own_name, dmaconn_last_error());
			rc = dmaconn_detect(DMACONN_DEVICE_CUDA, own_name, &r);
			FAIL_IF(rc != DMACONN_OK || dmaconn_result_get(r, 0, 2) != id + 1, "detect %s: %s",
				own_name, dmaconn_last_error());
			if (r)
				inspect(r, own_name);
			rc = dmaconn_unregister_detector(DMACONN_DEVICE_CUDA, own_name);
			FAIL_IF(rc != DMACONN_OK, "unregister %s: %s", own_name, dmaconn_last_error());
			dmaconn_result *gone = NULL;
			rc = dmaconn_detect(DMACONN_DEVICE_CUDA, own_name, &gone);
			FAIL_IF(rc != DMACONN_ENODETECTOR || gone, "%s still detects after unregistering", own_name);
			FAIL_IF(!strstr(dmaconn_last_error(), own_name), "last error of another thread: %s",
				dmaconn_last_error());
			break;
		case 6:
			/* The shared pair: whoever comes first registers it. */
			rc = dmaconn_register_detector(DMACONN_DEVICE_CUDA, "stress-shared", shared, NULL);
			FAIL_IF(rc != DMACONN_OK && rc != DMACONN_EEXIST, "register shared: %d", rc);
			break;
		case 7:
			rc = dmaconn_unregister_detector(DMACONN_DEVICE_CUDA, "stress-shared");
			FAIL_IF(rc != DMACONN_OK && rc != DMACONN_ENODETECTOR, "unregister shared: %d", rc);
			break;
		case 8:
			rc = (seed & 1) ? dmaconn_detect(DMACONN_DEVICE_CUDA, "stress-shared", &r)
					: dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "stress-shared", &r);
			FAIL_IF(rc != DMACONN_OK && rc != DMACONN_ENODETECTOR, "detect shared: %d", rc);
			FAIL_IF(rc == DMACONN_OK && dmaconn_result_size(r) != 1, "shared: wrong size");
			break;
		case 9: {
			dmaconn_device_type types[64];
			const char *conns[64];
			int n = dmaconn_list_detectors(types, conns, 64);
			FAIL_IF(n < 2, "list: %d detectors", n);
			for (int k = 0; k < n && k < 64; k++)
				FAIL_IF(!conns[k] || !*conns[k] || !dmaconn_device_type_name(types[k]), "list entry %d", k);
			break;
		}
		case 10:
			if (seed & 2)
				dmaconn_set_warning_handler(handler_a, NULL);
			else
				dmaconn_set_warning_handler(handler_b, &warnings_b);
			break;
		case 11:
			/* Hand a result to whichever thread comes next. */
			rc = dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r);
			FAIL_IF(rc != DMACONN_OK, "detect: %s", dmaconn_last_error());
			pthread_mutex_lock(&slot_lock);
			dmaconn_result *taken = slot;
			slot = dmaconn_result_retain(r);
			pthread_mutex_unlock(&slot_lock);
			if (taken) {
				inspect(taken, "nvlink");
				dmaconn_result_release(taken);
			}
			break;
		}
		dmaconn_result_release(r);
	}
	return NULL;
}

int main(void)
{
	const char *wrapper = getenv("DMACONN_TEST_WRAPPER");
	if (wrapper && *wrapper)
		rounds = 40;
	pthread_t tid[THREADS];
	pthread_barrier_init(&start, NULL, THREADS);
	for (long t = 0; t < THREADS; t++)
		CHECK_INT(pthread_create(&tid[t], NULL, worker, (void *)t), 0);
	for (int t = 0; t < THREADS; t++)
		pthread_join(tid[t], NULL);
	pthread_barrier_destroy(&start);
	dmaconn_result_release(slot);
	CHECK_INT(atomic_load(&failures), 0);
	printf("test_stress: %d threads x %d rounds; warnings through handler a: %ld, b: %ld\n", THREADS, rounds,
	       atomic_load(&warnings_a), atomic_load(&warnings_b));
	dmaconn_shutdown();
	return check_done("test_stress");
}
