#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/dmaconn.sh): before a
# job starts on this node, compare its GPU connectivity with what a good
# node of its kind showed (`dmaconn --json > /etc/dmaconn/expect.json` there).
# A non-zero exit makes Slurm drain the node and requeue the job, so this
# fails on CRITICAL (a GPU lost, fewer links, a lost pair, failed
# verification) and UNKNOWN (no driver, NVML failing, no usable expectation)
# and lets a WARNING (NVSwitch fabric still registering, an extra GPU) pass
# unless DMACONN_PROLOG_STRICT=1.  Findings go to standard output and to
# standard error (slurmd's log).
#
# DMACONN: the program (default dmaconn on PATH); DMACONN_EXPECT: the
# expectation (default /etc/dmaconn/expect.json; without that file, every
# pair of GPUs must have NVLink connectivity).
DMACONN=${DMACONN:-dmaconn}
EXPECT=${DMACONN_EXPECT:-/etc/dmaconn/expect.json}
if [ -e "$EXPECT" ]; then
	report=$("$DMACONN" check --expect "$EXPECT")
else
	report=$("$DMACONN" check --fully-connected)
fi
status=$?
[ "$status" = 0 ] && exit 0
printf '%s\n' "$report"
printf 'dmaconn prolog on %s: %s\n' "$(hostname)" "$(printf '%s\n' "$report" | head -n 1)" >&2
if [ "$status" = 1 ] && [ "${DMACONN_PROLOG_STRICT:-0}" != 1 ]; then
	exit 0
fi
exit 1
