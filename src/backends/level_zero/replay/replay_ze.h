/* SPDX-License-Identifier: BSD-3-Clause */
/* The "level_zero" section of a topology file: read and answered by ze.c,
 * recorded by record_ze.c through ze.c's description of it. */
#ifndef DMACONN_REPLAY_ZE_H
#define DMACONN_REPLAY_ZE_H

#include <jansson.h>

#include "format.h"

struct ze_api;

/* The most tiles a card may have, as Level Zero's device order allows. */
#define REPLAY_MAX_TILES 32

int replay_ze_read(const char *file, json_t *value);
void replay_ze_release(void);
/* NULL when the replayed Level Zero loader loaded, else the loader message
 * (the section absent: not installed). */
const char *replay_ze_load_error(void);
/* The loader the file names; the functions it lacks (a new array). */
const char *replay_ze_library(void);
json_t *replay_ze_missing(void);
/* The "level_zero" section's table (dmaconn_replay_ops()->table). */
int replay_ze_table(void *table, char *err, size_t errlen);

/* Recording (record_ze.c): forget, wrap a loader's table, write the section. */
void replay_ze_record_begin(void);
void replay_ze_record_table(void *table, const char *library, const char *load_error);
void replay_ze_record(json_t *root);

/* The format's Level Zero: its result codes, and the fields of a device, its
 * "pci", its "vertex" and an edge.  Each table begins with the fields of
 * Level Zero's structure (ze_device_properties_t, ze_pci_ext_properties_t,
 * ze_fabric_vertex_exp_properties_t, ze_fabric_edge_exp_properties_t) at
 * their offsets there; the answers' codes and the file's own objects follow,
 * at offsets past it.  A p2p entry's "flags". */
extern const struct fmt_ctx replay_ze_fmt;
extern const struct fmt_field replay_ze_device_fields[], replay_ze_pci_fields[], replay_ze_vertex_fields[],
	replay_ze_edge_fields[];
extern const struct fmt_field *const replay_ze_p2p_flags;

#endif
