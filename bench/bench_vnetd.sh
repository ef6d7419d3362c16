#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnetd against a DPDK peer backend and the tap's own ceiling, side by side
# in one run (docs/benchmarks.md, section "vnetd").
#
# The guest is DPDK's virtio-user (dpdk-testpmd --vdev net_virtio_user0),
# a vhost-user frontend nobody here wrote, on GUEST_CPU.  Backends, on
# BACKEND_CPU, each moving frames between that guest and a tap in a private
# network namespace:
#   vnetd    build/vnetd --socket S --tap T --netns NS --cpus BACKEND_CPU
#   vnetd-bp the same with --busy-poll BUSY_POLL (50 us): a dry TX ring is
#            watched that long before vnetd sleeps
#   vnetd-nosb the same as vnetd with --no-sandbox: no seccomp filter, no
#            capability dropped (vnetd/vnetd-nosb is the sandbox's cost)
#   vnetd-pk the same as vnetd with --packed, its guest with packed_vq=1:
#            packed virtqueues (vnetd-pk/vnetd is packed against split)
#   peer     dpdk-testpmd --vdev net_vhost0,iface=S --vdev net_tap0,iface=T
#            in io forwarding mode (its tap driver: a syscall per frame)
#   ceiling  no backend: bench_vnetd_io writes the same frames into a tap
#            (guest->tap) or reads them from it (tap->guest) with a bare
#            io_uring loop; "vnet" with vnet's programs attached to the tap
#            (as vnetd's tap has them), "bare" without
#   floor    the same loop into the bare tap with its link down: tun
#            builds the skb, then drops it with EIO instead of handing it
#            to the stack: a write path with no receive behind it, a
#            bound above any tap writer (guest->tap)
#   cold     the vnet ceiling's loop taking its frames in turn from 256
#            slots that a thread on GUEST_CPU keeps rewriting, as a guest
#            writes its frames on its CPU: the ceiling when the data comes
#            from another CPU's cache (guest->tap)
#   refused  the same loop writing 8 bytes, which tun refuses at once
#            (EINVAL): io_uring and tun's entry, no frame (64 B row)
# Directions and meters:
#   guest->tap  testpmd txonly; rx_packets of the tap per second
#   tap->guest  frames sent out of the tap by an AF_PACKET generator on
#               GUEST_CPU, beside the polling guest (with 2 CPUs there is no
#               third one; on BACKEND_CPU it would starve a backend that
#               sleeps on events and not one that polls); testpmd rxonly's
#               Rx-pps (median of its per-second samples); the ceiling:
#               frames its read loop got per second, with a busy loop on
#               GUEST_CPU in the guest's place so that the generator gets the
#               same share of its CPU
# Then guest->tap time-sliced ("sliced", per size): vnetd (split) with its
# txonly guest, the vnet ceiling ("write") and the cold ceiling ("cold"),
# each on a tap of its own with vnet's programs, all started at once;
# bench_vnetd_io slice lets one run at a time for SLICE_MS (100 ms) by
# SIGSTOP/SIGCONT (vnetd's guest is what stops: vnetd then idles), in
# -R ROUNDS (40) rounds of every arm once, the order rotating, the first
# SLICE_SETTLE_MS (20) of each slice dropped; it reads each arm's tap
# rx_packets and its backend's CPU time (schedstat) around the rest.
# The host's noise (dips to 0.65x for 0.2-0.5 s) then hits the arms of a
# round alike: it reports per-round ratios (min / median / max), the
# ratio of upper-decile slices, frames per backend CPU-second, and a
# one-sided Wilcoxon signed-rank p of vnetd >= 0.95x each ceiling; each
# arm's wait for a CPU (schedstat), and the ratios again over the rounds
# where no arm waited more than 2% of its slice (other processes on the
# two CPUs).
# SLICE_SELFCHECK=1 adds a second write ceiling ("write2"): write/write2
# must come out ~1.00 with a narrow spread.
# Then call-eventfd signals per 1000 frames with coalescing off and on, for
# two vufe guests (selftests/frontend): "armed" re-arms after every burst,
# "stream" behaves like Linux's virtio_net.  The generator and the busy
# loop stop by themselves after 60 s if this script is killed.
#
#   bench/bench_vnetd.sh [-r REPS] [-d SECONDS] [-s "64 1500"]
#                        [-a "peer vnetd vnetd_nosb vnetd_bp vnetd_pk ceiling sliced"]
#                        [-t "g2t t2g"] [-R ROUNDS]
#
# -a: the arms to measure (default all; "sliced" is the time-sliced
# section, with g2t), -t: the directions (default both); the signal counts
# run when the vnetd arm does.  -a sliced -t g2t: the sliced section alone.
# -s takes "gso" beside frame sizes: tap -> guest only, the generator sends
# 64 KiB TCP frames asking for segmentation (bench_vnetd_io gen --gso) and
# the guests take TSO (testpmd --rx-offloads=0x1c: TCP/UDP checksum and
# LRO, so GUEST_CSUM and GUEST_TSO4/6), so that tun hands the frames over
# whole, as a host's TCP sends to a guest (into mergeable buffers, vnetd's
# big reads); e.g. VNETD_B set to a script running build/vnetd-testing
# (the test build, which has the switch) with VNETD_RX_BIG_BURSTS=0 and
# -s gso -t t2g -a "vnetd vnetd_bp ceiling": big reads against bounce
# slots.
#
# Environment: OUT (build dir), VNETD (default $OUT/vnetd), VNET_TESTPMD
# (default dpdk-testpmd), GUEST_CPU (0), BACKEND_CPU (1), BUSY_POLL (50,
# microseconds, for vnetd-bp); SLICE_MS (100), SLICE_SETTLE_MS (20),
# SLICE_SELFCHECK (0); VNETD_B, VNETD_B_ARGS, VNETD_B_LABEL: the
# second vnetd arm's binary (default VNETD), options (default
# "--busy-poll BUSY_POLL") and name, e.g. another commit's vnetd with no
# options to compare two builds side by side; VNETD_B_GUEST: what that
# arm's guest adds to its virtio-user device (",packed_vq=1" with
# VNETD_B_ARGS=--packed: packed against split rings in one run); PACKED=1
# (every vnetd with --packed and every guest with packed_vq=1).  Never gates
# anything: targets are reported, exit status 1 only when a measurement
# could not be taken.

set -u

# shellcheck source=bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
BENCH_NAME=bench_vnetd
VNETD=${VNETD:-$out/vnetd}
IO=$out/bench/bench_vnetd_io
VNETCTL=$out/vnetctl
TESTPMD=${VNET_TESTPMD:-dpdk-testpmd}

REPS=3
SECS=1
SIZES="64 1500"
ARMS="peer vnetd vnetd_nosb vnetd_bp vnetd_pk ceiling sliced"
DIRS="g2t t2g"
ROUNDS=40
bench_opts "r:REPS d:SECS s:SIZES a:ARMS t:DIRS R:ROUNDS" "$@"

has()	# has "LIST" WORD
{
	case " $1 " in *" $2 "*) return 0 ;; esac
	return 1
}

if [ "$(id -u)" -ne 0 ]; then
	err "must run as root (network namespaces, taps, BPF, DPDK --no-huge)"
	exit 1
fi
for b in "$VNETD" "$IO" "$VNETCTL"; do
	if [ ! -x "$b" ]; then
		err "$b not found; build it with 'make all'"
		exit 1
	fi
done
if ! command -v "$TESTPMD" >/dev/null 2>&1; then
	echo "bench_vnetd: SKIP: $TESTPMD not installed (apt-get install dpdk-dev librte-net-virtio23 librte-net-vhost23 librte-net-tap23 librte-mempool-ring23)"
	exit 0
fi
if [ "$(nproc)" -ge 2 ]; then
	GUEST_CPU=${GUEST_CPU:-0}
	BACKEND_CPU=${BACKEND_CPU:-1}
else
	GUEST_CPU=${GUEST_CPU:-0}
	BACKEND_CPU=${BACKEND_CPU:-0}
	err "one CPU: guest and backend share it; the figures mean little"
fi

id=$(printf %x $(($$ & 0xffffff)))
NS=vnet-b-vnetd-$$
TV=vbv$id	# vnetd's tap (vnetd creates it)
TP=vbp$id	# vnetd-bp's tap
TC=vbc$id	# ceiling tap with vnet's programs
TB=vbb$id	# ceiling tap without programs
TD=vbd$id	# the DPDK peer's tap (its tap PMD creates it)
SOCK_V=/tmp/vnet-bench-$$-vnetd.sock
SOCK_P=/tmp/vnet-bench-$$-vnetd-bp.sock
TN=vbn$id	# vnetd-nosb's tap
SOCK_N=/tmp/vnet-bench-$$-vnetd-nosb.sock
VNETD_NOSB_PID=
TK=vbk$id	# vnetd-pk's tap
SOCK_K=/tmp/vnet-bench-$$-vnetd-pk.sock
VNETD_PK_PID=
BUSY_POLL=${BUSY_POLL:-50}
# the second vnetd arm: --busy-poll, unless told otherwise (e.g. another
# build of vnetd, to compare two commits in one interleaved run)
VNETD_B=${VNETD_B:-$VNETD}
VNETD_B_ARGS=${VNETD_B_ARGS-"--busy-poll $BUSY_POLL"}
VNETD_B_LABEL=${VNETD_B_LABEL:-vnetd --busy-poll $BUSY_POLL}
# ... and what its guest adds to its virtio-user device (",packed_vq=1")
VNETD_B_GUEST=${VNETD_B_GUEST:-}
PACKED=${PACKED:-0}
# tun's queue for tap -> guest (txqueuelen): see t2g_qlen
T2G_QLEN=${T2G_QLEN:-16384}
VNETD_PACKED=
GUEST_PACKED=
if [ "$PACKED" = 1 ]; then
	VNETD_PACKED=--packed
	GUEST_PACKED=,packed_vq=1
fi
SOCK_D=/tmp/vnet-bench-$$-peer.sock
# the sliced section's ceiling taps (vnet attached): write, cold, write2
TSW=vbw$id
TSC=vbx$id
TSW2=vby$id
SLICE_MS=${SLICE_MS:-100}
SLICE_SETTLE_MS=${SLICE_SETTLE_MS:-20}
SLICE_SELFCHECK=${SLICE_SELFCHECK:-0}
SLICE_PIDS=()
SLICER_PID=
LOGS=$(mktemp -d /tmp/vnet-bench-vnetd.XXXXXX)
VNETD_PID=
VNETD_BP_PID=
PEER_PID=
GUEST_PID=
BG_PIDS=()
failed=0

# --- processes --------------------------------------------------------------

# wait_sock PATH PID: the socket exists (bounded) while PID lives
wait_sock()
{
	wait_for 30 "$2" test -S "$1"
}

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup()
{
	local p

	# the slicer continues every arm when it ends; then, in case it
	# could not (SIGKILL), continue them here
	stop_pid "$SLICER_PID" TERM
	for p in "${SLICE_PIDS[@]}" "$GUEST_PID"; do
		kill -CONT "$p" 2>/dev/null
	done
	for p in "${BG_PIDS[@]}" "${SLICE_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	stop_pid "$GUEST_PID" INT
	stop_pid "$PEER_PID" INT
	stop_pid "$VNETD_PID" TERM
	stop_pid "$VNETD_BP_PID" TERM
	stop_pid "$VNETD_NOSB_PID" TERM
	stop_pid "$VNETD_PK_PID" TERM
	for t in "$TC" "$TSW" "$TSC" "$TSW2"; do
		"$VNETCTL" -n "$NS" detach "$t" >/dev/null 2>&1
	done
	ip netns del "$NS" 2>/dev/null
	rm -f "$SOCK_V" "$SOCK_P" "$SOCK_N" "$SOCK_K" "$SOCK_D"
	bench_logs_done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'exit 129' HUP

# vnetd_arm VAR SOCK TAP LOG WHAT BIN ARG...: vnetd BIN serving SOCK on TAP
# (with ARGs) on the backend CPU, its pid in VAR, its output appended to
# $LOGS/LOG; false, with an error naming WHAT, when it made no socket
vnetd_arm()
{
	local var=$1 sock=$2 tap=$3 log=$LOGS/$4 what=$5 bin=$6

	shift 6
	rm -f "$sock"
	"$bin" --socket "$sock" --tap "$tap" --netns "$NS" \
		--cpus "$BACKEND_CPU" "$@" >>"$log" 2>&1 &
	printf -v "$var" %s "$!"
	if ! wait_sock "$sock" "$!"; then
		err "$what did not start: $(tail -n 3 "$log")"
		return 1
	fi
}

# the vnetd arms: the defaults, busy-poll (VNETD_B), no sandbox, packed
# shellcheck disable=SC2086 # VNETD_PACKED, VNETD_B_ARGS: words
start_vnetds()
{
	vnetd_arm VNETD_PID "$SOCK_V" "$TV" vnetd.log vnetd "$VNETD" \
		$VNETD_PACKED &&
		vnetd_arm VNETD_BP_PID "$SOCK_P" "$TP" vnetd-bp.log \
			"vnetd --busy-poll" "$VNETD_B" $VNETD_B_ARGS $VNETD_PACKED &&
		vnetd_arm VNETD_NOSB_PID "$SOCK_N" "$TN" vnetd-nosb.log \
			"vnetd --no-sandbox" "$VNETD" --no-sandbox &&
		vnetd_arm VNETD_PK_PID "$SOCK_K" "$TK" vnetd-pk.log \
			"vnetd --packed" "$VNETD" --packed
}

start_peer()
{
	rm -f "$SOCK_D"
	ip netns exec "$NS" "$TESTPMD" \
		--lcores "0@$BACKEND_CPU,1@$BACKEND_CPU" --no-huge -m 1024 \
		--no-pci --no-shconf --file-prefix "vbpeer$$" \
		--vdev "net_vhost0,iface=$SOCK_D" --vdev "net_tap0,iface=$TD" \
		-- --forward-mode=io --auto-start --nb-cores=1 \
		--total-num-mbufs=32768 --disable-link-check \
		--stats-period 3600 </dev/null >"$LOGS/peer.log" 2>&1 &
	PEER_PID=$!
	if ! wait_sock "$SOCK_D" "$PEER_PID"; then
		err "the DPDK peer did not start: $(tail -n 3 "$LOGS/peer.log")"
		PEER_PID=
		return 1
	fi
	ip -n "$NS" link set "$TD" up
}

stop_peer()
{
	stop_pid "$PEER_PID" INT
	PEER_PID=
}

# start_guest SOCK MODE SIZE: testpmd virtio-user, per-second statistics
start_guest()
{
	"$TESTPMD" --lcores "0@$GUEST_CPU,1@$GUEST_CPU" --no-huge -m 1024 \
		--no-pci --no-shconf --file-prefix "vbguest$$" \
		--vdev "net_virtio_user0,path=$1,queues=1$GUEST_PACKED$([ "$1" = "$SOCK_P" ] && echo "$VNETD_B_GUEST")$([ "$1" = "$SOCK_K" ] && [ -z "$GUEST_PACKED" ] && echo ",packed_vq=1")" \
		-- --forward-mode="$2" --auto-start --nb-cores=1 \
		--total-num-mbufs=32768 --disable-link-check \
		"$(if num "$3"; then echo "--txpkts=$3"; else echo "--rx-offloads=0x1c"; fi)" \
		--stats-period 1 </dev/null >"$LOGS/guest.log" 2>&1 &
	GUEST_PID=$!
}

# num SIZE: a frame size (not "gso")
num()
{
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
}

# gen_size SIZE: the generator's words for it ("gso": 64 KiB TCP GSO frames)
gen_size()
{
	if num "$1"; then
		echo "--size $1"
	else
		echo --gso
	fi
}

stop_guest()
{
	stop_pid "$GUEST_PID" INT
	GUEST_PID=
}

# rx_pps: testpmd's Rx-pps samples in guest.log, the first non-zero one
# dropped (a partial period), as one line
rx_pps_samples()
{
	grep -a 'Rx-pps:' "$LOGS/guest.log" | awk '$2 > 0 { print $2 }' |
		tail -n +2 | tr '\n' ' '
}

median_of()
{
	tr ' ' '\n' | awk 'NF' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "nan";
			else if (NR % 2) print v[(NR + 1) / 2];
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# --- one measurement each: prints frames/s or "nan" -------------------------

# g2t_backend SOCK TAP SIZE PID: "frames/s frames/CPU-s share"
g2t_backend()
{
	local r

	start_guest "$1" txonly "$3"
	r=$("$IO" rate --netns "$NS" --dev "$2" --counter rx_packets \
		--wait 30 --warmup 0.5 --seconds "$SECS" --pid "$4" \
		2>>"$LOGS/io.log")
	stop_guest
	echo "${r:-nan nan nan}"
}

# t2g_qlen TAP: tun's queue for tap -> guest.  The generator shares the
# guest's CPU: while it runs the guest does not, the guest's ring (256
# entries) fills and the backend must stop reading; with tun's default 500
# frames the tap then drops what the generator sends in the rest of its time
# slice (measured: 26% of the frames at 64 B, the backend on its CPU 30% of
# the time), so the figure was the scheduler's, not the backend's.  A
# queue that holds a slice's worth of frames (many hosts raise VM taps'
# txqueuelen for the same reason) leaves the generator's rate and the
# backend's CPU time per frame to be measured.  Every arm and the ceiling
# get the same queue.
t2g_qlen()
{
	ip -n "$NS" link set "$1" txqueuelen "$T2G_QLEN"
}

# cpu_s PID: user + system CPU seconds of PID so far (0 without a PID)
cpu_s()
{
	[ -n "${1:-}" ] || { echo 0; return; }
	awk -v t="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / t }' \
		"/proc/$1/stat" 2>/dev/null || echo 0
}

# t2g_backend SOCK TAP SIZE [PID]: "frames/s frames/CPU-s share"; the CPU
# figures are PID's over the samples' time (without PID: frames/s only)
t2g_backend()
{
	local gen n=400 s want c0 c1 t0 t1 pps

	want=$(awk -v s="$SECS" 'BEGIN { n = int(s + 0.5); print n < 1 ? 1 : n }')
	# "gso": a guest that takes TSO (GUEST_CSUM, GUEST_TSO4/6: testpmd's
	# TCP/UDP checksum and LRO offloads), so tun hands 64 KiB frames over
	start_guest "$1" rxonly "$3"
	# the guest is forwarding before the load starts: DPDK's vhost PMD
	# (the peer) may leave a queue disabled when a guest connects while
	# frames are pouring in
	while ! grep -aq 'Port statistics' "$LOGS/guest.log" 2>/dev/null &&
		[ "$n" -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	sleep 0.5
	t2g_qlen "$2"
	# shellcheck disable=SC2046 # gen_size: words
	"$IO" gen --netns "$NS" --dev "$2" $(gen_size "$3") --cpu "$GUEST_CPU" --seconds 60 \
		2>>"$LOGS/io.log" &
	gen=$!
	BG_PIDS+=("$gen")
	# the first (partial) sample is not used: CPU from when it is there
	n=400
	while [ "$(grep -a 'Rx-pps:' "$LOGS/guest.log" | awk '$2 > 0' | wc -l)" -lt 1 ] &&
		[ "$n" -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	c0=$(cpu_s "${4:-}") t0=$(date +%s.%N)
	# bounded: SECS one-second samples after the first (partial) one
	n=$((400 + want * 40))
	while [ "$(rx_pps_samples | wc -w)" -lt "$want" ] && [ "$n" -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	c1=$(cpu_s "${4:-}") t1=$(date +%s.%N)
	s=$(rx_pps_samples | tr ' ' '\n' | head -n "$want" | tr '\n' ' ')
	kill -INT "$gen" 2>/dev/null
	wait "$gen" 2>/dev/null
	stop_guest
	if [ -z "$s" ]; then
		echo nan
		return
	fi
	pps=$(echo "$s" | median_of)
	if [ -z "${4:-}" ]; then
		echo "$pps"
		return
	fi
	awk -v p="$pps" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" \
		'BEGIN { c = c1 - c0; t = t1 - t0
			 if (c <= 0 || t <= 0) { print p, "nan nan"; exit }
			 printf "%s %.0f %.2f\n", p, p * t / c, c / t }'
}

# g2t_floor TAP SIZE: "completions/s completions/CPU-s share", link down
g2t_floor()
{
	local r

	ip -n "$NS" link set "$1" down
	r=$("$IO" floor --netns "$NS" --tap "$1" --size "$2" \
		--cpu "$BACKEND_CPU" --seconds "$SECS" --warmup 0.3 \
		2>>"$LOGS/io.log")
	ip -n "$NS" link set "$1" up
	echo "${r:-nan nan nan}"
}

# g2t_refused TAP: "completions/s completions/CPU-s share"
g2t_refused()
{
	local r

	r=$("$IO" refused --netns "$NS" --tap "$1" --cpu "$BACKEND_CPU" \
		--seconds "$SECS" --warmup 0.3 2>>"$LOGS/io.log")
	echo "${r:-nan nan nan}"
}

# g2t_cold TAP SIZE: "frames/s frames/CPU-s share", frames from GUEST_CPU
g2t_cold()
{
	local r

	r=$("$IO" cold --netns "$NS" --tap "$1" --size "$2" \
		--cpu "$BACKEND_CPU" --touch-cpu "$GUEST_CPU" --seconds "$SECS" \
		--warmup 0.3 2>>"$LOGS/io.log")
	echo "${r:-nan nan nan}"
}

# g2t_ceiling TAP SIZE: "frames/s frames/CPU-s share"
g2t_ceiling()
{
	local r

	r=$("$IO" write --netns "$NS" --tap "$1" --size "$2" \
		--cpu "$BACKEND_CPU" --seconds "$SECS" --warmup 0.3 \
		2>>"$LOGS/io.log")
	echo "${r:-nan nan nan}"
}

# t2g_ceiling TAP SIZE
t2g_ceiling()
{
	local rd gen spin r

	t2g_qlen "$1"
	"$IO" read --netns "$NS" --tap "$1" --cpu "$BACKEND_CPU" \
		--seconds "$SECS" --warmup 0.5 >"$LOGS/read.out" \
		2>>"$LOGS/io.log" &
	rd=$!
	sleep 0.1
	"$IO" spin --cpu "$GUEST_CPU" --seconds 60 &
	spin=$!
	# shellcheck disable=SC2046 # gen_size: words
	"$IO" gen --netns "$NS" --dev "$1" $(gen_size "$2") --cpu "$GUEST_CPU" --seconds 60 \
		2>>"$LOGS/io.log" &
	gen=$!
	BG_PIDS+=("$spin" "$gen")
	wait_pid "$rd" $((${SECS%.*} + 10))
	kill -INT "$gen" "$spin" 2>/dev/null
	wait "$gen" "$spin" 2>/dev/null
	r=$(cat "$LOGS/read.out")
	echo "${r:-nan}"
}

# g2t_sliced SIZE: the time-sliced section for one size, in this shell
# (not a $(...) subshell: the EXIT trap must see the PIDs); the slicer's
# summary goes to $LOGS/slice-SIZE.out, its line per round to stderr
g2t_sliced()
{
	local s=$1 wp cp w2p t arms=()

	start_guest "$SOCK_V" txonly "$s"
	# the guest's frames are flowing (bounded wait)
	"$IO" rate --netns "$NS" --dev "$TV" --counter rx_packets --wait 30 \
		--warmup 0.3 --seconds 0.1 >/dev/null 2>>"$LOGS/io.log" || failed=1
	"$IO" write --netns "$NS" --tap "$TSW" --size "$s" --cpu "$BACKEND_CPU" \
		--seconds 0 --warmup 0 >/dev/null 2>>"$LOGS/io.log" &
	wp=$!
	"$IO" cold --netns "$NS" --tap "$TSC" --size "$s" --cpu "$BACKEND_CPU" \
		--touch-cpu "$GUEST_CPU" --seconds 0 --warmup 0 \
		>/dev/null 2>>"$LOGS/io.log" &
	cp=$!
	SLICE_PIDS=("$wp" "$cp")
	arms=(--arm "vnetd:$GUEST_PID:$TV:$VNETD_PID" --arm "cold:$cp:$TSC:$cp/$cp"
		--arm "write:$wp:$TSW:$wp")
	if [ "$SLICE_SELFCHECK" = 1 ]; then
		"$IO" write --netns "$NS" --tap "$TSW2" --size "$s" \
			--cpu "$BACKEND_CPU" --seconds 0 --warmup 0 \
			>/dev/null 2>>"$LOGS/io.log" &
		w2p=$!
		SLICE_PIDS+=("$w2p")
		arms+=(--arm "write2:$w2p:$TSW2:$w2p")
	fi
	# every ceiling is writing before the slicer starts
	for t in "$TSW" "$TSC" $([ "$SLICE_SELFCHECK" = 1 ] && echo "$TSW2"); do
		"$IO" rate --netns "$NS" --dev "$t" --counter rx_packets --wait 10 \
			--warmup 0 --seconds 0.01 >/dev/null 2>>"$LOGS/io.log" ||
			failed=1
	done
	# in the background: a signal to this script runs the trap at once,
	# and cleanup stops the slicer (which continues every arm) first
	"$IO" slice --netns "$NS" --rounds "$ROUNDS" --slice-ms "$SLICE_MS" \
		--settle-ms "$SLICE_SETTLE_MS" "${arms[@]}" \
		>"$LOGS/slice-$s.out" &
	SLICER_PID=$!
	wait "$SLICER_PID" || failed=1
	SLICER_PID=
	interrupt_pids 5 "${SLICE_PIDS[@]}"
	SLICE_PIDS=()
	kill -CONT "$GUEST_PID" 2>/dev/null
	stop_guest
}

# --- setup ---------------------------------------------------------------------

ip netns add "$NS" || exit 1
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1 >/dev/null
for t in "$TC" "$TB"; do
	ip -n "$NS" tuntap add dev "$t" mode tap multi_queue vnet_hdr || exit 1
	ip -n "$NS" link set "$t" up
done
SLICED_TAPS=
if has "$ARMS" sliced && has "$DIRS" g2t; then
	SLICED_TAPS="$TSW $TSC"
	[ "$SLICE_SELFCHECK" = 1 ] && SLICED_TAPS+=" $TSW2"
fi
for t in $SLICED_TAPS; do
	ip -n "$NS" tuntap add dev "$t" mode tap multi_queue vnet_hdr || exit 1
	ip -n "$NS" link set "$t" up
done
for t in "$TC" $SLICED_TAPS; do
	if ! "$VNETCTL" -n "$NS" attach "$t" >"$LOGS/attach.log" 2>&1; then
		err "vnetctl attach $t: $(cat "$LOGS/attach.log")"
		failed=1
		exit 1
	fi
done
if ! start_vnetds; then
	failed=1
	exit 1
fi

# R: frames/s; C: frames per second of the backend's CPU time; S: the
# share of the window the backend had its CPU (guest->tap only)
declare -A R C S
CONFIGS="vnetd vnetd_nosb vnetd_bp vnetd_pk peer ceil_vnet ceil_bare ceil_cold floor refused"
# record CONFIG DIR SIZE "FRAMES/S [FRAMES/CPU-S SHARE]"
record()
{
	local pps cpu share

	read -r pps cpu share <<<"$4"
	R[$1,$2,$3]+="$pps "
	C[$1,$2,$3]+="${cpu:-nan} "
	S[$1,$2,$3]+="${share:-nan} "
	[ "$pps" = nan ] && failed=1
	printf '  %-10s %-4s %5s B  %10s frames/s' "$1" "$2" "$3" "$pps" >&2
	[ -n "$cpu" ] && printf '  %10s frames/CPU-s  CPU share %s' "$cpu" "$share" >&2
	echo >&2
}

# backend_arm ARM SOCK TAP PID: ARM's figures at every size, guest -> tap
# and tap -> guest, through the backend PID serving SOCK on TAP
backend_arm()
{
	local s

	for s in $SIZES; do
		has "$DIRS" g2t && num "$s" && record "$1" g2t "$s" "$(g2t_backend "$2" "$3" "$s" "$4")"
		has "$DIRS" t2g && record "$1" t2g "$s" "$(t2g_backend "$2" "$3" "$s" "$4")"
	done
}

echo "bench_vnetd: $REPS repetitions, ${SECS} s windows, guest on CPU $GUEST_CPU, backends on CPU $BACKEND_CPU, $(uname -r)" >&2
t_start=$(date +%s)
for rep in $(seq "$REPS"); do
	echo "repetition $rep/$REPS" >&2
	blocks="peer vnetd vnetd_nosb vnetd_bp vnetd_pk ceiling"
	[ $((rep % 2)) -eq 0 ] && blocks="ceiling vnetd_pk vnetd_bp vnetd_nosb vnetd peer"
	for blk in $blocks; do
		has "$ARMS" "$blk" || continue
		case $blk in
		vnetd) backend_arm vnetd "$SOCK_V" "$TV" "$VNETD_PID" ;;
		vnetd_nosb) backend_arm vnetd_nosb "$SOCK_N" "$TN" "$VNETD_NOSB_PID" ;;
		vnetd_pk) backend_arm vnetd_pk "$SOCK_K" "$TK" "$VNETD_PK_PID" ;;
		vnetd_bp) backend_arm vnetd_bp "$SOCK_P" "$TP" "$VNETD_BP_PID" ;;
		peer)
			if ! start_peer; then
				for s in $SIZES; do
					has "$DIRS" g2t && num "$s" && record peer g2t "$s" nan
					has "$DIRS" t2g && record peer t2g "$s" nan
				done
				continue
			fi
			backend_arm peer "$SOCK_D" "$TD" "$PEER_PID"
			stop_peer
			;;
		ceiling)
			for s in $SIZES; do
				has "$DIRS" g2t && num "$s" && record ceil_vnet g2t "$s" "$(g2t_ceiling "$TC" "$s")"
				has "$DIRS" g2t && num "$s" && record ceil_bare g2t "$s" "$(g2t_ceiling "$TB" "$s")"
				has "$DIRS" g2t && num "$s" && record ceil_cold g2t "$s" "$(g2t_cold "$TC" "$s")"
				has "$DIRS" g2t && num "$s" && record floor g2t "$s" "$(g2t_floor "$TB" "$s")"
				has "$DIRS" g2t && [ "$s" = 64 ] &&
					record refused g2t "$s" "$(g2t_refused "$TB")"
				has "$DIRS" t2g && record ceil_vnet t2g "$s" "$(t2g_ceiling "$TC" "$s")"
				has "$DIRS" t2g && record ceil_bare t2g "$s" "$(t2g_ceiling "$TB" "$s")"
			done
			;;
		esac
	done
done

declare -A SLICED
if [ -n "$SLICED_TAPS" ]; then
	for s in $SIZES; do
		num "$s" || continue
		echo "guest -> tap, time-sliced, $s B ($ROUNDS rounds)" >&2
		g2t_sliced "$s"
		SLICED[$s]=$(cat "$LOGS/slice-$s.out" 2>/dev/null)
		[ -n "${SLICED[$s]}" ] || SLICED[$s]="(no figures)"
	done
fi

SIG=
if has "$ARMS" vnetd; then
	echo "signals per 1000 frames" >&2
	SIG=$("$IO" signals --socket "$SOCK_V" --netns "$NS" --tap "$TV" \
		--frames 4000 2>>"$LOGS/io.log") || failed=1
fi
t_end=$(date +%s)

# --- report --------------------------------------------------------------------

# ratios "a1 a2 ..." "b1 b2 ...": per-repetition a/b, min median max
ratios()
{
	paste <(echo "$1" | tr ' ' '\n' | awk 'NF') \
		<(echo "$2" | tr ' ' '\n' | awk 'NF') |
		awk '$1 != "nan" && $2 != "nan" && $2 > 0 { print $1 / $2 }' |
		sort -g | awk '{ v[NR] = $1 } END {
			if (NR == 0) { print "nan nan nan"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.2f %.2f %.2f\n", v[1], m, v[NR] }'
}

# fmt UNIT MIN MED MAX: "123.4k / ..." (UNIT k) or "0.97 / ..." (UNIT 1)
fmt()
{
	awk -v u="$1" -v a="$2" -v b="$3" -v c="$4" 'function k(x) {
		if (x == "nan")
			return "nan"
		return u == "k" ? sprintf("%.1fk", x / 1000) : sprintf("%.2f", x) }
		BEGIN { printf "%s / %s / %s", k(a), k(b), k(c) }'
}

declare -A LABEL=([vnetd]="vnetd" [vnetd_nosb]="vnetd --no-sandbox" [vnetd_bp]="$VNETD_B_LABEL" [vnetd_pk]="vnetd --packed (packed rings)" [peer]="DPDK vhost+tap peer"
	[ceil_vnet]="tap ceiling, vnet attached" [ceil_bare]="tap ceiling, bare tap"
	[ceil_cold]="tap ceiling, frames from CPU $GUEST_CPU"
	[floor]="io_uring floor (link down)"
	[refused]="refused writes (8 B, EINVAL)")

# table TITLE ARRAY DIR UNIT: one line per configuration, a column per size
table()
{
	local -n a=$2
	local c s line

	echo "$1"
	for c in $CONFIGS; do
		line=$(printf '  %-28s' "${LABEL[$c]}")
		for s in $SIZES; do
			[ -n "${a[$c,$3,$s]:-}" ] || continue
			# shellcheck disable=SC2046
			line+=$(printf '  %5s B: %-27s' "$s" "$(fmt "$4" $(mmm "${a[$c,$3,$s]}"))")
		done
		echo "$line"
	done
}

# ratio_lines ARRAY DIR
ratio_lines()
{
	local -n a=$1
	local s v

	for s in $SIZES; do
		[ "$2" = g2t ] && ! num "$s" && continue
		for v in vnetd vnetd_bp; do
			echo "  $s B, per-repetition ratios (min / median / max), ${LABEL[$v]}:" \
				"/peer $(ratios "${a[$v,$2,$s]:-}" "${a[peer,$2,$s]:-}" | sed 's# # / #g');" \
				"/ceiling(vnet) $(ratios "${a[$v,$2,$s]:-}" "${a[ceil_vnet,$2,$s]:-}" | sed 's# # / #g');" \
				"/ceiling(bare) $(ratios "${a[$v,$2,$s]:-}" "${a[ceil_bare,$2,$s]:-}" | sed 's# # / #g')$([ "$2" = g2t ] && echo "; /ceiling(cold) $(ratios "${a[$v,$2,$s]:-}" "${a[ceil_cold,$2,$s]:-}" | sed 's# # / #g')")"
		done
		echo "  $s B, ${LABEL[vnetd_bp]} / vnetd, per repetition (min / median / max):" \
			"$(ratios "${a[vnetd_bp,$2,$s]:-}" "${a[vnetd,$2,$s]:-}" | sed 's# # / #g')"
		echo "  $s B, the sandbox: vnetd / vnetd --no-sandbox per repetition (min / median / max):" \
			"$(ratios "${a[vnetd,$2,$s]:-}" "${a[vnetd_nosb,$2,$s]:-}" | sed 's# # / #g')"
		echo "  $s B, packed rings: vnetd --packed / vnetd (split) per repetition (min / median / max):" \
			"$(ratios "${a[vnetd_pk,$2,$s]:-}" "${a[vnetd,$2,$s]:-}" | sed 's# # / #g')"
	done
}

echo
echo "vnetd benchmark ($(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $REPS repetitions, ${SECS} s windows, $((t_end - t_start)) s)"
echo "min / median / max over the repetitions; guest on CPU $GUEST_CPU, backend on CPU $BACKEND_CPU"
echo
tables=0
for a in $ARMS; do
	has "peer vnetd vnetd_nosb vnetd_bp vnetd_pk ceiling" "$a" && tables=1
done
if [ "$tables" = 1 ]; then
	table "guest -> tap, frames/s (testpmd txonly; the tap's rx_packets):" R g2t k
	ratio_lines R g2t
	table "guest -> tap, frames per second of the backend's CPU time:" C g2t k
	ratio_lines C g2t
	table "guest -> tap, share of the window the backend was on its CPU:" S g2t 1
	echo
	table "tap -> guest, frames/s (AF_PACKET generator, txqueuelen $T2G_QLEN; testpmd rxonly Rx-pps; the ceiling: its read loop):" R t2g k
	ratio_lines R t2g
	table "tap -> guest, frames per second of the backend's CPU time:" C t2g k
	ratio_lines C t2g
	table "tap -> guest, share of the samples' time the backend was on its CPU:" S t2g 1
	echo

	verdict()
	{
		# verdict NAME MEDIAN_RATIO TARGET
		awk -v n="$1" -v r="$2" -v t="$3" 'BEGIN {
			if (r == "nan") { printf "  %-46s n/a (no figure)\n", n; exit }
			printf "  %-46s %s (median ratio %.2f, target %.1f)\n", n,
				(r + 0 >= t + 0) ? "MET" : "MISSED", r, t }'
	}

	echo "targets, 64 B guest -> tap (frames/s; per backend CPU-second in brackets):"
	for v in vnetd vnetd_bp; do
		read -r _ vp _ < <(ratios "${R[$v,g2t,64]:-}" "${R[peer,g2t,64]:-}")
		read -r _ vc _ < <(ratios "${R[$v,g2t,64]:-}" "${R[ceil_vnet,g2t,64]:-}")
		read -r _ cvp _ < <(ratios "${C[$v,g2t,64]:-}" "${C[peer,g2t,64]:-}")
		read -r _ cvc _ < <(ratios "${C[$v,g2t,64]:-}" "${C[ceil_vnet,g2t,64]:-}")
		verdict "${LABEL[$v]} >= 3x the DPDK peer" "$vp" 3
		verdict "  [per CPU-second]" "$cvp" 3
		verdict "${LABEL[$v]} >= 0.7x the tap ceiling (vnet)" "$vc" 0.7
		verdict "  [per CPU-second]" "$cvc" 0.7
	done
	read -r _ fp _ < <(ratios "${R[floor,g2t,64]:-}" "${R[peer,g2t,64]:-}")
	read -r _ cp _ < <(ratios "${R[ceil_vnet,g2t,64]:-}" "${R[peer,g2t,64]:-}")
	echo "  reachable at all: the tap ceiling (vnet) is ${cp}x the peer; io_uring's"
	echo "  floor (writes tun drops with EIO: no XDP, no stack) is ${fp}x the peer"
	read -r _ rp _ < <(ratios "${R[refused,g2t,64]:-}" "${R[peer,g2t,64]:-}")
	echo "  writes tun refuses at once (8 B, EINVAL: no frame at all) are ${rp}x"
	echo
fi
if [ -n "$SLICED_TAPS" ]; then
	echo "guest -> tap, time-sliced (bench_vnetd_io slice; vnetd's guest, the cold and the"
	echo "vnet (write) ceilings, one at a time, ${SLICE_MS} ms slices, ${SLICE_SETTLE_MS} ms settle dropped):"
	for s in $SIZES; do
		echo "  $s B:"
		# shellcheck disable=SC2001 # indent every line
		echo "${SLICED[$s]}" | sed 's/^/    /'
	done
	echo
fi
echo "call-eventfd signals per 1000 frames (vufe guests against vnetd, see docs/benchmarks.md):"
# shellcheck disable=SC2001 # indent every line
echo "${SIG:-(not measured)}" | sed 's/^/  /'
exit "$failed"
