/* SPDX-License-Identifier: BSD-3-Clause */
/* dmaconn --nics and --bind, and the placement object of --json: the
 * library's dmaconn_placement read through its accessors only. */
#include "place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli_json.h"

static const char *place_dev(const dmaconn_placement *p, int i, const char *key)
{
	return dmaconn_placement_device_get(p, i, key);
}

/* The node's GPUDirect RDMA mechanisms, one line. */
static void place_mechanisms(const dmaconn_placement *p)
{
	const char *dmabuf = dmaconn_placement_get(p, DMACONN_PLACE_DMABUF);
	const char *why = dmaconn_placement_get(p, DMACONN_PLACE_DMABUF_REASON);
	const char *module = dmaconn_placement_get(p, DMACONN_PLACE_PEERMEM_MODULE);
	const char *level = dmaconn_placement_get(p, DMACONN_PLACE_GDR_LEVEL);
	printf("GPUDirect RDMA: dma-buf %s%s%s%s; peer-memory module %s; paths up to %s (NCCL's default)\n", dmabuf ? dmabuf : "unknown",
	       why ? " (" : "", why ? why : "", why ? ")" : "", module ? module : "none", level ? level : "?");
}

/* Device i's line: bus id, PCIe root, CPUs, NUMA nodes, NVLink-C2C. */
static void place_device_line(const dmaconn_placement *p, int i)
{
	const char *bus = place_dev(p, i, DMACONN_PROP_PCI_BUS_ID);
	const char *root = place_dev(p, i, DMACONN_PLACE_PCIE_ROOT);
	const char *cpus = place_dev(p, i, DMACONN_PLACE_CPUSET);
	const char *source = place_dev(p, i, DMACONN_PLACE_CPU_SOURCE);
	const char *node = place_dev(p, i, DMACONN_PLACE_CPU_NUMA_NODE);
	const char *mem = place_dev(p, i, DMACONN_PLACE_MEMORY_NUMA_NODE);
	const char *mode = place_dev(p, i, DMACONN_PLACE_MEMORY_MODE);
	const char *c2c = place_dev(p, i, DMACONN_PLACE_C2C_LINKS);
	printf("GPU%d %s: PCIe root %s; CPUs %s", i, bus ? bus : "?", root ? root : "unknown",
	       cpus ? cpus : "unknown");
	if (cpus && source)
		printf(" (%s)", source);
	printf(", NUMA node %s", node && strcmp(node, "-1") ? node : "unknown");
	if (mode && !strcmp(mode, DMACONN_MEMORY_ONLY))
		printf("; memory NUMA node %s (memory only)", mem ? mem : "?");
	else if (mode && !strcmp(mode, DMACONN_MEMORY_CDMM))
		printf("; memory driver-managed (CDMM, no NUMA node)");
	if (c2c && strcmp(c2c, "0")) {
		const char *status = place_dev(p, i, DMACONN_PLACE_C2C_STATUS);
		const char *bw = place_dev(p, i, DMACONN_PLACE_C2C_MAX_BW_MBS);
		printf("; NVLink-C2C %s link%s %s", c2c, strcmp(c2c, "1") ? "s" : "", status ? status : "unknown");
		if (bw)
			printf(", %s MB/s each", bw);
	}
	putchar('\n');
}

/* The widest NIC name, for the columns of --nics. */
static int place_name_width(const dmaconn_placement *p)
{
	int w = 4;
	for (int n = 0; n < dmaconn_placement_nic_count(p); n++) {
		const char *name = dmaconn_placement_nic_get(p, n, DMACONN_PROP_NAME);
		int len = name ? (int)strlen(name) : 1;
		w = len > w ? len : w;
	}
	return w < 32 ? w : 32;
}

/* The (device i, NIC n) line of --nics: the reason by its code, its text
 * said once under the table (place_reasons). */
static void place_link_line(const dmaconn_placement *p, int i, int n, int width)
{
	const char *name = dmaconn_placement_nic_get(p, n, DMACONN_PROP_NAME);
	const char *path = dmaconn_placement_link_get(p, i, n, DMACONN_PROP_PATH);
	const char *pcie = dmaconn_placement_link_get(p, i, n, DMACONN_PLACE_PCIE_PATH);
	const char *gdr = dmaconn_placement_link_get(p, i, n, DMACONN_PLACE_GDR);
	const char *module = dmaconn_placement_link_get(p, i, n, DMACONN_PLACE_GDR_MODULE);
	const char *code = dmaconn_placement_link_get(p, i, n, DMACONN_PROP_REASON);
	char tag[16];
	snprintf(tag, sizeof(tag), "NIC%d", n);
	printf("  %-6s %-*s %-4s gdr %s", tag, width, name ? name : "?", path ? path : "-", gdr ? gdr : "unknown");
	if (module)
		printf(" (%s)", module);
	if (path && pcie && strcmp(path, pcie))
		printf("; PCIe path %s", pcie);
	if (code)
		printf("; reason %s", code);
	putchar('\n');
}

/* Each reason of a (device, NIC) pair once: "code: text", in the order
 * they first appear. */
static void place_reasons(const dmaconn_placement *p)
{
	int n = dmaconn_placement_size(p), nics = dmaconn_placement_nic_count(p), said = 0;
	for (int k = 0; k < n * nics; k++) {
		const char *code = dmaconn_placement_link_get(p, k / nics, k % nics, DMACONN_PROP_REASON);
		const char *text = dmaconn_placement_link_get(p, k / nics, k % nics, DMACONN_PROP_REASON_TEXT);
		int seen = !code;
		for (int m = 0; m < k && !seen; m++) {
			const char *c = dmaconn_placement_link_get(p, m / nics, m % nics, DMACONN_PROP_REASON);
			const char *t = dmaconn_placement_link_get(p, m / nics, m % nics, DMACONN_PROP_REASON_TEXT);
			seen = c && !strcmp(c, code) && (t ? text && !strcmp(t, text) : !text);
		}
		if (seen)
			continue;
		if (!said++)
			puts("\nReasons:");
		printf("  %s: %s\n", code, text ? text : "");
	}
}

/* NIC k's legend line: its name and bus id, then each fact known of it. */
static void place_nic_legend(const dmaconn_placement *p, int k)
{
	static const struct {
		const char *key, *before;
	} facts[] = {
		{ DMACONN_PLACE_PCIE_ROOT, "; PCIe root " }, { DMACONN_PROP_NUMA_NODE, "; NUMA node " },
		{ DMACONN_PLACE_LINK_LAYER, "; " },          { DMACONN_PLACE_PORT_STATE, ", port " },
		{ DMACONN_PLACE_PORT_RATE, ", " },           { DMACONN_PLACE_NETDEV, "; netdev " },
	};
	const char *name = dmaconn_placement_nic_get(p, k, DMACONN_PROP_NAME);
	const char *bus = dmaconn_placement_nic_get(p, k, DMACONN_PROP_PCI_BUS_ID);
	printf("  NIC%d: %s %s", k, name ? name : "?", bus ? bus : "?");
	for (size_t f = 0; f < sizeof(facts) / sizeof(facts[0]); f++) {
		const char *v = dmaconn_placement_nic_get(p, k, facts[f].key);
		if (v && strcmp(v, "-1"))
			printf("%s%s", facts[f].before, v);
	}
	putchar('\n');
}

void cli_text_nics(const dmaconn_placement *p, const char *replay)
{
	int n = dmaconn_placement_size(p), nics = dmaconn_placement_nic_count(p);
	printf("%s NICs%s%s%s: %d GPU%s, %d NIC%s\n", dmaconn_device_type_name(dmaconn_placement_device_type(p)),
	       replay ? " (replay of " : "", replay ? replay : "", replay ? ")" : "", n, n == 1 ? "" : "s", nics,
	       nics == 1 ? "" : "s");
	if (!nics) {
		const char *code = dmaconn_placement_get(p, DMACONN_PLACE_NICS_REASON);
		const char *text = dmaconn_placement_get(p, DMACONN_PLACE_NICS_REASON_TEXT);
		printf("No RDMA NIC: reason %s: %s\n", code ? code : DMACONN_REASON_UNKNOWN, text ? text : "");
	} else {
		place_mechanisms(p);
	}
	int width = place_name_width(p);
	for (int i = 0; i < n; i++) {
		putchar('\n');
		place_device_line(p, i);
		for (int rank = 0; rank < nics; rank++) {
			int nic = dmaconn_placement_device_nic(p, i, rank);
			if (nic >= 0)
				place_link_line(p, i, nic, width);
		}
	}
	if (!nics)
		return;
	place_reasons(p);
	puts("\nNIC Legend:");
	for (int k = 0; k < nics; k++)
		place_nic_legend(p, k);
}

/* ------------------------------------------------------------------ JSON */

static json_t *place_json_link(const dmaconn_placement *p, int i, int n)
{
	json_t *o = json_object();
	json_object_set_new(o, "nic", json_integer(n));
	for (int k = 0; k < dmaconn_placement_link_property_count(p, i, n); k++)
		cli_json_first(o, dmaconn_placement_link_property_key(p, i, n, k),
			       dmaconn_placement_link_property_value(p, i, n, k));
	return o;
}

json_t *cli_json_placement_device(const dmaconn_placement *p, int i, int nics)
{
	json_t *d = json_object();
	json_object_set_new(d, "index", json_integer(i));
	for (int k = 0; k < dmaconn_placement_device_property_count(p, i); k++)
		cli_json_first(d, dmaconn_placement_device_property_key(p, i, k),
			       dmaconn_placement_device_property_value(p, i, k));
	if (!nics)
		return d;
	json_t *list = json_array();
	for (int rank = 0; rank < dmaconn_placement_nic_count(p); rank++) {
		int n = dmaconn_placement_device_nic(p, i, rank);
		if (n >= 0)
			json_array_append_new(list, place_json_link(p, i, n));
	}
	json_object_set_new(d, "nics", list);
	return d;
}

json_t *cli_json_placement(const dmaconn_placement *p)
{
	json_t *o = json_object(), *devices = json_array(), *nics = json_array(), *warnings = json_array();
	json_object_set_new(o, "device_type",
			    cli_json_string(dmaconn_device_type_name(dmaconn_placement_device_type(p))));
	for (int k = 0; k < dmaconn_placement_property_count(p); k++)
		cli_json_first(o, dmaconn_placement_property_key(p, k), dmaconn_placement_property_value(p, k));
	for (int i = 0; i < dmaconn_placement_size(p); i++)
		json_array_append_new(devices, cli_json_placement_device(p, i, 1));
	for (int n = 0; n < dmaconn_placement_nic_count(p); n++) {
		json_t *nic = json_object();
		json_object_set_new(nic, "index", json_integer(n));
		for (int k = 0; k < dmaconn_placement_nic_property_count(p, n); k++)
			cli_json_first(nic, dmaconn_placement_nic_property_key(p, n, k),
				       dmaconn_placement_nic_property_value(p, n, k));
		json_array_append_new(nics, nic);
	}
	for (int k = 0; k < dmaconn_placement_warning_count(p); k++)
		json_array_append_new(warnings, cli_json_string(dmaconn_placement_warning(p, k)));
	json_object_set_new(o, "devices", devices);
	json_object_set_new(o, "nics", nics);
	json_object_set_new(o, "warnings", warnings);
	return o;
}

/* ------------------------------------------------------------------ --bind */

int cli_place_device(const dmaconn_placement *p, const char *arg)
{
	int n = dmaconn_placement_size(p);
	char *end;
	long v = strtol(arg, &end, 10);
	if (*arg && !*end && end != arg)
		return v >= 0 && v < n ? (int)v : -1;
	for (int i = 0; i < n; i++) {
		const char *uuid = place_dev(p, i, DMACONN_PROP_UUID);
		const char *bus = place_dev(p, i, DMACONN_PROP_PCI_BUS_ID);
		if ((uuid && !strcasecmp(uuid, arg)) || (bus && !strcasecmp(bus, arg)))
			return i;
	}
	return -1;
}

int cli_text_bind(const dmaconn_placement *p, int i)
{
	const char *numactl = place_dev(p, i, DMACONN_PLACE_NUMACTL);
	const char *slurm = place_dev(p, i, DMACONN_PLACE_SLURM_CPU_BIND);
	if (!numactl && !slurm)
		return -1;
	if (numactl)
		printf("numactl %s\n", numactl);
	if (slurm)
		printf("srun --cpu-bind=%s\n", slurm);
	return 0;
}
