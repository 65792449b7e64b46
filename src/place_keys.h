/* SPDX-License-Identifier: BSD-3-Clause */
/* The placement's integer keys (dmaconn.h, "Placement"): not properties of a
 * result, but read as integers (src/props.c) and typed so in JSON
 * (src/codec.c) all the same.  A header of its own, since the codec is built
 * into components that do not link src/props.c. */
#ifndef DMACONN_PLACE_KEYS_H
#define DMACONN_PLACE_KEYS_H

#include <string.h>

#include "dmaconn.h"

/* Whether key is one of the placement's integer keys. */
static inline int dc_place_int_key(const char *key)
{
	static const char *const keys[] = { DMACONN_PLACE_CPU_NUMA_NODE, DMACONN_PLACE_MEMORY_NUMA_NODE,
					    DMACONN_PLACE_C2C_LINKS, DMACONN_PLACE_C2C_MAX_BW_MBS,
					    DMACONN_PLACE_CPU_FAMILY, DMACONN_PLACE_CPU_MODEL };
	for (size_t k = 0; key && k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!strcmp(keys[k], key))
			return 1;
	return 0;
}

#endif
