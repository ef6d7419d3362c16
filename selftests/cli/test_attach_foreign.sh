#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Integration tests of vnetctl (see test_attach.sh): programs that are not
# vnet's, taps of the same name in other namespaces, the pin directory,
# taps that go away.  Needs root, jq, bpftool, iproute2.
#
#   selftests/cli/test_attach_foreign.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose: $q, $c are jq variables
# shellcheck disable=SC2016
# shellcheck source=selftests/cli/attach_lib.sh
source "$(dirname "$0")/attach_lib.sh"

ALL_CASES="foreign foreign_netns samename samename_cmds pindir gone"

# --- a foreign XDP program ------------------------------------------------------

# foreign_xdp CASE: bench_empty's XDP program put on $DEV with ip link, its
# id in before; false (CASE skipped) when ip cannot attach it
foreign_xdp()
{
	if ! ip -n "$NS" link set dev "$DEV" xdp obj "$OUT/bpf/bench_empty.bpf.o" sec xdp 2>"$VNET_TMP/ip.err"; then
		skip "$1" "ip link set xdp obj failed: $(head -c 200 "$VNET_TMP/ip.err")"
		return 1
	fi
	before=$(ip_xdp_id "$NS" "$DEV")
}

# force_attach PREFIX BEFORE: attach --tx-hook xdp --force over the foreign
# program BEFORE: exit 0, and the program status shows (id) is the one ip
# link shows on $DEV, not BEFORE (PREFIX starts the checks' names)
force_attach()
{
	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp --force
	expect "attach --force exit" 0 "$RUN_RC"
	id=$(json "$(status_json)" '.[0].xdp.prog_id // 0')
	expect "${1}status xdp prog is what ip link shows" "$id" "$(ip_xdp_id "$NS" "$DEV")"
	expect "${1}foreign prog $2 replaced" yes "$([ "$id" != "$2" ] && positive "$id" && echo yes || echo no)"
}

case_foreign()
{
	local before id

	tap_case foreign || { fail foreign_setup "cannot create netns/tap"; return; }
	foreign_xdp foreign || { case_cleanup; return; }
	expect "foreign program attached" empty_xdp "$(prog_name "$before")"
	report foreign_setup

	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp
	expect "attach exit" 1 "$RUN_RC"
	expect "names empty_xdp" yes "$(grep -q 'empty_xdp' <<<"$RUN_ERR" && echo yes || echo no)"
	expect "names its id $before" yes "$(grep -qw "$before" <<<"$RUN_ERR" && echo yes || echo no)"
	expect "suggests --force" yes "$(grep -q -- '--force' <<<"$RUN_ERR" && echo yes || echo no)"
	expect "starts with Error:" yes "$(grep -q '^Error: ' <<<"$RUN_ERR" && echo yes || echo no)"
	expect "foreign program kept" "$before" "$(ip_xdp_id "$NS" "$DEV")"
	expect "no pins left" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	report foreign_refused "$(run_said)"

	force_attach "" "$before"
	expect "bpftool net xdp prog" "$id" "$(bpftool_net_xdp "$NS" "$DEV")"
	expect "xdp prog name is not empty_xdp" yes "$([ "$(prog_name "$id")" != empty_xdp ] && echo yes || echo no)"
	expect "empty_xdp (id $before) unloaded" yes "$(bpftool prog show id "$before" >/dev/null 2>&1 && echo no || echo yes)"
	report foreign_force "$(run_said)"

	# and it counts
	"$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 1 urgent 2 >/dev/null
	expect "q1 urgent after --force" 2 "$(vnet_stat "$(stats_json)" tx 1 urgent)"
	report foreign_force_counts
	case_cleanup
}

# --- a foreign XDP program, and vnet on the same ifindex in another netns --

# Every fresh netns numbers its first device 2, so taps in different
# namespaces share ifindexes: --force must take the foreign program off
# DEV, not an XDP link that has DEV's ifindex in another namespace.
case_foreign_netns()
{
	local ns_a dev_a st_a xdp_a link_a before id
	local idx_a idx_b

	tap_case fna || { fail foreign_netns_setup "cannot create netns/tap"; return; }
	ns_a=$NS
	dev_a=$DEV
	attach || { fail foreign_netns_attach "$(run_said)"; return; }
	st_a=$(status_json)
	xdp_a=$(json "$st_a" '.[0].xdp.prog_id')
	link_a=$(json "$st_a" '.[0].xdp.link_id')

	tap_case fnb || { fail foreign_netns_setup "cannot create netns/tap"; return; }
	foreign_xdp foreign_netns || return
	idx_a=$(ip netns exec "$ns_a" cat "/sys/class/net/$dev_a/ifindex")
	idx_b=$(ip netns exec "$NS" cat "/sys/class/net/$DEV/ifindex")
	if [ "$idx_a" != "$idx_b" ]; then
		skip foreign_netns "the two taps do not share an ifindex ($idx_a, $idx_b)"
		return
	fi

	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp
	expect "attach exit" 1 "$RUN_RC"
	expect "does not blame link $link_a of $dev_a (netns $ns_a)" no "$(grep -qw "link $link_a" <<<"$RUN_ERR" && echo yes || echo no)"
	report foreign_netns_refused "$(run_said)"

	force_attach "$DEV: " "$before"
	expect "$dev_a (other netns): ip link xdp prog" "$xdp_a" "$(ip_xdp_id "$ns_a" "$dev_a")"
	expect "$dev_a (other netns): xdp link $link_a" "$xdp_a" "$(bpftool -j link show id "$link_a" 2>/dev/null | jq -r '.prog_id' 2>/dev/null)"
	report foreign_netns_force "$(run_said)"
}

# Pins are named by device: a tap of the same name in another netns must
# neither take them over nor remove them (attach and detach refuse), and
# the first tap keeps counting.
case_samename()
{
	local ns_a st links

	tap_case sna || { fail samename_setup "cannot create netns/tap"; return; }
	ns_a=$NS
	run vnetctl -n "$ns_a" attach "$DEV"
	[ "$RUN_RC" -eq 0 ] || { fail samename_attach "$(run_said)"; case_cleanup; return; }
	links=$(status_links "$(vnetctl -n "$ns_a" -j status "$DEV" 2>/dev/null)" | tr '\n' ' ')
	ns_create snb && tap_create "$NS" "$DEV" ||
		{ fail samename_setup "cannot create the second netns/tap"; case_cleanup; return; }

	run vnetctl -n "$NS" attach "$DEV"
	expect "attach of the same name in $NS: exit" 1 "$RUN_RC"
	expect "the error names the other namespace" yes "$(grep -q 'another network namespace' <<<"$RUN_ERR" && echo yes || echo no)"
	# shellcheck disable=SC2086 # a list of ids
	expect "the first tap's links ($links) alive" "$(echo $links)" "$(echo $(links_alive $links))"
	report samename_attach_refused "$(run_said)"

	run vnetctl -n "$NS" detach "$DEV"
	expect "detach of the same name in $NS: exit" 1 "$RUN_RC"
	expect "pins kept" yes "$(pins_exist "$DEV" && echo yes || echo no)"
	st=$(vnetctl -n "$ns_a" -j status "$DEV" 2>/dev/null)
	expect "the first tap still present" true "$(json "$st" '.[0].present')"
	expect "its ifindex in the pins" "$(ip netns exec "$ns_a" cat "/sys/class/net/$DEV/ifindex")" "$(json "$st" '.[0].info.ifindex // .[0].ifindex')"
	report samename_detach_refused "$(run_said)"

	run "$TAPWRITE" -n "$ns_a" -d "$DEV" -q $NQ send 0 urgent 10
	expect "tapwrite into the first tap" 0 "$RUN_RC"
	st=$(vnetctl -n "$ns_a" -j stats "$DEV" 2>/dev/null)
	expect "the first tap counts its frames" 10 "$(vnet_stat "$st" tx 0 urgent)"
	report samename_first_counts "$(run_said) $st"

	run vnetctl -n "$ns_a" detach "$DEV"
	expect "detach where it lives: exit" 0 "$RUN_RC"
	run vnetctl -n "$NS" attach "$DEV"
	expect "then the other netns may attach the name" 0 "$RUN_RC"
	run vnetctl -n "$NS" detach "$DEV"
	report samename_after_detach "$(run_said)"
	case_cleanup
}

# Every command acts on the device of the namespace it names, or refuses:
# DEV attached in netns A, another DEV (not attached) in netns B.
case_samename_cmds()
{
	local ns_a st tx0 tap0 tun0

	tap_case snca || { fail samename_cmds_setup "cannot create netns/tap"; return; }
	ns_a=$NS
	run vnetctl -n "$ns_a" attach "$DEV"
	[ "$RUN_RC" -eq 0 ] || { fail samename_cmds_attach "$(run_said)"; case_cleanup; return; }
	run "$TAPWRITE" -n "$ns_a" -d "$DEV" -q $NQ send 0 urgent 10
	ns_create sncb && tap_create "$NS" "$DEV" ||
		{ fail samename_cmds_setup "cannot create the second netns/tap"; case_cleanup; return; }
	st=$(vnetctl -n "$ns_a" -j coalesce show "$DEV" 2>/dev/null)
	tx0=$(json "$st" '.guest.groups[0].tx_frames')
	tap0=$(json "$st" '.tap.rx_frames')
	tun0=$(tun_rx_frames "$NS" "$DEV")

	refused -n "$NS" stats "$DEV"
	refused -n "$NS" -j stats "$DEV"
	refused -n "$NS" status "$DEV"
	refused -n "$NS" coalesce show "$DEV"
	refused -n "$NS" coalesce set "$DEV" tx-frames 7
	refused -n "$NS" coalesce set "$DEV" tap rx-frames 33
	refused -n "$NS" detach "$DEV"
	report samename_cmds_refused "$(run_said)"

	st=$(vnetctl -n "$ns_a" -j coalesce show "$DEV" 2>/dev/null)
	expect "A's tx-frames unchanged" "$tx0" "$(json "$st" '.guest.groups[0].tx_frames')"
	expect "A's pinned tap rx-frames unchanged" "$tap0" "$(json "$st" '.tap.rx_frames')"
	expect "B's tun rx-frames unchanged" "$tun0" "$(tun_rx_frames "$NS" "$DEV")"
	expect "A's pins kept" yes "$(pins_exist "$DEV" && echo yes || echo no)"
	st=$(vnetctl -n "$ns_a" -j stats "$DEV" 2>/dev/null)
	expect "A's counters, read in A" 10 "$(vnet_stat "$st" tx 0 urgent)"
	report samename_cmds_untouched "$st"

	# a namespace without such a device is refused too (-n names it) ...
	ip -n "$NS" link del "$DEV"
	refused -n "$NS" stats "$DEV"
	refused -n "$NS" coalesce set "$DEV" tx-frames 7
	# ... the host's view of a tap in a netns stays
	run vnetctl stats "$DEV"
	expect "stats from the host" 0 "$RUN_RC"
	report samename_cmds_other "$(run_said)"
	case_cleanup
}

# The pin directory is never reached through a symlink: attach refuses.
case_pindir()
{
	local victim

	tap_case pind || { fail pindir_setup "cannot create netns/tap"; return; }
	victim=$(mktemp -d /tmp/vnet-pindir.XXXXXX)
	chmod 0755 "$victim"
	# a symlink in bpffs at the tap's pin path, to a directory elsewhere
	ln -s "$victim" "$PIN_ROOT/$DEV" 2>/dev/null
	if ! [ -L "$PIN_ROOT/$DEV" ]; then
		fail pindir_setup "cannot make a symlink in $PIN_ROOT"
		rmdir "$victim"; case_cleanup; return
	fi
	run vnetctl -n "$NS" attach "$DEV"
	expect "attach over a symlink: exit" 1 "$RUN_RC"
	expect "the error says what is there" yes "$(grep -q 'not a directory' <<<"$RUN_ERR" && echo yes || echo no)"
	expect "the symlink's target keeps its mode" 755 "$(stat -c %a "$victim")"
	expect "nothing pinned in the target" "" "$(ls -A "$victim")"
	report pindir_symlink "$(run_said)"
	rm -f "$PIN_ROOT/$DEV"
	rm -rf "$victim"
	case_cleanup
}

# --- the device goes away --------------------------------------------------------------

case_gone()
{
	local keep st links

	tap_case gone || { fail gone_setup "cannot create netns/tap"; return; }
	attach || { fail gone_attach "$(run_said)"; case_cleanup; return; }
	# a second tap, present, in the same netns: gc must keep its pins
	keep=$(rand_tap)
	tap_create "$NS" "$keep" && run vnetctl -n "$NS" attach "$keep"

	links=$(status_links "$(status_json)" | tr '\n' ' ')
	ip -n "$NS" link del "$DEV"
	busywait 3000 dev_gone "$DEV"
	st=$(vnetctl -j status "$DEV" 2>/dev/null)
	expect "status -j parses" yes "$(json_ok "$st" && echo yes || echo no)"
	expect "present (host netns view)" false "$(json "$st" '.[] | select(.ifname == $d) | .present' --arg d "$DEV")"
	st=$(vnetctl -n "$NS" -j status "$DEV" 2>/dev/null)
	expect "present (-n $NS)" false "$(json "$st" '.[] | select(.ifname == $d) | .present' --arg d "$DEV")"
	expect "pins still there before gc" yes "$(pins_exist "$DEV" && echo yes || echo no)"
	report gone_status "status: $st"

	run vnetctl gc
	expect "gc exit" 0 "$RUN_RC"
	expect "pins of the gone device removed" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	# shellcheck disable=SC2086 # a list of ids
	expect "links of the gone device ($links) still alive" "" "$(links_alive $links)"
	expect "pins of the present tap $keep (other netns) kept" yes "$(pins_exist "$keep" && echo yes || echo no)"
	st=$(vnetctl -n "$NS" -j status "$keep" 2>/dev/null)
	expect "$keep still present" true "$(json "$st" '.[0].present')"
	report gone_gc "$(run_said)"

	# detach of a gone device removes its pins
	ip -n "$NS" link del "$keep"
	run vnetctl detach "$keep"
	expect "detach exit" 0 "$RUN_RC"
	expect "pins removed" yes "$(pins_gone "$keep" && echo yes || echo no)"
	report gone_detach "$(run_said)"
	case_cleanup
}

# --- main ---------------------------------------------------------------------------

ksft_args "$@"
attach_main test_attach_foreign
