#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# A host of strangers, with a real guest (QEMU TCG, Debian's kernel and
# virtio_net, as in selftests/e2e/run.sh) on a vnetd port
# (docs/limits.md):
#
#   limit   iperf3 TCP guest -> host and host -> guest with the port's
#           rate limit at LIMIT_MBIT (tx, then rx): the receiver's rate is
#           within 0.85x-1.05x of the limit (the buckets cannot be
#           exceeded by more than their burst; the lower bound is loose
#           for a loaded host), the sender's retransmissions under guest
#           TX no more than the unlimited run's, and vnetd counted its
#           holds; then the limit cleared live, and the rate above it
#   guard   spoofing protection on (mac and ip of the guest): a changed
#           MAC, an added IP address, a gratuitous ARP for another
#           address and a DHCP server answering the host are each refused
#           (the host never sees them: no reply, no neighbour learnt, no
#           lease) and counted under their reason; the guest's own ping
#           and iperf3 go through with nothing of theirs dropped.  (A
#           router advertisement, which the guest's busybox cannot send,
#           is covered by classify/guard.)
#
#   selftests/e2e/tenants.sh [-l] [-t GLOB]... [SCENARIO...]
#
# PASS:/FAIL:/SKIP: e2e-tenants/NAME lines; logs stay in
# build/e2e/logs/tenants/.  Environment: OUT, VNETD, QEMU.

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
source "$HERE/../lib.sh"
# shellcheck source=selftests/e2e/vm.sh
source "$HERE/vm.sh"
# shellcheck source=selftests/e2e/guests.sh
source "$HERE/guests.sh"

KSFT_PREFIX=e2e-tenants
ALL="limit guard"
H=$E2E_HOST_IP
G=$E2E_GUEST_IP
LIMIT_MBIT=20
SECS=4
G_LOGS=$E2E_DIR/logs/tenants

trap '[ "$BASHPID" = "$$" ] && { vm_cleanup_all; _cleanup_all; }' EXIT


# tnew NAME: a netns, a tap with the host's address, vnetd on it, a guest
tnew()
{
	g_case n "$1" || return 1
	TAP=vn$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	g_tap "$TAP" "$H/24" || return 1
	d_start DPID "$L/vnetd.log" --netns "$NS" --tap "$TAP" --socket "$L/vhost.sock" ||
		{ _bad+="vnetd did not start: $(tail -n 2 "$L/vnetd.log" | tr '\n' ' '); "; return 1; }
	g_start t "$L/vhost.sock"
	g_ready t 120 || { _bad+="the guest did not come up ($(g_console t | tail -n 3 | tr '\n' '|')); "; return 1; }
}

tend()
{
	g_send t quit
	g_wait t 60 || g_kill t KILL
	d_stop "$DPID"
	need "vnetd exited with status $D_RC on SIGTERM" [ "$D_RC" = 0 ]
}

# iperf DIR PORT: TCP for SECS guest -> host (tx) or host -> guest (rx);
# sets MBPS (the receiver's) and RETR (the sender's retransmissions)
iperf()
{
	local rev="" srv=$L/srv-$2.json cli=$L/cli-$2.json

	[ "$1" = rx ] && rev=-R
	MBPS=0
	RETR=0
	h_iperf "$NS" "$H" "$2" "$srv" || { _bad+="iperf3 server on $2; "; return 1; }
	g_cmd t $((SECS + 30)) "iperf3 -c $H -p $2 -t $SECS $rev -J --connect-timeout 5000" >"$cli" ||
		{ _bad+="guest: iperf3 -c $H -p $2 $rev failed; "; return 1; }
	_vm_poll 20000 _vm_gone "$H_IPERF_PID"
	MBPS=$(jq -r '.end.sum_received.bits_per_second // 0 | . / 1e6 | floor' "$cli")
	if [ "$1" = tx ]; then
		RETR=$(jq -r '.end.sum_sent.retransmits // 0' "$cli")
	else
		RETR=$(jq -r '.end.sum_sent.retransmits // 0' "$srv")
	fi
}

s_limit()
{
	local d off_retr limited lo hi

	tnew limit || return
	# the unlimited run first: the rate must be well above the limit
	iperf tx 5201 || return
	off_retr=$RETR
	note "unlimited: tx $MBPS Mbit/s, $RETR retransmissions"
	need "unlimited tx $MBPS Mbit/s, not above twice the limit: the limit could not show" \
		ge "$MBPS" $((2 * LIMIT_MBIT))
	lo=$((LIMIT_MBIT * 85 / 100))
	hi=$((LIMIT_MBIT * 105 / 100))
	for d in tx rx; do
		"$VNETCTL" -n "$NS" limit set "$TAP" "$d" rate "${LIMIT_MBIT}mbit" ||
			{ _bad+="vnetctl limit set $d failed; "; return; }
		limited=$(dp_count "$d" limited)
		iperf "$d" $((5210 + ${#d})) || continue
		note "$d at ${LIMIT_MBIT} Mbit/s: $MBPS Mbit/s, $RETR retransmissions"
		need "$d: $MBPS Mbit/s under a $LIMIT_MBIT Mbit/s limit (want $lo-$hi)" ge "$MBPS" "$lo"
		need "$d: $MBPS Mbit/s over a $LIMIT_MBIT Mbit/s limit (want $lo-$hi)" ge "$hi" "$MBPS"
		[ "$d" = tx ] && need "tx: $RETR retransmissions under the limit, $off_retr without" \
			ge "$off_retr" "$RETR"
		need "$d: vnetd counted no hold" ge "$(($(dp_count "$d" limited) - limited))" 1
		"$VNETCTL" -n "$NS" limit clear "$TAP" "$d"
	done
	# cleared live: the same guest goes past the old limit at once
	iperf tx 5220 || return
	need "tx after the limit was cleared: $MBPS Mbit/s" ge "$MBPS" $((2 * LIMIT_MBIT))
	tend
}

# dp_count DIR FIELD: a datapath counter of the tap (every queue) in DIR
dp_count()
{
	timeout 10 "$VNETCTL" -j stats "$TAP" 2>/dev/null |
		jq -r --arg d "$1" --arg f "$2" '[.queues[] | select(.dir == $d) | .datapath[$f]] | add // 0' 2>/dev/null
}

# dropped REASON: the guard's drops under REASON
dropped()
{
	"$VNETCTL" -n "$NS" -j guard show "$TAP" | jq -r --arg r "$1" '.dropped[$r]'
}

s_guard()
{
	local d0 d1 out got

	tnew guard || return
	# the host learns what a gratuitous ARP says: without the guard,
	# 192.0.2.50 would become the guest's
	ip netns exec "$NS" sysctl -qw "net.ipv4.conf.$TAP.arp_accept=1"
	"$VNETCTL" -n "$NS" guard set "$TAP" mac "$E2E_GUEST_MAC" ip "$G" ||
		{ _bad+="vnetctl guard set failed; "; return; }

	# its own traffic passes
	out=$(g_cmd t 30 "ping -c 10 -i 0.2 -W 2 $H" 2>&1)
	got=$(sed -n 's/.* \([0-9]*\) packets received.*/\1/p' <<<"$out")
	need "the guest's own ping: ${got:-0} of 10 answered" ge "${got:-0}" 10
	iperf tx 5201
	need "the guest's own iperf3: $MBPS Mbit/s" ge "$MBPS" 10
	# (its IPv6, link-local, is not in the list: dropped under ipv6)
	need "nothing of the guest's own IPv4 dropped: $("$VNETCTL" -n "$NS" -j guard show "$TAP" | jq -c .dropped)" \
		[ "$("$VNETCTL" -n "$NS" -j guard show "$TAP" | jq '[.dropped.mac, .dropped.l2, .dropped.ipv4, .dropped.arp, .dropped.dhcp] | add')" = 0 ]

	# a changed MAC: no answer, counted under mac
	d0=$(dropped mac)
	out=$(g_cmd t 30 "ip link set eth0 address 02:00:00:00:00:99 && ping -c 3 -i 0.2 -W 1 $H; ip link set eth0 address $E2E_GUEST_MAC" 2>&1)
	got=$(sed -n 's/.* \([0-9]*\) packets received.*/\1/p' <<<"$out")
	d1=$(dropped mac)
	need "changed MAC: ${got:-?} of 3 answered" [ "${got:-x}" = 0 ]
	need "changed MAC: $((d1 - d0)) dropped under mac" ge "$((d1 - d0))" 1

	# an added address: its frames (its ARP first) never reach the host
	d0=$(($(dropped ipv4) + $(dropped arp)))
	out=$(g_cmd t 30 "ip addr add 192.0.2.9/24 dev eth0 && ping -I 192.0.2.9 -c 3 -i 0.2 -W 1 $H; ip addr del 192.0.2.9/24 dev eth0" 2>&1)
	got=$(sed -n 's/.* \([0-9]*\) packets received.*/\1/p' <<<"$out")
	d1=$(($(dropped ipv4) + $(dropped arp)))
	need "added IP: ${got:-?} of 3 answered" [ "${got:-x}" = 0 ]
	need "added IP: $((d1 - d0)) dropped under ipv4/arp" ge "$((d1 - d0))" 1

	# a gratuitous ARP for another tenant's address: the host learns
	# nothing
	d0=$(dropped arp)
	# (busybox's arping binds to the address it announces: the guest
	# takes it first, as a guest taking a neighbour's address would)
	g_cmd t 30 "ip addr add 192.0.2.50/32 dev eth0 && arping -U -c 3 -I eth0 -s 192.0.2.50 192.0.2.50; ip addr del 192.0.2.50/32 dev eth0" >"$L/arping.log" 2>&1
	d1=$(dropped arp)
	need "gratuitous ARP for 192.0.2.50: $((d1 - d0)) dropped under arp" ge "$((d1 - d0))" 1
	need "the host learnt 192.0.2.50: $(ip -n "$NS" neigh show 192.0.2.50)" \
		[ -z "$(ip -n "$NS" neigh show 192.0.2.50 | grep -v FAILED)" ]

	# a DHCP server in the guest answers the host's client: no lease
	d0=$(dropped dhcp)
	g_cmd t 10 "printf 'start 192.0.2.100\nend 192.0.2.110\ninterface eth0\nlease_file /tmp/leases\n' >/tmp/udhcpd.conf && touch /tmp/leases && (udhcpd -f /tmp/udhcpd.conf >/tmp/udhcpd.log 2>&1 &)" >/dev/null
	if ip netns exec "$NS" busybox udhcpc -i "$TAP" -n -q -t 3 -T 1 -s /bin/true >"$L/udhcpc.log" 2>&1; then
		_bad+="the host's DHCP client got a lease from the guest; "
	fi
	d1=$(dropped dhcp)
	need "DHCP offers: $((d1 - d0)) dropped under dhcp" ge "$((d1 - d0))" 1

	# the guard off: the same offer reaches the host (the check above
	# would see it)
	"$VNETCTL" -n "$NS" guard clear "$TAP"
	need "guard off: the host's DHCP client gets the guest's offer" \
		ip netns exec "$NS" busybox udhcpc -i "$TAP" -n -q -t 3 -T 1 -s /bin/true
	g_cmd t 30 "ip addr add 192.0.2.50/32 dev eth0 && arping -U -c 3 -I eth0 -s 192.0.2.50 192.0.2.50; ip addr del 192.0.2.50/32 dev eth0" >>"$L/arping.log" 2>&1
	need "guard off: the host learns 192.0.2.50 from the gratuitous ARP ($(ip -n "$NS" neigh show 192.0.2.50))" \
		grep -q "lladdr $E2E_GUEST_MAC" <<<"$(ip -n "$NS" neigh show 192.0.2.50)"
	note "dropped: $("$VNETCTL" -n "$NS" -j guard show "$TAP" | jq -c .dropped)"
	tend
}

# --- main ------------------------------------------------------------------------

e2e_prelude "$ALL" "$ALL" "jq iperf3 ip busybox" "$@"
mkdir -p "$G_LOGS"

g_run_scenarios
ksft_exit
