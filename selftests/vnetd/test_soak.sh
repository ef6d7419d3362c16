#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Soak: ONE vnetd serving 32 ports of 2 queue pairs, a vufe frontend on
# each (build/selftests/soak, selftests/vnetd/soak.c) moving frames both ways:
# ports 2k and 2k+1 are peers, their taps on a bridge of their own in the
# test's netns, each frontend sending to its peer.  After a warm-up:
#
#   soak/flat        vnetd's open fds (/proc/PID/fd) and mappings
#                    (/proc/PID/maps lines) the same at the start and at the
#                    end, its RSS within SOAK_RSS_SLACK_KB
#   soak/accounting  per port and direction, what the frontend sent = what
#                    vnetd moved (dp_stats frames) + what vnetd dropped, and
#                    what the peer's frontend received = what vnetd
#                    delivered (with what the host's stack sent: the
#                    bridge's IGMP report); end to end, sent = received +
#                    every counted drop (vnetd's, the taps'); no foreign or
#                    damaged frame
#   soak/queues      every port's both queue pairs carried frames both ways
#   soak/gaps        then 4 of the ports, a new soak on them: its SIGURG
#                    "gaps" lines (the longest gap between two frames a
#                    port received, since the SIGURG before) say every port
#                    paused >= 500 ms over a window in which vnetd was
#                    stopped (SIGSTOP) for 600 ms (100 ms for soak's own
#                    delays), and less in the window after (the reset);
#                    frames sent, received and lost add up (recv + lost <=
#                    sent)
#   soak/vnetd       vnetd ran throughout and stopped cleanly on SIGTERM
#
# `make soak` runs it for SOAK_SECS=600 (docs/robustness.md has the
# figures); `make check` for 20 s.
#
# Environment: SOAK_SECS (default 20), SOAK_PORTS (32), SOAK_QP (2),
# SOAK_RATE (frames/s each frontend sends, 200), SOAK_WARMUP (s, 5),
# SOAK_RSS_SLACK_KB (512), VNETD (default build/vnetd).

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=soak
SECS=${SOAK_SECS:-20}
PORTS=${SOAK_PORTS:-32}
QP=${SOAK_QP:-2}
RATE=${SOAK_RATE:-200}
WARMUP=${SOAK_WARMUP:-5}
RSS_SLACK=${SOAK_RSS_SLACK_KB:-512}
VNETD=${VNETD:-$OUT/vnetd}
SOAK=${SOAK:-$OUT/selftests/soak}
VNETD_PID=""

names="flat accounting queues gaps vnetd"

skip_all()
{
	local n

	for n in $names; do
		skip "$n" "$1"
	done
	exit 0
}

ksft_args "$@"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (netns, taps, BPF, vnetd)"
for b in "$VNETD" "$VNETCTL" "$SOAK"; do
	[ -x "$b" ] || skip_all "$b is not built (make)"
done
for c in jq ip; do
	command -v "$c" >/dev/null 2>&1 || skip_all "$c not found"
done

stop_vnetd()
{
	[ -n "$VNETD_PID" ] || return 0
	kill -TERM "$VNETD_PID" 2>/dev/null
	busywait 10000 sh -c "! kill -0 $VNETD_PID 2>/dev/null" ||
		kill -KILL "$VNETD_PID" 2>/dev/null
	wait "$VNETD_PID" 2>/dev/null
	VNETD_RC=$?
	VNETD_PID=""
}
trap 'stop_vnetd; _cleanup_all' EXIT

ns_create soak || skip_all "cannot create a netns"
# nothing but the frontends' frames: no IPv6 on any device
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1

taps=()
specs=()
for ((i = 0; i < PORTS; i++)); do
	t=$(rand_tap)
	taps+=("$t")
	tap_create "$NS" "$t" || { fail flat "cannot create tap $t"; exit 1; }
	if ((i % 2 == 0)); then
		ip -n "$NS" link add "br$((i / 2))" type bridge &&
			ip -n "$NS" link set "br$((i / 2))" up ||
			{ fail flat "cannot create a bridge"; exit 1; }
	fi
	ip -n "$NS" link set "$t" master "br$((i / 2))"
	specs+=(--port "socket=$VNET_TMP/p$i.sock,tap=$t,queues=$QP,netns=$NS")
done

LOG=$VNET_TMP/vnetd.log
"$VNETD" "${specs[@]}" >"$LOG" 2>&1 &
VNETD_PID=$!

all_sockets()
{
	local i

	for ((i = 0; i < PORTS; i++)); do
		[ -S "$VNET_TMP/p$i.sock" ] || return 1
	done
}
t_start=$SECONDS
if ! busywait 180000 all_sockets; then
	fail vnetd "the $PORTS sockets did not appear in 180 s: $(tail -n 3 "$LOG" | tr '\n' ' ')"
	exit 1
fi

echo "# soak: $PORTS ports x $QP queue pairs, one vnetd (pid $VNETD_PID, its sockets up in $((SECONDS - t_start)) s), $RATE frames/s per frontend, ${WARMUP} s warm-up, $SECS s"
t0=$SECONDS
"$SOAK" --sock "$VNET_TMP/p%u.sock" --ports "$PORTS" --qp "$QP" \
	--secs "$SECS" --warmup "$WARMUP" --rate "$RATE" \
	--sample $((SECS >= 120 ? 60 : 10)) --pid "$VNETD_PID" \
	>"$VNET_TMP/soak.out" 2>"$VNET_TMP/soak.err"
SOAK_RC=$?
echo "# soak: frontends ran $((SECONDS - t0)) s, exit status $SOAK_RC"
grep '^sample' "$VNET_TMP/soak.out" | sed 's/^/# /'

kv()	# kv LINE-PREFIX KEY: KEY=VALUE of the soak's first line PREFIX
{
	awk -v w="$1" -v k="$2" 'index($0, w " ") == 1 {
		for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit } }' \
		"$VNET_TMP/soak.out"
}

# --- flat -------------------------------------------------------------------
if [ "$SOAK_RC" != 0 ]; then
	fail flat "the frontends failed: $(head -c 400 "$VNET_TMP/soak.err")"
else
	f0=$(kv start fds) f1=$(kv end fds)
	r0=$(kv start rss_kb) r1=$(kv end rss_kb)
	a0=$(kv start anon_kb) a1=$(kv end anon_kb)
	s0=$(kv start shmem_kb) s1=$(kv end shmem_kb)
	m0=$(kv start maps) m1=$(kv end maps)
	echo "# soak: vnetd fds $f0 -> $f1, RSS $r0 -> $r1 kB (anon $a0 -> $a1, shmem $s0 -> $s1), maps $m0 -> $m1"
	bad=""
	positive "$f0" || bad+="no fd count; "
	[ "$f0" = "$f1" ] || bad+="open fds $f0 at the start, $f1 at the end; "
	[ "$m0" = "$m1" ] || bad+="mappings $m0 at the start, $m1 at the end; "
	if positive "$a0" && positive "$a1"; then
		[ $((a1 - a0)) -le "$RSS_SLACK" ] ||
			bad+="anonymous RSS grew by $((a1 - a0)) kB (slack $RSS_SLACK); "
	else
		bad+="no RSS; "
	fi
	if [ -z "$bad" ]; then pass flat; else fail flat "$bad"; fi
fi

# --- accounting ---------------------------------------------------------------
# vnetd's counters of port I's queues in DIR: dp I DIR frames|drops
dp()
{
	jq -r --arg d "$2" --arg f "$3" '[.queues[] | select(.dir == $d) |
		.datapath[$f] | if type == "object" or type == "array" then add else . end] | add // 0' \
		"$VNET_TMP/stats.$1.json" 2>/dev/null
}

dpq()	# dpq I Q DIR: frames of one queue
{
	jq -r --arg d "$3" --argjson q "$2" '[.queues[] | select(.dir == $d and .queue == $q) |
		.datapath.frames] | add // 0' "$VNET_TMP/stats.$1.json" 2>/dev/null
}

link()	# link I rx|tx packets|dropped: the tap's own counter
{
	jq -r --arg d "$2" --arg f "$3" '.[0].stats64[$d][$f] // 0' \
		"$VNET_TMP/link.$1.json" 2>/dev/null
}

pv()	# pv PORT KEY: KEY=VALUE of the soak's "port PORT" line
{
	awk -v p="$1" -v k="$2" '$1 == "port" && $2 == p {
		for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit } }' \
		"$VNET_TMP/soak.out"
}

bad=""
qbad=""
tot_sent=0 tot_recv=0 tot_drops=0 tot_host=0
for ((i = 0; i < PORTS; i++)); do
	"$VNETCTL" -j stats "${taps[$i]}" >"$VNET_TMP/stats.$i.json" 2>/dev/null ||
		bad+="vnetctl -j stats ${taps[$i]} failed; "
	ip -n "$NS" -s -j link show "${taps[$i]}" >"$VNET_TMP/link.$i.json"
done
if [ "$SOAK_RC" = 0 ]; then
	for ((i = 0; i < PORTS; i++)); do
		p=$((i ^ 1))
		sent=$(pv "$i" sent) recv=$(pv "$p" recv)
		foreign=$(pv "$p" foreign) host=$(pv "$p" host)
		txf=$(dp "$i" tx frames) txd=$(dp "$i" tx drops)
		rxf=$(dp "$p" rx frames) rxd=$(dp "$p" rx drops)
		lrd=$(link "$i" rx dropped) ltd=$(link "$p" tx dropped)
		drops=$((txd + rxd + lrd + ltd))
		positive "$sent" || bad+="port $i sent nothing; "
		[ "$sent" = $((txf + txd)) ] ||
			bad+="port $i: frontend sent $sent, vnetd moved $txf and dropped $txd; "
		[ $((recv + host + foreign)) = "$rxf" ] ||
			bad+="port $p: vnetd delivered $rxf, the frontend received $recv (and $host from the host, $foreign foreign); "
		[ "$sent" = $((recv + drops)) ] ||
			bad+="port $i -> $p: sent $sent, received $recv, counted drops $drops (vnetd tx $txd, rx $rxd; taps rx $lrd, tx $ltd); "
		[ "${foreign:-x}" = 0 ] ||
			bad+="port $p received $foreign foreign or damaged frames ($(grep -m1 "^soak: port $p " "$VNET_TMP/soak.err")); "
		for ((q = 0; q < QP; q++)); do
			positive "$(dpq "$i" "$q" tx)" || qbad+="port $i queue $q: no tx frame; "
			positive "$(dpq "$i" "$q" rx)" || qbad+="port $i queue $q: no rx frame; "
		done
		tot_sent=$((tot_sent + sent))
		tot_recv=$((tot_recv + recv))
		tot_drops=$((tot_drops + drops))
		tot_host=$((tot_host + ${host:-0}))
	done
	echo "# soak: frames sent $tot_sent, received $tot_recv, counted drops $tot_drops, from the host $tot_host ($(kv done secs) s measured)"
else
	bad+="the frontends failed; "
fi
if [ -z "$bad" ]; then pass accounting; else fail accounting "$bad"; fi
if [ "$SOAK_RC" = 0 ] && [ -z "$qbad" ]; then
	pass queues
else
	fail queues "${qbad:-the frontends failed}"
fi

# --- gaps ---------------------------------------------------------------------
GO=$VNET_TMP/gaps.out
gaps_n()	# gaps_n: soak's gaps lines so far
{
	grep -c '^gaps ' "$GO" 2>/dev/null
}
gaps_more()	# gaps_more N: more than N gaps lines
{
	[ "$(gaps_n)" -gt "$1" ]
}
# gaps: SIGURG, then soak's next gaps line (bounded)
gaps()
{
	local n

	n=$(gaps_n)
	kill -URG "$GPID" 2>/dev/null && busywait 10000 gaps_more "$n" &&
		grep '^gaps ' "$GO" | tail -n 1
}
gv()	# gv LINE KEY
{
	awk -v k="$2" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' <<<"$1"
}
: >"$GO"
"$SOAK" --sock "$VNET_TMP/p%u.sock" --ports 4 --qp "$QP" --secs 60 \
	--warmup 0 --rate "$RATE" --sample 1000 --pid "$VNETD_PID" \
	>"$GO" 2>"$VNET_TMP/gaps.err" &
GPID=$!
bad=""
# the first line: the loop runs (the frontends connected); then windows
if gaps >/dev/null && sleep 1 && base=$(gaps); then
	kill -STOP "$VNETD_PID"
	sleep 0.6
	kill -CONT "$VNETD_PID"
	sleep 1
	paused=$(gaps)
	sleep 1
	after=$(gaps)
	echo "# soak: 1 s: $base"
	echo "# soak: vnetd stopped 600 ms: $paused"
	echo "# soak: 1 s after: $after"
	positive "$(gv "$base" recv)" || bad+="no frame received: $base; "
	awk -v m="$(gv "$paused" median_ms)" 'BEGIN { exit !(m >= 500) }' ||
		bad+="vnetd stopped for 600 ms, yet the median port's longest gap was $(gv "$paused" median_ms) ms; "
	[ "$(gv "$paused" over50)" = 4 ] ||
		bad+="vnetd stopped for 600 ms, yet $(gv "$paused" over50) of 4 ports paused over 50 ms; "
	awk -v m="$(gv "$after" median_ms)" 'BEGIN { exit !(m < 500) }' ||
		bad+="the window after the stop still says $(gv "$after" median_ms) ms (no reset?); "
	for l in "$base" "$paused" "$after"; do
		[ $(($(gv "$l" recv) + $(gv "$l" lost))) -le "$(gv "$l" sent)" ] ||
			bad+="received + lost > sent: $l; "
	done
else
	bad+="soak printed no gaps line: $(head -c 300 "$VNET_TMP/gaps.err"); "
fi
kill -INT "$GPID" 2>/dev/null
wait "$GPID" || bad+="the soak failed: $(head -c 300 "$VNET_TMP/gaps.err"); "
if [ -z "$bad" ]; then pass gaps; else fail gaps "$bad"; fi

# --- vnetd --------------------------------------------------------------------
bad=""
kill -0 "$VNETD_PID" 2>/dev/null || bad+="vnetd died: $(tail -n 2 "$LOG" | tr '\n' ' '); "
stop_vnetd
[ "$VNETD_RC" = 0 ] || bad+="vnetd exited with status $VNETD_RC on SIGTERM; "
e=$(grep -iE 'error|broken|AddressSanitizer|runtime error' "$LOG" | head -n 3 | tr '\n' ' ')
[ -z "$e" ] || bad+="vnetd logged: $e; "
if [ -z "$bad" ]; then pass vnetd; else fail vnetd "$bad"; fi
ksft_exit
