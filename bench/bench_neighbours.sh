#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Does a flooding neighbour reach a guest's round trips, and does a rate
# limit on the neighbour keep it out (docs/limits.md)?  One vnetd serves
# three ports: a real guest (QEMU TCG, the e2e guest) as the victim, and
# two ports whose test frontends (selftests/vnetd/soak.c) flood each other
# through a bridge.  The guest runs sockperf ping-pong against the host
# (UDP, and TCP at 100 messages/s: sparse) under three arms, interleaved
# over the repetitions:
#
#   quiet     the neighbours connected and idle
#   flood     the neighbours at full rate (soak --rate RATE)
#   limited   the same flood with each neighbour's guest TX limited
#             (vnetctl limit set TAP tx pkts-rate LIMIT)
#
# Prints each arm's p50 and p99 (us) per repetition and their ratios to
# the quiet arm of the same repetition, with the median, min and max.
#
#   bench/bench_neighbours.sh [-r REPS] [-s SECS] [-R RATE] [-L LIMIT]
#
# Defaults: 3 repetitions of 10 s, RATE 200000 frames/s offered, LIMIT
# 2000 frames/s.  Root; QEMU, sockperf and the e2e guest
# (selftests/e2e/build-guest.sh builds it).
# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/guest_lib.sh
source "$HERE/guest_lib.sh"

REPS=3
SECS=10
RATE=200000
LIMIT=2000
# shellcheck source=bench/opts.sh
source "$(dirname "$0")/opts.sh"
bench_opts "r:REPS s:SECS R:RATE L:LIMIT" "$@"

bench_guest_ready bench_neighbours
SOAK=$OUT/selftests/soak
[ -x "$SOAK" ] || { echo "bench_neighbours: $SOAK is not built (make)" >&2; exit 1; }

trap '[ "$BASHPID" = "$$" ] && { vm_cleanup_all; _cleanup_all; }' EXIT

NS=vnet-bn-$$
H=$E2E_HOST_IP
V=vbnv$$
F0=vbnf0$$
F1=vbnf1$$
BR=vbnb$$
GL=$OUT/bench/neighbours
RES=$GL/results.tsv
mkdir -p "$GL"
rm -f "$GL"/*.sock
: >"$RES"
ip netns add "$NS" || exit 1
_vm_all_ns+=("$NS")
ip -n "$NS" link set lo up
for t in "$V" "$F0" "$F1"; do
	ip -n "$NS" tuntap add dev "$t" mode tap multi_queue vnet_hdr || exit 1
	_vm_all_taps+=("$t")
	ip -n "$NS" link set "$t" up
done
ip -n "$NS" addr add "$H/24" dev "$V"
ip -n "$NS" link add "$BR" type bridge
ip -n "$NS" link set "$F0" master "$BR"
ip -n "$NS" link set "$F1" master "$BR"
ip -n "$NS" link set "$BR" up
d_start DPID "$GL/vnetd.log" --netns "$NS" \
	--port "socket=$GL/victim.sock,tap=$V" \
	--port "socket=$GL/f0.sock,tap=$F0" --port "socket=$GL/f1.sock,tap=$F1" ||
	{ echo "bench_neighbours: vnetd did not start: $(tail -3 "$GL/vnetd.log")" >&2; exit 1; }
ip netns exec "$NS" sockperf server --tcp -p 11111 >"$GL/sockperf-tcp.log" 2>&1 &
_vm_all_pids+=("$!")
ip netns exec "$NS" sockperf server -p 11112 >"$GL/sockperf-udp.log" 2>&1 &
_vm_all_pids+=("$!")
g_start v "$GL/victim.sock"
g_ready v 120 || { echo "bench_neighbours: the guest did not come up" >&2; exit 1; }

# the neighbours' flood: soak's frontends connect and post their buffers,
# then flood from SIGUSR1 until SIGINT (a new soak for each flooding run)
SPID=""
flood_start()
{
	"$SOAK" --sock "$GL/f%u.sock" --ports 2 --qp 1 --secs 100000 --warmup 0 \
		--rate "$RATE" --go --max-lag 50 --pid "$DPID" >"$GL/soak.log" 2>&1 &
	SPID=$!
	_vm_all_pids+=("$SPID")
	_vm_poll 20000 grep -q '^ready' "$GL/soak.log" ||
		{ echo "bench_neighbours: the neighbours did not connect: $(tail -3 "$GL/soak.log")" >&2; return 1; }
	kill -USR1 "$SPID"
}

flood_stop()
{
	[ -n "$SPID" ] || return 0
	kill -INT "$SPID" 2>/dev/null
	_vm_poll 20000 _vm_gone "$SPID" || kill -KILL "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
	grep '^done' "$GL/soak.log" >>"$GL/soak-done.log"
	SPID=""
}

# cpu_ticks PID: user + system clock ticks of PID so far (0: gone)
cpu_ticks()
{
	[ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] || { echo 0; return; }
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# rr WORKLOAD ARM REP: one sockperf run of the guest, a line of results.tsv
# (with vnetd's and the flooders' share of a CPU during it, %)
rr()
{
	local args out p50 p99 d0 s0 t0 d1 s1 t1 hz

	case $1 in
	udp-rr) args="-i $H -p 11112" ;;
	tcp-sparse) args="--tcp -i $H -p 11111 --mps=100" ;;
	esac
	d0=$(cpu_ticks "$DPID")
	s0=$(cpu_ticks "$SPID")
	t0=$(date +%s%N)
	out=$(g_cmd v $((SECS + 30)) "sockperf ping-pong $args -m 64 -t $SECS --full-rtt 2>&1 | sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/p50 \1/p; s/.*percentile 99.000 = *\([0-9.]*\).*/p99 \1/p'")
	d1=$(cpu_ticks "$DPID")
	s1=$(cpu_ticks "$SPID")
	t1=$(date +%s%N)
	hz=$(getconf CLK_TCK)
	p50=$(awk '$1 == "p50" { print $2 }' <<<"$out")
	p99=$(awk '$1 == "p99" { print $2 }' <<<"$out")
	[ -n "$p50" ] && [ -n "$p99" ] || { echo "bench_neighbours: $1 $2: no result: $out" >&2; return 1; }
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$p50" "$p99" \
		"$(awk -v a="$d0" -v b="$d1" -v t=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.1f", (b - a) / hz / (t / 1e9) * 100 }')" \
		"$(awk -v a="$s0" -v b="$s1" -v t=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.1f", (b > a ? b - a : 0) / hz / (t / 1e9) * 100 }')" >>"$RES"
}

limit()	# on|off
{
	local t

	for t in "$F0" "$F1"; do
		if [ "$1" = on ]; then
			"$VNETCTL" -n "$NS" limit set "$t" tx pkts-rate "$LIMIT"
		else
			"$VNETCTL" -n "$NS" limit clear "$t"
		fi
	done
}

# the arms interleaved, their order turned each repetition
ARMS=(quiet flood limited)
for ((r = 1; r <= REPS; r++)); do
	for ((i = 0; i < 3; i++)); do
		a=${ARMS[$(((i + r - 1) % 3))]}
		if [ "$a" = limited ]; then limit on; else limit off; fi
		[ "$a" = quiet ] || flood_start || continue
		for w in udp-rr tcp-sparse; do
			rr "$w" "$a" "$r"
		done
		flood_stop
	done
done
limit off
g_send v quit
g_wait v 60 || g_kill v KILL
d_stop "$DPID"

echo "# bench_neighbours: $(nproc) CPUs, $(uname -r), guest under TCG; $REPS x $SECS s; flood $RATE frames/s offered by 2 neighbour ports, limited to $LIMIT frames/s each"
echo "# workload arm     p50 us median [min-max]   p99 us median [min-max]   p50 / quiet   p99 / quiet   vnetd CPU %   flooders' CPU %"
for w in udp-rr tcp-sparse; do
	for a in quiet flood limited; do
		awk -F'\t' -v w="$w" -v a="$a" '
			function med(x, n,   i, j, t) {
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
					if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
				return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
			$1 == w && $2 == "quiet" { q50[$3] = $4; q99[$3] = $5 }
			$1 == w && $2 == a { n++; p50[n] = $4; p99[n] = $5; rep[n] = $3; dc[n] = $6; sc[n] = $7 }
			END { if (!n) exit
				for (i = 1; i <= n; i++) { r50[i] = p50[i] / q50[rep[i]]; r99[i] = p99[i] / q99[rep[i]] }
				m50 = med(r50, n); m99 = med(r99, n)
				a50 = med(p50, n); a99 = med(p99, n)
				printf "%-10s %-8s %8.1f [%.1f-%.1f]   %8.1f [%.1f-%.1f]   %.2fx [%.2f-%.2f]   %.2fx [%.2f-%.2f]   %5.1f   %5.1f\n",
					w, a, a50, p50[1], p50[n], a99, p99[1], p99[n], m50, r50[1], r50[n], m99, r99[1], r99[n], med(dc, n), med(sc, n) }' "$RES"
	done
done
