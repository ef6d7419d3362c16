#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (reads the tree and the built binaries, changes nothing)
#
# The man page, --help and `help COMMAND` must agree: every command in
# --help has a section in vnetctl(8), and every long option a command's help
# lists appears in that section.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
VNETCTL=${VNETCTL:-$top/build/vnetctl}
MAN=$top/docs/vnetctl.8

check() { # name, condition-result, reason
	if [ "$2" = 0 ]; then echo "PASS: $1"; else echo "FAIL: $1: $3"; fi
}

# a command line is "  NAME SYNOPSIS", its summary below it is indented more
cmds=$("$VNETCTL" --help | awk '/^Commands:/{f=1;next} /^$/{f=0} f && /^  [a-z]/{print $1}')
[ -n "$cmds" ]
check "docs/help_lists_commands" $? "vnetctl --help lists no commands"

for c in $cmds; do
	grep -q "^\.SS $c\b" "$MAN"
	check "docs/man_has_$c" $? "docs/vnetctl.8 has no '.SS $c' section"
	"$VNETCTL" help "$c" >/dev/null
	check "docs/help_$c" $? "'vnetctl help $c' failed"
	# long options of the command, as its help prints them
	section=$(awk -v c="$c" '/^\.SS /{f=($2==c)} f' "$MAN" | sed 's/\\-/-/g')
	for o in $("$VNETCTL" help "$c" | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
		grep -qF -- "$o" <<<"$section"
		check "docs/man_${c}_${o#--}" $? "docs/vnetctl.8 section '$c' does not document $o"
	done
done

# the man page's SYNOPSIS has every command, and every option and word
# (--prometheus, --listen, ...) the command's usage line gives
synopsis=$(awk '/^\.SH SYNOPSIS/{f=1;next} /^\.SH /{f=0} f' "$MAN" | sed 's/\\-/-/g; s/\\f[BIRP]//g; s/"//g')
for c in $cmds; do
	grep -qE "^\.B vnetctl $c( |$)" <<<"$synopsis"
	check "docs/man_synopsis_$c" $? "docs/vnetctl.8's SYNOPSIS has no 'vnetctl $c'"
	for o in $("$VNETCTL" help "$c" | sed -n '1s/^Usage: [^ ]* [^ ]* //p' | grep -oE -- '--[a-z-]+' | sort -u); do
		grep -qF -- "$o" <<<"$synopsis"
		check "docs/man_synopsis_${c}_${o#--}" $? "docs/vnetctl.8's SYNOPSIS does not give '$c $o'"
	done
done

# global options of --help appear in the man page's OPTIONS
for o in $("$VNETCTL" --help | grep -oE '^ +-[a-zA-Z], --[a-z-]+' | grep -oE -- '--[a-z-]+'); do
	sed 's/\\-/-/g' "$MAN" | grep -qF -- "$o"
	check "docs/man_option_${o#--}" $? "docs/vnetctl.8 does not document $o"
done
# coalesce.md's defaults are include/vnet/abi.h's (what attach writes)
abi=$top/include/vnet/abi.h
d() { awk -v n="VNET_DEFAULT_$1" '$1 == "#define" && $2 == n { print $3 }' "$abi"; }
want="tx-frames $(d TX_FRAMES) tx-usecs $(d TX_USECS) rx-frames $(d RX_FRAMES) rx-usecs $(d RX_USECS)"
tr '\n' ' ' <"$top/docs/coalesce.md" | sed 's/  */ /g' | grep -qF "\`$want\`" &&
	! grep -qi "all values 0" "$top/docs/coalesce.md"
check "docs/coalesce_defaults_are_abi_h" $? "docs/coalesce.md does not give abi.h's defaults ($want) or still says 'all values 0'"
# vnetd.8: -V is an option (OPTIONS), not under LOGGING
awk '/^\.SH /{s=$2} /^\.BR \\-V /{print s}' "$top/docs/vnetd.8" | grep -qx OPTIONS &&
	! awk '/^\.SH /{s=$2} /^\.BR \\-V /{print s}' "$top/docs/vnetd.8" | grep -qvx OPTIONS
check "docs/vnetd_man_version_in_options" $? "docs/vnetd.8 lists -V outside OPTIONS"
# docs/README.md, the index, links every doc and man page
missing=""
for f in "$top"/docs/*.md "$top"/docs/*.8 "$top"/docs/history/*.md; do
	rel=${f#"$top"/docs/}
	[ "$rel" = README.md ] && continue
	grep -qF "]($rel)" "$top/docs/README.md" || missing+=" $rel"
done
[ -z "$missing" ]
check "docs/index_links_every_doc" $? "docs/README.md does not link:$missing"
# README names every shared library the binaries need (the package of each)
VNETD=${VNETD:-$top/build/vnetd}
# (the libraries they link directly, ELF NEEDED: a library's own come with its package)
for lib in $(readelf -d "$VNETCTL" "$VNETD" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' |
	grep -Ev '^lib(c|m|pthread|dl|rt)\.so' | sort -u); do
	pkg=$(dpkg -S "*/$lib" 2>/dev/null | head -n1 | cut -d: -f1)
	grep -qF "\`${pkg:-$lib}\`" "$top/README.md"
	check "docs/readme_names_${lib%%.so*}" $? "README.md does not name ${pkg:-$lib} ($lib, linked by vnetctl or vnetd)"
done
exit 0
