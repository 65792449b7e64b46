/* SPDX-License-Identifier: BSD-3-Clause */
/* NVML's replay (replay_nvml.c) and recorder (record_nvml.c): the "nvml"
 * section of a topology file and the structures both read it into. */
#ifndef DMACONN_REPLAY_NVML_H
#define DMACONN_REPLAY_NVML_H

#include "nvml_api.h"
#include "nvml_load.h"
#include "replay_internal.h"

/* The "nvml" section of replay_sections[]: read and release (replay_nvml.c),
 * record and its recorder (record_nvml.c); the replayed library's load error
 * (NULL when it loaded) and its function table. */
int replay_nvml_read(const char *file, json_t *value);
void replay_nvml_release(void);
void replay_nvml_record(json_t *root);
void replay_nvml_record_begin(void);
void replay_nvml_record_table(void *table, const char *library, const char *load_error);
const char *replay_nvml_load_error(void);
int replay_nvml_table(void *api, char *err, size_t errlen);

/* The file's NVML as its function table; "LIBRARY lacks FUNCTION" names
 * library when a required one was missing.  0, or -1 with err. */
int replay_nvml_bind(struct nvml_api *api, const char *library, char *err, size_t errlen);
/* The library the replayed file says was loaded ("libnvidia-ml.so.1" when it
 * names none; only meaningful when it loaded), and the functions it lacked. */
const char *replay_nvml_library(void);
json_t *replay_nvml_missing(void);

/* The keys of a "p2p" entry, by nvmlGpuP2PCapsIndex_t. */
#define REPLAY_P2P_CAPS 5

/* NVML's codes and names, and the fields of the NVML section's objects
 * (replay_nvml.c), which record_nvml.c writes recordings with: by REPLAY_<object>_<key>. */
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

/* The NVML section's objects, as replay_nvml.c reads a file into them and record_nvml.c
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

#endif
