/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Per-queue, per-class accounting shared by the classifier hooks. */
#ifndef VNET_BPF_ACCOUNT_H
#define VNET_BPF_ACCOUNT_H

#include "maps.h"

static __always_inline void vnet_account(__u32 dir, __u32 queue, __u32 class,
					 __u32 len)
{
	__u32 key = vnet_key(dir, queue);
	struct vnet_class_stats *s;
	struct vnet_queue_state *q;
	struct vnet_counter *c;
	__u64 now;

	if (class >= VNET_CLASS_MAX)
		class = VNET_CLASS_MALFORMED;

	s = bpf_map_lookup_elem(&stats, &key);
	if (s) {
		if (class == VNET_CLASS_MALFORMED)
			c = &s->malformed;
		else
			c = (struct vnet_counter *)s + (class & 3);
		c->packets++;
		c->bytes += len;
	}

	q = bpf_map_lookup_elem(&queues, &key);
	if (!q)
		return;
	if (class == VNET_CLASS_URGENT) {
		now = bpf_ktime_get_ns();
		__sync_fetch_and_add(&q->urgent, 1);
		q->last_urgent_ns = now;
	} else if (class == VNET_CLASS_PUSH) {
		now = bpf_ktime_get_ns();
		__sync_fetch_and_add(&q->push, 1);
		q->last_push_ns = now;
	}
	if (!q->first_seen_ns)
		q->first_seen_ns = bpf_ktime_get_ns();
}

#endif
