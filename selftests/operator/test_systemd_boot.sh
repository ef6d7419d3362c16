#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The systemd units under a real systemd as PID 1 (docs/systemd.md, "Under
# a running systemd"): `make install DESTDIR=` into a temporary tree, then
# `systemd-nspawn --boot` of a root built from nothing but the host's /usr
# (--volatile=yes: / is a tmpfs, /etc empty but for what is bound in), the
# installed tree's /usr/local (the units, vnetd and vnetctl under test),
# /etc/vnet and /etc/default, the host's bpffs, in a network namespace of
# the test's own.  The container's systemd runs the units with their own
# sandboxing directives:
#   start     vnetd@NAME.service: active once READY=1, its main pid is vnetd
#             with the unit's bounding set, no new privileges and seccomp;
#             the socket in /run/vnet (RuntimeDirectory=), the pins on the
#             host; a vhost-user frontend (bench_vnetd_io's vufe) exchanges
#             frames with it
#   reload    systemctl reload (ExecReload=: vnetd --takeover): exit 0, the
#             main pid moved to the new vnetd, the old one gone, frames
#   restart   kill -9 of the main pid: Restart=on-failure starts it again
#             (NRestarts=1) and it serves
#   stop      systemctl stop: inactive (not failed), socket and pins gone
#   handover  two connected frontends (soak's, peers through a bridge)
#             send to each other through a systemctl reload of their
#             vnetd@ instance: every frame each sent, the other received
#   condition vnetd@NAME without /etc/vnet/NAME.conf does not start
#   host_unit vnetd.service with /etc/vnet/vnetd.conf: start, stop
#   exporter  vnet-exporter.service answers a scrape with the tap's series
# Where PID 1 cannot be systemd here (no systemd-nspawn, no cgroup for
# it), each case says SKIP with the reason measured; where it can, an
# install or a boot that fails is every case's FAIL.
#
#   selftests/operator/test_systemd_boot.sh [CASE...]

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=systemd-boot
IO=${IO:-$OUT/bench/bench_vnetd_io}
SOAK=${SOAK:-$OUT/selftests/soak}
ALL_CASES="start reload restart stop handover condition host_unit exporter"

# the capabilities vnetd's unit bounds itself to, beyond nspawn's
# defaults, and CAP_SYS_RESOURCE for its LimitMEMLOCK=
NSPAWN_CAPS=CAP_NET_ADMIN,CAP_BPF,CAP_PERFMON,CAP_SYS_RESOURCE
# system calls vnetd makes that nspawn's own filter does not allow
NSPAWN_SYSCALLS="bpf perf_event_open io_uring_setup io_uring_enter io_uring_register"

DEST=$VNET_TMP/dest
MACHINE=vnet-t-$$
NSPAWN_PID=""
LEADER=""
MACHINE_SKIP=""
# set where the machine could run it and it failed: a FAIL, not a SKIP
MACHINE_BROKEN=""
TAP=""
# the cgroups the container runs in, one per hierarchy (cg_make)
CGROUPS=()
NSPAWN_DIRS=()

trap 'machine_down; cg_remove; end_case; _cleanup_all' EXIT

# pid1_is_systemd: the host's PID 1 is systemd (then nspawn asks it for a
# scope); else nspawn runs in cgroups of the test's own (--keep-unit)
pid1_is_systemd()
{
	[ "$(ps -p 1 -o comm= 2>/dev/null)" = systemd ]
}

# cg_make: a cgroup named after the machine in each hierarchy nspawn
# looks at (cgroup2, and name=systemd on a hybrid host), so that what
# nspawn creates under its own cgroup is the test's and goes with it
cg_make()
{
	local h

	CGROUPS=()
	if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
		set -- /sys/fs/cgroup
	else
		set -- /sys/fs/cgroup/unified /sys/fs/cgroup/systemd
	fi
	for h in "$@"; do
		mountpoint -q "$h" || continue
		mkdir "$h/$MACHINE" || return 1
		CGROUPS+=("$h/$MACHINE")
	done
	[ ${#CGROUPS[@]} -gt 0 ]
}

# cg_remove: those cgroups, deepest first, once empty
cg_remove()
{
	local c

	for c in ${CGROUPS[@]+"${CGROUPS[@]}"}; do
		busywait 5000 sh -c "find '$c' -depth -type d -exec rmdir {} + 2>/dev/null; ! [ -e '$c' ]" ||
			echo "# cgroup $c not removed: $(find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')"
	done
	CGROUPS=()
}

# in_machine CMD...: CMD in the container's namespaces (its systemctl,
# journalctl, /proc), IN_MACHINE_SECS (30) at most
in_machine()
{
	timeout "${IN_MACHINE_SECS:-30}" nsenter -t "$LEADER" -m -u -i -n -p -- "$@"
}

# slow_sctl ARGS...: a start, reload or stop, which waits for vnetd; on a
# machine loaded by other work it took up to 34 s once
slow_sctl()
{
	IN_MACHINE_SECS=75 sctl "$@"
}

sctl()
{
	in_machine systemctl --no-pager "$@"
}

# prop UNIT PROPERTY: systemctl show -P
prop()
{
	sctl show -P "$2" "$1" 2>/dev/null
}

# machine_down: the container powered off (bounded), else killed by pid
machine_down()
{
	[ -n "$NSPAWN_PID" ] || return 0
	kill -TERM "$NSPAWN_PID" 2>/dev/null
	if ! busywait 20000 sh -c "! kill -0 $NSPAWN_PID 2>/dev/null"; then
		echo "# the container did not power off in 20 s: killed"
		[ -n "$LEADER" ] && kill -KILL "$LEADER" 2>/dev/null
		kill -KILL "$NSPAWN_PID" 2>/dev/null
	fi
	wait "$NSPAWN_PID" 2>/dev/null
	NSPAWN_PID=""
	LEADER=""
	# what nspawn made in the host's /run and leaves (empty) behind: the
	# machine's directory, and the parents if this test made them
	rmdir "/run/systemd/nspawn/propagate/$MACHINE" 2>/dev/null
	for d in ${NSPAWN_DIRS[@]+"${NSPAWN_DIRS[@]}"}; do
		[ "$d" = /run/systemd/nspawn ] && rmdir "$d/propagate" 2>/dev/null
		rmdir "$d" 2>/dev/null
	done
	NSPAWN_DIRS=()
}

# _leader: the container's PID 1 (nspawn's child), once it is systemd
_leader()
{
	local p

	for p in $(ps -o pid= --ppid "$NSPAWN_PID" 2>/dev/null); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] || continue
		LEADER=$p
		return 0
	done
	return 1
}

# _booted: the container's systemd finished starting up (running, or
# degraded: a unit of the host's /usr that cannot run in a container)
_booted()
{
	case $(in_machine systemctl is-system-running 2>/dev/null) in
	running | degraded) return 0 ;;
	esac
	return 1
}

# machine_up: install, boot (once); MACHINE_SKIP says why it cannot
machine_up()
{
	local t0

	[ -n "$LEADER" ] && return 0
	[ -n "$MACHINE_SKIP" ] && return 1
	t0=$(now_ms)
	# not the jobserver of a `make check` this runs under
	if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$VNET_ROOT" \
		--no-print-directory install DESTDIR="$DEST" OUT="$OUT" \
		>"$VNET_TMP/install.log" 2>&1; then
		MACHINE_BROKEN=1 MACHINE_SKIP="make install DESTDIR= failed: $(tail -n 3 "$VNET_TMP/install.log")"
		return 1
	fi
	ns_create boot || { MACHINE_BROKEN=1 MACHINE_SKIP="cannot create a netns"; return 1; }
	# the case's cleanup must not take the container's netns
	_case_ns=()
	TAP=$(rand_tap)
	_all_taps+=("$NS $TAP")
	printf 'socket=/run/vnet/t1.sock tap=%s queues=1\n' "$TAP" >"$DEST/etc/vnet/t1.conf"
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	local scope=(--register=no) cgs=""
	if ! pid1_is_systemd; then
		cg_make || { MACHINE_SKIP="no cgroup hierarchy to run the container in ($(stat -fc %T /sys/fs/cgroup 2>&1))"; return 1; }
		scope+=(--keep-unit)
		cgs="${CGROUPS[*]}"
	fi
	NSPAWN_DIRS=()
	for d in /run/systemd/nspawn /run/systemd/nspawn-root; do
		[ -e "$d" ] || NSPAWN_DIRS+=("$d")
	done
	# cgroup v2 in the container (Debian 12's default; nspawn would
	# follow a hybrid host's layout, where DevicePolicy= has no
	# controller the container may write); the container's first boot
	# (an empty /etc) without the presets that would enable every
	# installed unit
	# shellcheck disable=SC2016 # the inner shell's $$, $c, $@
	SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 \
		sh -c 'for c in $0; do echo $$ >"$c/cgroup.procs" || exit 99; done; exec "$@"' "$cgs" \
		systemd-nspawn -D / --volatile=yes --boot "${scope[@]}" \
		--machine="$MACHINE" --console=passive \
		--network-namespace-path="/run/netns/$NS" \
		--capability="$NSPAWN_CAPS" \
		--system-call-filter="$NSPAWN_SYSCALLS" \
		--bind=/sys/fs/bpf \
		--bind-ro="$DEST/usr/local:/usr/local" \
		--bind-ro="$DEST/etc/vnet:/etc/vnet" \
		--bind-ro="$DEST/etc/default:/etc/default" \
		systemd.condition-first-boot=no >"$VNET_TMP/nspawn.log" 2>&1 &
	NSPAWN_PID=$!
	if ! busywait 20000 _leader; then
		MACHINE_BROKEN=1 MACHINE_SKIP="systemd-nspawn --boot did not start systemd in 20 s: $(tail -n 5 "$VNET_TMP/nspawn.log" | tr '\n' ' ')"
		machine_down
		return 1
	fi
	if ! busywait 60000 _booted; then
		MACHINE_BROKEN=1 MACHINE_SKIP="the container's systemd did not finish starting in 60 s ($(in_machine systemctl is-system-running 2>&1)): $(tail -n 5 "$VNET_TMP/nspawn.log" | tr '\n' ' ')"
		machine_down
		return 1
	fi
	echo "# container $MACHINE (nspawn pid $NSPAWN_PID, PID 1 = $LEADER) up in $(($(now_ms) - t0)) ms: $(in_machine systemctl is-system-running 2>&1)"
	sctl --failed --plain --no-legend 2>/dev/null | sed 's/^/# failed in the container (not vnet'"'"'s): /'
	return 0
}

# need_machine NAME: machine_up, or a SKIP line for NAME where this
# machine cannot run systemd as PID 1, a FAIL where it can and did not
need_machine()
{
	machine_up && return 0
	if [ -n "$MACHINE_BROKEN" ]; then
		fail "$1" "$MACHINE_SKIP"
	else
		skip "$1" "$MACHINE_SKIP"
	fi
	return 1
}

# sock: vnetd's socket as the host reaches it (through the container's root)
sock()
{
	echo "/proc/$LEADER/root/run/vnet/t1.sock"
}

# frames: a vhost-user frontend exchanges frames with the unit's vnetd
frames()
{
	run timeout 60 "$IO" signals --socket "$(sock)" --netns "$NS" --tap "$TAP" --frames 200
	[ "$RUN_RC" = 0 ] && grep -q 'armed guest:  tx bulk' <<<"$RUN_OUT"
}

# host_pid CPID: the host's pid of the container's pid CPID (NSpid)
host_pid()
{
	local s ns

	ns=$(readlink "/proc/$LEADER/ns/pid")
	for s in $(grep -lE "^NSpid:\s+[0-9]+\s+$1\$" /proc/[0-9]*/status 2>/dev/null); do
		s=${s%/status}
		[ "$(readlink "$s/ns/pid" 2>/dev/null)" = "$ns" ] && echo "${s#/proc/}" && return
	done
}

# mnt_opt PID MOUNTPOINT: ro or rw, the last mount there in PID's view
mnt_opt()
{
	awk -v m="$2" '$5 == m { split($6, o, ","); v = o[1] } END { print v }' \
		"/proc/${1:-0}/mountinfo" 2>/dev/null
}

# cg2_of PID: PID's cgroup v2 directory on the host
cg2_of()
{
	echo "$(findmnt -n -t cgroup2 -o TARGET | head -n 1)$(sed -n 's/^0:://p' "/proc/${1:-0}/cgroup" 2>/dev/null)"
}

# has_cap_sys_resource: this machine can raise a hard limit at all
has_cap_sys_resource()
{
	# CAP_SYS_RESOURCE is bit 24
	(($(printf '%d' "0x$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)") >> 24 & 1))
}

# journal UNIT: the unit's journal in the container
journal()
{
	in_machine journalctl --no-pager -o short-monotonic -u "$1" 2>/dev/null
}

# sandbox_notes UNIT: what the container's systemd said it could not apply
sandbox_notes()
{
	journal "$1" | grep -iE 'not supported|failed to (set up|apply)|ignoring|operation not permitted' |
		sort -u | sed "s/^/# $1 in the container: /"
}

# started: vnetd@t1 active (started by an earlier case or now)
started()
{
	[ "$(sctl is-active vnetd@t1 2>/dev/null)" = active ] && return 0
	slow_sctl start vnetd@t1 >/dev/null 2>&1
	[ "$(sctl is-active vnetd@t1 2>/dev/null)" = active ]
}

case_start()
{
	local rc main hp

	need_machine start || return
	run slow_sctl start vnetd@t1
	rc=$RUN_RC
	expect "systemctl start exit" 0 "$rc"
	expect "active" active "$(sctl is-active vnetd@t1)"
	main=$(prop vnetd@t1 MainPID)
	hp=$(host_pid "$main")
	expect "the main pid is vnetd" vnetd "$(cat "/proc/${hp:-0}/comm" 2>/dev/null)"
	expect "vnetd's bounding set" "$(unit_cap_mask "$VNET_ROOT/systemd/vnetd@.service")" \
		"$(awk '/^CapBnd:/ { print $2 }' "/proc/${hp:-0}/status" 2>/dev/null)"
	expect "no new privileges" 1 "$(awk '/^NoNewPrivs:/ { print $2 }' "/proc/${hp:-0}/status" 2>/dev/null)"
	# MemoryDenyWriteExecute=, SystemCallArchitectures= ...: a filter
	expect "seccomp (filter mode)" 2 "$(awk '/^Seccomp:/ { print $2 }' "/proc/${hp:-0}/status" 2>/dev/null)"
	expect "RuntimeDirectory= made /run/vnet" "755" "$(in_machine stat -c %a /run/vnet 2>/dev/null)"
	expect "the socket" yes "$(in_machine test -S /run/vnet/t1.sock && echo yes || echo no)"
	expect "the pins on the host" yes "$(pins_exist "$TAP" && echo yes || echo no)"
	# ProtectSystem=strict: /, and with it /etc, read-only; ReadWritePaths=
	expect "/ read-only for vnetd (ProtectSystem=strict)" ro "$(mnt_opt "$hp" /)"
	expect "/sys/fs/bpf writable for vnetd (ReadWritePaths=)" rw "$(mnt_opt "$hp" /sys/fs/bpf)"
	# DevicePolicy=closed: systemd's device program on vnetd's cgroup
	expect "DevicePolicy=: a cgroup_device program" yes \
		"$(bpftool cgroup show "$(cg2_of "$hp")" 2>/dev/null | grep -q cgroup_device && echo yes || echo no)"
	if has_cap_sys_resource; then
		expect "LimitMEMLOCK=infinity" unlimited \
			"$(awk '/^Max locked memory/ { print $5 }' "/proc/${hp:-0}/limits" 2>/dev/null)"
	fi
	expect "frames both ways" yes "$(frames && echo yes || echo no)"
	report start "$(run_said) $(journal vnetd@t1 | tail -n 5 | tr '\n' ' ') $(head -c 300 <<<"$RUN_OUT")"
	has_cap_sys_resource ||
		echo "# LimitMEMLOCK=infinity not applied here: this machine's bounding set has no CAP_SYS_RESOURCE (systemd sets the closest limit: $(awk '/^Max locked memory/ { print $5 }' "/proc/${hp:-0}/limits" 2>/dev/null) bytes); a host's systemd has it"
	sandbox_notes vnetd@t1
}

# moved OLD WHAT: vnetd@t1 active after WHAT under a new main pid, a
# vnetd, that serves
moved()
{
	local new

	new=$(prop vnetd@t1 MainPID)
	expect "active after $2" active "$(sctl is-active vnetd@t1)"
	expect "MainPID moved" yes "$([ -n "$new" ] && [ "$new" != 0 ] && [ "$new" != "$1" ] && echo yes || echo no)"
	expect "the new main pid is vnetd" vnetd "$(cat "/proc/$(host_pid "$new")/comm" 2>/dev/null)"
	expect "frames after $2" yes "$(frames && echo yes || echo no)"
}

# t1_up CASE: vnetd@t1 active, or CASE fails
t1_up()
{
	started && return 0
	fail "$1" "vnetd@t1 does not start: $(journal vnetd@t1 | tail -n 5)"
	return 1
}

case_reload()
{
	local old hp

	need_machine reload && t1_up reload || return
	old=$(prop vnetd@t1 MainPID)
	hp=$(host_pid "$old")
	run slow_sctl reload vnetd@t1
	expect "systemctl reload exit" 0 "$RUN_RC"
	busywait 10000 sh -c "! kill -0 ${hp:-0} 2>/dev/null"
	expect "the old vnetd gone" no "$(kill -0 "${hp:-0}" 2>/dev/null && echo yes || echo no)"
	moved "$old" "the reload"
	report reload "$(run_said) $(journal vnetd@t1 | tail -n 8 | tr '\n' ' ')"
}

case_restart()
{
	local old hp

	need_machine restart && t1_up restart || return
	old=$(prop vnetd@t1 MainPID)
	hp=$(host_pid "$old")
	expect "NRestarts before" 0 "$(prop vnetd@t1 NRestarts)"
	kill -KILL "${hp:-0}"
	# RestartSec=1s, then READY=1 of the new one
	busywait 60000 sh -c "[ \"\$(nsenter -t $LEADER -m -p systemctl show -P NRestarts vnetd@t1)\" = 1 ] &&
		[ \"\$(nsenter -t $LEADER -m -p systemctl is-active vnetd@t1)\" = active ]"
	expect "NRestarts after kill -9" 1 "$(prop vnetd@t1 NRestarts)"
	moved "$old" "the restart"
	report restart "$(journal vnetd@t1 | tail -n 8 | tr '\n' ' ') $(head -c 300 <<<"$RUN_OUT$RUN_ERR")"
}

case_stop()
{
	need_machine stop && t1_up stop || return
	run slow_sctl stop vnetd@t1
	expect "systemctl stop exit" 0 "$RUN_RC"
	expect "inactive (not failed)" inactive "$(sctl is-active vnetd@t1)"
	expect "the socket removed" no "$(in_machine test -e /run/vnet/t1.sock && echo yes || echo no)"
	expect "RuntimeDirectoryPreserve=yes kept /run/vnet" yes "$(in_machine test -d /run/vnet && echo yes || echo no)"
	expect "the pins removed" yes "$(pins_gone "$TAP" && echo yes || echo no)"
	report stop "$(run_said) $(journal vnetd@t1 | tail -n 5 | tr '\n' ' ')"
}

# soak_port OUT PORT KEY: KEY=VALUE of soak's "port PORT" line
soak_port()
{
	awk -v p="$2" -v k="$3" '$1 == "port" && $2 == p {
		for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' "$1"
}

# dp_stat I DIR frames|drops [SUFFIX]: vnetd's counter of port I
# (stats.I[SUFFIX].json)
dp_stat()
{
	jq -r --arg d "$2" --arg f "$3" '[.queues[] | select(.dir == $d) |
		.datapath[$f] | if type == "object" or type == "array" then add else . end] | add // 0' \
		"$VNET_TMP/stats.$1${4:-}.json" 2>/dev/null
}

# link_stat I rx|tx packets|dropped [SUFFIX]: the tap's own counter
link_stat()
{
	jq -r --arg d "$2" --arg f "$3" '.[0].stats64[$d][$f] // 0' \
		"$VNET_TMP/link.$1${4:-}.json" 2>/dev/null
}

# ho_stats TAP0 TAP1 [SUFFIX]: vnetd's and the taps' counters, now
ho_stats()
{
	local i=0 t

	for t in "$1" "$2"; do
		"$VNETCTL" -j stats "$t" >"$VNET_TMP/stats.$i${3:-}.json" 2>/dev/null
		ip -n "$NS" -s -j link show "$t" >"$VNET_TMP/link.$i${3:-}.json"
		i=$((i + 1))
	done
}

# ho_drops I P [SUFFIX]: the drops counted on the way from port I to P
ho_drops()
{
	echo $(($(dp_stat "$1" tx drops "${3:-}") + $(dp_stat "$2" rx drops "${3:-}") +
		$(link_stat "$1" rx dropped "${3:-}") + $(link_stat "$2" tx dropped "${3:-}")))
}

# ho_flowing TAP0 TAP1: vnetd moved 200 frames from each frontend
ho_flowing()
{
	local t n

	for t in "$1" "$2"; do
		n=$(vnetctl -j stats "$t" 2>/dev/null | jq '[.queues[] | select(.dir == "tx") | .datapath.frames] | add // 0')
		[ "${n:-0}" -ge 200 ] || return 1
	done
}

case_handover()
{
	local a b old spid i p sent recv drops

	need_machine handover || return
	a=$(rand_tap) b=$(rand_tap)
	_all_taps+=("$NS $a" "$NS $b")
	# nothing but the frontends' frames on the bridge
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1
	printf 'socket=/run/vnet/ho0.sock tap=%s queues=1\nsocket=/run/vnet/ho1.sock tap=%s queues=1\n' \
		"$a" "$b" >"$DEST/etc/vnet/ho.conf"
	run slow_sctl start vnetd@ho
	expect "systemctl start exit" 0 "$RUN_RC"
	ip -n "$NS" link add vnet-ho type bridge && ip -n "$NS" link set vnet-ho up &&
		ip -n "$NS" link set "$a" master vnet-ho && ip -n "$NS" link set "$b" master vnet-ho
	old=$(prop vnetd@ho MainPID)
	# --warmup 0: without soak's flood of the rings, at a rate the
	# frontends and vnetd keep up with
	timeout -k 5 40 "$SOAK" --sock "/proc/$LEADER/root/run/vnet/ho%u.sock" --ports 2 --qp 1 \
		--secs 6 --warmup 0 --rate 500 --sample 10 --pid "$(host_pid "$old")" \
		>"$VNET_TMP/soak.out" 2>"$VNET_TMP/soak.err" &
	spid=$!
	# the frames flow both ways, then the reload
	busywait 40000 ho_flowing "$a" "$b"
	run slow_sctl reload vnetd@ho
	expect "systemctl reload exit" 0 "$RUN_RC"
	expect "MainPID moved" yes "$([ "$(prop vnetd@ho MainPID)" != "$old" ] && echo yes || echo no)"
	wait "$spid"
	expect "frontends exit" 0 "$?"
	ho_stats "$a" "$b"
	# every frame port i sent arrived at its peer: none dropped by vnetd
	# or a tap, none lost uncounted
	for i in 0 1; do
		p=$((i ^ 1))
		sent=$(soak_port "$VNET_TMP/soak.out" "$i" sent)
		recv=$(soak_port "$VNET_TMP/soak.out" "$p" recv)
		drops=$(ho_drops "$i" "$p")
		expect "port $i sent frames" yes "$(positive "$sent" && echo yes || echo no)"
		expect "port $i's frames, moved by vnetd" "$sent" \
			$(($(dp_stat "$i" tx frames) + $(dp_stat "$i" tx drops)))
		expect "port $i's frames, received by its peer (counted drops $drops)" "$sent" "$recv"
		expect "port $i: nothing foreign" 0 "$(soak_port "$VNET_TMP/soak.out" "$i" foreign)"
		echo "# handover: port $i -> $p: sent $sent, received $recv, counted drops $drops"
	done
	run slow_sctl stop vnetd@ho
	ip -n "$NS" link del vnet-ho 2>/dev/null
	rm -f "$DEST/etc/vnet/ho.conf"
	report handover "$(grep '^port' "$VNET_TMP/soak.out" | tr '\n' ' ') $(head -c 300 "$VNET_TMP/soak.err") $(journal vnetd@ho | tail -n 6 | tr '\n' ' ')"
}

case_condition()
{
	need_machine condition || return
	run sctl start vnetd@none
	expect "systemctl start exit" 0 "$RUN_RC"
	expect "not started" inactive "$(sctl is-active vnetd@none)"
	expect "condition failed" no "$(prop vnetd@none ConditionResult)"
	report condition "$(run_said)"
}

case_host_unit()
{
	local tap

	need_machine host_unit || return
	tap=$(rand_tap)
	_all_taps+=("$NS $tap")
	# /etc/vnet is the installed tree's, bound read-only into the container
	printf 'socket=/run/vnet/host.sock tap=%s queues=2\n' "$tap" >"$DEST/etc/vnet/vnetd.conf"
	run slow_sctl start vnetd
	expect "systemctl start exit" 0 "$RUN_RC"
	expect "active" active "$(sctl is-active vnetd)"
	expect "the pins on the host" yes "$(pins_exist "$tap" && echo yes || echo no)"
	run slow_sctl stop vnetd
	expect "systemctl stop exit" 0 "$RUN_RC"
	expect "inactive" inactive "$(sctl is-active vnetd)"
	expect "the pins removed" yes "$(pins_gone "$tap" && echo yes || echo no)"
	rm -f "$DEST/etc/vnet/vnetd.conf"
	report host_unit "$(run_said) $(journal vnetd | tail -n 5 | tr '\n' ' ')"
	sandbox_notes vnetd
}

case_exporter()
{
	local body

	need_machine exporter && t1_up exporter || return
	# installed, not enabled: the boot did not start it
	expect "not started at boot" inactive "$(sctl is-active vnet-exporter)"
	run slow_sctl start vnet-exporter
	expect "systemctl start exit" 0 "$RUN_RC"
	expect "active" active "$(sctl is-active vnet-exporter)"
	busywait 10000 sh -c "ip netns exec $NS curl -sf http://127.0.0.1:9477/metrics | grep -q 'vnet_device_up{device=\"$TAP\"'"
	body=$(ip netns exec "$NS" curl -sf http://127.0.0.1:9477/metrics)
	expect "a scrape has the tap's series" yes \
		"$(grep -q "vnet_device_up{device=\"$TAP\"" <<<"$body" && echo yes || echo no)"
	run slow_sctl stop vnet-exporter
	expect "stopped" inactive "$(sctl is-active vnet-exporter)"
	report exporter "$(run_said) $(journal vnet-exporter | tail -n 5 | tr '\n' ' ') $(head -c 300 <<<"$body")"
	sandbox_notes vnet-exporter
}

main()
{
	ksft_args "$@"
	require_root systemd-boot || { ksft_exit; return; }
	require_cmd systemd-boot systemd-nspawn nsenter curl make "$IO" "$SOAK" ||
		{ ksft_exit; return; }
	ksft_run :
	ksft_exit
}

main "$@"
