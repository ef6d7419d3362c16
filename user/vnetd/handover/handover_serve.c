// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The running vnetd's side of a hand-over (handover.c has the protocol
 * and the socket): HELLO checked against our ports, a PORT per port, and
 * once the new vnetd is READY every port frozen and its STATE sent; COMMIT
 * after PREPARED, else every port thawed and vnetd serves on.
 */
#include <errno.h>
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
#include "record.h"
#include "server.h"

/* how long the running vnetd waits for the new one's next message */
#define HELLO_MS 5000
#define READY_MS 60000	/* the new one sets up every port meanwhile */
#define STEP_MS 30000

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

/*
 * HELLO's ports against ours, matched by socket path (record.c): MAP[j]
 * is our port for HELLO's port j.  WHY: the first difference.
 */
static int match_ports(const struct vnetd_rec_hello *h,
		       const struct vnetd_port *ports, unsigned int n,
		       unsigned int *map, char *why, size_t wlen)
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
		ret = vnetd_rec_hello_match(h, (uint32_t)getpid(), ours, closed,
					    n, map, why, wlen);
	free(ours);
	free(closed);
	return ret;
}

/* a port closed here (its tap or netns went): the new one sets it up */
static int send_closed(int fd, const struct vnetd_port *p, unsigned int index)
{
	struct vnetd_rec_port r = { .index = index, .queues = p->nr_qp,
				    .flags = VNETD_REC_P_CLOSED };

	return vnetd_ho_send(fd, VNETD_REC_PORT, &r, sizeof(r), NULL, 0, NULL,
			     0);
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

/* A PORT per HELLO port, in its order (MAP[j]: our port for its port j). */
static int send_ports(int fd, struct vhost_server *srv,
		      struct vnetd_port *ports, const unsigned int *map,
		      unsigned int n, pid_t pid)
{
	unsigned int j, nclosed = 0;
	int ret = 0;

	for (j = 0; j < n; j++)
		nclosed += ports[map[j]].gone;
	vhost_info("hand-over to pid %d (vnetd --takeover): %u port%s%s", (int)pid,
		   n, n == 1 ? "" : "s",
		   nclosed ? ", the closed ones for it to set up anew" : "");
	for (j = 0; !ret && j < n; j++)
		ret = ports[map[j]].gone ? send_closed(fd, &ports[map[j]], j) :
					   send_port(fd, srv, &ports[map[j]], j);
	return ret;
}

/*
 * Freeze every open port (FROZEN[i] set) and send its STATE: from here the
 * rings stand still until the new one or we go on.
 */
static int freeze_and_send(int fd, struct vhost_server *srv,
			   struct vnetd_port *ports, const unsigned int *map,
			   unsigned int n, bool *frozen, char *why, size_t wlen)
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
	for (j = 0; !ret && j < n; j++) {
		int conn = -1;

		i = map[j];
		if (ports[i].gone)
			continue;
		ret = freeze(srv, &ports[i], &conn);
		if (ret) {
			snprintf(why, wlen, "%s: cannot freeze: %s",
				 ports[i].name, strerror(-ret));
			break;
		}
		frozen[i] = true;
		ret = send_state(fd, &ports[i], j, conn, msgs, body);
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
 * The ports handed over (1), or every one thawed (FROZEN: none yet) and
 * serving on (0).
 */
static int hand_over(int fd, struct vhost_server *srv,
		     struct vnetd_port *ports, unsigned int nports,
		     const unsigned int *map, unsigned int n, bool *frozen,
		     pid_t pid)
{
	struct vnetd_ho_msg m;
	char why[1024] = "";
	int ret;

	ret = send_ports(fd, srv, ports, map, n, pid);
	if (ret) {
		snprintf(why, sizeof(why), "sending PORT: %s", strerror(-ret));
		goto fail;
	}
	/* the ports are not frozen yet: their frontends are served meanwhile */
	ret = vnetd_ho_recv_serving(fd, READY_MS, VNETD_REC_READY, srv, &m, why,
				    sizeof(why));
	vnetd_ho_close_fds(m.fds, m.nfds);
	if (!ret)
		ret = freeze_and_send(fd, srv, ports, map, n, frozen, why,
				      sizeof(why));
	if (!ret)
		ret = commit(fd, why, sizeof(why));
	if (!ret) {
		vhost_info("every port handed over to pid %d: exiting", (int)pid);
		return 1;
	}
	thaw_all(srv, ports, frozen, nports);
fail:
	vnetd_ho_fail(fd, "%s", why);
	vhost_err("hand-over to pid %d failed (the running vnetd's side): %s; serving on",
		  (int)pid, why);
	return 0;
}

int vnetd_handover_serve(int lfd, struct vhost_server *srv,
			 struct vnetd_port *ports, unsigned int nports)
{
	static struct vnetd_rec_hello hello;
	unsigned int *map = NULL;
	bool *frozen = NULL;
	char why[1024] = "";
	pid_t pid = 0;
	int fd, ret;

	fd = accept_peer(lfd, &pid);
	if (fd < 0)
		return 0;
	ret = recv_hello(fd, srv, &hello, why, sizeof(why));
	if (!ret) {
		map = calloc(hello.nports, sizeof(*map));
		frozen = calloc(nports, sizeof(*frozen));
		ret = map && frozen ? match_ports(&hello, ports, nports, map,
						  why, sizeof(why)) : -ENOMEM;
		if (ret == -ENOMEM)
			snprintf(why, sizeof(why), "out of memory");
	}
	if (ret) {
		vnetd_ho_fail(fd, "%s", why);
		vhost_err("hand-over to pid %d refused: %s; serving on", (int)pid,
			  why);
		ret = 0;
	} else {
		ret = hand_over(fd, srv, ports, nports, map, hello.nports,
				frozen, pid);
	}
	free(map);
	free(frozen);
	close(fd);
	return ret;
}
