#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Installs, on Debian or Ubuntu, what building and testing dmaconn needs and
# is missing.  Run by `make` before the first configure.  As root it uses
# apt-get; otherwise it names the packages and lets the build go on (the
# optional components are then left out).
set -u
# nvml.h for the NVML ABI check of the test suite (tests/device/): NVIDIA
# ships it on PyPI in nvidia-nvml-dev; this version (NVML 13.5, NVLink 6) is
# the newest whose values src/backends/nvml_api.h declares, and the configure
# step reads it from this line.  It goes to a cache of its own version, which
# the configure step searches (DMACONN_NVML_INCLUDE_DIR overrides); the
# library never needs it.
nvml_version=13.5.37
nvml_cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/dmaconn/nvml-$nvml_version
if [ "$(cat "$nvml_cache/VERSION" 2>/dev/null)" != "$nvml_version" ]; then
	nvml_tmp=$(mktemp -d)
	if command -v python3 >/dev/null 2>&1 &&
		python3 -m pip download -q --no-deps --only-binary=:all: -d "$nvml_tmp" \
			"nvidia-nvml-dev==$nvml_version" >/dev/null 2>&1 &&
		python3 - "$nvml_tmp" "$nvml_cache" "$nvml_version" <<'EOF'
import glob, os, sys, zipfile
tmp, cache, version = sys.argv[1:]
with zipfile.ZipFile(glob.glob(os.path.join(tmp, "*.whl"))[0]) as whl:
    header = [n for n in whl.namelist() if n.endswith("/include/nvml.h")][0]
    os.makedirs(os.path.join(cache, "include"), exist_ok=True)
    with open(os.path.join(cache, "include", "nvml.h"), "wb") as out:
        out.write(whl.read(header))
with open(os.path.join(cache, "VERSION"), "w") as out:
    out.write(version + "\n")
EOF
	then
		echo "dmaconn: nvml.h of nvidia-nvml-dev $nvml_version in $nvml_cache/include"
	else
		echo "dmaconn: could not get nvml.h (pip download nvidia-nvml-dev==$nvml_version); the NVML ABI check is skipped" >&2
	fi
	rm -rf "$nvml_tmp"
fi

# The JSON Schema test runs under the python3 that CMake finds; Debian's
# python3-jsonschema (below) serves /usr/bin/python3, pip any other.
if command -v python3 >/dev/null 2>&1 && [ "$(command -v python3)" != /usr/bin/python3 ] &&
	! python3 -c 'import jsonschema' >/dev/null 2>&1; then
	python3 -m pip install -q jsonschema >/dev/null 2>&1 ||
		echo "dmaconn: could not install jsonschema for $(command -v python3) (pip install jsonschema)" >&2
fi

# Required: the toolchain, Jansson (the CLI's JSON, record/replay), Python
# (tests, binding, man pages).  Optional: MPI (multi-node component), the
# ROCm SMI and Level Zero headers (ABI checks of the AMD and Intel
# declarations), groff (the man-page check), dpkg-dev and file (`make
# package`), python3-venv (the wheel check of .ci/run); python3-jsonschema
# (the JSON Schema test); prometheus (its promtool) and slurmd (`slurmd -G`),
# which read --format prometheus and slurm in the formats test; graphviz
# (its dot renders --format dot in the dot test and `make pictures`), with
# the font the pictures are laid out in.
packages="cmake make gcc pkg-config libjansson-dev python3 python3-jsonschema libopenmpi-dev openmpi-bin librocm-smi-dev libze-dev
groff-base dpkg-dev file python3-venv prometheus slurmd graphviz fonts-dejavu-core"
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
