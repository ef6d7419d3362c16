#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# busybox ash: POSIX sh plus `local`
# shellcheck shell=dash
#
# /init of the e2e guest (busybox sh; see selftests/e2e/build-guest.sh).
# Loads Debian's own virtio modules, configures eth0 as 192.0.2.2/24, runs
# the steps named on the kernel command line, prints what it saw on the
# serial console in a form the host parses, and powers off.
#
# Kernel command line:
#   vnet.steps=STEP+STEP+...   what to run, in order (below)
#   vnet.host=ADDR             the host end (default 192.0.2.1)
#   vnet.ip=ADDR/LEN           eth0's address (default 192.0.2.2/24)
#
# Steps (fields separated by ':'):
#   ping:N[:SIZE]              N echo requests to the host (SIZE bytes of
#                              payload)
#   mtu                        print eth0's MTU
#   pinged:N                   wait (30 s at most) until the host's N echo
#                              requests have been answered
#   iperf:TAG:DIR:SECS:PORT[:CPU[:bg]]
#                              iperf3 TCP client to HOST:PORT for SECS, DIR
#                              tx (guest -> host) or rx (host -> guest, -R),
#                              pinned to CPU (- for none); bg: in the
#                              background (see wait)
#   sw:TAG:SECS:PORT:LEN       iperf3 TCP client guest -> host for SECS
#                              with LEN-byte writes (iperf3 -l): a
#                              small-write stream
#   rr:TAG:SECS:PORT           sockperf UDP ping-pong of 64 B messages
#                              with the host's sockperf server on PORT
#   wait                       wait for every background step
#   offloads-off               ethtool -K eth0 tso off gso off
#   combined:N                 ethtool -L eth0 combined N
#   mark:NAME                  print a marker the host waits for
#   sleep:N                    sleep N seconds
#   reach:SECS                 wait until the host answers a ping
#   serve:TTY                  take commands from /dev/TTY (a second serial
#                              port) until "quit": a line "TAG COMMAND..."
#                              runs COMMAND with sh, its output goes back on
#                              TTY between "VNET-OUT-BEGIN TAG" and
#                              "VNET-OUT-END TAG rc=N" (bench/evidence.sh)
#
# Output lines (each starts with "VNET: "; \r from the tty is the host's
# problem):
#   VNET: boot uptime=S           init started
#   VNET: dev features=BITS queues=N mtu=N   eth0 is up (virtio features
#                                 as /sys prints them, bit 0 first)
#   VNET: ping sent=N recv=M
#   VNET: pinged echos=N
#   VNET: iperf TAG rc=N          and, before it, the client's JSON between
#   VNET-JSON-BEGIN TAG / VNET-JSON-END TAG (sw too)
#   VNET: rr TAG rc=N p50=US p99=US msgs=N   a ping-pong's round trip
#   VNET: ethtool ...             what an ethtool step left in place
#   VNET: mark NAME
#   VNET: error WHAT              a step that could not be done
#   VNET: done rc=N               last line before the power-off; rc is
#                                 the number of failed steps

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

say()
{
	echo "VNET: $*"
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
# the console is for our lines and the kernel's errors (level 3 and
# worse): the host reads them as failures.  Messages without a level go
# out at 3 too: a soft lockup prints its registers and frames so
echo "4 3 1 7" >/proc/sys/kernel/printk

HOST=192.0.2.1
IP=192.0.2.2/24
STEPS=""
read -r cmdline </proc/cmdline
for w in $cmdline; do
	case $w in
	vnet.steps=*) STEPS=${w#vnet.steps=} ;;
	vnet.host=*) HOST=${w#vnet.host=} ;;
	vnet.ip=*) IP=${w#vnet.ip=} ;;
	esac
done
say "boot uptime=$(cut -d' ' -f1 /proc/uptime)"

failed=0
bgpids=""

finish()
{
	say "done rc=$failed"
	sync
	poweroff -f
	# not reached unless poweroff failed: a panic makes QEMU exit (-no-reboot)
	sleep 5
	exit 1
}

err()
{
	say "error $*"
	failed=$((failed + 1))
}

# modules in dependency order (the kernel package has no modules.dep in a
# form busybox insmod reads; build-guest.sh writes this order)
while read -r m; do
	[ -n "$m" ] || continue
	if ! insmod "/lib/modules/$m.ko" 2>/tmp/insmod.err; then
		grep -q 'File exists' /tmp/insmod.err ||
			err "insmod $m: $(cat /tmp/insmod.err)"
	fi
done </lib/modules/order

# eth0_up: link up, the address, up to 10 s for the carrier
eth0_up()
{
	local n=0

	ip link set eth0 up
	ip addr add "$IP" dev eth0
	while [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] &&
		[ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
}

ip link set lo up
n=0
while [ ! -e /sys/class/net/eth0 ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
if [ ! -e /sys/class/net/eth0 ]; then
	err "no eth0 after 10 s"
	finish
fi
eth0_up
feat=$(cat /sys/class/net/eth0/device/features 2>/dev/null)
nq=0
for q in /sys/class/net/eth0/queues/tx-*; do
	[ -e "$q" ] && nq=$((nq + 1))
done
say "dev features=$feat queues=$nq mtu=$(cat /sys/class/net/eth0/mtu) carrier=$(cat /sys/class/net/eth0/carrier 2>/dev/null) uptime=$(cut -d' ' -f1 /proc/uptime)"

# reach SECS: until the host answers (ARP and the first echo)
reach()
{
	local end=$(($(date +%s) + $1))

	while [ "$(date +%s)" -lt "$end" ]; do
		ping -c 1 -W 1 "$HOST" >/dev/null 2>&1 && return 0
	done
	return 1
}

icmp_in_echos()
{
	# /proc/net/snmp: a header line and a value line per protocol
	awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "InEchos") c = i; h = 1 } else print $c }' /proc/net/snmp
}

# rebind: the virtio_net driver lets go of the device and takes it again:
# a device reset (new rings, the backend starts them at their first
# descriptor), then eth0 set up as at boot
step_rebind()
{
	local dev drv=/sys/bus/virtio/drivers/virtio_net n=0

	dev=$(basename "$(readlink /sys/class/net/eth0/device)")
	if ! echo "$dev" >"$drv/unbind" || ! echo "$dev" >"$drv/bind"; then
		err "rebind: $dev did not unbind/bind"
		return
	fi
	while [ ! -e /sys/class/net/eth0 ] && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	eth0_up
	say "rebind $dev carrier=$(cat /sys/class/net/eth0/carrier 2>/dev/null)"
}

step_ping()
{
	local out sent recv

	if [ -n "${2:-}" ]; then
		out=$(ping -c "$1" -i 0.2 -W 2 -s "$2" "$HOST" 2>&1)
	else
		out=$(ping -c "$1" -i 0.2 -W 2 "$HOST" 2>&1)
	fi
	sent=$(echo "$out" | sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p')
	recv=$(echo "$out" | sed -n 's/.* \([0-9]*\) packets received.*/\1/p')
	say "ping sent=${sent:-0} recv=${recv:-0}"
	[ "${recv:-0}" -ge 1 ] || err "ping: no reply from $HOST"
}

step_pinged()
{
	local want=$1 base end n

	base=$(icmp_in_echos)
	say "wait pinged"
	end=$(($(date +%s) + 30))
	n=0
	while [ "$(date +%s)" -lt "$end" ]; do
		n=$(($(icmp_in_echos) - base))
		[ "$n" -ge "$want" ] && break
		sleep 0.2
	done
	say "pinged echos=$n"
	[ "$n" -ge "$want" ] || err "pinged: $n of $want echo requests"
}

# iperf TAG DIR SECS PORT [CPU [LEN]]: the client, its JSON on the console
run_iperf()
{
	local tag=$1 dir=$2 secs=$3 port=$4 cpu=${5:--} rc rev="" pin="" len=""

	[ "$dir" = rx ] && rev=-R
	[ "$cpu" != - ] && pin="taskset -c $cpu"
	[ -n "${6:-}" ] && len="-l $6"
	# the connect timeout bounds a host that is not listening
	# shellcheck disable=SC2086 # empty or two words
	$pin iperf3 -c "$HOST" -p "$port" -t "$secs" $rev $len -J \
		--connect-timeout 5000 >"/tmp/iperf-$tag.json" 2>&1
	rc=$?
	echo "VNET-JSON-BEGIN $tag"
	cat "/tmp/iperf-$tag.json"
	echo "VNET-JSON-END $tag"
	say "iperf $tag rc=$rc"
	return $rc
}

step_iperf()
{
	local tag=$1 dir=$2 secs=$3 port=$4 cpu=${5:--} bg=${6:-}

	if [ "$bg" = bg ]; then
		# the JSON goes to the console when the client is done; one
		# client's block at a time (they end about together)
		(
			run_iperf "$tag" "$dir" "$secs" "$port" "$cpu" >"/tmp/iperf-$tag.out"
			echo $? >"/tmp/iperf-$tag.rc"
		) &
		bgpids="$bgpids $!:$tag"
	else
		run_iperf "$tag" "$dir" "$secs" "$port" "$cpu" || err "iperf $tag failed"
	fi
}

# rr TAG SECS PORT: a sockperf UDP ping-pong; its round trip's percentiles
step_rr()
{
	local out rc p50 p99 msgs

	out=$(sockperf ping-pong -i "$HOST" -p "$3" -m 64 -t "$2" --full-rtt 2>&1)
	rc=$?
	p50=$(echo "$out" | sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p')
	p99=$(echo "$out" | sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p')
	msgs=$(echo "$out" | sed -n 's/.*SentMessages=\([0-9]*\).*/\1/p' | head -n 1)
	say "rr $1 rc=$rc p50=${p50:-0} p99=${p99:-0} msgs=${msgs:-0}"
	if [ "$rc" != 0 ] || [ -z "$p50" ]; then
		err "rr $1: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
	fi
}

# serve TTY: a command loop on a serial port (raw, no echo), for a host
# that decides what to run next from what it measured
step_serve()
{
	local dev=/dev/$1 tag cmd rc

	if ! stty -F "$dev" raw -echo 2>/dev/null; then
		err "serve: cannot set up $dev"
		return
	fi
	exec 3<>"$dev"
	echo "VNET-SERVE-READY" >&3
	while read -r tag cmd <&3; do
		[ "$tag" = quit ] && break
		[ -n "$tag" ] || continue
		echo "VNET-OUT-BEGIN $tag" >&3
		sh -c "$cmd" >&3 2>&1 </dev/null
		rc=$?
		echo "VNET-OUT-END $tag rc=$rc" >&3
	done
	exec 3>&-
}

step_wait()
{
	local p tag

	for p in $bgpids; do
		wait "${p%%:*}"
		tag=${p#*:}
		cat "/tmp/iperf-$tag.out"
		[ "$(cat "/tmp/iperf-$tag.rc" 2>/dev/null)" = 0 ] ||
			err "iperf $tag failed"
	done
	bgpids=""
}

# the steps, '+' between them, ':' between a step's fields
IFS_SAVE=$IFS
IFS=+
# shellcheck disable=SC2086 # split on +
set -- $STEPS
IFS=$IFS_SAVE
for s in "$@"; do
	IFS=:
	# shellcheck disable=SC2086
	set -- $s
	IFS=$IFS_SAVE
	case $1 in
	ping) step_ping "${2:-3}" "${3:-}" ;;
	mtu) say "mtu $(cat /sys/class/net/eth0/mtu)" ;;
	pinged) step_pinged "${2:-3}" ;;
	iperf) shift; step_iperf "$@" ;;
	sw) run_iperf "$2" tx "$3" "$4" - "$5" || err "iperf $2 failed" ;;
	rr) step_rr "$2" "$3" "$4" ;;
	wait) step_wait ;;
	offloads-off)
		ethtool -K eth0 tso off gso off >/dev/null 2>&1 ||
			err "ethtool -K eth0 tso off gso off"
		say "ethtool $(ethtool -k eth0 | grep -E '^(tcp-segmentation-offload|generic-segmentation-offload):' | tr -d ' ' | tr '\n' ' ')"
		;;
	combined)
		ethtool -L eth0 combined "$2" >/dev/null 2>&1 ||
			err "ethtool -L eth0 combined $2"
		say "ethtool combined=$(ethtool -l eth0 | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2 }') rx-queues=$(find /sys/class/net/eth0/queues -name 'rx-*' | wc -l) cpus=$(nproc)"
		;;
	mark) say "mark $2" ;;
	rebind) step_rebind ;;
	sleep) sleep "$2" ;;
	reach)
		if reach "${2:-10}"; then
			say "reach ok uptime=$(cut -d' ' -f1 /proc/uptime)"
		else
			err "reach: $HOST did not answer in ${2:-10} s"
		fi
		;;
	serve) step_serve "${2:-ttyS1}" ;;
	*) err "unknown step $s" ;;
	esac
done
step_wait
finish
