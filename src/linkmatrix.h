/* SPDX-License-Identifier: BSD-3-Clause */
/* From per-device link facts to a connectivity matrix: the one place that
 * knows how direct links and switch links combine. */
#ifndef DMACONN_LINKMATRIX_H
#define DMACONN_LINKMATRIX_H

#include "pci.h"

#define DC_MAX_LINKS 64

enum dc_remote { DC_REMOTE_NONE, DC_REMOTE_GPU, DC_REMOTE_SWITCH, DC_REMOTE_OTHER };

/* A set of link kinds: the bit of each remote end (enum dc_remote) that counts. */
#define DC_LINKS_TO(remote) (1u << (remote))

struct dc_link {
	enum dc_remote remote;
	struct dc_pci remote_pci; /* for DC_REMOTE_GPU */
};

struct dc_node {
	int isolated;        /* no peer DMA at all (a MIG instance, MIG mode) */
	int has_pci;
	struct dc_pci pci;
	int switch_usable;   /* its switch links may carry traffic */
	int has_domain;      /* cluster and clique below are known */
	unsigned char cluster[16];
	unsigned int clique;
	int nlinks;          /* active links listed in links[] */
	struct dc_link links[DC_MAX_LINKS];
};

/* Number of active links of node i attached to a switch. */
int dc_switch_links(const struct dc_node *node);

/*
 * Whether two devices registered with a switched fabric are in one of its
 * domains: the same cluster UUID and the same clique.  The one place that
 * compares domains: the NVSwitch rule below, cuda/multicast's pairs and the
 * multi-node merge (src/merge.c) call it.
 */
int dc_same_fabric_domain(const unsigned char cluster_a[16], unsigned int clique_a, const unsigned char cluster_b[16],
			  unsigned int clique_b);

/*
 * The NVSwitch rule, the one place it lives: links from a to b through the
 * switches, given their switch link counts sw_a and sw_b -- the lower of
 * the two, when both may use their switch links and they are in the same
 * fabric domain (cluster and clique), or either does not say; else 0.
 */
long dc_switch_between(const struct dc_node *a, long sw_a, const struct dc_node *b, long sw_b);

/*
 * m[i*n+j] = the links from i to j of the kinds in `kinds` (DC_LINKS_TO
 * bits): direct ones to a GPU (matched by PCI address), and
 * dc_switch_between(i, j) through the switches.
 * The diagonal and the rows and columns of isolated nodes are 0.
 */
void dc_link_matrix(const struct dc_node *nodes, int n, unsigned int kinds, int *m);

/*
 * The number of links a peer is reached over, from the bandwidth of all of
 * them (max_bw) and of one (min_bw > 0), as ROCr and RCCL read an XGMI
 * link: 0 when max_bw is 0 (a peer reached through other devices), -1 when
 * the ratio is beyond any real count (more than DC_MAX_LINKS).
 */
int dc_links_by_bandwidth(unsigned long long max_bw, unsigned long long min_bw);

#endif
