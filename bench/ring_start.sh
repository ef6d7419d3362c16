#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# When a freshly booted guest's rings start, with and without QEMU's
# reconnect: boots the e2e guest (docs/e2e.md) N times per mode, the modes
# interleaved, with the host pinging the guest every 10 ms from the moment
# QEMU starts until the guest's first ping is answered, and records per boot (host times from QEMU's own trace
# events, docs/libvirt.md "Reconnect and a guest's first seconds"):
#
#   open     the vhost-user connection's CHR_EVENT_OPENED
#   drvok    the guest driver's DRIVER_OK status write
#   setfeat  SET_FEATURES sent (the first message of vhost_net_start)
#   kick     the last SET_VRING_KICK sent (the rings are started)
#   hreply   the first echo reply the host got
#   link     guest: eth0's carrier up -> its first answered ping (the
#            guest's clock; its pings time out after 1 s)
#
# all but link in ms after QEMU started.
#
#   bench/ring_start.sh [-n BOOTS] [-l LATE_SECS] [MODE...]
#
# MODEs (default: plain reconnect):
#   plain      vnetd listens first; -chardev socket,path=SOCK
#   reconnect  vnetd listens first; -chardev socket,path=SOCK,reconnect=1
#   late       reconnect=1, QEMU first, vnetd started LATE_SECS (default 3)
#              after it
#
# Prints one line per boot and a summary per mode; logs stay in
# build/e2e/logs/rs-MODE-I/ (qemu.err has the trace, ping.log the host's
# pings).  Needs root, a built tree and the e2e guest
# (selftests/e2e/build-guest.sh).  Environment: OUT, VNETD, QEMU.

# vnetd_start takes vnetd's arguments; it is called without any here
# shellcheck disable=SC2119

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/e2e/vm.sh
source "$HERE/../selftests/e2e/vm.sh"

trap '[ "$BASHPID" = "$$" ] && vm_cleanup_all' EXIT
trap 'exit 130' INT TERM

boots=10
late=3
# shellcheck source=bench/opts.sh
source "$(dirname "$0")/opts.sh"
bench_opts "n:boots l:late" "$@"
shift "$BENCH_OPTIND"
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(plain reconnect)
for m in "${modes[@]}"; do
	case $m in
	plain | reconnect | late) ;;
	*)
		echo "ring_start.sh: unknown mode '$m' (plain, reconnect or late)" >&2
		exit 2
		;;
	esac
done
[[ "$boots" =~ ^[1-9][0-9]*$ ]] || { echo "ring_start.sh: -n '$boots': a number of boots, 1 or more" >&2; exit 2; }
[[ "$late" =~ ^[0-9]+$ ]] || { echo "ring_start.sh: -l '$late': seconds, 0 or more" >&2; exit 2; }

die()
{
	echo "ring_start.sh: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces, BPF, vnetd)"
[ -x "$VNETD" ] || die "$VNETD is not built (make)"
command -v "$QEMU" >/dev/null 2>&1 || die "$QEMU not found (scripts/bootstrap.sh installs it)"
"$QEMU" -trace help 2>/dev/null | grep -qx virtio_set_status ||
	die "$QEMU has no trace events (built without a trace backend)"
"$E2E_ROOT/selftests/e2e/build-guest.sh" >/dev/null ||
	die "cannot build the guest (selftests/e2e/build-guest.sh)"

# boot MODE I: one guest; prints its line
boot()
{
	local mode=$1 i=$2 t0 pp

	vm_init "rs-$mode-$i" || die "cannot create a netns"
	vm_tap_persistent || die "cannot create the tap"
	vm_host_addr
	if [ "$mode" != late ]; then
		vnetd_start || die "vnetd did not start: $(tail -n 2 "$VNETD_LOG")"
	fi
	local opt=()
	[ "$mode" != plain ] && opt=(reconnect)
	qemu_start "reach:90+ping:3" ${opt[@]+"${opt[@]}"} trace ||
		die "QEMU did not start"
	t0=$QEMU_T0
	ip netns exec "$VM_NS" ping -D -n -i 0.01 "$E2E_GUEST_IP" >"$VM_LOGS/ping.log" 2>&1 &
	pp=$!
	_vm_all_pids+=("$pp")
	if [ "$mode" = late ]; then
		# the scenario itself: vnetd comes up while QEMU retries
		sleep "$late"
		vnetd_start || die "vnetd did not start: $(tail -n 2 "$VNETD_LOG")"
	fi
	# the host stops pinging once the guest has its answer: what follows
	# is the guest's own pings and its power-off
	vm_wait_line '^VNET: (reach ok|error reach)' 240
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
	qemu_wait 240 || echo "# $VM_NAME: QEMU did not power off in 240 s" >&2
	vm_stats stats.json
	ip -n "$VM_NS" -s link show "$VM_TAP" >"$VM_LOGS/tap.txt" 2>&1
	qemu_ring_start "$VM_LOGS/qemu.err"
	printf '%-9s %3d %6s %6s %7s %6s %6s %6s %5s %6s\n' "$mode" "$i" \
		"$(ms_between "$t0" "$RS_OPEN")" "$(ms_between "$t0" "$RS_DRVOK")" \
		"$(ms_between "$t0" "$RS_SETFEAT")" "$(ms_between "$t0" "$RS_KICK")" \
		"$(ms_between "$t0" "$(ping_first_reply "$VM_LOGS/ping.log")")" \
		"$(guest_link_reply_ms)" "$RS_OPENS" "$RS_CLOSES"
	vm_teardown
}

echo "# $(qemu_version | sed 's/^/QEMU /'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %3s %6s %6s %7s %6s %6s %6s %5s %6s\n' "# mode" boot open drvok \
	setfeat kick hreply link opens closes
res=$E2E_DIR/ring_start.tsv
: >"$res"
for ((i = 1; i <= boots; i++)); do
	for m in "${modes[@]}"; do
		# not in a pipe: boot's pids and netns are this shell's
		boot "$m" "$i" >>"$res"
		tail -n 1 "$res"
	done
done

# per mode: boots; link (guest: carrier -> first reply) median and max, how
# many over 2 s; the rings' start after DRIVER_OK (kick - drvok) median and
# max; boots whose connection closed
echo "# summary: mode boots | link ms: median max >2000 | kick-drvok ms: median max | boots with a close"
for m in "${modes[@]}"; do
	awk -v m="$m" '
		function med(a, n,   i, j, t) {
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : "-"
		}
		$1 == m {
			b++
			if ($8 != "-") { l[++nl] = $8; if ($8 > lmax) lmax = $8; if ($8 > 2000) over++ }
			if ($4 != "-" && $6 != "-") { d = $6 - $4; k[++nk] = d; if (d > kmax) kmax = d }
			if ($10 > 0) cl++
		}
		END {
			printf "%-9s %3d | %6s %6d %3d | %6s %6d | %d\n", m, b, med(l, nl), lmax, over, med(k, nk), kmax, cl
		}' "$res"
done
