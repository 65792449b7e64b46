/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AMD detectors on the amdgpu KFD topology, the kernel's own description of
 * every agent and link (/sys/class/kfd/kfd/topology/nodes/N/{properties,
 * io_links/K/properties, p2p_links/K/properties}).  It needs no library, is
 * what ROCr and RCCL read, and is read through dc_read_file()/dc_list_dir()
 * so that a replay answers it from its "files" section.
 *
 * Flow: list the nodes -> keep the AMD GPU nodes (simd_count > 0, vendor
 * 0x1002) in node order -> order them as HIP would (order_hip.c) -> per
 * ordered pair, the GPU's io_link (direct, XGMI within a hive) or else its
 * p2p_link (indirect, PCIe peers) to the other -> matrix and pair facts ->
 * optionally, cross-check with ROCm SMI where that library is installed.
 *
 * Facts used, from the kernel's kfd_topology.c / kfd_crat.[ch]:
 *  - a properties file is "name value" lines, values in decimal;
 *  - io_link "flags" are CRAT_IOLINK_FLAGS_*: ENABLED (bit 0), NON_COHERENT
 *    (1), NO_ATOMICS_32_BIT (2), NO_ATOMICS_64_BIT (3), NO_PEER_TO_PEER_DMA
 *    (4); "type" is CRAT_IOLINK_TYPE_* (PCIEXPRESS 2, XGMI 11);
 *  - an XGMI link's weight is 15 per XGMI hop (13 between partitions of one
 *    package, 41 between partitions of different packages); its
 *    min_bandwidth is one link's rate and max_bandwidth the rate of all the
 *    links to that peer (0 for a peer reached through other GPUs), so
 *    max/min is the link count -- as ROCr's SDMA gang factor and RCCL read it.
 *    Kernels for GPUs before MI200 report 0 for both.
 *  - location_id is the PCI bus << 8 | devfn; a partitioned GPU ORs its
 *    partition index in (low bits, or bits 28-31 on some kernels).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../internal.h"
#include "../../linkmatrix.h"
#include "../../model/model.h"
#include "../../model/reasons.h"
#include "../../order/order.h"
#include "../../pci.h"
#include "../../replay_abi.h"
#include "../../sysfs.h"
#include "../backend.h"
#include "../loader.h"
#include "rocm_smi_api.h"

#define KFD_NODES "/sys/class/kfd/kfd/topology/nodes"
#define WHY_SIZE 768
#define PROPS_SIZE 16384
#define MAX_NODES 4096
#define MAX_NODE_LINKS 4096

#define AMD_VENDOR_ID 0x1002
#define IOLINK_TYPE_PCIE 2
#define IOLINK_TYPE_XGMI 11
#define IOLINK_ENABLED (1u << 0)
#define IOLINK_NON_COHERENT (1u << 1)
#define IOLINK_NO_ATOMICS_32 (1u << 2)
#define IOLINK_NO_ATOMICS_64 (1u << 3)
#define IOLINK_NO_P2P_DMA (1u << 4)
#define XGMI_HOP_WEIGHT 15
#define XGMI_INTRA_PACKAGE_WEIGHT 13
#define XGMI_INTER_PACKAGE_PARTITION_WEIGHT 41

/* ------------------------------------------------------------ properties */

struct kv {
	char key[64];
	unsigned long long value;
};

struct props {
	struct kv *items;
	int count;
};

/* Set where reading the topology ran out of memory: discovery then makes
 * none (DMACONN_ENOMEM), rather than count the GPUs it could not read as
 * absent. */
static _Thread_local int kfd_oom;

/* Parses "name value" lines; 0, or -1 with the reason. */
static int parse_props(const char *path, char *text, struct props *p, char *why)
{
	p->items = NULL;
	p->count = 0;
	int cap = 0, line = 0;
	for (char *cur = text, *next; cur && *cur; cur = next) {
		line++;
		next = strchr(cur, '\n');
		if (next)
			*next++ = '\0';
		if (!*cur)
			continue;
		char key[64];
		char *sp = strchr(cur, ' ');
		size_t klen = sp ? (size_t)(sp - cur) : 0;
		char *end = NULL;
		unsigned long long v = 0;
		if (sp && klen > 0 && klen < sizeof(key) && sp[1] >= '0' && sp[1] <= '9') {
			errno = 0;
			v = strtoull(sp + 1, &end, 10);
			if (errno)
				end = NULL;
		}
		if (!end || *end) {
			snprintf(why, WHY_SIZE, "%.300s: line %d is not \"name value\": '%.60s'", path, line, cur);
			free(p->items);
			p->items = NULL;
			return -1;
		}
		memcpy(key, cur, klen);
		key[klen] = '\0';
		if (dc_grow(&p->items, p->count, &cap, sizeof(*p->items), 64) != 0) {
			kfd_oom = 1;
			snprintf(why, WHY_SIZE, "out of memory");
			free(p->items);
			p->items = NULL;
			return -1;
		}
		snprintf(p->items[p->count].key, sizeof(p->items[p->count].key), "%s", key);
		p->items[p->count++].value = v;
	}
	return 0;
}

static int prop(const struct props *p, const char *key, unsigned long long *v)
{
	for (int i = 0; i < p->count; i++) {
		if (!strcmp(p->items[i].key, key)) {
			*v = p->items[i].value;
			return 1;
		}
	}
	return 0;
}

static unsigned long long prop_or(const struct props *p, const char *key, unsigned long long dflt)
{
	unsigned long long v;
	return prop(p, key, &v) ? v : dflt;
}

/* The same words live and in a replay (a recording lacks what was missing). */
static void describe_errno(int err, char *out, size_t len)
{
	snprintf(out, len, "%s", strerror(-err));
}

/* Reads and parses a properties file.  1 when parsed, 0 when the file is
 * missing, empty or unreadable for lack of permission (a node libhsakmt would
 * skip, e.g. a GPU outside the process's device cgroup), -1 with why. */
static int read_props(const char *path, struct props *p, char *why)
{
	static _Thread_local char buf[PROPS_SIZE];
	p->items = NULL;
	p->count = 0;
	int n = dc_read_file(path, buf, sizeof(buf));
	if (n == -ENOENT || n == -EACCES || n == -EPERM || n == 0)
		return 0;
	if (n < 0) {
		char err[128];
		describe_errno(n, err, sizeof(err));
		snprintf(why, WHY_SIZE, "cannot read %.300s: %s", path, err);
		return -1;
	}
	return parse_props(path, buf, p, why) == 0 ? 1 : -1;
}

/* A one-line text file ("name", "product_name"), blanks trimmed; "" if none. */
static void read_line(const char *path, char *out, size_t len)
{
	char buf[256];
	out[0] = '\0';
	if (dc_read_file(path, buf, sizeof(buf)) <= 0)
		return;
	char *s = buf, *e;
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if ((e = strchr(s, '\n')))
		*e = '\0';
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	dc_copy_text(out, len, s, (size_t)(e - s));
}

/* ----------------------------------------------------------------- model */

struct link {
	unsigned long long type, weight, min_bw, max_bw, flags, to;
	int indirect; /* from p2p_links */
};

struct node {
	unsigned long id;
	int gpu; /* an AMD GPU node */
	unsigned long long simd, cpu_cores, vendor, device, location, domain, gfx, render_minor;
	unsigned long long unique_id, hive_id;
	int has_render_minor;
	char kfd_name[64];
	char marketing[128];
	struct link *links;
	int nlinks;
	long cpu;          /* the CPU node its first CPU io_link reaches, -1 */
	int part_index, part_count;
	struct dc_pci pci;
};

/* What discovery read, once per process (and per DMACONN_SYSFS_ROOT):
 * shared read-only by the views, reference-counted. */
struct kfd_topo {
	atomic_int refs;
	int failed;         /* unusable: why */
	int uncounted;      /* not even the GPUs could be counted */
	char why[WHY_SIZE];
	struct node *nodes; /* supported nodes, in node order */
	int nnodes;
	int *gpus; /* indices into nodes of the AMD GPUs, in node order */
	int ngpus;
};

static void topo_release(void *p)
{
	struct kfd_topo *t = p;
	if (!t || !dc_unref(&t->refs))
		return;
	for (int i = 0; t->nodes && i < t->nnodes; i++)
		free(t->nodes[i].links);
	free(t->nodes);
	free(t->gpus);
	free(t);
}

/* A view under way: the topology (its arrays borrowed) and the visible GPUs. */
struct session {
	const char *label;
	int p2p;            /* the p2p detector */
	struct kfd_topo *t;
	const struct node *nodes;
	int nnodes;
	const int *gpus;
	int ngpus;
	int *slots; /* per ordinal, index into gpus */
	int nslots;
};

static void session_free(struct session *s)
{
	topo_release(s->t);
	free(s->slots);
}

static int numeric(const char *s, unsigned long *v)
{
	if (!*s || strlen(s) > 9)
		return 0;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	*v = strtoul(s, NULL, 10);
	return 1;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return x < y ? -1 : x > y;
}

/* The numeric entries of dir in numeric order: their count, or a negative
 * errno; *ids malloc'd. */
static int list_numeric(const char *dir, unsigned long **ids, int max, char *why)
{
	char **names;
	*ids = NULL;
	int n = dc_list_dir(dir, &names);
	if (n < 0) {
		kfd_oom |= n == -ENOMEM;
		return n;
	}
	unsigned long *out = calloc((size_t)n + 1, sizeof(*out));
	if (!out) {
		kfd_oom = 1;
		dc_free_names(names, n);
		return -ENOMEM;
	}
	int count = 0;
	for (int i = 0; i < n; i++)
		if (numeric(names[i], &out[count]))
			count++;
	dc_free_names(names, n);
	if (count > max) {
		snprintf(why, WHY_SIZE, "%.300s lists %d entries, more than dmaconn accepts (%d)", dir, count, max);
		free(out);
		return -E2BIG;
	}
	qsort(out, (size_t)count, sizeof(*out), cmp_ulong);
	*ids = out;
	return count;
}

/* Reads the links of one kind ("io_links", "p2p_links") of node n; 0, or -1
 * with why.  A missing directory has no links (kernels before 6.0 have no
 * p2p_links; a recording need not list empty directories). */
static int read_links(struct node *n, const char *kind, int indirect, char *why)
{
	char dir[256], path[320];
	snprintf(dir, sizeof(dir), KFD_NODES "/%lu/%s", n->id, kind);
	unsigned long *ids;
	int count = list_numeric(dir, &ids, MAX_NODE_LINKS, why);
	if (count == -ENOENT || count == -ENOTDIR)
		return 0;
	if (count < 0) {
		if (count != -E2BIG) {
			char err[128];
			describe_errno(count, err, sizeof(err));
			snprintf(why, WHY_SIZE, "cannot list %.300s: %s", dir, err);
		}
		return -1;
	}
	struct link *grown = realloc(n->links, (size_t)(n->nlinks + count + 1) * sizeof(*grown));
	if (!grown) {
		free(ids);
		kfd_oom = 1;
		snprintf(why, WHY_SIZE, "out of memory");
		return -1;
	}
	n->links = grown;
	int rc = 0;
	for (int k = 0; k < count && rc == 0; k++) {
		struct props p;
		snprintf(path, sizeof(path), "%s/%lu/properties", dir, ids[k]);
		int got = read_props(path, &p, why);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			continue;
		struct link *l = &n->links[n->nlinks];
		memset(l, 0, sizeof(*l));
		if (!prop(&p, "type", &l->type) || !prop(&p, "node_to", &l->to)) {
			snprintf(why, WHY_SIZE, "%.300s lacks \"%s\"", path,
				 prop(&p, "type", &l->type) ? "node_to" : "type");
			rc = -1;
		} else {
			l->weight = prop_or(&p, "weight", 0);
			l->min_bw = prop_or(&p, "min_bandwidth", 0);
			l->max_bw = prop_or(&p, "max_bandwidth", 0);
			/* Kernels have always printed "flags"; without it, assume enabled. */
			l->flags = prop_or(&p, "flags", IOLINK_ENABLED);
			l->indirect = indirect;
			n->nlinks++;
		}
		free(p.items);
	}
	free(ids);
	return rc;
}

static struct node *node_by_id(struct kfd_topo *s, unsigned long long id)
{
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].id == id)
			return &s->nodes[i];
	return NULL;
}

/*
 * Reads every node (properties first, then the links of the GPUs).  Returns
 * 0; -1 with why when the topology is unusable (*fatal_n = 1 when not even
 * the GPUs could be counted).
 */
static int read_topology(struct kfd_topo *s, char *why, int *uncounted)
{
	unsigned long *ids;
	char path[256];
	*uncounted = 1;
	int count = list_numeric(KFD_NODES, &ids, MAX_NODES, why);
	if (count < 0) {
		if (count != -E2BIG) {
			char err[128];
			describe_errno(count, err, sizeof(err));
			const char *replay = dc_replay_file();
			if (count == -ENOENT)
				snprintf(why, WHY_SIZE, "no KFD topology at " KFD_NODES
					 " (%s; is the amdgpu driver loaded?)%s", err,
					 replay && *replay ? " (replayed)" : "");
			else
				snprintf(why, WHY_SIZE, "cannot list " KFD_NODES ": %s", err);
		}
		return -1;
	}
	s->nodes = calloc((size_t)count + 1, sizeof(*s->nodes));
	if (!s->nodes) {
		free(ids);
		kfd_oom = 1;
		snprintf(why, WHY_SIZE, "out of memory");
		return -1;
	}
	int failed = 0;
	for (int i = 0; i < count; i++) {
		struct props p;
		snprintf(path, sizeof(path), KFD_NODES "/%lu/properties", ids[i]);
		int got = read_props(path, &p, failed ? (char[WHY_SIZE]){ 0 } : why);
		if (got < 0)
			failed = 1;
		if (got <= 0)
			continue;
		struct node *n = &s->nodes[s->nnodes++];
		n->id = ids[i];
		n->cpu = -1;
		n->simd = prop_or(&p, "simd_count", 0);
		n->cpu_cores = prop_or(&p, "cpu_cores_count", 0);
		n->vendor = prop_or(&p, "vendor_id", 0);
		n->device = prop_or(&p, "device_id", 0);
		n->location = prop_or(&p, "location_id", 0);
		n->domain = prop_or(&p, "domain", 0);
		n->gfx = prop_or(&p, "gfx_target_version", 0);
		n->unique_id = prop_or(&p, "unique_id", 0);
		n->hive_id = prop_or(&p, "hive_id", 0);
		n->has_render_minor = prop(&p, "drm_render_minor", &n->render_minor);
		n->gpu = n->simd > 0 && n->vendor == AMD_VENDOR_ID;
		free(p.items);
		if (!n->gpu)
			continue;
		snprintf(path, sizeof(path), KFD_NODES "/%lu/name", n->id);
		read_line(path, n->kfd_name, sizeof(n->kfd_name));
		if (n->has_render_minor) {
			snprintf(path, sizeof(path), "/sys/class/drm/renderD%llu/device/product_name",
				 n->render_minor);
			read_line(path, n->marketing, sizeof(n->marketing));
		}
	}
	free(ids);

	s->gpus = calloc((size_t)s->nnodes + 1, sizeof(int));
	if (!s->gpus) {
		kfd_oom = 1;
		snprintf(why, WHY_SIZE, "out of memory");
		return -1;
	}
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].gpu)
			s->gpus[s->ngpus++] = i;
	*uncounted = 0;

	for (int g = 0; g < s->ngpus && !failed; g++) {
		struct node *n = &s->nodes[s->gpus[g]];
		if (read_links(n, "io_links", 0, why) != 0 || read_links(n, "p2p_links", 1, why) != 0)
			failed = 1;
	}
	if (failed)
		return -1;

	/* The CPU each GPU hangs off (for PCIe hop counts). */
	for (int g = 0; g < s->ngpus; g++) {
		struct node *n = &s->nodes[s->gpus[g]];
		for (int l = 0; l < n->nlinks && n->cpu < 0; l++) {
			struct node *to = n->links[l].indirect ? NULL : node_by_id(s, n->links[l].to);
			if (to && !to->gpu && to->simd == 0)
				n->cpu = (long)to->id;
		}
	}
	return 0;
}

/* PCI addresses and partitions: nodes of one package share unique_id and
 * bus/device; the lowest location_id of the group has the true function. */
static void identify(struct kfd_topo *s)
{
	for (int g = 0; g < s->ngpus; g++) {
		struct node *n = &s->nodes[s->gpus[g]];
		unsigned long long loc = n->location & 0xffff;
		n->pci.domain = (unsigned int)(n->domain & 0xffffffff);
		n->pci.bus = (unsigned int)(loc >> 8) & 0xff;
		n->pci.device = (unsigned int)(loc >> 3) & 0x1f;
		n->pci.function = (unsigned int)loc & 7;
		n->part_index = 0;
		n->part_count = 1;
	}
	for (int g = 0; g < s->ngpus; g++) {
		struct node *n = &s->nodes[s->gpus[g]];
		if (!n->unique_id)
			continue;
		int count = 0, index = 0;
		unsigned int fn = n->pci.function;
		for (int h = 0; h < s->ngpus; h++) {
			struct node *m = &s->nodes[s->gpus[h]];
			unsigned long long mloc = m->location & 0xffff;
			if (m->unique_id != n->unique_id || m->domain != n->domain ||
			    ((mloc >> 3) != ((n->location & 0xffff) >> 3)))
				continue;
			count++;
			index += h < g;
			fn = (unsigned int)(mloc & 7) < fn ? (unsigned int)(mloc & 7) : fn;
		}
		n->part_count = count;
		n->part_index = index;
		if (count > 1)
			n->pci.function = fn;
	}
}

static void set_identity(dmaconn_builder *b, const struct session *s, int ordinal)
{
	const struct node *n = &s->nodes[s->gpus[s->slots[ordinal]]];
	char buf[160], arch[32];
	unsigned long long v = n->gfx;
	snprintf(arch, sizeof(arch), "gfx%llu%llu%llx", v / 10000, (v / 100) % 100, v % 100);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NAME, n->marketing[0] ? n->marketing
								       : v ? arch : "AMD GPU");
	dc_pci_format(&n->pci, buf);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PCI_BUS_ID, buf);
	if (n->unique_id) {
		snprintf(buf, sizeof(buf), "GPU-%016llx", n->unique_id);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_UUID, buf);
	}
	snprintf(buf, sizeof(buf), "%lu", n->id);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_KFD_NODE, buf);
	if (v) {
		snprintf(buf, sizeof(buf), "%llu", v);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_GFX_TARGET_VERSION, buf);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_GFX_ARCH, arch);
	}
	if (n->marketing[0])
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_MARKETING_NAME, n->marketing);
	if (n->kfd_name[0])
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_KFD_NAME, n->kfd_name);
	snprintf(buf, sizeof(buf), "0x%04llx", n->device);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PCI_DEVICE_ID, buf);
	if (n->hive_id) {
		snprintf(buf, sizeof(buf), "0x%llx", n->hive_id);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_HIVE_ID, buf);
	}
	if (n->part_count > 1) {
		snprintf(buf, sizeof(buf), "%d", n->part_index);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PARTITION, buf);
		snprintf(buf, sizeof(buf), "%d", n->part_count);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PARTITIONS, buf);
	}
}

/* ------------------------------------------------------------ pair facts */

struct pair {
	const struct link *link; /* NULL: none */
	int enabled;
	int xgmi_links;   /* direct XGMI links, -1 unknown (partitions) */
	int connected;    /* the infinity_fabric value is non-zero */
	int value_if;     /* rocm/infinity_fabric */
	int value_p2p;    /* rocm/p2p */
	const char *count_source;
	int hops;         /* 0 unknown */
};

static struct pair pair_facts(const struct session *s, const struct node *a, const struct node *b)
{
	struct pair p;
	memset(&p, 0, sizeof(p));
	for (int l = 0; l < a->nlinks; l++) {
		const struct link *k = &a->links[l];
		if (k->to != b->id)
			continue;
		if (!p.link || (p.link->indirect && !k->indirect))
			p.link = k;
	}
	if (!p.link)
		return p;
	const struct link *k = p.link;
	p.enabled = (k->flags & IOLINK_ENABLED) != 0;
	if (k->type == IOLINK_TYPE_XGMI) {
		if (k->weight == XGMI_INTRA_PACKAGE_WEIGHT ||
		    (k->weight == XGMI_INTER_PACKAGE_PARTITION_WEIGHT && !k->max_bw)) {
			p.xgmi_links = -1; /* partitions: the kernel gives no link count */
			p.count_source = "partition";
			p.hops = 1;
		} else if (k->min_bw && k->max_bw) {
			p.xgmi_links = dc_links_by_bandwidth(k->max_bw, k->min_bw); /* -1: unreadable */
			p.count_source = "bandwidth";
		} else if (k->min_bw) {
			p.xgmi_links = 0; /* reached through other GPUs */
			p.count_source = "bandwidth";
		} else {
			/* No bandwidth (GPUs before MI200): a direct link is one link. */
			p.xgmi_links = k->weight == XGMI_HOP_WEIGHT;
			p.count_source = "weight";
		}
		if (!p.hops)
			p.hops = k->weight >= XGMI_HOP_WEIGHT ? (int)(k->weight / XGMI_HOP_WEIGHT) : 1;
	} else if (k->type == IOLINK_TYPE_PCIE && a->cpu >= 0 && b->cpu >= 0) {
		p.hops = a->cpu == b->cpu ? 2 : 3; /* rocm-smi's count: via one CPU, or two */
	}
	(void)s;
	if (!p.enabled)
		return p;
	p.value_if = p.xgmi_links > 0 ? p.xgmi_links : p.xgmi_links < 0 ? 1 : 0;
	p.value_p2p = !(k->flags & (IOLINK_NO_P2P_DMA | IOLINK_NO_ATOMICS_32 | IOLINK_NO_ATOMICS_64));
	return p;
}

static const char *type_name(unsigned long long type, char *buf, size_t len)
{
	switch (type) {
	case IOLINK_TYPE_XGMI:
		return "XGMI";
	case IOLINK_TYPE_PCIE:
		return "PCIE";
	case 1:
		return "HYPERTRANSPORT";
	}
	snprintf(buf, len, "TYPE%llu", type);
	return buf;
}

static void set_pair(dmaconn_builder *b, int i, int j, const struct pair *p)
{
	char buf[64], tbuf[32];
	const struct link *k = p->link;
	if (!k) {
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_LINK_TYPE, "NONE");
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PATH, "NONE");
		return;
	}
	const char *type = type_name(k->type, tbuf, sizeof(tbuf));
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_LINK_TYPE, type);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_KFD_LINK, k->indirect ? "p2p_links" : "io_links");
	if (p->hops) {
		snprintf(buf, sizeof(buf), "%d", p->hops);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_HOPS, buf);
	}
	snprintf(buf, sizeof(buf), "%llu", k->weight);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_WEIGHT, buf);
	snprintf(buf, sizeof(buf), "%llu", k->min_bw);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_MIN_BANDWIDTH_MBS, buf);
	snprintf(buf, sizeof(buf), "%llu", k->max_bw);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_MAX_BANDWIDTH_MBS, buf);
	if (k->type == IOLINK_TYPE_XGMI) {
		if (p->xgmi_links >= 0)
			snprintf(buf, sizeof(buf), "%d", p->xgmi_links);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XGMI_LINKS, p->xgmi_links >= 0 ? buf : "unknown");
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XGMI_LINKS_SOURCE, p->count_source);
	}
	snprintf(buf, sizeof(buf), "0x%llx", k->flags);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_FLAGS, buf);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ENABLED, p->enabled ? "yes" : "no");
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_COHERENT, k->flags & IOLINK_NON_COHERENT ? "no" : "yes");
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ATOMICS_32, k->flags & IOLINK_NO_ATOMICS_32 ? "no" : "yes");
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ATOMICS_64, k->flags & IOLINK_NO_ATOMICS_64 ? "no" : "yes");
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PEER_DMA, k->flags & IOLINK_NO_P2P_DMA ? "no" : "yes");
	const char *path = buf;
	if (!p->enabled)
		path = "NONE";
	else if (k->type == IOLINK_TYPE_XGMI && p->xgmi_links > 0)
		snprintf(buf, sizeof(buf), "XGMI%d", p->xgmi_links);
	else if (k->type == IOLINK_TYPE_XGMI)
		path = p->xgmi_links < 0 ? "XGMI?" : "XGMI+";
	else
		path = type;
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PATH, path);
}

/* ---------------------------------------------------------------- ROCm SMI */

static pthread_mutex_t rsmi_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;

static void dc_kfd_fork(int phase)
{
	static pthread_mutex_t *const locks[] = { &topo_lock, &rsmi_lock };
	dc_fork_locks(phase, locks, (int)(sizeof(locks) / sizeof(locks[0])));
}
static void *rsmi_handle;      /* a library dmaconn opened, kept like NVML */
static char rsmi_path[4096];

static void dc_kfd_forget(void);

static void dc_kfd_shutdown(void)
{
	dc_kfd_forget();
	pthread_mutex_lock(&rsmi_lock);
	if (rsmi_handle)
		dlclose(rsmi_handle);
	rsmi_handle = NULL;
	rsmi_path[0] = '\0';
	pthread_mutex_unlock(&rsmi_lock);
}

static void rsmi_describe(const struct rsmi_api *api, rsmi_status_t r, char *out, size_t len)
{
	const char *text = NULL;
	const char *name = rsmi_status_name(r);
	char code[32];
	if (api->rsmi_status_string && api->rsmi_status_string(r, &text) != RSMI_STATUS_SUCCESS)
		text = NULL;
	if (!name) {
		snprintf(code, sizeof(code), "status %u", (unsigned int)r);
		name = code;
	}
	if (text && *text)
		snprintf(out, len, "%.200s (%s)", text, name);
	else
		snprintf(out, len, "%s", name);
}

/* Binds the functions from handle; NULL, or the first required one missing. */
static const char *rsmi_bind(void *handle, struct rsmi_api *api)
{
	memset(api, 0, sizeof(*api));
	const struct dc_symbol syms[] = {
#define RSMI_SYMBOL_(fn, ret, params, required) DC_SYMBOL_OF(api, fn, required),
		RSMI_FUNCTIONS(RSMI_SYMBOL_)
#undef RSMI_SYMBOL_
	};
	return dc_lib_bind(handle, syms, sizeof(syms) / sizeof(syms[0]), NULL);
}

static const struct dc_library dc_kfd_libraries[] = {
	{ "rocm_smi", RSMI_SONAME, "DMACONN_ROCM_SMI_LIBRARY", "ROCm SMI", NULL },
};

/*
 * The ROCm SMI library to cross-check with: 1 with *api bound (and *release,
 * a handle to dlclose afterwards, for a replay's component), 0 when there is
 * none to use (silently), -1 with why (a warning).  rsmi_lock held.
 */
static int rsmi_open(struct rsmi_api *api, void **release, char *why)
{
	*release = NULL;
	const char *replay = dc_replay_file();
	if (replay && *replay) {
		/* A recording says whether ROCm SMI was there; the component exports
		 * its functions only when it replays them. */
		void *h;
		const struct dmaconn_replay_ops *ops;
		char err[WHY_SIZE];
		if (dc_replay_open(&h, &ops, err, sizeof(err)) != 1)
			return 0;
		if (!ops->library_load_error || ops->library_load_error("rocm_smi") || rsmi_bind(h, api)) {
			dlclose(h);
			return 0;
		}
		*release = h;
		return 1;
	}
	const char *override;
	const char *path = dc_kfd_libraries[0].soname;
	if (dc_library_override(dc_kfd_libraries[0].override, &override, why, WHY_SIZE) != 0)
		return -1;
	if (override) {
		path = override;
	} else {
		/* The library reads the real /sys: comparing it with another root
		 * would only report the difference between the two. */
		if (dc_config()->sysfs_root)
			return 0;
	}
	if (!rsmi_handle || strcmp(rsmi_path, path)) {
		void *h = dc_lib_open(path, dc_kfd_libraries[0].what, why, WHY_SIZE);
		if (!h)
			return path == override ? -1 : 0; /* not installed: nothing to cross-check with */
		if (rsmi_handle)
			dlclose(rsmi_handle);
		rsmi_handle = h;
		snprintf(rsmi_path, sizeof(rsmi_path), "%s", path);
	}
	const char *missing = rsmi_bind(rsmi_handle, api);
	if (missing) {
		snprintf(why, WHY_SIZE, "%.400s lacks %s", rsmi_path, missing);
		return -1;
	}
	return 1;
}

/* rsmi_dev_pci_id_get's BDF id (domain in bits 32-63, partition in 28-31). */
static void bdf_of(uint64_t id, struct dc_pci *p)
{
	p->domain = (unsigned int)(id >> 32);
	p->bus = (unsigned int)(id >> 8) & 0xff;
	p->device = (unsigned int)(id >> 3) & 0x1f;
	p->function = (unsigned int)id & 7;
}

static void xgmi_text(int xgmi, int links, char *out, size_t len)
{
	if (!xgmi)
		snprintf(out, len, "no XGMI");
	else if (links < 0)
		snprintf(out, len, "XGMI");
	else
		snprintf(out, len, "%d XGMI link%s", links, links == 1 ? "" : "s");
}

/*
 * Compares every visible pair's XGMI type and link count with ROCm SMI's
 * (rsmi_topo_get_link_type, rsmi_minmax_bandwidth_get as RCCL reads it).
 * Partitioned GPUs are not compared (their ROCm SMI ids differ by kernel).
 */
static void cross_check(dmaconn_builder *b, const struct session *s, const struct pair *pairs)
{
	char why[WHY_SIZE] = "";
	struct rsmi_api api;
	void *release = NULL;
	int n = s->nslots;
	pthread_mutex_lock(&rsmi_lock);
	int rc = rsmi_open(&api, &release, why);
	if (rc <= 0) {
		pthread_mutex_unlock(&rsmi_lock);
		if (rc < 0)
			dmaconn_builder_warn(b, "%s: %s; XGMI links not cross-checked with ROCm SMI", s->label, why);
		return;
	}
	char err[256];
	int *index = calloc((size_t)n + 1, sizeof(int));
	uint32_t count = 0;
	rsmi_status_t r = RSMI_STATUS_SUCCESS;
	if (!index) {
		snprintf(why, WHY_SIZE, "out of memory");
		goto out_noinit;
	}
	if ((r = api.rsmi_init(0)) != RSMI_STATUS_SUCCESS) {
		rsmi_describe(&api, r, err, sizeof(err));
		snprintf(why, WHY_SIZE, "rsmi_init failed: %s", err);
		goto out_noinit;
	}
	if ((r = api.rsmi_num_monitor_devices(&count)) != RSMI_STATUS_SUCCESS) {
		rsmi_describe(&api, r, err, sizeof(err));
		snprintf(why, WHY_SIZE, "rsmi_num_monitor_devices failed: %s", err);
		goto out;
	}
	for (int i = 0; i < n; i++)
		index[i] = -1;
	int missing = -1;
	for (uint32_t d = 0; d < count && d < 65536; d++) {
		uint64_t id = 0;
		if ((r = api.rsmi_dev_pci_id_get(d, &id)) != RSMI_STATUS_SUCCESS) {
			rsmi_describe(&api, r, err, sizeof(err));
			snprintf(why, WHY_SIZE, "rsmi_dev_pci_id_get(%u) failed: %s", d, err);
			goto out;
		}
		struct dc_pci p;
		bdf_of(id, &p);
		for (int i = 0; i < n; i++) {
			const struct node *g = &s->nodes[s->gpus[s->slots[i]]];
			if (g->part_count == 1 && dc_pci_equal(&g->pci, &p))
				index[i] = (int)d;
		}
	}
	int disagree = 0;
	char first[300] = "";
	for (int i = 0; i < n; i++) {
		const struct node *g = &s->nodes[s->gpus[s->slots[i]]];
		if (g->part_count == 1 && index[i] < 0 && missing < 0)
			missing = i;
	}
	if (missing >= 0) {
		char bus[DC_PCI_BUS_ID_SIZE];
		dc_pci_format(&s->nodes[s->gpus[s->slots[missing]]].pci, bus);
		disagree++;
		snprintf(first, sizeof(first), "GPU %d (%s) is not among its %u devices", missing, bus, count);
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j || index[i] < 0 || index[j] < 0)
				continue;
			const struct pair *p = &pairs[(size_t)i * (size_t)n + (size_t)j];
			uint64_t hops = 0;
			RSMI_IO_LINK_TYPE type = RSMI_IOLINK_TYPE_UNDEFINED;
			r = api.rsmi_topo_get_link_type((uint32_t)index[i], (uint32_t)index[j], &hops, &type);
			if (r != RSMI_STATUS_SUCCESS) {
				rsmi_describe(&api, r, err, sizeof(err));
				snprintf(why, WHY_SIZE, "rsmi_topo_get_link_type(%d, %d) failed: %s", index[i],
					 index[j], err);
				goto out;
			}
			int ours_xgmi = p->link && p->enabled && p->link->type == IOLINK_TYPE_XGMI;
			int theirs_xgmi = type == RSMI_IOLINK_TYPE_XGMI;
			int ours = p->xgmi_links, theirs = -1;
			if (ours_xgmi && theirs_xgmi && ours > 0 && api.rsmi_minmax_bandwidth_get) {
				uint64_t lo = 0, hi = 0;
				r = api.rsmi_minmax_bandwidth_get((uint32_t)index[i], (uint32_t)index[j], &lo, &hi);
				if (r != RSMI_STATUS_SUCCESS && r != RSMI_STATUS_NOT_SUPPORTED) {
					rsmi_describe(&api, r, err, sizeof(err));
					snprintf(why, WHY_SIZE, "rsmi_minmax_bandwidth_get(%d, %d) failed: %s",
						 index[i], index[j], err);
					goto out;
				}
				if (r == RSMI_STATUS_SUCCESS && lo && hi)
					theirs = dc_links_by_bandwidth(hi, lo);
			}
			if (ours_xgmi == theirs_xgmi && (theirs < 0 || theirs == ours))
				continue;
			if (!disagree++) {
				char a[64], c[64];
				xgmi_text(ours_xgmi, ours_xgmi ? ours : 0, a, sizeof(a));
				xgmi_text(theirs_xgmi, theirs, c, sizeof(c));
				snprintf(first, sizeof(first), "GPU %d -> GPU %d: KFD %s, ROCm SMI %s", i, j, a, c);
			}
		}
	}
	if (disagree)
		dmaconn_builder_warn(b,
				     "%s: ROCm SMI disagrees with the KFD topology on %d pair%s (first: %s); "
				     "the matrix follows the KFD topology",
				     s->label, disagree, disagree == 1 ? "" : "s", first);
out:
	api.rsmi_shut_down();
out_noinit:
	if (release)
		dlclose(release);
	pthread_mutex_unlock(&rsmi_lock);
	free(index);
	if (why[0])
		dmaconn_builder_warn(b, "%s: %s; XGMI links not cross-checked with ROCm SMI", s->label, why);
}

/* --------------------------------------------------------------- detectors */

/* Reads the KFD topology (below DMACONN_SYSFS_ROOT, the discovery's key)
 * into a new kfd_topo; NULL when out of memory. */
static void *discover_topo(void)
{
	struct kfd_topo *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	atomic_init(&t->refs, 1);
	kfd_oom = 0;
	t->failed = read_topology(t, t->why, &t->uncounted) != 0;
	if (kfd_oom) {
		topo_release(t);
		return NULL;
	}
	if (!t->uncounted)
		identify(t);
	return t;
}

/* The last discovery, under topo_lock. */
static struct dc_discovery kfd_discovery =
	DC_DISCOVERY_OF(struct kfd_topo, &topo_lock, discover_topo, topo_release);

/* The topology to compute views from: read on first use, again for a fresh
 * detection or another DMACONN_SYSFS_ROOT.  A new reference, or NULL. */
static struct kfd_topo *topo_get(void)
{
	return dc_discovery_get(&kfd_discovery, dc_config()->sysfs_root);
}

DC_DISCOVERY_HOOKS(dc_kfd, kfd_discovery, topo_get)

static int detect(dmaconn_builder *b, const char *label, int p2p)
{
	char why[WHY_SIZE] = "";
	struct session s = { .label = label, .p2p = p2p };
	int rc = dc_replay_check();
	if (rc != DMACONN_OK)
		return rc;
	if (!(s.t = topo_get()))
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	s.nodes = s.t->nodes;
	s.nnodes = s.t->nnodes;
	s.gpus = s.t->gpus;
	s.ngpus = s.t->ngpus;
	int failed = s.t->failed;
	snprintf(why, sizeof(why), "%s", s.t->why);
	rc = DMACONN_OK;
	unsigned long long *ids = calloc((size_t)s.ngpus + 1, sizeof(*ids));
	if (!ids) {
		rc = dc_fail(DMACONN_ENOMEM, "out of memory");
		goto done;
	}
	for (int g = 0; g < s.ngpus; g++)
		ids[g] = s.nodes[s.gpus[g]].unique_id;
	if (!s.t->uncounted)
		s.nslots = dc_hip_visible(ids, s.ngpus, dc_getenv("ROCR_VISIBLE_DEVICES"),
					  dc_getenv("HIP_VISIBLE_DEVICES"), dc_getenv("CUDA_VISIBLE_DEVICES"),
					  &s.slots);
	free(ids);
	if (s.nslots < 0 || dmaconn_builder_set_size(b, s.nslots) != DMACONN_OK) {
		rc = dc_fail(DMACONN_ENOMEM, "out of memory");
		goto done;
	}
	for (int i = 0; i < s.nslots; i++)
		set_identity(b, &s, i);
	if (failed) {
		dc_builder_unavailable(b);
		dmaconn_builder_warn(b, "%s: %s; assuming no DMA connectivity (%d device%s)", label, why,
				     s.nslots, s.nslots == 1 ? "" : "s");
		goto done;
	}
	int n = s.nslots;
	struct pair *pairs = calloc((size_t)n * (size_t)n + 1, sizeof(*pairs));
	if (!pairs) {
		rc = dc_fail(DMACONN_ENOMEM, "out of memory");
		goto done;
	}
	for (int i = 0; i < n; i++) {
		const struct node *a = &s.nodes[s.gpus[s.slots[i]]];
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const struct node *c = &s.nodes[s.gpus[s.slots[j]]];
			struct pair *p = &pairs[(size_t)i * (size_t)n + (size_t)j];
			*p = pair_facts(&s, a, c);
			set_pair(b, i, j, p);
			dmaconn_builder_set(b, i, j, p2p ? p->value_p2p : p->value_if);
		}
	}
	if (n > 1)
		cross_check(b, &s, pairs);
	free(pairs);
done:
	session_free(&s);
	return rc;
}

/* A view: the detection, then the host's reasons for what it found. */
static int kfd_view(dmaconn_builder *b, const char *label, int p2p)
{
	int rc = detect(b, label, p2p);
	if (rc == DMACONN_OK)
		dc_reasons_vendor(b, 1, p2p);
	return rc;
}

static int dc_kfd_detect_infinity_fabric(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return kfd_view(b, "rocm/infinity_fabric", 0);
}

static int dc_kfd_detect_p2p(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return kfd_view(b, "rocm/p2p", 1);
}

static const struct dc_view dc_kfd_views[] = {
	{ "infinity_fabric", dc_kfd_detect_infinity_fabric },
	{ "p2p", dc_kfd_detect_p2p },
};

/* dc_backend.present: the KFD device, or its topology in sysfs. */
static int dc_kfd_present(const char *root)
{
	return dc_live_exists(root, "/dev/kfd") || dc_live_exists(root, "/sys/class/kfd/kfd/topology/nodes");
}

/* What ROCr and HIP read, HIP also CUDA's variable. */
static const struct dc_visibility dc_kfd_visibility[] = {
	{ "ROCR_VISIBLE_DEVICES", 1, NULL },
	{ "HIP_VISIBLE_DEVICES", 1, NULL },
	{ "CUDA_VISIBLE_DEVICES", 1, NULL },
	{ "GPU_DEVICE_ORDINAL", 1, NULL },
};

const struct dc_backend dc_backend_kfd = { DC_BACKEND_FIELDS("kfd", DMACONN_DEVICE_ROCM, dc_kfd) };
