#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: group=e2e-faults selects
#
# Faults and live migration with a real guest: selftests/e2e/faults.sh
# (kill -9 of vnetd and of QEMU, a guest reboot, a deleted tap, migration
# with and without vnetd's dirty log), picked up by selftests/run.sh.
#
#   selftests/e2e/test_e2e_faults.sh [-l] [-t GLOB]... [SCENARIO...]
exec "$(dirname "$0")/faults.sh" "$@"
