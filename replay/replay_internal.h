/* SPDX-License-Identifier: BSD-3-Clause */
/* What the parts of libdmaconn_replay share. */
#ifndef DMACONN_REPLAY_INTERNAL_H
#define DMACONN_REPLAY_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "nvml_api.h"
#include "nvml_load.h"
#include "replay_abi.h"

#define REPLAY_EXPORT __attribute__((visibility("default")))
REPLAY_EXPORT const struct dmaconn_replay_ops *dmaconn_replay_ops(void);

/* The file's NVML as its function table; "LIBRARY lacks FUNCTION" names
 * library when a required one was missing.  0, or -1 with err. */
int replay_nvml_bind(struct nvml_api *api, const char *library, char *err, size_t errlen);
/* The library the replayed file says was loaded ("libnvidia-ml.so.1" when it
 * names none; only meaningful when it loaded), and the functions it lacked. */
const char *replay_nvml_library(void);
json_t *replay_nvml_missing(void);

/* The most devices a file may list, and so the most a recording writes. */
#define REPLAY_MAX_DEVICES 4096
/* The keys of a "p2p" entry, by nvmlGpuP2PCapsIndex_t. */
#define REPLAY_P2P_CAPS 5

/* NVML's codes and names, and the fields of the NVML section's objects
 * (replay.c), which record.c writes recordings with: by REPLAY_<object>_<key>. */
extern const struct fmt_ctx replay_nvml_fmt;
enum { REPLAY_L_STATE, REPLAY_L_VERSION, REPLAY_L_TYPE, REPLAY_L_PCI, REPLAY_L_SPEED };
enum { REPLAY_P_ANCESTOR = REPLAY_P2P_CAPS };
enum { REPLAY_M_UUID, REPLAY_M_GI, REPLAY_M_CI };
enum {
	REPLAY_D_NAME, REPLAY_D_UUID, REPLAY_D_PCI, REPLAY_D_CC, REPLAY_D_MIG, REPLAY_D_FABRIC, REPLAY_D_BAR1, REPLAY_D_VIRT,
#define REPLAY_D_QUERY_(fn, key, prop) REPLAY_D_##fn,
	NVML_DEVICE_QUERIES(REPLAY_D_QUERY_)
#undef REPLAY_D_QUERY_
	REPLAY_D_CPUS, REPLAY_D_MEMS, REPLAY_D_NUMA, REPLAY_D_C2C_COUNT, REPLAY_D_C2C_STATUS, REPLAY_D_C2C_BW
};
/* A CPU or node set: its mask's words, and room for its kernel list form
 * (every other one of 4096 CPUs, "0,2,...,4094", takes 10 KiB). */
#define REPLAY_LIST_WORDS 64
#define REPLAY_LIST_LEN (REPLAY_LIST_WORDS * DC_LIST_BITS * 3)
enum { REPLAY_S_DRIVER, REPLAY_S_NVML, REPLAY_S_CUDA, REPLAY_S_CONF, REPLAY_S_COUNT };
/* A device's "fabric": the v3 answer, and v4's typed cliques where the
 * object lists "cliques" (else v4 answers FUNCTION_NOT_FOUND, as a driver
 * without it: recordings made before v4 replay as they did). */
struct replay_fabric {
	nvmlGpuFabricInfo_v3_t v3;
	struct replay_cliques {
		bool v4; /* "cliques" given */
		unsigned int n;
		nvmlGpuFabricClique_v1_t c[NVML_GPU_FABRIC_CLIQUE_MAX];
	} cliques;
};

/* The NVML section's objects, as replay.c reads a file into them and record.c
 * records answers into them: each answer is a return code and, when that is
 * NVML_SUCCESS, a value. */
struct link {
	nvmlReturn_t state_rc, version_rc, type_rc, pci_rc, speed_rc;
	nvmlEnableState_t state;
	unsigned int version, speed;
	nvmlIntNvLinkDeviceType_t type;
	nvmlPciInfo_t pci;
};

struct p2p {
	unsigned int peer;
	nvmlReturn_t status_rc[REPLAY_P2P_CAPS], ancestor_rc;
	nvmlGpuP2PStatus_t status[REPLAY_P2P_CAPS];
	nvmlGpuTopologyLevel_t ancestor;
};

/* A MIG instance of a GPU in MIG mode; its handle is a pointer to it. */
struct mig {
	unsigned int parent;
	nvmlReturn_t uuid_rc, gi_rc, ci_rc;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	unsigned int gi, ci;
};

/* Handles are pointers into the device array. */
struct nvmlDevice_st {
	unsigned int index;
	nvmlReturn_t handle_rc; /* the device is an error object */
	nvmlReturn_t name_rc, uuid_rc, pci_rc, cc_rc, mig_rc, fabric_rc, bar1_rc, virt_rc;
	nvmlReturn_t cpus_rc, mems_rc, numa_rc, c2c_count_rc, c2c_status_rc, c2c_bw_rc;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	unsigned long cpus[REPLAY_LIST_WORDS], mems[REPLAY_LIST_WORDS]; /* affinity */
	unsigned int numa, c2c_count, c2c_status, c2c_bw;
	nvmlPciInfo_t pci;
	int cc[2];
	unsigned int mig[2], virt, nlinks, np2p, nmig;
#define REPLAY_QUERY_MEMBERS_(fn, key, prop) \
	nvmlReturn_t q_##fn##_rc; \
	unsigned int q_##fn;
	NVML_DEVICE_QUERIES(REPLAY_QUERY_MEMBERS_) /* q_FN and its q_FN_rc */
#undef REPLAY_QUERY_MEMBERS_
	struct replay_fabric fabric;
	unsigned long long bar1;
	bool has_nvlink;
	struct link *links;
	struct p2p *p2p;  /* sorted by peer */
	uint16_t *row;	  /* "p2p_row": per peer, its entry of nvml.p2p_answers, P2P_NONE for none */
	struct mig *migs; /* "mig_devices" */
};

/* The system's answers. */
struct replay_system {
	nvmlReturn_t driver_rc, nvml_version_rc, cuda_rc, count_rc, conf_rc;
	nvmlConfComputeSystemState_t conf;
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE], nvml_version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
	int cuda;
	unsigned int count;
};

extern const struct fmt_field replay_link_fields[], replay_p2p_fields[], replay_mig_fields[], replay_dev_fields[],
	replay_sys_fields[];
extern const struct replay_name replay_ancestor_names[];

/*
 * Top-level sections read and recorded by other parts of the component
 * (files.c: "files", sysfs trees; ze.c: "level_zero").  read() gets the
 * section's value and returns 0, or -1 after replay_bad(); release() frees
 * what read() kept; record() adds the section to a recording being written
 * (root is the recording's top-level object) and never fails the recording.
 */
struct replay_section {
	const char *key;
	int (*read)(const char *file, json_t *value);
	void (*release)(void);
	void (*record)(json_t *root);
};
extern const struct replay_section replay_sections[]; /* ends with a NULL key */

/* The "files" section (files.c), and the sysfs files read while recording. */
int replay_files_read(const char *file, json_t *value);
void replay_files_release(void);
void replay_files_record(json_t *root);
void replay_files_note(const char *path, const char *data, size_t len);
void replay_files_forget(void);

/* The "verification" section (verification.c). */
struct dmaconn_replay_verification;
int replay_verification_read(const char *file, json_t *value);
void replay_verification_release(void);
void replay_verification_record(json_t *root);
int replay_verification(const struct dmaconn_replay_verification **out);

/* What the recorder keeps is guarded by replay_rec_lock. */
extern pthread_mutex_t replay_rec_lock;

/* An X-macro entry that puts the recorder's wrapper r_NAME in place of
 * api->NAME, or adds NAME to the JSON array `missing` when the library lacks
 * it (expanded over NVML_FUNCTIONS and ZE_FUNCTIONS); _PRESENT: a function
 * whose absence the recording does not list. */
#define REPLAY_WRAP(fn, ret, params, required) \
	if (api->fn)                           \
		api->fn = r_##fn;              \
	else                                   \
		replay_append(&replay_rec_oom, missing, json_string(#fn));
#define REPLAY_WRAP_PRESENT(fn, ret, params, required) \
	if (api->fn)                                   \
		api->fn = r_##fn;

/* An X-macro entry that puts the replay's replay_NAME in api->NAME unless
 * hidden (the file says the library lacks it), and for a required one fails
 * the table (err: "LIBRARY lacks NAME (not KIND?)"); replay_lacks() does that. */
#define REPLAY_BIND(fn, required, hidden, kind)                                                 \
	if (!(hidden))                                                                          \
		api->fn = replay_##fn;                                                          \
	else if (required)                                                                      \
		return replay_lacks(api, sizeof(*api), library, #fn, kind, err, errlen);
int replay_lacks(void *api, size_t size, const char *library, const char *fn, const char *kind, char *err,
		 size_t errlen);

/* dmaconn_replay_ops()'s record_begin, record_table, record_write and record_pci_gpus (record.c). */
void replay_record_begin(void);
void replay_record_table(const char *vendor, void *table, const char *library, const char *load_error);
int replay_record_write(const char *path, const char *tool, char *err, size_t errlen);
void replay_record_pci_gpus(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int count);

/* 1 when the component is replaying a file (DMACONN_REPLAY), 0 when it
 * records live hardware. */
int replay_active(void);
/* The file to replay into buf: the one libdmaconn passed (its
 * dmaconn_set_replay_file), else DMACONN_REPLAY; "" when none. */
void replay_file(char *buf, size_t len);

/* The ops of ABI 2, implemented by files.c, sections.c and ze.c. */
int replay_files_read_file(const char *path, const char **data, size_t *len);
int replay_files_list_dir(const char *path, const char *const **names, int *count);
const char *replay_library_load_error(const char *which);
const char *replay_host(void);

#endif
