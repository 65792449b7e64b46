/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AMD detectors on the amdgpu KFD topology, the kernel's own description of
 * every agent and link (/sys/class/kfd/kfd/topology/nodes/N/{properties,
 * io_links/K/properties, p2p_links/K/properties}).  It needs no library, is
 * what ROCr and RCCL read, and is read through dc_read_file()/dc_list_dir()
 * so that a replay answers it from its "files" section.
 *
 * Flow: discovery lists the nodes -> keeps the AMD GPU nodes (simd_count >
 * 0, vendor 0x1002) in node order -> fills the node model (src/model/
 * model.h): identities, partitions, every link by kind with its remote end,
 * the CPU each GPU hangs off, and per ordered pair the GPU's io_link
 * (direct, XGMI within a hive) or else its p2p_link (indirect, PCIe peers)
 * to the other with its link count and hops.  A view orders the GPUs as HIP
 * would (order_hip.c), projects the model (kfd_view.c: matrix and pair
 * facts) and, optionally, cross-checks with ROCm SMI where that library is
 * installed.
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
#include "kfd_view.h"
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

/* ------------------------------------------------------------- discovery */

/* What discovery keeps of every node it read (in node order) until the
 * links name their remote ends. */
struct seen {
	unsigned long id;
	enum dc_link_end kind; /* DC_END_DEVICE: an AMD GPU; DC_END_CPU: no SIMDs */
	int device;            /* DC_END_DEVICE: its index in the model */
	unsigned long long location, domain;
};

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

/* The first node read with that id, NULL when none (seen is in id order). */
static const struct seen *seen_by_id(const struct seen *seen, int n, unsigned long long id)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (seen[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && seen[lo].id == id ? &seen[lo] : NULL;
}

static enum dc_link_kind link_kind(unsigned long long type)
{
	switch (type) {
	case IOLINK_TYPE_XGMI:
		return DC_LINK_XGMI;
	case IOLINK_TYPE_PCIE:
		return DC_LINK_PCIE;
	case 1:
		return DC_LINK_HYPERTRANSPORT;
	}
	return DC_LINK_OTHER;
}

/* One link from its properties; 0, or -1 with why. */
static int parse_link(const char *path, const struct props *p, int indirect, struct dc_link_info *l, char *why)
{
	unsigned long long type;
	memset(l, 0, sizeof(*l));
	if (!prop(p, "type", &type) || !prop(p, "node_to", &l->to_node)) {
		snprintf(why, WHY_SIZE, "%.300s lacks \"%s\"", path, prop(p, "type", &type) ? "node_to" : "type");
		return -1;
	}
	l->kind = link_kind(type);
	l->vendor_type = type;
	l->end = DC_END_OTHER;
	l->to = -1;
	l->indirect = indirect;
	l->weight = prop_or(p, "weight", 0);
	l->min_mbs = prop_or(p, "min_bandwidth", 0);
	l->max_mbs = prop_or(p, "max_bandwidth", 0);
	/* Kernels have always printed "flags"; without it, assume enabled. */
	unsigned long long flags = prop_or(p, "flags", IOLINK_ENABLED);
	l->vendor_flags = flags;
	l->enabled = (flags & IOLINK_ENABLED) != 0;
	l->coherent = !(flags & IOLINK_NON_COHERENT);
	l->atomics_32 = !(flags & IOLINK_NO_ATOMICS_32);
	l->atomics_64 = !(flags & IOLINK_NO_ATOMICS_64);
	l->peer_dma = !(flags & IOLINK_NO_P2P_DMA);
	return 0;
}

/* Reads the links of one kind ("io_links", "p2p_links") of the device d,
 * node id, into d->links; 0, or -1 with why.  A missing directory has no
 * links (kernels before 6.0 have no p2p_links; a recording need not list
 * empty directories). */
static int read_links(struct dc_device *d, unsigned long id, const char *kind, int indirect, char *why)
{
	char dir[256], path[320];
	snprintf(dir, sizeof(dir), KFD_NODES "/%lu/%s", id, kind);
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
	struct dc_link_info *grown = realloc(d->links, (size_t)(d->nlinks + count + 1) * sizeof(*grown));
	if (!grown) {
		free(ids);
		kfd_oom = 1;
		snprintf(why, WHY_SIZE, "out of memory");
		return -1;
	}
	d->links = grown;
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
		rc = parse_link(path, &p, indirect, &d->links[d->nlinks], why);
		d->nlinks += rc == 0;
		free(p.items);
	}
	free(ids);
	return rc;
}

/* The identity facts of the GPU node id, from its properties p. */
static void read_gpu(const struct props *p, unsigned long id, struct dc_gpu *gpu, struct dc_device *d)
{
	char path[256];
	unsigned long long minor;
	d->topo_node = id;
	d->pci_device_id = prop_or(p, "device_id", 0);
	d->isa_version = prop_or(p, "gfx_target_version", 0);
	d->unique_id = prop_or(p, "unique_id", 0);
	d->fabric_id = prop_or(p, "hive_id", 0);
	snprintf(path, sizeof(path), KFD_NODES "/%lu/name", id);
	read_line(path, d->topo_name, sizeof(d->topo_name));
	if (prop(p, "drm_render_minor", &minor)) {
		snprintf(path, sizeof(path), "/sys/class/drm/renderD%llu/device/product_name", minor);
		read_line(path, d->product_name, sizeof(d->product_name));
	}
	unsigned long long v = d->isa_version;
	char arch[32];
	snprintf(arch, sizeof(arch), "gfx%llu%llu%llx", v / 10000, (v / 100) % 100, v % 100);
	dc_copy_text(gpu->name, sizeof(gpu->name), d->product_name[0] ? d->product_name : v ? arch : "AMD GPU",
		     sizeof(d->product_name));
	if (d->unique_id)
		snprintf(gpu->uuid, sizeof(gpu->uuid), "GPU-%016llx", d->unique_id);
}

/*
 * Reads every node's properties into m (the AMD GPUs, in node order) and
 * seen (every node read).  Returns the number of nodes read, or -1 with why
 * when not even the GPUs could be counted; *failed is set, with why, when a
 * node could not be read.
 */
static int read_nodes(struct dc_model **out, struct seen **seen_out, char *why, int *failed)
{
	unsigned long *ids;
	char path[256];
	*out = NULL;
	*seen_out = NULL;
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
	/* Room for every node, of which the GPUs take the first slots. */
	struct dc_model *m = dc_model_new(count, 1);
	struct seen *seen = calloc((size_t)count + 1, sizeof(*seen));
	if (!m || !seen) {
		free(ids);
		free(seen);
		dc_model_release(m);
		kfd_oom = 1;
		snprintf(why, WHY_SIZE, "out of memory");
		return -1;
	}
	int nseen = 0, ngpus = 0;
	for (int i = 0; i < count; i++) {
		struct props p;
		snprintf(path, sizeof(path), KFD_NODES "/%lu/properties", ids[i]);
		int got = read_props(path, &p, *failed ? (char[WHY_SIZE]){ 0 } : why);
		if (got < 0)
			*failed = 1;
		if (got <= 0)
			continue;
		struct seen *n = &seen[nseen++];
		n->id = ids[i];
		n->device = -1;
		unsigned long long simd = prop_or(&p, "simd_count", 0);
		n->kind = simd == 0 ? DC_END_CPU : DC_END_OTHER;
		if (simd > 0 && prop_or(&p, "vendor_id", 0) == AMD_VENDOR_ID) {
			n->kind = DC_END_DEVICE;
			n->device = ngpus++;
			n->location = prop_or(&p, "location_id", 0);
			n->domain = prop_or(&p, "domain", 0);
			read_gpu(&p, n->id, &m->ids[n->device], &m->devices[n->device]);
		}
		free(p.items);
	}
	free(ids);
	m->n = ngpus;
	*out = m;
	*seen_out = seen;
	return nseen;
}

/* PCI addresses and partitions: nodes of one package share unique_id and
 * bus/device; the lowest location_id of the group has the true function. */
static void identify(struct dc_model *m, const struct seen *seen, int nseen)
{
	for (int k = 0; k < nseen; k++) {
		if (seen[k].kind != DC_END_DEVICE)
			continue;
		unsigned long long loc = seen[k].location & 0xffff;
		struct dc_pci *pci = &m->ids[seen[k].device].pci;
		pci->domain = (unsigned int)(seen[k].domain & 0xffffffff);
		pci->bus = (unsigned int)(loc >> 8) & 0xff;
		pci->device = (unsigned int)(loc >> 3) & 0x1f;
		pci->function = (unsigned int)loc & 7;
	}
	for (int k = 0; k < nseen; k++) {
		const struct seen *n = &seen[k];
		if (n->kind != DC_END_DEVICE || !m->devices[n->device].unique_id)
			continue;
		int count = 0, index = 0;
		unsigned int fn = m->ids[n->device].pci.function;
		for (int h = 0; h < nseen; h++) {
			const struct seen *o = &seen[h];
			unsigned long long oloc = o->location & 0xffff;
			if (o->kind != DC_END_DEVICE ||
			    m->devices[o->device].unique_id != m->devices[n->device].unique_id ||
			    o->domain != n->domain || ((oloc >> 3) != ((n->location & 0xffff) >> 3)))
				continue;
			count++;
			index += o->device < n->device;
			fn = (unsigned int)(oloc & 7) < fn ? (unsigned int)(oloc & 7) : fn;
		}
		m->devices[n->device].partitions = count;
		m->devices[n->device].partition = index;
		if (count > 1)
			m->ids[n->device].pci.function = fn;
	}
}

/* The link facts of the ordered pair of GPUs (a, b), from a's links. */
static void model_pair(const struct dc_model *m, int a, int b, struct dc_peer *p)
{
	const struct dc_device *d = &m->devices[a];
	p->link = -1;
	for (int l = 0; l < d->nlinks; l++) {
		const struct dc_link_info *k = &d->links[l];
		if (k->end != DC_END_DEVICE || k->to_node != m->devices[b].topo_node)
			continue;
		if (p->link < 0 || (d->links[p->link].indirect && !k->indirect))
			p->link = l;
	}
	if (p->link < 0)
		return;
	const struct dc_link_info *k = &d->links[p->link];
	if (k->kind == DC_LINK_XGMI) {
		if (k->weight == XGMI_INTRA_PACKAGE_WEIGHT ||
		    (k->weight == XGMI_INTER_PACKAGE_PARTITION_WEIGHT && !k->max_mbs)) {
			p->link_count = -1; /* partitions: the kernel gives no link count */
			p->count_source = "partition";
			p->hops = 1;
		} else if (k->min_mbs && k->max_mbs) {
			p->link_count = dc_links_by_bandwidth(k->max_mbs, k->min_mbs); /* -1: unreadable */
			p->count_source = "bandwidth";
		} else if (k->min_mbs) {
			p->link_count = 0; /* reached through other GPUs */
			p->count_source = "bandwidth";
		} else {
			/* No bandwidth (GPUs before MI200): a direct link is one link. */
			p->link_count = k->weight == XGMI_HOP_WEIGHT;
			p->count_source = "weight";
		}
		if (!p->hops)
			p->hops = k->weight >= XGMI_HOP_WEIGHT ? (int)(k->weight / XGMI_HOP_WEIGHT) : 1;
	} else if (k->kind == DC_LINK_PCIE && d->host_cpu >= 0 && m->devices[b].host_cpu >= 0) {
		/* rocm-smi's count: via one CPU, or two */
		p->hops = d->host_cpu == m->devices[b].host_cpu ? 2 : 3;
	}
}

/*
 * The links of every GPU, their remote ends, the CPU each hangs off, and the
 * facts of every ordered pair; 0, or -1 with why.
 */
static int read_links_of(struct dc_model *m, const struct seen *seen, int nseen, char *why)
{
	for (int k = 0; k < nseen; k++) {
		if (seen[k].kind != DC_END_DEVICE)
			continue;
		struct dc_device *d = &m->devices[seen[k].device];
		if (read_links(d, seen[k].id, "io_links", 0, why) != 0 ||
		    read_links(d, seen[k].id, "p2p_links", 1, why) != 0)
			return -1;
	}
	for (int g = 0; g < m->n; g++) {
		struct dc_device *d = &m->devices[g];
		for (int l = 0; l < d->nlinks; l++) {
			struct dc_link_info *k = &d->links[l];
			const struct seen *to = seen_by_id(seen, nseen, k->to_node);
			k->end = to ? to->kind : DC_END_OTHER;
			k->to = to ? to->device : -1;
			/* The CPU it hangs off (for PCIe hop counts): its first io_link to one. */
			if (d->host_cpu < 0 && !k->indirect && k->end == DC_END_CPU)
				d->host_cpu = (long)k->to_node;
		}
	}
	int n = m->n;
	if (n > 0 && !(m->peers = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*m->peers)))) {
		kfd_oom = 1;
		snprintf(why, WHY_SIZE, "out of memory");
		return -1;
	}
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++)
			if (a != b)
				model_pair(m, a, b, &m->peers[dc_pair_index(a, b, n)]);
	return 0;
}

/* Reads the KFD topology (below DMACONN_SYSFS_ROOT, the discovery's key)
 * into a new model: vendor_ok, or why not (no devices when not even the GPUs
 * could be counted).  NULL when out of memory. */
static void *discover_model(void)
{
	char why[WHY_SIZE] = "";
	struct seen *seen;
	struct dc_model *m;
	int failed = 0;
	kfd_oom = 0;
	int nseen = read_nodes(&m, &seen, why, &failed);
	if (nseen >= 0) {
		identify(m, seen, nseen);
		failed = failed || read_links_of(m, seen, nseen, why) != 0;
	} else if (!kfd_oom) {
		failed = 1;
		m = dc_model_new(0, 1);
	}
	free(seen);
	if (kfd_oom || !m) {
		dc_model_release(m);
		return NULL;
	}
	m->vendor_ok = !failed;
	snprintf(m->why, sizeof(m->why), "%s", why);
	return m;
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
static void cross_check(dmaconn_builder *b, const char *label, const struct dc_model *m, const int *slots, int n)
{
	char why[WHY_SIZE] = "";
	struct rsmi_api api;
	void *release = NULL;
	pthread_mutex_lock(&rsmi_lock);
	int rc = rsmi_open(&api, &release, why);
	if (rc <= 0) {
		pthread_mutex_unlock(&rsmi_lock);
		if (rc < 0)
			dmaconn_builder_warn(b, "%s: %s; XGMI links not cross-checked with ROCm SMI", label, why);
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
		for (int i = 0; i < n; i++)
			if (m->devices[slots[i]].partitions == 1 && dc_pci_equal(&m->ids[slots[i]].pci, &p))
				index[i] = (int)d;
	}
	int disagree = 0;
	char first[300] = "";
	for (int i = 0; i < n; i++)
		if (m->devices[slots[i]].partitions == 1 && index[i] < 0 && missing < 0)
			missing = i;
	if (missing >= 0) {
		char bus[DC_PCI_BUS_ID_SIZE];
		dc_pci_format(&m->ids[slots[missing]].pci, bus);
		disagree++;
		snprintf(first, sizeof(first), "GPU %d (%s) is not among its %u devices", missing, bus, count);
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j || index[i] < 0 || index[j] < 0)
				continue;
			const struct dc_peer *p = &m->peers[dc_pair_index(slots[i], slots[j], m->n)];
			uint64_t hops = 0;
			RSMI_IO_LINK_TYPE type = RSMI_IOLINK_TYPE_UNDEFINED;
			r = api.rsmi_topo_get_link_type((uint32_t)index[i], (uint32_t)index[j], &hops, &type);
			if (r != RSMI_STATUS_SUCCESS) {
				rsmi_describe(&api, r, err, sizeof(err));
				snprintf(why, WHY_SIZE, "rsmi_topo_get_link_type(%d, %d) failed: %s", index[i],
					 index[j], err);
				goto out;
			}
			int ours_xgmi = dc_kfd_view_xgmi(m, slots[i], slots[j]);
			int theirs_xgmi = type == RSMI_IOLINK_TYPE_XGMI;
			int ours = p->link_count, theirs = -1;
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
				     label, disagree, disagree == 1 ? "" : "s", first);
out:
	api.rsmi_shut_down();
out_noinit:
	if (release)
		dlclose(release);
	pthread_mutex_unlock(&rsmi_lock);
	free(index);
	if (why[0])
		dmaconn_builder_warn(b, "%s: %s; XGMI links not cross-checked with ROCm SMI", label, why);
}

/* --------------------------------------------------------------- detectors */

static void model_release(void *m)
{
	dc_model_release(m);
}

/* The last discovery, under topo_lock. */
static struct dc_discovery kfd_discovery =
	DC_DISCOVERY_OF(struct dc_model, &topo_lock, discover_model, model_release);

/* The model to compute views from: read on first use, again for a fresh
 * detection or another DMACONN_SYSFS_ROOT.  A new reference, or NULL. */
static struct dc_model *model_get(void)
{
	return dc_discovery_get(&kfd_discovery, dc_config()->sysfs_root);
}

DC_DISCOVERY_HOOKS(dc_kfd, kfd_discovery, model_get)

/* The view of row (a link filter or a peer rule) over the model m: the
 * devices in HIP's order, the pairs, then the row's reasons for what it
 * found. */
static int kfd_view(dmaconn_builder *b, struct dc_model *m, const struct dc_connection *row)
{
	if (!row || (row->counts != DC_COUNTS_LINKS && row->counts != DC_COUNTS_PEER))
		return dc_fail(DMACONN_EINVAL, "KFD has no view of this connection type");
	const char *label = row->label;
	int rc = DMACONN_OK;
	int *slots = NULL, n = 0;
	unsigned long long *ids = calloc((size_t)m->n + 1, sizeof(*ids));
	if (!ids) {
		n = -1;
	} else {
		for (int g = 0; g < m->n; g++)
			ids[g] = m->devices[g].unique_id;
		if (m->n > 0)
			n = dc_hip_visible(ids, m->n, dc_getenv("ROCR_VISIBLE_DEVICES"), dc_getenv("HIP_VISIBLE_DEVICES"),
					   dc_getenv("CUDA_VISIBLE_DEVICES"), &slots);
		free(ids);
	}
	if (n < 0 || dmaconn_builder_set_size(b, n) != DMACONN_OK) {
		rc = dc_fail(DMACONN_ENOMEM, "out of memory");
		goto done;
	}
	for (int i = 0; i < n; i++)
		dc_kfd_view_identity(b, m, slots[i], i);
	if (!m->vendor_ok) {
		dc_builder_unavailable(b);
		dmaconn_builder_warn(b, "%s: %s; assuming no DMA connectivity (%d device%s)", label, m->why, n,
				     n == 1 ? "" : "s");
		goto done;
	}
	dc_kfd_view_pairs(b, m, slots, n, row);
	if (n > 1)
		cross_check(b, label, m, slots, n);
done:
	free(slots);
	if (rc == DMACONN_OK)
		dc_reasons_of(b, row, NULL, NULL);
	return rc;
}

DC_MODEL_DETECTOR(dc_kfd, model_get, kfd_view)

/* dc_backend.present: the KFD device, or its topology in sysfs. */
static int dc_kfd_present(const char *root)
{
	return dc_live_exists(root, "/dev/kfd") || dc_live_exists(root, "/sys/class/kfd/kfd/topology/nodes");
}

/* What ROCr and HIP read, HIP also CUDA's variable. */
static const struct dc_visibility dc_kfd_visibility[] = {
	{ "ROCR_VISIBLE_DEVICES", 1, NULL, 0 },
	{ "HIP_VISIBLE_DEVICES", 1, NULL, 0 },
	{ "CUDA_VISIBLE_DEVICES", 1, NULL, 0 },
	{ "GPU_DEVICE_ORDINAL", 1, NULL, 1 },
};

const struct dc_backend dc_backend_kfd = { DC_BACKEND_FIELDS("kfd", DMACONN_DEVICE_ROCM, dc_kfd),
					   .source = "KFD topology" };
