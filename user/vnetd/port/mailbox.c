// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control thread's side of the queue-pair threads (mailbox.h):
 * starting and stopping them, the synchronous ring commands of the
 * mailbox, and the watchdog that frees a thread a frontend's fd holds.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mailbox.h"
#include "vhost_user.h"
#include "base/util.h"
#include "datapath/qthread.h"
#include "log.h"
#include "virtq.h"

/*
 * A queue thread waits for nothing but its epoll set, with one exception
 * a frontend can force: a read or write of its kick, call or error fd
 * after it cleared O_NONBLOCK on its (shared) eventfd and emptied or
 * filled it (vhost_user.c, ring_fd_own()).  VNETD_SIG_WAKE, unblocked in
 * the queue threads only and handled without SA_RESTART, makes that call
 * return EINTR; the library then leaves the fd alone.
 */
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
	bool held = false;
	unsigned int i;

	if (!qp->thread_ok || !qp->dev)
		return false;
	for (i = 0; i < 2; i++) {
		struct vhost_vq *vq = vhost_dev_vq(qp->dev, 2 * qp->index + i);
		unsigned int b = vhost_vq_fd_busy(vq);

		if ((b & 1) && b == qp->fd_busy_seen[i]) {
			pr_warn(qp, "queue pair %u: held for %d ms or more in a read or write of vq %u's kick, call or error fd (the frontend made it blocking): interrupted",
				qp->index, VNETD_CMD_SLICE_MS, vq->index);
			held = true;
		}
		qp->fd_busy_seen[i] = b;
	}
	if (held)
		pthread_kill(qp->thread, VNETD_SIG_WAKE);
	return held;
}

/*
 * Control thread, periodically: a TX ring whose guest side showed an
 * entry the queue thread had not taken, at the same position, two looks
 * in a row, waits for a kick that did not come (measured under QEMU TCG:
 * a guest's TX stopped for good after a burst of 64-byte frames, its
 * entries posted and no kick in the eventfd).  The watchdog kicks it
 * itself: the queue thread drains the eventfd and runs the burst, as for
 * the guest's own kick.  An idle ring (nothing posted) is never touched,
 * so idle ports cost no wake-up.
 */
static void qp_lost_kick(struct vnetd_qp *qp)
{
	struct vhost_vq *vq;
	uint64_t one = 1;
	uint32_t pos;
	bool waiting;
	int fd;

	if (!qp->thread_ok || !qp->dev)
		return;
	vq = vhost_dev_vq(qp->dev, 2 * qp->index + 1);
	fd = vq ? vhost_vq_kick_fd(vq) : -1;
	if (fd < 0) {
		qp->tx_seen_waiting = false;
		return;
	}
	waiting = vhost_vq_avail_waiting(vq, &pos);
	if (waiting && qp->tx_seen_waiting && pos == qp->tx_seen_pos) {
		qp->lost_kicks++;
		/* said the first time, then at each power of two */
		if (!(qp->lost_kicks & (qp->lost_kicks - 1)))
			pr_warn(qp, "queue pair %u: guest TX entries waited a watchdog period without a kick (%lu time%s): served them",
				qp->index, qp->lost_kicks,
				qp->lost_kicks == 1 ? "" : "s");
		if (write(fd, &one, sizeof(one)) < 0)
			pr_err(qp, "queue pair %u: kick eventfd: %s", qp->index,
			       strerror(errno));
		waiting = false; /* look afresh next time */
	}
	qp->tx_seen_waiting = waiting;
	qp->tx_seen_pos = pos;
}

/*
 * Control thread, periodically: no frontend holds a queue thread for
 * long, no TX ring waits for a lost kick.
 */
void vnetd_watchdog(struct vnetd_qp *qp, unsigned int n)
{
	unsigned int q;

	for (q = 0; q < n; q++) {
		qp_unstick(&qp[q]);
		qp_lost_kick(&qp[q]);
	}
}

static bool qp_idle(const struct vnetd_qp *qp, unsigned int slot)
{
	return slot < 2 ? qp->cmd[slot] == VNETD_CMD_NONE :
			  qp->cmd[0] == VNETD_CMD_NONE &&
				  qp->cmd[1] == VNETD_CMD_NONE;
}

/*
 * Control thread, QP's lock held: wait until SLOT of the mailbox is empty
 * (2: both).  The wait is in slices; after each, a thread held by a
 * frontend fd is interrupted (the only way it can fail to answer), so the
 * wait ends.
 */
static void qp_wait_locked(struct vnetd_qp *qp, unsigned int slot)
{
	long long waited = 0;
	struct timespec ts;

	while (!qp_idle(qp, slot)) {
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
			pr_err(qp, "queue pair %u: no answer to a ring command for %lld ms",
			       qp->index, waited);
		pthread_mutex_lock(&qp->lock);
	}
}

/*
 * Control thread: CMD for VQ into its ring's slot of the mailbox (QUIT:
 * the whole mailbox), once the thread applied what was there, and the
 * thread woken.
 */
void vnetd_qp_post(struct vnetd_qp *qp, enum vnetd_cmd cmd, struct vhost_vq *vq)
{
	unsigned int slot = vq ? vq->index & 1 : 0;
	uint64_t one = 1;

	pthread_mutex_lock(&qp->lock);
	qp_wait_locked(qp, cmd == VNETD_CMD_QUIT ? 2 : slot);
	qp->cmd[slot] = cmd;
	qp->cmd_vq[slot] = vq;
	pthread_mutex_unlock(&qp->lock);
	if (write(qp->wake_fd, &one, sizeof(one)) < 0)
		pr_err(qp, "queue pair %u: wake eventfd: %s", qp->index,
		       strerror(errno));
}

void vnetd_qp_wait(struct vnetd_qp *qp)
{
	pthread_mutex_lock(&qp->lock);
	qp_wait_locked(qp, 2);
	pthread_mutex_unlock(&qp->lock);
}

/* Control thread: the commands posted before, then CMD for VQ, applied. */
void vnetd_qp_cmd(struct vnetd_qp *qp, enum vnetd_cmd cmd, struct vhost_vq *vq)
{
	vnetd_qp_wait(qp);
	vnetd_qp_post(qp, cmd, vq);
	vnetd_qp_wait(qp);
}

static void qp_quit(struct vnetd_qp *qp)
{
	if (!qp->thread_ok)
		return;
	vnetd_qp_cmd(qp, VNETD_CMD_QUIT, NULL);
	pthread_join(qp->thread, NULL);
	qp->thread_ok = false;
}

/*
 * Start a thread per pair.  Threads start with every signal blocked
 * (SIGINT/SIGTERM are the control thread's, through its signalfd) but
 * VNETD_SIG_WAKE.
 */
int vnetd_qps_start(struct vnetd_qp *qp, unsigned int n)
{
	struct sigaction sa = { .sa_handler = sig_wake };
	sigset_t all, old;
	unsigned int q, i;
	int ret = 0;

	/* no SA_RESTART: the held read or write returns EINTR */
	sigemptyset(&sa.sa_mask);
	if (sigaction(VNETD_SIG_WAKE, &sa, NULL)) {
		ret = -errno;
		pr_err(qp, "sigaction: %s", strerror(errno));
		return ret;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (q = 0; q < n; q++) {
		ret = -pthread_create(&qp[q].thread, NULL, vnetd_qp_thread,
				      &qp[q]);
		if (ret) {
			pr_err(qp, "queue pair %u: thread: %s", q,
			       strerror(-ret));
			break;
		}
		qp[q].thread_ok = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		for (i = 0; i < q; i++)
			qp_quit(&qp[i]);
	return ret;
}

/* Every ring is stopped (or is stopped by its thread on the way out). */
void vnetd_qps_stop(struct vnetd_qp *qp, unsigned int n)
{
	unsigned int q;

	for (q = 0; q < n; q++)
		qp_quit(&qp[q]);
}
