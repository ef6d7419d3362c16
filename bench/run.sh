#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Benchmarks of the tap write path (docs/benchmarks.md).  Called by
# `make bench` after `make all`; builds nothing.  Extra arguments go to
# bench_tap (e.g. --json, -r 11, -s 64).  The default run takes about
# 1.5 minutes on a 2-CPU VM, then bench_vnetd.sh about 4 more,
# bench_xmit.sh about 2.5 more, bench_vnetd_rate.sh about 8,
# bench_vnetd_scale.sh about 11 (both measured with the load average at 13)
# and bench_attach.sh about 4.

set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=${OUT:-build}
case $out in
/*) ;;
*) out=$top/$out ;;
esac
bin=$out/bench/bench_tap

if [ "$(id -u)" -ne 0 ]; then
	echo "bench/run.sh: must run as root: bench_tap creates a network namespace and a tap and attaches BPF programs (try: sudo make bench)" >&2
	exit 1
fi
if [ ! -x "$bin" ]; then
	echo "bench/run.sh: $bin not found or not executable; build it with 'make all' (or run 'make bench')" >&2
	exit 1
fi
if [ ! -c /dev/net/tun ]; then
	echo "bench/run.sh: /dev/net/tun is missing (CONFIG_TUN, or 'modprobe tun')" >&2
	exit 1
fi

"$bin" "$@"
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "bench/run.sh: bench_tap failed (exit $rc)" >&2
	exit "$rc"
fi

# vnetd against a DPDK vhost+tap peer and the tap's ceiling, and its
# signals per 1000 frames (docs/benchmarks.md, "vnetd"; about 4 minutes);
# BENCH_VNETD_ARGS go to it (e.g. "-r 5")
# shellcheck disable=SC2086
"$here/bench_vnetd.sh" ${BENCH_VNETD_ARGS:-}
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "bench/run.sh: bench_vnetd.sh failed (exit $rc)" >&2
	exit "$rc"
fi

# what attached taps cost other devices' transmits: ns per frame with 0, 1,
# 16, 64 taps (docs/benchmarks.md, "Taps and other devices' transmits";
# about 2.5 minutes); BENCH_XMIT_ARGS go to it (e.g. "-r 7")
# shellcheck disable=SC2086
"$here/bench_xmit.sh" ${BENCH_XMIT_ARGS:-}
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "bench/run.sh: bench_xmit.sh failed (exit $rc)" >&2
	exit "$rc"
fi

# vnetd's CPU per frame against the offered rate, its notification arms
# side by side (docs/benchmarks.md, "vnetd's CPU per frame against the
# rate"; about 8 minutes); BENCH_RATE_ARGS go to it (e.g. "-r 7")
# shellcheck disable=SC2086
"$here/bench_vnetd_rate.sh" ${BENCH_RATE_ARGS:-}
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "bench/run.sh: bench_vnetd_rate.sh failed (exit $rc)" >&2
	exit "$rc"
fi

# what a port costs one vnetd against the number of ports: start-up, idle
# memory and wake-ups, CPU per frame (docs/benchmarks.md, "vnetd's cost
# per port"; about 11 minutes); BENCH_SCALE_ARGS go to it (e.g. "-P 8")
# shellcheck disable=SC2086
"$here/bench_vnetd_scale.sh" ${BENCH_SCALE_ARGS:-}
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "bench/run.sh: bench_vnetd_scale.sh failed (exit $rc)" >&2
	exit "$rc"
fi
# vnetctl attach of 256 taps, the shared classifier against a classifier
# per tap (docs/shared-classifier.md; one repetition, about 4 minutes);
# BENCH_ATTACH_ARGS go to it
# shellcheck disable=SC2086
"$here/bench_attach.sh" ${BENCH_ATTACH_ARGS:--r 1}
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "bench/run.sh: bench_attach.sh failed (exit $rc)" >&2
	exit "$rc"
fi
exit 0
