/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn --topo: one printer, the vendors differing only in their legend
 * (the connection type's, dmaconn_connection_text) and in which pair
 * properties make up a pair's line (struct topo_legend).
 */
#include "topo.h"

#include <stdio.h>
#include <string.h>

/*
 * A piece of a pair's line: fmt with each "%s" replaced by the next value,
 * the values of keys (up to four) and, with `plural`, "s" unless the first
 * is "1".  The first `need` keys must be present, or the piece is left out
 * (as it is when `unless` is); a missing other one reads as `dflt`.
 */
struct piece {
	const char *fmt;
	const char *keys[4];
	int need;
	const char *dflt;
	int plural;
	const char *unless;
};

struct topo_legend {
	dmaconn_device_type type;
	const struct piece *pieces;
};

static const struct piece cuda_pieces[] = {
	{ "; read %s, write %s, atomics %s, nvlink %s",
	  { DMACONN_PROP_READ, DMACONN_PROP_WRITE, DMACONN_PROP_ATOMICS, DMACONN_PROP_NVLINK }, 0, "-", 0, NULL },
	{ "; %s GB/s per direction (%s)", { DMACONN_PROP_NVLINK_GBPS, DMACONN_PROP_NVLINK_RATE_SOURCE }, 1, "unknown", 0,
	  NULL },
	{ "; reason %s: %s", { DMACONN_PROP_REASON, DMACONN_PROP_REASON_TEXT }, 1, "", 0, NULL },
	{ NULL, { NULL }, 0, NULL, 0, NULL },
};

static const struct piece rocm_pieces[] = {
	{ "; %s", { DMACONN_PROP_LINK_TYPE }, 0, "-", 0, NULL },
	{ ", %s link%s", { DMACONN_PROP_XGMI_LINKS }, 1, NULL, 1, NULL },
	{ ", %s hop%s", { DMACONN_PROP_HOPS }, 1, NULL, 1, NULL },
	{ ", weight %s", { DMACONN_PROP_WEIGHT }, 1, NULL, 0, NULL },
	{ ", %s-%s MB/s", { DMACONN_PROP_MIN_BANDWIDTH_MBS, DMACONN_PROP_MAX_BANDWIDTH_MBS }, 2, NULL, 0, NULL },
	{ "; atomics 32-bit %s, 64-bit %s; coherent %s",
	  { DMACONN_PROP_ATOMICS_32, DMACONN_PROP_ATOMICS_64, DMACONN_PROP_COHERENT }, 3, NULL, 0, NULL },
	{ "; reason %s: %s", { DMACONN_PROP_REASON, DMACONN_PROP_REASON_TEXT }, 1, "", 0, NULL },
	{ NULL, { NULL }, 0, NULL, 0, NULL },
};

static const struct piece xpu_pieces[] = {
	{ "; p2p %s; %s", { DMACONN_PROP_P2P_FLAGS, DMACONN_PROP_PATH }, 0, "-", 0, NULL },
	{ ", %s GB/s", { DMACONN_PROP_XELINK_GBPS }, 1, NULL, 0, NULL },
	{ ", %s", { DMACONN_PROP_XELINK_BANDWIDTH }, 1, NULL, 0, DMACONN_PROP_XELINK_GBPS },
	{ ", latency %s", { DMACONN_PROP_XELINK_LATENCY }, 1, NULL, 0, NULL },
	{ ", %s duplex", { DMACONN_PROP_XELINK_DUPLEXITY }, 1, NULL, 0, NULL },
	{ "; reason %s: %s", { DMACONN_PROP_REASON, DMACONN_PROP_REASON_TEXT }, 1, "", 0, NULL },
	{ NULL, { NULL }, 0, NULL, 0, NULL },
};

static const struct topo_legend legends[] = {
	{ DMACONN_DEVICE_CUDA, cuda_pieces },
	{ DMACONN_DEVICE_ROCM, rocm_pieces },
	{ DMACONN_DEVICE_XPU, xpu_pieces },
};

/* fmt with each "%s" replaced by the next of v, onto line (of size len). */
static void put(char *line, size_t len, const char *fmt, const char *const *v)
{
	size_t at = strlen(line);
	for (const char *f = fmt; *f && at + 1 < len; f++) {
		if (f[0] == '%' && f[1] == 's') {
			at += (size_t)snprintf(line + at, len - at, "%s", *v++);
			at = at < len ? at : len - 1;
			f++;
		} else {
			line[at++] = *f;
			line[at] = '\0';
		}
	}
}

/* One pair's line, "GPUi -> GPUj: DMA yes; ...", into line. */
static void pair_line(const dmaconn_result *r, int i, int j, const struct topo_legend *lg, char *line, size_t len)
{
	snprintf(line, len, "  GPU%d -> GPU%d: DMA %s", i, j, dmaconn_result_get(r, i, j) ? "yes" : "no");
	for (const struct piece *p = lg->pieces; p->fmt; p++) {
		const char *v[5] = { NULL };
		int k = 0, ok = !p->unless || !dmaconn_result_pair_get(r, i, j, p->unless);
		for (; k < 4 && p->keys[k] && ok; k++) {
			v[k] = dmaconn_result_pair_get(r, i, j, p->keys[k]);
			ok = v[k] || k >= p->need;
			v[k] = v[k] ? v[k] : p->dflt;
		}
		if (ok && p->plural)
			v[k] = strcmp(v[0], "1") ? "s" : "";
		if (ok)
			put(line, len, p->fmt, v);
	}
}

/* A --topo cell: the path of device i to device j (j >= n: NIC j - n), or
 * of NIC i - n to j (a device, or NIC j - n); "X" on the diagonal, "-" where
 * nothing is known. */
static const char *topo_cell(const dmaconn_result *r, const dmaconn_placement *p, int n, int i, int j)
{
	const char *path = NULL;
	if (i == j)
		return "X";
	if (i < n && j < n)
		path = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_PATH);
	else if (i < n)
		path = dmaconn_placement_link_get(p, i, j - n, DMACONN_PROP_PATH);
	else if (j < n)
		path = dmaconn_placement_link_get(p, j, i - n, DMACONN_PROP_PATH);
	else
		path = dmaconn_placement_nic_path(p, i - n, j - n);
	return path ? path : "-";
}

/* The affinity columns of device i (CPU Affinity, NUMA Affinity, GPU NUMA
 * ID), as `nvidia-smi topo -m` fills them: N/A where there is none. */
static void topo_affinity(const dmaconn_placement *p, int i, const char **v)
{
	const char *node = dmaconn_placement_device_get(p, i, DMACONN_PLACE_CPU_NUMA_NODE);
	const char *mode = dmaconn_placement_device_get(p, i, DMACONN_PLACE_MEMORY_MODE);
	const char *mem = dmaconn_placement_device_get(p, i, DMACONN_PLACE_MEMORY_NUMA_NODE);
	v[0] = dmaconn_placement_device_get(p, i, DMACONN_PLACE_CPUSET);
	v[0] = v[0] ? v[0] : "N/A";
	v[1] = node && strcmp(node, "-1") ? node : "N/A";
	v[2] = mode && mem && !strcmp(mode, DMACONN_MEMORY_ONLY) ? mem : "N/A";
}

static const char topo_nic_legend[] =
	"NICs: C2C = the NIC hangs off the CPU the GPU reaches over NVLink-C2C (NCCL's\n"
	"NCCL_NET_GDR_C2C), else the PCIe path class; --nics says how each can DMA.\n";

/* The vendor library asked where sysfs does not say is the one the cuda
 * views read (their p2p row's source). */
#define TOPO_PLACE_LEGEND                                                             \
	"CPU Affinity = the CPUs local to the GPU (sysfs local_cpulist, else %s's\n"  \
	"affinity); NUMA Affinity = their NUMA node; GPU NUMA ID = the node of the\n" \
	"GPU's own memory (NUMA mode); N/A = none known.\n"

static const char *const topo_affinity_heads[3] = { "CPU Affinity", "NUMA Affinity", "GPU NUMA ID" };

/* The path table: devices, then p's NICs, as rows and columns; with p, the
 * affinity columns of each device. */
static void topo_table(const dmaconn_result *r, const dmaconn_placement *p)
{
	int n = dmaconn_result_size(r), nics = p ? dmaconn_placement_nic_count(p) : 0;
	int width[3] = { 0, 0, 0 };
	p = p && dmaconn_placement_size(p) == n ? p : NULL;
	nics = p ? nics : 0;
	for (int c = 0; c < 3 && p; c++) {
		width[c] = (int)strlen(topo_affinity_heads[c]);
		for (int i = 0; i < n; i++) {
			const char *v[3];
			topo_affinity(p, i, v);
			width[c] = (int)strlen(v[c]) > width[c] ? (int)strlen(v[c]) : width[c];
		}
	}
	printf("      ");
	for (int j = 0; j < n + nics; j++)
		printf("  %s%-4d", j < n ? "GPU" : "NIC", j < n ? j : j - n);
	for (int c = 0; c < 3 && p; c++)
		printf("  %-*s", width[c], topo_affinity_heads[c]);
	putchar('\n');
	for (int i = 0; i < n + nics; i++) {
		printf("%s%-3d", i < n ? "GPU" : "NIC", i < n ? i : i - n);
		for (int j = 0; j < n + nics; j++)
			printf("  %-7s", topo_cell(r, p, n, i, j));
		const char *v[3];
		if (p && i < n)
			topo_affinity(p, i, v);
		for (int c = 0; c < 3 && p && i < n; c++)
			printf("  %-*s", width[c], v[c]);
		putchar('\n');
	}
	if (!nics)
		return;
	puts("\nNIC Legend:\n");
	for (int k = 0; k < nics; k++) {
		const char *name = dmaconn_placement_nic_get(p, k, DMACONN_PROP_NAME);
		printf("  NIC%d: %s\n", k, name ? name : "?");
	}
}

void cli_text_topo(const dmaconn_result *r, const dmaconn_placement *p, const char *replay)
{
	int n = dmaconn_result_size(r);
	dmaconn_device_type type = dmaconn_result_device_type(r);
	printf("%s topology%s%s%s: %d device%s\n", dmaconn_device_type_name(type), replay ? " (replay of " : "",
	       replay ? replay : "", replay ? ")" : "", n, n == 1 ? "" : "s");
	if (n == 0)
		return;
	topo_table(r, p);
	const struct topo_legend *lg = &legends[0];
	for (size_t k = 0; k < sizeof(legends) / sizeof(legends[0]); k++)
		if (legends[k].type == type)
			lg = &legends[k];
	const char *conn = dmaconn_result_connection_type(r);
	const char *paths = dmaconn_connection_text(type, conn, DMACONN_CONNECTION_PATHS);
	const char *caps = dmaconn_connection_text(type, conn, DMACONN_CONNECTION_CAPS);
	const char *status = dmaconn_connection_text(type, conn, DMACONN_CONNECTION_STATUS);
	printf("\n%s", paths ? paths : "");
	if (p && dmaconn_placement_size(p) == n && dmaconn_placement_nic_count(p))
		fputs(topo_nic_legend, stdout);
	if (p && dmaconn_placement_size(p) == n)
		printf(TOPO_PLACE_LEGEND,
		       dmaconn_connection_text(DMACONN_DEVICE_CUDA, "p2p", DMACONN_CONNECTION_SOURCE));
	putchar('\n');
	if (caps)
		puts(caps);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			char line[1024];
			if (i == j)
				continue;
			pair_line(r, i, j, lg, line, sizeof(line));
			puts(line);
		}
	if (status)
		puts(status);
}

void cli_text_topo_multicast(const dmaconn_result *mc)
{
	int n = dmaconn_result_size(mc);
	if (n == 0)
		return;
	const char *title = dmaconn_connection_text(dmaconn_result_device_type(mc), dmaconn_result_connection_type(mc),
						    DMACONN_CONNECTION_TITLE);
	printf("\n%s\n", title ? title : dmaconn_result_connection_type(mc));
	/* Its warning is the table's (NVML unusable, a query failed): said once, there. */
	if (dmaconn_result_warning_count(mc) > 0) {
		puts("  not determined (see the warning above)");
		return;
	}
	for (int d = 0; d < n; d++) {
		const char *ok = dmaconn_result_device_get(mc, d, DMACONN_PROP_MULTICAST_SUPPORTED);
		const char *why = dmaconn_result_device_get(mc, d, DMACONN_PROP_MULTICAST_REASON);
		/* A GPU's own cause is the reason of each of its pairs. */
		const char *text = n > 1 ? dmaconn_result_pair_get(mc, d, (d + 1) % n, DMACONN_PROP_REASON_TEXT) : NULL;
		const char *cluster = dmaconn_result_device_get(mc, d, DMACONN_PROP_CLUSTER_UUID);
		const char *clique = dmaconn_result_device_get(mc, d, DMACONN_PROP_MULTICAST_CLIQUE_ID);
		if (ok && !strcmp(ok, "1"))
			printf("  GPU%d: yes (cluster %s, clique %s)\n", d, cluster ? cluster : "?", clique ? clique : "?");
		else
			printf("  GPU%d: no%s%s%s%s\n", d, why ? ", " : "", why ? why : "", text && why ? ": " : "",
			       text && why ? text : "");
	}
	/* The groups of GPUs one object can join: 1 is an equivalence there. */
	for (int d = 0; d < n; d++) {
		int lowest = 1, size = 0;
		for (int j = 0; j < d && lowest; j++)
			lowest = !dmaconn_result_get(mc, d, j);
		for (int j = d + 1; j < n && lowest; j++)
			size += dmaconn_result_get(mc, d, j) != 0;
		if (!lowest || !size)
			continue;
		printf("  one object can join GPUs %d", d);
		for (int j = d + 1; j < n; j++)
			if (dmaconn_result_get(mc, d, j))
				printf(",%d", j);
		putchar('\n');
	}
}
