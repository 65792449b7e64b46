/* SPDX-License-Identifier: BSD-3-Clause */
/* The functional check shared by dmaconn_verify() (src/verify.c) and the
 * "cuda"/"verified" view (src/backends/cuda_verify/verified.c). */
#ifndef DMACONN_VERIFY_H
#define DMACONN_VERIFY_H

#include "dmaconn.h"

/*
 * Runs the helper over every ordered pair of visible CUDA devices (0 ms:
 * the default timeout) into a new *out.  A pair that exceeds its own timeout
 * is marked failed with the properties "hang" and "reason" and the helper is
 * restarted for the pairs after it.  quiet: the warnings stay in *out, none
 * goes to the sink.  DMACONN_OK, or DMACONN_ENOMEM.
 */
int dc_verify_cuda(int timeout_ms, int quiet, dmaconn_verify_result **out);
/* The helper dc_verify_cuda() would run, in path: 0, or -1 when none is
 * found. */
int dc_verify_helper_path(char *path, size_t len);
/* The bus id the driver gave device i, or NULL. */
const char *dc_verify_pci(const dmaconn_verify_result *v, int i);
/* 1 when the run as a whole failed (nothing was checked), else 0. */
int dc_verify_failed(const dmaconn_verify_result *v);

#endif
