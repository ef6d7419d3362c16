#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnetd's CPU per frame against the offered rate, for its notification
# arms side by side in one run (docs/benchmarks.md, "vnetd's CPU per frame
# against the rate").
#
# One vnetd per arm, all alive at once, each serving PORTS ports (8: 4
# peer pairs) of QP queue pairs (1) on taps of its own in one private
# netns, ports 2k and 2k+1 peers, their taps on a bridge of their own;
# build/selftests/soak runs a vufe frontend on each port of an arm
# (selftests/vnetd/soak.c; no warm-up flood; --max-lag 10: frames a starved
# frontend owes for more than 10 ms are never sent, so the rate does not
# come in bursts), every frontend sending RATE frames/s (60-1514 B, UDP)
# to its peer.  The vnetds run on VNETD_CPU (1), the frontends on SOAK_CPU
# (0).  The arms:
#   defaults  vnetd's notification values as it starts (the rule holds a
#             signal only when holding batches something)
#   off       coalescing off: vnetctl coalesce set TAP tx-frames 0
#             tx-usecs 0 rx-frames 0 rx-usecs 0
#   always    the static rule: the defaults with tx-hold always rx-hold
#             always (every hold counts usecs from its first frame)
# set once on every tap with vnetctl.  Per rate, every arm's soak is
# started and stopped (SIGSTOP); then REPS repetitions of one window per
# arm, the order reversed every other repetition (A B C C B A ...): the
# arm's soak continued (SIGCONT), SETTLE seconds (0.3) left to settle, a
# window of SECONDS (1; at low rates longer, for at least MIN_FRAMES (24)
# frames), the soak stopped again; the other arms' vnetds idle meanwhile.
# Per window: the arm's vnetd's CPU time (schedstat, summed over its
# threads), its voluntary context switches (wake-ups) and the frames its
# frontends sent through it (its taps' rx_packets: each frame crossed
# vnetd twice, guest TX on one port and guest RX on its peer).
#
# Per rate it prints the frames/s per port moved, vnetd's CPU us per
# frame and wake-ups per frame (median [min..max] over the repetitions),
# and the ratios per repetition, defaults/off and defaults/always, with a
# one-sided Wilcoxon signed-rank p (build/bench/evstat --ratios): p< of
# "the ratios are centred below the bound", p> of "above it".  The targets:
# at <= 2000 frames/s per port defaults/off <= 1.05; at the highest rate
# defaults/always <= 1.00.  Never gates anything; exit status 1 only when
# a measurement could not be taken.
#
#   bench/bench_vnetd_rate.sh [-r REPS] [-d SECONDS] [-R "RATES"] [-p PORTS]
#                             [-q QP] [-a "defaults off always"]
#
# -R: frames/s per port (default "1 10 100 1000 2000 5000 10000 20000").
# The default run takes about 8 minutes (load average 13 on 2 CPUs).
# Environment: OUT (build dir), VNETD (default $OUT/vnetd), VNETD_ARGS
# (options every vnetd gets, e.g. --no-uring), SOAK ($OUT/selftests/soak),
# VNETD_CPU (1), SOAK_CPU (0), SETTLE (0.3), MIN_FRAMES (24).  Needs root.

set -u

# shellcheck source=bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
BENCH_NAME=bench_vnetd_rate

VNETD=${VNETD:-$out/vnetd}
SOAK=${SOAK:-$out/selftests/soak}
VNETCTL=$out/vnetctl
EVSTAT=$out/bench/evstat

REPS=8
SECS=1
RATES="1 10 100 1000 2000 5000 10000 20000"
PORTS=8
QP=1
ARMS="defaults off always"
bench_opts "r:REPS d:SECS R:RATES p:PORTS q:QP a:ARMS" "$@"
VNETD_CPU=${VNETD_CPU:-1}
SOAK_CPU=${SOAK_CPU:-0}
SETTLE=${SETTLE:-0.3}
MIN_FRAMES=${MIN_FRAMES:-24}


for v in "$REPS" "$PORTS" "$QP" $RATES; do
	posint "$v" || { err "'$v' is not a positive integer (see -h)"; exit 2; }
done
if [ $((PORTS % 2)) -ne 0 ] || [ "$PORTS" -gt 64 ]; then
	err "-p $PORTS: ports come in peer pairs, 2 to 64"
	exit 2
fi
if ! awk -v s="$SECS" 'BEGIN { exit !(s + 0 > 0) }'; then
	err "-d $SECS: the window must be a positive number of seconds"
	exit 2
fi
seen=" "
for a in $ARMS; do
	case $a in
	defaults | off | always) ;;
	*) err "-a: unknown arm '$a' (defaults, off, always)"; exit 2 ;;
	esac
	case $seen in *" $a "*) err "-a: arm '$a' twice"; exit 2 ;; esac
	seen+="$a "
done
bench_need_root "a network namespace, taps, bridges, BPF"
bench_need_exec "$VNETD" "$SOAK" "$VNETCTL" "$EVSTAT"
bench_need_cmd jq ip taskset
bench_soak_setup rate
declare -A VPID SPID	# per arm: vnetd, soak
failed=0

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup()
{
	local a

	for a in "${!SPID[@]}"; do
		kill -CONT "${SPID[$a]}" 2>/dev/null
		stop_pid "${SPID[$a]}" INT
	done
	for a in "${!VPID[@]}"; do
		stop_pid "${VPID[$a]}" TERM
	done
	ip netns del "$NS" 2>/dev/null
	bench_logs_done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'exit 129' HUP

# --- setup: a vnetd and its taps per arm -----------------------------------

read -r -a arms <<<"$ARMS"
tapname()	# tapname ARM_INDEX PORT
{
	echo "vrt${id}a$1n$2"
}

ip netns add "$NS" || exit 1
ip -n "$NS" link set lo up
# nothing but the frontends' frames: no IPv6 on any device
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1 >/dev/null
for a in "${!arms[@]}"; do
	for ((i = 0; i < PORTS; i++)); do
		b=vrb${id}a${a}n$((i / 2))
		echo "tuntap add dev $(tapname "$a" "$i") mode tap multi_queue vnet_hdr"
		((i % 2 == 0)) && echo "link add $b type bridge" && echo "link set $b up"
		echo "link set $(tapname "$a" "$i") master $b"
		echo "link set $(tapname "$a" "$i") up"
	done
done >"$LOGS/setup.batch"
if ! ip -n "$NS" -batch "$LOGS/setup.batch" >"$LOGS/setup.log" 2>&1; then
	err "setting up the taps and bridges: $(tail -n 3 "$LOGS/setup.log")"
	failed=1
	exit 1
fi
for a in "${!arms[@]}"; do
	mkdir -p "$LOGS/${arms[a]}"
	specs=()
	for ((i = 0; i < PORTS; i++)); do
		specs+=(--port "socket=$LOGS/${arms[a]}/p$i.sock,tap=$(tapname "$a" "$i"),queues=$QP,netns=$NS")
	done
	# shellcheck disable=SC2086 # VNETD_ARGS: words
	taskset -c "$VNETD_CPU" "$VNETD" "${specs[@]}" ${VNETD_ARGS:-} \
		>"$LOGS/vnetd-${arms[a]}.log" 2>&1 &
	VPID[${arms[a]}]=$!
done
for a in "${!arms[@]}"; do
	if ! wait_line "$LOGS/vnetd-${arms[a]}.log" "p$((PORTS - 1))\.sock: listening" 300 "${VPID[${arms[a]}]}"; then
		err "vnetd (${arms[a]}) did not come up: $(tail -n 3 "$LOGS/vnetd-${arms[a]}.log")"
		failed=1
		exit 1
	fi
done

# the values vnetd starts with: the defaults arm's
read -r TXF TXU RXF RXU < <("$VNETCTL" -n "$NS" -j coalesce show "$(tapname 0 0)" |
	jq -r '.guest.groups[0] | "\(.tx_frames) \(.tx_usecs) \(.rx_frames) \(.rx_usecs)"')
if ! posint "${TXF:-}" || ! posint "${RXU:-}"; then
	err "cannot read vnetd's coalescing values (vnetctl -j coalesce show $(tapname 0 0))"
	failed=1
	exit 1
fi

# set_arm INDEX: the arm's notification values on every tap of its vnetd
set_arm()
{
	local t p i

	case ${arms[$1]} in
	defaults) p="tx-frames $TXF tx-usecs $TXU rx-frames $RXF rx-usecs $RXU tx-hold auto rx-hold auto" ;;
	off) p="tx-frames 0 tx-usecs 0 rx-frames 0 rx-usecs 0 tx-hold auto rx-hold auto" ;;
	always) p="tx-frames $TXF tx-usecs $TXU rx-frames $RXF rx-usecs $RXU tx-hold always rx-hold always" ;;
	esac
	for ((i = 0; i < PORTS; i++)); do
		t=$(tapname "$1" "$i")
		# shellcheck disable=SC2086 # p: words
		if ! "$VNETCTL" -n "$NS" coalesce set "$t" $p >"$LOGS/set.log" 2>&1; then
			err "vnetctl -n $NS coalesce set $t $p: $(cat "$LOGS/set.log")"
			return 1
		fi
	done
}
for a in "${!arms[@]}"; do
	set_arm "$a" || { failed=1; exit 1; }
done

# frames INDEX: the frames the arm's frontends sent through its vnetd (its
# taps' rx_packets)
frames()
{
	tap_rx_frames "$NS" "vrt${id}a$1n"
}

# start_soak ARM RATE: the arm's frontends, stopped (SIGSTOP) once they send
start_soak()
{
	local o=$LOGS/soak-$1.out

	: >"$o"
	taskset -c "$SOAK_CPU" "$SOAK" --sock "$LOGS/$1/p%u.sock" --ports "$PORTS" \
		--qp "$QP" --secs 1000000 --warmup 0 --rate "$2" --max-lag 10 \
		--sample 1000000 --pid "${VPID[$1]}" >"$o" 2>"$LOGS/soak-$1.err" &
	SPID[$1]=$!
	if ! wait_line "$o" '^start ' 60 "${SPID[$1]}"; then
		err "soak ($1) did not start at $2 frames/s: $(head -c 300 "$LOGS/soak-$1.err")"
		return 1
	fi
	kill -STOP "${SPID[$1]}"
}

# stop_soaks: every arm's soak ends (SIGINT: it waits 2 s for what is in
# flight, all at once) and must have received nothing foreign
stop_soaks()
{
	local a f pids=()

	for a in "${arms[@]}"; do
		pids+=("${SPID[$a]}")
	done
	interrupt_pids 60 "${pids[@]}"
	for a in "${arms[@]}"; do
		SPID[$a]=
		check_soak "$a"
	done
}

check_soak()	# check_soak ARM
{
	local f

	f=$(awk '/^done / { for (i = 2; i <= NF; i++) if ($i ~ /^foreign=/) print substr($i, 9) }' "$LOGS/soak-$1.out")
	if [ "${f:-x}" != 0 ]; then
		err "soak ($1): no clean end (foreign frames: ${f:-?}): $(head -c 300 "$LOGS/soak-$1.err")"
		failed=1
	fi
}

# --- measurement ---------------------------------------------------------------

echo "bench_vnetd_rate: $(machine_facts)" >&2
echo "bench_vnetd_rate: $PORTS ports x $QP queue pair(s) per arm, rates $RATES frames/s per port, $REPS repetitions, ${SECS} s windows, vnetd on CPU $VNETD_CPU, frontends on CPU $SOAK_CPU" >&2
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t_start=$(date +%s)
W=$LOGS/windows	# RATE REP ARM SECONDS CPU_NS FRAMES WAKEUPS
: >"$W"
for rate in $RATES; do
	for a in "${arms[@]}"; do
		start_soak "$a" "$rate" || { failed=1; exit 1; }
	done
	win=$(awk -v s="$SECS" -v m="$MIN_FRAMES" -v p="$PORTS" -v r="$rate" \
		'BEGIN { w = m / (p * r); printf "%g", (w > s ? w : s) }')
	for ((rep = 1; rep <= REPS; rep++)); do
		mapfile -t order < <(rep_order "$rep" "${arms[@]}")
		for arm in "${order[@]}"; do
			ai=0
			while [ "${arms[ai]}" != "$arm" ]; do ai=$((ai + 1)); done
			kill -CONT "${SPID[$arm]}"
			sleep "$SETTLE"
			read -r c0 v0 _ n0 _ < <(proc_sample "${VPID[$arm]}")
			f0=$(frames "$ai")
			t0=$EPOCHREALTIME
			sleep "$win"
			read -r c1 v1 _ n1 _ < <(proc_sample "${VPID[$arm]}")
			f1=$(frames "$ai")
			t1=$EPOCHREALTIME
			kill -STOP "${SPID[$arm]}"
			if [ "$n0" = 0 ] || [ "$n0" != "$n1" ]; then
				err "vnetd's ($arm) threads changed during a window ($n0 -> $n1), or it died"
				failed=1
				exit 1
			fi
			echo "$rate $rep $arm $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $((c1 - c0)) $((f1 - f0)) $((v1 - v0))" >>"$W"
			awk -v p="$PORTS" '{ printf "  %6s/s/port rep %d %-8s %8.0f frames/s/port %8.2f us/frame %6.3f wake-ups/frame\n",
				$1, $2, $3, $6 / $4 / p, $6 ? $5 / $6 / 1000 : 0, $6 ? $7 / $6 : 0 }' <(tail -n 1 "$W") >&2
		done
	done
	stop_soaks
done
t_end=$(date +%s)
for a in "${arms[@]}"; do
	kill -0 "${VPID[$a]}" 2>/dev/null || { err "vnetd ($a) died: $(tail -n 3 "$LOGS/vnetd-$a.log")"; failed=1; }
done

# --- report --------------------------------------------------------------------

# per ARM and RATE: "min median max" of a per-window figure (awk expression
# of $4 seconds, $5 CPU ns, $6 frames, $7 wake-ups)
fig()
{
	mmm "$(awk -v r="$1" -v a="$2" "\$1 == r && \$3 == a && \$6 > 0 { print $3 }" "$W" | tr '\n' ' ')"
}

# paired NUM DEN BOUND: per rate "RATE n min median max p_below p_above" of
# the per-repetition ratios of CPU per frame, NUM over DEN
paired()
{
	awk -v x="$1" -v y="$2" '$6 > 0 { c[$1 " " $2 " " $3] = $5 / $6 }
		END { for (k in c) { split(k, f, " ")
			if (f[3] == x && (f[1] " " f[2] " " y) in c)
				printf "%s %d %.6g %.6g\n", f[1], f[2], c[k], c[f[1] " " f[2] " " y] } }' "$W" |
		sort -n -k1,1 -k2,2 | awk '{ print $1, $3, $4 }' | "$EVSTAT" --ratios "$3"
}

has_arm()
{
	case " $ARMS " in *" $1 "*) return 0 ;; esac
	return 1
}

echo
echo "vnetd's CPU per frame against the offered rate ($((t_end - t_start)) s)"
echo "machine: $(machine_facts | sed 's/, load average.*//'); load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "one vnetd per arm, $PORTS ports ($((PORTS / 2)) peer pairs) x $QP queue pair(s) each, soak frontends; $REPS repetitions of alternating ${SECS} s windows; vnetd's CPU (all threads) per frame sent through it (guest TX on one port + guest RX on its peer); median [min..max]"
echo
hdr="| frames/s per port offered | moved |"
sep="|---:|---:|"
for a in $ARMS; do
	hdr+=" $a: us/frame | $a: wake-ups/frame |"
	sep+="---:|---:|"
done
has_arm defaults && has_arm off && { hdr+=" defaults/off | p< 1.05 |"; sep+="---|---:|"; }
has_arm defaults && has_arm always && { hdr+=" defaults/always | p> 1.00 |"; sep+="---|---:|"; }
echo "$hdr"
echo "$sep"
declare -A VS_OFF VS_ALWAYS
has_arm defaults && has_arm off && while read -r r n lo md hi pb pa; do
	VS_OFF[$r]="$n $lo $md $hi $pb $pa"
done < <(paired defaults off 1.05)
has_arm defaults && has_arm always && while read -r r n lo md hi pb pa; do
	VS_ALWAYS[$r]="$n $lo $md $hi $pb $pa"
done < <(paired defaults always 1.00)
for rate in $RATES; do
	read -r _ moved _ < <(fig "$rate" "${arms[0]}" "\$6 / \$4 / $PORTS")
	line="| $rate | $(printf '%.0f' "$moved") |"
	for a in $ARMS; do
		# shellcheck disable=SC2016 # awk's fields
		read -r lo md hi < <(fig "$rate" "$a" '$5 / $6 / 1000')
		line+=" $(printf '%.2f [%.2f..%.2f]' "$md" "$lo" "$hi") |"
		# shellcheck disable=SC2016 # awk's fields
		read -r lo md hi < <(fig "$rate" "$a" '$7 / $6')
		line+=" $(printf '%.2f' "$md") |"
	done
	if has_arm defaults && has_arm off; then
		read -r _ lo md hi pb _ <<<"${VS_OFF[$rate]:-0 nan nan nan nan nan}"
		line+=" $md [$lo..$hi] | $pb |"
	fi
	if has_arm defaults && has_arm always; then
		read -r _ lo md hi _ pa <<<"${VS_ALWAYS[$rate]:-0 nan nan nan nan nan}"
		line+=" $md [$lo..$hi] | $pa |"
	fi
	echo "$line"
done
echo
echo "p< 1.05: one-sided Wilcoxon signed-rank p that defaults/off is centred below 1.05;"
echo "p> 1.00: that defaults/always is centred above 1.00 (the defaults cost more than the static rule)"
if has_arm defaults && has_arm off; then
	met=1
	worst=
	for rate in $RATES; do
		[ "$rate" -le 2000 ] || continue
		read -r _ _ md _ pb pa <<<"${VS_OFF[$rate]:-0 nan nan nan nan nan}"
		awk -v m="$md" 'BEGIN { exit !(m != "nan" && m + 0 <= 1.05) }' || met=0
		worst+="$rate: $md (p< $pb, p> $pa), "
	done
	echo "target: CPU per frame at <= 2000 frames/s per port <= 1.05x of coalescing off:" \
		"$([ "$met" = 1 ] && echo MET || echo MISSED) on the medians (defaults/off per rate, with the p of centred below and above 1.05: ${worst%, })"
fi
if has_arm defaults && has_arm always; then
	top_rate=$(echo "$RATES" | tr ' ' '\n' | sort -n | tail -n 1)
	read -r _ _ md _ _ pa <<<"${VS_ALWAYS[$top_rate]:-0 nan nan nan nan nan}"
	echo "target: at $top_rate frames/s per port no worse than the static rule:" \
		"$(awk -v m="$md" 'BEGIN { print (m != "nan" && m + 0 <= 1.0) ? "MET" : "MISSED" }')" \
		"(median defaults/always $md, p> 1.00 $pa)"
fi
exit "$failed"
