/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The subset of the NVML ABI that dmaconn uses, declared here so that no
 * NVIDIA SDK is needed to build.  Every constant, struct layout and signature
 * below is checked against the real nvml.h by tests/device/nvml_abi_check.c.
 */
#ifndef DMACONN_NVML_API_H
#define DMACONN_NVML_API_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlEnableState_t;
typedef int nvmlIntNvLinkDeviceType_t;
typedef int nvmlGpuTopologyLevel_t;
typedef int nvmlGpuP2PStatus_t;
typedef int nvmlGpuP2PCapsIndex_t;
typedef unsigned char nvmlGpuFabricState_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_DEPRECATED = 26,
	NVML_ERROR_NOT_READY = 27,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_INVALID_STATE = 29,
	NVML_ERROR_UNKNOWN = 999
};

/* Every NVML return code with its symbolic name, for messages and replay files. */
#define NVML_RETURN_CODES(X)                                                     \
	X(SUCCESS, 0) X(ERROR_UNINITIALIZED, 1) X(ERROR_INVALID_ARGUMENT, 2)     \
	X(ERROR_NOT_SUPPORTED, 3) X(ERROR_NO_PERMISSION, 4)                      \
	X(ERROR_ALREADY_INITIALIZED, 5) X(ERROR_NOT_FOUND, 6)                    \
	X(ERROR_INSUFFICIENT_SIZE, 7) X(ERROR_INSUFFICIENT_POWER, 8)             \
	X(ERROR_DRIVER_NOT_LOADED, 9) X(ERROR_TIMEOUT, 10)                       \
	X(ERROR_IRQ_ISSUE, 11) X(ERROR_LIBRARY_NOT_FOUND, 12)                    \
	X(ERROR_FUNCTION_NOT_FOUND, 13) X(ERROR_CORRUPTED_INFOROM, 14)           \
	X(ERROR_GPU_IS_LOST, 15) X(ERROR_RESET_REQUIRED, 16)                     \
	X(ERROR_OPERATING_SYSTEM, 17) X(ERROR_LIB_RM_VERSION_MISMATCH, 18)       \
	X(ERROR_IN_USE, 19) X(ERROR_MEMORY, 20) X(ERROR_NO_DATA, 21)             \
	X(ERROR_VGPU_ECC_NOT_SUPPORTED, 22) X(ERROR_INSUFFICIENT_RESOURCES, 23)  \
	X(ERROR_FREQ_NOT_SUPPORTED, 24) X(ERROR_ARGUMENT_VERSION_MISMATCH, 25)   \
	X(ERROR_DEPRECATED, 26) X(ERROR_NOT_READY, 27)                           \
	X(ERROR_GPU_NOT_FOUND, 28) X(ERROR_INVALID_STATE, 29)                    \
	X(ERROR_UNKNOWN, 999)

enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
#define NVML_DEVICE_MIG_DISABLE 0x0
#define NVML_DEVICE_MIG_ENABLE 0x1

enum {
	NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
	NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
	NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
	NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF
};

/* nvmlDeviceGetNvLinkVersion's answers (nvmlNvlinkVersion_t). */
enum {
	NVML_NVLINK_VERSION_INVALID = 0,
	NVML_NVLINK_VERSION_1_0 = 1,
	NVML_NVLINK_VERSION_2_0 = 2,
	NVML_NVLINK_VERSION_2_2 = 3,
	NVML_NVLINK_VERSION_3_0 = 4,
	NVML_NVLINK_VERSION_3_1 = 5,
	NVML_NVLINK_VERSION_4_0 = 6,
	NVML_NVLINK_VERSION_5_0 = 7,
	NVML_NVLINK_VERSION_6_0 = 8
};

enum {
	NVML_TOPOLOGY_INTERNAL = 0,
	NVML_TOPOLOGY_SINGLE = 10,
	NVML_TOPOLOGY_MULTIPLE = 20,
	NVML_TOPOLOGY_HOSTBRIDGE = 30,
	NVML_TOPOLOGY_NODE = 40,
	NVML_TOPOLOGY_SYSTEM = 50
};

enum {
	NVML_P2P_STATUS_OK = 0,
	NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
	NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
	NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
	NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
	NVML_P2P_STATUS_NOT_SUPPORTED = 5,
	NVML_P2P_STATUS_UNKNOWN = 6
};

enum {
	NVML_P2P_CAPS_INDEX_READ = 0,
	NVML_P2P_CAPS_INDEX_WRITE = 1,
	NVML_P2P_CAPS_INDEX_NVLINK = 2,
	NVML_P2P_CAPS_INDEX_ATOMICS = 3,
	NVML_P2P_CAPS_INDEX_PCI = 4
};

/* The most NVLinks a GPU has in the newest nvml.h (NVLink 6: 36; 18 before
 * NVML 13.5): links are asked up to it, and a driver that knows fewer ends
 * them with NVML_ERROR_INVALID_ARGUMENT.  The ABI check proves it equal to
 * the newest header's and at least an older header's. */
#define NVML_NVLINK_MAX_LINKS 36
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_GPU_FABRIC_UUID_LEN 16

#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_STATE_NOT_STARTED 1
#define NVML_GPU_FABRIC_STATE_IN_PROGRESS 2
#define NVML_GPU_FABRIC_STATE_COMPLETED 3

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/* The unversioned struct of nvmlDeviceGetGpuFabricInfo (pre-R550 drivers). */
typedef struct {
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	unsigned int cliqueId;
	nvmlGpuFabricState_t state;
} nvmlGpuFabricInfo_t;

/* The members of nvmlGpuFabricInfo_v2_t, with which v3 begins. */
#define NVML_GPU_FABRIC_INFO_V2_MEMBERS                      \
	unsigned int version;                                \
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN]; \
	nvmlReturn_t status;                                 \
	unsigned int cliqueId;                               \
	nvmlGpuFabricState_t state;                          \
	unsigned int healthMask;

typedef struct {
	NVML_GPU_FABRIC_INFO_V2_MEMBERS
} nvmlGpuFabricInfo_v2_t;

typedef struct {
	NVML_GPU_FABRIC_INFO_V2_MEMBERS
	unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;

/* nvmlGpuFabricInfo_v4_t (nvmlDeviceGetGpuFabricInfo_v4, no version field):
 * typed cliques, sorted by type then id. */
#define NVML_GPU_FABRIC_CLIQUE_MAX 64
#define NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER 0
#define NVML_GPU_FABRIC_CLIQUE_TYPE_MULTICAST_POINTER 1
#define NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_LOGICAL_ENDPOINT 2
#define NVML_GPU_FABRIC_CLIQUE_TYPE_MULTICAST_LOGICAL_ENDPOINT 3

typedef struct {
	unsigned char type;
	unsigned int id;
} nvmlGpuFabricClique_v1_t;

typedef struct {
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	nvmlGpuFabricClique_v1_t cliques[NVML_GPU_FABRIC_CLIQUE_MAX];
	unsigned int numCliques;
	nvmlGpuFabricState_t state;
	unsigned int healthMask;
	unsigned char healthSummary;
} nvmlGpuFabricInfo_v4_t;

#define NVML_STRUCT_VERSION(data, ver) \
	(unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))
#define nvmlGpuFabricInfo_v2 NVML_STRUCT_VERSION(GpuFabricInfo, 2)
#define nvmlGpuFabricInfo_v3 NVML_STRUCT_VERSION(GpuFabricInfo, 3)

typedef union nvmlValue_st {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;

/* nvmlDeviceGetBAR1MemoryInfo */
typedef struct nvmlBAR1Memory_st {
	unsigned long long bar1Total;
	unsigned long long bar1Free;
	unsigned long long bar1Used;
} nvmlBAR1Memory_t;

/* nvmlSystemGetConfComputeState */
typedef struct nvmlConfComputeSystemState_st {
	unsigned int environment;
	unsigned int ccFeature;
	unsigned int devToolsMode;
} nvmlConfComputeSystemState_t;
#define NVML_CC_SYSTEM_FEATURE_DISABLED 0
#define NVML_CC_SYSTEM_FEATURE_ENABLED 1

/* nvmlDeviceGetVirtualizationMode */
typedef int nvmlGpuVirtualizationMode_t;
enum {
	NVML_GPU_VIRTUALIZATION_MODE_NONE = 0,
	NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH = 1,
	NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2,
	NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU = 3,
	NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA = 4
};

/* The fabric health mask of nvmlGpuFabricInfo_v2/v3: fields of 2 or 4 bits. */
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW 0
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY 2
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY 4
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY 6
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION 8
#define NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION 0xf
#define NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_UNHEALTHY 0x3
#define NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE 1
#define NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE 1
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY 1
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY 2
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY 3

#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
#define NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT 147
#define NVML_FI_DEV_NVLINK_GET_SPEED 164
#define NVML_FI_DEV_NVLINK_GET_STATE 165
#define NVML_FI_DEV_NVLINK_GET_VERSION 166
#define NVML_FI_DEV_C2C_LINK_COUNT 170
#define NVML_FI_DEV_C2C_LINK_GET_STATUS 171
#define NVML_FI_DEV_C2C_LINK_GET_MAX_BW 172

typedef unsigned int nvmlAffinityScope_t;
#define NVML_AFFINITY_SCOPE_NODE 0

#include "nvml_functions.h"

#endif
