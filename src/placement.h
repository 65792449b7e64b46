/* SPDX-License-Identifier: BSD-3-Clause */
/* The placement handle (include/dmaconn.h, "Placement"), as src/placement*.c fill it. */
#ifndef DMACONN_PLACEMENT_H
#define DMACONN_PLACEMENT_H

#include "internal.h"

struct dmaconn_placement {
	dmaconn_device_type type;
	int n, nnics;
	struct dc_props node;
	struct dc_props *devices; /* n */
	struct dc_props *nics;    /* nnics */
	struct dc_props *links;   /* n * nnics, device-major */
	int *order;               /* n * nnics: each device's NICs, nearest first */
	const char **nic_paths;   /* nnics * nnics: static class names, NULL unknown */
	struct dc_strings warnings;
};

#endif
