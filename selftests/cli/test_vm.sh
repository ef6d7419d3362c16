#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (each case in its own network namespace and taps)
#
# The VM a tap belongs to, and the exporter's vm label (docs/metrics.md):
#  - label: `vnetctl attach DEV --vm NAME` on a real tap, NAME with a
#    double quote, a backslash, a newline, a comma, blanks and UTF-8:
#    status -j gives NAME as it is, text on one line with \\ and \n; every
#    series of DEV that `vnetctl exporter` serves (vnet_device_up, the
#    classifier's families after frames, the guard's) has
#    vm="NAME" escaped as the text format says, promtool accepts it,
#    `stats --prometheus` the same; a tap without a name has no vm label;
#  - rename: `attach DEV --vm OTHER` on the attached tap says it changed
#    it, and the same exporter's next scrape has vm="OTHER", not the old
#    name (bpftool dumps the vm map with it); detached and attached again
#    with a third name: the third; `--vm ''`: no label;
#  - bad: a name of 256 bytes, one that is not UTF-8: exit 2 naming the
#    limit or UTF-8 and the fix, nothing attached, an attached tap's name
#    as it was; vnetd's vm= with a bad %XX or too long: exit 2, the fix;
#  - vnetd_port: vnetd's --port ...,vm=web%2C1%20a%25: the tap it
#    attaches is VM "web,1 a%" (status; its series, the datapath's
#    families included once frames went through); a tap attached before
#    vnetd starts is named by the key too.
# Needs root, jq, curl, promtool, bpftool.
#
#   selftests/cli/test_vm.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=vm

ALL_CASES="label rename bad vnetd_port"
VNETD=${VNETD:-$OUT/vnetd}

# the name of the label case, and its label value as the format escapes it
NAME=$'w "q" b\\s\nl, \xc3\xa9'
ESC='w \"q\" b\\s\nl, '$'\xc3\xa9'
TEXT='w "q" b\\s\nl, '$'\xc3\xa9'

yesno()
{
	"$@" && echo yes || echo no
}

scrape()
{
	curl -s --max-time 10 "http://127.0.0.1:$EPORT/metrics" >"$VNET_TMP/metrics"
}

# series FILE DEV: DEV's series in exposition FILE
series()
{
	grep "^vnet_[a-z_]*{device=\"$2\"" "$1"
}

# labelled FILE DEV VALUE: DEV has series, each with vm="VALUE" after device
labelled()
{
	local n

	n=$(series "$1" "$2" | wc -l)
	[ "$n" -gt 0 ] && ! series "$1" "$2" | grep -vqF "{device=\"$2\",vm=\"$3\","
}

# families FILE DEV: the families DEV has series of, one line
families()
{
	series "$1" "$2" | sed 's/{.*//' | sort -u | tr '\n' ' '
}

vm_of()
{
	json "$("$VNETCTL" -n "$NS" -j status "$1")" '.[0].vm'
}

case_label()
{
	local dev plain fams

	ns_create vmlabel || { fail label_setup "cannot create netns"; return; }
	dev=$(rand_tap)
	plain=$(rand_tap)
	tap_create "$NS" "$dev" && tap_create "$NS" "$plain" ||
		{ fail label_setup "cannot create taps"; return; }
	run vnetctl -n "$NS" -j attach "$dev" --vm "$NAME"
	expect "attach --vm: exit" 0 "$RUN_RC"
	expect "attach --vm: changed" true "$(json "$RUN_OUT" '.changed')"
	run vnetctl -n "$NS" attach "$plain"
	expect "attach without: exit" 0 "$RUN_RC"
	expect "status -j: the name as given" "$NAME" "$(vm_of "$dev")"
	expect "status: one line, escaped" yes \
		"$(yesno grep -qxF "  vm          $TEXT" <<<"$("$VNETCTL" -n "$NS" status "$dev")")"
	expect "status -j: no name, null" null "$(vm_of "$plain")"
	expect "status: no name, no line" no \
		"$(yesno grep -q '^  vm ' <<<"$("$VNETCTL" -n "$NS" status "$plain")")"
	report label_status "$(run_said)"

	"$TAPWRITE" -n "$NS" -d "$dev" -q 1 send 0 push 3 >/dev/null 2>&1
	"$TAPWRITE" -n "$NS" -d "$plain" -q 1 send 0 push 3 >/dev/null 2>&1
	exporter_start || { fail label_exporter "$(cat "$VNET_TMP/exporter.log")"; return; }
	scrape
	fams=$(families "$VNET_TMP/metrics" "$dev")
	expect "every series of $dev: vm=\"$ESC\"" yes "$(yesno labelled "$VNET_TMP/metrics" "$dev" "$ESC")"
	for f in vnet_device_up vnet_packets_total vnet_bytes_total vnet_queue_push_total vnet_guard_dropped_total; do
		expect "family $f labelled" yes "$(yesno grep -qw "$f" <<<"$fams")"
	done
	expect "no vm label without a name" 0 "$(series "$VNET_TMP/metrics" "$plain" | grep -c 'vm=')"
	expect "the unnamed tap has series" yes "$(yesno [ "$(series "$VNET_TMP/metrics" "$plain" | wc -l)" -gt 0 ])"
	run promtool check metrics <"$VNET_TMP/metrics"
	expect "promtool check metrics" 0 "$RUN_RC"
	"$VNETCTL" -n "$NS" stats --prometheus "$dev" >"$VNET_TMP/stats.prom"
	expect "stats --prometheus: every series labelled" yes "$(yesno labelled "$VNET_TMP/stats.prom" "$dev" "$ESC")"
	expect "stats --prometheus: the same families" "$fams" "$(families "$VNET_TMP/stats.prom" "$dev")"
	report label_exporter "$(series "$VNET_TMP/metrics" "$dev" | head -c 600) $(run_said)"
}

case_rename()
{
	local dev dump

	ns_create vmrename || { fail rename_setup "cannot create netns"; return; }
	dev=$(rand_tap)
	tap_create "$NS" "$dev" || { fail rename_setup "cannot create the tap"; return; }
	run vnetctl -n "$NS" attach "$dev" --vm first
	expect "attach --vm first" 0 "$RUN_RC"
	exporter_start || { fail rename_exporter "$(cat "$VNET_TMP/exporter.log")"; return; }
	scrape
	expect "scrape: vm=first" yes "$(yesno labelled "$VNET_TMP/metrics" "$dev" first)"

	# attached: renamed in place, the exporter's kept maps see it
	run vnetctl -n "$NS" -j attach "$dev" --vm other
	expect "rename: exit" 0 "$RUN_RC"
	expect "rename: changed" true "$(json "$RUN_OUT" '.changed')"
	expect "rename: says it" yes "$(yesno grep -qF "its VM is now 'other' (was 'first')" <<<"$RUN_OUT")"
	scrape
	expect "scrape: vm=other" yes "$(yesno labelled "$VNET_TMP/metrics" "$dev" other)"
	expect "scrape: first no more" 0 "$(grep -c 'vm="first"' "$VNET_TMP/metrics")"
	dump=$(bpftool -j map dump pinned "$PIN_ROOT/$dev/vm")
	expect "bpftool: the vm map's name" other "$(json "$dump" '.[0].formatted.value.name // .[0].value.name')"
	run vnetctl -n "$NS" -j attach "$dev" --vm other
	expect "the same name again: unchanged" false "$(json "$RUN_OUT" '.changed')"
	report rename_live "$(run_said) $dump"

	# detached and attached again with another name: new maps, new label
	"$VNETCTL" -n "$NS" detach "$dev" >/dev/null
	run vnetctl -n "$NS" attach "$dev" --vm third
	expect "attached again --vm third" 0 "$RUN_RC"
	scrape
	expect "scrape: vm=third" yes "$(yesno labelled "$VNET_TMP/metrics" "$dev" third)"
	expect "scrape: other no more" 0 "$(grep -c 'vm="other"' "$VNET_TMP/metrics")"
	# '' removes the name: no label
	run vnetctl -n "$NS" attach "$dev" --vm ''
	expect "--vm '': exit" 0 "$RUN_RC"
	expect "--vm '': says it" yes "$(yesno grep -qF "its VM name is removed (was 'third')" <<<"$RUN_OUT")"
	scrape
	expect "scrape: no vm label" 0 "$(series "$VNET_TMP/metrics" "$dev" | grep -c 'vm=')"
	expect "scrape: still its series" yes "$(yesno grep -q "^vnet_device_up{device=\"$dev\",netns=" "$VNET_TMP/metrics")"
	report rename_reattach "$(run_said) $(series "$VNET_TMP/metrics" "$dev" | head -c 300)"
}

case_bad()
{
	local dev long d=$VNET_TMP/bad

	mkdir -p "$d"
	ns_create vmbad || { fail bad_setup "cannot create netns"; return; }
	dev=$(rand_tap)
	tap_create "$NS" "$dev" || { fail bad_setup "cannot create the tap"; return; }
	long=$(printf 'a%.0s' $(seq 256))
	run vnetctl -n "$NS" attach "$dev" --vm "$long"
	expect "256 bytes: usage error" 2 "$RUN_RC"
	expect "256 bytes: the limit and the fix" yes \
		"$(yesno grep -qF "is 256 bytes long, more than the 255 a tap's vm map holds" <<<"$RUN_ERR")"
	expect "256 bytes: not attached" yes "$(yesno pins_gone "$dev")"
	run vnetctl -n "$NS" attach "$dev" --vm $'vm\xff1'
	expect "not UTF-8: usage error" 2 "$RUN_RC"
	expect "not UTF-8: says so, and the fix" yes \
		"$(yesno grep -qF "not UTF-8 (byte 3 is 0xff)" <<<"$RUN_ERR")"
	expect "not UTF-8: not attached" yes "$(yesno pins_gone "$dev")"
	run vnetctl -n "$NS" attach "$dev" --vm "$(printf 'a%.0s' $(seq 255))"
	expect "255 bytes: attached" 0 "$RUN_RC"
	run vnetctl -n "$NS" attach "$dev" --vm "$long"
	expect "rename to 256 bytes: usage error" 2 "$RUN_RC"
	expect "rename refused: the name as it was" 255 "$(vm_of "$dev" | tr -d '\n' | wc -c)"
	report bad_vnetctl "$(run_said)"

	run timeout 20 "$VNETD" --port "socket=$d/s.sock,tap=$(rand_tap),vm=a%zz"
	expect "vnetd vm=a%zz: usage error" 2 "$RUN_RC"
	expect "vnetd vm=a%zz: the escape and %25" yes \
		"$(yesno grep -qF "vm=a%zz: '%' starts %XX" <<<"$RUN_ERR")"
	run timeout 20 "$VNETD" --port "socket=$d/s.sock,tap=$(rand_tap),vm=$long"
	expect "vnetd vm= 256 bytes: usage error" 2 "$RUN_RC"
	expect "vnetd vm= 256 bytes: the limit" yes "$(yesno grep -qF "more than the 255" <<<"$RUN_ERR")"
	expect "vnetd: no socket made" no "$(yesno test -e "$d/s.sock")"
	report bad_vnetd "$(run_said)"
}

case_vnetd_port()
{
	local d=$VNET_TMP/vport tap pre pid fams

	mkdir -p "$d"
	ns_create vmport || { fail vnetd_port_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	pre=$(rand_tap)
	_case_taps+=("$NS $tap")
	# attached before vnetd: the key names it all the same
	tap_create "$NS" "$pre" && "$VNETCTL" -n "$NS" attach "$pre" >/dev/null ||
		{ fail vnetd_port_setup "cannot attach $pre"; return; }
	"$VNETD" --port "socket=$d/a.sock,tap=$tap,netns=$NS,vm=web%2C1%20a%25" \
		--port "socket=$d/b.sock,tap=$pre,netns=$NS,vm=pre" >"$d/vnetd.log" 2>&1 &
	pid=$!
	procs_add "$pid"
	busywait 20000 sh -c "test -S '$d/a.sock' && test -S '$d/b.sock'" ||
		{ fail vnetd_port_start "$(tail -n 3 "$d/vnetd.log")"; return; }
	expect "status: the port's VM" "web,1 a%" "$(vm_of "$tap")"
	expect "status: the pre-attached tap's VM" pre "$(vm_of "$pre")"
	expect "status: served" "$d/a.sock" \
		"$(json "$("$VNETCTL" -n "$NS" -j status "$tap")" '.[0].vnetd_socket')"
	"$TAPWRITE" -n "$NS" -d "$tap" -q 1 send 0 push 3 >"$d/tapwrite.log" 2>&1
	"$VNETCTL" -n "$NS" stats --prometheus "$tap" "$pre" >"$d/stats.prom"
	fams=$(families "$d/stats.prom" "$tap")
	expect "every series of the port: vm=\"web,1 a%\"" yes "$(yesno labelled "$d/stats.prom" "$tap" "web,1 a%")"
	for f in vnet_device_up vnet_guard_dropped_total vnet_packets_total vnet_datapath_frames_total; do
		expect "family $f labelled" yes "$(yesno grep -qw "$f" <<<"$fams")"
	done
	expect "every series of the pre-attached: vm=\"pre\"" yes "$(yesno labelled "$d/stats.prom" "$pre" pre)"
	report vnetd_port "$fams $(cat "$d/tapwrite.log") $(tail -n 3 "$d/vnetd.log")"
}

ksft_args "$@"
require_root test_vm || exit 0
require_cmd test_vm jq curl promtool bpftool "$TAPWRITE" "$VNETD" || exit 0

ksft_run end_case
ksft_exit
