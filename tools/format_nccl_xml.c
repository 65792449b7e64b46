/* SPDX-License-Identifier: BSD-3-Clause */
/* --format nccl-xml: this node as an NCCL topology file, for
 * NCCL_TOPO_FILE (NCCL's src/graph/xml.cc reads it, version 1):
 *
 *   <system version="1" name="dmaconn">
 *     <cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
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
 * the format cannot say "no links" to it.  A GPU with active NVLink-C2C
 * gets <c2c count bw> (bw: one link's MB/s), as NCCL writes it itself.
 *
 * The RDMA NICs (dmaconn_placement_detect) are <pci class="0x02"> with
 * <nic><net name dev/></nic>, NCCL matching its network devices by name.
 * NCCL keeps the tree a file gives (a node the file places is never moved
 * to where sysfs would put it), so every device sits below the PCIe
 * switches NCCL itself would put it under: every second bridge of its
 * PCIe path from the device up, the switches' upstream ports, as NCCL's
 * sysfs walk climbs two levels at a time.  Where a device's PCIe path is
 * unknown, the NICs are left out (NCCL finds them itself): a NIC beside a
 * flat GPU would read PHB, beyond NCCL's GDR level.  What the file leaves
 * out (PCIe link speed and width, CPU affinity, GPU rank, a net's speed, port,
 * GUID and gdr) NCCL fills from the live system: a file's gdr would
 * override NCCL's own check of its network plugin. */
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
#define NCCL_CLASS_NIC "0x02"
#define NCCL_CLASS_BRIDGE "0x060400"
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

/* A device of the file: GPU i of the result, or NIC n of the placement,
 * below the PCIe switches chain[0] (nearest the CPU) .. chain[depth - 1]. */
struct xml_dev {
	int gpu, nic; /* one of them >= 0 */
	int numa;
	char chain[8][16];
	int depth;
};

/* The PCIe switches NCCL puts a device under, from its PCIe path (bridges
 * from the root port down, comma-separated): every second bridge going up
 * from the device, nearest the CPU first.  0, or -1 when path is unknown
 * or not bus ids. */
static int xml_chain(struct xml_dev *d, const char *path)
{
	char bridges[16][16];
	int count = 0;
	d->depth = 0;
	if (!path)
		return -1;
	for (const char *at = path; *at;) {
		size_t len = strcspn(at, ",");
		if (len >= sizeof(bridges[0]) || count == 16)
			return -1;
		memcpy(bridges[count], at, len);
		bridges[count][len] = '\0';
		if (!xml_bus_id(bridges[count++]))
			return -1;
		at += len + (at[len] == ',');
	}
	for (int k = count - 2; k >= 0 && d->depth < 8; k -= 2)
		d->depth++;
	for (int k = count - 2, at = d->depth - 1; k >= 0 && at >= 0; k -= 2, at--)
		memcpy(d->chain[at], bridges[k], sizeof(d->chain[at]));
	return 0;
}

/* Whether a sorts before b: by switch chain, then GPUs before NICs, then
 * by index (a stable order that keeps each switch's devices together). */
static int xml_before(const struct xml_dev *a, const struct xml_dev *b)
{
	for (int k = 0; k < a->depth && k < b->depth; k++) {
		int c = strcmp(a->chain[k], b->chain[k]);
		if (c)
			return c < 0;
	}
	if (a->depth != b->depth)
		return a->depth < b->depth;
	if ((a->gpu >= 0) != (b->gpu >= 0))
		return a->gpu >= 0;
	return a->gpu >= 0 ? a->gpu < b->gpu : a->nic < b->nic;
}

static void xml_gpu(FILE *out, const dmaconn_result *r, int i, const dmaconn_placement *p, int pi, int indent)
{
	int n = dmaconn_result_size(r), any = n == 1;
	for (int j = 0; j < n; j++)
		any |= j != i && dmaconn_result_get(r, i, j) > 0;
	long long cc[2];
	int parts = 0;
	const char *c2c = p && pi >= 0 ? dmaconn_placement_device_get(p, pi, DMACONN_PLACE_C2C_LINKS) : NULL;
	const char *c2c_status = p && pi >= 0 ? dmaconn_placement_device_get(p, pi, DMACONN_PLACE_C2C_STATUS) : NULL;
	const char *c2c_bw = p && pi >= 0 ? dmaconn_placement_device_get(p, pi, DMACONN_PLACE_C2C_MAX_BW_MBS) : NULL;
	long long c2c_count = dc_format_place_int(DMACONN_PLACE_C2C_LINKS, c2c, 0);
	long long bw = dc_format_place_int(DMACONN_PLACE_C2C_MAX_BW_MBS, c2c_bw, 0);
	int has_c2c = c2c_count > 0 && c2c_count <= INT_MAX && bw > 0 && bw <= INT_MAX && c2c_status &&
		      !strcmp(c2c_status, "active");
	fprintf(out, "%*s<pci busid=\"%s\" class=\"%s\" vendor=\"0x10de\">\n", indent, "",
		dc_format_device(r, i, DMACONN_PROP_PCI_BUS_ID), NCCL_CLASS_GPU);
	fprintf(out, "%*s<gpu", indent + 2, "");
	if (xml_int(r, i, DMACONN_PROP_NVML_INDEX, -1) >= 0)
		fprintf(out, " dev=\"%d\"", xml_int(r, i, DMACONN_PROP_NVML_INDEX, -1));
	if (dmaconn_result_device_list(r, i, DMACONN_PROP_COMPUTE_CAPABILITY, cc, 2, &parts) == DMACONN_OK &&
	    parts == 2 && cc[0] >= 0 && cc[0] < 1000000 && cc[1] >= 0 && cc[1] < 1000000)
		fprintf(out, " sm=\"%lld\"", cc[0] * 10 + cc[1]);
	int switch_links = xml_int(r, i, DMACONN_PROP_NVLINK_SWITCH_LINKS, 0);
	if (!any && !has_c2c) {
		fprintf(out, "/>\n%*s</pci>\n", indent, "");
		return;
	}
	fputs(">\n", out);
	if (!any) {
		/* no NVLink to say */
	} else if (switch_links > 0) {
		fprintf(out, "%*s<nvlink target=\"%s\" count=\"%d\" tclass=\"%s\"/>\n", indent + 4, "",
			NCCL_NVSWITCH_TARGET, switch_links, NCCL_CLASS_NVSWITCH);
	} else {
		for (int j = 0; j < n; j++)
			if (j != i && dmaconn_result_get(r, i, j) > 0)
				fprintf(out, "%*s<nvlink target=\"%s\" count=\"%d\" tclass=\"%s\"/>\n", indent + 4, "",
					dc_format_device(r, j, DMACONN_PROP_PCI_BUS_ID), dmaconn_result_get(r, i, j),
					NCCL_CLASS_GPU);
	}
	if (has_c2c)
		fprintf(out, "%*s<c2c count=\"%lld\" bw=\"%lld\"/>\n", indent + 4, "", c2c_count, bw);
	fprintf(out, "%*s</gpu>\n%*s</pci>\n", indent + 2, "", indent, "");
}

static void xml_nic(FILE *out, const dmaconn_placement *p, int n, int indent)
{
	fprintf(out, "%*s<pci busid=\"%s\" class=\"%s\">\n", indent, "",
		dmaconn_placement_nic_get(p, n, DMACONN_PROP_PCI_BUS_ID), NCCL_CLASS_NIC);
	fprintf(out, "%*s<nic>\n%*s<net name=\"%s\" dev=\"%d\"/>\n%*s</nic>\n", indent + 2, "", indent + 4, "",
		dmaconn_placement_nic_get(p, n, DMACONN_PROP_NAME), n, indent + 2, "");
	fprintf(out, "%*s</pci>\n", indent, "");
}

/* Whether NIC n's name and bus id can stand in the file as NCCL reads them. */
static int xml_nic_ok(const dmaconn_placement *p, int n)
{
	const char *name = dmaconn_placement_nic_get(p, n, DMACONN_PROP_NAME);
	const char *bus = dmaconn_placement_nic_get(p, n, DMACONN_PROP_PCI_BUS_ID);
	if (!name || !*name || strlen(name) > 255 || !bus || !xml_bus_id(bus))
		return 0;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_-.:", *c))
			return 0;
	return 1;
}

/* The devices of the file into d: the GPUs, and, where every GPU's PCIe
 * path is known, each NIC whose bus id and PCIe path are (one without, as
 * a verbs device over Ethernet, NCCL places itself); how many. */
static int xml_devices(const dmaconn_result *r, const dmaconn_placement *p, const int *numa, const int *pi,
		       struct xml_dev *d)
{
	int n = dmaconn_result_size(r), nics = p ? dmaconn_placement_nic_count(p) : 0, nested = p != NULL, count = n;
	for (int i = 0; i < n; i++) {
		d[i] = (struct xml_dev){ .gpu = i, .nic = -1, .numa = numa[i] };
		const char *path = pi[i] >= 0 ? dmaconn_placement_device_get(p, pi[i], DMACONN_PLACE_PCI_PATH) : NULL;
		nested &= xml_chain(&d[i], path) == 0;
	}
	if (!nested) {
		for (int i = 0; i < n; i++)
			d[i].depth = 0; /* flat: NCCL then reads no switch it could not */
		return n;
	}
	for (int k = 0; k < nics; k++) {
		struct xml_dev *e = &d[count];
		*e = (struct xml_dev){ .gpu = -1, .nic = k, .numa = -1 };
		if (!xml_nic_ok(p, k) || xml_chain(e, dmaconn_placement_nic_get(p, k, DMACONN_PLACE_PCI_PATH)) != 0)
			continue;
		/* Its NUMA node, else that of a GPU below the same root complex. */
		const char *node = dmaconn_placement_nic_get(p, k, DMACONN_PROP_NUMA_NODE);
		const char *root = dmaconn_placement_nic_get(p, k, DMACONN_PLACE_PCIE_ROOT);
		long long nic_node = dc_format_place_int(DMACONN_PROP_NUMA_NODE, node, -1);
		e->numa = nic_node >= 0 && nic_node <= INT_MAX ? (int)nic_node : -1;
		for (int i = 0; i < n && e->numa < 0 && root; i++) {
			const char *g = pi[i] >= 0 ? dmaconn_placement_device_get(p, pi[i], DMACONN_PLACE_PCIE_ROOT) : NULL;
			if (g && !strcmp(g, root))
				e->numa = numa[i];
		}
		count++;
	}
	return count;
}

/* One <cpu>: the devices of d (count) on NUMA node numa, each below its
 * switches, a switch opened once for all the devices below it. */
static void xml_cpu(FILE *out, const dmaconn_result *r, const dmaconn_placement *p, const int *pi,
		    struct xml_dev *d, int count, int numa)
{
	const struct xml_dev *open[8];
	int depth = 0;
	fprintf(out, "  <cpu numaid=\"%d\"", numa);
	/* NCCL needs arch (and on x86 vendor, and on Intel familyid and
	 * modelid) on every <cpu> it keeps, and fills them only for those it
	 * reaches through a device it finds itself: a socket whose GPUs the
	 * process does not see, or the first <cpu>, where NCCL puts a NIC
	 * without a PCI function, would otherwise stop it. */
	static const char *const cpu_attrs[][2] = { { "arch", DMACONN_PLACE_CPU_ARCH },
						    { "vendor", DMACONN_PLACE_CPU_VENDOR },
						    { "familyid", DMACONN_PLACE_CPU_FAMILY },
						    { "modelid", DMACONN_PLACE_CPU_MODEL } };
	for (size_t k = 0; p && k < sizeof(cpu_attrs) / sizeof(cpu_attrs[0]); k++) {
		const char *v = dmaconn_placement_get(p, cpu_attrs[k][1]);
		if (v)
			fprintf(out, " %s=\"%s\"", cpu_attrs[k][0], v);
	}
	fputs(">\n", out);
	for (;;) {
		/* The next device of this node, in xml_before order. */
		struct xml_dev *next = NULL;
		for (int k = 0; k < count; k++)
			if (d[k].numa == numa && d[k].gpu != -2 && (!next || xml_before(&d[k], next)))
				next = &d[k];
		if (!next)
			break;
		int same = 0;
		while (same < depth && same < next->depth && !strcmp(open[same]->chain[same], next->chain[same]))
			same++;
		for (; depth > same; depth--)
			fprintf(out, "%*s</pci>\n", 2 + 2 * depth, "");
		for (; depth < next->depth; depth++) {
			open[depth] = next;
			fprintf(out, "%*s<pci busid=\"%s\" class=\"%s\">\n", 4 + 2 * depth, "", next->chain[depth],
				NCCL_CLASS_BRIDGE);
		}
		for (int k = 0; k < depth; k++)
			open[k] = next;
		if (next->gpu >= 0)
			xml_gpu(out, r, next->gpu, p, pi[next->gpu], 4 + 2 * depth);
		else
			xml_nic(out, p, next->nic, 4 + 2 * depth);
		next->gpu = -2; /* written */
		next->nic = -2;
	}
	for (; depth > 0; depth--)
		fprintf(out, "%*s</pci>\n", 2 + 2 * depth, "");
	fputs("  </cpu>\n", out);
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
	/* The NICs and NVLink-C2C, where the placement can be had (the file is
	 * right without them: NCCL then finds them itself). */
	dmaconn_placement *p = dc_format_placement(in);
	int nics = p ? dmaconn_placement_nic_count(p) : 0;
	int *numa = calloc((size_t)n + 1, sizeof(int)), *pi = calloc((size_t)n + 1, sizeof(int));
	struct xml_dev *d = calloc((size_t)(n + nics) + 1, sizeof(*d));
	if (!numa || !pi || !d) {
		free(numa);
		free(pi);
		free(d);
		dmaconn_placement_free(p);
		fputs("dmaconn: out of memory\n", err);
		return 1;
	}
	xml_numa(in, r, numa);
	for (int i = 0; i < n; i++)
		pi[i] = dc_format_place_index(p, r, i);
	int count = xml_devices(r, p, numa, pi, d);
	fputs("<system version=\"1\" name=\"dmaconn\">\n", out);
	/* One <cpu> per NUMA node, in the order the devices name them. */
	for (int k = 0; k < count; k++) {
		int seen = 0;
		for (int m = 0; m < k && !seen; m++)
			seen = d[m].numa == d[k].numa;
		if (!seen)
			xml_cpu(out, r, p, pi, d, count, d[k].numa);
	}
	fputs("</system>\n", out);
	free(numa);
	free(pi);
	free(d);
	dmaconn_placement_free(p);
	return 0;
}
