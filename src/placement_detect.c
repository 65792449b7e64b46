/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_placement_detect(): the NICs, CPUs and memory near each device,
 * from the kernel's files (dc_read_file, dc_list_dir: the replay's "files"
 * when replaying, recorded by dmaconn_record) and what the backend's
 * discovery read from its vendor library (dc_backend.place).  The rules are
 * docs/placement.md's.
 *
 * Devices come in the runtime's order from a passive detection of the
 * backend's first view (its cached result: no second discovery); NICs are the
 * entries of /sys/class/infiniband.  The path class of a (device, NIC) pair
 * comes from their places in /sys/devices (one walk for all of them) and
 * their NUMA nodes, as `nvidia-smi topo -m` names it; NCCL's reading of a NIC
 * behind the CPU a GPU reaches over NVLink-C2C (PATH_P2C) is called C2C.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "internal.h"
#include "model/connections.h"
#include "model/host.h"
#include "pci.h"
#include "placement.h"
#include "sysfs.h"

#define CLASS_DIR "/sys/class/infiniband"
#define NODE_DIR "/sys/devices/system/node"
/* A CPU list's text: every other one of 4096 CPUs, "0,2,...,4094", takes 10 KiB. */
#define LIST_LEN (DC_PLACE_CPU_WORDS * DC_LIST_BITS * 3)
#define MAX_NICS 1024
#define MAX_NODES (DC_PLACE_NODE_WORDS * DC_LIST_BITS)

/* Path classes, nearest first (the order NICs are sorted by), as NCCL ranks
 * them: its PATH_P2C lies between PXB and PHB. */
enum path { P_PIX, P_PXB, P_C2C, P_PHB, P_NODE, P_SYS };
static const char *const path_names[] = { "PIX", "PXB", "C2C", "PHB", "NODE", "SYS" };
/* NCCL's default NCCL_NET_GDR_LEVEL: PATH_P2C with NCCL_NET_GDR_C2C=1 (its
 * default since 2.27), which admits PIX, PXB and C2C. */
#define GDR_LEVEL P_C2C

static const struct dc_fs fs = { dc_read_file, dc_list_dir };

struct nic {
	char *name;
	char bus[DC_PCI_BUS_ID_SIZE]; /* "" for a device without a PCI function (rxe, siw) */
	int numa;
};

/* Everything read once per detection. */
struct ctx {
	dmaconn_placement *p;
	const struct dc_backend *be;
	int oom;
	char **bus;                    /* n devices' bus ids (NULL: unknown) */
	struct dc_place_facts *facts;  /* n */
	int *numa;                     /* n: the kernel's NUMA node, -1 none, -2 unread */
	struct nic *nics;
	int nnics;
	struct dc_pci_chain *chains;   /* n devices, then the NICs */
	int nnodes;                    /* NUMA nodes listed (0: none readable) */
	int node_dirs;                 /* node directories (nnodes: those read) */
	int cpu_nodes, cpu_node;       /* nodes with CPUs, the last one's id */
	unsigned long (*node_cpus)[DC_PLACE_CPU_WORDS]; /* per node id < MAX_NODES */
	unsigned char *node_listed;    /* per node id: 1 listed, 2 listed with CPUs */
	const char *peermem;           /* the module loaded, or NULL */
	const char *dmabuf;            /* "yes", "no", "unknown" */
	char dmabuf_why[256];
	int *usable;                   /* n * nnics: gdr usable (for sorting) */
	int *cls;                      /* n * nnics: enum path */
};

/* Sets key to value, cleaned as results hold text from outside (a NIC's
 * name, a netdev, a kernel's line). */
static void set(struct ctx *c, struct dc_props *props, const char *key, const char *value)
{
	int oom = 0;
	char *clean = value ? dc_text_clean(value, &oom) : NULL;
	if (oom || (value && dc_props_set(props, key, clean ? clean : value) != 0))
		c->oom = 1;
	free(clean);
}

static void setf(struct ctx *c, struct dc_props *props, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void setf(struct ctx *c, struct dc_props *props, const char *key, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	set(c, props, key, buf);
}

static void warn(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *text = dc_strings_pushv(&c->p->warnings, 512, 0, fmt, ap);
	va_end(ap);
	if (!text)
		c->oom = 1;
	else
		dc_warning_emit(text);
}

/* A file's first line (no newline) into buf; its length, or a negative errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	int n = dc_read_file(path, buf, len);
	if (n < 0 && n != -EFBIG)
		return n;
	buf[strcspn(buf, "\n")] = '\0';
	return (int)strlen(buf);
}

/* A CPU list file (the kernel's list form) into mask: 1 with CPUs, 0
 * without, -1 when unreadable, not a list, or cut short (longer than LIST_LEN:
 * its beginning alone would name other CPUs). */
static int read_list(const char *path, unsigned long *mask)
{
	char *buf = malloc(LIST_LEN);
	int n = buf ? dc_read_file(path, buf, LIST_LEN) : -ENOMEM, count = 0;
	if (n < 0 || dc_list_parse(buf, mask, DC_PLACE_CPU_WORDS) != 0)
		count = -1;
	for (int w = 0; count >= 0 && w < DC_PLACE_CPU_WORDS; w++)
		count |= mask[w] != 0;
	free(buf);
	return count;
}

/* ------------------------------------------------------------ the host */

/* The CPUs of each NUMA node (nodeN/cpulist; a memory-only node lists none). */
static void read_nodes(struct ctx *c)
{
	char **names = NULL;
	int count = dc_list_dir(NODE_DIR, &names);
	c->node_cpus = calloc(MAX_NODES, sizeof(*c->node_cpus));
	c->node_listed = calloc(MAX_NODES, 1);
	if (!c->node_cpus || !c->node_listed) {
		c->oom = 1;
		count = count > 0 ? count : 0;
	}
	for (int k = 0; k < count && !c->oom; k++) {
		char *end, path[300];
		if (strncmp(names[k], "node", 4) || names[k][4] < '0' || names[k][4] > '9')
			continue;
		long id = strtol(names[k] + 4, &end, 10);
		if (*end)
			continue;
		c->node_dirs++;
		if (id >= MAX_NODES)
			continue;
		snprintf(path, sizeof(path), NODE_DIR "/%s/cpulist", names[k]);
		int cpus = read_list(path, c->node_cpus[id]);
		if (cpus < 0)
			continue;
		c->node_listed[id] = cpus ? 2 : 1;
		c->nnodes++;
		if (cpus) {
			c->cpu_nodes++;
			c->cpu_node = (int)id;
		}
	}
	if (count > 0)
		dc_free_names(names, count);
}

static int node_has_cpus(const struct ctx *c, long id)
{
	return id >= 0 && id < MAX_NODES && c->node_listed && c->node_listed[id] == 2;
}

/* The CPU-bearing node holding every CPU of mask, or -1 (CPUs of several
 * nodes, as local_cpulist without proximity: no one node is the device's). */
static int node_of_cpus(const struct ctx *c, const unsigned long *mask)
{
	for (int id = 0; c->node_listed && id < MAX_NODES; id++) {
		int inside = c->node_listed[id] == 2, any = 0;
		for (int w = 0; inside && w < DC_PLACE_CPU_WORDS; w++) {
			inside = !(mask[w] & ~c->node_cpus[id][w]);
			any |= (mask[w] & c->node_cpus[id][w]) != 0;
		}
		if (inside && any)
			return id;
	}
	return -1;
}

/* Kernel release "X.Y..." as X * 1000 + Y, or -1. */
static long kernel_version(void)
{
	char buf[128], *end;
	if (read_line("/proc/sys/kernel/osrelease", buf, sizeof(buf)) <= 0)
		return -1;
	long major = strtol(buf, &end, 10);
	if (end == buf || *end != '.')
		return -1;
	long minor = strtol(end + 1, &end, 10);
	return major * 1000 + minor;
}

/* The NVIDIA kernel module: open (1) or proprietary (0) and its major
 * version, from /proc/driver/nvidia/version; -1 unreadable. */
static int nvidia_module(int *major)
{
	char buf[512];
	if (read_line("/proc/driver/nvidia/version", buf, sizeof(buf)) <= 0)
		return -1;
	const char *v = strstr(buf, "Kernel Module");
	v = v ? v + strlen("Kernel Module") : NULL;
	while (v && *v == ' ')
		v++;
	/* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05 ..." */
	if (v && !strncmp(v, "for ", 4)) {
		v = strchr(v + 4, ' ');
		while (v && *v == ' ')
			v++;
	}
	if (!v || *v < '0' || *v > '9')
		return -1;
	*major = atoi(v);
	return strstr(buf, "Open Kernel Module") != NULL;
}

/*
 * The GPUDirect RDMA mechanisms of the node, judged without CUDA
 * (docs/placement.md): a peer-memory module as NCCL finds one (its files in
 * /sys), and dma-buf: the kernel imports it into RDMA memory regions from
 * 5.12; NVIDIA exports GPU memory as dma-buf only with its open kernel
 * modules from driver 515 (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED); amdgpu
 * and xe/i915 export it with the kernel itself.
 */
static void read_mechanisms(struct ctx *c)
{
	/* NCCL's files (net_ib), and RCCL's for AMD's amdkfd client (the
	 * directory moved with the ib_peer_mem module). */
	static const struct {
		dmaconn_device_type type;
		const char *file, *module;
	} peermem[] = {
		{ DMACONN_DEVICE_CUDA, "/sys/module/nvidia_peermem/version", "nvidia_peermem" },
		{ DMACONN_DEVICE_CUDA, "/sys/kernel/mm/memory_peers/nv_mem/version", "nv_peer_mem" },
		{ DMACONN_DEVICE_CUDA, "/sys/kernel/mm/memory_peers/nv_mem_nc/version", "nv_mem_nc" },
		{ DMACONN_DEVICE_ROCM, "/sys/kernel/mm/memory_peers/amdkfd/version", "amdkfd" },
		{ DMACONN_DEVICE_ROCM, "/sys/kernel/memory_peers/amdkfd/version", "amdkfd" },
		{ DMACONN_DEVICE_ROCM, "/sys/memory_peers/amdkfd/version", "amdkfd" },
	};
	char buf[64];
	for (size_t k = 0; !c->peermem && k < sizeof(peermem) / sizeof(peermem[0]); k++) {
		if (peermem[k].type != c->p->type)
			continue;
		int r = dc_read_file(peermem[k].file, buf, sizeof(buf));
		if (r >= 0 || r == -EFBIG)
			c->peermem = peermem[k].module;
	}
	long kv = kernel_version();
	c->dmabuf = "unknown";
	if (kv < 0) {
		snprintf(c->dmabuf_why, sizeof(c->dmabuf_why), "/proc/sys/kernel/osrelease is unreadable");
		return;
	}
	if (kv < 5012) {
		c->dmabuf = "no";
		snprintf(c->dmabuf_why, sizeof(c->dmabuf_why), "kernel %ld.%ld imports no dma-buf into RDMA (5.12 does)",
			 kv / 1000, kv % 1000);
		return;
	}
	if (c->p->type == DMACONN_DEVICE_CUDA) {
		int major = 0, open = nvidia_module(&major);
		if (open < 0) {
			snprintf(c->dmabuf_why, sizeof(c->dmabuf_why), "/proc/driver/nvidia/version is unreadable");
		} else if (!open) {
			c->dmabuf = "no";
			snprintf(c->dmabuf_why, sizeof(c->dmabuf_why),
				 "the proprietary NVIDIA kernel module %d exports no dma-buf (the open one does)", major);
		} else if (major < 515) {
			c->dmabuf = "no";
			snprintf(c->dmabuf_why, sizeof(c->dmabuf_why), "NVIDIA driver %d exports no dma-buf (515 does)", major);
		} else {
			c->dmabuf = "yes";
			snprintf(c->dmabuf_why, sizeof(c->dmabuf_why), "open NVIDIA kernel module %d, kernel %ld.%ld", major,
				 kv / 1000, kv % 1000);
		}
		return;
	}
	const char *module = c->p->type == DMACONN_DEVICE_ROCM ? "amdgpu" : "xe";
	char path[64];
	snprintf(path, sizeof(path), "/sys/module/%s/initstate", module);
	if (c->p->type == DMACONN_DEVICE_XPU && read_line(path, buf, sizeof(buf)) < 0) {
		module = "i915";
		snprintf(path, sizeof(path), "/sys/module/%s/initstate", module);
	}
	if (read_line(path, buf, sizeof(buf)) < 0) {
		snprintf(c->dmabuf_why, sizeof(c->dmabuf_why), "%s is unreadable", path);
		return;
	}
	c->dmabuf = "yes";
	snprintf(c->dmabuf_why, sizeof(c->dmabuf_why), "%s exports dma-buf, kernel %ld.%ld", module, kv / 1000,
		 kv % 1000);
}

/* ------------------------------------------------------------ the CPUs */

#define MODALIAS_LEN 16384

/*
 * The CPUs' architecture, and on x86 their vendor, family and model, from
 * the kernel's CPU modalias: "cpu:type:x86,ven0000fam0006mod008F:feature:..."
 * (the vendor is the kernel's X86_VENDOR_ number), "cpu:type:aarch64:...".
 */
static void cpu_identity(struct ctx *c)
{
	static const char *const vendors[] = { [0] = "GenuineIntel", [2] = "AuthenticAMD", [5] = "CentaurHauls",
					       [9] = "HygonGenuine", [10] = "  Shanghai  " };
	static const char prefix[] = "cpu:type:";
	char *buf = malloc(MODALIAS_LEN);
	if (!buf) {
		c->oom = 1;
		return;
	}
	if (read_line("/sys/devices/system/cpu/modalias", buf, MODALIAS_LEN) > 0 &&
	    !strncmp(buf, prefix, sizeof(prefix) - 1)) {
		const char *type = buf + sizeof(prefix) - 1;
		unsigned int ven, fam, mod;
		if (!strncmp(type, "x86,", 4)) {
			set(c, &c->p->node, DMACONN_PLACE_CPU_ARCH, "x86_64");
			if (sscanf(type + 4, "ven%4xfam%4xmod%4x:", &ven, &fam, &mod) == 3) {
				if (ven < sizeof(vendors) / sizeof(vendors[0]) && vendors[ven])
					set(c, &c->p->node, DMACONN_PLACE_CPU_VENDOR, vendors[ven]);
				setf(c, &c->p->node, DMACONN_PLACE_CPU_FAMILY, "%u", fam);
				setf(c, &c->p->node, DMACONN_PLACE_CPU_MODEL, "%u", mod);
			}
		} else if (!strncmp(type, "aarch64:", 8)) {
			set(c, &c->p->node, DMACONN_PLACE_CPU_ARCH, "arm64");
		} else if (!strncmp(type, "powerpc", 7) || !strncmp(type, "ppc64", 5)) {
			set(c, &c->p->node, DMACONN_PLACE_CPU_ARCH, "ppc64");
		}
	}
	free(buf);
}

/* ------------------------------------------------------------ the NICs */

static int nic_compare(const void *a, const void *b)
{
	return strcmp(((const struct nic *)a)->name, ((const struct nic *)b)->name);
}

static int name_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void read_nics(struct ctx *c)
{
	char **names = NULL;
	int count = dc_list_dir(CLASS_DIR, &names);
	if (count == -ENOMEM)
		c->oom = 1;
	if (count <= 0) {
		/* An empty class directory leaves no file for a recording, so
		 * whether RDMA's core is loaded is told by ib_core's own state
		 * alone, live and replayed alike. */
		char state[32];
		int none = read_line("/sys/module/ib_core/initstate", state, sizeof(state)) > 0;
		set(c, &c->p->node, DMACONN_PLACE_NICS_REASON, none ? DMACONN_NICS_REASON_NONE : DMACONN_NICS_REASON_NO_CLASS);
		set(c, &c->p->node, DMACONN_PLACE_NICS_REASON_TEXT,
		    none ? "ib_core is loaded, and " CLASS_DIR " lists no RDMA device"
			 : CLASS_DIR " lists no RDMA device (or is absent), and no ib_core module is loaded (no "
			   "RDMA driver, or one built into the kernel)");
		return;
	}
	/* The first MAX_NICS by name, whatever order the directory lists. */
	qsort(names, (size_t)count, sizeof(*names), name_compare);
	if (count > MAX_NICS)
		warn(c, "placement: %d RDMA devices in " CLASS_DIR ", the first %d by name kept", count, MAX_NICS);
	for (int k = MAX_NICS; k < count; k++) {
		/* A file of each left out shows it to a recording (its replay
		 * then leaves out as many). */
		char path[400], line[64];
		snprintf(path, sizeof(path), CLASS_DIR "/%s/ports/1/state", names[k]);
		(void)read_line(path, line, sizeof(line));
	}
	c->nics = calloc((size_t)(count < MAX_NICS ? count : MAX_NICS), sizeof(*c->nics));
	for (int k = 0; c->nics && k < count && c->nnics < MAX_NICS; k++) {
		struct nic *x = &c->nics[c->nnics++];
		char path[400];
		x->name = names[k];
		names[k] = NULL;
		x->numa = -2;
		/* The PCI function behind it (its device link, followed). */
		snprintf(path, sizeof(path), CLASS_DIR "/%s/device/uevent", x->name);
		char *ue = malloc(4096);
		if (ue && dc_read_file(path, ue, 4096) > 0) {
			const char *slot = strstr(ue, "PCI_SLOT_NAME=");
			struct dc_pci pci;
			if (slot && dc_pci_parse(slot + 14, strcspn(slot + 14, "\n"), &pci) == 0) {
				dc_pci_format(&pci, x->bus);
				x->numa = dc_sysfs_numa_node(x->bus);
			}
		}
		free(ue);
	}
	if (!c->nics)
		c->oom = 1;
	for (int k = 0; k < count; k++)
		free(names[k]);
	free(names);
	qsort(c->nics, (size_t)c->nnics, sizeof(*c->nics), nic_compare);
}

/* A function's place: its host bridge and the bridges from the root port
 * down to it. */
static void chain_props(struct ctx *c, struct dc_props *props, const struct dc_pci_chain *ch)
{
	char list[DC_HOST_DEPTH * (DC_HOST_NAME + 1)] = "";
	size_t o = 0;
	if (ch->depth < 2)
		return;
	set(c, props, DMACONN_PLACE_PCIE_ROOT, ch->name[0]);
	for (int k = 1; k < ch->depth - 1; k++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", o ? "," : "", ch->name[k]);
	if (o)
		set(c, props, DMACONN_PLACE_PCI_PATH, list);
}

/* A NIC's own facts: its netdevs, port 1's link layer and state. */
static void nic_props(struct ctx *c, int k)
{
	const struct nic *x = &c->nics[k];
	struct dc_props *props = &c->p->nics[k];
	char path[400], line[256];
	set(c, props, DMACONN_PROP_NAME, x->name);
	if (x->bus[0])
		set(c, props, DMACONN_PROP_PCI_BUS_ID, x->bus);
	if (x->numa >= -1)
		setf(c, props, DMACONN_PROP_NUMA_NODE, "%d", x->numa);
	chain_props(c, props, &c->chains[c->p->n + k]);
	char **net = NULL;
	snprintf(path, sizeof(path), CLASS_DIR "/%s/device/net", x->name);
	int nn = dc_list_dir(path, &net);
	if (nn > 0) {
		/* Every name, however many (a PF in switchdev mode lists its VF
		 * representors). */
		size_t len = 1, o = 0;
		for (int i = 0; i < nn; i++)
			len += strlen(net[i]) + 1;
		char *list = malloc(len);
		for (int i = 0; list && i < nn; i++) {
			o += (size_t)snprintf(list + o, len - o, "%s%s", i ? "," : "", net[i]);
			/* A file of the netdev shows its directory to a recording. */
			snprintf(path, sizeof(path), CLASS_DIR "/%s/device/net/%s/ifindex", x->name, net[i]);
			(void)read_line(path, line, sizeof(line));
		}
		if (list)
			set(c, props, DMACONN_PLACE_NETDEV, list);
		else
			c->oom = 1;
		free(list);
		dc_free_names(net, nn);
	}
	static const struct {
		const char *file, *key;
	} lines[] = { { "ports/1/link_layer", DMACONN_PLACE_LINK_LAYER },
		      { "ports/1/rate", DMACONN_PLACE_PORT_RATE },
		      { "node_guid", DMACONN_PLACE_NODE_GUID } };
	for (size_t q = 0; q < sizeof(lines) / sizeof(lines[0]); q++) {
		snprintf(path, sizeof(path), CLASS_DIR "/%s/%s", x->name, lines[q].file);
		if (read_line(path, line, sizeof(line)) > 0)
			set(c, props, lines[q].key, line);
	}
	snprintf(path, sizeof(path), CLASS_DIR "/%s/ports/1/state", x->name);
	if (read_line(path, line, sizeof(line)) > 0) {
		const char *colon = strchr(line, ':');
		set(c, props, DMACONN_PLACE_PORT_STATE, colon ? colon + 1 + strspn(colon + 1, " ") : line);
	}
}

/* ---------------------------------------------------- device and NIC */

/*
 * The PCIe class of the path between two chained functions, as `nvidia-smi
 * topo -m`: PIX through at most one switch (one bridge on each side of
 * their common function), PXB through more, PHB through their host bridge,
 * NODE between host bridges of one NUMA node, SYS across NUMA nodes.
 * -1 when a chain is unknown, or the host bridges differ and a NUMA node is
 * unknown (see path_numa).
 */
static int pcie_class(const struct dc_pci_chain *a, const struct dc_pci_chain *b, int numa_a, int numa_b)
{
	if (a->depth < 2 || b->depth < 2)
		return -1;
	if (strcmp(a->name[0], b->name[0]))
		return numa_a < 0 || numa_b < 0 ? -1 : numa_a == numa_b ? P_NODE : P_SYS;
	int common = 1;
	while (common < a->depth && common < b->depth && !strcmp(a->name[common], b->name[common]))
		common++;
	if (common == 1)
		return P_PHB;
	/* Bridges below the common function on each side. */
	int below_a = a->depth - 1 - common, below_b = b->depth - 1 - common;
	return below_a <= 1 && below_b <= 1 ? P_PIX : P_PXB;
}

/* A function's NUMA node for its path class: numa_node, or the machine's
 * one CPU-bearing node where the kernel gives none (-1; CPU-less nodes, a
 * GPU's memory, are no socket to cross); else unknown (-1): two functions
 * without proximity may sit on different sockets. */
static int path_numa(const struct ctx *c, int numa)
{
	return numa == -1 && c->cpu_nodes == 1 && c->nnodes == c->node_dirs ? c->cpu_node : numa < 0 ? -1 : numa;
}

static int c2c_active(const struct dc_place_facts *f)
{
	return f->c2c_rc == 0 && f->c2c_links > 0 && f->c2c_status_rc == 0 && f->c2c_status == 1;
}

/* One (device, NIC) pair: its path, GDR mechanism or the reason for none. */
static void link_props(struct ctx *c, int i, int k, int best)
{
	dmaconn_placement *p = c->p;
	struct dc_props *props = &p->links[(size_t)i * (size_t)p->nnics + (size_t)k];
	int pc = c->cls[(size_t)i * (size_t)p->nnics + (size_t)k];
	int cls = pc;
	/* NCCL's P2C: the NIC under the CPU the GPU reaches over C2C, when no
	 * NIC is nearer over PCIe. */
	if ((pc == P_PHB || pc == P_NODE) && best >= P_PHB && c2c_active(&c->facts[i]))
		cls = P_C2C;
	if (cls >= 0)
		set(c, props, DMACONN_PROP_PATH, path_names[cls]);
	if (pc >= 0)
		set(c, props, DMACONN_PLACE_PCIE_PATH, path_names[pc]);
	const char *reason = NULL;
	char text[600];
	if (!strcmp(c->dmabuf, "yes") || c->peermem) {
		const char *mech = !strcmp(c->dmabuf, "yes") ? DMACONN_GDR_DMABUF : DMACONN_GDR_PEERMEM;
		char iommu[64];
		char acs[400];
		int a;
		if (cls < 0 && c->chains[i].depth >= 2 && c->chains[p->n + k].depth >= 2) {
			/* Different host bridges, a NUMA node unknown: NODE or SYS. */
			reason = DMACONN_GDR_REASON_PATH;
			snprintf(text, sizeof(text), "the path is NODE or SYS (other host bridges, no NUMA node known for %s), "
				 "beyond NCCL's default NCCL_NET_GDR_LEVEL (C2C: PIX, PXB and C2C)",
				 path_numa(c, c->numa[i]) >= 0 ? "the NIC"
				 : path_numa(c, c->nics[k].numa) >= 0 ? "the device" : "the device and the NIC");
		} else if (cls < 0) {
			reason = DMACONN_GDR_REASON_PATH;
			snprintf(text, sizeof(text), "no PCIe path is known (%s)",
				 c->nics[k].bus[0] ? "a place not found in /sys/devices" : "the NIC has no PCI function");
		} else if (cls > GDR_LEVEL) {
			reason = DMACONN_GDR_REASON_PATH;
			snprintf(text, sizeof(text), "the path is %s, beyond NCCL's default NCCL_NET_GDR_LEVEL (C2C: PIX, PXB "
				 "and C2C)", path_names[cls]);
		} else if ((c->bus[i] && dc_host_iommu(&fs, c->bus[i], iommu, sizeof(iommu)) == 0 &&
			    dc_host_iommu_translates(iommu)) ||
			   (dc_host_iommu(&fs, c->nics[k].bus, iommu, sizeof(iommu)) == 0 && dc_host_iommu_translates(iommu))) {
			reason = DMACONN_GDR_REASON_IOMMU;
			snprintf(text, sizeof(text), "the IOMMU translates DMA (group type %s)", iommu);
		} else if (cls != P_C2C && (a = dc_host_path_acs(&fs, &c->chains[i], &c->chains[p->n + k], acs,
								 sizeof(acs))) != 0) {
			reason = a > 0 ? DMACONN_GDR_REASON_ACS_REDIRECT : DMACONN_GDR_REASON_ACS_UNKNOWN;
			if (a > 0)
				snprintf(text, sizeof(text), "PCIe ACS redirects peer requests at %s", acs);
			else
				snprintf(text, sizeof(text), "the ACS of a bridge on the path cannot be read (config space "
					 "beyond 256 bytes needs root)");
		} else {
			set(c, props, DMACONN_PLACE_GDR, mech);
			if (!strcmp(mech, DMACONN_GDR_PEERMEM))
				set(c, props, DMACONN_PLACE_GDR_MODULE, c->peermem);
			c->usable[(size_t)i * (size_t)p->nnics + (size_t)k] = 1;
			return;
		}
	} else if (!strcmp(c->dmabuf, "unknown")) {
		reason = DMACONN_GDR_REASON_UNKNOWN;
		snprintf(text, sizeof(text), "no peer-memory module is loaded and dma-buf support is unknown: %s",
			 c->dmabuf_why);
	} else {
		reason = DMACONN_GDR_REASON_NO_MECHANISM;
		snprintf(text, sizeof(text), "no peer-memory module is loaded and %s", c->dmabuf_why);
	}
	set(c, props, DMACONN_PLACE_GDR, DMACONN_GDR_NONE);
	set(c, props, DMACONN_PROP_REASON, reason);
	set(c, props, DMACONN_PROP_REASON_TEXT, text);
}

/* Sorting one device's NICs: nearest class, usable, name (= index). */
struct rank_ctx {
	const int *cls, *usable;
};
static _Thread_local const struct rank_ctx *rank_of;

static int rank_key(int n)
{
	int cls = rank_of->cls[n];
	return (cls < 0 ? P_SYS + 1 : cls) * 2 + !rank_of->usable[n];
}

static int rank_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	int kx = rank_key(x), ky = rank_key(y);
	return kx != ky ? (kx < ky ? -1 : 1) : (x > y) - (x < y);
}

/* --------------------------------------------------------- the CPU side */

/* cpuset, its NUMA node and the binding of device i. */
static void cpu_props(struct ctx *c, int i)
{
	struct dc_props *props = &c->p->devices[i];
	const struct dc_place_facts *f = &c->facts[i];
	unsigned long cpus[DC_PLACE_CPU_WORDS];
	char path[200];
	const char *source = NULL;
	int node = -1, numa = c->numa[i];
	if (numa >= -1)
		setf(c, props, DMACONN_PROP_NUMA_NODE, "%d", numa);
	if (numa >= 0 && c->bus[i]) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", c->bus[i]);
		if (read_list(path, cpus) > 0)
			source = "sysfs";
		node = node_has_cpus(c, numa) ? numa : source ? node_of_cpus(c, cpus) : -1;
	}
	/* An empty answer is unknown, never "no CPU" (NVML 580 in a virtual
	 * machine answers SUCCESS with every bit clear). */
	int nvml_cpus = 0;
	for (int w = 0; f->cpus_rc == 0 && w < DC_PLACE_CPU_WORDS; w++)
		nvml_cpus |= f->cpus[w] != 0;
	if (!source && nvml_cpus) {
		memcpy(cpus, f->cpus, sizeof(cpus));
		source = "nvml";
		/* NVML's memory affinity names the node; else the one holding the CPUs. */
		for (int id = 0; id < MAX_NODES && node < 0 && f->mems_rc == 0; id++)
			if ((f->mems[id / DC_LIST_BITS] >> (id % DC_LIST_BITS)) & 1ul && node_has_cpus(c, id))
				node = id;
		if (node < 0)
			node = node_of_cpus(c, cpus);
	}
	if (!source && c->bus[i]) {
		/* Without SRAT the kernel calls every CPU local. */
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", c->bus[i]);
		if (read_list(path, cpus) > 0) {
			source = "sysfs";
			node = node_of_cpus(c, cpus);
		}
	}
	/* The list after the numactl option naming it (the longest key's
	 * value: numactl's --physcpubind=LIST). */
	static const char physcpubind[] = "--physcpubind=";
	char *bind = source ? malloc(sizeof(physcpubind) - 1 + LIST_LEN) : NULL;
	char *list = bind ? bind + sizeof(physcpubind) - 1 : NULL;
	if (source && !bind)
		c->oom = 1;
	if (bind && dc_list_format(cpus, DC_PLACE_CPU_WORDS, list, LIST_LEN) > 0) {
		if (node >= 0)
			setf(c, props, DMACONN_PLACE_CPU_NUMA_NODE, "%d", node);
		set(c, props, DMACONN_PLACE_CPUSET, list);
		set(c, props, DMACONN_PLACE_CPU_SOURCE, source);
		memcpy(bind, physcpubind, sizeof(physcpubind) - 1);
		if (node >= 0)
			setf(c, props, DMACONN_PLACE_NUMACTL, "--cpunodebind=%d --membind=%d", node, node);
		else
			set(c, props, DMACONN_PLACE_NUMACTL, bind);
		/* Slurm's mask_cpu: hexadecimal, most significant digit first. */
		char mask[DC_PLACE_CPU_WORDS * DC_LIST_BITS / 4 + 16] = "mask_cpu:0x";
		size_t o = strlen(mask);
		int started = 0;
		for (int d = DC_PLACE_CPU_WORDS * DC_LIST_BITS / 4 - 1; d >= 0; d--) {
			unsigned int nib = (unsigned int)(cpus[d * 4 / DC_LIST_BITS] >> ((d * 4) % DC_LIST_BITS)) & 0xfu;
			if (!nib && !started)
				continue;
			started = 1;
			mask[o++] = "0123456789abcdef"[nib];
		}
		mask[o] = '\0';
		set(c, props, DMACONN_PLACE_SLURM_CPU_BIND, mask);
	}
	free(bind);
}

/* The device's own memory and its C2C links (the vendor's facts). */
static void memory_props(struct ctx *c, int i)
{
	struct dc_props *props = &c->p->devices[i];
	const struct dc_place_facts *f = &c->facts[i];
	if (f->c2c_rc == 0) {
		setf(c, props, DMACONN_PLACE_C2C_LINKS, "%u", f->c2c_links);
		if (f->c2c_links && f->c2c_status_rc == 0)
			set(c, props, DMACONN_PLACE_C2C_STATUS, f->c2c_status == 1 ? "active" : "inactive");
		if (f->c2c_links && f->c2c_bw_rc == 0)
			setf(c, props, DMACONN_PLACE_C2C_MAX_BW_MBS, "%u", f->c2c_bw);
	}
	/* A memory node is a CPU-less node of the device's memory (NUMA mode);
	 * NVML naming a node the kernel does not list leaves the mode unknown. */
	int listed = f->numa_id_rc == 0 && f->numa_id < MAX_NODES && c->node_listed ? c->node_listed[f->numa_id] : -1;
	if (listed == 1) {
		setf(c, props, DMACONN_PLACE_MEMORY_NUMA_NODE, "%u", f->numa_id);
		set(c, props, DMACONN_PLACE_MEMORY_MODE, DMACONN_MEMORY_ONLY);
	} else if (listed != 0 && c2c_active(f)) {
		set(c, props, DMACONN_PLACE_MEMORY_MODE, DMACONN_MEMORY_CDMM);
	} else if (listed != 0 && (f->c2c_rc >= 0 || f->numa_id_rc >= 0)) {
		/* The vendor answered: no coherent link, memory outside the OS's nodes. */
		set(c, props, DMACONN_PLACE_MEMORY_MODE, DMACONN_MEMORY_NONE);
	}
}

/* --------------------------------------------------------------- detect */

static void ctx_free(struct ctx *c)
{
	for (int i = 0; c->bus && i < c->p->n; i++)
		free(c->bus[i]);
	for (int k = 0; c->nics && k < c->nnics; k++)
		free(c->nics[k].name);
	void *arrays[] = { c->bus, c->facts, c->numa, c->nics, c->chains, c->node_cpus, c->node_listed, c->usable, c->cls };
	for (size_t k = 0; k < sizeof(arrays) / sizeof(arrays[0]); k++)
		free(arrays[k]);
}

/* The devices in the runtime's order, from the backend's first view. */
static int read_devices(struct ctx *c)
{
	dmaconn_result *r = NULL;
	int rc = dmaconn_detect_passive(c->p->type, dc_connection_next(c->be, NULL)->name, &r);
	if (rc != DMACONN_OK)
		return rc;
	int n = dmaconn_result_size(r);
	c->p->n = n;
	c->bus = calloc((size_t)n + 1, sizeof(*c->bus));
	c->facts = calloc((size_t)n + 1, sizeof(*c->facts));
	c->numa = calloc((size_t)n + 1, sizeof(*c->numa));
	c->p->devices = calloc((size_t)n + 1, sizeof(*c->p->devices));
	if (!c->bus || !c->facts || !c->numa || !c->p->devices)
		c->oom = 1;
	for (int i = 0; !c->oom && i < n; i++) {
		const char *bus = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID);
		c->bus[i] = bus ? strdup(bus) : NULL;
		c->oom |= bus && !c->bus[i];
		c->numa[i] = -3;
		struct dc_place_facts *f = &c->facts[i];
		f->cpus_rc = f->mems_rc = f->numa_id_rc = f->c2c_rc = f->c2c_status_rc = f->c2c_bw_rc = -1;
		set(c, &c->p->devices[i], DMACONN_PROP_PCI_BUS_ID, bus);
		set(c, &c->p->devices[i], DMACONN_PROP_UUID, dmaconn_result_device_get(r, i, DMACONN_PROP_UUID));
	}
	for (int k = 0; !c->oom && k < dmaconn_result_warning_count(r); k++)
		c->oom |= dc_strings_push(&c->p->warnings, dmaconn_result_warning(r, k)) != 0;
	dmaconn_result_release(r);
	if (!c->oom && c->be->place)
		c->be->place((const char *const *)c->bus, n, c->facts, c->numa);
	for (int i = 0; !c->oom && i < n; i++)
		if (c->numa[i] == -3)
			c->numa[i] = c->bus[i] ? dc_sysfs_numa_node(c->bus[i]) : -2;
	return c->oom ? DMACONN_ENOMEM : DMACONN_OK;
}

static int fill(struct ctx *c)
{
	dmaconn_placement *p = c->p;
	int rc = read_devices(c);
	if (rc != DMACONN_OK)
		return rc;
	read_nodes(c);
	read_mechanisms(c);
	read_nics(c);
	if (c->oom)
		return DMACONN_ENOMEM;
	int n = p->n, m = c->nnics, total = n + m;
	p->nnics = m;
	p->nics = calloc((size_t)m + 1, sizeof(*p->nics));
	p->links = calloc((size_t)n * (size_t)m + 1, sizeof(*p->links));
	p->order = calloc((size_t)n * (size_t)m + 1, sizeof(*p->order));
	c->usable = calloc((size_t)n * (size_t)m + 1, sizeof(*c->usable));
	c->cls = calloc((size_t)n * (size_t)m + 1, sizeof(*c->cls));
	c->chains = calloc((size_t)total + 1, sizeof(*c->chains));
	const char **ids = calloc((size_t)total + 1, sizeof(*ids));
	if (!p->nics || !p->links || !p->order || !c->usable || !c->cls || !c->chains || !ids) {
		free(ids);
		return DMACONN_ENOMEM;
	}
	for (int i = 0; i < n; i++)
		ids[i] = c->bus[i] ? c->bus[i] : "";
	for (int k = 0; k < m; k++)
		ids[n + k] = c->nics[k].bus;
	dc_host_chains(&fs, ids, total, c->chains);
	free(ids);

	set(c, &p->node, DMACONN_PLACE_DMABUF, c->dmabuf);
	set(c, &p->node, DMACONN_PLACE_DMABUF_REASON, c->dmabuf_why);
	set(c, &p->node, DMACONN_PLACE_PEERMEM_MODULE, c->peermem);
	set(c, &p->node, DMACONN_PLACE_GDR_LEVEL, path_names[GDR_LEVEL]);
	cpu_identity(c);
	p->nic_paths = calloc((size_t)m * (size_t)m + 1, sizeof(*p->nic_paths));
	if (!p->nic_paths)
		return DMACONN_ENOMEM;
	for (int k = 0; k < m; k++) {
		nic_props(c, k);
		for (int q = 0; q < m; q++) {
			int cls = q == k ? -1
					 : pcie_class(&c->chains[n + k], &c->chains[n + q], path_numa(c, c->nics[k].numa),
						      path_numa(c, c->nics[q].numa));
			p->nic_paths[(size_t)k * (size_t)m + (size_t)q] = cls >= 0 ? path_names[cls] : NULL;
		}
	}
	for (int i = 0; i < n; i++) {
		chain_props(c, &p->devices[i], &c->chains[i]);
		cpu_props(c, i);
		if (p->type == DMACONN_DEVICE_CUDA)
			memory_props(c, i);
		int best = P_SYS + 1;
		for (int k = 0; k < m; k++) {
			int cls = pcie_class(&c->chains[i], &c->chains[n + k], path_numa(c, c->numa[i]),
					     path_numa(c, c->nics[k].numa));
			c->cls[(size_t)i * (size_t)m + (size_t)k] = cls;
			if (cls >= 0 && cls < best)
				best = cls;
		}
		for (int k = 0; k < m; k++)
			link_props(c, i, k, best);
		/* Sorted by the class the pair was given (C2C included). */
		int *row = &p->order[(size_t)i * (size_t)m];
		for (int k = 0; k < m; k++) {
			const char *name = dc_props_get(&p->links[(size_t)i * (size_t)m + (size_t)k], DMACONN_PROP_PATH);
			int cls = -1;
			for (int q = 0; name && q <= P_SYS; q++)
				if (!strcmp(name, path_names[q]))
					cls = q;
			c->cls[(size_t)i * (size_t)m + (size_t)k] = cls;
			row[k] = k;
		}
		struct rank_ctx rk = { &c->cls[(size_t)i * (size_t)m], &c->usable[(size_t)i * (size_t)m] };
		rank_of = &rk;
		qsort(row, (size_t)m, sizeof(*row), rank_compare);
		rank_of = NULL;
	}
	if (p->type == DMACONN_DEVICE_CUDA && n > 0 && !c->be->place)
		warn(c, "placement: the cuda backend gives no vendor facts");
	return c->oom ? DMACONN_ENOMEM : DMACONN_OK;
}

int dmaconn_placement_detect(dmaconn_device_type type, dmaconn_placement **out)
{
	if (!out || !dmaconn_device_type_name(type))
		return dc_fail(DMACONN_EINVAL, "dmaconn_placement_detect: %s", out ? "unknown device type" : "out is NULL");
	*out = NULL;
	const struct dc_backend *be = NULL;
	for (const struct dc_backend *const *b = dc_backends; *b && !be; b++)
		if ((*b)->type == type && dc_connection_next(*b, NULL))
			be = *b;
	if (!be)
		return dc_fail(DMACONN_ENODETECTOR, "dmaconn_placement_detect: no backend for %s",
			       dmaconn_device_type_name(type));
	dmaconn_placement *p = calloc(1, sizeof(*p));
	if (!p)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	p->type = type;
	struct ctx c = { .p = p, .be = be };
	dc_config_begin();
	int rc = fill(&c);
	dc_config_end();
	ctx_free(&c);
	if (rc != DMACONN_OK) {
		dmaconn_placement_free(p);
		return rc == DMACONN_ENOMEM ? dc_fail(rc, "out of memory") : rc;
	}
	*out = p;
	return DMACONN_OK;
}
