#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The main job on defaults, in under a minute: a private network namespace
# with a two-queue tap, vnet attached, guest frames written through both
# queues exactly as vhost/QEMU write them (virtio_net_hdr, one GSO frame),
# real TCP from the namespace to a minimal guest peer, and live stats.
# Then vnetd, the same programs in a vhost-user backend, with a userspace
# virtio frontend (bench_vnetd_io's vufe guest) that asks for every signal:
# its signals per frame on vnet's defaults against coalescing off, and one
# line saying what they mean (scripts/demo-lib.sh).
#
# Environment: VNET_DEMO_SECS (seconds of traffic, default 8), OUT (the
# build, default build).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/demo-lib.sh
source "$top/scripts/demo-lib.sh"
OUT=${OUT:-$top/build}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
VNETCTL=$OUT/vnetctl
VNETD=$OUT/vnetd
TAPWRITE=$OUT/selftests/tapwrite
IO=$OUT/bench/bench_vnetd_io
SECS=${VNET_DEMO_SECS:-8}
NS=vnet-demo-$$
DEV=vdemo$$
DEV=${DEV:0:15}

if [ "$(id -u)" != 0 ]; then
	echo "Error: the demo needs root (BPF, a network namespace, a tap)" >&2
	exit 1
fi
for b in "$VNETCTL" "$TAPWRITE" "$VNETD" "$IO"; do
	[ -x "$b" ] || { echo "Error: $b is missing; run 'make' first" >&2; exit 1; }
done

cleanup() {
	[ -n "${vnetd:-}" ] && kill "$vnetd" 2>/dev/null && wait "$vnetd" 2>/dev/null
	"$VNETCTL" detach "$DEV" >/dev/null 2>&1
	[ -n "${VDEV:-}" ] && [ -e "/sys/fs/bpf/vnet/$VDEV" ] && "$VNETCTL" detach "$VDEV" >/dev/null 2>&1
	rm -rf "${sockdir:-}"
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

step "traffic for $SECS s: guest frames on both queues, TCP from the namespace"
(
	end=$((SECONDS + SECS))
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

step "vnetctl stats $DEV --watch 2 --count $(((SECS + 1) / 2))   (tx = from the guest, rx = to the guest)"
"$VNETCTL" stats "$DEV" --watch 2 --count $(((SECS + 1) / 2))
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

VDEV=vdv$$
VDEV=${VDEV:0:15}
sockdir=$(mktemp -d /tmp/vnet-demo.XXXXXX)
step "vnetd: the same programs in a vhost-user backend (socket $sockdir/v.sock, tap $VDEV)"
"$VNETD" --netns "$NS" --tap "$VDEV" --socket "$sockdir/v.sock" >"$sockdir/vnetd.log" 2>&1 &
vnetd=$!
n=0
while ! [ -S "$sockdir/v.sock" ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
sed 's/^vnetd: [^ ]*: /   vnetd: /' "$sockdir/vnetd.log"
echo "   a virtio frontend (vufe) sends and receives 4-frame bursts, asking for"
echo "   every signal (each burst reaped, callbacks re-armed): 2000 frames each way,"
echo "   coalescing off and on vnet's defaults"
sig=$("$IO" signals --socket "$sockdir/v.sock" --netns "$NS" --tap "$VDEV" --frames 2000 2>&1) ||
	{ echo "$sig" | tail -n 3; exit 1; }
# "  armed guest:  tx bulk B  tx urgent U  rx R" after "coalescing off:"
# and after "coalescing on ...:"
armed()
{
	awk -v m="$1" -v f="$2" '/^coalescing/ { on = ($2 != "off:") }
		/armed guest:/ && on == m { print $(f) }' <<<"$sig"
}
demo_head "vnet's defaults against coalescing off: signals per 1000 frames"
r_tx='' r_urg='' r_rx='' # demo_cmp's
demo_cmp r_tx "guest TX, UDP (nothing waits for it)" "$(armed 1 5)" "$(armed 0 5)"
demo_cmp r_urg "guest TX, TCP payload without PSH (urgent)" "$(armed 1 8)" "$(armed 0 8)"
demo_cmp r_rx "guest RX, UDP" "$(armed 1 10)" "$(armed 0 10)"
# the quiet period: a TX burst more than tx-usecs after the ring's last
# signal goes at once, so on a busy machine the bursts may all go
if demo_lt "$r_rx" 1 && ! demo_lt "$r_urg" 0.99; then
	meaning="deliveries to the guest were held and batched"
	if demo_lt "$r_tx" 0.99; then
		meaning+=", so were TX completions nothing waits for"
	else
		meaning+=", TX bursts came more than tx-usecs apart on this machine and went at once, each the first after a quiet period"
	fi
	meaning+=", urgent TX completions were signalled at once"
else
	meaning="not what vnet's rule promises (docs/policy.md): a bug to report"
fi
echo "=> vnet's defaults over coalescing off: ${r_tx}x the signals per frame on guest TX and ${r_rx}x on guest RX, ${r_urg}x on urgent TX completions: $meaning"
echo "   (a real guest's interrupts per MB and round trip: make demo with QEMU installed, docs/evidence.md)"
kill "$vnetd" 2>/dev/null
wait "$vnetd" 2>/dev/null
vnetd=
echo
echo "demo done: see 'man -l docs/vnetctl.8' and docs/design.md"
