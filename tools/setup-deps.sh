#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Installs, on Debian or Ubuntu, what building and testing dmaconn needs and
# is missing; `setup-deps.sh package` adds what `make package` needs.  Run by
# `make` before the first configure.  As root it says what it installs, then
# uses apt-get, with services kept from starting (none of these packages has
# one to start); otherwise it names the packages and lets the build go on
# (the optional components are then left out).  It never installs into a
# Python environment.  The operators' validators that the formats test also
# uses (promtool, slurmd) are CI's to install (.ci/run): the test says it
# skips without them.
set -u
purpose=${1:-build}
# nvml.h for the NVML ABI check of the test suite (tests/device/): NVIDIA
# ships it on PyPI in nvidia-nvml-dev; this version (NVML 13.5, NVLink 6) is
# the newest whose values src/backends/nvml/nvml_api.h declares, and the configure
# step reads it from this line.  It goes to a cache of its own version, which
# the configure step searches (DMACONN_NVML_INCLUDE_DIR overrides); the
# library never needs it.
nvml_version=13.5.37
# And an older one, CUDA 13.0's (NVML 13.0, 18 links): the ABI check against
# it proves that the declarations hold for the headers of drivers in use
# too, where the CUDA toolkit here ships no nvml.h of its own.
nvml_older=13.0.87
for v in $nvml_version $nvml_older; do
	nvml_cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/dmaconn/nvml-$v
	[ "$(cat "$nvml_cache/VERSION" 2>/dev/null)" = "$v" ] && continue
	echo "dmaconn: fetching nvml.h (pip download nvidia-nvml-dev==$v, nothing installed) into $nvml_cache"
	nvml_tmp=$(mktemp -d)
	if command -v python3 >/dev/null 2>&1 &&
		python3 -m pip download -q --no-deps --only-binary=:all: -d "$nvml_tmp" \
			"nvidia-nvml-dev==$v" >/dev/null 2>&1 &&
		python3 - "$nvml_tmp" "$nvml_cache" "$v" <<'EOF'
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
		echo "dmaconn: nvml.h of nvidia-nvml-dev $v in $nvml_cache/include"
	else
		echo "dmaconn: could not get nvml.h (pip download nvidia-nvml-dev==$v); its NVML ABI check is skipped" >&2
	fi
	rm -rf "$nvml_tmp"
done

# The JSON Schema test runs under the python3 that CMake finds; Debian's
# python3-jsonschema (below) serves /usr/bin/python3.  Another python3 first
# on PATH is the user's own: named, not changed.
if command -v python3 >/dev/null 2>&1 && [ "$(command -v python3)" != /usr/bin/python3 ] &&
	! python3 -c 'import jsonschema' >/dev/null 2>&1; then
	echo "dmaconn: $(command -v python3) has no jsonschema: the JSON Schema test is skipped" \
		"(pip install jsonschema, or configure with -DPython3_EXECUTABLE=/usr/bin/python3)" >&2
fi

# Required: the toolchain, Jansson (the library's result codec), Python
# (tests, binding, man pages).  Optional: MPI (multi-node component), the
# ROCm SMI and Level Zero headers (ABI checks of the AMD and Intel
# declarations), groff (the man-page check), python3-jsonschema (the JSON
# Schema test), graphviz (its dot renders --format dot in the dot test and
# `make pictures`) with the font the pictures are laid out in.  For `make
# package`: dpkg-dev (dpkg-shlibdeps) and file.
packages="cmake make gcc pkg-config libjansson-dev python3 python3-jsonschema libopenmpi-dev openmpi-bin
librocm-smi-dev libze-dev groff-base graphviz fonts-dejavu-core"
[ "$purpose" = package ] && packages="$packages dpkg-dev file"
command -v dpkg >/dev/null 2>&1 || exit 0
missing=""
for p in $packages; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "dmaconn: installing with apt-get (no recommends, services not started):$missing"
	export DEBIAN_FRONTEND=noninteractive
	# invoke-rc.d asks policy-rc.d; 101: no service may start.  Ours only
	# while apt-get runs, and only where there is none already (the
	# administrator's own is left as it is).  It goes when the script ends,
	# also when it is interrupted: dash runs no EXIT trap on a signal it
	# dies of, so each signal exits through the EXIT trap.
	policy=${DMACONN_POLICY_RC_D:-/usr/sbin/policy-rc.d} # the tests point it elsewhere
	if [ ! -e "$policy" ] && [ ! -L "$policy" ]; then
		trap 'rm -f "$policy"' EXIT
		trap 'exit 129' HUP
		trap 'exit 130' INT
		trap 'exit 143' TERM
		if (set -C && printf '#!/bin/sh\nexit 101\n' >"$policy"); then
			chmod 755 "$policy"
		else
			trap - EXIT # not ours: another one appeared meanwhile
		fi
	fi
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null && exit 0
	echo "dmaconn: could not install$missing; building without what needs them" >&2
else
	echo "dmaconn: missing packages:$missing (as root: apt-get install --no-install-recommends$missing)" >&2
fi
exit 0
