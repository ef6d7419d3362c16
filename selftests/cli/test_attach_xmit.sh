#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Integration tests of vnetctl (see test_attach.sh): guest-RX counting at
# net_dev_start_xmit, the shared dispatcher of several taps, parallel
# attaches, its garbage collection, the per-tap variant (forced with the
# test build's VNET_XMIT_DISPATCH=per-tap: build/vnetctl-testing; the
# production vnetctl ignores it).  Needs root, jq, bpftool, iproute2.
#
#   selftests/cli/test_attach_xmit.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose: $q, $c are jq variables
# shellcheck disable=SC2016
# shellcheck source=selftests/cli/attach_lib.sh
source "$(dirname "$0")/attach_lib.sh"

ALL_CASES="xmit_two xmit_parallel xmit_gc xmit_pertap xmit_switch_production"
VNETCTL_TESTING=${VNETCTL_TESTING:-$OUT/vnetctl-testing}

# --- the shared net_dev_start_xmit dispatcher -------------------------------------

# two_attached PREFIX NAME: two netns, each with an addressed tap (ns_a dev_a,
# ns_b dev_b), vnet attached to both; false (NAME_setup or NAME_attach
# failed) when a step failed
two_attached()
{
	xmit_tap "${1}a" || { fail "${2}_setup" "cannot create netns/tap"; return 1; }
	ns_a=$NS dev_a=$DEV
	xmit_tap "${1}b" || { fail "${2}_setup" "cannot create netns/tap"; return 1; }
	ns_b=$NS dev_b=$DEV
	run vnetctl -n "$ns_a" attach "$dev_a"
	[ "$RUN_RC" -eq 0 ] || { fail "${2}_attach" "$(run_said)"; return 1; }
	run vnetctl -n "$ns_b" attach "$dev_b"
	[ "$RUN_RC" -eq 0 ] || { fail "${2}_attach" "$(run_said)"; return 1; }
}

# Two taps in two namespaces (so both have ifindex 2): one dispatcher,
# frames to each counted only on its own tap, per queue; detaching one
# keeps the other counting and the dispatcher; the last detach removes it.
case_xmit_two()
{
	local ns_a dev_a ns_b dev_b st_a st_b out_a1 out_a2 out_b before disp link
	local prog_a prog_b idx_a idx_b stats

	two_attached xmit xmit_two || return

	st_a=$(vnetctl -n "$ns_a" -j status "$dev_a" 2>/dev/null)
	st_b=$(vnetctl -n "$ns_b" -j status "$dev_b" 2>/dev/null)
	idx_a=$(json "$st_a" '.[0].ifindex')
	idx_b=$(json "$st_b" '.[0].ifindex')
	echo "# $dev_a ifindex $idx_a (netns $ns_a), $dev_b ifindex $idx_b (netns $ns_b)"
	expect "$dev_a xmit attach" shared "$(json "$st_a" '.[0].xmit.attach')"
	expect "$dev_b xmit attach" shared "$(json "$st_b" '.[0].xmit.attach')"
	disp=$(json "$st_a" '.[0].xmit.dispatcher_prog_id')
	link=$(json "$st_a" '.[0].xmit.dispatcher_link_id')
	prog_a=$(json "$st_a" '.[0].xmit.prog_id')
	prog_b=$(json "$st_b" '.[0].xmit.prog_id')
	expect "dispatcher prog id > 0" yes "$(positive "$disp" && echo yes || echo "no ($disp)")"
	expect "one dispatcher for both" "$disp" "$(json "$st_b" '.[0].xmit.dispatcher_prog_id')"
	expect "one dispatcher link for both" "$link" "$(json "$st_b" '.[0].xmit.dispatcher_link_id')"
	expect "distinct slots" yes "$([ "$(json "$st_a" '.[0].xmit.slot')" != "$(json "$st_b" '.[0].xmit.slot')" ] && echo yes || echo no)"
	expect "distinct tap programs" yes "$([ "$prog_a" != "$prog_b" ] && positive "$prog_a" && positive "$prog_b" && echo yes || echo no)"
	expect "shared pins" "devs link progs" "$(find "$XMIT_DIR" -mindepth 1 -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//')"
	expect "tap pin prog_xmit" yes "$([ -e "$PIN_ROOT/$dev_a/prog_xmit" ] && echo yes || echo no)"
	expect "no per-tap link_xmit" no "$([ -e "$PIN_ROOT/$dev_a/link_xmit" ] && echo yes || echo no)"
	expect "dispatcher entries" "$(printf '%s\n' "$dev_a" "$dev_b" | sort | tr '\n' ' ')" \
		"$(dispatcher_entries | tr ' ' '\n' | grep -E "^($dev_a|$dev_b)$" | sort | tr '\n' ' ')"
	report xmit_two_status "$st_a $st_b"

	# only the dispatcher is on the tracepoint, not the taps' programs
	expect "links running $dev_a's or $dev_b's program" 0 "$(tp_links '.prog_id as $p | $ids | index($p) != null' "$prog_a" "$prog_b")"
	expect "links running the dispatcher" 1 "$(tp_links '.prog_id as $p | $ids | index($p) != null' "$disp")"
	report xmit_two_one_program

	# frames to A: counted on A at the queue the guest read them from, not on B
	xmit_tcp "$ns_a" "$dev_a" 0 || { fail xmit_two_traffic "$dev_a: $(run_said)"; return; }
	out_a1=$RUN_OUT
	xmit_tcp "$ns_a" "$dev_a" 1 || { fail xmit_two_traffic "$dev_a: $(run_said)"; return; }
	out_a2=$RUN_OUT
	out_a1=$(merge_tool_json "$out_a1" "$out_a2")
	rx_expect "$dev_a" "$out_a1" "$(vnetctl -n "$ns_a" -j stats "$dev_a" 2>/dev/null)"
	expect "$dev_b rx packets (nothing was sent to it)" 0 "$(rx_total "$(vnetctl -n "$ns_b" -j stats "$dev_b" 2>/dev/null)")"
	report xmit_two_counts_a

	before=$(rx_total "$(vnetctl -n "$ns_a" -j stats "$dev_a" 2>/dev/null)")
	xmit_tcp "$ns_b" "$dev_b" 1 || { fail xmit_two_traffic "$dev_b: $(run_said)"; return; }
	out_b=$RUN_OUT
	rx_expect "$dev_b" "$out_b" "$(vnetctl -n "$ns_b" -j stats "$dev_b" 2>/dev/null)"
	expect "$dev_a rx packets unchanged" "$before" "$(rx_total "$(vnetctl -n "$ns_a" -j stats "$dev_a" 2>/dev/null)")"
	report xmit_two_counts_b

	# detach A: B keeps the dispatcher and keeps counting
	run vnetctl -n "$ns_a" detach "$dev_a"
	expect "detach $dev_a exit" 0 "$RUN_RC"
	st_b=$(vnetctl -n "$ns_b" -j status "$dev_b" 2>/dev/null)
	expect "$dev_b xmit attach" shared "$(json "$st_b" '.[0].xmit.attach')"
	expect "$dev_b dispatcher unchanged" "$disp" "$(json "$st_b" '.[0].xmit.dispatcher_prog_id')"
	expect "dispatcher link $link alive" yes "$(link_exists "$link" && echo yes || echo no)"
	expect "$dev_a's entry gone" "" "$(dispatcher_entries | tr ' ' '\n' | grep -x "$dev_a")"
	# the program is freed with its slot: it cannot be tail-called any more
	expect "$dev_a's program $prog_a freed" yes "$(busywait 3000 eval "! bpftool prog show id $prog_a >/dev/null 2>&1" && echo yes || echo no)"
	xmit_tcp "$ns_b" "$dev_b" 0 || { fail xmit_two_traffic "$dev_b: $(run_said)"; return; }
	stats=$(vnetctl -n "$ns_b" -j stats "$dev_b" 2>/dev/null)
	rx_expect "$dev_b (after $dev_a's detach)" "$(merge_tool_json "$out_b" "$RUN_OUT")" "$stats"
	# a frame the dispatcher did not count: did the kernel skip its run
	# (a run of it already active on that CPU)?
	[ -z "$_mismatch" ] ||
		_mismatch+="(dispatcher $disp: $(bpftool prog show id "$disp" 2>/dev/null | grep -o 'recursion_misses [0-9]*' || echo 'no recursion misses')) "
	report xmit_two_detach_one "$(run_said)"

	run vnetctl -n "$ns_b" detach "$dev_b"
	expect "detach $dev_b exit" 0 "$RUN_RC"
	expect "shared dispatcher removed" yes "$(dispatcher_removed "$dev_a" "$dev_b")"
	if ! [ -e "$XMIT_DIR" ]; then
		expect "dispatcher link $link gone" yes "$(link_exists "$link" && echo no || echo yes)"
		expect "links running the dispatcher" 0 "$(tp_links '.prog_id as $p | $ids | index($p) != null' "$disp")"
	fi
	expect "$dev_b's program $prog_b freed" yes "$(busywait 3000 eval "! bpftool prog show id $prog_b >/dev/null 2>&1" && echo yes || echo no)"
	report xmit_two_detach_last "$(run_said)"
	case_cleanup
}

# vnetctl_all CMD: `vnetctl CMD` on each tap of nss/devs, all at once; the
# ones that failed, with their output ("" when none did)
vnetctl_all()
{
	local i pids=() bad=""

	for i in "${!devs[@]}"; do
		vnetctl -n "${nss[i]}" "$1" "${devs[i]}" >"$VNET_TMP/$1$i" 2>&1 &
		pids+=($!)
	done
	for i in "${!devs[@]}"; do
		wait "${pids[i]}" || bad+=" ${devs[i]}: rc $? ($(head -c 300 "$VNET_TMP/$1$i"));"
	done
	echo "$bad"
}

# 8 taps, each in its own namespace (all ifindex 2), attached by 8
# concurrent vnetctl processes: all succeed, one dispatcher, 8 slots,
# one program on the tracepoint, and every tap counts its own frames.
case_xmit_parallel()
{
	local i nss=() devs=() st disp slots progs bad="" stats

	for i in 0 1 2 3 4 5 6 7; do
		xmit_tap "xp$i" || { fail xmit_parallel_setup "cannot create netns/tap"; return; }
		nss+=("$NS")
		devs+=("$DEV")
	done
	expect "failed attaches" "" "$(vnetctl_all attach)"
	disp="" slots="" progs=""
	for i in 0 1 2 3 4 5 6 7; do
		st=$(vnetctl -n "${nss[i]}" -j status "${devs[i]}" 2>/dev/null)
		[ "$(json "$st" '.[0].xmit.attach')" = shared ] || bad+=" ${devs[i]} not shared ($st);"
		disp+="$(json "$st" '.[0].xmit.dispatcher_prog_id') "
		slots+="$(json "$st" '.[0].xmit.slot') "
		progs+="$(json "$st" '.[0].xmit.prog_id') "
	done
	expect "problems" "" "$bad"
	expect "dispatchers" 1 "$(tr ' ' '\n' <<<"$disp" | grep . | sort -u | wc -l)"
	expect "distinct slots" 8 "$(tr ' ' '\n' <<<"$slots" | grep -E '^[0-9]+$' | sort -u | wc -l)"
	report xmit_parallel_attach "slots: $slots dispatchers: $disp"

	disp=$(tr ' ' '\n' <<<"$disp" | grep . | head -n1)
	# shellcheck disable=SC2086 # lists of ids
	expect "links running the taps' programs ($progs)" 0 "$(tp_links '.prog_id as $p | $ids | index($p) != null' $progs)"
	expect "links running the dispatcher $disp" 1 "$(tp_links '.prog_id as $p | $ids | index($p) != null' "$disp")"
	expect "links running a vnet dispatcher (by name)" 1 "$(bpftool -j link list 2>/dev/null | jq '[.[] | select(.tp_name // "" | test("net_dev_start_xmit")) | .prog_id] | map(tostring)' 2>/dev/null | jq -r '.[]' | while read -r p; do bpftool -j prog show id "$p" 2>/dev/null | jq -r .name; done | grep -c '^vnet_xmit_disp')"
	report xmit_parallel_one_program

	bad=""
	for i in 0 1 2 3 4 5 6 7; do
		if ! xmit_tcp "${nss[i]}" "${devs[i]}" $((i % 2)); then
			bad+=" ${devs[i]}: $(run_said);"
			continue
		fi
		stats=$(vnetctl -n "${nss[i]}" -j stats "${devs[i]}" 2>/dev/null)
		rx_expect "${devs[i]}" "$RUN_OUT" "$stats"
	done
	expect "transfers" "" "$bad"
	report xmit_parallel_counts

	# and 8 concurrent detaches
	expect "failed detaches" "" "$(vnetctl_all detach)"
	expect "shared dispatcher removed" yes "$(dispatcher_removed "${devs[@]}")"
	report xmit_parallel_detach
	case_cleanup
}

# gc: a gone device's entry goes with its pins; an entry whose pins were
# removed by hand goes too; then the dispatcher.
case_xmit_gc()
{
	local ns_a dev_a ns_b dev_b

	two_attached xgc xmit_gc || return

	ip -n "$ns_a" link del "$dev_a"
	busywait 3000 dev_gone "$dev_a"
	rm -rf "${PIN_ROOT:?}/$dev_b"
	expect "entries before gc" yes "$(dispatcher_entries | grep -qw "$dev_a" && dispatcher_entries | grep -qw "$dev_b" && echo yes || echo no)"
	run vnetctl gc
	expect "gc exit" 0 "$RUN_RC"
	expect "gc names $dev_a" yes "$(grep -qw "$dev_a" <<<"$RUN_OUT" && echo yes || echo no)"
	expect "gc does not take the dispatcher for a device" no "$(grep -q net_dev_start_xmit <<<"$RUN_OUT" && echo yes || echo no)"
	expect "pins of $dev_a removed" yes "$(pins_gone "$dev_a" && echo yes || echo no)"
	expect "shared dispatcher removed" yes "$(dispatcher_removed "$dev_a" "$dev_b")"
	report xmit_gc "$(run_said)"
	case_cleanup
}

# The fallback (the kernel refuses the shared dispatcher), forced by the
# test build: the tap's program on its own link, counting per queue, and
# detach removes it.
case_xmit_pertap()
{
	local st prog link out

	xmit_tap xpt || { fail xmit_pertap_setup "cannot create netns/tap"; return; }
	run env VNET_XMIT_DISPATCH=per-tap timeout 30 "$VNETCTL_TESTING" -n "$NS" attach "$DEV"
	[ "$RUN_RC" -eq 0 ] || { fail xmit_pertap_attach "$(run_said)"; return; }
	st=$(status_json)
	prog=$(json "$st" '.[0].xmit.prog_id')
	link=$(json "$st" '.[0].xmit.link_id')
	expect "xmit attach" per-tap "$(json "$st" '.[0].xmit.attach')"
	expect "link_xmit pinned" yes "$([ -e "$PIN_ROOT/$DEV/link_xmit" ] && echo yes || echo no)"
	expect "link $link runs the tap's program" "$prog" "$(bpftool -j link show id "$link" 2>/dev/null | jq -r '.prog_id' 2>/dev/null)"
	expect "not in the dispatcher" "" "$(dispatcher_entries | tr ' ' '\n' | grep -x "$DEV")"
	report xmit_pertap_status "$st"

	xmit_tcp "$NS" "$DEV" 1 || { fail xmit_pertap_traffic "$(run_said)"; return; }
	out=$RUN_OUT
	rx_expect "$DEV" "$out" "$(stats_json)"
	report xmit_pertap_counts

	run vnetctl -n "$NS" detach "$DEV"
	expect "detach exit" 0 "$RUN_RC"
	expect "link $link gone" yes "$(link_exists "$link" && echo no || echo yes)"
	report xmit_pertap_detach "$(run_said)"
	case_cleanup
}

# The production vnetctl has no test switch: VNET_XMIT_DISPATCH=per-tap
# changes nothing, the tap goes to the shared dispatcher.
case_xmit_switch_production()
{
	xmit_tap xsp || { fail xmit_switch_production_setup "cannot create netns/tap"; return; }
	run env VNET_XMIT_DISPATCH=per-tap timeout 30 "$VNETCTL" -n "$NS" attach "$DEV"
	expect "attach exit" 0 "$RUN_RC"
	expect "xmit attach" shared "$(json "$(status_json)" '.[0].xmit.attach')"
	report xmit_switch_production "$(run_said)"
	run vnetctl -n "$NS" detach "$DEV"
	expect "detach exit" 0 "$RUN_RC"
	case_cleanup
}

# --- main ---------------------------------------------------------------------------

ksft_args "$@"
attach_main test_attach_xmit "$VNETCTL_TESTING"
