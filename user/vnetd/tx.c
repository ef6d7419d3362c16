// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Guest TX: the guest's transmit ring -> the tap queue of the pair.
 *
 * Per burst: pop up to tap_rx_frames chains (guest kicks disabled while
 * draining), write each chain's readable iovecs into the tap as they are
 * (zero copy: the guest's [virtio-net header + frame] is what tun takes),
 * push every chain used in one store of used->idx, then decide about the
 * completion signal (coal.c).  The urgent decision costs two plain loads
 * per burst: the XDP classifier runs inside each write(), so the queue's
 * urgent count read before and after the burst's writes tells whether
 * the burst carried an urgent frame.
 *
 * Busy polling (--busy-poll USECS, vhost-net's busyloop_timeout): when the
 * ring runs dry, keep kicks off and watch avail->idx for up to USECS
 * before asking for a kick and sleeping.  A guest that refills the ring
 * within the window never kicks (a syscall on its side) and never waits
 * for this thread to be scheduled again (on a shared CPU that wait is a
 * scheduler slice, milliseconds).  What arrives in the window is not
 * drained here: vnetd_tx_run() returns true, so the thread looks at its
 * other events (epoll_wait with timeout 0) before the next burst.
 */
#include <errno.h>

#include "vnetd.h"

/* The guest-TX batch: the tap's rx-frames in the config map, 0: default. */
static unsigned int tx_burst(const struct vnetd_qp *qp)
{
	uint32_t n = VNETD_LOAD(qp->cfg->tap_rx_frames);

	if (!n)
		return VNETD_TX_BURST;
	return n < VNETD_TX_BURST_MAX ? n : VNETD_TX_BURST_MAX;
}

/*
 * Spin on avail->idx for up to the busy-poll window; true: entries came.
 * The window ends early at a coalescing deadline: a pending completion is
 * never held past its tx-/rx-usecs by the spin.
 */
static bool tx_busy_poll(struct vnetd_qp *qp)
{
	uint64_t end;
	unsigned int i;

	end = vnetd_now_ns() + qp->port->busy_poll_ns;
	if (qp->tx_coal.timer_ns && qp->tx_coal.timer_ns < end)
		end = qp->tx_coal.timer_ns;
	if (qp->rx_coal.timer_ns && qp->rx_coal.timer_ns < end)
		end = qp->rx_coal.timer_ns;
	for (;;) {
		for (i = 0; i < 32; i++) {
			if (vhost_vq_avail_count(qp->tx))
				return true;
			vnetd_cpu_relax();
		}
		if (vhost_vq_broken(qp->tx) || vnetd_now_ns() >= end)
			return false;
	}
}

/* The ring broke (the library logged why): stop touching it. */
void vnetd_tx_broken(struct vnetd_qp *qp)
{
	if (qp->tx_dead)
		return;
	qp->tx_dead = true;
	qp->tx_st->drops[VNET_DROP_BROKEN]++;
	vnetd_epoll_set(qp, vhost_vq_kick_fd(qp->tx), VNETD_EV_TX_KICK,
			false, &qp->tx_kick_on);
	vnetd_coal_reset(&qp->tx_coal);
	pr_dbg(qp->port, "queue pair %u: TX ring (vq %u) broken: %s; not served until the frontend restarts it",
	       qp->index, qp->tx->index, qp->tx->broken_reason);
}

/* Drain the TX ring; true when the budget ran out with work left. */
bool vnetd_tx_run(struct vnetd_qp *qp)
{
	struct vhost_vq *vq = qp->tx;
	struct vnet_dp_stats *st = qp->tx_st;
	unsigned int done = 0, i, ok;
	uint64_t u0, u1, bytes;
	int n;

	vhost_vq_notify_disable(vq);
	for (;;) {
		n = vhost_vq_pop_burst(vq, qp->tx_elems, tx_burst(qp));
		if (n < 0)
			goto broken;
		if (!n) {
			if (qp->port->busy_poll_ns && tx_busy_poll(qp)) {
				qp->tx_st->busy_polls++;
				return true; /* kicks stay off */
			}
			/* kicks on again, then the lost-wakeup re-check */
			if (vhost_vq_notify_enable(vq))
				continue;
			if (vhost_vq_broken(vq))
				goto broken;
			return false;
		}

		u0 = VNETD_LOAD(qp->tx_qs->urgent);
		vnetd_tap_write_burst(qp, (unsigned int)n);
		u1 = VNETD_LOAD(qp->tx_qs->urgent);

		ok = 0;
		bytes = 0;
		for (i = 0; i < (unsigned int)n; i++) {
			const struct vhost_vq_elem *e = &qp->tx_elems[i];
			int res = qp->tx_res[i];

			qp->tx_used[i].id = e->head;
			qp->tx_used[i].len = 0; /* nothing written for the guest */
			if (res >= 0) {
				ok++;
				if ((unsigned int)res > qp->hdr_len)
					bytes += (unsigned int)res - qp->hdr_len;
			} else if (!e->err) {
				/* -E2BIG chains were counted by the library */
				st->drops[e->out_num ? VNET_DROP_TAP :
						       VNET_DROP_BAD_DESC]++;
			}
		}
		if (vhost_vq_push_burst(vq, qp->tx_used, (unsigned int)n))
			goto broken;
		st->frames += ok;
		st->bytes += bytes;
		st->batches++;
		vnetd_coal_pushed(qp, VNET_DIR_TX, (unsigned int)n, u1 != u0);

		done += (unsigned int)n;
		if (done >= VNETD_BUDGET)
			return true; /* kicks stay off: we come back at once */
	}

broken:
	vnetd_tx_broken(qp);
	return false;
}
