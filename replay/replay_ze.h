/* The "level_zero" section of a topology file: read and answered by ze.c,
 * recorded by record_ze.c. */
#ifndef DMACONN_REPLAY_ZE_H
#define DMACONN_REPLAY_ZE_H

#include <jansson.h>
#include <stdint.h>

struct ze_api;

/* The most tiles a card may have, as Level Zero's device order allows. */
#define REPLAY_MAX_TILES 32

int replay_ze_read(const char *file, json_t *value);
void replay_ze_release(void);
/* NULL when the replayed Level Zero loader loaded, else the loader message
 * (the section absent: not installed). */
const char *replay_ze_load_error(void);
/* The loader the file names. */
const char *replay_ze_library(void);
/* dmaconn_replay_ops()->ze_table. */
int replay_ze_table(struct ze_api *api, char *err, size_t errlen);

/* Recording (record_ze.c): forget, wrap a loader's table, write the section. */
void replay_ze_record_begin(void);
void replay_ze_record_table(struct ze_api *api, const char *library, const char *load_error);
void replay_ze_record(json_t *root);

/* The names the format gives to Level Zero's enumerations and flags. */
#include "replay_internal.h"
extern const struct replay_name ze_type_names[], ze_device_flag_names[], ze_p2p_flag_names[], ze_vertex_type_names[],
	ze_bandwidth_unit_names[], ze_latency_unit_names[], ze_duplexity_names[];

#endif
