#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# A real libvirtd (Debian's libvirt-daemon-system) runs the e2e guest
# (build-guest.sh) from the domain XML of docs/libvirt.md: TCG, memfd
# memory with shared access, an <interface type='vhostuser'> whose QEMU
# (user libvirt-qemu) connects as a client to vnetd's socket, created with
# --socket-group libvirt-qemu --socket-mode 0660, and a second,
# type='bridge' interface whose tap the libvirt hook (libvirt/qemu-hook,
# installed by `make install`, run by libvirtd itself) attaches vnet to
# once its switch is on: started once with the switch as installed (off:
# nothing attached), then again with it on.  The vhostuser interface has
# <bandwidth>, and the domain's metadata a clean-traffic filter for it
# with the guest's IP (libvirt keeps no <filterref> on a vhostuser
# interface): with the hook on, its vnetd port gets the rate limits
# (libvirt's kB/s and kB) and the spoofing protection they say, and
# both taps the domain's name (vnetctl status, and vm="vm1" on every
# series `vnetctl stats --prometheus` has of them).  The guest and the host
# ping each other through vnetd (the guard passes the guest's own
# frames); then the domain is destroyed: vnetd keeps running, the hook
# has removed the bridge tap's pins and the vnetd port's VM name.
#
# libvirtd is private to the test: it runs in the test's network namespace
# and in a mount namespace of its own, with a copy of /etc/libvirt and
# empty /run/libvirt, /var/lib/libvirt, /var/cache/libvirt and
# /var/log/libvirt, so that nothing of the host's libvirt is touched (and
# no default network starts).
#
#   selftests/e2e/libvirt.sh     (selftests/operator/test_libvirt.sh)

# shellcheck disable=SC2016
set -u
E2E_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/e2e/vm.sh
source "$E2E_HERE/vm.sh"

LIBVIRTD=${LIBVIRTD:-/usr/sbin/libvirtd}
LV_DIR=/run/vnet-libvirt-test-$$
LV_PID=""
PASSN=0
FAILN=0

pass() { echo "PASS: libvirt/$1"; PASSN=$((PASSN + 1)); }
fail() { echo "FAIL: libvirt/$1: $2"; FAILN=$((FAILN + 1)); }
note() { echo "# $(date +%T) $*"; }

_bad=""
need() # DESC CMD... : collect a failure unless CMD holds
{
	local d=$1

	shift
	"$@" || _bad+="$d; "
}

ge() { [ "${1:-0}" -ge "$2" ] 2>/dev/null; }

# vm_of DEV: DEV's VM name (vnetctl -j status), "null" for none
vm_of() { "$VNETCTL" -n "$VM_NS" -j status "$1" | jq -r '.[0].vm'; }

# vm_series DEV NAME: DEV has series, each with vm="NAME" after device
vm_series()
{
	local out

	out=$("$VNETCTL" -n "$VM_NS" stats --prometheus "$1" | grep "^vnet_[a-z_]*{device=\"$1\"")
	[ -n "$out" ] && ! grep -vqF "{device=\"$1\",vm=\"$2\"," <<<"$out"
}

report() # NAME
{
	if [ -z "$_bad" ]; then pass "$1"; else fail "$1" "$_bad"; fi
	_bad=""
}

# lv CMD...: CMD in libvirtd's mount and network namespaces (virsh)
lv()
{
	nsenter -t "$LV_PID" -m -n -- "$@"
}

virsh_() { lv virsh -q -c qemu:///system "$@"; }

lv_start()
{
	local d

	mkdir -p "$LV_DIR" /run/libvirt || return 1
	chmod 0755 "$LV_DIR"
	for d in etc run lib cache log; do
		mkdir -p "$LV_DIR/$d"
	done
	cp -a /etc/libvirt/. "$LV_DIR/etc/"
	rm -f "$LV_DIR"/etc/qemu/networks/autostart/*.xml
	# QEMU as libvirt-qemu, without the host's confinement, cgroups and
	# per-domain /dev (the test namespace has what it needs), stdout to a
	# plain file (no virtlogd)
	cat >>"$LV_DIR/etc/qemu.conf" <<-EOF
	user = "libvirt-qemu"
	group = "libvirt-qemu"
	security_driver = "none"
	cgroup_controllers = [ ]
	namespaces = [ ]
	stdio_handler = "file"
	EOF
	# the hook and its switch as a fresh `make install` leaves them (off),
	# in libvirtd's /etc/libvirt and a private /etc/default; the switch
	# file names the vnetctl under test (libvirtd's PATH has no build/)
	make -s -C "$E2E_ROOT" install DESTDIR="$LV_DIR/inst" PREFIX=/usr >"$VM_LOGS/install.log" 2>&1 ||
		return 1
	mkdir -p "$LV_DIR/etc/hooks/qemu.d" "$LV_DIR/default"
	cp -a /etc/default/. "$LV_DIR/default/"
	cp "$LV_DIR/inst/etc/libvirt/hooks/qemu.d/vnet" "$LV_DIR/etc/hooks/qemu.d/vnet"
	cp "$LV_DIR/inst/etc/default/vnet-hook" "$LV_DIR/default/vnet-hook"
	echo "VNETCTL=$VNETCTL" >>"$LV_DIR/default/vnet-hook"

	unshare -m --propagation private bash -c '
		d=$1 ns=$2 libvirtd=$3
		mount --bind "$d/etc" /etc/libvirt &&
		mount --bind "$d/run" /run/libvirt &&
		mount --bind "$d/lib" /var/lib/libvirt &&
		mount --bind "$d/cache" /var/cache/libvirt &&
		mount --bind "$d/log" /var/log/libvirt &&
		mount --bind "$d/default" /etc/default || exit 99
		# the network namespace only (not ip netns exec, whose private
		# /sys has no bpffs: the hook would find no pins to make)
		exec nsenter --net="/run/netns/$ns" "$libvirtd" --pid-file "$d/run/libvirtd.pid"
	' lv "$LV_DIR" "$VM_NS" "$LIBVIRTD" >"$VM_LOGS/libvirtd.log" 2>&1 &
	LV_PID=$!
	_vm_all_pids+=("$LV_PID")
	_vm_poll 30000 virsh_ version >/dev/null 2>&1
}

lv_stop()
{
	[ -n "$LV_PID" ] || return 0
	virsh_ destroy vm1 >/dev/null 2>&1
	virsh_ undefine vm1 >/dev/null 2>&1
	kill -TERM "$LV_PID" 2>/dev/null
	_vm_poll 10000 _vm_gone "$LV_PID" || kill -KILL "$LV_PID" 2>/dev/null
	wait "$LV_PID" 2>/dev/null
	LV_PID=""
}

cleanup()
{
	[ "$BASHPID" = "$$" ] || return 0
	lv_stop
	vm_cleanup_all
	[ -n "${BR:-}" ] && ip -n "${VM_NS:-none}" link del "$BR" 2>/dev/null
	rm -rf "$LV_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# domain_xml: docs/libvirt.md's domain, for the e2e guest under TCG
domain_xml()
{
	cat <<-EOF
	<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
	  <name>vm1</name>
	  <metadata>
	    <vnet:filterref xmlns:vnet='urn:vnet:libvirt:1' socket='$VM_SOCK' filter='clean-traffic'>
	      <vnet:parameter name='IP' value='$E2E_GUEST_IP'/>
	    </vnet:filterref>
	  </metadata>
	  <memory unit='MiB'>$E2E_MEM</memory>
	  <memoryBacking>
	    <source type='memfd'/>
	    <access mode='shared'/>
	  </memoryBacking>
	  <vcpu>1</vcpu>
	  <cpu mode='maximum'/>
	  <os>
	    <type arch='x86_64' machine='pc'>hvm</type>
	    <kernel>$LV_DIR/vm/vmlinux</kernel>
	    <initrd>$LV_DIR/vm/initramfs.cpio</initrd>
	    <cmdline>console=ttyS0 loglevel=4 panic=-1 no_timer_check vnet.steps=$1</cmdline>
	  </os>
	  <on_poweroff>destroy</on_poweroff>
	  <on_reboot>destroy</on_reboot>
	  <on_crash>destroy</on_crash>
	  <devices>
	    <emulator>$(command -v "$QEMU")</emulator>
	    <interface type='vhostuser'>
	      <mac address='$E2E_GUEST_MAC'/>
	      <source type='unix' path='$VM_SOCK' mode='client'>
	        <reconnect enabled='yes' timeout='2'/>
	      </source>
	      <bandwidth>
	        <inbound average='12500' burst='256'/>
	        <outbound average='6250' peak='12500'/>
	      </bandwidth>
	      <model type='virtio'/>
	      <driver queues='1'/>
	      <alias name='ua-net0'/>
	    </interface>
	    <interface type='bridge'>
	      <mac address='02:00:00:00:00:03'/>
	      <source bridge='$BR'/>
	      <target dev='$BRTAP'/>
	      <model type='virtio'/>
	      <driver name='qemu'/>
	      <alias name='ua-net1'/>
	    </interface>
	    <serial type='file'>
	      <source path='$VM_SERIAL'/>
	      <target port='0'/>
	    </serial>
	    <memballoon model='none'/>
	  </devices>
	  <qemu:override>
	    <qemu:device alias='ua-net0'>
	      <qemu:frontend>
	        <qemu:property name='vectors' type='unsigned' value='0'/>
	      </qemu:frontend>
	    </qemu:device>
	    <qemu:device alias='ua-net1'>
	      <qemu:frontend>
	        <qemu:property name='vectors' type='unsigned' value='0'/>
	      </qemu:frontend>
	    </qemu:device>
	  </qemu:override>
	</domain>
	EOF
}

main()
{
	local why out recv st n_disc=0

	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: libvirt: needs root"
		return 0
	fi
	for c in "$LIBVIRTD" virsh "$QEMU" nsenter unshare; do
		if ! command -v "$c" >/dev/null 2>&1; then
			echo "SKIP: libvirt: $c not found (scripts/bootstrap.sh installs libvirt-daemon-system)"
			return 0
		fi
	done
	if ! why=$("$E2E_HERE/build-guest.sh" --check); then
		"$E2E_HERE/build-guest.sh" >/dev/null || { fail guest "cannot build the guest: $why"; return 1; }
	fi

	vm_init libvirt || { fail setup "cannot create netns"; return 1; }
	# the socket where libvirt's QEMU (libvirt-qemu) can reach it: a
	# directory it may search, the socket of its group, mode 0660
	VM_SOCK=$LV_DIR/vnet/vm1.sock
	mkdir -p "$LV_DIR/vm"
	cp "$E2E_VMLINUX" "$E2E_INITRD" "$LV_DIR/vm/"
	chmod 0644 "$LV_DIR"/vm/*
	chown libvirt-qemu "$LV_DIR/vm"
	VM_SERIAL=$LV_DIR/vm/console.log
	BR=vlb$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
	BRTAP=vlt$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	_vm_all_taps+=("$BRTAP")
	ip -n "$VM_NS" link add "$BR" type bridge && ip -n "$VM_NS" link set "$BR" up ||
		{ fail setup "cannot create the bridge"; return 1; }
	chmod 0755 "$LV_DIR"
	vnetd_start --socket-group libvirt-qemu --socket-mode 0660 ||
		{ fail setup "vnetd did not start: $(tail -n 3 "$VNETD_LOG" | tr '\n' ' ')"; return 1; }
	need "socket 0660 root:libvirt-qemu ($(stat -c '%a %U:%G' "$VM_SOCK"))" \
		[ "$(stat -c '%a %U:%G' "$VM_SOCK")" = "660 root:libvirt-qemu" ]
	vm_host_addr || { fail setup "cannot address the tap"; return 1; }
	lv_start || { fail libvirtd "libvirtd did not answer in 30 s: $(tail -n 5 "$VM_LOGS/libvirtd.log" | tr '\n' ' ')"; return 1; }
	report setup
	note "libvirtd answers"

	domain_xml "reach:30+ping:5+pinged:5" >"$VM_LOGS/domain.xml"
	lv virsh -q -c qemu:///system define "$VM_LOGS/domain.xml" >"$VM_LOGS/virsh.log" 2>&1 ||
		{ fail define "$(tr '\n' ' ' <"$VM_LOGS/virsh.log")"; return 1; }
	# installed off: a started domain gets nothing attached (libvirt runs
	# the "started" hook before `virsh start` returns)
	: >"$VM_SERIAL"
	chown libvirt-qemu "$VM_SERIAL"
	if ! lv virsh -q -c qemu:///system start vm1 >>"$VM_LOGS/virsh.log" 2>&1; then
		fail start_off "$(tail -n 3 "$VM_LOGS/virsh.log" | tr '\n' ' ')"
		return 1
	fi
	need "domain running ($(virsh_ domstate vm1 2>&1))" [ "$(virsh_ domstate vm1 2>&1)" = running ]
	need "installed off: nothing attached to $BRTAP" test ! -e "/sys/fs/bpf/vnet/$BRTAP"
	need "installed off: no limit on vnetd's port" [ "$("$VNETCTL" -n "$VM_NS" -j limit show "$VM_TAP" | jq -c '[.tx.bytes_per_sec, .rx.bytes_per_sec]')" = "[0,0]" ]
	need "the switch as installed: VNET_HOOK_ENABLE=no" grep -qx "VNET_HOOK_ENABLE=no" "$LV_DIR/default/vnet-hook"
	need "installed off: vnetd's port has no VM name" [ "$(vm_of "$VM_TAP")" = null ]
	virsh_ destroy vm1 >>"$VM_LOGS/virsh.log" 2>&1
	_vm_poll 10000 sh -c "[ \"\$(nsenter -t $LV_PID -m -n -- virsh -q -c qemu:///system domstate vm1 2>&1)\" = 'shut off' ]"
	need "destroyed" [ "$(virsh_ domstate vm1 2>&1)" = "shut off" ]
	# QEMU's vhost-user connection of that start is gone too
	_vm_poll 10000 grep -q "frontend disconnected" "$VNETD_LOG"
	n_disc=$(grep -c "frontend disconnected" "$VNETD_LOG")
	report hook_installed_off

	# the operator's switch on: the next start attaches
	sed -i 's/^VNET_HOOK_ENABLE=.*/VNET_HOOK_ENABLE=yes/' "$LV_DIR/default/vnet-hook"
	: >"$VM_SERIAL"
	chown libvirt-qemu "$VM_SERIAL"
	if ! lv virsh -q -c qemu:///system start vm1 >>"$VM_LOGS/virsh.log" 2>&1; then
		fail start "$(tail -n 3 "$VM_LOGS/virsh.log" | tr '\n' ' ') qemu: $(tail -n 3 "$LV_DIR"/log/qemu/vm1.log 2>/dev/null | tr '\n' ' ')"
		return 1
	fi
	pass define_start
	note "domain started"

	# the hook attached vnet to the bridge interface's tap
	_vm_poll 10000 test -d "/sys/fs/bpf/vnet/$BRTAP"
	need "hook: vnet attached to $BRTAP" test -d "/sys/fs/bpf/vnet/$BRTAP"
	need "hook: the vhostuser NIC's tap is vnetd's ($VM_TAP still served)" \
		grep -q "frontend connected" "$VNETD_LOG"
	report hook_attached

	# both taps named after the domain: status, and every series
	need "hook: $BRTAP's VM is the domain ($(vm_of "$BRTAP"))" [ "$(vm_of "$BRTAP")" = vm1 ]
	need "hook: the vnetd port's VM is the domain ($(vm_of "$VM_TAP"))" [ "$(vm_of "$VM_TAP")" = vm1 ]
	need "series of $BRTAP: vm=\"vm1\"" vm_series "$BRTAP" vm1
	need "series of the vnetd port: vm=\"vm1\"" vm_series "$VM_TAP" vm1
	report hook_vm_name

	# <bandwidth> and clean-traffic on the vhostuser interface: its port's
	# limits (inbound = to the guest = rx) and guard
	out=$("$VNETCTL" -n "$VM_NS" -j limit show "$VM_TAP")
	need "rx limit: inbound average 12500 kB/s ($out)" [ "$(jq -c '[.rx.bytes_per_sec, .rx.burst]' <<<"$out")" = "[12500000,262144]" ]
	need "tx limit: outbound average 6250 kB/s ($out)" [ "$(jq -c '.tx.bytes_per_sec' <<<"$out")" = 6250000 ]
	out=$("$VNETCTL" -n "$VM_NS" -j guard show "$VM_TAP")
	need "guard: clean-traffic's checks ($out)" [ "$(jq -r '.checks | join(",")' <<<"$out")" = "mac,ip,arp,nd,dhcp,ra" ]
	need "guard: the interface's MAC and IP ($out)" [ "$(jq -r '"\(.mac) \(.ip | join(","))"' <<<"$out")" = "$E2E_GUEST_MAC $E2E_GUEST_IP/32" ]
	report hook_bandwidth_filter

	# ping both ways through vnetd
	if vm_wait_line '^VNET: wait pinged' 90; then
		out=$(ip netns exec "$VM_NS" ping -c 5 -i 0.2 -W 2 "$E2E_GUEST_IP" 2>&1)
		recv=$(echo "$out" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
		need "host -> guest: ${recv:-0} of 5 echo replies" ge "${recv:-0}" 5
	else
		_bad+="the guest never waited for the host's pings ($(guest_tail 3)); "
	fi
	need "guest -> host: $(guest_kv ping recv) of 5 echo replies" ge "$(guest_kv ping recv)" 5
	vm_stats stats.json
	need "datapath: tx frames $(dp 0 tx frames) < 10" ge "$(dp 0 tx frames)" 10
	need "datapath: rx frames $(dp 0 rx frames) < 10" ge "$(dp 0 rx frames)" 10
	out=$("$VNETCTL" -n "$VM_NS" -j guard show "$VM_TAP")
	need "guard: none of the guest's IPv4 or ARP frames dropped ($out)" [ "$(jq -c '[.dropped.mac, .dropped.ipv4, .dropped.arp]' <<<"$out")" = "[0,0,0]" ]
	report ping_through_vnetd
	note "pinged"

	# destroy: QEMU goes, vnetd stays and listens for the next one
	virsh_ destroy vm1 >>"$VM_LOGS/virsh.log" 2>&1
	st=$(virsh_ domstate vm1 2>/dev/null)
	need "domain state after destroy: '$st'" [ "$st" = "shut off" ]
	_vm_poll 10000 sh -c "[ \$(grep -c 'frontend disconnected' '$VNETD_LOG') -gt $n_disc ]"
	need "vnetd saw the frontend go" [ "$(grep -c "frontend disconnected" "$VNETD_LOG")" -gt "$n_disc" ]
	need "vnetd still running" vnetd_alive
	need "vnetd still listens" test -S "$VM_SOCK"
	_vm_poll 10000 test ! -e "/sys/fs/bpf/vnet/$BRTAP"
	need "hook: the bridge tap's pins removed on release" test ! -e "/sys/fs/bpf/vnet/$BRTAP"
	need "hook: the vnetd port's VM name removed on release ($(vm_of "$VM_TAP"))" [ "$(vm_of "$VM_TAP")" = null ]
	report destroy
	virsh_ undefine vm1 >/dev/null 2>&1
	lv_stop
	vnetd_stop TERM
	need "vnetd exit 0 after SIGTERM" [ "$VNETD_RC" = 0 ]
	report vnetd_stop
}

main "$@"
[ "$FAILN" -eq 0 ]
