#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# What `vnetctl attach` costs a host with many taps
# (docs/shared-classifier.md): N taps (256) in a private netns, each
# attached by its own vnetctl, one after the other and then JOBS (8) at
# once, and detached again; three arms side by side, their order reversed
# every other repetition: the shared classifier on clsact filters
# (`attach --tc-attach clsact`), the same on tcx links (the default), and
# a classifier per tap (build/vnetctl-testing, VNET_CLASSIFIER=per-tap; tcx).  Per arm and way:
# the wall time for all N and vnetctl's CPU (user + system, the children's
# rusage) per tap, median [min..max] over REPS (3).
#
#   bench/bench_attach.sh [-r REPS] [-n TAPS] [-j JOBS]
#
# Needs root.  Environment: OUT (build directory).

set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build}
# shellcheck source=bench/opts.sh
. bench/opts.sh
REPS=3 TAPS=256 JOBS=8
bench_opts "r:REPS n:TAPS j:JOBS" "$@"

[ "$(id -u)" -eq 0 ] || { echo "bench_attach: needs root" >&2; exit 1; }
for b in "$OUT/vnetctl" "$OUT/vnetctl-testing"; do
	[ -x "$b" ] || { echo "bench_attach: $b missing: make" >&2; exit 1; }
done
NS=vnet-bench-attach-$$
RES=$(mktemp -d /tmp/vnet-bench-attach.XXXXXX)
cleanup()
{
	ip netns pids "$NS" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns exec "$NS" "$OUT/vnetctl" gc >/dev/null 2>&1
	ip netns del "$NS" 2>/dev/null
	"$OUT/vnetctl" gc >/dev/null 2>&1
	rm -rf "$RES"
}
trap cleanup EXIT
ip netns add "$NS" || exit 1
for i in $(seq 0 $((TAPS - 1))); do
	echo "tuntap add dev ba$i mode tap multi_queue vnet_hdr"
	echo "link set ba$i up"
done | ip -n "$NS" -batch - || exit 1

# arm ARM CMD: the vnetctl of ARM and its command CMD, as a command line
arm()
{
	case $1-$2 in
	clsact-attach) echo "$OUT/vnetctl -n $NS attach --tc-attach clsact" ;;
	clsact-* | tcx-*) echo "$OUT/vnetctl -n $NS $2" ;;
	per-tap-*) echo "env VNET_CLASSIFIER=per-tap $OUT/vnetctl-testing -n $NS $2" ;;
	esac
}

# cpu_total: CPU := the children's user and system time so far, in
# seconds (this shell's times: a subshell's children would not be these)
cpu_total()
{
	times >"$RES/times"
	CPU=$(awk 'NR == 2 { gsub(/s/, ""); split($1, u, "m"); split($2, s, "m")
		print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$RES/times")
}

echo "bench_attach: $(nproc) CPUs, kernel $(uname -r), $TAPS taps, $REPS repetitions, $JOBS at once in the parallel way; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
	arms="clsact tcx per-tap"
	[ $((rep % 2)) -eq 0 ] && arms="per-tap tcx clsact"
	for a in $arms; do
		for way in serial parallel; do
			par=1
			[ "$way" = parallel ] && par=$JOBS
			for cmd in attach detach; do
				cpu_total
				c0=$CPU
				t0=$EPOCHREALTIME
				# shellcheck disable=SC2046 # the arm's words
				seq 0 $((TAPS - 1)) | xargs -P "$par" -I{} $(arm "$a" "$cmd") ba{} >/dev/null 2>&1
				t1=$EPOCHREALTIME
				cpu_total
				c1=$CPU
				awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" -v n="$TAPS" \
					'BEGIN { printf "%.3f %.2f\n", b - a, (d - c) * 1000 / n }' \
					>>"$RES/$a.$way.$cmd"
			done
		done
	done
	ip netns exec "$NS" "$OUT/vnetctl" gc >/dev/null 2>&1
done

# stat FILE COLUMN: median [min..max]
stat()
{
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
		printf "%.2f [%.2f..%.2f]", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

echo
echo "| arm | way | attach $TAPS taps, s | attach, CPU ms a tap | detach $TAPS taps, s | detach, CPU ms a tap |"
echo "|---|---|---:|---:|---:|---:|"
for a in clsact tcx per-tap; do
	for way in serial parallel; do
		echo "| $a | $way$([ "$way" = parallel ] && echo " ($JOBS)") | $(stat "$RES/$a.$way.attach" 1) | $(stat "$RES/$a.$way.attach" 2) | $(stat "$RES/$a.$way.detach" 1) | $(stat "$RES/$a.$way.detach" 2) |"
	done
done
