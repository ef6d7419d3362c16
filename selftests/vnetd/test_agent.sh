#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Integration tests of `vnetd --agent` (docs/coalesce.md, "The vnetd agent"):
# attach mode, where the agent pushes the BPF policy's guest-TX
# recommendation to the tap's own rx-frames.  Each case has its own network
# namespace with a real multi-queue tap attached by vnetctl; the
# recommendation is written into the pinned queues map with bpftool (or
# produced by real frames through the tap), and the tap's value is read back
# with `ethtool -c`:
#  - it follows (max over queues, clamped), and only with adaptive-tx on:
#    static values win, and a value it set is put back when adaptive-tx goes
#    off or the agent stops;
#  - hysteresis: a small step is ignored, a change waits --agent-hold
#    samples (counted with the agent's published sample counter, not clocks);
#  - the storm bound: at most max_rate * T + 1 changes in T seconds
#    (the published counter and `ethtool --monitor`);
#  - `vnetctl coalesce show` says so while the agent lives, and not once it
#    exited, was killed or stopped sending heartbeats;
#  - a tap that is not attached is refused, a tap that goes away is let go
#    and picked up again.
# Needs root, jq, bpftool, ethtool, iproute2.
#
#   selftests/vnetd/test_agent.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose: $f is a jq variable
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=agent

ALL_CASES="usage not_attached follow static hysteresis hold storm show gone traffic detach"
VNETD=${VNETD:-$OUT/vnetd}
MAN=$VNET_ROOT/docs/vnetd.8

# every vnetd this test started (procs_add) is killed, at the end of its
# case and at exit
trap 'procs_kill KILL; _cleanup_all' EXIT

end_case()
{
	procs_kill KILL
	case_cleanup
}

# ethtool_rx_frames [DEV]: the tap's rx-frames as `ethtool -c` prints it
ethtool_rx_frames()
{
	ip netns exec "$NS" ethtool -c "${1:-$DEV}" 2>/dev/null |
		sed -n 's/^rx-frames: *//p'
}

rx_frames_is()
{
	[ "$(ethtool_rx_frames "${2:-$DEV}")" = "$1" ]
}

# info F [DEV]: field F of the info map (struct vnet_info), via bpftool
info()
{
	bpftool -j map lookup pinned "$PIN_ROOT/${2:-$DEV}/info" key 0 0 0 0 \
		2>/dev/null | jq -r --arg f "$1" '(.formatted // .).value[$f]' 2>/dev/null
}

# le32 V: V as four little-endian byte values
le32()
{
	printf '%d %d %d %d' $(($1 & 255)) $((($1 >> 8) & 255)) \
		$((($1 >> 16) & 255)) $((($1 >> 24) & 255))
}

# rec QUEUE FRAMES [DEV [GATE]]: the policy's guest-TX recommendation for QUEUE, as
# the BPF policy leaves it: struct vnet_queue_state with rec_frames (offset
# 88) and nr_windows (112) = 5, the gate (adaptive, 104) as vnetctl set it
# (or GATE); the rest zero.  Key vnet_key(VNET_DIR_TX, QUEUE) = QUEUE.
rec()
{
	# shellcheck disable=SC2046 # the value's bytes, one word each
	bpftool map update pinned "$PIN_ROOT/${3:-$DEV}/queues" key "$(($1 & 255))" 0 0 0 \
		value $(rec_value "$@")
}

# rec_value KEY RX_FRAMES [DEV [GATE]]: the bytes of rec's entry
rec_value()
{
	local i b=() map=$PIN_ROOT/${3:-$DEV}/queues gate size

	gate=${4:-$(bpftool -j map lookup pinned "$map" key "$(($1 & 255))" 0 0 0 |
		jq -r '(.formatted // .).value.adaptive')}
	# the entry's size as the map has it (include/vnet/abi.h's)
	size=$(bpftool -j map show pinned "$map" | jq -r .bytes_value)
	for ((i = 0; i < size; i++)); do b[i]=0; done
	read -r 'b[88]' 'b[89]' 'b[90]' 'b[91]' <<<"$(le32 "$2")"
	read -r 'b[104]' 'b[105]' 'b[106]' 'b[107]' <<<"$(le32 "${gate:-0}")"
	read -r 'b[112]' 'b[113]' 'b[114]' 'b[115]' <<<"$(le32 5)"
	echo "${b[@]}"
}

# agent_start ARGS...: vnetd --agent ... in the background; $AGENT_PID,
# log in $VNET_TMP/agent.log; waits until it published itself
agent_start()
{
	"$VNETD" --netns "$NS" "$@" >"$VNET_TMP/agent.log" 2>&1 &
	AGENT_PID=$!
	procs_add "$AGENT_PID"
	busywait 5000 agent_published "$AGENT_PID"
}

# agent_follows CASE INTERVAL HOLD MAX_RATE: case CASE's tap attached with
# adaptive-tx on and an agent for it (--agent-interval INTERVAL,
# --agent-hold HOLD, --agent-max-rate MAX_RATE); false (CASE_setup or
# CASE_start failed) when a step failed
agent_follows()
{
	attached_case "$1" || { fail "${1}_setup" "$(run_said)"; return 1; }
	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx on
	agent_start --agent "$DEV" --agent-interval "$2" --agent-hold "$3" \
		--agent-max-rate "$4" || { fail "${1}_start" "$(agent_log)"; end_case; return 1; }
}

agent_published()
{
	[ "$(info agent_pid)" = "$1" ]
}

# agent_stop SIGNAL: signal the agent and reap it; $AGENT_RC
agent_stop()
{
	kill -"$1" "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID" 2>/dev/null
	AGENT_RC=$?
}

agent_log()
{
	tail -c 400 "$VNET_TMP/agent.log" 2>/dev/null | tr '\n' '|'
}

# samples_reach N [DEV]: the agent published at least N samples
samples_reach()
{
	local s

	s=$(info agent_samples "${2:-}")
	[[ "$s" =~ ^[0-9]+$ ]] && [ "$s" -ge "$1" ]
}

# wait_samples N [DEV]: let the agent take N more samples (bounded: 15 s)
wait_samples()
{
	local s

	s=$(info agent_samples "${2:-}")
	busywait 15000 samples_reach $((s + $1)) "${2:-}"
}

show_json()
{
	vnetctl -n "$NS" -j coalesce show "$DEV" 2>/dev/null
}

show_text()
{
	vnetctl -n "$NS" coalesce show "$DEV" 2>&1
}

agent_shown()
{
	[ "$(json "$(show_json)" '.tap.agent.pid')" = "$1" ]
}

agent_not_shown()
{
	[ "$(json "$(show_json)" '.tap.agent')" = null ]
}

# --- cases ---------------------------------------------------------------------

case_usage()
{
	local o missing=""

	run timeout 10 "$VNETD" --agent vt0 --socket "$VNET_TMP/s.sock"
	expect "--agent with --socket: exit" 2 "$RUN_RC"
	expect "message" yes "$(grep -q -- "--agent runs without vhost-user ports" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run timeout 10 "$VNETD" --agent vt0 --agent-max-rate 0
	expect "--agent-max-rate 0: exit" 2 "$RUN_RC"
	expect "message" yes "$(grep -qF -- "--agent-max-rate '0': changes per second, 1-100" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run timeout 10 "$VNETD" --agent vt0 --agent-interval 5
	expect "--agent-interval 5: exit" 2 "$RUN_RC"
	run timeout 10 "$VNETD" --agent-hold 3
	expect "--agent-hold without --agent: exit" 2 "$RUN_RC"
	expect "message" yes "$(grep -q -- "go with --agent TAP" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run timeout 10 "$VNETD" --agent vt0 --agent vt0
	expect "--agent twice: exit" 2 "$RUN_RC"
	report usage_errors "$(run_said)"

	# --help and vnetd(8) agree on the agent's options
	run "$VNETD" --help
	expect "--help exit" 0 "$RUN_RC"
	while read -r o; do
		sed 's/\\-/-/g' "$MAN" | grep -qF -- "$o" || missing+="$o "
	done < <(grep -oE -- '--agent[a-z-]*' <<<"$RUN_OUT" | sort -u)
	expect "options of --help missing in docs/vnetd.8" "" "$missing"
	expect "--help lists --agent-max-rate" yes "$(grep -qF -- "--agent-max-rate N" <<<"$RUN_OUT" && echo yes || echo no)"
	report help_and_man
}

case_not_attached()
{
	local vpid

	DEV=$(rand_tap)
	if ! ns_create not_attached || ! tap_create "$NS" "$DEV"; then
		fail not_attached_setup "cannot create a tap"
		return
	fi
	run timeout 10 "$VNETD" --agent "$DEV" --netns "$NS"
	expect "exit" 1 "$RUN_RC"
	expect "message names the fix" yes "$(grep -qF "vnet is not attached" <<<"$RUN_ERR" && grep -qF "run 'vnetctl -n $NS attach $DEV'" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	expect "no pins made" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	report not_attached_refused "$(run_said)"

	run timeout 10 "$VNETD" --agent vtnosuch0 --netns "$NS"
	expect "no such tap: exit" 1 "$RUN_RC"
	expect "message" yes "$(grep -q "vtnosuch0" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	report no_such_tap_refused "$(run_said)"

	# one bad tap among good ones: nothing is driven (all or nothing)
	local good
	good=$(rand_tap)
	tap_create "$NS" "$good"
	run vnetctl -n "$NS" attach "$good"
	run timeout 10 "$VNETD" --agent "$good" --agent "$DEV" --netns "$NS"
	expect "one unattached of two: exit" 1 "$RUN_RC"
	expect "the good tap's info is left without an agent" 0 "$(info agent_pid "$good")"
	report not_attached_all_or_nothing "$(run_said)"

	# a tap vnetd serves (vhost-user datapath) is not the agent's
	run vnetctl -n "$NS" attach "$DEV"
	"$VNETD" --socket "$VNET_TMP/vnetd.sock" --tap "$DEV" --netns "$NS" \
		>"$VNET_TMP/vnetd.log" 2>&1 &
	vpid=$!
	procs_add "$vpid"
	busywait 5000 test -S "$VNET_TMP/vnetd.sock"
	run timeout 10 "$VNETD" --agent "$DEV" --netns "$NS"
	expect "served by vnetd: exit" 1 "$RUN_RC"
	expect "message" yes "$(grep -q "served by vnetd (pid $vpid)" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	report vnetd_served_refused "$(run_said)"
	kill "$vpid" 2>/dev/null
	wait "$vpid" 2>/dev/null
	end_case
}

case_follow()
{
	local doc

	agent_follows follow 20 2 20 || return
	expect "starts at tun's value" 0 "$(ethtool_rx_frames)"
	rec 0 32
	busywait 10000 rx_frames_is 32
	expect "ethtool -c rx-frames follows queue 0" 32 "$(ethtool_rx_frames)"
	doc=$(show_json)
	expect "show tap.rx_frames" 32 "$(json "$doc" '.tap.rx_frames')"
	expect "show agent state" following "$(json "$doc" '.tap.agent.state')"
	expect "show agent target" 32 "$(json "$doc" '.tap.agent.target')"
	expect "config map untouched (the static value)" 0 "$(json "$doc" '.tap.config_rx_frames')"
	report follow_recommendation "$(agent_log) $doc"

	# queues combine by their maximum
	rec 3 48
	busywait 10000 rx_frames_is 48
	expect "max over queues" 48 "$(ethtool_rx_frames)"
	# a queue with adaptive-tx off does not count
	run vnetctl -n "$NS" coalesce set "$DEV" queue 5 adaptive-tx off
	rec 5 64
	wait_samples 10
	expect "queue 5 (adaptive-tx off) ignored" 48 "$(ethtool_rx_frames)"
	report follow_max_over_queues "$(agent_log)"

	# the config's bounds, then tun's cap of 64
	run vnetctl -n "$NS" coalesce set "$DEV" max-frames 24
	busywait 10000 rx_frames_is 24
	expect "clamped to max-frames" 24 "$(ethtool_rx_frames)"
	run vnetctl -n "$NS" coalesce set "$DEV" max-frames 1000
	rec 0 500
	busywait 10000 rx_frames_is 64
	expect "clamped to 64 (tun's cap)" 64 "$(ethtool_rx_frames)"
	report follow_clamped "$(agent_log)"

	# with adaptive-tx on, the recommendation wins over a direct ethtool -C
	ip netns exec "$NS" ethtool -C "$DEV" rx-frames 7
	busywait 10000 rx_frames_is 64
	expect "direct ethtool -C overridden" 64 "$(ethtool_rx_frames)"
	report follow_reasserts "$(agent_log)"
	end_case
}

case_static()
{
	local doc

	attached_case static || { fail static_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" tap rx-frames 5
	agent_start --agent "$DEV" --agent-interval 20 --agent-hold 2 \
		--agent-max-rate 20 || { fail static_start "$(agent_log)"; end_case; return; }
	# adaptive-tx off: a recommendation in the map changes nothing
	rec 0 32
	rec 1 64
	wait_samples 15
	expect "rx-frames stays static" 5 "$(ethtool_rx_frames)"
	expect "agent changes" 0 "$(info agent_changes)"
	expect "agent state idle" 0 "$(info agent_state)"
	doc=$(show_json)
	expect "show agent state" idle "$(json "$doc" '.tap.agent.state')"
	report static_nothing_changes "$(agent_log) $doc"

	# on: it follows; off again: the static value is back
	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx on
	rec 0 32 # turning adaptive on cleared the recommendations
	busywait 10000 rx_frames_is 32
	expect "adaptive-tx on: follows" 32 "$(ethtool_rx_frames)"
	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx off
	busywait 10000 rx_frames_is 5
	expect "adaptive-tx off: static value back" 5 "$(ethtool_rx_frames)"
	expect "agent changes (set, restore)" 2 "$(info agent_changes)"
	report static_restored "$(agent_log)"
	end_case
}

case_hysteresis()
{
	local c

	agent_follows hysteresis 20 2 20 || return
	rec 0 32
	busywait 10000 rx_frames_is 32
	c=$(info agent_changes)
	# below 25 % of 32 (8): not applied, however long it stays
	rec 0 36
	wait_samples 15
	expect "36 (step 4)" 32 "$(ethtool_rx_frames)"
	rec 0 26
	wait_samples 15
	expect "26 (step 6)" 32 "$(ethtool_rx_frames)"
	expect "no change counted" "$c" "$(info agent_changes)"
	expect "target published" 26 "$(info agent_target)"
	report hysteresis_small_step_ignored "$(agent_log)"

	rec 0 40
	busywait 10000 rx_frames_is 40
	expect "40 (step 8 = 25 %)" 40 "$(ethtool_rx_frames)"
	expect "one more change" $((c + 1)) "$(info agent_changes)"
	report hysteresis_step_applied "$(agent_log)"
	end_case
}

# a change waits --agent-hold consecutive samples: judged by the agent's
# published sample counter, read after ethtool -c each time
case_hold()
{
	local hold=15 s0 v s deadline early="" seen=no

	agent_follows hold 40 "$hold" 100 || return
	s0=$(info agent_samples)
	rec 0 32
	# the first sample that can see 32 is s0 + 1, so tun can have 32 no
	# earlier than during sample s0 + hold: the published count is then
	# at least s0 + hold - 1
	deadline=$(($(now_ms) + 15000))
	while [ "$(now_ms)" -lt "$deadline" ]; do
		v=$(ethtool_rx_frames)
		s=$(info agent_samples)
		if [ "$v" = 32 ]; then
			seen=yes
			[ "$s" -ge $((s0 + hold - 1)) ] || early="applied by sample $s, asked after $s0"
			break
		fi
		sleep 0.02
	done
	expect "applied" yes "$seen"
	expect "not before $hold samples" "" "$early"
	report hold_samples "$(agent_log)"
	end_case
}

# the recommendation flips between far values for T seconds: tun changes at
# most max_rate * T + 1 times, at least once
case_storm()
{
	local rate=2 c0 c1 l0 l1 t0 t1 tm0 tm1 mpid flips=0 v n bound mon

	agent_follows storm 20 2 "$rate" || return
	rec 0 64
	busywait 10000 rx_frames_is 64

	# every change tun makes, independently of the agent's counter
	mon=$VNET_TMP/monitor.out
	ip netns exec "$NS" stdbuf -oL ethtool --monitor -c "$DEV" >"$mon" 2>&1 &
	mpid=$!
	procs_add "$mpid"
	busywait 5000 grep -q listening "$mon"
	tm0=$(now_ms)

	# one bpftool for the whole storm, the two values built once: a
	# process (and a jq) per flip is slower than the bound under load,
	# and then the storm is none
	local v1 v64 fifo=$VNET_TMP/storm.fifo bpid
	v1=$(rec_value 0 1 "$DEV" 1)
	v64=$(rec_value 0 64 "$DEV" 1)
	mkfifo "$fifo"
	bpftool batch file - <"$fifo" >"$VNET_TMP/storm.batch" 2>&1 &
	bpid=$!
	procs_add "$bpid"
	exec 7>"$fifo"
	# the window holds the reads of the counters (changes between a read
	# and the clock would fall outside it otherwise)
	t0=$(now_ms)
	c0=$(info agent_changes)
	l0=$(info agent_limited)
	while [ $(($(now_ms) - t0)) -lt 4000 ]; do
		v=$v1
		[ $((flips % 2)) -eq 1 ] && v=$v64
		printf 'map update pinned %s key 0 0 0 0 value %s\n' "$PIN_ROOT/$DEV/queues" "$v" >&7
		flips=$((flips + 1))
		sleep 0.05
	done
	exec 7>&-
	wait "$bpid"
	expect "every flip written (bpftool batch)" 0 "$?"
	c1=$(info agent_changes)
	l1=$(info agent_limited)
	t1=$(now_ms)
	sleep 0.3
	tm1=$(now_ms)
	kill "$mpid" 2>/dev/null
	wait "$mpid" 2>/dev/null
	n=$((c1 - c0))
	bound=$((rate * (t1 - t0) / 1000 + 1))
	echo "# storm: $flips flips in $((t1 - t0)) ms, $n changes (bound $bound), $((l1 - l0)) samples held by the rate bound"
	expect "changes <= max_rate * T + 1 ($bound)" yes "$([ "$n" -le "$bound" ] && echo yes || echo "no: $n")"
	expect "at least one change" yes "$([ "$n" -ge 1 ] && echo yes || echo "no: $n")"
	expect "the rate bound held changes back" yes "$(positive $((l1 - l0)) && echo yes || echo no)"
	expect "more flips than the bound (the test means something)" yes "$([ "$flips" -gt $((2 * bound)) ] && echo yes || echo "no: $flips")"
	report storm_bounded "$(agent_log)"

	# tun's own notifications over the monitor's (longer) window
	v=$(grep -c "^Coalesce parameters for $DEV:" "$mon")
	bound=$((rate * (tm1 - tm0) / 1000 + 1))
	expect "ethtool --monitor changes <= max_rate * T + 1 ($bound)" yes "$([ "$v" -le "$bound" ] && echo yes || echo "no: $v")"
	expect "ethtool --monitor saw every counted change" yes "$([ "$v" -ge "$n" ] && echo yes || echo "no: $v < $n")"
	report storm_monitor "$(head -c 300 "$mon")"
	end_case
}

case_show()
{
	local doc text

	attached_case show || { fail show_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" tap rx-frames 3
	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx on
	doc=$(show_json)
	expect "no agent yet: .tap.agent" null "$(json "$doc" '.tap.agent')"
	agent_start --agent "$DEV" --agent-interval 50 --agent-max-rate 3 ||
		{ fail show_start "$(agent_log)"; end_case; return; }
	rec 0 16
	busywait 10000 rx_frames_is 16
	doc=$(show_json)
	expect "agent.pid" "$AGENT_PID" "$(json "$doc" '.tap.agent.pid')"
	expect "agent.state" following "$(json "$doc" '.tap.agent.state')"
	expect "agent.max_rate" 3 "$(json "$doc" '.tap.agent.max_rate')"
	expect "agent.interval_ms" 50 "$(json "$doc" '.tap.agent.interval_ms')"
	expect "agent.changes" 1 "$(json "$doc" '.tap.agent.changes')"
	expect "agent.rx_frames" 16 "$(json "$doc" '.tap.agent.rx_frames')"
	text=$(show_text)
	for l in "agent: vnetd --agent (pid $AGENT_PID) drives rx-frames with the adaptive-tx recommendation: following 16" \
		"1 change so far, at most 3 per second" \
		"config map: 3 (the static value"; do
		grep -qF -- "$l" <<<"$text" || _mismatch+="missing '$l'; "
	done
	report show_while_running "$doc $text"

	# SIGTERM: clean exit, the static value back, show says nothing more
	agent_stop TERM
	expect "exit status after SIGTERM" 0 "$AGENT_RC"
	expect "info agent_pid cleared" 0 "$(info agent_pid)"
	expect "static value back" 3 "$(ethtool_rx_frames)"
	expect ".tap.agent" null "$(json "$(show_json)" '.tap.agent')"
	text=$(show_text)
	expect "text mentions no agent" no "$(grep -q "agent" <<<"$text" && echo yes || echo no)"
	report show_gone_after_exit "$(agent_log) $text"

	# SIGKILL: the pid is dead, the info map still names it
	agent_start --agent "$DEV" --agent-interval 50 ||
		{ fail show_restart "$(agent_log)"; end_case; return; }
	busywait 5000 agent_shown "$AGENT_PID"
	expect "shown again" "$AGENT_PID" "$(json "$(show_json)" '.tap.agent.pid')"
	agent_stop KILL
	expect "info still names it" "$AGENT_PID" "$(info agent_pid)"
	expect ".tap.agent after SIGKILL" null "$(json "$(show_json)" '.tap.agent')"
	expect "text after SIGKILL" no "$(show_text | grep -q "agent" && echo yes || echo no)"
	report show_gone_after_kill

	# SIGSTOP: alive but silent; the heartbeat goes stale (2 s here)
	agent_start --agent "$DEV" --agent-interval 50 ||
		{ fail show_restart2 "$(agent_log)"; end_case; return; }
	busywait 5000 agent_shown "$AGENT_PID"
	kill -STOP "$AGENT_PID"
	busywait 10000 agent_not_shown
	expect ".tap.agent of a stopped agent" null "$(json "$(show_json)" '.tap.agent')"
	kill -CONT "$AGENT_PID"
	busywait 5000 agent_shown "$AGENT_PID"
	expect "shown after SIGCONT" "$AGENT_PID" "$(json "$(show_json)" '.tap.agent.pid')"
	report show_stale_heartbeat
	agent_stop TERM
	end_case
}

case_gone()
{
	local dev2 alive

	attached_case gone || { fail gone_setup "$(run_said)"; return; }
	dev2=$(rand_tap)
	tap_create "$NS" "$dev2"
	run vnetctl -n "$NS" attach "$dev2"
	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx on
	run vnetctl -n "$NS" coalesce set "$dev2" adaptive-tx on
	agent_start --agent "$DEV" --agent "$dev2" --agent-interval 20 \
		--agent-hold 2 --agent-max-rate 20 ||
		{ fail gone_start "$(agent_log)"; end_case; return; }
	rec 0 32
	rec 0 32 "$dev2"
	busywait 10000 rx_frames_is 32 "$dev2"
	busywait 10000 rx_frames_is 32

	ip -n "$NS" link del "$DEV"
	busywait 5000 grep -q "$DEV: the device is gone" "$VNET_TMP/agent.log"
	alive=$(kill -0 "$AGENT_PID" 2>/dev/null && echo yes || echo no)
	expect "agent still runs" yes "$alive"
	expect "logged" yes "$(grep -q "$DEV: the device is gone" "$VNET_TMP/agent.log" && echo yes || echo no)"
	rec 0 48 "$dev2"
	busywait 10000 rx_frames_is 48 "$dev2"
	expect "the other tap still follows" 48 "$(ethtool_rx_frames "$dev2")"
	report gone_others_go_on "$(agent_log)"

	# the tap comes back and is attached again: the agent picks it up
	run vnetctl -n "$NS" detach "$DEV"
	tap_create "$NS" "$DEV"
	run vnetctl -n "$NS" attach "$DEV"
	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx on
	rec 0 16
	busywait 10000 rx_frames_is 16
	expect "followed again" 16 "$(ethtool_rx_frames)"
	expect "published again" "$AGENT_PID" "$(info agent_pid)"
	report gone_picked_up_again "$(agent_log)"
	end_case
}

# real frames: a bulk stream from the guest on queue 1 moves the BPF
# recommendation to 64, and tun's rx-frames follows
case_traffic()
{
	attached_case traffic || { fail traffic_setup "$(run_said)"; return; }
	run vnetctl -n "$NS" coalesce set "$DEV" adaptive-tx on
	agent_start --agent "$DEV" --agent-interval 20 --agent-hold 2 ||
		{ fail traffic_start "$(agent_log)"; end_case; return; }
	run "$TAPWRITE" -n "$NS" -d "$DEV" -q 2 send 1 urgent 2000 1400
	expect "tapwrite" 0 "$RUN_RC"
	busywait 10000 rx_frames_is 64
	expect "ethtool -c rx-frames after a bulk stream" 64 "$(ethtool_rx_frames)"
	expect "agent target" 64 "$(info agent_target)"
	report traffic_bulk "$(agent_log) $(run_said)"
	end_case
}

# `vnetctl detach` refuses while a vnetd serves the tap (an agent, or a
# vnetd datapath holding its queues), naming the pid and --force.
detach_refused()
{
	local pid=$1 what=$2

	run vnetctl -n "$NS" detach "$DEV"
	expect "$what: detach exit" 1 "$RUN_RC"
	expect "$what: the error names pid $pid" yes "$(grep -q "pid $pid" <<<"$RUN_ERR" && echo yes || echo no)"
	expect "$what: the error names --force" yes "$(grep -q -- "--force" <<<"$RUN_ERR" && echo yes || echo no)"
	expect "$what: pins kept" yes "$(pins_exist "$DEV" && echo yes || echo no)"
}

vnetd_listening()
{
	[ -S "$1" ]
}

case_detach()
{
	local sock vpid

	attached_case detach || { fail detach_setup "$(run_said)"; return; }
	agent_start --agent "$DEV" --agent-interval 50 ||
		{ fail detach_start "$(agent_log)"; end_case; return; }
	detach_refused "$AGENT_PID" agent
	report detach_agent_refused "$(run_said)"
	run vnetctl -n "$NS" detach "$DEV" --force
	expect "agent: detach --force exit" 0 "$RUN_RC"
	expect "agent: pins gone" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	report detach_agent_force "$(run_said)"
	procs_kill KILL

	# a vnetd datapath: it makes and attaches its own tap
	DEV=$(rand_tap)
	sock=$VNET_TMP/detach-$DEV.sock
	"$VNETD" --socket "$sock" --tap "$DEV" --netns "$NS" \
		>"$VNET_TMP/agent.log" 2>&1 &
	vpid=$!
	procs_add "$vpid"
	busywait 20000 vnetd_listening "$sock" ||
		{ fail detach_vnetd_start "$(agent_log)"; end_case; return; }
	detach_refused "$vpid" datapath
	report detach_vnetd_refused "$(run_said)"
	run vnetctl -n "$NS" detach --force "$DEV"
	expect "datapath: detach --force exit" 0 "$RUN_RC"
	expect "datapath: pins gone" yes "$(pins_gone "$DEV" && echo yes || echo no)"
	report detach_vnetd_force "$(run_said)"
	kill -TERM "$vpid" 2>/dev/null
	wait "$vpid" 2>/dev/null
	end_case
}

# --- main ---------------------------------------------------------------------------

ksft_args "$@"
require_root test_agent || exit 0
require_cmd test_agent ip jq bpftool ethtool stdbuf "$VNETCTL" "$VNETD" \
	"$TAPWRITE" || exit 0

ksft_run end_case # after each case, in case it returned early
ksft_exit
