// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The new vnetd's side of a hand-over (handover.h, handover.c has the
 * sequence): connect, say which ports, set each up around the fds the
 * running vnetd sends (or anew, a port it does not serve: handover_
 * ports.c), import each device's state, and start serving only once the
 * running one committed.  A failure before that closes what was received,
 * detaches and removes nothing of the running vnetd's (the ports it set
 * up anew it stops) and tells the running one why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "dev_state.h"
#include "handlers.h"
#include "handover_int.h"
#include "base/testing.h"
#include "datapath/rx.h"
#include "base/util.h"
#include "log.h"
#include "port/device.h"
#include "port/port.h"
#include "record.h"
#include "server.h"
#include "vq.h"

#define PORT_MS 10000
#define STATE_MS 30000
#define COMMIT_MS 30000
/*
 * The first PORT, while another hand-over from the same vnetd may go
 * first (its HELLO, READY and PREPARED waits: handover_serve.c)
 */
#define QUEUED_MS 100000
/* a vnetd to take over from at the socket again, after a hand-over */
#define SUCCESSOR_MS 30000
#define SUN_LEN_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

/* one hand-over, the new vnetd's side */
struct take {
	struct vhost_server *srv;
	struct vnetd_port *ports;
	unsigned int n;
	struct vnetd_ho_taken *t;
	bool release_ok; /* --release-missing */
};

static int connect_one(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	/* connect() waits while the backlog is full: bounded */
	struct timeval tv = { QUEUED_MS / 1000, 0 };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * PATH, or TAP_DIR/TAP.takeover of any port (the default socket): the
 * running vnetd's first port may be another one of ours, or it was
 * started without our --takeover-socket.  The fd and in ALT
 * (SUN_LEN_MAX) the path; or -errno and WHY (PATH's error).
 */
static int connect_to(const char *path, const char *tap_dir,
		      const struct vnetd_port *ports, unsigned int n,
		      char *alt, char *why, size_t wlen)
{
	unsigned int i;
	int fd, first;

	snprintf(alt, SUN_LEN_MAX, "%s", path);
	first = fd = connect_one(path);
	for (i = 0; fd < 0 && tap_dir && i < n; i++) {
		snprintf(alt, SUN_LEN_MAX, "%s/%s.takeover", tap_dir,
			 ports[i].cfg.tap);
		if (strcmp(alt, path))
			fd = connect_one(alt);
	}
	if (fd < 0)
		snprintf(why, wlen,
			 "no vnetd waits for a hand-over at %s (%s)%s: is one running with these ports?  If its first port is not among them (a port removed), give its hand-over socket (--takeover-socket %s/TAP.takeover, TAP its first port's tap)",
			 path, strerror(-first),
			 tap_dir ?
				 " nor at the default socket of any of these ports' taps" :
				 "",
			 tap_dir ? tap_dir : "/run/vnet");
	return fd;
}

static int send_hello(int fd, const struct vnetd_port *ports,
		      unsigned int n)
{
	struct vnetd_rec_hello h = { .pid = (uint32_t)getpid(), .nports = n };
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vnetd_rec_hello_port *p = &h.port[i];

		snprintf(p->socket, sizeof(p->socket), "%s", ports[i].cfg.socket);
		snprintf(p->tap, sizeof(p->tap), "%s", ports[i].cfg.tap);
		p->queues = ports[i].cfg.queues;
		p->client = ports[i].cfg.client;
	}
	return vnetd_ho_send(fd, VNETD_REC_HELLO, &h,
			     offsetof(struct vnetd_rec_hello, port) +
				     n * sizeof(h.port[0]),
			     NULL, 0, NULL, 0);
}

/* PORT I in M: the fds into the port, which owns them from then on */
static int port_msg(const struct take *tk, const struct vnetd_ho_msg *mp,
		    unsigned int i, char *why, size_t wlen)
{
	struct vnetd_port_adopt a = { .netns_fd = -1 };
	struct vnetd_port *ports = tk->ports;
	struct vnetd_ho_taken *t = &tk->t[i];
	struct vnetd_ho_msg m = *mp;
	struct vnetd_rec_port r;
	struct vnetd_port *p;
	unsigned int k = 0, q;
	int ret;

	ret = vnetd_rec_port_parse(m.body, m.len, m.nfds, tk->n, &r, why, wlen);
	if (!ret && r.index != i) {
		snprintf(why, wlen, "PORT %u where %u was due", r.index, i);
		ret = -EPROTO;
	}
	if (!ret && r.queues != ports[i].nr_qp) {
		snprintf(why, wlen, "%s: %u tap queues sent, %u configured",
			 ports[i].name, r.queues, ports[i].nr_qp);
		ret = -EPROTO;
	}
	if (!ret && !(r.flags & (VNETD_REC_P_CLOSED | VNETD_REC_P_NEW)) &&
	    !(r.flags & VNETD_REC_P_LISTEN) != ports[i].cfg.client) {
		snprintf(why, wlen, "%s: %s", ports[i].name,
			 ports[i].cfg.client ? "a listening socket sent for a client port" :
					       "no listening socket sent");
		ret = -EPROTO;
	}
	if (ret) {
		for (k = 0; k < m.nfds; k++)
			close(m.fds[k]);
		return ret;
	}
	p = &ports[i];
	if (r.flags & VNETD_REC_P_CLOSED) {
		t->fresh = true;
		return 0;
	}
	if (r.flags & VNETD_REC_P_NEW)
		return vnetd_ho_add_port(tk->srv, p, t, why, wlen);
	for (q = 0; q < r.queues; q++)
		a.tap_fd[q] = m.fds[k++];
	if (r.flags & VNETD_REC_P_NETNS)
		a.netns_fd = m.fds[k++];
	t->listen_fd = r.flags & VNETD_REC_P_LISTEN ? m.fds[k++] : -1;
	a.netns_ino = r.netns_ino;
	a.created = r.flags & VNETD_REC_P_CREATED;
	a.attached = r.flags & VNETD_REC_P_ATTACHED;
	a.single_queue = r.flags & VNETD_REC_P_SINGLE_QUEUE;
	a.mtu_orig = r.mtu_orig;
	a.steer = r.steer;
	ret = vnetd_port_adopt(p, &a);
	t->adopted = !ret;
	if (ret)
		snprintf(why, wlen, "%s: cannot set the port up around the running vnetd's tap: %s",
			 p->name, ret == -ENOENT ? "vnet's pins for it are missing (the running vnetd attached nothing?)" :
					      strerror(-ret));
	return ret;
}

static int take_port(int fd, const struct take *tk, unsigned int i,
		     int timeout_ms, char *why, size_t wlen)
{
	struct vnetd_ho_msg m;
	int ret;

	ret = vnetd_ho_recv(fd, timeout_ms, VNETD_REC_PORT, &m, why, wlen);
	return ret ? ret : port_msg(tk, &m, i, why, wlen);
}

/*
 * The first answer: PORT 0, or RELEASE (the running vnetd's ports this
 * one lacks: refused without --release-missing) and then PORT 0
 */
static int take_first(int fd, const struct take *tk, char *why, size_t wlen)
{
	struct vnetd_ho_msg m;
	int ret;

	ret = vnetd_ho_recv_either(fd, QUEUED_MS, VNETD_REC_PORT,
				   VNETD_REC_RELEASE, &m, why, wlen);
	if (ret || m.hdr.type == VNETD_REC_PORT)
		return ret ? ret : port_msg(tk, &m, 0, why, wlen);
	ret = vnetd_ho_release_check(&m, tk->release_ok, why, wlen);
	vnetd_ho_close_fds(m.fds, m.nfds);
	if (!ret)
		ret = take_port(fd, tk, 0, PORT_MS, why, wlen);
	/* it answered: a connection lost now is no queue to wait in */
	return ret == -ECONNRESET || ret == -EPIPE ? -ECONNABORTED : ret;
}

/* STATE I parsed into S and MSGS (*NMSG); the frontend's connection to T */
static int recv_state(int fd, unsigned int n, unsigned int i,
		      struct vnetd_ho_taken *t, struct vnetd_rec_state *s,
		      struct vhost_user_msg *msgs, unsigned int *nmsg,
		      char *why, size_t wlen)
{
	struct vnetd_ho_msg m;
	unsigned int k;
	int ret;

	ret = vnetd_ho_recv(fd, STATE_MS, VNETD_REC_STATE, &m, why, wlen);
	if (ret)
		return ret;
	ret = vnetd_rec_state_parse(m.body, m.len, m.fds, m.nfds, n, s, msgs,
				    VHOST_HANDOVER_MAX_MSGS, nmsg, why, wlen);
	if (!ret && s->index != i) {
		snprintf(why, wlen, "STATE %u where %u was due", s->index, i);
		ret = -EPROTO;
	}
	if (ret) {
		for (k = 0; k < m.nfds; k++)
			close(m.fds[k]);
		return ret;
	}
	if (s->flags & VNETD_REC_S_CONN)
		t->conn = m.fds[0];
	return 0;
}

/*
 * The device's NMSG messages imported into P (the import begun in any
 * case, for undo() to abort); each message takes or closes its fds, the
 * refused ones too.
 */
static int import_msgs(struct vnetd_port *p, struct vnetd_ho_taken *t,
		       struct vhost_user_msg *msgs, unsigned int nmsg,
		       char *why, size_t wlen)
{
	struct vhost_dev *dev = &p->device.dev;
	unsigned int k;
	int ret = 0;

	if (t->conn < 0 && nmsg) {
		snprintf(why, wlen, "%s: a device state without a frontend",
			 p->name);
		ret = -EPROTO;
	}
	vhost_dev_import_begin(dev);
	t->importing = true;
	for (k = 0; k < nmsg; k++) {
		if (ret) {
			for (unsigned int j = 0; j < msgs[k].nfds; j++)
				close(msgs[k].fds[j]);
			continue;
		}
		ret = vhost_dev_import(dev, &msgs[k]);
		if (ret)
			snprintf(why, wlen, "%s: the running vnetd's %s was refused (%s): see this vnetd's log",
				 p->name,
				 vhost_user_request_name(msgs[k].hdr.request),
				 strerror(-ret));
	}
	return ret;
}

/* COUNT FRAMEs of port I: read from the tap, pending in P's queue pairs */
static int take_frames(int fd, struct vnetd_port *p, unsigned int n,
		       unsigned int i, uint32_t count, char *why, size_t wlen)
{
	struct vnetd_ho_msg m;
	uint32_t k;
	int ret;

	for (k = 0; k < count; k++) {
		struct vnetd_rec_frame f;
		const void *data;

		ret = vnetd_ho_recv(fd, STATE_MS, VNETD_REC_FRAME, &m, why, wlen);
		if (!ret && m.nfds) {
			snprintf(why, wlen, "FRAME with fds");
			ret = -EPROTO;
		}
		if (!ret)
			ret = vnetd_rec_frame_parse(m.body, m.len, n, &f, &data,
						    why, wlen);
		if (!ret && (f.index != i || f.qp >= p->nr_qp)) {
			snprintf(why, wlen, "FRAME of port %u queue pair %u in %s's",
				 f.index, f.qp, p->name);
			ret = -EPROTO;
		}
		if (!ret)
			ret = vnetd_rx_put_pending(&p->qp[f.qp].rx, data, f.len,
						   f.hdr_len);
		if (ret) {
			for (unsigned int j = 0; j < m.nfds; j++)
				close(m.fds[j]);
			if (!why[0])
				snprintf(why, wlen, "%s: a pending frame: %s",
					 p->name, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* STATE I and its FRAMEs: the device imported, its rings not started */
static int take_state(int fd, struct vnetd_port *ports, unsigned int n,
		      unsigned int i, struct vnetd_ho_taken *t,
		      struct vhost_user_msg *msgs, char *why, size_t wlen)
{
	struct vnetd_port *p = &ports[i];
	struct vhost_dev *dev = &p->device.dev;
	struct vnetd_rec_state s;
	unsigned int k, nmsg = 0;
	int ret;

	ret = recv_state(fd, n, i, t, &s, msgs, &nmsg, why, wlen);
	if (!ret)
		ret = import_msgs(p, t, msgs, nmsg, why, wlen);
	if (ret)
		return ret;
	/* broken before: it stays so until the frontend restarts it */
	for (k = 0; k < dev->nr_vqs && k < VNETD_REC_MAX_VQS; k++)
		if (s.broken[k / 64] & (1ULL << (k % 64)))
			vhost_vq_set_broken(&dev->vqs[k], "broken before the hand-over (the previous vnetd's log says why); the ring is stopped until the frontend restarts it");
	return take_frames(fd, p, n, i, s.frames, why, wlen);
}

/*
 * nothing committed: let go of what was received, touching nothing of
 * the running vnetd's; the ports set up anew are stopped
 */
static void undo(const struct take *tk)
{
	struct vnetd_port *ports = tk->ports;
	struct vnetd_ho_taken *t = tk->t;
	unsigned int i;

	for (i = 0; i < tk->n; i++) {
		if (t[i].added)
			vnetd_ho_unadd_port(tk->srv, &ports[i]);
		if (t[i].importing)
			vhost_dev_import_abort(&ports[i].device.dev);
		if (t[i].conn >= 0)
			close(t[i].conn);
		if (t[i].listen_fd >= 0)
			close(t[i].listen_fd);
		if (t[i].adopted)
			vnetd_port_release(&ports[i]);
	}
}

/*
 * Connect, HELLO, the first PORT: 0 and *FDP.  A connection closed before
 * any answer was queued behind another hand-over that went through (that
 * vnetd exited): the vnetd that took over is taken over from once it
 * listens, within SUCCESSOR_MS.  Else -errno, WHY, *FDP (or -1).
 */
static int hello(const char *path, const char *tap_dir, const struct take *tk,
		 int *fdp, char *used, char *why, size_t wlen)
{
	struct vnetd_port *ports = tk->ports;
	unsigned int n = tk->n;
	uint64_t deadline = 0;
	const struct timespec nap = { 0, 10 * 1000 * 1000 };
	int fd, ret;

	for (;;) {
		*fdp = fd = connect_to(path, tap_dir, ports, n, used, why,
				       wlen);
		if (fd < 0 && deadline && vnetd_now_ns() < deadline &&
		    (fd == -ECONNREFUSED || fd == -ENOENT)) {
			nanosleep(&nap, NULL);
			continue;
		}
		if (fd < 0 && deadline)
			snprintf(why, wlen, "the vnetd at %s handed its ports to another vnetd (or exited) before it answered, and no vnetd listens there since (waited %d s)",
				 path, SUCCESSOR_MS / 1000);
		if (fd < 0)
			return fd;
		ret = send_hello(fd, ports, n);
		if (ret)
			snprintf(why, wlen, "sending HELLO: %s", strerror(-ret));
		else
			ret = take_first(fd, tk, why, wlen);
		if (ret != -ECONNRESET && ret != -EPIPE)
			return ret;
		close(fd);
		*fdp = -1;
		if (!deadline)
			vhost_info("--takeover: the vnetd at %s let go of this connection before it answered: another hand-over went first; taking over from the vnetd that took its ports (waiting up to %d s for it)",
				   path, SUCCESSOR_MS / 1000);
		deadline = vnetd_now_ns() + SUCCESSOR_MS * 1000000ULL;
	}
}

/*
 * Room in the fd table for the fds the STATEs of TK's ports bring (per
 * port its connection, a memory region or two, the dirty log's and each
 * ring's eventfds), made before the rings freeze.
 */
static void fd_room(int fd, const struct take *tk)
{
	unsigned int i, want = 0;

	for (i = 0; i < tk->n; i++)
		if (!tk->t[i].fresh && !tk->t[i].added)
			want += 4 + 6 * tk->ports[i].nr_qp;
	vnetd_ho_fd_room(fd, want);
}

/*
 * After the first PORT: the other ports, READY, each port's STATE,
 * PREPARED and the running vnetd's COMMIT.
 */
static int take_rest(int fd, const struct take *tk, char *why, size_t wlen)
{
	struct vnetd_port *ports = tk->ports;
	struct vhost_user_msg *msgs = NULL;
	struct vnetd_ho_taken *t = tk->t;
	unsigned int i, n = tk->n;
	struct vnetd_ho_msg m;
	int ret = 0;

	for (i = 1; !ret && i < n; i++)
		ret = take_port(fd, tk, i, PORT_MS, why, wlen);
	if (!ret)
		fd_room(fd, tk);
	if (!ret)
		ret = vnetd_ho_send(fd, VNETD_REC_READY, NULL, 0, NULL, 0, NULL, 0);
	msgs = calloc(VHOST_HANDOVER_MAX_MSGS, sizeof(*msgs));
	if (!ret && !msgs)
		ret = -ENOMEM;
	for (i = 0; !ret && i < n; i++)
		if (!t[i].fresh && !t[i].added)
			ret = take_state(fd, ports, n, i, &t[i], msgs, why,
					 wlen);
	free(msgs);
	/* a test build's failures at the worst moment: rings frozen */
	if (!ret && vnetd_switch(VNETD_SW_TAKEOVER_FAIL, 0) == 1) {
		snprintf(why, wlen, "VNETD_TEST_TAKEOVER_FAIL=1: giving up before PREPARED");
		ret = -ECANCELED;
	}
	if (!ret && vnetd_switch(VNETD_SW_TAKEOVER_FAIL, 0) == 2)
		_exit(3);
	if (!ret)
		ret = vnetd_ho_send(fd, VNETD_REC_PREPARED, NULL, 0, NULL, 0,
				    NULL, 0);
	if (!ret) {
		ret = vnetd_ho_recv(fd, COMMIT_MS, VNETD_REC_COMMIT, &m, why,
				    wlen);
		for (i = 0; i < m.nfds; i++)
			close(m.fds[i]);
	}
	return ret;
}

/*
 * Committed: port P's device takes the frontend's connection over and
 * its rings' starts are posted to their threads (vnetd_device_wait()
 * waits for them); or, without one or when that fails, its import is
 * undone and the port waits for a frontend.
 */
static void start_port(struct vnetd_port *p, struct vnetd_ho_taken *t,
		       bool fail)
{
	int ret = -EBADF;

	if (t->conn < 0) {
		if (t->importing)
			vhost_dev_import_abort(&p->device.dev);
		return;
	}
	p->device.post_starts = true;
	if (!fail)
		ret = vhost_dev_import_end(&p->device.dev, t->conn);
	p->device.post_starts = false;
	if (ret) {
		vhost_err("%s: taking the connection over: %s", p->name,
			  strerror(-ret));
		close(t->conn);
		t->conn = -1;
		vhost_dev_import_abort(&p->device.dev);
	}
}

/*
 * Committed: the ports taken over are this vnetd's, serve them.  Every
 * port's rings are handed to their threads first, in the order the
 * running vnetd froze them, and waited for after: the threads start them
 * meanwhile.
 */
static void start_taken(struct vhost_server *srv, struct vnetd_port *ports,
			unsigned int n, struct vnetd_ho_taken *t)
{
	/* a test build's failure: the first port's connection not taken */
	bool fail = vnetd_switch(VNETD_SW_TAKEOVER_FAIL, 0) == 4;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++)
		if (!t[i].fresh && !t[i].added)
			start_port(&ports[i], &t[i], fail && !i);
	for (i = 0; i < n; i++) {
		struct vnetd_port *p = &ports[i];
		const struct vhost_port_cfg pc = { .path = p->cfg.socket,
						   .client = p->cfg.client,
						   .mode = p->opts.socket_mode };

		if (t[i].fresh || t[i].added)
			continue;
		vnetd_device_wait(&p->device);
		ret = vhost_server_adopt_port(srv, &p->device.dev, &pc,
					      t[i].listen_fd, t[i].conn);
		if (ret)
			vhost_err("%s: serving the socket taken over: %s",
				  p->name, strerror(-ret));
		pr_info(p, "taken over: tap %s with %u queue pair%s%s", p->cfg.tap,
			p->nr_qp, p->nr_qp > 1 ? "s" : "",
			t[i].conn >= 0 ? ", its frontend connected" : "");
	}
}

int vnetd_handover_take(const char *path, const char *tap_dir, bool release_ok,
			struct vhost_server *srv, struct vnetd_port *ports,
			unsigned int n, char *out, size_t olen)
{
	struct vnetd_ho_taken t[VNETD_REC_MAX_PORTS];
	const struct take tk = { .srv = srv,
				 .ports = ports,
				 .n = n,
				 .t = t,
				 .release_ok = release_ok };
	char why[2048] = "", used[SUN_LEN_MAX];
	unsigned int i;
	int fd, ret;

	for (i = 0; i < n; i++)
		t[i] = (struct vnetd_ho_taken){ .listen_fd = -1, .conn = -1 };
	ret = hello(path, tap_dir, &tk, &fd, used, why, sizeof(why));
	if (fd < 0) {
		vhost_err("--takeover: %s", why);
		snprintf(out, olen, "--takeover: %s", why);
		return ret;
	}
	if (!ret)
		ret = take_rest(fd, &tk, why, sizeof(why));
	if (ret) {
		if (!why[0])
			snprintf(why, sizeof(why), "%s", strerror(-ret));
		vnetd_ho_fail(fd, "%s", why);
		close(fd);
		undo(&tk);
		vhost_err("--takeover failed: %s; the running vnetd serves on",
			  why);
		snprintf(out, olen, "--takeover failed: %s; the running vnetd serves on",
			 why);
		return ret;
	}
	/* the other vnetd's socket, named after another tap: nobody's now */
	if (strcmp(used, path))
		unlink(used);
	start_taken(srv, ports, n, t);
	/* the running vnetd lets go of everything once it sees this */
	close(fd);
	vnetd_ho_reopen_closed(srv, ports, n, t);
	vnetd_ho_release_report();
	return 0;
}
