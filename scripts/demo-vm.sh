#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The main job with a real guest, in about a minute: QEMU (software
# emulation, no KVM needed) boots Debian's own kernel, whose unmodified
# virtio_net driver talks to vnetd over vhost-user; vnetd moves the frames
# to a tap in a private network namespace, with vnet's classifier attached.
# The guest pings the host and runs iperf3 TCP both ways while the stats go
# by on screen; half-way the host turns TX coalescing on live
# (`vnetctl coalesce set TAP tx-frames 16 tx-usecs 50`), and the totals
# show what it did to the guest's interrupts.
#
# Without QEMU (qemu-system-x86) it says so and runs the synthetic demo
# (scripts/demo.sh: frames written into the tap the way QEMU writes them).
#
#   scripts/demo-vm.sh            (root; `make` first)
#
# Environment: VNET_DEMO_SECS (seconds per transfer, default 10),
# VNET_DEMO_COALESCE (what is set half-way, default "tx-frames 16
# tx-usecs 50").
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUT=$top/build
# shellcheck source=selftests/e2e/vm.sh
source "$top/selftests/e2e/vm.sh"
SECS=${VNET_DEMO_SECS:-10}
read -r -a COALESCE <<<"${VNET_DEMO_COALESCE:-tx-frames 16 tx-usecs 50}"

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
for c in iperf3 jq ping ss; do
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
for p in 5201 5202 5203; do
	iperf_server $p || exit 1
done

step "QEMU (TCG) boots it, virtio-net-pci on -netdev vhost-user (vectors=0: see docs/e2e.md)"
qemu_start "reach:15+ping:3+iperf:tx:tx:$SECS:5201+mark:coalesce+pinged:1+iperf:tx2:tx:$SECS:5202+iperf:rx:rx:$SECS:5203" ||
	exit 1
sed "s|$top/||g; s/ -/\n      -/g" "$VM_LOGS/qemu.cmdline" | sed 's/^/   /'
if ! vm_wait_line '^VNET: reach ok' 60; then
	echo "demo-vm: the guest did not come up; its console:" >&2
	tr -d '\r' <"$VM_SERIAL" | tail -n 20 >&2
	exit 1
fi
show_guest
vm_wait_line '^VNET: ping ' 20 && show_guest

step "iperf3 from the guest, ${SECS} s each; vnetctl stats $VM_TAP --watch 5 (tx = from the guest)"
"$VNETCTL" stats "$VM_TAP" --watch 5 &
watcher=$!
if vm_wait_line '^VNET: wait pinged' $((SECS + 60)); then
	vm_stats demo-before.json
	before=$STATS
	echo
	echo "   >>> vnetctl coalesce set $VM_TAP ${COALESCE[*]}   (live)"
	"$VNETCTL" coalesce set "$VM_TAP" "${COALESCE[@]}"
	ip netns exec "$VM_NS" ping -c 1 -W 2 "$E2E_GUEST_IP" >/dev/null
else
	before='{"queues":[]}'
fi
qemu_wait $((3 * SECS + 60))
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
watcher=""

step "what the guest saw"
show_guest
for t in tx tx2 rx; do
	guest_json "$t" | jq -r --arg t "$t" \
		'"   iperf3 \($t): \((.end.sum_received.bits_per_second // 0) / 1e6 | floor) Mbit/s, \((.end.sum_received.bytes // 0) / 1e6 | floor) MB\(if .error then " (" + .error + ")" else "" end)"' 2>/dev/null
done

step "what vnetd did with the guest's TX completions (its interrupts)"
vm_stats demo-after.json
# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
jq -rn --argjson a "$before" --argjson b "$STATS" --arg c "$(printf '%-26s' "${COALESCE[*]}")" '
	def tx(s): [s.queues[] | select(.dir == "tx") | .datapath | del(.drops)] |
		reduce .[] as $d ({}; reduce ($d | keys[]) as $k (.; .[$k] += $d[$k]));
	tx($a) as $x | tx($b) as $y |
	($y | with_entries(.value -= ($x[.key] // 0))) as $d |
	def row(n; s): "   \(n): \(s.frames // 0) frames, \(s.notify_sent // 0) signals = \(if (s.frames // 0) > 0 then ((s.notify_sent // 0) / s.frames * 1000 | floor / 1000) else "-" end) per frame (urgent \(s.notify_urgent // 0), timer \(s.notify_timer // 0), frames \(s.notify_frames // 0); \(s.notify_suppressed // 0) not asked for by the guest)";
	row("coalescing off            "; $x), row($c; $d)'
echo "   (urgent = a burst carried TCP payload without PSH: signalled at once;"
echo "    timer/frames = held back by tx-usecs/tx-frames)"

step "totals: vnetctl stats $VM_TAP"
"$VNETCTL" stats "$VM_TAP"

vm_teardown
echo
echo "demo done in $((SECONDS - t0)) s: see docs/e2e.md, 'man -l docs/vnetd.8', selftests/e2e/run.sh"
