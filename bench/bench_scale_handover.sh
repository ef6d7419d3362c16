# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# bench_vnetd_scale.sh -H: a hand-over of the N ports while every frontend
# sends (sourced by bench_vnetd_scale.sh; its variables: VNETD, VNETD_PID,
# SOAK_PID, UNIXSOCK, LOGS, VNETD_CPU, VNETD_ARGS, port_args, rec).
#
# ho_gaps: soak's "gaps" line about the time since the one before (SIGURG,
# selftests/vnetd/soak.c), printed; bounded
ho_gaps()
{
	local before

	before=$(grep -c '^gaps ' "$LOGS/soak.out")
	kill -URG "$SOAK_PID" || return 1
	wait_for 10 "$SOAK_PID" ho_more_gaps "$before" || return 1
	grep '^gaps ' "$LOGS/soak.out" | tail -n 1
}

ho_more_gaps()	# ho_more_gaps COUNT: soak printed more gaps lines than COUNT
{
	[ "$(grep -c '^gaps ' "$LOGS/soak.out")" -gt "$1" ]
}

# ho_field LINE KEY: KEY=VALUE's value in LINE
ho_field()
{
	awk -v k="$2" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' <<<"$1"
}

# ho_gone PID SECONDS: PID (not necessarily a child) exited, polled every
# 5 ms; bounded
ho_gone()
{
	local n=$(($2 * 200))

	while kill -0 "$1" 2>/dev/null; do
		[ "$n" -gt 0 ] || return 1
		sleep 0.005
		n=$((n - 1))
	done
}

# ho_orphans: the --takeover vnetds of this run (their pids, by this run's
# socket path), in case one outlived a failed measurement
ho_orphans()
{
	pgrep -f -- "--takeover .*socket=$LOGS/p0\.sock," 2>/dev/null
}

# handover N REP: the gaps over HO_BASE seconds without a hand-over (the
# frontends' own), then `vnetd --takeover --detach --release-missing` with
# the same ports, as the units' ExecReload= runs it, and the gaps from
# just before it to 1 s after the new vnetd's READY=1.  VNETD_PID is the
# new vnetd's from then on.  Records "handover WALL_S READY_S MAX_MS
# MEDIAN_MS OVER50 LOST SENT" and "handover-base MAX_MS MEDIAN_MS OVER50
# LOST".
handover()
{
	local n=$1 rep=$2 ns=$LOGS/notify-ho.sock old=$VNETD_PID base line
	local t0 tx tr new tk rc p

	ho_gaps >/dev/null || { err "$n ports: soak printed no gaps line"; return 1; }
	sleep "${HO_BASE:-2}"
	base=$(ho_gaps) || { err "$n ports: soak printed no gaps line"; return 1; }
	rm -f "$ns"
	"$UNIXSOCK" notify-ts "$ns" 7200 >"$LOGS/notify-ho.out" 2>&1 &
	NOTIFY_PID=$!
	procs_add "$NOTIFY_PID"
	wait_for 10 "$NOTIFY_PID" test -S "$ns" || { err "unixsock notify-ts failed"; return 1; }
	mapfile -t args < <(port_args "$n")
	ho_gaps >/dev/null || { err "$n ports: soak printed no gaps line"; return 1; }
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2086 # VNETD_ARGS: words
	NOTIFY_SOCKET=$ns taskset -c "$VNETD_CPU" "$VNETD" --takeover --detach \
		--release-missing "${args[@]}" ${VNETD_ARGS:-} >"$LOGS/takeover.log" 2>&1 &
	tk=$!
	procs_add "$tk"
	ho_gone "$old" $((60 + n / 4))
	tx=$EPOCHREALTIME
	rc=124
	if ho_gone "$tk" 30; then
		wait "$tk" 2>/dev/null
		rc=$?
	fi
	# the new vnetd (detached: not a child) is stopped by pid at the end
	new=$(sed -n 's/.*MAINPID=\([0-9]*\).*/\1/p' "$LOGS/notify-ho.out" | tail -n 1)
	for p in $new $(ho_orphans); do
		procs_add "$p"
	done
	if kill -0 "$old" 2>/dev/null || [ -z "$new" ] || [ "$rc" -ne 0 ] ||
		! kill -0 "$new" 2>/dev/null; then
		err "$n ports: the hand-over failed (exit status $rc): $(tail -n 3 "$LOGS/takeover.log")"
		return 1
	fi
	VNETD_PID=$new
	tr=$(awk '/READY=1/ { print $1; exit }' "$LOGS/notify-ho.out")
	stop_pid "$NOTIFY_PID" TERM
	NOTIFY_PID=
	sleep 1
	line=$(ho_gaps) || { err "$n ports: soak printed no gaps line"; return 1; }
	rec "$n" "$rep" handover "$(awk -v a="$t0" -v b="$tx" -v r="$tr" \
		'BEGIN { printf "%.4f %.4f", b - a, r ? r - a : "nan" }')" \
		"$(ho_field "$line" max_ms)" "$(ho_field "$line" median_ms)" \
		"$(ho_field "$line" over50)" "$(ho_field "$line" lost)" \
		"$(ho_field "$line" sent)"
	rec "$n" "$rep" handover-base "$(ho_field "$base" max_ms)" \
		"$(ho_field "$base" median_ms)" "$(ho_field "$base" over50)" \
		"$(ho_field "$base" lost)"
}

# ho_stop: a --takeover vnetd of this run still there (not a child of the
# bench: procs_kill cannot wait for it) ends before the netns goes
ho_stop()
{
	local p

	for p in ${VNETD_PID:-} $(ho_orphans); do
		kill -TERM "$p" 2>/dev/null && ho_gone "$p" 30
		kill -KILL "$p" 2>/dev/null
	done
	return 0
}

# ho_report: the table per N and the target's verdict
ho_report()
{
	local n

	echo
	echo "hand-over of N ports (vnetd --takeover --detach --release-missing, the units' ExecReload=) while every frontend sends $RATE frames/s: wall time from the exec to the old vnetd's exit; the new vnetd's READY=1; per port the longest gap between two frames it received, from just before the hand-over to 1 s after it (soak's gaps; at $RATE frames/s a gap of $(awk -v r="$RATE" 'BEGIN { printf "%.0f", 1000 / r }') ms is no pause), and the same over ${HO_BASE:-2} s without a hand-over just before"
	echo
	echo "| ports | hand-over, ms | new vnetd ready, ms | ring pause max, ms | median over ports, ms | ports over 50 ms | frames lost | no hand-over: max, ms | median, ms | over 50 ms |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for n in $COUNTS; do
		echo "| $n | $(cell %.0f "$n" handover 1 1000) | $(cell %.0f "$n" handover 2 1000) | $(cell %.1f "$n" handover 3) | $(cell %.1f "$n" handover 4) | $(cell %.0f "$n" handover 5) | $(cell %.0f "$n" handover 6) | $(cell %.1f "$n" handover-base 1) | $(cell %.1f "$n" handover-base 2) | $(cell %.0f "$n" handover-base 3) |"
	done
	verdict "hand-over of $MAXN ports, rings paused <= 50 ms" "$(med "$MAXN" handover 3)" 50
}
