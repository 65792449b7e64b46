#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# IMEX readiness of a node (dmaconn_host_imex), read below DMACONN_SYSFS_ROOT,
# recorded and replayed: the driver's nvidia-caps-imex-channels major in
# /proc/devices, then a channel device the user may open (a recording keeps
# the access(2) answer as the entry's contents).
# usage: imex_test.sh TEST_NODE_API
set -eu
api=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset DMACONN_REPLAY
fail=0
run() { # NAME ENV... -- ARGS...
	name=$1
	shift
	if ! env "$@" >"$tmp/out" 2>&1; then
		echo "FAIL $name"
		cat "$tmp/out"
		fail=1
	else
		echo "ok $name"
	fi
}
devices() { # ROOT [EXTRA LINE]
	mkdir -p "$1/proc"
	printf 'Character devices:\n  1 mem\n195 nvidia\n%s\n\nBlock devices:\n  7 loop\n234 %s\n' \
		"${2:-}" "nvidia-caps-imex-channels" >"$1/proc/devices"
}

# Ready: the major, and channel0 (a file stands for the device node).
devices "$tmp/ready" "234 nvidia-caps-imex-channels"
mkdir -p "$tmp/ready/dev/nvidia-caps-imex-channels"
: >"$tmp/ready/dev/nvidia-caps-imex-channels/channel0"
run ready DMACONN_SYSFS_ROOT="$tmp/ready" "$api" imex ready \
	"/dev/nvidia-caps-imex-channels/channel0 (major 234) opens"

# The driver registers no IMEX channels (a block device of the same name
# does not count).
devices "$tmp/nomodule"
run module_missing DMACONN_SYSFS_ROOT="$tmp/nomodule" "$api" imex imex_module_missing \
	"/proc/devices lists no nvidia-caps-imex-channels"
mkdir -p "$tmp/noproc"
run proc_unreadable DMACONN_SYSFS_ROOT="$tmp/noproc" "$api" imex imex_module_missing \
	"/proc/devices cannot be read"

# The module is there, no channel was made (or only something else).
devices "$tmp/nochannel" "511 nvidia-caps-imex-channels"
run channel_missing DMACONN_SYSFS_ROOT="$tmp/nochannel" "$api" imex imex_channel_missing \
	"no IMEX channel in /dev/nvidia-caps-imex-channels/ (major 511)"
mkdir -p "$tmp/nochannel/dev/nvidia-caps-imex-channels"
: >"$tmp/nochannel/dev/nvidia-caps-imex-channels/channelX"
: >"$tmp/nochannel/dev/nvidia-caps-imex-channels/other0"
run channel_misnamed DMACONN_SYSFS_ROOT="$tmp/nochannel" "$api" imex imex_channel_missing "mknod channel0 c 511 0"

# Recorded, then replayed: the same answer, the access(2) answer kept.
run record DMACONN_SYSFS_ROOT="$tmp/ready" "$api" imex ready "channel0 (major 234)" "$tmp/rec.json"
grep -q '"/dev/nvidia-caps-imex-channels/channel0": "access: ok\\n"' "$tmp/rec.json" ||
	{ echo "FAIL record: no access answer in the recording"; fail=1; }
grep -q '"/proc/devices": "Character devices:' "$tmp/rec.json" ||
	{ echo "FAIL record: /proc/devices not recorded"; fail=1; }
run replay_ready DMACONN_SYSFS_ROOT="$tmp/nomodule" DMACONN_REPLAY="$tmp/rec.json" "$api" imex ready \
	"channel0 (major 234)"
# A recording made where the user may not open it (as root here, edited).
sed 's|"access: ok\\n"|"access: denied (Permission denied)\\n"|' "$tmp/rec.json" >"$tmp/denied.json"
run replay_denied DMACONN_REPLAY="$tmp/denied.json" "$api" imex imex_channel_no_permission \
	"/dev/nvidia-caps-imex-channels/channel0 cannot be opened for reading and writing"
# Re-recording a replay writes the answer back.
run rerecord DMACONN_REPLAY="$tmp/denied.json" "$api" imex imex_channel_no_permission "channel0" "$tmp/re.json"
grep -q '"access: denied (Permission denied)\\n"' "$tmp/re.json" ||
	{ echo "FAIL rerecord: the answer was not written back"; fail=1; }
exit $fail
