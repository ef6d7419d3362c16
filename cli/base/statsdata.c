// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The counters stats.c and prom.c both print: vnetd's datapath counters
 * (copied from the dp_stats map), the names of the drop reasons, and
 * which queue entries have seen anything.
 */
#include <stdlib.h>
#include <string.h>

#include "libvnet.h"
#include "statsdata.h"

/* enum vnet_drop: the names of the text rows, the JSON keys, the labels */
static const char *const drop_names[VNET_DROP_MAX] = {
	[VNET_DROP_NO_BUFFER] = "no_buffer", [VNET_DROP_BAD_DESC] = "bad_desc",
	[VNET_DROP_TAP] = "tap",	     [VNET_DROP_TOO_BIG] = "too_big",
	[VNET_DROP_BROKEN] = "broken",
};

/*
 * vnetd's datapath counters (the dp_stats map, written by vnetd through
 * an mmap), copied; NULL when the map is not there (nothing to show).
 */
const char *stats_drop_name(int i)
{
	return i >= 0 && i < VNET_DROP_MAX ? drop_names[i] : NULL;
}

struct vnet_dp_stats *stats_dp_read(const char *dev)
{
	size_t len = sizeof(struct vnet_dp_stats) * DP_ENTRIES;
	struct vnet_dp_stats *dp;
	struct vnet_map m;

	if (vnet_map_get(dev, VNET_MAP_DP_STATS, VNET_MAP_MMAP, &m, NULL))
		return NULL;
	dp = malloc(len);
	if (dp)
		memcpy(dp, m.mem, len);
	vnet_map_put(&m);
	return dp;
}

bool stats_dp_active(const struct vnet_dp_stats *d)
{
	static const struct vnet_dp_stats zero;

	return memcmp(d, &zero, sizeof(zero)) != 0;
}

bool stats_key_active(const struct vnet_stats_snapshot *s,
		      const struct vnet_dp_stats *dp, __u32 k)
{
	int c;

	for (c = 0; c < VNET_CLASS_MAX; c++)
		if (vnet_class_counter(&s->cls[k], c)->packets)
			return true;
	return s->state[k].first_seen_ns != 0 || (dp && stats_dp_active(&dp[k]));
}
