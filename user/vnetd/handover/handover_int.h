/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the hand-over (handover.c: the socket; handover_serve.c: the
 * running vnetd's side; handover_take.c: the new vnetd's side).
 */
#ifndef VNETD_HANDOVER_INT_H
#define VNETD_HANDOVER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "handover.h"
#include "record.h"

/* One message received: checked header, body, the fds that came with it. */
struct vnetd_ho_msg {
	struct vnetd_rec_hdr hdr;
	const void *body;	/* in a buffer the next receive reuses */
	size_t len;
	int fds[VNETD_REC_MAX_FDS];
	unsigned int nfds;
};

/* One datagram: header, BODY and EXTRA, with FDS (not closed). */
int vnetd_ho_send(int fd, uint32_t type, const void *body, size_t len,
		  const void *extra, size_t elen, const int *fds,
		  unsigned int nfds);
/* close the N fds of FDS that are open (>= 0) */
void vnetd_ho_close_fds(int *fds, unsigned int n);
/* FAIL with the reason, best effort. */
void vnetd_ho_fail(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The next message, of type WANT, within TIMEOUT_MS: 0, or -errno with
 * WHY said (a FAIL is -ECANCELED with its reason); the fds of a refused
 * message are closed.  _serving: SRV's frontends are served meanwhile.
 */
int vnetd_ho_recv(int fd, int timeout_ms, uint32_t want,
		  struct vnetd_ho_msg *m, char *why, size_t wlen);
int vnetd_ho_recv_serving(int fd, int timeout_ms, uint32_t want,
			  struct vhost_server *srv, struct vnetd_ho_msg *m,
			  char *why, size_t wlen);

#endif /* VNETD_HANDOVER_INT_H */
