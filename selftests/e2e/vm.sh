# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# A real guest behind vnetd: helpers shared by the e2e tests
# (selftests/e2e/run.sh) and the VM demo (scripts/demo-vm.sh).  Source it
# after setting OUT; it defines functions and variables only (no trap: the
# caller calls vm_teardown, and vm_cleanup_all from its EXIT trap; a trap
# of its own should start with [ "$BASHPID" = "$$" ], see vm_cleanup_all).
#
# One VM at a time:
#
#   vm_init NAME               netns vnet-e-NAME-$$, a tap name, file names
#   vm_tap_persistent          create the tap first (it survives vnetd)
#   vnetd_start [ARGS...]      vnetd --netns --tap --socket ARGS (server
#                              mode: waits for the socket); $VNETD_PID
#   vnetd_stop [SIGNAL]        stop it (bounded), $VNETD_RC its exit status
#   vm_host_addr               192.0.2.1/24 on the tap in the netns
#   iperf_server PORT          a one-off iperf3 -s -J in the netns
#   qemu_start STEPS [OPTS]    boot the guest (background), $QEMU_PID,
#                              its start time $QEMU_T0 (date +%s.%N)
#                              OPTS: queues=N smp=N mrg=on|off server
#                              reconnect vectors=N monitor trace
#   qemu_monitor CMD           a monitor command (stop, cont, ...)
#   vm_wait_line REGEX SECS    wait for a line on the guest's console
#   qemu_wait SECS             wait for the guest to power off; $QEMU_RC
#   vm_teardown                stop everything of this VM, delete the netns
#
# and to read the results:
#
#   guest_lines                the guest's "VNET: " lines, \r removed
#   guest_kv WHAT KEY          KEY=VALUE from the line "VNET: WHAT ..."
#   guest_json TAG             the JSON the guest printed for iperf TAG
#   vm_stats                   `vnetctl -j stats TAP` into $STATS
#   dp Q DIR FIELD             STATS: queue Q's datapath counter FIELD
#   cls Q DIR CLASS [FIELD]    STATS: classifier counter (packets)
#
# Files of the VM go to $VM_LOGS (build/e2e/logs/NAME/, kept after the run:
# console, vnetd logs, QEMU's stderr, iperf3 JSON, stats).

# jq filters are single-quoted on purpose; the variables are for the
# scripts that source this file
# shellcheck disable=SC2016,SC2034

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$E2E_ROOT/build}
case $OUT in /*) ;; *) OUT=$E2E_ROOT/$OUT ;; esac
E2E_DIR=$OUT/e2e
E2E_VMLINUX=$E2E_DIR/vmlinux
E2E_INITRD=$E2E_DIR/initramfs.cpio
VNETD=${VNETD:-$OUT/vnetd}
# vnetd with the test switches (docs/vnetd.md, "Test builds")
VNETD_TESTING=${VNETD_TESTING:-$OUT/vnetd-testing}
VNETCTL=${VNETCTL:-$OUT/vnetctl}
QEMU=${QEMU:-qemu-system-x86_64}
# a bound on one guest's life (seconds; qemu_wait)
E2E_QEMU_TIMEOUT=${E2E_QEMU_TIMEOUT:-120}
E2E_HOST_IP=192.0.2.1
E2E_GUEST_IP=192.0.2.2
E2E_GUEST_MAC=02:00:00:00:00:02
E2E_MEM=512

# every VM's netns, pids and taps ever created here, for vm_cleanup_all
_vm_all_ns=()
_vm_all_pids=()
_vm_all_taps=()

_vm_now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# _vm_poll TIMEOUT_MS CMD...: CMD every 50 ms until it succeeds
_vm_poll()
{
	local deadline=$(($(_vm_now_ms) + $1))

	shift
	while :; do
		"$@" && return 0
		[ "$(_vm_now_ms)" -ge "$deadline" ] && return 1
		sleep 0.05
	done
}

# vm_init NAME: names for one VM; nothing is created yet
vm_init()
{
	VM_NAME=$1
	VM_NS="vnet-e-$1-$$"
	VM_TAP="ve$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
	VM_LOGS=$E2E_DIR/logs/$1
	rm -rf "$VM_LOGS"
	mkdir -p "$VM_LOGS"
	VM_SOCK=$VM_LOGS/vhost.sock
	VM_SERIAL=$VM_LOGS/console.log
	VM_QUEUES=1
	VNETD_PID=""
	VNETD_RC=""
	VNETD_ARGS=()
	VNETD_N=0
	QEMU_PID=""
	QEMU_RC=""
	VM_IPERF_PIDS=()
	VM_OWN_TAP=""
	STATS=""
	ip netns add "$VM_NS" || return 1
	_vm_all_ns+=("$VM_NS")
	ip -n "$VM_NS" link set lo up
	# IPv6 off: the host sends nothing on its own
	ip netns exec "$VM_NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1
	return 0
}

# vm_tap_persistent: the tap exists before vnetd (what libvirt does); it
# keeps its address across a vnetd restart
vm_tap_persistent()
{
	ip -n "$VM_NS" tuntap add dev "$VM_TAP" mode tap multi_queue vnet_hdr ||
		return 1
	VM_OWN_TAP=$VM_TAP
	_vm_all_taps+=("$VM_TAP")
}

# vnetd_start [ARGS...]: vnetd for this VM's tap and socket, log in
# vnetd.N.log (N counts restarts).  Server mode: ready when the socket
# exists; --client: when it has connected to QEMU's socket.
vnetd_start()
{
	local log

	[ $# -gt 0 ] && VNETD_ARGS=("$@")
	VNETD_N=$((VNETD_N + 1))
	log=$VM_LOGS/vnetd.$VNETD_N.log
	VNETD_LOG=$log
	# server mode: a socket left by a killed vnetd must not look ready
	case " ${VNETD_ARGS[*]-} " in
	*" --client "*) ;;
	*) rm -f "$VM_SOCK" ;;
	esac
	"$VNETD" --netns "$VM_NS" --tap "$VM_TAP" --socket "$VM_SOCK" \
		${VNETD_ARGS[@]+"${VNETD_ARGS[@]}"} -v >"$log" 2>&1 &
	VNETD_PID=$!
	_vm_all_pids+=("$VNETD_PID")
	case " ${VNETD_ARGS[*]-} " in
	*" --client "*)
		_vm_poll 10000 grep -q 'frontend connected' "$log" ;;
	*)
		_vm_poll 10000 test -S "$VM_SOCK" ;;
	esac || {
		echo "# vnetd did not get ready in 10 s: $(tail -n 3 "$log" | tr '\n' ' ')"
		return 1
	}
	kill -0 "$VNETD_PID" 2>/dev/null
}

# vnetd_stop [SIGNAL]: stop vnetd (SIGTERM by default), wait 10 s at most
# (then SIGKILL); VNETD_RC is its exit status
vnetd_stop()
{
	local sig=${1:-TERM}

	VNETD_RC=""
	[ -n "$VNETD_PID" ] || return 0
	# bash would say "Killed" when it reaps a job it was asked to kill
	exec 3>&2 2>/dev/null
	kill -"$sig" "$VNETD_PID"
	if ! _vm_poll 10000 _vm_gone "$VNETD_PID"; then
		echo "# vnetd did not stop in 10 s after SIG$sig; killing it" >&3
		kill -KILL "$VNETD_PID"
	fi
	wait "$VNETD_PID"
	VNETD_RC=$?
	exec 2>&3 3>&-
	VNETD_PID=""
}

_vm_gone()
{
	! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" 2>/dev/null)" = Z ]
}

# vnetd_alive: still running
vnetd_alive()
{
	[ -n "$VNETD_PID" ] && ! _vm_gone "$VNETD_PID"
}

# vnetd_sanitizer_report: an ASan/UBSan report or a crash in a vnetd log
vnetd_sanitizer_report()
{
	grep -hE 'AddressSanitizer|LeakSanitizer|runtime error:|Segmentation fault' \
		"$VM_LOGS"/vnetd.*.log 2>/dev/null | head -n 3
}

# vm_host_addr: the host end of the guest link
vm_host_addr()
{
	ip netns exec "$VM_NS" sysctl -qw "net.ipv6.conf.$VM_TAP.disable_ipv6=1" \
		>/dev/null 2>&1
	ip -n "$VM_NS" addr replace "$E2E_HOST_IP/24" dev "$VM_TAP" &&
		ip -n "$VM_NS" link set "$VM_TAP" up
}

_vm_listening()
{
	ip netns exec "$VM_NS" ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# iperf_server PORT: one test, JSON into iperf-server-PORT.json
iperf_server()
{
	ip netns exec "$VM_NS" iperf3 -s -1 -J -p "$1" -B "$E2E_HOST_IP" \
		>"$VM_LOGS/iperf-server-$1.json" 2>&1 &
	VM_IPERF_PIDS+=("$!")
	_vm_all_pids+=("$!")
	_vm_poll 5000 _vm_listening "$1"
}

# iperf_server_json PORT: what the server wrote (after its test)
iperf_server_json()
{
	cat "$VM_LOGS/iperf-server-$1.json" 2>/dev/null
}

# e2e_msix_ok: whether this QEMU survives a vhost-user virtio-net device
# with MSI-X under TCG.  QEMU 7.2 does not: with MSI-X vectors, the guest
# driver's setup makes vhost_net take KVM's irqfd path, which QEMU reaches
# without KVM and dies of SIGSEGV (the guest's virtio_pci probe is the
# trigger).  Set by e2e_probe_msix (cached per QEMU version).
E2E_MSIX=${E2E_MSIX:-}

# qemu_version: "7.2.22"
qemu_version()
{
	"$QEMU" --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9.]*\).*/\1/p'
}

# what qemu_start's trace option records: the chardev's events (1 opened,
# 4 closed: QEMUChrEvent), each vhost-user request QEMU sends and each reply
# it reads (req:N, the protocol's numbers), the guest driver's status writes
# (val 15: DRIVER_OK)
E2E_TRACE_EVENTS=${E2E_TRACE_EVENTS:-vhost_user_event vhost_user_write vhost_user_read virtio_set_status}

# qemu_trace_times FILE EVENT [REGEX]: the host times (seconds, as
# date +%s.%N) of trace EVENT lines of FILE whose arguments match REGEX
qemu_trace_times()
{
	sed -n "s/^[0-9]*@\([0-9.]*\):$2 \(.*\)/\1 \2/p" "$1" 2>/dev/null |
		awk -v re="${3:-}" 're == "" || $0 ~ re { print $1 }'
}

# qemu_ring_start FILE: from a qemu_start ... trace run's qemu.err, the
# host times (seconds) of the connection's first CHR_EVENT_OPENED
# (RS_OPEN), the guest driver's first DRIVER_OK (RS_DRVOK), the first
# SET_FEATURES (RS_SETFEAT: vhost_net_start's first message) and the
# first start's last SET_VRING_KICK (RS_KICK: every ring started); how
# many times the connection opened and closed (RS_OPENS, RS_CLOSES)
qemu_ring_start()
{
	RS_OPEN=$(qemu_trace_times "$1" vhost_user_event 'event: 1$' | head -n 1)
	RS_OPENS=$(qemu_trace_times "$1" vhost_user_event 'event: 1$' | wc -l)
	RS_CLOSES=$(qemu_trace_times "$1" vhost_user_event 'event: 4$' | wc -l)
	RS_DRVOK=$(qemu_trace_times "$1" virtio_set_status 'val 15$' | head -n 1)
	RS_SETFEAT=$(qemu_trace_times "$1" vhost_user_write 'req:2 ' | head -n 1)
	RS_KICK=$(qemu_trace_times "$1" vhost_user_write 'req:12 ' |
		sed -n "$((2 * VM_QUEUES))p")
}

# ms_between T0 T1: milliseconds from T0 to T1 (seconds), or - when one
# is missing
ms_between()
{
	if [ -z "$1" ] || [ -z "$2" ]; then
		echo -
		return
	fi
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%d\n", (b - a) * 1000 }'
}

# qemu_start STEPS [OPT...]: boot the guest in the background.  OPTs:
#   queues=N    queue pairs (-netdev queues=N, mq=on)
#   smp=N       vCPUs
#   mrg=off     mrg_rxbuf=off on the device
#   server      QEMU listens on the socket (vnetd --client), waits for it
#   reconnect   QEMU reconnects to vnetd's socket every second when lost
#   vectors=N   MSI-X vectors (default: 0 unless E2E_MSIX=yes, see above)
#   monitor     the human monitor on FIFOs, for qemu_monitor
#   trace       QEMU's trace events of the vhost-user connection and the
#               device status (E2E_TRACE_EVENTS) with the host's time, in
#               qemu.err ("PID@SECONDS:EVENT ARGS", see qemu_trace_times)
qemu_start()
{
	local steps=$1 o smp=1 queues=1 mrg="" chr vectors dev srv=no mon=no
	local trace=no

	shift
	if [ "${E2E_MSIX:-}" = yes ]; then
		vectors=""
	else
		vectors=0
	fi
	chr="socket,id=c0,path=$VM_SOCK"
	for o in "$@"; do
		case $o in
		queues=*) queues=${o#queues=} ;;
		smp=*) smp=${o#smp=} ;;
		mrg=off) mrg=",mrg_rxbuf=off" ;;
		mrg=on) mrg=",mrg_rxbuf=on" ;;
		mtu=*) mrg="$mrg,host_mtu=${o#mtu=}" ;;
		packed) mrg="$mrg,packed=on" ;;
		server) chr="$chr,server=on,wait=off"; srv=yes ;;
		reconnect) chr="$chr,reconnect=1" ;;
		vectors=*) vectors=${o#vectors=} ;;
		monitor) mon=yes ;;
		trace) trace=yes ;;
		*) echo "qemu_start: unknown option $o" >&2; return 1 ;;
		esac
	done
	dev="virtio-net-pci,netdev=n0,mac=$E2E_GUEST_MAC$mrg"
	[ "$queues" -gt 1 ] && dev="$dev,mq=on"
	[ -n "$vectors" ] && dev="$dev,vectors=$vectors"
	VM_QUEUES=$queues
	: >"$VM_SERIAL"
	# no_timer_check: under TCG on a busy host the kernel's boot-time check
	# of the IO-APIC timer can miss ("MP-BIOS bug: 8254 timer not
	# connected"), an error line about nothing wrong with the guest
	# shellcheck disable=SC2054 # the commas are QEMU's
	QEMU_ARGS=(-accel tcg -cpu max -smp "$smp" -m "$E2E_MEM"
		-machine pc,memory-backend=mem
		-object "memory-backend-memfd,id=mem,size=${E2E_MEM}M,share=on"
		-nodefaults -no-user-config -display none -no-reboot
		-kernel "$E2E_VMLINUX" -initrd "$E2E_INITRD"
		-append "console=ttyS0 loglevel=4 panic=-1 no_timer_check vnet.steps=$steps"
		-chardev "$chr"
		-netdev "vhost-user,id=n0,chardev=c0,queues=$queues"
		-device "$dev"
		-serial "file:$VM_SERIAL")
	if [ $trace = yes ]; then
		QEMU_ARGS+=(-msg timestamp=on)
		for o in $E2E_TRACE_EVENTS; do
			QEMU_ARGS+=(-trace "$o")
		done
	fi
	if [ $mon = yes ]; then
		# the human monitor on two FIFOs (no socat needed): commands into
		# monitor.in, what it says drained into monitor.log
		rm -f "$VM_LOGS/monitor.in" "$VM_LOGS/monitor.out"
		mkfifo "$VM_LOGS/monitor.in" "$VM_LOGS/monitor.out" || return 1
		# shellcheck disable=SC2054 # the commas are QEMU's
		QEMU_ARGS+=(-chardev "pipe,id=mon,path=$VM_LOGS/monitor"
			-mon chardev=mon,mode=readline)
	fi
	# for a human: quoted only where a word has a blank
	for o in "$QEMU" "${QEMU_ARGS[@]}"; do
		case $o in
		*" "*) printf "'%s' " "$o" ;;
		*) printf '%s ' "$o" ;;
		esac
	done >"$VM_LOGS/qemu.cmdline"
	echo >>"$VM_LOGS/qemu.cmdline"
	# no timeout(1) around it: killed early, timeout signals its whole
	# process group, which is still ours then.  qemu_wait bounds QEMU.
	QEMU_TIMED_OUT=""
	QEMU_T0=$(date +%s.%N)
	"$QEMU" "${QEMU_ARGS[@]}" </dev/null >"$VM_LOGS/qemu.err" 2>&1 &
	QEMU_PID=$!
	_vm_all_pids+=("$QEMU_PID")
	if [ $mon = yes ]; then
		# O_RDWR: never blocks on a FIFO, and sees no EOF when QEMU goes
		cat <>"$VM_LOGS/monitor.out" >"$VM_LOGS/monitor.log" &
		_vm_all_pids+=("$!")
		VM_IPERF_PIDS+=("$!")
	fi
	[ $srv = yes ] || return 0
	# QEMU as the server: ready when its socket exists
	_vm_poll 10000 test -S "$VM_SOCK"
}

# qemu_monitor COMMAND: a human monitor command (qemu_start ... monitor);
# the FIFO is open read-write in QEMU, so this does not block
qemu_monitor()
{
	[ -p "$VM_LOGS/monitor.in" ] || return 1
	timeout 5 sh -c 'echo "$1" >"$2"' sh "$1" "$VM_LOGS/monitor.in"
}

# vm_wait_line REGEX SECS: a console line (\r removed) matching REGEX
# (grep -E) within SECS, or 1 (also when QEMU is gone)
vm_wait_line()
{
	local deadline=$(($(_vm_now_ms) + $2 * 1000))

	while :; do
		tr -d '\r' <"$VM_SERIAL" 2>/dev/null | grep -qE "$1" && return 0
		[ "$(_vm_now_ms)" -ge "$deadline" ] && return 1
		[ -n "$QEMU_PID" ] && _vm_gone "$QEMU_PID" &&
			! tr -d '\r' <"$VM_SERIAL" | grep -qE "$1" && return 1
		sleep 0.1
	done
}

# qemu_wait SECS: wait for the guest to end (it powers off); QEMU_RC is
# QEMU's exit status; 1 if SECS passed (then QEMU is killed and
# QEMU_TIMED_OUT is SECS)
qemu_wait()
{
	[ -n "$QEMU_PID" ] || return 1
	# QEMU_RC tells how QEMU ended; bash need not say it too
	exec 3>&2 2>/dev/null
	_qemu_wait "$@"
	set -- $?
	exec 2>&3 3>&-
	return "$1"
}

_qemu_wait()
{
	if ! _vm_poll $(($1 * 1000)) _vm_gone "$QEMU_PID"; then
		QEMU_TIMED_OUT=$1
		kill -TERM "$QEMU_PID" 2>/dev/null
		_vm_poll 5000 _vm_gone "$QEMU_PID" || kill -KILL "$QEMU_PID" 2>/dev/null
		wait "$QEMU_PID" 2>/dev/null
		QEMU_RC=$?
		QEMU_PID=""
		return 1
	fi
	wait "$QEMU_PID" 2>/dev/null
	QEMU_RC=$?
	QEMU_PID=""
	return 0
}

# guest_lines: what the guest reported
guest_lines()
{
	tr -d '\r' <"$VM_SERIAL" 2>/dev/null | grep '^VNET: ' | sed 's/^VNET: //'
}

# guest_kv WHAT KEY: VALUE of KEY=VALUE on the last line "VNET: WHAT ..."
guest_kv()
{
	guest_lines | awk -v w="$1" -v k="$2" '
		$1 == w { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) v = substr($i, length(k) + 2) }
		END { print v }'
}

# ping_first_reply FILE: the host time of the first reply in FILE, the
# output of ping -D
ping_first_reply()
{
	sed -n 's/^\[\([0-9.]*\)\] .* bytes from .*/\1/p' "$1" 2>/dev/null | head -n 1
}

# guest_link_reply_ms: ms from eth0's carrier to the first answered ping of
# the reach step, on the guest's clock (its pings time out after 1 s), or -
guest_link_reply_ms()
{
	ms_between "$(guest_lines | sed -n 's/^dev .* carrier=1 uptime=\([0-9.]*\)$/\1/p' | head -n 1)" \
		"$(guest_kv reach uptime)"
}

# guest_json TAG: the iperf3 client JSON of step TAG
guest_json()
{
	tr -d '\r' <"$VM_SERIAL" 2>/dev/null |
		sed -n "/^VNET-JSON-BEGIN $1\$/,/^VNET-JSON-END $1\$/p" | sed '1d;$d'
}

# guest_tail N: the last N console lines, on one line (for a failure)
guest_tail()
{
	tr -d '\r' <"$VM_SERIAL" 2>/dev/null | grep -v '^ *[{}"\[]' |
		tail -n "${1:-5}" | tr '\n' '|'
}

# vm_stats [FILE]: vnetctl -j stats into STATS (and FILE under VM_LOGS)
vm_stats()
{
	STATS=$(timeout 30 "$VNETCTL" -j stats "$VM_TAP" 2>"$VM_LOGS/vnetctl.err")
	[ -n "${1:-}" ] && printf '%s\n' "$STATS" >"$VM_LOGS/$1"
	[ -n "$STATS" ]
}

# dp Q DIR FIELD [STATS]: a datapath counter (drops: the sum of every reason)
dp()
{
	printf '%s' "${4:-$STATS}" | jq -r --argjson q "$1" --arg d "$2" --arg f "$3" \
		'[.queues[] | select(.queue == $q and .dir == $d) | .datapath[$f] |
		  if type == "object" or type == "array" then add else . end] | add // 0' 2>/dev/null
}

# cls Q DIR CLASS [FIELD [STATS]]: a classifier counter
cls()
{
	printf '%s' "${5:-$STATS}" | jq -r --argjson q "$1" --arg d "$2" --arg c "$3" --arg f "${4:-packets}" \
		'[.queues[] | select(.queue == $q and .dir == $d) | .[$c][$f]] | add // 0' 2>/dev/null
}

# vm_teardown: QEMU, iperf3 servers and vnetd stopped, pins and netns gone
vm_teardown()
{
	local p

	if [ -n "${QEMU_PID:-}" ]; then
		kill -TERM "$QEMU_PID" 2>/dev/null
		_vm_poll 5000 _vm_gone "$QEMU_PID" || kill -KILL "$QEMU_PID" 2>/dev/null
		wait "$QEMU_PID" 2>/dev/null
		QEMU_PID=""
	fi
	for p in ${VM_IPERF_PIDS[@]+"${VM_IPERF_PIDS[@]}"}; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	VM_IPERF_PIDS=()
	[ -n "${VNETD_PID:-}" ] && vnetd_stop TERM >/dev/null
	# a vnetd killed with SIGKILL, or one that found the pins, leaves them
	[ -n "${VM_TAP:-}" ] && [ -e "/sys/fs/bpf/vnet/$VM_TAP" ] &&
		"$VNETCTL" detach "$VM_TAP" >/dev/null 2>&1
	[ -n "${VM_TAP:-}" ] && [ -e "/sys/fs/bpf/vnet/$VM_TAP" ] &&
		rm -rf "/sys/fs/bpf/vnet/${VM_TAP:?}"
	[ -n "${VM_NS:-}" ] && ip netns del "$VM_NS" 2>/dev/null
	rm -f "${VM_SOCK:-}"
	VM_NS=""
}

# vm_cleanup_all: for an EXIT trap: whatever is still there
vm_cleanup_all()
{
	local p ns t

	# a background job killed between its fork and its exec runs the
	# EXIT trap too: only the shell that made all this undoes it
	[ "$BASHPID" = "$$" ] || return 0
	vm_teardown >/dev/null 2>&1
	for p in ${_vm_all_pids[@]+"${_vm_all_pids[@]}"}; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in ${_vm_all_pids[@]+"${_vm_all_pids[@]}"}; do
		_vm_poll 5000 _vm_gone "$p" || kill -KILL "$p" 2>/dev/null
	done
	for t in ${_vm_all_taps[@]+"${_vm_all_taps[@]}"}; do
		[ -e "/sys/fs/bpf/vnet/$t" ] && "$VNETCTL" detach "$t" >/dev/null 2>&1
	done
	for ns in ${_vm_all_ns[@]+"${_vm_all_ns[@]}"}; do
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}

# e2e_prelude DEFAULT VALID TOOLS [ARG...]: the scenarios to run into
# names[]: the NAMEs among ARGs, or else DEFAULT, narrowed by lib.sh's
# ksft_args options (-l lists PREFIX/NAME and exits; -t/-a/-d GLOB select,
# so selftests/run.sh -t e2e-faults/migrate-rounds runs that scenario
# alone); a NAME not in VALID: usage, exit 2.  Then what a run needs
# (root, vnetd and vnetctl built, TOOLS, a guest that can be built):
# without it every scenario is SKIPped with the reason and the script
# exits; with it the guest is built and $guest holds its files.
e2e_prelude()
{
	local all=$1 valid=$2 tools=$3 n b c reason a optarg=0

	shift 3
	for a in "$@"; do
		[ $optarg = 1 ] && { optarg=0; continue; }
		case $a in
		-[tad]) optarg=1; continue ;;
		-*) continue ;;
		esac
		case " $valid " in
		*" $a "*) ;;
		*) echo "usage: $0 [-l] [-t GLOB]... [-d GLOB]... [SCENARIO...]; scenarios: $valid" >&2; exit 2 ;;
		esac
	done
	ALL_CASES=$all
	KSFT_CASES=()
	ksft_args "$@"
	names=(${KSFT_CASES[@]+"${KSFT_CASES[@]}"})
	# a selection that matches none of this program's scenarios
	[ ${#names[@]} -gt 0 ] || exit 0
	[ "$(id -u)" -eq 0 ] || _e2e_skip_all "needs root (network namespaces, BPF, vnetd)"
	for b in "$VNETD" "$VNETCTL"; do
		[ -x "$b" ] || _e2e_skip_all "$b is not built (make)"
	done
	for c in $tools; do
		command -v "$c" >/dev/null 2>&1 || _e2e_skip_all "$c not found"
	done
	reason=$("$E2E_ROOT/selftests/e2e/build-guest.sh" --check) || _e2e_skip_all "$reason"
	if ! guest=$("$E2E_ROOT/selftests/e2e/build-guest.sh" 2>"$VNET_TMP/build-guest.err"); then
		_e2e_skip_all "cannot build the guest: $(tail -n 1 "$VNET_TMP/build-guest.err")"
	fi
}

_e2e_skip_all()
{
	local n

	for n in "${names[@]}"; do
		skip "$n" "$1"
	done
	exit 0
}
