#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The helpers of the vnetctl integration tests (test_attach.sh,
# test_attach_foreign.sh, test_attach_xmit.sh), sourced by each: lib.sh,
# a fresh netns and tap per case, vnetctl's status and stats documents,
# links and programs, tapwrite's reports, the shared xmit dispatcher.

# jq filters are single-quoted on purpose: $q, $c are jq variables
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

KSFT_PREFIX=attach

CLASSES="urgent push ack other malformed"
NQ=2

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

# refused CMD...: the command (in $NS) exits 1 and says why
refused()
{
	run vnetctl "$@"
	expect "vnetctl $* refused: exit" 1 "$RUN_RC"
	expect "vnetctl $*: the error names the other namespace" yes "$(grep -q 'another network namespace' <<<"$RUN_ERR" && echo yes || echo no)"
	# with -j the error is a JSON document on stdout too, else nothing
	case " $* " in
	*" -j "* | *" -p "*)
		expect "vnetctl $*: the JSON error names it" yes \
			"$(json "$RUN_OUT" '.error' | grep -q 'another network namespace' && echo yes || echo no)"
		;;
	*) expect "vnetctl $*: nothing on stdout" "" "$RUN_OUT" ;;
	esac
}

# tun_rx_frames NS DEV: the tap's own rx-frames (ethtool -c)
tun_rx_frames()
{
	ip netns exec "$1" ethtool -c "$2" 2>/dev/null | sed -n 's/^rx-frames: *//p'
}

# dev_gone DEV: vnetctl reports DEV as not present
dev_gone()
{
	[ "$(vnetctl -j status "$1" 2>/dev/null | jq -r '.[0].present' 2>/dev/null)" = false ]
}

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
	echo "# shared dispatcher kept for taps of another run: $entries" >&2
	echo yes
}

# attach_main NAME [CMD...]: the rest of a test_attach* program's main,
# after ksft_args: root and ip, jq, bpftool, vnetctl, tapwrite (and CMDs)
# or a skip, every case (case_cleanup after each, in case it returned
# early), the summary
attach_main()
{
	local name=$1

	shift
	require_root "$name" || exit 0
	require_cmd "$name" ip jq bpftool "$VNETCTL" "$@" "$TAPWRITE" || exit 0
	ksft_run case_cleanup
	ksft_exit
}
