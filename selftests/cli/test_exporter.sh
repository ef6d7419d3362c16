#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnetctl exporter (docs/metrics.md): a real Prometheus server (Debian's
# prometheus, its own configuration and storage under the test's
# directory, on loopback ports) scrapes the exporter every second while
# tapwrite pushes guest-TX frames of one class through an attached tap.
# Prometheus's HTTP API then answers rate(vnet_packets_total[...]) > 0 for
# that class and 0 for another, vnet_device_up{device,netns} 1 and
# vnet_build_info 1; a device that is gone (deleted with its pins left,
# before the exporter started or while Prometheus scrapes it) has no
# series.  The exposition passes `promtool check metrics`, /metrics has
# the 0.0.4 content type, / links to it.  For a fleet: a thousand idle
# connections from one address and trickling ones do not keep a scrape from
# another out and are closed; 50 scrapes at once all answer; gzip when
# asked; no bpffs fails the scrape naming the fix; :PORT is IPv6 and IPv4;
# an attach-mode tap has no datapath families.  Every process is killed
# by pid.
#
#   selftests/cli/test_exporter.sh

# jq filters are single-quoted on purpose
# shellcheck disable=SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=exporter

trap 'end_case; _cleanup_all' EXIT

yesno()
{
	"$@" && echo yes || echo no
}

# mntns_scrape LOG SH: one scrape of an exporter started in a mount
# namespace of its own after SH (its log LOG): the body and the HTTP code
mntns_scrape()
{
	local port pid

	port=$(rand_port)
	unshare -m sh -c "$2 && exec '$VNETCTL' exporter --listen 127.0.0.1:$port" >"$1" 2>&1 &
	pid=$!
	procs_add "$pid"
	busywait 5000 curl -s -o /dev/null "http://127.0.0.1:$port/"
	curl -s -w ' %{http_code}' "http://127.0.0.1:$port/metrics"
	kill "$pid"
	wait "$pid" 2>/dev/null
}

# prometheus_start: scraping the exporter every second ($PPORT, $PPID_)
prometheus_start()
{
	cat >"$VNET_TMP/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  evaluation_interval: 1s
	scrape_configs:
	  - job_name: vnet
	    static_configs:
	      - targets: ['127.0.0.1:$EPORT']
	EOF
	for _ in 1 2 3 4 5; do
		PPORT=$(rand_port)
		rm -rf "$VNET_TMP/tsdb"
		prometheus --config.file="$VNET_TMP/prometheus.yml" \
			--storage.tsdb.path="$VNET_TMP/tsdb" \
			--web.listen-address="127.0.0.1:$PPORT" \
			--log.level=warn >"$VNET_TMP/prometheus.log" 2>&1 &
		PPID_=$!
		procs_add "$PPID_"
		busywait 60000 sh -c "curl -sf -o /dev/null http://127.0.0.1:$PPORT/-/ready || ! kill -0 $PPID_" &&
			kill -0 "$PPID_" 2>/dev/null && return 0
		kill "$PPID_" 2>/dev/null
		wait "$PPID_" 2>/dev/null
	done
	return 1
}

# query PROMQL: Prometheus's instant query, the JSON answer
query()
{
	curl -s --max-time 10 "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1"
}

# value PROMQL: the value of the first series of the answer, or empty
value()
{
	json "$(query "$1")" '.data.result[0].value[1] // empty'
}

# nseries PROMQL: how many series the answer has
nseries()
{
	json "$(query "$1")" '.data.result | length'
}

gt0()
{
	awk -v v="${1:-0}" 'BEGIN { exit !(v + 0 > 0) }'
}

has_series()
{
	[ "$(nseries "$1")" -gt 0 ] 2>/dev/null
}

no_series()
{
	[ "$(nseries "$1")" = 0 ]
}

rate_positive()
{
	gt0 "$(value "$1")"
}

# push_count DEV: its guest-TX push frames on queue 0 in a scrape ("" none)
push_count()
{
	curl -s "http://127.0.0.1:$EPORT/metrics" |
		sed -n "s/^vnet_packets_total{device=\"$1\",queue=\"0\",direction=\"tx\",class=\"push\"} //p"
}

# conns PORT: the exporter's established TCP connections on PORT
conns()
{
	ss -Htn state established "( sport = :$1 )" | wc -l
}

# the exporter's robustness for a fleet: idle and trickling clients, many
# scrapes at once, gzip, no bpffs, every address (IPv6 and IPv4)
fleet_checks()
{
	local dev=$1 fds=() fd i codes port epid2 body r0 r1 f

	# the exporter keeps a tap's maps open between scrapes: a tap attached
	# again (new maps) is read from its new maps, not the old ones
	expect "kept open: no push yet" "" "$(push_count "$dev")"
	"$TAPWRITE" -n "$NS" -d "$dev" -q 1 send 0 push 3 >/dev/null 2>&1
	expect "kept open: push counted" 3 "$(push_count "$dev")"
	"$VNETCTL" -n "$NS" detach "$dev" >/dev/null && "$VNETCTL" -n "$NS" attach "$dev" >/dev/null
	expect "attached again: counted anew" "" "$(push_count "$dev")"
	"$TAPWRITE" -n "$NS" -d "$dev" -q 1 send 0 push 2 >/dev/null 2>&1
	expect "attached again: the new maps" 2 "$(push_count "$dev")"
	expect "attach-mode tap: no datapath families" 0 \
		"$("$VNETCTL" -n "$NS" stats --prometheus "$dev" | grep -c '^# TYPE vnet_datapath_')"
	# 1000 connections from 127.0.0.1 that send nothing: one address holds
	# at most 128, and a scrape from another address answers at once
	for i in $(seq 1000); do
		exec {fd}<>"/dev/tcp/127.0.0.1/$EPORT" 2>/dev/null && fds+=("$fd")
	done
	busywait 5000 sh -c "[ \$(ss -Htn state established '( sport = :$EPORT )' | wc -l) -ge 100 ]"
	expect "1000 idle: a scrape from 127.0.0.2" 200 \
		"$(curl -s --interface 127.0.0.2 --max-time 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EPORT/metrics")"
	# (and the listen backlog up to 65 the exporter has not accepted yet)
	expect "1000 idle: one address holds at most 128" yes "$(yesno [ "$(conns "$EPORT")" -le 193 ])"
	# their time without a request is up: the exporter closes them
	busywait 15000 sh -c "[ \$(ss -Htn state established '( sport = :$EPORT )' | wc -l) = 0 ]"
	expect "idle connections closed" 0 "$(conns "$EPORT")"
	for fd in "${fds[@]}"; do exec {fd}>&-; done
	fds=()
	# 64 connections that send a byte each 2 s: closed all the same
	for i in $(seq 64); do
		exec {fd}<>"/dev/tcp/127.0.0.1/$EPORT" && fds+=("$fd")
	done
	for i in 1 2 3 4 5 6; do
		# a subshell: a write to a connection the exporter closed is its SIGPIPE
		for fd in "${fds[@]}"; do (printf G >&"$fd") 2>/dev/null; done
		expect "trickling: a scrape answers ($i)" 200 \
			"$(curl -s --interface 127.0.0.2 --max-time 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EPORT/metrics")"
		sleep 2
	done
	busywait 15000 sh -c "[ \$(ss -Htn state established '( sport = :$EPORT )' | wc -l) = 0 ]"
	expect "trickling connections closed" 0 "$(conns "$EPORT")"
	for fd in "${fds[@]}"; do exec {fd}>&-; done
	report exporter_idle_clients "$(tail -c 300 "$VNET_TMP/exporter.log")"

	# 50 scrapes at once: all answered, by a few reads of the pins
	body=$(curl -s "http://127.0.0.1:$EPORT/metrics")
	r0=$(sed -n 's/^vnet_exporter_reads_total //p' <<<"$body")
	codes=$(for i in $(seq 50); do echo "-o /dev/null http://127.0.0.1:$EPORT/metrics"; done |
		xargs curl -s --max-time 10 --parallel --parallel-immediate --parallel-max 50 -w '%{http_code}\n')
	expect "50 at once: all 200" 50 "$(grep -c '^200$' <<<"$codes")"
	body=$(curl -s "http://127.0.0.1:$EPORT/metrics")
	r1=$(sed -n 's/^vnet_exporter_reads_total //p' <<<"$body")
	expect "50 at once: at most 25 reads" yes "$(yesno [ $((r1 - r0)) -le 26 ])"
	for f in process_cpu_seconds_total process_resident_memory_bytes process_open_fds \
		vnet_exporter_read_seconds vnet_exporter_scrapes_total; do
		expect "own family $f" 1 "$(grep -c "^$f " <<<"$body")"
	done
	# gzip when asked, the same exposition
	body=$(curl -s -D "$VNET_TMP/gz.hdr" -H 'Accept-Encoding: gzip' "http://127.0.0.1:$EPORT/metrics" |
		gunzip -c | grep -c "^vnet_device_up{device=\"$dev\",")
	expect "gzip: Content-Encoding" yes "$(yesno grep -qi '^Content-Encoding: gzip' "$VNET_TMP/gz.hdr")"
	expect "gzip: the exposition" 1 "$body"
	report exporter_concurrent_gzip "$codes"

	# no bpffs (a mount namespace without it): the scrape fails, saying why
	body=$(mntns_scrape "$VNET_TMP/exporter2.log" "umount -l /sys/fs/bpf")
	expect "no bpffs: 500" 500 "${body##* }"
	expect "no bpffs: names the fix" yes "$(yesno grep -q 'mount -t bpf bpf /sys/fs/bpf' <<<"$body")"
	# a bpffs with nothing attached (a host before its first VM): a
	# healthy target with the exporter's own families, no device
	body=$(mntns_scrape "$VNET_TMP/exporter4.log" "umount -l /sys/fs/bpf && mount -t bpf bpf /sys/fs/bpf")
	expect "nothing attached: 200" 200 "${body##* }"
	expect "nothing attached: vnet_build_info" 1 "$(grep -c '^vnet_build_info{' <<<"$body")"
	expect "nothing attached: no device" 0 "$(grep -c '^vnet_device_up{' <<<"$body")"
	# :PORT listens on IPv6 and IPv4 (in the test's netns, so that every
	# address is its loopback; nsenter keeps the host's /sys/fs/bpf)
	port=$(rand_port)
	nsenter --net="/var/run/netns/$NS" "$VNETCTL" exporter --listen ":$port" >"$VNET_TMP/exporter3.log" 2>&1 &
	epid2=$!
	procs_add "$epid2"
	busywait 5000 nsenter --net="/var/run/netns/$NS" curl -s -o /dev/null "http://127.0.0.1:$port/"
	expect ":PORT: IPv4" 200 "$(nsenter --net="/var/run/netns/$NS" curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")"
	expect ":PORT: IPv6" 200 "$(nsenter --net="/var/run/netns/$NS" curl -s -o /dev/null -w '%{http_code}' "http://[::1]:$port/metrics")"
	kill "$epid2"
	wait "$epid2" 2>/dev/null
	report exporter_bpffs_ipv6 "$(cat "$VNET_TMP/exporter2.log" "$VNET_TMP/exporter4.log" "$VNET_TMP/exporter3.log" | tail -c 400)"
}

# the shipped alerts and dashboard: promtool checks and tests the rules,
# the dashboard is JSON, and every vnet family either names is documented
rules_and_dashboard()
{
	local top=$VNET_SELFTESTS/.. f bad=""

	run promtool check rules "$top/prometheus/vnet.rules.yml"
	expect "promtool check rules" 0 "$RUN_RC"
	run sh -c "cd '$top/prometheus' && promtool test rules vnet.rules.test.yml"
	expect "promtool test rules" 0 "$RUN_RC"
	expect "dashboard is JSON with panels" true \
		"$(jq '.panels | length > 0' "$top/grafana/vnet.json" 2>&1)"
	for f in $( (jq -r '.panels[].targets[].expr' "$top/grafana/vnet.json"
		grep 'expr:' -A3 "$top/prometheus/vnet.rules.yml") | grep -o 'vnet_[a-z_]*' | sort -u); do
		grep -q "\`$f\`" "$top/docs/metrics.md" || bad+="$f "
	done
	expect "names not in docs/metrics.md" "" "$bad"
	report rules_and_dashboard "$(run_said)"
}

main()
{
	local dev gone later ver tpid hdr q t

	ksft_args "$@"
	require_root exporter || { ksft_exit; return; }
	require_cmd exporter prometheus promtool curl jq ss unshare nsenter gunzip "$TAPWRITE" || { ksft_exit; return; }

	rules_and_dashboard
	ns_create exporter || { fail setup "cannot create netns"; ksft_exit; return; }
	dev=$(rand_tap)
	gone=$(rand_tap)
	later=$(rand_tap)
	tap_create "$NS" "$dev" && tap_create "$NS" "$gone" && tap_create "$NS" "$later" ||
		{ fail setup "cannot create taps"; ksft_exit; return; }
	for t in "$dev" "$gone" "$later"; do
		run vnetctl -n "$NS" attach "$t"
		[ "$RUN_RC" = 0 ] || { fail setup "attach $t: $(run_said)"; ksft_exit; return; }
	done
	# gone before the exporter starts: its pins are left (status GONE)
	ip -n "$NS" link del "$gone"
	expect "gone tap's pins are left" yes "$(yesno pins_exist "$gone")"

	# the exporter itself: usage, the landing page, the exposition
	run vnetctl exporter
	expect "no --listen: usage error" 2 "$RUN_RC"
	run vnetctl exporter --listen 127.0.0.1
	expect "no port: usage error" 2 "$RUN_RC"
	expect "says the form" yes "$(yesno grep -q "expected ADDR:PORT" <<<"$RUN_ERR")"
	exporter_start || { fail exporter_start "$(cat "$VNET_TMP/exporter.log")"; ksft_exit; return; }
	run vnetctl exporter --listen "127.0.0.1:$EPORT"
	expect "busy port: error" 1 "$RUN_RC"
	expect "busy port: says so" yes "$(yesno grep -q "another process has that port" <<<"$RUN_ERR")"
	hdr=$(curl -s -D - -o "$VNET_TMP/metrics" "http://127.0.0.1:$EPORT/metrics")
	expect "content type" "text/plain; version=0.0.4; charset=utf-8" \
		"$(sed -n 's/^Content-Type: *//Ip' <<<"$hdr" | tr -d '\r')"
	run promtool check metrics <"$VNET_TMP/metrics"
	expect "promtool exit" 0 "$RUN_RC"
	expect "promtool says nothing" "" "$RUN_OUT$RUN_ERR"
	expect "landing page links /metrics" yes \
		"$(yesno grep -q 'href="/metrics"' <<<"$(curl -s "http://127.0.0.1:$EPORT/")")"
	expect "other paths: 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EPORT/nothing")"
	expect "POST: 405" 405 "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$EPORT/metrics")"
	expect "the gone tap: no series" 0 "$(grep -c "device=\"$gone\"" "$VNET_TMP/metrics")"
	expect "the present tap: up" 1 "$(grep -c "^vnet_device_up{device=\"$dev\",netns=\"$NS\"} 1$" "$VNET_TMP/metrics")"
	report exposition "$(head -c 300 "$VNET_TMP/metrics") $(head -c 300 "$VNET_TMP/exporter.log")"
	fleet_checks "$dev"

	prometheus_start || { fail prometheus_start "$(tail -c 500 "$VNET_TMP/prometheus.log")"; ksft_exit; return; }
	# guest-TX push frames on queue 0, paced, for at most two minutes
	(for _ in $(seq 600); do
		"$TAPWRITE" -n "$NS" -d "$dev" -q 1 send 0 push 4 >/dev/null 2>&1
		sleep 0.2
	done) &
	tpid=$!
	procs_add "$tpid"
	q="rate(vnet_packets_total{device=\"$dev\",queue=\"0\",direction=\"tx\",class=\"push\"}[5s])"
	busywait 90000 rate_positive "$q"
	expect "Prometheus: push rate > 0" yes "$(yesno gt0 "$(value "$q")")"
	expect "Prometheus: urgent rate is 0" 0 \
		"$(value "rate(vnet_packets_total{device=\"$dev\",queue=\"0\",direction=\"tx\",class=\"urgent\"}[5s])")"
	expect "Prometheus: the scrape is up" 1 "$(value 'up{job="vnet"}')"
	report prometheus_rate "$(query "$q" | head -c 400) $(tail -c 300 "$VNET_TMP/prometheus.log")"

	expect "device up with its netns" 1 "$(value "vnet_device_up{device=\"$dev\",netns=\"$NS\"}")"
	ver=$("$VNETCTL" --version | awk '{ print $2 }')
	expect "build info" 1 "$(value "vnet_build_info{version=\"$ver\"}")"
	expect "gone tap: no series" 0 "$(nseries "{device=\"$gone\"}")"
	report prometheus_device_series "$(query "vnet_device_up" | head -c 400)"

	# a tap that goes while Prometheus scrapes it: its series go stale
	busywait 30000 has_series "vnet_device_up{device=\"$later\"}"
	expect "later tap: scraped while there" 1 "$(value "vnet_device_up{device=\"$later\"}")"
	ip -n "$NS" link del "$later"
	busywait 30000 no_series "{device=\"$later\"}"
	expect "later tap gone: no series" 0 "$(nseries "{device=\"$later\"}")"
	expect "the other tap still there" 1 "$(value "vnet_device_up{device=\"$dev\"}")"
	report prometheus_gone_device "$(query "{device=\"$later\"}" | head -c 400)"

	# SIGHUP is not a stop; SIGTERM is, with exit 0
	kill -HUP "$EPID"
	busywait 5000 grep -q "SIGHUP: nothing to reload" "$VNET_TMP/exporter.log"
	expect "still serving after SIGHUP" yes "$(yesno curl -sf -o /dev/null "http://127.0.0.1:$EPORT/metrics")"
	kill -TERM "$EPID"
	wait "$EPID"
	expect "exit after SIGTERM" 0 "$?"
	report exporter_signals "$(tail -c 300 "$VNET_TMP/exporter.log")"
	end_case
	ksft_exit
}

main "$@"
