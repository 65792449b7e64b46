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

/* The library the replayed file says was loaded ("libnvidia-ml.so.1" when it
 * names none; only meaningful when it loaded), and the functions it lacked. */
const char *replay_nvml_library(void);
json_t *replay_nvml_missing(void);

/* The keys of a "p2p" entry, by nvmlGpuP2PCapsIndex_t. */
#define REPLAY_P2P_CAPS 5

/* NVML's codes and names, and the fields of the NVML section's objects
 * (replay_nvml.c), which record_nvml.c writes recordings with. */
extern const struct fmt_ctx replay_nvml_fmt;
/* A CPU or node set: its mask's words, and room for its kernel list form
 * (every other one of 4096 CPUs, "0,2,...,4094", takes 10 KiB). */
#define REPLAY_LIST_WORDS 64
#define REPLAY_LIST_LEN (REPLAY_LIST_WORDS * DC_LIST_BITS * 3)
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

/*
 * A fabric answer: the fabric kept (f) out to the caller's struct info of
 * version v (1: nvmlGpuFabricInfo_t; 2 or 3: nvmlGpuFabricInfoV's, which may
 * be a v2 one, a prefix of v3: no byte past it is written; 4:
 * nvmlGpuFabricInfo_v4_t), or !out, from it into f (zeroed; v4's clique_id
 * is its first unicast pointer clique, as NVML maps it).  An affinity mask
 * of from_words words into one of words words.
 */
void replay_nvml_fabric(struct replay_fabric *f, void *info, int v, bool out);
void replay_nvml_mask(unsigned long *to, unsigned int words, const unsigned long *from, unsigned int from_words);

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
	nvmlReturn_t cpus_rc, mems_rc, numa_rc, c2c_rc[3];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	unsigned long cpus[REPLAY_LIST_WORDS], mems[REPLAY_LIST_WORDS]; /* affinity */
	unsigned int numa, c2c[3]; /* C2C: link count, status, max bandwidth */
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
