/* SPDX-License-Identifier: BSD-3-Clause */
/* The only place that lists the backends: their order is the order of the
 * built-in detectors (dmaconn_list_detectors) and of their fork locks. */
#include "backend.h"

extern const struct dc_backend dc_backend_nvml;
extern const struct dc_backend dc_backend_cuda_verify;
extern const struct dc_backend dc_backend_kfd;
extern const struct dc_backend dc_backend_level_zero;

const struct dc_backend *const dc_backends[] = {
	&dc_backend_nvml,
	&dc_backend_cuda_verify,
	&dc_backend_kfd,
	&dc_backend_level_zero,
	NULL,
};
