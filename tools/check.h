/* SPDX-License-Identifier: BSD-3-Clause */
/* `dmaconn check` (tools/check.c). */
#ifndef DMACONN_CHECK_H
#define DMACONN_CHECK_H

/* Runs `dmaconn check` on argv (argv[0] is "check"); returns the Nagios
 * status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
int dc_check_main(int argc, char **argv);

#endif
