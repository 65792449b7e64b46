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

#include "../../model/model.h"

/* The identity properties of the model's device d, shown as ordinal. */
void dc_kfd_view_identity(dmaconn_builder *b, const struct dc_model *m, int d, int ordinal);

/*
 * The pair properties and matrix of the n visible devices, slots[i] being
 * the model's index of ordinal i: XGMI links (infinity fabric), or whether
 * the link allows peer DMA with atomics (p2p).  m->vendor_ok, with its
 * per-pair facts.
 */
void dc_kfd_view_pairs(dmaconn_builder *b, const struct dc_model *m, const int *slots, int n, int p2p);

/* Whether the pair's link is an enabled XGMI link. */
int dc_kfd_view_xgmi(const struct dc_model *m, int a, int b);

#endif
