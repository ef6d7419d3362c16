/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Per-queue, per-class accounting shared by the classifier hooks. */
#ifndef VNET_BPF_ACCOUNT_H
#define VNET_BPF_ACCOUNT_H

#include "maps.h"
#include "notify.h"
#include "policy.h"

/*
 * class is unsigned so that the range check below and the array index use
 * the same register (an int would be sign-extended into a copy, and the
 * verifier would lose the bound); VNET_NEED_PULL (-1) becomes malformed.
 */
static __always_inline void vnet_account(__u32 dir, __u32 queue, __u32 class,
					 __u32 len VNET_TAP_DECL)
{
	__u32 key = vnet_key(dir, queue);
	struct vnet_class_stats *s;
	struct vnet_queue_state *q;
	struct vnet_counter *c;
	__u32 jiffies;

	if (class >= VNET_CLASS_MAX)
		class = VNET_CLASS_MALFORMED;

	s = VNET_LOOKUP(stats, &key);
	if (s) {
		/*
		 * The mask, not the range check above, is what the verifier
		 * sees on the register that indexes: compilers like to test
		 * a zero-extended copy and index with the original.
		 */
		if (class == VNET_CLASS_MALFORMED)
			c = &s->malformed;
		else
			c = (struct vnet_counter *)s + (class & 3);
		c->packets++;
		c->bytes += len;
	}

	q = VNET_LOOKUP(queues, &key);
	if (!q)
		return;
	/*
	 * The time of the last urgent/push frame is kept to the jiffy: the
	 * monotonic clock is read only when the jiffy changed since the last
	 * such frame on this queue.  A clock read per frame costs 45-75 ns on
	 * a VM (docs/benchmarks.md), more than the rest of the classifier.
	 */
	if (class == VNET_CLASS_URGENT) {
		__sync_fetch_and_add(&q->urgent, 1);
		jiffies = (__u32)bpf_jiffies64();
		if (jiffies != q->urgent_jiffies || !q->last_urgent_ns) {
			q->urgent_jiffies = jiffies;
			q->last_urgent_ns = bpf_ktime_get_ns();
		}
	} else if (class == VNET_CLASS_PUSH) {
		__sync_fetch_and_add(&q->push, 1);
		jiffies = (__u32)bpf_jiffies64();
		if (jiffies != q->push_jiffies || !q->last_push_ns) {
			q->push_jiffies = jiffies;
			q->last_push_ns = bpf_ktime_get_ns();
		}
	} else if (class == VNET_CLASS_ACK) {
		/*
		 * the notification rule: a stream's feedback on guest RX,
		 * completions nobody waits for on guest TX
		 */
		q->ack++;
	}
	if (!q->first_seen_ns)
		q->first_seen_ns = bpf_ktime_get_ns();
	/* the notification rule: payload frames, both directions */
	if (class != VNET_CLASS_ACK && class != VNET_CLASS_MALFORMED)
		vnet_notify_frame(dir, queue, q VNET_TAP_PASS);
	/* adaptive batching: off unless userspace set it for this queue */
	if (q->adaptive)
		vnet_policy_frame(q, dir, key, class, len VNET_TAP_PASS);
}

#endif
