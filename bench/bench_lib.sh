# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# What the benchmarks share (sourced, bash; bench_vnetd.sh,
# bench_vnetd_rate.sh, bench_vnetd_scale.sh, bench_xmit.sh): their options
# and usage text
# (opts.sh), errors and
# preconditions, bounded waits for processes, the end of their logs, a
# process's CPU time and wake-ups summed over its threads, the machine facts
# every figure is quoted with, and min/median/max.  Sets `here`, `top` and
# `out` (the build directory, $OUT or build/).  A script sets BENCH_NAME
# (its errors' prefix), LOGS and failed.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
out=${OUT:-build}
case $out in
/*) ;;
*) out=$top/$out ;;
esac

# shellcheck source=bench/opts.sh
source "$here/opts.sh"

err()
{
	echo "$BENCH_NAME: $*" >&2
}

posint()	# posint WORD: a positive integer
{
	case $1 in
	'' | *[!0-9]* | 0*) return 1 ;;
	esac
}

# bench_need_root WHY / bench_need_exec FILE... / bench_need_cmd CMD...:
# exit 1 with the fix when one is missing
bench_need_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		err "must run as root ($1)"
		exit 1
	fi
}

bench_need_exec()
{
	local b

	for b in "$@"; do
		if [ ! -x "$b" ]; then
			err "$b not found; build it with 'make all'"
			exit 1
		fi
	done
}

bench_need_cmd()
{
	local c

	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || { err "needs $c"; exit 1; }
	done
}

# bench_logs_done: the end of the EXIT trap: LOGS removed, or kept (and
# said) when a measurement failed
bench_logs_done()
{
	# shellcheck disable=SC2154 # the script's
	if [ "$failed" -eq 0 ]; then
		rm -rf "$LOGS"
	else
		err "logs kept in $LOGS"
	fi
}

# wait_pid PID SECONDS: bounded wait for PID (a child) to exit, then SIGKILL
wait_pid()
{
	local pid=$1 n=$(($2 * 20))

	while kill -0 "$pid" 2>/dev/null && [ "$n" -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# stop_pid PID [SIGNAL]: SIGNAL (TERM), then at most 15 s
stop_pid()
{
	[ -n "$1" ] || return 0
	kill -"${2:-TERM}" "$1" 2>/dev/null
	wait_pid "$1" 15
}

# bench_soak_setup NAME: vnetd and the soak frontends on CPUs of their own
# (VNETD_CPU, SOAK_CPU; both 0, said, on one CPU), the run's id, its netns
# NS (vnet-b-NAME-PID) and a fresh log directory LOGS
# shellcheck disable=SC2034 # the caller's variables
bench_soak_setup()
{
	if [ "$(nproc)" -lt 2 ]; then
		VNETD_CPU=0 SOAK_CPU=0
		err "one CPU: vnetd and its frontends share it"
	fi
	id=$(printf %06x $(($$ & 0xffffff)))
	NS=vnet-b-$1-$$
	LOGS=$(mktemp -d "/tmp/vnet-bench-$1.XXXXXX")
}

# interrupt_pids SECONDS PID...: each PID continued (SIGCONT) and sent
# SIGINT, all at once, then each waited for (wait_pid SECONDS)
interrupt_pids()
{
	local secs=$1 p

	shift
	for p in "$@"; do
		kill -CONT "$p" 2>/dev/null
		kill -INT "$p" 2>/dev/null
	done
	for p in "$@"; do
		wait_pid "$p" "$secs"
	done
}

# wait_for SECONDS PID CMD...: CMD succeeds (tried every 50 ms, for
# SECONDS at the most) while PID lives
wait_for()
{
	local n=$(($1 * 20)) pid=$2

	shift 2
	until "$@"; do
		kill -0 "$pid" 2>/dev/null || return 1
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
		n=$((n - 1))
	done
}

# wait_line FILE REGEX SECONDS PID: FILE has a line matching REGEX
# (bounded) while PID lives
wait_line()
{
	wait_for "$3" "$4" grep -qs -- "$2" "$1"
}

# tap_rx_frames NS PREFIX: the frames received (rx_packets) by NS's links
# whose names start with PREFIX, summed: what frontends sent through vnetd
tap_rx_frames()
{
	ip -n "$1" -s -j link show 2>/dev/null |
		jq --arg p "$2" '[.[] | select(.ifname | startswith($p)) |
			.stats64.rx.packets] | add // 0'
}

# proc_sample PID: "CPU_NS VOLUNTARY NONVOLUNTARY THREADS WAIT_NS" summed
# over PID's threads: time on a CPU (schedstat, ns), context switches
# (/proc/PID/task/*/status), the threads, time spent runnable waiting for
# a CPU (schedstat); "nan nan nan 0 nan" when PID is gone
proc_sample()
{
	local t=(/proc/"$1"/task/*)

	[ -e "${t[0]}" ] || { echo "nan nan nan 0 nan"; return; }
	awk -v n="${#t[@]}" '
		FILENAME ~ /schedstat$/ { c += $1; w += $2; next }
		/^voluntary_ctxt_switches:/ { v += $2 }
		/^nonvoluntary_ctxt_switches:/ { nv += $2 }
		END { printf "%.0f %d %d %d %.0f\n", c, v, nv, n, w }' \
		"${t[@]/%//schedstat}" "${t[@]/%//status}" 2>/dev/null
}

# proc_cpu PID: PID's time on a CPU in ns, its exited threads' included
# (/proc/PID/stat utime + stime, to the clock tick), or nan
proc_cpu()
{
	local hz

	hz=$(getconf CLK_TCK)
	awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' \
		/proc/"$1"/stat 2>/dev/null || echo nan
}

# machine_facts: one line, what the figures depend on
machine_facts()
{
	local model sys

	model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	sys=$("$out/bench/evstat" --syscall-ns 2>/dev/null)
	echo "$(nproc) CPUs (${model:-unknown model}), kernel $(uname -r)," \
		"a null syscall ${sys:-?} ns, load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# rep_order REP ITEM...: the ITEMs one a line, in their order on odd
# repetitions and the other way round on even ones (no arm always first)
rep_order()
{
	local i

	[ $# -gt 1 ] || return 0
	if (($1 % 2 == 0)); then
		for ((i = $#; i > 1; i--)); do
			echo "${!i}"
		done
	else
		printf '%s\n' "${@:2}"
	fi
}

# mmm "v1 v2 ...": "min median max" of the numbers (nan left out)
mmm()
{
	echo "$1" | tr ' ' '\n' | awk 'NF && $1 != "nan"' | sort -g |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) { print "nan nan nan"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%g %g %g\n", v[1], m, v[NR] }'
}
