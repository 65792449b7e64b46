/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Why a pair of a cuda view is 0, from the facts the view has already put in
 * the result (MIG mode, confidential computing, NVSwitch fabric registration
 * and health, NVLink counts and states, the driver's peer statuses and the
 * PCIe path) and from what the kernel shows about the node and the path (a
 * virtual machine, ACS, the IOMMU, BAR1): every off-diagonal pair whose
 * value is 0 gets DMACONN_PROP_REASON and DMACONN_PROP_REASON_TEXT, and so
 * does a cuda/nvlink pair with links that lost some its peers have.
 *
 * A rack has n*n pairs and few causes: each cause's text names at most one
 * device, is made once per device (or once per result) and stored once
 * (dc_builder_intern); a pair only refers to it.  Only what is the pair's
 * own is made per pair: the bridges of its PCIe path, and NVLinks down at
 * both of its GPUs (of a zero, or of a pair that lost links).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model/host.h"
#include "model/reasons.h"
#include "sysfs.h"

#define DC_BAR1_SMALL_MIB 256 /* the legacy BAR1 window: no large-BAR mapping */

struct dc_reason {
	const char *code, *text; /* interned; code NULL: no reason from this fact */
};

static int dc_reason_intern(dmaconn_builder *b, struct dc_reason *out, const char *code, const char *text)
{
	out->code = dc_builder_intern(b, code);
	out->text = out->code ? dc_builder_intern(b, text) : NULL;
	return out->text ? 0 : -1;
}

/* The kernel's facts about the node and the PCIe paths, read on the first
 * zero that the driver's peer status does not explain alone, and the causes
 * they give (per device, or for the node). */
struct dc_host_facts {
	dmaconn_builder *b;
	int read, failed;
	int vm;
	char vm_why[200];
	int n;
	struct dc_pci_chain *chains; /* per device, as dc_host_chains() fills them */
	struct dc_host_gpu {
		char iommu[24];          /* "" unknown */
		unsigned char iommu_set; /* the device's IOMMU group type is in the result */
		struct dc_reason virt, iommu_reason, bar1;
	} *gpu; /* per device */
	struct dc_reason vm_reason, acs;
	int nbridges;      /* the ACS of each bridge, read once */
	struct {
		char name[DC_HOST_NAME];
		int rc;
		unsigned int ctrl;
	} bridges[64];
};

static const struct dc_fs dc_host_fs = { dc_read_file, dc_list_dir };

/* An integer property of device d (of the pair i -> j), 0 when absent or
 * not one; clamped to int. */
static int dc_int_of(long long v)
{
	return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
}

static int dc_device_int(const dmaconn_result *r, int d, const char *key)
{
	long long v = 0;
	return dmaconn_result_device_int(r, d, key, &v) == DMACONN_OK ? dc_int_of(v) : 0;
}

static int dc_pair_int(const dmaconn_result *r, int i, int j, const char *key)
{
	long long v = 0;
	return dmaconn_result_pair_int(r, i, j, key, &v) == DMACONN_OK ? dc_int_of(v) : 0;
}

/* The causes of device d that need no path: NVML's virtualization mode, the
 * IOMMU translating its DMA, its BAR1. */
static int dc_host_device(struct dc_host_facts *h, int d)
{
	const dmaconn_result *r = h->b->r;
	char text[300];
	const char *mode = dmaconn_result_device_get(r, d, DMACONN_PROP_VIRTUALIZATION_MODE);
	if (mode && (!strcmp(mode, "passthrough") || !strcmp(mode, "vgpu"))) {
		snprintf(text, sizeof(text),
			 "GPU %d is in a virtual machine (NVML virtualization mode %s): its emulated "
			 "root complex hides the PCIe path between the GPUs",
			 d, mode);
		if (dc_reason_intern(h->b, &h->gpu[d].virt, DMACONN_REASON_VIRTUAL_MACHINE, text) != 0)
			return -1;
	}
	if (dc_host_iommu_translates(h->gpu[d].iommu)) {
		snprintf(text, sizeof(text), "the IOMMU translates DMA of GPU %d (IOMMU group type %s)", d, h->gpu[d].iommu);
		if (dc_reason_intern(h->b, &h->gpu[d].iommu_reason, DMACONN_REASON_IOMMU_TRANSLATING, text) != 0)
			return -1;
	}
	long long bar1;
	if (dmaconn_result_device_int(r, d, DMACONN_PROP_BAR1_MIB, &bar1) == DMACONN_OK && bar1 <= DC_BAR1_SMALL_MIB) {
		snprintf(text, sizeof(text),
			 "GPU %d's BAR1 is %lld MiB, too small to map peer memory over PCIe (at most the "
			 "legacy %d MiB window)",
			 d, bar1, DC_BAR1_SMALL_MIB);
		if (dc_reason_intern(h->b, &h->gpu[d].bar1, DMACONN_REASON_BAR1_TOO_SMALL, text) != 0)
			return -1;
	}
	return 0;
}

/* Reads the facts once; -1 when out of memory. */
static int dc_host_read(struct dc_host_facts *h)
{
	if (h->read)
		return h->failed ? -1 : 0;
	h->read = 1;
	h->failed = 1;
	const dmaconn_result *r = h->b->r;
	h->n = dmaconn_result_size(r);
	h->vm = dc_host_vm(&dc_host_fs, h->vm_why, sizeof(h->vm_why));
	size_t n1 = (size_t)h->n + 1;
	const char **ids = calloc(n1, sizeof(*ids));
	h->chains = calloc(n1, sizeof(*h->chains));
	h->gpu = calloc(n1, sizeof(*h->gpu));
	if (!ids || !h->chains || !h->gpu) {
		free(ids);
		return -1;
	}
	for (int i = 0; i < h->n; i++) {
		const char *bus = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID);
		ids[i] = bus ? bus : "";
		if (bus && dc_host_iommu(&dc_host_fs, bus, h->gpu[i].iommu, sizeof(h->gpu[i].iommu)) != 0)
			h->gpu[i].iommu[0] = '\0';
	}
	dc_host_chains(&dc_host_fs, ids, h->n, h->chains);
	free(ids);
	if (h->vm) {
		char text[300];
		snprintf(text, sizeof(text),
			 "the node is a virtual machine (%s): its emulated root complex hides the PCIe path "
			 "between the GPUs",
			 h->vm_why);
		if (dc_reason_intern(h->b, &h->vm_reason, DMACONN_REASON_VIRTUAL_MACHINE, text) != 0)
			return -1;
	}
	for (int d = 0; d < h->n; d++)
		if (dc_host_device(h, d) != 0)
			return -1;
	h->failed = 0;
	return 0;
}

static void dc_host_free(struct dc_host_facts *h)
{
	free(h->chains);
	free(h->gpu);
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
 * translates DMA, or BAR1 too small; *out the cause (NULL: none), *bridges
 * the pair's bridges (NULL: unknown).  Sets the pair's pcie_bridges and
 * acs_redirect properties and its GPUs' IOMMU group types on the way; -1
 * when out of memory.
 */
static int dc_host_cause(struct dc_host_facts *h, int i, int j, const struct dc_reason **out, const char **bridges)
{
	dmaconn_builder *b = h->b;
	const dmaconn_result *r = b->r;
	*out = NULL;
	*bridges = NULL;
	if (dc_host_read(h) != 0)
		return -1;
	if (h->vm) {
		*out = &h->vm_reason;
		return 0;
	}
	for (int k = 0; k < 2; k++)
		if (h->gpu[k ? j : i].virt.code) {
			*out = &h->gpu[k ? j : i].virt;
			return 0;
		}
	const char *path[2 * DC_HOST_DEPTH];
	const struct dc_pci_chain *ci = &h->chains[i], *cj = &h->chains[j];
	int np = ci->depth > 0 && cj->depth > 0 ? dc_host_path(ci, cj, path, 2 * DC_HOST_DEPTH) : 0;
	if (np > 0) {
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
		if (dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PCIE_BRIDGES, list) != DMACONN_OK)
			return -1;
		*bridges = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_PCIE_BRIDGES);
		if (acs[0]) {
			char text[600];
			if (dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ACS_REDIRECT, acs) != DMACONN_OK)
				return -1;
			snprintf(text, sizeof(text), "PCIe ACS redirects peer requests to the root complex at %s on the "
				 "path between the GPUs", acs);
			if (dc_reason_intern(b, &h->acs, DMACONN_REASON_ACS_REDIRECT, text) != 0)
				return -1;
			*out = &h->acs;
			return 0;
		}
	}
	for (int k = 0; k < 2; k++) {
		int d = k ? j : i;
		struct dc_host_gpu *g = &h->gpu[d];
		if (g->iommu[0] && !g->iommu_set) {
			if (dmaconn_builder_set_device_property(b, d, DMACONN_PROP_IOMMU_GROUP_TYPE, g->iommu) != DMACONN_OK)
				return -1;
			g->iommu_set = 1;
		}
	}
	for (int k = 0; k < 2 && !*out; k++)
		if (h->gpu[k ? j : i].iommu_reason.code)
			*out = &h->gpu[k ? j : i].iommu_reason;
	for (int k = 0; k < 2 && !*out; k++)
		if (h->gpu[k ? j : i].bar1.code)
			*out = &h->gpu[k ? j : i].bar1;
	return 0;
}

/* The NVSwitch fabric's health mask fields that stop traffic, named (all
 * 0: only route unhealthy and incorrect configuration, what stops multicast). */
static int dc_fabric_unhealthy(unsigned int mask, const char *summary, char *out, size_t len, int all)
{
	size_t o = 0;
	out[0] = '\0';
	if (((mask >> 4) & 3) == 1)
		o += (size_t)snprintf(out + o, len - o, "%sroute unhealthy", o ? ", " : "");
	if (all && ((mask >> 2) & 3) == 1 && o < len)
		o += (size_t)snprintf(out + o, len - o, "%sroute recovery in progress", o ? ", " : "");
	if (all && ((mask >> 6) & 3) == 1 && o < len)
		o += (size_t)snprintf(out + o, len - o, "%saccess timeout recovery in progress", o ? ", " : "");
	unsigned int conf = (mask >> 8) & 0xf;
	static const char *const confs[] = { "", "", "incorrect system GUID", "incorrect chassis serial number",
					     "no partition", "insufficient NVLinks", "incompatible GPU firmware",
					     "invalid location" };
	if (conf >= 2 && o < len)
		o += (size_t)snprintf(out + o, len - o, "%sincorrect configuration: %s", o ? ", " : "",
				      conf < 8 ? confs[conf] : "unknown");
	if (all && summary && !strcmp(summary, "unhealthy") && o < len)
		o += (size_t)snprintf(out + o, len - o, "%ssummary unhealthy", o ? ", " : "");
	return o > 0;
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

struct dc_reasons {
	dmaconn_builder *b;
	const dmaconn_result *r;
	struct dc_host_facts *h;
	const char *key_code, *key_text;
	struct dc_reason *mig, *fabric, *nolinks, *down; /* per device */
	unsigned char *cc;                               /* per device: confidential computing on */
	struct dc_reason undetermined, neither, unjoined, unknown, cc_on;
	int nvlink, warned;
	/* The last peer-status cause, by the (interned) values it came from. */
	const char *st_from, *path_from, *bridges_from, *host_from;
	struct dc_reason st_reason;
	struct dc_reason both_down; /* the last pair with NVLinks down at both GPUs */
	/* Per device: its NVLinks down that a GPU of its model has active
	 * (dc_reason_fewer), and whether they cost it switch or direct links. */
	struct dc_reason *fewer;
	unsigned char *fewer_switch, *fewer_direct;
	unsigned char *partial; /* down holds the links down of a GPU with active links */
	/* Per device: its switch links, and as many as it would have with its
	 * links down up again (the most a GPU of its model has). */
	int *sw, *sw_full;
	int *only_peer; /* per device: the one GPU its direct links join, -1 none or several, -2 not read */
	int any_fewer;
	struct dc_reason both_fewer; /* the last pair thinned at both GPUs */
};

static int dc_reason_make(struct dc_reasons *x, struct dc_reason *out, const char *code, const char *text)
{
	return dc_reason_intern(x->b, out, code, text);
}

#define DC_DOWN_PREFIX "no active NVLink joins them: "

/* What device d alone explains: MIG mode, confidential computing, its fabric
 * registration and health, NVLinks down, no NVLink. */
static int dc_reason_device(struct dc_reasons *x, int d)
{
	const dmaconn_result *r = x->r;
	char text[400];
	const char *mig = dmaconn_result_device_get(r, d, DMACONN_PROP_MIG);
	if (mig && strcmp(mig, "disabled") != 0) {
		snprintf(text, sizeof(text), "GPU %d is in MIG mode: no peer access", d);
		if (dc_reason_make(x, &x->mig[d], DMACONN_REASON_MIG, text) != 0)
			return -1;
	}
	const char *cc = dmaconn_result_device_get(r, d, DMACONN_PROP_CONFIDENTIAL_COMPUTING);
	x->cc[d] = cc && !strcmp(cc, "on");
	const char *state = dmaconn_result_device_get(r, d, DMACONN_PROP_FABRIC_STATE);
	const char *status = dmaconn_result_device_get(r, d, DMACONN_PROP_FABRIC_STATUS);
	if (dc_device_int(r, d, DMACONN_PROP_NVLINK_SWITCH_LINKS) > 0 && state && strcmp(state, "not_supported") != 0) {
		const char *code = NULL;
		const char *mask = dmaconn_result_device_get(r, d, DMACONN_PROP_FABRIC_HEALTH_MASK);
		long long mask_bits = 0;
		char bad[200];
		if (!strcmp(state, "in_progress")) {
			code = DMACONN_REASON_FABRIC_IN_PROGRESS;
			snprintf(text, sizeof(text), "GPU %d: NVSwitch fabric registration is still in progress", d);
		} else if (strcmp(state, DMACONN_FABRIC_STATE_COMPLETED) != 0) {
			code = DMACONN_REASON_FABRIC_NOT_REGISTERED;
			snprintf(text, sizeof(text), "GPU %d is not registered with the NVSwitch fabric (%s)", d,
				 state);
		} else if (status && strcmp(status, DMACONN_FABRIC_STATUS_SUCCESS) != 0) {
			code = DMACONN_REASON_FABRIC_FAILED;
			snprintf(text, sizeof(text), "GPU %d: NVSwitch fabric registration failed (%s)", d, status);
		} else if (dmaconn_result_device_int(r, d, DMACONN_PROP_FABRIC_HEALTH_MASK, &mask_bits) == DMACONN_OK &&
			   dc_fabric_unhealthy((unsigned int)mask_bits,
						       dmaconn_result_device_get(r, d, DMACONN_PROP_FABRIC_HEALTH_SUMMARY),
						       bad, sizeof(bad), 1)) {
			code = DMACONN_REASON_FABRIC_UNHEALTHY;
			snprintf(text, sizeof(text), "GPU %d: the NVSwitch fabric is unhealthy (health mask %s: %s)",
				 d, mask, bad);
		}
		if (code && dc_reason_make(x, &x->fabric[d], code, text) != 0)
			return -1;
	}
	if (!x->nvlink)
		return 0;
	const char *links = dmaconn_result_device_get(r, d, DMACONN_PROP_NVLINK_ACTIVE_LINKS);
	const char *down = dmaconn_result_device_get(r, d, DMACONN_PROP_NVLINK_INACTIVE_LINKS);
	/* Every link inactive: down.  Of a GPU with active links, only those
	 * its peers have active are (dc_reason_fewer): the others are spare. */
	int active = dc_device_int(r, d, DMACONN_PROP_NVLINK_ACTIVE_LINKS) > 0;
	if (down && !active) {
		snprintf(text, sizeof(text), DC_DOWN_PREFIX "GPU %d's NVLinks %.100s are down (%s active)", d, down,
			 links ? links : "0");
		if (dc_reason_make(x, &x->down[d], DMACONN_REASON_NVLINK_DOWN, text) != 0)
			return -1;
	}
	if (!active) {
		snprintf(text, sizeof(text), "no NVLink between them: GPU %d has none active", d);
		if (dc_reason_make(x, &x->nolinks[d], DMACONN_REASON_NO_NVLINK, text) != 0)
			return -1;
	}
	return 0;
}

/* The set of links (0 to 63) a list property of device d names ("5,11"),
 * none when absent or malformed. */
static unsigned long long dc_link_mask(const dmaconn_result *r, int d, const char *key)
{
	long long links[64];
	int n = 0;
	if (dmaconn_result_device_list(r, d, key, links, 64, &n) != DMACONN_OK)
		return 0;
	unsigned long long m = 0;
	for (int k = 0; k < n && k < 64; k++)
		if (links[k] >= 0 && links[k] < 64)
			m |= 1ULL << links[k];
	return m;
}

#define DC_FEWER_PREFIX "fewer NVLinks than its peers: "

/* The links of a model: up on some GPU of it, the most switch and direct
 * links a GPU of it has, and the first GPU with the most active links. */
struct dc_model {
	const char *name;
	unsigned long long up;
	int sw, direct, best;
};

/*
 * A GPU's NVLinks that are inactive although another GPU of the same model
 * has them active: down, not spare ports (a bridged board's unused links
 * are inactive on every GPU, and so are the links an SKU has fused off).
 * A GPU's active links are those links_up names (a link NVML does not
 * support is neither active nor inactive); where it does not say, those
 * below its count of links (active and inactive) that are not inactive.
 * Sets each such GPU's
 * nvlink_down_links and the reason its pairs get when they lose them.
 */
static int dc_reason_fewer(struct dc_reasons *x, int n, const unsigned long long *links_up)
{
	const dmaconn_result *r = x->r;
	int *active = calloc((size_t)n, sizeof(int)), *sw = x->sw;
	int *model = calloc((size_t)n, sizeof(int));
	unsigned long long *inactive = calloc((size_t)n, sizeof(*inactive));
	struct dc_model *models = calloc((size_t)n, sizeof(*models));
	int rc = active && model && inactive && models ? 0 : -1;
	int nmodels = 0;
	for (int d = 0; rc == 0 && d < n; d++) {
		const char *name = dmaconn_result_device_get(r, d, DMACONN_PROP_NAME);
		active[d] = dc_device_int(r, d, DMACONN_PROP_NVLINK_ACTIVE_LINKS);
		sw[d] = dc_device_int(r, d, DMACONN_PROP_NVLINK_SWITCH_LINKS);
		inactive[d] = dc_link_mask(r, d, DMACONN_PROP_NVLINK_INACTIVE_LINKS);
		int total = active[d];
		for (unsigned long long b = inactive[d]; b; b &= b - 1)
			total++;
		unsigned long long up = links_up ? links_up[d]
					: (total >= 64 ? ~0ULL : (1ULL << total) - 1) & ~inactive[d];
		int k = 0;
		while (k < nmodels && strcmp(name ? name : "", models[k].name) != 0)
			k++;
		if (k == nmodels)
			models[nmodels++] = (struct dc_model){ .name = name ? name : "", .best = d };
		struct dc_model *m = &models[k];
		m->up |= up;
		m->sw = sw[d] > m->sw ? sw[d] : m->sw;
		m->direct = active[d] - sw[d] > m->direct ? active[d] - sw[d] : m->direct;
		if (active[d] > active[m->best])
			m->best = d;
		model[d] = k;
	}
	for (int d = 0; rc == 0 && d < n; d++) {
		const struct dc_model *m = &models[model[d]];
		unsigned long long down = inactive[d] & m->up;
		x->sw_full[d] = sw[d];
		if (!down)
			continue;
		char list[64 * 3 + 1], text[400], peer[64] = "";
		size_t o = 0;
		int count = 0, direct = active[d] - sw[d];
		for (int l = 0; l < 64; l++)
			if (down >> l & 1) {
				o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%d", count ? "," : "", l);
				count++;
			}
		if (dmaconn_builder_set_device_property(x->b, d, DMACONN_PROP_NVLINK_DOWN_LINKS, list) != DMACONN_OK) {
			rc = -1;
			break;
		}
		if (active[d] > 0) {
			snprintf(text, sizeof(text), DC_DOWN_PREFIX "GPU %d's NVLink%s %s %s down (%d active)", d,
				 count == 1 ? "" : "s", list, count == 1 ? "is" : "are", active[d]);
			if (dc_reason_make(x, &x->down[d], DMACONN_REASON_NVLINK_DOWN, text) != 0) {
				rc = -1;
				break;
			}
			x->partial[d] = 1;
		}
		/* Which of its links they were: the kind it has fewer of than the
		 * model's most, else (every GPU lost as many) the kind it uses. */
		x->fewer_switch[d] = sw[d] < m->sw || (direct >= m->direct && m->sw > 0);
		x->fewer_direct[d] = direct < m->direct || (sw[d] >= m->sw && m->direct > 0);
		if (x->fewer_switch[d])
			x->sw_full[d] = m->sw;
		if (active[m->best] > active[d] && !(inactive[m->best] & m->up))
			snprintf(peer, sizeof(peer), ", %d on GPU %d", active[m->best], m->best);
		snprintf(text, sizeof(text), DC_FEWER_PREFIX "GPU %d's NVLink%s %s %s down (%d active%s)", d,
			 count == 1 ? "" : "s", list, count == 1 ? "is" : "are", active[d], peer);
		rc = dc_reason_make(x, &x->fewer[d], DMACONN_REASON_NVLINK_DOWN, text);
		x->any_fewer = 1;
	}
	free(active);
	free(model);
	free(inactive);
	free(models);
	return rc;
}

/* The reason of i -> j, which has v > 0 links, when it lost some that its
 * peers have (a GPU's down links cost its switch pairs where it is the end
 * with fewer switch links, and only if the pair would have more with them
 * up: an 18-link GPU's pairs do not miss a 36-link peer's link; a direct
 * link down is down at both of its GPUs); NULL when none (*oom set when
 * out of memory). */
static const struct dc_reason *dc_reason_thinned(struct dc_reasons *x, int i, int j, int v, int *oom)
{
	if (!x->fewer[i].code && !x->fewer[j].code)
		return NULL;
	int direct = dc_pair_int(x->r, i, j, DMACONN_PROP_NVLINK_DIRECT_LINKS);
	int both_direct = direct > 0 && x->fewer_direct[i] && x->fewer_direct[j];
	int hit[2], ends[2] = { i, j };
	int low = x->sw[i] < x->sw[j] ? x->sw[i] : x->sw[j];
	int full = x->sw_full[i] < x->sw_full[j] ? x->sw_full[i] : x->sw_full[j];
	int switch_lost = v > direct && full > low;
	for (int k = 0; k < 2; k++)
		hit[k] = x->fewer[ends[k]].code &&
			 ((switch_lost && x->fewer_switch[ends[k]] && x->sw[ends[k]] == low) || both_direct);
	if (hit[0] && hit[1]) {
		char text[800];
		snprintf(text, sizeof(text), "%s; %s", x->fewer[i].text, x->fewer[j].text + strlen(DC_FEWER_PREFIX));
		if (dc_reason_make(x, &x->both_fewer, DMACONN_REASON_NVLINK_DOWN, text) != 0) {
			*oom = 1;
			return NULL;
		}
		return &x->both_fewer;
	}
	return hit[0] ? &x->fewer[i] : hit[1] ? &x->fewer[j] : NULL;
}

/* The cause a driver's peer status st on the path gives (code NULL: none);
 * host: what the kernel shows against it, which comes first. */
static int dc_reason_peer(struct dc_reasons *x, const char *st, const char *path, const char *bridges,
			  const struct dc_reason *host, struct dc_reason *out)
{
	static const struct {
		const char *status, *code, *text;
		int on_path; /* the text names the path (2: and its bridges) */
	} causes[] = {
		{ "DR", DMACONN_REASON_DISABLED_BY_DRIVER, "peer access disabled by the driver (DR)", 0 },
		{ "CNS", DMACONN_REASON_CHIPSET_NOT_SUPPORTED, "chipset does not support peer access (CNS)", 2 },
		{ "TNS", DMACONN_REASON_TOPOLOGY_NOT_SUPPORTED, "topology does not support peer access (TNS)", 2 },
		{ "GNS", DMACONN_REASON_GPU_NOT_SUPPORTED, "a GPU of the pair does not support peer access (GNS)", 0 },
		{ "NS", DMACONN_REASON_NOT_SUPPORTED, "the driver reports peer access not supported (NS)", 1 },
	};
	char text[400];
	out->code = out->text = NULL;
	if (host) {
		snprintf(text, sizeof(text), "%.250s; the driver reports %s on the path %.20s", host->text, st,
			 path ? path : "?");
		return dc_reason_make(x, out, host->code, text);
	}
	for (size_t k = 0; st && k < sizeof(causes) / sizeof(causes[0]); k++) {
		if (strcmp(st, causes[k].status) != 0)
			continue;
		if (causes[k].on_path == 2 && bridges)
			snprintf(text, sizeof(text), "%s on the path %s (bridges %.200s)", causes[k].text,
				 path ? path : "?", bridges);
		else if (causes[k].on_path)
			snprintf(text, sizeof(text), "%s on the path %s", causes[k].text, path ? path : "?");
		else
			snprintf(text, sizeof(text), "%s", causes[k].text);
		return dc_reason_make(x, out, causes[k].code, text);
	}
	return 0;
}

/* The one GPU that all of d's direct NVLinks join (a bridged pair's
 * partner), or -1 (none, or several). */
static int dc_only_peer(struct dc_reasons *x, int d)
{
	if (x->only_peer[d] != -2)
		return x->only_peer[d];
	int n = dmaconn_result_size(x->r), peer = -1;
	for (int j = 0; j < n; j++) {
		if (j != d && dc_pair_int(x->r, d, j, DMACONN_PROP_NVLINK_DIRECT_LINKS) > 0) {
			if (peer >= 0) {
				peer = -1;
				break;
			}
			peer = j;
		}
	}
	return x->only_peer[d] = peer;
}

/* Whether NVLinks down at both i and j, each with active links left, may be
 * one that joined them: not when either's direct links all join a third
 * GPU (a bridged board's lost link joined its partner). */
static int dc_down_between(struct dc_reasons *x, int i, int j)
{
	int pi = dc_only_peer(x, i), pj = dc_only_peer(x, j);
	return !(pi >= 0 && pi != j) && !(pj >= 0 && pj != i);
}

/* The reason of i -> j, or NULL when out of memory. */
static const struct dc_reason *dc_reason_pair(struct dc_reasons *x, int i, int j)
{
	int ends[2] = { i, j };
	for (int k = 0; k < 2; k++)
		if (x->mig[ends[k]].code)
			return &x->mig[ends[k]];
	if (x->cc[i])
		return &x->cc_on;
	for (int k = 0; k < 2; k++)
		if (x->fabric[ends[k]].code)
			return &x->fabric[ends[k]];
	const char *st = dc_reason_status(x->r, i, j);
	if (st) {
		const struct dc_reason *host = NULL;
		const char *bridges = NULL;
		if (strcmp(st, "DR") != 0 && dc_host_cause(x->h, i, j, &host, &bridges) != 0)
			return NULL;
		/* The values are the result's own copies: equal texts, equal pointers. */
		const char *path = dmaconn_result_pair_get(x->r, i, j, DMACONN_PROP_PATH);
		const char *host_text = host ? host->text : NULL;
		if (!x->st_from || st != x->st_from || path != x->path_from || bridges != x->bridges_from ||
		    host_text != x->host_from) {
			if (dc_reason_peer(x, st, path, bridges, host, &x->st_reason) != 0)
				return NULL;
			x->st_from = st;
			x->path_from = path;
			x->bridges_from = bridges;
			x->host_from = host_text;
		}
		if (x->st_reason.code)
			return &x->st_reason;
	}
	if (x->warned)
		return &x->undetermined;
	if (!x->nvlink)
		return &x->unknown;
	/* Both ends down: a GPU with none active, or a direct link down at
	 * both; beside a GPU with none active, the other's lost links explain
	 * nothing. */
	if (x->down[i].code && x->down[j].code && x->partial[i] == x->partial[j] &&
	    (!x->partial[i] || dc_down_between(x, i, j))) {
		char text[400];
		snprintf(text, sizeof(text), "%s; %s", x->down[i].text, x->down[j].text + strlen(DC_DOWN_PREFIX));
		return dc_reason_make(x, &x->both_down, DMACONN_REASON_NVLINK_DOWN, text) == 0 ? &x->both_down : NULL;
	}
	/* A GPU that keeps active links explains a missing direct link only
	 * with its peer: a link is down at both of its GPUs. */
	for (int k = 0; k < 2; k++)
		if (x->down[ends[k]].code && !x->partial[ends[k]])
			return &x->down[ends[k]];
	if (x->nolinks[i].code && x->nolinks[j].code)
		return &x->neither;
	if (x->nolinks[i].code || x->nolinks[j].code)
		return x->nolinks[i].code ? &x->nolinks[i] : &x->nolinks[j];
	return &x->unjoined;
}

/* The reasons of a rocm (rocm: 1; the KFD link's properties) or xpu (0;
 * Level Zero's peer flags and fabric) result, of a peer rule (p2p: 1) or a
 * link filter. */
static void dc_reasons_vendor(dmaconn_builder *b, int rocm, int p2p);

void dc_reasons_of(dmaconn_builder *b, const struct dc_connection *row, const unsigned long long *up,
		   const struct dc_mc_cause *cause)
{
	switch (row->reasons) {
	case DC_REASONS_CUDA:
		dc_reasons_cuda(b, up);
		break;
	case DC_REASONS_MULTICAST:
		dc_reasons_multicast(b, cause);
		break;
	case DC_REASONS_SUSPECTS:
		dc_reasons_suspects(b);
		break;
	case DC_REASONS_ROCM:
	case DC_REASONS_XPU:
		dc_reasons_vendor(b, row->reasons == DC_REASONS_ROCM, row->counts == DC_COUNTS_PEER);
		break;
	}
}

void dc_reasons_cuda(dmaconn_builder *b, const unsigned long long *up)
{
	int n = b->r ? dmaconn_result_size(b->r) : 0;
	if (n < 2)
		return;
	struct dc_host_facts h;
	memset(&h, 0, sizeof(h));
	h.b = b;
	struct dc_reasons x = { .b = b, .r = b->r, .h = &h };
	/* A link filter's zeros are explained by links, a peer rule's by the
	 * driver's peer statuses. */
	const struct dc_connection *row = dc_connection_of(b);
	x.nvlink = row && row->counts == DC_COUNTS_LINKS;
	x.warned = dmaconn_result_warning_count(b->r) > 0;
	x.mig = calloc((size_t)n, sizeof(*x.mig));
	x.fabric = calloc((size_t)n, sizeof(*x.fabric));
	x.nolinks = calloc((size_t)n, sizeof(*x.nolinks));
	x.down = calloc((size_t)n, sizeof(*x.down));
	x.cc = calloc((size_t)n, 1);
	x.fewer = calloc((size_t)n, sizeof(*x.fewer));
	x.fewer_switch = calloc((size_t)n, 1);
	x.fewer_direct = calloc((size_t)n, 1);
	x.partial = calloc((size_t)n, 1);
	x.sw = calloc((size_t)n, sizeof(*x.sw));
	x.sw_full = calloc((size_t)n, sizeof(*x.sw_full));
	x.only_peer = malloc((size_t)n * sizeof(*x.only_peer));
	for (int d = 0; x.only_peer && d < n; d++)
		x.only_peer[d] = -2;
	char text[300];
	int ok = x.mig && x.fabric && x.nolinks && x.down && x.cc && x.fewer && x.fewer_switch && x.fewer_direct &&
		 x.partial && x.sw && x.sw_full && x.only_peer;
	ok = ok && (x.key_code = dc_builder_intern(b, DMACONN_PROP_REASON)) &&
	     (x.key_text = dc_builder_intern(b, DMACONN_PROP_REASON_TEXT));
	ok = ok && dc_reason_make(&x, &x.unknown, DMACONN_REASON_UNKNOWN, "nothing known explains it") == 0;
	if (ok && x.warned) {
		/* The detection was incomplete: the 0 may be an assumption. */
		snprintf(text, sizeof(text), "not determined: %.240s", dmaconn_result_warning(b->r, 0));
		ok = dc_reason_make(&x, &x.undetermined, DMACONN_REASON_UNKNOWN, text) == 0;
	}
	ok = ok && dc_reason_make(&x, &x.neither, DMACONN_REASON_NO_NVLINK,
				  "no NVLink between them: neither GPU has one active") == 0;
	ok = ok && dc_reason_make(&x, &x.unjoined, DMACONN_REASON_UNKNOWN,
				  "both GPUs have active NVLinks, but none joins them") == 0;
	ok = ok && dc_reason_make(&x, &x.cc_on, DMACONN_REASON_CONFIDENTIAL_COMPUTING,
				  "confidential computing is on (NVML): the driver allows no peer access between "
				  "the GPUs") == 0;
	for (int d = 0; ok && d < n; d++)
		ok = dc_reason_device(&x, d) == 0;
	ok = ok && dc_reason_fewer(&x, n, up) == 0;
	const int *m = dmaconn_result_matrix(b->r);
	for (int i = 0; ok && i < n; i++) {
		for (int j = 0; ok && j < n; j++) {
			int v = i == j ? 0 : m[(size_t)i * (size_t)n + (size_t)j];
			if (i == j || (v != 0 && !(x.nvlink && x.any_fewer)))
				continue;
			int oom = 0;
			/* A pair with links has a reason only when it lost some. */
			const struct dc_reason *why = v ? dc_reason_thinned(&x, i, j, v, &oom) : dc_reason_pair(&x, i, j);
			if (v && !why) {
				ok = !oom;
				continue;
			}
			ok = why && dc_builder_set_pair_interned(b, i, j, x.key_code, why->code) == DMACONN_OK &&
			     dc_builder_set_pair_interned(b, i, j, x.key_text, why->text) == DMACONN_OK;
		}
	}
	if (!ok)
		b->oom = 1;
	free(x.mig);
	free(x.fabric);
	free(x.nolinks);
	free(x.down);
	free(x.cc);
	free(x.fewer);
	free(x.fewer_switch);
	free(x.fewer_direct);
	free(x.partial);
	free(x.sw);
	free(x.sw_full);
	free(x.only_peer);
	dc_host_free(&h);
}

void dc_reasons_suspects(dmaconn_builder *b)
{
	struct dc_host_facts h;
	memset(&h, 0, sizeof(h));
	h.b = b;
	int n = b->r ? dmaconn_result_size(b->r) : 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i == j || dmaconn_result_get(b->r, i, j) != 0)
				continue;
			const char *code = dmaconn_result_pair_get(b->r, i, j, DMACONN_PROP_REASON);
			if (!code || (strcmp(code, DMACONN_REASON_VERIFY_FAILED) && strcmp(code, DMACONN_REASON_VERIFY_HUNG)))
				continue;
			char text[1600];
			const struct dc_reason *host;
			const char *bridges, *was = dmaconn_result_pair_get(b->r, i, j, DMACONN_PROP_REASON_TEXT);
			if (!was || strstr(was, "; suspected: ") || dc_host_cause(&h, i, j, &host, &bridges) != 0 || !host)
				continue;
			snprintf(text, sizeof(text), "%.1200s; suspected: %.299s", was, host->text);
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

static void dc_reasons_vendor(dmaconn_builder *b, int rocm, int p2p)
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

/* ------------------------------------------------------------ multicast */

/* NVML's fabric states (enum dc_fabric_state of model.h). */
enum { DC_MC_NOT_SUPPORTED, DC_MC_NOT_STARTED, DC_MC_IN_PROGRESS, DC_MC_COMPLETED };

const char *dc_multicast_cause(const struct dc_mc_facts *f, int d, char *text, size_t len)
{
	static const char *const states[] = { "not supported", "not started", "in progress", "completed" };
	const struct dc_mc_fabric *fb = &f->fabric;
	char bad[200];
	if (f->mig) {
		snprintf(text, len, "GPU %d is in MIG mode: MIG instances cannot join a multicast object", d);
		return DMACONN_REASON_MIG;
	}
	if (f->cc_major < 9) {
		if (f->cc_major < 0)
			snprintf(text, len, "GPU %d: NVML gives no compute capability; multicast objects need 9.0 "
				 "(Hopper) or newer", d);
		else
			snprintf(text, len, "GPU %d has compute capability %d.%d; multicast objects need 9.0 (Hopper) "
				 "or newer", d, f->cc_major, f->cc_minor);
		return DMACONN_REASON_GPU_NOT_SUPPORTED;
	}
	if (!f->driver) {
		snprintf(text, len, "GPU %d: %s", d, f->driver_text);
		return DMACONN_REASON_DRIVER_WITHOUT_MULTICAST;
	}
	if (f->cc_on) {
		snprintf(text, len, "confidential computing is on (NVML ccFeature %u): no confidential computing "
			 "mode lets GPUs share a multicast object (GPU %d)", f->cc_feature, d);
		return DMACONN_REASON_CONFIDENTIAL_COMPUTING;
	}
	if (fb->known && fb->state == DC_MC_NOT_STARTED) {
		snprintf(text, len, "GPU %d is not registered with the NVSwitch fabric (state not started: is the "
			 "fabric manager running?)", d);
		return DMACONN_REASON_FABRIC_NOT_STARTED;
	}
	if (fb->known && fb->state == DC_MC_IN_PROGRESS) {
		snprintf(text, len, "GPU %d: NVSwitch fabric registration is still in progress", d);
		return DMACONN_REASON_FABRIC_IN_PROGRESS;
	}
	if (fb->known && fb->state == DC_MC_COMPLETED && fb->status != 0) {
		snprintf(text, len, "GPU %d: NVSwitch fabric registration failed (%s)", d,
			 f->status ? f->status : "unknown status");
		return DMACONN_REASON_FABRIC_FAILED;
	}
	if (fb->known && fb->state > DC_MC_COMPLETED) {
		snprintf(text, len, "GPU %d: NVML reports an unknown fabric state %u", d, fb->state);
		return DMACONN_REASON_FABRIC_FAILED;
	}
	if (!fb->known || fb->state == DC_MC_NOT_SUPPORTED || f->switch_links <= 0) {
		snprintf(text, len, "GPU %d is not attached to an NVSwitch (%d active NVLinks to NVSwitches, fabric "
			 "%s): PCIe and NVLink bridges carry no multicast", d, f->switch_links < 0 ? 0 : f->switch_links,
			 !fb->known ? "unknown to NVML" : states[fb->state < 4 ? fb->state : 0]);
		return DMACONN_REASON_NO_NVSWITCH;
	}
	if (fb->health_known && dc_fabric_unhealthy(fb->health_mask, NULL, bad, sizeof(bad), 0)) {
		snprintf(text, len, "GPU %d: the NVSwitch fabric is unhealthy (health mask 0x%x: %s)", d, fb->health_mask,
			 bad);
		return DMACONN_REASON_FABRIC_UNHEALTHY;
	}
	return NULL;
}

/* Each device's multicast domain (cluster UUID and clique, as its
 * properties name them) as a small number: equal numbers, equal domains. */
static void dc_mc_domains(const dmaconn_result *r, int n, int *dom, const char **uuid, const char **clique)
{
	for (int d = 0; d < n; d++) {
		uuid[d] = dmaconn_result_device_get(r, d, DMACONN_PROP_CLUSTER_UUID);
		clique[d] = dmaconn_result_device_get(r, d, DMACONN_PROP_MULTICAST_CLIQUE_ID);
		uuid[d] = uuid[d] ? uuid[d] : "?";
		clique[d] = clique[d] ? clique[d] : "?";
		/* The first device of its domain numbers it; most share their
		 * predecessor's, asked first. */
		dom[d] = d;
		for (int k = 0; k < d && dom[d] == d; k++) {
			int e = k == 0 ? d - 1 : k - 1;
			if (!strcmp(uuid[e], uuid[d]) && !strcmp(clique[e], clique[d]))
				dom[d] = dom[e];
		}
	}
}

void dc_reasons_multicast(dmaconn_builder *b, const struct dc_mc_cause *cause)
{
	const dmaconn_result *r = b->r;
	int n = r ? dmaconn_result_size(r) : 0;
	if (n < 2)
		return;
	struct dc_reason *dev = calloc((size_t)n, sizeof(*dev));
	int *dom = calloc((size_t)n, sizeof(*dom));
	const char **uuid = calloc((size_t)n, sizeof(*uuid)), **clique = calloc((size_t)n, sizeof(*clique));
	struct dc_reason undetermined = { NULL, NULL }, last = { NULL, NULL };
	const char *keys[2] = { dc_builder_intern(b, DMACONN_PROP_REASON), dc_builder_intern(b, DMACONN_PROP_REASON_TEXT) };
	int last_d[2] = { -1, -1 }; /* the domains `last` names */
	char buf[400];
	int ok = dev && dom && uuid && clique && keys[0] && keys[1];
	if (ok && dmaconn_result_warning_count(r) > 0) {
		snprintf(buf, sizeof(buf), "not determined: %.240s", dmaconn_result_warning(r, 0));
		ok = dc_reason_intern(b, &undetermined, DMACONN_REASON_UNKNOWN, buf) == 0;
	}
	for (int d = 0; ok && cause && d < n; d++)
		if (cause[d].code)
			ok = dc_reason_intern(b, &dev[d], cause[d].code, cause[d].text) == 0;
	if (ok)
		dc_mc_domains(r, n, dom, uuid, clique);
	const int *m = dmaconn_result_matrix(r);
	for (int i = 0; ok && i < n; i++) {
		for (int j = 0; ok && j < n; j++) {
			if (i == j || m[(size_t)i * (size_t)n + (size_t)j] != 0)
				continue;
			const struct dc_reason *why = dev[i].code ? &dev[i] : dev[j].code ? &dev[j] : NULL;
			if (!why && undetermined.code) {
				why = &undetermined;
			} else if (!why) {
				/* Made once per ordered pair of domains in a row. */
				if (!last.code || last_d[0] != dom[i] || last_d[1] != dom[j]) {
					int differ = dom[i] != dom[j];
					if (differ)
						snprintf(buf, sizeof(buf), "different NVLink multicast domains: cluster %s "
							 "clique %s and cluster %s clique %s", uuid[i], clique[i], uuid[j],
							 clique[j]);
					else
						snprintf(buf, sizeof(buf), "nothing known explains it");
					ok = dc_reason_intern(b, &last, differ ? DMACONN_REASON_DIFFERENT_CLIQUE
									   : DMACONN_REASON_UNKNOWN, buf) == 0;
					last_d[0] = dom[i], last_d[1] = dom[j];
				}
				why = &last;
			}
			const char *values[2] = { why->code, why->text };
			ok = ok && dc_builder_set_pair_list(b, i, j, keys, values, 2) == DMACONN_OK;
		}
	}
	if (!ok)
		b->oom = 1;
	free(dev);
	free(dom);
	free(uuid);
	free(clique);
}
