#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# How exactly a vnetd rate limit holds for a real guest (docs/limits.md):
# one guest (QEMU TCG, Debian's kernel and virtio_net, as in make e2e) on
# one vnetd port; iperf3 TCP and UDP, guest -> host (tx) and host -> guest
# (rx), at each limit and with none, interleaved over the repetitions.
# Prints per direction, protocol and limit the receiver's rate as a ratio
# of the limit (median, min, max), TCP's retransmissions (the sender's),
# UDP's loss, and the unlimited runs' rates beside them.
#
#   bench/bench_limit.sh [-r REPS] [-s SECS] [-l "MBIT..."] [-b BURST]
#
# Defaults: 3 repetitions of 5 s, limits 10 100 500 Mbit/s, the default
# burst.  A limit should stay under what the guest reaches unlimited (the
# "off" rows).  The limit counts Ethernet frames; iperf3 counts payload:
# TCP's frames are GSO frames of up to 64 KB (headers under 0.2%), UDP's
# 1400-byte datagrams travel in 1442-byte frames, so UDP's rate is given
# as the frames' (payload x 1442 / 1400).  Root; QEMU and the e2e guest
# (selftests/e2e/build-guest.sh builds it).
# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/guest_lib.sh
source "$HERE/guest_lib.sh"

REPS=3
SECS=5
LIMITS="10 100 500"
BURST=""
# shellcheck source=bench/opts.sh
source "$(dirname "$0")/opts.sh"
bench_opts "r:REPS s:SECS l:LIMITS b:BURST" "$@"

bench_guest_ready bench_limit

trap '[ "$BASHPID" = "$$" ] && { vm_cleanup_all; _cleanup_all; }' EXIT

NS=vnet-bl-$$
H=$E2E_HOST_IP
TAP=vbl$$
GL=$OUT/bench/limit
SOCK=$GL/vhost.sock
RES=$GL/results.tsv
mkdir -p "$GL"
: >"$RES"
ip netns add "$NS" || exit 1
_vm_all_ns+=("$NS")
ip -n "$NS" link set lo up
ip -n "$NS" tuntap add dev "$TAP" mode tap multi_queue vnet_hdr || exit 1
_vm_all_taps+=("$TAP")
ip -n "$NS" addr add "$H/24" dev "$TAP"
ip -n "$NS" link set "$TAP" up
d_start DPID "$GL/vnetd.log" --netns "$NS" --tap "$TAP" --socket "$SOCK" ||
	{ echo "bench_limit: vnetd did not start" >&2; exit 1; }
g_start b "$SOCK"
g_ready b 120 || { echo "bench_limit: the guest did not come up" >&2; exit 1; }

limit_set()	# DIR MBIT|off
{
	if [ "$2" = off ]; then
		"$VNETCTL" -n "$NS" limit clear "$TAP" "$1"
	else
		"$VNETCTL" -n "$NS" limit set "$TAP" "$1" rate "${2}mbit" ${BURST:+burst "$BURST"}
	fi
}

PORT=5300
UDP_LEN=1400

# server_done PID SECS: the one-off iperf3 server ended (its JSON written)
server_done()
{
	_vm_poll $(($2 * 1000)) _vm_gone "$1"
}
# one run: DIR PROTO MBIT|off -> a line of results.tsv
run_one()
{
	local dir=$1 proto=$2 lim=$3 srv=$GL/srv.json cli=$GL/cli.json
	local args="-t $SECS -J --connect-timeout 5000" rate retr loss b

	PORT=$((PORT + 1))
	limit_set tx off
	limit_set rx off
	limit_set "$dir" "$lim" || return 1
	[ "$dir" = rx ] && args+=" -R"
	if [ "$proto" = udp ]; then
		# offered: twice the limit; unlimited: twice the highest limit
		b=$lim
		[ "$lim" = off ] && b=${LIMITS##* }
		args+=" -u -b $((b * 2))M -l $UDP_LEN"
	fi
	h_iperf "$NS" "$H" "$PORT" "$srv" || return 1
	g_cmd b $((SECS + 40)) "iperf3 -c $H -p $PORT $args" >"$cli"
	server_done "$H_IPERF_PID" 20
	# the receiver's rate; the sender's retransmissions; UDP's loss
	if [ "$proto" = tcp ]; then
		rate=$(jq -r '.end.sum_received.bits_per_second // 0' "$cli")
		if [ "$dir" = tx ]; then
			retr=$(jq -r '.end.sum_sent.retransmits // 0' "$cli")
		else
			retr=$(jq -r '.end.sum_sent.retransmits // 0' "$srv")
		fi
		loss=0
	else
		# the client has the receiver's figures too (iperf3 >= 3.10)
		rate=$(jq -r --argjson l "$UDP_LEN" '(.end.sum_received.bits_per_second // 0) * ($l + 42) / $l' "$cli")
		loss=$(jq -r '.end.sum_received.lost_percent // 0' "$cli")
		retr=0
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$dir" "$proto" "$lim" "$rate" "$retr" "$loss" >>"$RES"
	cp "$cli" "$GL/cli-$dir-$proto-$lim-$PORT.json"
}

for ((r = 1; r <= REPS; r++)); do
	for lim in off $LIMITS; do
		for dir in tx rx; do
			for proto in tcp udp; do
				run_one "$dir" "$proto" "$lim" ||
					echo "bench_limit: run $dir $proto $lim failed" >&2
			done
		done
	done
done
limit_set tx off
limit_set rx off
g_send b quit
g_wait b 60 || g_kill b KILL
d_stop "$DPID"

echo "# bench_limit: $(nproc) CPUs, $(uname -r), guest under TCG, $REPS x $SECS s, burst ${BURST:-default}"
echo "# dir proto limit  rate/limit median [min-max]  Mbit/s median  retrans median [max]  udp loss % median"
for dir in tx rx; do
	for proto in tcp udp; do
		for lim in off $LIMITS; do
			awk -F'\t' -v d="$dir" -v p="$proto" -v l="$lim" '
				function med(a, n,   i, j, t) {
					for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
						if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
					return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
				$1 == d && $2 == p && $3 == l { n++; m[n] = $4 / 1e6; rr[n] = $5; ls[n] = $6
					q[n] = l == "off" ? 0 : $4 / (l * 1e6); if ($5 > rmax) rmax = $5 }
				END { if (!n) exit
					mm = med(m, n); rm = med(rr, n); lm = med(ls, n)
					if (l == "off") printf "%-3s %-4s %6s  %-26s %8.1f  %6d [%d]  %6.2f\n", d, p, l, "-", mm, rm, rmax, lm
					else { mq = med(q, n); lo = q[1]; hi = q[n]
						printf "%-3s %-4s %6s  %.3f [%.3f-%.3f]%9s %8.1f  %6d [%d]  %6.2f\n", d, p, l, mq, lo, hi, "", mm, rm, rmax, lm } }' "$RES"
		done
	done
done
