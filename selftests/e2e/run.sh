#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# End to end with a real guest: QEMU (TCG, no KVM) boots Debian's own
# kernel, whose unmodified virtio_net driver talks to vnetd over vhost-user;
# ping and iperf3 TCP cross, and each scenario checks what the guest printed
# AND what the host saw (iperf3 server, `vnetctl -j stats`, vnetd's log).
# See docs/e2e.md.
#
#   selftests/e2e/run.sh [SCENARIO...]      (default: all, in this order)
#
#   ping            ping both ways
#   iperf-tx        iperf3 TCP guest -> host
#   iperf-rx        iperf3 TCP host -> guest
#   mq              two queue pairs, two vCPUs, one stream from each:
#                   both queues carry traffic
#   mrg-on          mergeable RX buffers negotiated, traffic both ways
#   mrg-off         mrg_rxbuf=off: not negotiated, traffic both ways
#   offloads-off    guest `ethtool -K eth0 tso off gso off`: many small
#                   segments, classified urgent
#   coalesce        coalescing set off, then tx-frames 16 tx-usecs 50 live:
#                   urgent signals and coalesced ones, transfers complete
#   pause           QEMU `stop` and `cont` under traffic: the rings stop with
#                   GET_VRING_BASE and resume where they were with
#                   SET_VRING_BASE, vnetd connected all along
#   restart         vnetd (server mode) stopped and started again while the
#                   guest transfers; QEMU reconnects, traffic resumes
#   restart-client  the same with QEMU as the server and vnetd --client,
#                   killed with SIGKILL
#   packed          -device virtio-net-pci,packed=on against vnetd --packed:
#                   VIRTIO_F_RING_PACKED negotiated, ping and iperf3 both
#                   ways
#   restart-packed  vnetd restarted under a packed-ring guest: QEMU's
#                   base is stale, the new vnetd goes on where the rings'
#                   journal says, no driver reset; ping and iperf3 both
#                   ways
#   reconnect-boot  a fresh guest with reconnect=1, the host pinging it
#                   every 10 ms from QEMU's start until the guest reaches
#                   the host: one connection, the rings
#                   started with the driver's DRIVER_OK (QEMU's trace), the
#                   first ping after the carrier answered within 3 s
#   mtu             host_mtu=9000: vnetd gives the tap the guest's MTU
#                   (NET_SET_MTU), 8900-byte pings both ways, iperf3 both
#                   ways; the tap's own MTU back when QEMU goes
#
# Each prints PASS: e2e/NAME, FAIL: e2e/NAME: REASON or SKIP: e2e/NAME:
# REASON (no QEMU, no busybox-static, no kernel package: CI installs them,
# see scripts/bootstrap.sh).  Logs of the last run of each scenario stay in
# build/e2e/logs/NAME/.
#
# Environment: OUT, VNETD (default build/vnetd), QEMU, E2E_SECS (iperf3
# seconds, default 4), E2E_FLOOR_MBPS (default 10: software emulation is
# slow, this only says data moved), E2E_MSIX=yes|no (skip the MSI-X probe).

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
source "$HERE/../lib.sh"
# shellcheck source=selftests/e2e/vm.sh
source "$HERE/vm.sh"

KSFT_PREFIX=e2e
ALL="ping iperf-tx iperf-rx mq mrg-on mrg-off offloads-off coalesce pause restart restart-client reconnect-boot mtu packed restart-packed"
SECS=${E2E_SECS:-4}
FLOOR_MBPS=${E2E_FLOOR_MBPS:-10}

# lib.sh's trap, after ours; not in a background job killed before its
# exec (it runs the EXIT trap too, and would delete the netns)
trap '[ "$BASHPID" = "$$" ] && { vm_cleanup_all; _cleanup_all; }' EXIT

# --- checks ----------------------------------------------------------------------

# shellcheck source=selftests/e2e/checks.sh
source "$HERE/checks.sh"

# note TEXT: a line for the reader (and docs/e2e.md's numbers)
note()
{
	echo "# $VM_NAME: $*"
}

# guest_done: the guest ran every step (else its errors)
guest_done()
{
	local rc errs

	guest_kernel_ok
	rc=$(guest_kv "done" rc)
	if [ "$rc" != 0 ]; then
		errs=$(guest_lines | sed -n 's/^error //p' | tr '\n' ';')
		if [ -z "$rc" ]; then
			_bad+="the guest did not finish (console: $(guest_tail 4)); "
		else
			_bad+="guest: $rc step(s) failed: ${errs%;}; "
		fi
	fi
}

# guest_kernel_ok: the guest's kernel printed no error (the console shows
# level 3 and worse; the power-off is the only other kernel line)
guest_kernel_ok()
{
	local e

	e=$(tr -d '\r' <"$VM_SERIAL" | grep -E '^\[ *[0-9]+\.[0-9]+\] ' |
		grep -v 'reboot: Power down' | head -n 3 | tr '\n' '|')
	[ -z "$e" ] || _bad+="guest kernel: ${e%|}; "
}

# qemu_ok: QEMU powered off by itself and used vnetd all along; false
# when QEMU could not use vnetd at all (what the guest saw then follows
# from it: the caller checks vnetd and stops there)
qemu_ok()
{
	if [ -n "${QEMU_TIMED_OUT:-}" ]; then
		_bad+="the guest still ran after ${QEMU_TIMED_OUT} s: QEMU killed ($(guest_tail 3)); "
	elif [ -z "${QEMU_RC:-}" ]; then
		_bad+="QEMU still running; "
	elif [ "$QEMU_RC" != 0 ]; then
		_bad+="QEMU exited with status $QEMU_RC ($(tail -n 2 "$VM_LOGS/qemu.err" | tr '\n' ' ')); "
	fi
	# QEMU keeps the guest running when vhost cannot start ("falling back
	# on userspace virtio"), which for vhost-user means no network at all
	if grep -q 'vhost_set_mem_table failed\|unable to start vhost net' "$VM_LOGS/qemu.err"; then
		_bad+="QEMU could not start vhost-user, the guest had no network: $(grep -m 2 'vhost' "$VM_LOGS/qemu.err" | tr '\n' ' ')(vnetd: $(grep -hm 2 'failed\|overlaps' "$VM_LOGS"/vnetd.*.log | sed 's/^vnetd: [^ ]*: //' | tr '\n' ' ')); "
		return 1
	fi
}

# vnetd_ok: alive until the end, stops cleanly on SIGTERM, no sanitizer
# report, no ring broken
vnetd_ok()
{
	local s

	if ! vnetd_alive; then
		_bad+="vnetd died during the run ($(tail -n 2 "$VNETD_LOG" | tr '\n' ' ')); "
	fi
	vnetd_stop TERM
	[ "$VNETD_RC" = 0 ] || _bad+="vnetd exited with status $VNETD_RC on SIGTERM; "
	s=$(vnetd_sanitizer_report)
	[ -z "$s" ] || _bad+="vnetd: $s; "
}

# drops_ok: no datapath drop on any queue (STATS)
drops_ok()
{
	local d

	d=$(printf '%s' "$STATS" | jq -r '[.queues[] | select(.datapath.drops | add > 0) |
		"q\(.queue) \(.dir) drops \(.datapath.drops | to_entries | map("\(.key)=\(.value)") | join(","))"] | join(" ")' 2>/dev/null)
	[ -z "$d" ] || _bad+="datapath drops: $d; "
}

# iperf_ok TAG DIR PORT: the guest's client and the host's server agree that
# at least FLOOR_MBPS over the transfer's seconds (1 MB at least) moved in
# DIR; sets IPERF_BYTES, IPERF_MBPS
iperf_ok()
{
	local tag=$1 dir=$2 port=$3 g h e gb hb secs floor

	g=$(guest_json "$tag")
	h=$(iperf_server_json "$port")
	printf '%s\n' "$g" >"$VM_LOGS/iperf-$tag.json"
	IPERF_BYTES=0
	IPERF_MBPS=0
	if ! json_ok "$g"; then
		_bad+="iperf $tag: no JSON from the guest's client; "
		return
	fi
	e=$(json "$g" '.error // empty')
	if [ -n "$e" ]; then
		_bad+="iperf $tag: guest: $e; "
		return
	fi
	secs=$(json "$g" '.start.test_start.duration // 0')
	floor=$((FLOOR_MBPS * 1000000 * ${secs:-0} / 8))
	[ "$floor" -lt 1000000 ] && floor=1000000
	# what the receiving side counted, as each side reports it
	gb=$(json "$g" '.end.sum_received.bytes // 0 | floor')
	IPERF_MBPS=$(json "$g" '.end.sum_received.bits_per_second // 0 | . / 1e6 | floor')
	if [ "$dir" = tx ]; then
		hb=$(json "$h" '.end.sum_received.bytes // 0 | floor')
	else
		hb=$(json "$h" '.end.sum_sent.bytes // 0 | floor')
	fi
	IPERF_BYTES=$gb
	need "iperf $tag: guest counted $gb bytes received in $secs s (floor $floor)" ge "$gb" "$floor"
	need "iperf $tag: host's server counted ${hb:-nothing} (floor $floor)" ge "${hb:-0}" "$floor"
	note "iperf $tag ($dir): $IPERF_MBPS Mbit/s, $gb bytes"
}

# dp_sum DIR FIELD [STATS]: a datapath counter summed over the queues
dp_sum()
{
	printf '%s' "${3:-$STATS}" | jq -r --arg d "$1" --arg f "$2" \
		'[.queues[] | select(.dir == $d) | .datapath[$f]] | add // 0' 2>/dev/null
}

cls_sum()
{
	printf '%s' "${3:-$STATS}" | jq -r --arg d "$1" --arg c "$2" \
		'[.queues[] | select(.dir == $d) | .[$c].packets] | add // 0' 2>/dev/null
}

# iperf_servers PORT...: one iperf3 server per port in the netns
iperf_servers()
{
	local p

	for p in "$@"; do
		iperf_server "$p" || { _bad+="iperf3 server on port $p did not start; "; return 1; }
	done
}

# boot STEPS [QEMU OPTS...]: boot, wait for the power-off, collect STATS
boot_and_wait()
{
	qemu_start "$@" || { _bad+="QEMU did not start; "; return 1; }
	qemu_wait "$E2E_QEMU_TIMEOUT"
	vm_stats stats.json || _bad+="vnetctl -j stats $VM_TAP printed nothing; "
}

# vm_end: QEMU's end, the statistics, the guest's steps; false (vnetd
# checked) when QEMU could not use vnetd
vm_end()
{
	qemu_wait "$E2E_QEMU_TIMEOUT"
	vm_stats stats.json
	qemu_ok || { vnetd_ok; return 1; }
	guest_done
}

# setup NAME [VNETD ARGS...]: netns, vnetd (server mode), the host address
setup()
{
	vm_init "$1" || { _bad+="cannot create netns; "; return 1; }
	shift
	vnetd_start "$@" || { _bad+="vnetd did not start: $(tail -n 2 "$VNETD_LOG" | tr '\n' ' '); "; return 1; }
	vm_host_addr || { _bad+="cannot address the tap; "; return 1; }
}

# --- scenarios ---------------------------------------------------------------------

s_ping()
{
	local out sent recv

	setup ping || return
	qemu_start "reach:15+ping:5+pinged:5" || { _bad+="QEMU did not start; "; return; }
	if vm_wait_line '^VNET: wait pinged' 40; then
		out=$(ip netns exec "$VM_NS" ping -c 5 -i 0.2 -W 2 "$E2E_GUEST_IP" 2>&1)
		printf '%s\n' "$out" >"$VM_LOGS/ping-host.txt"
		recv=$(echo "$out" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
		need "host -> guest: ${recv:-0} of 5 echo replies" ge "${recv:-0}" 5
	else
		_bad+="the guest never waited for the host's pings ($(guest_tail 3)); "
	fi
	qemu_wait 30
	vm_stats stats.json
	qemu_ok || { vnetd_ok; return; }
	guest_done
	sent=$(guest_kv ping sent)
	recv=$(guest_kv ping recv)
	need "guest -> host: $recv of $sent echo replies" ge "${recv:-0}" 5
	need "guest: $(guest_kv pinged echos) echo requests answered" ge "$(guest_kv pinged echos)" 5
	# ICMP is "other" for the classifier; the datapath moved it both ways
	need "classifier: tx other $(cls 0 tx other) < 10" ge "$(cls 0 tx other)" 10
	need "classifier: rx other $(cls 0 rx other) < 10" ge "$(cls 0 rx other)" 10
	need "datapath: tx frames $(dp 0 tx frames) < 10" ge "$(dp 0 tx frames)" 10
	need "datapath: rx frames $(dp 0 rx frames) < 10" ge "$(dp 0 rx frames)" 10
	need "datapath: no tx signal" ge "$(dp 0 tx notify_sent)" 1
	need "datapath: no rx signal" ge "$(dp 0 rx notify_sent)" 1
	drops_ok
	vnetd_ok
}

# one_way NAME DIR: iperf3 in DIR for SECS, GSO frames through the tap
one_way()
{
	local name=$1 dir=$2 other=rx fr by

	[ "$dir" = rx ] && other=tx
	setup "$name" || return
	iperf_servers 5201 || return
	boot_and_wait "reach:15+iperf:t:$dir:$SECS:5201"
	qemu_ok || { vnetd_ok; return; }
	guest_done
	iperf_ok t "$dir" 5201
	fr=$(dp 0 "$dir" frames)
	by=$(dp 0 "$dir" bytes)
	# the datapath carried at least what the receiver got (plus headers)
	need "datapath: $dir bytes $by < iperf's $IPERF_BYTES" ge "$by" "$IPERF_BYTES"
	# the guest's TSO (tx) / the host's GSO (rx): frames larger than the MTU
	# cross whole
	need "datapath: $dir frames average $((by / (fr > 0 ? fr : 1))) bytes, no GSO frame" \
		ge "$((by / (fr > 0 ? fr : 1)))" 1515
	# the receiver's ACKs come back the other way, classified as ACKs
	need "classifier: no $other ACK" ge "$(cls 0 "$other" ack)" 1
	need "classifier: no $dir TCP data (urgent + push)" \
		ge "$(($(cls 0 "$dir" urgent) + $(cls 0 "$dir" push)))" 1
	need "datapath: no $dir signal" ge "$(dp 0 "$dir" notify_sent)" 1
	note "datapath $dir: $fr frames, $by bytes, $(dp 0 "$dir" batches) batches, $(dp 0 "$dir" notify_sent) signals"
	drops_ok
	vnetd_ok
}

s_iperf_tx()
{
	one_way iperf-tx tx
}

s_iperf_rx()
{
	one_way iperf-rx rx
}

s_mq()
{
	local q c

	setup mq --queues 2 || return
	iperf_servers 5201 5202 || return
	# XPS maps vCPU i to TX queue i: a client pinned to each vCPU sends
	# on each queue
	boot_and_wait "combined:2+reach:15+iperf:a:tx:$SECS:5201:0:bg+iperf:b:tx:$SECS:5202:1:bg+wait" \
		queues=2 smp=2
	qemu_ok || { vnetd_ok; return; }
	guest_done
	c=$(guest_kv ethtool combined)
	need "guest: $c combined channels, not 2" [ "$c" = 2 ]
	iperf_ok a tx 5201
	iperf_ok b tx 5202
	for q in 0 1; do
		need "datapath: queue $q tx frames $(dp $q tx frames) < 100" ge "$(dp $q tx frames)" 100
		need "classifier: queue $q tx packets" \
			ge "$(($(cls $q tx urgent) + $(cls $q tx push) + $(cls $q tx ack)))" 1
		note "queue $q: tx $(dp $q tx frames) frames, rx $(dp $q rx frames) frames"
	done
	# the host steers each flow to one queue by its hash: the two flows'
	# ACKs may share one; together they reached the guest
	need "datapath: rx frames $(dp_sum rx frames) < 100" ge "$(dp_sum rx frames)" 100
	drops_ok
	vnetd_ok
}

# mrg NAME on|off
mrg()
{
	local name=$1 want=$2 bit hdr

	setup "$name" || return
	iperf_servers 5201 5202 || return
	boot_and_wait "reach:15+iperf:r:rx:$SECS:5201+iperf:t:tx:2:5202" "mrg=$want"
	qemu_ok || { vnetd_ok; return; }
	guest_done
	# /sys/.../features: one character per feature bit, bit 0 first;
	# VIRTIO_NET_F_MRG_RXBUF is bit 15
	bit=$(guest_kv dev features)
	bit=${bit:15:1}
	# vnetd says what it set up: "features 0x...: 12-byte header,
	# [no ]mergeable RX buffers, ..."
	hdr=$(sed -n 's/.*features 0x[0-9a-f]*: \(.*RX buffers\).*/\1/p' "$VNETD_LOG" | tail -n 1)
	if [ "$want" = on ]; then
		need "guest: MRG_RXBUF not negotiated (features bit 15 = '$bit')" [ "$bit" = 1 ]
		need "vnetd: '$hdr'" [ "$hdr" = "12-byte header, mergeable RX buffers" ]
	else
		need "guest: MRG_RXBUF negotiated (features bit 15 = '$bit')" [ "$bit" = 0 ]
		need "vnetd: '$hdr'" [ "$hdr" = "12-byte header, no mergeable RX buffers" ]
	fi
	iperf_ok r rx 5201
	need "datapath: rx bytes $(dp 0 rx bytes) < iperf's $IPERF_BYTES" ge "$(dp 0 rx bytes)" "$IPERF_BYTES"
	iperf_ok t tx 5202
	note "datapath rx: $(dp 0 rx frames) frames, $(dp 0 rx bytes) bytes, $(dp 0 rx batches) batches"
	drops_ok
	vnetd_ok
}

s_mrg_on()
{
	mrg mrg-on on
}

s_mrg_off()
{
	mrg mrg-off off
}

s_packed()
{
	local bit

	setup packed --packed || return
	iperf_servers 5201 5202 || return
	boot_and_wait "reach:15+ping:5+iperf:r:rx:$SECS:5201+iperf:t:tx:$SECS:5202" packed
	qemu_ok || { vnetd_ok; return; }
	guest_done
	# /sys/.../features: one character per feature bit, bit 0 first;
	# VIRTIO_F_RING_PACKED is bit 34
	bit=$(guest_kv dev features)
	bit=${bit:34:1}
	need "guest: packed ring not negotiated (features bit 34 = '$bit')" [ "$bit" = 1 ]
	need "guest -> host: $(guest_kv ping recv) of 5 echo replies" ge "$(guest_kv ping recv)" 5
	iperf_ok r rx 5201
	need "datapath: rx bytes $(dp 0 rx bytes) < iperf's $IPERF_BYTES" ge "$(dp 0 rx bytes)" "$IPERF_BYTES"
	iperf_ok t tx 5202
	note "packed: rx $(dp 0 rx frames) frames, tx $(dp 0 tx frames) frames, $(dp 0 tx notify_sent) tx signals"
	drops_ok
	vnetd_ok
}

s_offloads_off()
{
	local fr by urg

	setup offloads-off || return
	iperf_servers 5201 || return
	boot_and_wait "offloads-off+reach:15+iperf:t:tx:$SECS:5201"
	qemu_ok || { vnetd_ok; return; }
	guest_done
	need "guest: TSO/GSO still on ($(guest_lines | grep '^ethtool' | head -n 1))" \
		guest_lines_has '^ethtool tcp-segmentation-offload:off generic-segmentation-offload:off'
	iperf_ok t tx 5201
	fr=$(dp 0 tx frames)
	by=$(dp 0 tx bytes)
	urg=$(cls 0 tx urgent)
	need "datapath: tx frames average $((by / (fr > 0 ? fr : 1))) bytes, above the MTU" \
		le "$((by / (fr > 0 ? fr : 1)))" 1514
	need "datapath: $fr tx frames, expected many segments" ge "$fr" 1000
	# payload without PSH: urgent (PSH only ends each of iperf3's writes)
	need "classifier: $urg urgent of $fr tx frames, expected most" ge "$((urg * 2))" "$fr"
	need "datapath: no urgent tx signal" ge "$(dp 0 tx notify_urgent)" 1
	note "tx: $fr frames ($urg urgent), $by bytes, $(dp 0 tx batches) batches, $(dp 0 tx notify_sent) signals ($(dp 0 tx notify_urgent) urgent)"
	drops_ok
	vnetd_ok
}

# tap_mtu: the tap's MTU in its netns
tap_mtu()
{
	ip -n "$VM_NS" -o link show "$VM_TAP" 2>/dev/null |
		sed -n 's/.* mtu \([0-9]*\) .*/\1/p'
}

s_mtu()
{
	local out recv m0 m1 gm

	setup mtu || return
	m0=$(tap_mtu)
	iperf_servers 5201 5202 || return
	qemu_start "mtu+reach:15+ping:5:8900+pinged:5+iperf:r:rx:$SECS:5201+iperf:t:tx:2:5202" \
		mtu=9000 || { _bad+="QEMU did not start; "; return; }
	if vm_wait_line '^VNET: wait pinged' 60; then
		m1=$(tap_mtu)
		# not fragmented on the host side: the tap must take 8928 bytes
		out=$(ip netns exec "$VM_NS" ping -c 5 -i 0.2 -W 2 -M do -s 8900 \
			"$E2E_GUEST_IP" 2>&1)
		printf '%s\n' "$out" >"$VM_LOGS/ping-host.txt"
		recv=$(echo "$out" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
		need "host -> guest: ${recv:-0} of 5 8900-byte echo replies ($(echo "$out" | tail -n 1))" \
			ge "${recv:-0}" 5
	else
		_bad+="the guest never waited for the host's pings ($(guest_tail 3)); "
	fi
	vm_end || return
	gm=$(guest_lines | sed -n 's/^mtu //p')
	need "guest: eth0 MTU ${gm:-?}, not 9000" [ "${gm:-}" = 9000 ]
	need "tap MTU ${m1:-?} while the guest ran, not 9000 (vnetd log: $(grep -m1 'MTU' "$VNETD_LOG"))" \
		[ "${m1:-}" = 9000 ]
	need "vnetd did not log the frontend's MTU" grep -q 'MTU 9000 (the frontend' "$VNETD_LOG"
	need "guest -> host: $(guest_kv ping recv) of $(guest_kv ping sent) 8900-byte echo replies" \
		ge "$(guest_kv ping recv)" 5
	need "guest: $(guest_kv pinged echos) echo requests answered" ge "$(guest_kv pinged echos)" 5
	iperf_ok r rx 5201
	iperf_ok t tx 5202
	# QEMU is gone: the tap has its own MTU again
	_vm_poll 5000 grep -q "MTU $m0 again" "$VNETD_LOG"
	need "tap MTU $(tap_mtu) after QEMU left, not its own $m0" [ "$(tap_mtu)" = "$m0" ]
	drops_ok
	vnetd_ok
}

guest_lines_has()
{
	guest_lines | grep -qE "$1"
}

# tx_delta FIELD STATS0: how much queue 0's tx datapath FIELD grew since
# STATS0
tx_delta()
{
	echo $(($(dp 0 tx "$1") - $(dp 0 tx "$1" "$2")))
}

# per_frame SIGNALS FRAMES: "0.123"
per_frame()
{
	awk -v s="$1" -v f="$2" 'BEGIN { if (f > 0) printf "%.3f", s / f; else print "-" }'
}

s_coalesce()
{
	local s1 fr sent urg tim frm dfr sup dnu

	setup coalesce || return
	iperf_servers 5201 5202 5203 5204 || return
	# phase 1 without coalescing (set: it is on by default), then the host
	# sets it live and pings the guest, which goes on with phase 2
	run vnetctl coalesce set "$VM_TAP" tx-frames 0 tx-usecs 0 rx-frames 0 rx-usecs 0
	need "vnetctl coalesce set (off): $(run_said)" [ "$RUN_RC" = 0 ]
	qemu_start "reach:15+iperf:t0:tx:$SECS:5201+iperf:r0:rx:$SECS:5202+mark:coal+pinged:1+iperf:t1:tx:$SECS:5203+iperf:r1:rx:$SECS:5204" ||
		{ _bad+="QEMU did not start; "; return; }
	if vm_wait_line '^VNET: wait pinged' 60; then
		vm_stats stats-off.json
		s1=$STATS
		run vnetctl coalesce set "$VM_TAP" tx-frames 16 tx-usecs 50
		need "vnetctl coalesce set: $(run_said)" [ "$RUN_RC" = 0 ]
		ip netns exec "$VM_NS" ping -c 1 -W 2 "$E2E_GUEST_IP" >/dev/null 2>&1 ||
			ip netns exec "$VM_NS" ping -c 1 -W 2 "$E2E_GUEST_IP" >/dev/null 2>&1
	else
		_bad+="the guest never reached phase 2 ($(guest_tail 3)); "
		s1='{"queues":[]}'
	fi
	vm_end || return
	iperf_ok t0 tx 5201
	iperf_ok r0 rx 5202
	iperf_ok t1 tx 5203
	iperf_ok r1 rx 5204
	# phase 1: nothing held back
	need "tx-frames 0: $(dp 0 tx notify_deferred "$s1") deferred signals" \
		[ "$(dp 0 tx notify_deferred "$s1")" = 0 ]
	# phase 2 = the counters' growth since phase 1
	fr=$(tx_delta frames "$s1")
	sent=$(tx_delta notify_sent "$s1")
	urg=$(tx_delta notify_urgent "$s1")
	tim=$(tx_delta notify_timer "$s1")
	frm=$(tx_delta notify_frames "$s1")
	dfr=$(tx_delta notify_deferred "$s1")
	sup=$(tx_delta notify_suppressed "$s1")
	dnu=$(($(cls 0 tx urgent) - $(cls 0 tx urgent packets "$s1")))
	need "tx-frames 16: no urgent frame classified" ge "$dnu" 1
	need "tx-frames 16: no urgent signal" ge "$urg" 1
	need "tx-frames 16: no coalesced signal (timer $tim, frames $frm)" ge "$((tim + frm))" 1
	need "tx-frames 16: nothing deferred" ge "$dfr" 1
	note "tx, coalescing off: $(dp 0 tx frames "$s1") frames, $(dp 0 tx notify_sent "$s1") signals, $(per_frame "$(dp 0 tx notify_sent "$s1")" "$(dp 0 tx frames "$s1")") per frame ($(dp 0 tx notify_urgent "$s1") urgent, $(dp 0 tx notify_suppressed "$s1") suppressed by EVENT_IDX)"
	note "tx, tx-frames 16 tx-usecs 50: $fr frames, $sent signals, $(per_frame "$sent" "$fr") per frame ($urg urgent, $tim timer, $frm frames; $dfr bursts deferred, $sup suppressed)"
	drops_ok
	vnetd_ok
}

# ring_starts VQ [FROM_LINE]: the avail index of each start of VQ in the
# current vnetd log after line FROM_LINE, one a line
ring_starts()
{
	tail -n +"$((${2:-0} + 1))" "$VNETD_LOG" |
		sed -n "s/.*vq $1 starting (size [0-9]*, avail \([0-9]*\),.*/\1/p"
}

s_pause()
{
	local n0 at a0 a1

	setup pause || return
	iperf_servers 5201 5202 || return
	qemu_start "reach:15+mark:go+iperf:p1:tx:8:5201+iperf:p2:rx:$SECS:5202" monitor ||
		{ _bad+="QEMU did not start; "; return; }
	if vm_wait_line '^VNET: mark go' 40; then
		sleep 2
		at=$(wc -l <"$VNETD_LOG")
		n0=$(grep -c 'GET_VRING_BASE' "$VNETD_LOG")
		# the VM stops: QEMU stops vhost, asking vnetd for each ring's
		# next avail index
		qemu_monitor stop || _bad+="no monitor; "
		busywait 5000 gets_grew "$n0" 2 ||
			_bad+="stop: $(($(grep -c 'GET_VRING_BASE' "$VNETD_LOG") - n0)) GET_VRING_BASE, not 2; "
		sleep 1
		qemu_monitor cont
	else
		_bad+="the guest never started the transfer ($(guest_tail 3)); "
		at=0
	fi
	vm_end || return
	# after cont, each ring starts again where it stopped: not at 0, and
	# the guest's driver finds its rings consistent (no error, the
	# transfers go on)
	a0=$(ring_starts 0 "$at" | head -n 1)
	a1=$(ring_starts 1 "$at" | head -n 1)
	need "cont: RX ring restarted at avail ${a0:-nothing}" ge "${a0:-0}" 1
	need "cont: TX ring restarted at avail ${a1:-nothing}" ge "${a1:-0}" 1
	# one connection throughout: the rings' state went through the
	# protocol, not through a reconnect
	need "vnetd: $(grep -c 'frontend connected' "$VNETD_LOG") connections, not 1" \
		[ "$(grep -c 'frontend connected' "$VNETD_LOG")" = 1 ]
	note "after cont: RX ring at avail $a0, TX ring at avail $a1"
	iperf_ok p1 tx 5201
	note "iperf p1 per second (host): $(iperf_server_json 5201 | jq -r '[.intervals[] | .sum.bits_per_second / 1e6 | floor] | map(tostring) | join(" ")' 2>/dev/null) Mbit/s"
	iperf_ok p2 rx 5202
	drops_ok
	vnetd_ok
}

# gets_grew N0 K: the vnetd log has K more GET_VRING_BASE than N0
gets_grew()
{
	[ "$(grep -c 'GET_VRING_BASE' "$VNETD_LOG")" -ge $(($1 + $2)) ]
}

# restart_setup NAME: netns, a persistent tap (it keeps its address across
# the restart) with the host's address, iperf3 servers on 5201 and 5202
restart_setup()
{
	vm_init "$1" || { _bad+="cannot create netns; "; return 1; }
	vm_tap_persistent || { _bad+="cannot create the tap; "; return 1; }
	vm_host_addr || { _bad+="cannot address the tap; "; return 1; }
	iperf_servers 5201 5202
}

# restart NAME server|client: vnetd goes away under a transferring guest
restart()
{
	local name=$1 mode=$2 sig avail last

	restart_setup "$name" || return
	local steps="reach:15+mark:go+iperf:r1:tx:10:5201+ping:3+iperf:r2:tx:3:5202"
	if [ "$mode" = server ]; then
		sig=TERM
		vnetd_start || { _bad+="vnetd did not start; "; return; }
		qemu_start "$steps" reconnect || { _bad+="QEMU did not start; "; return; }
	else
		sig=KILL
		qemu_start "$steps" server || { _bad+="QEMU did not listen; "; return; }
		vnetd_start --client || { _bad+="vnetd did not connect: $(tail -n 2 "$VNETD_LOG" | tr '\n' ' '); "; return; }
	fi
	if vm_wait_line '^VNET: mark go' 40; then
		# 3 s into the transfer: vnetd goes, 1 s without it, vnetd again
		sleep 3
		vnetctl -j stats "$VM_TAP" >"$VM_LOGS/stats-before.json" 2>/dev/null
		vnetd_stop "$sig"
		[ "$sig" = TERM ] && [ "$VNETD_RC" != 0 ] &&
			_bad+="vnetd exited with status $VNETD_RC on SIGTERM; "
		sleep 1
		if [ "$mode" = server ]; then
			vnetd_start
		else
			vnetd_start --client
		fi || _bad+="vnetd did not come back: $(tail -n 2 "$VNETD_LOG" | tr '\n' ' '); "
	else
		_bad+="the guest never started the transfer ($(guest_tail 3)); "
	fi
	vm_end || return
	need "the second vnetd: no frontend connected" grep -q 'frontend connected' "$VNETD_LOG"
	# QEMU could not ask the first vnetd for the ring state (GET_VRING_BASE
	# needs the connection that went away): it restored last_avail from the
	# used index and sent it with SET_VRING_BASE; the rings resume there
	avail=$(sed -n 's/.*vq 1 starting (size [0-9]*, avail \([0-9]*\),.*/\1/p' "$VNETD_LOG" | tail -n 1)
	need "the second vnetd: TX ring resumed at avail ${avail:-?}, not past 0" ge "${avail:-0}" 1
	note "TX ring resumed at avail index $avail; QEMU said: $(grep -m 1 'ring restore' "$VM_LOGS/qemu.err" | sed 's/^qemu-system-x86_64: //')"
	iperf_ok r1 tx 5201
	# the transfer goes on after the restart: the last seconds moved data
	last=$(iperf_server_json 5201 | jq -r '[.intervals[-3:][] | .sum.bytes] | min // 0 | floor' 2>/dev/null)
	need "iperf r1: the last 3 s after the restart moved ${last:-no} bytes" ge "${last:-0}" 1
	note "iperf r1 per second: $(iperf_server_json 5201 | jq -r '[.intervals[] | .sum.bits_per_second / 1e6 | floor] | map(tostring) | join(" ")' 2>/dev/null) Mbit/s"
	need "guest: ping after the restart: $(guest_kv ping recv) of 3" ge "$(guest_kv ping recv)" 1
	iperf_ok r2 tx 5202
	# the counters are the second vnetd's (its pins are new in server mode)
	need "datapath after the restart: tx frames $(dp 0 tx frames)" ge "$(dp 0 tx frames)" 100
	drops_ok
	vnetd_ok
}

s_restart()
{
	restart restart server
}

s_restart_client()
{
	restart restart-client client
}

# restart-packed: vnetd restarted under a packed-ring guest.  QEMU cannot
# resync a packed ring from guest memory and hands the new vnetd the base
# of the rings' last start; the rings' journal (docs/vhost-user.md,
# "Packed rings") says where they are: the new vnetd goes on from there,
# the guest's driver does not reset the device, ping and iperf3 both ways
s_restart_packed()
{
	local steps="reach:15+ping:3+mark:go+sleep:6+reach:15+ping:3+iperf:r:rx:3:5201+iperf:t:tx:3:5202"

	restart_setup restart-packed || return
	vnetd_start --packed || { _bad+="vnetd did not start; "; return; }
	qemu_start "$steps" reconnect packed || { _bad+="QEMU did not start; "; return; }
	if vm_wait_line '^VNET: mark go' 40; then
		vnetd_stop TERM
		sleep 1
		vnetd_start --packed ||
			_bad+="vnetd did not come back: $(tail -n 2 "$VNETD_LOG" | tr '\n' ' '); "
	else
		_bad+="the guest never got to the restart ($(guest_tail 3)); "
	fi
	vm_end || return
	need "the second vnetd: no 'resumed where the ring journal says' line" grep -q 'resumed where the ring journal says' "$VNETD_LOG"
	note "$(grep -m 1 'resumed where the ring journal says' "$VNETD_LOG" | sed 's/.*: vq/vq/' | cut -c 1-120)..."
	need "the second vnetd: $(grep -m 1 'is stale' "$VNETD_LOG" | cut -c 1-100)" sh -c "! grep -q 'is stale' '$VNETD_LOG'"
	need "guest: ping after the restart: $(guest_kv ping recv) of 3" ge "$(guest_kv ping recv)" 1
	iperf_ok r rx 5201
	iperf_ok t tx 5202
	vnetd_ok
}

# reconnect-boot: QEMU with reconnect=1 (docs/libvirt.md's setup) boots a
# fresh guest on a listening vnetd while the host pings the guest every 10
# ms (until the guest's first ping is answered).  QEMU connects before the guest runs and starts the rings when the
# guest's driver writes DRIVER_OK, as without reconnect (docs/libvirt.md,
# "Reconnect and a guest's first seconds"); a close and a reconnect during
# the boot would start them only at the reconnect.  Times from QEMU's own
# trace (qemu_start ... trace).
s_reconnect_boot()
{
	local pp d link replies

	setup reconnect-boot || return
	qemu_start "reach:30+ping:5" reconnect trace || { _bad+="QEMU did not start; "; return; }
	ip netns exec "$VM_NS" ping -D -n -i 0.01 "$E2E_GUEST_IP" \
		>"$VM_LOGS/ping-host.txt" 2>&1 &
	pp=$!
	_vm_all_pids+=("$pp")
	VM_IPERF_PIDS+=("$pp")
	# until the guest's first ping is answered: the guest's own pings and
	# its power-off follow without the host's
	vm_wait_line '^VNET: (reach ok|error reach)' 90 ||
		_bad+="the guest never reached the host ($(guest_tail 3)); "
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
	vm_end || return
	qemu_ring_start "$VM_LOGS/qemu.err"
	need "QEMU: the connection opened $RS_OPENS times, not once" [ "$RS_OPENS" = 1 ]
	need "QEMU: the connection closed $RS_CLOSES times during the boot" [ "$RS_CLOSES" = 0 ]
	need "QEMU: no DRIVER_OK in the trace" [ -n "$RS_DRVOK" ]
	# vhost_net_start runs in the guest's status write: SET_FEATURES and
	# every ring's SET_VRING_KICK follow DRIVER_OK at once (ms here)
	d=$(ms_between "$RS_DRVOK" "$RS_SETFEAT")
	need "QEMU: SET_FEATURES ${d} ms after DRIVER_OK (not after it, or over 1 s)" \
		le "$d" 1000
	d=$(ms_between "$RS_DRVOK" "$RS_KICK")
	need "QEMU: the rings started ${d} ms after DRIVER_OK (not after it, or over 1 s)" \
		le "$d" 1000
	link=$(guest_link_reply_ms)
	need "guest: the first answered ping ${link} ms after the carrier (over 3000)" \
		le "$link" 3000
	need "guest -> host: $(guest_kv ping recv) of 5 echo replies" ge "$(guest_kv ping recv)" 5
	replies=$(grep -c ' bytes from ' "$VM_LOGS/ping-host.txt")
	need "host -> guest: no echo reply" ge "$replies" 1
	note "connected $(ms_between "$QEMU_T0" "$RS_OPEN") ms after QEMU started, DRIVER_OK at $(ms_between "$QEMU_T0" "$RS_DRVOK") ms, rings started $(ms_between "$RS_DRVOK" "$RS_KICK") ms later; first answered guest ping $link ms after the carrier; host's first reply at $(ms_between "$QEMU_T0" "$(ping_first_reply "$VM_LOGS/ping-host.txt")") ms"
	drops_ok
	vnetd_ok
}

# --- the MSI-X probe -------------------------------------------------------------

# probe_msix: does this QEMU survive MSI-X on a vhost-user virtio-net device
# under TCG?  QEMU 7.2 does not (SIGSEGV in KVM-only irqfd code when the
# guest driver sets up its vectors); then every guest runs with vectors=0
# (INTx).  Cached per QEMU version in build/e2e/msix.VERSION.
probe_msix()
{
	local v cache

	v=$(qemu_version)
	cache=$E2E_DIR/msix.${v:-unknown}
	if [ -z "${E2E_MSIX:-}" ] && [ -f "$cache" ]; then
		E2E_MSIX=$(cat "$cache")
	fi
	if [ -z "${E2E_MSIX:-}" ]; then
		vm_init msix-probe && vnetd_start && vm_host_addr &&
			E2E_MSIX=yes qemu_start "mark:probe" && qemu_wait 60
		case ${QEMU_RC:-} in
		0) E2E_MSIX=yes ;;
		*) E2E_MSIX=no ;;
		esac
		[ "$E2E_MSIX" = no ] &&
			echo "# QEMU $v with MSI-X on a vhost-user virtio-net device under TCG: exit status ${QEMU_RC:-?} (139 = SIGSEGV: QEMU reaches KVM-only irqfd code without KVM)$(vnetd_alive && echo '; vnetd survived it')"
		vm_teardown
		echo "$E2E_MSIX" >"$cache"
	fi
	if [ "$E2E_MSIX" = yes ]; then
		echo "# QEMU $v: guests use MSI-X"
	else
		echo "# QEMU $v: guests use vectors=0 (INTx): MSI-X on a vhost-user virtio-net device crashes this QEMU under TCG (docs/e2e.md)"
	fi
	export E2E_MSIX
}

# --- main ------------------------------------------------------------------------

e2e_prelude "$ALL" "$ALL" "jq iperf3 ip ping ss" "$@"
echo "# guest: $(echo "$guest" | tr '\n' ' ')(kernel $(cat "$E2E_DIR/kernel.version"))"
probe_msix

for n in "${names[@]}"; do
	t0=$SECONDS
	"s_${n//-/_}"
	# whatever the scenario left behind
	vm_teardown >/dev/null 2>&1
	verdict "$n" "$VM_LOGS"
	echo "# $n: $((SECONDS - t0)) s"
done
ksft_exit
