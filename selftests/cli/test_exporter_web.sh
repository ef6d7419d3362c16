#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnetctl exporter --web-config (docs/metrics.md, "TLS and basic auth"):
# a real exporter, a certificate made here with openssl, curl and openssl
# s_client as the clients, bcrypt hashes from htpasswd ($2y$) and mkpasswd
# ($2b$).
#   tls         https with --cacert answers the metrics of a tap attached
#               here, with the configured certificate; plain HTTP to the
#               port gets no answer; 50 https scrapes at once all answer;
#               a handshake that stalls does not hold a scrape up and is
#               closed
#   idle_tls    1000 idle connections to the TLS port do not keep an https
#               scrape from another address out, and are closed
#   auth        no or wrong credentials (an unknown user too) 401 with
#               WWW-Authenticate: Basic realm=...; the right ones 200; a
#               pair that passed is not checked again (a cost-12 hash: the
#               second request costs the exporter a fifth of the first's
#               CPU at most); 32 wrong passwords at once get 401 or 503
#               (16 wait at most) and do not hold up a pair that passed
#               before; basic auth without TLS works and is warned about
#   mtls        client_auth_type RequireAndVerifyClientCert: a client
#               certificate the client_ca_file signed 200; none, or one
#               another CA signed, 403; VerifyClientCertIfGiven: none 200,
#               another CA's 403
#   bad_config  each bad file (unknown key, unsupported key, indentation,
#               tab, no such cert, not a certificate, not the cert's key,
#               an encrypted key, not a bcrypt hash, ...) is refused: exit
#               1, naming FILE:LINE and the fix
#   example     systemd/exporter-web.yml.example as shipped (comments only)
#               serves plain HTTP; uncommented and filled in, HTTPS with
#               basic auth
#   unit_caps   with vnet-exporter.service's capability bounding set, a
#               root-owned key serves https; a key another user owns is
#               refused, naming it
#
#   selftests/cli/test_exporter_web.sh [CASE...]

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=exporter-web
# started from / below (run.sh's OUT is relative)
case $VNETCTL in /*) ;; *) VNETCTL=$PWD/$VNETCTL ;; esac
ALL_CASES="tls idle_tls auth mtls bad_config example unit_caps"
# a command web_start runs the exporter under (unit_caps)
WRAP=()

trap 'end_case; _cleanup_all' EXIT

yesno()
{
	"$@" && echo yes || echo no
}

# keypair NAME: $VNET_TMP/NAME.crt and NAME.key, self-signed for 127.0.0.1
keypair()
{
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$VNET_TMP/$1.key" -out "$VNET_TMP/$1.crt" -days 2 \
		-subj "/CN=vnet test $1" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
}

# answers PORT: / answers ours (a page, or 401/403) to curl with
# $CURL_ARGS, in $SCHEME
answers()
{
	curl -s "${CURL_ARGS[@]}" "$SCHEME://127.0.0.1:$1/" | grep -q "vnet exporter\|401\|403"
}

# web_start CONFIG [CURL_ARGS...]: the exporter on a free loopback port
# with --web-config CONFIG, answering / to curl with CURL_ARGS and the
# scheme the config sets ($EPORT, $EPID, $URL)
web_start()
{
	local cfg=$1

	shift
	CURL_ARGS=("$@")
	SCHEME=http
	grep -q '^tls_server_config:' "$cfg" && SCHEME=https
	# from / : the config's relative paths are from its directory
	serve_on_port "$VNET_TMP/exporter.log" answers env -C / ${WRAP[@]+"${WRAP[@]}"} \
		"$VNETCTL" exporter --listen "127.0.0.1:@PORT@" --web-config "$cfg" || return 1
	EPORT=$PORT
	EPID=$PID
	URL=$SCHEME://127.0.0.1:$EPORT
}

conns()
{
	ss -Htn state established "( sport = :$1 )" | wc -l
}

# code CURL_ARGS... URL: the HTTP status curl got (000: none); the body
# into $CODE_OUT if set.  30 s at most: a first read of /metrics opens
# the maps of every tap attached on the host
code()
{
	curl -s --max-time 30 -o "${CODE_OUT:-/dev/null}" -w '%{http_code}' "$@"
}

tls_config()
{
	# comments, quotes and paths relative to the file: all read
	cat >"$VNET_TMP/web.yml" <<-'EOF'
	# the exporter's web config
	tls_server_config:
	  cert_file: "server.crt"   # relative: from this file's directory
	  key_file: 'server.key'
	EOF
}

case_tls()
{
	local dev a b codes i fd fds=()

	keypair server || { fail tls "openssl cannot make a certificate"; return; }
	tls_config
	ns_create webtls || { fail tls "cannot create netns"; return; }
	dev=$(rand_tap)
	tap_create "$NS" "$dev" || { fail tls "cannot create a tap"; return; }
	run vnetctl -n "$NS" attach "$dev"
	[ "$RUN_RC" = 0 ] || { fail tls "attach: $(run_said)"; return; }
	web_start "$VNET_TMP/web.yml" --cacert "$VNET_TMP/server.crt" ||
		{ fail tls "no start: $(cat "$VNET_TMP/exporter.log")"; return; }
	expect "says https" yes "$(yesno grep -q "serving https://127.0.0.1:$EPORT/metrics" "$VNET_TMP/exporter.log")"
	expect "https scrape" 200 "$(CODE_OUT=$VNET_TMP/m code --cacert "$VNET_TMP/server.crt" "$URL/metrics")"
	expect "the tap's series" 1 "$(grep -c "^vnet_device_up{device=\"$dev\",netns=\"$NS\"} 1$" "$VNET_TMP/m")"
	a=$(openssl s_client -connect "127.0.0.1:$EPORT" </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256)
	b=$(openssl x509 -noout -fingerprint -sha256 -in "$VNET_TMP/server.crt")
	expect "the configured certificate" "$b" "$a"
	expect "without --cacert: refused by curl" 000 "$(code "$URL/metrics")"
	expect "plain HTTP to the TLS port: no answer" 000 "$(code "http://127.0.0.1:$EPORT/metrics")"
	codes=$(for i in $(seq 50); do echo "-o /dev/null $URL/metrics"; done |
		xargs curl -s --no-progress-meter --max-time 20 --cacert "$VNET_TMP/server.crt" --parallel \
			--parallel-immediate --parallel-max 50 -w '%{http_code}\n')
	expect "50 https scrapes at once: all 200" 50 "$(grep -c '^200$' <<<"$codes")"
	report tls_scrape "$(tail -c 400 "$VNET_TMP/exporter.log")"

	# a ClientHello's record header, then nothing: a scrape answers, and
	# the stalled handshakes are closed
	for i in $(seq 8); do
		exec {fd}<>"/dev/tcp/127.0.0.1/$EPORT" && fds+=("$fd")
		printf '\x16\x03\x01\x02\x00\x01' >&"$fd"
	done
	# (before the 5 s after which they are closed; / does not read the pins)
	expect "stalled handshakes: another client answered" 200 \
		"$(code --interface 127.0.0.2 --max-time 4 --cacert "$VNET_TMP/server.crt" "$URL/")"
	busywait 15000 sh -c "[ \$(ss -Htn state established '( sport = :$EPORT )' | wc -l) = 0 ]"
	expect "stalled handshakes closed" 0 "$(conns "$EPORT")"
	for fd in "${fds[@]}"; do exec {fd}>&-; done
	report tls_stalled_handshake "$(tail -c 400 "$VNET_TMP/exporter.log")"
}

case_idle_tls()
{
	local fds=() fd i

	keypair server && tls_config || { fail idle_tls "openssl cannot make a certificate"; return; }
	web_start "$VNET_TMP/web.yml" --cacert "$VNET_TMP/server.crt" ||
		{ fail idle_tls "no start: $(cat "$VNET_TMP/exporter.log")"; return; }
	# the first read opens every attached tap's maps: not what is timed
	code --cacert "$VNET_TMP/server.crt" "$URL/metrics" >/dev/null
	for i in $(seq 1000); do
		exec {fd}<>"/dev/tcp/127.0.0.1/$EPORT" 2>/dev/null && fds+=("$fd")
	done
	busywait 5000 sh -c "[ \$(ss -Htn state established '( sport = :$EPORT )' | wc -l) -ge 100 ]"
	expect "1000 idle: an https scrape from 127.0.0.2" 200 \
		"$(code --interface 127.0.0.2 --max-time 5 --cacert "$VNET_TMP/server.crt" "$URL/metrics")"
	expect "1000 idle: one address holds at most 128" yes "$(yesno [ "$(conns "$EPORT")" -le 193 ])"
	busywait 15000 sh -c "[ \$(ss -Htn state established '( sport = :$EPORT )' | wc -l) = 0 ]"
	expect "idle connections closed" 0 "$(conns "$EPORT")"
	for fd in "${fds[@]}"; do exec {fd}>&-; done
	report idle_tls "$(tail -c 400 "$VNET_TMP/exporter.log")"
}

# ms CURL_ARGS...: the request's total time in milliseconds
ms()
{
	curl -s --max-time 20 -o /dev/null -w '%{time_total}\n' "$@" | awk '{ printf "%d", $1 * 1000 }'
}

HZ=$(getconf CLK_TCK)

# the exporter's CPU time, user and system, in milliseconds
cpu_ms()
{
	awk -v hz="$HZ" '{ print ($14 + $15) * 1000 / hz }' "/proc/$EPID/stat"
}

case_auth()
{
	local y b slow hdr t1 t2 ca i pids=() cached c0 c1 c2

	keypair server || { fail auth "openssl cannot make a certificate"; return; }
	y=$(htpasswd -nbBC 5 prometheus secret | cut -d: -f2-)
	b=$(mkpasswd -m bcrypt -R 5 'other pass')
	slow=$(htpasswd -nbBC 12 slow slowpass | cut -d: -f2-)
	tls_config
	cat >>"$VNET_TMP/web.yml" <<-EOF
	basic_auth_users:
	    prometheus: $y
	    "other": '$b'
	    slow: $slow
	EOF
	ca=(--cacert "$VNET_TMP/server.crt")
	web_start "$VNET_TMP/web.yml" "${ca[@]}" ||
		{ fail auth "no start: $(cat "$VNET_TMP/exporter.log")"; return; }
	expect "says basic auth" yes "$(yesno grep -q "serving https://.*(basic auth)" "$VNET_TMP/exporter.log")"
	hdr=$(curl -s "${ca[@]}" -D - -o /dev/null "$URL/metrics" | tr -d '\r')
	expect "no credentials: 401" 401 "$(awk 'NR == 1 { print $2 }' <<<"$hdr")"
	expect "WWW-Authenticate" 'WWW-Authenticate: Basic realm="vnet exporter"' "$(grep -i '^WWW-Authenticate:' <<<"$hdr")"
	expect "no credentials, the landing page: 401" 401 "$(code "${ca[@]}" "$URL/")"
	expect "wrong password: 401" 401 "$(code "${ca[@]}" -u prometheus:wrong "$URL/metrics")"
	expect "unknown user: 401" 401 "$(code "${ca[@]}" -u nobody:secret "$URL/metrics")"
	expect "another's password: 401" 401 "$(code "${ca[@]}" -u prometheus:'other pass' "$URL/metrics")"
	expect "right (\$2y\$): 200" 200 "$(CODE_OUT=$VNET_TMP/m code "${ca[@]}" -u prometheus:secret "$URL/metrics")"
	expect "the metrics" 1 "$(grep -c '^vnet_build_info{' "$VNET_TMP/m")"
	expect "right (\$2b\$, quoted): 200" 200 "$(code "${ca[@]}" -u 'other:other pass' "$URL/metrics")"
	expect "wrong password after a right one: 401" 401 "$(code "${ca[@]}" -u prometheus:secreT "$URL/metrics")"
	report auth_codes "$(tail -c 400 "$VNET_TMP/exporter.log")"

	# a cost-12 hash: the first check costs the exporter bcrypt's CPU time,
	# the next does not (/, no read of the host's pins: the path does not
	# matter to auth)
	c0=$(cpu_ms)
	t1=$(ms "${ca[@]}" -u slow:slowpass "$URL/")
	c1=$(cpu_ms)
	t2=$(ms "${ca[@]}" -u slow:slowpass "$URL/")
	c2=$(cpu_ms)
	expect "the first check costs bcrypt (>= 50 ms of CPU: $((c1 - c0)))" yes "$(yesno [ $((c1 - c0)) -ge 50 ])"
	expect "remembered: the second costs a fifth of it at most ($((c2 - c1)) ms)" yes \
		"$(yesno [ $(((c2 - c1) * 5)) -le $((c1 - c0)) ])"
	# 32 wrong passwords at once: the checker takes them one after another
	# (16 wait at most, the others get 503), and meanwhile a pair that
	# passed before answers
	for i in $(seq 32); do
		curl -s "${ca[@]}" --max-time 120 -o /dev/null -w '%{http_code}\n' \
			-u "slow:wrong$i" "$URL/" >"$VNET_TMP/wrong.$i" &
		pids+=($!)
	done
	# bcrypt is running (the exporter's CPU time grew 0.1 s)
	busywait 10000 sh -c "[ \$(awk '{ print (\$14 + \$15) * 1000 / $HZ }' /proc/$EPID/stat) -ge $((c2 + 100)) ]"
	cached=$(ms "${ca[@]}" -u prometheus:secret "$URL/")
	expect "during the checks, a pair that passed is not held up ($cached ms; one check $t1 ms)" yes \
		"$(yesno [ "$cached" -lt $((2 * t1)) ])"
	wait "${pids[@]}"
	expect "32 wrong at once: each 401 or 503" 32 "$(cat "$VNET_TMP"/wrong.* | grep -c '^401$\|^503$')"
	expect "32 wrong at once: some 503" yes "$(yesno grep -q '^503$' "$VNET_TMP"/wrong.*)"
	expect "32 wrong at once: some 401" yes "$(yesno grep -q '^401$' "$VNET_TMP"/wrong.*)"
	report auth_cache "t1=$t1 t2=$t2 cached=$cached cpu=$c0,$c1,$c2 $(cat "$VNET_TMP"/wrong.* | sort | uniq -c | tr '\n' ' ')"

	# basic auth over plain HTTP: works, and the log warns
	kill "$EPID"
	wait "$EPID" 2>/dev/null
	printf 'basic_auth_users:\n  prometheus: %s\n' "$y" >"$VNET_TMP/plain.yml"
	web_start "$VNET_TMP/plain.yml" || { fail auth_plain "no start: $(cat "$VNET_TMP/exporter.log")"; return; }
	expect "plain: no credentials 401" 401 "$(code "$URL/metrics")"
	expect "plain: right ones 200" 200 "$(code -u prometheus:secret "$URL/metrics")"
	expect "plain: warned" yes "$(yesno grep -q "basic auth without TLS" "$VNET_TMP/exporter.log")"
	report auth_plain_http "$(tail -c 400 "$VNET_TMP/exporter.log")"
}

# client NAME CA: $VNET_TMP/NAME.crt and NAME.key, signed by CA's key
client()
{
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$VNET_TMP/$1.key" -out "$VNET_TMP/$1.csr" -subj "/CN=$1" 2>/dev/null &&
		openssl x509 -req -in "$VNET_TMP/$1.csr" -CA "$VNET_TMP/$2.crt" -CAkey "$VNET_TMP/$2.key" \
			-CAcreateserial -out "$VNET_TMP/$1.crt" -days 2 2>/dev/null
}

case_mtls()
{
	local ca mine theirs

	keypair server && keypair ca && keypair otherca && client prom ca && client intruder otherca ||
		{ fail mtls "openssl cannot make the certificates"; return; }
	ca=(--cacert "$VNET_TMP/server.crt")
	mine=(--cert "$VNET_TMP/prom.crt" --key "$VNET_TMP/prom.key")
	theirs=(--cert "$VNET_TMP/intruder.crt" --key "$VNET_TMP/intruder.key")
	tls_config
	printf '  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n' >>"$VNET_TMP/web.yml"
	web_start "$VNET_TMP/web.yml" "${ca[@]}" ||
		{ fail mtls "no start: $(cat "$VNET_TMP/exporter.log")"; return; }
	expect "required: the CA's client 200" 200 "$(CODE_OUT=$VNET_TMP/m code "${ca[@]}" "${mine[@]}" "$URL/metrics")"
	expect "required: the metrics" 1 "$(grep -c '^vnet_build_info{' "$VNET_TMP/m")"
	expect "required: no certificate 403" 403 "$(code "${ca[@]}" "$URL/metrics")"
	expect "required: another CA's 403" 403 "$(code "${ca[@]}" "${theirs[@]}" "$URL/metrics")"
	report mtls_required "$(tail -c 400 "$VNET_TMP/exporter.log")"
	kill "$EPID"
	wait "$EPID" 2>/dev/null
	sed -i 's/RequireAndVerifyClientCert/VerifyClientCertIfGiven/' "$VNET_TMP/web.yml"
	web_start "$VNET_TMP/web.yml" "${ca[@]}" ||
		{ fail mtls "no start: $(cat "$VNET_TMP/exporter.log")"; return; }
	expect "if given: none 200" 200 "$(code "${ca[@]}" "$URL/metrics")"
	expect "if given: the CA's client 200" 200 "$(code "${ca[@]}" "${mine[@]}" "$URL/metrics")"
	expect "if given: another CA's 403" 403 "$(code "${ca[@]}" "${theirs[@]}" "$URL/metrics")"
	report mtls_if_given "$(tail -c 400 "$VNET_TMP/exporter.log")"
}

# refused NAME LINE WORDS CONTENT: a config of CONTENT is refused with exit
# 1, naming web.yml:LINE and WORDS
refused()
{
	local f=$VNET_TMP/bad-$1.yml

	printf '%b' "$4" >"$f"
	run vnetctl exporter --listen "127.0.0.1:$(rand_port)" --web-config "$f"
	expect "$1: exit" 1 "$RUN_RC"
	expect "$1: says" yes "$(yesno grep -qF -- "$f:$2: " <<<"$RUN_ERR")"
	expect "$1: the fix" yes "$(yesno grep -qF -- "$3" <<<"$RUN_ERR")"
	_said+="$RUN_ERR
"
}

case_bad_config()
{
	local d=$VNET_TMP h tls _said=""

	keypair server && keypair other || { fail bad_config "openssl cannot make a certificate"; return; }
	openssl pkey -in "$d/server.key" -aes128 -passout pass:x -out "$d/enc.key" 2>/dev/null
	echo "not a certificate" >"$d/junk.crt"
	h=$(htpasswd -nbBC 4 u p | cut -d: -f2-)
	tls="tls_server_config:\n  cert_file: $d/server.crt\n"
	refused unknown_top 2 "sections are tls_server_config and basic_auth_users" "# c\nweb_config:\n"
	refused unknown_tls 3 "the keys are cert_file, key_file" "${tls}  certfile: x\n"
	refused unsupported 3 "min_version is not supported" "${tls}  min_version: TLS13\n"
	refused any_client 3 "use RequireAndVerifyClientCert" "${tls}  client_auth_type: RequireAnyClientCert\n"
	refused client_type 3 "expected RequireAndVerifyClientCert" "${tls}  client_auth_type: yes\n"
	refused no_ca 4 "needs client_ca_file" "${tls}  key_file: $d/server.key\n  client_auth_type: RequireAndVerifyClientCert\n"
	refused ca_alone 4 "add client_auth_type" "${tls}  key_file: $d/server.key\n  client_ca_file: $d/other.crt\n"
	refused junk_ca 5 "client_ca_file $d/junk.crt is not a PEM certificate" "${tls}  key_file: $d/server.key\n  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: $d/junk.crt\n"
	refused http_server 1 "http_server_config is not supported" "http_server_config:\n  http2: false\n"
	refused indent 3 "indented by 4 spaces where this section's first key has 2" "${tls}    key_file: $d/server.key\n"
	refused tab 2 "YAML indents with spaces" "tls_server_config:\n\tcert_file: x\n"
	refused outside 1 "outside a section" "  cert_file: x\n"
	refused no_key 1 "needs both cert_file and key_file" "${tls}"
	refused no_cert_file 2 "No such file" "tls_server_config:\n  cert_file: $d/nothing.crt\n  key_file: $d/server.key\n"
	refused junk_cert 2 "is not a PEM certificate" "tls_server_config:\n  cert_file: $d/junk.crt\n  key_file: $d/server.key\n"
	refused not_a_pair 3 "are not a pair" "${tls}  key_file: $d/other.key\n"
	refused encrypted 3 "decrypt it" "${tls}  key_file: $d/enc.key\n"
	refused plaintext 2 "mkpasswd -m bcrypt" "basic_auth_users:\n  prometheus: secret\n"
	refused md5 2 "not a bcrypt hash" "basic_auth_users:\n  prometheus: \$1\$abc\$def\n"
	refused short_hash 3 "60 characters" "basic_auth_users:\n  u: $h\n  v: ${h%?}\n"
	refused twice 3 "a second 'u'" "basic_auth_users:\n  u: $h\n  u: $h\n"
	refused no_user 1 "has no user" "basic_auth_users:\n# none\n"
	refused section_value 1 "takes its keys on the lines below" "basic_auth_users: x\n"
	refused flow 2 "only plain or quoted values" "basic_auth_users:\n  u: [a]\n"
	run vnetctl exporter --listen "127.0.0.1:$(rand_port)" --web-config "$d/nothing.yml"
	expect "no file: exit" 1 "$RUN_RC"
	expect "no file: names it" yes "$(yesno grep -qF "$d/nothing.yml: No such file" <<<"$RUN_ERR")"
	report bad_config "$_said"
}

case_example()
{
	local ex=$VNET_ROOT/systemd/exporter-web.yml.example h

	web_start "$ex" || { fail example "no start: $(cat "$VNET_TMP/exporter.log")"; return; }
	expect "as shipped: plain HTTP" 200 "$(code "$URL/metrics")"
	kill "$EPID"
	wait "$EPID" 2>/dev/null
	keypair server || { fail example "openssl cannot make a certificate"; return; }
	h=$(htpasswd -nbBC 4 prometheus secret | cut -d: -f2-)
	# (its client certificates left commented)
	sed -n 's/^#\(tls_server_config:\|basic_auth_users:\|  [a-z_]*: \)/\1/p' "$ex" | grep -v client_ |
		sed "s|/etc/vnet/exporter|$VNET_TMP/server|; s|: [\$]2y.*|: $h|" >"$VNET_TMP/example.yml"
	web_start "$VNET_TMP/example.yml" --cacert "$VNET_TMP/server.crt" ||
		{ fail example "filled in: no start: $(cat "$VNET_TMP/exporter.log") $(cat "$VNET_TMP/example.yml")"; return; }
	expect "filled in: https, no credentials" 401 "$(code --cacert "$VNET_TMP/server.crt" "$URL/metrics")"
	expect "filled in: https, the user" 200 "$(code --cacert "$VNET_TMP/server.crt" -u prometheus:secret "$URL/metrics")"
	report example "$(cat "$VNET_TMP/example.yml")"
}

# unit_caps: the exporter with the unit's capability bounding set (as
# systemd sets it) serves https with a root-owned key; a key another user
# owns is refused, naming it (root reads it as an owner only)
case_unit_caps()
{
	local unit=$VNET_ROOT/systemd/vnet-exporter.service bset="-all" c

	for c in $(sed -n 's/^CapabilityBoundingSet=//p' "$unit"); do
		c=${c#CAP_}
		bset+=",+${c,,}"
	done
	keypair server && tls_config || { fail unit_caps "openssl cannot make a certificate"; return; }
	chmod 600 "$VNET_TMP/server.key"
	WRAP=(setpriv --bounding-set "$bset" --inh-caps -all --no-new-privs --)
	web_start "$VNET_TMP/web.yml" --cacert "$VNET_TMP/server.crt" ||
		{ WRAP=(); fail unit_caps "no start: $(cat "$VNET_TMP/exporter.log")"; return; }
	WRAP=()
	expect "the unit's capabilities: https" 200 "$(code --cacert "$VNET_TMP/server.crt" "$URL/metrics")"
	kill "$EPID"
	wait "$EPID" 2>/dev/null
	chown nobody "$VNET_TMP/server.key"
	run setpriv --bounding-set "$bset" --inh-caps -all --no-new-privs -- \
		"$VNETCTL" exporter --listen "127.0.0.1:$(rand_port)" --web-config "$VNET_TMP/web.yml"
	expect "a key root does not own: exit" 1 "$RUN_RC"
	expect "a key root does not own: named" yes "$(yesno grep -qF "server.key: Permission denied" <<<"$RUN_ERR")"
	report unit_caps "$(run_said)"
}

main()
{
	ksft_args "$@"
	require_root exporter-web || { ksft_exit; return; }
	require_cmd exporter-web curl openssl htpasswd mkpasswd ss setpriv || { ksft_exit; return; }
	ksft_run end_case
	ksft_exit
}

main "$@"
