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
#define DMACONN_REPLAY_ABI_VERSION 5
#include <stddef.h>

#define DMACONN_REPLAY_BUS_ID_SIZE 32
/* The most a "files" entry holds: a recording keeps at most this much of a file. */
#define DMACONN_REPLAY_FILE_MAX (64 * 1024)

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
	/* For a vendor library, by its backend's name (its section of the file,
	 * "nvml", "level_zero", ...): NULL when the recording says it loaded,
	 * otherwise the recorded loader message ("not recorded" for a library
	 * the component does not replay), replayed as a load failure. */
	const char *(*library_load_error)(const char *which);
	/* The replayed library `which` as its function table (the backend's
	 * struct; the component exports no vendor symbol, and the table's handle
	 * stays NULL).  Functions the recorded library lacked stay NULL.  0, or
	 * -1 with "LIBRARY lacks FUNCTION (not ...?)" in err when a required one
	 * is among them.  Only once library_load_error(which) returned NULL. */
	int (*table)(const char *which, void *api, char *err, size_t errlen);
	/* The GPU PCI functions recorded from sysfs: their number (0 when the
	 * file records none), filling at most max bus ids. */
	int (*pci_gpus)(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int max);
	/* 1 with the recorded contents of the file `path` (an absolute path as
	 * the detector would open it, e.g. "/sys/class/kfd/kfd/topology/nodes/0/
	 * properties"); 0 when the recording has no such file. */
	int (*read_file)(const char *path, const char **data, size_t *len);
	/* 1 with the recorded entries of the directory `path`, in order; 0 when
	 * the recording has no such directory. */
	int (*list_dir)(const char *path, const char *const **names, int *count);
	/* The node's identity as the file gives it ("host"; recordings write the
	 * host name), or NULL: multi-node detection tells nodes apart by it. */
	const char *(*host)(void);

	/*
	 * Recording (dmaconn_record).  record_begin() forgets what an earlier
	 * recording kept; pinned (NULL-terminated, copied) lists the variables
	 * that decide device order, which the recording pins (the backends'
	 * visibility variables).  While libdmaconn records, each backend hands
	 * its vendor library's function table to record_table() once loaded,
	 * under the backend's name; library is the library it loaded (NULL
	 * under replay: the replayed one), or table is NULL and load_error says
	 * why the library did not load.  The functions present are replaced by
	 * wrappers that pass each call on and keep its answer, so that the
	 * recording holds exactly the answers the detectors used.
	 * record_write() writes what was kept, as a topology file, to path
	 * ("recorded" names tool); 0, or -1 with a one-line message in err.
	 */
	void (*record_begin)(const char *const *pinned);
	void (*record_table)(const char *vendor, void *table, const char *library, const char *load_error);
	int (*record_write)(const char *path, const char *tool, char *err, size_t errlen);
	/* While recording: a sysfs file the detectors read (path as they open
	 * it, its contents), and the GPU PCI functions the count without the
	 * vendor library found. */
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
