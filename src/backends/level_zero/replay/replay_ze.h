/* SPDX-License-Identifier: BSD-3-Clause */
/* The "level_zero" section of a topology file: read and answered by ze.c,
 * recorded by record_ze.c into the same structures (below), written through
 * ze.c's description of it. */
#ifndef DMACONN_REPLAY_ZE_H
#define DMACONN_REPLAY_ZE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "ze_load.h"

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
 * at offsets past it. */
extern const struct fmt_ctx replay_ze_fmt;
extern const struct fmt_field replay_ze_device_fields[], replay_ze_pci_fields[], replay_ze_vertex_fields[],
	replay_ze_edge_fields[];

/* ---------------------------------------------- the section as C structures */

#define ZID 24 /* "4095.31" and more */

/*
 * What the file says, as the handles zeInit shows: a device handle points at
 * a card or a tile, a vertex handle at the vertex member of one, an edge
 * handle at an edge, a driver handle at a driver.  Each object starts with
 * Level Zero's own structure of its properties, so that one field table
 * reads the file into it and records a live answer.  Devices are named by
 * their index in their driver's nodes (a recording's handles come one call
 * at a time, and the array grows).
 */
typedef struct _ze_device_handle_t znode;
typedef struct _ze_fabric_edge_handle_t zedge;
#define ZLIST(type)      \
	struct {         \
		type *v; \
		int n;   \
	}

struct _ze_fabric_vertex_handle_t {
	char unused;
};

struct zpci {
	ze_pci_ext_properties_t p;
	ze_result_t rc;
	bool has; /* an address to answer with */
};

struct zvertex {
	ze_fabric_vertex_exp_properties_t p; /* type BY_PLACE unless the file names one */
	ze_result_t rc, sub_rc;		     /* its properties', its sub-vertices' answers */
	bool shown, has_pci;		     /* without an address: the device's */
};

struct _ze_device_handle_t {
	ze_device_properties_t props;
	ze_result_t props_rc, sub_rc;
	struct zpci pci;
	struct zvertex vx;
	char id[ZID];	      /* "3" for card 3, "3.1" for its tile 1 */
	int driver, card, tile; /* tile -1 for a card */
	int nsub, sub0; /* a card's tiles: its driver's nodes sub0 to sub0 + nsub - 1 */
	struct _ze_fabric_vertex_handle_t vh;
};

struct _ze_fabric_edge_handle_t {
	ze_fabric_edge_exp_properties_t p;
	ze_result_t rc; /* its properties' answer; an edge error's */
	int a, b; /* its ends */
};

struct zpair {
	int from, to;
	ze_result_t rc;
	uint32_t flags;
};

enum { REL_SAME_CARD, REL_XELINK, REL_OTHER, REL_COUNT };

struct _ze_driver_handle_t {
	int ncards, nnodes;
	znode *nodes; /* read: the cards, then their tiles */
	ZLIST(zedge) edges;
	struct zp2p {
		uint32_t rel[REL_COUNT];
		ZLIST(struct zpair) pairs;
	} p2p;
	ze_result_t vertices_rc, devices_rc; /* zeFabricVertexGetExp's and zeDeviceGet's answers */
	ZLIST(zedge) edge_errors;	     /* zeFabricEdgeGetExp's failures, by pair */
};

struct zfile {
	bool present, exposed;
	struct replay_library lib;
	ze_result_t drivers_rc; /* zeDriverGet's answer */
	ZLIST(struct _ze_driver_handle_t) drivers;
};

/* Reading or writing a driver: what the fields' readers and writers share. */
struct zctx {
	struct fmt_ctx c; /* first: the engine passes it to custom readers */
	struct _ze_driver_handle_t *d;
};

/* A driver's fields (its "p2p" pairs and "edge_errors" written by them), an
 * edge's ends. */
extern const struct fmt_field replay_ze_driver_fields[], replay_ze_edge_ends[];
enum { ZE_DRV_DEVICES = 1, ZE_DRV_EDGES, ZE_DRV_P2P, ZE_DRV_VERTICES_ERROR, ZE_DRV_DEVICES_ERROR, ZE_DRV_EDGE_ERRORS };
/* Where in replay_ze_device_fields, replay_ze_edge_fields and replay_ze_vertex_fields. */
enum { ZE_DEV_PCI = 8, ZE_DEV_VERTEX = 9, ZE_EDGE_ERROR = 7, ZE_VX_ERROR = 3, ZE_VX_SUBS = 4 };

#endif
