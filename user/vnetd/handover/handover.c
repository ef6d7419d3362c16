// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The live hand-over of every port to a new vnetd (handover.h), both
 * sides, on a SOCK_SEQPACKET unix socket with the messages of record.h:
 *
 *   new                                  running (old)
 *   HELLO (its ports) ----------------->  the same ports?  else FAIL
 *                     <-----------------  PORT per port: tap queues,
 *   set up around them: pins, queue          netns, socket (fds)
 *   pairs and threads, the device
 *   READY ----------------------------->  freeze every port: rings
 *                                         stopped between two bursts,
 *                                         held signals sent, messages
 *                                         left unread
 *                     <-----------------  STATE per port: its device as
 *   import, checked by the handlers          messages (fds), the frontend's
 *   a frontend's messages go through         connection (fd); FRAMEs read
 *   PREPARED -------------------------->     from the tap, not delivered
 *                     <-----------------  COMMIT, then let go of it all
 *   start the rings, serve                   (nothing reset) and exit 0
 *
 * Until COMMIT the running vnetd can always go back: FAIL, a timeout or
 * the connection lost, and it thaws every port and serves on, the guests
 * having seen a pause of their rings at most.  The new one gives up the
 * same way, closing only what it was given.  The stall a guest sees is
 * from the freeze to the start of the rings: one round trip and the
 * import, milliseconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "dev_state.h"
#include "handover_int.h"
#include "base/testing.h"

/* how long each side waits for the other's next message */
#define HELLO_MS 5000
#define READY_MS 60000	/* the new one sets up every port meanwhile */
#define STEP_MS 30000
/* --takeovers queued behind another one: served in turn (handover_take.c) */
#define VNETD_HO_BACKLOG 64

/* --- the socket -------------------------------------------------------- */

static uint8_t *rec_buf(void)
{
	static uint8_t *buf;

	if (!buf)
		buf = malloc(sizeof(struct vnetd_rec_hdr) + VNETD_REC_MAX);
	return buf;
}

int vnetd_ho_send(int fd, uint32_t type, const void *body, size_t len,
		  const void *extra, size_t elen, const int *fds,
		  unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VNETD_REC_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	uint8_t *buf = rec_buf();
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	size_t n;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	if (nfds > VNETD_REC_MAX_FDS)
		return -E2BIG;
	n = vnetd_rec_build(buf, sizeof(struct vnetd_rec_hdr) + VNETD_REC_MAX,
			    type, nfds, body, len, extra, elen);
	if (!n)
		return -E2BIG;
	iov = (struct iovec){ buf, n };
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do {
		r = sendmsg(fd, &mh, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EMSGSIZE;
}

void vnetd_ho_fail(int fd, const char *fmt, ...)
{
	struct vnetd_rec_fail f = {};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f.reason, sizeof(f.reason), fmt, ap);
	va_end(ap);
	vnetd_ho_send(fd, VNETD_REC_FAIL, f.reason, strlen(f.reason), NULL, 0,
		      NULL, 0);
}

static void close_fds(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * Wait up to TIMEOUT_MS for FD to be readable; SRV (may be NULL): its
 * frontends are served meanwhile.  0, or -ETIMEDOUT.
 */
static int wait_in(int fd, int timeout_ms, struct vhost_server *srv)
{
	struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
				 { .fd = srv ? vhost_server_fd(srv) : -1,
				   .events = POLLIN } };
	struct timespec t0, t;
	long left = timeout_ms, ms;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = poll(pfd, 2, (int)left);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret > 0 && pfd[0].revents)
			return 0;
		if (ret > 0 && pfd[1].revents)
			vhost_server_poll(srv, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= timeout_ms)
			return -ETIMEDOUT;
		left = timeout_ms - ms;
	}
}

int vnetd_ho_recv(int fd, int timeout_ms, uint32_t want,
		  struct vnetd_ho_msg *m, char *why, size_t wlen)
{
	return vnetd_ho_recv_serving(fd, timeout_ms, want, NULL, m, why, wlen);
}

int vnetd_ho_recv_serving(int fd, int timeout_ms, uint32_t want,
			  struct vhost_server *srv, struct vnetd_ho_msg *m,
			  char *why, size_t wlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VNETD_REC_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	uint8_t *buf = rec_buf();
	struct iovec iov = { buf, sizeof(struct vnetd_rec_hdr) + VNETD_REC_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t n;
	int ret;

	m->nfds = 0;
	if (!buf) {
		snprintf(why, wlen, "out of memory");
		return -ENOMEM;
	}
	ret = wait_in(fd, timeout_ms, srv);
	if (ret) {
		snprintf(why, wlen, "no %s within %d ms",
			 vnetd_rec_type_name(want), timeout_ms);
		return ret;
	}
	do {
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		ret = -errno;
		snprintf(why, wlen, "waiting for %s: %s",
			 vnetd_rec_type_name(want), strerror(errno));
		return ret;
	}
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k, nfd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd && m->nfds < VNETD_REC_MAX_FDS; k++)
			memcpy(&m->fds[m->nfds++], CMSG_DATA(c) + k * sizeof(int),
			       sizeof(int));
	}
	if (!n) {
		snprintf(why, wlen, "the other vnetd closed the connection before %s",
			 vnetd_rec_type_name(want));
		ret = -ECONNRESET;
		goto err;
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		snprintf(why, wlen, "a message too large (or too many fds)");
		ret = -EMSGSIZE;
		goto err;
	}
	ret = vnetd_rec_check(buf, (size_t)n, m->nfds, &m->hdr, &m->body,
			      &m->len, why, wlen);
	if (ret)
		goto err;
	if (m->hdr.type == VNETD_REC_FAIL) {
		char reason[VNETD_REC_REASON];

		vnetd_rec_fail_parse(m->body, m->len, reason, sizeof(reason));
		snprintf(why, wlen, "the other vnetd gave up: %s", reason);
		ret = -ECANCELED;
		goto err;
	}
	if (m->hdr.type != want) {
		snprintf(why, wlen, "%s where %s was due",
			 vnetd_rec_type_name(m->hdr.type),
			 vnetd_rec_type_name(want));
		ret = -EPROTO;
		goto err;
	}
	return 0;
err:
	close_fds(m->fds, m->nfds);
	m->nfds = 0;
	return ret;
}

/* --- the running vnetd's side ------------------------------------------ */

/* the socket file this process bound (a socket's fstat is not its file's) */
static dev_t listen_dev;
static ino_t listen_ino;

int vnetd_handover_listen(const char *path)
{
	struct stat st;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			ret = -errno;
			vhost_err("hand-over socket %s: cannot create %s: %s",
				  path, dir, strerror(errno));
			return ret;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* a vnetd that holds it is found by the precheck of its ports */
	unlink(path);
	if (fchmod(fd, 0600) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, VNETD_HO_BACKLOG)) {
		ret = -errno;
		vhost_err("hand-over socket %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	if (!stat(path, &st)) {
		listen_dev = st.st_dev;
		listen_ino = st.st_ino;
	}
	return fd;
}

void vnetd_handover_unlisten(int lfd, const char *path)
{
	struct stat b;

	if (lfd < 0)
		return;
	/* ours still: no other vnetd took the path since */
	if (!stat(path, &b) && b.st_ino == listen_ino && b.st_dev == listen_dev)
		unlink(path);
	close(lfd);
}

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

int vnetd_handover_serve(int lfd, struct vhost_server *srv,
			 struct vnetd_port *ports, unsigned int nports)
{
	static struct vnetd_rec_hello hello;
	struct vhost_user_msg *msgs = NULL;
	struct vnetd_ho_msg m;
	uint8_t *body = NULL;
	unsigned int i, j, *map = NULL, nclosed = 0;
	bool *frozen = NULL;
	char why[1024] = "";
	pid_t pid = 0;
	int fd, ret;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!peer_ok(fd, &pid)) {
		vhost_warn("hand-over socket: pid %d is neither root nor vnetd's user: refused",
			   (int)pid);
		close(fd);
		return 0;
	}
	ret = vnetd_ho_recv_serving(fd, HELLO_MS, VNETD_REC_HELLO, srv, &m, why,
				    sizeof(why));
	if (!ret && m.nfds) {
		snprintf(why, sizeof(why), "HELLO with fds");
		ret = -EPROTO;
	}
	if (!ret)
		ret = vnetd_rec_hello_parse(m.body, m.len, &hello, why, sizeof(why));
	close_fds(m.fds, m.nfds);
	if (!ret) {
		map = calloc(hello.nports, sizeof(*map));
		frozen = calloc(nports, sizeof(*frozen));
		ret = map && frozen ? match_ports(&hello, ports, nports, map, why,
						  sizeof(why)) :
				      -ENOMEM;
		if (ret == -ENOMEM)
			snprintf(why, sizeof(why), "out of memory");
	}
	if (ret) {
		vnetd_ho_fail(fd, "%s", why);
		vhost_err("hand-over to pid %d refused: %s; serving on", (int)pid,
			  why);
		free(map);
		free(frozen);
		close(fd);
		return 0;
	}
	for (j = 0; j < hello.nports; j++)
		nclosed += ports[map[j]].gone;
	vhost_info("hand-over to pid %d (vnetd --takeover): %u port%s%s", (int)pid,
		   hello.nports, hello.nports == 1 ? "" : "s",
		   nclosed ? ", the closed ones for it to set up anew" : "");
	/* PORT per HELLO port, in its order */
	for (j = 0; !ret && j < hello.nports; j++)
		ret = ports[map[j]].gone ? send_closed(fd, &ports[map[j]], j) :
					   send_port(fd, srv, &ports[map[j]], j);
	if (ret) {
		snprintf(why, sizeof(why), "sending PORT: %s", strerror(-ret));
		goto fail;
	}
	/* the ports are not frozen yet: their frontends are served meanwhile */
	ret = vnetd_ho_recv_serving(fd, READY_MS, VNETD_REC_READY, srv, &m, why,
				    sizeof(why));
	close_fds(m.fds, m.nfds);
	if (ret)
		goto fail;

	msgs = calloc(VHOST_HANDOVER_MAX_MSGS, sizeof(*msgs));
	body = malloc(VNETD_REC_MAX);
	if (!msgs || !body) {
		ret = -ENOMEM;
		snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	/* from here the rings stand still until the new one or we go on */
	for (j = 0; j < hello.nports; j++) {
		int conn = -1;

		i = map[j];
		if (ports[i].gone)
			continue;
		ret = freeze(srv, &ports[i], &conn);
		if (ret) {
			snprintf(why, sizeof(why), "%s: cannot freeze: %s",
				 ports[i].name, strerror(-ret));
			goto thaw;
		}
		frozen[i] = true;
		ret = send_state(fd, &ports[i], j, conn, msgs, body);
		if (ret) {
			snprintf(why, sizeof(why), "%s: sending its state: %s",
				 ports[i].name, strerror(-ret));
			goto thaw;
		}
	}
	ret = vnetd_ho_recv(fd, STEP_MS, VNETD_REC_PREPARED, &m, why, sizeof(why));
	close_fds(m.fds, m.nfds);
	if (ret)
		goto thaw;
	if (vnetd_switch(VNETD_SW_TAKEOVER_FAIL, 0) == 3) {
		snprintf(why, sizeof(why), "VNETD_TEST_TAKEOVER_FAIL=3: giving up instead of COMMIT");
		goto thaw;
	}
	ret = vnetd_ho_send(fd, VNETD_REC_COMMIT, NULL, 0, NULL, 0, NULL, 0);
	if (ret) {
		snprintf(why, sizeof(why), "sending COMMIT: %s", strerror(-ret));
		goto thaw;
	}
	vhost_info("every port handed over to pid %d: exiting", (int)pid);
	free(msgs);
	free(body);
	free(map);
	free(frozen);
	close(fd);
	return 1;

thaw:
	thaw_all(srv, ports, frozen, nports);
fail:
	vnetd_ho_fail(fd, "%s", why);
	vhost_err("hand-over to pid %d failed (the running vnetd's side): %s; serving on",
		  (int)pid, why);
	free(msgs);
	free(body);
	free(map);
	free(frozen);
	close(fd);
	return 0;
}
