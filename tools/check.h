/* SPDX-License-Identifier: BSD-3-Clause */
/* `dmaconn check` (tools/check.c). */
#ifndef DMACONN_CHECK_H
#define DMACONN_CHECK_H

/* Runs `dmaconn check` on argv (argv[0] is "check"); returns the Nagios
 * status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
int dc_check_main(int argc, char **argv);

/* Whether the last dc_check_main() was to write nothing (-q): a closed
 * standard output is then no failure. */
int dc_check_silent(void);

/* The status of a check whose report could not be written. */
#define DC_CHECK_UNKNOWN 3

#endif
