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
#include "hooks_int.h"

/* the maps the programs read, in the order of struct vnet_shared_set's of */
#define VNET_SHARED_MAPS 5
#define VNET_SHARED_MAP_IDS                                                    \
	{                                                                      \
		VNET_MAP_STATS, VNET_MAP_QUEUES, VNET_MAP_CONFIG,              \
			VNET_MAP_GUARD, VNET_MAP_GUARD_STATS                   \
	}

/* a set's pinned programs and maps, open */
struct vnet_shared_set {
	struct vnet_progs progs; /* progs.xmit -1: guest RX at tc egress */
	int taps, tap_index;
	int of[VNET_SHARED_MAPS];
};

/*
 * IFNAME (IFINDEX, in NETNS) in NETNS's set, which is loaded and pinned
 * if there is none: its MAPS (fds, in the order above) at a slot.  *SH is
 * the set, open, for vnet_hooks_attach(); close it with
 * vnet_shared_close().
 */
int vnet_shared_add(const char *ifname, __u32 ifindex, __u32 netns,
		    const int maps[VNET_SHARED_MAPS],
		    struct vnet_shared_set *sh, struct vnet_err *err);
void vnet_shared_close(struct vnet_shared_set *sh);
/*
 * IFINDEX out of NETNS's sets, if its slot holds the stats map STATS_ID;
 * a set goes with its last tap.
 */
void vnet_shared_remove(__u32 netns, __u32 ifindex, __u32 stats_id);
/* the slots of taps gone (or of other pins), in NETNS's sets, freed */
void vnet_shared_gc(__u32 netns);
/* Is PROG_ID this netns's shared vnet_xmit_rx? */
bool vnet_shared_prog_is(__u32 prog_id);
/* Does the tap IFINDEX of this netns have pins whose stats map is STATS_ID? */
bool vnet_shared_slot_live(__u32 ifindex, __u32 stats_id);

#endif
