/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rocm views (rocm/infinity_fabric, rocm/p2p) computed from the node
 * model alone (src/model/model.h), as KFD discovery filled it: no sysfs, no
 * vendor call, nothing written back.  kfd.c places the devices in HIP's
 * order and calls these; tests/test_kfd_view.c calls them on a model filled
 * by hand.
 */
#ifndef DMACONN_KFD_VIEW_H
#define DMACONN_KFD_VIEW_H

#include "../../model/connections.h"
#include "../../model/model.h"

/* The identity properties of the model's device d, shown as ordinal. */
void dc_kfd_view_identity(dmaconn_builder *b, const struct dc_model *m, int d, int ordinal);

/*
 * The pair properties and matrix of the n visible devices, slots[i] being
 * the model's index of ordinal i, by what row counts: a link filter, the
 * XGMI links between them (rocm/infinity_fabric); a peer rule, whether the
 * link has the capabilities row->peer needs (rocm/p2p: peer DMA, 32- and
 * 64-bit atomics).  m->vendor_ok, with its per-pair facts.
 */
void dc_kfd_view_pairs(dmaconn_builder *b, const struct dc_model *m, const int *slots, int n,
		       const struct dc_connection *row);

/* Whether the pair's link is an enabled XGMI link. */
int dc_kfd_view_xgmi(const struct dc_model *m, int a, int b);

#endif
