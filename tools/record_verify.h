/* `dmaconn --record FILE --verify` (tools/record_verify.c). */
#ifndef DMACONN_RECORD_VERIFY_H
#define DMACONN_RECORD_VERIFY_H

#include <stddef.h>

/* Runs cuda/verified and adds its verdict to the recording at path as its
 * "verification" section (a replayed node's section was copied by the
 * recorder).  0, or -1 with why: nothing was checked, or the file could not
 * be rewritten. */
int dc_cli_record_verification(const char *path, int replayed, char *why, size_t len);

#endif
