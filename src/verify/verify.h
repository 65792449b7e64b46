/* SPDX-License-Identifier: BSD-3-Clause */
/* The functional check shared by dmaconn_verify() (src/verify.c) and the
 * "cuda"/"verified" view (src/backends/cuda_verify/verified.c). */
#ifndef DMACONN_VERIFY_H
#define DMACONN_VERIFY_H

#include "dmaconn.h"

/*
 * Runs the helper over every ordered pair of visible CUDA devices (0 ms:
 * the default timeout) into a new *out, as dmaconn_verify_run() describes
 * it but not cross-checked with NVML.  A pair that exceeds its own timeout
 * is marked failed with the properties "hang" and "reason" and the helper is
 * restarted for the pairs after it.  quiet: the warnings stay in *out, none
 * goes to the sink.  *failed: 1 when the run as a whole failed (nothing was
 * checked).  DMACONN_OK, or DMACONN_ENOMEM.
 */
int dc_verify_cuda(int timeout_ms, int quiet, dmaconn_result **out, int *failed);
/* The status of pair i -> j of such a result (its "status" property);
 * DMACONN_VERIFY_NO_PEER on the diagonal, DMACONN_VERIFY_FAIL out of range. */
dmaconn_verify_status dc_verify_status(const dmaconn_result *r, int i, int j);
/* The helper dc_verify_cuda() would run, in path: 0, or -1 when none is
 * found. */
int dc_verify_helper_path(char *path, size_t len);

#endif
