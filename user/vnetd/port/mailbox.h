/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The control thread's side of the queue-pair threads (mailbox.c):
 * starting and stopping them, the synchronous ring commands of the
 * mailbox, and the watchdog that frees a thread a frontend's fd holds.
 */
#ifndef VNETD_MAILBOX_H
#define VNETD_MAILBOX_H

#include "datapath/qthread.h"

/* A thread for each of QP[0 .. N); 0 or -errno (logged, none left). */
int vnetd_qps_start(struct vnetd_qp *qp, unsigned int n);
/* Every ring is stopped (or is stopped by its thread on the way out). */
void vnetd_qps_stop(struct vnetd_qp *qp, unsigned int n);

/*
 * The mailbox holds a command per ring.  vnetd_qp_post() puts CMD for VQ
 * into its ring's (after the one there was applied) and wakes QP's
 * thread; vnetd_qp_wait() waits until the thread applied every command
 * posted.  vnetd_qp_cmd(): the commands posted, then CMD, applied.  So
 * the control thread can hand many rings to their threads at once and
 * wait once (a hand-over's start of every port).
 */
void vnetd_qp_post(struct vnetd_qp *qp, enum vnetd_cmd cmd,
		   struct vhost_vq *vq);
void vnetd_qp_wait(struct vnetd_qp *qp);
void vnetd_qp_cmd(struct vnetd_qp *qp, enum vnetd_cmd cmd,
		  struct vhost_vq *vq);

/* Periodically: no frontend holds one of QP[0 .. N) for long. */
void vnetd_watchdog(struct vnetd_qp *qp, unsigned int n);

#endif /* VNETD_MAILBOX_H */
