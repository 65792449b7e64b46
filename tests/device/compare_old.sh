#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a GPU machine: first detection of this tree against an older one, a
# bare run of every detector against each detector alone, and a recording
# of the node replayed against the live run.  Run from the source root.
#
# usage: tests/device/compare_old.sh OLD [RUNS]
#   OLD   the older tree: a source directory, or a tarball of one made with
#         `git archive --prefix=old/ -o old.tar.gz f15000d` (unpacked here)
#   RUNS  fresh processes per measurement (default 20)
# Builds this tree into build-device (as tests/device/run.sh does; Jansson
# from the machine or from the .deb files in .deps/) unless it is there, and
# the older one into build-old.  About a minute on 1x H200 with RUNS=20.
set -u
old_src=$1
runs=${2:-20}
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_jansson
if [ -f "$old_src" ]; then
	mkdir -p /tmp/dmaconn-old && tar -xf "$old_src" -C /tmp/dmaconn-old || { echo "cannot unpack $old_src"; exit 1; }
	old_src=$(dirname "$(find /tmp/dmaconn-old -maxdepth 2 -name CMakeLists.txt | head -1)")
fi
[ -f "$old_src/CMakeLists.txt" ] || { echo "no source tree at $old_src"; exit 1; }
if [ ! -x build-device/bench/first_detect ]; then
	cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$DEPS/usr -DDMACONN_BUILD_TESTS=ON \
		>/dev/null 2>&1 && cmake --build build-device -j >/dev/null 2>&1 || { echo "this tree's build failed"; exit 1; }
fi
cmake -S "$old_src" -B build-old -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$DEPS/usr >/dev/null 2>&1 &&
	cmake --build build-old -j --target bench_first_detect dmaconn_cli >/dev/null 2>&1 || { echo "old build failed"; exit 1; }
echo "== first detection, this tree against $old_src ($runs fresh processes each, alternating)"
python3 bench/compare_builds.py build-old build-device --runs "$runs"
echo "== a whole run of every detector, this tree against $old_src ($runs fresh processes each, alternating)"
python3 bench/compare_builds.py build-old build-device --runs "$runs" --cli "-q --json"
echo "== every detector against each alone ($runs fresh processes each, round-robin)"
python3 bench/bare.py --build build-device --runs "$runs"
echo "== record this node (every detector once, the vendor tables wrapped), replay it"
rec=$(mktemp /tmp/dmaconn-rec.XXXXXX.json)
if build-device/dmaconn --record "$rec"; then
	for args in "--json" "-d cuda -c nvlink --json" "-d cuda -c p2p --json" "--topo -d cuda"; do
		# shellcheck disable=SC2086
		live=$(build-device/dmaconn -q $args 2>&1)
		# shellcheck disable=SC2086
		replayed=$(build-device/dmaconn -q --replay "$rec" $args 2>&1 | sed "s| (replay of $rec)||")
		if [ "$live" = "$replayed" ]; then echo "replay of the recording == live ($args): yes"
		else echo "replay of the recording == live ($args): NO"; diff <(echo "$live") <(echo "$replayed") | head -20; fi
	done
	echo "recorded NVML keys: $(python3 -c "import json,sys; n=json.load(open(sys.argv[1]))['nvml']; print(sorted(n), len(n.get('devices', [])), 'devices')" "$rec")"
fi
rm -f "$rec"
