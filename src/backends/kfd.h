/* AMD detectors on the amdgpu KFD topology (kfd.c). */
#ifndef DMACONN_KFD_H
#define DMACONN_KFD_H

#include "dmaconn.h"

/* rocm/infinity_fabric: direct XGMI links between GPU i and GPU j. */
int dc_kfd_detect_infinity_fabric(dmaconn_builder *b, void *user_data);
/* rocm/p2p: 1 when peer DMA and 32- and 64-bit atomics are supported i -> j. */
int dc_kfd_detect_p2p(dmaconn_builder *b, void *user_data);
/* Unloads ROCm SMI when dmaconn loaded it. */
void dc_kfd_shutdown(void);
/* fork() handling, as dc_nvml_fork() (src/internal.h). */
void dc_kfd_fork(int phase);

#endif
