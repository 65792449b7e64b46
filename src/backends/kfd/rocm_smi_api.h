/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The subset of AMD's ROCm SMI library (librocm_smi64.so.1) that dmaconn may
 * use to cross-check the KFD topology.  The library is never linked: it is
 * dlopen'ed by soname (or DMACONN_ROCM_SMI_LIBRARY) when present.  The types
 * mirror <rocm_smi/rocm_smi.h>; tests/device/rocm_smi_abi_check.c proves
 * every prototype, constant and size below against that header (Debian
 * librocm-smi-dev), which defines DMACONN_RSMI_REAL_HEADER to use its own.
 */
#ifndef DMACONN_ROCM_SMI_API_H
#define DMACONN_ROCM_SMI_API_H

#include <stdint.h>

#define RSMI_SONAME "librocm_smi64.so.1"

/*
 * X(name, return type, parameter list, required): a required function
 * missing from the library makes it unusable; an optional one stays NULL
 * (rsmi_minmax_bandwidth_get came with ROCm SMI 5, so an older library still
 * cross-checks link types).
 */
#define RSMI_FUNCTIONS(X)                                                                   \
	X(rsmi_init, rsmi_status_t, (uint64_t), 1)                                          \
	X(rsmi_shut_down, rsmi_status_t, (void), 1)                                         \
	X(rsmi_num_monitor_devices, rsmi_status_t, (uint32_t *), 1)                         \
	X(rsmi_dev_pci_id_get, rsmi_status_t, (uint32_t, uint64_t *), 1)                    \
	X(rsmi_topo_get_link_type, rsmi_status_t,                                           \
	  (uint32_t, uint32_t, uint64_t *, RSMI_IO_LINK_TYPE *), 1)                         \
	X(rsmi_minmax_bandwidth_get, rsmi_status_t, (uint32_t, uint32_t, uint64_t *, uint64_t *), 0) \
	X(rsmi_status_string, rsmi_status_t, (rsmi_status_t, const char **), 0)

/* Every constant and size dmaconn relies on, for the ABI check. */
#define RSMI_ABI_ITEMS(C, S)                                                                \
	C(RSMI_STATUS_SUCCESS) C(RSMI_STATUS_INVALID_ARGS) C(RSMI_STATUS_NOT_SUPPORTED)     \
	C(RSMI_STATUS_FILE_ERROR) C(RSMI_STATUS_PERMISSION) C(RSMI_STATUS_OUT_OF_RESOURCES) \
	C(RSMI_STATUS_INTERNAL_EXCEPTION) C(RSMI_STATUS_INPUT_OUT_OF_BOUNDS)                \
	C(RSMI_STATUS_INIT_ERROR) C(RSMI_STATUS_NOT_YET_IMPLEMENTED) C(RSMI_STATUS_NOT_FOUND) \
	C(RSMI_STATUS_INSUFFICIENT_SIZE) C(RSMI_STATUS_INTERRUPT) C(RSMI_STATUS_UNEXPECTED_SIZE) \
	C(RSMI_STATUS_NO_DATA) C(RSMI_STATUS_UNEXPECTED_DATA) C(RSMI_STATUS_BUSY)           \
	C(RSMI_STATUS_REFCOUNT_OVERFLOW) C(RSMI_STATUS_UNKNOWN_ERROR)                       \
	C(RSMI_IOLINK_TYPE_UNDEFINED) C(RSMI_IOLINK_TYPE_PCIEXPRESS) C(RSMI_IOLINK_TYPE_XGMI) \
	S(rsmi_status_t) S(RSMI_IO_LINK_TYPE)

#ifndef DMACONN_RSMI_REAL_HEADER
typedef enum {
	RSMI_STATUS_SUCCESS = 0x0,
	RSMI_STATUS_INVALID_ARGS,
	RSMI_STATUS_NOT_SUPPORTED,
	RSMI_STATUS_FILE_ERROR,
	RSMI_STATUS_PERMISSION,
	RSMI_STATUS_OUT_OF_RESOURCES,
	RSMI_STATUS_INTERNAL_EXCEPTION,
	RSMI_STATUS_INPUT_OUT_OF_BOUNDS,
	RSMI_STATUS_INIT_ERROR,
	RSMI_STATUS_NOT_YET_IMPLEMENTED,
	RSMI_STATUS_NOT_FOUND,
	RSMI_STATUS_INSUFFICIENT_SIZE,
	RSMI_STATUS_INTERRUPT,
	RSMI_STATUS_UNEXPECTED_SIZE,
	RSMI_STATUS_NO_DATA,
	RSMI_STATUS_UNEXPECTED_DATA,
	RSMI_STATUS_BUSY,
	RSMI_STATUS_REFCOUNT_OVERFLOW,
	RSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF
} rsmi_status_t;

typedef enum {
	RSMI_IOLINK_TYPE_UNDEFINED = 0,
	RSMI_IOLINK_TYPE_PCIEXPRESS = 1,
	RSMI_IOLINK_TYPE_XGMI = 2,
	RSMI_IOLINK_TYPE_NUMIOLINKTYPES,
	RSMI_IOLINK_TYPE_SIZE = 0xFFFFFFFF
} RSMI_IO_LINK_TYPE;

struct rsmi_api {
#define RSMI_API_FIELD_(name, ret, params, required) ret(*name) params;
	RSMI_FUNCTIONS(RSMI_API_FIELD_)
#undef RSMI_API_FIELD_
};

/* "RSMI_STATUS_NOT_SUPPORTED" and so on, or NULL for a value ROCm SMI 5.2
 * does not define. */
static inline const char *rsmi_status_name(rsmi_status_t s)
{
	static const char *const names[] = {
		"RSMI_STATUS_SUCCESS", "RSMI_STATUS_INVALID_ARGS", "RSMI_STATUS_NOT_SUPPORTED",
		"RSMI_STATUS_FILE_ERROR", "RSMI_STATUS_PERMISSION", "RSMI_STATUS_OUT_OF_RESOURCES",
		"RSMI_STATUS_INTERNAL_EXCEPTION", "RSMI_STATUS_INPUT_OUT_OF_BOUNDS",
		"RSMI_STATUS_INIT_ERROR", "RSMI_STATUS_NOT_YET_IMPLEMENTED", "RSMI_STATUS_NOT_FOUND",
		"RSMI_STATUS_INSUFFICIENT_SIZE", "RSMI_STATUS_INTERRUPT",
		"RSMI_STATUS_UNEXPECTED_SIZE", "RSMI_STATUS_NO_DATA", "RSMI_STATUS_UNEXPECTED_DATA",
		"RSMI_STATUS_BUSY", "RSMI_STATUS_REFCOUNT_OVERFLOW",
	};
	if ((unsigned int)s < sizeof(names) / sizeof(names[0]))
		return names[s];
	return s == RSMI_STATUS_UNKNOWN_ERROR ? "RSMI_STATUS_UNKNOWN_ERROR" : NULL;
}
#endif

#endif
