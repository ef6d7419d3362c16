#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Builds the e2e guest from Debian packages only, cached under build/e2e/:
#
#   build/e2e/vmlinux         Debian's kernel, uncompressed (an ELF with a
#                             PVH note: QEMU boots it directly, ~3 s to init
#                             under TCG), extracted from the bzImage
#   build/e2e/initramfs.cpio  busybox (busybox-static), iperf3, ethtool and
#                             sockperf with their shared libraries, the kernel
#                             package's virtio and virtio_net modules and
#                             selftests/e2e/guest-init.sh as /init
#
# The kernel comes from the package linux-image-amd64 depends on (e.g.
# linux-image-6.1.0-57-amd64), fetched with `apt-get download` and never
# installed: installing it would pull in udev and initramfs-tools.  Only
# the files needed are extracted.
#
#   selftests/e2e/build-guest.sh [--check]
#
# --check: exit 0 if everything needed is there (prints nothing), else 1
# with the reason on stdout (the SKIP reason).  Prints the kernel's path
# and the initramfs' path, one a line, when done.
#
# Environment: OUT (build directory), VNET_E2E_KERNEL_DEB (a kernel .deb to
# use instead of fetching one).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$top/build}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
E2E=$OUT/e2e
HERE=$top/selftests/e2e
# the modules the guest loads, in dependency order (checked against each
# module's depends= below)
MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci failover net_failover virtio_net"
TOOLS="/usr/bin/iperf3 /usr/sbin/ethtool /usr/bin/sockperf"
BUSYBOX=/bin/busybox

die()
{
	echo "build-guest: $*" >&2
	exit 1
}

# the tools on the host this script and the tests need; prints the first
# missing one's reason
missing_tool()
{
	local t

	command -v "${QEMU:-qemu-system-x86_64}" >/dev/null 2>&1 ||
		{ echo "${QEMU:-qemu-system-x86_64} not found (apt-get install qemu-system-x86)"; return 0; }
	if ! [ -x "$BUSYBOX" ] || ! "$BUSYBOX" --list 2>/dev/null | grep -qx cpio; then
		echo "$BUSYBOX not found (apt-get install busybox-static)"
		return 0
	fi
	# busybox-static's busybox must not need a loader in the guest
	if LC_ALL=C readelf -l "$BUSYBOX" 2>/dev/null | grep -q 'INTERP'; then
		echo "$BUSYBOX is dynamically linked (apt-get install busybox-static)"
		return 0
	fi
	for t in $TOOLS; do
		[ -x "$t" ] || { echo "$t not found (apt-get install $(basename "$t"))"; return 0; }
	done
	for t in apt-get apt-cache dpkg-deb xz readelf ldd; do
		command -v "$t" >/dev/null 2>&1 || { echo "$t not found"; return 0; }
	done
	return 1
}

# kernel_pkg: the versioned kernel package linux-image-amd64 depends on
kernel_pkg()
{
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}

# kernel_deb: path of the kernel .deb, fetched if need be
kernel_deb()
{
	local pkg deb

	if [ -n "${VNET_E2E_KERNEL_DEB:-}" ]; then
		[ -f "$VNET_E2E_KERNEL_DEB" ] || die "VNET_E2E_KERNEL_DEB: $VNET_E2E_KERNEL_DEB not found"
		echo "$VNET_E2E_KERNEL_DEB"
		return
	fi
	pkg=$(kernel_pkg)
	if [ -z "$pkg" ]; then
		# no package lists yet (a fresh machine): fetch them once
		apt-get update -qq >/dev/null 2>&1
		pkg=$(kernel_pkg)
	fi
	[ -n "$pkg" ] || die "apt-cache knows no linux-image-amd64 dependency (apt-get update?)"
	for deb in "$E2E/$pkg"_*_amd64.deb /var/cache/apt/archives/"$pkg"_*_amd64.deb; do
		[ -f "$deb" ] && { echo "$deb"; return; }
	done
	echo "build-guest: fetching $pkg" >&2
	# as root apt-get download cannot drop to _apt in a root-owned
	# directory; say that it need not
	if ! (cd "$E2E" && apt-get -qq -o APT::Sandbox::User=root download "$pkg" >&2); then
		# stale package lists name a version the mirror dropped
		echo "build-guest: apt-get download $pkg failed; apt-get update and again" >&2
		apt-get update -qq >/dev/null 2>&1
		pkg=$(kernel_pkg)
		[ -n "$pkg" ] || die "apt-cache knows no linux-image-amd64 dependency"
		(cd "$E2E" && apt-get -qq -o APT::Sandbox::User=root download "$pkg" >&2) ||
			die "apt-get download $pkg failed"
	fi
	for deb in "$E2E/$pkg"_*_amd64.deb; do
		[ -f "$deb" ] && { echo "$deb"; return; }
	done
	die "apt-get download $pkg left no .deb in $E2E"
}

# extract_vmlinux BZIMAGE OUT: the kernel's extract-vmlinux logic for the
# compressions Debian uses (xz since 2012; gzip and zstd for the others):
# find the payload's magic, decompress from there, keep the first ELF
extract_vmlinux()
{
	local bz=$1 out=$2 magic tool off

	for magic in 'xz:\xfd7zXZ\x00' 'zstd:\x28\xb5\x2f\xfd' 'gzip:\x1f\x8b\x08'; do
		tool=${magic%%:*}
		command -v "$tool" >/dev/null 2>&1 || continue
		while read -r off; do
			case $tool in
			xz) tail -c +$((off + 1)) "$bz" | xz -dc --single-stream >"$out" 2>/dev/null ;;
			zstd) tail -c +$((off + 1)) "$bz" | zstd -dcq >"$out" 2>/dev/null ;;
			gzip) tail -c +$((off + 1)) "$bz" | gzip -dc >"$out" 2>/dev/null ;;
			esac
			if LC_ALL=C readelf -h "$out" >/dev/null 2>&1; then
				return 0
			fi
		done < <(LC_ALL=C grep -obUaP "${magic#*:}" "$bz" | cut -d: -f1)
	done
	rm -f "$out"
	return 1
}

# kernel DEB: build/e2e/vmlinux and build/e2e/modules/ from DEB (cached by
# the .deb's name)
kernel()
{
	local deb=$1 tmp kver m f dep d order=""

	if [ -f "$E2E/vmlinux" ] && [ "$(cat "$E2E/kernel.stamp" 2>/dev/null)" = "$(basename "$deb")" ]; then
		return 0
	fi
	tmp=$(mktemp -d "$E2E/kernel.XXXXXX")
	# only what the guest needs: vmlinuz and the virtio/net modules
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$tmp" --wildcards './boot/vmlinuz-*' \
			'./lib/modules/*/kernel/drivers/virtio/*' \
			'./lib/modules/*/kernel/drivers/net/*' \
			'./lib/modules/*/kernel/net/core/*' 2>/dev/null
	f=""
	for m in "$tmp"/boot/vmlinuz-*; do
		[ -f "$m" ] && f=$m && break
	done
	[ -n "$f" ] || { rm -rf "$tmp"; die "no /boot/vmlinuz-* in $deb"; }
	kver=${f##*/vmlinuz-}
	extract_vmlinux "$f" "$E2E/vmlinux.tmp" ||
		{ rm -rf "$tmp"; die "cannot extract an ELF vmlinux from $f"; }
	# PVH entry point (XEN_ELFNOTE_PHYS32_ENTRY, note type 18): without it
	# QEMU cannot boot the ELF directly; fall back to the bzImage
	if LC_ALL=C readelf -n "$E2E/vmlinux.tmp" | grep -q 'Xen.*(0x00000012)'; then
		mv "$E2E/vmlinux.tmp" "$E2E/vmlinux"
	else
		echo "build-guest: $f has no PVH note; booting the bzImage (slower)" >&2
		rm -f "$E2E/vmlinux.tmp"
		cp "$f" "$E2E/vmlinux"
	fi
	rm -rf "$E2E/modules"
	mkdir -p "$E2E/modules"
	for m in $MODULES; do
		f=$(find "$tmp/lib/modules/$kver/kernel" -name "$m.ko" -o -name "$m.ko.xz" | head -n 1)
		[ -n "$f" ] || { rm -rf "$tmp"; die "$m.ko not in $deb"; }
		case $f in
		*.xz) xz -dc "$f" >"$E2E/modules/$m.ko" ;;
		*) cp "$f" "$E2E/modules/$m.ko" ;;
		esac
		# every dependency is loaded before it
		dep=$(LC_ALL=C grep -aoE 'depends=[a-z0-9_,-]*' "$E2E/modules/$m.ko" | head -n 1)
		dep=${dep#depends=}
		for d in ${dep//,/ }; do
			case " $order " in
			*" $d "*) ;;
			*) rm -rf "$tmp"; die "module order: $m needs $d first" ;;
			esac
		done
		order="$order $m"
	done
	# shellcheck disable=SC2086 # one module a line
	printf '%s\n' $order >"$E2E/modules/order"
	echo "$kver" >"$E2E/kernel.version"
	rm -rf "$tmp"
	basename "$deb" >"$E2E/kernel.stamp"
}

# copy_elf ROOT BIN: BIN and the shared libraries it loads (ldd), at the
# same paths under ROOT
copy_elf()
{
	local root=$1 bin=$2 lib

	mkdir -p "$root$(dirname "$bin")"
	cp -L "$bin" "$root$bin"
	for lib in $(ldd "$bin" | awk '/=> \// { print $3 } /^\t\/[^ ]* \(/ { print $1 }'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

initramfs()
{
	local root a

	root=$(mktemp -d "$E2E/root.XXXXXX")
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc,lib/modules}
	cp "$BUSYBOX" "$root/bin/busybox"
	for a in $("$BUSYBOX" --list); do
		[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
	done
	for a in $TOOLS; do
		copy_elf "$root" "$a"
	done
	cp "$E2E"/modules/*.ko "$E2E/modules/order" "$root/lib/modules/"
	install -m 0755 "$HERE/guest-init.sh" "$root/init"
	echo "root:x:0:0:root:/:/bin/sh" >"$root/etc/passwd"
	echo "root:x:0:" >"$root/etc/group"
	# uncompressed: decompressing under TCG costs more than reading
	(cd "$root" && find . | LC_ALL=C sort | "$BUSYBOX" cpio -o -H newc -R 0:0 >"$E2E/initramfs.cpio.tmp" 2>/dev/null) ||
		{ rm -rf "$root"; die "cpio failed"; }
	mv "$E2E/initramfs.cpio.tmp" "$E2E/initramfs.cpio"
	rm -rf "$root"
}

if [ "${1:-}" = --check ]; then
	missing_tool && exit 1
	exit 0
fi

reason=$(missing_tool) && die "$reason"
mkdir -p "$E2E"
deb=$(kernel_deb) || exit 1
kernel "$deb" || exit 1
# the initramfs is rebuilt whenever an input is newer
# shellcheck disable=SC2086 # TOOLS is a list
if [ ! -f "$E2E/initramfs.cpio" ] ||
	[ -n "$(find "$HERE/guest-init.sh" "$HERE/build-guest.sh" "$E2E/modules/order" "$BUSYBOX" $TOOLS -newer "$E2E/initramfs.cpio" 2>/dev/null)" ]; then
	initramfs
fi
echo "$E2E/vmlinux"
echo "$E2E/initramfs.cpio"
