/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The subset of the CUDA driver API that the functional check uses, declared
 * here so that nothing needs the CUDA SDK at build time.  Everything carries
 * a dc_ / DC_ prefix, so this header can sit next to the real <cuda.h> in one
 * translation unit: tests/device/cuda_abi_check.c does exactly that and
 * proves, at compile time, that every value, size and signature below equals
 * the real one.
 *
 * The opaque handle types use the real struct tags (struct CUctx_st, ...),
 * which is what makes them the very same types as the real ones.  CUresult
 * and CUdevice_P2PAttribute are C enums whose values are all non-negative,
 * so GCC and Clang give them the underlying type unsigned int; dc_CUresult
 * is that type.
 *
 * Function names are the symbols libcuda.so.1 exports (the targets of the
 * real header's "#define cuXxx cuXxx_v2" mappings), not the API names.
 */
#ifndef DMACONN_CUDA_API_H
#define DMACONN_CUDA_API_H

#include <stddef.h>

/* CUresult codes: X(name, value).  The name without the DC_ prefix is the
 * real one; cuda_abi_check.c compares each. */
#define DC_CU_RESULTS(X)                                                        \
	X(CUDA_SUCCESS, 0)                                                      \
	X(CUDA_ERROR_INVALID_VALUE, 1)                                          \
	X(CUDA_ERROR_OUT_OF_MEMORY, 2)                                          \
	X(CUDA_ERROR_NOT_INITIALIZED, 3)                                        \
	X(CUDA_ERROR_DEINITIALIZED, 4)                                          \
	X(CUDA_ERROR_STUB_LIBRARY, 34)                                          \
	X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)                                    \
	X(CUDA_ERROR_NO_DEVICE, 100)                                            \
	X(CUDA_ERROR_INVALID_DEVICE, 101)                                       \
	X(CUDA_ERROR_INVALID_IMAGE, 200)                                        \
	X(CUDA_ERROR_INVALID_CONTEXT, 201)                                      \
	X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)                                    \
	X(CUDA_ERROR_ECC_UNCORRECTABLE, 214)                                    \
	X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 217)                              \
	X(CUDA_ERROR_INVALID_PTX, 218)                                          \
	X(CUDA_ERROR_NVLINK_UNCORRECTABLE, 220)                                 \
	X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)                               \
	X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)                              \
	X(CUDA_ERROR_NOT_FOUND, 500)                                            \
	X(CUDA_ERROR_INVALID_HANDLE, 400)                                       \
	X(CUDA_ERROR_NOT_READY, 600)                                            \
	X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                      \
	X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)                              \
	X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)                                       \
	X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704)                          \
	X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705)                              \
	X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)                                 \
	X(CUDA_ERROR_TOO_MANY_PEERS, 711)                                       \
	X(CUDA_ERROR_LAUNCH_FAILED, 719)                                        \
	X(CUDA_ERROR_NOT_SUPPORTED, 801)                                        \
	X(CUDA_ERROR_SYSTEM_NOT_READY, 802)                                     \
	X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)                               \
	X(CUDA_ERROR_UNKNOWN, 999)

enum {
#define DC_CU_RESULT_ENUM_(name, value) DC_##name = value,
	DC_CU_RESULTS(DC_CU_RESULT_ENUM_)
#undef DC_CU_RESULT_ENUM_
};

/* CUdevice_P2PAttribute values. */
#define DC_CU_P2P_ATTRIBUTES(X)                                                 \
	X(CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 1)                          \
	X(CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 2)                          \
	X(CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 3)                   \
	X(CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, 4)

enum {
#define DC_CU_P2P_ENUM_(name, value) DC_##name = value,
	DC_CU_P2P_ATTRIBUTES(DC_CU_P2P_ENUM_)
#undef DC_CU_P2P_ENUM_
};

/* Other flag values passed to the driver. */
#define DC_CU_FLAGS(X) X(CU_EVENT_DEFAULT, 0)

enum {
#define DC_CU_FLAG_ENUM_(name, value) DC_##name = value,
	DC_CU_FLAGS(DC_CU_FLAG_ENUM_)
#undef DC_CU_FLAG_ENUM_
};

typedef unsigned int dc_CUresult;
typedef unsigned int dc_CUdevice_P2PAttribute;
typedef int dc_CUdevice;
typedef unsigned long long dc_CUdeviceptr; /* 64-bit builds only */
typedef struct CUctx_st *dc_CUcontext;
typedef struct CUmod_st *dc_CUmodule;
typedef struct CUfunc_st *dc_CUfunction;
typedef struct CUevent_st *dc_CUevent;
typedef struct CUstream_st *dc_CUstream;

/* The real header defines struct CUuuid_st itself (under this guard). */
#ifndef CU_UUID_HAS_BEEN_DEFINED
struct CUuuid_st {
	char bytes[16];
};
#endif
typedef struct CUuuid_st dc_CUuuid;

_Static_assert(sizeof(void *) == 8, "the CUDA driver API subset assumes a 64-bit build");

/*
 * The functions: X(symbol, fallback, parameter types).  symbol is the name
 * libcuda.so.1 exports for the current ABI; fallback is an older exported
 * name with the same signature to try when symbol is missing (older
 * drivers), or NULL.
 */
#define DC_CU_FUNCS(X)                                                                  \
	X(cuInit, NULL, (unsigned int))                                                 \
	X(cuDriverGetVersion, NULL, (int *))                                            \
	X(cuGetErrorName, NULL, (dc_CUresult, const char **))                           \
	X(cuGetErrorString, NULL, (dc_CUresult, const char **))                         \
	X(cuDeviceGetCount, NULL, (int *))                                              \
	X(cuDeviceGet, NULL, (dc_CUdevice *, int))                                      \
	X(cuDeviceGetName, NULL, (char *, int, dc_CUdevice))                            \
	X(cuDeviceGetPCIBusId, NULL, (char *, int, dc_CUdevice))                        \
	X(cuDeviceGetUuid_v2, "cuDeviceGetUuid", (dc_CUuuid *, dc_CUdevice))            \
	X(cuDeviceCanAccessPeer, NULL, (int *, dc_CUdevice, dc_CUdevice))               \
	X(cuDeviceGetP2PAttribute, NULL,                                                \
	  (int *, dc_CUdevice_P2PAttribute, dc_CUdevice, dc_CUdevice))                  \
	X(cuDevicePrimaryCtxRetain, NULL, (dc_CUcontext *, dc_CUdevice))                \
	X(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease", (dc_CUdevice))     \
	X(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", (dc_CUdevice))         \
	X(cuCtxSetCurrent, NULL, (dc_CUcontext))                                        \
	X(cuCtxSynchronize, NULL, (void))                                               \
	X(cuCtxEnablePeerAccess, NULL, (dc_CUcontext, unsigned int))                    \
	X(cuCtxDisablePeerAccess, NULL, (dc_CUcontext))                                 \
	X(cuMemAlloc_v2, NULL, (dc_CUdeviceptr *, size_t))                              \
	X(cuMemFree_v2, NULL, (dc_CUdeviceptr))                                         \
	X(cuMemcpyHtoD_v2, NULL, (dc_CUdeviceptr, const void *, size_t))                \
	X(cuMemcpyDtoH_v2, NULL, (void *, dc_CUdeviceptr, size_t))                      \
	X(cuMemcpyPeer, NULL,                                                           \
	  (dc_CUdeviceptr, dc_CUcontext, dc_CUdeviceptr, dc_CUcontext, size_t))         \
	X(cuMemsetD32_v2, NULL, (dc_CUdeviceptr, unsigned int, size_t))                 \
	X(cuModuleLoadData, NULL, (dc_CUmodule *, const void *))                        \
	X(cuModuleGetFunction, NULL, (dc_CUfunction *, dc_CUmodule, const char *))      \
	X(cuModuleUnload, NULL, (dc_CUmodule))                                          \
	X(cuLaunchKernel, NULL,                                                         \
	  (dc_CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,       \
	   unsigned int, unsigned int, unsigned int, dc_CUstream, void **, void **))    \
	X(cuEventCreate, NULL, (dc_CUevent *, unsigned int))                            \
	X(cuEventRecord, NULL, (dc_CUevent, dc_CUstream))                               \
	X(cuEventSynchronize, NULL, (dc_CUevent))                                       \
	X(cuEventElapsedTime_v2, "cuEventElapsedTime", (float *, dc_CUevent, dc_CUevent)) \
	X(cuEventDestroy_v2, NULL, (dc_CUevent))

/* dc_pfn_<symbol>: a pointer to that function. */
#define DC_CU_PFN_TYPEDEF_(sym, fallback, params) typedef dc_CUresult(*dc_pfn_##sym) params;
DC_CU_FUNCS(DC_CU_PFN_TYPEDEF_)
#undef DC_CU_PFN_TYPEDEF_

#endif
