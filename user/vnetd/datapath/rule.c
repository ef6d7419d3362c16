// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The notification rule of a ring: hold a signal only when holding batches
 * something (docs/policy.md has the why and the measurements).  After a
 * burst of used entries, in this order:
 *
 *   1. a bypass frame (urgent TX, push RX), frames or usecs 0, or `frames`
 *      entries pending: signal now;
 *   2. the guest wants no call for them (EVENT_IDX): nothing is owed, and
 *      the ring counts as settled now (the guest is looking at it);
 *   3. a burst whose completions nobody waits for (guest-TX pure ACKs:
 *      TCP charges them to no sender's small queue, and a receiver's ACKs
 *      come back to back with the data it receives): held, and the other
 *      direction's next signal carries it (the guest's interrupt handler
 *      and virtio_net's RX poll clean the TX ring); the hold ends there or
 *      VNETD_RULE_CARRY_CHECK usecs after its first entry, and carried
 *      entries get their EVENT_IDX check VNETD_RULE_CARRY_CHECK usecs
 *      later or at the ring's next decision (a hold in progress for other
 *      frames keeps its own rule);
 *   4. latency mode (the BPF programs saw the queue pair's payload turn
 *      direction: request/response, or no window closed yet): signal now.
 *      Not even a request's completion waits for the answer to carry it:
 *      the guest would clean its TX ring on the round trip, after the
 *      answer came, instead of while it waited (docs/policy.md);
 *   5. nothing signalled or settled for `usecs`: this is the first frame
 *      after a quiet period, signal now; `usecs` is a minimum gap between
 *      signals, as a NIC's interrupt throttle, not a delay from the first
 *      frame;
 *   6. otherwise hold until `usecs` after the ring was last settled: what
 *      arrives meanwhile goes with it.  A stream's feedback (guest-TX push
 *      frames: a sender of small writes, whose TCP grows the next segment
 *      while the completion is outstanding; guest-RX pure ACKs: the ACKs
 *      Nagle's algorithm waits for to send the next small segment) is held
 *      `usecs` from its first frame, skipping 5, while such bursts come
 *      within VNETD_RULE_STREAM_GAP usecs of each other.
 *
 * With tx-hold/rx-hold always, 3, 4 and 5 are skipped and every hold counts
 * `usecs` from its first frame: virtio NOTF_COAL's and ethtool's meaning.
 */
#include <vnet/abi.h>

#include "rule.h"

void vnetd_rule_signalled(struct vnetd_rule *r, uint64_t now)
{
	r->pending = 0;
	r->quiet_ns = now;
	r->deadline = 0;
	r->from_first = false;
	r->carry = false;
	r->carried = 0;
}

bool vnetd_rule_carried(struct vnetd_rule *r, uint64_t now, uint32_t usecs)
{
	if (!r->pending || !r->carry)
		return false;
	r->carried += r->pending;
	r->pending = 0;
	r->quiet_ns = now;
	r->carry = false;
	r->from_first = false;
	r->deadline = now + (uint64_t)usecs * 1000 * VNETD_RULE_CARRY_CHECK;
	return true;
}

void vnetd_rule_reset(struct vnetd_rule *r)
{
	*r = (struct vnetd_rule){};
}

static uint64_t deadline_of(const struct vnetd_rule *r, bool from_first,
			    uint64_t usecs)
{
	return (from_first ? r->first_ns : r->quiet_ns) + usecs * 1000;
}

enum vnetd_act vnetd_rule_pushed(struct vnetd_rule *r,
				 const struct vnetd_rule_in *in,
				 enum vnetd_why *why)
{
	uint64_t deadline, hold_us;
	bool from_first, stream, holding;

	*why = VNETD_WHY_NONE;
	stream = in->stream && r->stream_ns &&
		 in->now - r->stream_ns <=
			 (uint64_t)in->usecs * 1000 * VNETD_RULE_STREAM_GAP;
	if (in->stream)
		r->stream_ns = in->now;
	if (!r->pending)
		r->first_ns = in->now;
	r->pending += in->n;
	/* a hold in progress (a carried entries' check is not one) */
	holding = r->pending > in->n && r->deadline;
	if (in->urgent) {
		*why = VNETD_WHY_URGENT;
		return VNETD_ACT_SIGNAL;
	}
	if (!in->frames || !in->usecs) {
		*why = VNETD_WHY_NOCOAL;
		return VNETD_ACT_SIGNAL;
	}
	if (r->pending >= in->frames) {
		*why = VNETD_WHY_FRAMES;
		return VNETD_ACT_SIGNAL;
	}
	if (in->want && !in->want(in->ctx)) {
		vnetd_rule_signalled(r, in->now);
		return VNETD_ACT_NONE;
	}
	from_first = in->always || stream;
	hold_us = in->usecs;
	if (!in->always && in->no_waiter && (!holding || r->carry)) {
		/* 3: the other direction's next signal carries them */
		from_first = true;
		hold_us = (uint64_t)in->usecs * VNETD_RULE_CARRY_CHECK;
		r->carry = true;
	} else {
		/* frames someone waits for: this hold ends by its own rule */
		r->carry = false;
		if (!in->always && in->mode != VNET_NOTIFY_BATCH) {
			*why = VNETD_WHY_LATENCY;
			return VNETD_ACT_SIGNAL;
		}
		if (!in->always && !holding && !stream &&
		    in->now - r->quiet_ns >= (uint64_t)in->usecs * 1000) {
			*why = VNETD_WHY_QUIET;
			return VNETD_ACT_SIGNAL;
		}
	}
	deadline = deadline_of(r, from_first, hold_us);
	/* a hold in progress keeps its deadline if that comes first */
	if (holding && r->deadline <= deadline) {
		deadline = r->deadline;
		from_first = r->from_first;
	}
	if (in->now >= deadline) {
		*why = VNETD_WHY_TIMER;
		return VNETD_ACT_SIGNAL;
	}
	r->deadline = deadline;
	r->from_first = from_first;
	return VNETD_ACT_HOLD;
}

enum vnetd_act vnetd_rule_expired(struct vnetd_rule *r, uint64_t now,
				  uint32_t frames, uint32_t usecs)
{
	uint64_t deadline;

	if (!r->pending) {
		/* carried entries: EVENT_IDX says whether they are owed */
		if (r->carried)
			return now < r->deadline ? VNETD_ACT_HOLD :
						   VNETD_ACT_SIGNAL;
		r->deadline = 0;
		return VNETD_ACT_NONE;
	}
	/* a timer armed for an earlier hold */
	if (now < r->deadline)
		return VNETD_ACT_HOLD;
	/* usecs may have grown since the hold began */
	if (frames && usecs) {
		deadline = deadline_of(r, r->from_first, usecs);
		if (now < deadline) {
			r->deadline = deadline;
			return VNETD_ACT_HOLD;
		}
	}
	return VNETD_ACT_SIGNAL;
}
