/* SPDX-License-Identifier: BSD-3-Clause */
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
#define DMACONN_REPLAY_ABI_VERSION 4
#include <stddef.h>

#define DMACONN_REPLAY_BUS_ID_SIZE 32
/* The most a "files" entry holds: a recording keeps at most this much of a file. */
#define DMACONN_REPLAY_FILE_MAX (64 * 1024)

struct nvml_api; /* nvml_load.h */
struct ze_api;   /* ze_load.h */

/* The environment variables that decide device order; a recording pins them. */
#define DMACONN_ORDERING_ENV(X)                                                 \
	X(CUDA_VISIBLE_DEVICES) X(CUDA_DEVICE_ORDER) X(ROCR_VISIBLE_DEVICES)    \
	X(HIP_VISIBLE_DEVICES) X(GPU_DEVICE_ORDINAL) X(ZE_AFFINITY_MASK)        \
	X(ZE_FLAT_DEVICE_HIERARCHY)

/* A recording's "verification" section (docs/replay-format.md): the
 * devices' bus ids in the verification's order, and per verified pair its
 * properties as cuda/verified sets them. */
struct dmaconn_replay_vpair {
	int from, to;
	int nprops;
	const char *const *keys, *const *values;
};
struct dmaconn_replay_verification {
	int ndev;
	const char *const *pci;
	int npairs;
	const struct dmaconn_replay_vpair *pairs;
};

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
	/*
	 * ABI 3: the replayed NVML as its function table (the component exports
	 * no vendor symbol; api->handle stays NULL).  Functions the recorded
	 * library lacked stay NULL.  0, or -1 with "LIBRARY lacks FUNCTION (not
	 * an NVML library?)" in err when a required one is among them.  Only
	 * once nvml_load_error() returned NULL.
	 */
	int (*nvml_table)(struct nvml_api *api, char *err, size_t errlen);
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
	 * "amd_smi"): NULL when the recording says it loaded (its table is then
	 * ze_table's), otherwise the recorded loader message. */
	const char *(*library_load_error)(const char *which);
	/* The node's identity as the file gives it ("host"; recordings write the
	 * host name), or NULL: multi-node detection tells nodes apart by it. */
	const char *(*host)(void);

	/* ABI 3: the replayed Level Zero loader as its function table, as
	 * nvml_table; only once library_load_error("level_zero") returned NULL. */
	int (*ze_table)(struct ze_api *api, char *err, size_t errlen);

	/*
	 * ABI 4: recording (dmaconn_record).  record_begin() forgets what an
	 * earlier recording kept.  While libdmaconn records, each backend hands
	 * its vendor library's function table to record_table() once loaded:
	 * vendor "nvml" (struct nvml_api) or "level_zero" (struct ze_api);
	 * library is the library it loaded (NULL under replay: the replayed
	 * one), or table is NULL and load_error says why the library did not
	 * load.  The functions present are replaced by wrappers that pass each
	 * call on and keep its answer, so that the recording holds exactly the
	 * answers the detectors used.  record_write() writes what was kept, as
	 * a topology file, to path ("recorded" names tool); 0, or -1 with a
	 * one-line message in err.
	 */
	void (*record_begin)(void);
	void (*record_table)(const char *vendor, void *table, const char *library, const char *load_error);
	int (*record_write)(const char *path, const char *tool, char *err, size_t errlen);
	/* While recording: a sysfs file the detectors read (path as they open
	 * it, its contents), and the NVIDIA PCI functions the count without
	 * NVML found. */
	void (*record_file)(const char *path, const char *data, size_t len);
	void (*record_pci_gpus)(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int n);

	/* 1 with the recording's verification section, 0 when it has none. */
	int (*verification)(const struct dmaconn_replay_verification **out);
};

typedef const struct dmaconn_replay_ops *(*dmaconn_replay_ops_fn)(void);

/* int (*)(const char *path): the file to replay instead of DMACONN_REPLAY,
 * from dmaconn_set_replay_file(); 0, or -1 once another file is loaded. */
#define DMACONN_REPLAY_USE_FILE "dmaconn_replay_use_file"

#endif
