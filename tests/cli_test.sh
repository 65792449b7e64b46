#!/bin/sh
# The CLI against exact expected output: tests/cli/NAME.out (stdout),
# NAME.err (stderr, when present) and the exit status given per case.
# Usage: cli_test.sh BUILD_DIR   (run from the source root)
set -u
BUILD=$1
CLI="${DMACONN_TEST_WRAPPER:-} $BUILD/dmaconn"
EXP=tests/cli
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

# case NAME STATUS [VAR=value ...] -- ARGS...
case_() {
	name=$1 status=$2
	shift 2
	vars=""
	while [ "$1" != "--" ]; do vars="$vars $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env -u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER -u DMACONN_REPLAY -u DMACONN_QUIET \
		-u DMACONN_NVML_LIBRARY -u DMACONN_SYSFS_ROOT $vars $CLI "$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	ok=1
	if [ "$got" != "$status" ]; then
		echo "FAIL $name: exit status $got, expected $status"; ok=0
	fi
	if ! diff -u "$EXP/$name.out" "$TMP/out" >"$TMP/diff"; then
		echo "FAIL $name: stdout differs"; cat "$TMP/diff"; ok=0
	fi
	if [ -f "$EXP/$name.err" ] && ! diff -u "$EXP/$name.err" "$TMP/err" >"$TMP/diff"; then
		echo "FAIL $name: stderr differs"; cat "$TMP/diff"; ok=0
	fi
	if [ $ok = 1 ]; then pass=$((pass + 1)); echo "ok $name"; else fail=$((fail + 1)); fi
}

T=tests/topologies
NOLIB="DMACONN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"
# The stand-in that injects a file's "faults" (tests/replay_faults.c).
FAULTS="DMACONN_REPLAY_LIBRARY=$BUILD/tests/libdmaconn_replay_faults.so"
case_ version 0 -- --version
case_ help 0 -- --help
case_ list 0 -- --list
case_ bogus-pair 1 -- -d cuda -c bogus
case_ bogus-type 2 -- -d tpu -c nvlink
case_ half-pair 2 -- -d cuda
case_ stray-argument 2 -- nvlink
case_ h200x2 0 -- --replay $T/h200x2.json
case_ h200x2-json 0 -- --replay $T/h200x2.json -d cuda -c nvlink --json
case_ h200x2-reversed 0 CUDA_VISIBLE_DEVICES=1,0 -- --replay $T/h200x2.json -d cuda -c nvlink
case_ h200x2-one 0 CUDA_VISIBLE_DEVICES=1 -- --replay $T/h200x2.json -d cuda -c nvlink
case_ dgx1-subset 0 CUDA_VISIBLE_DEVICES=4,0,5,1 -- -d cuda -c nvlink --replay $T/dgx1-v100.json
case_ degraded 0 DMACONN_REPLAY=$T/hgx-h100-8-degraded.json -- -d cuda -c nvlink
case_ midscan-fail 0 $FAULTS -- --replay $T/midscan-fail.json -d cuda -c nvlink
case_ midscan-fail-json 0 $FAULTS -- --replay $T/midscan-fail.json -d cuda -c nvlink --json -q
# The replay component alone ignores "faults": the node as described, no warning.
case_ midscan-fail-product 0 -- --replay $T/midscan-fail.json -d cuda -c nvlink
case_ no-nvml 0 $NOLIB DMACONN_SYSFS_ROOT=tests/sysfs/two-nvidia -- -d cuda -c nvlink
case_ no-nvml-quiet 0 $NOLIB DMACONN_SYSFS_ROOT=tests/sysfs/two-nvidia DMACONN_QUIET=1 -- -d cuda -c nvlink
case_ relative-override 0 DMACONN_NVML_LIBRARY=libnvidia-ml.so.1 DMACONN_SYSFS_ROOT=tests/sysfs/no-nvidia -- --json -d cuda -c nvlink
case_ bad-replay 1 -- --replay tests/cli/not-json.txt -d cuda -c nvlink
case_ example-mi300x 0 -- --replay examples/mi300x.json -d rocm -c infinity_fabric
case_ topo-dgx1 0 -- --topo --replay $T/dgx1-v100.json
case_ topo-dgx1-subset 0 CUDA_VISIBLE_DEVICES=4,0,5,1 -- --topo --replay $T/dgx1-v100.json
case_ topo-pcie 0 -- --topo --replay $T/pcie-l40s-4.json

# A recording of a replay replays identically, with the environment it was
# recorded under pinned (the live CUDA_VISIBLE_DEVICES=0 must not matter).
for cvd in "" "3,1" "GPU-"; do
	CUDA_VISIBLE_DEVICES=$cvd $CLI --replay $T/dgx1-v100.json --record "$TMP/rec.json" 2>/dev/null
	a=$(CUDA_VISIBLE_DEVICES=$cvd $CLI --replay $T/dgx1-v100.json --json -q -d cuda -c nvlink)
	b=$(CUDA_VISIBLE_DEVICES=0 $CLI --replay "$TMP/rec.json" --json -q -d cuda -c nvlink)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then pass=$((pass + 1)); echo "ok round-trip '$cvd'"
	else fail=$((fail + 1)); echo "FAIL round-trip '$cvd':"; echo "$a"; echo "$b"; fi
	# The P2P statuses and common ancestors replay as recorded, too.
	a=$(CUDA_VISIBLE_DEVICES=$cvd $CLI --replay $T/dgx1-v100.json --json -q -d cuda -c p2p)
	b=$(CUDA_VISIBLE_DEVICES=0 $CLI --replay "$TMP/rec.json" --json -q -d cuda -c p2p)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then pass=$((pass + 1)); echo "ok round-trip-p2p '$cvd'"
	else fail=$((fail + 1)); echo "FAIL round-trip-p2p '$cvd':"; echo "$a"; echo "$b"; fi
done

echo "$pass passed, $fail failed"
[ $fail = 0 ]
