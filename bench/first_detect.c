/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One fresh process's view of dmaconn: the time of the first detection
 * (NVML load and init included), of a cached detection (ns, averaged), and
 * the peak RSS.  Prints one JSON line for bench/run.py.  hwm_kb is VmHWM,
 * this program's own peak; maxrss_kb (getrusage) also counts the peak of the
 * process it was exec'd from (Linux keeps it across execve), so a launcher
 * such as Python inflates it.
 * Usage: first_detect [CONNECTION | TYPE/CONNECTION | all]   (default nvlink)
 * "all" detects every registered pair in turn, as a bare `dmaconn --all`
 * does: first_ms is then the time of them all, the cached call cuda/nvlink's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dmaconn.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* VmHWM from /proc/self/status, in KiB; -1 where unreadable. */
static long peak_rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6)) {
			kb = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	const char *arg = argc > 1 ? argv[1] : "nvlink";
	int all = !strcmp(arg, "all");
	/* TYPE/CONNECTION, or CONNECTION of cuda; "all" times every pair and
	 * then answers cuda/nvlink (cached by then) for the rest. */
	dmaconn_device_type type = DMACONN_DEVICE_CUDA;
	const char *conn = all ? "nvlink" : arg;
	const char *slash = strchr(arg, '/');
	if (slash && !all) {
		char name[16];
		snprintf(name, sizeof(name), "%.*s", (int)(slash - arg), arg);
		if (dmaconn_device_type_parse(name, &type) != DMACONN_OK) {
			fprintf(stderr, "first_detect: %s\n", dmaconn_last_error());
			return 2;
		}
		conn = slash + 1;
	}
	dmaconn_result *r = NULL;
	int rc = DMACONN_OK;
	double t0 = now_ns();
	if (all) {
		dmaconn_device_type types[32];
		const char *conns[32];
		int count = dmaconn_list_detectors(types, conns, 32);
		for (int k = 0; k < count && k < 32 && rc == DMACONN_OK; k++) {
			rc = dmaconn_detect(types[k], conns[k], &r);
			dmaconn_result_release(r);
		}
	}
	if (rc == DMACONN_OK)
		rc = dmaconn_detect(type, conn, &r);
	double first = now_ns() - t0;
	if (rc != DMACONN_OK) {
		fprintf(stderr, "first_detect: %s\n", dmaconn_last_error());
		return 1;
	}
	int n = dmaconn_result_size(r), sum = 0;
	for (int i = 0; i < n * n; i++)
		sum += dmaconn_result_matrix(r)[i];
	dmaconn_result_release(r);

	enum { REPS = 200000 };
	t0 = now_ns();
	for (int i = 0; i < REPS; i++) {
		dmaconn_detect(type, conn, &r);
		dmaconn_result_release(r);
	}
	double cached = (now_ns() - t0) / REPS;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"first_ms\": %.3f, \"cached_ns\": %.1f, \"hwm_kb\": %ld, \"maxrss_kb\": %ld, \"n\": %d, "
	       "\"links\": %d}\n",
	       first / 1e6, cached, peak_rss_kb(), ru.ru_maxrss, n, sum);
	return 0;
}
