#!/usr/bin/env bash
# On a GPU machine: first detection of this tree against an older one
# (e.g. `git archive` of a release, unpacked), and a bare run of every
# detector against each detector alone.  Run from the source root after
# tests/device/run.sh has built build-device (Jansson set up there).
# usage: tests/device/compare_old.sh OLD_SOURCE_DIR [RUNS]
set -u
old_src=$1
runs=${2:-20}
DEPS=/tmp/dmaconn-deps
cmake -S "$old_src" -B build-old -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$DEPS/usr >/dev/null 2>&1 &&
	cmake --build build-old -j --target bench_first_detect >/dev/null 2>&1 || { echo "old build failed"; exit 1; }
echo "== first detection, this tree against $old_src ($runs fresh processes each, alternating)"
python3 bench/compare_builds.py build-old build-device --runs "$runs"
echo "== every detector against each alone ($runs fresh processes each, round-robin)"
python3 bench/bare.py --build build-device --runs "$runs"
