/* SPDX-License-Identifier: BSD-3-Clause */
/* Every Level Zero constant, size and offset dmaconn declares
 * (src/backends/level_zero/ze_api.h), expanded once against that header and once
 * against Intel's level_zero/ze_api.h.  ZE_FABRIC_VERTEX_EXP_TYPE_SUBDEVICE
 * is left out: headers of API 1.4 spell it ..._SUBEVICE, later ones
 * ..._SUBDEVICE, so no one name exists in both. */
#include "device/abi_check.h"

#define ZE_ABI_ITEMS(C, S, O)                                                                \
	C(ZE_RESULT_SUCCESS) C(ZE_RESULT_NOT_READY) C(ZE_RESULT_ERROR_DEVICE_LOST)           \
	C(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) C(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)        \
	C(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) C(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)       \
	C(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET) C(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE) \
	C(ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX) C(ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE) \
	C(ZE_RESULT_EXP_ERROR_REMOTE_DEVICE) C(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)     \
	C(ZE_RESULT_ERROR_NOT_AVAILABLE) C(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE)           \
	C(ZE_RESULT_WARNING_DROPPED_DATA) C(ZE_RESULT_ERROR_UNINITIALIZED)                   \
	C(ZE_RESULT_ERROR_UNSUPPORTED_VERSION) C(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)        \
	C(ZE_RESULT_ERROR_INVALID_ARGUMENT) C(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)           \
	C(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE) C(ZE_RESULT_ERROR_INVALID_NULL_POINTER)      \
	C(ZE_RESULT_ERROR_INVALID_SIZE) C(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)                  \
	C(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT) C(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT) \
	C(ZE_RESULT_ERROR_INVALID_ENUMERATION) C(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)    \
	C(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT) C(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY) \
	C(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME) C(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)        \
	C(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME) C(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION) \
	C(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION)                                    \
	C(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)                                     \
	C(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)                                      \
	C(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE)                                    \
	C(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED) C(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE) \
	C(ZE_RESULT_ERROR_OVERLAPPING_REGIONS) C(ZE_RESULT_WARNING_ACTION_REQUIRED)          \
	C(ZE_RESULT_ERROR_UNKNOWN)                                                           \
	C(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES) C(ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES)    \
	C(ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES) C(ZE_STRUCTURE_TYPE_FABRIC_VERTEX_EXP_PROPERTIES) \
	C(ZE_STRUCTURE_TYPE_FABRIC_EDGE_EXP_PROPERTIES)                                      \
	C(ZE_INIT_FLAG_GPU_ONLY) C(ZE_INIT_FLAG_VPU_ONLY)                                    \
	C(ZE_DEVICE_TYPE_GPU) C(ZE_DEVICE_TYPE_CPU) C(ZE_DEVICE_TYPE_FPGA) C(ZE_DEVICE_TYPE_MCA) \
	C(ZE_DEVICE_TYPE_VPU)                                                                \
	C(ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) C(ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE)           \
	C(ZE_DEVICE_PROPERTY_FLAG_ECC) C(ZE_DEVICE_PROPERTY_FLAG_ONDEMANDPAGING)             \
	C(ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS) C(ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS)         \
	C(ZE_FABRIC_VERTEX_EXP_TYPE_UNKNOWN) C(ZE_FABRIC_VERTEX_EXP_TYPE_DEVICE)             \
	C(ZE_FABRIC_VERTEX_EXP_TYPE_SWITCH)                                                  \
	C(ZE_FABRIC_EDGE_EXP_DUPLEXITY_UNKNOWN) C(ZE_FABRIC_EDGE_EXP_DUPLEXITY_HALF_DUPLEX)  \
	C(ZE_FABRIC_EDGE_EXP_DUPLEXITY_FULL_DUPLEX)                                          \
	C(ZE_BANDWIDTH_UNIT_UNKNOWN) C(ZE_BANDWIDTH_UNIT_BYTES_PER_NANOSEC)                  \
	C(ZE_BANDWIDTH_UNIT_BYTES_PER_CLOCK)                                                 \
	C(ZE_LATENCY_UNIT_UNKNOWN) C(ZE_LATENCY_UNIT_NANOSEC) C(ZE_LATENCY_UNIT_CLOCK)       \
	C(ZE_LATENCY_UNIT_HOP)                                                               \
	C(ZE_MAX_DEVICE_UUID_SIZE) C(ZE_MAX_DEVICE_NAME) C(ZE_MAX_UUID_SIZE)                 \
	C(ZE_MAX_FABRIC_EDGE_MODEL_EXP_SIZE)                                                 \
	S(ze_result_t) S(ze_structure_type_t) S(ze_init_flags_t) S(ze_device_type_t)         \
	S(ze_device_property_flags_t) S(ze_device_p2p_property_flags_t)                      \
	S(ze_fabric_vertex_exp_type_t) S(ze_fabric_edge_exp_duplexity_t) S(ze_bandwidth_unit_t) \
	S(ze_latency_unit_t) S(ze_bool_t) S(ze_driver_handle_t) S(ze_device_handle_t)        \
	S(ze_fabric_vertex_handle_t) S(ze_fabric_edge_handle_t)                              \
	S(ze_device_uuid_t) S(ze_uuid_t) S(ze_device_properties_t) S(ze_device_p2p_properties_t) \
	S(ze_pci_address_ext_t) S(ze_pci_speed_ext_t) S(ze_pci_ext_properties_t)             \
	S(ze_fabric_vertex_pci_exp_address_t) S(ze_fabric_vertex_exp_properties_t)           \
	S(ze_fabric_edge_exp_properties_t)                                                   \
	O(ze_device_properties_t, stype) O(ze_device_properties_t, pNext)                    \
	O(ze_device_properties_t, type) O(ze_device_properties_t, vendorId)                  \
	O(ze_device_properties_t, deviceId) O(ze_device_properties_t, flags)                 \
	O(ze_device_properties_t, subdeviceId) O(ze_device_properties_t, coreClockRate)      \
	O(ze_device_properties_t, maxMemAllocSize) O(ze_device_properties_t, maxHardwareContexts) \
	O(ze_device_properties_t, maxCommandQueuePriority) O(ze_device_properties_t, numThreadsPerEU) \
	O(ze_device_properties_t, physicalEUSimdWidth) O(ze_device_properties_t, numEUsPerSubslice) \
	O(ze_device_properties_t, numSubslicesPerSlice) O(ze_device_properties_t, numSlices) \
	O(ze_device_properties_t, timerResolution) O(ze_device_properties_t, timestampValidBits) \
	O(ze_device_properties_t, kernelTimestampValidBits) O(ze_device_properties_t, uuid)  \
	O(ze_device_properties_t, name)                                                      \
	O(ze_device_p2p_properties_t, stype) O(ze_device_p2p_properties_t, pNext)            \
	O(ze_device_p2p_properties_t, flags)                                                 \
	O(ze_pci_address_ext_t, domain) O(ze_pci_address_ext_t, bus)                         \
	O(ze_pci_address_ext_t, device) O(ze_pci_address_ext_t, function)                    \
	O(ze_pci_speed_ext_t, genVersion) O(ze_pci_speed_ext_t, width)                       \
	O(ze_pci_speed_ext_t, maxBandwidth)                                                  \
	O(ze_pci_ext_properties_t, stype) O(ze_pci_ext_properties_t, pNext)                  \
	O(ze_pci_ext_properties_t, address) O(ze_pci_ext_properties_t, maxSpeed)             \
	O(ze_fabric_vertex_pci_exp_address_t, domain) O(ze_fabric_vertex_pci_exp_address_t, bus) \
	O(ze_fabric_vertex_pci_exp_address_t, device) O(ze_fabric_vertex_pci_exp_address_t, function) \
	O(ze_fabric_vertex_exp_properties_t, stype) O(ze_fabric_vertex_exp_properties_t, pNext) \
	O(ze_fabric_vertex_exp_properties_t, uuid) O(ze_fabric_vertex_exp_properties_t, type) \
	O(ze_fabric_vertex_exp_properties_t, remote) O(ze_fabric_vertex_exp_properties_t, address) \
	O(ze_fabric_edge_exp_properties_t, stype) O(ze_fabric_edge_exp_properties_t, pNext)  \
	O(ze_fabric_edge_exp_properties_t, uuid) O(ze_fabric_edge_exp_properties_t, model)   \
	O(ze_fabric_edge_exp_properties_t, bandwidth) O(ze_fabric_edge_exp_properties_t, bandwidthUnit) \
	O(ze_fabric_edge_exp_properties_t, latency) O(ze_fabric_edge_exp_properties_t, latencyUnit) \
	O(ze_fabric_edge_exp_properties_t, duplexity)
