#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (reads the tree and the built binaries, changes nothing)
#
# One source for every option: vnetd's option table (user/vnetd/config/opts.c)
# and vnetctl's (cli/main.c's global options, each command's in its own
# file) carry each option's help, and --help / `help COMMAND` print it from
# them.  Here that printed table is held against bash completion
# (completion/vnetd, completion/vnetctl) and the man pages' OPTIONS
# (docs/vnetd.8, docs/vnetctl.8: the option a .TP entry names), both ways:
# an option missing from either, or one they have that the table lacks, or
# a short name that differs, is a failure.  (bpftool's
# test_bpftool_synctypes.py holds its sources, docs and completion
# together the same way.)
#
#   selftests/test_options.sh

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$top/build}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
VNETCTL=${VNETCTL:-$OUT/vnetctl}
VNETD=${VNETD:-$OUT/vnetd}
fails=0

check() # NAME WANT GOT: PASS if equal
{
	if [ "$2" = "$3" ]; then
		echo "PASS: options/$1"
	else
		echo "FAIL: options/$1: table: '$2'; here: '$3'"
		fails=$((fails + 1))
	fi
}

words()
{
	tr ' ' '\n' | grep . | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# table_opts: the "-X,--long" / "--long" entries of a help text's option
# lines (stdin), sorted
table_opts()
{
	grep -E '^ {2,6}(-[a-zA-Z], )?--[a-z][a-z-]*( |$)' |
		sed -E 's/^ +(-([a-zA-Z]), )?--([a-z-]+).*/\2,--\3/; s/^,//' | words
}

# man_opts SECTION_START SECTION_END: the same from the man page's .TP
# entries between the two patterns (stdin: the man page)
man_opts()
{
	awk -v a="$1" -v b="$2" '
		$0 ~ a { f = 1; next }
		f && $0 ~ b { f = 0 }
		f && prev == ".TP" { print }
		{ prev = $0 }
	' | sed 's/\\-/-/g; s/\\f[BIRP]//g; s/"//g' |
		sed -E 's/^\.B[IR]? +//; s/^(-[a-zA-Z]) *, *(--[a-z-]+).*/\1,\2/; s/^(--[a-z-]+).*/\1/' |
		sed -E 's/^-([a-zA-Z]),/\1,/' | grep -E '^([a-zA-Z],)?--' | words
}

longs()
{
	tr ' ' '\n' | sed 's/^[a-zA-Z],//' | words
}

# shellcheck source=selftests/completion_lib.sh
source "$top/selftests/completion_lib.sh"

# complete FUNC WORD...: the options completion offers for the last word
complete_words()
{
	complete_reply "$@" | grep -- '^--' | words
}

# --- vnetd ---------------------------------------------------------------------
t=$("$VNETD" --help | table_opts)
[ -n "$t" ] || t="(vnetd --help lists no option)"
check vnetd_man_options "$t" "$(man_opts '^\.SH OPTIONS' '^\.SH ' <"$top/docs/vnetd.8")"
check vnetd_completion "$(longs <<<"$t")" "$(complete_words _vnetd vnetd --)"

# --- vnetctl: its own options, then each command's ------------------------------
t=$("$VNETCTL" --help | sed -n '/^Options:/,$p' | table_opts)
[ -n "$t" ] || t="(vnetctl --help lists no option)"
check vnetctl_man_options "$t" "$(man_opts '^\.SH OPTIONS' '^\.SH ' <"$top/docs/vnetctl.8")"
check vnetctl_completion "$(longs <<<"$t")" "$(complete_words _vnetctl vnetctl --)"

cmds=$("$VNETCTL" --help | awk '/^Commands:/{f=1;next} /^$/{f=0} f && /^  [a-z]/{print $1}')
for c in $cmds; do
	t=$("$VNETCTL" help "$c" | table_opts)
	check "vnetctl_${c}_man" "$t" \
		"$(man_opts "^\\.SS $c( |\$)" '^\.S[SH] ' <"$top/docs/vnetctl.8")"
	check "vnetctl_${c}_completion" "$(longs <<<"$t")" "$(complete_words _vnetctl vnetctl "$c" --)"
done
[ "$fails" -eq 0 ]
