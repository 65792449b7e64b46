#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Unusable replay files give one clear error naming the file and the position
# (line and column, or the JSON path), exit status 1, and never a crash.
# Usage: bad_replay_test.sh BUILD_DIR   (run from the source root)
set -u
CLI="${DMACONN_TEST_WRAPPER:-} $1/dmaconn"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/harness.sh"

check() { # FILE EXPECTED-STDERR [VAR=value ...]
	file=$1 want=$2
	shift 2
	# The time limit only ends a hang (a FIFO read blocks forever).
	# shellcheck disable=SC2086
	timeout 300 env "$@" $CLI --replay "$file" -d cuda -c nvlink >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ $got = 1 ] && [ "$(cat "$TMP/err")" = "$want" ] && [ ! -s "$TMP/out" ]; then
		ok "$file"
	else
		bad "$file: exit $got, stderr:"; cat "$TMP/err"; echo "expected: $want"
	fi
}

D=tests/bad-replays
check $D/truncated.json "dmaconn: $D/truncated.json: line 3, column 273: premature end of input"
check $D/empty.json "dmaconn: $D/empty.json: line 1, column 0: '[' or '{' expected near end of file"
check $D/dup.json "dmaconn: $D/dup.json: line 1, column 35: duplicate object key near '\"a\"'"
check $D/huge.json "dmaconn: $D/huge.json: line 1, column 69: too big integer near '99999999999999999999'"
check $D/version-type.json "dmaconn: $D/version-type.json: dmaconn_topology: expected the format version, an integer"
check $D/version-new.json "dmaconn: $D/version-new.json: dmaconn_topology: version 99 is newer than this reader's 2"
check $D/uuid-type.json "dmaconn: $D/uuid-type.json: nvml.devices[0].uuid: expected a string"
check $D/busid.json "dmaconn: $D/busid.json: nvml.devices[0].pci.bus_id: \"zz\" is not a PCI bus id"
check $D/repeat.json "dmaconn: $D/repeat.json: nvml.devices[0].nvlink[0].repeat: 100000 is out of range (1 to 64)"
check $D/errname.json "dmaconn: $D/errname.json: nvml.init: unknown NVML return code \"NOT_AN_ERROR\""
check $D/clique-type.json "dmaconn: $D/clique-type.json: nvml.devices[0].fabric.cliques[0].type: expected \"unicast_pointer\", \"multicast_pointer\", \"unicast_logical_endpoint\", \"multicast_logical_endpoint\" or a number 0-255"
check $D/clique-many.json "dmaconn: $D/clique-many.json: nvml.devices[0].fabric.cliques: more than 64 cliques"
# Version 2's compact peers: rows of indices into nvml.p2p_answers.
check $D/p2p-row-short.json "dmaconn: $D/p2p-row-short.json: nvml.devices[0].p2p_row: 1 peers, but 2 devices are listed"
check $D/p2p-row-index.json "dmaconn: $D/p2p-row-index.json: nvml.devices[0].p2p_row: answer 1, but nvml.p2p_answers has 1"
check $D/p2p-row-run.json "dmaconn: $D/p2p-row-run.json: nvml.devices[0].p2p_row: more than the 2 peers"
# A GPU listed twice (same UUID, or same bus id however written); a path
# that is both a file and a directory, whatever sorts between them.
check $D/dup-uuid.json "dmaconn: $D/dup-uuid.json: nvml.devices[2].uuid: \"GPU-1\" is also the UUID of nvml.devices[0]"
# UUIDs are hex, compared as CUDA_VISIBLE_DEVICES compares them: case ignored.
check $D/dup-uuid-case.json "dmaconn: $D/dup-uuid-case.json: nvml.devices[1].uuid: \"GPU-E45AFAC4-9187-255F-1FB8-AB5D93A3BC6C\" is also the UUID of nvml.devices[0]"
check $D/dup-busid.json "dmaconn: $D/dup-busid.json: nvml.devices[1].pci.bus_id: \"00000000:00:06.0\" is also the bus id of nvml.devices[0]"
check $D/file-dir.json "dmaconn: $D/file-dir.json: files.\"/sys/class/kfd/kfd/topology/nodes/1/io_links\": is a file, yet other paths are below it"
# The verification's devices and pairs, each once: a GPU listed twice would
# show a verified link to itself, a pair twice two verdicts.
check $D/verify-dup-device.json "dmaconn: $D/verify-dup-device.json: verification.devices[1]: \"00000000:00:06.0\" is also the bus id of verification.devices[0]"
check $D/verify-dup-pair.json "dmaconn: $D/verify-dup-pair.json: verification.pairs[1]: the pair 0 -> 1 is listed twice"
# Level Zero's pairs, each once, as NVML's peers: the second answer would go unread.
check $D/ze-pair-twice.json "dmaconn: $D/ze-pair-twice.json: level_zero.drivers[0].p2p.pairs[2]: the pair \"0\" -> \"1\" is listed twice"
# A vendor's "library" is read as NVML's: the loader's message is a string.
check $D/ze-library-error.json "dmaconn: $D/ze-library-error.json: level_zero.library.error: expected the loader's message"
# Faults are the test stand-in's to read (tests/replay_faults.c).
check $D/fault-fn.json "dmaconn: $D/fault-fn.json: nvml.faults[0].function: \"nvmlBogus\" is not an NVML function that dmaconn calls" \
	DMACONN_REPLAY_LIBRARY="$1/tests/libdmaconn_replay_faults.so"

# 100000 levels of nesting, made here rather than stored.
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]"; print "" }' >"$TMP/deep.json"
check "$TMP/deep.json" "dmaconn: $TMP/deep.json: line 1, column 2049: maximum parsing depth reached near '['"
check /nonexistent/topology.json "dmaconn: /nonexistent/topology.json: cannot open: No such file or directory"
check tests "dmaconn: tests: cannot open: Is a directory"
# Neither a FIFO (no writer: opening it would wait for ever) nor a device.
mkfifo "$TMP/fifo.json"
check "$TMP/fifo.json" "dmaconn: $TMP/fifo.json: not a regular file"
check /dev/zero "dmaconn: /dev/zero: not a regular file"

finish
