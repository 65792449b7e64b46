/* SPDX-License-Identifier: BSD-3-Clause */
/* The NVML functions dmaconn may call, kept apart from the types so that the
 * ABI check can expand the list against NVIDIA's own nvml.h. */
#ifndef DMACONN_NVML_FUNCTIONS_H
#define DMACONN_NVML_FUNCTIONS_H

/*
 * X(name, return type, parameter list, required): every NVML function dmaconn
 * may call.  A required function missing from the library makes NVML unusable;
 * an optional one stays NULL and its caller falls back.
 */
#define NVML_CORE_FUNCTIONS(X)                                                             \
	X(nvmlInit_v2, nvmlReturn_t, (void), 1)                                             \
	X(nvmlShutdown, nvmlReturn_t, (void), 0)                                            \
	X(nvmlErrorString, const char *, (nvmlReturn_t), 0)                                 \
	X(nvmlSystemGetDriverVersion, nvmlReturn_t, (char *, unsigned int), 0)              \
	X(nvmlSystemGetNVMLVersion, nvmlReturn_t, (char *, unsigned int), 0)                \
	X(nvmlSystemGetCudaDriverVersion_v2, nvmlReturn_t, (int *), 0)                      \
	X(nvmlDeviceGetCount_v2, nvmlReturn_t, (unsigned int *), 1)                         \
	X(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t, (unsigned int, nvmlDevice_t *), 1)   \
	X(nvmlDeviceGetName, nvmlReturn_t, (nvmlDevice_t, char *, unsigned int), 1)         \
	X(nvmlDeviceGetUUID, nvmlReturn_t, (nvmlDevice_t, char *, unsigned int), 1)         \
	X(nvmlDeviceGetPciInfo_v3, nvmlReturn_t, (nvmlDevice_t, nvmlPciInfo_t *), 1)        \
	X(nvmlDeviceGetCudaComputeCapability, nvmlReturn_t, (nvmlDevice_t, int *, int *), 0) \
	X(nvmlDeviceGetMinorNumber, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0)        \
	X(nvmlDeviceGetMigMode, nvmlReturn_t, (nvmlDevice_t, unsigned int *, unsigned int *), 0) \
	X(nvmlDeviceGetGpuFabricInfoV, nvmlReturn_t, (nvmlDevice_t, nvmlGpuFabricInfo_v3_t *), 0) \
	X(nvmlDeviceGetGpuFabricInfo, nvmlReturn_t, (nvmlDevice_t, nvmlGpuFabricInfo_t *), 0) \
	X(nvmlDeviceGetNvLinkState, nvmlReturn_t, (nvmlDevice_t, unsigned int, nvmlEnableState_t *), 1) \
	X(nvmlDeviceGetNvLinkVersion, nvmlReturn_t, (nvmlDevice_t, unsigned int, unsigned int *), 0) \
	X(nvmlDeviceGetNvLinkRemoteDeviceType, nvmlReturn_t,                                \
	  (nvmlDevice_t, unsigned int, nvmlIntNvLinkDeviceType_t *), 0)                     \
	X(nvmlDeviceGetNvLinkRemotePciInfo_v2, nvmlReturn_t, (nvmlDevice_t, unsigned int, nvmlPciInfo_t *), 1) \
	X(nvmlDeviceGetFieldValues, nvmlReturn_t, (nvmlDevice_t, int, nvmlFieldValue_t *), 0) \
	X(nvmlDeviceGetP2PStatus, nvmlReturn_t,                                             \
	  (nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t *), 0)     \
	X(nvmlDeviceGetTopologyCommonAncestor, nvmlReturn_t,                                \
	  (nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t *), 0)                        \
	X(nvmlDeviceGetBAR1MemoryInfo, nvmlReturn_t, (nvmlDevice_t, nvmlBAR1Memory_t *), 0) \
	X(nvmlDeviceGetVirtualizationMode, nvmlReturn_t, (nvmlDevice_t, nvmlGpuVirtualizationMode_t *), 0) \
	X(nvmlSystemGetConfComputeState, nvmlReturn_t, (nvmlConfComputeSystemState_t *), 0) \
	X(nvmlDeviceGetCpuAffinityWithinScope, nvmlReturn_t,                                \
	  (nvmlDevice_t, unsigned int, unsigned long *, nvmlAffinityScope_t), 0)            \
	X(nvmlDeviceGetMemoryAffinity, nvmlReturn_t,                                        \
	  (nvmlDevice_t, unsigned int, unsigned long *, nvmlAffinityScope_t), 0)            \
	X(nvmlDeviceGetNumaNodeId, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0)

/* Functions only the newest nvml.h declares (13.5: typed fabric cliques);
 * optional like the others, and proven against that header alone. */
#define NVML_NEWEST_FUNCTIONS(X) \
	X(nvmlDeviceGetGpuFabricInfo_v4, nvmlReturn_t, (nvmlDevice_t, nvmlGpuFabricInfo_v4_t *), 0)

/* The functions a replay answers and a recording keeps. */
#define NVML_FUNCTIONS(X) NVML_CORE_FUNCTIONS(X) NVML_NEWEST_FUNCTIONS(X)

/*
 * The MIG queries, all optional: a GPU in MIG mode lists its instances
 * (CUDA_VISIBLE_DEVICES may name them).  Kept in a list of their own so
 * that a stand-in may leave them out (they then stay NULL).
 */
#define NVML_MIG_FUNCTIONS(X)                                                              \
	X(nvmlDeviceGetMaxMigDeviceCount, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0)  \
	X(nvmlDeviceGetMigDeviceHandleByIndex, nvmlReturn_t,                                \
	  (nvmlDevice_t, unsigned int, nvmlDevice_t *), 0)                                  \
	X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, nvmlReturn_t,                       \
	  (nvmlDevice_t, nvmlDevice_t *), 0)                                                \
	X(nvmlDeviceGetGpuInstanceId, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0)      \
	X(nvmlDeviceGetComputeInstanceId, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0)

/* Every function the loader binds and the ABI check proves. */
#define NVML_ALL_FUNCTIONS(X) NVML_FUNCTIONS(X) NVML_MIG_FUNCTIONS(X)

#endif
