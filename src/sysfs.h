/* SPDX-License-Identifier: BSD-3-Clause */
/* NVIDIA GPUs as the kernel lists them, for counting devices without NVML. */
#ifndef DMACONN_SYSFS_H
#define DMACONN_SYSFS_H

#include "pci.h"

/*
 * Lists the PCI functions under ROOT/sys/bus/pci/devices with vendor 0x10de
 * and class VGA (0x0300) or 3D controller (0x0302), sorted by address.  root
 * is the file system's root: "" unless DMACONN_SYSFS_ROOT says otherwise
 * (the caller decides).
 * Returns how many there are (0 when the directory is missing) and fills at
 * most max of them.
 */
int dc_sysfs_nvidia_gpus(const char *root, struct dc_pci *out, int max);

/*
 * The kernel's files as a detector must see them.  When a replay is active
 * (DMACONN_REPLAY), the answers come from the recording's "files" section
 * only: a path it lacks does not exist.  Otherwise the file system is read
 * below DMACONN_SYSFS_ROOT (secure_getenv; unset or empty: "/").  Paths are
 * absolute, as the kernel spells them ("/sys/class/kfd/kfd/topology/...").
 */

/* Reads the file into buf (NUL-terminated) and returns its length, or a
 * negative errno: -ENOENT when it does not exist, -EFBIG when it does not fit
 * in len - 1 bytes; on the file system, only a regular file that is not a
 * symbolic link is read (-EISDIR, -EINVAL for a FIFO or device, -ELOOP),
 * without blocking. */
int dc_read_file(const char *path, char *buf, size_t len);

/* Lists the directory: returns the number of entries ("." and ".." left out)
 * and *names, a malloc'd array of malloc'd names sorted with strcmp, which
 * the caller frees with dc_free_names(); or a negative errno (-ENOENT,
 * -ENOTDIR, -ENOMEM), *names then NULL. */
int dc_list_dir(const char *path, char ***names);
void dc_free_names(char **names, int count);

/* The kernel's NUMA node of PCI function bus_id ("dddd:bb:dd.f"), read
 * through dc_read_file(): the node, -1 when the kernel gives none (no SRAT),
 * -2 when unreadable. */
int dc_sysfs_numa_node(const char *bus_id);

/* Whether the caller may open path (a device node: it is never opened) for
 * reading and writing: 0, or a negative errno (-ENOENT when it does not
 * exist, -EACCES when it may not be opened so).  A device node cannot be
 * kept as contents, so its "files" entry holds the answer instead: "access:
 * ok", or "access: denied" and why; a recording writes it so, and a replay
 * reads any other contents as denied. */
int dc_access(const char *path);

/* The same on the file system only, below root ("" or NULL for "/"); what
 * the recorder uses.  dc_read_file() and dc_list_dir() are part of
 * libdmaconn only (they consult the replay), these of both libraries. */
int dc_sysfs_read_at(const char *root, const char *path, char *buf, size_t len);
int dc_sysfs_list_at(const char *root, const char *path, char ***names);

#endif
