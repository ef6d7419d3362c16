/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The notification rule's BPF half (docs/policy.md): does holding a signal
 * on this queue pair batch anything?  Request/response traffic answers
 * every message before the next one comes, so a held signal only delays
 * the exchange; a stream sends while earlier frames are outstanding, so a
 * held signal gathers more.  The tell is cheap and needs no clock: on a
 * request/response queue the payload frames turn direction (request in,
 * answer out), on a stream they flow one way (the other way carries pure
 * ACKs, which do not count).
 *
 * Per payload frame: a compare, two increments and a store in the queue
 * pair's TX entry (for guest-RX frames one more array lookup).  Every
 * VNET_TURN_WIN_FRAMES payload frames the window closes: a share of turns
 * of at least VNET_TURN_LATENCY_PCT sets the latency mode, at most
 * VNET_TURN_BATCH_PCT the batch mode, anything between keeps the mode;
 * the verdict goes into both directions' entries, where vnetd reads it
 * with a plain load at each signal decision.
 */
#ifndef VNET_BPF_NOTIFY_H
#define VNET_BPF_NOTIFY_H

#include "maps.h"

static __always_inline void vnet_notify_set(struct vnet_queue_state *q,
					    __u32 mode, __u32 pct)
{
	if (q->notify_mode != mode) {
		q->notify_mode = mode;
		q->mode_changes++;
	}
	q->turn_pct = pct;
	q->turn_windows++;
}

/* a payload frame of direction DIR on QUEUE; Q is its own entry */
static __always_inline void
vnet_notify_frame(__u32 dir, __u32 queue,
		  struct vnet_queue_state *q VNET_TAP_DECL)
{
	struct vnet_queue_state *tx = q, *rx;
	__u32 key, pct, mode;

	if (dir != VNET_DIR_TX) {
		key = vnet_key(VNET_DIR_TX, queue);
		tx = VNET_LOOKUP(queues, &key);
		if (!tx)
			return;
	}
	if (tx->turn_dir && tx->turn_dir != dir + 1)
		tx->turn_count++;
	tx->turn_dir = dir + 1;
	if (++tx->turn_frames < VNET_TURN_WIN_FRAMES)
		return;

	pct = tx->turn_count * 100 / tx->turn_frames;
	tx->turn_frames = 0;
	tx->turn_count = 0;
	mode = tx->notify_mode;
	if (pct >= VNET_TURN_LATENCY_PCT)
		mode = VNET_NOTIFY_LATENCY;
	else if (pct <= VNET_TURN_BATCH_PCT)
		mode = VNET_NOTIFY_BATCH;
	else if (mode == VNET_NOTIFY_NONE)
		mode = VNET_NOTIFY_LATENCY;
	vnet_notify_set(tx, mode, pct);
	key = vnet_key(VNET_DIR_RX, queue);
	rx = dir == VNET_DIR_RX ? q : VNET_LOOKUP(queues, &key);
	if (rx)
		vnet_notify_set(rx, mode, pct);
}

#endif
