/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A ring's completion signals (coal.c): when the used entries pushed on
 * one direction of a queue pair are signalled to the guest, by the
 * notification rule (rule.c).  The ring
 * itself (struct vnetd_ring) is declared here, by the lowest of the
 * modules that share it: the queue thread (qthread.c), the burst engines
 * (tx.c, rx.c) and this signal decision.
 */
#ifndef VNETD_COAL_H
#define VNETD_COAL_H

#include <stdbool.h>
#include <stdint.h>

#include <vnet/abi.h>
#include "virtq.h"
#include "rule.h"
#include "limit.h"

/* What has not been signalled yet on a ring (the rule's state, rule.h). */
struct vnetd_coal {
	struct vnetd_rule rule;	/* pending entries, the hold */
	uint64_t timer_ns;	/* deadline the timerfd is armed for; 0: none */
	int timer_fd;
};

/*
 * One direction of a queue pair: its ring, its coalescing state and its
 * counters.  The direction is data (set up once by qp.c), so the code
 * that serves a ring never asks which one it is.
 */
struct vnetd_ring {
	const char *name;		/* log prefix: the port's */
	unsigned int qp;		/* its queue pair's index */
	int dir;			/* VNET_DIR_TX or VNET_DIR_RX */
	uint32_t ev_kick, ev_timer;	/* its epoll tags */
	uint32_t ev_limit;
	struct vnetd_ring *paired;	/* TX: the RX ring a signal takes along */
	struct vnetd_ring *carries;	/* RX: the TX ring whose held
					 * pure ACKs a signal carries */

	/* the pinned maps' entries of this ring (mmapped, tap/tap_bpf.c) */
	struct vnet_dp_stats *st;
	const struct vnet_queue_state *qs;
	const struct vnet_config *cfg;	/* the queue pair's entry */
	const __u32 *cfg_frames, *cfg_usecs; /* this direction's fields */
	uint32_t flag_adaptive;		/* VNET_CFG_ADAPTIVE_TX/RX */
	uint32_t flag_no_bypass;	/* VNET_CFG_NO_TX/RX_BYPASS */
	uint32_t flag_hold_always;	/* VNET_CFG_TX/RX_HOLD_ALWAYS */
	uint32_t bypass_classes;	/* 1 << VNET_CLASS_*: signalled at once */
	uint32_t stream_classes;	/* ... a stream's feedback (rule.h) */

	/* --- queue thread only --- */
	struct vhost_vq *vq;		/* served, or NULL */
	bool more;			/* work left when the budget ran out */
	bool dead;			/* broken: untouched until restarted */
	bool kick_on;			/* kick fd in the epoll set */
	struct vhost_vq_stats seen;	/* the library's counters, in st */
	struct vnetd_coal coal;
	struct vhost_vq_elem *elems;	/* one burst of popped chains */
	/*
	 * the port's rate limit of this direction (NULL: none), the timer
	 * a throttled ring waits on, and what the last burst asked to wait
	 * (VNETD_BURST_LIMITED); RX: the counters charged up to
	 */
	struct vnetd_limit *limit;
	int limit_fd;
	bool limit_armed;
	uint64_t limit_wait;
	bool lim_marked;
	uint64_t lim_frames, lim_bytes;
};

void vnetd_coal_params(const struct vnetd_ring *r, uint32_t *frames,
		       uint32_t *usecs);
/*
 * N used entries pushed; CLASSES: 1 << VNET_CLASS_* the burst carried;
 * ACKS: how many of the N were pure ACKs
 */
void vnetd_coal_pushed(struct vnetd_ring *r, unsigned int n,
		       unsigned int classes, unsigned int acks);
void vnetd_coal_timer(struct vnetd_ring *r);
void vnetd_coal_flush(struct vnetd_ring *r);
void vnetd_coal_reset(struct vnetd_ring *r);

/*
 * The earliest deadline a signal is held for on R or on the ring its
 * signals take along (R->paired), CLOCK_MONOTONIC ns; 0: none.  A spin
 * that keeps the queue thread from its timers (busy polling) ends there.
 */
static inline uint64_t vnetd_coal_deadline(const struct vnetd_ring *r)
{
	uint64_t d = r->coal.timer_ns;
	uint64_t p = r->paired ? r->paired->coal.timer_ns : 0;

	return !d || (p && p < d) ? p : d;
}

#endif /* VNETD_COAL_H */
