#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (each case in its own network namespace and taps)
#
# What an operator meets at vnetctl's first commands:
#  - `stats` without a device shows every attached device that is present
#    (text: one table each; -j: an array), a gone one left out;
#  - attach and detach say their success on stdout (-j: an object),
#    errors stay on stderr;
#  - not root, attach says it needs root (CAP_NET_ADMIN and CAP_BPF), for
#    a device that exists and for one that does not;
#  - where /sys/fs/bpf is no bpffs outside `ip netns exec`, commands say
#    'mount -t bpf bpf /sys/fs/bpf', not `ip netns exec` (that case is
#    test_operator.sh's netns_exec).
#
#   selftests/cli/test_cli_ux.sh [CASE...]    (default: every case)

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=cli_ux

ALL_CASES="stats_every_device attach_stdout not_root bpffs_missing"

yesno()
{
	"$@" && echo yes || echo no
}

has()
{
	grep -qF -- "$2" <<<"$1" && echo yes || echo "no: $(head -c 300 <<<"$1")"
}

lacks()
{
	grep -qF -- "$2" <<<"$1" && echo "no: $(head -c 300 <<<"$1")" || echo yes
}

case_stats_every_device()
{
	local a b gone

	ns_create statsall || { fail stats_all_setup "cannot create netns"; return; }
	a=$(rand_tap)
	b=$(rand_tap)
	gone=$(rand_tap)
	for d in "$a" "$b" "$gone"; do
		tap_create "$NS" "$d" && run vnetctl -n "$NS" attach "$d"
		[ "$RUN_RC" = 0 ] || { fail stats_all_setup "$(run_said)"; return; }
	done
	ip -n "$NS" link del "$gone"

	run vnetctl -n "$NS" stats
	expect "exit" 0 "$RUN_RC"
	expect "text: $a" yes "$(yesno grep -qx "$a" <<<"$RUN_OUT")"
	expect "text: $b" yes "$(yesno grep -qx "$b" <<<"$RUN_OUT")"
	expect "text: not the gone $gone" no "$(yesno grep -qx "$gone" <<<"$RUN_OUT")"
	expect "text: a table" yes "$(has "$RUN_OUT" "QUEUE DIR CLASS")"
	run vnetctl -n "$NS" -j stats
	expect "-j exit" 0 "$RUN_RC"
	expect "-j: an array" array "$(json "$RUN_OUT" 'type')"
	expect "-j: $a" 1 "$(json "$RUN_OUT" '[.[] | select(.ifname == $d)] | length' --arg d "$a")"
	expect "-j: $b's queues" array "$(json "$RUN_OUT" '.[] | select(.ifname == $d) | .queues | type' --arg d "$b")"
	expect "-j: not $gone" 0 "$(json "$RUN_OUT" '[.[] | select(.ifname == $d)] | length' --arg d "$gone")"
	run vnetctl -n "$NS" -j stats --watch 1 --count 1
	expect "--watch exit" 0 "$RUN_RC"
	expect "--watch: rates of $a" object "$(json "$RUN_OUT" '.[] | select(.ifname == $d) | .interval_s | if . > 0 then "object" else "none" end' --arg d "$a")"
	# one device: its object, as before
	run vnetctl -n "$NS" -j stats "$a"
	expect "one device: an object" "$a" "$(json "$RUN_OUT" '.ifname')"
	report stats_every_device "$(run_said)"
	run vnetctl -n "$NS" detach "$gone"
}

case_attach_stdout()
{
	local dev

	ns_create attachout || { fail attach_stdout_setup "cannot create netns"; return; }
	dev=$(rand_tap)
	tap_create "$NS" "$dev" || { fail attach_stdout_setup "no tap"; return; }
	run vnetctl -n "$NS" attach "$dev"
	expect "attach exit" 0 "$RUN_RC"
	expect "success on stdout" yes "$(has "$RUN_OUT" "$dev: attached (guest tx: tc ingress")"
	expect "nothing on stderr" "" "$RUN_ERR"
	run vnetctl -n "$NS" attach "$dev"
	expect "again: on stdout" yes "$(has "$RUN_OUT" "$dev: already attached")"
	expect "again: nothing on stderr" "" "$RUN_ERR"
	run vnetctl -n "$NS" -j attach "$dev"
	expect "-j: changed" false "$(json "$RUN_OUT" '.changed')"
	expect "-j: ifname" "$dev" "$(json "$RUN_OUT" '.ifname')"
	run vnetctl -n "$NS" detach "$dev"
	expect "detach exit" 0 "$RUN_RC"
	expect "detach on stdout" yes "$(has "$RUN_OUT" "$dev: detached; pins removed")"
	expect "detach: nothing on stderr" "" "$RUN_ERR"
	run vnetctl -n "$NS" attach vtnosuchdev0
	expect "error exit" 1 "$RUN_RC"
	expect "error on stderr" yes "$(has "$RUN_ERR" "Error: vtnosuchdev0")"
	expect "error: stdout empty" "" "$RUN_OUT"
	report attach_success_on_stdout "$(run_said)"
}

case_not_root()
{
	local dev nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

	dev=$(rand_tap)
	# a device that exists (here, in the host's namespace) and one that does not
	ip tuntap add dev "$dev" mode tap multi_queue vnet_hdr ||
		{ fail not_root_setup "no tap"; return; }
	run "${nobody[@]}" "$VNETCTL" attach "$dev"
	expect "exit" 1 "$RUN_RC"
	expect "says root" yes "$(has "$RUN_ERR" "$dev: attaching needs root: CAP_NET_ADMIN and CAP_BPF")"
	run "${nobody[@]}" "$VNETCTL" attach vtnosuchdev0
	expect "no device: exit" 1 "$RUN_RC"
	expect "no device: says root" yes "$(has "$RUN_ERR" "attaching needs root: CAP_NET_ADMIN and CAP_BPF")"
	expect "no device: not 'no such device'" yes "$(lacks "$RUN_ERR" "no such network device")"
	expect "nothing attached" yes "$(yesno pins_gone "$dev")"
	report not_root_attach_says_root "$(run_said)"
	ip link del "$dev" 2>/dev/null
}

# in_mntns [--pid] CMD...: CMD in a mount namespace of its own without
# bpffs at /sys/fs/bpf; --pid: a PID namespace too, where PID 1 shares
# the mount namespace (as in a container: not a private one)
in_mntns()
{
	local pid=()

	[ "$1" = --pid ] && { pid=(-p -f --mount-proc); shift; }
	# shellcheck disable=SC2016
	unshare -m --propagation private "${pid[@]}" sh -c '
		while mountpoint -q /sys/fs/bpf; do umount -l /sys/fs/bpf || exit 99; done
		exec "$@"' sh "$@"
}

case_bpffs_missing()
{
	local cmd

	# where PID 1 shares the mount namespace (a host, a container)
	for cmd in status "stats vtnone0" "detach vtnone0"; do
		# shellcheck disable=SC2086
		run in_mntns --pid "$VNETCTL" $cmd
		expect "'$cmd' exit" 1 "$RUN_RC"
		expect "'$cmd' names the mount" yes "$(has "$RUN_ERR" "mount it with 'mount -t bpf bpf /sys/fs/bpf'")"
		expect "'$cmd' no ip netns exec" yes "$(lacks "$RUN_ERR" "ip netns exec")"
	done
	report bpffs_missing_says_mount "$(run_said)"

	# a private mount namespace that is no `ip netns exec` (unshare -m)
	run in_mntns "$VNETCTL" status
	expect "private: exit" 1 "$RUN_RC"
	expect "private: names the mount" yes "$(has "$RUN_ERR" "'mount -t bpf bpf /sys/fs/bpf'")"
	expect "private: no ip netns exec" yes "$(lacks "$RUN_ERR" "ip netns exec")"
	run in_mntns "$VNETCTL" attach vtnone0
	expect "private attach: exit" 1 "$RUN_RC"
	expect "private attach: names the mount" yes "$(has "$RUN_ERR" "'mount -t bpf bpf /sys/fs/bpf'")"
	expect "private attach: no -n NAME placeholder" yes "$(lacks "$RUN_ERR" "-n NAME")"
	report bpffs_missing_private_mntns "$(run_said)"
}

ksft_args "$@"
require_root test_cli_ux || exit 0
require_cmd test_cli_ux ip jq setpriv unshare mountpoint "$VNETCTL" || exit 0

ksft_run case_cleanup
ksft_exit
