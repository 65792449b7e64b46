/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel facts behind the reasons for zeros (src/model/host.c), on trees
 * of files this test writes below a directory, read the way libdmaconn reads
 * below DMACONN_SYSFS_ROOT: PCIe ACS in config space (redirecting, not
 * redirecting, no capability, unreadable past 64 bytes, a looping list),
 * the bridges of a path, IOMMU group types, and a virtual machine's marks.
 *
 *   test_host WORKDIR
 *   test_host --show BUS_ID...   what this machine's own tree says (no checks)
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "check.h"
#include "model/host.h"

static char root[1024];

static int t_read(const char *path, char *buf, size_t len)
{
	char full[2048];
	snprintf(full, sizeof(full), "%s%s", root, path);
	FILE *f = fopen(full, "rb");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, len - 1, f);
	int more = fgetc(f) != EOF;
	fclose(f);
	buf[n] = '\0';
	return more ? -EFBIG : (int)n;
}

static int t_list(const char *path, char ***names)
{
	char full[2048];
	snprintf(full, sizeof(full), "%s%s", root, path);
	DIR *d = opendir(full);
	*names = NULL;
	if (!d)
		return -errno;
	int n = 0;
	char **v = calloc(256, sizeof(*v));
	struct dirent *e;
	while (v && n < 256 && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			v[n++] = strdup(e->d_name);
	closedir(d);
	*names = v;
	return n;
}

static const struct dc_fs fs = { t_read, t_list };

static void mkdirs(const char *rel)
{
	char p[2048];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	for (char *c = p + strlen(root) + 1; *c; c++)
		if (*c == '/') {
			*c = '\0';
			mkdir(p, 0755);
			*c = '/';
		}
	mkdir(p, 0755);
}

static void put(const char *rel, const void *data, size_t len)
{
	char p[2048];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	mkdirs(p + strlen(root));
	*slash = '/';
	FILE *f = fopen(p, "wb");
	CHECK(f != NULL);
	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static void le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Config space: AER at 0x100, then (acs >= 0) ACS at 0x148 with control acs. */
static void config(const char *dir, int acs, size_t size)
{
	unsigned char cfg[4096];
	memset(cfg, 0, sizeof(cfg));
	if (size > 0x100) {
		le32(cfg + 0x100, 0x0001u | 1u << 16 | (acs >= 0 ? 0x148u : 0u) << 20);
		if (acs >= 0) {
			le32(cfg + 0x148, 0x000du | 1u << 16);
			le32(cfg + 0x14c, 0x005fu | (uint32_t)acs << 16);
		}
	}
	char p[1024];
	snprintf(p, sizeof(p), "%s/config", dir);
	put(p, cfg, size);
}

#define RP "/sys/devices/pci0000:00/0000:00:01.0"
#define UP RP "/0000:01:00.0"
#define DA UP "/0000:02:08.0"
#define DB UP "/0000:02:10.0"

/* The facts of the live machine, for a device run to show. */
static int show(int n, char **ids)
{
	root[0] = '\0';
	struct dc_pci_chain *c = calloc((size_t)n + 1, sizeof(*c));
	if (!c)
		return 1;
	dc_host_chains(&fs, (const char *const *)ids, n, c);
	char why[200], type[32];
	printf("virtual machine: %s\n", dc_host_vm(&fs, why, sizeof(why)) ? why : "nothing shows one");
	for (int i = 0; i < n; i++) {
		printf("%s: IOMMU group type %s; chain", ids[i],
		       dc_host_iommu(&fs, ids[i], type, sizeof(type)) == 0 ? type : "(none)");
		for (int k = 0; k < c[i].depth; k++)
			printf(" %s", c[i].name[k]);
		printf("%s\n", c[i].depth ? "" : " (not found)");
		for (int k = 1; k + 1 < c[i].depth; k++) {
			char dir[1024];
			unsigned int ctrl = 0;
			dc_host_dir(&c[i], k, dir, sizeof(dir));
			int rc = dc_host_acs(&fs, dir, &ctrl);
			printf("  bridge %s: ACS %s", c[i].name[k],
			       rc < 0 ? "unknown (config space unreadable)" : rc ? "redirects" : "does not redirect");
			if (rc >= 0)
				printf(" (control 0x%04x)", ctrl);
			putchar('\n');
		}
	}
	free(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--show"))
		return show(argc - 2, argv + 2);
	if (argc != 2) {
		fprintf(stderr, "usage: test_host WORKDIR\n");
		return 2;
	}
	mkdir(argv[1], 0755);
	snprintf(root, sizeof(root), "%s/tree", argv[1]);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root); /* a tree of an earlier run */
	CHECK_INT(system(cmd), 0);
	mkdir(root, 0755);
	config(RP, 0x0001, 4096);   /* ACS, source validation only */
	config(UP, -1, 4096);       /* no ACS capability */
	config(DA, 0x001d, 4096);   /* request and completion redirect */
	config(DB, 0x0004, 4096);   /* request redirect only */
	config(DA "/0000:03:00.0", -1, 4096);
	config(DB "/0000:04:00.0", -1, 4096);
	config("/sys/devices/pci0000:80/0000:80:01.0", 0x0008, 64); /* unreadable past 64 bytes */
	config("/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", -1, 4096);
	mkdirs("/sys/devices/pci0000:00/0000:00:01.0/power"); /* not a PCI function: skipped */

	const char *ids[] = { "0000:03:00.0", "0000:04:00.0", "0000:81:00.0", "0000:99:00.0" };
	struct dc_pci_chain c[4];
	dc_host_chains(&fs, ids, 4, c);
	CHECK_INT(c[0].depth, 5);
	CHECK_STR(c[0].name[0], "pci0000:00");
	CHECK_STR(c[0].name[3], "0000:02:08.0");
	CHECK_INT(c[2].depth, 3);
	CHECK_INT(c[3].depth, 0); /* not in the tree */

	const char *path[32];
	int np = dc_host_path(&c[0], &c[1], path, 32);
	CHECK_INT(np, 3);
	CHECK_STR(path[0], "0000:02:08.0");
	CHECK_STR(path[1], "0000:01:00.0");
	CHECK_STR(path[2], "0000:02:10.0");
	/* Across root buses: every bridge of both chains. */
	np = dc_host_path(&c[0], &c[2], path, 32);
	CHECK_INT(np, 4);
	CHECK_STR(path[3], "0000:80:01.0");

	char dir[1024];
	unsigned int ctrl = 0;
	dc_host_dir(&c[0], 3, dir, sizeof(dir));
	CHECK_STR(dir, DA);
	CHECK_INT(dc_host_acs(&fs, dir, &ctrl), 1);
	CHECK_INT(ctrl, 0x001d);
	dc_host_dir(&c[1], 3, dir, sizeof(dir));
	CHECK_INT(dc_host_acs(&fs, dir, &ctrl), 1);
	CHECK_INT(ctrl, 0x0004);
	CHECK_INT(dc_host_acs(&fs, RP, &ctrl), 0);  /* ACS, no redirection */
	CHECK_INT(dc_host_acs(&fs, UP, &ctrl), 0);  /* no ACS capability */
	CHECK_INT(dc_host_acs(&fs, "/sys/devices/pci0000:80/0000:80:01.0", &ctrl), -1); /* 64 bytes */
	CHECK_INT(dc_host_acs(&fs, "/sys/devices/nowhere", &ctrl), -1);
	/* A capability list pointing back at itself ends. */
	unsigned char loop[4096];
	memset(loop, 0, sizeof(loop));
	le32(loop + 0x100, 0x0001u | 1u << 16 | 0x100u << 20);
	put("/sys/devices/loop/config", loop, sizeof(loop));
	CHECK_INT(dc_host_acs(&fs, "/sys/devices/loop", &ctrl), 0);

	char type[32];
	put("/sys/bus/pci/devices/0000:03:00.0/iommu_group/type", "DMA-FQ\n", 7);
	put("/sys/bus/pci/devices/0000:04:00.0/iommu_group/type", "identity\n", 9);
	CHECK_INT(dc_host_iommu(&fs, "0000:03:00.0", type, sizeof(type)), 0);
	CHECK_STR(type, "DMA-FQ");
	CHECK(dc_host_iommu_translates(type));
	CHECK_INT(dc_host_iommu(&fs, "0000:04:00.0", type, sizeof(type)), 0);
	CHECK(!dc_host_iommu_translates(type));
	CHECK(!dc_host_iommu_translates("blocked"));
	CHECK(dc_host_iommu_translates("DMA"));
	CHECK_INT(dc_host_iommu(&fs, "0000:81:00.0", type, sizeof(type)), -1);

	char why[200];
	CHECK_INT(dc_host_vm(&fs, why, sizeof(why)), 0); /* bare metal: nothing shows a VM */
	put("/sys/class/dmi/id/sys_vendor", "Dell Inc.\n", 10);
	put("/sys/class/dmi/id/product_name", "PowerEdge XE9680\n", 17);
	const char cpu_bare[] = "processor\t: 0\nflags\t\t: fpu vme hypervisorx\n\nprocessor\t: 1\nflags\t\t: hypervisor\n";
	put("/proc/cpuinfo", cpu_bare, sizeof(cpu_bare) - 1);
	CHECK_INT(dc_host_vm(&fs, why, sizeof(why)), 0); /* only the first processor's flags, whole words */
	const char cpu_vm[] = "processor\t: 0\nflags\t\t: fpu hypervisor lahf_lm\n";
	put("/proc/cpuinfo", cpu_vm, sizeof(cpu_vm) - 1);
	CHECK_INT(dc_host_vm(&fs, why, sizeof(why)), 1);
	CHECK_STR(why, "the CPU's hypervisor flag");
	put("/sys/class/dmi/id/sys_vendor", "Microsoft Corporation\n", 22);
	put("/sys/class/dmi/id/product_name", "Virtual Machine\n", 16);
	CHECK_INT(dc_host_vm(&fs, why, sizeof(why)), 1);
	CHECK(strstr(why, "DMI Microsoft Corporation Virtual Machine") != NULL);
	return check_done("test_host");
}
