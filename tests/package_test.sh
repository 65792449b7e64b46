#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages of `make package` as Debian's own checker sees them:
# lintian reports no error on any of them, each has its machine-readable
# copyright and changelog, and each part is in its package (documentation,
# JSON Schema and operators' examples in dmaconn; libdmaconn_mpi's run-time
# library apart from its development files).  CI; needs lintian and dpkg-deb.
# Usage: tests/package_test.sh PKG_BUILD_DIR
set -u
D=${1:?usage: package_test.sh PKG_BUILD_DIR}
. "$(dirname "$0")/harness.sh"
command -v lintian >/dev/null 2>&1 || { echo "FAIL lintian is not installed (apt-get install lintian)"; exit 1; }

debs=$(ls "$D"/*.deb 2>/dev/null)
[ -n "$debs" ] || { echo "FAIL no .deb in $D"; exit 1; }
contents() { dpkg-deb -c "$D/$1"_*.deb | awk '{ print $6 }' | sed 's|^\./|/|'; }
has() { # package path...
	p=$1; shift
	for f in "$@"; do
		contents "$p" | grep -qx "$f" && ok "$p has $f" || bad "$p lacks $f"
	done
}
lacks() { # package pattern
	contents "$1" | grep -q "$2" && bad "$1 has $2" || ok "$1 has no $2"
}

for deb in $debs; do
	pkg=$(dpkg-deb -f "$deb" Package)
	# As root lintian says so on every run: a notice, not a finding.
	out=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v 'running with root privileges')
	errors=$(printf '%s\n' "$out" | grep -c '^E: ')
	if [ "$errors" -eq 0 ]; then ok "lintian: $pkg has no error"; else bad "lintian: $pkg has $errors errors"; fi
	[ -n "$out" ] && printf '%s\n' "$out"
	has "$pkg" "/usr/share/doc/$pkg/copyright" "/usr/share/doc/$pkg/changelog.gz"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/share/doc/$pkg/copyright" 2>/dev/null |
		grep -q '^License: BSD-3-Clause$' && ok "$pkg: copyright says BSD-3-Clause" || bad "$pkg: copyright"
done

doc=/usr/share/doc/dmaconn
has dmaconn /usr/bin/dmaconn /usr/share/man/man1/dmaconn.1.gz "$doc/README.md" "$doc/dmaconn.schema.json" \
	"$doc/json-output.md" "$doc/replay-format.md" "$doc/multinode.md" "$doc/examples/ops/slurm-prolog.sh" \
	"$doc/examples/ops/dmaconn.nhc" "$doc/examples/ops/dmaconn-export.service" "$doc/examples/ops/dmaconn-export.timer"
if ls "$D"/libdmaconn-mpi* >/dev/null 2>&1; then
	lib=$(contents libdmaconn0 | grep -o "^/usr/lib/[^/]*/" | head -n 1)
	has libdmaconn-mpi0 "${lib}libdmaconn_mpi.so.0"
	lacks libdmaconn-mpi0 'include\|\.pc$\|/libdmaconn_mpi\.so$\|cmake'
	has libdmaconn-mpi-dev /usr/include/dmaconn_mpi.h "${lib}libdmaconn_mpi.so" "${lib}pkgconfig/dmaconn_mpi.pc" \
		"${lib}cmake/dmaconn/dmaconnMpiTargets.cmake"
	lacks libdmaconn-mpi-dev 'libdmaconn_mpi\.so\.0'
	lacks libdmaconn-dev 'dmaconnMpiTargets\|dmaconn_mpi'
fi
finish
