/* SPDX-License-Identifier: BSD-3-Clause */
#include "linkmatrix.h"

#include <stdlib.h>
#include <string.h>

int dc_switch_links(const struct dc_node *node)
{
	int count = 0;
	for (int l = 0; l < node->nlinks; l++)
		count += node->links[l].remote == DC_REMOTE_SWITCH;
	return count;
}

int dc_same_fabric_domain(const unsigned char cluster_a[16], unsigned int clique_a, const unsigned char cluster_b[16],
			  unsigned int clique_b)
{
	return clique_a == clique_b && !memcmp(cluster_a, cluster_b, 16);
}

static int same_domain(const struct dc_node *a, const struct dc_node *b)
{
	if (!a->has_domain || !b->has_domain)
		return 1;
	return dc_same_fabric_domain(a->cluster, a->clique, b->cluster, b->clique);
}

long dc_switch_between(const struct dc_node *a, long sw_a, const struct dc_node *b, long sw_b)
{
	if (!a->switch_usable || !b->switch_usable || !same_domain(a, b))
		return 0;
	return sw_a < sw_b ? sw_a : sw_b;
}

void dc_link_matrix(const struct dc_node *nodes, int n, unsigned int kinds, int *m)
{
	int to_gpu = (kinds & DC_LINKS_TO(DC_REMOTE_GPU)) != 0, to_switch = (kinds & DC_LINKS_TO(DC_REMOTE_SWITCH)) != 0;
	memset(m, 0, (size_t)n * (size_t)n * sizeof(*m));
	/* Per node, once: its switch links and whether any link reaches a GPU
	 * (a rack's n*n pairs must not each count 2 x 18 links again). */
	int *sw = malloc(((size_t)n + 1) * sizeof(*sw));
	unsigned char *direct = malloc((size_t)n + 1);
	if (!sw || !direct) {
		/* Both or neither: one alone would be read unfilled. */
		free(sw);
		free(direct);
		sw = NULL;
		direct = NULL;
	}
	for (int i = 0; i < n && sw; i++) {
		sw[i] = dc_switch_links(&nodes[i]);
		direct[i] = 0;
		for (int l = 0; l < nodes[i].nlinks; l++)
			direct[i] |= nodes[i].links[l].remote == DC_REMOTE_GPU;
	}
	for (int i = 0; i < n; i++) {
		const struct dc_node *a = &nodes[i];
		if (a->isolated)
			continue;
		int sw_a = sw ? sw[i] : dc_switch_links(a);
		for (int j = 0; j < n; j++) {
			const struct dc_node *b = &nodes[j];
			if (i == j || b->isolated)
				continue;
			int v = 0;
			for (int l = 0; to_gpu && b->has_pci && (!direct || direct[i]) && l < a->nlinks; l++)
				v += a->links[l].remote == DC_REMOTE_GPU &&
				     dc_pci_equal(&a->links[l].remote_pci, &b->pci);
			if (to_switch)
				v += (int)dc_switch_between(a, sw_a, b, sw ? sw[j] : dc_switch_links(b));
			m[(size_t)i * (size_t)n + (size_t)j] = v;
		}
	}
	free(sw);
	free(direct);
}

int dc_links_by_bandwidth(unsigned long long max_bw, unsigned long long min_bw)
{
	/* Divide in 64 bits and bound before narrowing: a ratio that wrapped
	 * would read as a small count, 0, or negative. */
	unsigned long long links = max_bw / min_bw;
	return links > DC_MAX_LINKS ? -1 : (int)links;
}
