/*
 * libdmaconn_replay: answers the NVML calls of dmaconn from a topology file
 * (docs/replay-format.md) and records such files from a live node.
 *
 * The replay side has no API of its own here: the core finds it through
 * dmaconn_replay_ops() (src/replay_abi.h), whose nvml_table and ze_table fill
 * the backends' function tables.
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
 * Writes a version-1 topology file to `path` describing what NVML answers on
 * this node, or, when DMACONN_REPLAY is set, what the replayed file answers
 * (so that recording a replay reproduces it).  `tool` names the recorder in
 * "recorded" (e.g. "dmaconn 0.1.0").  NVML is libnvidia-ml.so.1, or the
 * absolute path in DMACONN_NVML_LIBRARY.  A failing NVML call is recorded as
 * its error; only an unusable replay file, a bad DMACONN_NVML_LIBRARY or a
 * file that cannot be written fail.  Returns 0, or -1 with a one-line
 * message in err.
 */
DMACONN_REPLAY_EXTERN int dmaconn_replay_record(const char *path, const char *tool, char *err,
						size_t errlen);

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
