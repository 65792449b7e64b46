/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel's view of the PCIe path and of the node (src/model/host.h).
 * Everything is read through struct dc_fs: in libdmaconn, the replay's
 * "files" or the file system below DMACONN_SYSFS_ROOT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/host.h"
#include "pci.h"

#define DC_HOST_WALK_MAX 4096 /* PCI functions visited in one walk */
#define DC_PCI_CONFIG_SIZE 4096
#define DC_PCI_EXT_CAP 0x100
#define DC_PCI_EXT_CAP_ACS 0x000d
#define DC_ACS_CTRL_REQ_REDIR 0x0004
#define DC_ACS_CTRL_CMPLT_REDIR 0x0008

static void free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* A PCI function's directory name, "dddd:bb:dd.f" (a domain of 4 to 8 hex digits). */
static int is_function(const char *s)
{
	struct dc_pci p;
	const char *colon = strchr(s, ':');
	size_t len = strlen(s);
	return colon && colon - s >= 4 && len < DC_HOST_NAME && s[len - 2] == '.' &&
	       dc_pci_parse(s, len, &p) == 0;
}

struct walk {
	const struct dc_fs *fs;
	const char *const *ids;
	int n, found, visited;
	struct dc_pci_chain *out;
	struct dc_pci_chain cur;
};

static void walk_dir(struct walk *w, const char *dir)
{
	char **names = NULL;
	int count = w->fs->list(dir, &names);
	if (count <= 0)
		return;
	for (int k = 0; k < count && w->found < w->n && w->visited < DC_HOST_WALK_MAX; k++) {
		if (!is_function(names[k]) || w->cur.depth >= DC_HOST_DEPTH)
			continue;
		w->visited++;
		snprintf(w->cur.name[w->cur.depth++], DC_HOST_NAME, "%s", names[k]);
		for (int i = 0; i < w->n; i++) {
			if (w->out[i].depth == 0 && !strcasecmp(w->ids[i], names[k])) {
				w->out[i] = w->cur;
				w->found++;
			}
		}
		char sub[1024];
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, names[k]) < (int)sizeof(sub))
			walk_dir(w, sub);
		w->cur.depth--;
	}
	free_names(names, count);
}

void dc_host_chains(const struct dc_fs *fs, const char *const *bus_ids, int n, struct dc_pci_chain *out)
{
	struct walk w = { fs, bus_ids, n, 0, 0, out, { 0 } };
	memset(out, 0, sizeof(*out) * (size_t)(n > 0 ? n : 0));
	char **roots = NULL;
	int count = fs->list("/sys/devices", &roots);
	for (int k = 0; k < count && w.found < n; k++) {
		if (strncmp(roots[k], "pci", 3) != 0 || strlen(roots[k]) >= DC_HOST_NAME)
			continue;
		char dir[1024];
		snprintf(dir, sizeof(dir), "/sys/devices/%s", roots[k]);
		w.cur.depth = 1;
		snprintf(w.cur.name[0], DC_HOST_NAME, "%s", roots[k]);
		walk_dir(&w, dir);
	}
	if (count > 0)
		free_names(roots, count);
	/* Each device's own config space is not needed, but reading it shows
	 * the directory to a recording (which keeps the files read, and its
	 * directories only through them), so that its replay finds the chain. */
	char *cfg = malloc(DC_PCI_CONFIG_SIZE + 1);
	for (int i = 0; cfg && i < n; i++) {
		if (out[i].depth < 2)
			continue;
		char dir[1024], path[1100];
		dc_host_dir(&out[i], out[i].depth - 1, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/config", dir);
		(void)fs->read(path, cfg, DC_PCI_CONFIG_SIZE + 1);
	}
	free(cfg);
}

int dc_host_path(const struct dc_pci_chain *a, const struct dc_pci_chain *b, const char **out, int max)
{
	if (a->depth < 2 || b->depth < 2)
		return 0;
	int common = 0;
	while (common < a->depth - 1 && common < b->depth - 1 && !strcmp(a->name[common], b->name[common]))
		common++;
	int n = 0, low = common > 1 ? common : 1; /* name[0] is the root bus, no function */
	/* Up from a's parent to the deepest common function, then down to b's parent. */
	for (int k = a->depth - 2; k >= low && n < max; k--)
		out[n++] = a->name[k];
	if (common >= 2 && n < max)
		out[n++] = a->name[common - 1];
	for (int k = low; k <= b->depth - 2 && n < max; k++)
		out[n++] = b->name[k];
	return n;
}

void dc_host_dir(const struct dc_pci_chain *c, int k, char *out, size_t len)
{
	size_t o = (size_t)snprintf(out, len, "/sys/devices");
	for (int i = 0; i <= k && i < c->depth && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "/%s", c->name[i]);
}

static unsigned int le(const unsigned char *p, int bytes)
{
	unsigned int v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int dc_host_acs(const struct dc_fs *fs, const char *dir, unsigned int *ctrl)
{
	char path[1100];
	snprintf(path, sizeof(path), "%s/config", dir);
	unsigned char *cfg = malloc(DC_PCI_CONFIG_SIZE + 1);
	if (!cfg)
		return -1;
	int len = fs->read(path, (char *)cfg, DC_PCI_CONFIG_SIZE + 1);
	int rc = -1;
	/* Without root the kernel shows only the first 64 bytes: unknown. */
	if (len < DC_PCI_EXT_CAP + 4)
		goto out;
	unsigned int off = DC_PCI_EXT_CAP;
	rc = 0;
	for (int hops = 0; hops < 512 && off >= DC_PCI_EXT_CAP && off + 8 <= (unsigned int)len; hops++) {
		unsigned int hdr = le(cfg + off, 4);
		if (hdr == 0 || hdr == 0xffffffffu)
			break;
		if ((hdr & 0xffff) == DC_PCI_EXT_CAP_ACS) {
			*ctrl = le(cfg + off + 6, 2);
			rc = (*ctrl & (DC_ACS_CTRL_REQ_REDIR | DC_ACS_CTRL_CMPLT_REDIR)) != 0;
			goto out;
		}
		unsigned int next = (hdr >> 20) & 0xffc;
		if (next <= off)
			break; /* the list only goes forward */
		off = next;
	}
out:
	free(cfg);
	return rc;
}

int dc_host_iommu(const struct dc_fs *fs, const char *bus_id, char *out, size_t len)
{
	char path[256], buf[64];
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group/type", bus_id);
	int n = fs->read(path, buf, sizeof(buf));
	if (n <= 0)
		return -1;
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!buf[0])
		return -1;
	snprintf(out, len, "%s", buf);
	return 0;
}

int dc_host_iommu_translates(const char *type)
{
	return type && (!strcmp(type, "DMA") || !strcmp(type, "DMA-FQ"));
}

/* The first line of a DMI file, or "" when unreadable. */
static void dmi(const struct dc_fs *fs, const char *name, char *out, size_t len)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/class/dmi/id/%s", name);
	if (fs->read(path, out, len) <= 0)
		out[0] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
}

int dc_host_vm(const struct dc_fs *fs, char *out, size_t len)
{
	/* DMI vendors and products of hypervisors' virtual machines. */
	static const char *const vendors[] = { "QEMU", "KVM", "VMware", "Xen", "innotek GmbH", "Parallels",
					       "Bochs", "BHYVE", "OpenStack", "Amazon EC2", "Google" };
	static const char *const products[] = { "Virtual Machine", "KVM", "VirtualBox", "Standard PC",
						"HVM domU", "Google Compute Engine" };
	char vendor[128], product[128];
	dmi(fs, "sys_vendor", vendor, sizeof(vendor));
	dmi(fs, "product_name", product, sizeof(product));
	int vm = 0, flag = 0;
	for (size_t k = 0; !vm && k < sizeof(vendors) / sizeof(vendors[0]); k++)
		vm = !strncmp(vendor, vendors[k], strlen(vendors[k]));
	for (size_t k = 0; !vm && k < sizeof(products) / sizeof(products[0]); k++)
		vm = strstr(product, products[k]) != NULL;
	/* The CPU's hypervisor flag, from the first processor's flags. */
	char *cpu = malloc(65536);
	int n = cpu ? fs->read("/proc/cpuinfo", cpu, 65536) : -1;
	if (n > 0 || n == -EFBIG) {
		char *flags = !strncmp(cpu, "flags", 5) ? cpu : strstr(cpu, "\nflags");
		char *eol = flags ? strchr(flags + 1, '\n') : NULL;
		if (eol)
			*eol = '\0';
		char *h = flags ? strstr(flags, " hypervisor") : NULL;
		flag = h && (h[11] == '\0' || h[11] == ' ');
	}
	free(cpu);
	if (vm)
		snprintf(out, len, "%sDMI %s%s%s", flag ? "the CPU's hypervisor flag; " : "", vendor,
			 product[0] ? " " : "", product);
	else if (flag)
		snprintf(out, len, "the CPU's hypervisor flag");
	return vm || flag;
}

/* The index of function name in chain c, or -1. */
static int chain_index(const struct dc_pci_chain *c, const char *name)
{
	for (int k = 1; k < c->depth; k++)
		if (!strcmp(c->name[k], name))
			return k;
	return -1;
}

int dc_host_path_acs(const struct dc_fs *fs, const struct dc_pci_chain *a, const struct dc_pci_chain *b, char *out,
		     size_t len)
{
	const char *path[2 * DC_HOST_DEPTH];
	int np = dc_host_path(a, b, path, 2 * DC_HOST_DEPTH), unknown = 0;
	size_t o = 0;
	out[0] = '\0';
	for (int k = 0; k < np; k++) {
		const struct dc_pci_chain *c = chain_index(a, path[k]) >= 0 ? a : b;
		char dir[1024];
		unsigned int ctrl = 0;
		dc_host_dir(c, chain_index(c, path[k]), dir, sizeof(dir));
		int rc = dc_host_acs(fs, dir, &ctrl);
		if (rc == 1 && o < len)
			o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "", path[k]);
		unknown |= rc < 0;
	}
	return o ? 1 : unknown ? -1 : 0;
}
