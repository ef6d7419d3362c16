// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The virtio-net device on top of the vhost-user library: the features it
 * offers, what follows from the negotiated ones (tap header size and
 * offloads), RARP announcements, and the queue-pair threads.
 *
 * Every vhost_dev_ops callback runs on the control thread.  queue_start
 * and queue_stop hand a ring to its queue pair's thread and take it back
 * with a synchronous command: the control thread posts it in the pair's
 * mailbox, wakes the thread through an eventfd and waits until the thread
 * has applied it between two bursts.  When queue_stop returns, the thread
 * no longer touches the ring or guest memory through it, every chain it
 * popped was pushed or rewound, and what it owed the guest was signalled:
 * the library may then unmap memory or answer GET_VRING_BASE.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <linux/if_ether.h>
#include <linux/if_tun.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "vnetd.h"

static struct vnetd_port *dev_port(struct vhost_dev *dev)
{
	return dev->priv;
}

static struct vnetd_qp *vq_qp(struct vnetd_port *p, struct vhost_vq *vq)
{
	unsigned int q = vq->index / 2;

	return q < p->nr_qp ? &p->qp[q] : NULL;
}

static bool vq_is_rx(const struct vhost_vq *vq)
{
	return !(vq->index & 1);
}

/* --- queue-pair thread ------------------------------------------------ */

/* Add FD to (ON) or remove it from the thread's epoll set; *STATE tracks. */
void vnetd_epoll_set(struct vnetd_qp *qp, int fd, uint32_t tag, bool on,
		     bool *state)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	if (on == *state || fd < 0)
		return;
	if (epoll_ctl(qp->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd,
		      &ev)) {
		pr_err(qp->port, "queue pair %u: epoll: %s", qp->index,
		       strerror(errno));
		return;
	}
	*state = on;
}

/* Poll the tap queue for frames (ON) or leave them queued in tun. */
void vnetd_tap_arm(struct vnetd_qp *qp, bool on)
{
	vnetd_epoll_set(qp, qp->tap_fd, VNETD_EV_TAP, on, &qp->tap_armed);
}

static void polling_update(struct vnetd_qp *qp)
{
	qp->polling = (qp->tx && !qp->tx_dead && vhost_vq_kick_fd(qp->tx) < 0) ||
		      (qp->rx && !qp->rx_dead && vhost_vq_kick_fd(qp->rx) < 0);
}

static void ring_start(struct vnetd_qp *qp, struct vhost_vq *vq)
{
	struct vnetd_port *p = qp->port;

	/* features, hence the header, change only while every ring is stopped */
	qp->hdr_len = p->hdr_len;
	qp->mrg = p->mrg;
	if (vq_is_rx(vq)) {
		qp->rx = vq;
		qp->rx_dead = false;
		vnetd_coal_reset(&qp->rx_coal);
		qp->rx_coal.mark = VNETD_LOAD(qp->rx_qs->push);
		vnetd_epoll_set(qp, vhost_vq_kick_fd(vq), VNETD_EV_RX_KICK, true,
				&qp->rx_kick_on);
		vnetd_tap_arm(qp, true);
		qp->rx_more = true;
		/*
		 * Steering follows the RX ring, from this thread only, so that
		 * start, stop and a break are applied in the order they happen.
		 */
		vnetd_steer_update(p, qp, true);
	} else {
		qp->tx = vq;
		qp->tx_dead = false;
		vnetd_coal_reset(&qp->tx_coal);
		vnetd_epoll_set(qp, vhost_vq_kick_fd(vq), VNETD_EV_TX_KICK, true,
				&qp->tx_kick_on);
		/* chains may be waiting without a kick: look at once */
		qp->tx_more = true;
	}
	polling_update(qp);
}

static void ring_stop(struct vnetd_qp *qp, struct vhost_vq *vq)
{
	if (vq_is_rx(vq)) {
		if (qp->rx != vq)
			return;
		/*
		 * What was delivered and not signalled yet is signalled now
		 * (on the call fd about to be replaced, when that is why the
		 * ring stops); the library refuses on a broken ring.
		 */
		if (qp->rx_coal.pending)
			vnetd_coal_flush(qp, VNET_DIR_RX, NULL);
		vnetd_coal_reset(&qp->rx_coal);
		vnetd_epoll_set(qp, vhost_vq_kick_fd(vq), VNETD_EV_RX_KICK, false,
				&qp->rx_kick_on);
		/* frames read from the tap wait in the bounce slots */
		vnetd_tap_arm(qp, false);
		vnetd_steer_update(qp->port, qp, false);
		qp->rx = NULL;
		qp->rx_more = false;
	} else {
		if (qp->tx != vq)
			return;
		if (qp->tx_coal.pending)
			vnetd_coal_flush(qp, VNET_DIR_TX, NULL);
		vnetd_coal_reset(&qp->tx_coal);
		vnetd_epoll_set(qp, vhost_vq_kick_fd(vq), VNETD_EV_TX_KICK, false,
				&qp->tx_kick_on);
		qp->tx = NULL;
		qp->tx_more = false;
	}
	polling_update(qp);
}

/* Apply the command in the mailbox; true: the thread must exit. */
static bool mailbox(struct vnetd_qp *qp)
{
	enum vnetd_cmd cmd;
	uint64_t v;

	if (read(qp->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		pr_err(qp->port, "queue pair %u: wake eventfd: %s", qp->index,
		       strerror(errno));
	pthread_mutex_lock(&qp->lock);
	cmd = qp->cmd;
	switch (cmd) {
	case VNETD_CMD_START:
		ring_start(qp, qp->cmd_vq);
		break;
	case VNETD_CMD_STOP:
		ring_stop(qp, qp->cmd_vq);
		break;
	case VNETD_CMD_QUIT:
		if (qp->tx)
			ring_stop(qp, qp->tx);
		if (qp->rx)
			ring_stop(qp, qp->rx);
		break;
	case VNETD_CMD_NONE:
		break;
	}
	if (cmd != VNETD_CMD_NONE) {
		qp->cmd = VNETD_CMD_NONE;
		qp->cmd_done = true;
		pthread_cond_broadcast(&qp->cond);
	}
	pthread_mutex_unlock(&qp->lock);
	return cmd == VNETD_CMD_QUIT;
}

/*
 * A queue thread waits for nothing but its epoll set, with one exception
 * a frontend can force: a read or write of its kick, call or error fd
 * after it cleared O_NONBLOCK on its (shared) eventfd and emptied or
 * filled it (vhost_user.c, ring_fd_own()).  VNETD_SIG_WAKE, unblocked in
 * the queue threads only and handled without SA_RESTART, makes that call
 * return EINTR; the library then leaves the fd alone.
 */
#define VNETD_SIG_WAKE SIGURG
#define VNETD_CMD_SLICE_MS 200	/* interrupt a held thread after this */
#define VNETD_CMD_WARN_MS 5000	/* then say it loudly, every this long */

static void sig_wake(int sig)
{
	(void)sig;
}

/*
 * Interrupt QP's thread if it has been inside a frontend-fd syscall since
 * the last look (the same odd count twice).  Control thread.
 */
static bool qp_unstick(struct vnetd_qp *qp)
{
	struct vnetd_port *p = qp->port;
	bool held = false;
	unsigned int i;

	if (!qp->thread_ok || !p->dev_ok)
		return false;
	for (i = 0; i < 2; i++) {
		struct vhost_vq *vq = vhost_dev_vq(&p->dev, 2 * qp->index + i);
		unsigned int b = vhost_vq_fd_busy(vq);

		if ((b & 1) && b == qp->fd_busy_seen[i]) {
			pr_warn(p, "queue pair %u: held for %d ms or more in a read or write of vq %u's kick, call or error fd (the frontend made it blocking): interrupted",
				qp->index, VNETD_CMD_SLICE_MS, vq->index);
			held = true;
		}
		qp->fd_busy_seen[i] = b;
	}
	if (held)
		pthread_kill(qp->thread, VNETD_SIG_WAKE);
	return held;
}

/* Control thread, periodically: no frontend holds a queue thread for long. */
void vnetd_watchdog(struct vnetd_port *p)
{
	unsigned int q;

	for (q = 0; q < p->nr_qp; q++)
		qp_unstick(&p->qp[q]);
}

/*
 * Control thread: post CMD for VQ and wait until the thread applied it.
 * The wait is in slices; after each, a thread held by a frontend fd is
 * interrupted (the only way it can fail to answer), so the wait ends.
 */
static void qp_cmd(struct vnetd_qp *qp, enum vnetd_cmd cmd,
		   struct vhost_vq *vq)
{
	long long waited = 0;
	struct timespec ts;
	uint64_t one = 1;

	pthread_mutex_lock(&qp->lock);
	qp->cmd = cmd;
	qp->cmd_vq = vq;
	qp->cmd_done = false;
	pthread_mutex_unlock(&qp->lock);
	if (write(qp->wake_fd, &one, sizeof(one)) < 0)
		pr_err(qp->port, "queue pair %u: wake eventfd: %s", qp->index,
		       strerror(errno));
	pthread_mutex_lock(&qp->lock);
	while (!qp->cmd_done) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += VNETD_CMD_SLICE_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (pthread_cond_timedwait(&qp->cond, &qp->lock, &ts) !=
		    ETIMEDOUT)
			continue;
		waited += VNETD_CMD_SLICE_MS;
		pthread_mutex_unlock(&qp->lock);
		/* a first look records the count; the next one acts */
		if (!qp_unstick(qp) && !(waited % VNETD_CMD_WARN_MS))
			pr_err(qp->port, "queue pair %u: no answer to a ring command for %lld ms",
			       qp->index, waited);
		pthread_mutex_lock(&qp->lock);
	}
	pthread_mutex_unlock(&qp->lock);
}

/*
 * The tap queue cannot be read (ERR: -errno, 0 for EPOLLERR/EPOLLHUP: the
 * device was deleted under us): stop reading it and steer away from it.
 */
void vnetd_tap_gone(struct vnetd_qp *qp, int err)
{
	vnetd_tap_arm(qp, false);
	if (!qp->rx || qp->rx_dead)
		return;
	qp->rx_st->drops[VNET_DROP_TAP]++;
	pr_err(qp->port, "queue pair %u: tap %s queue %u: %s; no longer read",
	       qp->index, qp->port->cfg.tap, qp->index,
	       err ? strerror(-err) : "error or hang-up (device deleted?)");
	qp->rx_dead = true;
	vnetd_steer_update(qp->port, qp, false);
}

static void affinity_set(struct vnetd_qp *qp)
{
	cpu_set_t set;
	int ret;

	if (qp->cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(qp->cpu, &set);
	ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ret)
		pr_warn(qp->port, "queue pair %u: cannot pin to CPU %d: %s",
			qp->index, qp->cpu, strerror(ret));
	else
		pr_dbg(qp->port, "queue pair %u: pinned to CPU %d", qp->index,
		       qp->cpu);
}

static void *qp_thread(void *arg)
{
	struct vnetd_qp *qp = arg;
	struct vnetd_port *p = qp->port;
	struct epoll_event ev[8];
	unsigned int epoll_err = 0;
	sigset_t wake;
	char name[16];
	int n, i, timeout, ret;

	snprintf(name, sizeof(name), "vnetd-q%u", qp->index);
	pthread_setname_np(pthread_self(), name);
	sigemptyset(&wake);
	sigaddset(&wake, VNETD_SIG_WAKE);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	affinity_set(qp);
	if (!p->no_uring) {
		ret = vnetd_uring_init(qp);
		if (ret && qp->index == 0)
			pr_info(p, "io_uring unavailable (%s): plain read/writev",
				strerror(-ret));
	}

	for (;;) {
		timeout = qp->tx_more || qp->rx_more ? 0 :
			  qp->polling ? 1 : -1;
		n = epoll_wait(qp->epfd, ev, sizeof(ev) / sizeof(ev[0]),
			       timeout);
		if (n < 0) {
			/*
			 * Cannot happen with a valid epoll fd; the thread must
			 * stay to answer the control thread's commands.
			 */
			if (errno != EINTR && !epoll_err++)
				pr_err(p, "queue pair %u: epoll_wait: %s",
				       qp->index, strerror(errno));
			if (errno != EINTR)
				usleep(1000);
			continue;
		}
		if (!n && qp->polling) {
			/* a ring without kick fd: look every millisecond */
			if (qp->tx && vhost_vq_kick_fd(qp->tx) < 0)
				qp->tx_more = true;
			if (qp->rx && vhost_vq_kick_fd(qp->rx) < 0)
				qp->rx_more = true;
		}
		for (i = 0; i < n; i++) {
			switch (ev[i].data.u32) {
			case VNETD_EV_WAKE:
				if (mailbox(qp))
					goto out;
				break;
			case VNETD_EV_TX_KICK:
				if (qp->tx) {
					vhost_vq_kick_drain(qp->tx);
					qp->tx_more = true;
				}
				break;
			case VNETD_EV_RX_KICK:
				if (qp->rx) {
					/* buffers: read the tap again */
					vhost_vq_kick_drain(qp->rx);
					if (!qp->rx_dead)
						vnetd_tap_arm(qp, true);
					qp->rx_more = true;
				}
				break;
			case VNETD_EV_TAP:
				if (ev[i].events & (EPOLLERR | EPOLLHUP))
					vnetd_tap_gone(qp, 0);
				else
					qp->rx_more = true;
				break;
			case VNETD_EV_TX_TIMER:
				vnetd_coal_timer(qp, VNET_DIR_TX);
				break;
			case VNETD_EV_RX_TIMER:
				vnetd_coal_timer(qp, VNET_DIR_RX);
				break;
			}
		}
		if (qp->tx_more)
			qp->tx_more = qp->tx && !qp->tx_dead && vnetd_tx_run(qp);
		if (qp->rx_more)
			qp->rx_more = qp->rx && !qp->rx_dead && vnetd_rx_run(qp);
	}
out:
	vnetd_uring_exit(qp);
	return NULL;
}

/* --- vhost_dev_ops ---------------------------------------------------- */

#define F(bit) (1ULL << (bit))

static uint64_t net_get_features(struct vhost_dev *dev)
{
	struct vnetd_port *p = dev_port(dev);
	uint64_t f;

	f = F(VIRTIO_F_VERSION_1) | F(VIRTIO_RING_F_EVENT_IDX) |
	    F(VIRTIO_RING_F_INDIRECT_DESC) | F(VIRTIO_NET_F_MRG_RXBUF) |
	    F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) |
	    F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_HOST_TSO6) |
	    F(VIRTIO_NET_F_HOST_ECN) | F(VIRTIO_NET_F_GUEST_TSO4) |
	    F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN) |
	    F(VIRTIO_NET_F_GUEST_ANNOUNCE);
	if (p->nr_qp > 1)
		f |= F(VIRTIO_NET_F_MQ);
	if (p->packed)
		f |= F(VIRTIO_F_RING_PACKED);
	return f;
}

static int net_set_features(struct vhost_dev *dev, uint64_t features)
{
	return vnetd_tap_set_features(dev_port(dev), features);
}

/* vhost-user-net counts queue pairs, not rings */
static uint64_t net_get_queue_num(struct vhost_dev *dev)
{
	return dev_port(dev)->nr_qp;
}

static int net_queue_start(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct vnetd_port *p = dev_port(dev);
	struct vnetd_qp *qp = vq_qp(p, vq);

	if (!qp || !qp->thread_ok)
		return -EINVAL;
	qp_cmd(qp, VNETD_CMD_START, vq);
	pr_dbg(p, "queue pair %u: %s ring (vq %u) started", qp->index,
	       vq_is_rx(vq) ? "RX" : "TX", vq->index);
	return 0;
}

static void net_queue_stop(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct vnetd_port *p = dev_port(dev);
	struct vnetd_qp *qp = vq_qp(p, vq);

	if (!qp || !qp->thread_ok)
		return;
	qp_cmd(qp, VNETD_CMD_STOP, vq);
	pr_dbg(p, "queue pair %u: %s ring (vq %u) stopped", qp->index,
	       vq_is_rx(vq) ? "RX" : "TX", vq->index);
}

/* Rings are stopped around it and re-translate their addresses at start. */
static void net_mem_changed(struct vhost_dev *dev)
{
	pr_dbg(dev_port(dev), "guest memory: %u region%s", dev->mem.nregions,
	       dev->mem.nregions == 1 ? "" : "s");
}

/*
 * SEND_RARP (after a migration): a RARP "reverse request" from the guest's
 * MAC, broadcast, as QEMU's qemu_announce_self() sends it, written into
 * the tap as if the guest sent it, so that bridges and switches learn
 * where the MAC now lives.
 */
static int net_send_rarp(struct vhost_dev *dev, const uint8_t mac[6])
{
	struct vnetd_port *p = dev_port(dev);
	uint8_t hdr[sizeof(struct virtio_net_hdr_mrg_rxbuf)] = {};
	uint8_t f[ETH_ZLEN] = {};
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = p->hdr_len ? p->hdr_len : 10 },
		{ .iov_base = f, .iov_len = sizeof(f) },
	};
	uint16_t v;

	memset(f, 0xff, ETH_ALEN);			/* broadcast */
	memcpy(f + ETH_ALEN, mac, ETH_ALEN);
	v = htons(ETH_P_RARP);
	memcpy(f + 12, &v, 2);
	v = htons(1);					/* Ethernet */
	memcpy(f + 14, &v, 2);
	v = htons(ETH_P_IP);
	memcpy(f + 16, &v, 2);
	f[18] = ETH_ALEN;
	f[19] = 4;
	v = htons(3);					/* reverse request */
	memcpy(f + 20, &v, 2);
	memcpy(f + 22, mac, ETH_ALEN);			/* sender, 0.0.0.0 */
	memcpy(f + 32, mac, ETH_ALEN);			/* target, 0.0.0.0 */
	if (writev(p->qp[0].tap_fd, iov, 2) < 0) {
		pr_err(p, "RARP for %02x:%02x:%02x:%02x:%02x:%02x: %s", mac[0],
		       mac[1], mac[2], mac[3], mac[4], mac[5], strerror(errno));
		return -errno;
	}
	pr_info(p, "RARP sent for %02x:%02x:%02x:%02x:%02x:%02x", mac[0],
		mac[1], mac[2], mac[3], mac[4], mac[5]);
	return 0;
}

static void net_disconnected(struct vhost_dev *dev)
{
	struct vnetd_port *p = dev_port(dev);

	/* the next guest negotiates afresh: nothing towards it meanwhile */
	if (ioctl(p->qp[0].tap_fd, TUNSETOFFLOAD, 0))
		pr_dbg(p, "TUNSETOFFLOAD 0: %s", strerror(errno));
	p->features = 0;
}

const struct vhost_dev_ops vnetd_net_ops = {
	.get_features = net_get_features,
	.set_features = net_set_features,
	.get_queue_num = net_get_queue_num,
	.queue_start = net_queue_start,
	.queue_stop = net_queue_stop,
	.mem_changed = net_mem_changed,
	.send_rarp = net_send_rarp,
	.disconnected = net_disconnected,
};

/* --- per port --------------------------------------------------------- */

static int qp_epoll_add(struct vnetd_qp *qp, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(qp->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void qp_free(struct vnetd_qp *qp)
{
	if (qp->rx_buf)
		munmap(qp->rx_buf, (size_t)VNETD_RX_BURST * VNETD_RX_SLOT);
	free(qp->rx_elems);
	free(qp->tx_elems);
	if (qp->rx_coal.timer_fd >= 0)
		close(qp->rx_coal.timer_fd);
	if (qp->tx_coal.timer_fd >= 0)
		close(qp->tx_coal.timer_fd);
	if (qp->wake_fd >= 0)
		close(qp->wake_fd);
	if (qp->epfd >= 0)
		close(qp->epfd);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->lock);
	qp->rx_buf = NULL;
	qp->rx_elems = qp->tx_elems = NULL;
	qp->rx_coal.timer_fd = qp->tx_coal.timer_fd = -1;
	qp->wake_fd = qp->epfd = -1;
}

static int qp_init(struct vnetd_port *p, unsigned int q)
{
	struct vnetd_qp *qp = &p->qp[q];
	pthread_condattr_t ca;
	void *buf;
	int ret;

	qp->port = p;
	qp->index = q;
	qp->cpu = p->cfg.ncpus ? p->cfg.cpus[q % p->cfg.ncpus] : -1;
	qp->rx_want = 1;
	qp->epfd = qp->wake_fd = -1;
	qp->tx_coal.timer_fd = qp->rx_coal.timer_fd = -1;
	pthread_mutex_init(&qp->lock, NULL);
	/* qp_cmd()'s deadlines are CLOCK_MONOTONIC */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&qp->cond, &ca);
	pthread_condattr_destroy(&ca);

	ret = -ENOMEM;
	qp->tx_elems = calloc(VNETD_TX_BURST_MAX, sizeof(*qp->tx_elems));
	qp->rx_elems = calloc(VNETD_RX_ELEMS, sizeof(*qp->rx_elems));
	if (!qp->tx_elems || !qp->rx_elems)
		goto err;
	/* the bounce slots: touched only as far as frames reach */
	buf = mmap(NULL, (size_t)VNETD_RX_BURST * VNETD_RX_SLOT,
		   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		goto err;
	qp->rx_buf = buf;

	qp->epfd = epoll_create1(EPOLL_CLOEXEC);
	qp->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	qp->tx_coal.timer_fd = timerfd_create(CLOCK_MONOTONIC,
					      TFD_NONBLOCK | TFD_CLOEXEC);
	qp->rx_coal.timer_fd = timerfd_create(CLOCK_MONOTONIC,
					      TFD_NONBLOCK | TFD_CLOEXEC);
	if (qp->epfd < 0 || qp->wake_fd < 0 || qp->tx_coal.timer_fd < 0 ||
	    qp->rx_coal.timer_fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = qp_epoll_add(qp, qp->wake_fd, VNETD_EV_WAKE);
	if (!ret)
		ret = qp_epoll_add(qp, qp->tx_coal.timer_fd, VNETD_EV_TX_TIMER);
	if (!ret)
		ret = qp_epoll_add(qp, qp->rx_coal.timer_fd, VNETD_EV_RX_TIMER);
	if (ret)
		goto err;
	return 0;

err:
	pr_err(p, "queue pair %u: %s", q, strerror(-ret));
	qp_free(qp);
	return ret;
}

static void qp_quit(struct vnetd_qp *qp)
{
	if (!qp->thread_ok)
		return;
	qp_cmd(qp, VNETD_CMD_QUIT, NULL);
	pthread_join(qp->thread, NULL);
	qp->thread_ok = false;
}

/*
 * The device and its queue-pair threads (the tap and the maps are open).
 * Threads start with every signal blocked: SIGINT/SIGTERM are the control
 * thread's (signalfd).
 */
int vnetd_port_start(struct vnetd_port *p)
{
	struct sigaction sa = { .sa_handler = sig_wake };
	sigset_t all, old;
	unsigned int q, i;
	int ret;

	/* no SA_RESTART: the held read or write returns EINTR */
	sigemptyset(&sa.sa_mask);
	if (sigaction(VNETD_SIG_WAKE, &sa, NULL)) {
		ret = -errno;
		pr_err(p, "sigaction: %s", strerror(errno));
		return ret;
	}

	for (q = 0; q < p->nr_qp; q++) {
		ret = qp_init(p, q);
		if (ret)
			goto err_qp;
	}
	ret = vhost_dev_init(&p->dev, p->name, 2 * p->nr_qp, &vnetd_net_ops,
			     p);
	if (ret) {
		pr_err(p, "vhost device: %s", strerror(-ret));
		goto err_qp;
	}
	p->dev_ok = true;
	for (q = 0; q < p->nr_qp; q++) {
		/* the library's counters go to the pinned map too */
		vhost_vq_set_stats(vhost_dev_vq(&p->dev, 2 * q), p->qp[q].rx_st);
		vhost_vq_set_stats(vhost_dev_vq(&p->dev, 2 * q + 1),
				   p->qp[q].tx_st);
	}

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (q = 0; q < p->nr_qp; q++) {
		ret = -pthread_create(&p->qp[q].thread, NULL, qp_thread,
				      &p->qp[q]);
		if (ret) {
			pr_err(p, "queue pair %u: thread: %s", q,
			       strerror(-ret));
			break;
		}
		p->qp[q].thread_ok = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto err_threads;
	return 0;

err_threads:
	for (i = 0; i < q; i++)
		qp_quit(&p->qp[i]);
	vhost_dev_cleanup(&p->dev);
	p->dev_ok = false;
	q = p->nr_qp; /* every pair was initialised */
err_qp:
	for (i = 0; i < q; i++)
		qp_free(&p->qp[i]);
	return ret;
}

/* After the server let go of the device (every ring stopped). */
void vnetd_port_stop(struct vnetd_port *p)
{
	unsigned int q;

	if (p->dev_ok) {
		vhost_dev_cleanup(&p->dev);
		p->dev_ok = false;
	}
	for (q = 0; q < p->nr_qp; q++)
		qp_quit(&p->qp[q]);
	for (q = 0; q < p->nr_qp; q++)
		qp_free(&p->qp[q]);
}
