/* SPDX-License-Identifier: BSD-3-Clause */
/* Every NVML constant, size and offset dmaconn declares, expanded once
 * against src/backends/nvml/nvml_api.h and once against NVIDIA's nvml.h: each
 * equal in every header since the oldest dmaconn supports. */
#include "abi_check.h"

#define NVML_ABI_ITEMS(C, S, O)                                                         \
	C(NVML_SUCCESS) C(NVML_ERROR_UNINITIALIZED) C(NVML_ERROR_INVALID_ARGUMENT)      \
	C(NVML_ERROR_NOT_SUPPORTED) C(NVML_ERROR_NO_PERMISSION)                         \
	C(NVML_ERROR_ALREADY_INITIALIZED) C(NVML_ERROR_NOT_FOUND)                       \
	C(NVML_ERROR_INSUFFICIENT_SIZE) C(NVML_ERROR_INSUFFICIENT_POWER)                \
	C(NVML_ERROR_DRIVER_NOT_LOADED) C(NVML_ERROR_TIMEOUT) C(NVML_ERROR_IRQ_ISSUE)   \
	C(NVML_ERROR_LIBRARY_NOT_FOUND) C(NVML_ERROR_FUNCTION_NOT_FOUND)                \
	C(NVML_ERROR_CORRUPTED_INFOROM) C(NVML_ERROR_GPU_IS_LOST)                       \
	C(NVML_ERROR_RESET_REQUIRED) C(NVML_ERROR_OPERATING_SYSTEM)                     \
	C(NVML_ERROR_LIB_RM_VERSION_MISMATCH) C(NVML_ERROR_IN_USE) C(NVML_ERROR_MEMORY) \
	C(NVML_ERROR_NO_DATA) C(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED)                      \
	C(NVML_ERROR_INSUFFICIENT_RESOURCES) C(NVML_ERROR_FREQ_NOT_SUPPORTED)           \
	C(NVML_ERROR_ARGUMENT_VERSION_MISMATCH) C(NVML_ERROR_DEPRECATED)                \
	C(NVML_ERROR_NOT_READY) C(NVML_ERROR_GPU_NOT_FOUND) C(NVML_ERROR_INVALID_STATE)  \
	C(NVML_ERROR_UNKNOWN)                                                           \
	C(NVML_FEATURE_DISABLED) C(NVML_FEATURE_ENABLED)                                \
	C(NVML_DEVICE_MIG_DISABLE) C(NVML_DEVICE_MIG_ENABLE)                            \
	C(NVML_NVLINK_DEVICE_TYPE_GPU) C(NVML_NVLINK_DEVICE_TYPE_IBMNPU)                \
	C(NVML_NVLINK_DEVICE_TYPE_SWITCH) C(NVML_NVLINK_DEVICE_TYPE_UNKNOWN)            \
	C(NVML_TOPOLOGY_INTERNAL) C(NVML_TOPOLOGY_SINGLE) C(NVML_TOPOLOGY_MULTIPLE)     \
	C(NVML_TOPOLOGY_HOSTBRIDGE) C(NVML_TOPOLOGY_NODE) C(NVML_TOPOLOGY_SYSTEM)       \
	C(NVML_P2P_STATUS_OK) C(NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED)                  \
	C(NVML_P2P_STATUS_GPU_NOT_SUPPORTED) C(NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED) \
	C(NVML_P2P_STATUS_DISABLED_BY_REGKEY) C(NVML_P2P_STATUS_NOT_SUPPORTED)          \
	C(NVML_P2P_STATUS_UNKNOWN)                                                      \
	C(NVML_P2P_CAPS_INDEX_READ) C(NVML_P2P_CAPS_INDEX_WRITE)                        \
	C(NVML_P2P_CAPS_INDEX_NVLINK) C(NVML_P2P_CAPS_INDEX_ATOMICS)                    \
	C(NVML_P2P_CAPS_INDEX_PCI)                                                      \
	C(NVML_NVLINK_VERSION_INVALID) C(NVML_NVLINK_VERSION_1_0)                       \
	C(NVML_NVLINK_VERSION_2_0) C(NVML_NVLINK_VERSION_2_2) C(NVML_NVLINK_VERSION_3_0) \
	C(NVML_NVLINK_VERSION_3_1) C(NVML_NVLINK_VERSION_4_0) C(NVML_NVLINK_VERSION_5_0) \
	C(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE)                                           \
	C(NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE) C(NVML_DEVICE_UUID_V2_BUFFER_SIZE)     \
	C(NVML_DEVICE_NAME_V2_BUFFER_SIZE) C(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE)    \
	C(NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE) C(NVML_GPU_FABRIC_UUID_LEN)             \
	C(NVML_GPU_FABRIC_STATE_NOT_SUPPORTED) C(NVML_GPU_FABRIC_STATE_NOT_STARTED)     \
	C(NVML_GPU_FABRIC_STATE_IN_PROGRESS) C(NVML_GPU_FABRIC_STATE_COMPLETED)         \
	C(nvmlGpuFabricInfo_v2) C(nvmlGpuFabricInfo_v3)                                 \
	C(NVML_VALUE_TYPE_UNSIGNED_INT) C(NVML_FI_DEV_NVLINK_LINK_COUNT)                \
	C(NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT) C(NVML_FI_DEV_NVLINK_GET_SPEED)    \
	C(NVML_FI_DEV_NVLINK_GET_STATE) C(NVML_FI_DEV_NVLINK_GET_VERSION)               \
	C(NVML_FI_DEV_C2C_LINK_COUNT) C(NVML_FI_DEV_C2C_LINK_GET_STATUS)                \
	C(NVML_FI_DEV_C2C_LINK_GET_MAX_BW) C(NVML_AFFINITY_SCOPE_NODE)                  \
	C(NVML_CC_SYSTEM_FEATURE_DISABLED) C(NVML_CC_SYSTEM_FEATURE_ENABLED)            \
	C(NVML_GPU_VIRTUALIZATION_MODE_NONE) C(NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH) \
	C(NVML_GPU_VIRTUALIZATION_MODE_VGPU) C(NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU)  \
	C(NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA)                                       \
	C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW)                                \
	C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY)                             \
	C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY)                            \
	C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY)                    \
	C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION)                    \
	C(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION)                    \
	C(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_UNHEALTHY)                            \
	C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE)                             \
	C(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE)                     \
	C(NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED) C(NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY) \
	C(NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY) C(NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY) \
	S(nvmlReturn_t) S(nvmlDevice_t) S(nvmlEnableState_t) S(nvmlIntNvLinkDeviceType_t) \
	S(nvmlGpuTopologyLevel_t) S(nvmlGpuP2PStatus_t) S(nvmlGpuP2PCapsIndex_t)        \
	S(nvmlGpuFabricState_t) S(nvmlAffinityScope_t) S(nvmlPciInfo_t) S(nvmlGpuFabricInfo_t)                 \
	S(nvmlGpuFabricInfo_v2_t) S(nvmlGpuFabricInfo_v3_t) S(nvmlValue_t)              \
	S(nvmlFieldValue_t) S(nvmlBAR1Memory_t) S(nvmlConfComputeSystemState_t)        \
	S(nvmlGpuVirtualizationMode_t)                                                  \
	O(nvmlBAR1Memory_t, bar1Total) O(nvmlBAR1Memory_t, bar1Free) O(nvmlBAR1Memory_t, bar1Used) \
	O(nvmlConfComputeSystemState_t, environment) O(nvmlConfComputeSystemState_t, ccFeature) \
	O(nvmlConfComputeSystemState_t, devToolsMode)                                   \
	O(nvmlPciInfo_t, busIdLegacy) O(nvmlPciInfo_t, domain) O(nvmlPciInfo_t, bus)    \
	O(nvmlPciInfo_t, device) O(nvmlPciInfo_t, pciDeviceId)                          \
	O(nvmlPciInfo_t, pciSubSystemId) O(nvmlPciInfo_t, busId)                        \
	O(nvmlGpuFabricInfo_t, clusterUuid) O(nvmlGpuFabricInfo_t, status)              \
	O(nvmlGpuFabricInfo_t, cliqueId) O(nvmlGpuFabricInfo_t, state)                  \
	O(nvmlGpuFabricInfo_v2_t, version) O(nvmlGpuFabricInfo_v2_t, clusterUuid)       \
	O(nvmlGpuFabricInfo_v2_t, status) O(nvmlGpuFabricInfo_v2_t, cliqueId)           \
	O(nvmlGpuFabricInfo_v2_t, state) O(nvmlGpuFabricInfo_v2_t, healthMask)         \
	O(nvmlGpuFabricInfo_v3_t, version) O(nvmlGpuFabricInfo_v3_t, clusterUuid)       \
	O(nvmlGpuFabricInfo_v3_t, status) O(nvmlGpuFabricInfo_v3_t, cliqueId)           \
	O(nvmlGpuFabricInfo_v3_t, state) O(nvmlGpuFabricInfo_v3_t, healthMask)         \
	O(nvmlGpuFabricInfo_v3_t, healthSummary)                                        \
	O(nvmlFieldValue_t, fieldId) O(nvmlFieldValue_t, scopeId)                       \
	O(nvmlFieldValue_t, timestamp) O(nvmlFieldValue_t, latencyUsec)                 \
	O(nvmlFieldValue_t, valueType) O(nvmlFieldValue_t, nvmlReturn)                  \
	O(nvmlFieldValue_t, value)

/*
 * What grows with the hardware (NVML 13.5 raised NVML_NVLINK_MAX_LINKS from
 * 18 to 36 for NVLink 6): dmaconn declares the newest header's value.  Built
 * against that header (DMACONN_NVML_NEWEST, the version tools/setup-deps.sh
 * fetches) each is proven equal; against an older one (a CUDA toolkit's),
 * at least the header's, so that nothing a driver of it reports is cut off.
 */
#define NVML_ABI_MAXIMA(C) C(NVML_NVLINK_MAX_LINKS)
/* Items only the newest header declares; compared against it alone. */
#define NVML_ABI_NEWEST_ITEMS(C, S, O)                                                  \
	C(NVML_NVLINK_VERSION_6_0) C(NVML_GPU_FABRIC_CLIQUE_MAX)                        \
	C(NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER)                                  \
	C(NVML_GPU_FABRIC_CLIQUE_TYPE_MULTICAST_POINTER)                                \
	C(NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_LOGICAL_ENDPOINT)                         \
	C(NVML_GPU_FABRIC_CLIQUE_TYPE_MULTICAST_LOGICAL_ENDPOINT)                       \
	S(nvmlGpuFabricClique_v1_t) S(nvmlGpuFabricInfo_v4_t)                           \
	O(nvmlGpuFabricClique_v1_t, type) O(nvmlGpuFabricClique_v1_t, id)               \
	O(nvmlGpuFabricInfo_v4_t, clusterUuid) O(nvmlGpuFabricInfo_v4_t, status)        \
	O(nvmlGpuFabricInfo_v4_t, cliques) O(nvmlGpuFabricInfo_v4_t, numCliques)        \
	O(nvmlGpuFabricInfo_v4_t, state) O(nvmlGpuFabricInfo_v4_t, healthMask)          \
	O(nvmlGpuFabricInfo_v4_t, healthSummary)
