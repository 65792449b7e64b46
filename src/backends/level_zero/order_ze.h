/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which devices Level Zero shows, and in what order, as Intel's GPU runtime
 * (compute-runtime) derives them from ZE_AFFINITY_MASK and
 * ZE_FLAT_DEVICE_HIERARCHY.  Live, the runtime applies these variables
 * itself and dmaconn takes zeDeviceGet's answer as it comes; these rules serve
 * the replay component (which plays the runtime) and the count of devices
 * from sysfs when the loader is missing.  Sources, rule by rule, in
 * order_ze.c.
 */
#ifndef DMACONN_ORDER_ZE_H
#define DMACONN_ORDER_ZE_H

enum dc_ze_hierarchy { DC_ZE_COMPOSITE, DC_ZE_FLAT, DC_ZE_COMBINED };

/* ZE_FLAT_DEVICE_HIERARCHY as the runtime reads it: exactly "COMPOSITE",
 * "FLAT" or "COMBINED"; anything else, or unset, gives `dflt`. */
enum dc_ze_hierarchy dc_ze_hierarchy(const char *value, enum dc_ze_hierarchy dflt);
/* "COMPOSITE", "FLAT", "COMBINED". */
const char *dc_ze_hierarchy_name(enum dc_ze_hierarchy h);

#define DC_ZE_MAX_TILES 32

/* A root device: a card after ZE_AFFINITY_MASK. */
struct dc_ze_root {
	int card;           /* index into the cards, in the driver's order */
	unsigned int tiles; /* its enabled tiles, bit t for tile t (bit 0 alone for a card without tiles) */
	int subdevices;     /* its sub-devices: 0 when the root device is one tile (or a
			     * card without tiles), else the number of enabled tiles */
};

/* A device zeDeviceGet returns. */
struct dc_ze_device {
	int root; /* index into the roots */
	int card;
	int tile; /* the tile this device is; -1 for a root with sub-devices or a card without tiles */
};

/*
 * Applies `mask` (ZE_AFFINITY_MASK; NULL = unset) and hierarchy h to cards
 * of which card c has tiles[c] tiles (1 for a card without sub-devices; at
 * most DC_ZE_MAX_TILES).  Fills *roots and *devices (malloc'd, the caller
 * frees; NULL when empty) and their counts.  Returns 0, or -1 when out of
 * memory.
 */
int dc_ze_expose(const int *tiles, int ncards, enum dc_ze_hierarchy h, const char *mask,
		 struct dc_ze_root **roots, int *nroots, struct dc_ze_device **devices, int *ndevices);

#endif
