// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The running vnetd's side of a hand-over (handover.c has the protocol
 * and the socket): HELLO checked against our ports, the ports it lacks
 * (RELEASE), a PORT per port, and once the new vnetd is READY every port
 * frozen and its STATE sent; COMMIT after PREPARED, then the ports it
 * lacks stopped; else every port thawed and vnetd serves on.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "dev_state.h"
#include "handover_int.h"
#include "base/testing.h"
#include "datapath/rx.h"
#include "base/util.h"
#include "log.h"
#include "port/port.h"
#include "record.h"
#include "server.h"

/* how long the running vnetd waits for the new one's next message */
#define HELLO_MS 5000
#define READY_MS 60000	/* the new one sets up every port meanwhile */
#define STEP_MS 30000
#define STARTED_MS 5000 /* after COMMIT: the new one starts the rings */

/* the peer may hand over: root, or vnetd's own user */
static bool peer_ok(int fd, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return false;
	*pid = cr.pid;
	return cr.uid == 0 || cr.uid == geteuid();
}

/* one hand-over: the new vnetd's connection and what it asked for */
struct peer {
	int fd;
	pid_t pid;
	const struct vnetd_rec_hello *h;
	unsigned int *map; /* our port for HELLO's port j; NEW: none */
	bool *frozen;      /* ours, frozen for the hand-over */
	bool *release;     /* ours, not in HELLO: stopped at the commit */
};

/* HELLO's ports against ours, matched by socket path (record.c) */
static int match_ports(struct peer *pr, const struct vnetd_port *ports,
		       unsigned int n, char *why, size_t wlen)
{
	struct vnetd_rec_hello_port *ours = calloc(n, sizeof(*ours));
	bool *closed = calloc(n, sizeof(*closed));
	int ret = -ENOMEM;

	snprintf(why, wlen, "out of memory");
	for (unsigned int i = 0; ours && closed && i < n; i++) {
		const struct vnetd_port_cfg *c = &ports[i].cfg;

		snprintf(ours[i].socket, sizeof(ours[i].socket), "%s", c->socket);
		snprintf(ours[i].tap, sizeof(ours[i].tap), "%s", c->tap);
		ours[i].queues = c->queues;
		ours[i].client = c->client;
		closed[i] = ports[i].gone;
	}
	if (ours && closed)
		ret = vnetd_rec_hello_match(pr->h, (uint32_t)getpid(), ours,
					    closed, n, pr->map, pr->release,
					    why, wlen);
	free(ours);
	free(closed);
	return ret;
}

/*
 * A port closed here (its tap or netns went), or not ours (NEW): the new
 * one sets it up
 */
static int send_fdless(int fd, uint32_t flags, unsigned int queues,
		       unsigned int index)
{
	struct vnetd_rec_port r = { .index = index,
				    .queues = queues,
				    .flags = flags };

	return vnetd_ho_send(fd, VNETD_REC_PORT, &r, sizeof(r), NULL, 0, NULL,
			     0);
}

/* RELEASE: our ports that HELLO lacks, if any (N of them) */
static int send_release(const struct peer *pr, const struct vnetd_port *ports,
			unsigned int nports, unsigned int n)
{
	static struct vnetd_rec_hello r;
	unsigned int i;

	if (!n)
		return 0;
	r.pid = (uint32_t)getpid();
	r.nports = 0;
	for (i = 0; i < nports; i++) {
		struct vnetd_rec_hello_port *p = &r.port[r.nports];

		if (!pr->release[i])
			continue;
		snprintf(p->socket, sizeof(p->socket), "%s",
			 ports[i].cfg.socket);
		snprintf(p->tap, sizeof(p->tap), "%s", ports[i].cfg.tap);
		p->queues = ports[i].cfg.queues;
		p->client = ports[i].cfg.client;
		r.nports++;
	}
	return vnetd_ho_send(pr->fd, VNETD_REC_RELEASE, &r,
			     offsetof(struct vnetd_rec_hello, port) +
				     r.nports * sizeof(r.port[0]),
			     NULL, 0, NULL, 0);
}

static int send_port(int fd, struct vhost_server *srv, struct vnetd_port *p,
		     unsigned int index)
{
	struct vnetd_rec_port r = {
		.index = index,
		.queues = p->nr_qp,
		.mtu_orig = p->tap.mtu_orig,
		.netns_ino = p->tap.netns_ino,
	};
	int fds[VNETD_MAX_QP + 2], lfd;
	unsigned int q, n = 0;

	r.flags = (p->tap.created ? VNETD_REC_P_CREATED : 0) |
		  (p->maps.attached ? VNETD_REC_P_ATTACHED : 0) |
		  (p->tap.single_queue ? VNETD_REC_P_SINGLE_QUEUE : 0);
	for (q = 0; q < p->nr_qp; q++) {
		fds[n++] = p->tap.fd[q];
		if (p->maps.steer_on[q])
			r.steer |= 1u << q;
	}
	if (p->tap.netns_fd >= 0) {
		r.flags |= VNETD_REC_P_NETNS;
		fds[n++] = p->tap.netns_fd;
	}
	lfd = vhost_server_listen_fd(srv, &p->device.dev);
	if (lfd >= 0) {
		r.flags |= VNETD_REC_P_LISTEN;
		fds[n++] = lfd;
	}
	return vnetd_ho_send(fd, VNETD_REC_PORT, &r, sizeof(r), NULL, 0, fds,
			     n);
}

/* freeze P's port: a message half read is given a moment to come in */
static int freeze(struct vhost_server *srv, struct vnetd_port *p, int *conn)
{
	int lfd, ret, tries;

	for (tries = 0; tries < 100; tries++) {
		ret = vhost_server_freeze_port(srv, &p->device.dev, &lfd, conn);
		if (ret != -EAGAIN)
			return ret;
		/* the rest of that message (and others: they are handled) */
		vhost_server_poll(srv, 10);
	}
	return -EAGAIN;
}

static int send_state(int fd, struct vnetd_port *p, unsigned int index,
		      int conn, struct vhost_user_msg *msgs, uint8_t *body)
{
	struct vhost_dev *dev = &p->device.dev;
	struct vnetd_rec_state s = { .index = index };
	int fds[VNETD_REC_MAX_FDS];
	unsigned int i, k, q, nfds = 0;
	size_t len;
	int n, ret;

	n = conn >= 0 ? vhost_dev_export(dev, msgs, VHOST_HANDOVER_MAX_MSGS) : 0;
	if (n < 0)
		return n;
	if (conn >= 0) {
		s.flags |= VNETD_REC_S_CONN;
		fds[nfds++] = conn;
	}
	for (i = 0; i < (unsigned int)n; i++) {
		for (k = 0; k < msgs[i].nfds; k++) {
			if (nfds == VNETD_REC_MAX_FDS)
				return -E2BIG;
			fds[nfds++] = msgs[i].fds[k];
		}
	}
	for (i = 0; i < dev->nr_vqs; i++)
		if (vhost_vq_broken(&dev->vqs[i]))
			s.broken[i / 64] |= 1ULL << (i % 64);
	for (q = 0; q < p->nr_qp; q++)
		s.frames += p->qp[q].rx.count;
	s.nmsgs = (uint32_t)n;
	len = vnetd_rec_state_body(body, VNETD_REC_MAX, &s, msgs, (unsigned int)n);
	if (!len)
		return -E2BIG;
	ret = vnetd_ho_send(fd, VNETD_REC_STATE, body, len, NULL, 0, fds, nfds);
	/* the frames read from the tap and not delivered: after it */
	for (q = 0; !ret && q < p->nr_qp; q++) {
		const struct vnetd_rx *rx = &p->qp[q].rx;

		for (i = 0; !ret && i < rx->count; i++) {
			struct vnetd_rec_frame f = { .index = index, .qp = q,
						     .hdr_len = rx->read_hdr };
			const uint8_t *data = vnetd_rx_pending(rx, i, &f.len);

			ret = vnetd_ho_send(fd, VNETD_REC_FRAME, &f, sizeof(f),
					    data, f.len, NULL, 0);
		}
	}
	return ret;
}

static void thaw_all(struct vhost_server *srv, struct vnetd_port *ports,
		     const bool *frozen, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (frozen[i])
			vhost_server_thaw_port(srv, &ports[i].device.dev);
}

/* The next --takeover's connection, if its peer may hand over; else -1. */
static int accept_peer(int lfd, pid_t *pid)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!peer_ok(fd, pid)) {
		vhost_warn("hand-over socket: pid %d is neither root nor vnetd's user: refused",
			   (int)*pid);
		close(fd);
		return -1;
	}
	return fd;
}

/* HELLO, checked: no fds, the record parsed into H. */
static int recv_hello(int fd, struct vhost_server *srv,
		      struct vnetd_rec_hello *h, char *why, size_t wlen)
{
	struct vnetd_ho_msg m;
	int ret;

	ret = vnetd_ho_recv_serving(fd, HELLO_MS, VNETD_REC_HELLO, srv, &m, why,
				    wlen);
	if (!ret && m.nfds) {
		snprintf(why, wlen, "HELLO with fds");
		ret = -EPROTO;
	}
	if (!ret)
		ret = vnetd_rec_hello_parse(m.body, m.len, h, why, wlen);
	vnetd_ho_close_fds(m.fds, m.nfds);
	return ret;
}

/* RELEASE, then a PORT per HELLO port, in its order */
static int send_ports(const struct peer *pr, struct vhost_server *srv,
		      struct vnetd_port *ports, unsigned int nports)
{
	unsigned int i, j, n = pr->h->nports, nclosed = 0, nnew = 0, nrel = 0;
	char more[96];
	int ret;

	for (j = 0; j < n; j++) {
		if (pr->map[j] == VNETD_REC_NEW_PORT)
			nnew++;
		else
			nclosed += ports[pr->map[j]].gone;
	}
	for (i = 0; i < nports; i++)
		nrel += pr->release[i];
	snprintf(more, sizeof(more),
		 "; %u new for it to set up, %u it lacks to stop at the commit",
		 nnew, nrel);
	vhost_info("hand-over to pid %d (vnetd --takeover): %u port%s%s%s",
		   (int)pr->pid, n, n == 1 ? "" : "s",
		   nclosed ? ", the closed ones for it to set up anew" : "",
		   nnew || nrel ? more : "");
	ret = send_release(pr, ports, nports, nrel);
	for (j = 0; !ret && j < n; j++) {
		i = pr->map[j];
		if (i == VNETD_REC_NEW_PORT)
			ret = send_fdless(pr->fd, VNETD_REC_P_NEW,
					  pr->h->port[j].queues, j);
		else if (ports[i].gone)
			ret = send_fdless(pr->fd, VNETD_REC_P_CLOSED,
					  ports[i].nr_qp, j);
		else
			ret = send_port(pr->fd, srv, &ports[i], j);
	}
	return ret;
}

/*
 * Committed: our ports that the new vnetd lacks are stopped as at an
 * exit (the frontend let go, socket, tap and pins removed), said by name.
 */
static void release_ports(const struct peer *pr, struct vhost_server *srv,
			  struct vnetd_port *ports, unsigned int nports)
{
	unsigned int i;

	for (i = 0; i < nports; i++) {
		if (!pr->release[i])
			continue;
		pr_warn(&ports[i],
			"released: not among the ports of the new vnetd (pid %d, --release-missing): tap %s, its frontend disconnected, its socket and pins removed (and the tap, if vnetd created it)",
			(int)pr->pid, ports[i].cfg.tap);
		vhost_server_remove_port(srv, &ports[i].device.dev);
		vnetd_port_close(&ports[i]);
		ports[i].gone = true;
	}
}

/*
 * Freeze every open port (FROZEN[i] set) and send its STATE: from here the
 * rings stand still until the new one or we go on.
 */
static int freeze_and_send(const struct peer *pr, struct vhost_server *srv,
			   struct vnetd_port *ports, char *why, size_t wlen)
{
	struct vhost_user_msg *msgs = calloc(VHOST_HANDOVER_MAX_MSGS,
					     sizeof(*msgs));
	uint8_t *body = malloc(VNETD_REC_MAX);
	unsigned int i, j;
	int ret = 0;

	if (!msgs || !body) {
		ret = -ENOMEM;
		snprintf(why, wlen, "out of memory");
	}
	for (j = 0; !ret && j < pr->h->nports; j++) {
		int conn = -1;

		i = pr->map[j];
		if (i == VNETD_REC_NEW_PORT || ports[i].gone)
			continue;
		ret = freeze(srv, &ports[i], &conn);
		if (ret) {
			snprintf(why, wlen, "%s: cannot freeze: %s",
				 ports[i].name, strerror(-ret));
			break;
		}
		pr->frozen[i] = true;
		ret = send_state(pr->fd, &ports[i], j, conn, msgs, body);
		if (ret)
			snprintf(why, wlen, "%s: sending its state: %s",
				 ports[i].name, strerror(-ret));
	}
	free(msgs);
	free(body);
	return ret;
}

/* PREPARED from the new vnetd, then COMMIT: the ports are its. */
static int commit(int fd, char *why, size_t wlen)
{
	struct vnetd_ho_msg m;
	int ret;

	ret = vnetd_ho_recv(fd, STEP_MS, VNETD_REC_PREPARED, &m, why, wlen);
	vnetd_ho_close_fds(m.fds, m.nfds);
	if (ret)
		return ret;
	if (vnetd_switch(VNETD_SW_TAKEOVER_FAIL, 0) == 3) {
		snprintf(why, wlen, "VNETD_TEST_TAKEOVER_FAIL=3: giving up instead of COMMIT");
		return -ECANCELED;
	}
	ret = vnetd_ho_send(fd, VNETD_REC_COMMIT, NULL, 0, NULL, 0, NULL, 0);
	if (ret)
		snprintf(why, wlen, "sending COMMIT: %s", strerror(-ret));
	return ret;
}

/*
 * Committed: the new vnetd starts every ring, then closes the connection.
 * Letting go of every port (180 ms of a CPU for 256) waits for that (at
 * most STARTED_MS) and runs as SCHED_IDLE: on a CPU both share it holds
 * up neither the starts nor the new vnetd's threads moving the frames
 * that waited meanwhile.
 */
static void wait_started(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
	struct sched_param sp = { 0 };
	int ret;

	if (sched_setscheduler(0, SCHED_IDLE, &sp))
		vhost_dbg("SCHED_IDLE: %s", strerror(errno));
	do
		ret = poll(&p, 1, STARTED_MS);
	while (ret < 0 && errno == EINTR);
}

/*
 * The ports handed over (1), or every one thawed (FROZEN: none yet) and
 * serving on (0).
 */
static int hand_over(const struct peer *pr, struct vhost_server *srv,
		     struct vnetd_port *ports, unsigned int nports)
{
	struct vnetd_ho_msg m;
	char why[1024] = "";
	int fd = pr->fd, ret;

	ret = send_ports(pr, srv, ports, nports);
	if (ret) {
		snprintf(why, sizeof(why), "sending PORT: %s", strerror(-ret));
		goto fail;
	}
	/* the ports are not frozen yet: their frontends are served meanwhile */
	ret = vnetd_ho_recv_serving(fd, READY_MS, VNETD_REC_READY, srv, &m, why,
				    sizeof(why));
	vnetd_ho_close_fds(m.fds, m.nfds);
	if (!ret)
		ret = freeze_and_send(pr, srv, ports, why, sizeof(why));
	if (!ret)
		ret = commit(fd, why, sizeof(why));
	if (!ret) {
		wait_started(fd);
		release_ports(pr, srv, ports, nports);
		vhost_info("every port handed over to pid %d: exiting",
			   (int)pr->pid);
		return 1;
	}
	thaw_all(srv, ports, pr->frozen, nports);
fail:
	vnetd_ho_fail(fd, "%s", why);
	vhost_err("hand-over to pid %d failed (the running vnetd's side): %s; serving on",
		  (int)pr->pid, why);
	return 0;
}

int vnetd_handover_serve(int lfd, struct vhost_server *srv,
			 struct vnetd_port *ports, unsigned int nports)
{
	static struct vnetd_rec_hello hello;
	struct peer pr = { .h = &hello };
	char why[1024] = "";
	int ret;

	pr.fd = accept_peer(lfd, &pr.pid);
	if (pr.fd < 0)
		return 0;
	ret = recv_hello(pr.fd, srv, &hello, why, sizeof(why));
	if (!ret) {
		pr.map = calloc(hello.nports, sizeof(*pr.map));
		pr.frozen = calloc(nports, sizeof(*pr.frozen));
		pr.release = calloc(nports, sizeof(*pr.release));
		ret = pr.map && pr.frozen && pr.release ?
			      match_ports(&pr, ports, nports, why,
					  sizeof(why)) :
			      -ENOMEM;
		if (ret == -ENOMEM)
			snprintf(why, sizeof(why), "out of memory");
	}
	if (ret) {
		vnetd_ho_fail(pr.fd, "%s", why);
		vhost_err("hand-over to pid %d refused: %s; serving on",
			  (int)pr.pid, why);
		ret = 0;
	} else {
		ret = hand_over(&pr, srv, ports, nports);
	}
	free(pr.map);
	free(pr.frozen);
	free(pr.release);
	close(pr.fd);
	return ret;
}
