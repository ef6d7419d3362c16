#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The Debian package (debian/): built from a copy of the tree with
# `dpkg-buildpackage -b -us -uc`, free of lintian errors, installed on this
# machine with dpkg -i (the installed vnetctl and vnetd run, the units are
# where systemd reads them: `systemctl cat` where PID 1 is systemd,
# `systemd-analyze verify` of the installed unit otherwise), and purged
# again, leaving nothing.  Needs root (dpkg -i).
#
#   selftests/operator/test_deb.sh

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=deb

_installed_here=0

deb_cleanup()
{
	[ "$_installed_here" = 1 ] && dpkg --purge vnet >/dev/null 2>&1
	_installed_here=0
}

trap 'deb_cleanup; _cleanup_all' EXIT

# the installed /etc/libvirt/hooks/qemu.d/vnet and /etc/default/vnet-hook
# on a real tap (a netns of the test's: VNETCTL_ARGS is the hook's own
# variable for that)
hook_off_after_install()
{
	local dev xml

	ns_create debhook && dev=$(rand_tap) && tap_create "$NS" "$dev" ||
		{ expect "hook setup" ok "cannot create netns/tap"; return; }
	xml="<domain type='kvm'><name>vm1</name><devices>
  <interface type='bridge'><source bridge='br0'/><target dev='$dev'/><model type='virtio'/></interface>
</devices></domain>"
	expect "the switch as installed" "VNET_HOOK_ENABLE=no" "$(grep '^VNET_HOOK_ENABLE=' /etc/default/vnet-hook)"
	VNETCTL=/usr/sbin/vnetctl VNETCTL_ARGS="-n $NS" run /etc/libvirt/hooks/qemu.d/vnet vm1 started begin - <<<"$xml"
	expect "hook exit" 0 "$RUN_RC"
	expect "nothing attached" yes "$(pins_gone "$dev" && echo yes || echo no)"
	expect "says it is off" yes "$(grep -q 'vm1: off (VNET_HOOK_ENABLE=yes in /etc/default/vnet-hook' <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	case_cleanup
}

# doc_links_missing DIR: "FILE: LINK" for each relative Markdown link of a
# .md under DIR (outside code blocks) that names nothing under DIR
doc_links_missing()
{
	local dir=$1 md l t

	while IFS= read -r md; do
		awk '/^```/ { f = !f; next } !f' "$md" |
			grep -oE '\]\([^) ]+\)' | sed 's/^](//; s/)$//' |
			while IFS= read -r l; do
				case $l in
				*://* | mailto:* | '#'*) continue ;;
				esac
				t=${l%%#*}
				[ -e "$(dirname "$md")/$t" ] || echo -n "${md#"$dir"/}: $l "
			done
	done < <(find "$dir" -name '*.md')
}

main()
{
	local src=$VNET_TMP/src deb f missing="" ver

	ksft_args "$@"
	require_root deb || { ksft_exit; return; }
	require_cmd deb dpkg-buildpackage lintian dh fakeroot || { ksft_exit; return; }
	if dpkg-query -W -f='${Status}' vnet 2>/dev/null | grep -q "ok installed"; then
		fail deb_setup "a vnet package is installed already; not replacing it (dpkg --purge vnet)"
		ksft_exit
		return
	fi

	# a copy: dpkg-buildpackage writes the .deb next to the source tree
	mkdir -p "$src"
	tar --exclude=./build --exclude=./.git --exclude=./debian/vnet \
		--exclude=./debian/.debhelper --exclude=./debian/build \
		-C "$VNET_ROOT" -c . | tar -x -C "$src"
	# what a developer built in the tree stays (debian/rules clean)
	mkdir -p "$src/build/selftests"
	touch "$src/build/selftests/soak" "$src/build/selftests/tapwrite"
	(cd "$src" && dpkg-buildpackage -b -us -uc) >"$VNET_TMP/build.log" 2>&1
	expect "dpkg-buildpackage exit" 0 "$?"
	deb=$(ls "$VNET_TMP"/vnet_*.deb 2>/dev/null | head -n1)
	expect "a .deb" yes "$([ -f "$deb" ] && echo yes || echo no)"
	expect "the tree's build/ kept" yes \
		"$([ -f "$src/build/selftests/soak" ] && [ -f "$src/build/selftests/tapwrite" ] && echo yes || echo no)"
	report build "$(tail -n 5 "$VNET_TMP/build.log" | tr '\n' ' ')"
	[ -f "$deb" ] || { ksft_exit; return; }

	dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$VNET_TMP/files"
	for f in /usr/sbin/vnetctl /usr/sbin/vnetd /usr/share/man/man8/vnetctl.8.gz \
		/usr/share/man/man8/vnetd.8.gz /lib/systemd/system/vnetd@.service \
		/lib/systemd/system/vnetd.service /lib/systemd/system/vnet-exporter.service \
		/usr/share/bash-completion/completions/vnetctl \
		/usr/share/bash-completion/completions/vnetd \
		/etc/libvirt/hooks/qemu.d/vnet /etc/default/vnet-hook \
		/usr/share/doc/vnet/libvirt.md \
		/usr/share/doc/vnet/systemd.md /usr/share/doc/vnet/metrics.md \
		/usr/share/doc/vnet/README.md /usr/share/doc/vnet/index.md \
		/usr/share/doc/vnet/robustness.md /usr/share/doc/vnet/e2e.md \
		/usr/share/doc/vnet/history/benchmarks-runs.md \
		/etc/default/vnetd /etc/vnet/vnetd.conf.example \
		/etc/default/vnet-exporter /etc/vnet/exporter-web.yml.example \
		/usr/share/doc/vnet/copyright; do
		grep -qxF "$f" "$VNET_TMP/files" || missing+="$f "
	done
	expect "files missing from the package" "" "$missing"
	# every doc the packaged man pages name is in the package, where they say
	mkdir -p "$VNET_TMP/x"
	dpkg-deb -x "$deb" "$VNET_TMP/x"
	missing=""
	for man in "$VNET_TMP"/x/usr/share/man/man8/vnetctl.8.gz "$VNET_TMP"/x/usr/share/man/man8/vnetd.8.gz; do
		for f in $(zcat "$man" | grep -oE '[A-Za-z0-9_.-]+\.md' | sort -u); do
			[ -f "$VNET_TMP/x/usr/share/doc/vnet/$f" ] || missing+="$(basename "$man"): $f "
		done
		zcat "$man" | grep -qE '(^|[^/a-z])docs/' && missing+="$(basename "$man"): names docs/ "
	done
	expect "docs the man pages name, not in the package" "" "$missing"
	# every relative link of every packaged doc resolves in the package
	expect "links of the packaged docs to what is not in the package" "" \
		"$(doc_links_missing "$VNET_TMP/x/usr/share/doc/vnet")"
	# the units' EnvironmentFile= and the example's ports in vnetd's words
	expect "/etc/default/vnetd sets VNETD_OPTS" yes \
		"$(grep -q '^VNETD_OPTS=' "$VNET_TMP/x/etc/default/vnetd" && echo yes || echo no)"
	expect "the units read it" yes \
		"$(grep -qx 'EnvironmentFile=-/etc/default/vnetd' "$VNET_TMP/x/lib/systemd/system/vnetd@.service" && echo yes || echo no)"
	expect "the example names ports" yes \
		"$(grep -qE '^#socket=[^ ]+ tap=' "$VNET_TMP/x/etc/vnet/vnetd.conf.example" && echo yes || echo no)"
	expect "depends on the shared libraries" yes \
		"$(dpkg-deb -f "$deb" Depends | grep -q 'libbpf1' && dpkg-deb -f "$deb" Depends | grep -q 'liburing2' && echo yes || echo no)"
	report contents "$(dpkg-deb -f "$deb" Depends)"

	run lintian --fail-on error "$deb"
	expect "lintian exit" 0 "$RUN_RC"
	expect "lintian errors" "" "$(grep '^E:' <<<"$RUN_OUT" | tr '\n' ' ')"
	report lintian "$(grep -E '^(W|E):' <<<"$RUN_OUT" | head -n 5 | tr '\n' ' ')"

	run dpkg -i "$deb"
	expect "dpkg -i exit" 0 "$RUN_RC"
	[ "$RUN_RC" = 0 ] && _installed_here=1
	ver=$(dpkg-deb -f "$deb" Version)
	run /usr/sbin/vnetctl --version
	expect "vnetctl --version" yes "$(grep -q "^vnetctl $ver " <<<"$RUN_OUT" && echo yes || echo "no: $RUN_OUT")"
	run /usr/sbin/vnetd --version
	expect "vnetd --version" yes "$(grep -q "^vnetd $ver " <<<"$RUN_OUT" && echo yes || echo "no: $RUN_OUT")"
	if [ "$(ps -p 1 -o comm= 2>/dev/null)" = systemd ]; then
		run systemctl cat vnetd@.service
		expect "systemctl cat exit" 0 "$RUN_RC"
		expect "Type=notify" yes "$(grep -qx 'Type=notify' <<<"$RUN_OUT" && echo yes || echo no)"
	else
		# no systemd as PID 1 (a container): the unit where systemd
		# reads it, and systemd's own parser accepts it by name
		expect "unit installed" yes "$([ -f /lib/systemd/system/vnetd@.service ] && echo yes || echo no)"
		run systemd-analyze verify --man=no vnetd@test.service
		expect "systemd-analyze verify vnetd@test.service" 0 "$RUN_RC"
		expect "verify says nothing" "" "$RUN_OUT$RUN_ERR"
	fi
	expect "man page" yes "$(man -w vnetctl 2>/dev/null | grep -q vnetctl.8 && echo yes || echo no)"
	expect "the hook's switch is a conffile" yes \
		"$(dpkg-query -W -f='${Conffiles}' vnet | grep -q '/etc/default/vnet-hook ' && echo yes || echo no)"
	expect "completion loads" yes \
		"$(bash -c 'source /usr/share/bash-completion/completions/vnetctl && complete -p vnetctl' 2>/dev/null | grep -q _vnetctl && echo yes || echo no)"
	report installed "$(run_said)"

	# the installed hook, as libvirtd runs it when a domain has started:
	# off as installed, nothing attached to the domain's taps
	hook_off_after_install
	report hook_off_as_installed "$(run_said)"

	run dpkg --purge vnet
	expect "purge exit" 0 "$RUN_RC"
	_installed_here=0
	expect "vnetctl gone" no "$([ -e /usr/sbin/vnetctl ] && echo yes || echo no)"
	expect "hook gone" no "$([ -e /etc/libvirt/hooks/qemu.d/vnet ] && echo yes || echo no)"
	expect "its switch gone" no "$([ -e /etc/default/vnet-hook ] && echo yes || echo no)"
	expect "/etc/default/vnetd gone" no "$([ -e /etc/default/vnetd ] && echo yes || echo no)"
	expect "the example config gone" no "$([ -e /etc/vnet/vnetd.conf.example ] && echo yes || echo no)"
	report purged "$(run_said)"
	ksft_exit
}

main "$@"
