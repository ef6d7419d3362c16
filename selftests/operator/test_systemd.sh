#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The systemd units (systemd/vnetd@.service, systemd/vnetd.service):
# systemd-analyze verify accepts them, and vnetd serves a vhost-user
# frontend under the restrictions they set, applied by hand the way
# systemd applies them (docs/systemd.md: which ones, and how):
#   CapabilityBoundingSet=  setpriv --bounding-set, the unit's list
#   NoNewPrivileges=yes     setpriv --no-new-privs
#   ProtectSystem=strict    every mount but /dev, /proc, /sys read-only in
#   ReadWritePaths=         a private mount namespace; the socket's
#   RuntimeDirectory=       directory (RuntimeDirectory=) and /sys/fs/bpf
#                           (ReadWritePaths=) stay writable
#   UMask=                  umask
#   Type=notify             $NOTIFY_SOCKET (selftests/unixsock.c listens)
# LimitMEMLOCK= is not applied (raising a hard limit needs CAP_SYS_RESOURCE,
# which a container may lack): vnetd serves at the default limit too, its
# io_uring buffers unregistered.  selftests/operator/test_systemd_boot.sh
# starts the units themselves under systemd as PID 1 (a container).
#
#   selftests/operator/test_systemd.sh [CASE...]

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=systemd
VNETD=${VNETD:-$OUT/vnetd}
# ExecStart= takes an absolute path (run.sh's OUT is relative)
case $VNETD in /*) ;; *) VNETD=$PWD/$VNETD ;; esac
UNIXSOCK=${UNIXSOCK:-$OUT/selftests/unixsock}
IO=${IO:-$OUT/bench/bench_vnetd_io}
UNITS="$VNET_ROOT/systemd/vnetd@.service $VNET_ROOT/systemd/vnetd.service"

ALL_CASES="verify exporter_unit hardened"

trap 'end_case; _cleanup_all' EXIT

# unit_get UNIT KEY: the value of KEY= in UNIT (the last one)
unit_get()
{
	sed -n "s/^$2=//p" "$1" | tail -n1
}

case_verify()
{
	local u name dir=$VNET_TMP/units

	mkdir -p "$dir"
	for u in $UNITS; do
		name=$(basename "$u")
		# a template is verified as an instance; ExecStart= must exist
		[ "$name" = vnetd@.service ] && name=vnetd@test.service
		sed "s|/usr/sbin/vnetd|$VNETD|" "$u" >"$dir/$name"
		run systemd-analyze verify --man=no "$dir/$name"
		expect "$name: verify exit" 0 "$RUN_RC"
		expect "$name: verify says nothing" "" "$RUN_OUT$RUN_ERR"
		expect "$name: Type" notify "$(unit_get "$u" Type)"
		expect "$name: RuntimeDirectory" vnet "$(unit_get "$u" RuntimeDirectory)"
		expect "$name: ExecReload is the hand-over" "/usr/sbin/vnetd --takeover --detach --release-missing $(unit_get "$u" ExecStart | sed 's|^/usr/sbin/vnetd ||')" "$(unit_get "$u" ExecReload)"
		expect "$name: the new vnetd may name itself" all "$(unit_get "$u" NotifyAccess)"
		report "verify_${name%%.service}" "$(run_said)"
	done
}

# vnet-exporter.service: verified with the vnetctl under test
case_exporter_unit()
{
	local u=$VNET_ROOT/systemd/vnet-exporter.service dir=$VNET_TMP/units vnetctl=$VNETCTL

	case $vnetctl in /*) ;; *) vnetctl=$PWD/$vnetctl ;; esac
	mkdir -p "$dir"
	sed "s|/usr/sbin/vnetctl|$vnetctl|" "$u" >"$dir/vnet-exporter.service"
	run systemd-analyze verify --man=no "$dir/vnet-exporter.service"
	expect "verify exit" 0 "$RUN_RC"
	expect "verify says nothing" "" "$RUN_OUT$RUN_ERR"
	expect "ExecStart" '/usr/sbin/vnetctl exporter --listen ${VNET_EXPORTER_LISTEN} $VNET_EXPORTER_OPTS' "$(unit_get "$u" ExecStart)"
	expect "default listen" "VNET_EXPORTER_LISTEN=:9477" "$(sed -n 's/^Environment=//p' "$u" | head -n1)"
	expect "no options by default" "VNET_EXPORTER_OPTS=" "$(unit_get "$u" Environment)"
	report verify_vnet-exporter "$(run_said)"
}

# sandbox SOCKDIR CMD...: CMD as the unit's [Service] restrictions make it
sandbox()
{
	local unit=$VNET_ROOT/systemd/vnetd@.service caps c bset="-all"

	caps=$(unit_get "$unit" CapabilityBoundingSet)
	for c in $caps; do
		c=${c#CAP_}
		bset+=",+${c,,}"
	done
	SANDBOX_BSET=$bset
	unshare -m --propagation private bash -c '
		sockdir=$1 bset=$2
		shift 2
		mount --bind "$sockdir" "$sockdir" || exit 99
		# RuntimeDirectory=vnet: the hand-over socket and the journals
		# of packed rings live there
		mkdir -p /run/vnet && mount --bind /run/vnet /run/vnet || exit 99
		for m in $(awk "{ print \$5 }" /proc/self/mountinfo | sort -u); do
			case $m in
			/dev | /dev/* | /proc | /proc/* | /sys | /sys/* | "$sockdir" | /run/vnet) continue ;;
			esac
			mount -o remount,bind,ro "$m" 2>/dev/null
		done
		umask 0077
		exec setpriv --bounding-set "$bset" --inh-caps -all --no-new-privs -- "$@"
	' sandbox "$1" "$bset" "${@:2}"
}

case_hardened()
{
	local dir=$VNET_TMP/run-vnet sock nsock=$VNET_TMP/notify tap vpid npid bnd want reload new rc

	ns_create hardened || { fail hardened_setup "cannot create netns"; return; }
	tap=$(rand_tap)
	mkdir -p "$dir"
	sock=$dir/$tap.sock
	# pins must outlive the private mount namespace: bpffs on the host
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	printf 'socket=%s tap=%s queues=1 netns=%s\n' "$sock" "$tap" "$NS" >"$dir/test.conf"
	_case_taps+=("$NS $tap")

	"$UNIXSOCK" notify "$nsock" 60 >"$VNET_TMP/notify.out" 2>&1 &
	npid=$!
	procs_add "$npid"
	busywait 2000 test -S "$nsock"
	NOTIFY_SOCKET=$nsock sandbox "$dir" "$VNETD" --config "$dir/test.conf" \
		>"$VNET_TMP/vnetd.log" 2>&1 &
	vpid=$!
	procs_add "$vpid"
	busywait 10000 grep -q READY=1 "$VNET_TMP/notify.out"
	expect "READY=1" yes "$(grep -q READY=1 "$VNET_TMP/notify.out" && echo yes || echo no)"

	# the restrictions are really there (the sandbox is not a no-op)
	want=$(unit_cap_mask "$VNET_ROOT/systemd/vnetd@.service")
	# vnetd's pid as systemd learns it: MAINPID=
	bnd=$(grep -o 'MAINPID=[0-9]*' "$VNET_TMP/notify.out" | head -n1 | cut -d= -f2)
	[ "$(cat "/proc/${bnd:-0}/comm" 2>/dev/null)" = vnetd ] || bnd=$vpid
	# end_case stops vnetd itself, not only the shell around the sandbox
	procs_add "$bnd"
	expect "vnetd's bounding set" "$want" \
		"$(awk '/^CapBnd:/ { print $2 }' "/proc/$bnd/status" 2>/dev/null)"
	expect "no new privileges" 1 "$(awk '/^NoNewPrivs:/ { print $2 }' "/proc/$bnd/status" 2>/dev/null)"
	run sandbox "$dir" touch /etc/vnet-sandbox-test
	expect "/etc is read-only in the sandbox" 1 "$RUN_RC"
	rm -f /etc/vnet-sandbox-test

	# and vnetd serves: a vhost-user frontend exchanges frames both ways
	run timeout 60 "$IO" signals --socket "$sock" --netns "$NS" --tap "$tap" --frames 200
	expect "frontend exit" 0 "$RUN_RC"
	expect "frames both ways" yes "$(grep -q 'armed guest:  tx bulk' <<<"$RUN_OUT" && echo yes || echo no)"
	# the packed rings' journal could be made under the restrictions
	expect "no 'no ring journal' warning" no "$(grep -q 'no ring journal' "$VNET_TMP/vnetd.log" && echo yes || echo no)"
	report hardened_serves "$(run_said) vnetd: $(head -c 600 "$VNET_TMP/vnetd.log")"

	# systemctl reload: the unit's ExecReload=, under the same restrictions
	reload=$(unit_get "$VNET_ROOT/systemd/vnetd@.service" ExecReload)
	reload=${reload//\/usr\/sbin\/vnetd/$VNETD}
	reload=${reload//\/etc\/vnet\/%i.conf/$dir/test.conf}
	reload=${reload//\$VNETD_OPTS/}
	# shellcheck disable=SC2086 # the unit's command line, split as systemd does
	NOTIFY_SOCKET=$nsock sandbox "$dir" timeout 60 $reload >"$VNET_TMP/reload.log" 2>&1
	rc=$?
	expect "reload exit" 0 "$rc"
	# a failed reload leaves the old one serving: stop it, not wait for it
	[ "$rc" -eq 0 ] || kill -TERM "$bnd"
	wait "$vpid"
	expect "old vnetd exit after the reload" 0 "$?"
	new=$(grep -o 'MAINPID=[0-9]*' "$VNET_TMP/notify.out" | tail -n1 | cut -d= -f2)
	expect "MAINPID moved" yes "$([ -n "$new" ] && [ "$new" != "$bnd" ] && echo yes || echo no)"
	bnd=${new:-0}
	procs_add "$bnd"
	expect "new vnetd's bounding set" "$want" \
		"$(awk '/^CapBnd:/ { print $2 }' "/proc/$bnd/status" 2>/dev/null)"
	run timeout 60 "$IO" signals --socket "$sock" --netns "$NS" --tap "$tap" --frames 200
	expect "frontend after the reload" 0 "$RUN_RC"
	report hardened_reload "$(run_said) $(tail -c 300 "$VNET_TMP/reload.log")"

	kill -TERM "$bnd"
	busywait 10000 sh -c "! kill -0 $bnd 2>/dev/null"
	wait "$npid"
	expect "stopped after SIGTERM" no "$(kill -0 "$bnd" 2>/dev/null && echo yes || echo no)"
	expect "STOPPING=1" yes "$(grep -q STOPPING=1 "$VNET_TMP/notify.out" && echo yes || echo no)"
	expect "pins removed" yes "$(pins_gone "$tap" && echo yes || echo no)"
	expect "socket removed" no "$([ -e "$sock" ] && echo yes || echo no)"
	report hardened_stops "$(cat "$VNET_TMP/notify.out") $(tail -c 300 "$VNET_TMP/vnetd.log")"
	procs_forget
	end_case
}

main()
{
	ksft_args "$@"
	require_root systemd || { ksft_exit; return; }
	require_cmd systemd systemd-analyze setpriv unshare "$IO" || { ksft_exit; return; }
	ksft_run :
	ksft_exit
}

main "$@"
