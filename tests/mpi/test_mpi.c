/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One rank of a multi-node test (run_mpi.py starts K of them under mpiexec,
 * each with its own replay file): detects across MPI_COMM_WORLD and checks
 * the global result against the expectations in argv[1].  Every rank checks;
 * the exit status says whether this one passed.
 *
 * Expectations, one per line ("#" starts a comment):
 *   type cuda | connection nvlink | size N | row V V ... (one per device)
 *   warnings K               exact number of warnings
 *   contains TEXT            some warning contains TEXT
 *   prop I KEY VALUE         device I has KEY = VALUE (VALUE: the rest of the line)
 *   noprop I KEY             device I has no KEY
 *   pair I J KEY VALUE       pair I -> J has KEY = VALUE (VALUE: the rest of the line)
 *   pairs KEY K              exactly K pairs have KEY
 *
 * Also checked on every run: the result is identical on every rank; each
 * of its warnings reached exactly one rank's warning sink; a second call
 * gives the same result; argument errors fail on every rank without a
 * collective (no deadlock).
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmaconn_mpi.h"

#define MAX_DEVICES 256
#define MAX_LINES 16384

static int rank_, failures;

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "rank %d: FAIL: ", rank_);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

static int emitted;

static void count_warning(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
	emitted++;
}

struct expect {
	char type[32], connection[64];
	int size, rows;
	int matrix[MAX_DEVICES * MAX_DEVICES];
	int warnings; /* -1: unchecked */
	int nlines;
	char *lines[MAX_LINES]; /* contains / prop / noprop lines, in order */
};

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

static int load(const char *path, struct expect *e)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		failf("cannot open %s", path);
		return -1;
	}
	snprintf(e->type, sizeof(e->type), "cuda");
	snprintf(e->connection, sizeof(e->connection), "nvlink");
	e->warnings = -1;
	char line[8192];
	while (fgets(line, sizeof(line), f)) {
		chomp(line);
		if (!line[0] || line[0] == '#')
			continue;
		if (!strncmp(line, "type ", 5)) {
			snprintf(e->type, sizeof(e->type), "%.31s", line + 5);
		} else if (!strncmp(line, "connection ", 11)) {
			snprintf(e->connection, sizeof(e->connection), "%.63s", line + 11);
		} else if (!strncmp(line, "size ", 5)) {
			e->size = atoi(line + 5);
			if (e->size < 0 || e->size > MAX_DEVICES)
				e->size = 0;
		} else if (!strncmp(line, "row ", 4) && e->rows < e->size) {
			char *p = line + 4;
			for (int j = 0; j < e->size; j++)
				e->matrix[e->rows * e->size + j] = (int)strtol(p, &p, 10);
			e->rows++;
		} else if (!strncmp(line, "warnings ", 9)) {
			e->warnings = atoi(line + 9);
		} else if (e->nlines < MAX_LINES) {
			e->lines[e->nlines++] = strdup(line);
		}
	}
	fclose(f);
	return 0;
}

/* FNV-1a over everything a result says. */
static uint64_t fnv(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull;
}

static uint64_t digest(const dmaconn_result *r)
{
	char num[32];
	int n = dmaconn_result_size(r);
	uint64_t h = 14695981039346656037ull;
	snprintf(num, sizeof(num), "%d", n);
	h = fnv(h, num);
	for (int i = 0; i < n * n; i++) {
		snprintf(num, sizeof(num), "%d", dmaconn_result_get(r, i / n, i % n));
		h = fnv(h, num);
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < dmaconn_result_device_property_count(r, i); k++) {
			h = fnv(h, dmaconn_result_device_property_key(r, i, k));
			h = fnv(h, dmaconn_result_device_property_value(r, i, k));
		}
	for (int k = 0; k < dmaconn_result_warning_count(r); k++)
		h = fnv(h, dmaconn_result_warning(r, k));
	for (int i = 0; i < n * n; i++)
		for (int k = 0; k < dmaconn_result_pair_property_count(r, i / n, i % n); k++) {
			h = fnv(h, dmaconn_result_pair_property_key(r, i / n, i % n, k));
			h = fnv(h, dmaconn_result_pair_property_value(r, i / n, i % n, k));
		}
	return h;
}

static void check(const dmaconn_result *r, const struct expect *e)
{
	int n = dmaconn_result_size(r);
	if (n != e->size) {
		failf("%d devices, expected %d", n, e->size);
		return;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (dmaconn_result_get(r, i, j) != e->matrix[i * n + j])
				failf("matrix[%d][%d] = %d, expected %d", i, j, dmaconn_result_get(r, i, j),
				      e->matrix[i * n + j]);
	int nw = dmaconn_result_warning_count(r);
	if (e->warnings >= 0 && nw != e->warnings)
		failf("%d warnings, expected %d", nw, e->warnings);
	for (int l = 0; l < e->nlines; l++) {
		const char *line = e->lines[l];
		if (!strncmp(line, "contains ", 9)) {
			int found = 0;
			for (int k = 0; k < nw && !found; k++)
				found = strstr(dmaconn_result_warning(r, k), line + 9) != NULL;
			if (!found)
				failf("no warning contains '%s'", line + 9);
		} else if (!strncmp(line, "prop ", 5) || !strncmp(line, "noprop ", 7)) {
			int absent = line[0] == 'n', i = 0, len = 0;
			char key[128] = "";
			if (sscanf(line + (absent ? 7 : 5), "%d %127s %n", &i, key, &len) < 2) {
				failf("bad expectation '%s'", line);
				continue;
			}
			const char *want = line + (absent ? 7 : 5) + len;
			const char *got = dmaconn_result_device_get(r, i, key);
			if (absent && got)
				failf("device %d has %s = '%s', expected none", i, key, got);
			else if (!absent && (!got || strcmp(got, want)))
				failf("device %d: %s = '%s', expected '%s'", i, key, got ? got : "(none)", want);
		} else if (!strncmp(line, "pair ", 5)) {
			int i = 0, j = 0, len = 0;
			char key[128] = "";
			if (sscanf(line + 5, "%d %d %127s %n", &i, &j, key, &len) < 3) {
				failf("bad expectation '%s'", line);
				continue;
			}
			const char *want = line + 5 + len, *got = dmaconn_result_pair_get(r, i, j, key);
			if (!got || strcmp(got, want))
				failf("pair %d -> %d: %s = '%s', expected '%s'", i, j, key, got ? got : "(none)", want);
		} else if (!strncmp(line, "pairs ", 6)) {
			char key[128] = "";
			int want = 0, got = 0;
			if (sscanf(line + 6, "%127s %d", key, &want) < 2) {
				failf("bad expectation '%s'", line);
				continue;
			}
			for (int i = 0; i < n * n; i++)
				got += dmaconn_result_pair_get(r, i / n, i % n, key) != NULL;
			if (got != want)
				failf("%d pairs have %s, expected %d", got, key, want);
		} else {
			failf("unknown expectation '%s'", line);
		}
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int size = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	static struct expect e;
	if (argc != 2 || load(argv[1], &e) != 0) {
		fprintf(stderr, "usage: test_mpi EXPECTATIONS\n");
		MPI_Finalize();
		return 2;
	}
	dmaconn_device_type type;
	if (dmaconn_device_type_parse(e.type, &type) != DMACONN_OK) {
		failf("%s", dmaconn_last_error());
		MPI_Finalize();
		return 1;
	}
	dmaconn_set_warning_handler(count_warning, NULL);

	dmaconn_result *r = NULL;
	int rc = dmaconn_mpi_detect(MPI_COMM_WORLD, type, e.connection, &r);
	if (rc != DMACONN_OK) {
		failf("dmaconn_mpi_detect: %s (%s)", dmaconn_strerror(rc), dmaconn_last_error());
	} else {
		check(r, &e);
		if (dmaconn_result_device_type(r) != type || strcmp(dmaconn_result_connection_type(r), e.connection))
			failf("the result is for %s/%s", dmaconn_device_type_name(dmaconn_result_device_type(r)),
			      dmaconn_result_connection_type(r));
	}

	/* Every warning reached exactly one rank's sink. */
	int sent = 0;
	MPI_Allreduce(&emitted, &sent, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (r && sent != dmaconn_result_warning_count(r))
		failf("%d warnings reached the ranks' sinks, the result holds %d", sent,
		      dmaconn_result_warning_count(r));

	/* The same bytes everywhere. */
	uint64_t mine = r ? digest(r) : 0, *all = calloc((size_t)size, sizeof(uint64_t));
	MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
	for (int k = 0; k < size; k++)
		if (all[k] != mine)
			failf("the result differs from rank %d's", k);
	free(all);

	/* Again: the local detection now comes from the cache. */
	dmaconn_result *again = NULL;
	if (dmaconn_mpi_detect(MPI_COMM_WORLD, type, e.connection, &again) != DMACONN_OK)
		failf("second dmaconn_mpi_detect: %s", dmaconn_last_error());
	else if (r && digest(again) != mine)
		failf("a second call gives another result");
	dmaconn_result_release(again);

	/* Argument errors: every rank fails alike, no collective is entered. */
	dmaconn_result *bad = NULL;
	if (dmaconn_mpi_detect(MPI_COMM_WORLD, type, "", &bad) != DMACONN_EINVAL || bad)
		failf("an empty connection type was not refused");
	if (dmaconn_mpi_detect(MPI_COMM_WORLD, type, e.connection, NULL) != DMACONN_EINVAL)
		failf("a NULL result pointer was not refused");
	if (dmaconn_mpi_detect(MPI_COMM_WORLD, (dmaconn_device_type)99, e.connection, &bad) != DMACONN_EINVAL)
		failf("an unknown device type was not refused");
	if (dmaconn_mpi_detect(MPI_COMM_NULL, type, e.connection, &bad) != DMACONN_EINVAL ||
	    !strstr(dmaconn_last_error(), "MPI_COMM_NULL"))
		failf("MPI_COMM_NULL was not refused (%s)", dmaconn_last_error());
	/* Still in step: one more collective. */
	MPI_Barrier(MPI_COMM_WORLD);

	if (!failures && rank_ == 0)
		printf("ok: %d ranks, %d devices, %d warnings\n", size, dmaconn_result_size(r),
		       dmaconn_result_warning_count(r));
	dmaconn_result_release(r);
	for (int l = 0; l < e.nlines; l++)
		free(e.lines[l]);
	dmaconn_shutdown();
	MPI_Finalize();
	return failures ? 1 : 0;
}
