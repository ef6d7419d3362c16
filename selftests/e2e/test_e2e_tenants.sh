#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: group=e2e-tenants selects
#
# Rate limits and spoofing protection with a real guest:
# selftests/e2e/tenants.sh, picked up by selftests/run.sh.
#
#   selftests/e2e/test_e2e_tenants.sh [-l] [-t GLOB]... [SCENARIO...]
exec "$(dirname "$0")/tenants.sh" "$@"
