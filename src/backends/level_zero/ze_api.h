/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The subset of the oneAPI Level Zero ABI (core API 1.4 and the
 * ZE_experimental_fabric extension) that dmaconn uses, declared here so that
 * no Level Zero SDK is needed to build.  The type names are Level Zero's own,
 * so that the function list (ze_functions.h) expands against Intel's ze_api.h
 * too; every constant, size and offset below is compared with the real header
 * by tests/ze_abi_check.c (CTest runs it wherever level_zero/ze_api.h is
 * installed, e.g. Debian's libze-dev).
 */
#ifndef DMACONN_ZE_API_H
#define DMACONN_ZE_API_H

#include <stdint.h>

/* Enumerations are 32-bit in the Level Zero ABI (every one has a
 * *_FORCE_UINT32 = 0x7fffffff member); dmaconn uses uint32_t for them. */
typedef uint32_t ze_result_t;
typedef uint32_t ze_structure_type_t;
typedef uint32_t ze_init_flags_t;
typedef uint32_t ze_device_type_t;
typedef uint32_t ze_device_property_flags_t;
typedef uint32_t ze_device_p2p_property_flags_t;
typedef uint32_t ze_fabric_vertex_exp_type_t;
typedef uint32_t ze_fabric_edge_exp_duplexity_t;
typedef uint32_t ze_bandwidth_unit_t;
typedef uint32_t ze_latency_unit_t;
typedef uint8_t ze_bool_t;

typedef struct _ze_driver_handle_t *ze_driver_handle_t;
typedef struct _ze_device_handle_t *ze_device_handle_t;
typedef struct _ze_fabric_vertex_handle_t *ze_fabric_vertex_handle_t;
typedef struct _ze_fabric_edge_handle_t *ze_fabric_edge_handle_t;

/* X(name, value): every ze_result_t of API 1.4, for messages and replay files. */
#define ZE_RESULT_CODES(X)                                                              \
	X(ZE_RESULT_SUCCESS, 0)                                                         \
	X(ZE_RESULT_NOT_READY, 1)                                                       \
	X(ZE_RESULT_ERROR_DEVICE_LOST, 0x70000001)                                      \
	X(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, 0x70000002)                               \
	X(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, 0x70000003)                             \
	X(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, 0x70000004)                             \
	X(ZE_RESULT_ERROR_MODULE_LINK_FAILURE, 0x70000005)                              \
	X(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET, 0x70000006)                            \
	X(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE, 0x70000007)                        \
	X(ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX, 0x7ff00001)                         \
	X(ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE, 0x7ff00002)                         \
	X(ZE_RESULT_EXP_ERROR_REMOTE_DEVICE, 0x7ff00003)                                \
	X(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, 0x70010000)                         \
	X(ZE_RESULT_ERROR_NOT_AVAILABLE, 0x70010001)                                    \
	X(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, 0x70020000)                           \
	X(ZE_RESULT_WARNING_DROPPED_DATA, 0x70020001)                                   \
	X(ZE_RESULT_ERROR_UNINITIALIZED, 0x78000001)                                    \
	X(ZE_RESULT_ERROR_UNSUPPORTED_VERSION, 0x78000002)                              \
	X(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, 0x78000003)                              \
	X(ZE_RESULT_ERROR_INVALID_ARGUMENT, 0x78000004)                                 \
	X(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, 0x78000005)                              \
	X(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, 0x78000006)                             \
	X(ZE_RESULT_ERROR_INVALID_NULL_POINTER, 0x78000007)                             \
	X(ZE_RESULT_ERROR_INVALID_SIZE, 0x78000008)                                     \
	X(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, 0x78000009)                                 \
	X(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, 0x7800000a)                            \
	X(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT, 0x7800000b)                   \
	X(ZE_RESULT_ERROR_INVALID_ENUMERATION, 0x7800000c)                              \
	X(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION, 0x7800000d)                          \
	X(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT, 0x7800000e)                         \
	X(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, 0x7800000f)                            \
	X(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, 0x78000010)                              \
	X(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, 0x78000011)                              \
	X(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, 0x78000012)                            \
	X(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, 0x78000013)                     \
	X(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION, 0x78000014)                   \
	X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, 0x78000015)                    \
	X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, 0x78000016)                     \
	X(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE, 0x78000017)                   \
	X(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, 0x78000018)                          \
	X(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE, 0x78000019)                        \
	X(ZE_RESULT_ERROR_OVERLAPPING_REGIONS, 0x7800001a)                              \
	X(ZE_RESULT_WARNING_ACTION_REQUIRED, 0x7800001b)                                \
	X(ZE_RESULT_ERROR_UNKNOWN, 0x7ffffffe)

enum {
#define ZE_RESULT_ENUM_(name, value) name = value,
	ZE_RESULT_CODES(ZE_RESULT_ENUM_)
#undef ZE_RESULT_ENUM_
};

enum {
	ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES = 0x3,
	ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES = 0xb,
	ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES = 0x10008,
	ZE_STRUCTURE_TYPE_FABRIC_VERTEX_EXP_PROPERTIES = 0x2000B,
	ZE_STRUCTURE_TYPE_FABRIC_EDGE_EXP_PROPERTIES = 0x2000C
};

enum { ZE_INIT_FLAG_GPU_ONLY = 1 << 0, ZE_INIT_FLAG_VPU_ONLY = 1 << 1 };

enum {
	ZE_DEVICE_TYPE_GPU = 1,
	ZE_DEVICE_TYPE_CPU = 2,
	ZE_DEVICE_TYPE_FPGA = 3,
	ZE_DEVICE_TYPE_MCA = 4,
	ZE_DEVICE_TYPE_VPU = 5
};

enum {
	ZE_DEVICE_PROPERTY_FLAG_INTEGRATED = 1 << 0,
	ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE = 1 << 1,
	ZE_DEVICE_PROPERTY_FLAG_ECC = 1 << 2,
	ZE_DEVICE_PROPERTY_FLAG_ONDEMANDPAGING = 1 << 3
};

enum { ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS = 1 << 0, ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS = 1 << 1 };

/* ZE_FABRIC_VERTEX_EXP_TYPE_SUBDEVICE is spelt ..._SUBEVICE in headers of API 1.4. */
enum {
	ZE_FABRIC_VERTEX_EXP_TYPE_UNKNOWN = 0,
	ZE_FABRIC_VERTEX_EXP_TYPE_DEVICE = 1,
	ZE_FABRIC_VERTEX_EXP_TYPE_SUBDEVICE = 2,
	ZE_FABRIC_VERTEX_EXP_TYPE_SWITCH = 3
};

enum {
	ZE_FABRIC_EDGE_EXP_DUPLEXITY_UNKNOWN = 0,
	ZE_FABRIC_EDGE_EXP_DUPLEXITY_HALF_DUPLEX = 1,
	ZE_FABRIC_EDGE_EXP_DUPLEXITY_FULL_DUPLEX = 2
};

enum {
	ZE_BANDWIDTH_UNIT_UNKNOWN = 0,
	ZE_BANDWIDTH_UNIT_BYTES_PER_NANOSEC = 1,
	ZE_BANDWIDTH_UNIT_BYTES_PER_CLOCK = 2
};

enum {
	ZE_LATENCY_UNIT_UNKNOWN = 0,
	ZE_LATENCY_UNIT_NANOSEC = 1,
	ZE_LATENCY_UNIT_CLOCK = 2,
	ZE_LATENCY_UNIT_HOP = 3
};

#define ZE_MAX_DEVICE_UUID_SIZE 16
#define ZE_MAX_DEVICE_NAME 256
#define ZE_MAX_UUID_SIZE 16
#define ZE_MAX_FABRIC_EDGE_MODEL_EXP_SIZE 256

typedef struct _ze_device_uuid_t {
	uint8_t id[ZE_MAX_DEVICE_UUID_SIZE];
} ze_device_uuid_t;

typedef struct _ze_uuid_t {
	uint8_t id[ZE_MAX_UUID_SIZE];
} ze_uuid_t;

typedef struct _ze_device_properties_t {
	ze_structure_type_t stype;
	void *pNext;
	ze_device_type_t type;
	uint32_t vendorId;
	uint32_t deviceId;
	ze_device_property_flags_t flags;
	uint32_t subdeviceId;
	uint32_t coreClockRate;
	uint64_t maxMemAllocSize;
	uint32_t maxHardwareContexts;
	uint32_t maxCommandQueuePriority;
	uint32_t numThreadsPerEU;
	uint32_t physicalEUSimdWidth;
	uint32_t numEUsPerSubslice;
	uint32_t numSubslicesPerSlice;
	uint32_t numSlices;
	uint64_t timerResolution;
	uint32_t timestampValidBits;
	uint32_t kernelTimestampValidBits;
	ze_device_uuid_t uuid;
	char name[ZE_MAX_DEVICE_NAME];
} ze_device_properties_t;

typedef struct _ze_device_p2p_properties_t {
	ze_structure_type_t stype;
	void *pNext;
	ze_device_p2p_property_flags_t flags;
} ze_device_p2p_properties_t;

typedef struct _ze_pci_address_ext_t {
	uint32_t domain;
	uint32_t bus;
	uint32_t device;
	uint32_t function;
} ze_pci_address_ext_t;

typedef struct _ze_pci_speed_ext_t {
	int32_t genVersion;
	int32_t width;
	int64_t maxBandwidth;
} ze_pci_speed_ext_t;

typedef struct _ze_pci_ext_properties_t {
	ze_structure_type_t stype;
	void *pNext;
	ze_pci_address_ext_t address;
	ze_pci_speed_ext_t maxSpeed;
} ze_pci_ext_properties_t;

typedef struct _ze_fabric_vertex_pci_exp_address_t {
	uint32_t domain;
	uint32_t bus;
	uint32_t device;
	uint32_t function;
} ze_fabric_vertex_pci_exp_address_t;

typedef struct _ze_fabric_vertex_exp_properties_t {
	ze_structure_type_t stype;
	void *pNext;
	ze_uuid_t uuid;
	ze_fabric_vertex_exp_type_t type;
	ze_bool_t remote;
	ze_fabric_vertex_pci_exp_address_t address;
} ze_fabric_vertex_exp_properties_t;

typedef struct _ze_fabric_edge_exp_properties_t {
	ze_structure_type_t stype;
	void *pNext;
	ze_uuid_t uuid;
	char model[ZE_MAX_FABRIC_EDGE_MODEL_EXP_SIZE];
	uint32_t bandwidth;
	ze_bandwidth_unit_t bandwidthUnit;
	uint32_t latency;
	ze_latency_unit_t latencyUnit;
	ze_fabric_edge_exp_duplexity_t duplexity;
} ze_fabric_edge_exp_properties_t;

#include "ze_functions.h"

#endif
