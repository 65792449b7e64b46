#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every libFuzzer target of a -DDMACONN_FUZZ=ON build for a bounded time
# and fails on any finding (crash, sanitizer report, leak, timeout, OOM).
#
#   fuzz/run.sh [BUILD_DIR] [SECONDS]      (defaults: build-fuzz, 60)
#
# Each target starts from its seed corpus (fuzz/corpus/TARGET, read-only:
# new inputs go to a scratch directory) and runs -max_total_time=SECONDS;
# FUZZ_JOBS targets run at once (default: the number of CPUs).  Findings are
# kept in $FUZZ_ARTIFACTS (default: BUILD_DIR/fuzz/artifacts).  Prints each
# target's executions (stat::number_of_executed_units) and exits 1 when a
# target found something.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${1:-build-fuzz}
seconds=${2:-60}
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
artifacts=${FUZZ_ARTIFACTS:-$build/fuzz/artifacts}
mkdir -p "$artifacts"
# Absolute paths: fuzz_cli works in a directory of its own.
build=$(cd "$build" && pwd) artifacts=$(cd "$artifacts" && pwd)
targets=(pci cuda_visible hip_visible ze_affinity replay codec merge cli)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

run_one() {
	local t=$1 bin=$build/fuzz/fuzz_$1 dict=() extra=()
	[ -f "fuzz/$t.dict" ] && dict=(-dict="$root/fuzz/$t.dict")
	# The CLI target's own stderr (usage, warnings) is noise: closed.
	[ "$t" = cli ] && extra=(-close_fd_mask=2)
	mkdir -p "$scratch/$t"
	"$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=8192 \
		-print_final_stats=1 -artifact_prefix="$artifacts/$t-" "${dict[@]}" "${extra[@]}" \
		"$scratch/$t" "$root/fuzz/corpus/$t" >"$scratch/$t.log" 2>&1
	echo $? >"$scratch/$t.rc"
}

missing=0
for t in "${targets[@]}"; do
	if [ ! -x "$build/fuzz/fuzz_$t" ]; then
		echo "fuzz: $build/fuzz/fuzz_$t is missing (cmake -DCMAKE_C_COMPILER=clang -DDMACONN_FUZZ=ON)"
		missing=1
	fi
done
[ $missing = 0 ] || exit 1

running=0
for t in "${targets[@]}"; do
	run_one "$t" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

failed=0
for t in "${targets[@]}"; do
	rc=$(cat "$scratch/$t.rc" 2>/dev/null || echo 99)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t.log" | tail -n 1)
	corpus=$(find "$scratch/$t" -type f | wc -l)
	if [ "$rc" = 0 ]; then
		printf 'ok   fuzz_%-13s %10s executions in %ss, %s new inputs\n' "$t" "${execs:-?}" "$seconds" "$corpus"
	else
		failed=1
		printf 'FAIL fuzz_%-13s exit %s after %s executions; artifacts in %s\n' "$t" "$rc" "${execs:-?}" "$artifacts"
		grep -v '^#[0-9]' "$scratch/$t.log" | tail -n 60
	fi
done
exit $failed
