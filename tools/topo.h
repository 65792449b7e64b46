/* SPDX-License-Identifier: BSD-3-Clause */
/* dmaconn --topo: the path table and each pair's capabilities, one printer
 * for every vendor (tools/topo.c). */
#ifndef DMACONN_TOPO_H
#define DMACONN_TOPO_H

#include "dmaconn.h"

/* A `nvidia-smi topo -m`-like table of r's pair paths (with p, of the same
 * devices, or NULL: the NIC columns and rows and each device's CPU Affinity,
 * NUMA Affinity and GPU NUMA ID), the vendor's legend, then one line per
 * ordered pair; replay names the file replayed, or NULL. */
void cli_text_topo(const dmaconn_result *r, const dmaconn_placement *p, const char *replay);

/* After a cuda table: each GPU's multicast capability (or its reason) and
 * the groups of GPUs one multicast object can join, from cuda/multicast. */
void cli_text_topo_multicast(const dmaconn_result *mc);

#endif
