# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# Several guests and vnetds at once, for the fault and migration scenarios
# (selftests/e2e/faults.sh).  Source it after selftests/e2e/vm.sh (it uses
# vm.sh's paths, _vm_poll and _vm_gone, and registers every pid and netns
# with vm.sh's vm_cleanup_all).
#
#   g_start NAME SOCK [OPT...]   boot guest NAME (background) on vhost-user
#                                socket SOCK; GPID[NAME].  OPTs:
#     steps=S        vnet.steps (default reach:15+serve:ttyS1)
#     chr=,X=Y...    more -chardev socket options (",reconnect=1",
#                    ",server=on,wait=off")
#     ip=A/L host=H  the guest's address and the host end
#     reboot         a guest reboot resets the machine (no -no-reboot)
#     incoming=URI   a migration destination (-incoming URI)
#     paused         -S: the guest runs only after the monitor's "cont"
#                    (a migration destination stays paused once loaded)
#     mem=SIZE       guest RAM: MB, or a size with a K suffix (default E2E_MEM)
#     queues=N       N queue pairs (mq=on; the guest uses them after
#                    ethtool -L eth0 combined N)
#     packed         packed rings (packed=on)
#     nic2=SOCK      a second NIC (eth1) on vhost-user socket SOCK
#                    (chardev c1, reconnect=1)
#   g_cmd NAME SECS CMD       run CMD in the guest (serve:ttyS1), its output
#                             on stdout; 1 if it failed or took over SECS
#   g_send NAME CMD           send CMD, do not wait (a reboot, say)
#   g_ready NAME SECS [N]     the guest's serve loop is up (N-th time)
#   g_mon NAME CMD            a human-monitor command
#   g_kill NAME [SIG]         signal QEMU and reap it; GRC[NAME]
#   g_wait NAME SECS          wait for QEMU to exit; GRC[NAME], 1 on timeout
#   d_start VAR LOG ARGS...   vnetd ARGS... -v into LOG, its pid into VAR;
#                             ready when LOG says "listening" (server) or
#                             "frontend connected" (--client)
#   d_stop PID [SIG]          stop that vnetd (bounded), D_RC its status
#   h_iperf NS ADDR PORT FILE a one-off iperf3 -s -J in NS into FILE
#   proc_fds PID / proc_maps PID   open fds, lines of /proc/PID/maps
#
# Files of guest NAME go to $GL/NAME/ (default $G_LOGS/NAME/: console.log, ctl.log,
# monitor.log, qemu.err, qemu.cmdline).

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016,SC2034

declare -A GPID GDIR GRC

# g_run_scenarios: each selected scenario NAME (e2e_prelude's names) as
# s_NAME, logs in $G_LOGS/NAME, everything it started ended after it,
# then its verdict and its time
g_run_scenarios()
{
	local n t0

	for n in "${names[@]}"; do
		t0=$SECONDS
		L=$G_LOGS/$n
		"s_${n//-/_}"
		vm_cleanup_all >/dev/null 2>&1
		_vm_all_pids=()
		_vm_all_ns=()
		_vm_all_taps=()
		verdict "$n" "$L"
		echo "# $n: $((SECONDS - t0)) s"
	done
}

# A scenario's checks (need, ge, verdict: checks.sh); note: a "# CASE:"
# line.
# shellcheck source=selftests/e2e/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

# g_case PREFIX NAME: scenario NAME's netns vnet-PREFIX-NAME-PID (NS: lo
# up, no IPv6) and a fresh log directory (L, GL); CASE=NAME
g_case()
{
	CASE=$2
	NS="vnet-$1-$2-$$"
	L=$G_LOGS/$2
	GL=$L
	rm -rf "$L"
	mkdir -p "$L"
	ip netns add "$NS" || return 1
	_vm_all_ns+=("$NS")
	ip -n "$NS" link set lo up
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1
}

# g_tap TAP [ADDR/LEN]: a persistent tap in NS (it outlives a vnetd), up
g_tap()
{
	ip -n "$NS" tuntap add dev "$1" mode tap multi_queue vnet_hdr || return 1
	_vm_all_taps+=("$1")
	[ -n "${2:-}" ] && ip -n "$NS" addr add "$2" dev "$1"
	ip -n "$NS" link set "$1" up
}

note()
{
	echo "# $CASE: $*"
}

G_LOGS=${G_LOGS:-$E2E_DIR/logs/faults}

g_start()
{
	local name=$1 sock=$2 o steps="reach:15+serve:ttyS1" chr="" ip="" host=""
	local reboot=no incoming="" mem=$E2E_MEM dir append mac=$E2E_GUEST_MAC
	local paused=no queues=1 dev_extra="" nic2=""

	shift 2
	for o in "$@"; do
		case $o in
		steps=*) steps=${o#steps=} ;;
		chr=*) chr=${o#chr=} ;;
		ip=*) ip=${o#ip=} ;;
		host=*) host=${o#host=} ;;
		mac=*) mac=${o#mac=} ;;
		reboot) reboot=yes ;;
		paused) paused=yes ;;
		incoming=*) incoming=${o#incoming=} ;;
		mem=*) mem=${o#mem=} ;;
		queues=*) queues=${o#queues=} dev_extra+=",mq=on" ;;
		packed) dev_extra+=",packed=on" ;;
		nic2=*) nic2=${o#nic2=} ;;
		*) echo "g_start: unknown option $o" >&2; return 1 ;;
		esac
	done
	dir=${GL:-$G_LOGS}/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	GDIR[$name]=$dir
	GRC[$name]=""
	append="console=ttyS0 loglevel=4 panic=-1 vnet.steps=$steps"
	[ -n "$ip" ] && append+=" vnet.ip=$ip"
	[ -n "$host" ] && append+=" vnet.host=$host"
	mkfifo "$dir/ctl.in" "$dir/ctl.out" "$dir/mon.in" "$dir/mon.out" || return 1
	case $mem in *K) ;; *) mem=${mem}M ;; esac
	# the e2e guest's device (vectors=0: see vm.sh's e2e_msix_ok)
	# shellcheck disable=SC2054 # the commas are QEMU's
	local args=(-accel tcg -cpu max -smp 1 -m "$mem"
		-machine pc,memory-backend=mem
		-object "memory-backend-memfd,id=mem,size=$mem,share=on"
		-nodefaults -no-user-config -display none
		-kernel "$E2E_VMLINUX" -initrd "$E2E_INITRD"
		-append "$append"
		-chardev "socket,id=c0,path=$sock$chr"
		-netdev "vhost-user,id=n0,chardev=c0,queues=$queues"
		-device "virtio-net-pci,netdev=n0,mac=$mac,vectors=0$dev_extra"
		-serial "file:$dir/console.log"
		-chardev "pipe,id=ctl,path=$dir/ctl" -serial chardev:ctl
		-chardev "pipe,id=mon,path=$dir/mon" -mon chardev=mon,mode=readline)
	# a second NIC on another vhost-user socket (reconnect=1, as libvirt)
	# shellcheck disable=SC2054 # the commas are QEMU's
	[ -n "$nic2" ] && args+=(-chardev "socket,id=c1,path=$nic2,reconnect=1"
		-netdev "vhost-user,id=n1,chardev=c1"
		-device "virtio-net-pci,netdev=n1,mac=02:00:00:00:01:02,vectors=0")
	[ $reboot = no ] && args+=(-no-reboot)
	[ -n "$incoming" ] && args+=(-incoming "$incoming")
	[ $paused = yes ] && args+=(-S)
	printf '%s\n' "$QEMU ${args[*]}" >"$dir/qemu.cmdline"
	: >"$dir/console.log"
	"$QEMU" "${args[@]}" </dev/null >"$dir/qemu.err" 2>&1 &
	GPID[$name]=$!
	_vm_all_pids+=("$!")
	# O_RDWR: never blocks, no EOF when QEMU goes
	cat <>"$dir/ctl.out" >"$dir/ctl.log" &
	_vm_all_pids+=("$!")
	cat <>"$dir/mon.out" >"$dir/monitor.log" &
	_vm_all_pids+=("$!")
	return 0
}

# g_ready NAME SECS [N]: the N-th (default 1st) VNET-SERVE-READY
g_ready()
{
	local n=${3:-1}

	_vm_poll $(($2 * 1000)) _g_ready_n "${GDIR[$1]}/ctl.log" "$n"
}

_g_ready_n()
{
	[ "$(tr -d '\r' <"$1" | grep -c '^VNET-SERVE-READY')" -ge "$2" ]
}

g_send()
{
	timeout 5 sh -c 'printf "%s\n" "$1" >"$2"' sh "$2" "${GDIR[$1]}/ctl.in"
}

g_cmd()
{
	local name=$1 secs=$2 tag start log=${GDIR[$1]}/ctl.log

	shift 2
	tag=c$(date +%s%N)
	start=$(wc -c <"$log")
	g_send "$name" "$tag $*" || return 1
	_vm_poll $((secs * 1000)) sh -c 'tr -d "\r" <"$1" | grep -q "^VNET-OUT-END $2 rc="' sh "$log" "$tag" ||
		return 1
	tail -c +$((start + 1)) "$log" | tr -d '\r' |
		sed -n "/^VNET-OUT-BEGIN $tag\$/,/^VNET-OUT-END $tag rc=/p" | sed '1d;$d'
	tail -c +$((start + 1)) "$log" | tr -d '\r' | grep -q "^VNET-OUT-END $tag rc=0\$"
}

g_mon()
{
	timeout 5 sh -c 'printf "%s\n" "$1" >"$2"' sh "$2" "${GDIR[$1]}/mon.in"
}

g_kill()
{
	local pid=${GPID[$1]:-}

	[ -n "$pid" ] || return 0
	exec 3>&2 2>/dev/null
	kill -"${2:-TERM}" "$pid"
	_vm_poll 10000 _vm_gone "$pid" || kill -KILL "$pid"
	wait "$pid"
	GRC[$1]=$?
	exec 2>&3 3>&-
	GPID[$1]=""
}

g_wait()
{
	local pid=${GPID[$1]:-}

	[ -n "$pid" ] || return 0
	_vm_poll $(($2 * 1000)) _vm_gone "$pid" || return 1
	wait "$pid" 2>/dev/null
	GRC[$1]=$?
	GPID[$1]=""
}

# g_console NAME: the guest's console, \r removed
g_console()
{
	tr -d '\r' <"${GDIR[$1]}/console.log" 2>/dev/null
}

# g_oops NAME: the guest kernel's first report (BUG, WARNING, soft lockup)
# in one line: its title, RIP and the first frames of its call trace, so
# that a failure's message says where the guest was stuck
g_oops()
{
	g_console "$1" | sed 's/^\[ *[0-9.]*\] //' |
		awk '/BUG:|WARNING:|watchdog:/ && !t { t = 1; print; next }
		     t && /^RIP:/ { print; next }
		     t && /^ [a-z_0-9.]+\+0x/ && n++ < 8 { sub(/^ /, ""); print }' |
		tr '\n' '|'
}

d_start()
{
	local var=$1 log=$2 ready=listening

	shift 2
	case " $* " in *" --client "*) ready="frontend connected" ;; esac
	# there before the first look (the child opens it after the fork)
	: >"$log"
	"$VNETD" "$@" -v >"$log" 2>&1 &
	printf -v "$var" '%s' "$!"
	_vm_all_pids+=("$!")
	_vm_poll 20000 grep -q "$ready" "$log"
}

d_stop()
{
	D_RC=""
	[ -n "${1:-}" ] || return 0
	exec 3>&2 2>/dev/null
	kill -"${2:-TERM}" "$1"
	_vm_poll 10000 _vm_gone "$1" || kill -KILL "$1"
	wait "$1"
	D_RC=$?
	exec 2>&3 3>&-
}

# ping_stats FILE: "sent recv max_ms last" of a ping -D log (ping ended by
# SIGINT); last: the highest icmp_seq answered.  SIGINT can land while the
# last request is on its way, so sent - last is that tail (1 at most when
# the path works) and last - recv the requests lost before it
ping_stats()
{
	local sent recv max last

	sent=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$1")
	recv=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$1")
	max=$(sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' "$1" | sort -n | tail -n 1)
	last=$(sed -n 's/.* icmp_seq=\([0-9]*\) .*/\1/p' "$1" | sort -n | tail -n 1)
	echo "${sent:-0} ${recv:-0} ${max:-0} ${last:-0}"
}

# ping_start: the host pings the guest every 10 ms from NS into
# $L/ping.log ($PING_PID); returns after 100 answers (or says why not)
ping_start()
{
	ip netns exec "$NS" ping -D -i 0.01 -W 1 "$E2E_GUEST_IP" >"$L/ping.log" 2>&1 &
	PING_PID=$!
	_vm_all_pids+=("$PING_PID")
	_vm_poll 10000 sh -c '[ "$(grep -c "bytes from" "$1")" -ge 100 ]' sh "$L/ping.log" ||
		_bad+="the guest did not answer pings; "
}

# ping_stop: ping ended (SIGINT), its figures in PING_SENT, PING_RECV,
# PING_MAX (ms) and PING_LAST (ping_stats)
ping_stop()
{
	kill -INT "$PING_PID"
	_vm_poll 5000 _vm_gone "$PING_PID"
	read -r PING_SENT PING_RECV PING_MAX PING_LAST <<<"$(ping_stats "$L/ping.log")"
}

# ping_none_lost WHAT: after ping_stop, no ping lost across WHAT
ping_none_lost()
{
	need "ping: $((PING_LAST - PING_RECV)) of $PING_LAST lost across $1" \
		sh -c '[ "$1" -gt 0 ] && [ "$1" = "$2" ]' sh "$PING_LAST" "$PING_RECV"
	need "ping: $((PING_SENT - PING_LAST)) sent after the last answered one (1 at most: in flight at the SIGINT)" \
		[ $((PING_SENT - PING_LAST)) -le 1 ]
}

h_iperf()
{
	ip netns exec "$1" iperf3 -s -1 -J -p "$3" -B "$2" >"$4" 2>&1 &
	_vm_all_pids+=("$!")
	H_IPERF_PID=$!
	_vm_poll 5000 sh -c 'ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .' sh "$1" "$3"
}

proc_fds()
{
	find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

proc_maps()
{
	wc -l <"/proc/$1/maps" 2>/dev/null
}
