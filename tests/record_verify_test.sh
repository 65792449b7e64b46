#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dmaconn --record FILE --verify: the recording gets a verification section
# that cuda/verified answers from under replay; a verification that checked
# nothing writes none and fails.
# Recording a replay keeps the kernel files the reasons read, so that the
# recording explains its zeros as the original did.
#   record_verify_test.sh DMACONN HELPER FAKE_LIBCUDA WORKDIR REASONS_DIR
set -u
DMACONN=$1 HELPER=$2 FAKE=$3 WORK=$4 REASONS=$5
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
export DMACONN_VERIFY_HELPER="$HELPER" DMACONN_CUDA_LIBRARY="$FAKE" DMACONN_NO_CACHE=1 DMACONN_QUIET=1
# NVIDIA's library of the host running the tests (a GPU node's) must not answer.
export DMACONN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 DMACONN_CACHE_DIR="$WORK/cache"
# The passing pair must finish within the pair timeout: 1.5 s times the
# build's factor for slow (instrumented) programs.
export DMACONN_VERIFY_PAIR_TIMEOUT_MS=$((1500 * ${DMACONN_TEST_TIME_SCALE:-1})) DMACONN_SYSFS_ROOT="$WORK/none"
. "$(dirname "$0")/harness.sh"
matrix() { "$DMACONN" --replay "$1" -d cuda -c verified --json |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["matrix"])'; }

# GPU 1's kernels hang: 0 -> 1 passes, 1 -> 0 hangs.
FAKE_CUDA_DEVICES=2 FAKE_CUDA_HANG_DEVICE=1 "$DMACONN" --record "$WORK/r.json" --verify 2>"$WORK/err"
same record-status 0 $?
same replay-matrix "[[0, 1], [0, 0]]" "$(matrix "$WORK/r.json")"
# The section's values as the result codec writes them: the measured
# bandwidth a number unless its text would not read back the same (the
# helper's "%.2f" of a round figure, "8.80"), the verdicts strings.
same section-typed "True True" "$(/usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["verification"]["pairs"][0]
g = p["gbps"]
print(isinstance(g, float) or (isinstance(g, str) and g.endswith("0")), p["read_verified"] == "yes")' "$WORK/r.json")"
same replay-hang verification_hung "$("$DMACONN" --replay "$WORK/r.json" -d cuda -c verified --json |
	/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin)["results"][0]; print([p["reason"] for p in d["pairs"] if p["from"]==1 and p["to"]==0 and "reason" in p][0])')"
# A symbolic link planted where the section used to be written first
# (FILE.verify.<pid>) redirects nothing: the section goes to a file of its
# own in FILE's directory, renamed over FILE, with FILE's permissions.
echo victim >"$WORK/victim"
FAKE_CUDA_DEVICES=2 sh -c 'ln -s "$1/victim" "$1/planted.json.verify.$$"; exec "$2" --record "$1/planted.json" --verify' \
	sh "$WORK" "$DMACONN" 2>/dev/null
same planted-status 0 $?
same planted-victim victim "$(cat "$WORK/victim")"
same planted-regular yes "$([ -f "$WORK/planted.json" ] && [ ! -L "$WORK/planted.json" ] && echo yes)"
same planted-section True "$(/usr/bin/python3 -c 'import json,sys; print("verification" in json.load(open(sys.argv[1])))' "$WORK/planted.json")"
same planted-no-temporary "" "$(cd "$WORK" && ls -A | grep 'planted.json.verify' | grep -v '^planted.json.verify.[0-9]*$')"
rm -f "$WORK"/planted.json.verify.*
(umask 027 && FAKE_CUDA_DEVICES=2 "$DMACONN" --record "$WORK/mode.json" --verify 2>/dev/null)
same keeps-mode 640 "$(stat -c %a "$WORK/mode.json")"
# FILE is read back and replaced: what is not a regular file of its own
# (a FIFO, a pipe as /dev/stdout, a symbolic link) is refused before anything
# is written, never left hanging or replaced (a link's target would keep the
# recording without its section while the link became a file).
mkfifo "$WORK/fifo"
FAKE_CUDA_DEVICES=2 timeout 60 "$DMACONN" --record "$WORK/fifo" --verify 2>"$WORK/err"
same fifo-status 1 $?
same fifo-kept yes "$([ -p "$WORK/fifo" ] && echo yes)"
grep -q "not a regular file" "$WORK/err"
same fifo-message 0 $?
FAKE_CUDA_DEVICES=2 timeout 60 "$DMACONN" --record /dev/stdout --verify 2>"$WORK/err" | cat >"$WORK/piped"
same pipe-status "1 0" "$(grep -c 'not a regular file' "$WORK/err") $(wc -c <"$WORK/piped")"
mkdir -p "$WORK/data" && echo precious >"$WORK/data/target.json" && ln -s data/target.json "$WORK/link.json"
FAKE_CUDA_DEVICES=2 "$DMACONN" --record "$WORK/link.json" --verify 2>"$WORK/err"
same link-status 1 $?
same link-kept "yes precious" "$([ -L "$WORK/link.json" ] && echo yes) $(cat "$WORK/data/target.json")"
grep -q "symbolic link" "$WORK/err"
same link-message 0 $?
# Recording the replay keeps the section.
"$DMACONN" --replay "$WORK/r.json" --record "$WORK/again.json" --verify 2>/dev/null
same rerecord-status 0 $?
same rerecord-matrix "[[0, 1], [0, 0]]" "$(matrix "$WORK/again.json")"
# Without --verify: no section (tests/CMakeLists.txt's reasons_verified_not_recorded
# checks what replay then answers).
FAKE_CUDA_DEVICES=2 "$DMACONN" --record "$WORK/plain.json" 2>/dev/null
same plain-section False "$(/usr/bin/python3 -c 'import json,sys; print("verification" in json.load(open(sys.argv[1])))' "$WORK/plain.json")"
# Nothing checked (no driver): exit 1, and the file has no section.
DMACONN_CUDA_LIBRARY=/nonexistent/libcuda.so.1 FAKE_CUDA_DEVICES=2 "$DMACONN" --record "$WORK/none.json" --verify 2>"$WORK/err"
same nothing-status 1 $?
same nothing-section False "$(/usr/bin/python3 -c 'import json,sys; print("verification" in json.load(open(sys.argv[1])))' "$WORK/none.json")"
grep -q "checked nothing" "$WORK/err"
same nothing-message 0 $?
# The reasons' kernel files survive a recording of a replay.
for f in acs acs-verified-hang vm-dmi iommu; do
	"$DMACONN" --replay "$REASONS/$f.json" --record "$WORK/re-$f.json" --verify 2>/dev/null
	for c in p2p verified; do
		a=$("$DMACONN" --replay "$REASONS/$f.json" --explain -d cuda -c $c 2>&1)
		b=$("$DMACONN" --replay "$WORK/re-$f.json" --explain -d cuda -c $c 2>&1)
		same "rerecord-reasons-$f-$c" "$a" "$b"
	done
done
finish
