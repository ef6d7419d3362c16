/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The burst engines, one per direction of a queue pair: guest TX ring ->
 * tap (tx.c), tap -> guest RX ring (rx.c, rx_inplace.c).  A burst moves
 * frames until there is nothing left or VNETD_BUDGET frames went, and
 * reports what happened (enum vnetd_burst); the queue thread acts on it.
 * Everything here is the queue thread's; each engine's state and burst
 * are in its header (tx.h, rx.h).
 */
#ifndef VNETD_BURST_H
#define VNETD_BURST_H

#define VNETD_BUDGET 256 /* frames per direction before looking around */

/* What a burst engine reports; the queue thread acts on it. */
enum vnetd_burst {
	VNETD_BURST_IDLE,	/* nothing left, kicks are on again */
	VNETD_BURST_MORE,	/* work left (budget, busy poll): come back */
	VNETD_BURST_TAP_EMPTY,	/* RX: tun is empty: wait for the tap */
	VNETD_BURST_STARVED,	/* RX: no guest buffer: kick asked for */
	VNETD_BURST_BROKEN,	/* the ring broke (the library logged why) */
	VNETD_BURST_TAP_ERROR,	/* RX: the tap queue fails (rx.tap_err) */
	VNETD_BURST_LIMITED,	/* the rate limit: come back in r.limit_wait ns */
};

#endif /* VNETD_BURST_H */
