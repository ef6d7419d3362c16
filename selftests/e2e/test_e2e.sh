#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# End to end with a real guest (QEMU + Debian's kernel and virtio_net
# driver through vnetd): selftests/e2e/run.sh, picked up by the runner
# (selftests/run.sh runs every selftests/*/test_*.sh).  See docs/e2e.md.
#
#   selftests/e2e/test_e2e.sh [-l] [-t GLOB]... [SCENARIO...]
#
# vnet-test: group=e2e selects
exec "$(dirname "$0")/run.sh" "$@"
