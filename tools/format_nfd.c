/* SPDX-License-Identifier: BSD-3-Clause */
/* --format nfd: a feature file for node-feature-discovery's local source
 * (/etc/kubernetes/node-feature-discovery/features.d/dmaconn), one
 * `name=value` line per label.  Names carry NFD's own prefix,
 * feature.node.kubernetes.io/, which nfd-master accepts without
 * -extra-label-ns; every line is a valid Kubernetes label (name part and
 * value at most 63 characters of [A-Za-z0-9._-], beginning and ending
 * alphanumeric).  The NVIDIA GPUs' RDMA NICs: how many, the node's
 * GPUDirect RDMA mechanism, how many GPUs can use it with a NIC, and per GPU
 * its closest NIC, their path and the GDR each can use. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

#define NFD_PREFIX "feature.node.kubernetes.io/dmaconn-"

/* s as a label value (or name part): other characters become '_', the
 * ends are trimmed to alphanumerics, at most 63 characters. */
static void nfd_clean(char *out, size_t len, const char *s)
{
	size_t n = 0;
	while (*s && !isalnum((unsigned char)*s))
		s++;
	for (; *s && n + 1 < len && n < 63; s++)
		out[n++] = isalnum((unsigned char)*s) || *s == '-' || *s == '.' || *s == '_' ? *s : '_';
	while (n > 0 && !isalnum((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
}

/* One label: NFD_PREFIX + a-b=value, left out where the value is empty. */
static void nfd_label(FILE *out, const char *type, const char *what, const char *value)
{
	char name[64], v[64], full[160];
	snprintf(full, sizeof(full), "dmaconn-%s-%s", type, what);
	nfd_clean(name, sizeof(name), full);
	nfd_clean(v, sizeof(v), value);
	if (*v)
		fprintf(out, "feature.node.kubernetes.io/%s=%s\n", name, v);
}

/* The fewest links of any pair of distinct devices, or -1. */
static int nfd_min_links(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r), min = -1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int l = i == j ? -1 : dc_format_links(r, i, j);
			if (l >= 0 && (min < 0 || l < min))
				min = l;
		}
	return min;
}

/* GPU i's clique: the one multicast follows where cuda/multicast (mc, in
 * the same CUDA order) names it (v4's multicast clique), else clique_id. */
static const char *nfd_clique(const dmaconn_result *r, const dmaconn_result *mc, int i)
{
	const char *v = mc && i < dmaconn_result_size(mc) ? dc_format_device(mc, i, DMACONN_PROP_MULTICAST_CLIQUE_ID) : "";
	return *v ? v : dc_format_device(r, i, DMACONN_PROP_CLIQUE_ID);
}

/* The NVSwitch fabric's state and clique that every GPU shares; where
 * they differ, the state of the GPU that holds the others back (failed,
 * then in_progress, then not_started) or "mixed"; none where unknown.  The
 * clique is cluster_uuid.clique, as GPU feature discovery spells
 * nvidia.com/gpu.clique, the multicast clique where one is known, and only
 * for a real NVLink domain (a cluster UUID other than zero). */
static void nfd_fabric(FILE *out, const char *type, const dmaconn_result *r, const dmaconn_result *mc)
{
	int n = dmaconn_result_size(r);
	const char *state = n ? dc_format_device(r, 0, DMACONN_PROP_FABRIC_STATE) : "";
	const char *cluster = n ? dc_format_device(r, 0, DMACONN_PROP_CLUSTER_UUID) : "";
	const char *clique = n ? nfd_clique(r, mc, 0) : "";
	int same_state = 1, same_clique = *cluster && *clique && strspn(cluster, "0-") != strlen(cluster);
	for (int i = 1; i < n; i++) {
		same_state &= !strcmp(state, dc_format_device(r, i, DMACONN_PROP_FABRIC_STATE));
		same_clique &= !strcmp(cluster, dc_format_device(r, i, DMACONN_PROP_CLUSTER_UUID)) &&
			       !strcmp(clique, nfd_clique(r, mc, i));
	}
	/* GPUs that differ: the one that holds the others back. */
	static const char *const worst[] = { "failed", "in_progress", "not_started" };
	for (size_t w = 0; !same_state && w < sizeof(worst) / sizeof(worst[0]); w++)
		for (int i = 0; i < n && !same_state; i++)
			if (!strcmp(dc_format_device(r, i, DMACONN_PROP_FABRIC_STATE), worst[w])) {
				state = worst[w];
				same_state = 1;
			}
	if (*state)
		nfd_label(out, type, "fabric-state", same_state ? state : "mixed");
	if (same_clique) {
		char v[128];
		snprintf(v, sizeof(v), "%s.%s", cluster, clique);
		nfd_label(out, type, "fabric-clique", v);
	}
}

/* The placement's labels (dc_format_placement): rdma-nics, gdr, gdr-gpus,
 * and gpuN-nic, gpuN-nic-path, gpuN-gdr for each GPU of r with a NIC. */
static void nfd_placement(FILE *out, const struct dc_format_input *in, const dmaconn_result *r)
{
	dmaconn_placement *p = dc_format_placement(in);
	char num[32], what[64];
	if (!p)
		return;
	int nics = dmaconn_placement_nic_count(p), n = dmaconn_result_size(r), gdr_gpus = 0;
	snprintf(num, sizeof(num), "%d", nics);
	nfd_label(out, "cuda", "rdma-nics", num);
	if (nics)
		nfd_label(out, "cuda", "gdr", dc_format_gdr_mechanism(p));
	for (int i = 0; i < n && nics; i++) {
		int pi = dc_format_place_index(p, r, i), nic = pi >= 0 ? dmaconn_placement_device_nic(p, pi, 0) : -1;
		for (int rank = 0; nic >= 0 && rank < nics; rank++) {
			const char *gdr = dmaconn_placement_link_get(p, pi, dmaconn_placement_device_nic(p, pi, rank),
								     DMACONN_PLACE_GDR);
			if (gdr && strcmp(gdr, DMACONN_GDR_NONE)) {
				gdr_gpus++;
				break;
			}
		}
		if (nic < 0)
			continue;
		const char *name = dmaconn_placement_nic_get(p, nic, DMACONN_PROP_NAME);
		const char *path = dmaconn_placement_link_get(p, pi, nic, DMACONN_PROP_PATH);
		const char *gdr = dmaconn_placement_link_get(p, pi, nic, DMACONN_PLACE_GDR);
		snprintf(what, sizeof(what), "gpu%d-nic", i);
		nfd_label(out, "cuda", what, name ? name : "");
		snprintf(what, sizeof(what), "gpu%d-nic-path", i);
		nfd_label(out, "cuda", what, path ? path : "");
		snprintf(what, sizeof(what), "gpu%d-gdr", i);
		nfd_label(out, "cuda", what, gdr ? gdr : "unknown");
	}
	if (nics) {
		snprintf(num, sizeof(num), "%d", gdr_gpus);
		nfd_label(out, "cuda", "gdr-gpus", num);
	}
	dmaconn_placement_free(p);
}

int dc_format_nfd(FILE *out, FILE *err, const struct dc_format_input *in)
{
	(void)err;
	char num[32], what[96];
	for (int k = 0; k < in->count; k++) {
		const dmaconn_result *r = in->results[k];
		const char *type = dmaconn_device_type_name(dmaconn_result_device_type(r));
		const char *conn = dmaconn_result_connection_type(r);
		int first = 1;
		for (int m = 0; m < k; m++)
			first &= dmaconn_result_device_type(in->results[m]) != dmaconn_result_device_type(r);
		if (first) {
			snprintf(num, sizeof(num), "%d", dmaconn_result_size(r));
			nfd_label(out, type, "devices", num);
			nfd_fabric(out, type, r,
				   dmaconn_result_device_type(r) == DMACONN_DEVICE_CUDA
					   ? dc_format_result(in, DMACONN_DEVICE_CUDA, "multicast") : NULL);
			if (dmaconn_result_device_type(r) == DMACONN_DEVICE_CUDA && dmaconn_result_size(r))
				nfd_placement(out, in, r);
		}
		if (!strcmp(conn, "verified") && dmaconn_result_size(r) &&
		    dmaconn_result_pair_get(r, 0, dmaconn_result_size(r) > 1, DMACONN_PROP_VERIFIED) &&
		    !strcmp(dmaconn_result_pair_get(r, 0, dmaconn_result_size(r) > 1, DMACONN_PROP_VERIFIED),
			    "not_verified"))
			continue; /* no verdict: nothing to say */
		int links = nfd_min_links(r);
		if (links >= 0 && dmaconn_result_size(r) > 1) {
			snprintf(what, sizeof(what), "%s-links", conn);
			snprintf(num, sizeof(num), "%d", links);
			nfd_label(out, type, what, num);
		}
		snprintf(what, sizeof(what), "%s-fully-connected", conn);
		nfd_label(out, type, what, dc_format_fully_connected(r) ? "true" : "false");
	}
	return 0;
}
