/* SPDX-License-Identifier: BSD-3-Clause */
/* The NVML functions dmaconn may call, kept apart from the types so that the
 * ABI check can expand the list against NVIDIA's own nvml.h. */
#ifndef DMACONN_NVML_FUNCTIONS_H
#define DMACONN_NVML_FUNCTIONS_H

#include "../params.h"

/*
 * The device queries whose answer is a property as it is: Q(function,
 * replay key, property), each a function of (nvmlDevice_t, unsigned int *),
 * optional, of shape QUERY.  Their rows join the function table below (the
 * loader, the ABI check, the fault stand-in and the fault sweep cover them as
 * any other), and from the row alone follow the replay's device field (key),
 * its answer, what a recording keeps, discovery (it asks each once per GPU;
 * an answer other than NVML_SUCCESS leaves the property out) and the view
 * (the property, an integer, DMACONN_TYPE_INT in DMACONN_PROPERTIES).  An
 * answer that logic reads (NUMA node, virtualization mode) is not one.
 */
#define NVML_DEVICE_QUERIES(Q) NVML_DEVICE_QUERIES_(NVML_QUERY_PICK_, Q, 0)
#define NVML_DEVICE_QUERIES_(R, X, D) \
	R(X, D, nvmlDeviceGetMinorNumber, "minor_number", DMACONN_PROP_MINOR_NUMBER)
#define NVML_QUERY_PICK_(Q, unused, fn, key, prop) Q(fn, key, prop)
#define NVML_QUERY_FUNCTION_(X, D, fn, key, prop) D(X, fn, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0, QUERY)

/*
 * X(name, return type, parameter list, required): every NVML function dmaconn
 * may call.  A required function missing from the library makes NVML unusable;
 * an optional one stays NULL and its caller falls back.
 *
 * The _ARGS lists add a fifth column, what the arguments address (their
 * shape), written here once for the replay's prologues, its recorder, the
 * fault stand-in and the fault sweep (tests/replay_faults.c,
 * tests/fault_sweep.py): NONE no argument; SYS no device; INDEX a device by
 * index; DEV a device (the first argument); DEV_MIG a device or a MIG
 * instance; LINK a device and its link (the first two); FIELDS a device and
 * the links its fields name; PEER two devices (the first two); MIG_GPU a
 * GPU's MIG instances; MIG a MIG instance; TEXT no return code; QUERY a
 * device, answering one unsigned int (NVML_DEVICE_QUERIES).  A row is
 * D(X, name, return type, parameter list, required, shape).
 */
#define NVML_DROP_ARGS_(X, name, ret, params, required, args) X(name, ret, params, required)
#define NVML_KEEP_ARGS_(X, name, ret, params, required, args) X(name, ret, params, required, args)
#define NVML_CORE_FUNCTIONS(X) NVML_CORE_FUNCTIONS_(X, NVML_DROP_ARGS_)
#define NVML_CORE_FUNCTIONS_(X, D)                                                                  \
	D(X, nvmlInit_v2, nvmlReturn_t, (void), 1, NONE)                                             \
	D(X, nvmlShutdown, nvmlReturn_t, (void), 0, NONE)                                            \
	D(X, nvmlErrorString, const char *, (nvmlReturn_t), 0, TEXT)                                 \
	D(X, nvmlSystemGetDriverVersion, nvmlReturn_t, (char *, unsigned int), 0, SYS)              \
	D(X, nvmlSystemGetNVMLVersion, nvmlReturn_t, (char *, unsigned int), 0, SYS)                \
	D(X, nvmlSystemGetCudaDriverVersion_v2, nvmlReturn_t, (int *), 0, SYS)                      \
	D(X, nvmlDeviceGetCount_v2, nvmlReturn_t, (unsigned int *), 1, SYS)                         \
	D(X, nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t, (unsigned int, nvmlDevice_t *), 1, INDEX)   \
	D(X, nvmlDeviceGetName, nvmlReturn_t, (nvmlDevice_t, char *, unsigned int), 1, DEV)         \
	D(X, nvmlDeviceGetUUID, nvmlReturn_t, (nvmlDevice_t, char *, unsigned int), 1, DEV_MIG)         \
	D(X, nvmlDeviceGetPciInfo_v3, nvmlReturn_t, (nvmlDevice_t, nvmlPciInfo_t *), 1, DEV)        \
	D(X, nvmlDeviceGetCudaComputeCapability, nvmlReturn_t, (nvmlDevice_t, int *, int *), 0, DEV) \
	NVML_DEVICE_QUERIES_(NVML_QUERY_FUNCTION_, X, D)                                            \
	D(X, nvmlDeviceGetMigMode, nvmlReturn_t, (nvmlDevice_t, unsigned int *, unsigned int *), 0, DEV) \
	D(X, nvmlDeviceGetGpuFabricInfoV, nvmlReturn_t, (nvmlDevice_t, nvmlGpuFabricInfo_v3_t *), 0, DEV) \
	D(X, nvmlDeviceGetGpuFabricInfo, nvmlReturn_t, (nvmlDevice_t, nvmlGpuFabricInfo_t *), 0, DEV) \
	D(X, nvmlDeviceGetNvLinkState, nvmlReturn_t, (nvmlDevice_t, unsigned int, nvmlEnableState_t *), 1, LINK) \
	D(X, nvmlDeviceGetNvLinkVersion, nvmlReturn_t, (nvmlDevice_t, unsigned int, unsigned int *), 0, LINK) \
	D(X, nvmlDeviceGetNvLinkRemoteDeviceType, nvmlReturn_t,                                \
	  (nvmlDevice_t, unsigned int, nvmlIntNvLinkDeviceType_t *), 0, LINK)                     \
	D(X, nvmlDeviceGetNvLinkRemotePciInfo_v2, nvmlReturn_t, (nvmlDevice_t, unsigned int, nvmlPciInfo_t *), 1, LINK) \
	D(X, nvmlDeviceGetFieldValues, nvmlReturn_t, (nvmlDevice_t, int, nvmlFieldValue_t *), 0, FIELDS) \
	D(X, nvmlDeviceGetP2PStatus, nvmlReturn_t,                                             \
	  (nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t *), 0, PEER)     \
	D(X, nvmlDeviceGetTopologyCommonAncestor, nvmlReturn_t,                                \
	  (nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t *), 0, PEER)                        \
	D(X, nvmlDeviceGetBAR1MemoryInfo, nvmlReturn_t, (nvmlDevice_t, nvmlBAR1Memory_t *), 0, DEV) \
	D(X, nvmlDeviceGetVirtualizationMode, nvmlReturn_t, (nvmlDevice_t, nvmlGpuVirtualizationMode_t *), 0, DEV) \
	D(X, nvmlSystemGetConfComputeState, nvmlReturn_t, (nvmlConfComputeSystemState_t *), 0, SYS) \
	D(X, nvmlDeviceGetCpuAffinityWithinScope, nvmlReturn_t,                                \
	  (nvmlDevice_t, unsigned int, unsigned long *, nvmlAffinityScope_t), 0, DEV)            \
	D(X, nvmlDeviceGetMemoryAffinity, nvmlReturn_t,                                        \
	  (nvmlDevice_t, unsigned int, unsigned long *, nvmlAffinityScope_t), 0, DEV)            \
	D(X, nvmlDeviceGetNumaNodeId, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0, DEV)

/* Functions only the newest nvml.h declares (13.5: typed fabric cliques);
 * optional like the others, and proven against that header alone. */
#define NVML_NEWEST_FUNCTIONS(X) NVML_NEWEST_FUNCTIONS_(X, NVML_DROP_ARGS_)
#define NVML_NEWEST_FUNCTIONS_(X, D) \
	D(X, nvmlDeviceGetGpuFabricInfo_v4, nvmlReturn_t, (nvmlDevice_t, nvmlGpuFabricInfo_v4_t *), 0, DEV)

/* The functions a replay answers and a recording keeps. */
#define NVML_FUNCTIONS(X) NVML_CORE_FUNCTIONS(X) NVML_NEWEST_FUNCTIONS(X)
#define NVML_FUNCTIONS_ARGS(X) NVML_CORE_FUNCTIONS_(X, NVML_KEEP_ARGS_) NVML_NEWEST_FUNCTIONS_(X, NVML_KEEP_ARGS_)

/* Each of those functions' index, NVML_FN_name (NVML_FN_COUNT of them), and
 * NVML_FN_NAMES, the initializer of an array of their names by index: the
 * per-function tables of the replay and of its fault stand-in. */
#define NVML_FN_ENUM_(name, ret, params, required) NVML_FN_##name,
enum nvml_fn_id { NVML_FUNCTIONS(NVML_FN_ENUM_) NVML_FN_COUNT };
#undef NVML_FN_ENUM_
#define NVML_FN_NAME_(name, ret, params, required) [NVML_FN_##name] = #name,
#define NVML_FN_NAMES { NVML_FUNCTIONS(NVML_FN_NAME_) }

/*
 * The MIG queries, all optional: a GPU in MIG mode lists its instances
 * (CUDA_VISIBLE_DEVICES may name them).  Kept in a list of their own so
 * that a stand-in may leave them out (they then stay NULL).
 */
#define NVML_MIG_FUNCTIONS(X) NVML_MIG_FUNCTIONS_(X, NVML_DROP_ARGS_)
#define NVML_MIG_FUNCTIONS_ARGS(X) NVML_MIG_FUNCTIONS_(X, NVML_KEEP_ARGS_)
#define NVML_MIG_FUNCTIONS_(X, D)                                                              \
	D(X, nvmlDeviceGetMaxMigDeviceCount, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0, MIG_GPU)  \
	D(X, nvmlDeviceGetMigDeviceHandleByIndex, nvmlReturn_t,                                \
	  (nvmlDevice_t, unsigned int, nvmlDevice_t *), 0, MIG_GPU)                                  \
	D(X, nvmlDeviceGetDeviceHandleFromMigDeviceHandle, nvmlReturn_t,                       \
	  (nvmlDevice_t, nvmlDevice_t *), 0, MIG)                                                \
	D(X, nvmlDeviceGetGpuInstanceId, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0, MIG)      \
	D(X, nvmlDeviceGetComputeInstanceId, nvmlReturn_t, (nvmlDevice_t, unsigned int *), 0, MIG)

/* Every function the loader binds and the ABI check proves. */
#define NVML_ALL_FUNCTIONS(X) NVML_FUNCTIONS(X) NVML_MIG_FUNCTIONS(X)
#define NVML_ALL_FUNCTIONS_ARGS(X) NVML_FUNCTIONS_ARGS(X) NVML_MIG_FUNCTIONS_ARGS(X)

#endif
