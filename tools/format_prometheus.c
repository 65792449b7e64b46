/* SPDX-License-Identifier: BSD-3-Clause */
/* --format prometheus: the text exposition format, for node_exporter's
 * textfile collector (a file NAME.prom in its --collector.textfile.directory).
 * Every metric is a gauge; a pair's series carry both devices' index, UUID
 * and PCI bus id.  Under --mpi the results span the job, and every device
 * carries its rank and host too.  The node's RDMA NICs, and per GPU and NIC
 * the nearest-first rank and whether GPUDirect RDMA can be used (not under
 * --mpi: the placement is this node's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

/* A label value, escaped as the format asks (backslash, quote, newline). */
static void prom_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', out);
		if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void prom_label(FILE *out, const char *name, const char *value, int first)
{
	fprintf(out, "%s%s=\"", first ? "" : ",", name);
	prom_value(out, value);
	fputc('"', out);
}

static void prom_result_labels(FILE *out, const dmaconn_result *r)
{
	prom_label(out, "device_type", dmaconn_device_type_name(dmaconn_result_device_type(r)), 1);
	prom_label(out, "connection", dmaconn_result_connection_type(r), 0);
}

static void prom_device_labels(FILE *out, const struct dc_format_input *in, const dmaconn_result *r, int i,
			       const char *side)
{
	char name[32], index[16];
	snprintf(index, sizeof(index), "%d", i);
	snprintf(name, sizeof(name), "%s_index", side);
	prom_label(out, name, index, 0);
	snprintf(name, sizeof(name), "%s_uuid", side);
	prom_label(out, name, dc_format_device(r, i, DMACONN_PROP_UUID), 0);
	snprintf(name, sizeof(name), "%s_bus_id", side);
	prom_label(out, name, dc_format_device(r, i, DMACONN_PROP_PCI_BUS_ID), 0);
	if (in->mpi) {
		snprintf(name, sizeof(name), "%s_rank", side);
		prom_label(out, name, dc_format_device(r, i, DMACONN_PROP_RANK), 0);
		snprintf(name, sizeof(name), "%s_host", side);
		prom_label(out, name, dc_format_device(r, i, DMACONN_PROP_HOST), 0);
	}
}

static void prom_head(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* The labels of every pair series of r: result, then per device its "from"
 * and its "to" half, each escaped once rather than once per pair (a rack's
 * result has millions of pairs). */
struct prom_labels {
	char *result;
	char **from, **to;
	int n;
};

static char *prom_text(const struct dc_format_input *in, const dmaconn_result *r, int i, const char *side)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	if (!f)
		return NULL;
	if (side)
		prom_device_labels(f, in, r, i, side);
	else
		prom_result_labels(f, r);
	if (fclose(f) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

static void prom_labels_free(struct prom_labels *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->from[i]);
		free(l->to[i]);
	}
	free(l->from);
	free(l->to);
	free(l->result);
}

static int prom_labels_make(struct prom_labels *l, const struct dc_format_input *in, const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	*l = (struct prom_labels){ .result = prom_text(in, r, 0, NULL) };
	l->from = calloc((size_t)n + 1, sizeof(*l->from));
	l->to = calloc((size_t)n + 1, sizeof(*l->to));
	if (!l->result || !l->from || !l->to) {
		prom_labels_free(l);
		return -1;
	}
	for (; l->n < n; l->n++) {
		l->from[l->n] = prom_text(in, r, l->n, "from");
		l->to[l->n] = prom_text(in, r, l->n, "to");
		if (!l->from[l->n] || !l->to[l->n]) {
			l->n++;
			prom_labels_free(l);
			return -1;
		}
	}
	return 0;
}

/* One gauge per pair of distinct devices of every result value() answers
 * for (>= 0); -1 when out of memory. */
static int prom_pairs(FILE *out, const struct dc_format_input *in, const char *name, const char *help,
		      int (*value)(const dmaconn_result *, int, int))
{
	int head = 0;
	for (int k = 0; k < in->count; k++) {
		const dmaconn_result *r = in->results[k];
		int n = dmaconn_result_unavailable(r) ? 0 : dmaconn_result_size(r);
		struct prom_labels l = { 0 };
		int made = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				int v = i == j ? -1 : value(r, i, j);
				if (v < 0)
					continue;
				if (!made++ && prom_labels_make(&l, in, r) != 0)
					return -1;
				if (!head++)
					prom_head(out, name, help);
				fprintf(out, "%s{%s%s%s} %d\n", name, l.result, l.from[i], l.to[j], v);
			}
		if (made)
			prom_labels_free(&l);
	}
	return 0;
}

static int prom_connectivity(const dmaconn_result *r, int i, int j)
{
	return strcmp(dmaconn_result_connection_type(r), "verified") ? dmaconn_result_get(r, i, j) : -1;
}

/* 1 for a pair that passed verification (the matrix's rule: every
 * capability proven), 0 for one that did not, failed or hung; none where
 * there is no verdict. */
static int prom_verified(const dmaconn_result *r, int i, int j)
{
	const char *v = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_VERIFIED);
	if (strcmp(dmaconn_result_connection_type(r), "verified") || !v)
		return -1;
	if (dmaconn_result_pair_verified(r, i, j))
		return 1;
	return !strcmp(v, "pass") || !strcmp(v, "fail") || !strcmp(v, "hang") ? 0 : -1;
}

/* 0 when a detection failed or could not run (no driver, NVML failing):
 * its pairs then say nothing and are not exported. */
static int prom_up(const struct dc_format_input *in)
{
	for (int k = 0; k < in->count; k++)
		if (dmaconn_result_unavailable(in->results[k]))
			return 0;
	return !in->error;
}

/* The link count where it is not the connectivity entry already (NVLink's
 * matrix counts the links: one series says both). */
static int prom_links(const dmaconn_result *r, int i, int j)
{
	int links = dc_format_links(r, i, j);
	return links >= 0 && links != prom_connectivity(r, i, j) ? links : -1;
}

/* A (GPU, NIC) series' labels: the GPU's index, UUID and bus id (of r, the
 * cuda result), the NIC's name and bus id. */
static void prom_nic_labels(FILE *out, const dmaconn_placement *p, const dmaconn_result *r, int i, int n)
{
	char index[16];
	snprintf(index, sizeof(index), "%d", i);
	prom_label(out, "gpu_index", index, 1);
	prom_label(out, "gpu_uuid", dc_format_device(r, i, DMACONN_PROP_UUID), 0);
	prom_label(out, "gpu_bus_id", dc_format_device(r, i, DMACONN_PROP_PCI_BUS_ID), 0);
	const char *name = dmaconn_placement_nic_get(p, n, DMACONN_PROP_NAME);
	const char *bus = dmaconn_placement_nic_get(p, n, DMACONN_PROP_PCI_BUS_ID);
	prom_label(out, "nic", name ? name : "", 0);
	prom_label(out, "nic_bus_id", bus ? bus : "", 0);
}

/* The placement's series: dmaconn_rdma_nics, and per GPU of the cuda
 * result and NIC its rank and GDR; per GPU the NICs it can use GDR with. */
static void prom_placement(FILE *out, const struct dc_format_input *in)
{
	dmaconn_placement *p = dc_format_placement(in);
	const dmaconn_result *r = NULL;
	for (int k = 0; k < in->count && !r; k++)
		if (dmaconn_result_device_type(in->results[k]) == DMACONN_DEVICE_CUDA)
			r = in->results[k];
	if (!p || !r) {
		dmaconn_placement_free(p);
		return;
	}
	int n = dmaconn_result_size(r), nics = dmaconn_placement_nic_count(p);
	prom_head(out, "dmaconn_rdma_nics", "RDMA-capable NICs of the node (reason: why none).");
	if (nics)
		fprintf(out, "dmaconn_rdma_nics %d\n", nics);
	else {
		const char *why = dmaconn_placement_get(p, DMACONN_PLACE_NICS_REASON);
		fputs("dmaconn_rdma_nics{", out);
		prom_label(out, "reason", why ? why : DMACONN_REASON_UNKNOWN, 1);
		fputs("} 0\n", out);
	}
	static const char *const names[3] = { "dmaconn_gpu_nic_rank", "dmaconn_gpu_nic_gdr", "dmaconn_gpu_gdr_nics" };
	static const char *const helps[3] = {
		"The NIC's place among the GPU's NICs, nearest first (0: the closest; path: the class of their path).",
		("Whether the GPU can use GPUDirect RDMA with the NIC (1) or not (0, reason: why); mechanism: dmabuf, "
		 "peermem or none."),
		"NICs the GPU can use GPUDirect RDMA with.",
	};
	for (int m = 0; m < 3 && nics; m++) {
		prom_head(out, names[m], helps[m]);
		for (int i = 0; i < n; i++) {
			int pi = dc_format_place_index(p, r, i), usable = 0;
			for (int rank = 0; pi >= 0 && rank < nics; rank++) {
				int nic = dmaconn_placement_device_nic(p, pi, rank);
				const char *gdr = nic >= 0 ? dmaconn_placement_link_get(p, pi, nic, DMACONN_PLACE_GDR) : NULL;
				const char *path = nic >= 0 ? dmaconn_placement_link_get(p, pi, nic, DMACONN_PROP_PATH) : NULL;
				const char *why = nic >= 0 ? dmaconn_placement_link_get(p, pi, nic, DMACONN_PROP_REASON) : NULL;
				int ok = gdr && strcmp(gdr, DMACONN_GDR_NONE) != 0;
				usable += ok;
				if (nic < 0 || m == 2)
					continue;
				fprintf(out, "%s{", names[m]);
				prom_nic_labels(out, p, r, i, nic);
				if (m == 0) {
					prom_label(out, "path", path ? path : "", 0);
					fprintf(out, "} %d\n", rank);
					continue;
				}
				prom_label(out, "mechanism", gdr ? gdr : "unknown", 0);
				if (!ok)
					prom_label(out, "reason", why ? why : DMACONN_REASON_UNKNOWN, 0);
				fprintf(out, "} %d\n", ok);
			}
			if (m != 2 || pi < 0)
				continue;
			char index[16];
			snprintf(index, sizeof(index), "%d", i);
			fputs("dmaconn_gpu_gdr_nics{", out);
			prom_label(out, "gpu_index", index, 1);
			prom_label(out, "gpu_uuid", dc_format_device(r, i, DMACONN_PROP_UUID), 0);
			prom_label(out, "gpu_bus_id", dc_format_device(r, i, DMACONN_PROP_PCI_BUS_ID), 0);
			fprintf(out, "} %d\n", usable);
		}
	}
	dmaconn_placement_free(p);
}

int dc_format_prometheus(FILE *out, FILE *err, const struct dc_format_input *in)
{
	prom_head(out, "dmaconn_up", "Whether every detection ran (1) or one failed (0).");
	fprintf(out, "dmaconn_up %d\n", prom_up(in));
	prom_head(out, "dmaconn_detection_duration_seconds", "Wall time of the detection run.");
	fprintf(out, "dmaconn_detection_duration_seconds %.6f\n", in->seconds);
	if (in->count) {
		prom_head(out, "dmaconn_devices", "Devices the detector reports.");
		for (int k = 0; k < in->count; k++) {
			fputs("dmaconn_devices{", out);
			prom_result_labels(out, in->results[k]);
			fprintf(out, "} %d\n", dmaconn_result_size(in->results[k]));
		}
		prom_head(out, "dmaconn_fully_connected",
			  "Whether every pair of distinct devices has connectivity (0 without devices).");
		for (int k = 0; k < in->count; k++) {
			fputs("dmaconn_fully_connected{", out);
			prom_result_labels(out, in->results[k]);
			fprintf(out, "} %d\n", dc_format_fully_connected(in->results[k]));
		}
		prom_head(out, "dmaconn_warnings", "Warnings the detection gave.");
		for (int k = 0; k < in->count; k++) {
			fputs("dmaconn_warnings{", out);
			prom_result_labels(out, in->results[k]);
			fprintf(out, "} %d\n", dmaconn_result_warning_count(in->results[k]));
		}
	}
	if (prom_pairs(out, in, "dmaconn_pair_connectivity",
		       "The connectivity matrix entry of the pair (0: no DMA connectivity; for cuda/nvlink the "
		       "NVLink count; see dmaconn(1)).",
		       prom_connectivity) != 0 ||
	    prom_pairs(out, in, "dmaconn_pair_links",
		       "Links between the two devices (NVLink, XGMI or Xe Link), where not the connectivity entry.",
		       prom_links) != 0 ||
	    prom_pairs(out, in, "dmaconn_pair_verified",
		       "Whether the pair passed (1) or failed or hung (0) the functional check; absent without a "
		       "verdict.",
		       prom_verified) != 0) {
		fputs("dmaconn: --format prometheus: out of memory\n", err);
		return 1;
	}
	prom_placement(out, in);
	return 0;
}
