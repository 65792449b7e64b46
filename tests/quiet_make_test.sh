#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# `make` is quiet by default and shows everything with V=1: the build step
# of an up-to-date tree says nothing (no progress lines, no make directory
# lines), V=1 shows CMake's lines; tools/quiet.sh keeps a failing step's
# errors and exit status, and drops a passing configure step's chatter but
# not what it left out.
# Usage: quiet_make_test.sh BUILD_DIR   (run from the source root)
set -u
BUILD=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/harness.sh"

# The tree is built: `make build` has nothing to do, and says nothing.
env -u MAKEFLAGS -u MAKELEVEL "${MAKE:-make}" build BUILD="$BUILD" >"$TMP/quiet" 2>&1
status=$?
if [ $status -eq 0 ] && [ ! -s "$TMP/quiet" ]; then
	ok "make build is silent on a built tree"
else
	bad "make build (exit status $status) printed" "$TMP/quiet"
fi
env -u MAKEFLAGS -u MAKELEVEL "${MAKE:-make}" build BUILD="$BUILD" V=1 >"$TMP/verbose" 2>&1
if grep -q 'Built target' "$TMP/verbose" && grep -q -- '--build' "$TMP/verbose"; then
	ok "make build V=1 shows CMake's lines"
else
	bad "make build V=1 did not show CMake's lines" "$TMP/verbose"
fi

# A failing step: its error on standard error, progress lines dropped, its status kept.
sh tools/quiet.sh "$TMP/log/fail.log" sh -c \
	'echo "[ 50%] Building C object x.o"; echo "x.c:1:2: error: boom" >&2; exit 3' >"$TMP/out" 2>"$TMP/err"
status=$?
if [ $status -eq 3 ] && grep -q 'x.c:1:2: error: boom' "$TMP/err" && ! grep -q '50%' "$TMP/err" &&
	[ ! -s "$TMP/out" ]; then
	ok "a failing step shows its errors and keeps its exit status"
else
	bad "a failing step (exit status $status)" "$TMP/err"
fi
# A passing configure step: chatter dropped, what it left out and its warnings kept.
sh tools/quiet.sh "$TMP/log/ok.log" sh -c 'echo "-- The C compiler identification is GNU";
	echo "-- MPI not found: building without libdmaconn_mpi";
	printf "CMake Warning at CMakeLists.txt:1 (message):\n  careful\n\n-- Configuring done\n"' >"$TMP/out" 2>&1
status=$?
if [ $status -eq 0 ] && grep -q 'MPI not found' "$TMP/out" && grep -q 'careful' "$TMP/out" &&
	! grep -q -e 'compiler identification' -e 'Configuring done' "$TMP/out"; then
	ok "a passing step shows only what the reader needs"
else
	bad "a passing step (exit status $status) printed" "$TMP/out"
fi
finish
