#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnetd on packed virtqueues (VIRTIO_F_RING_PACKED), against a frontend
# nobody here wrote: DPDK's virtio-user (dpdk-testpmd --vdev
# net_virtio_user0,...,packed_vq=1), guest->tap (txonly) and tap->guest
# (rxonly) with a fresh connection each, under build/vnetd-asan.  Also:
# with --no-packed vnetd does not offer the bit and the same frontend runs
# split.  Unit tests of the ring itself: selftests/vhost/packed_unit.c.
#
#   selftests/vnetd/test_packed.sh [-l] [-t GLOB] [CASE...]
#                        (root; VNET_TESTPMD overrides the binary)

. "$(dirname "$0")/../lib.sh"
KSFT_PREFIX=packed

# txonly: guest->tap, then tap->guest on a second connection
# (packed/rxonly_after_reconnect); offered_by_default: the same without
# --packed; not_offered_with_no_packed: split rings
ALL_CASES="txonly offered_by_default not_offered_with_no_packed"

VNETD=${VNETD:-$OUT/vnetd-asan}
TESTPMD=${VNET_TESTPMD:-dpdk-testpmd}
GEN=$OUT/bench/bench_vnetd_io
PACKED_BIT=34

trap 'end_case; _cleanup_all' EXIT

# tap_stat NS DEV COUNTER
tap_stat()
{
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3" 2>/dev/null ||
		echo 0
}

# vnetd_up CASE ARGS...: vnetd for one tap it creates in a new netns
# ($NS, $TAP, $SOCK, $VLOG, $VPID)
vnetd_up()
{
	ns_create "$1" || return 1
	TAP=$(rand_tap)
	SOCK=$VNET_TMP/$1.sock
	VLOG=$VNET_TMP/$1-vnetd.log
	_case_taps+=("$NS $TAP")
	shift
	"$VNETD" -v --socket "$SOCK" --tap "$TAP" --netns "$NS" "$@" \
		>"$VLOG" 2>&1 &
	VPID=$!
	procs_add "$VPID"
	busywait 10000 test -S "$SOCK"
}

# pmd_run MODE LOG VDEV_EXTRA: testpmd in the background ($PMD_PID), its
# stdin a FIFO held open on fd 7: EOF there stops it, printing its totals
pmd_run()
{
	rm -f "$VNET_TMP/pmd.in"
	mkfifo "$VNET_TMP/pmd.in"
	exec 7<>"$VNET_TMP/pmd.in"
	"$TESTPMD" --lcores "0@0,1@$(($(nproc) > 1 ? 1 : 0))" --no-huge -m 1024 \
		--no-pci --no-shconf --file-prefix "vnetpk$$$1" \
		--vdev "net_virtio_user0,path=$SOCK,queues=1$3" \
		-- --forward-mode="$1" --auto-start --nb-cores=1 \
		--total-num-mbufs=32768 --disable-link-check \
		<"$VNET_TMP/pmd.in" >"$2" 2>&1 7>&- &
	PMD_PID=$!
	procs_add "$PMD_PID"
}

pmd_stop()
{
	exec 7>&-
	busywait 30000 pmd_gone
	kill -KILL "$PMD_PID" 2>/dev/null
	wait "$PMD_PID" 2>/dev/null
}

pmd_gone()
{
	! kill -0 "$PMD_PID" 2>/dev/null
}

# pmd_total LOG KEY: "KEY: N" from testpmd's accumulated statistics
pmd_total()
{
	sed -n '/Accumulated forward statistics/,$p' "$1" |
		grep -ao "$2: *[0-9]*" | head -1 | grep -o '[0-9]*$'
}

# features_acked LOG: the last feature word vnetd accepted (hex, no 0x)
features_acked()
{
	grep -ao 'features 0x[0-9a-f]*' "$1" | tail -1 | sed 's/.*0x//'
}

has_bit()
{
	[ -n "$1" ] && [ $(((0x$1 >> $2) & 1)) -eq 1 ] && echo yes || echo no
}

count_rx()
{
	[ "$(($(tap_stat "$NS" "$TAP" rx_packets) - RX0))" -ge "$1" ]
}

# txonly_case NAME VNETD_ARG VDEV_EXTRA WANT_PACKED
txonly_case()
{
	local plog got sent feat

	vnetd_up "$1" $2 || { fail "$1" "vnetd did not listen: $(tail -c 400 "$VLOG")"; end_case; return; }
	plog=$VNET_TMP/$1-txonly.log
	RX0=$(tap_stat "$NS" "$TAP" rx_packets)
	pmd_run txonly "$plog" "$3"
	busywait 60000 count_rx 1000
	pmd_stop
	got=$(($(tap_stat "$NS" "$TAP" rx_packets) - RX0))
	sent=$(pmd_total "$plog" TX-packets)
	feat=$(features_acked "$VLOG")
	expect "packed negotiated" "$4" "$(has_bit "$feat" $PACKED_BIT)"
	expect "at least 1000 frames (4 laps of the ring) in the tap" yes "$([ "$got" -ge 1000 ] && echo yes || echo no)"
	expect "every frame testpmd sent reached the tap" "${sent:-none}" "$got"
	expect "no broken ring" 0 "$(grep -ac broken "$VLOG")"
	expect "no sanitizer report" 0 "$(grep -ac 'Sanitizer' "$VLOG")"
	report "$1" "got $got sent ${sent:-none} features ${feat:-none}; vnetd: $(grep -a -m3 'broken\|Sanitizer\|error' "$VLOG" | head -c 400); testpmd: $(tail -c 300 "$plog")"
	if [ "$1" != txonly ]; then
		end_case
		return
	fi

	# a second frontend on the same port: tap -> guest, packed again
	local tx0 rxp
	plog=$VNET_TMP/$1-rxonly.log
	tx0=$(tap_stat "$NS" "$TAP" tx_packets)
	pmd_run rxonly "$plog" "$3"
	# the RX ring of the new connection runs (a fresh base)
	busywait 30000 test "$(grep -ac 'RX ring (vq 0) started' "$VLOG")" -ge 2
	sleep 1
	"$GEN" gen --netns "$NS" --dev "$TAP" --size 64 --cpu 0 --seconds 3 \
		>/dev/null 2>>"$VNET_TMP/gen.log"
	sleep 1
	pmd_stop
	rxp=$(pmd_total "$plog" RX-packets)
	feat=$(features_acked "$VLOG")
	expect "packed negotiated (rx)" yes "$(has_bit "$feat" $PACKED_BIT)"
	expect "testpmd received at least 300 frames (over a lap)" yes "$([ "${rxp:-0}" -ge 300 ] && echo yes || echo no)"
	expect "the tap sent them" yes "$([ "$(($(tap_stat "$NS" "$TAP" tx_packets) - tx0))" -ge "${rxp:-1}" ] && echo yes || echo no)"
	expect "no broken ring" 0 "$(grep -ac broken "$VLOG")"
	expect "no sanitizer report" 0 "$(grep -ac 'Sanitizer' "$VLOG")"
	report rxonly_after_reconnect "rx ${rxp:-none}; vnetd: $(grep -a -m3 'broken\|Sanitizer\|error' "$VLOG" | head -c 400); testpmd: $(tail -c 300 "$plog")"
	end_case
}

ksft_args "$@"
require_root packed || { ksft_exit; exit; }
if ! command -v "$TESTPMD" >/dev/null 2>&1; then
	skip dpdk "$TESTPMD not installed (apt-get install dpdk-dev librte-net-virtio23 librte-mempool-ring23)"
	ksft_exit
	exit
fi
for b in "$VNETD" "$GEN"; do
	[ -x "$b" ] || { fail setup "$b not built (make all)"; ksft_exit; exit; }
done

case_txonly()
{
	txonly_case txonly --packed ",packed_vq=1" yes
}

# the default offers the bit; --no-packed does not, the frontend runs split
case_offered_by_default()
{
	txonly_case offered_by_default "" ",packed_vq=1" yes
}

case_not_offered_with_no_packed()
{
	txonly_case not_offered_with_no_packed --no-packed ",packed_vq=1" no
}

ksft_run :
ksft_exit
