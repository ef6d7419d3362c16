#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (each case in its own network namespace and tap)
#
# `vnetctl limit` and vnetd's rate limit keys (docs/limits.md), on real
# taps with vnet attached:
#  - set/show/clear round-trip through vnetctl, -j and the pinned limits
#    map as bpftool prints it (field names from BTF), tc's units converted;
#  - bad input is refused with an error that names the fix, before
#    anything changes: a rate of 0, negative, past 2^64, a unit typo, a
#    burst below one frame, a burst without a rate, an unknown word;
#  - vnetd refuses the same in its --port keys, and writes good keys
#    into the map of the tap it serves;
#  - limits and checks set live survive a hand-over (--takeover) to a
#    vnetd given no such keys.
#
#   selftests/cli/test_limit.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=limit

ALL_CASES="set_show invalid vnetd_keys guard takeover"
VNETD=${VNETD:-$OUT/vnetd}

show_json()
{
	vnetctl -n "$NS" -j limit show "$DEV" 2>/dev/null
}

# limits_map KEY FIELD: the limits map's FIELD for direction KEY (bpftool)
limits_map()
{
	bpftool -j map dump pinned "$PIN_ROOT/$DEV/limits" 2>/dev/null |
		jq -r --argjson k "$1" --arg f "$2" '.[] | .formatted | select(.key == $k) | .value[$f]'
}

case_set_show()
{
	local doc

	attached_case set_show || { fail set_show_setup "$(run_said)"; return; }
	doc=$(show_json)
	expect "fresh: no tx limit" 0 "$(json "$doc" '.tx.bytes_per_sec')"
	expect "fresh: no rx limit" 0 "$(json "$doc" '.rx.pkts_rate')"
	run vnetctl -n "$NS" limit set "$DEV" tx rate 100mbit burst 256k
	expect "set tx exit" 0 "$RUN_RC"
	run vnetctl -n "$NS" limit set "$DEV" rx pkts-rate 10k rate 8mbps initial 1m
	expect "set rx exit" 0 "$RUN_RC"
	doc=$(show_json)
	expect "tx rate: 100 Mbit/s in bytes" 12500000 "$(json "$doc" '.tx.bytes_per_sec')"
	expect "tx burst: 256k = 262144" 262144 "$(json "$doc" '.tx.burst')"
	expect "rx rate: 8 MB/s" 8000000 "$(json "$doc" '.rx.bytes_per_sec')"
	expect "rx default burst: 10 ms of the rate" 80000 "$(json "$doc" '.rx.burst')"
	expect "rx initial: 1m" 1048576 "$(json "$doc" '.rx.initial')"
	expect "rx pkts-rate 10k" 10000 "$(json "$doc" '.rx.pkts_rate')"
	expect "rx default pkts-burst" 100 "$(json "$doc" '.rx.pkts_burst')"
	expect "bpftool: tx bytes_per_sec" 12500000 "$(limits_map 0 bytes_per_sec)"
	expect "bpftool: rx frames_per_sec" 10000 "$(limits_map 1 frames_per_sec)"
	expect "bpftool: gen even (no writer inside)" 0 "$(( $(limits_map 0 gen) % 2 ))"
	run vnetctl -n "$NS" limit show "$DEV"
	expect "text: tx line" yes "$(grep -q '^tx: rate 100mbit burst 262144b' <<<"$RUN_OUT" && echo yes || echo "no: $RUN_OUT")"
	report set_show_roundtrip

	# set replaces the direction whole
	run vnetctl -n "$NS" limit set "$DEV" tx pkts-rate 500
	doc=$(show_json)
	expect "set replaces: byte rate gone" 0 "$(json "$doc" '.tx.bytes_per_sec')"
	expect "set replaces: pkts-rate" 500 "$(json "$doc" '.tx.pkts_rate')"
	run vnetctl -n "$NS" limit clear "$DEV" tx
	doc=$(show_json)
	expect "clear tx" 0 "$(json "$doc" '.tx.pkts_rate')"
	expect "clear tx leaves rx" 10000 "$(json "$doc" '.rx.pkts_rate')"
	run vnetctl -n "$NS" limit clear "$DEV"
	doc=$(show_json)
	expect "clear all" 0 "$(json "$doc" '.rx.pkts_rate')"
	report set_replaces_clear_removes
	case_cleanup
}

# refuse NAME MESSAGE ARGS...: exit 2, "Error: MESSAGE", nothing changed
refuse()
{
	local name=$1 msg=$2

	shift 2
	run vnetctl -n "$NS" limit set "$DEV" "$@"
	expect "$name exit" 2 "$RUN_RC"
	expect "$name message" yes "$(grep -qF -- "$msg" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
}

case_invalid()
{
	local before after

	attached_case invalid || { fail invalid_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" limit set "$DEV" tx rate 10mbit
	before=$(show_json)
	refuse zero "rate '0': 0; to remove a limit use 'vnetctl limit clear" tx rate 0
	refuse negative "rate '-5mbit': negative" tx rate -5mbit
	refuse huge "rate '99999999999999999999999bps': over 2^64" tx rate 99999999999999999999999bps
	refuse typo "unknown unit 'mbti' (units: bit, kbit, mbit" tx rate 10mbti
	refuse small_burst "burst 1000 is smaller than one 1514-byte frame" tx rate 10mbit burst 1000
	refuse burst_alone "a burst without a rate" rx burst 64k pkts-rate 5
	refuse word "unknown parameter 'ceil'" tx rate 1mbit ceil 2mbit
	refuse dir "direction 'up': tx (from the guest) or rx" up rate 1mbit
	refuse novalue "'burst' needs a value" tx rate 1mbit burst
	refuse norate "nothing to set" tx
	after=$(show_json)
	expect "unchanged after refusals" "$(json "$before" '[.tx, .rx]' -c)" "$(json "$after" '[.tx, .rx]' -c)"
	report invalid_refused

	refuses_unattached unattached limit show
	report invalid_not_attached
	case_cleanup
}

case_vnetd_keys()
{
	local sock pid doc

	DEV=$(rand_tap)
	ns_create vnetd_keys || { fail vnetd_keys_setup "netns"; return; }
	sock=/tmp/vnet-limit-$$.sock
	# refused at parse time, naming the key and the fix
	run "$VNETD" --netns "$NS" --port "socket=$sock,tap=$DEV,tx-rate=0"
	expect "rate 0 exit" 2 "$RUN_RC"
	expect "rate 0 message" yes "$(grep -qF "tx-rate: rate '0': 0; to remove" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run "$VNETD" --netns "$NS" --port "socket=$sock,tap=$DEV,rx-rate=1mbit,rx-burst=100"
	expect "small burst exit" 2 "$RUN_RC"
	expect "small burst message" yes "$(grep -qF "rx: burst 100 is smaller than one 1514-byte frame" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run "$VNETD" --netns "$NS" --port "socket=$sock,tap=$DEV,tx-rates=1mbit"
	expect "unknown key exit" 2 "$RUN_RC"
	expect "unknown key lists the limit keys" yes "$(grep -qF "rate limits: tx-rate" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run "$VNETD" --netns "$NS" --port "socket=$sock,tap=$DEV,ip=192.0.2.2/40"
	expect "bad prefix exit" 2 "$RUN_RC"
	expect "bad prefix message" yes "$(grep -qF "ip=192.0.2.2/40: address '192.0.2.2/40': the prefix length is 0-32 for IPv4" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	report vnetd_keys_refused

	"$VNETD" --netns "$NS" --port "socket=$sock,tap=$DEV,tx-rate=50mbit,tx-burst=128k,rx-pkts-rate=2000,mac=52:54:00:00:00:07,ip=192.0.2.7+2001:db8::7" \
		>"/tmp/vnet-limit-$$.log" 2>&1 &
	pid=$!
	if ! busywait 20000 test -S "$sock"; then
		fail vnetd_keys_written "vnetd did not listen: $(tail -5 "/tmp/vnet-limit-$$.log")"
	else
		doc=$(show_json)
		expect "tx rate from the key" 6250000 "$(json "$doc" '.tx.bytes_per_sec')"
		expect "tx burst from the key" 131072 "$(json "$doc" '.tx.burst')"
		expect "rx pkts-rate from the key" 2000 "$(json "$doc" '.rx.pkts_rate')"
		doc=$(vnetctl -n "$NS" -j guard show "$DEV")
		expect "guard from mac= and ip=" "mac,ip,arp,nd,dhcp,ra" "$(json "$doc" '.checks | join(",")')"
		expect "guard addresses" "192.0.2.7/32,2001:db8::7/128" "$(json "$doc" '.ip | join(",")')"
		# live: vnetctl changes what vnetd follows
		run vnetctl -n "$NS" limit set "$DEV" tx rate 1gbit
		doc=$(show_json)
		expect "live change" 125000000 "$(json "$doc" '.tx.bytes_per_sec')"
		report vnetd_keys_written
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$sock" "/tmp/vnet-limit-$$.log"
	case_cleanup
}

case_guard()
{
	local doc before

	attached_case guard || { fail guard_setup "$(run_said)"; return; }
	doc=$(vnetctl -n "$NS" -j guard show "$DEV")
	expect "fresh: no checks" 0 "$(json "$doc" '.checks | length')"
	run vnetctl -n "$NS" guard set "$DEV" mac 52:54:00:12:34:56 ip 192.0.2.2,198.51.100.0/24,2001:db8::2
	expect "set exit" 0 "$RUN_RC"
	doc=$(vnetctl -n "$NS" -j guard show "$DEV")
	expect "checks from mac and ip" "mac,ip,arp,nd,dhcp,ra" "$(json "$doc" '.checks | join(",")')"
	expect "addresses" "192.0.2.2/32,198.51.100.0/24,2001:db8::2/128" "$(json "$doc" '.ip | join(",")')"
	expect "mac" 52:54:00:12:34:56 "$(json "$doc" '.mac')"
	expect "drops by reason" 0 "$(json "$doc" '.dropped.ipv4')"
	expect "bpftool: flags" 63 "$(bpftool -j map dump pinned "$PIN_ROOT/$DEV/guard" | jq -r '.[0].formatted.value.flags')"
	run vnetctl -n "$NS" stats "$DEV" --prometheus
	expect "/metrics: a drop counter per reason" 8 "$(grep -c "^vnet_guard_dropped_total{device=\"$DEV\",reason=\"[a-z0-9]*\"} 0$" <<<"$RUN_OUT")"
	report guard_set_show

	before=$doc
	run vnetctl -n "$NS" guard set "$DEV" ip 192.0.2.2/33
	expect "prefix > 32 exit" 2 "$RUN_RC"
	expect "prefix > 32 message" yes "$(grep -qF "the prefix length is 0-32 for IPv4" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run vnetctl -n "$NS" guard set "$DEV" ip 2001:db8::/129
	expect "prefix > 128 message" yes "$(grep -qF "the prefix length is 0-128 for IPv6" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run vnetctl -n "$NS" guard set "$DEV" ip 192.0.2.300
	expect "bad address message" yes "$(grep -qF "address '192.0.2.300': not an IPv4 address" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run vnetctl -n "$NS" guard set "$DEV" mac 52:54:00:12:34
	expect "bad mac message" yes "$(grep -qF "not a MAC address" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run vnetctl -n "$NS" guard set "$DEV" ip 192.0.2.2 checks mac
	expect "mac check without a mac" yes "$(grep -qF "need the guest NIC's MAC: give mac M" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	doc=$(vnetctl -n "$NS" -j guard show "$DEV")
	expect "unchanged after refusals" "$(json "$before" '[.checks, .ip, .mac]' -c)" "$(json "$doc" '[.checks, .ip, .mac]' -c)"
	report guard_invalid_refused

	run vnetctl -n "$NS" guard clear "$DEV"
	doc=$(vnetctl -n "$NS" -j guard show "$DEV")
	expect "clear" 0 "$(json "$doc" '.checks | length')"
	report guard_clear
	case_cleanup
}

case_takeover()
{
	local sock log1 log2 pid1 pid2 doc

	DEV=$(rand_tap)
	ns_create takeover || { fail takeover_setup "netns"; return; }
	sock=/tmp/vnet-limit-to-$$.sock
	log1=/tmp/vnet-limit-to1-$$.log
	log2=/tmp/vnet-limit-to2-$$.log
	"$VNETD" --netns "$NS" --port "socket=$sock,tap=$DEV" >"$log1" 2>&1 &
	pid1=$!
	if ! busywait 20000 test -S "$sock"; then
		fail takeover_survives "vnetd did not listen: $(tail -3 "$log1")"
		kill "$pid1" 2>/dev/null
		return
	fi
	run vnetctl -n "$NS" limit set "$DEV" tx rate 30mbit burst 128k
	run vnetctl -n "$NS" guard set "$DEV" mac 52:54:00:00:00:08 ip 192.0.2.8
	"$VNETD" --netns "$NS" --takeover --port "socket=$sock,tap=$DEV" >"$log2" 2>&1 &
	pid2=$!
	busywait 20000 grep -q "taken over" "$log2"
	expect "the new vnetd took the port" yes "$(grep -q "taken over" "$log2" && echo yes || echo "no: $(tail -3 "$log2")")"
	busywait 10000 sh -c "! kill -0 $pid1 2>/dev/null"
	expect "the old vnetd exited" yes "$(kill -0 "$pid1" 2>/dev/null && echo no || echo yes)"
	doc=$(vnetctl -n "$NS" -j limit show "$DEV")
	expect "tx limit after the hand-over" "[3750000,131072]" "$(json "$doc" '[.tx.bytes_per_sec, .tx.burst]' -c)"
	doc=$(vnetctl -n "$NS" -j guard show "$DEV")
	expect "guard after the hand-over" "52:54:00:00:00:08 192.0.2.8/32" "$(json "$doc" '"\(.mac) \(.ip | join(","))"')"
	doc=$(vnetctl -n "$NS" status "$DEV")
	expect "the new vnetd's socket in the pins" yes "$(grep -q "vnetd port  $sock" <<<"$doc" && echo yes || echo "no: $doc")"
	report takeover_survives
	kill "$pid1" "$pid2" 2>/dev/null
	wait "$pid1" "$pid2" 2>/dev/null
	rm -f "$sock" "$log1" "$log2"
	case_cleanup
}

# --- main ---------------------------------------------------------------------------

ksft_args "$@"
require_root test_limit || exit 0
require_cmd test_limit ip jq bpftool "$VNETCTL" "$VNETD" || exit 0

ksft_run case_cleanup
ksft_exit
