#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# How many ports one vnetd serves (VNETD_MAX_PORTS, user/vnetd/config/config.h;
# docs/benchmarks.md, "vnetd's cost per port"):
#  - beyond_64: one vnetd with 72 --port (more than the 64 it once took),
#    each with a tap of its own that vnetd creates in a network namespace
#    of the case's: READY=1 (sd_notify, build/selftests/unixsock) saying
#    "serving 72 ports", every socket listening, every tap attached (its
#    pins there), and with the soft RLIMIT_NOFILE set to 64 below the
#    hard one at its start (vnetd takes the hard limit: 72 ports hold more
#    fds than 64); SIGTERM: exit 0, the taps it created and their pins gone;
#  - limit: one --port more than VNETD_MAX_PORTS is refused before any
#    tap or socket is touched: exit status 2, and the message names the
#    limit and the fix (more vnetd, one per VM);
#  - stop_killed: a test build (vnetd-testing) with 24 ports, 12 on taps
#    the case made (persistent) and 12 on taps vnetd creates, killed by
#    its own stop (SIGKILL, VNETD_TEST_STOP_KILL=6) once 6 ports are
#    closed, the other closers anywhere in theirs: pins are left; `vnetctl
#    gc` removes those of the taps that went with vnetd.  A vnetd on the
#    same 24 ports serves them (those it finds a gone vnetd's it takes as
#    its own), killed (SIGKILL) while it serves leaves every pin whole; a
#    third takes those 12 attachments as its own and, after SIGTERM,
#    leaves no pin of any of the taps and no entry in the shared xmit
#    dispatcher;
#  - tap_in_netns: --tap X without --netns, where X exists only in a named
#    network namespace: refused before anything is made (exit 1, the
#    message names the namespace and the fix, --netns NS), no tap X in
#    vnetd's own namespace, no socket; with --netns NS it serves that tap;
#  - tc_attach: on a tap of the case's, vnetd's programs are on tcx
#    links by default; with --tc-attach clsact they are clsact filters
#    (no tcx link pinned), gone with vnetd's stop (the tap stays); a bad
#    value is refused (exit 2, the two words named).
# Needs root, iproute2.
#
#   selftests/vnetd/test_vnetd_ports.sh [CASE...]    (default: every case)

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=vnetd_ports

ALL_CASES="beyond_64 limit stop_killed tap_in_netns tc_attach"
VNETD=${VNETD:-$OUT/vnetd}
VNETD_TESTING=${VNETD_TESTING:-$OUT/vnetd-testing}
UNIXSOCK=${UNIXSOCK:-$OUT/selftests/unixsock}
NPORTS=72
MAX_PORTS=$(sed -n 's/^#define VNETD_MAX_PORTS \([0-9]*\)$/\1/p' \
	"$VNET_ROOT/user/vnetd/config/config.h")

VPID=
NPID=

end_case()
{
	[ -n "$VPID" ] && kill -KILL "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
	[ -n "$NPID" ] && kill -TERM "$NPID" 2>/dev/null && wait "$NPID" 2>/dev/null
	VPID= NPID=
	case_cleanup
}

# the case's taps, names of their own (pins are global)
TAPS=()

tap_gone()
{
	! ip -n "$NS" link show "$1" >/dev/null 2>&1
}

case_beyond_64()
{
	local d=$VNET_TMP/ports i args=() n=0 gone=0 pins=0 rc left=""

	ns_create ports || { fail beyond_64 "ip netns add"; return; }
	mkdir -p "$d"
	for ((i = 0; i < NPORTS; i++)); do
		TAPS[i]=$(rand_tap)
		_case_taps+=("$NS ${TAPS[i]}") # pins left by a failure: detached
		args+=(--port "socket=$d/p$i.sock,tap=${TAPS[i]},netns=$NS")
	done
	"$UNIXSOCK" notify-ts "$d/notify" 300 >"$d/notify.out" 2>&1 &
	NPID=$!
	busywait 5000 test -S "$d/notify" || { fail beyond_64 "no notify socket"; return; }
	# a soft limit below what 72 ports hold: vnetd must raise it itself
	NOTIFY_SOCKET=$d/notify prlimit --nofile=64:4096 -- \
		"$VNETD" "${args[@]}" >"$d/vnetd.log" 2>&1 &
	VPID=$!
	if ! busywait 240000 grep -q READY=1 "$d/notify.out"; then
		fail beyond_64 "no READY=1: $(tail -n 2 "$d/vnetd.log")"
		return
	fi
	expect "STATUS" yes "$(grep -q "STATUS=serving $NPORTS ports" "$d/notify.out" && echo yes || echo "no: $(cat "$d/notify.out")")"
	for ((i = 0; i < NPORTS; i++)); do
		[ -S "$d/p$i.sock" ] && n=$((n + 1))
		pins_exist "${TAPS[i]}" && pins=$((pins + 1))
	done
	expect "sockets listening" "$NPORTS" "$n"
	expect "taps attached (pins)" "$NPORTS" "$pins"
	expect "fds open over the soft limit it started with" yes \
		"$([ "$(ls "/proc/$VPID/fd" | wc -l)" -gt 64 ] && echo yes || echo no)"
	report beyond_64_serves "$(tail -n 1 "$d/vnetd.log")"
	kill -TERM "$VPID"
	wait "$VPID"
	rc=$?
	VPID=
	expect "exit status" 0 "$rc"
	pins=0
	for ((i = 0; i < NPORTS; i++)); do
		# io_uring drops its reference to a tap fd after the exit
		if busywait 10000 tap_gone "${TAPS[i]}"; then
			gone=$((gone + 1))
		else
			left+="${TAPS[i]} "
		fi
		pins_gone "${TAPS[i]}" && pins=$((pins + 1))
	done
	expect "taps it created gone (left: $left)" "$NPORTS" "$gone"
	expect "pins gone" "$NPORTS" "$pins"
	report beyond_64_stops "$(tail -n 2 "$d/vnetd.log")"
}

case_limit()
{
	local d=$VNET_TMP/limit i args=() msg

	mkdir -p "$d"
	for ((i = 0; i <= MAX_PORTS; i++)); do
		args+=(--port "socket=$d/p$i.sock,tap=vl$i")
	done
	run timeout 20 "$VNETD" "${args[@]}"
	expect "exit status" 2 "$RUN_RC"
	msg="more than $MAX_PORTS --port: run more than one vnetd, e.g. one per VM (vnetd@.service)"
	expect "message" yes "$(grep -qF -- "$msg" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	expect "no socket made" 0 "$(find "$d" -name '*.sock' | wc -l)"
	report limit "$(run_said)"
}

# pins_left TAP...: how many of the taps have pins
pins_left()
{
	local t n=0

	for t in "$@"; do
		pins_exist "$t" && n=$((n + 1))
	done
	echo "$n"
}

# xmit_entries TAP...: the shared dispatcher's entries of the taps
xmit_entries()
{
	local devs=$PIN_ROOT/net_dev_start_xmit/devs

	[ -e "$devs" ] || { echo 0; return; }
	bpftool -j map dump pinned "$devs" 2>/dev/null |
		jq -r '.[] | .formatted.value.ifname // empty' |
		grep -cxF -f <(printf '%s\n' "$@")
}

case_stop_killed()
{
	local d=$VNET_TMP/killed i args=() own=() made=() all rc left

	command -v bpftool >/dev/null || { skip stop_killed "needs bpftool"; return; }
	[ -x "$VNETD_TESTING" ] || { fail stop_killed "$VNETD_TESTING not built (make all)"; return; }
	ns_create killed || { fail stop_killed "ip netns add"; return; }
	mkdir -p "$d"
	for ((i = 0; i < 24; i++)); do
		TAPS[i]=$(rand_tap)
		if ((i % 2)); then
			tap_create "$NS" "${TAPS[i]}" || { fail stop_killed "ip tuntap add"; return; }
			own+=("${TAPS[i]}")
		else
			_case_taps+=("$NS ${TAPS[i]}")
			made+=("${TAPS[i]}")
		fi
		args+=(--port "socket=$d/p$i.sock,tap=${TAPS[i]},netns=$NS")
	done
	all=("${own[@]}" "${made[@]}")
	VNETD_TEST_STOP_KILL=6 "$VNETD_TESTING" "${args[@]}" >"$d/kill.log" 2>&1 &
	VPID=$!
	busywait 120000 test -S "$d/p23.sock" ||
		{ fail stop_killed "no socket: $(tail -n 2 "$d/kill.log")"; return; }
	expect "pins of all 24 taps" 24 "$(pins_left "${all[@]}")"
	kill -TERM "$VPID"
	{ wait "$VPID"; } 2>/dev/null # bash's "Killed"
	rc=$?
	VPID=
	expect "killed by its stop (SIGKILL: 128 + 9)" 137 "$rc"
	left=$(pins_left "${own[@]}")
	expect "pins of the case's taps left by the kill" yes "$([ "$left" -gt 0 ] && echo yes || echo "no: none left, the kill came after the stop")"
	report stop_killed_left "$left of 12 taps of the case's, $(pins_left "${made[@]}") of 12 it made: $(grep -c 'vnet detached' "$d/kill.log") detached"
	# the taps it made went with it (once its io_uring let go)
	for i in "${made[@]}"; do
		busywait 10000 tap_gone "$i"
	done
	run "$VNETCTL" gc
	expect "vnetctl gc: exit status" 0 "$RUN_RC"
	expect "vnetctl gc: no pins of the taps that went" 0 "$(pins_left "${made[@]}")"
	# a new vnetd on the same ports, killed while it serves: every pin whole
	# (the sockets a killed vnetd leaves must not pass for the new one's)
	rm -f "$d"/p*.sock
	"$VNETD" "${args[@]}" >"$d/serve.log" 2>&1 &
	VPID=$!
	busywait 120000 test -S "$d/p23.sock" ||
		{ fail stop_killed "the next vnetd: no socket: $(tail -n 2 "$d/serve.log")"; return; }
	kill -KILL "$VPID"
	{ wait "$VPID"; } 2>/dev/null
	VPID=
	expect "killed while serving: pins of the case's taps left" 12 "$(pins_left "${own[@]}")"
	for i in "${made[@]}"; do
		busywait 10000 tap_gone "$i"
	done
	# and one more, stopped cleanly
	rm -f "$d"/p*.sock
	"$VNETD" "${args[@]}" >"$d/vnetd.log" 2>&1 &
	VPID=$!
	busywait 120000 test -S "$d/p23.sock" ||
		{ fail stop_killed "the third vnetd: no socket: $(tail -n 2 "$d/vnetd.log")"; return; }
	expect "the third vnetd took the 12 attachments of the killed one" 12 "$(grep -c 'which is gone: its pins are this vnetd' "$d/vnetd.log")"
	kill -TERM "$VPID"
	wait "$VPID"
	rc=$?
	VPID=
	expect "the third vnetd: exit status" 0 "$rc"
	expect "the third vnetd: pins left after its stop" 0 "$(pins_left "${all[@]}")"
	expect "dispatcher entries of the 24 taps" 0 "$(xmit_entries "${all[@]}")"
	report stop_killed_next "$(grep -c 'which is gone' "$d/serve.log") port(s) taken over after the stop was killed"
}

case_tap_in_netns()
{
	local d=$VNET_TMP/tapns tap msg

	mkdir -p "$d"
	ns_create tapns || { fail tap_in_netns "ip netns add"; return; }
	tap=$(rand_tap)
	tap_create "$NS" "$tap" || { fail tap_in_netns "ip tuntap add"; return; }
	run timeout 20 "$VNETD" --socket "$d/s.sock" --tap "$tap"
	expect "exit status" 1 "$RUN_RC"
	msg="network namespace $NS has one: add --netns $NS"
	expect "message" yes "$(grep -qF -- "$msg" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	expect "no tap $tap made here" no "$(ip link show "$tap" >/dev/null 2>&1 && echo yes || echo no)"
	expect "no socket made" no "$([ -e "$d/s.sock" ] && echo yes || echo no)"
	expect "no pins made" yes "$(pins_gone "$tap" && echo yes || echo no)"
	report tap_in_netns_refused "$(run_said)"
	# the namespace named: that tap is served
	"$VNETD" --socket "$d/s.sock" --tap "$tap" --netns "$NS" >"$d/vnetd.log" 2>&1 &
	VPID=$!
	busywait 20000 test -S "$d/s.sock" ||
		{ fail tap_in_netns_netns "no socket: $(tail -n 2 "$d/vnetd.log")"; return; }
	expect "with --netns: the tap in $NS attached" yes "$(pins_exist "$tap" && echo yes || echo no)"
	expect "with --netns: still no tap $tap here" no "$(ip link show "$tap" >/dev/null 2>&1 && echo yes || echo no)"
	kill -TERM "$VPID"
	wait "$VPID"
	expect "with --netns: exit status after SIGTERM" 0 "$?"
	VPID=
	report tap_in_netns_served "$(tail -n 2 "$d/vnetd.log")"
}

# vnet's filter on $1's DIR $2 (ingress, egress) in $NS: its program id
vnet_filter()
{
	tc -n "$NS" filter show dev "$1" "$2" 2>/dev/null |
		sed -n 's/.* handle 0x766e .* id \([0-9]*\) .*/\1/p' | head -n1
}

# serve_tap TAP OPTION...: vnetd on TAP in $NS, until its socket listens
serve_tap()
{
	local tap=$1 d=$VNET_TMP/tcatt

	shift
	rm -f "$d/s.sock"
	"$VNETD" --socket "$d/s.sock" --tap "$tap" --netns "$NS" "$@" >"$d/vnetd.log" 2>&1 &
	VPID=$!
	busywait 20000 test -S "$d/s.sock"
}

stop_vnetd()
{
	kill -TERM "$VPID"
	wait "$VPID"
	expect "exit status after SIGTERM" 0 "$?"
	VPID=
}

case_tc_attach()
{
	local d=$VNET_TMP/tcatt tap

	mkdir -p "$d"
	ns_create tcatt || { fail tc_attach "ip netns add"; return; }
	tap=$(rand_tap)
	tap_create "$NS" "$tap" || { fail tc_attach "ip tuntap add"; return; }
	serve_tap "$tap" || { fail tc_attach_tcx "no socket: $(tail -n 2 "$d/vnetd.log")"; return; }
	expect "link_tc_ingress pinned" yes "$([ -e "$PIN_ROOT/$tap/link_tc_ingress" ] && echo yes || echo no)"
	expect "link_tc_egress pinned" yes "$([ -e "$PIN_ROOT/$tap/link_tc_egress" ] && echo yes || echo no)"
	expect "no filter" "" "$(vnet_filter "$tap" ingress)"
	stop_vnetd
	report tc_attach_tcx "$(tail -n 2 "$d/vnetd.log")"

	serve_tap "$tap" --tc-attach clsact || { fail tc_attach_clsact "no socket: $(tail -n 2 "$d/vnetd.log")"; return; }
	expect "ingress filter" yes "$(positive "$(vnet_filter "$tap" ingress)" && echo yes || echo no)"
	expect "egress filter" yes "$(positive "$(vnet_filter "$tap" egress)" && echo yes || echo no)"
	expect "tcx link pins" "" "$(ls "$PIN_ROOT/$tap" | grep '^link_tc' || true)"
	stop_vnetd
	expect "ingress filter after the stop" "" "$(vnet_filter "$tap" ingress)"
	expect "egress filter after the stop" "" "$(vnet_filter "$tap" egress)"
	expect "pins after the stop" yes "$(pins_gone "$tap" && echo yes || echo no)"
	run timeout 20 "$VNETD" --socket "$d/s.sock" --tap "$tap" --netns "$NS" --tc-attach tc
	expect "bad --tc-attach: exit" 2 "$RUN_RC"
	expect "bad --tc-attach: message" yes "$(grep -q "invalid --tc-attach 'tc': expected tcx or clsact" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	report tc_attach_clsact "$(tail -n 2 "$d/vnetd.log")"
}

# --- main ---------------------------------------------------------------------------

ksft_args "$@"
require_root test_vnetd_ports || exit 0
require_cmd test_vnetd_ports ip tc prlimit "$VNETD" "$UNIXSOCK" || exit 0

ksft_run end_case
ksft_exit
