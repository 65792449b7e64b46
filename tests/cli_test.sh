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
pass=0
fail=0

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
case_ bogus-pair 2 -- -d cuda -c bogus
case_ bogus-type 2 -- -d tpu -c nvlink
case_ half-pair 2 -- -d cuda
case_ stray-argument 2 -- nvlink
# Misspelt names are usage errors that list the valid ones and name the nearest.
case_ connection-typo 2 -- -d cuda -c nvlnik
case_ connection-typo-json 2 -- -d cuda -c NVLINK --json
case_ connection-of-other-type 2 -- -d rocm -c nvlink
case_ connection-unknown-explain 2 -- --replay $T/h200x2.json --explain -d xpu -c bogus
case_ type-typo 2 -- -d cdua -c nvlink
case_ type-typo-alone 2 -- -d cdua
case_ type-typo-alone-json 2 -- --json -d cdua
case_ command-typo 2 -- chek --expect tests/check/hgx-h100-8.expect.json
case_ command-not-first 2 -- -q check --expect-links 18
case_ option-typo 2 -- --jsn
case_ word-for-option 2 -- help
case_ format-typo 2 -- --format promethues
case_ h200x2 0 -- --replay $T/h200x2.json
case_ explain-cns 0 -- --replay examples/pcie-only.json --explain
case_ explain-fabric 0 -- --replay $T/fabric-in-progress.json --explain -d cuda -c nvlink
case_ explain-replay-verified 0 -- --replay $T/mig.json --explain -d cuda -c verified
case_ explain-json 0 -- --replay examples/pcie-only.json --explain --json -d cuda -c p2p
case_ explain-type 0 -- --replay examples/pcie-only.json --explain -d cuda
# Pairs that lost NVLinks have a reason too; a healthy node has none to give.
case_ explain-degraded 0 -- --replay $T/hgx-h100-8-degraded.json --explain -d cuda -c nvlink
case_ explain-healthy 0 -- --replay $T/hgx-h100-8.json --explain -d cuda -c nvlink
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
# --topo without -d: the vendors a bare run shows (a replay's, a loaded driver's).
case_ topo-replay-amd 0 -- --topo --replay examples/mi300x.json
case_ topo-replay-none 0 -- --topo --replay tests/cli/no-devices.json
# A verification's bus id names NVML's device however it is written.
case_ verified-bus-spelling 0 -- --replay tests/cli/verified-bus-spelling.json -d cuda -c verified

# Usage errors: two lines on stderr, exit 2; with --json, one JSON object.
case_ unknown-option 2 -- --bogus
case_ unknown-option-json 2 -- --json --bogus
case_ missing-argument 2 -- --replay
# getopt_long's other refusals: a value for a flag, a prefix of two options.
case_ flag-with-value 2 -- --json=1
case_ ambiguous-option 2 -- --re tests/topologies/h200x2.json
case_ missing-argument-short 2 -- -d
case_ record-topo 2 -- --record "$TMP/never.json" --topo
# --record FILE --verify with nothing verified: no section, exit 1 (record_verify_test.sh checks the file).
case_ record-verify-nothing 1 DMACONN_VERIFY_HELPER=/bin/false -- --record "$TMP/never.json" --verify
case_ record-ignored-options 2 -- --replay $T/h200x2.json --record "$TMP/never.json" -d cuda -c p2p --json
case_ timeout-alone 2 -- --timeout 5
case_ timeout-bad-twice 2 -- --verify --timeout 0 --timeout 99999999999
case_ all-with-pair 2 -- --all -d cuda -c nvlink
case_ topo-verify 2 -- --topo --verify
case_ replay-empty 2 -- --replay= -d cuda -c nvlink
# A fatal error is said once; with --json it is the object on stdout.
case_ replay-missing 1 -- --replay /nonexistent.json
case_ replay-missing-json 1 -- --replay /nonexistent.json --json -d cuda -c nvlink
case_ replay-missing-all-json 1 -- --replay /nonexistent.json --json
case_ mpi-missing-json 1 DMACONN_MPI_LIBRARY=/nonexistent/libdmaconn_mpi.so.0 -- --mpi --json
# A bare run: the vendors whose kernel driver is loaded (below
# DMACONN_SYSFS_ROOT), under replay those the recording holds devices of.
# No vendor library of this machine may answer: the same output everywhere.
NONE="$NOLIB DMACONN_ZE_LIBRARY=/nonexistent/libze_loader.so.1 DMACONN_ROCM_SMI_LIBRARY=/nonexistent/librocm_smi64.so.1"
case_ bare-none 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs/no-nvidia -- -q
case_ bare-none-json 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs/no-nvidia -- --json -q
case_ bare-all 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs/no-nvidia -- --all -q
case_ bare-nvidia 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs/two-nvidia -- -q
case_ bare-amd 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs-kfd/mi100-4 -- -q
case_ bare-intel 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs/intel-drm -- -q
case_ bare-replay-amd 0 -- --replay examples/mi300x.json
case_ topo-amd 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs-kfd/mi100-4 -- --topo -q
case_ topo-nvidia 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs/two-nvidia -- --topo
case_ topo-none 0 $NONE DMACONN_SYSFS_ROOT=tests/sysfs/no-nvidia -- --topo
case_ bare-replay-none 0 -- --replay tests/cli/no-devices.json
# Under replay every vendor's warnings carry the same mark, and a recorded
# NVML load error is not prefixed twice.
case_ replay-marks 0 -- --replay tests/cli/no-devices.json --all
case_ replay-nvml-recorded 0 -- --replay tests/cli/nvml-missing.json -d cuda -c nvlink
case_ replay-ze-recorded 0 -- --replay tests/cli/nvml-missing.json -d xpu -c p2p
# --verify that checks nothing fails.
case_ verify-nothing 1 DMACONN_VERIFY_HELPER=/nonexistent -- --verify
case_ verify-nothing-json 1 DMACONN_VERIFY_HELPER=/nonexistent -- --verify --json
# cuda/verified with nothing verified fails closed: no GPU seen and the helper failing.
case_ verified-nothing 1 $NOLIB DMACONN_VERIFY_HELPER=/bin/false DMACONN_NO_CACHE=1 \
	DMACONN_SYSFS_ROOT=tests/sysfs/no-nvidia -- -d cuda -c verified
case_ verified-nothing-gpus 1 $NOLIB DMACONN_VERIFY_HELPER=/bin/false DMACONN_NO_CACHE=1 \
	DMACONN_SYSFS_ROOT=tests/sysfs/two-nvidia -- -d cuda -c verified
case_ verified-nothing-json 1 $NOLIB DMACONN_VERIFY_HELPER=/bin/false DMACONN_NO_CACHE=1 \
	DMACONN_SYSFS_ROOT=tests/sysfs/two-nvidia -- -d cuda -c verified --json
# Each warning of a failed verification once on standard error.
case_ verify-warnings-once 1 DMACONN_VERIFY_HELPER=/bin/false -- --replay $T/h200x2.json --verify
# Every mode's --json output is one object.
case_ list-json 0 -- --list --json
case_ version-json 0 -- --version --json
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
		pass=$((pass + 1)); echo "ok $label"
	else
		fail=$((fail + 1)); echo "FAIL $label: --format $f differs"; diff "$TMP/d.out" "$TMP/f.out"
	fi
}
same_as format-text text --replay $T/hgx-h100-8.json
same_as format-json json --replay $T/hgx-h100-8.json
same_as format-json-error json --replay /nonexistent.json
case_ format-help 0 -- --format help
case_ format-help-json 0 -- --format help --json
case_ format-bogus 2 -- --format bogus
case_ format-with-topo 2 -- --format prometheus --topo

# dmaconn check: Nagios statuses (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN)
# against what --json printed on the healthy node, on replays of that node
# healthy, degraded, with a GPU lost, a GPU's NVLinks down, the fabric still
# registering, and without its driver.
EXPECT=tests/check/hgx-h100-8.expect.json
case_ check-healthy 0 -- check --expect $EXPECT --replay $T/hgx-h100-8.json
case_ check-degraded 2 -- check --expect $EXPECT --replay $T/hgx-h100-8-degraded.json
case_ check-lost-gpu 2 -- check --expect $EXPECT --replay $T/hgx-h100-8-lost-gpu.json
case_ check-lost-gpu-identity 2 -- check --expect $EXPECT --match identity --replay $T/hgx-h100-8-lost-gpu.json
case_ check-nvlink-down 2 -- check --expect $EXPECT --replay $T/hgx-h100-8-nvlink-down.json
case_ check-fabric-in-progress 1 -- check --expect $EXPECT --replay $T/hgx-h100-8-fabric-in-progress.json
case_ check-no-driver 3 -- check --expect $EXPECT --replay $T/hgx-h100-8-no-driver.json
case_ check-extra-device 1 -- check --expect tests/check/hgx-h100-8-lost-gpu.expect.json --replay $T/hgx-h100-8.json
case_ check-one-detector 0 -- check --expect $EXPECT -d cuda -c p2p --replay $T/hgx-h100-8-nvlink-down.json
case_ check-other-sku 2 -- check --expect $EXPECT -d cuda -c p2p --replay $T/h200x2.json
# The expectation made now, by this build, from the healthy replay.
$CLI --replay $T/hgx-h100-8.json --json -q >"$TMP/now.json"
case_ check-healthy-now 0 -- check --expect "$TMP/now.json" --replay $T/hgx-h100-8.json
case_ check-degraded-now 2 -- check --expect "$TMP/now.json" --replay $T/hgx-h100-8-degraded.json
# The GPUs' down links first, then the pairs they cost; none against the same degraded node.
case_ check-two-gpus-down 2 -- check --expect $EXPECT --replay tests/topologies-reasons/nvlink-down-two-gpus.json
# Three GPUs lost links: each pair names the GPU that costs it links, a zero
# only the GPU with none active; behind CUDA_VISIBLE_DEVICES the GPU whose
# links are compared with is hidden, and the lost GPU says it has none active.
case_ explain-three-lost 0 -- --explain -d cuda -c nvlink --replay tests/topologies-links/hgx-three-lost.json
case_ check-hidden-reference 2 CUDA_VISIBLE_DEVICES=1,6 -- check --expect-links 18 \
	--replay tests/topologies-links/hgx-three-lost.json
$CLI --replay $T/hgx-h100-8-degraded.json --json -q >"$TMP/degraded.json"
case_ check-degraded-same 0 -- check --expect "$TMP/degraded.json" --replay $T/hgx-h100-8-degraded.json
# Without a file.
case_ check-links-healthy 0 -- check --expect-links 18 --replay $T/hgx-h100-8.json
case_ check-links-degraded 2 -- check --expect-links 18 --replay $T/hgx-h100-8-degraded.json
case_ check-full-fabric 1 -- check --fully-connected --replay $T/hgx-h100-8-fabric-in-progress.json
case_ check-full-nvlink-down 2 -- check --fully-connected --replay $T/hgx-h100-8-nvlink-down.json
case_ check-links-no-driver 3 -- check --expect-links 18 --replay $T/hgx-h100-8-no-driver.json
# What cannot be checked is UNKNOWN, usage errors included.
case_ check-usage 3 -- check -d cuda
case_ check-health-no-driver 3 -- check
case_ check-bad-option 3 -- check --expect $EXPECT --bogus
case_ check-missing-file 3 -- check --expect tests/check/nonexistent.json --replay $T/hgx-h100-8.json
case_ check-truncated-file 3 -- check --expect tests/check/truncated.json --replay $T/hgx-h100-8.json
case_ check-failed-run-file 3 -- check --expect tests/check/failed-run.json --replay $T/hgx-h100-8.json
case_ check-no-such-detector 3 -- check --expect $EXPECT -d cuda -c verified --replay $T/hgx-h100-8.json
case_ check-bad-replay 3 -- check --expect $EXPECT --replay /nonexistent.json
# Verdicts: compared when the expectation has them; a recording has none.
case_ check-verified-replay 3 -- check --expect tests/check/hgx-h100-8-verified.expect.json --replay $T/hgx-h100-8.json
# Live, on the fake CUDA driver (NVML absent, so only cuda/verified has devices).
FAKE="FAKE_CUDA_DEVICES=2 DMACONN_VERIFY_HELPER=$BUILD/dmaconn-verify-helper DMACONN_CUDA_LIBRARY=$BUILD/tests/fakecuda-verify/libcuda.so.1 $NOLIB DMACONN_CACHE_DIR=$TMP/cache"
mkdir -m 700 "$TMP/cache"
# shellcheck disable=SC2086
env $HERMETIC $FAKE DMACONN_NO_CACHE=1 $CLI -d cuda -c verified --json -q >"$TMP/verified.json"
case_ check-verify-pass 0 $FAKE DMACONN_NO_CACHE=1 -- check --expect "$TMP/verified.json" --verify
case_ check-verify-fail 2 $FAKE DMACONN_NO_CACHE=1 FAKE_CUDA_CORRUPT=1 -- check --expect "$TMP/verified.json" --verify
case_ check-verify-hang 2 $FAKE DMACONN_NO_CACHE=1 FAKE_CUDA_HANG=1 DMACONN_VERIFY_PAIR_TIMEOUT_MS=300 -- check --expect "$TMP/verified.json" --verify
case_ check-verify-unable 3 $FAKE DMACONN_NO_CACHE=1 DMACONN_VERIFY_HELPER=/nonexistent -- check --expect "$TMP/verified.json" --verify
case_ check-verify-absent 3 $FAKE -- check --expect "$TMP/verified.json"
# The document of --verify --json serves as well.
# shellcheck disable=SC2086
env $HERMETIC $FAKE DMACONN_NO_CACHE=1 $CLI --verify --json -q >"$TMP/verify.json"
case_ check-verify-doc-pass 0 $FAKE DMACONN_NO_CACHE=1 -- check --expect "$TMP/verify.json" --verify
case_ check-verify-doc-fail 2 $FAKE DMACONN_NO_CACHE=1 FAKE_CUDA_CORRUPT=1 -- check --expect "$TMP/verify.json" --verify
# (A cached verdict needs /proc/driver/nvidia: tests/device/ has that case.)

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
		pass=$((pass + 1)); echo "ok $label"
	else
		fail=$((fail + 1)); echo "FAIL $label: exit status $got"; cat "$TMP/err"
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
	pass=$((pass + 1)); echo "ok closed-record"
else
	fail=$((fail + 1)); echo "FAIL closed-record"
fi

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
