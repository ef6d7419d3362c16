/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef VNETCTL_COALESCE_STATE_H
#define VNETCTL_COALESCE_STATE_H

#include <stdbool.h>
#include "libvnet.h"

/*
 * coalesce show's per-queue decisions: the notification rule of every
 * (queue, direction) with traffic (SERVED: a vnetd acts on it; DP: its
 * counters, may be NULL), and the adaptive recommendations
 */
void coalesce_print_rule(const char *dev, bool served,
			 const struct vnet_config *cfg,
			 const struct vnet_queue_state *qs,
			 const struct vnet_dp_stats *dp);
void coalesce_print_recommendations(const struct vnet_queue_state *qs);

#endif
