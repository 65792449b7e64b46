/* SPDX-License-Identifier: BSD-3-Clause */
/* --format nccl-xml: this node as an NCCL topology file, for
 * NCCL_TOPO_FILE (NCCL's src/graph/xml.cc reads it, version 1):
 *
 *   <system version="1" name="dmaconn">
 *     <cpu numaid="0">
 *       <pci busid="0000:18:00.0" class="0x030200" vendor="0x10de">
 *         <gpu dev="0" sm="90">
 *           <nvlink target="ffffffff:ff:ff.0" count="18" tclass="0x068000"/>
 *
 * A GPU's NUMA node is its numa_node property: what the kernel's sysfs
 * says, read as detection reads it (below DMACONN_SYSFS_ROOT, or from a
 * replay's "files").  In a replay that recorded none, GPUs that cuda/p2p
 * puts on a SYS path from each other get different ones.
 *
 * One <pci>/<gpu> per NVIDIA GPU under the <cpu> of its NUMA node; dev is
 * the NVML index, sm the compute capability.  A GPU's NVLinks: one element
 * to the NVSwitches (tclass 0x068000) with its switch links, or one per
 * peer GPU (tclass 0x030200) with the links of the cuda/nvlink matrix.  A
 * GPU whose links carry nothing (the fabric still registering, links down)
 * gets no <nvlink>, and NCCL then asks NVML itself, as without the file:
 * the format cannot say "no links" to it.  What the file leaves out
 * (PCIe link speed and width, CPU model, GPU rank and GDR) NCCL fills from
 * the live system. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

/* NCCL's device classes (src/graph/topo.h) and its sentinel for NVLinks
 * whose far side NVML does not name. */
#define NCCL_CLASS_GPU "0x030200"
#define NCCL_CLASS_NVSWITCH "0x068000"
#define NCCL_NVSWITCH_TARGET "ffffffff:ff:ff.0"

static int xml_int(const dmaconn_result *r, int i, const char *key, int fallback)
{
	long long n;
	return dmaconn_result_device_int(r, i, key, &n) == DMACONN_OK && n >= INT_MIN && n <= INT_MAX ? (int)n
													: fallback;
}

/* Whether s is a bus id as NCCL writes them: "dddd:bb:dd.f", lower case. */
static int xml_bus_id(const char *s)
{
	static const char shape[] = "xxxx:xx:xx.x";
	if (strlen(s) != sizeof(shape) - 1)
		return 0;
	for (size_t k = 0; shape[k]; k++)
		if (shape[k] == 'x' ? !isxdigit((unsigned char)s[k]) || isupper((unsigned char)s[k]) : s[k] != shape[k])
			return 0;
	return 1;
}

/* numa[i] for every GPU: its numa_node, else -1; for a replay that
 * recorded none, the groups of GPUs no SYS path separates (cuda/p2p's
 * path), numbered 0, 1, ... */
static void xml_numa(const struct dc_format_input *in, const dmaconn_result *r, int *numa)
{
	int n = dmaconn_result_size(r);
	const dmaconn_result *p2p = dc_format_result(in, DMACONN_DEVICE_CUDA, "p2p");
	int groups = 0, recorded = 0;
	for (int i = 0; i < n; i++) {
		numa[i] = xml_int(r, i, DMACONN_PROP_NUMA_NODE, -1);
		recorded |= numa[i] >= 0;
	}
	for (int i = 0; i < n; i++) {
		if (recorded || !in->replay)
			continue;
		for (int j = 0; j < i && numa[i] < 0; j++) {
			const char *path = p2p && dmaconn_result_size(p2p) == n
						   ? dmaconn_result_pair_get(p2p, i, j, DMACONN_PROP_PATH)
						   : NULL;
			if (path && strcmp(path, "SYS") && strcmp(path, "?") && strcmp(path, "-"))
				numa[i] = numa[j];
		}
		if (numa[i] < 0)
			numa[i] = groups++;
	}
}

static void xml_gpu(FILE *out, const dmaconn_result *r, int i)
{
	int n = dmaconn_result_size(r), any = n == 1;
	for (int j = 0; j < n; j++)
		any |= j != i && dmaconn_result_get(r, i, j) > 0;
	long long cc[2];
	int parts = 0;
	fprintf(out, "    <pci busid=\"%s\" class=\"%s\" vendor=\"0x10de\">\n",
		dc_format_device(r, i, DMACONN_PROP_PCI_BUS_ID), NCCL_CLASS_GPU);
	fputs("      <gpu", out);
	if (xml_int(r, i, DMACONN_PROP_NVML_INDEX, -1) >= 0)
		fprintf(out, " dev=\"%d\"", xml_int(r, i, DMACONN_PROP_NVML_INDEX, -1));
	if (dmaconn_result_device_list(r, i, DMACONN_PROP_COMPUTE_CAPABILITY, cc, 2, &parts) == DMACONN_OK &&
	    parts == 2 && cc[0] >= 0 && cc[0] < 1000000 && cc[1] >= 0 && cc[1] < 1000000)
		fprintf(out, " sm=\"%lld\"", cc[0] * 10 + cc[1]);
	int switch_links = xml_int(r, i, DMACONN_PROP_NVLINK_SWITCH_LINKS, 0);
	if (!any) {
		fputs("/>\n    </pci>\n", out);
		return;
	}
	fputs(">\n", out);
	if (switch_links > 0) {
		fprintf(out, "        <nvlink target=\"%s\" count=\"%d\" tclass=\"%s\"/>\n", NCCL_NVSWITCH_TARGET,
			switch_links, NCCL_CLASS_NVSWITCH);
	} else {
		for (int j = 0; j < n; j++)
			if (j != i && dmaconn_result_get(r, i, j) > 0)
				fprintf(out, "        <nvlink target=\"%s\" count=\"%d\" tclass=\"%s\"/>\n",
					dc_format_device(r, j, DMACONN_PROP_PCI_BUS_ID), dmaconn_result_get(r, i, j),
					NCCL_CLASS_GPU);
	}
	fputs("      </gpu>\n    </pci>\n", out);
}

int dc_format_nccl_xml(FILE *out, FILE *err, const struct dc_format_input *in)
{
	const dmaconn_result *r = dc_format_result(in, DMACONN_DEVICE_CUDA, "nvlink");
	if (!r) {
		fputs("dmaconn: --format nccl-xml needs the cuda/nvlink result (no -d/-c, or -d cuda -c nvlink)\n", err);
		return 1;
	}
	int n = dmaconn_result_size(r);
	for (int i = 0; i < n; i++)
		if (!xml_bus_id(dc_format_device(r, i, DMACONN_PROP_PCI_BUS_ID))) {
			fprintf(err, "dmaconn: GPU %d has no PCI bus id NCCL could match (%s)\n", i,
				dc_format_device(r, i, DMACONN_PROP_PCI_BUS_ID));
			return 1;
		}
	int *numa = calloc((size_t)n + 1, sizeof(int));
	char *done = calloc((size_t)n + 1, 1);
	if (!numa || !done) {
		free(numa);
		free(done);
		fputs("dmaconn: out of memory\n", err);
		return 1;
	}
	xml_numa(in, r, numa);
	fputs("<system version=\"1\" name=\"dmaconn\">\n", out);
	/* One <cpu> per NUMA node, in the order GPUs name them. */
	for (int i = 0; i < n; i++) {
		if (done[i])
			continue;
		fprintf(out, "  <cpu numaid=\"%d\">\n", numa[i]);
		for (int j = i; j < n; j++)
			if (!done[j] && numa[j] == numa[i]) {
				xml_gpu(out, r, j);
				done[j] = 1;
			}
		fputs("  </cpu>\n", out);
	}
	fputs("</system>\n", out);
	free(numa);
	free(done);
	return 0;
}
