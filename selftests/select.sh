# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2034 # SEL_* are for the caller
#
# Test names: selection and times, as test.h's test_main() has them.
# Sourced by selftests/run.sh and selftests/lib.sh; sets nothing else.
#
#   sel_allow GLOB[,GLOB...]   add to the allow list (-t, -a)
#   sel_deny GLOB[,GLOB...]    add to the deny list (-d)
#   sel_active                 true if either list has a glob
#   sel_match GLOB NAME        GLOB matches NAME (see below)
#   sel_selected NAME          NAME is allowed (or no allow list) and not denied
#   sel_now                    $SEL_NOW := microseconds of the wall clock
#   sel_secs MICROSECONDS      $SEL_SECS := "0.013" under a second, "1.8" from one
#
# A GLOB is a bash pattern ('*' crosses '/', as in fnmatch(3) without
# FNM_PATHNAME).  It matches a name, or a group of names: "vnetd",
# "vnetd/packed" and "vnetd/p*" all match "vnetd/packed/tx_to_tap".  A
# name without a '/' is a program that runs whole (its group): a GLOB
# matches it when GLOB's first component does ("docs/readme*" matches
# "docs").

SEL_ALLOW=()
SEL_DENY=()

_sel_add()
{
	local -n _v=$1
	local g

	IFS=, read -r -a _sel_globs <<<"$2"
	for g in ${_sel_globs[@]+"${_sel_globs[@]}"}; do
		[ -n "$g" ] && _v+=("$g")
	done
	return 0
}

sel_allow()
{
	_sel_add SEL_ALLOW "$1"
}

sel_deny()
{
	_sel_add SEL_DENY "$1"
}

sel_active()
{
	[ "${#SEL_ALLOW[@]}" -gt 0 ] || [ "${#SEL_DENY[@]}" -gt 0 ]
}

# the patterns are unquoted on purpose: they are globs
# shellcheck disable=SC2053
sel_match()
{
	[[ $2 == $1 ]] || [[ $2 == $1/* ]] ||
		[[ $2 != */* && $1 == */* && $2 == ${1%%/*} ]]
}

# (a deny GLOB names tests, never a program: "-d docs/readme*" leaves the
# program "docs" selected, whose lines the runner then filters)
# shellcheck disable=SC2053
sel_selected()
{
	local g

	for g in ${SEL_DENY[@]+"${SEL_DENY[@]}"}; do
		[[ $1 == $g ]] || [[ $1 == $g/* ]] && return 1
	done
	[ "${#SEL_ALLOW[@]}" -eq 0 ] && return 0
	for g in "${SEL_ALLOW[@]}"; do
		sel_match "$g" "$1" && return 0
	done
	return 1
}

# EPOCHREALTIME: seconds.microseconds (the separator is the locale's)
sel_now()
{
	SEL_NOW=${EPOCHREALTIME//[!0-9]/}
}

sel_secs()
{
	local us=$(($1 < 0 ? 0 : $1))

	if [ $(((us + 500) / 1000)) -lt 1000 ]; then
		printf -v SEL_SECS '0.%03d' $(((us + 500) / 1000))
	else
		us=$(((us + 50000) / 100000))
		printf -v SEL_SECS '%d.%d' $((us / 10)) $((us % 10))
	fi
}
