#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tools/setup-deps.sh as root on a machine missing every package, with
# apt-get, dpkg, id and python3 replaced by stand-ins that log their calls:
# it says what it installs before apt-get runs, installs only what the build
# and tests need (no prometheus, slurmd or munge, whose Debian packages start
# services), keeps services from starting while apt-get runs (policy-rc.d
# answering 101), and never pip-installs into the python3 on PATH.
# Usage: setup_deps_test.sh   (run from the source root)
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/harness.sh"
mkdir "$T/bin" "$T/cache"
log=$T/log
policy=$T/policy-rc.d
cat >"$T/bin/apt-get" <<EOF2
#!/bin/sh
echo "apt-get \$*" >>"$log"
if [ -x "$policy" ]; then "$policy" x start; echo "policy-rc.d answers \$?" >>"$log"; else echo "no policy-rc.d" >>"$log"; fi
EOF2
printf '#!/bin/sh\necho "dpkg $*" >>"%s"\nexit 1\n' "$log" >"$T/bin/dpkg"
printf '#!/bin/sh\necho 0\n' >"$T/bin/id"
printf '#!/bin/sh\necho "python3 $*" >>"%s"\nexit 1\n' "$log" >"$T/bin/python3"
chmod +x "$T/bin/"*
# nvml.h already fetched: nothing to download.
mkdir -p "$T/cache/dmaconn/nvml"
nvml_version=$(sed -n 's/^nvml_version=//p' tools/setup-deps.sh)
echo "$nvml_version" >"$T/cache/dmaconn/nvml/VERSION"

PATH="$T/bin:$PATH" XDG_CACHE_HOME="$T/cache" DMACONN_POLICY_RC_D="$policy" sh tools/setup-deps.sh \
	>"$T/out" 2>&1
# What it said, then what ran, in order.
cat "$T/out" "$log" >"$T/all"
said=$(grep -n "installing" "$T/out" | head -n 1)
[ -n "$said" ] && ok "says what it installs: ${said#*:}" || bad "does not say what it installs"
installs=$(grep "^apt-get .*install" "$log")
[ -n "$installs" ] && ok "apt-get install ran" || bad "apt-get install did not run"
for p in prometheus slurmd munge; do
	echo "$installs $(cat "$T/out")" | grep -qw "$p" && bad "installs $p" || ok "does not install $p"
done
for p in cmake gcc libjansson-dev python3; do
	echo "$installs" | grep -qw -- "$p" && ok "installs $p" || bad "does not install $p"
done
grep -q "policy-rc.d answers 101" "$log" && ok "no service may start while apt-get runs" ||
	bad "services may start: $(grep 'policy' "$log")"
[ -e "$policy" ] && bad "policy-rc.d left behind" || ok "policy-rc.d removed afterwards"
grep -q "^python3 .*pip install" "$log" && bad "pip-installs into the python3 on PATH" ||
	ok "no pip install into the python3 on PATH"
[ $fail = 0 ] || { echo "-- output and calls:"; cat "$T/all"; }

# The administrator's own policy-rc.d is neither replaced nor removed.
printf '#!/bin/sh\n# the administrator s\nexit 0\n' >"$policy"
chmod 755 "$policy"
cp "$policy" "$T/policy.orig"
PATH="$T/bin:$PATH" XDG_CACHE_HOME="$T/cache" DMACONN_POLICY_RC_D="$policy" sh tools/setup-deps.sh \
	>"$T/out" 2>&1
cmp -s "$policy" "$T/policy.orig" && ok "an existing policy-rc.d is left as it was" ||
	bad "an existing policy-rc.d was changed or removed"
rm -f "$policy"

# Interrupted while apt-get runs (SIGTERM, SIGHUP): ours goes all the same,
# and the script stops with the signal's status instead of going on.
for sig in TERM HUP; do
	cat >"$T/bin/apt-get" <<EOF2
#!/bin/sh
echo "apt-get \$*" >>"$log"
kill -$sig \$PPID
EOF2
	PATH="$T/bin:$PATH" XDG_CACHE_HOME="$T/cache" DMACONN_POLICY_RC_D="$policy" sh tools/setup-deps.sh \
		>"$T/out" 2>&1
	st=$?
	[ -e "$policy" ] && bad "policy-rc.d left behind after SIG$sig" ||
		ok "policy-rc.d removed after SIG$sig"
	[ $st -gt 128 ] && ok "SIG$sig: exit status $st" || bad "SIG$sig: exit status $st, the script went on"
	rm -f "$policy"
done
finish
