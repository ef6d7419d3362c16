#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The main job on defaults, in under a minute: a private network namespace
# with a two-queue tap, vnet attached, guest frames written through both
# queues exactly as vhost/QEMU write them (virtio_net_hdr, one GSO frame),
# real TCP from the namespace to a minimal guest peer, and live stats.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
VNETCTL=$top/build/vnetctl
TAPWRITE=$top/build/selftests/tapwrite
NS=vnet-demo-$$
DEV=vdemo$$
DEV=${DEV:0:15}

if [ "$(id -u)" != 0 ]; then
	echo "Error: the demo needs root (BPF, a network namespace, a tap)" >&2
	exit 1
fi
for b in "$VNETCTL" "$TAPWRITE"; do
	[ -x "$b" ] || { echo "Error: $b is missing; run 'make' first" >&2; exit 1; }
done

cleanup() {
	"$VNETCTL" detach "$DEV" >/dev/null 2>&1
	ip netns del "$NS" 2>/dev/null
	[ -n "${traffic:-}" ] && kill "$traffic" 2>/dev/null
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a network namespace ($NS) and a two-queue tap ($DEV)"
ip netns add "$NS"
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip -n "$NS" tuntap add dev "$DEV" mode tap multi_queue vnet_hdr
ip -n "$NS" addr add 192.0.2.1/24 dev "$DEV"
ip -n "$NS" link set "$DEV" up
ip -n "$NS" -br link show "$DEV"

step "vnetctl -n $NS attach $DEV"
"$VNETCTL" -n "$NS" attach "$DEV" || exit 1
"$VNETCTL" status "$DEV"

step "traffic for 8 s: guest frames on both queues, TCP from the namespace"
(
	end=$((SECONDS + 8))
	while [ $SECONDS -lt $end ]; do
		"$TAPWRITE" -n "$NS" -d "$DEV" -q 2 \
			send 0 urgent 200 send 0 push 20 send 0 ack 100 \
			send 1 urgent 50 send 1 other 30 send 1 gso 2 \
			send 1 malformed 1 >/dev/null 2>&1
		"$TAPWRITE" -n "$NS" -d "$DEV" -q 2 -t 5 \
			tcp $((RANDOM % 2)) $((20000 + RANDOM % 1000)) 262144 \
			>/dev/null 2>&1
	done
) &
traffic=$!

step "vnetctl stats $DEV --watch 2 --count 4   (tx = from the guest, rx = to the guest)"
"$VNETCTL" stats "$DEV" --watch 2 --count 4
wait "$traffic" 2>/dev/null
traffic=

step "totals"
"$VNETCTL" stats "$DEV"

step "the same numbers, straight from the pinned map (BTF field names)"
bpftool map dump pinned "/sys/fs/bpf/vnet/$DEV/stats" 2>/dev/null |
	awk '/"key": 1,|"key": 257,/{f=1} f' | head -n 24
echo "..."

step "vnetctl detach $DEV"
"$VNETCTL" detach "$DEV"
echo
echo "demo done: see 'man -l docs/vnetctl.8' and docs/design.md"
