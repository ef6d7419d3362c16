#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# What a scrape of vnetctl exporter costs on a host with many taps
# (docs/metrics.md): N taps attached in a network namespace the bench
# creates, the exporter on a loopback port, then
#
#   one scrape      the time of one GET /metrics (curl's time_total),
#                   REPS scrapes one after another: min, median, max
#   50 at once      50 scrapes started together (one curl, --parallel):
#                   the slowest one's time, REPS times: min, median, max
#   bpf() calls     of one scrape (strace -c), when strace is there
#
# With VNETCTL_B=path (another vnetctl, e.g. a build of an older commit)
# the same is measured for it, interleaved with this build's repetitions,
# and the ratios this/B are printed.  With -P SECS, then a real Prometheus
# (Debian's, its own storage under a temporary directory, a loopback port)
# scrapes this build's exporter every second for SECS seconds: scrapes,
# failed scrapes (up 0) and the slowest scrape_duration_seconds.  With -V
# every tap is attached with a VM name (--vm vm-N): each of its series
# carries the vm label.  Root.
#
#   bench/bench_exporter.sh [-n TAPS] [-r REPS] [-P SECS] [-V]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
source "$HERE/../selftests/lib.sh"

NTAPS=256
REPS=7
PROM_SECS=0
VM=0
# shellcheck source=bench/opts.sh
source "$(dirname "$0")/opts.sh"
bench_opts "n:NTAPS r:REPS P:PROM_SECS V=VM" "$@"
[ "$(id -u)" = 0 ] || { echo "bench_exporter: needs root (taps, netns, BPF)" >&2; exit 2; }
command -v curl >/dev/null || { echo "bench_exporter: needs curl" >&2; exit 2; }

A=$VNETCTL
B=${VNETCTL_B:-}
cleanup()
{
	end_case # the exporters and Prometheus (procs_add), by pid
	_cleanup_all
	# the taps went with the netns: their pins are a gone device's
	"$A" gc >/dev/null 2>&1
}
trap cleanup EXIT

ns_create exporter_bench || { echo "bench_exporter: cannot create a netns" >&2; exit 1; }
echo "bench_exporter: $NTAPS taps in $NS, attached ..." >&2
for i in $(seq "$NTAPS"); do
	vm=()
	[ "$VM" = 1 ] && vm=(--vm "vm-$i")
	ip -n "$NS" tuntap add dev "xb$i" mode tap multi_queue &&
		ip -n "$NS" link set "xb$i" up &&
		"$A" -n "$NS" attach "xb$i" "${vm[@]}" >/dev/null 2>&1 ||
		{ echo "bench_exporter: tap xb$i: cannot create or attach" >&2; exit 1; }
done

# start BIN: an exporter on a free loopback port; echoes "PID PORT"
start()
{
	local port pid

	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		"$1" exporter --listen "127.0.0.1:$port" >/dev/null 2>&1 &
		pid=$!
		if busywait 5000 curl -sf -o /dev/null "http://127.0.0.1:$port/" &&
			kill -0 "$pid" 2>/dev/null; then
			echo "$pid $port"
			return 0
		fi
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	return 1
}

read -r PA PORTA < <(start "$A") || { echo "bench_exporter: exporter A does not start" >&2; exit 1; }
procs_add "$PA"
if [ -n "$B" ]; then
	read -r PB PORTB < <(start "$B") || { echo "bench_exporter: exporter B does not start" >&2; exit 1; }
	procs_add "$PB"
fi

one()
{
	curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$1/metrics"
}

fifty()
{
	local i

	for i in $(seq 50); do echo "-o /dev/null http://127.0.0.1:$1/metrics"; done |
		xargs curl -s --no-progress-meter --max-time 120 --parallel --parallel-immediate --parallel-max 50 -w '%{time_total}\n' |
		sort -n | tail -1
}

# stat FILE: min median max of its numbers, in ms
stat3()
{
	sort -n "$1" | awk '{ v[NR] = $1 * 1000 } END { printf "%.1f %.1f %.1f", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

T=$(mktemp -d)
one "$PORTA" >/dev/null
[ -n "$B" ] && one "$PORTB" >/dev/null
for r in $(seq "$REPS"); do
	echo "bench_exporter: repetition $r/$REPS" >&2
	for arm in A B; do
		[ "$arm" = B ] && [ -z "$B" ] && continue
		port=$PORTA
		[ "$arm" = B ] && port=$PORTB
		one "$port" >>"$T/one.$arm"
		fifty "$port" >>"$T/fifty.$arm"
	done
done

calls()
{
	command -v strace >/dev/null || { echo "-"; return; }
	timeout 60 strace -f -c -e trace=bpf -p "$1" -o "$T/strace" 2>/dev/null &
	local sp=$!
	sleep 0.5
	one "$2" >/dev/null
	sleep 0.2
	kill -INT "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	awk '$NF == "bpf" { print $4 }' "$T/strace"
}

named=""
[ "$VM" = 1 ] && named=" named (vm label)"
echo "vnetctl exporter, $NTAPS attached taps$named, $REPS repetitions (ms: min median max)"
printf '%-10s %-22s %-22s %s\n' build "one scrape" "slowest of 50 at once" "bpf() calls a scrape"
printf '%-10s %-22s %-22s %s\n' this "$(stat3 "$T/one.A")" "$(stat3 "$T/fifty.A")" "$(calls "$PA" "$PORTA")"
if [ -n "$B" ]; then
	printf '%-10s %-22s %-22s %s\n' B "$(stat3 "$T/one.B")" "$(stat3 "$T/fifty.B")" "$(calls "$PB" "$PORTB")"
	paste "$T/one.A" "$T/one.B" | awk '{ print $1 / $2 }' >"$T/r1"
	paste "$T/fifty.A" "$T/fifty.B" | awk '{ print $1 / $2 }' >"$T/r50"
	echo "this/B per repetition (min median max): one scrape $(stat3 "$T/r1" | awk '{ printf "%.3f %.3f %.3f", $1/1000, $2/1000, $3/1000 }'), 50 at once $(stat3 "$T/r50" | awk '{ printf "%.3f %.3f %.3f", $1/1000, $2/1000, $3/1000 }')"
fi

# a real Prometheus at 1 s for PROM_SECS
if [ "$PROM_SECS" -gt 0 ] && command -v prometheus >/dev/null; then
	pport=$((20000 + RANDOM % 40000))
	cat >"$T/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  scrape_timeout: 1s
	scrape_configs:
	  - job_name: vnet
	    static_configs:
	      - targets: ['127.0.0.1:$PORTA']
	EOF
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prometheus.log" 2>&1 &
	procs_add "$!"
	busywait 60000 curl -sf -o /dev/null "http://127.0.0.1:$pport/-/ready"
	echo "bench_exporter: Prometheus scrapes every second for $PROM_SECS s ..." >&2
	sleep "$PROM_SECS"
	q()
	{
		curl -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
			jq -r '.data.result[0].value[1] // "-"'
	}
	w="${PROM_SECS}s"
	echo "Prometheus at 1 s for $PROM_SECS s: $(q "count_over_time(up{job=\"vnet\"}[$w])") scrapes, $(q "count_over_time(up{job=\"vnet\"}[$w]) - sum_over_time(up{job=\"vnet\"}[$w])") failed, slowest scrape_duration_seconds $(q "max_over_time(scrape_duration_seconds{job=\"vnet\"}[$w])")"
fi
rm -rf "$T"
