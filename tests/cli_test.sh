#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The CLI against exact expected output: tests/cli/NAME.out (stdout),
# NAME.err (stderr, when present) and the exit status given per case.
# Usage: cli_test.sh BUILD_DIR   (run from the source root)
set -u
BUILD=$1
CLI="${DMACONN_TEST_WRAPPER:-} $BUILD/dmaconn"
EXP=tests/cli
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/harness.sh"

# Every case sees a machine without NVIDIA's libraries, kernel tree or verdict
# cache unless it names its own: what the host running the tests has (a GPU
# node's libnvidia-ml.so.1, /sys, ~/.cache/dmaconn) must not change a result.
HERMETIC="DMACONN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 DMACONN_CUDA_LIBRARY=/nonexistent/libcuda.so.1"
HERMETIC="$HERMETIC DMACONN_SYSFS_ROOT=tests/sysfs/no-nvidia DMACONN_CACHE_DIR=$TMP/no-cache"

# case NAME STATUS [VAR=value ...] -- ARGS...
case_() {
	name=$1 status=$2
	shift 2
	vars=""
	while [ "$1" != "--" ]; do vars="$vars $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env -u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER -u DMACONN_REPLAY -u DMACONN_QUIET \
		-u DMACONN_NVML_LIBRARY -u DMACONN_SYSFS_ROOT $HERMETIC $vars $CLI "$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	: >"$TMP/why"
	if [ "$got" != "$status" ]; then
		echo "exit status $got, expected $status" >>"$TMP/why"
	fi
	if ! diff -u "$EXP/$name.out" "$TMP/out" >"$TMP/diff"; then
		echo "stdout differs:" >>"$TMP/why"; cat "$TMP/diff" >>"$TMP/why"
	fi
	if [ -f "$EXP/$name.err" ] && ! diff -u "$EXP/$name.err" "$TMP/err" >"$TMP/diff"; then
		echo "stderr differs:" >>"$TMP/why"; cat "$TMP/diff" >>"$TMP/why"
	fi
	if [ -s "$TMP/why" ]; then bad "$name" "$TMP/why"; else ok "$name"; fi
}

T=tests/topologies
NOLIB="DMACONN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"
# The stand-in that injects a file's "faults" (tests/replay_faults.c).
FAULTS="DMACONN_REPLAY_LIBRARY=$BUILD/tests/libdmaconn_replay_faults.so"

# A bare run: the vendors whose kernel driver is loaded (below
# DMACONN_SYSFS_ROOT), under replay those the recording holds devices of.
# No vendor library of this machine may answer: the same output everywhere.
NONE="$NOLIB DMACONN_ZE_LIBRARY=/nonexistent/libze_loader.so.1 DMACONN_ROCM_SMI_LIBRARY=/nonexistent/librocm_smi64.so.1"
# --format text and --format json are the default output and --json, byte for byte.
same_as() {
	label=$1 f=$2
	shift 2
	# shellcheck disable=SC2086
	env -u DMACONN_REPLAY $CLI --format "$f" "$@" >"$TMP/f.out" 2>&1
	a=$?
	# shellcheck disable=SC2086
	env -u DMACONN_REPLAY $CLI $(test "$f" = json && echo --json) "$@" >"$TMP/d.out" 2>&1
	if [ "$a" = $? ] && cmp -s "$TMP/f.out" "$TMP/d.out"; then
		ok "$label"
	else
		bad "$label: --format $f differs"; diff "$TMP/d.out" "$TMP/f.out"
	fi
}
same_as format-text text --replay $T/hgx-h100-8.json
same_as format-json json --replay $T/hgx-h100-8.json
same_as format-json-error json --replay /nonexistent.json

# dmaconn check's expectations: the healthy node's, and those made now, by
# this build, from the healthy and the degraded replays.
EXPECT=tests/check/hgx-h100-8.expect.json
$CLI --replay $T/hgx-h100-8.json --json -q >"$TMP/now.json"
$CLI --replay $T/hgx-h100-8-degraded.json --json -q >"$TMP/degraded.json"
# Live, on the fake CUDA driver (NVML absent, so only cuda/verified has devices).
FAKE="FAKE_CUDA_DEVICES=2 DMACONN_VERIFY_HELPER=$BUILD/dmaconn-verify-helper DMACONN_CUDA_LIBRARY=$BUILD/tests/fakecuda-verify/libcuda.so.1 $NOLIB DMACONN_CACHE_DIR=$TMP/cache"
mkdir -m 700 "$TMP/cache"
# shellcheck disable=SC2086
env $HERMETIC $FAKE DMACONN_NO_CACHE=1 $CLI -d cuda -c verified --json -q >"$TMP/verified.json"
# shellcheck disable=SC2086
env $HERMETIC $FAKE DMACONN_NO_CACHE=1 $CLI --verify --json -q >"$TMP/verify.json"


# The cases, in order (after the files some of them read are written).
exec 3<"$EXP/cases"
while IFS= read -r line <&3; do
	case $line in "" | "#"*) continue ;; esac
	eval "case_ $line"
done
exec 3<&-

# Output that cannot be written fails, with a message on stderr.
# out_fails LABEL full|closed ARGS...
out_fails() {
	label=$1 how=$2
	shift 2
	# shellcheck disable=SC2086
	if [ "$how" = full ]; then
		env -u DMACONN_REPLAY $CLI "$@" >/dev/full 2>"$TMP/err"
	else
		env -u DMACONN_REPLAY $CLI "$@" >&- 2>"$TMP/err"
	fi
	got=$?
	if [ "$got" = 1 ] && grep -q "^dmaconn: cannot write standard output" "$TMP/err"; then
		ok "$label"
	else
		bad "$label: exit status $got"; cat "$TMP/err"
	fi
}
if [ -w /dev/full ]; then
	out_fails full-json full --replay $T/h200x2.json --json -q
	out_fails full-text full --replay $T/h200x2.json -d cuda -c nvlink
	out_fails full-version full --version
fi
out_fails closed-json closed --replay $T/h200x2.json --json -q
out_fails closed-list closed --list
# --record writes nothing there: a closed stdout is no failure.
if $CLI --replay $T/h200x2.json --record "$TMP/closed.json" >&- 2>/dev/null; then
	ok "closed-record"
else
	bad "closed-record"
fi

# A recording of a replay replays identically, with the environment it was
# recorded under pinned (the live CUDA_VISIBLE_DEVICES=0 must not matter).
for cvd in "" "3,1" "GPU-"; do
	CUDA_VISIBLE_DEVICES=$cvd $CLI --replay $T/dgx1-v100.json --record "$TMP/rec.json" 2>/dev/null
	a=$(CUDA_VISIBLE_DEVICES=$cvd $CLI --replay $T/dgx1-v100.json --json -q -d cuda -c nvlink)
	b=$(CUDA_VISIBLE_DEVICES=0 $CLI --replay "$TMP/rec.json" --json -q -d cuda -c nvlink)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "round-trip '$cvd'"
	else bad "round-trip '$cvd':"; echo "$a"; echo "$b"; fi
	# The P2P statuses and common ancestors replay as recorded, too.
	a=$(CUDA_VISIBLE_DEVICES=$cvd $CLI --replay $T/dgx1-v100.json --json -q -d cuda -c p2p)
	b=$(CUDA_VISIBLE_DEVICES=0 $CLI --replay "$TMP/rec.json" --json -q -d cuda -c p2p)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "round-trip-p2p '$cvd'"
	else bad "round-trip-p2p '$cvd':"; echo "$a"; echo "$b"; fi
done

finish
