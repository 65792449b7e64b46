#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# `dmaconn --mpi` without the MPI component: a clear message and exit 1,
# and the CLI itself never links MPI.  Needs no MPI.  usage: cli_missing.sh DMACONN
set -u
cli=$1
. "$(dirname "$0")/../harness.sh"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

expect() { # expect STATUS TEXT -- ENV... COMMAND...
	want=$1 text=$2
	shift 2
	env "$@" >"$out" 2>"$err"
	got=$?
	if [ "$got" != "$want" ] || ! grep -qF -- "$text" "$err" || [ -s "$out" ]; then
		bad "$*: exit $got (expected $want), stderr:" "$err"
	else
		ok "$*"
	fi
}

expect 1 "--mpi needs the MPI component" DMACONN_MPI_LIBRARY=/nonexistent/libdmaconn_mpi.so.0 "$cli" --mpi
expect 1 "must be an absolute path" DMACONN_MPI_LIBRARY=libdmaconn_mpi.so.0 "$cli" --mpi -d cuda -c nvlink
expect 2 "--mpi takes" DMACONN_MPI_LIBRARY=/nonexistent "$cli" --mpi --topo
expect 2 "--mpi takes" DMACONN_MPI_LIBRARY=/nonexistent "$cli" --mpi --list
expect 2 "-d and -c go together" DMACONN_MPI_LIBRARY=/nonexistent "$cli" --mpi -d cuda

if command -v readelf >/dev/null 2>&1; then
	if readelf -d "$cli" | grep NEEDED | grep -qi mpi; then
		readelf -d "$cli" | grep NEEDED >"$out"
		bad "$cli links MPI:" "$out"
	else
		ok "the CLI does not link MPI"
	fi
fi
finish
