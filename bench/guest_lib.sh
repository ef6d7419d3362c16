# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# What the benchmarks on the e2e guest share (sourced, bash;
# bench_limit.sh, bench_neighbours.sh): selftests/lib.sh and the e2e
# harness (selftests/e2e/vm.sh and guests.sh), E2E (that folder) and
# bench_guest_ready.

E2E=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../selftests/e2e
# shellcheck source=selftests/lib.sh
source "$E2E/../lib.sh"
# shellcheck source=selftests/e2e/vm.sh
source "$E2E/vm.sh"
# shellcheck source=selftests/e2e/guests.sh
source "$E2E/guests.sh"

# bench_guest_ready NAME: root, and the e2e guest built (now, when it is
# not); else exit 1, the reason prefixed with NAME
bench_guest_ready()
{
	local why

	[ "$(id -u)" = 0 ] || { echo "$1: needs root" >&2; exit 1; }
	if ! why=$("$E2E/build-guest.sh" --check); then
		"$E2E/build-guest.sh" >/dev/null || { echo "$1: no guest: $why" >&2; exit 1; }
	fi
}
