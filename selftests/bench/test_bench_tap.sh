#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench_tap, briefly: its tcx and clsact arms in one run.  After every
# attach bench_tap checks that the arm's program is on its hook and nothing
# of ours on the other (a tcx link, or a clsact filter of handle 0x766e),
# and after every vnet slice that the classifier counted every frame, and
# exits 1 otherwise; so an exit 0 says each arm ran on the hook it names.
# No timing is asserted (make check runs at SCHED_IDLE).
#
#   bench_tap/clsact       tcx and clsact arms, JSON with their ratios
#   bench_tap/keep_clsact  the same with the qdisc kept for every arm
#   bench_tap/bad_config   -C with an unknown name: exit 1, names it
#
#   selftests/bench/test_bench_tap.sh          (root)

# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/../lib.sh"
KSFT_PREFIX=bench_tap

ALL_CASES="clsact keep_clsact bad_config"

BT=${BT:-$OUT/bench/bench_tap}
ARMS=empty-tc,vnet-tc,vnet-tc-shared,empty-tc-clsact,vnet-tc-shared-clsact

# short NAME [ARGS...]: a 1-repetition 64 B run of $ARMS, JSON; checks it
short()
{
	local name=$1 r k

	shift
	run timeout 120 "$BT" -r 1 -d 0.04 -S 0.02 -t 0.02 -n 1000 -s 64 \
		-C "$ARMS" -j "$@"
	expect "exit status" 0 "$RUN_RC"
	expect "JSON" yes "$(json_ok "$RUN_OUT" && echo yes)"
	expect "configs" "empty_tc vnet_tc vnet_tc_shared empty_tc_clsact vnet_tc_shared_clsact" \
		"$(json "$RUN_OUT" '.configs_measured | join(" ")')"
	r=$(json "$RUN_OUT" '.sizes."64".configs.vnet_tc_shared_clsact')
	expect "clsact arm: every frame classified" yes \
		"$(json "$r" 'if .frames > 0 and .classified_urgent == .frames then "yes" else "no" end')"
	for k in vnet_tc_shared_clsact_over_vnet_tc_shared \
		vnet_tc_shared_clsact_over_vnet_tc empty_tc_clsact_over_empty_tc; do
		expect "$k" number \
			"$(json "$RUN_OUT" ".sizes.\"64\".ratios.$k.cpu_time_cost_pct.median | type")"
	done
	expect "clsact_target" boolean \
		"$(json "$RUN_OUT" '.clsact_target.over_vnet_tc_shared.met | type')"
	report "$name" "$(run_said)"
}

case_clsact()
{
	short clsact
}

case_keep_clsact()
{
	short keep_clsact --keep-clsact
}

case_bad_config()
{
	run timeout 30 "$BT" -C vnet-tc,nope
	expect "exit status" 1 "$RUN_RC"
	expect "names it" 1 "$(echo "$RUN_ERR" | grep -c "no configuration 'nope'")"
	report bad_config "$(run_said)"
}

ksft_args "$@"
if require_root bench_tap && require_cmd bench_tap "$BT" jq timeout; then
	ksft_run :
fi
ksft_exit
