/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the hand-over (handover.c: the socket and its lock;
 * handover_serve.c: the running vnetd's side; handover_take.c: the new
 * vnetd's side; handover_ports.c: the ports it adds, releases, reopens).
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

/* The new vnetd's side: what was received per port, until the commit */
struct vnetd_ho_taken {
	bool adopted;  /* vnetd_port_adopt() was called */
	int listen_fd; /* the port's socket; -1: client mode */
	int conn;      /* the frontend's connection; -1: none */
	bool importing;
	bool fresh; /* closed in the running vnetd: set up anew */
	bool added; /* not served by the running vnetd: set up */
};

/*
 * The port list's changes, the new vnetd's side (handover_ports.c).  A
 * PORT with the flag NEW: P set up as a start would, before READY (T
 * says so); 0, or -errno and WHY.  Undone (stopped as at an exit) if the
 * hand-over fails.
 */
int vnetd_ho_add_port(struct vhost_server *srv, struct vnetd_port *p,
		      struct vnetd_ho_taken *t, char *why, size_t wlen);
void vnetd_ho_unadd_port(struct vhost_server *srv, struct vnetd_port *p);
/*
 * RELEASE in M: the running vnetd's ports that ours lack; with RELEASE_OK
 * (--release-missing) kept to be said after the commit, else refused
 * (-EPERM, WHY names them and the fix).
 */
int vnetd_ho_release_check(const struct vnetd_ho_msg *m, bool release_ok,
			   char *why, size_t wlen);
/* Committed: the ports the running vnetd released, by name */
void vnetd_ho_release_report(void);
/* Committed: the ports closed in the running vnetd set up anew, or not */
void vnetd_ho_reopen_closed(struct vhost_server *srv, struct vnetd_port *ports,
			    unsigned int n, const struct vnetd_ho_taken *t);

/* One datagram: header, BODY and EXTRA, with FDS (not closed). */
int vnetd_ho_send(int fd, uint32_t type, const void *body, size_t len,
		  const void *extra, size_t elen, const int *fds,
		  unsigned int nfds);
/*
 * Room for WANT more fds in the fd table (as far as RLIMIT_NOFILE goes),
 * FD any open one: the kernel grows the table by waiting for an RCU grace
 * period, 10 ms with every ring frozen when a STATE's fds made it grow.
 */
void vnetd_ho_fd_room(int fd, unsigned int want);
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
/* the same, of type WANT or ALT (M->hdr.type says which) */
int vnetd_ho_recv_either(int fd, int timeout_ms, uint32_t want, uint32_t alt,
			 struct vnetd_ho_msg *m, char *why, size_t wlen);

#endif /* VNETD_HANDOVER_INT_H */
