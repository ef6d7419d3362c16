#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Installs everything vnet needs to build, test, benchmark and package on
# Debian 12 (run as root), then builds.  Idempotent: apt skips what is
# installed.
#
#   scripts/bootstrap.sh [--no-build]    (`make deps` is --no-build)
set -eu

build=1
case ${1:-} in
--no-build) build=0 ;;
"") ;;
*)
	echo "Usage: $0 [--no-build]" >&2
	exit 2
	;;
esac

PKGS="
make gcc libc6-dev pkg-config clang-format
clang llvm libclang-rt-14-dev bpftool libbpf-dev libelf-dev zlib1g-dev
liburing-dev libmnl-dev libseccomp-dev libmicrohttpd-dev libgnutls28-dev libcrypt-dev
iproute2 ethtool jq procps kmod util-linux
dpdk-dev librte-net-vhost23 librte-net-virtio23 librte-net-tap23 librte-mempool-ring23
qemu-system-x86 busybox-static iperf3 iputils-ping xz-utils binutils
sockperf gnuplot-nox
curl openssl apache2-utils whois
prometheus bash-completion debhelper lintian fakeroot dpkg-dev
libvirt-daemon-system libvirt-clients
"

if [ "$(id -u)" != 0 ]; then
	echo "Error: run as root (apt-get install, BPF and network namespaces need it)" >&2
	exit 1
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "bootstrap: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

[ "$build" = 1 ] || exit 0
cd "$(dirname "$0")/.."
make -j"$(nproc)" all
