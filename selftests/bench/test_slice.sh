#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench_vnetd_io slice, the time-sliced A/B of bench/bench_vnetd.sh: two
# write loops (--seconds 0) into two taps of a netns, switched by
# SIGSTOP/SIGCONT.  It measures every arm in every round, and no arm is
# left stopped: not when it ends, not on SIGTERM, not when an arm dies.
# No timing is asserted (make check runs at SCHED_IDLE).
#
#   selftests/bench/test_slice.sh          (root)

# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/../lib.sh"
KSFT_PREFIX=slice

ALL_CASES="rounds sigterm arm_gone bad_arm"

IO=${IO:-$OUT/bench/bench_vnetd_io}

# the writers (procs_add) are killed, not asked to stop
end_case()
{
	procs_kill KILL
	case_cleanup
}
trap 'end_case; _cleanup_all' EXIT

# stopped PID: PID is in the stopped state (T)
stopped()
{
	[ "$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)" = T ]
}

# one_stopped: $PA or $PB is stopped
one_stopped()
{
	stopped "$PA" || stopped "$PB"
}

# gone PID
gone()
{
	! kill -0 "$1" 2>/dev/null
}

# running PID: PID lives and is not stopped
running()
{
	kill -0 "$1" 2>/dev/null && ! stopped "$1"
}

# writers CASE: a netns with taps $TA and $TB, a write loop into each
# ($PA, $PB) that runs until killed, both moving frames
writers()
{
	ns_create "$1" || return 1
	TA=$(rand_tap)
	TB=$(rand_tap)
	tap_create "$NS" "$TA" && tap_create "$NS" "$TB" || return 1
	"$IO" write --netns "$NS" --tap "$TA" --size 64 --seconds 0 \
		--warmup 0 >/dev/null 2>&1 &
	PA=$!
	"$IO" write --netns "$NS" --tap "$TB" --size 64 --seconds 0 \
		--warmup 0 >/dev/null 2>&1 &
	PB=$!
	procs_add "$PA" "$PB"
	busywait 10000 moved "$TA" && busywait 10000 moved "$TB"
}

# moved DEV: DEV has received frames
moved()
{
	positive "$(ip netns exec "$NS" cat "/sys/class/net/$1/statistics/rx_packets")"
}

case_rounds()
{
	local n

	if ! writers rounds; then
		fail rounds "the write loops did not start"
		return
	fi
	run timeout 60 "$IO" slice --netns "$NS" --rounds 5 --slice-ms 50 \
		--settle-ms 10 --arm "a:$PA:$TA" --arm "b:$PB:$TB"
	expect "exit status" 0 "$RUN_RC"
	n=$(echo "$RUN_ERR" | grep -c '^  round ')
	expect "round lines" 5 "$n"
	# both arms moved frames in their slices (the median slice; a
	# single slice may get no CPU at SCHED_IDLE)
	n=$(echo "$RUN_OUT" | awk '$1 == "a" || $1 == "b"' | awk '$3 != "0.0k"' | wc -l)
	expect "arms with frames in the median slice" 2 "$n"
	# (printed again over the undisturbed rounds when there are some)
	n=$(echo "$RUN_OUT" | grep -E '^  a/b +[0-9.]+ / [0-9.]+ / [0-9.]+  p90 [0-9.]+  p\(>=0.95\) ' | head -n 1 | wc -l)
	expect "the a/b ratio line" 1 "$n"
	expect "a running after" yes "$(running "$PA" && echo yes)"
	expect "b running after" yes "$(running "$PB" && echo yes)"
	report rounds "$(run_said)"
	end_case
}

# SIGTERM while it slices: it ends at once and continues both
case_sigterm()
{
	local sp rc

	if ! writers sigterm; then
		fail sigterm "the write loops did not start"
		return
	fi
	"$IO" slice --netns "$NS" --rounds 1000 --slice-ms 50 --settle-ms 10 \
		--arm "a:$PA:$TA" --arm "b:$PB:$TB" >/dev/null \
		2>"$VNET_TMP/sigterm.err" &
	sp=$!
	# slicing: one of them is stopped
	# (seen once is the fact: between two slices both arms run, so a
	# second look may find neither stopped)
	local seen=no
	busywait 10000 one_stopped && seen=yes
	expect "an arm stopped while slicing" yes "$seen"
	# a few rounds in, then SIGTERM in the middle of one
	busywait 10000 sh -c "[ \$(grep -c '^  round ' '$VNET_TMP/sigterm.err') -ge 2 ]"
	kill -TERM "$sp"
	wait "$sp"
	rc=$?
	expect "exit status" 1 "$rc"
	expect "a running after" yes "$(running "$PA" && echo yes)"
	expect "b running after" yes "$(running "$PB" && echo yes)"
	expect "says so" 1 "$(grep -c 'interrupted after' "$VNET_TMP/sigterm.err")"
	report sigterm "$(tail -n 2 "$VNET_TMP/sigterm.err")"
	end_case
}

# an arm dies: an error, and the other one is continued
case_arm_gone()
{
	local sp rc

	if ! writers gone; then
		fail arm-gone "the write loops did not start"
		return
	fi
	"$IO" slice --netns "$NS" --rounds 1000 --slice-ms 50 --settle-ms 10 \
		--arm "a:$PA:$TA" --arm "b:$PB:$TB" >/dev/null \
		2>"$VNET_TMP/gone.err" &
	sp=$!
	busywait 10000 grep -q '^  round ' "$VNET_TMP/gone.err"
	kill -KILL "$PA"
	wait "$PA" 2>/dev/null
	busywait 10000 gone "$sp"
	wait "$sp"
	rc=$?
	expect "exit status" 1 "$rc"
	expect "b running after" yes "$(running "$PB" && echo yes)"
	expect "names the arm" 1 "$(grep -c "a (PID $PA) is gone" "$VNET_TMP/gone.err")"
	report arm-gone "$(tail -n 2 "$VNET_TMP/gone.err")"
	end_case
}

case_bad_arm()
{
	run "$IO" slice --arm "a:1:lo" --arm "b:$$:lo"
	expect "PID 1 refused" 1 "$RUN_RC"
	expect "says why" 1 "$(echo "$RUN_ERR" | grep -c 'bad PID 1')"
	run "$IO" slice --arm "a:$$:lo"
	expect "one arm refused" 1 "$RUN_RC"
	run "$IO" slice --arm "a:$$:lo:$$/1" --arm "b:$$:lo"
	expect "a thread not of PID refused" 1 "$RUN_RC"
	expect "names it" 1 "$(echo "$RUN_ERR" | grep -c "no thread $$/1")"
	report bad-arm "$(run_said)"
}

ksft_args "$@"
if require_root slice && require_cmd slice timeout; then
	ksft_run :
fi
ksft_exit
