/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The contract between the dmaconn CLI and libdmaconn_mpi for `dmaconn
 * --mpi`: the CLI never links MPI; it dlopens the component and calls
 * dmaconn_mpi_cli, which initialises MPI, detects across MPI_COMM_WORLD and
 * hands rank 0 the results to print.  No <mpi.h> here.
 */
#ifndef DMACONN_MPI_CLI_H
#define DMACONN_MPI_CLI_H

#include "dmaconn.h"

#define DMACONN_MPI_SONAME "libdmaconn_mpi.so.0"
#define DMACONN_MPI_CLI_SYMBOL "dmaconn_mpi_cli_v1"

/* Called on rank 0 only, for each requested pair in order: r is the global
 * result, or NULL when the detection failed (dmaconn_last_error() says
 * why).  Returns the exit status it wants (0 when all is well). */
typedef int (*dmaconn_mpi_report_fn)(const dmaconn_result *r, int index, int count,
				     void *user_data);

/*
 * Initialises MPI (unless the process already did), runs
 * dmaconn_mpi_detect(MPI_COMM_WORLD, types[k], connections[k]) for k in
 * [0, count), reports each on rank 0, and finalises MPI if it initialised
 * it.  Returns the process's exit status: 0, or 1 when a detection or a
 * report failed (or MPI could not start: a message on stderr).
 */
typedef int (*dmaconn_mpi_cli_fn)(int *argc, char ***argv, int count,
				  const dmaconn_device_type *types, const char *const *connections,
				  dmaconn_mpi_report_fn report, void *user_data);

#endif
