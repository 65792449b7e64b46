/* What replay.c and record.c share inside libdmaconn_replay. */
#ifndef DMACONN_REPLAY_INTERNAL_H
#define DMACONN_REPLAY_INTERNAL_H

#include "nvml_api.h"
#include "replay_abi.h"

#define REPLAY_EXPORT __attribute__((visibility("default")))

/* The NVML functions this library answers, with NVML's exact signatures. */
#define REPLAY_NVML_PROTO_(name, ret, params, required) REPLAY_EXPORT ret name params;
NVML_FUNCTIONS(REPLAY_NVML_PROTO_)
#undef REPLAY_NVML_PROTO_

REPLAY_EXPORT const struct dmaconn_replay_ops *dmaconn_replay_ops(void);

/* The library the replayed file says was loaded ("libnvidia-ml.so.1" when it
 * names none); only meaningful when nvml_load_error() is NULL. */
const char *replay_nvml_library(void);

/* The most devices a file may list, and so the most a recording writes. */
#define REPLAY_MAX_DEVICES 4096

/* The keys of a "p2p" entry, by nvmlGpuP2PCapsIndex_t. */
#define REPLAY_P2P_CAPS 5
extern const char *const replay_p2p_caps_keys[REPLAY_P2P_CAPS];

/* The names the format gives to NVML enumerations. */
struct replay_name {
	const char *name;
	int value;
};
extern const struct replay_name replay_p2p_names[];
extern const struct replay_name replay_ancestor_names[];
extern const struct replay_name replay_remote_type_names[];

/* The name of value in table t, or NULL. */
const char *replay_name_of(const struct replay_name *t, int value);
/* The value named name (case-insensitive); 0, or -1 when t lacks it. */
int replay_value_of(const struct replay_name *t, const char *name, int *value);

#endif
