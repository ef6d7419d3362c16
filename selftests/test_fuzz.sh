#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# test_fuzz: the libFuzzer targets of fuzz/ (docs/robustness.md), briefly.
# Per target:
#   fuzz/TARGET/replay       every corpus input (seed-*, cov-*) runs clean
#   fuzz/TARGET/crash-NAME   each reproducer of a bug found runs clean now
#   fuzz/TARGET/run          VNET_FUZZ_SECS seconds (default 5) of fuzzing
#                            from the corpus find no crash
# A reproducer or a crash whose oracle says "known issue" (a bug being
# fixed apart: the oracle still trips, and names it) is reported on a
# "# known issue:" line and not counted; VNET_FUZZ_STRICT=1 counts it as a
# failure.  fuzz_classify needs root and BPF (SKIP without).  A target that
# is not built (clang's fuzzer runtime missing) fails as root and is
# skipped otherwise.

set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build}
SECS=${VNET_FUZZ_SECS:-5}
STRICT=${VNET_FUZZ_STRICT:-0}
mapfile -t TARGETS < <(fuzz/run.sh --list)
failed=0
tmp=$(mktemp -d /tmp/vnet-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; failed=1; }
skip() { echo "SKIP: $1: $2"; }

# known NAME OUTPUT-FILE: the oracle named a known issue (else false)
known()
{
	local why

	why=$(grep -m1 -E '^ORACLE: [^ ]+ known issue' "$2") || return 1
	if [ "$STRICT" = 1 ]; then
		fail "$1" "${why#ORACLE: }"
	else
		echo "# known issue: $1: ${why#ORACLE: }"
	fi
	return 0
}

# why OUTPUT-FILE: the line that says what went wrong
why()
{
	grep -m1 -E '^(ORACLE|SUMMARY|==[0-9]+==ERROR): ' "$1" ||
		tail -n 1 "$1"
}

for t in "${TARGETS[@]}"; do
	bin=$OUT/fuzz/$t
	if [ ! -x "$bin" ]; then
		msg="$bin is not built: clang's fuzzer runtime (Debian libclang-rt-14-dev, scripts/bootstrap.sh) missing? make fuzzers"
		if [ "$(id -u)" -eq 0 ]; then
			fail "fuzz/$t" "$msg"
		else
			skip "fuzz/$t" "$msg"
		fi
		continue
	fi
	if [ "$t" = fuzz_classify ]; then
		if [ "$(id -u)" -ne 0 ]; then
			skip "fuzz/$t" "needs root (loads the classifier, BPF_PROG_TEST_RUN)"
			continue
		fi
		"$bin" -runs=1 -artifact_prefix="$tmp/" </dev/null >"$tmp/probe" 2>&1
		if grep -q 'is not loaded' "$tmp/probe"; then
			fail "fuzz/$t" "the vnet skeleton does not load here: $(grep -m1 'not loaded' "$tmp/probe")"
			continue
		fi
	fi

	# the corpus, each input once
	mapfile -t inputs < <(find "fuzz/corpus/$t" -type f ! -name 'crash-*' | sort)
	if [ ${#inputs[@]} -eq 0 ]; then
		fail "fuzz/$t/replay" "fuzz/corpus/$t is empty (fuzz/gen-corpus.sh)"
	elif "$bin" "${inputs[@]}" >"$tmp/out" 2>&1; then
		pass "fuzz/$t/replay"
	else
		fail "fuzz/$t/replay" "$(why "$tmp/out")"
	fi

	# the reproducers of what was found
	while IFS= read -r c; do
		name=fuzz/$t/$(basename "$c")
		if "$bin" "$c" >"$tmp/out" 2>&1; then
			pass "$name"
		elif ! known "$name" "$tmp/out"; then
			fail "$name" "$(why "$tmp/out")"
		fi
	done < <(find "fuzz/corpus/$t" -type f -name 'crash-*' | sort)

	# a short run from the corpus; crashes are replayed to say why
	mkdir -p "$tmp/$t/work" "$tmp/$t/art"
	cp "${inputs[@]}" "$tmp/$t/work/" 2>/dev/null
	"$bin" -fork=1 -ignore_crashes=1 -close_fd_mask=3 \
		-max_total_time="$SECS" -artifact_prefix="$tmp/$t/art/" \
		"$tmp/$t/work" >"$tmp/$t/log" 2>&1
	ok=1
	for c in "$tmp/$t/art"/crash-*; do
		[ -e "$c" ] || continue
		"$bin" "$c" >"$tmp/out" 2>&1
		known "fuzz/$t/run" "$tmp/out" && continue
		ok=0
		fail "fuzz/$t/run" "$(why "$tmp/out") (input: $(base64 -w0 "$c" | head -c 400))"
		break
	done
	last=$(grep -E '^#[0-9]+: ' "$tmp/$t/log" | tail -n 1)
	if [ $ok = 1 ] && [ -z "$last" ]; then
		fail "fuzz/$t/run" "no progress line from libFuzzer: $(tail -n 1 "$tmp/$t/log")"
	elif [ $ok = 1 ]; then
		echo "# fuzz/$t/run: $(echo "$last" | sed -E 's/^#([0-9]+):.* exec\/s ([0-9]+).*/\1 executions, \2 exec\/s/')"
		pass "fuzz/$t/run"
	fi
done
exit $failed
