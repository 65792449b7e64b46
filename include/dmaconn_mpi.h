/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_mpi: DMA connectivity across the nodes of an MPI job.
 *
 * An optional component (libdmaconn_mpi, built where MPI is found) on top of
 * libdmaconn, which itself stays MPI-free.  Link with -ldmaconn_mpi
 * -ldmaconn and your MPI.  Errors follow dmaconn.h's rule: DMACONN_OK or a
 * negative dmaconn_error, with the message in dmaconn_last_error().
 * docs/multinode.md describes the rules in full.
 */
#ifndef DMACONN_MPI_H
#define DMACONN_MPI_H

#include <mpi.h>

#include "dmaconn.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Collective over comm: every rank calls it with the same type and
 * connection.  Each rank detects locally (dmaconn_detect) and contributes
 * the devices it sees; *out, identical on every rank, is the matrix over
 * all contributed devices, rank by rank in comm's order, each rank's in its
 * own ordinal order.  Device properties: "rank", "host" (dmaconn_host_id()
 * of that rank), "node" (nodes numbered in order of their first rank),
 * "local_ordinal", then the device's own properties.
 *
 * Two devices of one rank: that rank's matrix entry.  Of different ranks on
 * one node (same MPI shared-memory domain and same host identity): the
 * entry of a detection over the whole node (dmaconn_detect_node).  On
 * different nodes: connected when both GPUs' NVSwitch fabric registration
 * completed successfully in the same non-zero cluster UUID and clique id;
 * the value is then, for "nvlink", the smaller of their NVSwitch link counts
 * (for other connections 1), else 0.
 *
 * A rank whose detection fails contributes no devices and its failure
 * becomes a warning; every rank's warnings appear in the result of every
 * rank, prefixed "rank R (HOST): ".  The warning sink of each rank sees its
 * own warnings only, once.
 *
 * *out is a new reference the caller releases.  Errors (the same on every
 * rank): DMACONN_EINVAL, DMACONN_ENOMEM, DMACONN_EDETECTOR (an MPI call
 * failed, where comm's error handler lets it return).
 */
DMACONN_EXTERN int dmaconn_mpi_detect(MPI_Comm comm, dmaconn_device_type type,
				      const char *connection, dmaconn_result **out);

#ifdef __cplusplus
}
#endif

#endif
