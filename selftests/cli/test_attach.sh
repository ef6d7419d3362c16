#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Integration tests of vnetctl (docs/cli-contract.md) on real multi-queue
# taps: attach and detach, the default hooks, frames and TCP through two
# queues, reattach, the CLI's errors, the environment, watch, tc hooks.
# Every case runs in its own network namespace with its own tap (unique
# names: pins are global under /sys/fs/bpf/vnet/DEV) and plays the guest
# with build/selftests/tapwrite.  Needs root, jq, bpftool, iproute2.
# test_attach_foreign.sh and test_attach_xmit.sh hold the other cases
# (helpers: attach_lib.sh).
#
#   selftests/cli/test_attach.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose: $q, $c are jq variables
# shellcheck disable=SC2016
# shellcheck source=selftests/cli/attach_lib.sh
source "$(dirname "$0")/attach_lib.sh"

ALL_CASES="attach default frames tcp reattach cli env watch tchook shared"

# --- attach -------------------------------------------------------------

case_attach()
{
	local st xdp_prog xdp_link tc_prog tc_link dump mode missing="" p

	tap_case attach || { fail attach_setup "cannot create netns/tap"; return; }
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

# --- frames through two queues --------------------------------------------

case_frames()
{
	local sent stats dump st

	tap_case frames || { fail frames_setup "cannot create netns/tap"; return; }
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

# --- real TCP from the netns to the "guest" ------------------------------------

# queue_bytes_agree TOOL_JSON STATS_JSON DIR Q: the bytes tapwrite counted
# on queue Q in DIR are what `vnetctl -j stats` says (all classes)
queue_bytes_agree()
{
	local tool vn

	tool=$(json "$1" '.[$d][] | select(.queue == $q) | .bytes' --arg d "$3" --argjson q "$4")
	vn=$(json "$2" '[.queues[] | select(.dir == $d and .queue == $q) | (.urgent, .push, .ack, .other, .malformed) | .bytes] | add // 0' --arg d "$3" --argjson q "$4")
	expect "$3 q$4 bytes" "$tool" "$vn"
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

	tap_case tcp || { fail tcp_setup "cannot create netns/tap"; return; }
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
		queue_bytes_agree "$out" "$stats" rx "$q"
	done
	report tcp_rx_per_queue

	# the guest's frames (SYN, ACKs, FIN)
	for q in $(seq 0 $((NQ - 1))); do
		for c in $CLASSES; do
			tool=$(json "$out" '.tx[] | select(.queue == $q) | .[$c]' --argjson q "$q" --arg c "$c")
			expect "tx q$q $c packets" "$tool" "$(vnet_stat "$stats" tx "$q" "$c")"
		done
		queue_bytes_agree "$out" "$stats" tx "$q"
	done
	report tcp_tx_per_queue
	case_cleanup
}

# --- attach twice, detach, re-attach --------------------------------------------

case_reattach()
{
	local st xdp_prog xdp_link tc_prog tc_link stats sent net links

	tap_case reattach || { fail reattach_setup "cannot create netns/tap"; return; }
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

# --- CLI errors and exit codes ----------------------------------------------------------

case_cli()
{
	local veth st

	tap_case cli || { fail cli_setup "cannot create netns/tap"; return; }
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
	cli_expect cli_stats_extra_argument 2 'too many' vnetctl stats "$DEV" extra
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

	tap_case default || { fail default_setup "cannot create netns/tap"; return; }
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

	tap_case env || { fail env_setup "cannot create netns/tap"; return; }
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

# --- stats --watch -----------------------------------------------------------

case_watch()
{
	local lines n i bad="" pid pps

	tap_case watch || { fail watch_setup "cannot create netns/tap"; return; }
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

# --- --tx-hook tc ------------------------------------------------------------------

case_tchook()
{
	local st sent missing="" p

	tap_case tchook || { fail tchook_setup "cannot create netns/tap"; return; }
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

# --- main ---------------------------------------------------------------------------

# --- the classifier shared by a namespace's taps ------------------------------

# the shared classifier's pin directories of this case's namespace
shared_sets()
{
	local ino

	ino=$(ip netns exec "$NS" stat -L -c %i /proc/self/ns/net)
	find "$PIN_ROOT" -maxdepth 1 -name "classifier_ns${ino}_*" -printf '%f\n'
}

# the taps the set SET holds, by ifindex
shared_taps()
{
	bpftool -j map dump pinned "$PIN_ROOT/$1/taps" 2>/dev/null |
		jq -r '[.[] | .formatted.key // .key] | sort | map(tostring) | join(" ")'
}

# Two taps of one namespace run one loaded program, each counting into its
# own maps; a tap with a policy of its own loads its own programs; the set
# goes with its last tap, and gc frees the slot of a tap deleted under it.
case_shared()
{
	local dev_a dev_b dev_c st_a st_b st_c set sent stats_b c q slot

	tap_case shared || { fail shared_setup "cannot create netns/tap"; return; }
	dev_a=$DEV dev_b=$(rand_tap) dev_c=$(rand_tap)
	tap_create "$NS" "$dev_b" && tap_create "$NS" "$dev_c" ||
		{ fail shared_setup "cannot create taps"; return; }
	run vnetctl -n "$NS" attach "$dev_a"
	expect "attach $dev_a" 0 "$RUN_RC"
	run vnetctl -n "$NS" attach "$dev_b"
	expect "attach $dev_b" 0 "$RUN_RC"
	st_a=$(vnetctl -n "$NS" -j status "$dev_a" 2>/dev/null)
	st_b=$(vnetctl -n "$NS" -j status "$dev_b" 2>/dev/null)
	for h in tc_ingress tc_egress xmit; do
		expect "one $h program" "$(json "$st_a" ".[0].$h.prog_id")" \
			"$(json "$st_b" ".[0].$h.prog_id")"
	done
	set=$(shared_sets)
	expect "one set" 1 "$(grep -c . <<<"$set")"
	expect "the set's taps" "$(printf '%s\n' "$(json "$st_a" '.[0].ifindex')" "$(json "$st_b" '.[0].ifindex')" | sort | tr '\n' ' ' | sed 's/ $//')" \
		"$(shared_taps "$set")"
	report shared_one_program "$st_a $st_b"

	# frames into A: every one on A's maps, none on B's
	sent=$("$TAPWRITE" -n "$NS" -d "$dev_a" -q $NQ send 0 urgent 3 send 1 push 2 \
		send 1 gso 1)
	DEV=$dev_a check_counts shared_counts_own "$sent" \
		"$(vnetctl -n "$NS" -j stats "$dev_a" 2>/dev/null)" \
		"$(map_dump "$dev_a" 2>/dev/null)"
	stats_b=$(vnetctl -n "$NS" -j stats "$dev_b" 2>/dev/null)
	for q in $(seq 0 $((NQ - 1))); do
		for c in $CLASSES; do
			expect "$dev_b q$q tx $c" 0 "$(vnet_stat "$stats_b" tx "$q" "$c")"
		done
	done
	report shared_counts_none_elsewhere "$stats_b"

	# a policy of its own: programs of its own, outside the set (the
	# example policy is not part of `make all`: its own rule builds it)
	make -s -C "$VNET_ROOT" OUT="$OUT" "$OUT/bpf/policy_example.bpf.o" >/dev/null 2>&1
	run vnetctl -n "$NS" attach "$dev_c" --policy "$OUT/bpf/policy_example.bpf.o"
	expect "attach $dev_c --policy" 0 "$RUN_RC"
	st_c=$(vnetctl -n "$NS" -j status "$dev_c" 2>/dev/null)
	expect "$dev_c's own program" yes "$([ "$(json "$st_c" '.[0].tc_ingress.prog_id')" != "$(json "$st_a" '.[0].tc_ingress.prog_id')" ] && echo yes || echo no)"
	expect "$dev_c not in the set" 2 "$(wc -w <<<"$(shared_taps "$set")")"
	report shared_policy_own "$(run_said)"

	# one detach leaves the other counting; the set goes with the last
	run vnetctl -n "$NS" detach "$dev_a"
	expect "detach $dev_a" 0 "$RUN_RC"
	expect "set after one detach" "$(json "$st_b" '.[0].ifindex')" "$(shared_taps "$set")"
	sent=$("$TAPWRITE" -n "$NS" -d "$dev_b" -q $NQ send 0 urgent 2)
	DEV=$dev_b check_counts shared_counts_after_detach "$sent" \
		"$(vnetctl -n "$NS" -j stats "$dev_b" 2>/dev/null)" \
		"$(map_dump "$dev_b" 2>/dev/null)"
	ip -n "$NS" link del "$dev_b"
	run vnetctl -n "$NS" gc
	expect "gc" 0 "$RUN_RC"
	expect "set removed with its last tap (gc)" "" "$(shared_sets)"
	# pins removed by hand, the slot's maps gone too (a detach killed
	# between its steps): gc, from any netns, frees the slot
	run vnetctl -n "$NS" attach "$dev_a"
	expect "attach $dev_a again" 0 "$RUN_RC"
	set=$(shared_sets)
	slot=$(bpftool -j map dump pinned "$PIN_ROOT/$set/taps" 2>/dev/null |
		jq -r '.[0] | (.formatted.value // .value).slot')
	bpftool map delete pinned "$PIN_ROOT/$set/stats_of" key $slot 0 0 0 2>/dev/null
	rm -rf "${PIN_ROOT:?}/$dev_a"
	run vnetctl gc
	expect "gc (host netns)" 0 "$RUN_RC"
	expect "set of pins removed by hand removed (gc)" "" "$(shared_sets)"
	report shared_gc_removes_set "$(run_said)"
	case_cleanup
}

ksft_args "$@"
attach_main test_attach
