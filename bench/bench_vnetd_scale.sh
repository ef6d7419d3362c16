#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# What a port costs one vnetd, against the number of ports
# (docs/benchmarks.md, "vnetd's cost per port").
#
# For each N of COUNTS (1 2 4 8 16 32 64), one vnetd with N --port (QP
# queue pairs each, 1) on VNETD_CPU (1), its taps in a private netns,
# each on a bridge of its own with hairpin on; build/selftests/soak --self
# --go on SOAK_CPU (0): a vufe frontend per port, every port its own peer.
# Every repetition measures every N, the order reversed every other
# repetition (ascending, then descending).  Per N:
#   start-up  exec to READY=1 (sd_notify through a NOTIFY_SOCKET this
#             script provides, build/selftests/unixsock notify-ts: every
#             socket listens); of it, vnetd's time on a CPU (/proc/PID/stat,
#             its exited threads included: the ports are prepared by 32
#             threads) and waiting for one (schedstat, the threads alive),
#             the rest off a CPU
#   listening VmRSS, RssAnon, RssShmem of vnetd, no frontend yet
#   idle      the frontends connected and idle (soak "ready", then 1 s):
#             VmRSS, RssAnon, RssShmem (guest memory vnetd touched),
#             wake-ups per second (voluntary context switches of vnetd's
#             threads, the control thread's and the queue threads' apart)
#             and CPU per second over IDLE seconds (2)
#   traffic   every frontend sends 200 frames/s to itself (through vnetd,
#             the tap, the bridge and back; soak --max-lag 10: no bursts
#             after the process waited for a CPU): after 0.5 s, vnetd's
#             CPU per frame over SECONDS (2) (frames: the taps'
#             rx_packets; each crossed vnetd twice), then VmRSS, RssAnon,
#             RssShmem again
#   hand-over with -H, the frontends still sending: HO_BASE seconds (2)
#             of soak's ring gaps without a hand-over (the frontends'
#             own), then `vnetd --takeover --detach --release-missing`
#             with the same ports (the units' ExecReload=), and the gaps
#             from just before it to 1 s after: per port the longest gap
#             between two frames it received (SIGURG to soak, its "gaps"
#             line), their maximum and median over the ports, the ports
#             over 50 ms, the frames lost; the hand-over's wall time (exec
#             to the old vnetd's exit) and the new vnetd's READY=1.  The
#             phases after it measure the new vnetd (the stop too)
#   quiet     the frontends stop sending (soak's SIGUSR2) and stay
#             connected: after QUIET seconds (11: a queue pair gives its
#             buffers back after 10 s without an event), VmRSS, RssAnon,
#             RssShmem
#   sparse    1 frame/s per port (soak --rate2 1): vnetd's CPU per frame
#             over SPARSE seconds (5), its idle floor included
#   stop      the frontends gone, SIGTERM to vnetd's exit (s), and the
#             pins it left of the bench's taps
# and /proc/PID/smaps summed by kind of mapping (RX bounce slots, thread
# stacks, BPF maps, io_uring rings, heap, guest memory, files, other) when
# idle, after traffic and quiet again.  Then vnetd with LIMIT_PROBE
# (VNETD_MAX_PORTS + 1: 1025) ports: its limit, as it reports it.
#
# Prints a table per N (median [min..max] over the repetitions), the cost
# per port (least-squares slope over N of the medians) against the targets
# (idle RSS <= 512 KiB per port, start-up <= 20 ms per port and <= 10 ms
# of it on a CPU, no per-port wake-ups while idle), the smaps table for the
# smallest and largest N.
# Never gates anything; exit status 1 only when a measurement could not be
# taken.
#
#   bench/bench_vnetd_scale.sh [-r REPS] [-d SECONDS] [-i IDLE] [-c "COUNTS"]
#                              [-q QP] [-R RATE] [-Q QUIET] [-s SPARSE]
#                              [-P PORTS] [-X] [-H]
#
# -H: the hand-over phase, and the target "hand-over of the largest
# count's ports, rings paused <= 50 ms" (the largest gap over the ports;
# at -R 200 a frame every 5 ms per port: -R raises the resolution).
# -X: up to one vnetd's limit, COUNTS "1 64 256 1024" and 1 repetition
# (-r, -c after -X change them; about 15 minutes on 2 CPUs, most of it
# the verifier at start-up).  -R: frames/s per port in the traffic window
# (200).  -P PORTS: then
# profile the start-up of a vnetd with PORTS ports (perf record
# --call-graph dwarf, exec to READY=1) and print the share of its samples
# in each step (the vnet skeleton's load: the verifier, the kernel's BTF
# parsed; the /proc scan for the tap's users; ...).  The default run
# (3 repetitions) takes about 10 minutes with the load average at 6-9 on 2
# CPUs, a third of it the quiet phases (QUIET s per count).
# Environment: OUT (build dir), VNETD
# (default $OUT/vnetd), VNETD_ARGS (options every vnetd gets, e.g.
# --no-uring), SOAK ($OUT/selftests/soak), UNIXSOCK
# ($OUT/selftests/unixsock), VNETD_CPU (1), SOAK_CPU (0).  Needs root.
# Every process it starts is stopped through selftests/lib.sh's procs_add
# and end_case, whatever way the run ends.

set -u

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../selftests/lib.sh"
# shellcheck source=bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
# shellcheck source=bench/bench_scale_handover.sh
source "$(dirname "$0")/bench_scale_handover.sh"
BENCH_NAME=bench_vnetd_scale

VNETD=${VNETD:-$out/vnetd}
SOAK=${SOAK:-$out/selftests/soak}
UNIXSOCK=${UNIXSOCK:-$out/selftests/unixsock}

REPS=3
SECS=2
IDLE=2
COUNTS="1 2 4 8 16 32 64"
QP=1
RATE=200
QUIET=11
SPARSE=5
PROFILE=
HANDOVER=
while getopts "r:d:i:c:q:R:Q:s:P:XHh" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	d) SECS=$OPTARG ;;
	i) IDLE=$OPTARG ;;
	c) COUNTS=$OPTARG ;;
	q) QP=$OPTARG ;;
	R) RATE=$OPTARG ;;
	Q) QUIET=$OPTARG ;;
	s) SPARSE=$OPTARG ;;
	P) PROFILE=$OPTARG ;;
	X) COUNTS="1 64 256 1024" REPS=1 ;;
	H) HANDOVER=1 ;;
	h) bench_usage 0 ;;
	*) bench_usage 2 ;;
	esac
done
VNETD_CPU=${VNETD_CPU:-1}
SOAK_CPU=${SOAK_CPU:-0}


for v in "$REPS" "$SECS" "$IDLE" "$QP" "$RATE" "$QUIET" "$SPARSE" $COUNTS $PROFILE; do
	posint "$v" || { err "'$v' is not a positive integer (see -h)"; exit 2; }
done
MAXN=0
for n in $COUNTS; do
	[ "$n" -gt "$MAXN" ] && MAXN=$n
done
if [ "$MAXN" -gt 1024 ]; then
	err "-c: at most 1024 ports (one vnetd's; its limit is probed with LIMIT_PROBE ports)"
	exit 2
fi
bench_need_root "a network namespace, taps, bridges, BPF"
bench_need_exec "$VNETD" "$SOAK" "$UNIXSOCK" "$out/bench/evstat"
bench_need_cmd jq ip taskset
if [ -n "$PROFILE" ]; then
	command -v perf >/dev/null 2>&1 || { err "-P needs perf (apt-get install linux-perf)"; exit 1; }
	[ "$PROFILE" -le "$MAXN" ] || { err "-P $PROFILE: at most the largest count ($MAXN): the taps are made for those"; exit 2; }
fi
# a thousand ports and their frontends hold about 20 fds each in vnetd
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt 65536 ]; then
	ulimit -HSn 65536 2>/dev/null || err "cannot raise RLIMIT_NOFILE to 65536: beyond 700 ports some frontends may fail to connect"
fi
bench_soak_setup scale
VNETD_PID=
SOAK_PID=
NOTIFY_PID=
PERF_PID=
failed=0

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup()
{
	# the processes of the measurement under way (procs_add), by pid
	[ -z "$HANDOVER" ] || ho_stop
	end_case
	ip netns del "$NS" 2>/dev/null
	rm -rf "$VNET_TMP"
	bench_logs_done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'exit 129' HUP

tap()	# tap I: port I's tap
{
	echo "vst${id}n$1"
}

# --- setup: MAXN taps, each on a hairpin bridge of its own -------------------

ip netns add "$NS" || exit 1
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1 >/dev/null
for ((i = 0; i < MAXN; i++)); do
	echo "tuntap add dev $(tap "$i") mode tap multi_queue vnet_hdr"
	echo "link add vsb${id}n$i type bridge"
	echo "link set vsb${id}n$i up"
	echo "link set $(tap "$i") master vsb${id}n$i"
	echo "link set dev $(tap "$i") type bridge_slave hairpin on"
	echo "link set $(tap "$i") up"
done >"$LOGS/setup.batch"
if ! ip -n "$NS" -batch "$LOGS/setup.batch" >"$LOGS/setup.log" 2>&1; then
	err "setting up $MAXN taps and bridges: $(tail -n 3 "$LOGS/setup.log")"
	failed=1
	exit 1
fi

# port_args N: vnetd's --port options for ports 0..N-1
port_args()
{
	local i

	for ((i = 0; i < $1; i++)); do
		printf -- '--port\nsocket=%s,tap=%s,queues=%s,netns=%s\n' \
			"$LOGS/p$i.sock" "$(tap "$i")" "$QP" "$NS"
	done
}

# frames: the frames the frontends sent through vnetd (the taps' rx_packets)
frames()
{
	tap_rx_frames "$NS" "vst${id}n"
}

# mem PID: "VmRSS RssAnon RssShmem" in KiB
mem()
{
	awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssShmem:/ { s = $2 }
		END { print r + 0, a + 0, s + 0 }' "/proc/$1/status" 2>/dev/null ||
		echo "nan nan nan"
}

# wakeups PID: "CONTROL QUEUE" voluntary context switches, the control
# (main) thread's and the others' summed
wakeups()
{
	awk '/^Tgid:/ { g = $2 } /^Pid:/ { p = $2 }
		/^voluntary_ctxt_switches:/ { if (p == g) m += $2; else q += $2 }
		END { print m + 0, q + 0 }' /proc/"$1"/task/*/status 2>/dev/null
}

# smaps PID: "KIND MAPPINGS RSS_KB" per kind of mapping
SLOTS_KB=2112	# VNETD_RX_BURST (32) x VNETD_RX_SLOT (66 KiB), user/vnetd/datapath/tapio.h
smaps()
{
	awk -v slots="$SLOTS_KB" '
		function flush() {
			if (kind == "") return
			n[kind]++; rss[kind] += r; kind = ""
		}
		/^[0-9a-f]+-[0-9a-f]+ / {
			flush()
			name = NF >= 6 ? $6 : ""; perm = $2; r = 0; size = 0
			kind = "?"
			next
		}
		/^Size:/ { size = $2 }
		/^Rss:/ {
			r = $2
			if (name ~ /^\/memfd:/) kind = "guest-memory"
			else if (name ~ /^\//) kind = "files"
			else if (name == "anon_inode:bpf-map") kind = "bpf-maps"
			else if (name ~ /io_uring/) kind = "io_uring-rings"
			else if (name == "[heap]") kind = "heap"
			else if (name == "" && size == slots) kind = "rx-bounce-slots"
			else if (name == "" && size == 8192) kind = "thread-stacks"
			else kind = "other"
		}
		END {
			flush()
			for (k in n) print k, n[k], rss[k]
		}' "/proc/$1/smaps" 2>/dev/null | sort
}

R=$LOGS/results	# N REP KEY VALUE...
: >"$R"
rec()	# rec N REP KEY VALUE...
{
	echo "$*" >>"$R"
}

# start_vnetd N [WRAPPER...]: vnetd with N ports (through WRAPPER, e.g.
# perf record --, which is then PERF_PID and vnetd its child) up to READY=1;
# t0 the time of the exec
start_vnetd()
{
	local n=$1 ns=$LOGS/notify.sock

	shift
	rm -f "$ns" "$LOGS"/p*.sock
	"$UNIXSOCK" notify-ts "$ns" 7200 >"$LOGS/notify.out" 2>&1 &
	NOTIFY_PID=$!
	procs_add "$NOTIFY_PID"
	while [ ! -S "$ns" ]; do
		kill -0 "$NOTIFY_PID" 2>/dev/null || { err "unixsock notify-ts failed: $(cat "$LOGS/notify.out")"; return 1; }
		sleep 0.01
	done
	mapfile -t args < <(port_args "$n")
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2086 # VNETD_ARGS: words
	NOTIFY_SOCKET=$ns taskset -c "$VNETD_CPU" "$@" "$VNETD" "${args[@]}" \
		${VNETD_ARGS:-} >"$LOGS/vnetd.log" 2>&1 &
	VNETD_PID=$!
	procs_add "$VNETD_PID"
	if [ $# -gt 0 ]; then
		PERF_PID=$VNETD_PID
		VNETD_PID=
	fi
	if ! wait_line "$LOGS/notify.out" 'READY=1' $((60 + 5 * n)) "${PERF_PID:-$VNETD_PID}"; then
		err "$n ports: no READY=1: $(tail -n 3 "$LOGS/vnetd.log")"
		return 1
	fi
	if [ -n "$PERF_PID" ]; then
		VNETD_PID=$(pgrep -P "$PERF_PID" -x vnetd)
		[ -n "$VNETD_PID" ] || { err "perf's vnetd not found"; return 1; }
	fi
}

# per_frame N SECONDS: after 0.5 s, "CPU_US_PER_FRAME FRAMES_PER_S_PER_PORT"
# of vnetd over SECONDS (frames: the taps' rx_packets)
per_frame()
{
	local c0 c1 f0 f1 ta tb

	sleep 0.5
	read -r c0 _ _ _ _ < <(proc_sample "$VNETD_PID")
	f0=$(frames)
	ta=$EPOCHREALTIME
	sleep "$2"
	read -r c1 _ _ _ _ < <(proc_sample "$VNETD_PID")
	f1=$(frames)
	tb=$EPOCHREALTIME
	awk -v a="$ta" -v b="$tb" -v f="$((f1 - f0))" -v c="$((c1 - c0))" -v n="$1" \
		'BEGIN { printf "%.2f %.2f", f ? c / f / 1000 : "nan", f / (b - a) / n }'
}

# measure N REP: one vnetd with N ports, start to stop
measure()
{
	local n=$1 rep=$2 tr st c0 w0 c1 m0 q0 m1 q1 ta tb

	start_vnetd "$n" || return 1
	read -r _ _ _ _ w0 < <(proc_sample "$VNETD_PID")
	# the threads that prepared the ports have exited: the process's sum
	c0=$(proc_cpu "$VNETD_PID")
	tr=$(awk '/READY=1/ { print $1; exit }' "$LOGS/notify.out")
	st=$(awk -v a="$t0" -v b="$tr" 'BEGIN { printf "%.4f", b - a }')
	rec "$n" "$rep" startup "$st" "$(awk -v c="$c0" -v w="$w0" 'BEGIN { printf "%.4f %.4f", c / 1e9, w / 1e9 }')"
	stop_pid "$NOTIFY_PID" TERM
	NOTIFY_PID=
	sleep 0.5
	rec "$n" "$rep" listening "$(mem "$VNETD_PID")"

	: >"$LOGS/soak.out"
	taskset -c "$SOAK_CPU" "$SOAK" --sock "$LOGS/p%u.sock" --ports "$n" \
		--qp "$QP" --self --go --secs 1000000 --warmup 0 --rate "$RATE" \
		--max-lag 10 --rate2 1 \
		--sample 1000000 --pid "$VNETD_PID" \
		>"$LOGS/soak.out" 2>"$LOGS/soak.err" &
	SOAK_PID=$!
	procs_add "$SOAK_PID"
	if ! wait_line "$LOGS/soak.out" '^ready ' $((120 + n)) "$SOAK_PID"; then
		err "$n ports: the frontends did not connect: $(head -c 300 "$LOGS/soak.err")"
		return 1
	fi
	sleep 1
	read -r c0 _ _ _ _ < <(proc_sample "$VNETD_PID")
	read -r m0 q0 < <(wakeups "$VNETD_PID")
	ta=$EPOCHREALTIME
	sleep "$IDLE"
	read -r c1 _ _ _ _ < <(proc_sample "$VNETD_PID")
	read -r m1 q1 < <(wakeups "$VNETD_PID")
	tb=$EPOCHREALTIME
	rec "$n" "$rep" idle "$(mem "$VNETD_PID")" \
		"$(awk -v a="$ta" -v b="$tb" -v m="$((m1 - m0))" -v q="$((q1 - q0))" -v c="$((c1 - c0))" \
			'BEGIN { t = b - a; printf "%.2f %.2f %.1f", m / t, q / t, c / t / 1000 }')"
	smaps "$VNETD_PID" | sed "s/^/$n $rep smaps-idle /" >>"$R"

	kill -USR1 "$SOAK_PID"
	rec "$n" "$rep" traffic "$(per_frame "$n" "$SECS")" "$(mem "$VNETD_PID")"
	smaps "$VNETD_PID" | sed "s/^/$n $rep smaps-traffic /" >>"$R"
	if [ -n "$HANDOVER" ] && ! handover "$n" "$rep"; then
		failed=1
		return 1
	fi

	# quiet: connected, nothing sent; then 1 frame/s per port
	kill -USR2 "$SOAK_PID"
	sleep "$QUIET"
	rec "$n" "$rep" quiet "$(mem "$VNETD_PID")"
	smaps "$VNETD_PID" | sed "s/^/$n $rep smaps-quiet /" >>"$R"
	kill -USR2 "$SOAK_PID"
	rec "$n" "$rep" sparse "$(per_frame "$n" "$SPARSE")"

	kill -INT "$SOAK_PID" 2>/dev/null
	# what is in flight arrives, then a frontend's disconnect each
	wait_pid "$SOAK_PID" $((60 + n / 8))
	SOAK_PID=
	if ! grep -q '^done .* foreign=0$' "$LOGS/soak.out"; then
		err "$n ports: soak: no clean end: $(head -c 300 "$LOGS/soak.err")"
		failed=1
	fi
	kill -0 "$VNETD_PID" 2>/dev/null || { err "$n ports: vnetd died: $(tail -n 3 "$LOGS/vnetd.log")"; return 1; }
	rec "$n" "$rep" stop "$(stop_timed "$VNETD_PID")" "$(pins_of_bench)"
	VNETD_PID=
	end_case
	echo "  $n ports, repetition $rep: $(grep "^$n $rep " "$R" | grep -v smaps | cut -d' ' -f3- | tr '\n' ';')" >&2
}

# stop_timed PID: SIGTERM, then the seconds until PID (vnetd, a child)
# exited, polled every 10 ms; "nan" after 300 s (then SIGKILL)
stop_timed()
{
	local pid=$1 t0 n=30000

	t0=$EPOCHREALTIME
	kill -TERM "$pid"
	while kill -0 "$pid" 2>/dev/null && [ "$n" -gt 0 ]; do
		sleep 0.01
		n=$((n - 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		echo nan
		return
	fi
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'
	wait "$pid" 2>/dev/null
}

# pins_of_bench: the bench's taps that still have pins
pins_of_bench()
{
	find "$PIN_ROOT" -maxdepth 1 -name "vst${id}n*" 2>/dev/null | wc -l
}

# --- measurement ---------------------------------------------------------------

echo "bench_vnetd_scale: $(machine_facts)" >&2
echo "bench_vnetd_scale: ports $COUNTS x $QP queue pair(s), $REPS repetitions, idle ${IDLE} s, traffic $RATE frames/s per port for ${SECS} s, quiet ${QUIET} s, 1 frame/s per port for ${SPARSE} s, vnetd on CPU $VNETD_CPU, frontends on CPU $SOAK_CPU" >&2
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t_start=$(date +%s)
read -r -a counts <<<"$COUNTS"
for ((rep = 1; rep <= REPS; rep++)); do
	mapfile -t order < <(rep_order "$rep" "${counts[@]}")
	for n in "${order[@]}"; do
		if ! measure "$n" "$rep"; then
			failed=1
			exit 1
		fi
	done
done

# -P: where the start-up's CPU time goes (vnetd's own samples, exec to
# READY=1, the share of each step's callees included)
PROF=
if [ -n "$PROFILE" ]; then
	if start_vnetd "$PROFILE" perf record -q -F 499 --call-graph dwarf,16384 \
		-o "$LOGS/perf.data" --; then
		stop_pid "$NOTIFY_PID" TERM
		NOTIFY_PID=
		stop_pid "$VNETD_PID" TERM
		VNETD_PID=
		wait_pid "$PERF_PID" 60
		PERF_PID=
		end_case
		perf report -i "$LOGS/perf.data" --children --comm vnetd --sort sym \
			-g none -q 2>/dev/null >"$LOGS/perf.txt"
		PROF=$(awk 'NF < 3 { next } { s = $NF; if (s == "(inlined)") s = $(NF - 1) }
			s ~ /^(vnetd_port_open|vnetd_bpf_setup|bpf_object__load|bpf_prog_load|bpf_check|libbpf_find_kernel_btf|vnet_tap_users|vnetd_tap_open|vnetd_sandbox_enter|vnetd_qps_start|bpf_map_create|vnet_pins_check|vnet_status)$/ && !seen[s]++ {
				print "  " $1 " " s }' "$LOGS/perf.txt")
	else
		failed=1
	fi
fi

# the limit: LIMIT_PROBE (VNETD_MAX_PORTS + 1, 1025) ports, sockets in a
# directory of their own (the taps need not exist: vnetd refuses before it
# touches one; one that accepts is stopped after 10 s)
LIMIT_PROBE=${LIMIT_PROBE:-$(($(sed -n 's/^#define VNETD_MAX_PORTS \([0-9]*\)$/\1/p' \
	"$(dirname "$0")/../user/vnetd/config/config.h") + 1))}
mkdir -p "$LOGS/limit"
mapfile -t args < <(for ((i = 0; i < LIMIT_PROBE; i++)); do
	printf -- '--port\nsocket=%s,tap=%s,queues=1,netns=%s\n' \
		"$LOGS/limit/p$i.sock" "vsl${id}n$i" "$NS"
done)
"$VNETD" "${args[@]}" >"$LOGS/limit.log" 2>&1 &
lp=$!
procs_add "$lp"
wait_pid "$lp" 10
wait "$lp" 2>/dev/null
limit_rc=$?
[ -S "$LOGS/limit/p0.sock" ] && limit_rc+=" (it listened)"
limit_msg=$(grep -m1 -i 'error\|more than\|at most' "$LOGS/limit.log" || head -n 1 "$LOGS/limit.log")
end_case
t_end=$(date +%s)

# --- report --------------------------------------------------------------------

# ST[N,KEY,FIELD]: "min median max" over the repetitions of field FIELD
# (1-based, after the key) of N's KEY lines; one pass over the results
declare -A ST
while read -r n k f lo md hi; do
	ST[$n,$k,$f]="$lo $md $hi"
done < <(awk '$3 !~ /^smaps-/ { for (i = 4; i <= NF; i++) if ($i != "nan") print $1, $3, i - 3, $i }' "$R" |
	sort -k1,1n -k2,2 -k3,3n -k4,4g |
	awk 'function out() { if (c) printf "%s %g %g %g\n", key, v[1], c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2, v[c] }
		{ k = $1 " " $2 " " $3; if (k != key) { out(); key = k; c = 0 } v[++c] = $4 }
		END { out() }')

# col N KEY FIELD [SCALE]: "min median max", times SCALE
col()
{
	awk -v s="${4:-1}" -v v="${ST[$1,$2,$3]:-nan nan nan}" 'BEGIN { split(v, a, " ")
		if (a[1] == "nan") print "nan nan nan"; else print a[1] * s, a[2] * s, a[3] * s }'
}

cell()	# cell FORMAT N KEY FIELD [SCALE]: "median [min..max]"
{
	awk -v f="$1" -v s="${5:-1}" -v v="${ST[$2,$3,$4]:-nan nan nan}" 'BEGIN { split(v, a, " ")
		if (a[1] == "nan") print "nan"; else printf f " [" f ".." f "]\n", a[2] * s, a[1] * s, a[3] * s }'
}

med()	# med N KEY FIELD [SCALE]
{
	col "$@" | awk '{ print $2 }'
}

per()	# per FORMAT N KEY FIELD [SCALE]: the median over N
{
	awk -v f="$1" -v m="$(med "$2" "$3" "$4" "${5:-1}")" -v n="$2" \
		'BEGIN { if (m == "nan") print "nan"; else printf f "\n", m / n }'
}

# slope KEY FIELD [SCALE]: least-squares slope and intercept of the
# medians against N
slope()
{
	local n

	for n in $COUNTS; do
		echo "$n $(med "$n" "$1" "$2" "${3:-1}")"
	done | awk '$2 != "nan" { x += $1; y += $2; xx += $1 * $1; xy += $1 * $2; k++ }
		END { d = k * xx - x * x
			if (k < 2 || d == 0) { print "nan nan"; exit }
			b = (k * xy - x * y) / d; printf "%.3f %.3f\n", b, (y - b * x) / k }'
}

echo
echo "vnetd's cost per port ($((t_end - t_start)) s)"
echo "machine: $(machine_facts | sed 's/, load average.*//'); load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "one vnetd, N ports x $QP queue pair(s), a soak frontend each (its own peer); $REPS repetitions, the counts interleaved; median [min..max]"
echo
echo "| ports | start-up, ms | per port, ms | on a CPU, ms | waiting for a CPU, ms | RSS listening, KiB | RSS idle, KiB | per port | RssAnon idle | RssShmem idle | RSS after traffic, KiB | RssShmem after traffic |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $COUNTS; do
	echo "| $n | $(cell %.0f "$n" startup 1 1000) | $(per %.1f "$n" startup 1 1000) | $(cell %.0f "$n" startup 2 1000) | $(cell %.0f "$n" startup 3 1000) | $(cell %.0f "$n" listening 1) | $(cell %.0f "$n" idle 1) | $(per %.0f "$n" idle 1) | $(cell %.0f "$n" idle 2) | $(cell %.0f "$n" idle 3) | $(cell %.0f "$n" traffic 3) | $(cell %.0f "$n" traffic 5) |"
done
echo
echo "| ports | idle wake-ups/s, control thread | idle wake-ups/s, queue threads | idle CPU, us/s | CPU per frame at $RATE frames/s per port, us | frames/s per port moved |"
echo "|---:|---:|---:|---:|---:|---:|"
for n in $COUNTS; do
	echo "| $n | $(cell %.1f "$n" idle 4) | $(cell %.1f "$n" idle 5) | $(cell %.0f "$n" idle 6) | $(cell %.1f "$n" traffic 1) | $(cell %.0f "$n" traffic 2) |"
done
echo
echo "| ports | RSS after traffic, KiB | per port | RSS ${QUIET} s quiet, KiB | per port | RssAnon quiet | RssShmem quiet | CPU per frame at 1 frame/s per port, us | frames/s per port moved | stop (SIGTERM to exit), s | pins left |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $COUNTS; do
	echo "| $n | $(cell %.0f "$n" traffic 3) | $(per %.0f "$n" traffic 3) | $(cell %.0f "$n" quiet 1) | $(per %.0f "$n" quiet 1) | $(cell %.0f "$n" quiet 2) | $(cell %.0f "$n" quiet 3) | $(cell %.0f "$n" sparse 1) | $(cell %.2f "$n" sparse 2) | $(cell %.2f "$n" stop 1) | $(cell %.0f "$n" stop 2) |"
done
echo
read -r s_st i_st < <(slope startup 1 1000)
read -r s_li i_li < <(slope listening 1)
read -r s_id i_id < <(slope idle 1)
read -r s_an i_an < <(slope idle 2)
read -r s_tr i_tr < <(slope traffic 3)
read -r s_ta _ < <(slope traffic 4)
read -r s_wm i_wm < <(slope idle 4)
read -r s_wq i_wq < <(slope idle 5)
read -r s_cf i_cf < <(slope traffic 1)
read -r s_qu i_qu < <(slope quiet 1)
read -r s_sp i_sp < <(slope stop 1 1000)
echo "per port (least-squares slope over N of the medians; the intercept in brackets):"
echo "  start-up $s_st ms ($i_st); RSS listening $s_li KiB ($i_li), idle $s_id KiB ($i_id), of it RssAnon $s_an KiB ($i_an); after traffic $s_tr KiB ($i_tr), RssAnon $s_ta KiB"
echo "  idle wake-ups/s: control thread $s_wm ($i_wm), queue threads $s_wq ($i_wq); CPU per frame $s_cf us ($i_cf)"
echo "  RSS ${QUIET} s quiet after traffic $s_qu KiB ($i_qu); stop $s_sp ms ($i_sp)"
verdict()	# verdict TEXT VALUE LIMIT
{
	awk -v t="$1" -v v="$2" -v l="$3" 'BEGIN {
		printf "target: %s: %s (%s)\n", t, (v != "nan" && v + 0 <= l + 0) ? "MET" : "MISSED", v }'
}
verdict "idle RSS <= 512 KiB per port" "$s_id" 512
verdict "RSS after traffic and ${QUIET} s quiet <= 1024 KiB per port" "$s_qu" 1024
verdict "stop of $MAXN ports <= 3 s" "$(med "$MAXN" stop 1)" 3
read -r s_sc _ < <(slope startup 2 1000)
verdict "start-up <= 20 ms per port" "$s_st" 20
verdict "start-up on a CPU <= 10 ms per port" "$s_sc" 10
verdict "no per-port wake-ups while idle (slope <= 0.05/s per port, both kinds)" \
	"$(awk -v a="$s_wm" -v b="$s_wq" 'BEGIN { print (a > b ? a : b) }')" 0.05
[ -z "$HANDOVER" ] || ho_report
echo "limit: $LIMIT_PROBE ports: exit status $limit_rc: $limit_msg"
echo
# smaps_med N WHICH KIND FIELD: the median over the repetitions
smaps_med()
{
	mmm "$(awk -v n="$1" -v w="smaps-$2" -v k="$3" -v f="$4" \
		'$1 == n && $3 == w && $4 == k { print $f }' "$R" | tr '\n' ' ')" |
		awk '{ print $2 == "nan" ? 0 : $2 }'
}
lo=${counts[0]}
for n in $COUNTS; do
	[ "$n" -lt "$lo" ] && lo=$n
done
echo "vnetd's mappings by kind (/proc/PID/smaps, median over the repetitions); per port: (at $MAXN - at $lo) / $((MAXN - lo))"
echo
echo "| kind | mappings at $lo / $MAXN ports | RSS idle, KiB, $lo / $MAXN ports | idle, per port | RSS after traffic, KiB, $MAXN ports | after traffic, per port | quiet, KiB, $MAXN ports | quiet, per port |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
# shellcheck disable=SC2013 # the kinds are words
for k in $(awk '$3 ~ /^smaps-/ { print $4 }' "$R" | sort -u); do
	a=$(smaps_med "$lo" idle "$k" 6)
	b=$(smaps_med "$MAXN" idle "$k" 6)
	c=$(smaps_med "$lo" traffic "$k" 6)
	d=$(smaps_med "$MAXN" traffic "$k" 6)
	e=$(smaps_med "$lo" quiet "$k" 6)
	f=$(smaps_med "$MAXN" quiet "$k" 6)
	echo "| $k | $(smaps_med "$lo" idle "$k" 5) / $(smaps_med "$MAXN" idle "$k" 5) | $a / $b |" \
		"$(awk -v a="$a" -v b="$b" -v n="$((MAXN - lo))" 'BEGIN { print n ? sprintf("%.0f", (b - a) / n) : "-" }') | $d |" \
		"$(awk -v a="$c" -v b="$d" -v n="$((MAXN - lo))" 'BEGIN { print n ? sprintf("%.0f", (b - a) / n) : "-" }') | $f |" \
		"$(awk -v a="$e" -v b="$f" -v n="$((MAXN - lo))" 'BEGIN { print n ? sprintf("%.0f", (b - a) / n) : "-" }') |"
done
if [ -n "$PROFILE" ]; then
	echo
	echo "the start-up of $PROFILE ports (vnetd exec to READY=1), perf record --call-graph dwarf: the share of vnetd's samples in each function, its callees included:"
	echo "${PROF:-  (no profile)}"
fi
exit "$failed"
