#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# What attached taps cost every OTHER device of the host: CPU ns per frame
# transmitted on the loopback device of a namespace of its own
# (build/bench/bench_xmit_send, AF_PACKET sendmmsg, 64 B) with 0, 1, 16 and
# 64 taps attached by vnetctl, each tap in a private network namespace.
# Guest-RX counting hooks the net_dev_start_xmit tracepoint, which fires for
# every device's transmit (docs/design.md); the loopback device stands for a
# host's physical NIC (this kernel has neither dummy nor veth; lo transmits
# synchronously, and receives the frame it sent, addressed to a MAC nobody
# has, only to drop it: a constant cost in every configuration).
#
# The machine is noisy: every repetition measures every tap count, the
# order alternating (even repetitions attach taps 0 -> 64, odd ones detach
# them 64 -> 0), and the figure is the sender's own CPU time (user +
# system), not wall-clock time.  Prints min/median/max over repetitions
# and the number of programs the kernel has on the tracepoint.
#
#   bench/bench_xmit.sh [-r REPS] [-n FRAMES] [-c "0 1 16 64"] [-C CPU]
#
# VNETCTL (default build/vnetctl) is the vnetctl that attaches: pointing it
# at another build measures that build.  Needs root.

set -u

# shellcheck source=bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
VNETCTL=${VNETCTL:-$out/vnetctl}
SEND=$out/bench/bench_xmit_send

reps=5
frames=400000
counts="0 1 16 64"
cpu=1

bench_opts "r:reps n:frames c:counts C:cpu" "$@"

if [ "$(id -u)" -ne 0 ]; then
	echo "bench_xmit.sh: must run as root" >&2
	exit 1
fi
for f in "$VNETCTL" "$SEND"; do
	if [ ! -x "$f" ]; then
		echo "bench_xmit.sh: $f not found; run 'make all'" >&2
		exit 1
	fi
done
if ! command -v bpftool >/dev/null || ! command -v jq >/dev/null; then
	echo "bench_xmit.sh: needs bpftool and jq" >&2
	exit 1
fi

max=0
for c in $counts; do
	[ "$c" -gt "$max" ] && max=$c
done

NS_TX=vnet-bx-tx-$$
NS_TAPS=vnet-bx-taps-$$
# pins are global (/sys/fs/bpf/vnet/DEV): names unique to this run
tapname()
{
	echo "bx$$t$1"
}

attached=0

cleanup()
{
	local i

	for ((i = attached; i > 0; i--)); do
		"$VNETCTL" -n "$NS_TAPS" detach "$(tapname "$i")" >/dev/null 2>&1
	done
	ip netns del "$NS_TX" 2>/dev/null
	ip netns del "$NS_TAPS" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS_TX" || exit 1
ip netns add "$NS_TAPS" || exit 1
ip -n "$NS_TX" link set lo up || exit 1
for ((i = 1; i <= max; i++)); do
	ip -n "$NS_TAPS" tuntap add dev "$(tapname "$i")" mode tap multi_queue vnet_hdr || exit 1
	ip -n "$NS_TAPS" link set "$(tapname "$i")" up || exit 1
done

# set_taps N: attach or detach until N taps are attached
set_taps()
{
	while [ "$attached" -lt "$1" ]; do
		attached=$((attached + 1))
		"$VNETCTL" -n "$NS_TAPS" attach "$(tapname "$attached")" >/dev/null 2>"$out/bench_xmit.err" || {
			echo "bench_xmit.sh: attach $(tapname "$attached") failed: $(cat "$out/bench_xmit.err")" >&2
			exit 1
		}
	done
	while [ "$attached" -gt "$1" ]; do
		"$VNETCTL" -n "$NS_TAPS" detach "$(tapname "$attached")" >/dev/null 2>&1
		attached=$((attached - 1))
	done
}

# programs on the tracepoint (raw_tracepoint or tracing links)
tp_progs()
{
	bpftool -j link list 2>/dev/null |
		jq '[.[] | select((.type == "raw_tracepoint" or .type == "tracing") and (.tp_name // "" | test("net_dev_start_xmit")))] | length'
}

declare -A samples progs
ordered=()
for c in $counts; do
	ordered+=("$c")
done

echo "# bench_xmit: $frames frames of 64 B per sample on lo of a private netns, sender on CPU $cpu, $reps repetitions"
echo "# vnetctl: $VNETCTL"
for ((r = 0; r < reps; r++)); do
	if [ $((r % 2)) -eq 0 ]; then
		order=("${ordered[@]}")
	else
		order=()
		for ((i = ${#ordered[@]} - 1; i >= 0; i--)); do
			order+=("${ordered[i]}")
		done
	fi
	for c in "${order[@]}"; do
		set_taps "$c"
		progs[$c]=$(tp_progs)
		ns=$(ip netns exec "$NS_TX" taskset -c "$cpu" "$SEND" -i lo -n "$frames" | awk '{ print $2 }')
		[ -n "$ns" ] || { echo "bench_xmit.sh: sender failed" >&2; exit 1; }
		samples[$c]+="$ns "
		echo "# rep $r taps $c: $ns ns/frame (tracepoint programs: ${progs[$c]})"
	done
done

# min median max of a list of numbers
stats()
{
	tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f %.1f %.1f", v[1], m, v[NR] }'
}

echo
printf "%-6s %10s %10s %10s %12s %s\n" taps min median max "+median" "tracepoint programs"
base=""
for c in "${ordered[@]}"; do
	read -r mn md mx <<<"$(echo "${samples[$c]}" | stats)"
	[ -n "$base" ] || base=$md
	printf "%-6s %10s %10s %10s %12s %s\n" "$c" "$mn" "$md" "$mx" \
		"$(awk -v a="$md" -v b="$base" 'BEGIN { printf "%+.1f", a - b }')" \
		"${progs[$c]}"
done
echo "# ns per frame of the sender's CPU time (user + system); +median: over ${ordered[0]} taps"
