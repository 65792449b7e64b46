/* SPDX-License-Identifier: BSD-3-Clause */
/* Where to place work beside each device (dmaconn_placement_*): the
 * --nics view, --bind, the placement object of --json and the columns
 * --topo adds (tools/place.c). */
#ifndef DMACONN_PLACE_H
#define DMACONN_PLACE_H

#include <jansson.h>

#include "dmaconn.h"

/* --nics: each device with its NICs nearest first and the mechanism of
 * GPUDirect RDMA, then the NIC legend; replay names the file replayed. */
void cli_text_nics(const dmaconn_placement *p, const char *replay);

/* The placement as the --json document's "placement" object. */
json_t *cli_json_placement(const dmaconn_placement *p);

/* Device i's object of "placement" ("index", its facts and, with nics, its
 * NICs nearest first). */
json_t *cli_json_placement_device(const dmaconn_placement *p, int i, int nics);

/* The device of p that arg names (its index, UUID or PCI bus id), or -1. */
int cli_place_device(const dmaconn_placement *p, const char *arg);

/* --bind: device i's numactl and srun prefixes, one line each; 0, or -1
 * when p knows no CPU of the device (nothing printed). */
int cli_text_bind(const dmaconn_placement *p, int i);

#endif
