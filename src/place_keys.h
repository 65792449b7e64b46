/* SPDX-License-Identifier: BSD-3-Clause */
/* The placement's keys (dmaconn.h, "Placement"): the list that
 * dmaconn_placement_key() hands out (src/props.c), and the integers among
 * them, which are not properties of a result but are read as integers
 * (src/props.c) and typed so in JSON (src/codec.c) all the same.  A header of
 * its own, since the codec is built into components that do not link
 * src/props.c. */
#ifndef DMACONN_PLACE_KEYS_H
#define DMACONN_PLACE_KEYS_H

#include <string.h>

#include "dmaconn.h"

/* Every DMACONN_PLACE_* key in the header's order (node, device, NIC, then
 * (device, NIC) pair keys), and whether it is an integer. */
static const struct dc_place_key {
	const char *key;
	int is_int;
} dc_place_keys[] = {
	{ DMACONN_PLACE_DMABUF, 0 },
	{ DMACONN_PLACE_DMABUF_REASON, 0 },
	{ DMACONN_PLACE_PEERMEM_MODULE, 0 },
	{ DMACONN_PLACE_GDR_LEVEL, 0 },
	{ DMACONN_PLACE_NICS_REASON, 0 },
	{ DMACONN_PLACE_NICS_REASON_TEXT, 0 },
	{ DMACONN_PLACE_CPU_ARCH, 0 },
	{ DMACONN_PLACE_CPU_VENDOR, 0 },
	{ DMACONN_PLACE_CPU_FAMILY, 1 },
	{ DMACONN_PLACE_CPU_MODEL, 1 },
	{ DMACONN_PLACE_CPU_NUMA_NODE, 1 },
	{ DMACONN_PLACE_CPUSET, 0 },
	{ DMACONN_PLACE_CPU_SOURCE, 0 },
	{ DMACONN_PLACE_MEMORY_NUMA_NODE, 1 },
	{ DMACONN_PLACE_MEMORY_MODE, 0 },
	{ DMACONN_PLACE_C2C_LINKS, 1 },
	{ DMACONN_PLACE_C2C_STATUS, 0 },
	{ DMACONN_PLACE_C2C_MAX_BW_MBS, 1 },
	{ DMACONN_PLACE_PCIE_ROOT, 0 },
	{ DMACONN_PLACE_PCI_PATH, 0 },
	{ DMACONN_PLACE_NUMACTL, 0 },
	{ DMACONN_PLACE_SLURM_CPU_BIND, 0 },
	{ DMACONN_PLACE_NETDEV, 0 },
	{ DMACONN_PLACE_LINK_LAYER, 0 },
	{ DMACONN_PLACE_PORT_STATE, 0 },
	{ DMACONN_PLACE_PORT_RATE, 0 },
	{ DMACONN_PLACE_NODE_GUID, 0 },
	{ DMACONN_PLACE_PCIE_PATH, 0 },
	{ DMACONN_PLACE_GDR, 0 },
	{ DMACONN_PLACE_GDR_MODULE, 0 },
};
#define DC_PLACE_NKEYS ((int)(sizeof(dc_place_keys) / sizeof(dc_place_keys[0])))

/* The k-th key, NULL when k is out of range. */
static inline const char *dc_place_key_at(int k)
{
	return k >= 0 && k < DC_PLACE_NKEYS ? dc_place_keys[k].key : NULL;
}

/* Whether key is one of the placement's integer keys. */
static inline int dc_place_int_key(const char *key)
{
	for (int k = 0; key && k < DC_PLACE_NKEYS; k++)
		if (dc_place_keys[k].is_int && !strcmp(dc_place_keys[k].key, key))
			return 1;
	return 0;
}

#endif
