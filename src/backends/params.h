/* SPDX-License-Identifier: BSD-3-Clause */
/* Wrappers written from a vendor's function table alone (nvml_functions.h,
 * ze_functions.h): the replay's answers, its recorder, the fault stand-in. */
#ifndef DMACONN_PARAMS_H
#define DMACONN_PARAMS_H

/*
 * A parameter list of a function table's row as a function's, its
 * parameters named a0, a1, ... in order (DC_NAMED), and those names as the
 * arguments of a call (DC_PASSED).  Up to four parameters; not for (void).
 */
#define DC_NAMED(params) DC_CAT_(DC_NAMED, DC_NARGS_ params) params
#define DC_PASSED(params) DC_CAT_(DC_PASSED, DC_NARGS_ params)
#define DC_NARGS_(...) DC_NARGS__(__VA_ARGS__, 4, 3, 2, 1, 0)
#define DC_NARGS__(a, b, c, d, n, ...) n
#define DC_CAT_(a, n) DC_CAT__(a, n)
#define DC_CAT__(a, n) a##n
#define DC_NAMED1(t0) (t0 a0)
#define DC_NAMED2(t0, t1) (t0 a0, t1 a1)
#define DC_NAMED3(t0, t1, t2) (t0 a0, t1 a1, t2 a2)
#define DC_NAMED4(t0, t1, t2, t3) (t0 a0, t1 a1, t2 a2, t3 a3)
#define DC_PASSED1 (a0)
#define DC_PASSED2 (a0, a1)
#define DC_PASSED3 (a0, a1, a2)
#define DC_PASSED4 (a0, a1, a2, a3)

#endif
