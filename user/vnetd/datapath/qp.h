/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The queue pairs of a port (qp.c): their state, buffers and fds, each
 * ring wired to its entries in the port's maps; no thread yet (mailbox.c
 * starts them, qthread.c runs them).
 */
#ifndef VNETD_QP_H
#define VNETD_QP_H

#include "tap/tap_bpf.h"
#include "qthread.h"

/* What a port's pairs are made with (its configuration and its parts). */
struct vnetd_qps_cfg {
	const char *name;		/* log prefix: the port's */
	const char *tap;		/* the tap's name, for log lines */
	const int *cpus;		/* --cpus: pair q on cpus[q % ncpus] */
	unsigned int ncpus;		/* 0: no affinity */
	bool no_uring;			/* --no-uring */
	unsigned int busy_poll_us;	/* --busy-poll */
	const int *tap_fd;		/* tap queue q's fd (tap.c), or NULL */
	struct vnetd_maps *maps;	/* the rings' entries; NULL: none */
	struct vnetd_limit *limit;	/* the port's, by direction; NULL: none */
};

/* Pairs QP[0 .. N) from C; 0 or -errno (logged, nothing left). */
int vnetd_qps_init(struct vnetd_qp *qp, unsigned int n,
		   const struct vnetd_qps_cfg *c);
void vnetd_qps_free(struct vnetd_qp *qp, unsigned int n);

#endif /* VNETD_QP_H */
