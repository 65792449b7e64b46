/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves dmaconn's ROCm SMI declarations (src/backends/kfd/rocm_smi_api.h)
 * against AMD's <rocm_smi/rocm_smi.h>.  Built twice: with DMACONN_ABI_OURS
 * it expands the constants and sizes against dmaconn's header; without, it
 * sees only the real header, checks every prototype of RSMI_FUNCTIONS at
 * compile time and compares the two lists when run.
 * Build: cc -Isrc/backends tests/device/rocm_smi_abi_check.c (twice, see
 *        tests/CMakeLists.txt); Debian's librocm-smi-dev has the header.
 */
#include "abi_check.h"

#ifdef DMACONN_ABI_OURS
#include "rocm_smi_api.h"

extern const struct abi_item rsmi_abi_ours[];
extern const size_t rsmi_abi_ours_count;
const struct abi_item rsmi_abi_ours[] = { RSMI_ABI_ITEMS(ABI_CONSTANT, ABI_SIZE) };
const size_t rsmi_abi_ours_count = ABI_COUNT_OF(rsmi_abi_ours);

#else
#include <rocm_smi/rocm_smi.h>
#define DMACONN_RSMI_REAL_HEADER
#include "rocm_smi_api.h"

RSMI_FUNCTIONS(ABI_SAME_PROTOTYPE)

static const struct abi_item abi_real[] = { RSMI_ABI_ITEMS(ABI_CONSTANT, ABI_SIZE) };

extern const struct abi_item rsmi_abi_ours[];
extern const size_t rsmi_abi_ours_count;

int main(void)
{
	size_t n = ABI_COUNT_OF(abi_real);
	return abi_done("rocm_smi", n, abi_compare("rocm_smi.h", abi_real, n, rsmi_abi_ours, rsmi_abi_ours_count),
			0 RSMI_FUNCTIONS(ABI_COUNT), "Debian's librocm-smi-dev");
}
#endif
