#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnetctl stats --prometheus (docs/cli-contract.md, "Metrics"): an attached
# tap with classifier traffic and a tap vnetd serves, with a vhost-user
# frontend (bench_vnetd_io's vufe guest) moving frames both ways.  The
# exposition passes `promtool check metrics`, and its values parsed back
# equal `vnetctl -j stats`'s.  Also the JSON of stats: a timestamp in every
# document (--watch lines too) and drops named, not an array.
#
#   selftests/cli/test_prometheus.sh [CASE...]

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=prometheus
VNETD=${VNETD:-$OUT/vnetd}
IO=${IO:-$OUT/bench/bench_vnetd_io}

ALL_CASES="exposition json"

trap 'end_case; _cleanup_all' EXIT

# prom_value TEXT METRIC LABELS: the value of the sample METRIC{LABELS}
# (LABELS exactly as printed, in order), or empty
prom_value()
{
	awk -v m="$2{$3}" 'index($0, m " ") == 1 { print $2 }' <<<"$1"
}

# setup: $ATT (attach mode, tapwrite traffic) and $SRV (vnetd's, vufe
# traffic both ways) in netns $NS
setup()
{
	local sock

	ns_create "$1" || return 1
	# nothing of the host's own (IPv6 router solicitations) between reads
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 \
		net.ipv6.conf.all.disable_ipv6=1 >/dev/null
	ATT=$(rand_tap)
	tap_create "$NS" "$ATT" || return 1
	run vnetctl -n "$NS" attach "$ATT"
	[ "$RUN_RC" = 0 ] || return 1
	"$TAPWRITE" -n "$NS" -d "$ATT" -q 2 send 0 push 3 send 1 urgent 2 send 1 ack 1 >/dev/null ||
		return 1
	SRV=$(rand_tap)
	sock=$VNET_TMP/$SRV.sock
	"$VNETD" --socket "$sock" --tap "$SRV" --netns "$NS" >"$VNET_TMP/vnetd.log" 2>&1 &
	procs_add "$!"
	_case_taps+=("$NS $SRV")
	busywait 5000 test -S "$sock" || return 1
	run timeout 60 "$IO" signals --socket "$sock" --netns "$NS" --tap "$SRV" --frames 100
	[ "$RUN_RC" = 0 ]
}

case_exposition()
{
	local prom doc f v want bad="" d q dir k

	setup expo || { fail expo_setup "$(run_said) $(head -c 300 "$VNET_TMP/vnetd.log" 2>/dev/null)"; end_case; return; }

	# one scrape of every attached device (what a textfile collector runs)
	run vnetctl stats --prometheus
	prom=$RUN_OUT
	expect "exit" 0 "$RUN_RC"
	printf '%s\n' "$prom" >"$VNET_TMP/vnet.prom"
	run promtool check metrics <"$VNET_TMP/vnet.prom"
	expect "promtool exit" 0 "$RUN_RC"
	expect "promtool says nothing" "" "$RUN_OUT$RUN_ERR"
	report promtool_check "$(run_said)"

	# values parsed back equal the JSON's, for both devices
	for d in "$ATT" "$SRV"; do
		doc=$(vnetctl -j stats "$d")
		while read -r q dir; do
			for f in urgent push ack other malformed; do
				for k in packets bytes; do
					want=$(json "$doc" '.queues[] | select(.queue == ($q|tonumber) and .dir == $d) | .[$f][$k]' \
						--arg q "$q" --arg d "$dir" --arg f "$f" --arg k "$k")
					v=$(prom_value "$prom" "vnet_${k}_total" "device=\"$d\",queue=\"$q\",direction=\"$dir\",class=\"$f\"")
					[ "$v" = "$want" ] || bad+="$d q$q $dir $f $k: prom '$v' json '$want'; "
				done
			done
		done < <(json "$doc" '.queues[] | "\(.queue) \(.dir)"')
	done
	expect "classifier mismatches" "" "$bad"
	report classifier_values "$bad"

	# the served tap: every datapath field, every drop reason, by name
	doc=$(vnetctl -j stats "$SRV")
	bad=""
	while read -r q dir; do
		for f in $(json "$doc" '.queues[0].datapath | keys[] | select(. != "drops")'); do
			want=$(json "$doc" '.queues[] | select(.queue == ($q|tonumber) and .dir == $d) | .datapath[$f]' \
				--arg q "$q" --arg d "$dir" --arg f "$f")
			if [ "$f" = limited_ns ]; then
				# Prometheus' base unit: seconds
				v=$(prom_value "$prom" vnet_datapath_limited_seconds_total "device=\"$SRV\",queue=\"$q\",direction=\"$dir\"")
				awk -v v="${v:-x}" -v w="$want" 'BEGIN { exit !(v != "x" && v * 1e9 - w < 1 && w - v * 1e9 < 1) }' ||
					bad+="q$q $dir limited_ns: prom seconds '$v' json ns '$want'; "
				continue
			fi
			v=$(prom_value "$prom" "vnet_datapath_${f}_total" "device=\"$SRV\",queue=\"$q\",direction=\"$dir\"")
			[ "$v" = "$want" ] || bad+="q$q $dir $f: prom '$v' json '$want'; "
		done
		for f in $(json "$doc" '.queues[0].datapath.drops | keys[]'); do
			want=$(json "$doc" '.queues[] | select(.queue == ($q|tonumber) and .dir == $d) | .datapath.drops[$f]' \
				--arg q "$q" --arg d "$dir" --arg f "$f")
			v=$(prom_value "$prom" vnet_datapath_drops_total "device=\"$SRV\",queue=\"$q\",direction=\"$dir\",reason=\"$f\"")
			[ "$v" = "$want" ] || bad+="q$q $dir drop $f: prom '$v' json '$want'; "
		done
	done < <(json "$doc" '.queues[] | "\(.queue) \(.dir)"')
	expect "datapath mismatches" "" "$bad"
	positive "$(prom_value "$prom" vnet_datapath_frames_total "device=\"$SRV\",queue=\"0\",direction=\"tx\"")" ||
		bad+="no guest-TX frames counted; "
	positive "$(prom_value "$prom" vnet_datapath_notify_sent_total "device=\"$SRV\",queue=\"0\",direction=\"rx\"")" ||
		bad+="no guest-RX notification counted; "
	expect "problems" "" "$bad"
	report datapath_values "$bad"

	# every family the scrape has (the served tap has them all) documented
	bad=""
	for f in $(sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' <<<"$prom"); do
		grep -q "\`$f\`" "$VNET_SELFTESTS/../docs/metrics.md" || bad+="$f "
	done
	expect "families not in docs/metrics.md" "" "$bad"
	report families_documented "$bad"

	# one device, one queue; the usage errors
	run vnetctl stats "$ATT" --prometheus --queue 1
	expect "one device exit" 0 "$RUN_RC"
	expect "only that device" 0 "$(grep -c "device=\"$SRV\"" <<<"$RUN_OUT")"
	expect "only queue 1" 0 "$(grep -c 'queue="0"' <<<"$RUN_OUT")"
	expect "queue 1 urgent" 2 "$(prom_value "$RUN_OUT" vnet_packets_total "device=\"$ATT\",queue=\"1\",direction=\"tx\",class=\"urgent\"")"
	run vnetctl stats "$ATT" --prometheus --watch 1
	expect "--watch refused" 2 "$RUN_RC"
	run vnetctl -j stats "$ATT" --prometheus
	expect "-j refused" 2 "$RUN_RC"
	report filters_and_usage "$(run_said)"

	# text stats: datapath rows where vnetd serves the tap (and not elsewhere)
	run vnetctl stats "$SRV"
	expect "vnetd's tap has datapath rows" yes "$(grep -qE '^0 +tx +datapath' <<<"$RUN_OUT" && echo yes || echo no)"
	run vnetctl stats "$ATT"
	expect "attach mode has none" no "$(grep -qE 'datapath|notify' <<<"$RUN_OUT" && echo yes || echo no)"
	report datapath_rows_where_served "$(run_said)"
	end_case
}

case_json()
{
	local doc l i=0 bad="" t0 t1

	setup json || { fail json_setup "$(run_said)"; end_case; return; }
	doc=$(vnetctl -j stats "$SRV")
	expect "drops is an object" object "$(json "$doc" '.queues[0].datapath.drops | type')"
	expect "drop names" "bad_desc,broken,no_buffer,tap,too_big" \
		"$(json "$doc" '.queues[0].datapath.drops | keys | join(",")')"
	report drops_named "$doc"

	t0=$(date +%s)
	run timeout 20 "$VNETCTL" -j stats "$SRV" --watch 1 --count 2
	t1=$(date +%s)
	expect "watch exit" 0 "$RUN_RC"
	while IFS= read -r l; do
		i=$((i + 1))
		awk -v t="$(json "$l" '.timestamp')" -v a="$t0" -v b="$t1" \
			'BEGIN { exit !(t + 0 >= a && t + 0 <= b + 1) }' ||
			bad+="line $i timestamp '$(json "$l" '.timestamp')' not in [$t0, $t1]; "
	done < <(grep . <<<"$RUN_OUT")
	expect "lines" 2 "$i"
	expect "problems" "" "$bad"
	expect "timestamps increase" true "$(printf '%s\n' "$RUN_OUT" | jq -s '.[1].timestamp > .[0].timestamp')"
	report watch_timestamps "$(run_said)"
	end_case
}

main()
{
	ksft_args "$@"
	require_root prometheus || { ksft_exit; return; }
	require_cmd prometheus jq promtool "$IO" || { ksft_exit; return; }
	ksft_run :
	ksft_exit
}

main "$@"
