/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libdmaconn_replay: answers the vendor-library calls of dmaconn from a
 * topology file (docs/replay-format.md) and records such files.
 *
 * The replay side has no API of its own here: the core finds it through
 * dmaconn_replay_ops() (src/replay_abi.h), whose nvml_table and ze_table fill
 * the backends' function tables, and whose record_* functions record.
 */
#ifndef DMACONN_REPLAY_H
#define DMACONN_REPLAY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DMACONN_REPLAY_EXTERN __attribute__((visibility("default")))
#else
#define DMACONN_REPLAY_EXTERN
#endif

/*
 * The file to replay instead of DMACONN_REPLAY (NULL or "": back to the
 * variable), as libdmaconn's dmaconn_set_replay_file() passes it.  The file
 * is read once per process: after that only the same path is accepted.
 * Returns 0, or -1 when refused.
 */
DMACONN_REPLAY_EXTERN int dmaconn_replay_use_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif
