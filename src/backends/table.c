/* SPDX-License-Identifier: BSD-3-Clause */
/* The only place that lists the backends: their order is the order of the
 * built-in detectors (dmaconn_list_detectors) and of their fork locks.  Each
 * is the descriptor dc_backend_NAME of its directory, src/backends/NAME/. */
#include "backend.h"

#define DC_BACKEND_TABLE(X) X(nvml) X(cuda_verify) X(kfd) X(level_zero)

#define DC_DECLARE(name) extern const struct dc_backend dc_backend_##name;
DC_BACKEND_TABLE(DC_DECLARE)

#define DC_ENTRY(name) &dc_backend_##name,
const struct dc_backend *const dc_backends[] = { DC_BACKEND_TABLE(DC_ENTRY) NULL };
