# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# faults.sh's hand-over scenarios (sourced by it, after vm.sh and
# guests.sh): vnetd --takeover --detach, the units' reload, under a real
# guest.
#
#   takeover, takeover-packed, takeover-rollback   takeover_case
#   takeover-ports   s_takeover_ports: the reload after the configuration
#                    file lost one port and gained another

# sh -c scripts are single-quoted on purpose; QEMU's options have commas
# shellcheck disable=SC2016,SC2054

# --- vnetd --takeover: the ports move to a new vnetd while the guest runs ---

# takeover_case NAME split|packed ok|fail
takeover_case()
{
	local name=$1 layout=$2 want=$3 t sock dp dargs=() gopts=() rc new st
	local bin=$VNETD

	fnew "$name" || { _bad+="cannot create a netns; "; return; }
	t=$(newtap)
	sock=$L/vhost.sock
	g_tap "$t" "$H/24" || { _bad+="cannot create the tap; "; return; }
	dargs=(--netns "$NS" --tap "$t" --socket "$sock" --queues 2)
	gopts=(chr=,reconnect=1 queues=2)
	[ "$layout" = packed ] && dargs+=(--packed) gopts+=(packed)
	h_iperf "$NS" "$H" 5201 "$L/iperf1.json" || { _bad+="iperf3 server; "; return; }
	local s1=$H_IPERF_PID
	d_start dp "$L/vnetd.1.log" "${dargs[@]}" || { _bad+="vnetd did not start; "; return; }
	g_start g "$sock" "${gopts[@]}"
	if ! g_ready g 90; then
		_bad+="the guest did not come up ($(g_console g | tail -n 3 | tr '\n' '|')); "
		return
	fi
	g_cmd g 10 "ethtool -L eth0 combined 2" >/dev/null || _bad+="guest: ethtool -L combined 2 failed; "
	G_IPERF_ARGS="-b 100M" g_iperf g 5201 12 bg || _bad+="guest: iperf3 did not start; "
	bytes_grow "$t" tx 1000000 || _bad+="no traffic before the hand-over; "
	ping_start
	# the reload: the unit's ExecReload= line
	[ "$want" = fail ] && bin=$VNETD_TESTING
	: >"$L/vnetd.2.log"
	if [ "$want" = fail ]; then
		VNETD_TEST_TAKEOVER_FAIL=2 timeout 90 "$bin" --takeover --detach "${dargs[@]}" -v >"$L/vnetd.2.log" 2>&1
	else
		timeout 90 "$bin" --takeover --detach "${dargs[@]}" -v >"$L/vnetd.2.log" 2>&1
	fi
	rc=$?
	sleep 3	# pings through the new vnetd (or the thawed old one)
	ping_stop
	note "pings every 10 ms: $PING_SENT sent, $PING_RECV answered (the last $PING_LAST), the slowest ${PING_MAX} ms; reload exit $rc"
	ping_none_lost "the hand-over"
	need "ping: the slowest reply took $PING_MAX ms (50 ms at most)" awk -v m="$PING_MAX" 'BEGIN { exit !(m < 50) }'
	if [ "$want" = ok ]; then
		need "vnetd --takeover --detach exited $rc: $(tail -n 2 "$L/vnetd.2.log" | tr '\n' ' ')" [ "$rc" = 0 ]
		_vm_poll 10000 _vm_gone "$dp"
		wait "$dp" 2>/dev/null
		st=$?
		need "the old vnetd exited with status $st after the hand-over" [ "$st" = 0 ]
		need "the old vnetd: no 'handed over'" grep -q 'every port handed over to pid' "$L/vnetd.1.log"
		new=$(sed -n 's/.*every port handed over to pid \([0-9]*\).*/\1/p' "$L/vnetd.1.log" | tail -n 1)
		[ -n "$new" ] && _vm_all_pids+=("$new")
		need "the new vnetd ${new:-?} is not running" kill -0 "${new:-0}"
		need "the new vnetd did not say it took the frontend over" \
			grep -q 'taken over: tap .*, its frontend connected' "$L/vnetd.2.log"
	else
		need "the failing vnetd --takeover exited $rc, not 1" [ "$rc" = 1 ]
		need "the old vnetd: no 'hand-over ... failed ... serving on'" grep -q 'hand-over to pid .* failed.*serving on' "$L/vnetd.1.log"
		need "the old vnetd died" _vm_alive "$dp"
		new=$dp
	fi
	need "QEMU saw a disconnect: $(grep -m1 -i 'disconnect' "${GDIR[g]}/qemu.err")" \
		sh -c "! grep -qi 'disconnect' '${GDIR[g]}/qemu.err'"
	need "vnetd: a frontend (re)connected after the hand-over" \
		sh -c "! grep -qE ': frontend connected\$' '$L/vnetd.2.log'"
	server_done "$s1" 60 || _bad+="iperf3 did not end; "
	local last
	last=$(iperf_last "$L/iperf1.json" 3)
	need "iperf3 across the hand-over: the last 3 s moved ${last:-nothing} (min per second)" ge "${last:-0}" 1
	need "iperf3 across the hand-over: $(jq -r '.error // empty' "$L/iperf1.json" 2>/dev/null)" \
		sh -c "[ -z \"\$(jq -r '.error // empty' '$L/iperf1.json' 2>/dev/null)\" ]"
	note "iperf3 across the hand-over, Mbit/s per second: $(iperf_rates "$L/iperf1.json")"
	local e
	e=$(cat "$L/vnetd.1.log" "$L/vnetd.2.log" | grep -E 'AddressSanitizer|runtime error|Segmentation' | head -n 2)
	need "vnetd: $e" [ -z "$e" ]
	guest_quit g
	exec 3>&2 2>/dev/null
	kill -TERM "$new"
	_vm_poll 10000 _vm_gone "$new" || kill -KILL "$new"
	exec 2>&3 3>&-
}

s_takeover()
{
	takeover_case takeover split ok
}

s_takeover_packed()
{
	takeover_case takeover-packed packed ok
}

s_takeover_rollback()
{
	takeover_case takeover-rollback split fail
}


# --- the ports change: a VM's NIC removed, another port added ------------------

# tp_carrier GUEST DEV 0|1: the guest's DEV has (1) or lacks (0) a carrier
tp_carrier()
{
	[ "$(g_cmd "$1" 5 cat "/sys/class/net/$2/carrier")" = "$3" ]
}

# tp_conf FILE SOCK TAP...: a configuration file of SOCK/TAP pairs in NS
tp_conf()
{
	local f=$1

	shift
	: >"$f"
	while [ $# -ge 2 ]; do
		echo "socket=$1 tap=$2 netns=$NS" >>"$f"
		shift 2
	done
}

# A vnetd with ports P (the guest's eth0, pinged every 10 ms) and R (its
# eth1); the configuration file then lists P and a new port A, and the
# units' reload runs: no ping lost; the old vnetd exits 0 having stopped
# R (QEMU's eth1 backend disconnected, R's socket, tap and pins gone) and
# both name it; the new vnetd set A up, and a NIC hot-plugged on A's
# socket connects to it
s_takeover_ports()
{
	local tp tr ta sp sr sa conf dp rc st new e

	fnew takeover-ports || { _bad+="cannot create a netns; "; return; }
	tp=$(newtap) tr=$(newtap) ta=$(newtap)
	sp=$L/p.sock sr=$L/r.sock sa=$L/a.sock conf=$L/vnetd.conf
	g_tap "$tp" "$H/24" || { _bad+="cannot create the tap; "; return; }
	_vm_all_taps+=("$tr" "$ta")
	tp_conf "$conf" "$sp" "$tp" "$sr" "$tr"
	d_start dp "$L/vnetd.1.log" --config "$conf" || { _bad+="vnetd did not start; "; return; }
	g_start g "$sp" chr=,reconnect=1 nic2="$sr"
	if ! g_ready g 90; then
		_bad+="the guest did not come up ($(g_console g | tail -n 3 | tr '\n' '|')); "
		return
	fi
	need "vnetd: no frontend on R (the guest's eth1)" \
		_vm_poll 10000 grep -q "$sr: frontend connected" "$L/vnetd.1.log"
	g_cmd g 10 "ip link set eth1 up" >/dev/null || _bad+="guest: ip link set eth1 up failed; "
	need "the guest's eth1 (R) has no carrier before the reload" _vm_poll 10000 tp_carrier g eth1 1
	ping_start
	# the VM's line edited: R deleted, A added; the units' ExecReload=
	tp_conf "$conf" "$sp" "$tp" "$sa" "$ta"
	timeout 90 "$VNETD" --takeover --detach --release-missing --config "$conf" -v >"$L/vnetd.2.log" 2>&1
	rc=$?
	# a NIC hot-plugged on the added port (what libvirt's attach-device does)
	g_mon g "chardev-add socket,id=c2,path=$sa,reconnect=1"
	g_mon g "netdev_add vhost-user,id=n2,chardev=c2"
	g_mon g "device_add virtio-net-pci,netdev=n2,id=d2,mac=02:00:00:00:02:02,vectors=0"
	need "the new vnetd: no frontend on the added port A" \
		_vm_poll 20000 grep -q "$sa: frontend connected" "$L/vnetd.2.log"
	sleep 2	# pings through the new vnetd
	ping_stop
	note "pings every 10 ms: $PING_SENT sent, $PING_RECV answered (the last $PING_LAST), the slowest ${PING_MAX} ms; reload exit $rc"
	ping_none_lost "the reload"
	need "reload exited $rc: $(tail -n 2 "$L/vnetd.2.log" | tr '\n' ' ')" [ "$rc" = 0 ]
	_vm_poll 10000 _vm_gone "$dp"
	wait "$dp" 2>/dev/null
	st=$?
	need "the old vnetd exited with status $st after the hand-over" [ "$st" = 0 ]
	new=$(sed -n 's/.*every port handed over to pid \([0-9]*\).*/\1/p' "$L/vnetd.1.log" | tail -n 1)
	[ -n "$new" ] && _vm_all_pids+=("$new")
	need "the new vnetd ${new:-?} is not running" kill -0 "${new:-no}"
	need "the old vnetd did not name R as released" grep -q "$sr: released: not among the ports of the new vnetd" "$L/vnetd.1.log"
	need "the new vnetd did not name R as released" grep -q "$sr: released: the running vnetd" "$L/vnetd.2.log"
	need "the new vnetd did not say it added A" grep -q "$sa: added: not served by the running vnetd" "$L/vnetd.2.log"
	need "the new vnetd did not take P's frontend over" grep -q "$sp: taken over: tap $tp.*, its frontend connected" "$L/vnetd.2.log"
	need "R's socket is still there" test ! -e "$sr"
	need "R's tap is still there" sh -c '! ip -n "$1" link show "$2" >/dev/null 2>&1' sh "$NS" "$tr"
	need "R's pins are still there" test ! -e "/sys/fs/bpf/vnet/$tr"
	# QEMU takes a vhost-user NIC's link down when its backend goes
	need "the guest's eth1 (R) kept its carrier" \
		_vm_poll 10000 tp_carrier g eth1 0
	need "the guest's eth0 (P) lost its carrier" tp_carrier g eth0 1
	need "QEMU's eth0 (P) saw a disconnect: $(grep -m1 -i 'c0.*disconnect' "${GDIR[g]}/qemu.err")" \
		sh -c "! grep -qi 'c0.*disconnect' '${GDIR[g]}/qemu.err'"
	need "the new vnetd: P's frontend (re)connected after the hand-over" \
		sh -c "! grep -qE '$sp: frontend connected\$' '$L/vnetd.2.log'"
	e=$(cat "$L/vnetd.1.log" "$L/vnetd.2.log" | grep -E 'AddressSanitizer|runtime error|Segmentation' | head -n 2)
	need "vnetd: $e" [ -z "$e" ]
	guest_quit g
	# not our child (--detach): stopped, and what it leaves looked at
	if [ -n "$new" ]; then
		exec 3>&2 2>/dev/null
		kill -TERM "$new"
		_vm_poll 10000 _vm_gone "$new" || kill -KILL "$new"
		exec 2>&3 3>&-
	fi
	need "A's tap or pins left after the stop" sh -c '! ip -n "$1" link show "$2" >/dev/null 2>&1 && [ ! -e "/sys/fs/bpf/vnet/$2" ]' sh "$NS" "$ta"
}
