#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnetd's sandbox (docs/vnetd.md, "Sandbox"): once set up, every thread
# runs under seccomp (Seccomp: 2 in /proc/PID/task/*/status), the queue
# threads without capabilities, the control thread with the few it keeps;
# a vhost-user frontend (bench_vnetd_io's vufe guest) moves frames both
# ways, twice (a reconnect), under the filters; --no-sandbox leaves every
# thread unfiltered; --user switches every thread's uid; a forbidden
# syscall (the test-only VNETD_TEST_SECCOMP_VIOLATION) is logged with its
# name and thread and ends vnetd with status 159.  Each case runs in its
# own network namespace.  Needs root.
#
#   selftests/vnetd/test_sandbox.sh [CASE...]
#
# VNETD (default build/vnetd-asan, the datapath tests' daemon: ASan's own
# syscalls are on the lists too; a test build, whose switch the violation
# cases need) and VNETD_PLAIN (build/vnetd) name the daemons under test.

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=sandbox
VNETD=${VNETD:-$OUT/vnetd-asan}
VNETD_PLAIN=${VNETD_PLAIN:-$OUT/vnetd}
IO=${IO:-$OUT/bench/bench_vnetd_io}

ALL_CASES="serves serves_plain no_netns no_sandbox user violation_queue violation_control uring_restricted socket_group usage"

# capabilities (linux/capability.h)
CAP_DAC_OVERRIDE=1
CAP_NET_ADMIN=12
CAP_SYS_ADMIN=21
CAP_PERFMON=38
CAP_BPF=39

trap 'end_case; _cleanup_all' EXIT

# capmask CAP...: the CapEff hex /proc prints for exactly these
capmask()
{
	local m=0 c

	for c in "$@"; do
		m=$((m | (1 << c)))
	done
	printf '%016x' "$m"
}

# start NAME ARGS...: vnetd ($BIN, default $VNETD) for tap $TAP in $NS,
# socket $SOCK, log $LOG; $PID.  Waits (bounded) for its sandbox line.
start()
{
	local name=$1

	shift
	TAP=$(rand_tap)
	SOCK=$VNET_TMP/$name.sock
	LOG=$VNET_TMP/$name.log
	_case_taps+=("$NS $TAP")
	${PREFIX_CMD:-} "${BIN:-$VNETD}" --socket "$SOCK" --tap "$TAP" "$@" >"$LOG" 2>&1 &
	PID=$!
	procs_add "$PID"
	busywait 20000 grep -q "sandbox" "$LOG"
}

# traffic: guest TX and RX through vnetd (bench_vnetd_io fails on a lost
# frame), then again on a new connection (the frontend reconnects)
traffic()
{
	run timeout 60 "$IO" signals --socket "$SOCK" --netns "$NS" --tap "$TAP" --frames 64
	[ "$RUN_RC" = 0 ] || return 1
	run timeout 60 "$IO" signals --socket "$SOCK" --netns "$NS" --tap "$TAP" --frames 64
	[ "$RUN_RC" = 0 ]
}

# status_of TASKDIR FIELD: the field's value (first column)
status_of()
{
	awk -v f="$2:" '$1 == f { print $2 }' "$1/status" 2>/dev/null
}

# threads: "comm seccomp capeff uid" per thread of $PID
threads()
{
	local t

	for t in /proc/"$PID"/task/*; do
		echo "$(cat "$t/comm" 2>/dev/null) $(status_of "$t" Seccomp) $(status_of "$t" CapEff) $(status_of "$t" Uid)"
	done
}

stop()
{
	kill -TERM "$PID" 2>/dev/null
	wait "$PID"
	STOP_RC=$?
	procs_forget
}

# check_threads QUEUES SECCOMP CONTROL_CAPS QUEUE_CAPS UID: every thread
check_threads()
{
	local want_q=$1 sec=$2 ccap=$3 qcap=$4 uid=$5 comm s c u nq=0 nc=0

	while read -r comm s c u; do
		case $comm in
		vnetd-q*)
			nq=$((nq + 1))
			expect "$comm Seccomp" "$sec" "$s"
			expect "$comm CapEff" "$qcap" "$c"
			;;
		vnetd)
			nc=$((nc + 1))
			expect "$comm Seccomp" "$sec" "$s"
			expect "$comm CapEff" "$ccap" "$c"
			;;
		*)
			expect "no other thread" "" "$comm"
			;;
		esac
		expect "$comm uid" "$uid" "$u"
	done < <(threads)
	expect "queue threads" "$want_q" "$nq"
	expect "control threads" 1 "$nc"
}

# a clean exit: status 0, no sanitizer report, the pins removed
check_exit()
{
	stop
	expect "exit status" 0 "$STOP_RC"
	expect "sanitizer reports" 0 "$(grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$LOG")"
	expect "forbidden syscalls" 0 "$(grep -c 'forbidden syscall' "$LOG")"
	expect "pins removed" yes "$(pins_gone "$TAP" && echo yes || echo no)"
	expect "socket removed" yes "$([ -e "$SOCK" ] && echo no || echo yes)"
	expect "io_uring in use" 0 "$(grep -c 'plain read/writev' "$LOG")"
}

serves_with()
{
	local name=$1

	ns_create "$name" || { fail "${name}_setup" "cannot create netns"; return; }
	start "$name" --netns "$NS" --queues 2 ||
		{ fail "$name" "no sandbox line: $(head -c 600 "$LOG")"; end_case; return; }
	check_threads 2 2 "$(capmask $CAP_NET_ADMIN $CAP_SYS_ADMIN $CAP_PERFMON $CAP_BPF)" \
		0000000000000000 0
	report "${name}_threads" "$(threads | tr '\n' ';')"
	traffic
	expect "traffic and reconnect" 0 "$RUN_RC"
	report "${name}_traffic_reconnect" "$(run_said) $(tail -c 600 "$LOG")"
	# still filtered after the traffic
	check_threads 2 2 "$(capmask $CAP_NET_ADMIN $CAP_SYS_ADMIN $CAP_PERFMON $CAP_BPF)" \
		0000000000000000 0
	check_exit
	report "${name}_exit" "$(tail -c 600 "$LOG")"
	end_case
}

# vnetd-asan (default) and vnetd: filtered, capabilities dropped, serving
case_serves()
{
	BIN=$VNETD serves_with serves
}

case_serves_plain()
{
	BIN=$VNETD_PLAIN serves_with plain
}

# no --netns port: no setns() later, so CAP_SYS_ADMIN goes too
case_no_netns()
{
	ns_create nons || { fail nons_setup "cannot create netns"; return; }
	PREFIX_CMD="nsenter --net=/var/run/netns/$NS" start nons ||
		{ fail no_netns "no sandbox line: $(head -c 600 "$LOG")"; end_case; return; }
	check_threads 1 2 "$(capmask $CAP_NET_ADMIN $CAP_PERFMON $CAP_BPF)" \
		0000000000000000 0
	report no_netns_caps "$(threads | tr '\n' ';')"
	traffic
	expect "traffic" 0 "$RUN_RC"
	check_exit
	report no_netns_traffic_exit "$(run_said) $(tail -c 600 "$LOG")"
	end_case
}

# --no-sandbox: no filter, every capability vnetd started with
case_no_sandbox()
{
	local all

	all=$(status_of /proc/self CapEff)
	ns_create nosb || { fail nosb_setup "cannot create netns"; return; }
	start nosb --netns "$NS" --no-sandbox ||
		{ fail no_sandbox "no sandbox line: $(head -c 600 "$LOG")"; end_case; return; }
	expect "says so" yes "$(grep -q 'sandbox off (--no-sandbox)' "$LOG" && echo yes || echo no)"
	check_threads 1 0 "$all" "$all" 0
	report no_sandbox_threads "$(threads | tr '\n' ';')"
	traffic
	expect "traffic" 0 "$RUN_RC"
	check_exit
	report no_sandbox_traffic_exit "$(run_said) $(tail -c 600 "$LOG")"
	end_case
}

# --user: every thread switches; the control thread keeps DAC_OVERRIDE
# for the root-owned pins and sockets it removes at the end
case_user()
{
	local user=nobody uid

	uid=$(id -u "$user" 2>/dev/null) || { user=65534; uid=65534; }
	ns_create user || { fail user_setup "cannot create netns"; return; }
	start user --netns "$NS" --user "$user" ||
		{ fail user "no sandbox line: $(head -c 600 "$LOG")"; end_case; return; }
	check_threads 1 2 "$(capmask $CAP_DAC_OVERRIDE $CAP_NET_ADMIN $CAP_SYS_ADMIN $CAP_PERFMON $CAP_BPF)" \
		0000000000000000 "$uid"
	expect "process uid (ps)" "$uid" "$(ps -o uid= -p "$PID" | tr -d ' ')"
	report user_threads "$(threads | tr '\n' ';')"
	traffic
	expect "traffic" 0 "$RUN_RC"
	check_exit
	report user_traffic_exit "$(run_said) $(tail -c 600 "$LOG")"
	end_case
}

# violation CASE WHO THREAD: the forbidden syscall is named, with its
# thread, and vnetd exits 159 at once
violation()
{
	local name=$1 who=$2 thread=$3

	ns_create "$name" || { fail "${name}_setup" "cannot create netns"; return; }
	VNETD_TEST_SECCOMP_VIOLATION=$who start "$name" --netns "$NS"
	# the line comes from the SIGSYS handler, then the process is gone
	busywait 20000 grep -q "forbidden syscall" "$LOG"
	busywait 5000 eval '! kill -0 "$PID" 2>/dev/null'
	wait "$PID"
	expect "exit status" 159 "$?"
	procs_forget
	expect "names thread and syscall" yes \
		"$(grep -qE "sandbox: thread $thread made a forbidden syscall [0-9]+ \(personality\): vnetd exits \(status 159\)" "$LOG" && echo yes || echo no)"
	report "$name" "$(tail -c 600 "$LOG")"
	end_case
}

case_violation_queue()
{
	violation viol_q queue vnetd-q0
}

case_violation_control()
{
	violation viol_c control vnetd
}

# the queue thread's ring runs only tap reads and writes: an OPENAT
# submitted through it (test-only trigger) is refused under the sandbox,
# and done without it (the trigger itself works)
case_uring_restricted()
{
	local sb

	for sb in on off; do
		ns_create "uring$sb" || { fail uring_setup "cannot create netns"; return; }
		if [ "$sb" = on ]; then
			VNETD_TEST_SECCOMP_VIOLATION=uring start "uring$sb" --netns "$NS"
		else
			VNETD_TEST_SECCOMP_VIOLATION=uring start "uring$sb" --netns "$NS" --no-sandbox
		fi
		busywait 20000 grep -q "io_uring OPENAT" "$LOG"
		if [ "$sb" = on ]; then
			expect "sandbox: refused" yes "$(grep -q 'io_uring OPENAT from vnetd-q0: Permission denied' "$LOG" && echo yes || echo no)"
		else
			expect "no sandbox: done" yes "$(grep -q 'io_uring OPENAT from vnetd-q0: done (not restricted)' "$LOG" && echo yes || echo no)"
		fi
		traffic
		expect "traffic ($sb)" 0 "$RUN_RC"
		check_exit
		report "uring_restricted_$sb" "$(run_said) $(tail -c 600 "$LOG")"
		end_case
	done
}

# --socket-group sets the control thread's egid around bind(), after the
# queue threads are in their sandbox: they must not see it
case_socket_group()
{
	ns_create sgrp || { fail sgrp_setup "cannot create netns"; return; }
	start sgrp --netns "$NS" --socket-group 65534 --socket-mode 0660 ||
		{ fail socket_group "no sandbox line: $(head -c 600 "$LOG")"; end_case; return; }
	expect "socket group" 65534 "$(stat -c %g "$SOCK" 2>/dev/null)"
	expect "sandboxed" 2 "$(status_of "/proc/$PID" Seccomp)"
	traffic
	expect "traffic" 0 "$RUN_RC"
	check_exit
	report socket_group "$(run_said) $(tail -c 600 "$LOG")"
	end_case
}

# bad --user: a usage error before anything is set up
case_usage()
{
	run timeout 10 "$VNETD_PLAIN" --socket "$VNET_TMP/u.sock" --tap vtnone0 --user no-such-user-vnet
	expect "exit" 2 "$RUN_RC"
	expect "message" yes "$(grep -q -- "--user 'no-such-user-vnet': no such user" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run timeout 10 "$VNETD_PLAIN" --agent vtnone0 --user nobody
	expect "--agent --user exit" 2 "$RUN_RC"
	run timeout 10 "$VNETD_PLAIN" --socket "$VNET_TMP/u.sock" --tap vtnone0 --user nobody --no-sandbox
	expect "--no-sandbox --user exit" 2 "$RUN_RC"
	expect "--no-sandbox --user message" yes "$(grep -q -- "--user is part of the sandbox" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	run "$VNETD_PLAIN" --help
	expect "--help lists --no-sandbox" yes "$(grep -qF -- "--no-sandbox" <<<"$RUN_OUT" && echo yes || echo no)"
	expect "vnetd(8) documents --no-sandbox" yes "$(sed 's/\\-/-/g' "$VNET_ROOT/docs/vnetd.8" | grep -qF -- "--no-sandbox" && echo yes || echo no)"
	expect "vnetd(8) documents --user" yes "$(sed 's/\\-/-/g' "$VNET_ROOT/docs/vnetd.8" | grep -qF -- "--user" && echo yes || echo no)"
	report usage "$(run_said)"
}

main()
{
	ksft_args "$@"
	require_root sandbox || { ksft_exit; return; }
	require_cmd sandbox "$VNETD" "$VNETD_PLAIN" "$IO" || { ksft_exit; return; }
	ksft_run :
	ksft_exit
}

main "$@"
