/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves that src/backends/cuda_verify/cuda_api.h matches the real CUDA driver API: built
 * on a machine with the CUDA toolkit, against its <cuda.h>, it compiles only
 * if every CUresult code, P2P attribute and flag value, every type size and
 * every function signature we declared equals the real one, and the program
 * then checks that libcuda.so.1 exports every symbol we look up.
 *
 *   cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Werror=incompatible-pointer-types \
 *      -I/usr/local/cuda/include -Isrc/backends tests/device/cuda_abi_check.c -ldl \
 *      -o cuda_abi_check && ./cuda_abi_check
 */
#include <cuda.h>

#include "cuda_api.h"

#include <dlfcn.h>
#include <stdio.h>

/* Constants. */
#define CHECK_VALUE_(name, value)                                               \
	_Static_assert((long long)DC_##name == (long long)name, #name " differs from <cuda.h>"); \
	_Static_assert((long long)DC_##name == value, #name " differs from its listed value");
DC_CU_RESULTS(CHECK_VALUE_)
DC_CU_P2P_ATTRIBUTES(CHECK_VALUE_)
DC_CU_FLAGS(CHECK_VALUE_)

/* Types: sizes, and compatibility (the same type for C). */
#define SAME_TYPE_(a, b) __builtin_types_compatible_p(a, b)
_Static_assert(sizeof(dc_CUresult) == sizeof(CUresult), "CUresult size");
_Static_assert(SAME_TYPE_(dc_CUresult, CUresult), "CUresult type");
_Static_assert(sizeof(dc_CUdevice_P2PAttribute) == sizeof(CUdevice_P2PAttribute), "P2P attribute size");
_Static_assert(SAME_TYPE_(dc_CUdevice_P2PAttribute, CUdevice_P2PAttribute), "P2P attribute type");
_Static_assert(SAME_TYPE_(dc_CUdevice, CUdevice), "CUdevice type");
_Static_assert(SAME_TYPE_(dc_CUdeviceptr, CUdeviceptr), "CUdeviceptr type");
_Static_assert(sizeof(dc_CUdeviceptr) == sizeof(CUdeviceptr), "CUdeviceptr size");
_Static_assert(SAME_TYPE_(dc_CUcontext, CUcontext), "CUcontext type");
_Static_assert(SAME_TYPE_(dc_CUmodule, CUmodule), "CUmodule type");
_Static_assert(SAME_TYPE_(dc_CUfunction, CUfunction), "CUfunction type");
_Static_assert(SAME_TYPE_(dc_CUevent, CUevent), "CUevent type");
_Static_assert(SAME_TYPE_(dc_CUstream, CUstream), "CUstream type");
_Static_assert(SAME_TYPE_(dc_CUuuid, CUuuid), "CUuuid type");
_Static_assert(sizeof(dc_CUuuid) == 16, "CUuuid size");

/* Functions: each symbol we call, as <cuda.h> declares it (after its
 * "#define cuXxx cuXxx_v2" mappings), has exactly our pointer type. */
#define CHECK_FN_(sym, fallback, params)                                        \
	_Static_assert(SAME_TYPE_(__typeof__(&sym), dc_pfn_##sym), #sym " signature differs");
DC_CU_FUNCS(CHECK_FN_)

/* And the same through simple assignment, which C constrains to compatible
 * pointer types (an error under -Werror=incompatible-pointer-types); inside
 * sizeof it is not evaluated, so nothing links against libcuda. */
#define ASSIGN_(sym, fallback, params)                                          \
	_Static_assert(sizeof(*(dc_pfn_##sym *)0 = sym) == sizeof(dc_pfn_##sym), #sym " assignment");
DC_CU_FUNCS(ASSIGN_)

int main(void)
{
	int bad = 0, count = 0;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("cuda_abi_check: compile-time checks passed; libcuda.so.1 not loadable (%s)\n",
		       dlerror());
		return 0;
	}
#define SYM_(sym, fallback, params)                                             \
	count++;                                                                \
	if (!dlsym(h, #sym)) {                                                  \
		printf("cuda_abi_check: libcuda.so.1 does not export %s\n", #sym); \
		bad++;                                                          \
	}
	DC_CU_FUNCS(SYM_)
#undef SYM_
	printf("cuda_abi_check: CUDA_VERSION %d: compile-time checks passed; %d of %d symbols exported\n",
	       CUDA_VERSION, count - bad, count);
	dlclose(h);
	return bad ? 1 : 0;
}
