# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# A scenario's checks (sourced by run.sh and guests.sh, after
# selftests/lib.sh): need DESC CMD... collects DESC unless CMD holds;
# verdict NAME LOGS passes or fails NAME with what was collected and where
# the logs are; ge A B, le A B: A >= B, A <= B, both whole numbers.

_bad=""

need()
{
	local desc=$1

	shift
	"$@" || _bad+="$desc; "
}

ge()
{
	[[ "${1:-}" =~ ^[0-9]+$ ]] && [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]
}

le()
{
	[[ "${1:-}" =~ ^[0-9]+$ ]] && [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$1" -le "$2" ]
}

verdict()
{
	if [ -z "$_bad" ]; then
		pass "$1"
	else
		fail "$1" "${_bad%; } (logs: ${2#"$VNET_ROOT"/})"
	fi
	_bad=""
}
