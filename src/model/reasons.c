/*
 * Why a pair of a cuda view is 0, from the facts the view has already put in
 * the result (MIG mode, NVSwitch fabric registration, NVLink counts, the
 * driver's peer statuses and the PCIe path): every off-diagonal pair whose
 * value is 0 gets DMACONN_PROP_REASON and DMACONN_PROP_REASON_TEXT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model/host.h"
#include "model/reasons.h"
#include "sysfs.h"

#define DC_BAR1_SMALL_MIB 256 /* the legacy BAR1 window: no large-BAR mapping */

/* The kernel's facts about the node and the PCIe paths, read on the first
 * zero that the driver's peer status does not explain alone. */
struct dc_host_facts {
	int read;
	int vm;
	char vm_why[200];
	int n;
	struct dc_pci_chain *chains;
	char (*iommu)[24]; /* "" unknown */
	int nbridges;      /* the ACS of each bridge, read once */
	struct {
		char name[DC_HOST_NAME];
		int rc;
		unsigned int ctrl;
	} bridges[64];
};

static const struct dc_fs dc_host_fs = { dc_read_file, dc_list_dir };

static void dc_host_read(struct dc_host_facts *h, const dmaconn_result *r)
{
	if (h->read)
		return;
	h->read = 1;
	h->n = dmaconn_result_size(r);
	h->vm = dc_host_vm(&dc_host_fs, h->vm_why, sizeof(h->vm_why));
	const char **ids = calloc((size_t)h->n + 1, sizeof(*ids));
	h->chains = calloc((size_t)h->n + 1, sizeof(*h->chains));
	h->iommu = calloc((size_t)h->n + 1, sizeof(*h->iommu));
	if (!ids || !h->chains || !h->iommu) {
		free(ids);
		free(h->chains);
		free(h->iommu);
		h->chains = NULL;
		h->iommu = NULL;
		h->n = 0;
		return;
	}
	for (int i = 0; i < h->n; i++) {
		const char *bus = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID);
		ids[i] = bus ? bus : "";
		if (bus && dc_host_iommu(&dc_host_fs, bus, h->iommu[i], sizeof(h->iommu[i])) != 0)
			h->iommu[i][0] = '\0';
	}
	dc_host_chains(&dc_host_fs, ids, h->n, h->chains);
	free(ids);
}

static void dc_host_free(struct dc_host_facts *h)
{
	free(h->chains);
	free(h->iommu);
}

/* The ACS of the bridge named k-th in i's chain, read once. */
static int dc_host_bridge_acs(struct dc_host_facts *h, const struct dc_pci_chain *c, int k, unsigned int *ctrl)
{
	for (int b = 0; b < h->nbridges; b++)
		if (!strcmp(h->bridges[b].name, c->name[k])) {
			*ctrl = h->bridges[b].ctrl;
			return h->bridges[b].rc;
		}
	char dir[1024];
	dc_host_dir(c, k, dir, sizeof(dir));
	*ctrl = 0;
	int rc = dc_host_acs(&dc_host_fs, dir, ctrl);
	if (h->nbridges < (int)(sizeof(h->bridges) / sizeof(h->bridges[0]))) {
		snprintf(h->bridges[h->nbridges].name, DC_HOST_NAME, "%s", c->name[k]);
		h->bridges[h->nbridges].rc = rc;
		h->bridges[h->nbridges++].ctrl = *ctrl;
	}
	return rc;
}

/* The index in the chain holding bridge name, or -1. */
static int dc_chain_find(const struct dc_pci_chain *c, const char *name)
{
	for (int k = 0; k < c->depth; k++)
		if (!strcmp(c->name[k], name))
			return k;
	return -1;
}

/*
 * What the kernel shows against peer access between i and j: a virtual
 * machine, PCIe ACS redirection on a bridge of the path, an IOMMU that
 * translates DMA, or BAR1 too small; the code (NULL: none) and text.  Sets
 * the pair's pcie_bridges and acs_redirect properties on the way.
 */
static const char *dc_host_cause(dmaconn_builder *b, struct dc_host_facts *h, int i, int j, char *text,
				 size_t len, const char **bridges)
{
	const dmaconn_result *r = b->r;
	dc_host_read(h, r);
	*bridges = NULL;
	if (h->vm) {
		snprintf(text, len,
			 "the node is a virtual machine (%s): its emulated root complex hides the PCIe path "
			 "between the GPUs",
			 h->vm_why);
		return DMACONN_REASON_VIRTUAL_MACHINE;
	}
	for (int k = 0; k < 2; k++) {
		int d = k ? j : i;
		const char *mode = dmaconn_result_device_get(r, d, DMACONN_PROP_VIRTUALIZATION_MODE);
		if (mode && (!strcmp(mode, "passthrough") || !strcmp(mode, "vgpu"))) {
			snprintf(text, len,
				 "GPU %d is in a virtual machine (NVML virtualization mode %s): its emulated "
				 "root complex hides the PCIe path between the GPUs",
				 d, mode);
			return DMACONN_REASON_VIRTUAL_MACHINE;
		}
	}
	const char *code = NULL;
	if (h->chains && i < h->n && j < h->n) {
		const char *path[2 * DC_HOST_DEPTH];
		const struct dc_pci_chain *ci = &h->chains[i], *cj = &h->chains[j];
		int np = dc_host_path(ci, cj, path, 2 * DC_HOST_DEPTH);
		char list[400] = "", acs[400] = "";
		size_t lo = 0, ao = 0;
		for (int k = 0; k < np; k++) {
			lo += (size_t)snprintf(list + lo, lo < sizeof(list) ? sizeof(list) - lo : 0, "%s%s",
					       k ? " " : "", path[k]);
			const struct dc_pci_chain *c = dc_chain_find(ci, path[k]) >= 0 ? ci : cj;
			unsigned int ctrl = 0;
			if (dc_host_bridge_acs(h, c, dc_chain_find(c, path[k]), &ctrl) == 1 && ao < sizeof(acs))
				ao += (size_t)snprintf(acs + ao, sizeof(acs) - ao, "%s%s (%s%s%s)", ao ? ", " : "",
						       path[k], ctrl & 0x4 ? "request" : "",
						       (ctrl & 0xc) == 0xc ? " and " : "",
						       ctrl & 0x8 ? "completion" : "");
		}
		if (np > 0) {
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PCIE_BRIDGES, list);
			*bridges = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_PCIE_BRIDGES);
		}
		if (acs[0]) {
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ACS_REDIRECT, acs);
			snprintf(text, len, "PCIe ACS redirects peer requests to the root complex at %s on the "
				 "path between the GPUs", acs);
			return DMACONN_REASON_ACS_REDIRECT;
		}
	}
	for (int k = 0; k < 2 && h->iommu; k++) {
		int d = k ? j : i;
		if (d < h->n && h->iommu[d][0])
			dmaconn_builder_set_device_property(b, d, DMACONN_PROP_IOMMU_GROUP_TYPE, h->iommu[d]);
		if (!code && d < h->n && dc_host_iommu_translates(h->iommu[d])) {
			snprintf(text, len, "the IOMMU translates DMA of GPU %d (IOMMU group type %s)", d, h->iommu[d]);
			code = DMACONN_REASON_IOMMU_TRANSLATING;
		}
	}
	if (code)
		return code;
	for (int k = 0; k < 2; k++) {
		int d = k ? j : i;
		const char *bar1 = dmaconn_result_device_get(r, d, DMACONN_PROP_BAR1_MIB);
		if (bar1 && atoll(bar1) <= DC_BAR1_SMALL_MIB) {
			snprintf(text, len,
				 "GPU %d's BAR1 is %s MiB, too small to map peer memory over PCIe (at most the "
				 "legacy %d MiB window)",
				 d, bar1, DC_BAR1_SMALL_MIB);
			return DMACONN_REASON_BAR1_TOO_SMALL;
		}
	}
	return NULL;
}

/* The NVSwitch fabric's health mask fields that stop traffic, named. */
static int dc_fabric_unhealthy(unsigned int mask, const char *summary, char *out, size_t len)
{
	size_t o = 0;
	out[0] = '\0';
	if (((mask >> 4) & 3) == 1)
		o += (size_t)snprintf(out + o, len - o, "%sroute unhealthy", o ? ", " : "");
	if (((mask >> 2) & 3) == 1 && o < len)
		o += (size_t)snprintf(out + o, len - o, "%sroute recovery in progress", o ? ", " : "");
	if (((mask >> 6) & 3) == 1 && o < len)
		o += (size_t)snprintf(out + o, len - o, "%saccess timeout recovery in progress", o ? ", " : "");
	unsigned int conf = (mask >> 8) & 0xf;
	static const char *const confs[] = { "", "", "incorrect system GUID", "incorrect chassis serial number",
					     "no partition", "insufficient NVLinks", "incompatible GPU firmware",
					     "invalid location" };
	if (conf >= 2 && o < len)
		o += (size_t)snprintf(out + o, len - o, "%sincorrect configuration: %s", o ? ", " : "",
				      conf < 8 ? confs[conf] : "unknown");
	if (summary && !strcmp(summary, "unhealthy") && o < len)
		o += (size_t)snprintf(out + o, len - o, "%ssummary unhealthy", o ? ", " : "");
	return o > 0;
}

static const char *dc_reason_dev(const dmaconn_result *r, int i, const char *key)
{
	return dmaconn_result_device_get(r, i, key);
}

/* The first status among read, write and atomics that is not OK. */
static const char *dc_reason_status(const dmaconn_result *r, int i, int j)
{
	const char *keys[] = { DMACONN_PROP_READ, DMACONN_PROP_WRITE, DMACONN_PROP_ATOMICS };
	for (int k = 0; k < 3; k++) {
		const char *v = dmaconn_result_pair_get(r, i, j, keys[k]);
		if (v && strcmp(v, "OK") != 0)
			return v;
	}
	return NULL;
}

/* Sets code and text for i -> j from what the result says. */
static void dc_reason_pair(dmaconn_builder *b, struct dc_host_facts *h, int i, int j)
{
	const dmaconn_result *r = b->r;
	char text[400];
	const char *code = DMACONN_REASON_UNKNOWN;
	snprintf(text, sizeof(text), "nothing known explains it");
	int ends[2] = { i, j };
	for (int k = 0; k < 2; k++) {
		int d = ends[k];
		const char *mig = dc_reason_dev(r, d, DMACONN_PROP_MIG);
		if (mig && strcmp(mig, "disabled") != 0) {
			code = DMACONN_REASON_MIG;
			snprintf(text, sizeof(text), "GPU %d is in MIG mode: no peer access", d);
			goto set;
		}
	}
	const char *cc = dc_reason_dev(r, i, DMACONN_PROP_CONFIDENTIAL_COMPUTING);
	if (cc && !strcmp(cc, "on")) {
		code = DMACONN_REASON_CONFIDENTIAL_COMPUTING;
		snprintf(text, sizeof(text), "confidential computing is on (NVML): the driver allows no peer "
			 "access between the GPUs");
		goto set;
	}
	for (int k = 0; k < 2; k++) {
		int d = ends[k];
		const char *sw = dc_reason_dev(r, d, DMACONN_PROP_NVLINK_SWITCH_LINKS);
		const char *state = dc_reason_dev(r, d, DMACONN_PROP_FABRIC_STATE);
		const char *status = dc_reason_dev(r, d, DMACONN_PROP_FABRIC_STATUS);
		if (!sw || atoi(sw) <= 0 || !state || !strcmp(state, "not_supported"))
			continue;
		if (!strcmp(state, "in_progress")) {
			code = DMACONN_REASON_FABRIC_IN_PROGRESS;
			snprintf(text, sizeof(text),
				 "GPU %d: NVSwitch fabric registration is still in progress", d);
			goto set;
		}
		if (strcmp(state, DMACONN_FABRIC_STATE_COMPLETED) != 0) {
			code = DMACONN_REASON_FABRIC_NOT_REGISTERED;
			snprintf(text, sizeof(text), "GPU %d is not registered with the NVSwitch fabric (%s)",
				 d, state);
			goto set;
		}
		if (status && strcmp(status, DMACONN_FABRIC_STATUS_SUCCESS) != 0) {
			code = DMACONN_REASON_FABRIC_FAILED;
			snprintf(text, sizeof(text), "GPU %d: NVSwitch fabric registration failed (%s)", d,
				 status);
			goto set;
		}
		const char *mask = dc_reason_dev(r, d, DMACONN_PROP_FABRIC_HEALTH_MASK);
		char bad[200];
		if (mask && dc_fabric_unhealthy((unsigned int)strtoul(mask, NULL, 16),
						dc_reason_dev(r, d, DMACONN_PROP_FABRIC_HEALTH_SUMMARY), bad,
						sizeof(bad))) {
			code = DMACONN_REASON_FABRIC_UNHEALTHY;
			snprintf(text, sizeof(text), "GPU %d: the NVSwitch fabric is unhealthy (health mask %s: %s)",
				 d, mask, bad);
			goto set;
		}
	}
	const char *st = dc_reason_status(r, i, j);
	const char *path = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_PATH);
	const char *h_code = NULL, *bridges = NULL;
	char host[300];
	if (st && !strcmp(st, "DR")) {
		code = DMACONN_REASON_DISABLED_BY_DRIVER;
		snprintf(text, sizeof(text), "peer access disabled by the driver (DR)");
	} else if (st && (h_code = dc_host_cause(b, h, i, j, host, sizeof(host), &bridges))) {
		code = h_code;
		snprintf(text, sizeof(text), "%.250s; the driver reports %s on the path %.20s", host, st, path ? path : "?");
	} else if (st && !strcmp(st, "CNS")) {
		code = DMACONN_REASON_CHIPSET_NOT_SUPPORTED;
		snprintf(text, sizeof(text), "chipset does not support peer access (CNS) on the path %s%s%.200s%s",
			 path ? path : "?", bridges ? " (bridges " : "", bridges ? bridges : "", bridges ? ")" : "");
	} else if (st && !strcmp(st, "TNS")) {
		code = DMACONN_REASON_TOPOLOGY_NOT_SUPPORTED;
		snprintf(text, sizeof(text), "topology does not support peer access (TNS) on the path %s%s%.200s%s",
			 path ? path : "?", bridges ? " (bridges " : "", bridges ? bridges : "", bridges ? ")" : "");
	} else if (st && !strcmp(st, "GNS")) {
		code = DMACONN_REASON_GPU_NOT_SUPPORTED;
		snprintf(text, sizeof(text), "a GPU of the pair does not support peer access (GNS)");
	} else if (st && !strcmp(st, "NS")) {
		code = DMACONN_REASON_NOT_SUPPORTED;
		snprintf(text, sizeof(text), "the driver reports peer access not supported (NS) on the path %s",
			 path ? path : "?");
	} else if (dmaconn_result_warning_count(r) > 0) {
		/* The detection was incomplete: the 0 may be an assumption. */
		snprintf(text, sizeof(text), "not determined: %.240s", dmaconn_result_warning(r, 0));
	} else if (!strcmp(dmaconn_result_connection_type(r), "nvlink")) {
		const char *li = dc_reason_dev(r, i, DMACONN_PROP_NVLINK_ACTIVE_LINKS);
		const char *lj = dc_reason_dev(r, j, DMACONN_PROP_NVLINK_ACTIVE_LINKS);
		const char *di = dc_reason_dev(r, i, DMACONN_PROP_NVLINK_INACTIVE_LINKS);
		const char *dj = dc_reason_dev(r, j, DMACONN_PROP_NVLINK_INACTIVE_LINKS);
		if (di || dj) {
			code = DMACONN_REASON_NVLINK_DOWN;
			char a[120] = "", c[120] = "";
			if (di)
				snprintf(a, sizeof(a), "GPU %d's NVLinks %s are down (%s active)", i, di, li ? li : "0");
			if (dj)
				snprintf(c, sizeof(c), "GPU %d's NVLinks %s are down (%s active)", j, dj, lj ? lj : "0");
			snprintf(text, sizeof(text), "no active NVLink joins them: %s%s%s", a, di && dj ? "; " : "", c);
		} else if (!li || !lj || atoi(li) <= 0 || atoi(lj) <= 0) {
			code = DMACONN_REASON_NO_NVLINK;
			snprintf(text, sizeof(text), "no NVLink between them: GPU %d has %s active, GPU %d %s",
				 i, li ? li : "none", j, lj ? lj : "none");
		} else {
			snprintf(text, sizeof(text), "both GPUs have active NVLinks, but none joins them");
		}
	}
set:
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON, code);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON_TEXT, text);
}

void dc_reasons_cuda(dmaconn_builder *b)
{
	struct dc_host_facts h;
	memset(&h, 0, sizeof(h));
	int n = b->r ? dmaconn_result_size(b->r) : 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && dmaconn_result_get(b->r, i, j) == 0)
				dc_reason_pair(b, &h, i, j);
	dc_host_free(&h);
}

void dc_reasons_suspects(dmaconn_builder *b)
{
	struct dc_host_facts h;
	memset(&h, 0, sizeof(h));
	int n = b->r ? dmaconn_result_size(b->r) : 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i == j || dmaconn_result_get(b->r, i, j) != 0)
				continue;
			const char *code = dmaconn_result_pair_get(b->r, i, j, DMACONN_PROP_REASON);
			if (!code || (strcmp(code, DMACONN_REASON_VERIFY_FAILED) && strcmp(code, DMACONN_REASON_VERIFY_HUNG)))
				continue;
			char host[300], text[1600];
			const char *bridges, *was = dmaconn_result_pair_get(b->r, i, j, DMACONN_PROP_REASON_TEXT);
			if (!was || strstr(was, "; suspected: ") || !dc_host_cause(b, &h, i, j, host, sizeof(host), &bridges))
				continue;
			snprintf(text, sizeof(text), "%.1200s; suspected: %s", was, host);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON_TEXT, text);
		}
	dc_host_free(&h);
}

/* Sets the pair's code and text. */
static void dc_reason_set(dmaconn_builder *b, int i, int j, const char *code, const char *text)
{
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON, code);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON_TEXT, text);
}

static int dc_reason_is(const dmaconn_result *r, int i, int j, const char *key, const char *value)
{
	const char *v = dmaconn_result_pair_get(r, i, j, key);
	return v && !strcmp(v, value);
}

/* rocm/infinity_fabric and rocm/p2p, from the KFD link the view chose. */
static void dc_reason_rocm_pair(dmaconn_builder *b, int i, int j, int p2p)
{
	const dmaconn_result *r = b->r;
	const char *type = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_LINK_TYPE);
	const char *flags = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_FLAGS);
	char text[300];
	if (!type || !strcmp(type, "NONE")) {
		dc_reason_set(b, i, j, DMACONN_REASON_NO_LINK, "the kernel's KFD topology lists no link between them");
	} else if (dc_reason_is(r, i, j, DMACONN_PROP_ENABLED, "no")) {
		snprintf(text, sizeof(text), "the kernel's %s link between them is disabled (flags %s)", type,
			 flags ? flags : "?");
		dc_reason_set(b, i, j, DMACONN_REASON_LINK_DISABLED, text);
	} else if (!p2p && strcmp(type, "XGMI") != 0) {
		snprintf(text, sizeof(text), "no XGMI link between them: the kernel lists a %s link", type);
		dc_reason_set(b, i, j, DMACONN_REASON_NO_XGMI, text);
	} else if (!p2p) {
		const char *hops = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_HOPS);
		snprintf(text, sizeof(text), "no direct XGMI link: reached through other GPUs (%s hops)", hops ? hops : "?");
		dc_reason_set(b, i, j, DMACONN_REASON_NO_XGMI, text);
	} else if (dc_reason_is(r, i, j, DMACONN_PROP_PEER_DMA, "no")) {
		snprintf(text, sizeof(text), "the kernel's %s link forbids peer DMA (flags %s)", type, flags ? flags : "?");
		dc_reason_set(b, i, j, DMACONN_REASON_NOT_SUPPORTED, text);
	} else if (dc_reason_is(r, i, j, DMACONN_PROP_ATOMICS_32, "no") ||
		   dc_reason_is(r, i, j, DMACONN_PROP_ATOMICS_64, "no")) {
		int no32 = dc_reason_is(r, i, j, DMACONN_PROP_ATOMICS_32, "no");
		int no64 = dc_reason_is(r, i, j, DMACONN_PROP_ATOMICS_64, "no");
		int pcie = !strcmp(type, "PCIE");
		snprintf(text, sizeof(text), "%s (the kernel's link flags %s: no %s%s%s atomics)",
			 pcie ? "PCIe atomics are not routed on the path between them" : "the link has no atomics",
			 flags ? flags : "?", no32 ? "32-bit" : "", no32 && no64 ? " or " : "", no64 ? "64-bit" : "");
		dc_reason_set(b, i, j, pcie ? DMACONN_REASON_PCIE_ATOMICS : DMACONN_REASON_UNKNOWN, text);
	} else {
		dc_reason_set(b, i, j, DMACONN_REASON_UNKNOWN, "nothing known explains it");
	}
}

/* xpu/xelink and xpu/p2p, from Level Zero's peer flags and fabric. */
static void dc_reason_xpu_pair(dmaconn_builder *b, int i, int j, int p2p)
{
	const dmaconn_result *r = b->r;
	const char *path = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_PATH);
	const char *flags = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_P2P_FLAGS);
	char text[300];
	if (!p2p) {
		if (path && !strcmp(path, "MDFI"))
			dc_reason_set(b, i, j, DMACONN_REASON_NO_XELINK,
				      "no Xe Link: the two tiles of one card are joined by MDFI");
		else
			dc_reason_set(b, i, j, DMACONN_REASON_NO_XELINK,
				      "no Xe Link edge joins them in Level Zero's fabric");
	} else if (!flags) {
		dc_reason_set(b, i, j, DMACONN_REASON_NOT_SUPPORTED,
			      "they belong to different Level Zero drivers: no peer access between them");
	} else if (dc_reason_is(r, i, j, DMACONN_PROP_READ, "NS")) {
		snprintf(text, sizeof(text), "Level Zero reports no peer access (P2P flags %s)", flags);
		dc_reason_set(b, i, j, DMACONN_REASON_NOT_SUPPORTED, text);
	} else {
		snprintf(text, sizeof(text), "Level Zero reports peer access without atomics (P2P flags %s)", flags);
		dc_reason_set(b, i, j, DMACONN_REASON_NOT_SUPPORTED, text);
	}
}

void dc_reasons_vendor(dmaconn_builder *b, int rocm, int p2p)
{
	int n = b->r ? dmaconn_result_size(b->r) : 0;
	char undetermined[300];
	/* An incomplete detection: each 0 may be an assumption. */
	if (n && dmaconn_result_warning_count(b->r) > 0)
		snprintf(undetermined, sizeof(undetermined), "not determined: %.240s", dmaconn_result_warning(b->r, 0));
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i == j || dmaconn_result_get(b->r, i, j) != 0)
				continue;
			if (dmaconn_result_warning_count(b->r) > 0)
				dc_reason_set(b, i, j, DMACONN_REASON_UNKNOWN, undetermined);
			else if (rocm)
				dc_reason_rocm_pair(b, i, j, p2p);
			else
				dc_reason_xpu_pair(b, i, j, p2p);
		}
}
