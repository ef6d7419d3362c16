# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Helpers for vnet's shell selftests, in the style of the kernel's
# tools/testing/selftests/net/lib.sh.  Source it; it sets `set -u` and an
# EXIT trap that removes every network namespace and every vnet attachment
# the test created.
#
#   ksft_args "$@"          the command line: -l lists the cases, -t/-d GLOB
#                           select them by full name (PREFIX/CASE), CASE...
#   ksft_run [END]          runs the selected cases (case_CASE), END after each
#   ns_create CASE          creates netns vnet-t-CASE-$$, sets $NS
#   tap_create NS DEV       persistent multi-queue vnet_hdr tap, up, no IPv6
#   tap_addr NS DEV         192.0.2.1/24 on DEV, 192.0.2.2 = the guest
#   case_cleanup            undo everything the current case created
#   pass NAME | fail NAME REASON | skip NAME REASON   (PASS/FAIL with the
#                           time since the case began or the last result)
#   expect DESC EXPECTED ACTUAL ... report NAME   one PASS/FAIL per group
#   busywait TIMEOUT_MS CMD...     poll CMD until it succeeds
#   serve_on_port LOG READY CMD...  a server on a random port ($PORT, $PID)
#   unit_cap_mask UNIT      its CapabilityBoundingSet= as CapBnd: prints it
#   run CMD...              $RUN_RC, $RUN_OUT, $RUN_ERR (stdout, stderr)
#   json DOC FILTER [ARGS]  jq -r; json_ok DOC; positive N
#   vnet_stat JSON DIR QUEUE CLASS [packets|bytes]  from `vnetctl -j stats`
#   map_stat DUMP DIR QUEUE CLASS [packets|bytes]   from `map_dump DEV`
#                                   (bpftool), summed over CPUs

# jq filters are single-quoted on purpose: $q, $c are jq variables
# shellcheck disable=SC2016
set -u

VNET_SELFTESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VNET_ROOT=$(cd "$VNET_SELFTESTS/.." && pwd)
# shellcheck source=selftests/select.sh
. "$VNET_SELFTESTS/select.sh"
OUT=${OUT:-$VNET_ROOT/build}
VNETCTL=${VNETCTL:-$OUT/vnetctl}
TAPWRITE=${TAPWRITE:-$OUT/selftests/tapwrite}
PIN_ROOT=/sys/fs/bpf/vnet
VNET_MAX_QUEUES=256
VNET_DIR_TX=0
VNET_DIR_RX=1

# Guest side of every test (see selftests/bpf/tapwrite.c).
HOST_IP=192.0.2.1
GUEST_IP=192.0.2.2
GUEST_MAC=02:00:00:00:00:02

KSFT_PASS=0
KSFT_FAIL=0
KSFT_SKIP=0

# namespaces and "NS DEV" taps created by the current case / ever
_case_ns=()
_case_taps=()
_all_ns=()
_all_taps=()

VNET_TMP=$(mktemp -d /tmp/vnet-selftest.XXXXXX)

# --- results ---------------------------------------------------------------

# test names are KSFT_PREFIX/NAME when the test sets KSFT_PREFIX
_name()
{
	echo "${KSFT_PREFIX:+$KSFT_PREFIX/}$1"
}

# when the last result (or the case) began, for the time of the next one
sel_now
_ksft_t0=$SEL_NOW

# _ksft_took: $SEL_SECS := the time since _ksft_t0, which moves to now
_ksft_took()
{
	sel_now
	sel_secs $((SEL_NOW - _ksft_t0))
	_ksft_t0=$SEL_NOW
}

# _ksft_shown NAME: a script without cases (ALL_CASES) runs whole; with -t
# or -d it prints the results that the selection names, and only those
_ksft_filter=0
_ksft_shown()
{
	[ "$_ksft_filter" = 0 ] || sel_selected "$1"
}

# _ksft_result KIND NAME [REASON...]: the line of a result (PASS, FAIL or
# SKIP) and its count, when the selection shows NAME
_ksft_result()
{
	local kind=$1 name

	name=$(_name "$2")
	shift 2
	_ksft_shown "$name" || return 0
	_ksft_took
	case $kind in
	PASS)
		echo "PASS: $name ($SEL_SECS s)"
		KSFT_PASS=$((KSFT_PASS + 1)) ;;
	FAIL)
		echo "FAIL: $name ($SEL_SECS s): $(echo "$*" | tr '\n' ' ' | sed 's/ *$//')"
		KSFT_FAIL=$((KSFT_FAIL + 1)) ;;
	SKIP)
		echo "SKIP: $name: $*"
		KSFT_SKIP=$((KSFT_SKIP + 1)) ;;
	esac
}

pass()
{
	_ksft_result PASS "$1"
}

# fail NAME REASON...: the reason is printed on one line
fail()
{
	_ksft_result FAIL "$@"
}

skip()
{
	_ksft_result SKIP "$@"
}

# check NAME REASON CMD...: pass if CMD succeeds, else fail with REASON
check()
{
	local name=$1 reason=$2

	shift 2
	if "$@"; then
		pass "$name"
	else
		fail "$name" "$reason"
	fi
}

# expect DESC EXPECTED ACTUAL: collect a mismatch for `report`
_mismatch=""
expect()
{
	[ "$2" = "$3" ] || _mismatch+="$1: expected $2, got $3; "
}

# report NAME [CONTEXT]: pass NAME if every expect since the last report
# held, else fail NAME listing the mismatches (and CONTEXT)
report()
{
	if [ -z "$_mismatch" ]; then
		pass "$1"
	else
		fail "$1" "${_mismatch% } ${2:-}"
	fi
	_mismatch=""
}

# exit status for the test program: 1 if anything failed
ksft_exit()
{
	[ "$KSFT_FAIL" -eq 0 ]
}

# --- the command line -------------------------------------------------------

# The full name of a case: PREFIX/CASE, PREFIX being KSFT_PREFIX or the
# script's name without test_ (test_attach.sh: attach/CASE).
_ksft_group()
{
	local b

	b=$(basename "$0" .sh)
	echo "${KSFT_PREFIX:-${b#test_}}"
}

# ksft_args "$@": a script's command line, in the manner of test.h's
# test_main() (selftests/run.sh lists and selects through it):
#   -l          print the full name (PREFIX/CASE) of each selected case of
#               ALL_CASES, run nothing, exit 0
#   -t GLOB     the cases GLOB matches (-a the same; several, or GLOB,GLOB)
#   -d GLOB     not those
#   -v          VNET_VERBOSE=1
#   CASE...     these cases, by their short name
# Sets KSFT_CASES, the cases to run (ALL_CASES's order for -t).  A script
# without ALL_CASES is one test named PREFIX: -l prints it, and -t/-d
# choose which of its results it prints (select.sh).  Call it before
# require_root: listing needs nothing.
KSFT_CASES=()
ksft_args()
{
	local opt list=0 c g OPTIND cases=()

	# options before, between and after the CASEs
	while [ $# -gt 0 ]; do
		OPTIND=1
		while getopts "lt:a:d:vh" opt; do
			case $opt in
			l) list=1 ;;
			t | a) sel_allow "$OPTARG" ;;
			d) sel_deny "$OPTARG" ;;
			v) VNET_VERBOSE=1 ;;
			*)
				echo "usage: $0 [-l] [-v] [-t GLOB]... [-d GLOB]... [CASE...]" >&2
				exit 2
				;;
			esac
		done
		shift $((OPTIND - 1))
		if [ $# -gt 0 ]; then
			cases+=("$1")
			shift
		fi
	done
	set -- ${cases[@]+"${cases[@]}"}
	g=$(_ksft_group)
	if [ -z "${ALL_CASES:-}" ]; then
		sel_active && _ksft_filter=1
		if [ $list = 1 ]; then
			sel_selected "$g" && echo "$g"
			exit 0
		fi
		return 0
	fi
	# shellcheck disable=SC2086 # a list of words
	[ $# -gt 0 ] || set -- $ALL_CASES
	for c in "$@"; do
		sel_selected "$g/$c" || continue
		if [ $list = 1 ]; then
			echo "$g/$c"
		else
			KSFT_CASES+=("$c")
		fi
	done
	[ $list = 0 ] || exit 0
}

# ksft_run [END]: runs case_CASE for each of KSFT_CASES, then END (default
# case_cleanup, ":" for nothing): a case's first result has its time from
# the case's start
ksft_run()
{
	local c end=${1:-case_cleanup}

	for c in ${KSFT_CASES[@]+"${KSFT_CASES[@]}"}; do
		if ! declare -F "case_$c" >/dev/null; then
			fail "$c" "no such case (cases: $ALL_CASES)"
			continue
		fi
		sel_now
		_ksft_t0=$SEL_NOW
		"case_$c"
		"$end"
	done
}

# --- prerequisites -----------------------------------------------------------

# require_root NAME: true if root, else prints a SKIP line for NAME
require_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		skip "$1" "needs root"
		return 1
	fi
}

# require_cmd NAME CMD...: true if every CMD is in $PATH or executable
require_cmd()
{
	local name=$1 c

	shift
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1 && ! [ -x "$c" ]; then
			skip "$name" "$c not found"
			return 1
		fi
	done
}

# unit_cap_mask UNIT: CapabilityBoundingSet= of a systemd unit file as
# /proc/PID/status prints CapBnd: (16 hex digits)
unit_cap_mask()
{
	local c want=0

	for c in $(sed -n 's/^CapabilityBoundingSet=//p' "$1" | tail -n 1); do
		want=$((want | 1 << $(grep -o "#define $c\s*[0-9]*" /usr/include/linux/capability.h | awk '{print $3}')))
	done
	printf '%016x\n' "$want"
}

# --- polling and commands ------------------------------------------------------

now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# busywait TIMEOUT_MS CMD...: run CMD every 50 ms until it succeeds (0) or
# TIMEOUT_MS passes (1).  CMD runs at least once.
busywait()
{
	local timeout=$1 deadline

	shift
	deadline=$(($(now_ms) + timeout))
	while :; do
		"$@" && return 0
		[ "$(now_ms)" -ge "$deadline" ] && return 1
		sleep 0.05
	done
}

# rand_port: a TCP port from 20000 to 59999, at random
rand_port()
{
	echo $((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000))
}

# serve_on_port LOG READY CMD...: CMD in the background, every @PORT@ in
# its words a port drawn at random, its output into LOG, until READY PORT
# succeeds within 5 s while CMD runs (ours answering, not another server
# on a port we drew); up to five ports.  Sets PORT and PID (procs_add);
# 1 if none served.
serve_on_port()
{
	local log=$1 ready=$2 args a

	shift 2
	for _ in 1 2 3 4 5; do
		PORT=$(rand_port)
		args=()
		for a in "$@"; do args+=("${a//@PORT@/$PORT}"); done
		"${args[@]}" >"$log" 2>&1 &
		PID=$!
		procs_add "$PID"
		busywait 5000 "$ready" "$PORT" && kill -0 "$PID" 2>/dev/null && return 0
		kill "$PID" 2>/dev/null
		wait "$PID" 2>/dev/null
	done
	return 1
}

# run CMD...: runs CMD; sets RUN_RC, RUN_OUT (stdout) and RUN_ERR (stderr)
run()
{
	"$@" >"$VNET_TMP/out" 2>"$VNET_TMP/err"
	RUN_RC=$?
	RUN_OUT=$(cat "$VNET_TMP/out")
	RUN_ERR=$(cat "$VNET_TMP/err")
	return 0
}

# vnetctl ARGS...: the binary under test, bounded in time (rc 124 on timeout)
vnetctl()
{
	timeout 30 "$VNETCTL" "$@"
}

# what run printed, for a failure message
run_said()
{
	echo "rc=$RUN_RC stdout='$(echo "$RUN_OUT" | head -c 400)' stderr='$(echo "$RUN_ERR" | head -c 400)'"
}

# --- JSON ----------------------------------------------------------------------

# positive N: N is an integer > 0 (quietly false for empty, null, text)
positive()
{
	[[ "${1:-}" =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]
}

# json JSON FILTER [jq args...]: jq -r FILTER on JSON; fails if JSON does not
# parse or the filter errors
json()
{
	local doc=$1 filter=$2

	shift 2
	printf '%s' "$doc" | jq -r "$@" "$filter" 2>/dev/null
}

# json_ok JSON: JSON is one valid JSON document
json_ok()
{
	printf '%s' "$1" | jq -e . >/dev/null 2>&1
}

# vnet_stat JSON DIR QUEUE CLASS [packets|bytes]: a counter from the output
# of `vnetctl -j stats DEV`; 0 when the queue is not listed
vnet_stat()
{
	json "$1" '[.queues[] | select(.dir == $d and .queue == $q) | .[$c][$f]] | add // 0' \
		--arg d "$2" --argjson q "$3" --arg c "$4" --arg f "${5:-packets}"
}

# map_dump DEV: `bpftool -j map dump` of DEV's pinned stats map
map_dump()
{
	bpftool -j map dump pinned "$PIN_ROOT/$1/stats"
}

# map_stat DUMP DIR QUEUE CLASS [packets|bytes]: counter at key
# vnet_key(dir, queue) = dir * 256 + queue of a map_dump, summed over CPUs
map_stat()
{
	local dir=$VNET_DIR_TX

	[ "$2" = rx ] && dir=$VNET_DIR_RX
	json "$1" '[.[] | .formatted // . | select(.key == $k) | .values[].value[$c][$f]] | add // 0' \
		--argjson k $((dir * VNET_MAX_QUEUES + $3)) --arg c "$4" \
		--arg f "${5:-packets}"
}

# --- the exporter --------------------------------------------------------------

# exporter_landing PORT: vnetctl exporter's landing page answers on PORT
exporter_landing()
{
	curl -sf "http://127.0.0.1:$1/" | grep -q 'vnet exporter'
}

# exporter_start: vnetctl exporter on a free loopback port ($EPORT, $EPID;
# its log $VNET_TMP/exporter.log), killed by end_case
exporter_start()
{
	serve_on_port "$VNET_TMP/exporter.log" exporter_landing \
		"$VNETCTL" exporter --listen "127.0.0.1:@PORT@" || return 1
	EPORT=$PORT
	EPID=$PID
}

# --- namespaces and taps -------------------------------------------------------

# rand_tap: a unique tap name (pins are global: /sys/fs/bpf/vnet/DEV)
rand_tap()
{
	echo "vt$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
}

# ns_create CASE: creates netns vnet-t-CASE-$$ with lo up and sets NS
ns_create()
{
	NS="vnet-t-$1-$$"
	ip netns add "$NS" || return 1
	_case_ns+=("$NS")
	_all_ns+=("$NS")
	ip -n "$NS" link set lo up
}

# tap_create NS DEV: a persistent multi-queue tap with a virtio_net_hdr
# (what libvirt creates for vhost-net), IPv6 off so that the host sends
# nothing on its own, link up.  Queues appear as tapwrite opens them.
tap_create()
{
	local ns=$1 dev=$2

	ip -n "$ns" tuntap add dev "$dev" mode tap multi_queue vnet_hdr ||
		return 1
	_case_taps+=("$ns $dev")
	_all_taps+=("$ns $dev")
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1" \
		>/dev/null 2>&1
	ip -n "$ns" link set "$dev" up
}

# tap_case CASE: a fresh netns for CASE ($NS, ns_create) with a new tap $DEV
tap_case()
{
	DEV=$(rand_tap)
	ns_create "$1" && tap_create "$NS" "$DEV"
}

# attached_case CASE [OPTION...]: tap_case CASE, then vnetctl attach $DEV
# (with OPTIONs); false when a step failed ($RUN_* say why)
attached_case()
{
	tap_case "$1" || return 1
	run vnetctl -n "$NS" attach "$DEV" "${@:2}"
	[ "$RUN_RC" -eq 0 ]
}

# refuses_unattached WHAT CMD...: `vnetctl -n $NS CMD... TAP` on a new tap
# of $NS that vnet is not attached to (its name in OTHER) exits 1 with an
# error naming the fix ("vnet is not attached"); WHAT starts the checks'
# names
refuses_unattached()
{
	local what=$1

	shift
	OTHER=$(rand_tap)
	tap_create "$NS" "$OTHER"
	run vnetctl -n "$NS" "$@" "$OTHER"
	expect "$what exit" 1 "$RUN_RC"
	expect "$what message" yes "$(grep -q "vnet is not attached" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
}

# tap_addr NS DEV: the host end of the guest link: 192.0.2.1/24 on DEV and a
# permanent neighbour entry for the guest (no ARP on the wire)
tap_addr()
{
	ip -n "$1" addr add "$HOST_IP/24" dev "$2" &&
		ip -n "$1" neigh replace "$GUEST_IP" lladdr "$GUEST_MAC" \
			dev "$2" nud permanent
}

# pins_exist DEV / pins_gone DEV
pins_exist()
{
	[ -d "$PIN_ROOT/$1" ]
}

pins_gone()
{
	! [ -e "$PIN_ROOT/$1" ]
}

_cleanup_taps()
{
	local t ns dev

	for t in "$@"; do
		ns=${t% *}
		dev=${t#* }
		"$VNETCTL" -n "$ns" detach "$dev" >/dev/null 2>&1
		# the device may be gone with its netns already
		[ -e "$PIN_ROOT/$dev" ] && "$VNETCTL" detach "$dev" >/dev/null 2>&1
		# last resort, so that a broken detach leaks no pins
		[ -n "$dev" ] && [ -e "$PIN_ROOT/$dev" ] && rm -rf "${PIN_ROOT:?}/$dev"
	done
}

_cleanup_ns()
{
	local ns

	for ns in "$@"; do
		ip netns del "$ns" >/dev/null 2>&1
	done
}

# processes a case started: procs_add PID... has end_case kill (TERM) and
# reap them (procs_kill); procs_forget when the case reaped them itself
_procs=()
procs_add()
{
	_procs+=("$@")
}

procs_forget()
{
	_procs=()
}

# procs_kill [SIG]: the processes procs_add listed continued (one may be
# stopped), sent SIG (default TERM) and reaped; the list emptied
procs_kill()
{
	local pid

	for pid in ${_procs[@]+"${_procs[@]}"}; do
		kill -CONT "$pid" 2>/dev/null
		kill -"${1:-TERM}" "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	_procs=()
}

# end_case: the case's processes stopped, its taps and netns removed
end_case()
{
	procs_kill
	case_cleanup
}

# case_cleanup: detach and delete what the current case created
case_cleanup()
{
	_cleanup_taps ${_case_taps[@]+"${_case_taps[@]}"}
	_cleanup_ns ${_case_ns[@]+"${_case_ns[@]}"}
	_case_taps=()
	_case_ns=()
}

_cleanup_all()
{
	_cleanup_taps ${_all_taps[@]+"${_all_taps[@]}"}
	_cleanup_ns ${_all_ns[@]+"${_all_ns[@]}"}
	rm -rf "$VNET_TMP"
}

trap _cleanup_all EXIT
trap 'exit 130' INT TERM
