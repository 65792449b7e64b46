/* Intel detectors on Level Zero (level_zero.c), for the registry in dmaconn.c. */
#ifndef DMACONN_LEVEL_ZERO_H
#define DMACONN_LEVEL_ZERO_H

#include "dmaconn.h"

/* xpu/p2p: 1 where zeDeviceGetP2PProperties reports both ACCESS and ATOMICS. */
int dc_ze_detect_p2p(dmaconn_builder *b, void *user_data);
/* xpu/xelink: Xe Link connections between two devices, from the fabric topology. */
int dc_ze_detect_xelink(dmaconn_builder *b, void *user_data);
/* Unloads Level Zero (a live loader stays mapped once zeInit succeeded). */
void dc_ze_shutdown(void);
/* fork() handling, as dc_nvml_fork() (src/internal.h). */
void dc_ze_fork(int phase);

/* The symbol the replay component exports to hide Level Zero functions that
 * the recorded loader lacked: int (*)(const char *symbol). */
#define DMACONN_REPLAY_ZE_HIDDEN "dmaconn_replay_ze_hidden"

#endif
