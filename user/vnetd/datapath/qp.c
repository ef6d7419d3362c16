// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The queue pairs of a port (qp.h): each pair's burst buffers, RX slots,
 * epoll set (with the fds that stay in it: the mailbox's eventfd and the
 * two coalescing timers; qthread.c adds and removes the others), and its
 * rings: their direction, epoll tags, config flags and entries in the
 * pinned maps.  On the control thread, before and after the threads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <linux/virtio_net.h>

#include "qp.h"
#include "base/testing.h"
#include "rx.h"
#include "base/util.h"
#include "log.h"

static int epoll_add(struct vnetd_qp *qp, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(qp->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/*
 * The burst arrays: TX_BURST_MAX + RX_ELEMS elements of 1568 bytes and
 * the RX iovecs, 229 KiB a pair, sized for the largest burst.  Not from
 * the heap, where calloc() clears (and so makes resident) recycled
 * memory, but an anonymous mapping of their own: only the pages a burst
 * reaches become resident (none while the port is idle).  A PROT_NONE
 * page on each side faults an overrun and keeps the mapping apart from
 * its neighbours (the RX slots', another pair's).
 */
#define ARR_TX ((size_t)VNETD_TX_BURST_MAX * sizeof(struct vhost_vq_elem))
#define ARR_RX ((size_t)VNETD_RX_ELEMS * sizeof(struct vhost_vq_elem))
#define ARR_IOV ((size_t)VNETD_RX_BURST * VNETD_RX_IOV * sizeof(struct iovec))

static int arrays_map(struct vnetd_qp *qp)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (ARR_TX + ARR_RX + ARR_IOV + page - 1) & ~(page - 1);
	uint8_t *b;

	b = mmap(NULL, len + 2 * page, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b == MAP_FAILED)
		return -errno;
	if (mprotect(b + page, len, PROT_READ | PROT_WRITE)) {
		int ret = -errno;

		munmap(b, len + 2 * page);
		return ret;
	}
	qp->arrays = b;
	qp->arrays_len = len + 2 * page;
	qp->tx.r.elems = (struct vhost_vq_elem *)(b + page);
	qp->rx.r.elems = (struct vhost_vq_elem *)(b + page + ARR_TX);
	qp->rx.iov = (struct iovec *)(b + page + ARR_TX + ARR_RX);
	return 0;
}

static void qp_free(struct vnetd_qp *qp)
{
	if (qp->io.slots)
		munmap(qp->io.slots, (size_t)VNETD_RX_BURST * VNETD_RX_SLOT);
	if (qp->arrays)
		munmap(qp->arrays, qp->arrays_len);
	qp->arrays = NULL;
	if (qp->rx.r.coal.timer_fd >= 0)
		close(qp->rx.r.coal.timer_fd);
	if (qp->tx.r.coal.timer_fd >= 0)
		close(qp->tx.r.coal.timer_fd);
	if (qp->rx.r.limit_fd >= 0)
		close(qp->rx.r.limit_fd);
	if (qp->tx.r.limit_fd >= 0)
		close(qp->tx.r.limit_fd);
	if (qp->wake_fd >= 0)
		close(qp->wake_fd);
	if (qp->epfd >= 0)
		close(qp->epfd);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->lock);
	qp->io.slots = NULL;
	qp->io.fd = -1;
	qp->rx.r.elems = qp->tx.r.elems = NULL;
	qp->rx.iov = NULL;
	qp->rx.r.coal.timer_fd = qp->tx.r.coal.timer_fd = -1;
	qp->rx.r.limit_fd = qp->tx.r.limit_fd = -1;
	qp->wake_fd = qp->epfd = -1;
}

/* A ring's entries in the maps: its counters, its queue state, its config. */
static void ring_maps(struct vnetd_maps *m, struct vnetd_ring *r, int dir,
		      unsigned int q, const struct vnet_config *c,
		      const __u32 *frames, const __u32 *usecs)
{
	r->st = vnetd_dp_stats(m, dir, q);
	r->qs = vnetd_queue_state(m, dir, q);
	r->cfg = c;
	r->cfg_frames = frames;
	r->cfg_usecs = usecs;
}

/* What a ring is: direction, epoll tags, config flags, its pair. */
static void ring_init(struct vnetd_qp *qp, struct vnetd_ring *r, int dir)
{
	bool tx = dir == VNET_DIR_TX;

	r->name = qp->name;
	r->qp = qp->index;
	r->dir = dir;
	r->ev_kick = tx ? VNETD_EV_TX_KICK : VNETD_EV_RX_KICK;
	r->ev_timer = tx ? VNETD_EV_TX_TIMER : VNETD_EV_RX_TIMER;
	r->ev_limit = tx ? VNETD_EV_TX_LIMIT : VNETD_EV_RX_LIMIT;
	r->limit_fd = -1;
	r->flag_adaptive = tx ? VNET_CFG_ADAPTIVE_TX : VNET_CFG_ADAPTIVE_RX;
	r->flag_no_bypass = tx ? VNET_CFG_NO_TX_BYPASS : VNET_CFG_NO_RX_BYPASS;
	r->flag_hold_always = tx ? VNET_CFG_TX_HOLD_ALWAYS :
				   VNET_CFG_RX_HOLD_ALWAYS;
	/*
	 * TX: an urgent frame's completion goes at once (its TCP sender
	 * waits for it), a push frame's is a stream's feedback (a small-write
	 * sender grows its next segment while it is held).  RX: a push frame
	 * (the end of a message) is delivered at once, a pure ACK is a
	 * stream's feedback (Nagle's algorithm sends the next small segment
	 * when it comes).
	 */
	r->bypass_classes = 1u << (tx ? VNET_CLASS_URGENT : VNET_CLASS_PUSH);
	r->stream_classes = 1u << (tx ? VNET_CLASS_PUSH : VNET_CLASS_ACK);
	/* a TX signal takes the held RX one along (coal.c) */
	r->paired = tx ? &qp->rx.r : NULL;
	r->carries = tx ? NULL : &qp->tx.r;
	r->coal.timer_fd = -1;
}

/*
 * The pair's epoll set and the fds in it from the start: the mailbox's
 * eventfd, each ring's coalescing and rate-limit timers; 0 or -errno
 * (qp_free() closes what was made)
 */
static int qp_fds_init(struct vnetd_qp *qp)
{
	struct vnetd_ring *rings[2] = { &qp->tx.r, &qp->rx.r };
	int i, ret;

	qp->epfd = epoll_create1(EPOLL_CLOEXEC);
	qp->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (qp->epfd < 0 || qp->wake_fd < 0)
		return -errno;
	ret = epoll_add(qp, qp->wake_fd, VNETD_EV_WAKE);
	for (i = 0; i < 2 && !ret; i++) {
		struct vnetd_ring *r = rings[i];

		r->coal.timer_fd = timerfd_create(CLOCK_MONOTONIC,
						  TFD_NONBLOCK | TFD_CLOEXEC);
		r->limit_fd = timerfd_create(CLOCK_MONOTONIC,
					     TFD_NONBLOCK | TFD_CLOEXEC);
		if (r->coal.timer_fd < 0 || r->limit_fd < 0)
			return -errno;
		ret = epoll_add(qp, r->coal.timer_fd, r->ev_timer);
		if (!ret)
			ret = epoll_add(qp, r->limit_fd, r->ev_limit);
	}
	return ret;
}

static int qp_init(struct vnetd_qp *qp, unsigned int q,
		   const struct vnetd_qps_cfg *c)
{
	pthread_condattr_t ca;
	void *buf;
	int ret;

	memset(qp, 0, sizeof(*qp));
	qp->name = c->name;
	qp->tap = c->tap;
	qp->index = q;
	qp->cpu = c->ncpus ? c->cpus[q % c->ncpus] : -1;
	qp->no_uring = c->no_uring;
	qp->maps = c->maps;
	/* until the first negotiation (the device's default) */
	qp->hdr_len = sizeof(struct virtio_net_hdr_mrg_rxbuf);
	qp->io.name = c->name;
	qp->io.index = q;
	qp->io.fd = c->tap_fd ? c->tap_fd[q] : -1;
	qp->tx.io = qp->rx.io = &qp->io;
	qp->tx.busy_poll_ns = (uint64_t)c->busy_poll_us * 1000;
	qp->rx.want = 1;
	qp->rx.direct_min = vnetd_switch(VNETD_SW_RX_DIRECT_MIN,
					 VNETD_RX_DIRECT_MIN);
	qp->rx.big_bursts = vnetd_switch(VNETD_SW_RX_BIG_BURSTS,
					 VNETD_RX_BIG_BURSTS);
	/* 0: never (a test build's benchmarks of the old behaviour) */
	qp->idle_ms = (int)vnetd_switch(VNETD_SW_IDLE_MS, VNETD_IDLE_MS);
	if (!qp->idle_ms)
		qp->idle_ms = -1;
	qp->epfd = qp->wake_fd = -1;
	ring_init(qp, &qp->tx.r, VNET_DIR_TX);
	ring_init(qp, &qp->rx.r, VNET_DIR_RX);
	if (c->maps) {
		const struct vnet_config *cfg = vnetd_config(c->maps, q);

		ring_maps(c->maps, &qp->tx.r, VNET_DIR_TX, q, cfg,
			  &cfg->tx_frames, &cfg->tx_usecs);
		ring_maps(c->maps, &qp->rx.r, VNET_DIR_RX, q, cfg,
			  &cfg->rx_frames, &cfg->rx_usecs);
	}
	if (c->limit) {
		qp->tx.r.limit = &c->limit[VNET_DIR_TX];
		qp->rx.r.limit = &c->limit[VNET_DIR_RX];
	}
	pthread_mutex_init(&qp->lock, NULL);
	/* vnetd_qp_cmd()'s deadlines are CLOCK_MONOTONIC */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&qp->cond, &ca);
	pthread_condattr_destroy(&ca);

	ret = arrays_map(qp);
	if (ret)
		goto err;
	ret = -ENOMEM;
	/* the RX slots: touched only as far as frames reach */
	buf = mmap(NULL, (size_t)VNETD_RX_BURST * VNETD_RX_SLOT,
		   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		goto err;
	qp->io.slots = buf;

	ret = qp_fds_init(qp);
	if (ret)
		goto err;
	return 0;

err:
	pr_err(c, "queue pair %u: %s", q, strerror(-ret));
	qp_free(qp);
	return ret;
}

int vnetd_qps_init(struct vnetd_qp *qp, unsigned int n,
		   const struct vnetd_qps_cfg *c)
{
	unsigned int q, i;
	int ret;

	for (q = 0; q < n; q++) {
		ret = qp_init(&qp[q], q, c);
		if (ret) {
			for (i = 0; i < q; i++)
				qp_free(&qp[i]);
			return ret;
		}
	}
	return 0;
}

void vnetd_qps_free(struct vnetd_qp *qp, unsigned int n)
{
	unsigned int q;

	for (q = 0; q < n; q++)
		qp_free(&qp[q]);
}
