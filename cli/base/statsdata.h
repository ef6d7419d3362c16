/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The counters stats.c and prom.c both print (statsdata.c). */
#ifndef VNETCTL_STATSDATA_H
#define VNETCTL_STATSDATA_H

#include <stdbool.h>
#include "libvnet.h"

#define DP_ENTRIES (VNET_DIR_MAX * VNET_MAX_QUEUES)
const char *stats_drop_name(int i); /* NULL: a reason without a name */
bool stats_dp_active(const struct vnet_dp_stats *d);  /* counted anything */
struct vnet_dp_stats *stats_dp_read(const char *dev); /* malloc'd, or NULL */
bool stats_key_active(const struct vnet_stats_snapshot *s,
		      const struct vnet_dp_stats *dp, __u32 k);

#endif
