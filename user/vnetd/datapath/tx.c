// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Guest TX: the guest's transmit ring -> the tap queue of the pair.
 *
 * Per burst: pop up to tap_rx_frames chains (guest kicks disabled while
 * draining), write each chain's readable iovecs into the tap as they are
 * (zero copy: the guest's [virtio-net header + frame] is what tun takes),
 * push every chain used in one store of used->idx, then decide about the
 * completion signal (coal.c).  What the classifier saw costs four plain
 * loads per burst: tun hands each written frame to the stack, and so to
 * the classifier (tc ingress by default, or XDP), before the write
 * returns, so the queue's urgent and push counts read before and after
 * the burst's writes tell whether the burst carried such frames.
 *
 * Busy polling (--busy-poll USECS, vhost-net's busyloop_timeout): when the
 * ring runs dry, keep kicks off and watch avail->idx for up to USECS
 * before asking for a kick and sleeping.  A guest that refills the ring
 * within the window never kicks (a syscall on its side) and never waits
 * for this thread to be scheduled again (on a shared CPU that wait is a
 * scheduler slice, milliseconds).  What arrives in the window is not
 * drained here: the burst reports VNETD_BURST_MORE, so the thread looks at
 * its other events (epoll_wait with timeout 0) before the next burst.
 */
#include <errno.h>

#include "burst.h"
#include "tx.h"
#include "base/util.h"
#include "coal.h"
#include "limit.h"
#include "tapio.h"
#include "virtq.h"
#include "vq.h"

/* The guest-TX batch: the tap's rx-frames in the config map, 0: default. */
static unsigned int tx_batch(const struct vnetd_tx *tx)
{
	uint32_t n = VNETD_LOAD(tx->r.cfg->tap_rx_frames);

	if (!n)
		return VNETD_TX_BURST;
	return n < VNETD_TX_BURST_MAX ? n : VNETD_TX_BURST_MAX;
}

/*
 * Spin on avail->idx for up to the busy-poll window; true: entries came.
 * The window ends early at a coalescing deadline of the pair: a pending
 * completion is never held past its tx-/rx-usecs by the spin.
 */
static bool tx_busy_poll(struct vnetd_tx *tx)
{
	uint64_t end, held;
	unsigned int i;

	end = vnetd_now_ns() + tx->busy_poll_ns;
	held = vnetd_coal_deadline(&tx->r);
	if (held && held < end)
		end = held;
	for (;;) {
		for (i = 0; i < 32; i++) {
			if (vhost_vq_avail_count(tx->r.vq))
				return true;
			vnetd_cpu_relax();
		}
		if (vhost_vq_broken(tx->r.vq) || vnetd_now_ns() >= end)
			return false;
	}
}

/*
 * The guest wrote its frames on its own CPU: start fetching the first two
 * cache lines of each (header and small frame) for the whole burst, so that
 * the misses overlap here instead of coming one per write in tun's copy.
 */
static void tx_prefetch(const struct vhost_vq_elem *elems, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct vhost_vq_elem *e = &elems[i];
		const char *p;

		if (e->err || !e->out_num)
			continue;
		p = e->iov[0].iov_base;
		__builtin_prefetch(p);
		if (e->iov[0].iov_len > 64 - ((uintptr_t)p & 63))
			__builtin_prefetch(p + 64);
	}
}

/*
 * The rate limit on N popped chains: how many go now; the others are
 * given back to the ring, where the guest's own queue sees them waiting
 * (backpressure: nothing is dropped).  0: the ring waits r.limit_wait.
 */
static unsigned int tx_limit(struct vnetd_tx *tx, unsigned int n)
{
	uint32_t len[VNETD_TX_BURST_MAX] = { 0 };
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		uint64_t l = tx->r.elems[i].out_len;

		len[i] = l > tx->hdr_len ? (uint32_t)(l - tx->hdr_len) : 0;
	}
	k = vnetd_limit_take(tx->r.limit, len, n, &tx->r.limit_wait);
	if (k < n)
		vhost_vq_rewind(tx->r.vq, n - k);
	return k;
}

/*
 * The used entries of N written chains (length 0: nothing written for the
 * guest) and what the writes did: frames and bytes that went, drops
 * counted by reason; returns how many chains faulted (EFAULT)
 */
static unsigned int tx_results(struct vnetd_tx *tx, unsigned int n,
			       unsigned int *ok, uint64_t *bytes)
{
	struct vnet_dp_stats *st = tx->r.st;
	unsigned int i, fault = 0;

	*ok = 0;
	*bytes = 0;
	for (i = 0; i < n; i++) {
		const struct vhost_vq_elem *e = &tx->r.elems[i];
		int res = tx->res[i];

		tx->used[i].id = e->head;
		tx->used[i].len = 0; /* nothing written for the guest */
		if (res >= 0) {
			(*ok)++;
			if ((unsigned int)res > tx->hdr_len)
				*bytes += (unsigned int)res - tx->hdr_len;
		} else if (!e->err) {
			/* -E2BIG chains were counted by the library */
			st->drops[e->out_num ? VNET_DROP_TAP :
					       VNET_DROP_BAD_DESC]++;
			fault += res == -EFAULT;
		}
	}
	return fault;
}

/* Drain the TX ring, up to the budget: what happened. */
enum vnetd_burst vnetd_tx_burst(struct vnetd_tx *tx)
{
	struct vhost_vq *vq = tx->r.vq;
	struct vnet_dp_stats *st = tx->r.st;
	unsigned int done = 0, ok, fault, classes;
	uint64_t u0, p0, a0, bytes;
	int n;

	vhost_vq_notify_disable(vq);
	for (;;) {
		n = vhost_vq_pop_burst(vq, tx->r.elems, tx_batch(tx));
		if (n < 0)
			return VNETD_BURST_BROKEN;
		if (!n) {
			if (tx->busy_poll_ns && tx_busy_poll(tx)) {
				st->busy_polls++;
				return VNETD_BURST_MORE; /* kicks stay off */
			}
			/* kicks on again, then the lost-wakeup re-check */
			if (vhost_vq_notify_enable(vq))
				continue;
			return vhost_vq_broken(vq) ? VNETD_BURST_BROKEN :
						     VNETD_BURST_IDLE;
		}

		if (vnetd_limit_on(tx->r.limit)) {
			n = (int)tx_limit(tx, (unsigned int)n);
			if (!n)
				return VNETD_BURST_LIMITED; /* kicks stay off */
		}
		tx_prefetch(tx->r.elems, (unsigned int)n);
		u0 = VNETD_LOAD(tx->r.qs->urgent);
		p0 = VNETD_LOAD(tx->r.qs->push);
		a0 = VNETD_LOAD(tx->r.qs->ack);
		vnetd_tapio_write_burst(tx->io, tx->r.elems, (unsigned int)n,
					tx->res);
		classes = (VNETD_LOAD(tx->r.qs->urgent) != u0) << VNET_CLASS_URGENT |
			  (VNETD_LOAD(tx->r.qs->push) != p0) << VNET_CLASS_PUSH;

		fault = tx_results(tx, (unsigned int)n, &ok, &bytes);
		/* counted before the used entries are: whoever sees them
		 * (a guest polling its used ring, a test) finds the frames
		 * counted already */
		st->frames += ok;
		st->bytes += bytes;
		st->batches++;
		if (vhost_vq_push_burst(vq, tx->used, (unsigned int)n))
			return VNETD_BURST_BROKEN;
		if (fault) {
			/* the guest's buffers are vnetd's only user addresses here */
			vhost_vq_set_broken(vq, "writing %u guest TX frame%s into the tap faulted (EFAULT): guest memory is no longer backed (the frontend truncated its memory fd?); the ring is stopped until the frontend restarts it",
					    fault, fault == 1 ? "" : "s");
			return VNETD_BURST_BROKEN;
		}
		vnetd_coal_pushed(&tx->r, (unsigned int)n, classes,
				  (unsigned int)(VNETD_LOAD(tx->r.qs->ack) - a0));

		done += (unsigned int)n;
		if (done >= VNETD_BUDGET)
			return VNETD_BURST_MORE; /* kicks stay off: back at once */
	}
}
