/* The "level_zero" section of a topology file (ze.c). */
#ifndef DMACONN_REPLAY_ZE_H
#define DMACONN_REPLAY_ZE_H

#include <jansson.h>

int replay_ze_read(const char *file, json_t *value);
void replay_ze_release(void);
void replay_ze_record(json_t *root);
/* NULL when the replayed Level Zero loader loaded, else the loader message
 * (the section absent: not installed). */
const char *replay_ze_load_error(void);
/* dmaconn_replay_ops()->ze_table. */
struct ze_api;
int replay_ze_table(struct ze_api *api, char *err, size_t errlen);

#endif
