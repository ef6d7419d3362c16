#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# A real libvirtd runs the e2e guest on vnetd from docs/libvirt.md's domain
# XML, and the libvirt hook attaches vnet to a bridge interface's tap:
# selftests/e2e/libvirt.sh, picked up by the runner.  Needs root.
exec "$(dirname "$0")/../e2e/libvirt.sh" "$@"
