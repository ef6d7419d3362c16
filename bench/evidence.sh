#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make evidence: does a real guest's TCP do better behind vnetd than behind
# QEMU's own tap backend?  One guest (Debian's kernel, stock virtio_net,
# selftests/e2e/build-guest.sh) under QEMU TCG gets one NIC per arm:
#
#   tap        QEMU's own -netdev tap (vhost=off: no /dev/vhost-net here)
#   vnetd      a vnetd on its defaults (nothing set: the notification rule,
#              tx/rx-frames 32, tx/rx-usecs 200, urgent/PSH bypass on)
#   nocoal     a vnetd with coalescing off (tx/rx-frames 0): a signal per
#              burst
#   always     the default values with tx-hold and rx-hold always: every
#              hold counts usecs from its first frame (the static rule the
#              notification rule replaced)
#   nobypass   the default values with the urgent/PSH bypass off
#   adaptive   a vnetd with adaptive-tx and adaptive-rx on
#   dpdk       only when named in -a: DPDK's testpmd (vhost PMD + tap PMD,
#              io forwarding) pinned to CPU 1, where it busy-polls for the
#              whole run (docs/evidence.md says what that does on 2 CPUs)
#
# (each vnetd arm is its own vnetd process and tap, so every one is on
# exactly its configuration from the start and its CPU time is its own).
# The guest runs the workloads on the NIC of the arm under test, taking
# commands from a second serial port (guest-init.sh's serve step); the
# servers (iperf3, sockperf) run in the host's network namespace.  Arms are
# interleaved within each repetition (ABCDE EDCBA ...), after a warm-up.
#
# Workloads (the seeds' own):
#   sw64 sw256 sw1024 sw4096   TCP guest -> host, iperf3 -l N (small writes)
#   bulk-tx bulk-rx            TCP bulk both ways (TSO on)
#   rr64                       TCP request/response, 64 B (sockperf ping-pong)
#   udp-rr                     UDP request/response, 64 B (sockperf ping-pong)
#   rr-sparse udp-sparse       the same at 100 messages/s (--mps 100), for
#                              twice SECS: sparse traffic, the common case
#   rr-under-bulk              rr64 while a bulk TCP stream runs host ->
#                              guest on the same NIC
#   rr-under-bulk-tx           the same with the stream guest -> host
#   udp64                      UDP 64 B guest -> host, frames/s into the tap;
#                              also on the vnetd arm with the tap's
#                              rx-frames 1 (arm batch1: vnetd's TX batch 1)
#
# and per cell: guest interrupts of the NIC (/proc/interrupts), the
# backend's CPU time (vnetd's; QEMU's whole process for the tap arm), call
# signals (vnetctl -j stats) and the mean guest-TX frame size (the tap's
# rx_bytes / rx_packets: TCP builds larger segments when completions come
# on time).  Then the same with a busy loop on CPU 1 (the "hog" table) for
# the small writes and RR.
#
#   bench/evidence.sh [-r REPS] [-t SECS] [-w WORKLOADS] [-a ARMS]
#                     [-H REPS] [-o DIR]
#
#   -r REPS       repetitions of the quiet table (default 5)
#   -t SECS       seconds per measurement (default 3)
#   -w LIST       workloads, comma separated (default all)
#   -a LIST       arms (default tap,vnetd,nocoal,always,adaptive)
#   -H REPS       repetitions of the hog table (default = REPS; 0: none)
#   -o DIR        results (default build/evidence): results.tsv (every
#                 measurement), summary.md (the tables), *.png (plots)
#
# Environment: OUT, QEMU, VNETD, VNETD_TESTING, VNETCTL; EVIDENCE_COAL_ARM
# (ARM one of vnetd, nocoal, always, nobypass, adaptive): other `vnetctl coalesce
# set` words for it, EVIDENCE_ENV_ARM: NAME=VALUE words for its vnetd's
# environment, the test switches of docs/vnetd.md "Test builds" (to try
# values and variants; docs/evidence.md): that arm runs VNETD_TESTING
# (default build/vnetd-testing, vnetd's code and flags with the switches);
# EVIDENCE_BULK_RATE (iperf3 -b, e.g. 1000M): the rr-under-bulk streams
# capped at that rate, the same on every arm, so that a round trip is
# compared under the same stream and not under what each backend lets the
# stream reach.  EVIDENCE_RT (a SCHED_FIFO priority, e.g. 10): the
# host threads a round trip crosses run at it, every arm alike.
# EVIDENCE_NIC_ARGS: more virtio-net-pci properties for every arm's NIC
# (e.g. rx_queue_size=1024).  EVIDENCE_RTT_HIST=1: the slow round trips
# by duration in DIR/hist.txt.  Not a test: make check does not run it.  docs/evidence.md explains the method and holds a run.

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(dirname "$HERE")
OUT=${OUT:-$TOP/build}
case $OUT in /*) ;; *) OUT=$TOP/$OUT ;; esac
# shellcheck source=selftests/e2e/vm.sh
source "$TOP/selftests/e2e/vm.sh"
EVSTAT=$OUT/bench/evstat

REPS=5
SECS=3
HOG_REPS=""
WORKLOADS="sw64,sw256,sw1024,sw4096,bulk-tx,bulk-rx,rr64,udp-rr,rr-sparse,udp-sparse,rr-under-bulk,rr-under-bulk-tx,udp64"
ARMS="tap,vnetd,nocoal,always,adaptive"
HOG_WORKLOADS="sw64,sw256,rr64,udp-rr,rr-sparse,udp-sparse,rr-under-bulk,rr-under-bulk-tx"
HOG_ARMS="tap,vnetd,nocoal"
DIR=$OUT/evidence

usage()	# usage STATUS
{
	if [ "${1:-2}" = 0 ]; then
		sed -n '/^#   bench\/evidence.sh/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//;$d'
	else
		sed -n '/^#   bench\/evidence.sh/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2
	fi
	exit "${1:-2}"
}

# shellcheck source=bench/opts.sh
source "$HERE/opts.sh"
BENCH_USAGE=usage
bench_opts "r:REPS t:SECS w:WORKLOADS a:ARMS H:HOG_REPS o:DIR" "$@"
HOG_REPS=${HOG_REPS:-$REPS}
# absolute: the plots are drawn from inside it
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
for v in "$REPS" "$SECS" "$HOG_REPS"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "evidence: '$v' is not a whole number" >&2; usage; }
done
[ "$REPS" -ge 1 ] && [ "$SECS" -ge 1 ] || { echo "evidence: -r and -t must be at least 1" >&2; exit 2; }

die()
{
	echo "evidence: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, taps, BPF, vnetd)"
for t in "$VNETD" "$VNETD_TESTING" "$VNETCTL" "$EVSTAT"; do
	[ -x "$t" ] || die "$t not found: run 'make all' first (make evidence does)"
done
for t in "$QEMU" iperf3 sockperf jq taskset; do
	command -v "$t" >/dev/null 2>&1 || die "$t not found: run scripts/bootstrap.sh"
done
"$TOP/selftests/e2e/build-guest.sh" >/dev/null || die "cannot build the guest (selftests/e2e/build-guest.sh)"

# --- the arms ------------------------------------------------------------------

# arm_index ARM: 0 for tap, 1.. for the vnetd arms (the guest NIC's slot)
# only the arms asked for get a NIC (tap always, the baseline), so that
# fewer NICs share the guest's INTx lines (each line's interrupt runs the
# handler of every NIC on it); the guest's IRQ of each is in machine.tsv
ALL_ARMS="tap"
for a in vnetd nocoal always nobypass adaptive dpdk; do
	[[ ",$ARMS," == *,$a,* ]] && ALL_ARMS="$ALL_ARMS $a"
done
for a in ${ARMS//,/ }; do
	[[ " $ALL_ARMS batch1 " == *" $a "* ]] || { echo "evidence: unknown arm '$a'" >&2; usage; }
done
TESTPMD=${VNET_TESTPMD:-dpdk-testpmd}
arm_index()
{
	local i=0 a

	for a in $ALL_ARMS; do
		[ "$a" = "$1" ] && { echo $i; return 0; }
		i=$((i + 1))
	done
	return 1
}

# arm_coalesce ARM: the vnetctl coalesce set words of a vnetd arm
arm_coalesce()
{
	local v="EVIDENCE_COAL_$1"

	# EVIDENCE_COAL_vnetd="tx-frames 64 ..." tries other values in an arm
	if [ -n "${!v:-}" ]; then
		echo "${!v}"
		return
	fi
	case $1 in
	nocoal) echo "tx-frames 0 tx-usecs 0 rx-frames 0 rx-usecs 0" ;;
	nobypass) echo "tx-urgent-bypass off rx-push-bypass off" ;;
	always) echo "tx-hold always rx-hold always" ;;
	adaptive) echo "adaptive-tx on adaptive-rx on" ;;
	*) echo "" ;;
	esac
}

# addresses: arm i is 198.51.100.(16i+1)/28 on the host, +1 in the guest;
# the tap arm is 192.0.2.1/24, as in the e2e tests
arm_host()
{
	local i

	i=$(arm_index "$1")
	if [ "$i" = 0 ]; then
		echo 192.0.2.1
	else
		echo "198.51.100.$((16 * i + 1))"
	fi
}

arm_guest()
{
	local i

	i=$(arm_index "$1")
	if [ "$i" = 0 ]; then
		echo 192.0.2.2
	else
		echo "198.51.100.$((16 * i + 2))"
	fi
}

arm_plen()
{
	[ "$(arm_index "$1")" = 0 ] && echo 24 || echo 28
}

arm_mac()
{
	printf '02:00:00:00:%02x:02\n' "$(arm_index "$1")"
}

arm_tap()
{
	echo "${TAPS[$(arm_index "$1")]}"
}

# --- setup -----------------------------------------------------------------------

mkdir -p "$DIR"
rm -f "$DIR"/results.tsv "$DIR"/*.png "$DIR"/summary.md
VM_LOGS=$DIR/logs
rm -rf "$VM_LOGS"
mkdir -p "$VM_LOGS"
NS="vnet-ev-$$"
PIDS=()
TAPS=()
VPIDS=()
QEMU_PID=""
HOG_PID=""

cleanup()
{
	local p t

	[ "$BASHPID" = "$$" ] || return 0
	[ -n "$HOG_PID" ] && kill "$HOG_PID" 2>/dev/null
	if [ -n "$QEMU_PID" ]; then
		kill -TERM "$QEMU_PID" 2>/dev/null
		_vm_poll 5000 _vm_gone "$QEMU_PID" || kill -KILL "$QEMU_PID" 2>/dev/null
	fi
	for p in ${PIDS[@]+"${PIDS[@]}"}; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in ${PIDS[@]+"${PIDS[@]}"}; do
		_vm_poll 10000 _vm_gone "$p" || kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for t in ${TAPS[@]+"${TAPS[@]}"}; do
		[ -e "/sys/fs/bpf/vnet/$t" ] && "$VNETCTL" detach "$t" >/dev/null 2>&1
	done
	ip netns del "$NS" 2>/dev/null
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS" || die "cannot create netns $NS"
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1

# one tap per arm; QEMU creates the tap arm's (in the netns it runs in)
for a in $ALL_ARMS; do
	TAPS+=("ev$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')$(arm_index "$a")")
done

# start_dpdk: testpmd as the vhost-user server of the dpdk arm, its tap
# PMD creating the arm's tap in the netns
start_dpdk()
{
	local sock=$VM_LOGS/dpdk.sock log=$VM_LOGS/testpmd.log

	command -v "$TESTPMD" >/dev/null 2>&1 || die "$TESTPMD not found (scripts/bootstrap.sh installs DPDK)"
	ip netns exec "$NS" "$TESTPMD" --lcores "0@1,1@1" --no-huge -m 1024 \
		--no-pci --no-shconf --file-prefix "vnetev$$" \
		--vdev "net_vhost0,iface=$sock" --vdev "net_tap0,iface=$(arm_tap dpdk)" \
		-- --forward-mode=io --auto-start --nb-cores=1 \
		--total-num-mbufs=32768 --disable-link-check \
		--stats-period 3600 </dev/null >"$log" 2>&1 &
	PIDS+=("$!")
	VPIDS[$(arm_index dpdk)]=$!
	_vm_poll 30000 test -S "$sock" || die "testpmd did not start: $(tail -n 3 "$log")"
}

# vnetd_arm ARM: a vnetd of its own, server mode, on its own tap
start_vnetd()
{
	local a=$1 sock=$VM_LOGS/$1.sock log=$VM_LOGS/vnetd-$1.log v="EVIDENCE_ENV_$1"
	local bin=$VNETD

	# test switches live in the test build only (docs/vnetd.md)
	[ -n "${!v:-}" ] && bin=$VNETD_TESTING
	# shellcheck disable=SC2086 # NAME=VALUE words
	env ${!v:-} "$bin" --netns "$NS" --tap "$(arm_tap "$a")" --socket "$sock" >"$log" 2>&1 &
	PIDS+=("$!")
	VPIDS[$(arm_index "$a")]=$!
	_vm_poll 10000 test -S "$sock" || die "vnetd for $a did not start: $(tail -n 3 "$log")"
}

QEMU_NET=()
for a in $ALL_ARMS; do
	i=$(arm_index "$a")
	# shellcheck disable=SC2054 # QEMU's commas
	if [ "$i" = 0 ]; then
		QEMU_NET+=(-netdev "tap,id=n0,ifname=$(arm_tap tap),script=no,downscript=no,vhost=off")
	elif [ "$a" = dpdk ]; then
		start_dpdk
		QEMU_NET+=(-chardev "socket,id=c$i,path=$VM_LOGS/dpdk.sock"
			-netdev "vhost-user,id=n$i,chardev=c$i")
	else
		start_vnetd "$a"
		# shellcheck disable=SC2086 # words
		[ -n "$(arm_coalesce "$a")" ] &&
			{ "$VNETCTL" -n "$NS" coalesce set "$(arm_tap "$a")" $(arm_coalesce "$a") ||
				die "vnetctl coalesce set for arm $a failed"; }
		QEMU_NET+=(-chardev "socket,id=c$i,path=$VM_LOGS/$a.sock"
			-netdev "vhost-user,id=n$i,chardev=c$i")
	fi
	# the same device for every arm: INTx (vectors=0, see docs/e2e.md),
	# EVENT_IDX and mergeable buffers as QEMU offers them
	QEMU_NET+=(-device "virtio-net-pci,netdev=n$i,mac=$(arm_mac "$a"),vectors=0,addr=$((3 + i))${EVIDENCE_NIC_ARGS:+,$EVIDENCE_NIC_ARGS}")
done

CTL=$VM_LOGS/ctl
rm -f "$CTL.in" "$CTL.out"
mkfifo "$CTL.in" "$CTL.out" || die "mkfifo"
SERIAL=$VM_LOGS/console.log
# shellcheck disable=SC2054
QEMU_ARGS=(-accel tcg -cpu max -smp 1 -m "$E2E_MEM"
	-machine "q35,memory-backend=mem"
	-object "memory-backend-memfd,id=mem,size=${E2E_MEM}M,share=on"
	-nodefaults -no-user-config -display none -no-reboot
	-kernel "$E2E_VMLINUX" -initrd "$E2E_INITRD"
	-append "console=ttyS0 loglevel=4 panic=-1 no_timer_check vnet.steps=serve:ttyS1"
	"${QEMU_NET[@]}"
	-serial "file:$SERIAL"
	-chardev "pipe,id=ctl,path=$CTL" -serial chardev:ctl)
printf '%s\n' "$QEMU ${QEMU_ARGS[*]}" >"$VM_LOGS/qemu.cmdline"
ip netns exec "$NS" "$QEMU" "${QEMU_ARGS[@]}" </dev/null >"$VM_LOGS/qemu.err" 2>&1 &
QEMU_PID=$!
PIDS+=("$QEMU_PID")
# O_RDWR: never blocks, no EOF when QEMU goes
cat <>"$CTL.out" >"$VM_LOGS/ctl.log" &
PIDS+=("$!")

_vm_poll 60000 grep -q VNET-SERVE-READY "$VM_LOGS/ctl.log" ||
	die "the guest did not come up: $(tr -d '\r' <"$SERIAL" | tail -n 3 | tr '\n' ' ') $(tail -n 2 "$VM_LOGS/qemu.err")"

# wait_line FILE OFFSET PATTERN SECS: block until a line matching PATTERN
# appears in FILE after OFFSET bytes, at most SECS; 1 when it did not.
# tail -f sleeps on inotify: nothing of the harness runs while a workload
# does (a poll every 50 ms forked grep, date and sleep: about 10% of a CPU
# in slices of up to 6 ms, the p99 of every arm's round trips)
wait_line()
{
	timeout "$4" tail -c +$(($2 + 1)) -f "$1" 2>/dev/null | grep -m 1 -q -- "$3"
}

# guest CMD...: run CMD in the guest, print its output; 1 when it failed
# or took longer than 60 s + SECS
guest()
{
	local tag start

	# unique without a counter: guest runs in $(...) subshells
	tag=c$(date +%s%N)
	start=$(wc -c <"$VM_LOGS/ctl.log")
	printf '%s %s\n' "$tag" "$*" >"$CTL.in"
	wait_line "$VM_LOGS/ctl.log" "$start" "^VNET-OUT-END $tag rc=" $((60 + SECS)) || {
		echo "evidence: guest command '$*' timed out" >&2
		return 1
	}
	tail -c +$((start + 1)) "$VM_LOGS/ctl.log" |
		sed -n "/^VNET-OUT-BEGIN $tag\$/,/^VNET-OUT-END $tag rc=/p" | sed '1d;$d'
	tail -c +$((start + 1)) "$VM_LOGS/ctl.log" | grep -q "^VNET-OUT-END $tag rc=0\$"
}

# the guest's interfaces by MAC, addresses on both ends
for a in $ALL_ARMS; do
	tap=$(arm_tap "$a")
	ip -n "$NS" link show "$tap" >/dev/null 2>&1 || die "no tap $tap for arm $a"
	ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$tap.disable_ipv6=1" 2>/dev/null
	ip -n "$NS" addr replace "$(arm_host "$a")/$(arm_plen "$a")" dev "$tap"
	ip -n "$NS" link set "$tap" up
	dev=$(guest "for d in /sys/class/net/eth*; do [ \"\$(cat \$d/address)\" = $(arm_mac "$a") ] && echo \${d##*/}; done; true") ||
		die "guest: no NIC with MAC $(arm_mac "$a")"
	[ -n "$dev" ] || die "guest: no NIC with MAC $(arm_mac "$a")"
	GDEV[$(arm_index "$a")]=$dev
	GIRQ[$(arm_index "$a")]=$(guest "cat /sys/class/net/$dev/device/../irq 2>/dev/null || cat /sys/class/net/$dev/device/irq") || GIRQ[$(arm_index "$a")]="?"
	guest "ip addr flush dev $dev; ip addr add $(arm_guest "$a")/$(arm_plen "$a") dev $dev && ip link set $dev up" >/dev/null ||
		die "guest: cannot configure $dev"
done
for a in $ALL_ARMS; do
	guest "n=0; while ! ping -c 1 -W 1 $(arm_host "$a") >/dev/null 2>&1; do n=\$((n+1)); [ \$n -ge 20 ] && exit 1; done" >/dev/null ||
		die "arm $a: the guest cannot reach $(arm_host "$a")"
done

ip netns exec "$NS" iperf3 -s -p 5201 >"$VM_LOGS/iperf3-server.log" 2>&1 &
PIDS+=("$!")
# a second iperf3 for rr-under-bulk's stream (one iperf3 serves one test)
ip netns exec "$NS" iperf3 -s -p 5202 >"$VM_LOGS/iperf3-bulk-server.log" 2>&1 &
PIDS+=("$!")
ip netns exec "$NS" sockperf server --tcp -p 11111 >"$VM_LOGS/sockperf-server.log" 2>&1 &
PIDS+=("$!")
ip netns exec "$NS" sockperf server -p 11112 >"$VM_LOGS/sockperf-udp-server.log" 2>&1 &
PIDS+=("$!")
_vm_poll 5000 sh -c "ip netns exec $NS ss -Hltn 'sport = :5201' | grep -q . && ip netns exec $NS ss -Hltn 'sport = :5202' | grep -q . && ip netns exec $NS ss -Hltn 'sport = :11111' | grep -q . && ip netns exec $NS ss -Hlun 'sport = :11112' | grep -q ." ||
	die "iperf3/sockperf servers did not start"

# EVIDENCE_RT=PRIO: the host threads a round trip crosses (QEMU's main
# thread, which every arm's NIC shares, every vnetd thread, the sockperf
# servers) run at SCHED_FIFO PRIO, every arm alike, so that none of them
# waits for a CPU behind the stream's threads or the TCG vCPU: what gap is
# left between two arms is their work, not the scheduler's queue
if [ -n "${EVIDENCE_RT:-}" ]; then
	rt=("$QEMU_PID")
	for a in $ALL_ARMS; do
		i=$(arm_index "$a")
		[ "$i" = 0 ] && continue
		for t in /proc/"${VPIDS[$i]}"/task/*; do
			rt+=("${t##*/}")
		done
	done
	# shellcheck disable=SC2207 # pids, words
	rt+=($(pgrep -x sockperf))
	for t in "${rt[@]}"; do
		chrt -f -p "$EVIDENCE_RT" "$t" || die "chrt -f -p $EVIDENCE_RT $t failed"
	done
	echo "SCHED_FIFO $EVIDENCE_RT: ${rt[*]}" >&2
fi

# --- one measurement -----------------------------------------------------------

# cpu_ticks PID [TID]: utime + stime of the whole process, or of one of
# its threads (clock ticks)
cpu_ticks()
{
	local f=/proc/$1/stat

	[ -n "${2:-}" ] && f=/proc/$1/task/$2/stat
	# the command name may hold blanks: count from its closing ")"
	sed 's/^.*) //' "$f" 2>/dev/null | awk '{ print $12 + $13 }' || echo 0
}

tapstat()
{
	cat "/sys/class/net/$1/statistics/$2" 2>/dev/null ||
		ip netns exec "$NS" cat "/sys/class/net/$1/statistics/$2"
}

# dpcount ARM: "SIGNALS KICKS RXFRAMES BOUNCED" so far: call signals vnetd
# sent and guest kicks it received (both directions, every queue), frames
# it delivered to the guest and how many of them through a bounce slot
dpcount()
{
	"$VNETCTL" -n "$NS" -j stats "$(arm_tap "$1")" 2>/dev/null |
		jq -r '"\([.queues[]? | .datapath.notify_sent // 0] | add // 0) \([.queues[]? | .datapath.kicks // 0] | add // 0) \([.queues[]? | select(.dir == "rx") | .datapath.frames // 0] | add // 0) \([.queues[]? | select(.dir == "rx") | .datapath.bounced // 0] | add // 0)"'
}

TICK=$(getconf CLK_TCK)

# ctxsw PID [TID]: context switches (voluntary + not) of every thread of
# PID, or of one: each is a sleep or a preemption, the hops of a path
ctxsw()
{
	local t=/proc/$1/task/*/status

	[ -n "${2:-}" ] && t=/proc/$1/task/$2/status
	# shellcheck disable=SC2086 # a glob
	awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { n += $2 } END { print n + 0 }' $t 2>/dev/null
}


# record TABLE WORKLOAD ARM REP METRIC VALUE
record()
{
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$DIR/results.tsv"
}

# rr_cmd IRQ SOCKPERF-ARGS SECS [BEFORE [AFTER]]: a sockperf ping-pong of
# 64 B messages in the guest: its round trip mean, p50, p99, the messages
# it sent, and the NIC's interrupts meanwhile
rr_cmd()
{
	local fl="" hist=""

	# EVIDENCE_RTT_HIST=1: every round trip logged, the slow ones (over
	# 1 ms) counted by 500 us bucket into DIR/hist.txt: a tail of one
	# duration (a timer) looks different from a spread one (a queue)
	if [ -n "${EVIDENCE_RTT_HIST:-}" ]; then
		fl="--full-log /tmp/fl"
		set -- "$1; ks() { for p in /proc/[0-9]*; do [ \"\$(cat \$p/comm 2>/dev/null)\" = ksoftirqd/0 ] && awk '{ print \$14 + \$15 }' \$p/stat; done; }; k0=\$(ks)" "$2" "$3" "${4:-}" "${5:-}"
		hist="awk -F, -v ks0=\$k0 -v ks1=\$(ks) 'NF == 4 && \$1 ~ /^[0-9]+\$/ { r = (\$3 - \$2) * 1e6; n++; if (r > 1000) h[int(r / 500)]++ } END { printf \"hist ksoftirqd_ticks=%d n=%d\", ks1 - ks0, n; for (b in h) printf \" %d:%d\", b * 500, h[b]; print \"\" }' /tmp/fl;"
	fi
	echo "$1; a=\$(s); ${4:-} sockperf ping-pong $2 -m 64 -t $3 --full-rtt $fl >/tmp/o 2>&1; rc=\$?; b=\$(s); ${5:-} $hist echo irq \$((b - a)); echo secs $3; sed -n 's/.*avg-[a-z]*=\\([0-9.]*\\).*/avg \\1/p; s/.*percentile 50.000 = *\\([0-9.]*\\).*/p50 \\1/p; s/.*percentile 99.000 = *\\([0-9.]*\\).*/p99 \\1/p; s/.*\\[Valid Duration\\] RunTime=[0-9.]* sec; SentMessages=\\([0-9]*\\).*/msgs \\1/p' /tmp/o; [ \$rc = 0 ] || cat /tmp/o; exit \$rc"
}

# the guest side of a workload on ARM's NIC: prints one line of numbers
workload_cmd()
{
	local w=$1 h=$2 dev=$3 irq

	# the NIC's interrupts (INTx: one line, summed over the CPUs)
	irq="i=\$(cat /sys/class/net/$dev/device/../irq); s() { awk -v i=\"\$i:\" '\$1 == i { n = 0; for (k = 2; k <= NF; k++) if (\$k ~ /^[0-9]+\$/) n += \$k; print n }' /proc/interrupts; }"
	case $w in
	sw*)
		echo "$irq; a=\$(s); iperf3 -c $h -p 5201 -l ${w#sw} -t $SECS -f k --connect-timeout 5000 >/tmp/o 2>&1; rc=\$?; b=\$(s); echo irq \$((b - a)); awk '/receiver\$/ { print \"kbps\", \$7 }' /tmp/o; [ \$rc = 0 ] || cat /tmp/o; exit \$rc" ;;
	bulk-tx)
		echo "$irq; a=\$(s); iperf3 -c $h -p 5201 -t $SECS -f k --connect-timeout 5000 >/tmp/o 2>&1; rc=\$?; b=\$(s); echo irq \$((b - a)); awk '/receiver\$/ { print \"kbps\", \$7 }' /tmp/o; [ \$rc = 0 ] || cat /tmp/o; exit \$rc" ;;
	bulk-rx)
		echo "$irq; a=\$(s); iperf3 -c $h -p 5201 -R -t $SECS -f k --connect-timeout 5000 >/tmp/o 2>&1; rc=\$?; b=\$(s); echo irq \$((b - a)); awk '/receiver\$/ { print \"kbps\", \$7 }' /tmp/o; [ \$rc = 0 ] || cat /tmp/o; exit \$rc" ;;
	rr64) rr_cmd "$irq" "--tcp -i $h -p 11111" "$SECS" ;;
	udp-rr) rr_cmd "$irq" "-i $h -p 11112" "$SECS" ;;
	rr-sparse) rr_cmd "$irq" "--tcp -i $h -p 11111 --mps=100" $((2 * SECS)) ;;
	udp-sparse) rr_cmd "$irq" "-i $h -p 11112 --mps=100" $((2 * SECS)) ;;
	rr-under-bulk)
		# the stream starts first (its first per-second line: iperf3
		# writes them to a file only with --forceflush) and outlasts the
		# RR run; its rate is reported as bulk_kbps
		rr_cmd "$irq" "--tcp -i $h -p 11111" "$SECS" \
			"iperf3 -c $h -p 5202 -R -t $((SECS + 6)) ${EVIDENCE_BULK_RATE:+-b $EVIDENCE_BULK_RATE} -f k --forceflush --connect-timeout 5000 >/tmp/bulk 2>&1 & bp=\$!; n=0; while ! grep -q ' sec ' /tmp/bulk 2>/dev/null; do n=\$((n+1)); [ \$n -ge 100 ] && { echo 'the bulk stream did not start' >&2; exit 1; }; sleep 0.05; done;" \
			"wait \$bp; awk '/receiver\$/ { print \"bulk_kbps\", \$7 }' /tmp/bulk;" ;;
	rr-under-bulk-tx)
		rr_cmd "$irq" "--tcp -i $h -p 11111" "$SECS" \
			"iperf3 -c $h -p 5202 -t $((SECS + 6)) ${EVIDENCE_BULK_RATE:+-b $EVIDENCE_BULK_RATE} -f k --forceflush --connect-timeout 5000 >/tmp/bulk 2>&1 & bp=\$!; n=0; while ! grep -q ' sec ' /tmp/bulk 2>/dev/null; do n=\$((n+1)); [ \$n -ge 100 ] && { echo 'the bulk stream did not start' >&2; exit 1; }; sleep 0.05; done;" \
			"wait \$bp; awk '/receiver\$/ { print \"bulk_kbps\", \$7 }' /tmp/bulk;" ;;
	udp64)
		echo "$irq; a=\$(s); iperf3 -c $h -p 5201 -u -l 64 -b 0 -t $SECS -f k --connect-timeout 5000 >/tmp/o 2>&1; rc=\$?; b=\$(s); echo irq \$((b - a)); [ \$rc = 0 ] || cat /tmp/o; exit \$rc" ;;
	esac
}

# snapshot ARM: the counters a cell is the difference of, one line:
# vnetd CPU ticks, vnetd context switches, kicks, signals, QEMU main
# thread's context switches and CPU ticks, QEMU's CPU ticks, the tap's
# rx_packets and rx_bytes, guest RX frames and bounced ones (0 where the
# arm has no such counter), the tap's tx_dropped, hostnet's two, vcpu_wait
snapshot()
{
	local arm=$1 i c=0 x=0 k=0 s=0 rf=0 rb=0

	i=$(arm_index "$arm")
	if [ "$i" != 0 ]; then
		c=$(cpu_ticks "${VPIDS[$i]}")
		x=$(ctxsw "${VPIDS[$i]}")
		[ "$arm" != dpdk ] && read -r s k rf rb < <(dpcount "$arm")
	fi
	echo "$c $x ${k:-0} ${s:-0} $(ctxsw "$QEMU_PID" "$QEMU_PID")" \
		"$(cpu_ticks "$QEMU_PID" "$QEMU_PID") $(cpu_ticks "$QEMU_PID")" \
		"$(tapstat "$(arm_tap "$arm")" rx_packets) $(tapstat "$(arm_tap "$arm")" rx_bytes)" \
		"${rf:-0} ${rb:-0} $(tapstat "$(arm_tap "$arm")" tx_dropped)" \
		"$(hostnet) $(vcpu_wait)"
}

# vcpu_wait: nanoseconds the guest's vCPU thread has waited for a host CPU
# while runnable (its schedstat), so far
vcpu_wait()
{
	# the thread that runs most: -smp 1, no thread names without
	# -name debug-threads=on
	cat /proc/"$QEMU_PID"/task/*/schedstat 2>/dev/null |
		awk '$1 > m { m = $1; w = $2 } END { printf "%.0f\n", w }'
}

# hostnet: "RETRANS PROBES" of the host's namespace so far: TCP segments
# retransmitted and tail loss probes sent (the servers' side of every
# workload)
hostnet()
{
	ip netns exec "$NS" nstat -asz TcpRetransSegs TcpExtTCPLossProbes 2>/dev/null |
		awk '$1 == "TcpRetransSegs" { r = $2 } $1 == "TcpExtTCPLossProbes" { p = $2 } END { print r + 0, p + 0 }'
}

# measure TABLE WORKLOAD ARM REP: one cell, recorded
measure()
{
	local t=$1 w=$2 a=$3 r=$4 arm=$3 i tap h out c0 c1 m0 m1 q0 q1 x0 x1 y0 y1 k0 k1 s0 s1 p0 p1 b0 b1 f0 f1 n0 n1 d0 d1 e0 e1 l0 l1 w0 w1 t0 t1 v rc

	# batch1: the vnetd arm with the tap's rx-frames 1 (vnetd's TX batch)
	[ "$a" = batch1 ] && arm=vnetd
	i=$(arm_index "$arm")
	tap=$(arm_tap "$arm")
	h=$(arm_host "$arm")
	[ "$a" = batch1 ] && "$VNETCTL" -n "$NS" coalesce set "$tap" tap rx-frames 1
	read -r c0 x0 k0 s0 y0 m0 q0 p0 b0 f0 n0 d0 e0 l0 w0 < <(snapshot "$arm")
	t0=$(date +%s%N)
	out=$(guest "$(workload_cmd "$w" "$h" "${GDEV[$i]}")")
	rc=$?
	t1=$(date +%s%N)
	read -r c1 x1 k1 s1 y1 m1 q1 p1 b1 f1 n1 d1 e1 l1 w1 < <(snapshot "$arm")
	[ "$a" = batch1 ] && "$VNETCTL" -n "$NS" coalesce set "$tap" tap rx-frames 0
	if [ $rc != 0 ]; then
		echo "evidence: $t $w $a rep $r failed: $(echo "$out" | tail -n 3 | tr '\n' ' ')" >&2
		record "$t" "$w" "$a" "$r" failed 1
		return 1
	fi
	printf '%s\n' "$out" | while read -r k v; do
		case $k in
		kbps) record "$t" "$w" "$a" "$r" mbps "$(awk -v v="$v" 'BEGIN { printf "%.2f", v / 1000 }')" ;;
		p50 | p99 | avg) record "$t" "$w" "$a" "$r" "rtt_$k" "$v" ;;
		secs) rs=$v ;;
		msgs)
			record "$t" "$w" "$a" "$r" rr_msgs "$v"
			record "$t" "$w" "$a" "$r" rr_per_s "$(awk -v v="$v" -v s="${rs:-$SECS}" 'BEGIN { printf "%.0f", v / s }')" ;;
		bulk_kbps) record "$t" "$w" "$a" "$r" bulk_mbps "$(awk -v v="$v" 'BEGIN { printf "%.2f", v / 1000 }')" ;;
		irq) record "$t" "$w" "$a" "$r" irqs "$v" ;;
		hist) echo "$t $w $a $r $v" >>"$DIR/hist.txt" ;;
		esac
	done
	v=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	record "$t" "$w" "$a" "$r" wall_s "$v"
	record "$t" "$w" "$a" "$r" tx_frames $((p1 - p0))
	record "$t" "$w" "$a" "$r" tx_bytes $((b1 - b0))
	[ $((p1 - p0)) -gt 0 ] && record "$t" "$w" "$a" "$r" tx_frame_size $(((b1 - b0) / (p1 - p0)))
	[ "$w" = udp64 ] && record "$t" "$w" "$a" "$r" udp_fps "$(awk -v n=$((p1 - p0)) -v s="$SECS" 'BEGIN { printf "%.0f", n / s }')"
	record "$t" "$w" "$a" "$r" vnetd_cpu_s "$(awk -v n=$((c1 - c0)) -v k="$TICK" 'BEGIN { printf "%.2f", n / k }')"
	# outside the vCPU: QEMU's main thread (the tap backend, interrupt
	# injection) and vnetd
	record "$t" "$w" "$a" "$r" backend_cpu_s "$(awk -v n=$((c1 - c0 + m1 - m0)) -v k="$TICK" 'BEGIN { printf "%.2f", n / k }')"
	record "$t" "$w" "$a" "$r" qemu_cpu_s "$(awk -v n=$((q1 - q0)) -v k="$TICK" 'BEGIN { printf "%.2f", n / k }')"
	if [ "$i" != 0 ] && [ "$arm" != dpdk ]; then
		record "$t" "$w" "$a" "$r" signals $((s1 - s0))
		record "$t" "$w" "$a" "$r" kicks $((k1 - k0))
		[ $((f1 - f0)) -gt 0 ] && record "$t" "$w" "$a" "$r" rx_bounced_pct \
			"$(awk -v n=$((n1 - n0)) -v f=$((f1 - f0)) 'BEGIN { printf "%.1f", 100 * n / f }')"
	fi
	record "$t" "$w" "$a" "$r" ctxsw $((x1 - x0 + y1 - y0))
	# frames the tap dropped on their way to the backend (its queue full),
	# and what the host's TCP did about losses
	record "$t" "$w" "$a" "$r" tap_drops $((d1 - d0))
	record "$t" "$w" "$a" "$r" host_retrans $((e1 - e0))
	record "$t" "$w" "$a" "$r" host_tlp $((l1 - l0))
	# the guest's vCPU kept off a host CPU: the guest stands still
	record "$t" "$w" "$a" "$r" vcpu_wait_ms $(((w1 - w0) / 1000000))
	return 0
}

# arms_of WORKLOAD LIST: the arms a workload runs on
arms_of()
{
	local w=$1 list=$2

	if [ "$w" = udp64 ] && [[ ",$list," == *,vnetd,* ]]; then
		list="$list,batch1"
	fi
	echo "${list//,/ }"
}

# table NAME REPS WORKLOADS ARMS: every repetition, arms interleaved
run_table()
{
	local t=$1 reps=$2 wl=$3 al=$4 r w a arms rev n=0 total

	total=0
	for w in ${wl//,/ }; do
		arms=$(arms_of "$w" "$al")
		total=$((total + reps * $(echo "$arms" | wc -w)))
	done
	for ((r = 1; r <= reps; r++)); do
		for w in ${wl//,/ }; do
			arms=$(arms_of "$w" "$al")
			# ABC CBA ...: drift hits every arm alike
			if [ $((r % 2)) = 0 ]; then
				rev=""
				for a in $arms; do rev="$a $rev"; done
				arms=$rev
			fi
			for a in $arms; do
				n=$((n + 1))
				printf '\r# %s: %d/%d (rep %d, %s, %s)        ' "$t" "$n" "$total" "$r" "$w" "$a" >&2
				measure "$t" "$w" "$a" "$r"
			done
		done
	done
	echo >&2
}

# --- the run ---------------------------------------------------------------------

# wake_fact WHEN: a line of machine.tsv, what a thread waking another costs
# (evstat --wake-us); every hop of a backend's path is one such wake-up,
# and on a VM its cost moves with the host's load: measured before the
# tables and after them
wake_fact()
{
	local same other

	read -r same other < <("$EVSTAT" --wake-us) || return 0
	printf 'machine\twake-up (%s)\t%s us on the same CPU, %s us on the other\n' \
		"$1" "$same" "$other"
}

{
	echo "machine	cpus	$(nproc)"
	echo "machine	cpu	$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "machine	kernel	$(uname -r)"
	echo "machine	qemu	$(qemu_version)"
	echo "machine	guest_kernel	$(cat "$E2E_DIR/kernel.version" 2>/dev/null)"
	echo "machine	syscall_ns	$("$EVSTAT" --syscall-ns)"
	wake_fact start
	echo "machine	secs	$SECS"
	echo "machine	date	$(date -u +%Y-%m-%dT%H:%MZ)"
	for a in ${ARMS//,/ }; do
		w=$(arm_coalesce "$a")
		[ "$a" = tap ] && w="QEMU -netdev tap,vhost=off"
		[ "$a" = batch1 ] && w="the vnetd arm with the tap's rx-frames 1"
		w=${w:-defaults (nothing set)}
		i=$(arm_index "$a" 2>/dev/null) && w="$w; guest IRQ ${GIRQ[$i]}"
		echo "machine	arm $a	$w"
	done
} >"$DIR/machine.tsv"

# warm-up: every arm once, not recorded
for a in ${ARMS//,/ }; do
	guest "iperf3 -c $(arm_host "$a") -p 5201 -t 1 >/dev/null 2>&1" >/dev/null
done

start=$(date +%s)
run_table quiet "$REPS" "$WORKLOADS" "$ARMS"
if [ "$HOG_REPS" -gt 0 ]; then
	# a busy loop on CPU 1: a host's CPUs are shared
	taskset -c 1 sh -c 'while :; do :; done' &
	HOG_PID=$!
	run_table hog "$HOG_REPS" "$HOG_WORKLOADS" "$HOG_ARMS"
	kill "$HOG_PID" 2>/dev/null
	wait "$HOG_PID" 2>/dev/null
	HOG_PID=""
fi
echo "# measured in $(($(date +%s) - start)) s" >&2
wake_fact end >>"$DIR/machine.tsv"

printf 'quit\n' >"$CTL.in"
"$EVSTAT" --dir "$DIR" >"$DIR/summary.md" || die "evstat failed"
cat "$DIR/summary.md"
if command -v gnuplot >/dev/null 2>&1; then
	for f in "$DIR"/*.gp; do
		[ -f "$f" ] && (cd "$DIR" && gnuplot "$f" 2>>"$VM_LOGS/gnuplot.err")
	done
fi
echo "# results in ${DIR#"$TOP"/}: results.tsv, summary.md, $(cd "$DIR" && ls -- *.png 2>/dev/null | tr '\n' ' ')" >&2
