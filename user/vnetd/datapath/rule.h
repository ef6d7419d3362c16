/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The notification rule of one ring (rule.c, docs/policy.md): after a burst
 * of used entries, signal the guest now, hold the signal until a deadline,
 * or owe nothing.  Pure: the caller (coal.c) gathers the inputs (the BPF
 * verdicts from the mmapped maps, the clock, EVENT_IDX) and acts on the
 * answer (the call eventfd, a timerfd);
 * selftests/vnetd/test_notify_rule.c runs traces through it.
 */
#ifndef VNETD_RULE_H
#define VNETD_RULE_H

#include <stdbool.h>
#include <stdint.h>

/* What a signal was sent for (dp_stats counters); VNETD_WHY_NONE: none */
enum vnetd_why {
	VNETD_WHY_NONE,
	VNETD_WHY_URGENT,	/* the urgent/push bypass */
	VNETD_WHY_NOCOAL,	/* frames or usecs 0: no coalescing */
	VNETD_WHY_FRAMES,	/* frames used entries pending */
	VNETD_WHY_LATENCY,	/* the queue pair is in latency mode */
	VNETD_WHY_QUIET,	/* the first after a quiet period */
	VNETD_WHY_TIMER,	/* the hold's usecs ran out */
};

enum vnetd_act {
	VNETD_ACT_NONE,		/* nothing owed: the guest wants no call */
	VNETD_ACT_HOLD,		/* hold until rule->deadline */
	VNETD_ACT_SIGNAL,	/* signal now */
};

/* One burst of used entries, as the caller found it. */
struct vnetd_rule_in {
	uint64_t now;		/* CLOCK_MONOTONIC, ns */
	unsigned int n;		/* used entries just pushed */
	bool urgent;		/* a bypass frame (TX urgent, RX push), bypass on */
	bool stream;		/* a stream's feedback frames: TX push, RX ACKs */
	/* EVENT_IDX: does the guest want a call for them?  Asked only when
	 * the answer matters (it costs a full barrier) */
	bool (*want)(void *ctx);
	void *ctx;
	bool always;		/* tx-hold/rx-hold always */
	/* nobody waits for these completions (guest-TX pure ACKs): held,
	 * the other direction's next signal carries them */
	bool no_waiter;
	uint32_t mode;		/* VNET_NOTIFY_* of the queue pair (BPF) */
	uint32_t frames, usecs;	/* the caps: tx-/rx-frames, -usecs */
};

/* A ring's signal state. */
struct vnetd_rule {
	uint32_t pending;	/* used entries pushed, not signalled */
	uint64_t first_ns;	/* when the oldest of them was pushed */
	uint64_t quiet_ns;	/* the ring was last settled with the guest */
	uint64_t deadline;	/* of the hold in progress; 0: none */
	bool from_first;	/* the hold counts usecs from first_ns */
	bool carry;		/* the other direction's next signal ends the
				 * hold (entries nobody waits for) */
	uint32_t carried;	/* entries the other direction's signal
				 * carried, not yet checked with EVENT_IDX */
	uint64_t stream_ns;	/* the last burst with stream frames */
};

/*
 * Carried entries are checked with EVENT_IDX (signalled if the guest still
 * wants a call for them) this many usecs after a signal carried them,
 * unless a decision comes first: a guest whose RX interrupt does not clean
 * its TX ring still gets its completions
 */
#define VNETD_RULE_CARRY_CHECK 4

/*
 * Stream frames are held from their first frame while they come within
 * this many usecs of each other: a stream, not a lone one
 */
#define VNETD_RULE_STREAM_GAP 4

enum vnetd_act vnetd_rule_pushed(struct vnetd_rule *r,
				 const struct vnetd_rule_in *in,
				 enum vnetd_why *why);
enum vnetd_act vnetd_rule_expired(struct vnetd_rule *r, uint64_t now,
				  uint32_t frames, uint32_t usecs);
/*
 * The other direction's signal went out at NOW: a hold of completions
 * nobody waits for is over, its entries carried and checked after
 * VNETD_RULE_CARRY_CHECK usecs (rule->deadline).  True when it ended one.
 */
bool vnetd_rule_carried(struct vnetd_rule *r, uint64_t now, uint32_t usecs);
/* a signal was decided at NOW (sent, or suppressed by EVENT_IDX) */
void vnetd_rule_signalled(struct vnetd_rule *r, uint64_t now);
void vnetd_rule_reset(struct vnetd_rule *r);

#endif /* VNETD_RULE_H */
