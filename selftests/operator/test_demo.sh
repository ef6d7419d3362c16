#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# `make demo` tells the truth: both demos end with vnet's defaults against
# coalescing off (scripts/demo-lib.sh) and one line ("=> ...") saying what
# the figures mean.  Each case runs a demo and parses its end: the line is
# there, every ratio it gives is the one of the rows above it, and its
# meaning is the one those ratios have.  On top of that, vnet's claim:
#   synthetic  scripts/demo.sh (no QEMU needed, about 10 s): a frontend that
#              asks for every signal gets fewer per frame on guest RX on
#              the defaults, as many on urgent TX completions, and on
#              guest TX at most as many (fewer unless its bursts come
#              further apart than tx-usecs: a busy machine)
#   vm         scripts/demo-vm.sh with short runs (a real guest under QEMU
#              TCG, about a minute): the small-write stream takes fewer
#              guest interrupts per MB on the defaults
#
#   selftests/operator/test_demo.sh [CASE...]

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=demo
ALL_CASES="synthetic vm"

trap 'end_case; _cleanup_all' EXIT

# close A B: A and B (ratios printed with 2 decimals) agree within 0.015,
# or within 2 % when both are large
close()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		d = a - b; if (d < 0) d = -d
		exit !(a != "" && b != "" && (d <= 0.015 || d <= 0.02 * (a > b ? a : b))) }'
}

# row OUT LABEL COL: the COLth figure (1: defaults, 2: off) of the row
# whose label starts with LABEL (the last two fields of the line)
row()
{
	grep -F -- "   $2" <<<"$1" | head -n 1 | awk -v c="$3" '{ print $(NF - 2 + c) }'
}

# ratio OUT LABEL: defaults / off of the row LABEL, 2 decimals
ratio()
{
	awk -v a="$(row "$1" "$2" 1)" -v b="$(row "$1" "$2" 2)" \
		'BEGIN { if (b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'
}

# claim_line OUT: the line that says what the figures mean
claim_line()
{
	grep -E "^=> vnet's defaults over coalescing off: " <<<"$1" | tail -n 1
}

# agrees WHAT CLAIMED OUT LABEL: the claim's ratio for WHAT is the row's
agrees()
{
	local r

	r=$(ratio "$3" "$4")
	expect "$1 as the rows" yes "$(close "$2" "$r" && echo yes || echo "no ($2, rows $r)")"
}

# strip TEXT: without the headings' escape sequences
strip()
{
	sed 's/\x1b\[[0-9;]*m//g' <<<"$1"
}

lt()
{
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a != "-" && a + 0 < b + 0) }'
}

# claim OUT RE LABEL ROW LABEL ROW LABEL ROW: OUT has a claim line (shown)
# of the form RE, whose three figures agree with OUT's table rows ROW;
# false (a failure) when the line is not of that form.  BASH_REMATCH holds
# the figures (1-3) and the meaning (4).
claim()
{
	local out=$1 re=$2 line

	line=$(claim_line "$out")
	echo "# ${line:-no claim line}"
	expect "a claim line" yes "$([ -n "$line" ] && echo yes || echo no)"
	if ! [[ $line =~ $re ]]; then
		expect "the claim line's form" "$re" "$line"
		return 1
	fi
	agrees "$3" "${BASH_REMATCH[1]}" "$out" "$4"
	agrees "$5" "${BASH_REMATCH[2]}" "$out" "$6"
	agrees "$7" "${BASH_REMATCH[3]}" "$out" "$8"
}

case_synthetic()
{
	local out tx rx urg re

	run timeout 120 env VNET_DEMO_SECS=2 "$VNET_ROOT/scripts/demo.sh"
	out=$(strip "$RUN_OUT")
	expect "demo exit" 0 "$RUN_RC"
	re="^=> vnet's defaults over coalescing off: ([0-9.]+)x the signals per frame on guest TX and ([0-9.]+)x on guest RX, ([0-9.]+)x on urgent TX completions: (.*)$"
	if claim "$out" "$re" "TX ratio" "guest TX, UDP" "RX ratio" "guest RX, UDP" \
		"urgent ratio" "guest TX, TCP payload"; then
		tx=${BASH_REMATCH[1]} rx=${BASH_REMATCH[2]} urg=${BASH_REMATCH[3]}
		# vnet's claim, and the line says it only when it holds: RX
		# held, urgent TX at once; TX bulk held unless its bursts come
		# further apart than tx-usecs (the quiet period: a busy machine)
		expect "fewer RX signals per frame on the defaults" yes "$(lt "$rx" 1 && echo yes || echo no)"
		expect "urgent TX completions signalled at once" yes "$(close "$urg" 1 && echo yes || echo no)"
		expect "TX signals per frame at most coalescing off's" yes "$(lt "$tx" 1.015 && echo yes || echo no)"
		expect "the meaning follows the figures" yes \
			"$(if lt "$rx" 1 && ! lt "$urg" 0.99; then
				grep -q 'deliveries to the guest were held and batched' <<<"${BASH_REMATCH[4]}" &&
					grep -q 'urgent TX completions were signalled at once' <<<"${BASH_REMATCH[4]}" &&
					if lt "$tx" 0.99; then
						grep -q 'so were TX completions' <<<"${BASH_REMATCH[4]}"
					else
						grep -q 'first after a quiet period' <<<"${BASH_REMATCH[4]}"
					fi
			else
				grep -q 'a bug to report' <<<"${BASH_REMATCH[4]}"
			fi && echo yes || echo no)"
	fi
	report synthetic "$(grep -A8 "against coalescing off" <<<"$out" | tr '\n' '|') $(tail -c 300 <<<"$RUN_ERR")"
}

case_vm()
{
	local out ipm p50 re reason

	if ! reason=$("$VNET_ROOT/selftests/e2e/build-guest.sh" --check); then
		skip vm "no real guest here: $reason"
		return
	fi
	run timeout 240 env VNET_DEMO_SECS=4 VNET_DEMO_RR_SECS=2 "$VNET_ROOT/scripts/demo-vm.sh"
	out=$(strip "$RUN_OUT")
	expect "demo exit" 0 "$RUN_RC"
	expect "a real guest" yes "$(grep -q 'synthetic demo instead' <<<"$out" && echo no || echo yes)"
	re="^=> vnet's defaults over coalescing off: ([0-9.]+)x the guest interrupts per MB and ([0-9.]+)x the Mbit/s on the stream, ([0-9.]+)x the round trip's p50: (.*)$"
	if claim "$out" "$re" "interrupts per MB" "  guest interrupts per MB" \
		"Mbit/s" "TCP stream," "p50" "UDP round trip"; then
		ipm=${BASH_REMATCH[1]} p50=${BASH_REMATCH[3]}
		# vnet's claim on the stream (the round trip's p50 moves by
		# 10-30 % under TCG: only its consistency is checked)
		expect "fewer interrupts per MB on the defaults" yes "$(lt "$ipm" 1 && echo yes || echo no)"
		expect "the meaning follows the figures" yes \
			"$(if lt "$ipm" 1 && lt "$p50" 1.1; then
				grep -q 'were held and batched, the round trip' <<<"${BASH_REMATCH[4]}"
			elif ! lt "$ipm" 1; then
				grep -q 'no interrupts saved' <<<"${BASH_REMATCH[4]}"
			else
				grep -q 'round trip was slower' <<<"${BASH_REMATCH[4]}"
			fi && echo yes || echo no)"
	fi
	report vm "$(grep -A8 "against coalescing off" <<<"$out" | tr '\n' '|') $(tail -n 5 <<<"$out" | tr '\n' '|') $(tail -c 300 <<<"$RUN_ERR")"
}

main()
{
	ksft_args "$@"
	require_root demo || { ksft_exit; return; }
	require_cmd demo jq "$OUT/vnetd" "$OUT/bench/bench_vnetd_io" || { ksft_exit; return; }
	ksft_run :
	ksft_exit
}

main "$@"
