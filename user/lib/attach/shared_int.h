/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The shared classifier (shared.c): loaded once per network namespace,
 * attached to every tap there without a policy of its own, each tap's
 * maps reached through its slot.
 */
#ifndef LIBVNET_SHARED_INT_H
#define LIBVNET_SHARED_INT_H

#include <stdbool.h>
#include "libvnet.h"
#include "shared_set.h"

/*
 * IFNAME (IFINDEX, in NETNS) in NETNS's set, which is loaded and pinned
 * if there is none: its MAPS (fds, in the order above) at a slot.  *SH is
 * the set, open, for vnet_hooks_attach(); close it with
 * vnet_shared_close() (shared_set.h).
 */
int vnet_shared_add(const char *ifname, __u32 ifindex, __u32 netns,
		    const int maps[VNET_SHARED_MAPS],
		    struct vnet_shared_set *sh, struct vnet_err *err);
/*
 * IFINDEX out of NETNS's sets, if its slot holds the stats map STATS_ID;
 * a set goes with its last tap.
 */
void vnet_shared_remove(__u32 netns, __u32 ifindex, __u32 stats_id);
/* the slots of every set that no tap's pins hold freed (any netns) */
void vnet_shared_gc(void);
/* Is PROG_ID this netns's shared vnet_xmit_rx? */
bool vnet_shared_prog_is(__u32 prog_id);

#endif
