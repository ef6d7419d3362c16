/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* attach_foreign.c's function for libvnet's own files (not libvnet.h). */
#ifndef LIBVNET_ATTACH_FOREIGN_INT_H
#define LIBVNET_ATTACH_FOREIGN_INT_H

#include <stdbool.h>
#include "libvnet.h"

/*
 * A foreign XDP program on IFINDEX: -EBUSY naming it, or with FORCE take
 * it off
 */
int vnet_foreign_xdp(const char *ifname, int ifindex, bool force,
		     struct vnet_err *err);

#endif
