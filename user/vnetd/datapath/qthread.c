// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The queue-pair threads.  Each serves the RX and TX rings of one queue
 * pair and one tap queue: it waits on its epoll set (kicks, the tap,
 * coalescing timers, the mailbox), runs the burst engines (tx.c, rx.c)
 * and acts on what they report.  Once qp.c built that set, this is the
 * only code that adds fds to it or removes them.
 *
 * The control thread hands a ring over (VNETD_CMD_START) and takes it
 * back (VNETD_CMD_STOP) through the mailbox, a command per ring, with
 * vnetd_qp_cmd() (in mailbox.c, with the thread's start and stop), which
 * waits until the thread has applied the command between two bursts (or
 * posts it and waits later: a hand-over's starts of every port).
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
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>

#include "fault.h"
#include "qthread.h"
#include "sandbox/sandbox.h"
#include "burst.h"
#include "tx.h"
#include "rx.h"
#include "base/util.h"
#include "coal.h"
#include "log.h"
#include "tap/tap_bpf.h"
#include "tapio.h"
#include "virtq.h"
#include "vq.h"

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
		pr_err(qp, "queue pair %u: epoll: %s", qp->index,
		       strerror(errno));
		return;
	}
	*state = on;
}

/* Poll the tap queue for frames (ON) or leave them queued in tun. */
void vnetd_qp_tap_arm(struct vnetd_qp *qp, bool on)
{
	epoll_set(qp, qp->io.fd, VNETD_EV_TAP, on, &qp->tap_armed);
}

static void kick_arm(struct vnetd_qp *qp, struct vnetd_ring *r, bool on)
{
	epoll_set(qp, vhost_vq_kick_fd(r->vq), r->ev_kick, on, &r->kick_on);
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
	struct vnetd_ring *r = vq_is_rx(vq) ? &qp->rx.r : &qp->tx.r;

	/* features, hence the header, change only while every ring is stopped */
	qp->tx.hdr_len = qp->rx.hdr_len = qp->hdr_len;
	qp->rx.mrg = qp->mrg;
	r->vq = vq;
	r->dead = false;
	r->seen = vq->stats;
	vnetd_coal_reset(r);
	kick_arm(qp, r, true);
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
		vnetd_steer_update(qp->maps, qp->index, true);
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
	 * Entries an RX signal carried get their EVENT_IDX check too.
	 */
	if (r->coal.rule.pending || r->coal.rule.carried)
		qp_guarded(qp, coal_flush, r);
	vnetd_coal_reset(r);
	kick_arm(qp, r, false);
	ring_stats_sync(r);
	if (r == &qp->rx.r) {
		/* frames read from the tap wait in the slots */
		vnetd_qp_tap_arm(qp, false);
		vnetd_steer_update(qp->maps, qp->index, false);
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
	kick_arm(qp, r, false);
	vnetd_coal_reset(r);
	if (r == &qp->rx.r) {
		vnetd_qp_tap_arm(qp, false);
		/* new flows go to the pairs that still receive */
		vnetd_steer_update(qp->maps, qp->index, false);
	}
	pr_dbg(qp, "queue pair %u: %s ring (vq %u) broken: %s; not served until the frontend restarts it",
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
	pr_err(qp, "queue pair %u: tap %s queue %u: %s; no longer read",
	       qp->index, qp->tap, qp->index,
	       err ? strerror(-err) : "error or hang-up (device deleted?)");
	r->dead = true;
	vnetd_steer_update(qp->maps, qp->index, false);
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

/* --- the rate limit ------------------------------------------------------ */

/*
 * The burst stopped at R's rate limit: come back when it allows (the
 * ring's timer).  TX keeps its kicks off meanwhile, so the guest's ring
 * fills and its queue stops; RX stops polling the tap, whose queue holds
 * the frames.
 */
static void limit_wait(struct vnetd_qp *qp, struct vnetd_ring *r)
{
	uint64_t at = vnetd_now_ns() + r->limit_wait;
	struct itimerspec its = {
		.it_value.tv_sec = (time_t)(at / 1000000000ULL),
		.it_value.tv_nsec = (long)(at % 1000000000ULL),
	};

	if (r->dir == VNET_DIR_RX)
		vnetd_qp_tap_arm(qp, false);
	r->st->limited++;
	r->st->limited_ns += r->limit_wait;
	if (timerfd_settime(r->limit_fd, TFD_TIMER_ABSTIME, &its, NULL)) {
		pr_err(qp, "queue pair %u: rate limit timer: %s", qp->index,
		       strerror(errno));
		r->more = true; /* never stuck: poll instead */
		return;
	}
	r->limit_armed = true;
}

static void limit_timer(struct vnetd_qp *qp, struct vnetd_ring *r)
{
	uint64_t v;

	(void)qp;
	if (read(r->limit_fd, &v, sizeof(v)) < 0 && errno == EAGAIN)
		return;
	r->limit_armed = false;
	r->more = true;
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
			switch (vnetd_tx_burst(&qp->tx)) {
			case VNETD_BURST_MORE:
				t->more = true;
				break;
			case VNETD_BURST_LIMITED:
				limit_wait(qp, t);
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
			switch (vnetd_rx_burst(&qp->rx)) {
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
			case VNETD_BURST_LIMITED:
				limit_wait(qp, r);
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

/* Apply CMD for VQ; true: the thread must exit. */
static bool apply(struct vnetd_qp *qp, enum vnetd_cmd cmd, struct vhost_vq *vq)
{
	switch (cmd) {
	case VNETD_CMD_START:
		ring_start(qp, vq);
		break;
	case VNETD_CMD_STOP:
		ring_stop(qp, vq);
		break;
	case VNETD_CMD_QUIT:
		if (qp->tx.r.vq)
			ring_stop(qp, qp->tx.r.vq);
		if (qp->rx.r.vq)
			ring_stop(qp, qp->rx.r.vq);
		return true;
	case VNETD_CMD_NONE:
		break;
	}
	return false;
}

/* Apply the commands in the mailbox; true: the thread must exit. */
static bool mailbox(struct vnetd_qp *qp)
{
	bool quit = false, done = false;
	unsigned int k;
	uint64_t v;

	if (read(qp->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		pr_err(qp, "queue pair %u: wake eventfd: %s", qp->index,
		       strerror(errno));
	pthread_mutex_lock(&qp->lock);
	for (k = 0; k < 2; k++) {
		if (qp->cmd[k] == VNETD_CMD_NONE)
			continue;
		quit |= apply(qp, qp->cmd[k], qp->cmd_vq[k]);
		qp->cmd[k] = VNETD_CMD_NONE;
		done = true;
	}
	if (done)
		pthread_cond_broadcast(&qp->cond);
	pthread_mutex_unlock(&qp->lock);
	return quit;
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
		pr_warn(qp, "queue pair %u: cannot pin to CPU %d: %s",
			qp->index, qp->cpu, strerror(ret));
	else
		pr_dbg(qp, "queue pair %u: pinned to CPU %d", qp->index,
		       qp->cpu);
}

/* One event of the epoll set; true: the thread must exit. */
static bool qp_event(struct vnetd_qp *qp, const struct epoll_event *ev)
{
	switch (ev->data.u32) {
	case VNETD_EV_WAKE:
		return mailbox(qp);
	case VNETD_EV_TX_KICK:
		if (qp->tx.r.vq) {
			vhost_vq_kick_drain(qp->tx.r.vq);
			qp->tx.r.more = true;
		}
		break;
	case VNETD_EV_RX_KICK:
		if (qp->rx.r.vq) {
			/* buffers: read the tap again */
			vhost_vq_kick_drain(qp->rx.r.vq);
			if (!qp->rx.r.dead && !qp->rx.r.limit_armed)
				vnetd_qp_tap_arm(qp, true);
			qp->rx.r.more = true;
		}
		break;
	case VNETD_EV_TAP:
		if (ev->events & (EPOLLERR | EPOLLHUP))
			tap_gone(qp, 0);
		else
			qp->rx.r.more = true;
		break;
	case VNETD_EV_TX_TIMER:
		qp_guarded(qp, coal_timer, &qp->tx.r);
		break;
	case VNETD_EV_RX_TIMER:
		qp_guarded(qp, coal_timer, &qp->rx.r);
		break;
	case VNETD_EV_TX_LIMIT:
		limit_timer(qp, &qp->tx.r);
		break;
	case VNETD_EV_RX_LIMIT:
		limit_timer(qp, &qp->rx.r);
		break;
	}
	return false;
}

void vnetd_qp_trim(struct vnetd_qp *qp)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct vhost_vq *vq = qp->tx.r.vq ? qp->tx.r.vq : qp->rx.r.vq;

	qp->warm = false;
	/* between two bursts every popped chain is pushed or rewound */
	madvise((uint8_t *)qp->arrays + page, qp->arrays_len - 2 * page,
		MADV_DONTNEED);
	if (!qp->rx.count)
		vnetd_tapio_trim(&qp->io);
	/* a running ring: its memory table stays while this thread is here */
	if (vq)
		vhost_vq_drop_pages(vq);
	pr_dbg(qp, "queue pair %u: idle for %d ms: buffers given back",
	       qp->index, qp->idle_ms);
}

void *vnetd_qp_thread(void *arg)
{
	struct vnetd_qp *qp = arg;
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
	if (!qp->no_uring) {
		ret = vnetd_tapio_init(&qp->io);
		if (ret && qp->index == 0)
			pr_info(qp, "io_uring unavailable (%s): plain read/writev",
				strerror(-ret));
	}
	/* after the ring and the affinity: no capability, its allow-list */
	vnetd_sandbox_qp(qp->name, qp->index, qp->io.uring);

	for (;;) {
		timeout = qp->tx.r.more || qp->rx.r.more ? 0 :
			  qp->polling                    ? 1 :
			  qp->warm                       ? qp->idle_ms :
							   -1;
		n = epoll_wait(qp->epfd, ev, sizeof(ev) / sizeof(ev[0]),
			       timeout);
		if (n < 0) {
			/*
			 * Cannot happen with a valid epoll fd; the thread must
			 * stay to answer the control thread's commands.
			 */
			if (errno != EINTR && !epoll_err++)
				pr_err(qp, "queue pair %u: epoll_wait: %s",
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
		} else if (!n && timeout > 0) {
			/* idle_ms without an event */
			vnetd_qp_trim(qp);
		}
		/* one store a wake-up, not per frame */
		qp->warm |= n > 0;
		for (i = 0; i < n; i++)
			if (qp_event(qp, &ev[i]))
				goto out;
		vnetd_qp_run(qp);
	}
out:
	vnetd_tapio_exit(&qp->io);
	return NULL;
}
