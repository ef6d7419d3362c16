# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# The end of both demos (scripts/demo-vm.sh, scripts/demo.sh): vnet's
# defaults against coalescing off, measured in one run, as rows and one
# line saying what they mean.  selftests/operator/test_demo.sh parses them.
#
#   demo_head TITLE             the block's heading and its columns
#   demo_row LABEL DEF OFF      one measured figure, on the defaults and off
#   demo_ratio A B              A/B to 2 decimals ("-" when B is 0 or empty)
#   demo_cmp VAR LABEL DEF OFF  demo_row, and the ratio DEF/OFF into VAR
#   demo_lt R LIMIT             R is a number below LIMIT

demo_head()
{
	printf '\n\033[1m== %s\033[0m\n' "$1"
	printf '   %-44s %12s %16s\n' "" "vnet defaults" "coalescing off"
}

demo_row()
{
	printf '   %-44s %12s %16s\n' "$1" "$2" "$3"
}

demo_ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || b + 0 == 0) { print "-"; exit }
		printf "%.2f\n", a / b }'
}

demo_cmp()
{
	demo_row "$2" "$3" "$4"
	printf -v "$1" %s "$(demo_ratio "$3" "$4")"
}

demo_lt()
{
	awk -v r="$1" -v l="$2" 'BEGIN { exit !(r != "-" && r + 0 < l + 0) }'
}
