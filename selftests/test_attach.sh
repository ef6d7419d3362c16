#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Integration tests of vnetctl (docs/cli-contract.md) on real multi-queue
# taps.  Every case runs in its own network namespace with its own tap
# (unique names: pins are global under /sys/fs/bpf/vnet/DEV) and plays the
# guest with build/selftests/tapwrite.  Needs root, jq, bpftool, iproute2.
#
#   selftests/test_attach.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose: $q, $c are jq variables
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

KSFT_PREFIX=attach

ALL_CASES="attach default frames tcp reattach foreign foreign_netns samename samename_cmds pindir gone cli env watch tchook xmit_two xmit_parallel xmit_gc xmit_pertap"
CLASSES="urgent push ack other malformed"
NQ=2

# new_case CASE: fresh netns $NS with a fresh 2-queue tap $DEV
new_case()
{
	DEV=$(rand_tap)
	ns_create "$1" && tap_create "$NS" "$DEV"
}

# The XDP-specific cases attach with --tx-hook xdp (the default is tc
# ingress, docs/benchmarks.md); case_default checks the default.
attach()
{
	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp
	[ "$RUN_RC" -eq 0 ]
}

status_json()
{
	vnetctl -n "$NS" -j status "$DEV" 2>/dev/null
}

stats_json()
{
	vnetctl -n "$NS" -j stats "$DEV" 2>/dev/null
}

# ip_xdp_id NS DEV: the id of the XDP program ip link shows on DEV, or empty
ip_xdp_id()
{
	ip -n "$1" -d link show dev "$2" 2>/dev/null |
		sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -n1
}

# bpftool_net_xdp NS DEV: the id of the XDP program bpftool net lists on DEV
bpftool_net_xdp()
{
	ip netns exec "$1" bpftool -j net 2>/dev/null |
		jq -r --arg d "$2" '.[0].xdp[]? | select(.devname == $d) | .id' 2>/dev/null
}

# status_links STATUS_JSON: every link id a status document names
status_links()
{
	json "$1" '[.. | objects | .link_id? | select(. != null and . > 0)] | .[]'
}

# links_alive ID...: the ids of those links that still exist
links_alive()
{
	local id

	for id in "$@"; do
		link_exists "$id" && printf '%s ' "$id"
	done
}

link_exists()
{
	bpftool link show id "$1" >/dev/null 2>&1
}

prog_name()
{
	bpftool -j prog show id "$1" 2>/dev/null | jq -r '.name' 2>/dev/null
}

# --- 1: attach -------------------------------------------------------------

case_attach()
{
	local st xdp_prog xdp_link tc_prog tc_link dump mode missing="" p

	new_case attach || { fail attach_setup "cannot create netns/tap"; return; }
	if ! attach; then
		fail attach_rc "$(run_said)"
		return
	fi
	pass attach_rc

	st=$(status_json)
	expect "status -j parses" yes "$(json_ok "$st" && echo yes || echo no)"
	expect "ifname" "$DEV" "$(json "$st" '.[0].ifname')"
	expect present true "$(json "$st" '.[0].present')"
	expect tx_hook xdp "$(json "$st" '.[0].tx_hook')"
	expect pin_dir "$PIN_ROOT/$DEV" "$(json "$st" '.[0].pin_dir')"
	xdp_prog=$(json "$st" '.[0].xdp.prog_id // 0')
	xdp_link=$(json "$st" '.[0].xdp.link_id // 0')
	tc_prog=$(json "$st" '.[0].tc_egress.prog_id // 0')
	tc_link=$(json "$st" '.[0].tc_egress.link_id // 0')
	expect "xdp.prog_id > 0" yes "$(positive "$xdp_prog" && echo yes || echo "no ($xdp_prog)")"
	expect "xdp.link_id > 0" yes "$(positive "$xdp_link" && echo yes || echo "no ($xdp_link)")"
	expect "tc_egress.prog_id > 0" yes "$(positive "$tc_prog" && echo yes || echo "no ($tc_prog)")"
	expect "tc_egress.link_id > 0" yes "$(positive "$tc_link" && echo yes || echo "no ($tc_link)")"
	expect "xdp.mode" native "$(json "$st" '.[0].xdp.mode')"
	expect "tc_ingress" null "$(json "$st" '.[0].tc_ingress')"
	report attach_status "status: $st"

	mode=$(stat -c %a "$PIN_ROOT/$DEV" 2>/dev/null)
	expect "pin dir mode" 700 "${mode:-missing}"
	for p in stats queues config info link_xdp link_tc_egress; do
		[ -e "$PIN_ROOT/$DEV/$p" ] || missing+=" $p"
	done
	expect "missing pins" "" "$missing"
	report attach_pins

	dump=$(bpftool -j map dump pinned "$PIN_ROOT/$DEV/stats" 2>&1)
	missing=""
	for p in '"urgent"' '"push"' '"ack"' '"other"' '"malformed"' '"packets"' '"bytes"'; do
		grep -q "$p" <<<"$dump" || missing+=" $p"
	done
	expect "field names missing from bpftool -j map dump (BTF)" "" "$missing"
	report attach_btf

	# vnetctl has exited: the attachment must still be there
	expect "ip link xdp prog id" "$xdp_prog" "$(ip_xdp_id "$NS" "$DEV")"
	expect "bpftool net xdp prog id" "$xdp_prog" "$(bpftool_net_xdp "$NS" "$DEV")"
	expect "xdp link $xdp_link exists" yes "$(link_exists "$xdp_link" && echo yes || echo no)"
	expect "tc egress link $tc_link exists" yes "$(link_exists "$tc_link" && echo yes || echo no)"
	expect "tc egress link prog" "$tc_prog" "$(bpftool -j link show id "$tc_link" 2>/dev/null | jq -r '.prog_id' 2>/dev/null)"
	report attach_outlives_vnetctl
	case_cleanup
}

# --- 2: frames through two queues --------------------------------------------

# check_counts NAME SENT_JSON STATS_JSON DUMP: every (queue, class) counter
# of the tx direction is what tapwrite wrote, in vnetctl and in the map
check_counts()
{
	local name=$1 sent=$2 stats=$3 dump=$4 q c ep eb queues

	for q in $(seq 0 $((NQ - 1))); do
		for c in $CLASSES; do
			ep=$(json "$sent" '[.sent[] | select(.queue == $q and .vnet_class == $c) | .count] | add // 0' --argjson q "$q" --arg c "$c")
			eb=$(json "$sent" '[.sent[] | select(.queue == $q and .vnet_class == $c) | .bytes] | add // 0' --argjson q "$q" --arg c "$c")
			expect "vnetctl q$q tx $c packets" "$ep" "$(vnet_stat "$stats" tx "$q" "$c")"
			expect "vnetctl q$q tx $c bytes" "$eb" "$(vnet_stat "$stats" tx "$q" "$c" bytes)"
			expect "map q$q tx $c packets" "$ep" "$(map_stat "$dump" tx "$q" "$c")"
			expect "map q$q tx $c bytes" "$eb" "$(map_stat "$dump" tx "$q" "$c" bytes)"
		done
	done
	# nothing anywhere else
	queues=$(json "$stats" '[.queues[] | select(.dir == "tx" and .queue >= $n) | .queue] | join(",")' --argjson n "$NQ")
	expect "tx queues >= $NQ listed" "" "$queues"
	report "$name"
}

case_frames()
{
	local sent stats dump st

	new_case frames || { fail frames_setup "cannot create netns/tap"; return; }
	attach || { fail frames_attach "$(run_said)"; case_cleanup; return; }
	run "$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ \
		send 0 urgent 10 send 0 push 5 send 1 ack 7 send 1 other 3 \
		send 1 malformed 2 send 0 gso 1
	if [ "$RUN_RC" -ne 0 ]; then
		fail frames_tapwrite "$(run_said)"
		case_cleanup
		return
	fi
	sent=$RUN_OUT
	echo "# tapwrite: $sent"
	# the frames tapwrite must have sent, checked independently of its report
	expect "q0 urgent (10 + 1 gso)" 11 "$(json "$sent" '[.sent[] | select(.queue == 0 and .vnet_class == "urgent") | .count] | add')"
	report frames_expected

	stats=$(stats_json)
	dump=$(map_dump "$DEV" 2>/dev/null)
	echo "# vnetctl -j stats: $stats"
	check_counts frames_counts "$sent" "$stats" "$dump"

	st=$(status_json)
	expect "queues_seen.tx" "[0,1]" "$(json "$st" '.[0].queues_seen.tx' -c)"
	expect "queues_seen.rx" "[]" "$(json "$st" '.[0].queues_seen.rx' -c)"
	report frames_queues_seen
	case_cleanup
}

# --- 3: real TCP from the netns to the "guest" ------------------------------------

# merge_tool_json DOC...: tapwrite tcp reports summed per queue, same shape
merge_tool_json()
{
	printf '%s\n' "$@" | jq -s -c --argjson n "$NQ" '
		def merge(k): [range(0; $n) as $q |
			[.[] | .[k][] | select(.queue == $q) | del(.queue)] |
			reduce .[] as $e ({};
				reduce ($e | keys[]) as $key (.; .[$key] += $e[$key])) |
			{queue: $q} + .];
		{rx: merge("rx"), tx: merge("tx")}'
}

# Real TCP from the host to the "guest": one flow whose guest writes into
# queue 0, then one into queue 1.  tun sends a flow's frames to the queue
# the guest last wrote it from (automq; the SYN-ACK may go elsewhere: it is
# sent before tun learns the flow), and vnet must count every frame the
# guest reads at the queue fd it read it from.
case_tcp()
{
	local out stats dump q c tool vn totals_t totals_v line gq
	local port=$((20000 + RANDOM % 20000)) outs=()

	new_case tcp || { fail tcp_setup "cannot create netns/tap"; return; }
	tap_addr "$NS" "$DEV" || { fail tcp_setup "cannot address $DEV"; case_cleanup; return; }
	attach || { fail tcp_attach "$(run_said)"; case_cleanup; return; }
	for gq in 0 1; do
		run "$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ -t 20 tcp $gq $((port + gq)) 262144
		echo "# tapwrite tcp (guest queue $gq): $RUN_OUT"
		if [ "$RUN_RC" -ne 0 ] || [ "$(json "$RUN_OUT" '.complete')" != true ]; then
			fail tcp_transfer "guest queue $gq: $(run_said)"
			case_cleanup
			return
		fi
		outs+=("$RUN_OUT")
	done
	pass tcp_transfer
	out=$(merge_tool_json "${outs[@]}")
	echo "# rx queue source: $(json "$(status_json)" '.[0].rx_queue_source // "not reported"')"
	stats=$(stats_json)
	dump=$(map_dump "$DEV" 2>/dev/null)
	echo "# vnetctl -j stats: $stats"

	for q in $(seq 0 $((NQ - 1))); do
		line="# rx q$q: tool saw"
		for c in frames $CLASSES gso; do
			line+=" $c=$(json "$out" '.rx[] | select(.queue == $q) | .[$c]' --argjson q "$q" --arg c "$c")"
		done
		line+="; vnet counted"
		for c in $CLASSES; do
			line+=" $c=$(vnet_stat "$stats" rx "$q" "$c")"
		done
		echo "$line"
	done

	# the host's frames: totals over queues (independent of attribution)
	for c in $CLASSES; do
		tool=$(json "$out" '[.rx[] | .[$c]] | add' --arg c "$c")
		totals_v=$(json "$stats" '[.queues[] | select(.dir == "rx") | .[$c].packets] | add // 0' --arg c "$c")
		expect "rx $c packets, all queues" "$tool" "$totals_v"
	done
	totals_t=$(json "$out" '[.rx[].bytes] | add')
	totals_v=$(json "$stats" '[.queues[] | select(.dir == "rx") | (.urgent, .push, .ack, .other, .malformed) | .bytes] | add // 0')
	expect "rx bytes, all queues" "$totals_t" "$totals_v"
	totals_t=$(json "$out" '[.rx[] | .push + .urgent] | add')
	expect "host sent data frames" yes "$(positive "$totals_t" && echo yes || echo no)"
	report tcp_rx_totals

	# per queue: the queue each frame came out of
	for q in $(seq 0 $((NQ - 1))); do
		for c in $CLASSES; do
			tool=$(json "$out" '.rx[] | select(.queue == $q) | .[$c]' --argjson q "$q" --arg c "$c")
			vn=$(vnet_stat "$stats" rx "$q" "$c")
			expect "rx q$q $c packets (tool read it from queue fd $q)" "$tool" "$vn"
			expect "map rx q$q $c packets" "$tool" "$(map_stat "$dump" rx "$q" "$c")"
		done
		tool=$(json "$out" '.rx[] | select(.queue == $q) | .bytes' --argjson q "$q")
		vn=$(json "$stats" '[.queues[] | select(.dir == "rx" and .queue == $q) | (.urgent, .push, .ack, .other, .malformed) | .bytes] | add // 0' --argjson q "$q")
		expect "rx q$q bytes" "$tool" "$vn"
	done
	report tcp_rx_per_queue

	# the guest's frames (SYN, ACKs, FIN)
	for q in $(seq 0 $((NQ - 1))); do
		for c in $CLASSES; do
			tool=$(json "$out" '.tx[] | select(.queue == $q) | .[$c]' --argjson q "$q" --arg c "$c")
			expect "tx q$q $c packets" "$tool" "$(vnet_stat "$stats" tx "$q" "$c")"
		done
		tool=$(json "$out" '.tx[] | select(.queue == $q) | .bytes' --argjson q "$q")
		vn=$(json "$stats" '[.queues[] | select(.dir == "tx" and .queue == $q) | (.urgent, .push, .ack, .other, .malformed) | .bytes] | add // 0' --argjson q "$q")
		expect "tx q$q bytes" "$tool" "$vn"
	done
	report tcp_tx_per_queue
	case_cleanup
}

# --- 4: attach twice, detach, re-attach --------------------------------------------

case_reattach()
{
	local st xdp_prog xdp_link tc_prog tc_link stats sent net links

	new_case reattach || { fail reattach_setup "cannot create netns/tap"; return; }
	attach || { fail reattach_attach "$(run_said)"; case_cleanup; return; }
	st=$(status_json)
	xdp_prog=$(json "$st" '.[0].xdp.prog_id // 0')
	xdp_link=$(json "$st" '.[0].xdp.link_id // 0')
	tc_prog=$(json "$st" '.[0].tc_egress.prog_id // 0')
	tc_link=$(json "$st" '.[0].tc_egress.link_id // 0')
	links=$(status_links "$st" | tr '\n' ' ')

	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp
	expect "second attach exit" 0 "$RUN_RC"
	expect "says 'already attached'" yes "$(grep -qi 'already attached' <<<"$RUN_OUT$RUN_ERR" && echo yes || echo no)"
	st=$(status_json)
	expect "xdp prog id unchanged" "$xdp_prog" "$(json "$st" '.[0].xdp.prog_id')"
	expect "tc egress prog id unchanged" "$tc_prog" "$(json "$st" '.[0].tc_egress.prog_id')"
	report reattach_idempotent "$(run_said)"

	"$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 urgent 3 >/dev/null

	run vnetctl -n "$NS" detach "$DEV"
	expect "detach exit" 0 "$RUN_RC"
	expect "pins gone" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	expect "ip link xdp" "" "$(ip_xdp_id "$NS" "$DEV")"
	expect "bpftool net xdp" "" "$(bpftool_net_xdp "$NS" "$DEV")"
	net=$(ip netns exec "$NS" bpftool net 2>&1)
	expect "bpftool net mentions $DEV" no "$(grep -q "$DEV" <<<"$net" && echo yes || echo no)"
	# bpftool 7.1 does not list tcx in `bpftool net`: check the links went
	expect "xdp link $xdp_link gone" yes "$(link_exists "$xdp_link" && echo no || echo yes)"
	expect "tc egress link $tc_link gone" yes "$(link_exists "$tc_link" && echo no || echo yes)"
	# shellcheck disable=SC2086 # a list of ids
	expect "links of the attachment ($links) still alive" "" "$(links_alive $links)"
	expect "tc egress prog $tc_prog gone" yes "$(bpftool prog show id "$tc_prog" >/dev/null 2>&1 && echo no || echo yes)"
	report reattach_detach "$(run_said)"

	attach
	expect "re-attach exit" 0 "$RUN_RC"
	st=$(status_json)
	expect present true "$(json "$st" '.[0].present')"
	expect "xdp attached" yes "$(positive "$(json "$st" '.[0].xdp.prog_id')" && echo yes || echo no)"
	stats=$(stats_json)
	expect "stats -j parses" yes "$(json_ok "$stats" && echo yes || echo no)"
	expect "counters after re-attach (sum)" 0 "$(json "$stats" '[.queues[] | (.urgent, .push, .ack, .other, .malformed) | .packets] | add // 0')"
	report reattach_fresh "$(run_said) stats: $stats"

	sent=$("$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 1 push 4 send 0 ack 2)
	check_counts reattach_counts "$sent" "$(stats_json)" "$(map_dump "$DEV" 2>/dev/null)"
	case_cleanup
}

# --- 5: a foreign XDP program ------------------------------------------------------

case_foreign()
{
	local obj=$OUT/bpf/bench_empty.bpf.o before st id

	new_case foreign || { fail foreign_setup "cannot create netns/tap"; return; }
	if ! ip -n "$NS" link set dev "$DEV" xdp obj "$obj" sec xdp 2>"$VNET_TMP/ip.err"; then
		skip foreign "ip link set xdp obj failed: $(head -c 200 "$VNET_TMP/ip.err")"
		case_cleanup
		return
	fi
	before=$(ip_xdp_id "$NS" "$DEV")
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

	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp --force
	expect "attach --force exit" 0 "$RUN_RC"
	st=$(status_json)
	id=$(json "$st" '.[0].xdp.prog_id // 0')
	expect "status xdp prog is what ip link shows" "$id" "$(ip_xdp_id "$NS" "$DEV")"
	expect "xdp prog replaced" yes "$([ "$id" != "$before" ] && positive "$id" && echo yes || echo no)"
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

# --- 5b: a foreign XDP program, and vnet on the same ifindex in another netns --

# Every fresh netns numbers its first device 2, so taps in different
# namespaces share ifindexes: --force must take the foreign program off
# DEV, not an XDP link that has DEV's ifindex in another namespace.
case_foreign_netns()
{
	local obj=$OUT/bpf/bench_empty.bpf.o ns_a dev_a st_a xdp_a link_a before st id
	local idx_a idx_b

	new_case fna || { fail foreign_netns_setup "cannot create netns/tap"; return; }
	ns_a=$NS
	dev_a=$DEV
	attach || { fail foreign_netns_attach "$(run_said)"; return; }
	st_a=$(status_json)
	xdp_a=$(json "$st_a" '.[0].xdp.prog_id')
	link_a=$(json "$st_a" '.[0].xdp.link_id')

	new_case fnb || { fail foreign_netns_setup "cannot create netns/tap"; return; }
	if ! ip -n "$NS" link set dev "$DEV" xdp obj "$obj" sec xdp 2>"$VNET_TMP/ip.err"; then
		skip foreign_netns "ip link set xdp obj failed: $(head -c 200 "$VNET_TMP/ip.err")"
		return
	fi
	before=$(ip_xdp_id "$NS" "$DEV")
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

	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp --force
	expect "attach --force exit" 0 "$RUN_RC"
	st=$(status_json)
	id=$(json "$st" '.[0].xdp.prog_id // 0')
	expect "$DEV: status xdp prog is what ip link shows" "$id" "$(ip_xdp_id "$NS" "$DEV")"
	expect "$DEV: foreign prog $before replaced" yes "$([ "$id" != "$before" ] && positive "$id" && echo yes || echo no)"
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

	new_case sna || { fail samename_setup "cannot create netns/tap"; return; }
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

# refused CMD...: the command (in $NS) exits 1 and says why
refused()
{
	run vnetctl "$@"
	expect "vnetctl $* refused: exit" 1 "$RUN_RC"
	expect "vnetctl $*: the error names the other namespace" yes "$(grep -q 'another network namespace' <<<"$RUN_ERR" && echo yes || echo no)"
	expect "vnetctl $*: nothing on stdout" "" "$RUN_OUT"
}

# tun_rx_frames NS DEV: the tap's own rx-frames (ethtool -c)
tun_rx_frames()
{
	ip netns exec "$1" ethtool -c "$2" 2>/dev/null | sed -n 's/^rx-frames: *//p'
}

# Every command acts on the device of the namespace it names, or refuses:
# DEV attached in netns A, another DEV (not attached) in netns B.
case_samename_cmds()
{
	local ns_a st tx0 tap0 tun0

	new_case snca || { fail samename_cmds_setup "cannot create netns/tap"; return; }
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

	new_case pind || { fail pindir_setup "cannot create netns/tap"; return; }
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

# dev_gone DEV: vnetctl reports DEV as not present
dev_gone()
{
	[ "$(vnetctl -j status "$1" 2>/dev/null | jq -r '.[0].present' 2>/dev/null)" = false ]
}

# --- 6: the device goes away --------------------------------------------------------------

case_gone()
{
	local keep st links

	new_case gone || { fail gone_setup "cannot create netns/tap"; return; }
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

# --- 7: CLI errors and exit codes ----------------------------------------------------------

# cli_expect NAME RC PATTERN CMD...: CMD exits RC and stdout+stderr match
# the (case-insensitive, extended) PATTERN
cli_expect()
{
	local name=$1 rc=$2 pat=$3

	shift 3
	run "$@"
	expect "exit" "$rc" "$RUN_RC"
	if [ -n "$pat" ]; then
		expect "output matches /$pat/" yes "$(grep -Eqi -- "$pat" <<<"$RUN_OUT$RUN_ERR" && echo yes || echo no)"
	fi
	report "$name" "$(run_said) [vnetctl ${*:2}]"
}

case_cli()
{
	local veth st

	new_case cli || { fail cli_setup "cannot create netns/tap"; return; }
	veth=$(rand_tap)
	ip -n "$NS" link add "$veth" type veth peer name "${veth}p"
	_case_taps+=("$NS $veth")

	cli_expect cli_no_such_device 1 'no such' vnetctl -n "$NS" attach vtnosuchdev0
	expect "Error: prefix" yes "$(grep -q '^Error: ' <<<"$RUN_ERR" && echo yes || echo no)"
	report cli_error_prefix "$(run_said)"
	cli_expect cli_not_a_tap 1 'not a tap' vnetctl -n "$NS" attach "$veth"
	expect "no pins for the veth" yes "$(pins_gone "$veth" && echo yes || echo no)"
	report cli_not_a_tap_no_pins
	cli_expect cli_no_such_netns 1 '' vnetctl -n vnet-t-nosuchns-$$ attach "$DEV"
	cli_expect cli_unknown_command 2 '' vnetctl frobnicate
	cli_expect cli_unknown_option 2 '' vnetctl --frobnicate status
	cli_expect cli_missing_argument 2 '' vnetctl attach
	cli_expect cli_stats_missing_argument 2 '' vnetctl stats
	cli_expect cli_extra_argument 2 '' vnetctl -n "$NS" attach "$DEV" extra
	cli_expect cli_bad_tx_hook 2 'bogus' vnetctl -n "$NS" attach "$DEV" --tx-hook bogus
	attach || fail cli_attach "$(run_said)"
	cli_expect cli_bad_queue_word 2 'abc' vnetctl -n "$NS" stats "$DEV" --queue abc
	cli_expect cli_bad_queue_negative 2 "'-1'" vnetctl -n "$NS" stats "$DEV" --queue -1
	cli_expect cli_bad_queue_range 2 '256' vnetctl -n "$NS" stats "$DEV" --queue 256
	cli_expect cli_bad_watch 2 "'x'" vnetctl -n "$NS" stats "$DEV" --watch x
	cli_expect cli_good_queue 0 '' vnetctl -n "$NS" -j stats "$DEV" --queue 1
	cli_expect cli_help 0 'usage' vnetctl --help
	cli_expect cli_help_short 0 'usage' vnetctl -h
	cli_expect cli_help_attach 0 'attach' vnetctl help attach
	expect "help attach is usage" yes "$(grep -qi 'usage' <<<"$RUN_OUT" && echo yes || echo no)"
	report cli_help_attach_usage "$(run_said)"
	cli_expect cli_help_unknown 2 '' vnetctl help frobnicate
	cli_expect cli_version 0 '[0-9]' vnetctl -V
	cli_expect cli_prefix_ambiguous 2 '' vnetctl -n "$NS" st "$DEV"
	cli_expect cli_prefix_stat_ambiguous 2 '' vnetctl -n "$NS" stat "$DEV"
	cli_expect cli_prefix_unique 0 '' vnetctl -n "$NS" -j statu "$DEV"
	expect "statu = status" "$DEV" "$(json "$RUN_OUT" '.[0].ifname')"
	report cli_prefix_is_status "$(run_said)"

	"$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 push 1 >/dev/null
	run vnetctl -n "$NS" -j status "$DEV"
	expect "status -j exit" 0 "$RUN_RC"
	expect "status -j parses" yes "$(json_ok "$RUN_OUT" && echo yes || echo no)"
	expect "status -j is an array" array "$(json "$RUN_OUT" 'type')"
	report cli_status_json "$(run_said)"
	run vnetctl -n "$NS" -j status
	expect "status -j (all) exit" 0 "$RUN_RC"
	expect "status -j (all) is an array" array "$(json "$RUN_OUT" 'type')"
	expect "status -j (all) lists $DEV" yes "$(json "$RUN_OUT" 'any(.[]; .ifname == $d)' --arg d "$DEV" | sed 's/true/yes/')"
	report cli_status_all_json "$(run_said)"
	run vnetctl -n "$NS" -j stats "$DEV"
	expect "stats -j exit" 0 "$RUN_RC"
	expect "stats -j parses" yes "$(json_ok "$RUN_OUT" && echo yes || echo no)"
	expect "stats ifname" "$DEV" "$(json "$RUN_OUT" '.ifname')"
	expect "q0 tx push" 1 "$(vnet_stat "$RUN_OUT" tx 0 push)"
	report cli_stats_json "$(run_said)"
	run vnetctl -n "$NS" -p stats "$DEV"
	expect "stats -p exit" 0 "$RUN_RC"
	expect "stats -p parses" yes "$(json_ok "$RUN_OUT" && echo yes || echo no)"
	expect "stats -p is indented" yes "$([ "$(wc -l <<<"$RUN_OUT")" -gt 1 ] && echo yes || echo no)"
	report cli_pretty_json "$(run_said)"
	cli_expect cli_status_plain 0 "$DEV" vnetctl -n "$NS" status "$DEV"
	cli_expect cli_stats_plain 0 'push' vnetctl -n "$NS" stats "$DEV"
	cli_expect cli_status_not_attached 1 '' vnetctl -n "$NS" stats vtnosuchdev0
	case_cleanup
}

# --- the default guest-TX hook: tc ingress, no XDP; foreign XDP untouched ----

case_default()
{
	local obj=$OUT/bpf/bench_empty.bpf.o before st sent

	new_case default || { fail default_setup "cannot create netns/tap"; return; }
	if ! ip -n "$NS" link set dev "$DEV" xdp obj "$obj" sec xdp 2>"$VNET_TMP/ip.err"; then
		fail default_setup "ip link set xdp obj failed: $(head -c 200 "$VNET_TMP/ip.err")"
		case_cleanup
		return
	fi
	before=$(ip_xdp_id "$NS" "$DEV")
	run vnetctl -n "$NS" attach "$DEV"
	expect "attach exit" 0 "$RUN_RC"
	st=$(status_json)
	expect tx_hook tc "$(json "$st" '.[0].tx_hook')"
	expect "vnet xdp" null "$(json "$st" '.[0].xdp')"
	expect "tc_ingress.link_id > 0" yes "$(positive "$(json "$st" '.[0].tc_ingress.link_id')" && echo yes || echo no)"
	expect "foreign XDP program untouched" "$before" "$(ip_xdp_id "$NS" "$DEV")"
	report default_hook_is_tc "$(run_said) status: $st"

	sent=$("$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 urgent 3 send 1 push 2 \
		send 1 gso 1)
	check_counts default_counts "$sent" "$(stats_json)" "$(map_dump "$DEV" 2>/dev/null)"
	case_cleanup
}

# --- errors from the environment: no permission, no bpffs ---------------------

case_env()
{
	local nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"

	new_case env || { fail env_setup "cannot create netns/tap"; return; }
	attach || { fail env_attach "$(run_said)"; case_cleanup; return; }

	# not root: every command says so, and nothing changes
	cli_expect env_noroot_attach 1 'needs root' $nobody "$VNETCTL" -n "$NS" attach "$DEV"
	cli_expect env_noroot_status 1 'needs root' $nobody "$VNETCTL" status "$DEV"
	cli_expect env_noroot_status_all 1 'needs root' $nobody "$VNETCTL" status
	cli_expect env_noroot_stats 1 'needs root' $nobody "$VNETCTL" stats "$DEV"
	cli_expect env_noroot_detach 1 'needs root' $nobody "$VNETCTL" detach "$DEV"
	expect "still attached" true "$(json "$(status_json)" '.[0].present')"
	report env_noroot_changes_nothing "$(run_said)"

	# a mount namespace without bpffs (what `ip netns exec` gives): refused
	# with the fix, not a private bpffs that would vanish with the command
	cli_expect env_no_bpffs 1 "bpffs is not mounted.*vnetctl -n $NS " \
		unshare -m --propagation private sh -c \
		"while umount /sys/fs/bpf 2>/dev/null; do :; done; exec $VNETCTL -n $NS attach $DEV"
	cli_expect env_no_bpffs_status 1 'not attached|bpffs' \
		unshare -m --propagation private sh -c \
		"while umount /sys/fs/bpf 2>/dev/null; do :; done; exec $VNETCTL status $DEV"
	case_cleanup
}

# --- 8: stats --watch -----------------------------------------------------------

case_watch()
{
	local lines n i bad="" pid pps

	new_case watch || { fail watch_setup "cannot create netns/tap"; return; }
	attach || { fail watch_attach "$(run_said)"; case_cleanup; return; }
	"$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 urgent 5 >/dev/null
	# traffic through the whole watch: 20 urgent frames every 100 ms
	(
		for i in $(seq 1 30); do
			"$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 urgent 20 >/dev/null || break
			sleep 0.1
		done
	) &
	pid=$!
	run timeout 20 "$VNETCTL" -n "$NS" -j stats "$DEV" --watch 1 --count 2
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	lines=$RUN_OUT
	n=$(grep -c . <<<"$lines")
	expect "exit" 0 "$RUN_RC"
	expect "lines" 2 "$n"
	i=0
	while IFS= read -r l; do
		i=$((i + 1))
		json_ok "$l" || { bad+=" line $i does not parse;"; continue; }
		[ "$(json "$l" '.interval_s // empty')" != "" ] || bad+=" line $i has no interval_s;"
		[ "$(json "$l" '.ifname')" = "$DEV" ] || bad+=" line $i ifname;"
		positive "$(json "$l" '[.queues[] | select(.rates.urgent.pps != null and .rates.urgent.bps != null)] | length')" ||
			bad+=" line $i has no rates.urgent.pps/bps;"
		pps=$(json "$l" '[.queues[] | select(.dir == "tx" and .queue == 0) | .rates.urgent.pps] | add // 0')
		awk -v p="$pps" 'BEGIN { exit !(p > 0) }' || bad+=" line $i q0 tx urgent pps=$pps, want > 0;"
	done < <(grep . <<<"$lines")
	expect "problems" "" "$bad"
	report watch_json "$(run_said)"
	case_cleanup
}

# --- 9: --tx-hook tc ------------------------------------------------------------------

case_tchook()
{
	local st sent missing="" p

	new_case tchook || { fail tchook_setup "cannot create netns/tap"; return; }
	run vnetctl -n "$NS" attach "$DEV" --tx-hook tc
	if [ "$RUN_RC" -ne 0 ]; then
		fail tchook_attach "$(run_said)"
		case_cleanup
		return
	fi
	st=$(status_json)
	expect tx_hook tc "$(json "$st" '.[0].tx_hook')"
	expect xdp null "$(json "$st" '.[0].xdp')"
	expect "tc_ingress.link_id > 0" yes "$(positive "$(json "$st" '.[0].tc_ingress.link_id')" && echo yes || echo no)"
	expect "tc_egress.link_id > 0" yes "$(positive "$(json "$st" '.[0].tc_egress.link_id')" && echo yes || echo no)"
	expect "ip link xdp" "" "$(ip_xdp_id "$NS" "$DEV")"
	for p in stats queues config info link_tc_ingress link_tc_egress; do
		[ -e "$PIN_ROOT/$DEV/$p" ] || missing+=" $p"
	done
	expect "missing pins" "" "$missing"
	expect "link_xdp pinned" no "$([ -e "$PIN_ROOT/$DEV/link_xdp" ] && echo yes || echo no)"
	report tchook_status "status: $st"

	sent=$("$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 urgent 4 send 1 push 3 \
		send 1 ack 2 send 0 other 1 send 1 malformed 1 send 1 gso 1)
	check_counts tchook_counts "$sent" "$(stats_json)" "$(map_dump "$DEV" 2>/dev/null)"

	run vnetctl -n "$NS" detach "$DEV"
	expect "detach exit" 0 "$RUN_RC"
	expect "pins gone" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	report tchook_detach "$(run_said)"
	case_cleanup
}

# --- 10: the shared net_dev_start_xmit dispatcher -------------------------------------

XMIT_DIR=$PIN_ROOT/net_dev_start_xmit

# xmit_tap CASE: a fresh netns with an addressed tap; sets NS, DEV
xmit_tap()
{
	DEV=$(rand_tap)
	ns_create "$1" && tap_create "$NS" "$DEV" && tap_addr "$NS" "$DEV"
}

# xmit_tcp NS DEV GUEST_QUEUE: host -> guest TCP through DEV (tapwrite tcp);
# its report in RUN_OUT, false if the transfer did not complete
xmit_tcp()
{
	run "$TAPWRITE" -n "$1" -d "$2" -q $NQ -t 20 tcp "$3" $((20000 + RANDOM % 20000)) 65536
	[ "$RUN_RC" -eq 0 ] && [ "$(json "$RUN_OUT" '.complete')" = true ]
}

# rx_expect WHAT TOOL_JSON STATS_JSON: vnet counted, per queue and class,
# exactly the frames the guest read from that queue's fd (packets and
# bytes), and the host sent some
rx_expect()
{
	local what=$1 tool=$2 stats=$3 q c

	for q in $(seq 0 $((NQ - 1))); do
		for c in $CLASSES; do
			expect "$what rx q$q $c packets" \
				"$(json "$tool" '[.rx[] | select(.queue == $q) | .[$c]] | add // 0' --argjson q "$q" --arg c "$c")" \
				"$(vnet_stat "$stats" rx "$q" "$c")"
		done
		expect "$what rx q$q bytes" \
			"$(json "$tool" '[.rx[] | select(.queue == $q) | .bytes] | add // 0' --argjson q "$q")" \
			"$(json "$stats" '[.queues[] | select(.dir == "rx" and .queue == $q) | (.urgent, .push, .ack, .other, .malformed) | .bytes] | add // 0' --argjson q "$q")"
	done
	expect "$what: the host sent data frames" yes "$(positive "$(json "$tool" '[.rx[] | .push + .urgent] | add')" && echo yes || echo no)"
}

# rx_total STATS_JSON: guest-RX packets counted, all queues and classes
rx_total()
{
	json "$1" '[.queues[] | select(.dir == "rx") | (.urgent, .push, .ack, .other, .malformed) | .packets] | add // 0'
}

# xmit_st NS DEV FILTER: a field of DEV's status
xmit_st()
{
	vnetctl -n "$1" -j status "$2" 2>/dev/null | jq -r ".[0]$3" 2>/dev/null
}

# tp_links FILTER: how many links on net_dev_start_xmit (raw_tracepoint or
# tracing) the jq FILTER (on a link object, $ids an array of program ids)
# selects; IDS... are program ids
tp_links()
{
	local filter=$1

	shift
	bpftool -j link list 2>/dev/null | jq --argjson ids "[$(echo "$@" | tr ' ' ',')]" \
		"[.[] | select((.type == \"raw_tracepoint\" or .type == \"tracing\") and (.tp_name // \"\" | test(\"net_dev_start_xmit\"))) | select($filter)] | length" 2>/dev/null
}

# dispatcher_entries: the ifnames in the shared dispatcher's devs map
dispatcher_entries()
{
	bpftool -j map dump pinned "$XMIT_DIR/devs" 2>/dev/null |
		jq -r '.[] | (.formatted // .) | .value.ifname' 2>/dev/null | sort | tr '\n' ' '
}

# dispatcher_removed DEV...: after the last of our taps went, the shared
# pins are gone -- unless taps of someone else (another test run on this
# host) are still in the dispatcher, which must then hold none of DEV...
dispatcher_removed()
{
	local d entries

	if ! [ -e "$XMIT_DIR" ]; then
		echo yes
		return
	fi
	entries=$(dispatcher_entries)
	for d in "$@"; do
		if grep -qw "$d" <<<"$entries"; then
			echo "no ($d still has an entry: $entries)"
			return
		fi
	done
	if [ -z "$entries" ]; then
		echo "no (pins of an empty dispatcher left in $XMIT_DIR)"
		return
	fi
	echo "yes (kept for other taps: $entries)"
	echo "# dispatcher kept for taps of another run: $entries" >&2
}

# Two taps in two namespaces (so both have ifindex 2): one dispatcher,
# frames to each counted only on its own tap, per queue; detaching one
# keeps the other counting and the dispatcher; the last detach removes it.
case_xmit_two()
{
	local ns_a dev_a ns_b dev_b st_a st_b out_a1 out_a2 out_b before disp link
	local prog_a prog_b idx_a idx_b stats

	xmit_tap xmita || { fail xmit_two_setup "cannot create netns/tap"; return; }
	ns_a=$NS dev_a=$DEV
	xmit_tap xmitb || { fail xmit_two_setup "cannot create netns/tap"; return; }
	ns_b=$NS dev_b=$DEV
	run vnetctl -n "$ns_a" attach "$dev_a"
	[ "$RUN_RC" -eq 0 ] || { fail xmit_two_attach "$(run_said)"; return; }
	run vnetctl -n "$ns_b" attach "$dev_b"
	[ "$RUN_RC" -eq 0 ] || { fail xmit_two_attach "$(run_said)"; return; }

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

# 8 taps, each in its own namespace (all ifindex 2), attached by 8
# concurrent vnetctl processes: all succeed, one dispatcher, 8 slots,
# one program on the tracepoint, and every tap counts its own frames.
case_xmit_parallel()
{
	local i nss=() devs=() pids=() st disp slots progs bad="" stats

	for i in 0 1 2 3 4 5 6 7; do
		xmit_tap "xp$i" || { fail xmit_parallel_setup "cannot create netns/tap"; return; }
		nss+=("$NS")
		devs+=("$DEV")
	done
	for i in 0 1 2 3 4 5 6 7; do
		vnetctl -n "${nss[i]}" attach "${devs[i]}" >"$VNET_TMP/att$i" 2>&1 &
		pids+=($!)
	done
	for i in 0 1 2 3 4 5 6 7; do
		wait "${pids[i]}" || bad+=" ${devs[i]}: rc $? ($(head -c 300 "$VNET_TMP/att$i"));"
	done
	expect "failed attaches" "" "$bad"
	bad=""
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
	pids=() bad=""
	for i in 0 1 2 3 4 5 6 7; do
		vnetctl -n "${nss[i]}" detach "${devs[i]}" >"$VNET_TMP/det$i" 2>&1 &
		pids+=($!)
	done
	for i in 0 1 2 3 4 5 6 7; do
		wait "${pids[i]}" || bad+=" ${devs[i]}: rc $? ($(head -c 300 "$VNET_TMP/det$i"));"
	done
	expect "failed detaches" "" "$bad"
	expect "shared dispatcher removed" yes "$(dispatcher_removed "${devs[@]}")"
	report xmit_parallel_detach
	case_cleanup
}

# gc: a gone device's entry goes with its pins; an entry whose pins were
# removed by hand goes too; then the dispatcher.
case_xmit_gc()
{
	local ns_a dev_a ns_b dev_b

	xmit_tap xgca || { fail xmit_gc_setup "cannot create netns/tap"; return; }
	ns_a=$NS dev_a=$DEV
	xmit_tap xgcb || { fail xmit_gc_setup "cannot create netns/tap"; return; }
	ns_b=$NS dev_b=$DEV
	run vnetctl -n "$ns_a" attach "$dev_a"
	[ "$RUN_RC" -eq 0 ] || { fail xmit_gc_attach "$(run_said)"; return; }
	run vnetctl -n "$ns_b" attach "$dev_b"
	[ "$RUN_RC" -eq 0 ] || { fail xmit_gc_attach "$(run_said)"; return; }

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

# The fallback (the kernel refuses the shared dispatcher), forced: the
# tap's program on its own link, counting per queue, and detach removes it.
case_xmit_pertap()
{
	local st prog link out

	xmit_tap xpt || { fail xmit_pertap_setup "cannot create netns/tap"; return; }
	run env VNET_XMIT_DISPATCH=per-tap timeout 30 "$VNETCTL" -n "$NS" attach "$DEV"
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

# --- main ---------------------------------------------------------------------------

require_root test_attach || exit 0
require_cmd test_attach ip jq bpftool "$VNETCTL" "$TAPWRITE" || exit 0

# shellcheck disable=SC2086 # a list of words
[ $# -gt 0 ] || set -- $ALL_CASES
for c in "$@"; do
	if ! declare -F "case_$c" >/dev/null; then
		fail "$c" "no such case (cases: $ALL_CASES)"
		continue
	fi
	"case_$c"
	case_cleanup # in case the case returned early
done
ksft_exit
