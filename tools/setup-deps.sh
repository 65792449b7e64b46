#!/bin/sh
# Installs, on Debian or Ubuntu, what building and testing dmaconn needs and
# is missing.  Run by `make` before the first configure.  As root it uses
# apt-get; otherwise it names the packages and lets the build go on (the
# optional components are then left out).
set -u
# Required: the toolchain, Jansson (the CLI's JSON, record/replay), Python
# (tests, binding, man pages).  Optional: MPI (multi-node component), the
# ROCm SMI and Level Zero headers (ABI checks of the AMD and Intel
# declarations), groff (the man-page check), dpkg-dev and file (`make
# package`), python3-venv (the wheel check of .ci/run).
packages="cmake make gcc pkg-config libjansson-dev python3 libopenmpi-dev openmpi-bin librocm-smi-dev libze-dev
groff-base dpkg-dev file python3-venv"
command -v dpkg >/dev/null 2>&1 || exit 0
missing=""
for p in $packages; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "dmaconn: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null && exit 0
	echo "dmaconn: could not install$missing; building without what needs them" >&2
else
	echo "dmaconn: missing packages:$missing (as root: apt-get install$missing)" >&2
fi
exit 0
