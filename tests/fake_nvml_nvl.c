/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in libnvidia-ml for tests and benchmarks (DMACONN_NVML_LIBRARY
 * names it): an NVL-style rack of N GPUs, each with L active NVLinks to
 * NVSwitches and its fabric registration completed in one clique, computed
 * on each call -- no file to parse, so that a benchmark measures dmaconn
 * alone.  Links past the last answer INVALID_ARGUMENT, as a driver's do.
 *
 *   DMACONN_FAKE_NVML_GPUS  N, 1..4096 (default 8)
 *   DMACONN_FAKE_NVML_LINKS L, 1..64 (default 18; 36 for NVLink 6 GPUs)
 *   DMACONN_FAKE_NVML_MIG   comma-separated NVML indices of GPUs in MIG
 *                           mode, each with two MIG instances (GPU
 *                           instances 1 and 2, compute instance 0)
 *   DMACONN_FAKE_NVML_INIT  what nvmlInit_v2 returns, an nvmlReturn_t
 *                           (e.g. 9, NVML_ERROR_DRIVER_NOT_LOADED; default 0)
 *
 * GPU i: UUID GPU-fa4e0000-0000-4000-8000-<i, 12 hex digits>, bus
 * <i / 240, 8 hex digits>:<0x10 + i % 240>:00.0; its MIG instance k (0, 1):
 * MIG-fa4e0000-<i, 4 hex>-5000-8000-00000000000<k>.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define LINKS fake_links
#define MIG_BASE 0x100000u

/* Read once, by nvmlInit_v2: the calls are counted in millions at scale. */
static int fake_n = 8;
static unsigned int fake_links = 18;
static unsigned char fake_mig_mode[4096];

static int fake_gpus(void)
{
	return fake_n;
}

static int fake_in_mig(int i)
{
	return i >= 0 && i < 4096 && fake_mig_mode[i];
}

static void fake_configure(void)
{
	const char *s = getenv("DMACONN_FAKE_NVML_GPUS");
	int n = s && *s ? atoi(s) : 8;
	fake_n = n < 1 ? 1 : n > 4096 ? 4096 : n;
	s = getenv("DMACONN_FAKE_NVML_LINKS");
	n = s && *s ? atoi(s) : 18;
	fake_links = n < 1 ? 1 : n > 64 ? 64 : (unsigned int)n;
	memset(fake_mig_mode, 0, sizeof(fake_mig_mode));
	s = getenv("DMACONN_FAKE_NVML_MIG");
	for (const char *p = s; p && *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v >= 0 && v < 4096)
			fake_mig_mode[v] = 1;
		p = *end == ',' ? end + 1 : end;
	}
}

/* GPU i's handle is i + 1; MIG instance k of GPU i is MIG_BASE + 2 i + k. */
static int fake_gpu(nvmlDevice_t h)
{
	uintptr_t v = (uintptr_t)h;
	return v >= 1 && v <= (uintptr_t)fake_gpus() ? (int)(v - 1) : -1;
}

static int fake_mig(nvmlDevice_t h, int *k)
{
	uintptr_t v = (uintptr_t)h;
	if (v < MIG_BASE || v >= MIG_BASE + 2u * (uintptr_t)fake_gpus())
		return -1;
	*k = (int)((v - MIG_BASE) & 1);
	return (int)((v - MIG_BASE) / 2);
}

FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void);
FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	const char *init = getenv("DMACONN_FAKE_NVML_INIT");
	fake_configure();
	return init && *init ? (nvmlReturn_t)atoi(init) : NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void);
FAKE_EXPORT nvmlReturn_t nvmlShutdown(void)
{
	return NVML_SUCCESS;
}

FAKE_EXPORT const char *nvmlErrorString(nvmlReturn_t r);
FAKE_EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == NVML_SUCCESS ? "Success" : "Fake error";
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	*count = (unsigned int)fake_gpus();
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
	if (i >= (unsigned int)fake_gpus())
		return NVML_ERROR_INVALID_ARGUMENT;
	*h = (nvmlDevice_t)(uintptr_t)(i + 1);
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned int len);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned int len)
{
	if (fake_gpu(h) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(name, len, "NVIDIA GB200");
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char *uuid, unsigned int len);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char *uuid, unsigned int len)
{
	int k, i = fake_gpu(h);
	if (i >= 0) {
		snprintf(uuid, len, "GPU-fa4e0000-0000-4000-8000-%012x", (unsigned int)i);
		return NVML_SUCCESS;
	}
	if ((i = fake_mig(h, &k)) >= 0) {
		snprintf(uuid, len, "MIG-fa4e0000-%04x-5000-8000-%012x", (unsigned int)i, (unsigned int)k);
		return NVML_SUCCESS;
	}
	return NVML_ERROR_INVALID_ARGUMENT;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t *pci);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t *pci)
{
	int i = fake_gpu(h);
	if (i < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	pci->domain = (unsigned int)i / 240;
	pci->bus = 0x10 + (unsigned int)i % 240;
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:00.0", pci->domain, pci->bus);
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:00.0", pci->domain & 0xffff, pci->bus);
	pci->pciDeviceId = 0x294110de;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor)
{
	if (fake_gpu(h) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = 10;
	*minor = 0;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int *current, unsigned int *pending);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int *current, unsigned int *pending)
{
	int i = fake_gpu(h);
	if (i < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*current = *pending = fake_in_mig(i) ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t h, nvmlGpuFabricInfo_v3_t *info);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t h, nvmlGpuFabricInfo_v3_t *info)
{
	if (fake_gpu(h) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (info->version != nvmlGpuFabricInfo_v3)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	memset(info->clusterUuid, 0xab, sizeof(info->clusterUuid));
	info->status = NVML_SUCCESS;
	info->cliqueId = 1;
	info->state = NVML_GPU_FABRIC_STATE_COMPLETED;
	info->healthMask = 0;
	info->healthSummary = 0;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t h, unsigned int l, nvmlEnableState_t *on);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t h, unsigned int l, nvmlEnableState_t *on)
{
	if (fake_gpu(h) < 0 || l >= LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	*on = NVML_FEATURE_ENABLED;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t h, unsigned int l, unsigned int *v);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t h, unsigned int l, unsigned int *v)
{
	if (fake_gpu(h) < 0 || l >= LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	*v = 7;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t h, unsigned int l,
							      nvmlIntNvLinkDeviceType_t *type);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t h, unsigned int l,
							      nvmlIntNvLinkDeviceType_t *type)
{
	if (fake_gpu(h) < 0 || l >= LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	*type = NVML_NVLINK_DEVICE_TYPE_SWITCH;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t h, unsigned int l, nvmlPciInfo_t *pci);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t h, unsigned int l, nvmlPciInfo_t *pci)
{
	if (fake_gpu(h) < 0 || l >= LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	snprintf(pci->busId, sizeof(pci->busId), "FFFFFFFF:FF:FF.0");
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t h, int count, nvmlFieldValue_t *values);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t h, int count, nvmlFieldValue_t *values)
{
	if (fake_gpu(h) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int k = 0; k < count; k++) {
		nvmlFieldValue_t *v = &values[k];
		v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
		v->nvmlReturn = NVML_SUCCESS;
		switch (v->fieldId) {
		case NVML_FI_DEV_NVLINK_GET_STATE:
			v->nvmlReturn = v->scopeId < LINKS ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
			v->value.uiVal = NVML_FEATURE_ENABLED;
			break;
		case NVML_FI_DEV_NVLINK_GET_SPEED:
			v->nvmlReturn = v->scopeId < LINKS ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
			v->value.uiVal = 53125;
			break;
		case NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT:
		case NVML_FI_DEV_NVLINK_LINK_COUNT:
			v->value.uiVal = LINKS;
			break;
		default:
			v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		}
	}
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t cap,
						 nvmlGpuP2PStatus_t *status);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t cap,
						 nvmlGpuP2PStatus_t *status)
{
	if (fake_gpu(a) < 0 || fake_gpu(b) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*status = cap == NVML_P2P_CAPS_INDEX_PCI ? NVML_P2P_STATUS_NOT_SUPPORTED : NVML_P2P_STATUS_OK;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
							      nvmlGpuTopologyLevel_t *level);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
							      nvmlGpuTopologyLevel_t *level)
{
	if (fake_gpu(a) < 0 || fake_gpu(b) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*level = NVML_TOPOLOGY_SYSTEM;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned int *count);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned int *count)
{
	int i = fake_gpu(h);
	if (i < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = fake_in_mig(i) ? 7 : 0;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned int k, nvmlDevice_t *mig);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned int k, nvmlDevice_t *mig)
{
	int i = fake_gpu(h);
	if (i < 0 || !fake_in_mig(i) || k >= 7)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (k >= 2)
		return NVML_ERROR_NOT_FOUND;
	*mig = (nvmlDevice_t)(uintptr_t)(MIG_BASE + 2u * (unsigned int)i + k);
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t *h);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t *h)
{
	int k, i = fake_mig(mig, &k);
	if (i < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*h = (nvmlDevice_t)(uintptr_t)(i + 1);
	return NVML_SUCCESS;
}

/* GPU instance k + 1 and compute instance 0 of MIG instance k. */
static nvmlReturn_t fake_mig_id(nvmlDevice_t mig, unsigned int *id, int ci)
{
	int k;
	if (fake_mig(mig, &k) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*id = ci ? 0 : (unsigned int)k + 1;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned int *id);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned int *id)
{
	return fake_mig_id(mig, id, 0);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t mig, unsigned int *id);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t mig, unsigned int *id)
{
	return fake_mig_id(mig, id, 1);
}
