# SPDX-License-Identifier: BSD-3-Clause
# The shell tests' harness (the shell twin of harness.py), sourced first:
#   . "$(dirname "$0")/harness.sh"
#   ok "what held"; bad "what failed" [FILE whose lines to show]
#   same "what" "$expected" "$got"       (a failure prints both values)
#   finish                               ("N passed, M failed"; exits 1 on failure)
# $fail is 1 once anything failed.
passed=0 failed=0 fail=0
ok() { passed=$((passed + 1)); echo "ok $1"; }
bad() {
	failed=$((failed + 1)) fail=1
	echo "FAIL $1"
	if [ $# -gt 1 ] && [ -f "$2" ]; then sed 's/^/  | /' "$2"; fi
	return 0
}
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected '$2', got '$3'"; fi
}
finish() {
	echo "$passed passed, $failed failed"
	exit $fail
}
