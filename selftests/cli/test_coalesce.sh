#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Integration tests of `vnetctl coalesce` (docs/coalesce.md) and of
# `vnetctl attach --policy` (docs/policy.md) on real multi-queue taps, each
# case in its own network namespace with its own tap:
#  - the guest NIC's words round-trip through vnetctl, -j and the pinned
#    config map (bpftool), for every queue and for one queue;
#  - the tap's own rx-frames round-trips both ways: vnetctl -> ethtool -c,
#    and a direct ethtool -C -> vnetctl coalesce show;
#  - out-of-range and malformed values are refused with ethtool's words,
#    before anything changes;
#  - with adaptive on, frames written through the tap move the BPF
#    recommendation, for the built-in policy and for the example policy
#    linked in with --policy.
# Needs root, jq, bpftool, ethtool, iproute2.
#
#   selftests/cli/test_coalesce.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose: $q is a jq variable
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=coalesce

ALL_CASES="show guest queue tap ethtool invalid adaptive policy vnetd"
NQ=4
EXAMPLE=$OUT/bpf/policy_example.bpf.o
VNETD=${VNETD:-$OUT/vnetd}

show_json()
{
	vnetctl -n "$NS" -j coalesce show "$DEV" 2>/dev/null
}

# guest_q JSON QUEUE FIELD: FIELD of the group that holds QUEUE
guest_q()
{
	json "$1" '.guest.groups[] | select(any(.queues[]; .[0] <= $q and $q <= .[1])) | .[$f]' \
		--argjson q "$2" --arg f "$3"
}

# ethtool_rx_frames: the tap's rx-frames as `ethtool -c` prints it
ethtool_rx_frames()
{
	ip netns exec "$NS" ethtool -c "$DEV" 2>/dev/null |
		sed -n 's/^rx-frames: *//p'
}

# cfg_map QUEUE FIELD: FIELD of the config map entry of QUEUE (bpftool)
cfg_map()
{
	bpftool -j map lookup pinned "$PIN_ROOT/$DEV/config" \
		key "$(($1 & 255))" 0 0 0 2>/dev/null |
		jq -r --arg f "$2" '(.formatted // .).value[$f]' 2>/dev/null
}

# qs_map DIR QUEUE FIELD: FIELD of the queues map entry of (DIR, QUEUE)
qs_map()
{
	local k=$(($2 + ($1 == 1 ? 256 : 0)))

	bpftool -j map lookup pinned "$PIN_ROOT/$DEV/queues" \
		key $((k & 255)) $((k >> 8)) 0 0 2>/dev/null |
		jq -r --arg f "$3" '(.formatted // .).value[$f]' 2>/dev/null
}

# --- cases ---------------------------------------------------------------------

case_show()
{
	local doc text

	attached_case show || { fail show_setup "$(run_said)"; return; }
	doc=$(show_json)
	expect "json parses" yes "$(json_ok "$doc" && echo yes || echo no)"
	expect groups 1 "$(json "$doc" '.guest.groups | length')"
	expect queues "[[0,255]]" "$(json "$doc" '.guest.groups[0].queues' -c)"
	# the defaults (include/vnet/abi.h VNET_DEFAULT_*): coalescing on
	expect "tx_frames (default)" 32 "$(guest_q "$doc" 0 tx_frames)"
	expect "tx_usecs (default)" 200 "$(guest_q "$doc" 0 tx_usecs)"
	expect "rx_frames (default)" 32 "$(guest_q "$doc" 0 rx_frames)"
	expect "rx_usecs (default)" 200 "$(guest_q "$doc" 0 rx_usecs)"
	expect "tx_urgent_bypass (default)" true "$(guest_q "$doc" 0 tx_urgent_bypass)"
	expect "rx_push_bypass (default)" true "$(guest_q "$doc" 0 rx_push_bypass)"
	expect "config[255].tx_usecs (default)" 200 "$(cfg_map 255 tx_usecs)"
	expect adaptive_rx false "$(guest_q "$doc" 0 adaptive_rx)"
	expect "tap rx_frames = ethtool -c" "$(ethtool_rx_frames)" "$(json "$doc" '.tap.rx_frames')"
	# nobody holds the tap's queues: nothing applies the values
	expect "guest effect" nowhere "$(json "$doc" '.guest.effect.where')"
	expect "tap effect" nowhere "$(json "$doc" '.tap.effect.where')"
	expect policy builtin "$(json "$doc" '.policy.path')"
	report show_json "$doc"

	text=$(vnetctl -n "$NS" coalesce show "$DEV" 2>&1)
	for l in "Coalesce parameters for $DEV (guest NIC, virtio NOTF_COAL words):" \
		"Adaptive RX: off  TX: off" "rx-usecs: 200" "tx-frames: 32" \
		"Bypass RX (push): on  TX (urgent): on" \
		"Tap (host view, ethtool -C $DEV):" "takes effect: nowhere"; do
		grep -qF -- "$l" <<<"$text" || _mismatch+="missing line '$l'; "
	done
	report show_text "$text"
	case_cleanup
}

case_guest()
{
	local doc q

	attached_case guest || { fail guest_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" tx-frames 8 tx-usecs 50 \
		rx-frames 16 rx-usecs 100 adaptive-rx on
	expect "set exit" 0 "$RUN_RC"
	expect "set prints nothing (like ethtool -C)" "" "$RUN_OUT$RUN_ERR"
	doc=$(show_json)
	expect groups 1 "$(json "$doc" '.guest.groups | length')"
	expect tx_frames 8 "$(guest_q "$doc" 5 tx_frames)"
	expect tx_usecs 50 "$(guest_q "$doc" 5 tx_usecs)"
	expect rx_frames 16 "$(guest_q "$doc" 5 rx_frames)"
	expect rx_usecs 100 "$(guest_q "$doc" 5 rx_usecs)"
	expect adaptive_rx true "$(guest_q "$doc" 5 adaptive_rx)"
	expect adaptive_tx false "$(guest_q "$doc" 5 adaptive_tx)"
	report guest_set_show "$(run_said) $doc"

	# the pinned config map, as vnetd and bpftool read it: every queue
	for q in 0 3 255; do
		expect "config[$q].tx_frames" 8 "$(cfg_map $q tx_frames)"
		expect "config[$q].rx_usecs" 100 "$(cfg_map $q rx_usecs)"
		expect "config[$q].flags (ADAPTIVE_RX)" 2 "$(cfg_map $q flags)"
	done
	# and the policy gate of the rx direction only
	expect "queues[rx,3].adaptive" 1 "$(qs_map 1 3 adaptive)"
	expect "queues[tx,3].adaptive" 0 "$(qs_map 0 3 adaptive)"
	report guest_config_map

	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-rx off
	expect "queues[rx,3].adaptive after off" 0 "$(qs_map 1 3 adaptive)"
	expect "config[3].flags after off" 0 "$(cfg_map 3 flags)"
	report guest_adaptive_off "$(run_said)"

	# the urgent/push bypass: on by default, off as negative flags
	doc=$(show_json)
	expect "tx_urgent_bypass by default" true "$(guest_q "$doc" 0 tx_urgent_bypass)"
	expect "rx_push_bypass by default" true "$(guest_q "$doc" 0 rx_push_bypass)"
	run vnetctl -n "$NS" coalesce set "$DEV" tx-urgent-bypass off
	expect "set exit" 0 "$RUN_RC"
	doc=$(show_json)
	expect tx_urgent_bypass false "$(guest_q "$doc" 7 tx_urgent_bypass)"
	expect rx_push_bypass true "$(guest_q "$doc" 7 rx_push_bypass)"
	expect "config[7].flags (NO_TX_BYPASS)" 4 "$(cfg_map 7 flags)"
	run vnetctl -n "$NS" coalesce set "$DEV" tx-urgent-bypass on rx-push-bypass off
	expect "config[7].flags (NO_RX_BYPASS)" 8 "$(cfg_map 7 flags)"
	grep -qF "Bypass RX (push): off  TX (urgent): on" <<<"$(vnetctl -n "$NS" coalesce show "$DEV" 2>&1)" ||
		_mismatch+="show: no line 'Bypass RX (push): off  TX (urgent): on'; "
	run vnetctl -n "$NS" coalesce set "$DEV" rx-push-bypass maybe
	expect "bad bypass value exit" 2 "$RUN_RC"
	report guest_bypass "$(run_said) $doc"
	case_cleanup
}

case_queue()
{
	local doc text

	attached_case queue || { fail queue_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" tx-frames 8
	run vnetctl -n "$NS" coalesce set "$DEV" queue 2 tx-frames 4 adaptive-tx on
	expect "set queue exit" 0 "$RUN_RC"
	doc=$(show_json)
	expect groups 2 "$(json "$doc" '.guest.groups | length')"
	expect "queue 2 tx_frames" 4 "$(guest_q "$doc" 2 tx_frames)"
	expect "queue 2 adaptive_tx" true "$(guest_q "$doc" 2 adaptive_tx)"
	expect "queue 1 tx_frames" 8 "$(guest_q "$doc" 1 tx_frames)"
	expect "queue 3 tx_frames" 8 "$(guest_q "$doc" 3 tx_frames)"
	expect "queue 1 adaptive_tx" false "$(guest_q "$doc" 1 adaptive_tx)"
	expect "config[2].tx_frames" 4 "$(cfg_map 2 tx_frames)"
	expect "config[1].tx_frames" 8 "$(cfg_map 1 tx_frames)"
	expect "queues[tx,2].adaptive" 1 "$(qs_map 0 2 adaptive)"
	expect "queues[tx,1].adaptive" 0 "$(qs_map 0 1 adaptive)"
	report queue_set_one "$doc"

	text=$(vnetctl -n "$NS" coalesce show "$DEV" 2>&1)
	for l in "Queues 0-1,3-255:" "Queue 2:" "tx-frames: 4" "tx-frames: 8"; do
		grep -qxF -- "$l" <<<"$text" || _mismatch+="missing line '$l'; "
	done
	report queue_text_per_queue "$text"
	case_cleanup
}

case_tap()
{
	local doc

	attached_case tap || { fail tap_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" tap rx-frames 17
	expect "set tap exit" 0 "$RUN_RC"
	expect "ethtool -c rx-frames" 17 "$(ethtool_rx_frames)"
	doc=$(show_json)
	expect "show tap.rx_frames" 17 "$(json "$doc" '.tap.rx_frames')"
	expect "config map tap_rx_frames" 17 "$(cfg_map 0 tap_rx_frames)"
	expect "config map tap_rx_frames (queue 9)" 17 "$(cfg_map 9 tap_rx_frames)"
	# the guest NIC's rx-frames is another parameter
	expect "guest rx_frames untouched (default)" 32 "$(guest_q "$doc" 0 rx_frames)"
	report tap_vnetctl_to_ethtool "$(run_said) $doc"
	case_cleanup
}

case_ethtool()
{
	local doc text

	attached_case ethtool || { fail ethtool_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" tap rx-frames 17
	# the operator's habit: ethtool -C on the tap directly
	ip netns exec "$NS" ethtool -C "$DEV" rx-frames 9
	doc=$(show_json)
	expect "show tap.rx_frames (live)" 9 "$(json "$doc" '.tap.rx_frames')"
	expect "show tap.config_rx_frames" 17 "$(json "$doc" '.tap.config_rx_frames')"
	text=$(vnetctl -n "$NS" coalesce show "$DEV" 2>&1)
	grep -qxF "rx-frames: 9" <<<"$text" || _mismatch+="text has no 'rx-frames: 9'; "
	report ethtool_direct_reflected "$doc"

	# tun caps rx-frames at 64 without a word: vnetctl shows what it kept
	ip netns exec "$NS" ethtool -C "$DEV" rx-frames 65
	expect "ethtool -c after ethtool -C 65" 64 "$(ethtool_rx_frames)"
	expect "vnetctl after ethtool -C 65" 64 "$(json "$(show_json)" '.tap.rx_frames')"
	report ethtool_kernel_cap
	case_cleanup
}

# refuse CASE EXPECTED_RC MESSAGE ARGS...: vnetctl coalesce set DEV ARGS fails
# with EXPECTED_RC and "Error: MESSAGE"
refuse()
{
	local name=$1 rc=$2 msg=$3

	shift 3
	run vnetctl -n "$NS" coalesce set "$DEV" "$@"
	expect "$name exit" "$rc" "$RUN_RC"
	expect "$name message" yes "$(grep -qF -- "Error: $msg" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
}

case_invalid()
{
	local before after

	attached_case invalid || { fail invalid_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" tap rx-frames 5
	run vnetctl -n "$NS" coalesce set "$DEV" tx-frames 3
	before=$(show_json)
	refuse tap65 2 "rx-frames: value 65 out of range (0-64)" tap rx-frames 65
	refuse frames 2 "tx-frames: value 40000 out of range (0-32768)" tx-frames 40000
	refuse usecs 2 "rx-usecs: value 100001 out of range (0-100000)" rx-usecs 100001
	refuse word 2 "invalid value 'abc' for parameter 'tx-frames'" tx-frames abc
	refuse negative 2 "invalid value '-1' for parameter 'rx-frames'" rx-frames -1
	refuse bool 2 "invalid value 'yes' for parameter 'adaptive-rx': expected on or off" adaptive-rx yes
	refuse unknown 2 "unknown parameter 'rx-bytes'; the parameters: rx-usecs, rx-frames, tx-usecs, tx-frames, adaptive-rx" rx-bytes 3
	refuse near 2 "unknown parameter 'tx-usec' (did you mean 'tx-usecs'?); the parameters: rx-usecs," tx-usec 50
	refuse range 2 "invalid value '-1' for parameter 'tx-usecs': expected a whole number 0-100000" tx-usecs -1
	refuse tap_range 2 "invalid value '-1' for parameter 'rx-frames': expected a whole number 0-64" tap rx-frames -1
	refuse tap_tx 2 "tap: 'tx-frames' is not a tun parameter" tap tx-frames 3
	refuse queue 2 "invalid value '256' for queue" queue 256 tx-frames 1
	refuse novalue 2 "parameter 'tx-usecs' needs a value" tx-usecs
	refuse bounds 1 "min-frames 100 is above max-frames 64" min-frames 100
	# a refused set changes nothing, not even the values before the bad one
	refuse partial 2 "tx-frames: value 40000 out of range" rx-frames 7 tx-frames 40000
	after=$(show_json)
	expect "unchanged after refusals" "$(json "$before" '[.guest, .tap.rx_frames]' -c)" \
		"$(json "$after" '[.guest, .tap.rx_frames]' -c)"
	expect "ethtool -c unchanged" 5 "$(ethtool_rx_frames)"
	report invalid_refused

	# not attached: an error naming the fix
	refuses_unattached "show unattached" coalesce show
	run vnetctl -n "$NS" coalesce set "$OTHER" tap rx-frames 3
	expect "set unattached exit" 1 "$RUN_RC"
	report invalid_not_attached
	case_cleanup
}

# recommendation JSON QUEUE DIR FIELD
recommendation()
{
	json "$1" '.recommendations[] | select(.queue == $q and .dir == $d) | .[$f]' \
		--argjson q "$2" --arg d "$3" --arg f "$4"
}

case_adaptive()
{
	local doc

	attached_case adaptive || { fail adaptive_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx on
	# a bulk stream from the guest on queue 1, nothing with adaptive off
	run "$TAPWRITE" -n "$NS" -d "$DEV" -q 2 send 1 urgent 2000 1400
	expect "tapwrite" 0 "$RUN_RC"
	doc=$(show_json)
	expect "q1 tx zone" bulk "$(recommendation "$doc" 1 tx zone)"
	expect "q1 tx frames" 64 "$(recommendation "$doc" 1 tx frames)"
	expect "q1 tx usecs" 128 "$(recommendation "$doc" 1 tx usecs)"
	expect "q1 tx profile" 4 "$(recommendation "$doc" 1 tx profile)"
	expect "queues[tx,1].rec_frames" 64 "$(qs_map 0 1 rec_frames)"
	report adaptive_bulk "$doc"

	# bounds: the recommendation stays inside them
	run vnetctl -n "$NS" coalesce set "$DEV" max-frames 16 max-usecs 40
	run "$TAPWRITE" -n "$NS" -d "$DEV" -q 2 send 1 urgent 2000 1400
	doc=$(show_json)
	expect "q1 tx frames <= max-frames" 16 "$(recommendation "$doc" 1 tx frames)"
	expect "q1 tx usecs <= max-usecs" 40 "$(recommendation "$doc" 1 tx usecs)"
	report adaptive_bounds "$doc"
	case_cleanup
}

case_policy()
{
	local doc

	# not part of `make all`: the Makefile's own rule (re)builds it, so
	# that it is never older than the ABI header
	if [ -r "$VNET_ROOT/Makefile" ]; then
		make -s -C "$VNET_ROOT" OUT="$OUT" "$EXAMPLE" >/dev/null 2>&1
	fi
	if [ ! -r "$EXAMPLE" ]; then
		skip policy "$EXAMPLE is not built (make $EXAMPLE)"
		return
	fi
	attached_case policy --policy "$EXAMPLE" || { fail policy_attach "$(run_said)"; return; }
	doc=$(show_json)
	expect "show policy" "$(readlink -f "$EXAMPLE")" "$(json "$doc" '.policy.path')"
	expect "policy pin" yes "$([ -e "$PIN_ROOT/$DEV/policy" ] && echo yes || echo no)"
	report policy_attached "$doc"

	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx on
	run "$TAPWRITE" -n "$NS" -d "$DEV" -q 2 send 0 urgent 1000 1400
	doc=$(show_json)
	# the example: about 64 KB per notification (1454-byte frames), 50 us
	expect "q0 tx frames" 45 "$(recommendation "$doc" 0 tx frames)"
	expect "q0 tx usecs" 50 "$(recommendation "$doc" 0 tx usecs)"
	report policy_decides "$doc"

	run vnetctl -n "$NS" attach "$DEV" --policy "$EXAMPLE"
	expect "attach again with --policy" 1 "$RUN_RC"
	expect "message" yes "$(grep -q "detach $DEV" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	report policy_reattach_refused

	run vnetctl -n "$NS" detach "$DEV"
	expect "detach" 0 "$RUN_RC"
	expect "pins gone" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	run vnetctl -n "$NS" attach "$DEV" --policy /nonexistent.bpf.o
	expect "missing policy exit" 1 "$RUN_RC"
	expect "missing policy leaves no pins" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	report policy_detach "$(run_said)"
	case_cleanup
}

# tap_follows N: vnetctl shows the tap's rx-frames N live and in the config
tap_follows()
{
	local doc

	doc=$(show_json)
	[ "$(json "$doc" '.tap.rx_frames')" = "$1" ] &&
		[ "$(json "$doc" '.tap.config_rx_frames')" = "$1" ]
}

effect_is()
{
	[ "$(json "$(show_json)" "$1")" = "$2" ]
}

# vnetd serving the tap: show says the values take effect there, and a
# direct ethtool -C reaches vnetd (ethtool monitor) and the config map
case_vnetd()
{
	local pid doc

	if [ ! -x "$VNETD" ]; then
		skip vnetd "$VNETD is not built"
		return
	fi
	attached_case vnetd || { fail vnetd_setup "$(run_said)"; return; }
	"$VNETD" --socket "$VNET_TMP/vnetd.sock" --tap "$DEV" --netns "$NS" \
		--queues 2 >"$VNET_TMP/vnetd.log" 2>&1 &
	pid=$!
	busywait 5000 effect_is '.guest.effect.where' vnetd
	doc=$(show_json)
	expect "guest effect" vnetd "$(json "$doc" '.guest.effect.where')"
	expect "tap effect" vnetd "$(json "$doc" '.tap.effect.where')"
	report vnetd_effect "$doc $(tail -c 300 "$VNET_TMP/vnetd.log")"

	ip netns exec "$NS" ethtool -C "$DEV" rx-frames 12
	busywait 3000 tap_follows 12
	doc=$(show_json)
	expect "tap.rx_frames" 12 "$(json "$doc" '.tap.rx_frames')"
	expect "config map follows (vnetd)" 12 "$(json "$doc" '.tap.config_rx_frames')"
	expect "config[1].tap_rx_frames" 12 "$(cfg_map 1 tap_rx_frames)"
	report vnetd_follows_ethtool "$doc $(tail -c 300 "$VNET_TMP/vnetd.log")"

	# a 2-queue tap with queue 1 set apart: the text lists its two
	# queues, not the config map's 256 entries; JSON keeps every entry
	run vnetctl -n "$NS" coalesce set "$DEV" queue 1 tx-frames 4
	run vnetctl -n "$NS" coalesce show "$DEV"
	expect "Queue 0 line" yes "$(grep -qx "Queue 0:" <<<"$RUN_OUT" && echo yes || echo no)"
	expect "Queue 1 line" yes "$(grep -qx "Queue 1:" <<<"$RUN_OUT" && echo yes || echo no)"
	expect "no queues past the tap's two" "" "$(grep -E '^Queues? .*(2|255)' <<<"$RUN_OUT")"
	doc=$(show_json)
	expect "JSON: every entry" '[[[0,0],[2,255]],[[1,1]]]' "$(json "$doc" '[.guest.groups[].queues]' -c)"
	report vnetd_queue_list_is_the_taps "$RUN_OUT"

	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	case_cleanup
}

# --- main ---------------------------------------------------------------------------

ksft_args "$@"
require_root test_coalesce || exit 0
require_cmd test_coalesce ip jq bpftool ethtool "$VNETCTL" "$TAPWRITE" || exit 0

ksft_run case_cleanup # after each case, in case it returned early
ksft_exit
