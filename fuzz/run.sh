#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# fuzz/run.sh [TARGET...]: run each libFuzzer target (default: all five)
# for FUZZ_SECS seconds (default 60) with FUZZ_JOBS jobs (default 1), at
# the lowest priority (nice 19, SCHED_IDLE).  Each grows its working
# corpus $OUT/fuzz/work/TARGET, seeded from fuzz/corpus/TARGET (the
# crash-* reproducers excepted), and keeps what crashes in
# $OUT/fuzz/artifacts/TARGET/.  libFuzzer runs in fork mode and goes on
# after a crash, so a known issue does not end a campaign.  Prints per
# target:
#   TARGET: N executions in S s (E exec/s), corpus C, crashes K
# and the oracle line of each crash; exits 1 if anything crashed.
#
# fuzz/run.sh --list: the targets' names, one a line.
#
# Environment: OUT (default build), FUZZ_SECS, FUZZ_JOBS, and what the
# targets read (FUZZ_RX_MAX_SEGS, see fuzz/fuzz_rx.c).

set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build}
SECS=${FUZZ_SECS:-60}
JOBS=${FUZZ_JOBS:-1}
ALL=(fuzz_vhost_user fuzz_virtq fuzz_rx fuzz_classify fuzz_config)
if [ "${1:-}" = --list ]; then
	printf '%s\n' "${ALL[@]}"
	exit 0
fi

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL[@]}")
rc=0
for t in "${targets[@]}"; do
	bin=$OUT/fuzz/$t
	work=$OUT/fuzz/work/$t
	art=$OUT/fuzz/artifacts/$t
	log=$OUT/fuzz/$t.log
	if [ ! -x "$bin" ]; then
		echo "Error: $bin is not built (make fuzzers; it needs clang's fuzzer runtime)" >&2
		rc=1
		continue
	fi
	mkdir -p "$work" "$art"
	find "fuzz/corpus/$t" -type f ! -name 'crash-*' -exec cp -n {} "$work/" \;
	nice -n 19 chrt -i 0 "$bin" -fork="$JOBS" -ignore_crashes=1 \
		-close_fd_mask=3 -max_total_time="$SECS" \
		-artifact_prefix="$art/" "$work" >"$log" 2>&1
	# fork mode: "#N: cov: .. ft: .. corp: C exec/s E oom/timeout/crash: .."
	last=$(grep -E '^#[0-9]+: ' "$log" | tail -n 1)
	execs=$(echo "$last" | sed -E 's/^#([0-9]+):.*/\1/')
	eps=$(echo "$last" | sed -nE 's/.* exec\/s ([0-9]+).*/\1/p')
	corp=$(find "$work" -type f | wc -l)
	crashes=$(find "$art" -type f -name 'crash-*' | wc -l)
	echo "$t: ${execs:-0} executions in ${SECS} s (${eps:-0} exec/s), corpus $corp, crashes $crashes"
	while IFS= read -r c; do
		why=$("$bin" "$c" 2>&1 | grep -E '^(ORACLE|SUMMARY): ' | head -n 1)
		echo "  $c: ${why:-no oracle line (see $log)}"
		rc=1
	done < <(find "$art" -type f -name 'crash-*')
done
exit $rc
