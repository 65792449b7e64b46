/* SPDX-License-Identifier: BSD-3-Clause */
/* `dmaconn --record FILE --verify` (tools/record_verify.c). */
#ifndef DMACONN_RECORD_VERIFY_H
#define DMACONN_RECORD_VERIFY_H

#include <stddef.h>

#include "dmaconn.h"

/* Whether a cuda/verified result proves nothing because the verification
 * could check nothing (the helper missing or failing, no driver): it warned
 * and no pair ran.  A node of one GPU, or of none verified without a
 * warning, is a complete answer. */
int dc_cli_verified_nothing(const dmaconn_result *r);

/* Runs cuda/verified and adds its verdict to the recording at path as its
 * "verification" section (a replayed node's section was copied by the
 * recorder).  0, or -1 with why: nothing was checked, or the file could not
 * be rewritten. */
int dc_cli_record_verification(const char *path, int replayed, char *why, size_t len);

#endif
