#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# No library dmaconn installs defines a vendor symbol (nvml*, ze*, rsmi_*,
# cu*): the replay component hands the backends function tables instead, so
# nothing of it can stand in for a vendor library in the global scope.
# usage: vendor_symbols_test.sh LIBRARY...
status=0
for lib in "$@"; do
	if ! out=$(nm -D --defined-only "$lib"); then
		echo "FAIL: nm cannot read $lib"
		status=1
		continue
	fi
	bad=$(printf '%s\n' "$out" | awk '{print $NF}' | grep -E '^(nvml|ze|rsmi_|cu)')
	if [ -n "$bad" ]; then
		echo "FAIL: $lib defines vendor symbols:" $bad
		status=1
	else
		echo "ok: $lib ($(printf '%s\n' "$out" | grep -c ' [TDBRW] ') definitions)"
	fi
done
exit $status
