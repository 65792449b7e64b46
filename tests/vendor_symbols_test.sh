#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# No library dmaconn installs defines a vendor symbol (nvml*, ze*, rsmi_*,
# cu*): the replay component hands the backends function tables instead, so
# nothing of it can stand in for a vendor library in the global scope.
# usage: vendor_symbols_test.sh LIBRARY...
. "$(dirname "$0")/harness.sh"
for lib in "$@"; do
	if ! out=$(nm -D --defined-only "$lib"); then
		bad "nm cannot read $lib"
		continue
	fi
	vendor=$(printf '%s\n' "$out" | awk '{print $NF}' | grep -E '^(nvml|ze|rsmi_|cu)')
	if [ -n "$vendor" ]; then
		bad "$lib defines vendor symbols: $(echo $vendor)"
	else
		ok "$lib ($(printf '%s\n' "$out" | grep -c ' [TDBRW] ') definitions)"
	fi
done
finish
