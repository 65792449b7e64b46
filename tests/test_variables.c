/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_variable(): the variables each device type's backends read, from
 * their descriptors' rows in the backend table's order -- visibility
 * variables (struct dc_visibility) and library overrides (struct
 * dc_library), across every backend of the type (cuda's libraries are two
 * backends' rows), without a visibility variable the runtime ignores -- and
 * NULL for anything else.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dmaconn.h"

/* The variables of (type, kind) are exactly want[], then NULL. */
static void expect(dmaconn_device_type type, dmaconn_variable_kind kind, const char *const *want, int n)
{
	for (int k = 0; k < n; k++) {
		const char *got = dmaconn_variable(type, kind, k);
		CHECK(got != NULL);
		if (got)
			CHECK_STR(got, want[k]);
	}
	CHECK(dmaconn_variable(type, kind, n) == NULL);
	CHECK(dmaconn_variable(type, kind, n + 1) == NULL);
	CHECK(dmaconn_variable(type, kind, -1) == NULL);
}

#define EXPECT(type, kind, ...)                                                         \
	do {                                                                            \
		static const char *const want_[] = { __VA_ARGS__ };                     \
		expect((type), (kind), want_, (int)(sizeof(want_) / sizeof(want_[0]))); \
	} while (0)

int main(void)
{
	EXPECT(DMACONN_DEVICE_CUDA, DMACONN_VARIABLE_VISIBILITY, "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER");
	/* Not GPU_DEVICE_ORDINAL, which HIP does not follow (OpenCL's). */
	EXPECT(DMACONN_DEVICE_ROCM, DMACONN_VARIABLE_VISIBILITY, "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
	       "CUDA_VISIBLE_DEVICES");
	EXPECT(DMACONN_DEVICE_XPU, DMACONN_VARIABLE_VISIBILITY, "ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY");
	/* The NVML backend's library, then the functional check's. */
	EXPECT(DMACONN_DEVICE_CUDA, DMACONN_VARIABLE_LIBRARY, "DMACONN_NVML_LIBRARY", "DMACONN_CUDA_LIBRARY");
	EXPECT(DMACONN_DEVICE_ROCM, DMACONN_VARIABLE_LIBRARY, "DMACONN_ROCM_SMI_LIBRARY");
	EXPECT(DMACONN_DEVICE_XPU, DMACONN_VARIABLE_LIBRARY, "DMACONN_ZE_LIBRARY");

	/* No such type or kind. */
	CHECK(dmaconn_variable((dmaconn_device_type)0, DMACONN_VARIABLE_VISIBILITY, 0) == NULL);
	CHECK(dmaconn_variable((dmaconn_device_type)4, DMACONN_VARIABLE_LIBRARY, 0) == NULL);
	CHECK(dmaconn_variable(DMACONN_DEVICE_CUDA, (dmaconn_variable_kind)2, 0) == NULL);
	CHECK(dmaconn_variable(DMACONN_DEVICE_CUDA, (dmaconn_variable_kind)-1, 0) == NULL);
	return check_done("variables");
}
