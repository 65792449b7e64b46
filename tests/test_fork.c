/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fork safety: a process that detected may fork, and the child may detect
 * again, even when other threads of the parent are detecting (holding
 * dmaconn's locks, or in the middle of a detection) at the moment of the
 * fork, or setting the verify progress callback.  Each child detects afresh under an alarm; the parent waits for it
 * with a deadline, so a deadlock fails the test instead of hanging it.
 *
 * Runs on a replayed node (DMACONN_REPLAY, the 2x H200 file): NV18 between
 * the two GPUs, peer access OK.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

/* clang 14's ASan and TSan runtimes do not lock their allocators around
 * fork(): a child forked while another thread allocates can hang inside
 * malloc, whatever the program does.  There, the busy-parent part is off. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FORK_SAFE_ALLOCATOR 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FORK_SAFE_ALLOCATOR 0
#endif
#endif
#ifndef FORK_SAFE_ALLOCATOR
#define FORK_SAFE_ALLOCATOR 1
#endif

static atomic_int stop;
static atomic_long warnings;

static void count_warning(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
	atomic_fetch_add(&warnings, 1);
}

/* A detector that takes a while, so that forks land inside detections. */
static int slow(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	struct timespec ts = { 0, 200 * 1000 };
	nanosleep(&ts, NULL);
	dmaconn_builder_set_size(b, 2);
	dmaconn_builder_set(b, 0, 1, 3);
	dmaconn_builder_warn(b, "slow: a warning through the sink");
	return DMACONN_OK;
}

static int expected(dmaconn_result *r, const char *conn)
{
	if (!r || dmaconn_result_size(r) != 2)
		return 0;
	int want = !strcmp(conn, "nvlink") ? 18 : !strcmp(conn, "p2p") ? 1 : 3;
	return dmaconn_result_get(r, 0, 1) == want && dmaconn_result_get(r, 1, 0) == (want == 3 ? 0 : want);
}

static void *busy(void *arg)
{
	long id = (long)arg;
	static const char *const conns[] = { "nvlink", "p2p", "slow" };
	for (unsigned k = 0; !atomic_load(&stop); k++) {
		dmaconn_result *r = NULL;
		const char *conn = conns[(k + (unsigned)id) % 3];
		int rc = (k & 1) ? dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, conn, &r)
				 : dmaconn_detect(DMACONN_DEVICE_CUDA, conn, &r);
		if (rc != DMACONN_OK || !expected(r, conn)) {
			fprintf(stderr, "parent thread %ld: %s: %s\n", id, conn, dmaconn_last_error());
			atomic_store(&stop, 2);
		}
		dmaconn_result_release(r);
		if (k % 7 == 0)
			dmaconn_clear_cache();
	}
	return NULL;
}

static void on_progress(int done, int total, void *user_data)
{
	(void)done;
	(void)total;
	(void)user_data;
}

/* Sets and clears the verify progress callback, so that forks land while
 * its lock is held. */
static void *progress_setter(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		dmaconn_set_verify_progress(on_progress, &stop);
		dmaconn_set_verify_progress(NULL, NULL);
	}
	return NULL;
}

/* In the child: everything again, fresh and cached, then exit. */
static int child(void)
{
	alarm(20); /* a deadlock ends with SIGALRM */
	dmaconn_set_verify_progress(on_progress, NULL);
	dmaconn_set_verify_progress(NULL, NULL);
	static const char *const conns[] = { "nvlink", "p2p", "slow" };
	for (int k = 0; k < 3; k++) {
		dmaconn_result *r = NULL;
		if (dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, conns[k], &r) != DMACONN_OK || !expected(r, conns[k]))
			return 10 + k;
		dmaconn_result_release(r);
		r = NULL;
		if (dmaconn_detect(DMACONN_DEVICE_CUDA, conns[k], &r) != DMACONN_OK || !expected(r, conns[k]))
			return 20 + k;
		dmaconn_result_release(r);
	}
	dmaconn_set_warning_handler(NULL, NULL);
	dmaconn_clear_cache();
	return 0;
}

/* Waits for pid at most `seconds`; its exit status, or -1 (killed: hung). */
static int wait_child(pid_t pid, int seconds)
{
	for (int ms = 0; ms < seconds * 1000; ms += 5) {
		int status;
		pid_t got = waitpid(pid, &status, WNOHANG);
		if (got == pid) {
			if (WIFSIGNALED(status)) {
				fprintf(stderr, "child %d: killed by signal %d%s\n", (int)pid, WTERMSIG(status),
					WTERMSIG(status) == SIGALRM ? " (deadlocked)" : "");
				return -1;
			}
			return WEXITSTATUS(status);
		}
		if (got < 0 && errno != EINTR)
			return -1;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fprintf(stderr, "child %d: no exit after %d s (deadlocked)\n", (int)pid, seconds);
	return -1;
}

int main(void)
{
	const char *wrapper = getenv("DMACONN_TEST_WRAPPER");
	int forks = wrapper && *wrapper ? 8 : 200, threads = 4;
	dmaconn_set_warning_handler(count_warning, NULL);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_CUDA, "slow", slow, NULL), DMACONN_OK);

	/* 1. Quiet parent: detect, fork, detect in the child. */
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r), DMACONN_OK);
	CHECK(expected(r, "nvlink"));
	dmaconn_result_release(r);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(child());
	CHECK(pid > 0);
	if (pid > 0)
		CHECK_INT(wait_child(pid, 30), 0);

	/* 2. Busy parent: fork while other threads detect, fresh and cached,
	 * clear the cache and warn through the sink. */
	if (!FORK_SAFE_ALLOCATOR) {
		puts("test_fork: sanitizer allocator, no forks while other threads allocate");
		dmaconn_shutdown();
		return check_done("test_fork");
	}
	pthread_t tid[8];
	for (long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, busy, (void *)t);
	pthread_t setter;
	pthread_create(&setter, NULL, progress_setter, NULL);
	int bad = 0;
	for (int k = 0; k < forks && !bad; k++) {
		pid = fork();
		if (pid == 0) {
			int rc = child();
			/* What the parent's other threads held at the fork is lost to
			 * the child; under valgrind, end by exec (no leak check of
			 * this image) rather than report that. */
			if (wrapper && *wrapper)
				execl("/bin/sh", "sh", "-c", rc ? "exit 3" : "exit 0", (char *)NULL);
			_exit(rc);
		}
		if (pid < 0) {
			perror("fork");
			bad = 1;
			break;
		}
		int rc = wait_child(pid, 30);
		if (rc != 0) {
			fprintf(stderr, "fork %d: child exit %d\n", k, rc);
			bad = 1;
		}
	}
	atomic_store(&stop, atomic_load(&stop) ? atomic_load(&stop) : 1);
	for (long t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	pthread_join(setter, NULL);
	CHECK(!bad);
	CHECK_INT(atomic_load(&stop), 1);
	CHECK(atomic_load(&warnings) > 0);
	printf("test_fork: %d forks while %d threads detected\n", forks, threads);
	dmaconn_shutdown();
	return check_done("test_fork");
}
