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

/* The k-th DMACONN_PLACE_* key in the header's order (node, device, NIC,
 * then (device, NIC) pair keys), NULL when k is out of range. */
static inline const char *dc_place_key_at(int k)
{
	static const char *const keys[] = {
		DMACONN_PLACE_DMABUF,
		DMACONN_PLACE_DMABUF_REASON,
		DMACONN_PLACE_PEERMEM_MODULE,
		DMACONN_PLACE_GDR_LEVEL,
		DMACONN_PLACE_NICS_REASON,
		DMACONN_PLACE_NICS_REASON_TEXT,
		DMACONN_PLACE_CPU_ARCH,
		DMACONN_PLACE_CPU_VENDOR,
		DMACONN_PLACE_CPU_FAMILY,
		DMACONN_PLACE_CPU_MODEL,
		DMACONN_PLACE_CPU_NUMA_NODE,
		DMACONN_PLACE_CPUSET,
		DMACONN_PLACE_CPU_SOURCE,
		DMACONN_PLACE_MEMORY_NUMA_NODE,
		DMACONN_PLACE_MEMORY_MODE,
		DMACONN_PLACE_C2C_LINKS,
		DMACONN_PLACE_C2C_STATUS,
		DMACONN_PLACE_C2C_MAX_BW_MBS,
		DMACONN_PLACE_PCIE_ROOT,
		DMACONN_PLACE_PCI_PATH,
		DMACONN_PLACE_NUMACTL,
		DMACONN_PLACE_SLURM_CPU_BIND,
		DMACONN_PLACE_NETDEV,
		DMACONN_PLACE_LINK_LAYER,
		DMACONN_PLACE_PORT_STATE,
		DMACONN_PLACE_PORT_RATE,
		DMACONN_PLACE_NODE_GUID,
		DMACONN_PLACE_PCIE_PATH,
		DMACONN_PLACE_GDR,
		DMACONN_PLACE_GDR_MODULE,
	};
	return k >= 0 && (size_t)k < sizeof(keys) / sizeof(keys[0]) ? keys[k] : NULL;
}

/* Whether key is one of the placement's integer keys. */
static inline int dc_place_int_key(const char *key)
{
	static const char *const keys[] = { DMACONN_PLACE_CPU_NUMA_NODE, DMACONN_PLACE_MEMORY_NUMA_NODE,
					    DMACONN_PLACE_C2C_LINKS,     DMACONN_PLACE_C2C_MAX_BW_MBS,
					    DMACONN_PLACE_CPU_FAMILY,    DMACONN_PLACE_CPU_MODEL };
	for (size_t k = 0; key && k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!strcmp(keys[k], key))
			return 1;
	return 0;
}

#endif
