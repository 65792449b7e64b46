/* SPDX-License-Identifier: BSD-3-Clause */
/* The Level Zero functions dmaconn may call, kept apart from the types so
 * that the ABI check can expand the list against Intel's own ze_api.h. */
#ifndef DMACONN_ZE_FUNCTIONS_H
#define DMACONN_ZE_FUNCTIONS_H

/*
 * X(name, return type, parameter list, required): a required function
 * missing from the loader makes Level Zero unusable; an optional one stays
 * NULL and its caller does without (the fabric functions are the
 * ZE_experimental_fabric extension, absent from loaders before API 1.4).
 */
#define ZE_FUNCTIONS(X)                                                                          \
	X(zeInit, ze_result_t, (ze_init_flags_t), 1)                                              \
	X(zeDriverGet, ze_result_t, (uint32_t *, ze_driver_handle_t *), 1)                        \
	X(zeDeviceGet, ze_result_t, (ze_driver_handle_t, uint32_t *, ze_device_handle_t *), 1)    \
	X(zeDeviceGetProperties, ze_result_t, (ze_device_handle_t, ze_device_properties_t *), 1)  \
	X(zeDeviceGetSubDevices, ze_result_t, (ze_device_handle_t, uint32_t *, ze_device_handle_t *), 0) \
	X(zeDevicePciGetPropertiesExt, ze_result_t, (ze_device_handle_t, ze_pci_ext_properties_t *), 0) \
	X(zeDeviceGetP2PProperties, ze_result_t,                                                  \
	  (ze_device_handle_t, ze_device_handle_t, ze_device_p2p_properties_t *), 0)              \
	X(zeFabricVertexGetExp, ze_result_t, (ze_driver_handle_t, uint32_t *, ze_fabric_vertex_handle_t *), 0) \
	X(zeFabricVertexGetSubVerticesExp, ze_result_t,                                           \
	  (ze_fabric_vertex_handle_t, uint32_t *, ze_fabric_vertex_handle_t *), 0)                \
	X(zeFabricVertexGetPropertiesExp, ze_result_t,                                            \
	  (ze_fabric_vertex_handle_t, ze_fabric_vertex_exp_properties_t *), 0)                    \
	X(zeFabricVertexGetDeviceExp, ze_result_t, (ze_fabric_vertex_handle_t, ze_device_handle_t *), 0) \
	X(zeFabricEdgeGetExp, ze_result_t,                                                        \
	  (ze_fabric_vertex_handle_t, ze_fabric_vertex_handle_t, uint32_t *, ze_fabric_edge_handle_t *), 0) \
	X(zeFabricEdgeGetPropertiesExp, ze_result_t,                                              \
	  (ze_fabric_edge_handle_t, ze_fabric_edge_exp_properties_t *), 0)

/* The fabric functions the xpu/xelink detector needs, all of them. */
#define ZE_FABRIC_FUNCTIONS(X)                                                                   \
	X(zeFabricVertexGetExp) X(zeFabricVertexGetSubVerticesExp) X(zeFabricVertexGetPropertiesExp) \
	X(zeFabricVertexGetDeviceExp) X(zeFabricEdgeGetExp) X(zeFabricEdgeGetPropertiesExp)

#endif
