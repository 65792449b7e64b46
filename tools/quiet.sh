#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs a build step quietly for the Makefile (V=0): its output goes to LOG;
# on success only the lines that matter to the reader are shown (CMake's
# warnings and errors, what the configure step left out, compiler
# warnings), on failure every line but the progress ones, on standard error,
# and the step's exit status is kept.  `make V=1` runs the step directly.
# Usage: quiet.sh LOG COMMAND [ARG]...
set -u
log=$1
shift
mkdir -p "$(dirname "$log")" || exit 1
"$@" >"$log" 2>&1
status=$?
if [ "$status" -ne 0 ]; then
	grep -v -e '^\[ *[0-9]*%\] ' -e 'Entering directory' -e 'Leaving directory' "$log" >&2
	echo "make: a step failed (exit status $status): $1 ...; its whole output: $log" >&2
	exit "$status"
fi
# A CMake warning is a block of lines up to a blank one.
awk '/^CMake (Warning|Error|Deprecation)/ { block = 1 }
	block { print; if ($0 == "") block = 0; next }
	/not found|left out|: warning: / { print }' "$log"
exit 0
