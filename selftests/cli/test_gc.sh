#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (a private /run/vnet and bpffs: its own mount namespace)
#
# `vnetctl gc`: what gone devices and gone vnetds leave behind goes, what a
# running one uses stays.  In a mount namespace of its own, with a tmpfs on
# /run/vnet and a bpffs of its own (other tests' files are not its to
# collect):
#  - a running vnetd's journal (ESC.rings) and hand-over socket
#    (TAP.takeover) are kept, and it runs on;
#  - those of a vnetd killed with SIGKILL are removed;
#  - a journal a process holds open, and one whose socket a frontend
#    listens on (QEMU server=on), are kept; one nobody holds is removed;
#  - the pins of a deleted tap are removed;
#  - --dry-run names the same and removes nothing; text and -j say what.
#
#   selftests/cli/test_gc.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=gc

ALL_CASES="runtime_files"
VNETD=${VNETD:-$OUT/vnetd}
RUN=/run/vnet

yesno()
{
	"$@" && echo yes || echo no
}

# journal SOCKET: the journal vnetd keeps for SOCKET (user/vnetd/port/device.c)
journal()
{
	echo "$RUN/$(systemd-escape --path "$1").rings"
}

# gone PATH: "removed" entries of the last gc -j naming PATH
gone()
{
	json "$RUN_OUT" '[.[] | select(.path == $p)] | length' --arg p "$1"
}

case_runtime_files()
{
	local live=$VNET_TMP/live.sock dead=$VNET_TMP/dead.sock
	local held=$VNET_TMP/held.sock old=$VNET_TMP/old.sock qemu=$VNET_TMP/qemu.sock
	local ltap dtap gtap lpid dpid spid qpid f

	ns_create gcrt || { fail gc_setup "cannot create netns"; return; }
	ltap=$(rand_tap)
	dtap=$(rand_tap)
	gtap=$(rand_tap)

	# a running vnetd: its journal and hand-over socket stay
	"$VNETD" --socket "$live" --tap "$ltap" --netns "$NS" >"$VNET_TMP/live.log" 2>&1 &
	lpid=$!
	procs_add "$lpid"
	# one that crashed: both are left over
	"$VNETD" --socket "$dead" --tap "$dtap" --netns "$NS" >"$VNET_TMP/dead.log" 2>&1 &
	dpid=$!
	procs_add "$dpid"
	busywait 10000 test -S "$RUN/$ltap.takeover" -a -f "$(journal "$live")" \
		-a -S "$RUN/$dtap.takeover" -a -f "$(journal "$dead")" ||
		{ fail gc_setup "no vnetd files: $(ls "$RUN") $(tail -c 300 "$VNET_TMP/live.log")"; end_case; return; }
	kill -KILL "$dpid"
	wait "$dpid" 2>/dev/null
	# journals of past socket paths: one a process holds open, one whose
	# frontend listens (QEMU server=on, vnetd --client down), one nobody's
	: >"$(journal "$held")"
	: >"$(journal "$qemu")"
	: >"$(journal "$old")"
	sleep 300 9<"$(journal "$held")" &
	spid=$!
	procs_add "$spid"
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1); time.sleep(300)' "$qemu" &
	qpid=$!
	procs_add "$qpid"
	busywait 5000 test -S "$qemu"
	# a tap gone with its pins left
	tap_create "$NS" "$gtap" && run vnetctl -n "$NS" attach "$gtap"
	ip -n "$NS" link del "$gtap"
	expect "pins left" yes "$(yesno pins_exist "$gtap")"

	run vnetctl -j gc --dry-run
	expect "dry run exit" 0 "$RUN_RC"
	expect "dry run: stale takeover named" 1 "$(gone "$RUN/$dtap.takeover")"
	expect "dry run: removed false" false "$(json "$RUN_OUT" '[.[] | .removed] | any')"
	for f in "$RUN/$dtap.takeover" "$(journal "$dead")" "$(journal "$old")"; do
		expect "dry run keeps $f" yes "$(yesno test -e "$f")"
	done
	expect "dry run keeps pins" yes "$(yesno pins_exist "$gtap")"
	report gc_dry_run "$(run_said)"

	run vnetctl gc
	expect "gc exit" 0 "$RUN_RC"
	expect "text names the takeover" yes "$(yesno grep -q "$RUN/$dtap.takeover: hand-over socket nobody listens on; removed" <<<"$RUN_OUT")"
	expect "text names the journal's socket" yes "$(yesno grep -qF "ring journal of $dead" <<<"$RUN_OUT")"
	expect "text names the pins" yes "$(yesno grep -q "^$gtap: device gone; pins removed" <<<"$RUN_OUT")"
	for f in "$RUN/$dtap.takeover" "$(journal "$dead")" "$(journal "$old")"; do
		expect "removed $f" no "$(yesno test -e "$f")"
	done
	expect "pins removed" yes "$(yesno pins_gone "$gtap")"
	for f in "$RUN/$ltap.takeover" "$(journal "$live")" "$(journal "$held")" "$(journal "$qemu")"; do
		expect "kept $f" yes "$(yesno test -e "$f")"
	done
	expect "live vnetd runs on" yes "$(yesno kill -0 "$lpid")"
	expect "nothing on stderr" "" "$RUN_ERR"
	report gc_removes_stale_keeps_live "$(run_said)"

	# what a process held, once let go, is nobody's
	kill "$spid" "$qpid"
	wait "$spid" "$qpid" 2>/dev/null
	rm -f "$qemu"
	run vnetctl -j gc
	expect "gc -j exit" 0 "$RUN_RC"
	expect "-j: held journal" 1 "$(gone "$(journal "$held")")"
	expect "-j: its kind" journal "$(json "$RUN_OUT" '.[] | select(.path == $p) | .kind' --arg p "$(journal "$qemu")")"
	expect "-j: its socket" "$qemu" "$(json "$RUN_OUT" '.[] | select(.path == $p) | .socket' --arg p "$(journal "$qemu")")"
	expect "-j: removed" true "$(json "$RUN_OUT" '[.[] | .removed] | all')"
	expect "-j: the live one's not named" 0 "$(gone "$(journal "$live")")"
	expect "kept live journal" yes "$(yesno test -e "$(journal "$live")")"
	run vnetctl gc
	expect "then nothing" "nothing to collect" "$RUN_OUT"
	report gc_json "$(run_said)"
	end_case
}

ksft_args "$@"
require_root test_gc || exit 0
require_cmd test_gc ip jq python3 systemd-escape unshare "$VNETCTL" "$VNETD" || exit 0
# a private /run/vnet and bpffs: other tests' leftovers are not this one's
if [ -z "${VNET_GC_PRIVATE:-}" ]; then
	rm -rf "$VNET_TMP"
	VNET_GC_PRIVATE=1 exec unshare -m --propagation private "$0" "$@"
fi
mkdir -p "$RUN" /sys/fs/bpf && mount -t tmpfs tmpfs "$RUN" &&
	mount -t bpf bpf /sys/fs/bpf || { fail test_gc "cannot mount a private /run/vnet and bpffs"; exit 1; }
trap 'end_case; _cleanup_all' EXIT

ksft_run end_case
ksft_exit
