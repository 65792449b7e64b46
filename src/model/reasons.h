/* SPDX-License-Identifier: BSD-3-Clause */
/* Reasons for the zeros of the cuda views (src/model/reasons.c). */
#ifndef DMACONN_REASONS_H
#define DMACONN_REASONS_H

#include "dmaconn.h"
#include "connections.h"

struct dc_mc_cause;

/* The reasons of the zeros of b's result by its row's rules (row->reasons):
 * up as dc_reasons_cuda takes it, cause as dc_reasons_multicast does (each
 * may be NULL). */
void dc_reasons_of(dmaconn_builder *b, const struct dc_connection *row, const unsigned long long *up,
		   const struct dc_mc_cause *cause);

/* Gives every off-diagonal 0 of b's result a reason code and text, from the
 * device and pair properties the view has set; up[d]: which of device d's
 * links 0-63 are active (up NULL: unknown, taken to be each GPU's
 * lowest-numbered links that are not inactive). */
void dc_reasons_cuda(dmaconn_builder *b, const unsigned long long *up);

/* Appends to the text of every pair that failed or hung in verification what
 * the kernel shows against peer access there (ACS, IOMMU, a VM, BAR1). */
void dc_reasons_suspects(dmaconn_builder *b);

/* What a GPU's multicast capability is judged from (the multicast view). */
struct dc_mc_facts {
	int mig;                 /* MIG mode on, or a MIG instance */
	int cc_major, cc_minor;  /* compute capability, -1 unknown */
	int driver;              /* the driver has the multicast API; else driver_text says why not */
	const char *driver_text;
	int cc_on;               /* confidential computing in any mode but disabled */
	unsigned int cc_feature; /* NVML's ccFeature */
	int switch_links;        /* active NVLinks to NVSwitches */
	struct dc_mc_fabric {    /* its NVSwitch fabric registration */
		int known;
		unsigned int state; /* enum dc_fabric_state (model.h) */
		int status;         /* 0: success */
		int health_known;
		unsigned int health_mask;
	} fabric;
	const char *status;      /* NVML's name of the registration status */
};

/* NULL when GPU d can join a multicast object; else its DMACONN_REASON_*
 * code, and the text for people in text. */
const char *dc_multicast_cause(const struct dc_mc_facts *f, int d, char *text, size_t len);

/* A GPU's multicast cause: code NULL when capable. */
#define DC_MC_TEXT 400
struct dc_mc_cause {
	const char *code;
	char text[DC_MC_TEXT];
};

/* Gives every off-diagonal 0 of a cuda/multicast result its reason: the
 * cause of GPU i (cause[i]), else of GPU j, else the different domains their
 * properties name (cause NULL: none known; an incomplete detection's zeros
 * are "not determined"). */
void dc_reasons_multicast(dmaconn_builder *b, const struct dc_mc_cause *cause);

#endif
