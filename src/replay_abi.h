/*
 * The contract between libdmaconn and its optional replay component
 * (libdmaconn_replay), which answers the vendor-library calls of every
 * detector from a topology file (docs/replay-format.md).  The core looks the
 * component up with dlopen/dlsym only when DMACONN_REPLAY is set, so that the
 * core itself depends on libc, libdl and pthreads alone.
 */
#ifndef DMACONN_REPLAY_ABI_H
#define DMACONN_REPLAY_ABI_H

#define DMACONN_REPLAY_SONAME "libdmaconn_replay.so.0"
#define DMACONN_REPLAY_ABI_VERSION 2
#include <stddef.h>

#define DMACONN_REPLAY_BUS_ID_SIZE 32

/* The environment variables that decide device order; a recording pins them. */
#define DMACONN_ORDERING_ENV(X)                                                 \
	X(CUDA_VISIBLE_DEVICES) X(CUDA_DEVICE_ORDER) X(ROCR_VISIBLE_DEVICES)    \
	X(HIP_VISIBLE_DEVICES) X(GPU_DEVICE_ORDINAL) X(ZE_AFFINITY_MASK)        \
	X(ZE_FLAT_DEVICE_HIERARCHY)

struct dmaconn_replay_ops {
	unsigned int abi_version;
	/* NULL when the file named by DMACONN_REPLAY loaded; otherwise a message
	 * "FILE: line L, column C: what is wrong". */
	const char *(*load_error)(void);
	/* 1 when the file pins `name` (*value is its value, NULL for unset);
	 * 0 when the live environment applies. */
	int (*getenv)(const char *name, const char **value);
	/* NULL when the recorded NVML library loaded; otherwise the recorded
	 * loader message, replayed as a load failure. */
	const char *(*nvml_load_error)(void);
	/* 1 when the recorded NVML library lacked `symbol`. */
	int (*nvml_symbol_missing)(const char *symbol);
	/* The NVIDIA GPU PCI functions recorded from sysfs: their number (0 when
	 * the file records none), filling at most max bus ids. */
	int (*pci_gpus)(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int max);

	/* ABI 2: sysfs trees and other vendor libraries. */
	/* 1 with the recorded contents of the file `path` (an absolute path as
	 * the detector would open it, e.g. "/sys/class/kfd/kfd/topology/nodes/0/
	 * properties"); 0 when the recording has no such file. */
	int (*read_file)(const char *path, const char **data, size_t *len);
	/* 1 with the recorded entries of the directory `path`, in order; 0 when
	 * the recording has no such directory. */
	int (*list_dir)(const char *path, const char *const **names, int *count);
	/* For a vendor library other than NVML ("level_zero", "rocm_smi",
	 * "amd_smi"): NULL when the recording says it loaded (the component then
	 * exports its functions), otherwise the recorded loader message. */
	const char *(*library_load_error)(const char *which);
	/* The node's identity as the file gives it ("host"; recordings write the
	 * host name), or NULL: multi-node detection tells nodes apart by it. */
	const char *(*host)(void);
};

typedef const struct dmaconn_replay_ops *(*dmaconn_replay_ops_fn)(void);

/* int (*)(const char *path): the file to replay instead of DMACONN_REPLAY,
 * from dmaconn_set_replay_file(); 0, or -1 once another file is loaded. */
#define DMACONN_REPLAY_USE_FILE "dmaconn_replay_use_file"

#endif
