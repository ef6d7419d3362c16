/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A queue pair and its thread (qthread.c).  Queue pair i's thread serves
 * RX ring 2i, TX ring 2i+1 and tap queue i: it waits on its epoll set
 * (kicks, the tap, coalescing timers, the mailbox), runs the burst
 * engines and acts on what they report.  It owns everything marked
 * "queue thread only" in the structures it holds.  The control thread
 * hands rings to it and takes them back with a synchronous command
 * through the mailbox (mailbox.c, vnetd_qp_cmd()), so the datapath takes
 * no lock.  A pair's state is set up and freed by qp.c.
 */
#ifndef VNETD_QTHREAD_H
#define VNETD_QTHREAD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "tap/tap_bpf.h"
#include "tapio.h"
#include "tx.h"
#include "rx.h"

struct vhost_dev;

/*
 * The signal that interrupts a queue thread held in a frontend fd's read
 * or write (mailbox.c); unblocked in the queue threads only.
 */
#define VNETD_SIG_WAKE SIGURG

/* epoll tags of a queue pair's thread (qp.c builds the set) */
enum vnetd_qp_ev {
	VNETD_EV_WAKE,
	VNETD_EV_TX_KICK,
	VNETD_EV_RX_KICK,
	VNETD_EV_TAP,
	VNETD_EV_TX_TIMER,
	VNETD_EV_RX_TIMER,
	VNETD_EV_TX_LIMIT,
	VNETD_EV_RX_LIMIT,
};

/*
 * A queue pair that has seen no event for this long gives back what its
 * bursts made resident (vnetd_qp_trim()); its thread then sleeps until the
 * next event, with no timer.
 */
#define VNETD_IDLE_MS 10000

enum vnetd_cmd {
	VNETD_CMD_NONE,
	VNETD_CMD_START,	/* start serving cmd_vq */
	VNETD_CMD_STOP,		/* stop serving cmd_vq, flush its signal */
	VNETD_CMD_QUIT,
};

struct vnetd_qp {
	const char *name;	/* log prefix: the port's */
	const char *tap;	/* the tap's name, for log lines */
	unsigned int index;
	int cpu;		/* -1: no affinity */
	bool no_uring;		/* --no-uring: plain read/writev */
	pthread_t thread;
	bool thread_ok;
	int epfd;
	int wake_fd;		/* eventfd: a command is waiting */

	/*
	 * the mailbox: control thread <-> queue thread, a command per ring
	 * (slot 0 the RX ring's and QUIT, 1 the TX ring's), NONE once the
	 * thread applied it
	 */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum vnetd_cmd cmd[2];
	struct vhost_vq *cmd_vq[2];
	/*
	 * The negotiated header: written by the control thread while every
	 * ring is stopped, taken over by the engines at each START.
	 */
	unsigned int hdr_len;
	bool mrg;
	/*
	 * control thread only: the device whose rings 2q, 2q+1 the thread
	 * serves (NULL before it exists), and vhost_vq_fd_busy() of them
	 * last time (the watchdog)
	 */
	struct vhost_dev *dev;
	unsigned int fd_busy_seen[2];
	/* the watchdog's look at the TX ring: a kick lost (mailbox.c) */
	uint32_t tx_seen_pos;
	bool tx_seen_waiting;
	unsigned long lost_kicks;

	/* the port's maps: steering follows the RX ring (NULL: none) */
	struct vnetd_maps *maps;

	/* --- queue thread only --- */
	struct vnetd_tapio io;		/* tap queue `index` */
	/*
	 * qp.c: the burst arrays (tx.r.elems, rx.r.elems, rx.iov) in a
	 * mapping of their own, a PROT_NONE page on each side
	 */
	void *arrays;
	size_t arrays_len;
	bool tap_armed;			/* tap fd polled for input */
	bool polling;			/* a ring without kick fd: poll it */
	bool warm;                      /* an event since the last trim */
	int idle_ms; /* VNETD_IDLE_MS (testing.h); -1: never */
	struct vnetd_tx tx;
	struct vnetd_rx rx;
};

/* The thread (started by mailbox.c), and what its loop runs. */
void *vnetd_qp_thread(void *qp);
void vnetd_qp_run(struct vnetd_qp *qp);
void vnetd_qp_tap_arm(struct vnetd_qp *qp, bool on);
/*
 * The pair was quiet for idle_ms (queue thread, between bursts): its burst
 * arrays, its RX slots (unless they hold frames the guest has no buffer
 * for yet) and the guest memory's pages are no longer resident; the next
 * burst takes them again as it touches them.
 */
void vnetd_qp_trim(struct vnetd_qp *qp);

#endif /* VNETD_QTHREAD_H */
