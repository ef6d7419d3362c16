#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Integration tests of vnetctl (see test_attach.sh): how the shared
# classifier reaches a tap: `attach --tc-attach clsact`, the tc programs as
# clsact direct-action filters instead of tcx links; a tap whose ifindex
# is past the `tap_index` array.  Needs root, jq, bpftool, iproute2.
#  - clsact: both filters on the tap (handle 0x766e, vnet's programs, no
#    link), frames counted, the tap's pins; the clsact qdisc removed by
#    hand: status says the hooks are incomplete; detach leaves no filter;
#    a bad --tc-attach is refused;
#  - clsact_fallback: an `ingress` qdisc on the tap (as libvirt's
#    <bandwidth> makes; it has one block for both directions, so vnet's
#    two filters cannot both go on it): both programs on tcx links, no
#    filter of vnet's on that qdisc, frames counted, the qdisc left alone;
#  - shared_hash: a tap moved into the case's namespace as ifindex 70000
#    (build/selftests/ifmove: IFLA_NEW_IFINDEX, Linux 6.7) beside one of
#    a small ifindex: both on the namespace's one program set, the large
#    one found through the `taps` hash, each tap's frames counted on its
#    own maps only.
#
#   selftests/cli/test_attach_clsact.sh [CASE...]    (default: every case)

# shellcheck source=selftests/cli/attach_lib.sh
source "$(dirname "$0")/attach_lib.sh"

ALL_CASES="clsact clsact_fallback shared_hash"
IFMOVE=${IFMOVE:-$OUT/selftests/ifmove}

# vnet's filter on $DEV's DIR (ingress, egress): its program id, or ""
vnet_filter()
{
	tc -n "$NS" filter show dev "$DEV" "$1" 2>/dev/null |
		sed -n 's/.* handle 0x766e .* id \([0-9]*\) .*/\1/p' | head -n1
}

case_clsact()
{
	local st sent

	tap_case clsact || { fail clsact_setup "cannot create netns/tap"; return; }
	run vnetctl -n "$NS" attach --tc-attach clsact "$DEV"
	if [ "$RUN_RC" -ne 0 ]; then
		fail clsact_attach "$(run_said)"
		return
	fi
	st=$(status_json)
	expect "tc_ingress.link_id" null "$(json "$st" '.[0].tc_ingress.link_id')"
	expect "tc_egress.link_id" null "$(json "$st" '.[0].tc_egress.link_id')"
	expect "ingress filter: the status's program" \
		"$(json "$st" '.[0].tc_ingress.prog_id')" "$(vnet_filter ingress)"
	expect "egress filter: the status's program" \
		"$(json "$st" '.[0].tc_egress.prog_id')" "$(vnet_filter egress)"
	expect "ingress filter present" yes "$(positive "$(vnet_filter ingress)" && echo yes || echo no)"
	expect hooks_complete true "$(json "$st" '.[0].hooks_complete')"
	expect "link pins" "" "$(ls "$PIN_ROOT/$DEV" | grep '^link_tc' || true)"
	report clsact_filters "status: $st"

	sent=$("$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 urgent 4 send 1 push 3 \
		send 1 ack 2 send 0 other 1 send 1 malformed 1 send 1 gso 1)
	check_counts clsact_counts "$sent" "$(stats_json)" "$(map_dump "$DEV" 2>/dev/null)"

	# the qdisc removed behind vnet's back: said, not hidden
	tc -n "$NS" qdisc del dev "$DEV" clsact
	st=$(status_json)
	expect "present" true "$(json "$st" '.[0].present')"
	expect "hooks_complete" false "$(json "$st" '.[0].hooks_complete')"
	expect tc_ingress null "$(json "$st" '.[0].tc_ingress')"
	run vnetctl -n "$NS" status "$DEV"
	expect "status says" yes "$(grep -q "HOOKS *INCOMPLETE.*vnetctl detach $DEV" <<<"$RUN_OUT" && echo yes || echo "no: $RUN_OUT")"
	report clsact_removed_said "$(run_said)"

	run vnetctl -n "$NS" detach "$DEV"
	expect "detach exit" 0 "$RUN_RC"
	run vnetctl -n "$NS" attach --tc-attach clsact "$DEV"
	expect "attach again" 0 "$RUN_RC"
	run vnetctl -n "$NS" detach "$DEV"
	expect "detach exit" 0 "$RUN_RC"
	expect "pins gone" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	expect "ingress filter after detach" "" "$(vnet_filter ingress)"
	expect "egress filter after detach" "" "$(vnet_filter egress)"
	run vnetctl -n "$NS" attach --tc-attach clsacts "$DEV"
	expect "bad --tc-attach: exit" 2 "$RUN_RC"
	expect "bad --tc-attach: message" yes "$(grep -q "invalid --tc-attach 'clsacts': expected tcx or clsact" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	expect "bad --tc-attach: nothing pinned" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	report clsact_detach "$(run_said)"
}

case_clsact_fallback()
{
	local st sent

	tap_case clsfb || { fail clsact_fallback_setup "cannot create netns/tap"; return; }
	tc -n "$NS" qdisc add dev "$DEV" ingress ||
		{ fail clsact_fallback_setup "tc qdisc add ingress"; return; }
	run vnetctl -n "$NS" attach --tc-attach clsact "$DEV"
	if [ "$RUN_RC" -ne 0 ]; then
		fail clsact_fallback "$(run_said)"
		return
	fi
	st=$(status_json)
	expect "tc_ingress.link_id > 0 (tcx)" yes "$(positive "$(json "$st" '.[0].tc_ingress.link_id')" && echo yes || echo no)"
	expect "tc_egress.link_id > 0 (tcx)" yes "$(positive "$(json "$st" '.[0].tc_egress.link_id')" && echo yes || echo no)"
	expect "vnet's filter on the ingress qdisc" "" "$(vnet_filter ingress)"
	expect hooks_complete true "$(json "$st" '.[0].hooks_complete')"
	sent=$("$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 urgent 2 send 1 ack 1)
	check_counts clsact_fallback_counts "$sent" "$(stats_json)" "$(map_dump "$DEV" 2>/dev/null)"
	run vnetctl -n "$NS" detach "$DEV"
	expect "detach exit" 0 "$RUN_RC"
	expect "the ingress qdisc stays" yes "$(tc -n "$NS" qdisc show dev "$DEV" ingress | grep -q ingress && echo yes || echo no)"
	report clsact_fallback "status: $st $(run_said)"
}

case_shared_hash()
{
	local src small st_b st_s sent set ino

	tap_case hashsrc || { fail shared_hash_setup "cannot create netns/tap"; return; }
	src=$NS
	ns_create hash || { fail shared_hash_setup "ip netns add"; return; }
	if ! ip netns exec "$src" "$IFMOVE" "$DEV" "/var/run/netns/$NS" 70000 2>"$VNET_TMP/ifmove.err"; then
		skip shared_hash "the kernel cannot give a moved device an ifindex (IFLA_NEW_IFINDEX, Linux 6.7): $(cat "$VNET_TMP/ifmove.err")"
		return
	fi
	_case_taps+=("$NS $DEV")
	ip -n "$NS" link set "$DEV" up
	small=$(rand_tap)
	tap_create "$NS" "$small" || { fail shared_hash_setup "ip tuntap add"; return; }
	run vnetctl -n "$NS" attach "$DEV"
	expect "attach $DEV" 0 "$RUN_RC"
	run vnetctl -n "$NS" attach "$small"
	expect "attach $small" 0 "$RUN_RC"
	st_b=$(status_json)
	st_s=$(vnetctl -n "$NS" -j status "$small" 2>/dev/null)
	expect "$DEV's ifindex" 70000 "$(json "$st_b" '.[0].ifindex')"
	expect "one program for both" "$(json "$st_s" '.[0].tc_ingress.prog_id')" "$(json "$st_b" '.[0].tc_ingress.prog_id')"
	ino=$(ip netns exec "$NS" stat -L -c %i /proc/self/ns/net)
	set=$(find "$PIN_ROOT" -maxdepth 1 -name "classifier_ns${ino}_*" -printf '%f\n')
	expect "70000 in the taps hash" yes "$(bpftool -j map dump pinned "$PIN_ROOT/$set/taps" 2>/dev/null |
		jq -e 'map((.formatted.value // .value).ifindex) | index(70000) != null' >/dev/null && echo yes || echo no)"
	report shared_hash_attach "$(run_said)"

	sent=$("$TAPWRITE" -n "$NS" -d "$DEV" -q $NQ send 0 urgent 3 send 1 ack 2)
	check_counts shared_hash_counts "$sent" "$(stats_json)" "$(map_dump "$DEV" 2>/dev/null)"
	sent=$("$TAPWRITE" -n "$NS" -d "$small" -q $NQ send 1 push 2)
	DEV=$small check_counts shared_hash_counts_apart "$sent" \
		"$(vnetctl -n "$NS" -j stats "$small" 2>/dev/null)" \
		"$(map_dump "$small" 2>/dev/null)"
	run vnetctl -n "$NS" detach "$DEV"
	expect "detach $DEV" 0 "$RUN_RC"
	expect "70000 out of the taps hash" no "$(bpftool -j map dump pinned "$PIN_ROOT/$set/taps" 2>/dev/null |
		jq -e 'map((.formatted.value // .value).ifindex) | index(70000) != null' >/dev/null && echo yes || echo no)"
	report shared_hash_detach "$(run_said)"
}

ksft_args "$@"
attach_main test_attach_clsact tc "$IFMOVE"
