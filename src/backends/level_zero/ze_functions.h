/* SPDX-License-Identifier: BSD-3-Clause */
/* The Level Zero functions dmaconn may call, kept apart from the types so
 * that the ABI check can expand the list against Intel's own ze_api.h. */
#ifndef DMACONN_ZE_FUNCTIONS_H
#define DMACONN_ZE_FUNCTIONS_H

#include "../params.h"

/*
 * X(name, return type, parameter list, required): a required function
 * missing from the loader makes Level Zero unusable; an optional one stays
 * NULL and its caller does without (the fabric functions are the
 * ZE_experimental_fabric extension, absent from loaders before API 1.4).
 *
 * ZE_FUNCTIONS_ARGS adds a fifth column, what the arguments address (their
 * shape), written here once for the replay's prologues and its recorder:
 * INIT no handle, before any other call; LOADER no handle (the loader's
 * drivers); DRIVER a driver; DEVICE a device; DEVICE_PAIR two devices;
 * VERTEX a fabric vertex; VERTEX_PAIR two vertices; EDGE a fabric edge
 * (the handles first, then a count and a list, or the answer).  A row is
 * D(X, name, return type, parameter list, required, shape); a row without a
 * shape, or with another, does not compile.
 */
#define ZE_DROP_ARGS_(X, name, ret, params, required, shape) X(name, ret, params, required)
#define ZE_KEEP_ARGS_(X, name, ret, params, required, shape) X(name, ret, params, required, shape)
#define ZE_FUNCTIONS(X) ZE_FUNCTIONS_(X, ZE_DROP_ARGS_)
#define ZE_FUNCTIONS_ARGS(X) ZE_FUNCTIONS_(X, ZE_KEEP_ARGS_)
#define ZE_FUNCTIONS_(X, D)                                                                          \
	D(X, zeInit, ze_result_t, (ze_init_flags_t), 1, INIT)                                         \
	D(X, zeDriverGet, ze_result_t, (uint32_t *, ze_driver_handle_t *), 1, LOADER)                 \
	D(X, zeDeviceGet, ze_result_t, (ze_driver_handle_t, uint32_t *, ze_device_handle_t *), 1, DRIVER) \
	D(X, zeDeviceGetProperties, ze_result_t, (ze_device_handle_t, ze_device_properties_t *), 1, DEVICE) \
	D(X, zeDeviceGetSubDevices, ze_result_t, (ze_device_handle_t, uint32_t *, ze_device_handle_t *), 0, DEVICE) \
	D(X, zeDevicePciGetPropertiesExt, ze_result_t, (ze_device_handle_t, ze_pci_ext_properties_t *), 0, DEVICE) \
	D(X, zeDeviceGetP2PProperties, ze_result_t,                                                  \
	  (ze_device_handle_t, ze_device_handle_t, ze_device_p2p_properties_t *), 0, DEVICE_PAIR)    \
	D(X, zeFabricVertexGetExp, ze_result_t, (ze_driver_handle_t, uint32_t *, ze_fabric_vertex_handle_t *), 0, DRIVER) \
	D(X, zeFabricVertexGetSubVerticesExp, ze_result_t,                                           \
	  (ze_fabric_vertex_handle_t, uint32_t *, ze_fabric_vertex_handle_t *), 0, VERTEX)           \
	D(X, zeFabricVertexGetPropertiesExp, ze_result_t,                                            \
	  (ze_fabric_vertex_handle_t, ze_fabric_vertex_exp_properties_t *), 0, VERTEX)               \
	D(X, zeFabricVertexGetDeviceExp, ze_result_t, (ze_fabric_vertex_handle_t, ze_device_handle_t *), 0, VERTEX) \
	D(X, zeFabricEdgeGetExp, ze_result_t,                                                        \
	  (ze_fabric_vertex_handle_t, ze_fabric_vertex_handle_t, uint32_t *, ze_fabric_edge_handle_t *), 0, VERTEX_PAIR) \
	D(X, zeFabricEdgeGetPropertiesExp, ze_result_t,                                              \
	  (ze_fabric_edge_handle_t, ze_fabric_edge_exp_properties_t *), 0, EDGE)

/* The shapes: one the list above does not name stops the build here. */
#define ZE_SHAPE_INIT 1
#define ZE_SHAPE_LOADER 1
#define ZE_SHAPE_DRIVER 1
#define ZE_SHAPE_DEVICE 1
#define ZE_SHAPE_DEVICE_PAIR 1
#define ZE_SHAPE_VERTEX 1
#define ZE_SHAPE_VERTEX_PAIR 1
#define ZE_SHAPE_EDGE 1
#define ZE_SHAPE_KNOWN_(name, ret, params, required, shape) ZE_SHAPE_##shape &&
_Static_assert(ZE_FUNCTIONS_ARGS(ZE_SHAPE_KNOWN_) 1, "a Level Zero function of an unknown shape");
#undef ZE_SHAPE_KNOWN_

/* The fabric functions the xpu/xelink detector needs, all of them. */
#define ZE_FABRIC_FUNCTIONS(X)                                                                   \
	X(zeFabricVertexGetExp) X(zeFabricVertexGetSubVerticesExp) X(zeFabricVertexGetPropertiesExp) \
	X(zeFabricVertexGetDeviceExp) X(zeFabricEdgeGetExp) X(zeFabricEdgeGetPropertiesExp)

#endif
