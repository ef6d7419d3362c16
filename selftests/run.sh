#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet's test runner (`make check`).  Runs build/selftests/test_classify,
# every selftests/test_*.sh and every other build/selftests/test_* program,
# each under a timeout, echoes their output and counts their
#   PASS: name | FAIL: name: reason | SKIP: name: reason
# lines.  A program that crashes, times out, or exits non-zero without a
# FAIL line counts as one failure named after the program.  Ends with
#   N passed, N failed, N skipped
# and exits 1 if anything failed.  Not as root, the shell tests that need it
# (those built on selftests/lib.sh) are skipped with a SKIP line each.
# As root (CI: BPF, netns, taps, DPDK and QEMU are all there) a SKIP is a
# failure: a skip is a reason, never a way to pass.  VNET_ALLOW_SKIP=1
# lets a root developer without DPDK or QEMU see the rest pass.
#
#   selftests/run.sh [PROGRAM...]    PROGRAM: test_classify, test_attach, ...
#
# Environment: OUT (build directory, default build), VNET_TEST_TIMEOUT
# (seconds per program, default 300).

set -u

cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build}
TIMEOUT=${VNET_TEST_TIMEOUT:-300}
export OUT

passed=0
failed=0
skipped=0
failed_names=()
skipped_names=()
tmp=$(mktemp /tmp/vnet-run.XXXXXX)
trap 'rm -f "$tmp"' EXIT

is_root()
{
	[ "$(id -u)" -eq 0 ]
}

# needs_root PATH: shell tests built on lib.sh create network namespaces
# and attach BPF programs.  Test binaries check for themselves (test.h's
# test_have_root_bpf prints their SKIP lines), as do the other scripts.
needs_root()
{
	case $1 in
	*.sh) grep -Eq 'lib\.sh|require_root' "$1" ;;
	*) return 1 ;;
	esac
}

count_fail()
{
	echo "FAIL: $1: $2"
	failed=$((failed + 1))
	failed_names+=("$1")
}

# run_one NAME CMD...
run_one()
{
	local name=$1 rc nfail line

	shift
	if ! is_root && needs_root "$1"; then
		echo "SKIP: $name: needs root (creates network namespaces, attaches BPF programs)"
		skipped=$((skipped + 1))
		skipped_names+=("$name: needs root")
		return
	fi
	echo "# $name"
	local limit=$TIMEOUT
	# the real-guest scenarios boot QEMU (TCG) fifteen times: ~3.5 min here,
	# plus the guest build on a fresh machine
	[ "$name" = test_e2e ] && limit=$((TIMEOUT * 3))
	# ten guests (kill -9 of vnetd and of QEMU, a deleted tap, and two
	# migrations of two QEMUs each)
	[ "$name" = test_e2e_faults ] && limit=$((TIMEOUT * 4))
	# builds the Debian package from a copy of the tree (BPF objects,
	# both binaries with the distribution's hardening flags)
	[ "$name" = test_deb ] && limit=$((TIMEOUT * 2))
	# a private libvirtd probes QEMU's capabilities before the guest boots
	[ "$name" = test_libvirt ] && limit=$((TIMEOUT * 2))
	timeout --kill-after=10 "$limit" "$@" </dev/null 2>&1 | tee "$tmp"
	rc=${PIPESTATUS[0]}

	nfail=0
	while IFS= read -r line; do
		case $line in
		"PASS: "*)
			passed=$((passed + 1))
			;;
		"FAIL: "*)
			failed=$((failed + 1))
			nfail=$((nfail + 1))
			line=${line#FAIL: }
			failed_names+=("${line%%: *}")
			;;
		"SKIP: "*)
			skipped=$((skipped + 1))
			skipped_names+=("${line#SKIP: }")
			;;
		esac
	done <"$tmp"

	if [ "$rc" -eq 124 ]; then
		count_fail "$name" "timed out after ${limit}s"
	elif [ "$rc" -gt 128 ]; then
		count_fail "$name" "crashed: killed by signal $((rc - 128))"
	elif [ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ]; then
		count_fail "$name" "exited with status $rc without a FAIL line"
	elif ! grep -Eq '^(PASS|FAIL|SKIP): ' "$tmp"; then
		count_fail "$name" "printed no PASS/FAIL/SKIP line"
	fi
}

# run_prog PATH: a test program, found or reported missing
run_prog()
{
	local path=$1 name

	name=$(basename "$path" .sh)
	if [ ! -x "$path" ]; then
		if [ "$path" = "${path%.sh}" ]; then
			count_fail "$name" "$path is not built (make all)"
		else
			count_fail "$name" "$path is not executable"
		fi
		return
	fi
	run_one "$name" "$path"
}

progs=("$OUT/selftests/test_classify")
for f in selftests/test_*.sh "$OUT"/selftests/test_*; do
	[ -e "$f" ] || continue
	case $f in
	*.o | *.d | "$OUT/selftests/test_classify") continue ;;
	esac
	[ -f "$f" ] || continue
	progs+=("$f")
done

for p in "${progs[@]}"; do
	if [ $# -gt 0 ]; then
		want=no
		for a in "$@"; do
			[ "$(basename "$p" .sh)" = "$(basename "$a" .sh)" ] && want=yes
		done
		[ $want = yes ] || continue
	fi
	run_prog "$p"
done

if [ "$skipped" -gt 0 ] && is_root && [ "${VNET_ALLOW_SKIP:-0}" != 1 ]; then
	count_fail run.sh "$skipped test(s) skipped as root; as root every test must run (install what the SKIP lines name, scripts/bootstrap.sh does; VNET_ALLOW_SKIP=1 to accept)"
fi

echo
if [ "${#skipped_names[@]}" -gt 0 ]; then
	echo "Skipped:"
	for s in "${skipped_names[@]}"; do
		echo "  $s"
	done
fi
if [ "${#failed_names[@]}" -gt 0 ]; then
	echo "Failed:"
	for s in "${failed_names[@]}"; do
		echo "  $s"
	done
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
