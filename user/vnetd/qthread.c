// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The queue-pair threads.  Each serves the RX and TX rings of one queue
 * pair and one tap queue: it waits on its epoll set (kicks, the tap,
 * coalescing timers, the mailbox), runs the burst engines (tx.c, rx.c)
 * and acts on what they report.  It is the only code that adds fds to or
 * removes them from that set.
 *
 * The control thread hands a ring over (VNETD_CMD_START) and takes it
 * back (VNETD_CMD_STOP) through the mailbox with vnetd_qp_cmd() (in
 * mailbox.c, with the thread's start and stop), which
 * waits until the thread has applied the command between two bursts.
 * When a STOP returns, the thread no longer touches the ring or guest
 * memory through it, every chain it popped was pushed or rewound, and
 * what it owed the guest was signalled: the library may then unmap
 * memory or answer GET_VRING_BASE.
 *
 * Everything the thread does to guest memory (the bursts, a coalescing
 * timer's signal decision, the flush at a stop) runs under a recovery
 * point (user/vhost/fault.h): a frontend that truncates its memory fd
 * under a running ring makes the access fault, and the pair's rings
 * break (qp_fault()) instead of the whole daemon dying of SIGBUS.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/timerfd.h>

#include "vnetd.h"
#include "fault.h"
#include "sandbox.h"

/* epoll tags of a queue pair's thread */
enum qp_ev {
	EV_WAKE,
	EV_TX_KICK,
	EV_RX_KICK,
	EV_TAP,
	EV_TX_TIMER,
	EV_RX_TIMER,
};

/* --- the epoll set ---------------------------------------------------- */

/* Add FD to (ON) or remove it from the thread's epoll set; *STATE tracks. */
static void epoll_set(struct vnetd_qp *qp, int fd, uint32_t tag, bool on,
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
void vnetd_qp_tap_arm(struct vnetd_qp *qp, bool on)
{
	epoll_set(qp, qp->io.fd, EV_TAP, on, &qp->tap_armed);
}

static void kick_arm(struct vnetd_ring *r, bool on)
{
	epoll_set(r->qp, vhost_vq_kick_fd(r->vq), r->ev_kick, on, &r->kick_on);
}

static void polling_update(struct vnetd_qp *qp)
{
	qp->polling = (qp->tx.r.vq && !qp->tx.r.dead &&
		       vhost_vq_kick_fd(qp->tx.r.vq) < 0) ||
		      (qp->rx.r.vq && !qp->rx.r.dead &&
		       vhost_vq_kick_fd(qp->rx.r.vq) < 0);
}

/* --- the library's counters --------------------------------------------- */

/* Add what the vhost library counted on R's ring since the last look. */
static void ring_stats_sync(struct vnetd_ring *r)
{
	const struct vhost_vq_stats *s;

	if (!r->vq)
		return;
	s = &r->vq->stats;
	r->st->kicks += s->kicks - r->seen.kicks;
	r->st->notify_sent += s->calls - r->seen.calls;
	r->st->notify_suppressed += s->calls_suppressed -
				    r->seen.calls_suppressed;
	r->st->drops[VNET_DROP_BAD_DESC] += s->bad_chains - r->seen.bad_chains;
	r->seen = *s;
}

/* --- rings: start, stop, break ------------------------------------------ */

static bool vq_is_rx(const struct vhost_vq *vq)
{
	return !(vq->index & 1);
}

static void ring_start(struct vnetd_qp *qp, struct vhost_vq *vq)
{
	struct vnetd_port *p = qp->port;
	struct vnetd_ring *r = vq_is_rx(vq) ? &qp->rx.r : &qp->tx.r;

	/* features, hence the header, change only while every ring is stopped */
	qp->hdr_len = p->hdr_len;
	qp->mrg = p->mrg;
	r->vq = vq;
	r->dead = false;
	r->seen = vq->stats;
	vnetd_coal_reset(r);
	kick_arm(r, true);
	/* chains or frames may be waiting without a kick: look at once */
	r->more = true;
	if (r == &qp->rx.r) {
		qp->rx.push_mark = VNETD_LOAD(r->qs->push);
		qp->rx.ack_mark = VNETD_LOAD(r->qs->ack);
		vnetd_qp_tap_arm(qp, true);
		/*
		 * Steering follows the RX ring, from this thread only, so that
		 * start, stop and a break are applied in the order they happen.
		 */
		vnetd_steer_update(p, qp, true);
	}
	polling_update(qp);
}

static bool qp_guarded(struct vnetd_qp *qp,
		       void (*fn)(struct vnetd_qp *, struct vnetd_ring *),
		       struct vnetd_ring *r);
static void coal_flush(struct vnetd_qp *qp, struct vnetd_ring *r);

static void ring_stop(struct vnetd_qp *qp, struct vhost_vq *vq)
{
	struct vnetd_ring *r = vq_is_rx(vq) ? &qp->rx.r : &qp->tx.r;

	if (r->vq != vq)
		return;
	/*
	 * What was delivered and not signalled yet is signalled now (on the
	 * call fd about to be replaced, when that is why the ring stops);
	 * the library refuses on a broken ring.  The decision reads guest
	 * memory: a fault there breaks the pair, and the stop goes on.
	 */
	if (r->coal.rule.pending)
		qp_guarded(qp, coal_flush, r);
	vnetd_coal_reset(r);
	kick_arm(r, false);
	ring_stats_sync(r);
	if (r == &qp->rx.r) {
		/* frames read from the tap wait in the slots */
		vnetd_qp_tap_arm(qp, false);
		vnetd_steer_update(qp->port, qp, false);
	}
	r->vq = NULL;
	r->more = false;
	polling_update(qp);
}

/* The ring broke (the library logged why): leave it alone until restarted. */
static void ring_broken(struct vnetd_qp *qp, struct vnetd_ring *r)
{
	if (r->dead)
		return;
	r->dead = true;
	r->more = false;
	r->st->drops[VNET_DROP_BROKEN]++;
	kick_arm(r, false);
	vnetd_coal_reset(r);
	if (r == &qp->rx.r) {
		vnetd_qp_tap_arm(qp, false);
		/* new flows go to the pairs that still receive */
		vnetd_steer_update(qp->port, qp, false);
	}
	pr_dbg(qp->port, "queue pair %u: %s ring (vq %u) broken: %s; not served until the frontend restarts it",
	       qp->index, r == &qp->rx.r ? "RX" : "TX", r->vq->index,
	       r->vq->broken_reason);
}

/*
 * The tap queue cannot be read (ERR: -errno, 0 for EPOLLERR/EPOLLHUP: the
 * device was deleted under us): stop reading it and steer away from it.
 */
static void tap_gone(struct vnetd_qp *qp, int err)
{
	struct vnetd_ring *r = &qp->rx.r;

	vnetd_qp_tap_arm(qp, false);
	r->more = false;
	if (!r->vq || r->dead)
		return;
	r->st->drops[VNET_DROP_TAP]++;
	pr_err(qp->port, "queue pair %u: tap %s queue %u: %s; no longer read",
	       qp->index, qp->port->cfg.tap, qp->index,
	       err ? strerror(-err) : "error or hang-up (device deleted?)");
	r->dead = true;
	vnetd_steer_update(qp->port, qp, false);
}

/* --- guest memory that faults ---------------------------------------------- */

/*
 * An access to the port's guest memory faulted (F): the frontend shrank a
 * region's fd under the running rings.  The section was cut short at an
 * arbitrary point, so neither ring's state (indices, chains popped and
 * not pushed) nor the frames read for the guest can be trusted: both
 * rings break (logged once each, with the cause and the way out) and
 * are left alone until the frontend restarts them; the frames waiting
 * in the slots are dropped (drops[VNET_DROP_BROKEN]).
 */
static void qp_fault(struct vnetd_qp *qp, const struct vhost_fault *f)
{
	struct vnetd_ring *rings[2] = { &qp->tx.r, &qp->rx.r };
	char what[200];
	unsigned int i;

	vhost_fault_describe(f, what, sizeof(what));
	if (qp->rx.count && qp->rx.r.st)
		qp->rx.r.st->drops[VNET_DROP_BROKEN] += qp->rx.count;
	qp->rx.count = 0;
	qp->rx.head = 0;
	for (i = 0; i < 2; i++) {
		struct vnetd_ring *r = rings[i];

		if (!r->vq || r->dead)
			continue;
		vhost_vq_set_broken(r->vq, "%s; the ring is stopped until the frontend restarts it",
				    what);
		ring_broken(qp, r);
	}
}

/* the pair's guest memory: its rings' device's table */
static const struct vhost_mem *qp_mem(const struct vnetd_qp *qp)
{
	return qp->tx.r.vq ? qp->tx.r.vq->mem :
	       qp->rx.r.vq ? qp->rx.r.vq->mem : NULL;
}

/*
 * FN(QP, R) under a recovery point for the pair's guest memory: false
 * when it faulted (the pair's rings are broken then).  The table cannot
 * change meanwhile: the control thread changes it only after this thread
 * stopped the rings (mailbox).  FN takes no lock around an access to
 * guest memory (fault.h).
 */
static bool qp_guarded(struct vnetd_qp *qp,
		       void (*fn)(struct vnetd_qp *, struct vnetd_ring *),
		       struct vnetd_ring *r)
{
	const struct vhost_mem *mem = qp_mem(qp);
	struct vhost_fault f;

	if (!mem) {
		fn(qp, r);
		return true;
	}
	if (!vhost_fault_try(&f, mem)) {
		qp_fault(qp, &f);
		return false;
	}
	fn(qp, r);
	vhost_fault_end(&f);
	return true;
}

static void coal_timer(struct vnetd_qp *qp, struct vnetd_ring *r)
{
	(void)qp;
	vnetd_coal_timer(r);
}

static void coal_flush(struct vnetd_qp *qp, struct vnetd_ring *r)
{
	(void)qp;
	vnetd_coal_flush(r);
}

/* --- running the engines -------------------------------------------------- */

/* Run the bursts that have work and act on what they report. */
static void qp_bursts(struct vnetd_qp *qp, struct vnetd_ring *unused)
{
	struct vnetd_ring *t = &qp->tx.r, *r = &qp->rx.r;

	(void)unused;

	if (t->more) {
		t->more = false;
		if (t->vq && !t->dead) {
			switch (vnetd_tx_burst(qp)) {
			case VNETD_BURST_MORE:
				t->more = true;
				break;
			case VNETD_BURST_BROKEN:
				ring_broken(qp, t);
				break;
			default:
				break;
			}
		}
	}
	if (r->more) {
		r->more = false;
		if (r->vq && !r->dead) {
			switch (vnetd_rx_burst(qp)) {
			case VNETD_BURST_MORE:
				r->more = true;
				break;
			case VNETD_BURST_TAP_EMPTY:
				/* tun is empty: wait until it is not */
				vnetd_qp_tap_arm(qp, true);
				break;
			case VNETD_BURST_STARVED:
				/* the guest kicks when it posts buffers */
				vnetd_qp_tap_arm(qp, false);
				break;
			case VNETD_BURST_BROKEN:
				ring_broken(qp, r);
				break;
			case VNETD_BURST_TAP_ERROR:
				tap_gone(qp, qp->rx.tap_err);
				break;
			case VNETD_BURST_IDLE:
				break;
			}
		}
	}
}

void vnetd_qp_run(struct vnetd_qp *qp)
{
	qp_guarded(qp, qp_bursts, NULL);
	ring_stats_sync(&qp->tx.r);
	ring_stats_sync(&qp->rx.r);
}

/* --- the mailbox -------------------------------------------------------- */

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
		if (qp->tx.r.vq)
			ring_stop(qp, qp->tx.r.vq);
		if (qp->rx.r.vq)
			ring_stop(qp, qp->rx.r.vq);
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

/* --- the thread ----------------------------------------------------------- */

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

/* One event of the epoll set; true: the thread must exit. */
static bool qp_event(struct vnetd_qp *qp, const struct epoll_event *ev)
{
	switch (ev->data.u32) {
	case EV_WAKE:
		return mailbox(qp);
	case EV_TX_KICK:
		if (qp->tx.r.vq) {
			vhost_vq_kick_drain(qp->tx.r.vq);
			qp->tx.r.more = true;
		}
		break;
	case EV_RX_KICK:
		if (qp->rx.r.vq) {
			/* buffers: read the tap again */
			vhost_vq_kick_drain(qp->rx.r.vq);
			if (!qp->rx.r.dead)
				vnetd_qp_tap_arm(qp, true);
			qp->rx.r.more = true;
		}
		break;
	case EV_TAP:
		if (ev->events & (EPOLLERR | EPOLLHUP))
			tap_gone(qp, 0);
		else
			qp->rx.r.more = true;
		break;
	case EV_TX_TIMER:
		qp_guarded(qp, coal_timer, &qp->tx.r);
		break;
	case EV_RX_TIMER:
		qp_guarded(qp, coal_timer, &qp->rx.r);
		break;
	}
	return false;
}

void *vnetd_qp_thread(void *arg)
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
	/*
	 * Created with every signal blocked; a blocked SIGBUS from a fault
	 * kills the process whatever its handler (fault.h needs it open).
	 */
	sigaddset(&wake, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	affinity_set(qp);
	if (!p->opts.no_uring) {
		ret = vnetd_tapio_init(&qp->io);
		if (ret && qp->index == 0)
			pr_info(p, "io_uring unavailable (%s): plain read/writev",
				strerror(-ret));
	}
	/* after the ring and the affinity: no capability, its allow-list */
	vnetd_sandbox_qp(qp);

	for (;;) {
		timeout = qp->tx.r.more || qp->rx.r.more ? 0 :
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
			if (qp->tx.r.vq && vhost_vq_kick_fd(qp->tx.r.vq) < 0)
				qp->tx.r.more = true;
			if (qp->rx.r.vq && vhost_vq_kick_fd(qp->rx.r.vq) < 0)
				qp->rx.r.more = true;
		}
		for (i = 0; i < n; i++)
			if (qp_event(qp, &ev[i]))
				goto out;
		vnetd_qp_run(qp);
	}
out:
	vnetd_tapio_exit(&qp->io);
	return NULL;
}

/* --- per port: the pairs and their threads ------------------------------ */

static int epoll_add(struct vnetd_qp *qp, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(qp->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void qp_free(struct vnetd_qp *qp)
{
	if (qp->io.slots)
		munmap(qp->io.slots, (size_t)VNETD_RX_BURST * VNETD_RX_SLOT);
	free(qp->rx.r.elems);
	free(qp->tx.r.elems);
	free(qp->rx.iov);
	if (qp->rx.r.coal.timer_fd >= 0)
		close(qp->rx.r.coal.timer_fd);
	if (qp->tx.r.coal.timer_fd >= 0)
		close(qp->tx.r.coal.timer_fd);
	if (qp->wake_fd >= 0)
		close(qp->wake_fd);
	if (qp->epfd >= 0)
		close(qp->epfd);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->lock);
	qp->io.slots = NULL;
	qp->rx.r.elems = qp->tx.r.elems = NULL;
	qp->rx.iov = NULL;
	qp->rx.r.coal.timer_fd = qp->tx.r.coal.timer_fd = -1;
	qp->wake_fd = qp->epfd = -1;
}

/* What a ring is: direction, epoll tags, config flags, its pair. */
static void ring_init(struct vnetd_qp *qp, struct vnetd_ring *r, int dir)
{
	bool tx = dir == VNET_DIR_TX;

	r->qp = qp;
	r->dir = dir;
	r->ev_kick = tx ? EV_TX_KICK : EV_RX_KICK;
	r->ev_timer = tx ? EV_TX_TIMER : EV_RX_TIMER;
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
	r->coal.timer_fd = -1;
}

/* environment NAME as a number, DEF when unset or not one (measurements) */
static uint32_t env_u32(const char *name, uint32_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return def;
	return (uint32_t)v;
}

static int qp_init(struct vnetd_port *p, unsigned int q)
{
	struct vnetd_qp *qp = &p->qp[q];
	pthread_condattr_t ca;
	void *buf;
	int ret;

	qp->port = p;
	qp->index = q;
	qp->io.qp = qp;
	qp->cpu = p->cfg.ncpus ? p->cfg.cpus[q % p->cfg.ncpus] : -1;
	qp->rx.want = 1;
	qp->rx.direct_min = env_u32("VNETD_RX_DIRECT_MIN", VNETD_RX_DIRECT_MIN);
	qp->rx.big_bursts = env_u32("VNETD_RX_BIG_BURSTS", VNETD_RX_BIG_BURSTS);
	qp->epfd = qp->wake_fd = -1;
	ring_init(qp, &qp->tx.r, VNET_DIR_TX);
	ring_init(qp, &qp->rx.r, VNET_DIR_RX);
	pthread_mutex_init(&qp->lock, NULL);
	/* vnetd_qp_cmd()'s deadlines are CLOCK_MONOTONIC */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&qp->cond, &ca);
	pthread_condattr_destroy(&ca);

	ret = -ENOMEM;
	qp->tx.r.elems = calloc(VNETD_TX_BURST_MAX, sizeof(*qp->tx.r.elems));
	qp->rx.r.elems = calloc(VNETD_RX_ELEMS, sizeof(*qp->rx.r.elems));
	qp->rx.iov = calloc((size_t)VNETD_RX_BURST * VNETD_RX_IOV,
			    sizeof(*qp->rx.iov));
	if (!qp->tx.r.elems || !qp->rx.r.elems || !qp->rx.iov)
		goto err;
	/* the RX slots: touched only as far as frames reach */
	buf = mmap(NULL, (size_t)VNETD_RX_BURST * VNETD_RX_SLOT,
		   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		goto err;
	qp->io.slots = buf;

	qp->epfd = epoll_create1(EPOLL_CLOEXEC);
	qp->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	qp->tx.r.coal.timer_fd = timerfd_create(CLOCK_MONOTONIC,
						TFD_NONBLOCK | TFD_CLOEXEC);
	qp->rx.r.coal.timer_fd = timerfd_create(CLOCK_MONOTONIC,
						TFD_NONBLOCK | TFD_CLOEXEC);
	if (qp->epfd < 0 || qp->wake_fd < 0 || qp->tx.r.coal.timer_fd < 0 ||
	    qp->rx.r.coal.timer_fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = epoll_add(qp, qp->wake_fd, EV_WAKE);
	if (!ret)
		ret = epoll_add(qp, qp->tx.r.coal.timer_fd, qp->tx.r.ev_timer);
	if (!ret)
		ret = epoll_add(qp, qp->rx.r.coal.timer_fd, qp->rx.r.ev_timer);
	if (ret)
		goto err;
	return 0;

err:
	pr_err(p, "queue pair %u: %s", q, strerror(-ret));
	qp_free(qp);
	return ret;
}

/* Every pair's state (the tap is open); no thread yet. */
int vnetd_qps_init(struct vnetd_port *p)
{
	unsigned int q, i;
	int ret;

	for (q = 0; q < p->nr_qp; q++) {
		ret = qp_init(p, q);
		if (ret) {
			for (i = 0; i < q; i++)
				qp_free(&p->qp[i]);
			return ret;
		}
	}
	return 0;
}

void vnetd_qps_free(struct vnetd_port *p)
{
	unsigned int q;

	for (q = 0; q < p->nr_qp; q++)
		qp_free(&p->qp[q]);
}
