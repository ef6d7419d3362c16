#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (its netns and taps have unique names; the attach is
# the only one among the parallel tests, run.sh -j)
#
# bash completion (completion/vnetctl, completion/vnetd): the words it
# offers are the ones --help and `help COMMAND` list, device names come
# from the namespace of -n NS, and `make install` / `make uninstall` put
# in place and remove every file.
#
#   selftests/cli/test_completion.sh [CASE...]

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=completion
VNETD=${VNETD:-$OUT/vnetd}

ALL_CASES="vnetctl_words vnetctl_devices vnetd_words install"

# shellcheck source=selftests/completion_lib.sh
source "$(dirname "$0")/../completion_lib.sh"

# complete FUNC WORD...: what completion offers for the last word, sorted,
# one line
complete_words()
{
	complete_reply "$@" | grep . | sort -u | tr '\n' ' ' | sed 's/ $//'
}

sorted()
{
	tr ' ' '\n' | grep . | sort -u | tr '\n' ' ' | sed 's/ $//'
}

case_vnetctl_words()
{
	local help c want got

	help=$("$VNETCTL" --help)
	want=$(awk '/^Commands:/{f=1;next} /^$/{f=0} f && /^  [a-z]/{print $1}' <<<"$help" | sorted)
	expect "commands" "$want" "$(complete_words _vnetctl vnetctl '')"
	expect "commands after -j -n NS" "$want" "$(complete_words _vnetctl vnetctl -j -n somens '')"
	want=$(grep -oE -- '--[a-z-]+' <<<"$(sed -n '/^Options:/,$p' <<<"$help")" | sorted)
	expect "global options" "$want" "$(complete_words _vnetctl vnetctl -- | sed 's/ /\n/g' | grep -- '^--' | sorted)"
	expect "help COMMAND" "$(complete_words _vnetctl vnetctl '')" "$(complete_words _vnetctl vnetctl help '')"
	report vnetctl_commands_and_options

	for c in $(complete_words _vnetctl vnetctl ''); do
		want=$("$VNETCTL" help "$c" | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sorted)
		got=$(complete_words _vnetctl vnetctl "$c" -- | sed 's/ /\n/g' | grep -- '^--' | sorted)
		expect "$c options" "$want" "$got"
	done
	report vnetctl_command_options

	# coalesce: show/set, then the words of `help coalesce`
	expect "coalesce subcommands" "set show" "$(complete_words _vnetctl vnetctl coalesce '')"
	want=$("$VNETCTL" help coalesce | grep -oE '\b(rx|tx|adaptive|min|max)-[a-z]+(-bypass)?' | sorted)
	got=$(complete_words _vnetctl vnetctl coalesce set dev0 rx-usecs 5 '')
	expect "coalesce set words" "$want" "$got"
	expect "coalesce set DEV: queue, tap and the words" "$(echo "queue tap $want" | sorted)" \
		"$(complete_words _vnetctl vnetctl coalesce set dev0 '')"
	expect "adaptive-tx values" "off on" "$(complete_words _vnetctl vnetctl coalesce set dev0 adaptive-tx '')"
	expect "rx-hold values" "always auto" "$(complete_words _vnetctl vnetctl coalesce set dev0 rx-hold '')"
	expect "tap words" "rx-frames" "$(complete_words _vnetctl vnetctl coalesce set dev0 tap '')"
	expect "--tx-hook values" "tc xdp" "$(complete_words _vnetctl vnetctl attach --tx-hook '')"
	report vnetctl_coalesce_words
}

case_vnetctl_devices()
{
	local dev other

	require_root vnetctl_devices || return
	ns_create compl || { fail devices_setup "cannot create netns"; return; }
	dev=$(rand_tap)
	other=$(rand_tap)
	tap_create "$NS" "$dev" && tap_create "$NS" "$other" ||
		{ fail devices_setup "cannot create taps"; case_cleanup; return; }
	run vnetctl -n "$NS" attach "$dev"
	expect "netns names" yes "$(complete_words _vnetctl vnetctl -n '' | grep -qw "$NS" && echo yes || echo no)"
	expect "attach: the namespace's links" yes \
		"$(complete_words _vnetctl vnetctl -n "$NS" attach vt | grep -qw "$other" && echo yes || echo no)"
	expect "stats: attached devices" yes \
		"$(complete_words _vnetctl vnetctl -n "$NS" stats vt | grep -qw "$dev" && echo yes || echo no)"
	expect "stats: not the unattached one" no \
		"$(complete_words _vnetctl vnetctl -n "$NS" stats vt | grep -qw "$other" && echo yes || echo no)"
	expect "never the dispatcher's directory" no \
		"$(complete_words _vnetctl vnetctl stats '' | grep -qw net_dev_start_xmit && echo yes || echo no)"
	report vnetctl_device_names
	case_cleanup
}

case_vnetd_words()
{
	local want

	want=$("$VNETD" --help | grep -oE -- '--[a-z-]+' | grep -v -- '^--port$' | sorted)
	want=$(echo "$want --port" | sorted)
	expect "vnetd options" "$want" "$(complete_words _vnetd vnetd --)"
	expect "--log-level values" "debug error info warning" "$(complete_words _vnetd vnetd --log-level '')"
	report vnetd_options
}

# man_docs_missing ROOT DOCDIR MANDIR: the docs (NAME.md, or DOCDIR/PATH)
# the man pages in ROOT/MANDIR name that ROOT/DOCDIR lacks, and any
# relative docs/ path (a source tree's, not an installed one)
man_docs_missing()
{
	local root=$1 docdir=$2 man f

	for man in "$root/$3"/vnetctl.8 "$root/$3"/vnetd.8; do
		for f in $(zcat -f "$man" | grep -oE '[A-Za-z0-9_.-]+\.md' | sort -u); do
			[ -f "$root$docdir/$f" ] || echo -n "$(basename "$man"): $f "
		done
		for f in $(zcat -f "$man" | grep -oE "$docdir/[A-Za-z0-9_./-]+" | sed 's/[.]$//' | sort -u); do
			[ -e "$root$f" ] || echo -n "$(basename "$man"): $f "
		done
		zcat -f "$man" | grep -qE '(^|[^/a-z])docs/' && echo -n "$(basename "$man"): names docs/ "
	done
}

case_install()
{
	local d=$VNET_TMP/destdir f missing=""

	run make -s -C "$VNET_ROOT" install DESTDIR="$d" PREFIX=/usr
	expect "install exit" 0 "$RUN_RC"
	for f in usr/sbin/vnetctl usr/sbin/vnetd usr/share/man/man8/vnetctl.8 \
		usr/share/man/man8/vnetd.8 usr/lib/systemd/system/vnetd@.service \
		usr/lib/systemd/system/vnetd.service usr/lib/systemd/system/vnet-exporter.service \
		usr/share/bash-completion/completions/vnetctl \
		usr/share/bash-completion/completions/vnetd \
		usr/share/doc/vnet/systemd.md usr/share/doc/vnet/libvirt.md \
		usr/share/doc/vnet/metrics.md etc/libvirt/hooks/qemu.d/vnet \
		etc/default/vnet-hook etc/default/vnet-exporter \
		etc/vnet/exporter-web.yml.example; do
		[ -f "$d/$f" ] || missing+="$f "
	done
	expect "installed" "" "$missing"
	expect "the libvirt hook's switch: off" "VNET_HOOK_ENABLE=no" "$(grep '^VNET_HOOK_ENABLE=' "$d/etc/default/vnet-hook")"
	echo "VNET_HOOK_ENABLE=yes" >>"$d/etc/default/vnet-hook"
	run make -s -C "$VNET_ROOT" install DESTDIR="$d" PREFIX=/usr
	expect "a second install keeps the operator's switch" "VNET_HOOK_ENABLE=yes" "$(grep '^VNET_HOOK_ENABLE=' "$d/etc/default/vnet-hook" | tail -n1)"
	expect "the unit runs the installed vnetd" "/usr/sbin/vnetd" \
		"$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$d/usr/lib/systemd/system/vnetd@.service")"
	run make -s -C "$VNET_ROOT" install DESTDIR="$d" PREFIX=/usr/local
	expect "PREFIX=/usr/local: the unit names it" "/usr/local/sbin/vnetd" \
		"$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$d/usr/local/lib/systemd/system/vnetd@.service")"
	expect "the exporter's unit runs the installed vnetctl" "/usr/sbin/vnetctl" \
		"$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$d/usr/lib/systemd/system/vnet-exporter.service")"
	# every doc the installed man pages name is installed where they say
	expect "docs the man pages name, missing" "" "$(man_docs_missing "$d" /usr/share/doc/vnet usr/share/man/man8)"
	expect "PREFIX=/usr/local: docs the man pages name, missing" "" \
		"$(man_docs_missing "$d" /usr/local/share/doc/vnet usr/local/share/man/man8)"
	report make_install "$(run_said)"
	run make -s -C "$VNET_ROOT" uninstall DESTDIR="$d" PREFIX=/usr
	expect "uninstall exit" 0 "$RUN_RC"
	run make -s -C "$VNET_ROOT" uninstall DESTDIR="$d" PREFIX=/usr/local
	expect "files left" "" "$(find "$d" -type f | sed "s|$d/||" | tr '\n' ' ')"
	report make_uninstall "$(run_said)"
}

main()
{
	ksft_args "$@"
	ksft_run :
	ksft_exit
}

main "$@"
