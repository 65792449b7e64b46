/* NVIDIA GPUs as the kernel lists them, for counting devices without NVML. */
#ifndef DMACONN_SYSFS_H
#define DMACONN_SYSFS_H

#include "pci.h"

/*
 * Lists the PCI functions under ROOT/bus/pci/devices with vendor 0x10de and
 * class VGA (0x0300) or 3D controller (0x0302), sorted by address.  root is
 * "/sys" unless DMACONN_SYSFS_ROOT says otherwise (the caller decides).
 * Returns how many there are (0 when the directory is missing) and fills at
 * most max of them.
 */
int dc_sysfs_nvidia_gpus(const char *root, struct dc_pci *out, int max);

#endif
