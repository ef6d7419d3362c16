#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (a tree of its own in $VNET_TMP, one in-process C test)
#
# The test runner itself (selftests/run.sh): on a tree of its own, a copy of
# run.sh, select.sh and lib.sh with three programs
#   selftests/test_fake.sh   lib.sh cases fake/one, fake/two (two results,
#                            two_b fails with FAKE_FAIL=1), fake/slow (0.5 s)
#   selftests/sub/test_plain.sh  in a folder, no ksft_args: prints
#                            plain/a, then plain/b 0.2 s later, without times
#   build/selftests/test_handover_record   the real C program (test.h)
# and no build/selftests/test_classify.  It lists (-l) and selects (-t, -d)
# across them, repeats (-n), runs two at once (-j), and checks the times,
# the slowest list and the count line; "wrapper" adds, for itself alone,
# selftests/test_wrap.sh, which execs a lib.sh script as the e2e wrappers
# do ("# vnet-test: selects"), and lists the real e2e-faults cases.  Any
# broken selection fails here.
#
#   selftests/test_runner.sh [-l] [-t GLOB]... [CASE...]   (root, as lib.sh's)

# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
KSFT_PREFIX=runner

ALL_CASES="list select repeat times plain all fail parallel none wrapper"

T=$VNET_TMP/tree
HR=$OUT/selftests/test_handover_record

make_tree()
{
	mkdir -p "$T/selftests/sub" "$T/build/selftests" &&
		cp "$VNET_SELFTESTS/run.sh" "$VNET_SELFTESTS/select.sh" \
			"$VNET_SELFTESTS/lib.sh" "$T/selftests/" &&
		ln -s "$(cd "$(dirname "$HR")" && pwd)/$(basename "$HR")" \
			"$T/build/selftests/test_handover_record" || return 1
	cat >"$T/selftests/test_fake.sh" <<'EOF'
#!/bin/bash
# vnet-test: parallel
. "$(dirname "$0")/lib.sh"
KSFT_PREFIX=fake
ALL_CASES="one two slow"
case_one() { pass one; }
case_two()
{
	pass two_a
	if [ "${FAKE_FAIL:-0}" = 1 ]; then fail two_b "made to fail"; else pass two_b; fi
}
case_slow() { sleep 0.5; pass slow; }
ksft_args "$@"
ksft_run :
ksft_exit
EOF
	cat >"$T/selftests/sub/test_plain.sh" <<'EOF'
#!/bin/bash
echo "PASS: plain/a"
sleep 0.2
echo "PASS: plain/b"
EOF
	chmod +x "$T/selftests/test_fake.sh" "$T/selftests/sub/test_plain.sh"
}

# runner ARGS...: the tree's run.sh; RUN_RC, RUN_OUT, RUN_ERR
runner()
{
	run env -u OUT timeout 120 "$T/selftests/run.sh" "$@"
}

has()
{
	grep -qF -- "$1" <<<"$RUN_OUT" && echo yes || echo no
}

# the output's lines as one line of words
words()
{
	paste -sd' ' <<<"$RUN_OUT"
}

count_line()
{
	tail -n 1 <<<"$RUN_OUT"
}

case_list()
{
	runner -l
	expect "-l exit" 0 "$RUN_RC"
	expect "-l: every test, in order" \
		"fake/one fake/two fake/slow plain handover_record/header handover_record/hello handover_record/hello_max handover_record/port handover_record/hello_match handover_record/state handover_record/frame handover_record/fail_reason" \
		"$(words)"
	expect "-l: test_classify not built, said on stderr" yes \
		"$(grep -q 'test_classify: not built' <<<"$RUN_ERR" && echo yes || echo no)"
	runner -l -t 'fake/*' -d fake/two -t 'handover_record/h*'
	expect "-l -t -d" "fake/one fake/slow handover_record/header handover_record/hello handover_record/hello_max handover_record/hello_match" "$(words)"
	runner -l -t fake,plain
	expect "-l: a group, a program that does not select" "fake/one fake/two fake/slow plain" "$(words)"
	runner -l -t 'plain/b*'
	expect "-l: a glob in a program that does not select" "plain" "$(words)"
	report list "$(run_said)"
}

case_select()
{
	runner -t handover_record/hello -t 'fake/t*'
	expect "exit" 0 "$RUN_RC"
	expect "count line" "3 passed, 0 failed, 0 skipped" "$(count_line)"
	expect "the C test, timed" yes "$(has "PASS: handover_record/hello (")"
	expect "only it of its program" no "$(has "handover_record/port")"
	expect "the shell case's results" yes "$(has "PASS: fake/two_b (")"
	expect "not the other cases" no "$(has "fake/one")"
	expect "a program without a selected test is not started" no "$(has "# test_plain")"
	runner test_handover_record -t 'handover_record/*' -d '*/frame'
	expect "PROGRAM and -d: count line" "7 passed, 0 failed, 0 skipped" "$(count_line)"
	expect "PROGRAM: only it" no "$(has "# test_fake")"
	report select "$(run_said)"
}

case_repeat()
{
	runner -n 3 -t fake/one -t handover_record/port
	expect "exit" 0 "$RUN_RC"
	expect "count line" "6 passed, 0 failed, 0 skipped" "$(count_line)"
	expect "runs" 3 "$(grep -c '^# run [123] of 3$' <<<"$RUN_OUT")"
	expect "the shell test's passes" yes "$(has "  fake/one: 3/3")"
	expect "the C test's passes" yes "$(has "  handover_record/port: 3/3")"
	FAKE_FAIL=1 runner -n 2 -t fake/two
	expect "a failing test" yes "$(has "  fake/two_b: 0/2")"
	expect "failing: exit" 1 "$RUN_RC"
	report repeat "$(run_said)"
}

case_times()
{
	local slow

	runner -t fake
	expect "exit" 0 "$RUN_RC"
	slow=$(grep -A1 '^Slowest tests:$' <<<"$RUN_OUT" | tail -n 1)
	expect "the slowest first" yes "$(grep -Eq '^ +[0-9]+\.[0-9]+ s  fake/slow$' <<<"$slow" && echo yes || echo "no: $slow")"
	expect "Slowest tests, then the count line" "4 passed, 0 failed, 0 skipped" \
		"$(sed -n '/^Slowest tests:$/,$p' <<<"$RUN_OUT" | tail -n 1)"
	expect "PASS lines with a time" 4 "$(grep -Ec '^PASS: fake/[a-z_]+ \([0-9]+\.[0-9]+ s\)$' <<<"$RUN_OUT")"
	report times "$(run_said)"
}

case_plain()
{
	runner -t 'plain/b'
	expect "exit" 0 "$RUN_RC"
	expect "count line" "1 passed, 0 failed, 0 skipped" "$(count_line)"
	# 0.2 s since plain/a, or more
	expect "its line, with the runner's time" yes \
		"$(sed -n 's/^PASS: plain\/b (\([0-9]*\.[0-9]*\) s)$/\1/p' <<<"$RUN_OUT" |
			awk '{ exit !($1 >= 0.2) }' && echo yes || echo no)"
	expect "not the line not selected" no "$(has "plain/a")"
	report plain "$(run_said)"
}

case_all()
{
	runner
	expect "exit" 1 "$RUN_RC"
	expect "count line" "14 passed, 1 failed, 0 skipped" "$(count_line)"
	expect "the missing program" yes "$(has "FAIL: test_classify (0.000 s): build/selftests/test_classify is not built (make all)")"
	expect "every program" 3 "$(grep -Ec '^# test_(fake|plain|handover_record)$' <<<"$RUN_OUT")"
	report all "$(run_said)"
}

case_fail()
{
	FAKE_FAIL=1 runner -t fake/two
	expect "exit" 1 "$RUN_RC"
	expect "count line" "1 passed, 1 failed, 0 skipped" "$(count_line)"
	expect "the FAIL line: name, time, reason" yes \
		"$(grep -Eq '^FAIL: fake/two_b \([0-9.]+ s\): made to fail$' <<<"$RUN_OUT" && echo yes || echo no)"
	expect "Failed: its name" yes "$(sed -n '/^Failed:$/,$p' <<<"$RUN_OUT" | grep -qx '  fake/two_b' && echo yes || echo no)"
	report fail "$(run_said)"
}

case_parallel()
{
	local blocks

	runner -j 2 -t fake -t handover_record
	expect "exit" 0 "$RUN_RC"
	expect "count line" "12 passed, 0 failed, 0 skipped" "$(count_line)"
	# each program's lines together: between its "# test_x" and the next
	# program's, only its own results
	blocks=$(awk '/^# test_/ { p = $2 } /^PASS: / { split($2, n, "/"); print p, n[1] }' <<<"$RUN_OUT" | sort -u | tr '\n' ' ')
	expect "output per program" "test_fake fake test_handover_record handover_record " "$blocks"
	report parallel "$(run_said)"
}

case_none()
{
	runner -t 'nothing/*'
	expect "exit" 1 "$RUN_RC"
	expect "count line" "0 passed, 0 failed, 0 skipped" "$(count_line)"
	expect "says so" yes "$(grep -q 'no test matches' <<<"$RUN_ERR" && echo yes || echo no)"
	report none "$(run_said)"
}

case_wrapper()
{
	local w=$T/selftests/test_wrap.sh

	mkdir -p "$T/selftests/wrap" || { fail wrapper "cannot write $T/selftests/wrap"; return; }
	cat >"$T/selftests/wrap/impl.sh" <<'EOF'
#!/bin/bash
. "$(dirname "$0")/../lib.sh"
KSFT_PREFIX=wrap
ALL_CASES="a b"
case_a() { touch "$(dirname "$0")/a.ran"; pass a; }
case_b() { pass b; }
ksft_args "$@"
ksft_run :
ksft_exit
EOF
	cat >"$w" <<'EOF'
#!/bin/bash
# vnet-test: group=wrap selects
exec "$(dirname "$0")/wrap/impl.sh" "$@"
EOF
	chmod +x "$w" "$T/selftests/wrap/impl.sh"
	runner -l -t 'wrap/b'
	expect "-l: the cases of a wrapper that selects" "wrap/b" "$(words)"
	rm -f "$T/selftests/wrap/a.ran"
	runner -t 'wrap/b'
	expect "exit" 0 "$RUN_RC"
	expect "count line" "1 passed, 0 failed, 0 skipped" "$(count_line)"
	expect "the case not selected did not run" no \
		"$([ -e "$T/selftests/wrap/a.ran" ] && echo yes || echo no)"
	rm -rf "$w" "$T/selftests/wrap"
	# the real e2e wrapper lists its scenarios (no guest needed for -l)
	run timeout 60 "$VNET_SELFTESTS/e2e/test_e2e_faults.sh" -l \
		-t 'e2e-faults/migrate-r*'
	expect "test_e2e_faults.sh -l -t" "e2e-faults/migrate-rounds" "$(words)"
	report wrapper "$(run_said)"
}

ksft_args "$@"
require_root test_runner || exit 0
[ -x "$HR" ] || { fail setup "$HR is not built (make all)"; ksft_exit; exit; }
make_tree || { fail setup "cannot make the tree in $T"; ksft_exit; exit; }
ksft_run :
ksft_exit
