#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# What an operator meets first: vnetctl's messages and hints, vnetd's
# start-up checks, its socket's group and mode, its log severities, its
# systemd readiness (the sd_notify datagrams), SIGHUP (a warning, vnetd
# serves on) and SIGTERM, and `make deps`.
# Every case runs in its own network namespace with its own tap.  Needs
# root, jq, bpftool, iproute2.
#
#   selftests/operator/test_operator.sh [CASE...]    (default: every case)
#
# VNETCTL and VNETD name the binaries under test (default build/).

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=operator
VNETD=${VNETD:-$OUT/vnetd}
UNIXSOCK=${UNIXSOCK:-$OUT/selftests/unixsock}
IO=${IO:-$OUT/bench/bench_vnetd_io}

ALL_CASES="hints cli_words netns_exec attach_mode_stats map_keys_documented status_netns tap_kind_warnings tx_hook_switch ifname_limit vnetd_config_lines vnetd_socket_dir vnetd_cpus vnetd_socket_perm vnetd_log vnetd_notify vnetd_reload libvirt_hook make_deps"

trap 'end_case; _cleanup_all' EXIT

# op_case CASE [ATTACH-OPTION...]: case CASE's tap, attached (with the
# OPTIONs); false (CASE_setup or CASE_attach failed) if not
op_case()
{
	local c=$1

	shift
	tap_case "$c" || { fail "${c}_setup" "cannot create netns/tap"; return 1; }
	run vnetctl -n "$NS" attach "$DEV" "$@"
	[ "$RUN_RC" = 0 ] || { fail "${c}_attach" "$(run_said)"; end_case; return 1; }
}

yesno()
{
	"$@" && echo yes || echo no
}

# tap_exists DEV: DEV is a device in $NS
tap_exists()
{
	ip -n "$NS" link show "$1" >/dev/null 2>&1
}

tap_gone()
{
	! tap_exists "$1"
}

# has TEXT REGEX: yes if TEXT matches REGEX (grep -E), else "no: TEXT"
has()
{
	grep -qE -- "$2" <<<"$1" && echo yes || echo "no: $(head -c 300 <<<"$1")"
}

# lacks TEXT REGEX
lacks()
{
	grep -qE -- "$2" <<<"$1" && echo "no: $(head -c 300 <<<"$1")" || echo yes
}

# --- hints name the namespace in use, never a placeholder already given ---

case_hints()
{
	local ns1 dev1 obj=$OUT/bpf/bench_empty.bpf.o

	tap_case hints || { fail hints_setup "cannot create netns/tap"; return; }

	# -n given: no "use -n NETNS" for a device that is not there
	run vnetctl -n "$NS" attach vtnosuchdev0
	expect "exit" 1 "$RUN_RC"
	expect "names the namespace" yes "$(has "$RUN_ERR" "in network namespace $NS")"
	expect "does not suggest -n again" yes "$(lacks "$RUN_ERR" "-n NETNS")"
	report hint_no_device_in_netns "$(run_said)"

	# not attached yet: the hint to attach names the namespace (vnetctl's
	# -n, and vnetd --agent's --netns, both in vnetctl's words)
	run vnetctl -n "$NS" stats "$DEV"
	expect "exit" 1 "$RUN_RC"
	expect "attach hint with -n" yes "$(has "$RUN_ERR" "run 'vnetctl -n $NS attach $DEV'")"
	run timeout 10 "$VNETD" --agent "$DEV" --netns "$NS"
	expect "agent exit" 1 "$RUN_RC"
	expect "agent's attach hint with -n" yes "$(has "$RUN_ERR" "run 'vnetctl -n $NS attach $DEV'")"
	report hint_attach_names_netns "$(run_said)"

	# from the host: the namespace that has the tap, never a placeholder
	# (PID 1's namespace may be unreadable: containers)
	run vnetctl attach "$DEV"
	expect "exit" 1 "$RUN_RC"
	expect "names the tap's namespace" yes "$(has "$RUN_ERR" "network namespace $NS has one: use 'vnetctl -n $NS ...'")"
	expect "no placeholder" yes "$(lacks "$RUN_ERR" "NETNS")"
	run timeout 10 "$VNETD" --agent "$DEV"
	expect "agent: names the tap's namespace" yes "$(has "$RUN_ERR" "network namespace $NS has one: add --netns $NS")"
	expect "agent: no placeholder" yes "$(lacks "$RUN_ERR" "NETNS")"
	run vnetctl attach vtnosuchdev0
	expect "no such device anywhere: no placeholder" yes "$(lacks "$RUN_ERR" "NETNS")"
	report hint_host_names_tap_netns "$(run_said)"
	run vnetctl -n "$NS" attach "$DEV"
	run vnetctl coalesce show "$DEV"
	expect "coalesce show exit" 0 "$RUN_RC"
	expect "the tap's value is read there" yes "$(has "$RUN_OUT" "$DEV is in network namespace $NS: 'vnetctl -n $NS coalesce show $DEV'")"
	expect "coalesce show: no placeholder" yes "$(lacks "$RUN_OUT" "NETNS")"
	report hint_coalesce_show_from_host "$(run_said)"
	run vnetctl -n "$NS" detach "$DEV"

	# loopback: "not a tap", not an ethtool errno
	run vnetctl -n "$NS" attach lo
	expect "exit" 1 "$RUN_RC"
	expect "not a tap" yes "$(has "$RUN_ERR" "lo: not a tap device")"
	expect "no ethtool errno" yes "$(lacks "$RUN_ERR" "Operation not supported")"
	report hint_lo_not_a_tap "$(run_said)"

	# a foreign XDP program: the fix names -n NS and --tx-hook xdp
	ip -n "$NS" link set dev "$DEV" xdp obj "$obj" sec xdp ||
		{ fail hints_setup "ip link set xdp obj failed"; end_case; return; }
	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp
	expect "exit" 1 "$RUN_RC"
	expect "fix with -n and --tx-hook xdp" yes \
		"$(has "$RUN_ERR" "vnetctl -n $NS attach $DEV --tx-hook xdp --force")"
	report hint_foreign_xdp "$(run_said)"
	ip -n "$NS" link set dev "$DEV" xdp off

	# pins of a same-named tap in another netns: detach it *there*, by name
	run vnetctl -n "$NS" attach "$DEV"
	[ "$RUN_RC" = 0 ] || { fail hints_attach "$(run_said)"; end_case; return; }
	ns1=$NS
	dev1=$DEV
	ns_create hints2 && tap_create "$NS" "$dev1" ||
		{ fail hints_setup "second netns"; end_case; return; }
	run vnetctl -n "$NS" attach "$dev1"
	expect "exit" 1 "$RUN_RC"
	expect "names the other netns" yes "$(has "$RUN_ERR" "vnetctl -n $ns1 detach $dev1")"
	report hint_other_netns_pins "$(run_said)"
	end_case
}

# --- words: options, prefixes, ambiguity, help ------------------------------

case_cli_words()
{
	local n

	op_case words || return

	run vnetctl -n "$NS" stats "$DEV" --watch
	n=$(grep -c . <<<"$RUN_ERR")
	expect "exit" 2 "$RUN_RC"
	expect "lines with Error:" 1 "$(grep -c '^Error:' <<<"$RUN_ERR")"
	expect "says --watch needs a value" yes "$(has "$RUN_ERR" "'--watch' needs a value")"
	expect "stderr lines (error + usage)" 2 "$n"
	report watch_without_value_one_error "$(run_said)"

	run vnetctl -n "$NS" status --bogus
	expect "exit" 2 "$RUN_RC"
	expect "unknown option" yes "$(has "$RUN_ERR" "unknown option '--bogus'")"
	report status_option_not_a_device "$(run_said)"

	run vnetctl -n "$NS" detach --bogus
	expect "exit" 2 "$RUN_RC"
	expect "still attached" yes "$(yesno pins_exist "$DEV")"
	report detach_option_not_a_device "$(run_said)"

	run vnetctl -n "$NS" coalesce sh "$DEV"
	expect "exit" 0 "$RUN_RC"
	expect "shows" yes "$(has "$RUN_OUT" "$DEV")"
	report coalesce_prefix "$(run_said)"
	run vnetctl -n "$NS" coalesce s "$DEV"
	expect "exit" 2 "$RUN_RC"
	expect "ambiguous" yes "$(has "$RUN_ERR" "ambiguous subcommand 's'")"
	report coalesce_prefix_ambiguous "$(run_said)"

	run vnetctl -n "$NS" st "$DEV"
	expect "exit" 2 "$RUN_RC"
	expect "lists the candidates" yes "$(has "$RUN_ERR" "ambiguous command 'st': could be status, stats")"
	report ambiguous_lists_candidates "$(run_said)"

	# -j: errors are JSON documents on stdout too (bpftool's way)
	run vnetctl -j stats vtnosuchdev0
	expect "-j error exit" 1 "$RUN_RC"
	expect "-j error: one JSON object" "object" "$(json "$RUN_OUT" 'type')"
	expect "-j error message" yes "$(has "$(json "$RUN_OUT" '.error')" "^vtnosuchdev0: vnet is not attached")"
	expect "-j error: stderr as ever" yes "$(has "$RUN_ERR" "^Error: vtnosuchdev0: vnet is not attached")"
	run vnetctl -p st "$DEV"
	expect "-p usage error exit" 2 "$RUN_RC"
	expect "-p usage error" yes "$(has "$(json "$RUN_OUT" '.error')" "ambiguous command 'st'")"
	run vnetctl -j --bogus
	expect "-j unknown option" yes "$(has "$(json "$RUN_OUT" '.error')" "unknown option '--bogus'")"
	run vnetctl -j stats "$DEV" --prometheus
	expect "-j --prometheus: JSON error" yes "$(has "$(json "$RUN_OUT" '.error')" "two formats")"
	run vnetctl stats vtnosuchdev0
	expect "without -j: stdout empty" "" "$RUN_OUT"
	report json_errors_on_stdout "$(run_said)"

	# the JSON's schema version: printed, and the one the contract documents
	run vnetctl -j --version
	expect "schema version is the documented one" \
		"$(sed -n 's/^The JSON is versioned: \*\*schema version \([0-9]*\)\*\*.*/\1/p' "$VNET_ROOT/docs/cli-contract.md")" \
		"$(json "$RUN_OUT" '.json_schema')"
	expect "name" vnetctl "$(json "$RUN_OUT" '.name')"
	expect "abi" yes "$(yesno positive "$(json "$RUN_OUT" '.abi')")"
	report json_schema_version "$(run_said)"

	# every command of --help has a description, gc included
	run vnetctl --help
	expect "gc described" yes "$(has "$(grep -A1 '^  gc' <<<"$RUN_OUT")" "remove the pins")"
	for c in attach detach status stats gc coalesce help; do
		expect "$c has a summary line" 1 \
			"$(awk -v c="$c" '$1 == c && /^  [a-z]/ { getline; print (/^           [a-z]/ ? 1 : 0) }' <<<"$RUN_OUT")"
	done
	report help_describes_every_command "$(run_said)"
	end_case
}

# --- under `ip netns exec`: the bpffs explanation, not "not attached" ---------

case_netns_exec()
{
	local cmd

	op_case nsexec || return
	for cmd in "stats $DEV" "status $DEV" "detach $DEV" "gc" "coalesce show $DEV" "attach $DEV"; do
		# shellcheck disable=SC2086
		run ip netns exec "$NS" "$VNETCTL" $cmd
		expect "'$cmd' exit" 1 "$RUN_RC"
		expect "'$cmd' explains bpffs" yes "$(has "$RUN_ERR" "bpffs is not mounted .*ip netns exec")"
		expect "'$cmd' names the fix" yes "$(has "$RUN_ERR" "vnetctl -n $NS ")"
	done
	expect "still attached" yes "$(yesno pins_exist "$DEV")"
	report netns_exec_explains_bpffs "$(run_said)"

	# vnetd's hint is in vnetd's words (--netns), and it creates nothing
	run timeout 10 ip netns exec "$NS" "$VNETD" --socket "$VNET_TMP/nsexec.sock" --tap vtnsexec0
	expect "vnetd exit" 1 "$RUN_RC"
	expect "vnetd hint" yes "$(has "$RUN_ERR" "with --netns $NS")"
	expect "no vnetctl hint to vnetd" yes "$(lacks "$RUN_ERR" "vnetctl -n")"
	report vnetd_hint_netns "$(run_said)"
	end_case
}

# --- stats in attach mode: no datapath rows of zeros ---------------------------

case_attach_mode_stats()
{
	op_case amstats || return
	"$TAPWRITE" -n "$NS" -d "$DEV" -q 2 send 0 push 2 >/dev/null
	run vnetctl -n "$NS" stats "$DEV"
	expect "exit" 0 "$RUN_RC"
	expect "classifier rows" yes "$(has "$RUN_OUT" "^0 +tx +push +2 ")"
	expect "no datapath rows" yes "$(lacks "$RUN_OUT" "datapath|notify")"
	report attach_mode_no_datapath_rows "$(run_said)"
	run vnetctl -n "$NS" -j stats "$DEV"
	expect "JSON keeps the datapath object" 0 "$(json "$RUN_OUT" '.queues[0].datapath.frames')"
	report attach_mode_json_datapath "$(run_said)"
	end_case
}

# --- the stats map's keys as vnetctl.8 explains them: its bpftool line works ---

case_map_keys_documented()
{
	local line want got

	tap_case mapkeys || { fail mapkeys_setup "cannot create netns/tap"; return; }
	run vnetctl -n "$NS" attach "$DEV"
	"$TAPWRITE" -n "$NS" -d "$DEV" -q 2 send 1 push 3 send 0 push 1 >/dev/null
	# the man page's example, unescaped, on this tap
	line=$(grep -F 'bpftool \-j map lookup pinned' "$VNET_ROOT/docs/vnetctl.8" | head -n1 |
		sed 's/\\-/-/g; s/^# //')
	expect "the man page has the line" yes "$([ -n "$line" ] && echo yes || echo no)"
	got=$(sh -c "${line//vnet0/$DEV}" 2>&1)
	want=$(vnet_stat "$(vnetctl -j stats "$DEV")" tx 1 push)
	expect "tx queue 1 push packets" "3" "$want"
	expect "the documented lookup reads them" "$want" "$got"
	report man_map_key_lookup "$line -> $got"
	end_case
}

# --- attach: a tap unlike a VMM's (single queue, no vnet_hdr) is said ----------

case_tap_kind_warnings()
{
	local sq

	tap_case tapkind || { fail tapkind_setup "cannot create netns/tap"; return; }
	sq=$(rand_tap)
	ip -n "$NS" tuntap add dev "$sq" mode tap && _case_taps+=("$NS $sq") ||
		{ fail tapkind_setup "cannot create a single-queue tap"; end_case; return; }
	run vnetctl -n "$NS" attach "$sq"
	expect "attached all the same" 0 "$RUN_RC"
	expect "pins" yes "$(yesno pins_exist "$sq")"
	expect "single-queue warning" yes "$(has "$RUN_ERR" "^Warning: $sq is a single-queue tap")"
	expect "vnet_hdr warning" yes "$(has "$RUN_ERR" "^Warning: $sq has no vnet_hdr")"
	run vnetctl -n "$NS" attach "$DEV"
	expect "a VMM's kind of tap: no warning" yes "$(lacks "$RUN_ERR" "Warning")"
	report attach_warns_tap_kind "$(run_said)"
	end_case
}

# --- status names the device's network namespace -------------------------------

case_status_netns()
{
	local ino

	op_case stnetns || return
	ino=$(stat -L -c %i "/var/run/netns/$NS")
	run vnetctl status "$DEV"
	expect "text (from the host)" yes "$(has "$RUN_OUT" "^  netns +$NS \(inode $ino\)")"
	run vnetctl -n "$NS" -j status "$DEV"
	expect "JSON netns" "$NS" "$(json "$RUN_OUT" '.[0].netns')"
	expect "JSON netns_ino" "$ino" "$(json "$RUN_OUT" '.[0].netns_ino')"
	report status_names_netns "$(run_said)"
	end_case
}

# --- attach --tx-hook tc on an XDP attachment: refused with the fix ------------

case_tx_hook_switch()
{
	op_case txhook --tx-hook xdp || return
	run vnetctl -n "$NS" attach "$DEV" --tx-hook tc
	expect "exit" 1 "$RUN_RC"
	expect "says how to switch" yes "$(has "$RUN_ERR" "hook xdp, not tc.*vnetctl -n $NS detach $DEV.*--tx-hook tc")"
	expect "still xdp" xdp "$(json "$(vnetctl -n "$NS" -j status "$DEV")" '.[0].tx_hook')"
	report tx_hook_mismatch_refused "$(run_said)"
	run vnetctl -n "$NS" attach "$DEV"
	expect "no hook asked: takes what is there" 0 "$RUN_RC"
	run vnetctl -n "$NS" attach "$DEV" --tx-hook xdp
	expect "same hook: no-op" 0 "$RUN_RC"
	report tx_hook_same_is_noop "$(run_said)"
	end_case
}

# --- a name over 15 characters: the kernel's limit, said ------------------------

case_ifname_limit()
{
	local long=vtabcdefghijklmno c

	for c in "attach $long" "stats $long" "status $long" "detach $long" "coalesce show $long" "stats $long --prometheus"; do
		# shellcheck disable=SC2086
		run vnetctl $c
		expect "'$c' exit" yes "$([ "$RUN_RC" = 1 ] || [ "$RUN_RC" = 2 ] && echo yes || echo "no: $RUN_RC")"
		expect "'$c' names the limit" yes "$(has "$RUN_ERR" "'$long' is not a (valid interface|device) name: longer than 15 characters")"
	done
	for c in "--tap $long --socket $VNET_TMP/long.sock" "--port socket=$VNET_TMP/long.sock,tap=$long" "--agent $long"; do
		# shellcheck disable=SC2086
		run timeout 10 "$VNETD" $c
		expect "vnetd $c exit" 2 "$RUN_RC"
		expect "vnetd $c names the limit" yes "$(has "$RUN_ERR" "'$long' is not a valid interface name: longer than 15 characters")"
	done
	report ifname_limit_named "$(run_said)"
}

# --- vnetd --config: a line in --port's words, quoted values -------------------

case_vnetd_config_lines()
{
	local conf=$VNET_TMP/ports.conf tap

	tap_case cfglines || { fail cfglines_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	echo "socket=$VNET_TMP/cfg.sock,tap=$tap,queues=2" >"$conf"
	run timeout 10 "$VNETD" --config "$conf" --netns "$NS"
	expect "commas: exit" 2 "$RUN_RC"
	expect "commas: says blanks, not commas" yes "$(has "$RUN_ERR" "$conf:1: .*separates its keys with blanks, not commas")"
	expect "commas: not 'tap=NAME missing'" yes "$(lacks "$RUN_ERR" "tap=NAME missing")"
	echo "socket=\"$VNET_TMP/cfg.sock\" tap=$tap" >"$conf"
	run timeout 10 "$VNETD" --config "$conf" --netns "$NS"
	expect "quotes: exit" 2 "$RUN_RC"
	expect "quotes: says so" yes "$(has "$RUN_ERR" "$conf:1: socket=\"$VNET_TMP/cfg.sock\": values are taken as written, quotes included")"
	expect "quotes: no directory error" yes "$(lacks "$RUN_ERR" "directory")"
	echo "socket='$VNET_TMP/cfg.sock' tap=$tap" >"$conf"
	run timeout 10 "$VNETD" --config "$conf" --netns "$NS"
	expect "single quotes: says so" yes "$(has "$RUN_ERR" "quotes included")"
	expect "no tap created" no "$(yesno tap_exists "$tap")"
	report config_line_words "$(run_said)"
	# the words --port takes, on a line, still work
	echo "socket=$VNET_TMP/cfg.sock tap=$tap queues=2 client=0 # a comment, with, commas" >"$conf"
	vnetd_start "$VNET_TMP/cfg.log" --config "$conf" --netns "$NS"
	busywait 5000 test -S "$VNET_TMP/cfg.sock"
	expect "a good line serves" yes "$(yesno test -S "$VNET_TMP/cfg.sock")"
	report config_line_good "$(head -c 300 "$VNET_TMP/cfg.log")"
	vnetd_stop
	end_case
}

# --- vnetd: the socket's directory, checked before the tap ---------------------

# vnetd_start LOG ARGS...: vnetd in the background ($VPID)
vnetd_start()
{
	local log=$1

	shift
	"$VNETD" "$@" >"$log" 2>&1 &
	VPID=$!
	procs_add "$VPID"
}

vnetd_stop()
{
	kill -TERM "$VPID" 2>/dev/null
	wait "$VPID" 2>/dev/null
}

case_vnetd_socket_dir()
{
	local dir=$VNET_TMP/rundir tap

	tap_case sockdir || { fail sockdir_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	# two missing levels: an error naming the directory, no tap, no pins
	run timeout 10 "$VNETD" --socket "$dir/a/vm.sock" --tap "$tap" --netns "$NS"
	expect "exit" 1 "$RUN_RC"
	expect "names the directory" yes "$(has "$RUN_ERR" "directory $dir/a: ")"
	expect "no tap created" no "$(yesno tap_exists "$tap")"
	expect "no tap created, not even for a while" yes "$(lacks "$RUN_ERR" "tap $tap: created")"
	expect "no pins" yes "$(yesno pins_gone "$tap")"
	report socket_dir_missing_checked_first "$(run_said)"

	# one missing level (/run/vnet on a fresh host): created, 0755
	mkdir -p "$dir"
	vnetd_start "$VNET_TMP/sockdir.log" --socket "$dir/vnet/vm.sock" --tap "$tap" --netns "$NS"
	busywait 5000 test -S "$dir/vnet/vm.sock"
	expect "socket listens" yes "$(yesno test -S "$dir/vnet/vm.sock")"
	expect "directory mode" 755 "$(stat -c %a "$dir/vnet" 2>/dev/null)"
	report socket_dir_created "$(cat "$VNET_TMP/sockdir.log" | head -c 400)"
	vnetd_stop
	# the tap that vnetd created goes with its last fd, which io_uring's
	# teardown may close a moment after the exit: the next check is about
	# a tap the next vnetd must not create
	busywait 5000 tap_gone "$tap"

	# not a socket at the path: refused before the tap exists
	: >"$dir/file.sock"
	run timeout 10 "$VNETD" --socket "$dir/file.sock" --tap "$tap" --netns "$NS"
	expect "exit" 1 "$RUN_RC"
	expect "message" yes "$(has "$RUN_ERR" "exists and is not a socket")"
	expect "no tap created" no "$(yesno tap_exists "$tap")"
	expect "no tap created, not even for a while" yes "$(lacks "$RUN_ERR" "tap $tap: created")"
	report socket_not_a_socket_checked_first "$(run_said)"
	end_case
}

# --- vnetd --cpus naming a CPU that is not there: a usage error at start --------

case_vnetd_cpus()
{
	local cpus tap bad

	tap_case cpus || { fail cpus_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	cpus=$(nproc)
	bad=$((cpus + 1000 < 1024 ? cpus : 1023))
	run timeout 10 "$VNETD" --socket "$VNET_TMP/cpus.sock" --tap "$tap" --netns "$NS" --cpus "0,$bad"
	expect "exit" 2 "$RUN_RC"
	expect "names the CPU" yes "$(has "$RUN_ERR" "CPU $bad does not exist")"
	expect "no tap created" no "$(yesno tap_exists "$tap")"
	expect "no socket" no "$(yesno test -e "$VNET_TMP/cpus.sock")"
	report cpus_checked_at_start "$(run_said)"
	run timeout 10 "$VNETD" --port "socket=$VNET_TMP/cpus.sock,tap=$tap,cpus=0:$bad" --netns "$NS"
	expect "--port exit" 2 "$RUN_RC"
	expect "--port names it" yes "$(has "$RUN_ERR" "--port: cpus '0:$bad': CPU $bad does not exist")"
	report cpus_checked_in_port "$(run_said)"

	# a valid list naming CPUs that are not there: which CPU, and which
	# CPUs vnetd may use, never "not a CPU list" nor a command on its pid
	run timeout 10 "$VNETD" --socket "$VNET_TMP/cpus.sock" --tap "$tap" --netns "$NS" --cpus 0-99
	expect "0-99 exit" 2 "$RUN_RC"
	expect "0-99: a CPU that is not there" yes "$(has "$RUN_ERR" "--cpus '0-99': CPU [0-9]+ does not exist or is not available to vnetd \(it may run on CPUs? [0-9]")"
	expect "0-99: not called a syntax error" yes "$(lacks "$RUN_ERR" "not a CPU list")"
	run timeout 10 "$VNETD" --socket "$VNET_TMP/cpus.sock" --tap "$tap" --netns "$NS" --cpus "$bad"
	expect "no taskset on vnetd's own pid" yes "$(lacks "$RUN_ERR" "taskset")"
	expect "names the CPUs there are" yes "$(has "$RUN_ERR" "it may run on CPUs? [0-9]")"
	run timeout 10 "$VNETD" --socket "$VNET_TMP/cpus.sock" --tap "$tap" --netns "$NS" --cpus 0-1,x
	expect "garbage is not a list" yes "$(has "$RUN_ERR" "--cpus '0-1,x' is not a CPU list")"
	expect "no tap created" no "$(yesno tap_exists "$tap")"
	report cpus_messages "$(run_said)"
	end_case
}

# --- vnetd --socket-group/--socket-mode: the socket as created ------------------

case_vnetd_socket_perm()
{
	local sock=$VNET_TMP/perm.sock tap grp nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"

	tap_case perm || { fail perm_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	grp=$(getent group 65534 | cut -d: -f1)
	chmod 0755 "$VNET_TMP"

	# default: 0600 root:root, another user cannot connect
	vnetd_start "$VNET_TMP/perm.log" --socket "$sock" --tap "$tap" --netns "$NS"
	busywait 5000 test -S "$sock"
	expect "default mode" "600 0" "$(stat -c '%a %g' "$sock" 2>/dev/null)"
	run $nobody "$UNIXSOCK" connect "$sock"
	expect "nobody cannot connect" 1 "$RUN_RC"
	report socket_default_private "$(run_said)"
	vnetd_stop

	# --socket-group GROUP --socket-mode 0660: that group connects
	vnetd_start "$VNET_TMP/perm.log" --socket "$sock" --tap "$tap" --netns "$NS" \
		--socket-group "$grp" --socket-mode 0660
	busywait 5000 test -S "$sock"
	expect "mode and group" "660 65534" "$(stat -c '%a %g' "$sock" 2>/dev/null)"
	run $nobody "$UNIXSOCK" connect "$sock"
	expect "the group connects" 0 "$RUN_RC"
	expect "vnetd's own group is back" 0 "$(awk '/^Gid:/ { print $3 }' /proc/"$VPID"/status)"
	report socket_group_mode "$(run_said) $(head -c 300 "$VNET_TMP/perm.log")"
	vnetd_stop

	run timeout 10 "$VNETD" --socket "$sock" --tap "$tap" --socket-mode 0640x
	expect "bad mode" 2 "$RUN_RC"
	run timeout 10 "$VNETD" --socket "$sock" --tap "$tap" --socket-mode 0060
	expect "mode without owner rw" 2 "$RUN_RC"
	run timeout 10 "$VNETD" --socket "$sock" --tap "$tap" --socket-group vnet-no-such-group
	expect "unknown group" 2 "$RUN_RC"
	expect "message" yes "$(has "$RUN_ERR" "no such group")"
	report socket_perm_usage_errors "$(run_said)"
	end_case
}

# --- vnetd's log lines: severities --------------------------------------------

case_vnetd_log()
{
	local sock=$VNET_TMP/log.sock tap log=$VNET_TMP/journal.log js

	tap_case log || { fail log_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	vnetd_start "$VNET_TMP/first.log" --socket "$sock" --tap "$tap" --netns "$NS"
	busywait 5000 test -S "$sock" || { fail log_setup "vnetd did not listen"; end_case; return; }

	# plain stderr: errors say so
	run timeout 10 "$VNETD" --socket "$sock" --tap "${tap}b" --netns "$NS"
	expect "second vnetd exit" 1 "$RUN_RC"
	expect "error line" yes "$(has "$RUN_ERR" "^vnetd: error: .*another process is listening")"
	report log_plain_severity "$(run_said)"

	# the busy socket is found before the second vnetd makes anything, it
	# names the listener, and the first one sees no connection
	expect "names the listener" yes "$(has "$RUN_ERR" "$sock: another process is listening there: vnetd \(pid $VPID\)")"
	expect "no tap created, not even for a while" yes "$(lacks "$RUN_ERR" "tap ${tap}b: created")"
	expect "no tap" no "$(yesno tap_exists "${tap}b")"
	expect "no pins" yes "$(yesno pins_gone "${tap}b")"
	expect "the first logs no phantom frontend" yes "$(lacks "$(cat "$VNET_TMP/first.log")" "frontend (connected|disconnected)")"
	expect "the first still listens" yes "$(yesno "$UNIXSOCK" connect "$sock")"
	report busy_socket_checked_first "$(run_said) first: $(tail -c 300 "$VNET_TMP/first.log")"

	# stderr is the journal ($JOURNAL_STREAM = its device:inode): <N> prefixes
	: >"$log"
	js=$(stat -c '%d:%i' "$log")
	JOURNAL_STREAM=$js timeout 10 "$VNETD" --socket "$sock" --tap "${tap}b" \
		--netns "$NS" -v 2>>"$log"
	expect "journal: exit" 1 "$?"
	# info and debug lines: a vnetd that starts, serves, and stops
	# (--cpus 0: "pinned to CPU 0" is a debug line)
	JOURNAL_STREAM=$js "$VNETD" --socket "$VNET_TMP/log2.sock" --tap "${tap}c" --cpus 0 \
		--netns "$NS" -v 2>>"$log" &
	VPID=$!
	procs_add "$VPID"
	busywait 5000 test -S "$VNET_TMP/log2.sock" && busywait 5000 grep -q "^<7>" "$log"
	vnetd_stop
	expect "an error at priority 3" yes "$(has "$(cat "$log")" "^<3>.*another process is listening")"
	expect "info at priority 6" yes "$(has "$(cat "$log")" "^<6>")"
	expect "debug at priority 7" yes "$(has "$(cat "$log")" "^<7>")"
	expect "every line prefixed" 0 "$(grep -cvE '^<[0-7]>' "$log")"
	report log_journal_priorities "$(head -c 400 "$log")"

	# a JOURNAL_STREAM that is not our stderr (inherited): plain lines
	JOURNAL_STREAM=1:1 timeout 10 "$VNETD" --socket "$sock" --tap "${tap}b" \
		--netns "$NS" 2>"$log"
	expect "foreign JOURNAL_STREAM: plain" yes "$(has "$(cat "$log")" "^vnetd: error: ")"
	report log_journal_only_when_stderr_is_it "$(head -c 400 "$log")"
	end_case
}

# notify_listen SOCK OUT: a systemd notify socket SOCK (selftests/unixsock)
# whose messages go to OUT, listening; its pid in NPID (procs_add)
notify_listen()
{
	"$UNIXSOCK" notify "$1" 120 >"$2" 2>&1 &
	NPID=$!
	procs_add "$NPID"
	busywait 2000 test -S "$1"
}

# --- vnetd: READY=1 once the socket listens, STOPPING=1, SIGHUP cleans up -------

case_vnetd_notify()
{
	local sock=$VNET_TMP/notify.sock nsock=$VNET_TMP/systemd-notify tap rc

	tap_case notify || { fail notify_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	notify_listen "$nsock" "$VNET_TMP/notify.out"
	NOTIFY_SOCKET=$nsock vnetd_start "$VNET_TMP/notify.log" --socket "$sock" --tap "$tap" --netns "$NS"
	busywait 5000 grep -q READY=1 "$VNET_TMP/notify.out"
	expect "READY=1" yes "$(has "$(cat "$VNET_TMP/notify.out")" "READY=1")"
	expect "MAINPID" yes "$(has "$(cat "$VNET_TMP/notify.out")" "MAINPID=$VPID")"
	# ready means serving: the socket listens, the tap is there, pins too
	expect "socket listens at READY" yes "$(yesno "$UNIXSOCK" connect "$sock")"
	expect "tap at READY" yes "$(yesno tap_exists "$tap")"
	expect "pins at READY" yes "$(yesno pins_exist "$tap")"
	report notify_ready "$(cat "$VNET_TMP/notify.out") $(head -c 300 "$VNET_TMP/notify.log")"

	# SIGHUP: no reload, and no stop either: a warning, and vnetd serves on
	kill -HUP "$VPID"
	busywait 5000 grep -q "SIGHUP: vnetd reloads by handing its ports over" "$VNET_TMP/notify.log"
	expect "warning names the reload" yes "$(has "$(cat "$VNET_TMP/notify.log")" "^vnetd: warning: SIGHUP: .*run 'vnetd --takeover'.*vnetd keeps serving")"
	expect "still running after SIGHUP" yes "$(yesno kill -0 "$VPID")"
	expect "no STOPPING=1" yes "$(lacks "$(cat "$VNET_TMP/notify.out")" "STOPPING=1")"
	expect "socket still listens" yes "$(yesno "$UNIXSOCK" connect "$sock")"
	# frames both ways through a vhost-user frontend after the HUP
	run timeout 60 "$IO" signals --socket "$sock" --netns "$NS" --tap "$tap" --frames 100
	expect "frontend moved frames" 0 "$RUN_RC"
	expect "guest-TX frames counted" yes \
		"$(yesno positive "$(json "$(vnetctl -j stats "$tap")" '[.queues[] | select(.dir == "tx") | .datapath.frames] | add')")"
	report sighup_keeps_serving "$(run_said) $(tail -c 300 "$VNET_TMP/notify.log")"

	# SIGTERM: the clean stop
	kill -TERM "$VPID"
	wait "$VPID"
	rc=$?
	wait "$NPID"
	expect "exit after SIGTERM" 0 "$rc"
	expect "STOPPING=1" yes "$(has "$(cat "$VNET_TMP/notify.out")" "STOPPING=1")"
	expect "socket removed" no "$(yesno test -e "$sock")"
	# the kernel frees the tap when the last reference goes, and io_uring
	# drops its references in a worker after the process exited
	busywait 2000 sh -c "! ip -n '$NS' link show '$tap' >/dev/null 2>&1"
	expect "tap removed" no "$(yesno tap_exists "$tap")"
	expect "pins removed" yes "$(yesno pins_gone "$tap")"
	report sigterm_cleans_up "$(cat "$VNET_TMP/notify.out") $(tail -c 300 "$VNET_TMP/notify.log")"
	procs_forget

	# the agent: SIGHUP is a warning there too
	DEV=$(rand_tap)
	tap_create "$NS" "$DEV" && run vnetctl -n "$NS" attach "$DEV"
	vnetd_start "$VNET_TMP/agent.log" --agent "$DEV" --netns "$NS"
	busywait 5000 grep -q "driving tun's rx-frames" "$VNET_TMP/agent.log"
	kill -HUP "$VPID"
	busywait 5000 grep -q "SIGHUP: reload is not supported" "$VNET_TMP/agent.log"
	expect "agent warned" yes "$(has "$(cat "$VNET_TMP/agent.log")" "warning: agent: SIGHUP: reload is not supported")"
	expect "agent still running" yes "$(yesno kill -0 "$VPID")"
	expect "agent still publishes itself" yes \
		"$(has "$(vnetctl -n "$NS" -j coalesce show "$DEV")" "\"pid\": *$VPID")"
	report agent_sighup_keeps_running "$(tail -c 300 "$VNET_TMP/agent.log")"
	end_case
}

# --- the libvirt hook (libvirt/qemu-hook): attach on started, unpin on release ---

case_libvirt_hook()
{
	local hook=$VNET_ROOT/libvirt/qemu-hook br net vu xml on=$VNET_TMP/vnet-hook.on

	tap_case hook || { fail hook_setup "cannot create netns/tap"; return; }
	br=$DEV
	net=$(rand_tap)
	vu=$(rand_tap)
	tap_create "$NS" "$net" && tap_create "$NS" "$vu" ||
		{ fail hook_setup "cannot create taps"; end_case; return; }
	# the live XML libvirt hands the hook: a bridge, a network and a
	# vhostuser interface (whose tap is vnetd's business)
	xml="<domain type='kvm'><name>vm1</name><devices>
  <interface type='bridge'>
    <mac address='52:54:00:00:00:01'/>
    <source bridge='br0'/>
    <target dev='$br'/>
    <model type='virtio'/>
  </interface>
  <interface type=\"network\">
    <source network='default'/>
    <target dev=\"$net\"/>
  </interface>
  <interface type='vhostuser'>
    <source type='unix' path='/run/vnet/vm1.sock' mode='client'/>
    <target dev='$vu'/>
  </interface>
</devices></domain>"
	# the switch as installed (libvirt/vnet-hook.default): off, nothing
	# attached, and the log line says how to turn it on
	VNET_HOOK_CONF=$VNET_ROOT/libvirt/vnet-hook.default VNETCTL=$VNETCTL VNETCTL_ARGS="-n $NS" \
		run "$hook" vm1 started begin - <<<"$xml"
	expect "off: exit" 0 "$RUN_RC"
	expect "off: bridge tap untouched" yes "$(yesno pins_gone "$br")"
	expect "off: network tap untouched" yes "$(yesno pins_gone "$net")"
	expect "off: says how to turn it on" yes "$(has "$RUN_OUT$RUN_ERR" "vm1: off \(VNET_HOOK_ENABLE=yes in .*vnet-hook.default turns it on\)")"
	# no switch file at all: off too
	VNET_HOOK_CONF=$VNET_TMP/no-such-file VNETCTL=$VNETCTL VNETCTL_ARGS="-n $NS" \
		run "$hook" vm1 started begin - <<<"$xml"
	expect "no file: bridge tap untouched" yes "$(yesno pins_gone "$br")"
	report hook_off_as_installed "$(run_said)"

	# on: VNET_HOOK_ENABLE=yes
	echo "VNET_HOOK_ENABLE=yes" >"$on"
	VNET_HOOK_CONF=$on VNETCTL=$VNETCTL VNETCTL_ARGS="-n $NS" run "$hook" vm1 started begin - <<<"$xml"
	expect "started exit" 0 "$RUN_RC"
	expect "bridge tap attached" yes "$(yesno pins_exist "$br")"
	expect "network tap attached" yes "$(yesno pins_exist "$net")"
	expect "vhostuser tap left alone" yes "$(yesno pins_gone "$vu")"
	expect "bridge tap named after the domain" vm1 \
		"$(json "$(vnetctl -n "$NS" -j status "$br")" '.[0].vm')"
	report hook_started_attaches "$(run_said)"
	# other operations change nothing; release removes the pins
	VNET_HOOK_CONF=$on VNETCTL=$VNETCTL VNETCTL_ARGS="-n $NS" run "$hook" vm1 prepare begin - <<<"$xml"
	expect "prepare: still attached" yes "$(yesno pins_exist "$br")"
	VNET_HOOK_CONF=$on VNETCTL=$VNETCTL VNETCTL_ARGS="-n $NS" run "$hook" vm1 release end - <<<"$xml"
	expect "release exit" 0 "$RUN_RC"
	expect "bridge pins gone" yes "$(yesno pins_gone "$br")"
	expect "network pins gone" yes "$(yesno pins_gone "$net")"
	report hook_release_unpins "$(run_said)"
	# a failing attach never fails the domain
	VNET_HOOK_CONF=$on VNETCTL=$VNETCTL VNETCTL_ARGS="-n vnet-no-such-ns-$$" run "$hook" vm1 started begin - <<<"$xml"
	expect "failed attach: exit" 0 "$RUN_RC"
	report hook_never_fails_domain "$(run_said)"
	end_case
}

# --- vnetd: the units' reload (ExecReload=vnetd --takeover --detach) ---------

case_vnetd_reload()
{
	local sock=$VNET_TMP/reload.sock nsock=$VNET_TMP/reload-notify tap rc
	local new log=$VNET_TMP/reload-new.log oldpid

	tap_case reload || { fail reload_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	notify_listen "$nsock" "$VNET_TMP/reload.out"
	NOTIFY_SOCKET=$nsock vnetd_start "$VNET_TMP/reload.log" --socket "$sock" --tap "$tap" --netns "$NS"
	oldpid=$VPID
	busywait 5000 grep -q "MAINPID=$oldpid" "$VNET_TMP/reload.out"
	busywait 5000 test -S "/run/vnet/$tap.takeover"
	# what the unit's ExecReload= runs: it returns once the ports moved
	NOTIFY_SOCKET=$nsock timeout 60 "$VNETD" --takeover --detach --socket "$sock" \
		--tap "$tap" --netns "$NS" >"$log" 2>&1
	rc=$?
	expect "reload command exit" 0 "$rc"
	# the old vnetd handed every port over and exits 0
	wait "$oldpid"
	expect "old vnetd exit" 0 "$?"
	new=$(sed -n 's/.*MAINPID=\([0-9]*\).*/\1/p' "$VNET_TMP/reload.out" | tail -n 1)
	expect "systemd told the new main pid" yes "$(yesno test -n "$new" -a "$new" != "$oldpid")"
	[ -n "$new" ] && procs_add "$new"
	expect "new main pid runs" yes "$(yesno kill -0 "${new:-0}")"
	expect "old vnetd said so" yes "$(has "$(cat "$VNET_TMP/reload.log")" "handed over to pid ${new:-x}")"
	expect "socket still listens" yes "$(yesno "$UNIXSOCK" connect "$sock")"
	run timeout 60 "$IO" signals --socket "$sock" --netns "$NS" --tap "$tap" --frames 100
	expect "frames after the reload" 0 "$RUN_RC"
	# a second reload takes over from the first one's successor
	NOTIFY_SOCKET=$nsock timeout 60 "$VNETD" --takeover --detach --socket "$sock" \
		--tap "$tap" --netns "$NS" >"$log.2" 2>&1
	expect "second reload exit" 0 "$?"
	busywait 5000 sh -c "! kill -0 ${new:-0} 2>/dev/null"
	expect "first successor gone" no "$(yesno kill -0 "${new:-0}" 2>/dev/null)"
	new=$(sed -n 's/.*MAINPID=\([0-9]*\).*/\1/p' "$VNET_TMP/reload.out" | tail -n 1)
	[ -n "$new" ] && procs_add "$new"
	run timeout 60 "$IO" signals --socket "$sock" --netns "$NS" --tap "$tap" --frames 100
	expect "frames after the second reload" 0 "$RUN_RC"
	# a reload for other ports is refused, and the running one serves on
	timeout 60 "$VNETD" --takeover --detach --socket "$sock" --tap "${tap}x" \
		--netns "$NS" --takeover-socket "/run/vnet/$tap.takeover" >"$log.3" 2>&1
	expect "other ports: exit" 1 "$?"
	expect "other ports: says why" yes "$(has "$(cat "$log.3")" "serves on")"
	expect "running one still runs" yes "$(yesno kill -0 "${new:-0}")"
	report reload_takes_over "rc=$rc new=$new $(tail -c 300 "$log") $(tail -c 300 "$log.3") $(tail -c 400 "$VNET_TMP/reload.log")"
	end_case
}

# --- make deps: the Makefile's target works ----------------------------------

case_make_deps()
{
	run make -s -C "$VNET_ROOT" deps
	expect "make deps exit" 0 "$RUN_RC"
	expect "no missing script" yes "$(lacks "$RUN_ERR" "No such file")"
	report make_deps "$(run_said)"
}

main()
{
	ksft_args "$@"
	require_root operator || { ksft_exit; return; }
	require_cmd operator jq bpftool ip setpriv "$IO" || { ksft_exit; return; }
	ksft_run :
	ksft_exit
}

main "$@"
