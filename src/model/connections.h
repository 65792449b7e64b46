/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The built-in connection types, one row each (connections.c): what a pair's
 * entry counts, the switch rule it follows, the rules of its reasons, the
 * legend the CLI and the docs show, and the PyTorch device type it is
 * registered under.  A backend's views are the rows it serves (those of
 * its device type, or naming it: dc_connection_next), each registered with
 * its one detector; the views and the reasons read the row rather than
 * knowing the type.  The CLI,
 * Python and the docs read the texts through dmaconn_connection_text().
 */
#ifndef DMACONN_CONNECTIONS_H
#define DMACONN_CONNECTIONS_H

#include "dmaconn.h"
#include "../linkmatrix.h"

/* What a pair's entry counts. */
enum dc_counts {
	DC_COUNTS_LINKS,   /* the links between them of the kinds in .links */
	DC_COUNTS_PEER,    /* 1 when the vendor's peer facts in .peer are all OK */
	DC_COUNTS_DOMAIN,  /* 1 when both GPUs are capable and in one fabric domain */
	DC_COUNTS_VERIFIED /* 1 when a kernel proved it (the verify helper) */
};

/* Bits of .peer: the peer capabilities (DC_PEER_READ..., model.h) that must be OK. */
#define DC_PEER_NEEDS(cap) (1u << (cap))

/* Which switch rule applies (linkmatrix.h). */
enum dc_switch_rule {
	DC_SWITCH_NONE,
	DC_SWITCH_LINKS, /* switch links count by the NVSwitch rule (linkmatrix.h) */
	DC_SWITCH_DOMAIN /* both in one fabric domain (dc_same_fabric_domain, linkmatrix.h) */
};

/* Which rules give the reasons of its zeros (src/model/reasons.c). */
enum dc_reason_rules {
	DC_REASONS_CUDA,      /* dc_reasons_cuda: peer statuses, links, the host */
	DC_REASONS_MULTICAST, /* dc_reasons_multicast: each GPU's cause, domains */
	DC_REASONS_SUSPECTS,  /* the verify helper's own, plus dc_reasons_suspects */
	DC_REASONS_ROCM,      /* dc_reasons_vendor: the KFD link's properties */
	DC_REASONS_XPU        /* dc_reasons_vendor: Level Zero's flags and fabric */
};

struct dc_backend;

struct dc_connection {
	dmaconn_device_type type;
	const char *name;  /* "nvlink" */
	/* The backend whose detector serves it (dc_backend.name), NULL for the
	 * first backend of its device type in table.c's order. */
	const char *backend;
	const char *label; /* "cuda/nvlink": prefix of its warnings */
	enum dc_counts counts;
	unsigned int links; /* DC_COUNTS_LINKS, and the NV# of a peer rule's path: DC_LINKS_TO bits */
	unsigned int peer;  /* DC_COUNTS_PEER: DC_PEER_NEEDS bits, the capabilities that must be OK
			     * (dc_peer_ok, model.h; a vendor's facts as struct dc_peer's statuses) */
	enum dc_switch_rule switch_rule;
	enum dc_reason_rules reasons;
	/* The texts of dmaconn_connection_text(), by dmaconn_connection_text_kind;
	 * NULL where it has none. */
	const char *text[DMACONN_CONNECTION_TEXTS];
};

/* Every row, in the order of registration within a backend. */
extern const struct dc_connection dc_connections[];
extern const int dc_nconnections;

/* The row of (type, name), or NULL. */
const struct dc_connection *dc_connection_find(dmaconn_device_type type, const char *name);

/* The next row after `after` (NULL: the first) that backend be serves, or
 * NULL: its views, in the table's order. */
const struct dc_connection *dc_connection_next(const struct dc_backend *be, const struct dc_connection *after);

/* The row of the pair b is built for, or NULL. */
const struct dc_connection *dc_connection_of(const dmaconn_builder *b);

/* A backend's detector: view(b, m, row) over a new reference to get()'s
 * model (dc_view_model) and b's row, the reference dropped after. */
struct dc_model;
typedef int dc_model_view(dmaconn_builder *b, struct dc_model *m, const struct dc_connection *row);
int dc_connection_view(dmaconn_builder *b, struct dc_model *(*get)(void), dc_model_view *view);

#endif
