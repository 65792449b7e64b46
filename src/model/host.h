/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the kernel says about the PCIe path between two devices and the node
 * they are in (src/model/host.c): PCIe ACS redirection on the bridges of the
 * path, the IOMMU group's type, and whether the node is a virtual machine.
 * Read through a pair of functions, so that the library reads the replay's
 * "files" or the tree below DMACONN_SYSFS_ROOT (dc_read_file, dc_list_dir)
 * and a test reads a tree of its own.
 */
#ifndef DMACONN_HOST_H
#define DMACONN_HOST_H

#include <stddef.h>

struct dc_fs {
	/* dc_read_file()'s contract: length read, or a negative errno
	 * (-EFBIG: buf holds the first len - 1 bytes). */
	int (*read)(const char *path, char *buf, size_t len);
	/* dc_list_dir()'s: entries, *names malloc'd (each name and the array). */
	int (*list)(const char *path, char ***names);
};

#define DC_HOST_DEPTH 16
#define DC_HOST_NAME 16

/* A device's place in /sys/devices: "pci0000:00", then each PCI function
 * down to the device itself ("0000:00:01.0", ..., the device). */
struct dc_pci_chain {
	int depth; /* 0: not found */
	char name[DC_HOST_DEPTH][DC_HOST_NAME];
};

/* Finds the chains of the n devices (bus ids "dddd:bb:dd.f", lower case) in
 * one walk of /sys/devices; a device not found gets depth 0. */
void dc_host_chains(const struct dc_fs *fs, const char *const *bus_ids, int n, struct dc_pci_chain *out);

/* The bridges between two chained devices, from a's parent up to their
 * deepest common PCI function and down to b's parent; how many (at most max). */
int dc_host_path(const struct dc_pci_chain *a, const struct dc_pci_chain *b, const char **out, int max);

/* PCIe ACS of the PCI function at sysfs directory dir: 1 when its control
 * register redirects peer requests or completions (*ctrl gets the register),
 * 0 when it does not or has no ACS capability, -1 when config space beyond
 * the first 256 bytes cannot be read (without root) or is malformed. */
int dc_host_acs(const struct dc_fs *fs, const char *dir, unsigned int *ctrl);

/* PCIe ACS on the bridges between two chained devices (dc_host_path's):
 * 1 when one redirects (their names, space-separated, in out), else -1 when
 * one's ACS cannot be read (without root), else 0. */
int dc_host_path_acs(const struct dc_fs *fs, const struct dc_pci_chain *a, const struct dc_pci_chain *b, char *out,
		     size_t len);

/* The sysfs directory of chain c's k-th element (k < c->depth). */
void dc_host_dir(const struct dc_pci_chain *c, int k, char *out, size_t len);

/* The type of the IOMMU group of device bus_id ("DMA", "DMA-FQ",
 * "identity", ...) into out; 0, or -1 when unknown (no IOMMU group). */
int dc_host_iommu(const struct dc_fs *fs, const char *bus_id, char *out, size_t len);
/* Whether an IOMMU group type translates DMA. */
int dc_host_iommu_translates(const char *type);

/* 1 when the node is a virtual machine, with what shows it in out (the CPU's
 * hypervisor flag, the DMI vendor or product); 0 when nothing shows it. */
int dc_host_vm(const struct dc_fs *fs, char *out, size_t len);

#endif
