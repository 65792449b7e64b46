/* SPDX-License-Identifier: BSD-3-Clause */
/* Reasons for the zeros of the cuda views (src/model/reasons.c). */
#ifndef DMACONN_REASONS_H
#define DMACONN_REASONS_H

#include "dmaconn.h"

/* Gives every off-diagonal 0 of b's result a reason code and text, from the
 * device and pair properties the view has set; up[d]: which of device d's
 * links 0-63 are active (up NULL: unknown, taken to be each GPU's
 * lowest-numbered links that are not inactive). */
void dc_reasons_cuda(dmaconn_builder *b, const unsigned long long *up);

/* Appends to the text of every pair that failed or hung in verification what
 * the kernel shows against peer access there (ACS, IOMMU, a VM, BAR1). */
void dc_reasons_suspects(dmaconn_builder *b);

/* The same for rocm (rocm: 1; the KFD link's properties) and xpu (0; Level
 * Zero's peer flags and fabric), of the p2p view (p2p: 1) or the link view
 * (infinity_fabric, xelink). */
void dc_reasons_vendor(dmaconn_builder *b, int rocm, int p2p);

#endif
