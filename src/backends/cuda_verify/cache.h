/* SPDX-License-Identifier: BSD-3-Clause */
/* The verdict cache of "cuda"/"verified" (src/backends/cuda_verify/cache.c). */
#ifndef DMACONN_VERIFY_CACHE_H
#define DMACONN_VERIFY_CACHE_H

#include "backends/backend.h"
#include "dmaconn.h"

/* The CUDA driver library the helper loads (verified.c). */
extern const struct dc_library dc_verified_libraries[];

/* 0 when DMACONN_NO_CACHE is set (not "0") or dmaconn_set_verify_cache(0). */
int dc_vcache_enabled(void);
/* The key of this node as it is now, one component a line; NULL without a
 * boot id or an NVIDIA driver (nothing is cached then).  The caller frees. */
char *dc_vcache_key(void);
/* Fills b (sized by it) from a valid entry for key: 0; -1 when there is no
 * valid, safe, fresh entry for it, b untouched. */
int dc_vcache_load(const char *key, dmaconn_builder *b);
/* Replaces the entry with r under key: 0, or -1. */
int dc_vcache_store(const char *key, const dmaconn_result *r);

#endif
