#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The main job with a real guest, in about a minute: QEMU (software
# emulation, no KVM needed) boots Debian's own kernel, whose unmodified
# virtio_net driver talks to vnetd over vhost-user; vnetd moves the frames
# to a tap in a private network namespace, with vnet's classifier attached.
# The guest pings the host, then runs the same two workloads on vnet's
# defaults and with coalescing off (`vnetctl coalesce set TAP tx-frames 0
# rx-frames 0`, live: a signal per burst) while the stats go by on screen:
# a TCP stream of small writes (iperf3 -l 256), once each, and a UDP round
# trip (sockperf ping-pong) in two halves each, defaults-off-off-defaults.
# It ends with both side by side, the guest's interrupts per MB of the
# stream and the round trip's p50, and one line saying what they mean
# (scripts/demo-lib.sh).
#
# Without QEMU (qemu-system-x86) it says so and runs the synthetic demo
# (scripts/demo.sh: frames written into the tap the way QEMU writes them).
#
#   scripts/demo-vm.sh            (root; `make` first)
#
# Environment: VNET_DEMO_SECS (seconds of each stream, default 8),
# VNET_DEMO_RR_SECS (of each arm's round trip, default 4), VNET_DEMO_WRITE
# (the stream's write size, default 256), OUT (the build, default build).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$top/build}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
# shellcheck source=selftests/e2e/vm.sh
source "$top/selftests/e2e/vm.sh"
# shellcheck source=scripts/demo-lib.sh
source "$top/scripts/demo-lib.sh"
SECS=${VNET_DEMO_SECS:-8}
RR_SECS=${VNET_DEMO_RR_SECS:-4}
WRITE=${VNET_DEMO_WRITE:-256}

if [ "$(id -u)" != 0 ]; then
	echo "Error: the demo needs root (BPF, a network namespace, a tap)" >&2
	exit 1
fi
for b in "$VNETD" "$VNETCTL"; do
	[ -x "$b" ] || { echo "Error: $b is missing; run 'make' first" >&2; exit 1; }
done
if ! reason=$("$top/selftests/e2e/build-guest.sh" --check); then
	echo "demo-vm: no real guest here: $reason"
	echo "demo-vm: running the synthetic demo instead (scripts/demo.sh)"
	exec "$top/scripts/demo.sh"
fi
for c in iperf3 sockperf jq ping ss; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "demo-vm: $c not found (./scripts/bootstrap.sh installs it);" \
			"running the synthetic demo instead (scripts/demo.sh)"
		exec "$top/scripts/demo.sh"
	fi
done

watcher=""
cleanup()
{
	# not in a background job killed before its exec
	[ "$BASHPID" = "$$" ] || return 0
	[ -n "$watcher" ] && kill "$watcher" 2>/dev/null && wait "$watcher" 2>/dev/null
	vm_cleanup_all
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step()
{
	printf '\n\033[1m== %s\033[0m\n' "$*"
}

# show_guest: the guest's new "VNET: " lines since the last call
shown=0
show_guest()
{
	local lines

	lines=$(guest_lines | grep -v '^{')
	printf '%s\n' "$lines" | tail -n +$((shown + 1)) | sed 's/^/   guest: /'
	shown=$(printf '%s\n' "$lines" | wc -l)
}

t0=$SECONDS
step "the guest: Debian's kernel and virtio modules, busybox, iperf3 (build/e2e/, cached)"
guest=$("$top/selftests/e2e/build-guest.sh") || exit 1
while read -r l; do
	echo "   $l"
done <<<"$guest"
echo "   kernel $(cat "$E2E_DIR/kernel.version"), straight from the package $(cat "$E2E_DIR/kernel.stamp")"

vm_init demo || exit 1
step "vnetd: vhost-user socket $VM_SOCK, tap $VM_TAP in netns $VM_NS"
vnetd_start --queues 1 || { tail -n 5 "$VNETD_LOG"; exit 1; }
vm_host_addr || exit 1
sed 's/^vnetd: [^ ]*: /   vnetd: /' "$VNETD_LOG"
for p in 5201 5202; do
	iperf_server $p || exit 1
done
ip netns exec "$VM_NS" sockperf server -i "$E2E_HOST_IP" -p 11111 \
	>"$VM_LOGS/sockperf-server.log" 2>&1 &
_vm_all_pids+=("$!")

# the guest waits for an echo request from the host between the phases
# (pinged), so that the host reads vnetd's counters at their edges.  The
# round trip runs in two halves per arm, defaults-off-off-defaults, so that
# a drift of the machine's speed weighs on both alike
phase="pinged:1"
half=$(((RR_SECS + 1) / 2))
steps="reach:15+ping:3+$phase+sw:sw-def:$SECS:5201:$WRITE+$phase+rr:rr-def-a:$half:11111+$phase"
steps+="+rr:rr-off-a:$half:11111+$phase+sw:sw-off:$SECS:5202:$WRITE+$phase"
steps+="+rr:rr-off-b:$half:11111+$phase+rr:rr-def-b:$half:11111+$phase"
step "QEMU (TCG) boots it, virtio-net-pci on -netdev vhost-user (vectors=0: see docs/e2e.md)"
qemu_start "$steps" || exit 1
sed "s|$top/||g; s/ -/\n      -/g" "$VM_LOGS/qemu.cmdline" | sed 's/^/   /'
if ! vm_wait_line '^VNET: reach ok' 60; then
	echo "demo-vm: the guest did not come up; its console:" >&2
	tr -d '\r' <"$VM_SERIAL" | tail -n 20 >&2
	exit 1
fi
show_guest

pinged_n()
{
	[ "$(guest_lines | grep -c '^wait pinged')" -ge "$1" ]
}

# edge N [CMD...]: at the guest's Nth wait for the host, vnetd's counters
# into edges[N], then CMD, then the echo request that lets the guest go on
edges=()
edge()
{
	local n=$1

	shift
	if ! _vm_poll $(((SECS + RR_SECS + 60) * 1000)) pinged_n "$n"; then
		echo "demo-vm: the guest did not reach phase $n; its console:" >&2
		tr -d '\r' <"$VM_SERIAL" | tail -n 20 >&2
		exit 1
	fi
	vm_stats "demo-edge$n.json" || exit 1
	edges[n]=$STATS
	[ $# -eq 0 ] || "$@"
	ip netns exec "$VM_NS" ping -c 1 -W 2 "$E2E_GUEST_IP" >/dev/null
}

coalescing_off()
{
	defaults=$("$VNETCTL" -j coalesce show "$VM_TAP" | jq -r '.guest.groups[0] |
		"tx-frames \(.tx_frames) tx-usecs \(.tx_usecs) rx-frames \(.rx_frames) rx-usecs \(.rx_usecs)"')
	echo
	echo "   >>> vnetctl coalesce set $VM_TAP tx-frames 0 rx-frames 0   (live: coalescing off)"
	"$VNETCTL" coalesce set "$VM_TAP" tx-frames 0 rx-frames 0 || exit 1
}

coalescing_defaults()
{
	echo
	echo "   >>> vnetctl coalesce set $VM_TAP $defaults   (live: vnet's defaults again)"
	# shellcheck disable=SC2086 # words
	"$VNETCTL" coalesce set "$VM_TAP" $defaults || exit 1
}

step "on vnet's defaults, then coalescing off: iperf3 -l $WRITE for $SECS s, sockperf ping-pong 2 x $half s; vnetctl stats $VM_TAP --watch 5 (tx = from the guest)"
"$VNETCTL" stats "$VM_TAP" --watch 5 &
watcher=$!
edge 1
edge 2
edge 3 coalescing_off
edge 4
edge 5
edge 6 coalescing_defaults
edge 7
qemu_wait 60
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
watcher=""

step "what the guest saw"
show_guest

# counts A B: "TX-FRAMES TX-SIGNALS RX-SIGNALS" of vnetd between two
# `vnetctl -j stats` documents: its signals are the guest's interrupts
counts()
{
	# jq filters are single-quoted on purpose
	# shellcheck disable=SC2016
	jq -rn --argjson a "$1" --argjson b "$2" '
		def s(d; dir; f): [d.queues[] | select(.dir == dir) | .datapath[f] // 0] | add // 0;
		def n(dir; f): s($b; dir; f) - s($a; dir; f);
		"\(n("tx"; "frames")) \(n("tx"; "notify_sent")) \(n("rx"; "notify_sent"))"'
}

# stream TAG A B: "MBIT/S INTERRUPTS-PER-MB TX-SIGNALS-PER-FRAME"
stream()
{
	local bytes bps fr txs rxs

	read -r bytes bps < <(guest_json "$1" | jq -r '"\(.end.sum_received.bytes // 0) \(.end.sum_received.bits_per_second // 0)"' 2>/dev/null)
	read -r fr txs rxs < <(counts "$2" "$3")
	awk -v by="${bytes:-0}" -v bps="${bps:-0}" -v fr="$fr" -v t="$txs" -v r="$rxs" 'BEGIN {
		printf "%.1f %s %s\n", bps / 1e6, (by > 0) ? sprintf("%.1f", (t + r) / (by / 1e6)) : "-",
			(fr > 0) ? sprintf("%.3f", t / fr) : "-" }'
}

# rr TAG1 TAG2 A1 B1 A2 B2: "P50-US INTERRUPTS-PER-ROUND-TRIP" of two
# ping-pong runs: the mean of their p50s, their signals per message
rr()
{
	local t p m p50=0 msgs=0 sig=0 fr txs rxs

	for t in "$1" "$2"; do
		read -r p m < <(guest_lines | awk -v t="$t" '$1 == "rr" && $2 == t {
			for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print v["p50"] + 0, v["msgs"] + 0 }')
		p50=$(awk -v a="$p50" -v b="${p:-0}" 'BEGIN { print a + b / 2 }')
		msgs=$((msgs + ${m:-0}))
	done
	for t in "$3 $4" "$5 $6"; do
		read -r fr txs rxs < <(counts "${edges[${t% *}]}" "${edges[${t#* }]}")
		sig=$((sig + txs + rxs))
	done
	awk -v p="$p50" -v m="$msgs" -v s="$sig" 'BEGIN {
		printf "%.1f %s\n", p, (m > 0) ? sprintf("%.2f", s / m) : "-" }'
}

read -r d_mbit d_ipm d_spf < <(stream sw-def "${edges[1]}" "${edges[2]}")
read -r o_mbit o_ipm o_spf < <(stream sw-off "${edges[4]}" "${edges[5]}")
read -r d_p50 d_ipr < <(rr rr-def-a rr-def-b 2 3 6 7)
read -r o_p50 o_ipr < <(rr rr-off-a rr-off-b 3 4 5 6)
demo_head "vnet's defaults against coalescing off: the same guest, the same work"
r_mbit='' r_ipm='' r_p50='' # demo_cmp's
demo_cmp r_mbit "TCP stream, $WRITE B writes: Mbit/s" "$d_mbit" "$o_mbit"
demo_cmp r_ipm "  guest interrupts per MB" "$d_ipm" "$o_ipm"
demo_row "  TX completion signals per frame" "$d_spf" "$o_spf"
demo_cmp r_p50 "UDP round trip (64 B): p50 us" "$d_p50" "$o_p50"
demo_row "  guest interrupts per round trip" "$d_ipr" "$o_ipr"
if demo_lt "$r_ipm" 1 && demo_lt "$r_p50" 1.1; then
	meaning="the stream's completions were held and batched, the round trip's signalled at once"
elif ! demo_lt "$r_ipm" 1; then
	meaning="no interrupts saved on this stream in this run (docs/evidence.md has repeated runs)"
else
	meaning="interrupts saved, but this round trip was slower (under TCG it moves by 10-30 % from run to run: docs/evidence.md has repeated runs)"
fi
echo "=> vnet's defaults over coalescing off: ${r_ipm}x the guest interrupts per MB and ${r_mbit}x the Mbit/s on the stream, ${r_p50}x the round trip's p50: $meaning"
echo "   (vnetd's signals are the guest's interrupts; an urgent TX frame, TCP payload without PSH, is signalled at once; docs/policy.md)"

step "totals: vnetctl stats $VM_TAP"
"$VNETCTL" stats "$VM_TAP"

vm_teardown
echo
echo "demo done in $((SECONDS - t0)) s: see docs/e2e.md, 'man -l docs/vnetd.8', selftests/e2e/run.sh"
