/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay component's reader: the input is a topology file
 * (docs/replay-format.md).  dmaconn_replay_fuzz_load() (replay/component.c,
 * compiled with DMACONN_FUZZING) parses it into the component's structures;
 * then every NVML call is answered through the component's function table
 * (every device, link and pair, out-of-range ones too), every other entry
 * of its ops is called, and the structures are freed.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nvml_load.h"
#include "replay_abi.h"
#include "ze_load.h"

int dmaconn_replay_fuzz_load(const char *data, size_t len);
void dmaconn_replay_fuzz_release(void);
const struct dmaconn_replay_ops *dmaconn_replay_ops(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define P2P_CAPS 5
#define MAX_LINKS 64

static void device(const struct nvml_api *a, unsigned int i, unsigned int count)
{
	nvmlDevice_t h = NULL, h2 = NULL;
	nvmlPciInfo_t pci;
	char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	unsigned int u = 0;
	int x = 0, y = 0;
	nvmlGpuFabricInfo_v3_t v3 = { .version = nvmlGpuFabricInfo_v3 };
	nvmlGpuFabricInfo_v3_t v2 = { .version = nvmlGpuFabricInfo_v2 };
	nvmlGpuFabricInfo_t f1;
	nvmlGpuFabricInfo_v4_t f4;
	if (a->nvmlDeviceGetHandleByIndex_v2(i, &h) != NVML_SUCCESS)
		return;
	a->nvmlDeviceGetName(h, buf, sizeof(buf));
	a->nvmlDeviceGetUUID(h, buf, 8);
	a->nvmlDeviceGetPciInfo_v3(h, &pci);
	if (a->nvmlDeviceGetCudaComputeCapability)
		a->nvmlDeviceGetCudaComputeCapability(h, &x, &y);
	if (a->nvmlDeviceGetMigMode)
		a->nvmlDeviceGetMigMode(h, &u, &u);
	if (a->nvmlDeviceGetGpuFabricInfoV) {
		a->nvmlDeviceGetGpuFabricInfoV(h, &v3);
		a->nvmlDeviceGetGpuFabricInfoV(h, &v2);
	}
	if (a->nvmlDeviceGetGpuFabricInfo)
		a->nvmlDeviceGetGpuFabricInfo(h, &f1);
	if (a->nvmlDeviceGetGpuFabricInfo_v4)
		a->nvmlDeviceGetGpuFabricInfo_v4(h, &f4);
	for (unsigned int l = 0; l <= MAX_LINKS; l++) {
		nvmlEnableState_t st;
		nvmlIntNvLinkDeviceType_t type;
		a->nvmlDeviceGetNvLinkState(h, l, &st);
		if (a->nvmlDeviceGetNvLinkVersion)
			a->nvmlDeviceGetNvLinkVersion(h, l, &u);
		if (a->nvmlDeviceGetNvLinkRemoteDeviceType)
			a->nvmlDeviceGetNvLinkRemoteDeviceType(h, l, &type);
		a->nvmlDeviceGetNvLinkRemotePciInfo_v2(h, l, &pci);
	}
	/* Placement: affinity masks of every size (the node scope and another),
	 * the memory's NUMA node and the C2C fields. */
	unsigned long set[70];
	for (unsigned int words = 1; words <= 70; words += 23) {
		for (nvmlAffinityScope_t scope = 0; scope <= 2; scope++) {
			if (a->nvmlDeviceGetCpuAffinityWithinScope)
				a->nvmlDeviceGetCpuAffinityWithinScope(h, words, set, scope);
			if (a->nvmlDeviceGetMemoryAffinity)
				a->nvmlDeviceGetMemoryAffinity(h, words, set, scope);
		}
	}
	if (a->nvmlDeviceGetNumaNodeId)
		a->nvmlDeviceGetNumaNodeId(h, &u);
	nvmlFieldValue_t c2c[3] = { { .fieldId = NVML_FI_DEV_C2C_LINK_COUNT },
				    { .fieldId = NVML_FI_DEV_C2C_LINK_GET_STATUS },
				    { .fieldId = NVML_FI_DEV_C2C_LINK_GET_MAX_BW } };
	if (a->nvmlDeviceGetFieldValues)
		a->nvmlDeviceGetFieldValues(h, 3, c2c);
	nvmlFieldValue_t fv[NVML_NVLINK_MAX_LINKS * 3 + 3];
	memset(fv, 0, sizeof(fv));
	for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		fv[3 * l] = (nvmlFieldValue_t){ .fieldId = NVML_FI_DEV_NVLINK_GET_STATE, .scopeId = l };
		fv[3 * l + 1] = (nvmlFieldValue_t){ .fieldId = NVML_FI_DEV_NVLINK_GET_VERSION, .scopeId = l };
		fv[3 * l + 2] = (nvmlFieldValue_t){ .fieldId = NVML_FI_DEV_NVLINK_GET_SPEED, .scopeId = l };
	}
	fv[3 * NVML_NVLINK_MAX_LINKS].fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT;
	fv[3 * NVML_NVLINK_MAX_LINKS + 1].fieldId = NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT;
	fv[3 * NVML_NVLINK_MAX_LINKS + 2].fieldId = 0x7fffffff;
	if (a->nvmlDeviceGetFieldValues)
		a->nvmlDeviceGetFieldValues(h, (int)(sizeof(fv) / sizeof(fv[0])), fv);
	for (unsigned int j = 0; j < count && j < 64; j++) {
		nvmlGpuP2PStatus_t ps;
		nvmlGpuTopologyLevel_t level;
		if (a->nvmlDeviceGetHandleByIndex_v2(j, &h2) != NVML_SUCCESS)
			continue;
		for (int c = -1; a->nvmlDeviceGetP2PStatus && c <= P2P_CAPS; c++)
			a->nvmlDeviceGetP2PStatus(h, h2, (nvmlGpuP2PCapsIndex_t)c, &ps);
		if (a->nvmlDeviceGetTopologyCommonAncestor)
			a->nvmlDeviceGetTopologyCommonAncestor(h, h2, &level);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (dmaconn_replay_fuzz_load((const char *)data, size) == 0) {
		const struct dmaconn_replay_ops *ops = dmaconn_replay_ops();
		struct nvml_api api;
		struct ze_api zapi;
		char buf[1024];
		unsigned int count = 0;
		int cuda = 0;
		if (ops->table("nvml", &api, buf, sizeof(buf)) == 0) {
			api.nvmlInit_v2();
			if (api.nvmlSystemGetDriverVersion)
				api.nvmlSystemGetDriverVersion(buf, 80);
			if (api.nvmlSystemGetNVMLVersion)
				api.nvmlSystemGetNVMLVersion(buf, 4);
			if (api.nvmlSystemGetCudaDriverVersion_v2)
				api.nvmlSystemGetCudaDriverVersion_v2(&cuda);
			api.nvmlDeviceGetCount_v2(&count);
			for (unsigned int i = 0; i <= count && i < 64; i++)
				device(&api, i, count);
			api.nvmlShutdown();
		}
		const char *value;
		char ids[4][DMACONN_REPLAY_BUS_ID_SIZE];
		const char *data_ = NULL;
		const char *const *names_ = NULL;
		size_t len_ = 0;
		int n_ = 0;
		ops->getenv("CUDA_VISIBLE_DEVICES", &value);
		ops->table("level_zero", &zapi, buf, sizeof(buf));
		ops->library_load_error("nvml");
		ops->pci_gpus(ids, 4);
		ops->read_file("/sys/class/kfd/kfd/topology/nodes/0/properties", &data_, &len_);
		ops->list_dir("/sys/class/kfd/kfd/topology/nodes", &names_, &n_);
		ops->library_load_error("level_zero");
		ops->host();
	}
	dmaconn_replay_fuzz_release();
	return 0;
}
