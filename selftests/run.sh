#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet's test runner (`make check`), in the manner of the kernel's
# tools/testing/selftests/bpf test_progs, over every test program: the C
# programs build/selftests/test_* (test.h's test_main()) and the scripts
# selftests/test_*.sh and selftests/FOLDER/test_*.sh (lib.sh's ksft_args).
# Each program runs under a timeout; its output is echoed, its lines
#   PASS: name (1.8 s) | FAIL: name (1.8 s): reason | SKIP: name: reason
# counted (a line without a time gets the one the runner saw).  A program
# that crashes, times out, or exits non-zero without a FAIL line counts as
# one failure named after the program.  Ends with the ten slowest tests and
#   N passed, N failed, N skipped
# and exits 1 if anything failed.  Not as root, the shell tests that need it
# (those built on selftests/lib.sh) are skipped with a SKIP line each.
# As root (CI: BPF, netns, taps, DPDK and QEMU are all there) a SKIP is a
# failure: a skip is a reason, never a way to pass.  VNET_ALLOW_SKIP=1
# lets a root developer without DPDK or QEMU see the rest pass.
#
#   selftests/run.sh [-l] [-t GLOB]... [-a GLOB]... [-d GLOB]... [-n N]
#                    [-j N] [-v] [PROGRAM...]
#
#   -l        list the selected tests' names (every program's), run nothing
#   -t GLOB   run the tests GLOB matches (-a the same; several, or
#             GLOB,GLOB): a glob on the full name group/test, '*' crossing
#             '/', matching a group too: -t slice, -t 'slice/*',
#             -t 'vnetd/takeover*', -t 'vnetd/packed'
#   -d GLOB   not the tests GLOB matches
#   -n N      run the selection N times; then each test's passes (K/N)
#   -j N      up to N programs at once among those that can share the
#             machine (PARALLEL below, "# vnet-test: parallel" in a
#             script); their output is printed whole when each ends.  The
#             others run alone, after them.
#   -v        verbose: passed on to every program
#   PROGRAM   only these programs (test_classify, test_attach, ...)
#
# A test is a registered C test (test.h), or a case of a script (its full
# name PREFIX/CASE, `selftests/cli/test_gc.sh -l` lists them); a program
# asks for its names with -l and runs a selection with -t/-d (a script through
# lib.sh's ksft_args, or one that says "# vnet-test: selects": the e2e
# wrappers).  A program with no selected test is not started.  A script
# that selects nothing itself (test_docs, ...) is one test named by its
# group (KSFT_PREFIX, or "# vnet-test: group=NAME", or its name without
# test_): a GLOB whose first component matches the group runs it whole, and
# the runner keeps only its result lines that the selection names.
#
# Environment: OUT (build directory, default build), VNET_TEST_TIMEOUT
# (seconds per program, default 300).

set -u

cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build}
TIMEOUT=${VNET_TEST_TIMEOUT:-300}
export OUT
# shellcheck source=selftests/select.sh
. selftests/select.sh

# the C programs that share a machine with anything (no netns, tap or
# daemon of a shared name; in-process, or BPF test runs on their own maps)
PARALLEL="test_vhost_unit test_packed_unit test_policy test_notify_rule test_handover_record"

usage()
{
	sed -n '/^#   selftests\/run.sh/,/^#   PROGRAM/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

list=0
reps=1
jobs_max=1
verbose=()
programs=()
# options before, between and after the PROGRAMs
while [ $# -gt 0 ]; do
	OPTIND=1
	while getopts "lt:a:d:n:j:vh" opt; do
		case $opt in
		l) list=1 ;;
		t | a) sel_allow "$OPTARG" ;;
		d) sel_deny "$OPTARG" ;;
		n) reps=$OPTARG ;;
		j) jobs_max=$OPTARG ;;
		v) verbose=(-v) ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	if [ $# -gt 0 ]; then
		programs+=("$1")
		shift
	fi
done
set -- ${programs[@]+"${programs[@]}"}
[[ $reps =~ ^[1-9][0-9]*$ ]] || usage
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || usage
# what every program that selects gets: the runner's -t/-d
sel_args=()
for g in ${SEL_ALLOW[@]+"${SEL_ALLOW[@]}"}; do sel_args+=(-t "$g"); done
for g in ${SEL_DENY[@]+"${SEL_DENY[@]}"}; do sel_args+=(-d "$g"); done

passed=0
failed=0
skipped=0
failed_names=()
skipped_names=()
tmp=$(mktemp -d /tmp/vnet-run.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# every result: STATUS NAME SECONDS REASON, separated by \037 (the runs
# of -n too)
: >"$tmp/results"

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

# selects PATH: the program lists and selects its tests (-l, -t, -d)
selects()
{
	case $1 in
	*.sh) grep -Eq '^[[:space:]]*ksft_args |^# vnet-test:.*\<selects\>' "$1" ;;
	*) return 0 ;;
	esac
}

# group PATH: the one test name of a program that does not select
group()
{
	local g

	g=$(sed -n 's/^# vnet-test:.*group=\([^ ]*\).*/\1/p' "$1" | head -n 1)
	[ -n "$g" ] || g=$(sed -n 's/^KSFT_PREFIX=\([a-z0-9_-]*\)$/\1/p' "$1" | head -n 1)
	[ -n "$g" ] || { g=$(basename "$1" .sh) && g=${g#test_}; }
	echo "$g"
}

parallel_ok()
{
	case $1 in
	*.sh) grep -Eq '^# vnet-test:.*\<parallel\>' "$1" ;;
	*) [[ " $PARALLEL " == *" $(basename "$1") "* ]] ;;
	esac
}

# names PATH: the selected tests of PATH, one a line; false if it cannot
# say (the reason on stdout)
names()
{
	local out rc

	if ! selects "$1"; then
		if sel_selected "$(group "$1")"; then group "$1"; fi
		return 0
	fi
	out=$(timeout 60 "$1" -l ${sel_args[@]+"${sel_args[@]}"} </dev/null 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "$1 -l exited with status $rc: $(echo "$out" | tail -n 1)"
		return 1
	fi
	[ -z "$out" ] || echo "$out"
}

# annotate FILTER RESULTS: copies a program's output, adding the runner's
# time to a PASS/FAIL line without one (the time since the program's
# previous result, or its start), and appends each result to RESULTS.
# FILTER=1 (a program that does not select, and a selection) drops the
# result lines that the selection does not name.  Also appends "seen N",
# the number of result lines, filtered or not.
annotate()
{
	local filter=$1 res=$2 line st rest name secs tail t0 seen=0

	sel_now
	t0=$SEL_NOW
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		"PASS: "* | "FAIL: "* | "SKIP: "*) ;;
		*)
			printf '%s\n' "$line"
			continue
			;;
		esac
		seen=$((seen + 1))
		st=${line%%: *}
		rest=${line#*: }
		if [[ $rest =~ ^([^ ]+)\ \(([0-9]+\.[0-9]+)\ s\)(: (.*))?$ ]]; then
			name=${BASH_REMATCH[1]}
			secs=${BASH_REMATCH[2]}
			tail=${BASH_REMATCH[4]}
			sel_now
		else
			name=${rest%%: *}
			tail=${rest#"$name"}
			tail=${tail#: }
			sel_now
			sel_secs $((SEL_NOW - t0))
			secs=$SEL_SECS
			if [ "$st" = SKIP ]; then
				secs=""
			elif [ "$st" = PASS ]; then
				line="PASS: $name ($secs s)${tail:+: $tail}"
			else
				line="FAIL: $name ($secs s): $tail"
			fi
		fi
		t0=$SEL_NOW
		[ "$st" = SKIP ] && secs=""
		if [ "$filter" = 1 ] && ! sel_selected "$name"; then
			continue
		fi
		printf '%s\n' "$line"
		printf '%s\037%s\037%s\037%s\n' "$st" "$name" "$secs" "$tail" >>"$res"
	done
	echo "seen $seen" >>"$res.seen"
}

# prog_fail NAME SECS REASON: the result line of a program that failed as a
# whole (to stdout and to $res)
prog_fail()
{
	echo "FAIL: $1 ($2 s): $3"
	printf 'FAIL\037%s\037%s\037%s\n' "$1" "$2" "$3" >>"$res"
}

# run_one NAME PATH RES [TEST...]: runs the program PATH, its output (and
# the runner's lines about it) to stdout, its results to RES.  TEST...: its
# selected tests (a selection is active), for the SKIP lines of a program
# that cannot run here.
run_one()
{
	local name=$1 path=$2 res=$3 rc seen nfail limit t0 t why filter=0
	local args=()

	shift 3
	: >"$res"
	: >"$res.seen"
	if [ ! -x "$path" ]; then
		if [ "$path" = "${path%.sh}" ]; then
			prog_fail "$name" 0.000 "$path is not built (make all)"
		else
			prog_fail "$name" 0.000 "$path is not executable"
		fi
		return
	fi
	if [ -e "$res.nolist" ]; then
		prog_fail "$name" 0.000 "cannot list its tests: $(cat "$res.nolist")"
		return
	fi
	if ! is_root && needs_root "$path"; then
		[ $# -gt 0 ] || set -- "$name"
		why="needs root (creates network namespaces, attaches BPF programs)"
		for t in "$@"; do
			echo "SKIP: $t: $why"
			printf 'SKIP\037%s\037\037%s\n' "$t" "$why" >>"$res"
		done
		return
	fi
	echo "# $name"
	limit=$TIMEOUT
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
	if selects "$path"; then
		args=(${sel_args[@]+"${sel_args[@]}"} ${verbose[@]+"${verbose[@]}"})
	elif sel_active; then
		filter=1
	fi
	sel_now
	t0=$SEL_NOW
	{
		timeout --kill-after=10 "$limit" "$path" ${args[@]+"${args[@]}"} </dev/null 2>&1
		echo $? >"$res.rc"
	} | annotate "$filter" "$res"
	rc=$(cat "$res.rc")
	sel_now
	sel_secs $((SEL_NOW - t0))
	seen=$(sed -n 's/^seen //p' "$res.seen")
	nfail=$(grep -c '^FAIL' "$res")
	if [ "$rc" -eq 124 ]; then
		prog_fail "$name" "$SEL_SECS" "timed out after ${limit}s"
	elif [ "$rc" -gt 128 ]; then
		prog_fail "$name" "$SEL_SECS" "crashed: killed by signal $((rc - 128))"
	elif [ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ]; then
		prog_fail "$name" "$SEL_SECS" "exited with status $rc without a FAIL line"
	elif [ "${seen:-0}" -eq 0 ]; then
		prog_fail "$name" "$SEL_SECS" "printed no PASS/FAIL/SKIP line"
	fi
}

# count RES: adds a program's results to the totals
count()
{
	local st name secs why

	while IFS=$'\037' read -r st name secs why; do
		case $st in
		PASS) passed=$((passed + 1)) ;;
		FAIL)
			failed=$((failed + 1))
			failed_names+=("$name")
			;;
		SKIP)
			skipped=$((skipped + 1))
			skipped_names+=("$name: $why")
			;;
		esac
	done <"$1"
	cat "$1" >>"$tmp/results"
}

# --- the programs --------------------------------------------------------------

# the scripts selftests/test_*.sh and selftests/FOLDER/test_*.sh in the
# order of their names, wherever their folder; then the C programs
progs=("$OUT/selftests/test_classify")
mapfile -t scripts < <(for f in selftests/test_*.sh selftests/*/test_*.sh; do
	[ -e "$f" ] && printf '%s\t%s\n' "$(basename "$f")" "$f"
done | sort | cut -f 2)
for f in ${scripts[@]+"${scripts[@]}"} "$OUT"/selftests/test_*; do
	[ -e "$f" ] || continue
	case $f in
	*.o | *.d | "$OUT/selftests/test_classify") continue ;;
	esac
	[ -f "$f" ] || continue
	progs+=("$f")
done

sel=()
for p in "${progs[@]}"; do
	if [ $# -gt 0 ]; then
		want=no
		for a in "$@"; do
			[ "$(basename "$p" .sh)" = "$(basename "$a" .sh)" ] && want=yes
		done
		[ $want = yes ] || continue
	fi
	sel+=("$p")
done

# with a selection (or -l), each program's selected tests: $tmp/names.I
if sel_active || [ $list = 1 ]; then
	keep=()
	for i in "${!sel[@]}"; do
		p=${sel[$i]}
		if [ ! -x "$p" ]; then
			echo "# $(basename "$p" .sh): not built or not executable, its tests unknown" >&2
			continue
		fi
		if ! names "$p" >"$tmp/names.$i"; then
			if [ $list = 1 ]; then
				echo "# $(cat "$tmp/names.$i")" >&2
			else
				# a program that cannot list its tests is broken
				mv "$tmp/names.$i" "$tmp/res.$i.nolist"
				keep+=("$i")
			fi
			continue
		fi
		[ -s "$tmp/names.$i" ] && keep+=("$i")
	done
	if [ $list = 1 ]; then
		for i in "${keep[@]}"; do
			cat "$tmp/names.$i"
		done
		exit 0
	fi
else
	keep=("${!sel[@]}")
fi

# run_index I: runs sel[I], results in $tmp/res.I
# reap_one: wait for one of the parallel programs in running[], print
# its output whole and count its results
reap_one()
{
	local done_pid j

	wait -n -p done_pid
	j=${running[$done_pid]}
	unset "running[$done_pid]"
	cat "$tmp/out.$j"
	count "$tmp/res.$j"
}

run_index()
{
	local i=$1 tests=()

	[ -s "$tmp/names.$i" ] && mapfile -t tests <"$tmp/names.$i"
	run_one "$(basename "${sel[$i]}" .sh)" "${sel[$i]}" "$tmp/res.$i" \
		${tests[@]+"${tests[@]}"}
}

for ((rep = 1; rep <= reps; rep++)); do
	[ "$reps" -gt 1 ] && echo "# run $rep of $reps"
	serial=()
	par=()
	for i in ${keep[@]+"${keep[@]}"}; do
		if [ "$jobs_max" -gt 1 ] && parallel_ok "${sel[$i]}"; then
			par+=("$i")
		else
			serial+=("$i")
		fi
	done
	# -j: the programs that share the machine, N at a time, each printed
	# whole when it ends
	declare -A running=()
	for i in ${par[@]+"${par[@]}"}; do
		while [ "${#running[@]}" -ge "$jobs_max" ]; do
			reap_one
		done
		run_index "$i" >"$tmp/out.$i" &
		running[$!]=$i
	done
	while [ "${#running[@]}" -gt 0 ]; do
		reap_one
	done
	for i in ${serial[@]+"${serial[@]}"}; do
		run_index "$i"
		count "$tmp/res.$i"
	done
done

if [ "$skipped" -gt 0 ] && is_root && [ "${VNET_ALLOW_SKIP:-0}" != 1 ]; then
	why="$skipped test(s) skipped as root; as root every test must run (install what the SKIP lines name, scripts/bootstrap.sh does; VNET_ALLOW_SKIP=1 to accept)"
	echo "FAIL: run.sh: $why"
	failed=$((failed + 1))
	failed_names+=("run.sh")
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
if [ "$reps" -gt 1 ]; then
	echo "Passed, of $reps runs:"
	awk -F$'\037' -v n="$reps" '
		!($2 in seen) { seen[$2]; order[++k] = $2 }
		$1 == "PASS" { pass[$2]++ }
		END { for (i = 1; i <= k; i++) printf "  %s: %d/%d\n", order[i], pass[order[i]], n }
	' "$tmp/results"
fi
# the ten slowest results (of a test run several times, its slowest)
if awk -F$'\037' '$3 != "" { f = 1 } END { exit !f }' "$tmp/results"; then
	echo "Slowest tests:"
	awk -F$'\037' '$3 != "" && (!($2 in t) || $3 + 0 > t[$2] + 0) { t[$2] = $3 }
		END { for (n in t) printf "%s\t%s\n", t[n], n }' "$tmp/results" |
		sort -t$'\t' -k1,1gr -k2,2 | head -n 10 |
		awk -F'\t' '{ printf "  %8s s  %s\n", $1, $2 }'
fi
echo "$passed passed, $failed failed, $skipped skipped"
if sel_active && [ $((passed + failed + skipped)) -eq 0 ]; then
	echo "no test matches the selection (selftests/run.sh -l lists them)" >&2
	exit 1
fi
[ "$failed" -eq 0 ]
