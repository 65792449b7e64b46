/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Misuse of the API that must neither hang nor corrupt memory, and limits
 * that must hold however a detector behaves.  Each part runs in a child
 * process under an alarm, so that a deadlock fails that part (and only it)
 * instead of hanging the suite:
 *
 *   reentry   a warning handler that calls dmaconn: sets a handler, detects
 *             a pair that warns, detects the pair that warned, shuts down
 *   replace   replacing the handler while another thread runs it returns
 *             once that call is over
 *   shutdown  dmaconn_shutdown() inside a detector (refused: its caller's
 *             detection still uses what it would free)
 *   registry  register/unregister cycles keep no entry behind
 *   causes    warnings aggregated by cause, each sent to the sink once
 *   text      properties and warnings are valid UTF-8 without controls
 *
 * DMACONN_TEST_SIZE scales the registry cycles and the per-pair warnings
 * (default 1: 20,000 cycles, 64 devices).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"
#include "heap.h"

static int scale(void)
{
	const char *s = getenv("DMACONN_TEST_SIZE");
	int k = s && *s ? atoi(s) : 1;
	return k > 0 ? k : 1;
}

/* ------------------------------------------------------------- reentry */

static int detector_calls;

/* Two devices, a warning per ordered pair. */
static int warns(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	detector_calls++;
	dmaconn_builder_set_size(b, 2);
	dmaconn_builder_warn(b, "warns: device %d -> device %d is odd", 0, 1);
	dmaconn_builder_warn(b, "warns: device %d -> device %d is odd", 1, 0);
	return DMACONN_OK;
}

static int other(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	dmaconn_builder_set_size(b, 1);
	dmaconn_builder_warn(b, "other: a warning of its own");
	return DMACONN_OK;
}

static int handler_calls, nested_ok, same_ok, shutdown_refused;

static void reentrant(const char *message, void *user_data)
{
	handler_calls++;
	if (handler_calls > 1)
		return; /* the nested detection's warning lands here too */
	CHECK_CONTAINS(message, "warns: device 0 -> device 1 is odd");
	/* Each of these used to wait for the sink lock this thread held. */
	dmaconn_set_warning_handler(reentrant, user_data);
	dmaconn_result *r = NULL;
	nested_ok = dmaconn_detect(DMACONN_DEVICE_XPU, "other", &r) == DMACONN_OK &&
		    dmaconn_result_size(r) == 1;
	dmaconn_result_release(r);
	r = NULL;
	same_ok = dmaconn_detect(DMACONN_DEVICE_XPU, "warns", &r) == DMACONN_OK &&
		  dmaconn_result_size(r) == 2;
	dmaconn_result_release(r);
	dmaconn_shutdown();
	shutdown_refused = strstr(dmaconn_last_error(), "dmaconn_shutdown") != NULL;
}

static void part_reentry(void)
{
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_XPU, "warns", warns, NULL), DMACONN_OK);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_XPU, "other", other, NULL), DMACONN_OK);
	dmaconn_set_warning_handler(reentrant, NULL);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_XPU, "warns", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_size(r), 2);
	CHECK_INT(handler_calls, 2); /* its own cause once, and the nested detection's */
	CHECK(nested_ok);
	CHECK(same_ok);
	CHECK(shutdown_refused);
	CHECK_INT(detector_calls, 1); /* the handler got the cached result */
	dmaconn_result_release(r);
	/* The refused shutdown left the registry as it was. */
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_XPU, "other", &r), DMACONN_OK);
	dmaconn_result_release(r);
	dmaconn_set_warning_handler(NULL, NULL);
	dmaconn_shutdown();
}

/* -------------------------------------------------------------- replace */

/* Another thread is inside the handler when this one replaces it: the
 * replacement returns only once that call is over (its user_data may then
 * be freed). */
static atomic_int entered, left;

static void slow_handler(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
	atomic_store(&entered, 1);
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	atomic_store(&left, 1);
}

static void *detect_thread(void *arg)
{
	(void)arg;
	dmaconn_result *r = NULL;
	dmaconn_detect(DMACONN_DEVICE_XPU, "other", &r);
	dmaconn_result_release(r);
	return NULL;
}

static void part_replace(void)
{
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_XPU, "other", other, NULL), DMACONN_OK);
	dmaconn_set_warning_handler(slow_handler, NULL);
	pthread_t t;
	CHECK_INT(pthread_create(&t, NULL, detect_thread, NULL), 0);
	while (!atomic_load(&entered)) {
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	dmaconn_set_warning_handler(NULL, NULL);
	CHECK_INT(atomic_load(&left), 1);
	pthread_join(t, NULL);
	dmaconn_shutdown();
}

/* ------------------------------------------------------------- shutdown */

static char shutdown_error[512];

static int shuts_down(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	detector_calls++;
	dmaconn_builder_set_size(b, 2);
	dmaconn_builder_set(b, 0, 1, 7);
	dmaconn_shutdown();
	snprintf(shutdown_error, sizeof(shutdown_error), "%s", dmaconn_last_error());
	dmaconn_builder_set(b, 1, 0, 7);
	return DMACONN_OK;
}

/* Unregistering its own pair: the entry goes when the detection ends. */
static int unregisters_itself(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	CHECK_INT(dmaconn_unregister_detector(DMACONN_DEVICE_ROCM, "self-removing"), DMACONN_OK);
	return dmaconn_builder_set_size(b, 1);
}

static void part_shutdown(void)
{
	dmaconn_result *self = NULL;
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "self-removing", unregisters_itself, NULL),
		  DMACONN_OK);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "self-removing", &self), DMACONN_OK);
	CHECK_INT(dmaconn_result_size(self), 1);
	dmaconn_result_release(self);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "self-removing", &self), DMACONN_ENODETECTOR);

	detector_calls = 0;
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "shuts-down", shuts_down, NULL), DMACONN_OK);
	int listed = dmaconn_list_detectors(NULL, NULL, 0);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "shuts-down", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_get(r, 0, 1), 7);
	CHECK_INT(dmaconn_result_get(r, 1, 0), 7);
	CHECK_CONTAINS(shutdown_error, "dmaconn_shutdown() inside a detector");
	dmaconn_result_release(r);
	/* Cached, and still registered. */
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "shuts-down", &r), DMACONN_OK);
	CHECK_INT(detector_calls, 1);
	dmaconn_result_release(r);
	CHECK_INT(dmaconn_list_detectors(NULL, NULL, 0), listed);
	dmaconn_shutdown();
	CHECK_INT(dmaconn_list_detectors(NULL, NULL, 0), listed - 1);
	dmaconn_shutdown();
}

/* ------------------------------------------------------------- registry */

static int empty(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return dmaconn_builder_set_size(b, 0);
}

static void part_registry(void)
{
	const int cycles = 20000 * scale();
	int builtins = dmaconn_list_detectors(NULL, NULL, 0);
	/* Warm-up: the thread's error buffer, the allocator's own tables. */
	for (int k = 0; k < 100; k++) {
		dmaconn_register_detector(DMACONN_DEVICE_CUDA, "cycle", empty, NULL);
		dmaconn_unregister_detector(DMACONN_DEVICE_CUDA, "cycle");
	}
	long long before = heap();
	int failed = 0;
	for (int k = 0; k < cycles; k++) {
		failed += dmaconn_register_detector(DMACONN_DEVICE_CUDA, "cycle", empty, NULL) != DMACONN_OK;
		failed += dmaconn_unregister_detector(DMACONN_DEVICE_CUDA, "cycle") != DMACONN_OK;
	}
	long long grown = heap() - before;
	CHECK_INT(failed, 0);
	CHECK_INT(dmaconn_list_detectors(NULL, NULL, 0), builtins);
	/* An entry is at least 64 bytes with its name: 20,000 kept entries
	 * would be 1.3 MB; a few hundred bytes is the allocator's noise. */
	long long kept = grown / 64;
	if (kept > 8)
		fprintf(stderr, "registry: heap grew by %lld bytes over %d cycles\n", grown, cycles);
	CHECK(kept <= 8);
	dmaconn_shutdown();
}

/* --------------------------------------------------------------- causes */

static int sink_calls;
static char sink_last[1024];

static void counting(const char *message, void *user_data)
{
	(void)user_data;
	sink_calls++;
	snprintf(sink_last, sizeof(sink_last), "%s", message);
}

/* n devices, a warning per ordered pair and one per device, the same
 * identical message twice, two different ones through "%s". */
static int grid(dmaconn_builder *b, void *user_data)
{
	int n = *(int *)user_data;
	dmaconn_builder_set_size(b, n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j)
				dmaconn_builder_warn(b, "grid: GPU %d -> GPU %d: peer access status unknown", i, j);
	for (int i = 0; i < n; i++)
		dmaconn_builder_warn(b, "grid: GPU %d has no NVLink facts", i);
	dmaconn_builder_warn(b, "%s", "grid: same words");
	dmaconn_builder_warn(b, "%s", "grid: same words");
	dmaconn_builder_warn(b, "%s", "grid: other words");
	dmaconn_builder_add_warning(b, "grid: kept, not announced");
	dmaconn_builder_add_warning(b, "grid: kept, not announced");
	return DMACONN_OK;
}

static void part_causes(void)
{
	int n = 64 * scale();
	char want[256];
	dmaconn_set_warning_handler(counting, NULL);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_CUDA, "grid", grid, &n), DMACONN_OK);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "grid", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_warning_count(r), 5);
	snprintf(want, sizeof(want), "grid: GPU 0 -> GPU 1: peer access status unknown (and %lld more like it)",
		 (long long)n * (n - 1) - 1);
	CHECK_STR(dmaconn_result_warning(r, 0), want);
	snprintf(want, sizeof(want), "grid: GPU 0 has no NVLink facts (and %d more like it)", n - 1);
	CHECK_STR(dmaconn_result_warning(r, 1), want);
	CHECK_STR(dmaconn_result_warning(r, 2), "grid: same words (and 1 more like it)");
	CHECK_STR(dmaconn_result_warning(r, 3), "grid: other words");
	CHECK_STR(dmaconn_result_warning(r, 4), "grid: kept, not announced (and 1 more like it)");
	/* Each announced cause once, with its count. */
	CHECK_INT(sink_calls, 4);
	CHECK_STR(sink_last, "grid: other words");
	dmaconn_result_release(r);
	dmaconn_set_warning_handler(NULL, NULL);
	dmaconn_shutdown();
}

/* ----------------------------------------------------------------- text */

static int hostile(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	dmaconn_builder_set_size(b, 2);
	dmaconn_builder_set_device_property(b, 0, "name", "\xff\xfe AMD \x1b[31mred\x1b[0m");
	dmaconn_builder_set_device_property(b, 1, "name", "Caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"); /* fine */
	dmaconn_builder_set_device_property(b, 1, "overlong", "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xc3");
	dmaconn_builder_set_device_property(b, 1, "c1", "a\xc2\x9b" "2Jb\x7f" "c\td\ne");
	dmaconn_builder_set_pair_property(b, 0, 1, "path", "\x1b]0;title\x07NV4");
	dmaconn_builder_warn(b, "text: product name '%s'", "\x1b[2J\xfe");
	return DMACONN_OK;
}

#define FFFD "\xef\xbf\xbd"

static void part_text(void)
{
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_result_build(DMACONN_DEVICE_ROCM, "text", hostile, NULL, &r), DMACONN_OK);
	CHECK_STR(dmaconn_result_device_get(r, 0, "name"), FFFD FFFD " AMD " FFFD "[31mred" FFFD "[0m");
	CHECK_STR(dmaconn_result_device_get(r, 1, "name"), "Caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
	/* Overlong, surrogate, past U+10FFFF, cut short: one U+FFFD per byte. */
	CHECK_STR(dmaconn_result_device_get(r, 1, "overlong"),
		  FFFD FFFD "|" FFFD FFFD FFFD "|" FFFD FFFD FFFD FFFD "|" FFFD);
	CHECK_STR(dmaconn_result_device_get(r, 1, "c1"), "a" FFFD "2Jb" FFFD "c d e");
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, "path"), FFFD "]0;title" FFFD "NV4");
	CHECK_STR(dmaconn_result_warning(r, 0), "text: product name '" FFFD "[2J" FFFD "'");
	dmaconn_result_release(r);
}

/* --------------------------------------------------------------- nested */

/*
 * A detection inside a detector runs as its own call asks, not as the outer
 * one: inside dmaconn_detect_node(), a dmaconn_detect() sees the devices the
 * process sees, and its result, which the registry keeps, stays right for
 * later callers.
 */
static int nested_n = -100, outer_after = -100;

static int nested_outer(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	dmaconn_result *r = NULL;
	int rc = dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r);
	nested_n = rc ? rc : dmaconn_result_size(r);
	dmaconn_result_release(r);
	r = NULL;
	/* The node's view again, after the nested call, uncached. */
	rc = dmaconn_detect_node(DMACONN_DEVICE_CUDA, "nvlink", &r);
	outer_after = rc ? rc : dmaconn_result_size(r);
	dmaconn_result_release(r);
	return dmaconn_builder_set_size(b, 1);
}

static void part_nested(void)
{
	/* Two NVIDIA GPUs counted from sysfs (no NVML, whether the machine has
	 * one or not); the process sees one. */
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	char *root = realpath("tests/sysfs/two-nvidia", NULL);
	CHECK(root != NULL);
	setenv("DMACONN_SYSFS_ROOT", root ? root : "", 1);
	setenv("CUDA_VISIBLE_DEVICES", "1", 1);
	free(root);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_CUDA, "nested", nested_outer, NULL), DMACONN_OK);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect_node(DMACONN_DEVICE_CUDA, "nested", &r), DMACONN_OK);
	dmaconn_result_release(r);
	CHECK_INT(nested_n, 1);
	CHECK_INT(outer_after, 2);
	r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_size(r), 1);
	dmaconn_result_release(r);
	dmaconn_shutdown();
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("DMACONN_NVML_LIBRARY");
}

/* ---------------------------------------------------------------- roots */

/* The size of a detection under DMACONN_SYSFS_ROOT=tests/TREE. */
static int size_under(const char *tree, dmaconn_device_type type, const char *conn)
{
	char rel[128];
	snprintf(rel, sizeof(rel), "tests/%s", tree);
	char *root = realpath(rel, NULL);
	CHECK(root != NULL);
	setenv("DMACONN_SYSFS_ROOT", root ? root : "", 1);
	free(root);
	dmaconn_result *r = NULL;
	int rc = dmaconn_detect(type, conn, &r);
	int n = rc ? rc : dmaconn_result_size(r);
	dmaconn_result_release(r);
	return n;
}

/*
 * A process that changes DMACONN_SYSFS_ROOT between detections gets the new
 * tree's devices in a pair it detects next (a pair's result is cached), though
 * each vendor keeps one discovery: here without NVML, whose GPUs are counted
 * from the tree, and the KFD's.
 */
static void part_roots(void)
{
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1); /* whatever the machine has */
	CHECK_INT(size_under("sysfs/two-nvidia", DMACONN_DEVICE_CUDA, "nvlink"), 2);
	CHECK_INT(size_under("sysfs/no-nvidia", DMACONN_DEVICE_CUDA, "p2p"), 0);
	CHECK_INT(size_under("sysfs-kfd/hidden-node", DMACONN_DEVICE_ROCM, "infinity_fabric"), 2);
	CHECK_INT(size_under("sysfs/two-nvidia", DMACONN_DEVICE_ROCM, "p2p"), 0);
	dmaconn_shutdown();
	unsetenv("DMACONN_NVML_LIBRARY");
}

/* ----------------------------------------------------------------- main */

static const struct {
	const char *name;
	void (*run)(void);
} parts[] = {
	{ "reentry", part_reentry }, { "replace", part_replace }, { "shutdown", part_shutdown },
	{ "registry", part_registry }, { "causes", part_causes }, { "text", part_text },
	{ "nested", part_nested }, { "roots", part_roots },
};

int main(int argc, char **argv)
{
	setenv("DMACONN_QUIET", "1", 1);
	int failed = 0;
	for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
		if (argc > 1 && strcmp(argv[1], parts[k].name))
			continue;
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			alarm(60); /* a deadlock ends here, as SIGALRM */
			parts[k].run();
			int rc = check_done(parts[k].name);
			fflush(NULL);
			_exit(rc);
		}
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			perror("fork");
			return 1;
		}
		if (WIFSIGNALED(status)) {
			fprintf(stderr, "%s: killed by signal %d%s\n", parts[k].name, WTERMSIG(status),
				WTERMSIG(status) == SIGALRM ? " (hung: a deadlock)" : "");
			failed++;
		} else if (WEXITSTATUS(status) != 0) {
			fprintf(stderr, "%s: failed (exit %d)\n", parts[k].name, WEXITSTATUS(status));
			failed++;
		}
	}
	printf("test_misuse: %d part(s) failed\n", failed);
	return failed ? 1 : 0;
}
