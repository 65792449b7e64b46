/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libdmaconn_mpi: DMA connectivity across the ranks of an MPI job, on top of
 * libdmaconn's public API (docs/multinode.md).
 *
 * Flow, every step collective over comm and taken by every rank whatever
 * happened to it before:
 *   1. the node: MPI's shared-memory domain (its lowest rank names it) plus
 *      dmaconn_host_id(), which a replay file sets;
 *   2. local detection (dmaconn_detect) and, when the domain holds other
 *      ranks, a detection over the whole node (dmaconn_detect_node);
 *   3. each rank's contribution, its record (dmaconn_rank_record(): JSON),
 *      gathered everywhere (MPI_Allgather of the lengths, then
 *      MPI_Allgatherv);
 *   4. every rank merges the same records alike (dmaconn_merge(), the
 *      library's one multi-node merge, which Python calls too).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dmaconn_mpi.h"
#include "dmaconn_mpi_cli.h"

#define MSG_SIZE 1024

/* ------------------------------------------------------------ errors */

struct failure {
	int err;
	char msg[MSG_SIZE];
};

static int fail_detector(dmaconn_builder *b, void *user_data)
{
	const struct failure *f = user_data;
	return dmaconn_builder_fail(b, f->err, "%s", f->msg);
}

/* Sets dmaconn_last_error() to the message and returns err. */
static int fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int err, const char *fmt, ...)
{
	struct failure f = { .err = err };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f.msg, sizeof(f.msg), fmt, ap);
	va_end(ap);
	dmaconn_result *r = NULL;
	dmaconn_result_build(DMACONN_DEVICE_CUDA, "mpi", fail_detector, &f, &r);
	dmaconn_result_release(r);
	return err;
}

static int mpi_failed(const char *call, int code)
{
	char text[MPI_MAX_ERROR_STRING] = "";
	int len = 0;
	if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "MPI error %d", code);
	return fail(DMACONN_EDETECTOR, "dmaconn_mpi_detect: %s failed: %s", call, text);
}

/* ------------------------------------------------------- the collective */

static int noop_detector(dmaconn_builder *b, void *user_data)
{
	(void)b;
	(void)user_data;
	return DMACONN_OK;
}

#define MPI_CHECK(call, what)                                                   \
	do {                                                                    \
		int mpi_rc_ = (call);                                           \
		if (mpi_rc_ != MPI_SUCCESS) {                                   \
			rc = mpi_failed(what, mpi_rc_);                         \
			goto out;                                               \
		}                                                               \
	} while (0)

/* Whether every rank has `ok`; -1 when the reduction itself failed. */
static int all_ok(MPI_Comm comm, int ok, int *rc)
{
	int all = 0, e = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
	if (e != MPI_SUCCESS) {
		*rc = mpi_failed("MPI_Allreduce", e);
		return -1;
	}
	return all;
}

int dmaconn_mpi_detect(MPI_Comm comm, dmaconn_device_type type, const char *connection,
		       dmaconn_result **out)
{
	if (out)
		*out = NULL;
	/* Argument errors, the same on every rank: the core names them. */
	if (!out || !dmaconn_device_type_name(type) || !connection || !*connection)
		return dmaconn_result_build(type, connection, noop_detector, NULL, out);
	int initialised = 0, finalised = 0;
	MPI_Initialized(&initialised);
	MPI_Finalized(&finalised);
	if (!initialised || finalised)
		return fail(DMACONN_EINVAL, "dmaconn_mpi_detect: MPI is %s", finalised ? "finalised" : "not initialised");
	if (comm == MPI_COMM_NULL)
		return fail(DMACONN_EINVAL, "dmaconn_mpi_detect: MPI_COMM_NULL");

	int rc = DMACONN_OK, me = 0, size = 0, domain = 0, domain_size = 1;
	char *mine = NULL, small[96];
	int *lens = NULL, *displs = NULL;
	char *all = NULL;
	const char **records = NULL;
	MPI_Comm shm = MPI_COMM_NULL;
	MPI_CHECK(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
	MPI_CHECK(MPI_Comm_size(comm, &size), "MPI_Comm_size");

	/* 1. The shared-memory domain, named by its lowest rank in comm. */
	MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm),
		  "MPI_Comm_split_type");
	MPI_CHECK(MPI_Comm_size(shm, &domain_size), "MPI_Comm_size");
	MPI_CHECK(MPI_Allreduce(&me, &domain, 1, MPI_INT, MPI_MIN, shm), "MPI_Allreduce");
	MPI_CHECK(MPI_Comm_free(&shm), "MPI_Comm_free");

	/* 2. Detect, write the record (a node view where other ranks share
	 * the node); out of memory, a record that says so. */
	const char *text = small;
	if (dmaconn_rank_record(type, connection, domain_size > 1 ? DMACONN_RECORD_NODE_VIEW : 0, domain, &mine) ==
	    DMACONN_OK && strlen(mine) < INT_MAX)
		text = mine;
	else
		snprintf(small, sizeof(small), "{\"host\":\"?\",\"domain\":%d,\"error\":\"out of memory\"}", domain);

	/* 3. Gather every record everywhere, each with its NUL. */
	lens = calloc((size_t)size + 1, sizeof(int));
	displs = calloc((size_t)size + 1, sizeof(int));
	records = calloc((size_t)size + 1, sizeof(*records));
	int ok = all_ok(comm, lens && displs && records, &rc);
	if (ok <= 0) {
		if (ok == 0)
			rc = fail(DMACONN_ENOMEM, "dmaconn_mpi_detect: out of memory on a rank");
		goto out;
	}
	int len = (int)strlen(text) + 1;
	MPI_CHECK(MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, comm), "MPI_Allgather");
	size_t total = 0;
	for (int r = 0; r < size; r++) {
		displs[r] = (int)total;
		total += (size_t)lens[r];
		if (total > INT_MAX) {
			rc = fail(DMACONN_ENOMEM, "dmaconn_mpi_detect: the ranks' contributions exceed 2 GiB");
			goto out;
		}
	}
	all = malloc(total + 1);
	ok = all_ok(comm, all != NULL, &rc);
	if (ok <= 0) {
		if (ok == 0)
			rc = fail(DMACONN_ENOMEM, "dmaconn_mpi_detect: out of memory on a rank");
		goto out;
	}
	MPI_CHECK(MPI_Allgatherv(text, len, MPI_CHAR, all, lens, displs, MPI_CHAR, comm), "MPI_Allgatherv");

	/* 4. The same result from the same records, on every rank; one that
	 * does not end where it says is unreadable. */
	for (int r = 0; r < size; r++)
		records[r] = lens[r] > 0 && all[displs[r] + lens[r] - 1] == '\0' ? all + displs[r] : NULL;
	rc = dmaconn_merge(type, connection, records, size, me, out);
out:
	if (shm != MPI_COMM_NULL)
		MPI_Comm_free(&shm);
	free(records);
	free(all);
	free(lens);
	free(displs);
	dmaconn_record_free(mine);
	return rc;
}

/* ------------------------------------------------------- the CLI's entry */

DMACONN_EXTERN int dmaconn_mpi_cli_v1(int *argc, char ***argv, int count, const dmaconn_device_type *types,
				      const char *const *connections, dmaconn_mpi_report_fn report,
				      void *user_data);

int dmaconn_mpi_cli_v1(int *argc, char ***argv, int count, const dmaconn_device_type *types,
		       const char *const *connections, dmaconn_mpi_report_fn report, void *user_data)
{
	int initialised = 0, rank = 0, status = 0;
	MPI_Initialized(&initialised);
	if (!initialised) {
		int e = MPI_Init(argc, argv);
		if (e != MPI_SUCCESS) {
			char text[MPI_MAX_ERROR_STRING] = "";
			int len = 0;
			MPI_Error_string(e, text, &len);
			fprintf(stderr, "dmaconn: MPI_Init failed: %s\n", text);
			return 1;
		}
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int k = 0; k < count; k++) {
		dmaconn_result *r = NULL;
		int rc = dmaconn_mpi_detect(MPI_COMM_WORLD, types[k], connections[k], &r);
		if (rc != DMACONN_OK)
			status = 1;
		if (rank == 0 && report && report(rc == DMACONN_OK ? r : NULL, k, count, user_data) != 0)
			status = 1;
		dmaconn_result_release(r);
	}
	if (!initialised)
		MPI_Finalize();
	return status;
}
