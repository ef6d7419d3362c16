// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd datapath tests: the live hand-over (vnetd --takeover, docs/vnetd.md
 * "Hand-over"), with a userspace frontend connected and frames going both
 * ways the whole time (see vnetd_test.h):
 *  - a second vnetd takes every port over: no frame lost either way, the
 *    frontend never disconnected, the first vnetd exits 0, the second one
 *    serves on, its counters continuing (split, packed, two queue pairs);
 *  - it fails at the worst moment (rings frozen; the new one gives up, or
 *    dies, or the running one gives up instead of committing): the first
 *    serves on, no frame lost;
 *  - hostile peers on the hand-over socket (garbage, another version, a
 *    record cut short, other ports, silence): refused, the running vnetd
 *    serves on;
 *  - the ports change (takeover_ports_*): a port kept, one released by the
 *    running vnetd, one added by the new; refused without
 *    --release-missing, for a mistyped socket path, a tap another vnetd
 *    holds, or failed at the worst moment: nothing changed;
 *  - one port's connection cannot be taken over after the commit: that
 *    port serves its socket anew, the others on (takeover_start_fails).
 * The frames are round trips, each waited for (ping_both): a lost frame
 * fails the test, a slow one only makes the largest round trip (printed)
 * longer.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_tun.h>
#include <sys/un.h>
#include <zlib.h>

#include "vnetd_test.h"
#include "../../user/vnetd/handover/record.h"
#include "../../user/vhost/sendfds.h"
#include "../../user/vhost/vhost_user.h"

static void takeover_path(const struct vd *vd, char *path, size_t len)
{
	snprintf(path, len, "/run/vnet/%s.takeover", vd->port[0].tap);
}

/* a second vnetd with VD's ports: its own log, --takeover */
static void vd_twin(const struct vd *vd, struct vd *nv, const char *name)
{
	unsigned int i;

	*nv = *vd;
	nv->name = name;
	nv->pid = -1;
	nv->ns_made = false;
	nv->takeover = true;
	snprintf(nv->log, sizeof(nv->log), "/tmp/vnet-vnetd-%d-%s.log",
		 getpid(), name);
	unlink(nv->log);
	for (i = 0; i < nv->nports; i++)
		nv->port[i].cfg_fd = nv->port[i].dps_fd = nv->port[i].qs_fd = -1;
}

/*
 * The frontend's connection is the one it opened: not closed by the
 * other side (no POLLHUP/POLLRDHUP), nothing waiting that vnetd sent
 * unasked (a reset would be that EOF).
 */
static bool vufe_connected(const struct vufe *fe)
{
	struct pollfd p = { .fd = vufe_sock_fd(fe), .events = POLLRDHUP };

	return p.fd >= 0 && poll(&p, 1, 0) == 0;
}

struct pinger {
	unsigned int id, rounds;
	long long worst_ms;
};

/* one round trip both ways on every queue pair of port K */
static bool ping_on(struct vufe *fe, const struct vd *vd, unsigned int k,
		    int pfd, struct pinger *pg, const char *what)
{
	unsigned int q;

	for (q = 0; q < vd->port[k].queues; q++) {
		long long t0 = now_ms();

		if (!ping_both(fe, &vd->port[k], q, pfd, pg->id++, what))
			return false;
		if (now_ms() - t0 > pg->worst_ms)
			pg->worst_ms = now_ms() - t0;
		pg->rounds++;
	}
	return true;
}

static bool ping(struct vufe *fe, const struct vd *vd, int pfd,
		 struct pinger *pg, const char *what)
{
	return ping_on(fe, vd, 0, pfd, pg, what);
}

/* ping port K until VD exited (bounded), NV taking its ports over meanwhile */
static bool ping_through(struct vufe *fe, struct vd *vd, unsigned int k,
			 struct vd *nv, int pfd, struct pinger *pg)
{
	long long deadline = now_ms() + 30000;

	while (vd_running(vd)) {
		if (!ping_on(fe, vd, k, pfd, pg, "a frame during the hand-over"))
			return false;
		if (!vd_running(nv))
			return ASSERT_TRUE(false, vd_log_tail(nv));
		if (now_ms() > deadline)
			return ASSERT_TRUE(false, "the old vnetd exited within 30 s");
	}
	return true;
}

static void takeover_case(const char *name, unsigned int queues, bool packed)
{
	struct pinger pg = {};
	struct vnet_dp_stats d0, d1;
	struct vufe *fe = NULL;
	struct vd vd, nv;
	int pfd = -1, i;
	char nvname[32];

	snprintf(nvname, sizeof(nvname), "%sN", name);
	vd_init(&vd, name, 1, queues);
	nv.pid = -1;
	fe = vd_up_fe(&vd, &pfd, packed);
	if (!fe)
		goto out;
	if (packed && !ASSERT_TRUE(vufe_packed(fe), "packed rings"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 20; i++)
		if (!ping(fe, &vd, pfd, &pg, "before"))
			goto out;
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);

	vd_twin(&vd, &nv, nvname);
	if (!vd_spawn(&nv) || !ping_through(fe, &vd, 0, &nv, pfd, &pg))
		goto out;
	ASSERT_TRUE(WIFEXITED(vd.status) && WEXITSTATUS(vd.status) == 0,
		    "the old vnetd exited 0 after the hand-over");
	ASSERT_TRUE(vd_log_has(&vd, "every port handed over"), "old: handed over");
	ASSERT_TRUE(vd_running(&nv), "the new vnetd runs");
	/* ready: it said so (vd_start's wait, the process is up) */
	for (i = 0; i < 2000 && !vd_log_has(&nv, "taken over: tap"); i++)
		nap_ms(5);
	ASSERT_TRUE(vd_log_has(&nv, "its frontend connected"),
		    "new: took the frontend's connection");
	for (i = 0; i < 50; i++)
		if (!ping(fe, &vd, pfd, &pg, "after"))
			goto out;
	ASSERT_TRUE(vufe_connected(fe), "the frontend never lost its connection");
	/* the counters go on: the same pins, written by the new vnetd */
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d1);
	ASSERT_GE(d1.frames - d0.frames, 50, "TX frames counted across the hand-over");
	dbg("%s: %u round trips, the longest %lld ms\n", name, pg.rounds,
	    pg.worst_ms);
	printf("# %s: %u round trips through the hand-over, none lost, the longest %lld ms\n",
	       name, pg.rounds, pg.worst_ms);
	/* the new one stops cleanly: pins gone, the tap it inherited too */
	vd_stop(&nv);
	vd.pid = -1;
out:
	close_fd(&pfd);
	if (fe)
		vufe_destroy(fe);
	if (nv.pid > 0)
		vd_kill(&nv, SIGTERM);
	vd_cleanup(&vd);
}

static void takeover(void)
{
	takeover_case("tko", 1, false);
}

static void takeover_packed(void)
{
	takeover_case("tkp", 1, true);
}

static void takeover_mq(void)
{
	takeover_case("tkm", 2, false);
}

/*
 * VNETD_TEST_TAKEOVER_FAIL=N in the vnetd named by WHO (the new one, or
 * with OLD the running one): the hand-over fails with every ring frozen;
 * the running vnetd thaws them and serves on, nothing lost.
 */
static void rollback_case(const char *name, const char *how, bool old)
{
	struct pinger pg = {};
	struct vufe *fe = NULL;
	struct vd vd, nv;
	int pfd = -1, i;
	char nvname[32], env[64];

	snprintf(nvname, sizeof(nvname), "%sN", name);
	snprintf(env, sizeof(env), "VNETD_TEST_TAKEOVER_FAIL=%s", how);
	vd_init(&vd, name, 1, 1);
	nv.pid = -1;
	if (old)
		putenv(env);
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	unsetenv("VNETD_TEST_TAKEOVER_FAIL");
	{
		struct vufe_opts o = fe_opts(&vd.port[0]);

		fe = fe_up(&o);
	}
	if (!fe)
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping(fe, &vd, pfd, &pg, "before"))
			goto out;
	vd_twin(&vd, &nv, nvname);
	if (!old)
		putenv(env);
	vd_log_mark(&vd);
	if (!vd_spawn(&nv))
		goto out;
	unsetenv("VNETD_TEST_TAKEOVER_FAIL");
	/* pings until the hand-over is over: the new one gone, the old serving */
	{
		long long deadline = now_ms() + 60000;

		while (vd_running(&nv) && now_ms() < deadline)
			if (!ping(fe, &vd, pfd, &pg,
				  "during the failed hand-over"))
				goto out;
	}
	ASSERT_FALSE(vd_running(&nv), "the new vnetd gave up and exited");
	ASSERT_TRUE(WIFEXITED(nv.status) && WEXITSTATUS(nv.status) != 0,
		    "... with a failure status");
	ASSERT_TRUE(vd_running(&vd), "the running vnetd serves on");
	for (i = 0; i < 2000 && !vd_log_has(&vd, "failed (the running vnetd's side)"); i++)
		nap_ms(5);
	ASSERT_TRUE(vd_log_has(&vd, "serving on"), "the running vnetd says so");
	for (i = 0; i < 30; i++)
		if (!ping(fe, &vd, pfd, &pg, "after the failed hand-over"))
			goto out;
	ASSERT_TRUE(vufe_connected(fe), "the frontend kept its connection");
	printf("# %s: %u round trips through a failed hand-over, none lost, the longest %lld ms\n",
	       name, pg.rounds, pg.worst_ms);
out:
	unsetenv("VNETD_TEST_TAKEOVER_FAIL");
	close_fd(&pfd);
	if (fe)
		vufe_destroy(fe);
	if (nv.pid > 0)
		vd_kill(&nv, SIGKILL);
	vd_cleanup(&vd);
}

static void rollback_new_gives_up(void)
{
	rollback_case("tkr1", "1", false);
}

static void rollback_new_dies(void)
{
	rollback_case("tkr2", "2", false);
}

static void rollback_old_gives_up(void)
{
	rollback_case("tkr3", "3", true);
}

/* a peer of our own on the hand-over socket */
static int peer(const struct vd *vd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[sizeof(sa.sun_path)];
	int fd;

	takeover_path(vd, path, sizeof(path));
	memcpy(sa.sun_path, path, sizeof(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		test_fail("connect %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* wait (bounded) for the peer's connection to be closed by vnetd */
static bool closed_by_vnetd(int fd, char *reply, size_t len)
{
	long long deadline = now_ms() + 15000;
	ssize_t n;

	reply[0] = '\0';
	while (now_ms() < deadline) {
		struct timeval tv = { 0, 200000 };
		char buf[2048];

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(fd, buf, sizeof(buf), 0);
		if (!n)
			return true;
		if (n > (ssize_t)sizeof(struct vnetd_rec_hdr)) {
			size_t k = (size_t)n - sizeof(struct vnetd_rec_hdr);

			if (k >= len)
				k = len - 1;
			memcpy(reply, buf + sizeof(struct vnetd_rec_hdr), k);
			reply[k] = '\0';
		}
	}
	return false;
}

static void hostile_send(int fd, uint32_t magic, uint32_t version,
			 uint32_t type, const void *body, size_t len,
			 bool bad_crc, int cut)
{
	struct vnetd_rec_hdr h = { magic, version, type, (uint32_t)len, 0, 0 };
	static uint8_t buf[sizeof(h) + sizeof(struct vnetd_rec_hello)];

	h.crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), body, (uInt)len);
	if (bad_crc)
		h.crc ^= 1;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, len);
	send(fd, buf, sizeof(h) + len - (size_t)cut, MSG_NOSIGNAL);
}

static void hostile_peers(void)
{
	struct vnetd_rec_hello h = { .pid = 1, .nports = 1 };
	struct pinger pg = {};
	struct vufe *fe = NULL;
	struct vufe_opts o;
	char reply[600];
	struct vd vd;
	int pfd = -1, fd, i;
	size_t hl = offsetof(struct vnetd_rec_hello, port) + sizeof(h.port[0]);
	static const struct {
		const char *what, *expect;
	} cases[] = {
		{ "garbage", "shorter than its 24-byte header" },
		{ "another version", "hand-over version 99" },
		{ "a record cut short", "truncated" },
		{ "a damaged record", "CRC mismatch" },
		{ "other ports", "the running vnetd (pid" },
		{ "too many ports", "HELLO with 1025 ports" },
		{ "silence", "no HELLO within" },
	};

	vd_init(&vd, "tkh", 1, 1);
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	vufe_post_rx(fe, 0, 0);
	snprintf(h.port[0].socket, sizeof(h.port[0].socket), "%s", vd.port[0].sock);
	snprintf(h.port[0].tap, sizeof(h.port[0].tap), "%s", vd.port[0].tap);
	h.port[0].queues = 1;
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		struct vnetd_rec_hello bad = h;

		vd_log_mark(&vd);
		fd = peer(&vd);
		if (fd < 0)
			goto out;
		switch (i) {
		case 0:
			send(fd, "GET / HTTP/1.0\r\n\r\n", 18, MSG_NOSIGNAL);
			break;
		case 1:
			hostile_send(fd, VNETD_REC_MAGIC, 99, VNETD_REC_HELLO, &h, hl,
				     false, 0);
			break;
		case 2:
			hostile_send(fd, VNETD_REC_MAGIC, VNETD_REC_VERSION,
				     VNETD_REC_HELLO, &h, hl, false, 40);
			break;
		case 3:
			hostile_send(fd, VNETD_REC_MAGIC, VNETD_REC_VERSION,
				     VNETD_REC_HELLO, &h, hl, true, 0);
			break;
		case 4:
			bad.port[0].queues = 2;
			hostile_send(fd, VNETD_REC_MAGIC, VNETD_REC_VERSION,
				     VNETD_REC_HELLO, &bad, hl, false, 0);
			break;
		case 5:
			_Static_assert(VNETD_REC_MAX_PORTS == 1024, "1025");
			bad.nports = VNETD_REC_MAX_PORTS + 1;
			hostile_send(fd, VNETD_REC_MAGIC, VNETD_REC_VERSION,
				     VNETD_REC_HELLO, &bad, hl, false, 0);
			break;
		case 6:
			break; /* nothing: vnetd waits, serving on, then gives up */
		}
		/* the frontend is served while vnetd reads the peer */
		if (!ping(fe, &vd, pfd, &pg, cases[i].what)) {
			close(fd);
			goto out;
		}
		ASSERT_TRUE(closed_by_vnetd(fd, reply, sizeof(reply)),
			    "vnetd closed the hostile peer's connection");
		close(fd);
		ASSERT_TRUE(vd_log_has(&vd, cases[i].expect), cases[i].what);
		if (!ASSERT_TRUE(vd_running(&vd), "vnetd runs on"))
			goto out;
		if (!ping(fe, &vd, pfd, &pg, "after a hostile peer"))
			goto out;
	}
	ASSERT_TRUE(vufe_connected(fe), "the frontend kept its connection");
out:
	vd_end(&vd, fe, &pfd);
}

/* one record to FD, with FDS */
static bool rec_send(int fd, uint32_t type, const void *body, size_t len,
		     const int *fds, unsigned int nfds)
{
	static uint8_t buf[65536];
	size_t n = vnetd_rec_build(buf, sizeof(buf), type, nfds, body, len,
				   NULL, 0);

	if (vnet_send_fds(fd, buf, n, fds, nfds, MSG_NOSIGNAL) == (ssize_t)n)
		return true;
	test_fail("send a record of type %u: %s", type, strerror(errno));
	return false;
}

/* a queue of tap NAME in netns NS, made for the test (multi_queue, vnet_hdr) */
static int tap_queue(const char *ns, const char *name)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI |
					  IFF_MULTI_QUEUE | IFF_VNET_HDR };
	int fd;

	if (ns_enter(ns))
		return -1;
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (fd >= 0 && ioctl(fd, TUNSETIFF, &ifr)) {
		close(fd);
		fd = -1;
	}
	ns_leave();
	return fd;
}

/*
 * The new vnetd's side against a hostile "running vnetd" of the test's
 * own: after its HELLO, a PORT without its fds, a PORT of another port,
 * and a STATE whose vhost-user message no frontend could send (a split
 * ring of 3 entries): each refused, said, the new vnetd exits 1, and
 * what it was sent (a tap the test made) is left as it was.
 */
static void takeover_from_hostile(void)
{
	static const char *const expect[] = {
		"3 fds, its flags say 2", "PORT 1 of 1",
		"SET_VRING_NUM was refused",
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vnetd_ho_buf { uint8_t b[65536]; } *in = malloc(sizeof(*in));
	struct vd vd;
	unsigned int i;
	int lfd = -1, cfd = -1, tfd = -1;
	bool attached = false;
	char path[sizeof(sa.sun_path)];

	vd_init(&vd, "tkx", 1, 1);
	snprintf(path, sizeof(path), "/tmp/vnet-tkx-%d.takeover", getpid());
	if (!in || sh("ip netns add %s", vd.ns)) {
		test_fail("setup");
		goto out;
	}
	vd.ns_made = true;
	memcpy(sa.sun_path, path, sizeof(path));
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (!ASSERT_OK(lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
			       listen(lfd, 1),
		       "listen on a hand-over socket of our own"))
		goto out;
	tfd = tap_queue(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(tfd, 0, "a tap of the test's own"))
		goto out;
	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		struct vnetd_rec_port p = { .index = 0, .queues = 1,
					    .flags = VNETD_REC_P_LISTEN };
		int fds[3] = { tfd, tfd, tfd };
		struct vd nv;
		ssize_t n;

		vd_twin(&vd, &nv, i == 0 ? "tkx0" : i == 1 ? "tkx1" : "tkx2");
		nv.extra = "--takeover-socket";
		nv.extra2 = path;
		if (!vd_spawn(&nv))
			goto out;
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (!ASSERT_GE(cfd, 0, "the new vnetd connects"))
			goto out;
		n = recv(cfd, in->b, sizeof(in->b), 0);
		ASSERT_GT(n, (ssize_t)sizeof(struct vnetd_rec_hdr), "its HELLO");
		if (i == 0) {
			rec_send(cfd, VNETD_REC_PORT, &p, sizeof(p), fds, 3);
		} else if (i == 1) {
			p.index = 1;
			rec_send(cfd, VNETD_REC_PORT, &p, sizeof(p), fds, 2);
		} else {
			/* a valid PORT, then a STATE a frontend could not make */
			static struct vhost_user_msg m[2];
			struct vnetd_rec_state st = { .index = 0, .flags = VNETD_REC_S_CONN,
						      .nmsgs = 1 };
			static uint8_t body[1024];
			size_t len;
			int sp[2];

			struct sockaddr_un ls = { .sun_family = AF_UNIX };
			char nsp[128];
			struct stat nst;

			/* the tap in its netns, attached, and a socket that listens */
			if (sh("${OUT:-build}/vnetctl -n %s attach %s >/dev/null 2>&1",
			       vd.ns, vd.port[0].tap)) {
				test_fail("vnetctl attach");
				goto out;
			}
			attached = true;
			snprintf(nsp, sizeof(nsp), "/run/netns/%s", vd.ns);
			fds[1] = open(nsp, O_RDONLY | O_CLOEXEC);
			fds[2] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			snprintf(ls.sun_path, sizeof(ls.sun_path), "%s", vd.port[0].sock);
			unlink(ls.sun_path);
			if (fds[1] < 0 || fstat(fds[1], &nst) || fds[2] < 0 ||
			    bind(fds[2], (struct sockaddr *)&ls, sizeof(ls)) ||
			    listen(fds[2], 1)) {
				test_fail("a netns fd and a listening socket: %s",
					  strerror(errno));
				goto out;
			}
			p.flags |= VNETD_REC_P_NETNS;
			p.netns_ino = nst.st_ino;
			rec_send(cfd, VNETD_REC_PORT, &p, sizeof(p), fds, 3);
			close(fds[1]);
			close(fds[2]);
			n = recv(cfd, in->b, sizeof(in->b), 0); /* READY */
			ASSERT_GT(n, 0, "READY");
			m[0].hdr = (struct vhost_user_hdr){ VHOST_USER_SET_VRING_NUM, 1, 8 };
			m[0].payload.state = (struct vhost_user_vring_state){ 0, 3 };
			len = vnetd_rec_state_body(body, sizeof(body), &st, m, 1);
			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp))
				goto out;
			rec_send(cfd, VNETD_REC_STATE, body, len, &sp[0], 1);
			close(sp[0]);
			close(sp[1]);
		}
		/* refused: a FAIL back, the new vnetd exits non-zero */
		for (int k = 0; k < 3000 && vd_running(&nv); k++)
			nap_ms(10);
		ASSERT_FALSE(vd_running(&nv), "the new vnetd gave up");
		ASSERT_TRUE(WIFEXITED(nv.status) && WEXITSTATUS(nv.status) == 1,
			    "exit 1");
		if (!vd_log_has(&nv, expect[i]))
			test_fail("'%s' not logged: %s", expect[i], vd_log_tail(&nv));
		ASSERT_TRUE(vd_log_has(&nv, "the running vnetd serves on"),
			    "it says who serves");
		close(cfd);
		cfd = -1;
		/* the tap is the test's still, untouched */
		ASSERT_GT(ns_link(vd.ns, vd.port[0].tap, NULL), 0, "the tap is there");
		if (vd_sanitizer_report(&nv, in->b[0] ? (char *)in->b : (char *)in->b,
					sizeof(in->b)))
			test_fail("sanitizer report: %s", (char *)in->b);
	}
out:
	free(in);
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
	if (attached)
		sh("${OUT:-build}/vnetctl -n %s detach %s >/dev/null 2>&1", vd.ns,
		   vd.port[0].tap);
	if (tfd >= 0)
		close(tfd);
	unlink(path);
	vd.pid = -1;
	vd_cleanup(&vd);
}

/* wait (bounded) until VD's log holds S */
static bool log_wait(struct vd *vd, const char *s, int ms)
{
	long long deadline = now_ms() + ms;

	while (!vd_log_has(vd, s)) {
		if (now_ms() > deadline)
			return false;
		nap_ms(5);
	}
	return true;
}

/* the lines of VD's log that hold S */
static unsigned int log_count(struct vd *vd, const char *s)
{
	char line[2048];
	unsigned int n = 0;
	FILE *f = fopen(vd->log, "r");

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return n;
}

/* a twin of VD with port K of VD as its only port */
static void vd_twin_one(const struct vd *vd, unsigned int k, struct vd *nv,
			const char *name)
{
	vd_twin(vd, nv, name);
	nv->nports = 1;
	nv->use_config = false;
	nv->port[0] = vd->port[k];
	nv->port[0].cfg_fd = nv->port[0].dps_fd = nv->port[0].qs_fd = -1;
}

/*
 * Two ports, port 0's tap deleted under the running vnetd, which closes
 * that port: a --takeover with both ports goes through, port 1 keeps its
 * frontend and its frames, and the new vnetd sets port 0 up anew (its tap
 * made again, a frontend served on it).  Then port 0's tap goes again
 * and a --takeover given port 1 only (the hand-over socket named: the
 * default is the first port's tap's) goes through too, dropping port 0.
 */
static void takeover_port_gone(void)
{
	struct pinger pg = {};
	struct vufe *fe = NULL, *fe0 = NULL;
	struct vufe_opts o;
	struct vd vd, nv, nv2;
	int pfd = -1, pfd0 = -1, i;
	char ho[160];

	vd_init(&vd, "tkg", 2, 1);
	nv.pid = nv2.pid = -1;
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[1].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on port 1's tap"))
		goto out;
	o = fe_opts(&vd.port[1]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping_on(fe, &vd, 1, pfd, &pg, "before"))
			goto out;
	if (sh("ip -n %s link del %s", vd.ns, vd.port[0].tap) ||
	    !ASSERT_TRUE(log_wait(&vd, "port stopped", WAIT_MS),
			 "the running vnetd closed port 0"))
		goto out;

	vd_twin(&vd, &nv, "tkgN");
	if (!vd_spawn(&nv) || !ping_through(fe, &vd, 1, &nv, pfd, &pg))
		goto out;
	if (!ASSERT_TRUE(WIFEXITED(vd.status) && WEXITSTATUS(vd.status) == 0,
			 "the old vnetd exited 0 after the hand-over") ||
	    !ASSERT_TRUE(log_wait(&nv, "closed in the running vnetd, set up again",
				  START_MS), vd_log_tail(&nv)))
		goto out;
	ASSERT_TRUE(vd_log_has(&nv, "its frontend connected"),
		    "new: took port 1's frontend");
	for (i = 0; i < 30; i++)
		if (!ping_on(fe, &vd, 1, pfd, &pg, "port 1 after the hand-over"))
			goto out;
	ASSERT_TRUE(vufe_connected(fe), "port 1's frontend kept its connection");
	ASSERT_GT(ns_link(vd.ns, vd.port[0].tap, NULL), 0,
		  "port 0's tap is there again");
	pfd0 = pkt_open(vd.ns, vd.port[0].tap);
	o = fe_opts(&vd.port[0]);
	fe0 = pfd0 >= 0 ? fe_up(&o) : NULL;
	if (!ASSERT_TRUE(fe0 != NULL, "a frontend on port 0, set up anew"))
		goto out;
	vufe_post_rx(fe0, 0, 0);
	for (i = 0; i < 5; i++)
		if (!ping_on(fe0, &vd, 0, pfd0, &pg, "port 0 set up anew"))
			goto out;
	vufe_destroy(fe0);
	fe0 = NULL;
	close_fd(&pfd0);

	/* gone again; this time the new vnetd is given port 1 only */
	if (sh("ip -n %s link del %s", vd.ns, vd.port[0].tap) ||
	    !ASSERT_TRUE(log_wait(&nv, "port stopped", WAIT_MS),
			 "the new vnetd closed port 0"))
		goto out;
	vd_twin_one(&vd, 1, &nv2, "tkgN2");
	snprintf(ho, sizeof(ho), "/run/vnet/%s.takeover", vd.port[0].tap);
	nv2.extra = "--takeover-socket";
	nv2.extra2 = ho;
	if (!vd_spawn(&nv2) || !ping_through(fe, &nv, 1, &nv2, pfd, &pg))
		goto out;
	ASSERT_TRUE(WIFEXITED(nv.status) && WEXITSTATUS(nv.status) == 0,
		    "the second vnetd exited 0 after the hand-over");
	ASSERT_TRUE(vd_log_has(&nv, "vnetd --takeover): 1 port"),
		    "it handed one port over");
	if (!ASSERT_TRUE(log_wait(&nv2, "taken over: tap", START_MS),
			 vd_log_tail(&nv2)))
		goto out;
	for (i = 0; i < 30; i++)
		if (!ping_on(fe, &vd, 1, pfd, &pg, "port 1 after the second hand-over"))
			goto out;
	ASSERT_TRUE(vufe_connected(fe), "port 1's frontend kept its connection");
	printf("# takeover_port_gone: %u round trips, none lost, the longest %lld ms\n",
	       pg.rounds, pg.worst_ms);
	vd_stop(&nv2);
out:
	close_fd(&pfd);
	close_fd(&pfd0);
	if (fe)
		vufe_destroy(fe);
	if (fe0)
		vufe_destroy(fe0);
	if (nv.pid > 0)
		vd_kill(&nv, SIGKILL);
	if (nv2.pid > 0)
		vd_kill(&nv2, SIGKILL);
	if (vd.pid > 0)
		vd_kill(&vd, SIGKILL);
	vd_cleanup(&vd);
}

/*
 * Two ports, port 0 in a netns of its own that is deleted under the
 * running vnetd: the --takeover with both ports goes through, the new
 * vnetd cannot set port 0 up again (its netns is gone), says so and
 * serves port 1, frames going the whole time; it stops cleanly (exit 0).
 */
static void takeover_netns_gone(void)
{
	struct pinger pg = {};
	struct vufe *fe = NULL;
	struct vufe_opts o;
	struct vd vd, nv;
	char ns_b[64];
	int pfd = -1, i;
	bool ns_b_made = false;

	vd_init(&vd, "tkn", 2, 1);
	nv.pid = -1;
	snprintf(ns_b, sizeof(ns_b), "vnet-v-tknb-%d", getpid());
	if (sh("ip netns add %s", ns_b)) {
		test_fail("ip netns add %s", ns_b);
		goto out;
	}
	ns_b_made = true;
	if (nr_made_ns < sizeof(made_ns) / sizeof(made_ns[0]))
		snprintf(made_ns[nr_made_ns++], sizeof(made_ns[0]), "%s", ns_b);
	snprintf(vd.port[0].ns, sizeof(vd.port[0].ns), "%s", ns_b);
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[1].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on port 1's tap"))
		goto out;
	o = fe_opts(&vd.port[1]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping_on(fe, &vd, 1, pfd, &pg, "before"))
			goto out;
	if (sh("ip netns del %s", ns_b) ||
	    !ASSERT_TRUE(log_wait(&vd, "port stopped", WAIT_MS),
			 "the running vnetd closed port 0"))
		goto out;
	ns_b_made = false;
	vd_twin(&vd, &nv, "tknN");
	if (!vd_spawn(&nv) || !ping_through(fe, &vd, 1, &nv, pfd, &pg))
		goto out;
	ASSERT_TRUE(WIFEXITED(vd.status) && WEXITSTATUS(vd.status) == 0,
		    "the old vnetd exited 0 after the hand-over");
	if (!ASSERT_TRUE(log_wait(&nv, "cannot be set up again", START_MS),
			 vd_log_tail(&nv)))
		goto out;
	ASSERT_TRUE(vd_log_has(&nv, "its frontend connected"),
		    "new: took port 1's frontend");
	for (i = 0; i < 30; i++)
		if (!ping_on(fe, &vd, 1, pfd, &pg, "port 1 after the hand-over"))
			goto out;
	ASSERT_TRUE(vufe_connected(fe), "port 1's frontend kept its connection");
	vd_stop(&nv);
	vd.pid = -1;
out:
	close_fd(&pfd);
	if (fe)
		vufe_destroy(fe);
	if (nv.pid > 0)
		vd_kill(&nv, SIGKILL);
	vd_cleanup(&vd);
	if (ns_b_made)
		sh("ip netns del %s >/dev/null 2>&1", ns_b);
	for (i = 0; i < (int)nr_made_ns; i++)
		if (!strcmp(made_ns[i], ns_b))
			made_ns[i][0] = '\0';
}

/*
 * Two ports, the --takeover given them in the other order (its default
 * hand-over socket is then named after the other tap): it goes through,
 * the ports are matched by socket path; the running vnetd's hand-over
 * socket is removed (the new one listens at its own).
 */
static void takeover_any_order(void)
{
	struct pinger pg = {};
	struct vufe *fe = NULL;
	struct vufe_opts o;
	struct vd vd, nv;
	struct port tmp;
	int pfd = -1, i;
	char ho[160], want[200];

	vd_init(&vd, "tka", 2, 1);
	nv.pid = -1;
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[1].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on port 1's tap"))
		goto out;
	o = fe_opts(&vd.port[1]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping_on(fe, &vd, 1, pfd, &pg, "before"))
			goto out;
	vd_twin(&vd, &nv, "tkaN");
	tmp = nv.port[0];
	nv.port[0] = nv.port[1];
	nv.port[1] = tmp;
	if (!vd_spawn(&nv) || !ping_through(fe, &vd, 1, &nv, pfd, &pg))
		goto out;
	if (!ASSERT_TRUE(WIFEXITED(vd.status) && WEXITSTATUS(vd.status) == 0,
			 "the old vnetd exited 0 after the hand-over: the ports in another order"))
		goto out;
	for (i = 0; i < 2; i++) {
		snprintf(want, sizeof(want), "%s: taken over: tap %s",
			 vd.port[i].sock, vd.port[i].tap);
		ASSERT_TRUE(log_wait(&nv, want, START_MS), want);
	}
	ASSERT_TRUE(vd_log_has(&nv, "its frontend connected"),
		    "new: took port 1's frontend");
	for (i = 0; i < 30; i++)
		if (!ping_on(fe, &vd, 1, pfd, &pg, "after"))
			goto out;
	ASSERT_TRUE(vufe_connected(fe), "the frontend kept its connection");
	snprintf(ho, sizeof(ho), "/run/vnet/%s.takeover", vd.port[0].tap);
	ASSERT_TRUE(access(ho, F_OK) && errno == ENOENT,
		    "the old vnetd's hand-over socket (another tap's) is removed");
	vd_stop(&nv);
	vd.pid = -1;
out:
	close_fd(&pfd);
	if (fe)
		vufe_destroy(fe);
	if (nv.pid > 0)
		vd_kill(&nv, SIGKILL);
	vd_cleanup(&vd);
}

/*
 * A --takeover --detach given queues=2 where the running vnetd serves the
 * port with queues=1: refused, exit 1; the message says which vnetd has
 * what (the new one was given queues=2, the running one serves 1), once
 * in the new vnetd's output, and the running one serves on.
 */
static void takeover_refused_says_who(void)
{
	struct pinger pg = {};
	struct vufe *fe = NULL;
	struct vufe_opts o;
	struct vd vd, nv;
	int pfd = -1, i;
	char want[300];

	vd_init(&vd, "tkw", 1, 1);
	nv.pid = -1;
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	vufe_post_rx(fe, 0, 0);
	vd_twin(&vd, &nv, "tkwN");
	nv.port[0].queues = 2;
	nv.extra = "--detach";
	if (!vd_spawn(&nv))
		goto out;
	for (i = 0; i < 2000 && vd_running(&nv); i++)
		nap_ms(10);
	ASSERT_FALSE(vd_running(&nv), "the new vnetd returned");
	ASSERT_TRUE(WIFEXITED(nv.status) && WEXITSTATUS(nv.status) == 1,
		    "exit 1");
	snprintf(want, sizeof(want), "was given tap=%s queues=2, the running vnetd (pid %d) serves it with tap=%s queues=1",
		 vd.port[0].tap, (int)vd.pid, vd.port[0].tap);
	if (!vd_log_has(&nv, want))
		test_fail("'%s' not said: %s", want, vd_log_tail(&nv));
	ASSERT_TRUE(vd_log_has(&nv, "the new vnetd (pid "),
		    "it names the new vnetd as such");
	ASSERT_EQ(log_count(&nv, "--takeover failed"), 1,
		  "said once with --detach");
	ASSERT_TRUE(log_wait(&vd, want, WAIT_MS),
		    "the running vnetd says the same");
	for (i = 0; i < 10; i++)
		if (!ping(fe, &vd, pfd, &pg, "after the refusal"))
			goto out;
	ASSERT_TRUE(vufe_connected(fe), "the frontend kept its connection");
out:
	close_fd(&pfd);
	if (fe)
		vufe_destroy(fe);
	if (nv.pid > 0)
		vd_kill(&nv, SIGKILL);
	vd_cleanup(&vd);
}

/*
 * Three --takeover started at once: they go one after the other, each
 * taking over from the one before (docs/handover.md): the first vnetd and
 * two of the three exit 0 having handed every port over, one serves on,
 * the frontend connected all along and no frame lost.
 */
static void takeover_concurrent(void)
{
	static const char *const names[3] = { "tkcA", "tkcB", "tkcC" };
	struct pinger pg = {};
	struct vufe *fe = NULL;
	struct vufe_opts o;
	struct vd vd, nv[3];
	int pfd = -1, i, k, alive = -1, running, handed = 0, waited = 0;
	long long deadline;

	vd_init(&vd, "tkc", 1, 1);
	for (k = 0; k < 3; k++)
		nv[k].pid = -1;
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping(fe, &vd, pfd, &pg, "before"))
			goto out;
	for (k = 0; k < 3; k++)
		vd_twin(&vd, &nv[k], names[k]);
	for (k = 0; k < 3; k++)
		if (!vd_spawn(&nv[k]))
			goto out;
	/* frames all along, until one vnetd is left and it took the port */
	deadline = now_ms() + 90000;
	for (;;) {
		running = vd_running(&vd);
		for (k = 0; k < 3; k++)
			if (vd_running(&nv[k])) {
				running++;
				alive = k;
			}
		if (running <= 1 && !vd_running(&vd) &&
		    (!running || vd_log_has(&nv[alive], "taken over: tap")))
			break;
		if (!ASSERT_TRUE(now_ms() < deadline,
				 "one vnetd left within 90 s"))
			goto out;
		if (!ping(fe, &vd, pfd, &pg, "during the hand-overs"))
			goto out;
	}
	if (!ASSERT_EQ(running, 1, "one vnetd serves"))
		goto out;
	ASSERT_TRUE(WIFEXITED(vd.status) && WEXITSTATUS(vd.status) == 0,
		    "the first vnetd exited 0");
	ASSERT_TRUE(vd_log_has(&vd, "every port handed over"), "it handed over");
	for (k = 0; k < 3; k++) {
		if (k == alive)
			continue;
		if (WIFEXITED(nv[k].status) && WEXITSTATUS(nv[k].status) == 0 &&
		    vd_log_has(&nv[k], "every port handed over to pid"))
			handed++;
		else
			test_fail("%s: status 0x%x: %s", names[k], nv[k].status,
				  vd_log_tail(&nv[k]));
		waited += vd_log_has(&nv[k], "another hand-over");
	}
	waited += vd_log_has(&nv[alive], "another hand-over");
	ASSERT_EQ(handed, 2, "the two others took over, then handed over in turn");
	ASSERT_TRUE(vd_log_has(&nv[alive], "its frontend connected"),
		    "the last one has the frontend");
	for (i = 0; i < 30; i++)
		if (!ping(fe, &vd, pfd, &pg, "after"))
			goto out;
	ASSERT_TRUE(vufe_connected(fe), "the frontend kept its connection");
	printf("# takeover_concurrent: %d waited for another hand-over; %u round trips, none lost, the longest %lld ms\n",
	       waited, pg.rounds, pg.worst_ms);
	vd_stop(&nv[alive]);
	vd.pid = -1;
out:
	close_fd(&pfd);
	if (fe)
		vufe_destroy(fe);
	for (k = 0; k < 3; k++) {
		if (nv[k].pid > 0)
			vd_kill(&nv[k], SIGKILL);
		if (!test_state.failed && !getenv("VNETD_KEEP_LOGS"))
			unlink(nv[k].log);
	}
	vd_cleanup(&vd);
}

/* a port of VD's netns that VD does not have: socket and tap of its own */
static void port_new(const struct vd *vd, struct port *p, unsigned int tag)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->sock, sizeof(p->sock), "/tmp/vnet-vnetd-%d-%s-n%u.sock",
		 getpid(), vd->name, tag);
	snprintf(p->tap, sizeof(p->tap), "vw%06x%02x",
		 (unsigned int)getpid() & 0xffffff, tag & 0xff);
	p->queues = 1;
	p->cfg_fd = p->dps_fd = p->qs_fd = -1;
}

/* P's socket gone; with TAP its tap (in VD's netns) and its pins too */
static bool port_gone_now(const struct vd *vd, const struct port *p, bool tap,
			  const char **what)
{
	static char dir[160];
	struct stat sb;

	snprintf(dir, sizeof(dir), PIN_ROOT "/%s", p->tap);
	*what = p->sock;
	if (!stat(p->sock, &sb))
		return false;
	*what = dir;
	if (tap && !stat(dir, &sb))
		return false;
	*what = p->tap;
	return !tap || !ns_link(vd->ns, p->tap, NULL);
}

/* the same, waited for: a tap goes once the kernel let go of it */
static bool port_gone(const struct vd *vd, const struct port *p, bool tap)
{
	long long deadline = now_ms() + WAIT_MS;
	const char *what;

	while (!port_gone_now(vd, p, tap, &what))
		if (now_ms() > deadline)
			return ASSERT_TRUE(false, what);
		else
			nap_ms(5);
	return true;
}

/* vnetd closed the frontend's connection (bounded wait) */
static bool vufe_disconnected(const struct vufe *fe, int ms)
{
	struct pollfd p = { .fd = vufe_sock_fd(fe), .events = POLLRDHUP };

	return p.fd >= 0 && poll(&p, 1, ms) == 1 &&
	       (p.revents & (POLLRDHUP | POLLHUP));
}

/* a vnetd with ports A and B, a frontend on each, A pinged */
struct two {
	struct vd vd, nv;
	struct vufe *fe, *feb;
	int pfd;
	struct pinger pg;
};

static bool two_up(struct two *w, const char *name, const char *nvname)
{
	struct vufe_opts o;
	int i;

	memset(w, 0, sizeof(*w));
	w->pfd = -1;
	w->nv.pid = -1;
	vd_init(&w->vd, name, 2, 1);
	if (!vd_up(&w->vd))
		return false;
	w->pfd = pkt_open(w->vd.ns, w->vd.port[0].tap);
	if (!ASSERT_GE(w->pfd, 0, "AF_PACKET on port A's tap"))
		return false;
	o = fe_opts(&w->vd.port[0]);
	w->fe = fe_up(&o);
	o = fe_opts(&w->vd.port[1]);
	w->feb = w->fe ? fe_up(&o) : NULL;
	if (!w->feb)
		return false;
	vufe_post_rx(w->fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping_on(w->fe, &w->vd, 0, w->pfd, &w->pg, "before"))
			return false;
	/* the new vnetd: port A, and a port C the running one has not */
	vd_twin(&w->vd, &w->nv, nvname);
	port_new(&w->vd, &w->nv.port[1], 1);
	return true;
}

static void two_down(struct two *w)
{
	close_fd(&w->pfd);
	if (w->fe)
		vufe_destroy(w->fe);
	if (w->feb)
		vufe_destroy(w->feb);
	if (w->nv.pid > 0)
		vd_kill(&w->nv, SIGKILL);
	rm_pins(w->nv.port[1].tap);
	unlink(w->nv.port[1].sock);
	if (!test_state.failed && !getenv("VNETD_KEEP_LOGS"))
		unlink(w->nv.log);
	vd_cleanup(&w->vd);
}

/* W went through: said, frontend *FE gone, the new vnetd stopped */
static void two_passed(struct two *w, struct vufe **fe, const char *name)
{
	printf("# %s: %u round trips, none lost, the longest %lld ms\n", name,
	       w->pg.rounds, w->pg.worst_ms);
	vufe_destroy(*fe);
	*fe = NULL;
	vd_stop(&w->nv);
	w->vd.pid = -1;
}

/* a new frontend *FE on VD's port K, 10 round trips through it */
static bool fe_pings(struct vufe **fe, struct vd *vd, unsigned int k, int pfd,
		     struct pinger *pg, const char *what)
{
	struct vufe_opts o = fe_opts(&vd->port[k]);
	int i;

	*fe = fe_up(&o);
	if (!ASSERT_TRUE(*fe != NULL, what))
		return false;
	vufe_post_rx(*fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping_on(*fe, vd, k, pfd, pg, what))
			return false;
	return true;
}

/*
 * W's new vnetd spawned, port K (its frontend FE, AF_PACKET on its tap
 * PFD) pinged until the old one exited 0, and the new one says K is its
 */
static bool two_handed_over(struct two *w, struct vufe *fe, unsigned int k,
			    int pfd)
{
	char want[300];

	if (!vd_spawn(&w->nv) ||
	    !ping_through(fe, &w->vd, k, &w->nv, pfd, &w->pg))
		return false;
	ASSERT_TRUE(WIFEXITED(w->vd.status) && WEXITSTATUS(w->vd.status) == 0,
		    "the old vnetd exited 0 after the hand-over");
	snprintf(want, sizeof(want), "%s: taken over: tap %s",
		 w->vd.port[k].sock, w->vd.port[k].tap);
	return ASSERT_TRUE(log_wait(&w->nv, want, START_MS),
			   vd_log_tail(&w->nv));
}

/*
 * Ports A and B, a frontend on each; a --takeover --release-missing given
 * A and a new port C: A is handed over without a frame lost, B stopped by
 * the running vnetd at the commit (its frontend disconnected, its socket,
 * tap and pins gone; both vnetds name it), C set up anew serves a
 * frontend; the new vnetd stops cleanly, leaving no pin of A or C.
 */
static void takeover_ports_change(void)
{
	struct vufe *fec = NULL;
	struct two w;
	int pfdc = -1, i;
	char want[300];
	pid_t old;

	if (!two_up(&w, "tkx", "tkxN"))
		goto out;
	old = w.vd.pid;
	w.nv.extra = "--release-missing";
	if (!two_handed_over(&w, w.fe, 0, w.pfd))
		goto out;
	snprintf(want, sizeof(want),
		 "%s: released: not among the ports of the new vnetd (pid %d",
		 w.vd.port[1].sock, (int)w.nv.pid);
	ASSERT_TRUE(vd_log_has(&w.vd, want),
		    "the old vnetd names the port it stopped");
	snprintf(want, sizeof(want),
		 "%s: released: the running vnetd (pid %d) stops it",
		 w.vd.port[1].sock, (int)old);
	ASSERT_TRUE(vd_log_has(&w.nv, want), "the new vnetd names it too");
	snprintf(want, sizeof(want),
		 "%s: added: not served by the running vnetd",
		 w.nv.port[1].sock);
	ASSERT_TRUE(vd_log_has(&w.nv, want), "the new vnetd set port C up");
	for (i = 0; i < 30; i++)
		if (!ping_on(w.fe, &w.vd, 0, w.pfd, &w.pg,
			     "port A after the hand-over"))
			goto out;
	ASSERT_TRUE(vufe_connected(w.fe),
		    "port A's frontend kept its connection");
	ASSERT_TRUE(vufe_disconnected(w.feb, WAIT_MS),
		    "port B's frontend saw its disconnect");
	ASSERT_TRUE(port_gone(&w.vd, &w.vd.port[1], true),
		    "port B's socket, tap and pins are gone");
	pfdc = pkt_open(w.vd.ns, w.nv.port[1].tap);
	if (!ASSERT_GE(pfdc, 0, "AF_PACKET on port C's tap") ||
	    !fe_pings(&fec, &w.nv, 1, pfdc, &w.pg, "port C, added"))
		goto out;
	two_passed(&w, &fec, "takeover_ports_change");
out:
	close_fd(&pfdc);
	if (fec)
		vufe_destroy(fec);
	two_down(&w);
}

/*
 * Ports A and B, a frontend on each, both handed over; the new vnetd
 * (VNETD_TEST_TAKEOVER_FAIL=4) cannot take A's connection over after the
 * commit: it says so, closes that connection and serves A's socket anew
 * (a new frontend gets frames through), while B, started with it, is
 * served on without a frame lost and keeps its frontend.
 */
static void takeover_start_fails(void)
{
	struct vufe *fea = NULL;
	struct two w;
	int pfdb = -1, i;
	char want[300];

	if (!two_up(&w, "tks", "tksN"))
		goto out;
	vd_twin(&w.vd, &w.nv, "tksN");
	pfdb = pkt_open(w.vd.ns, w.vd.port[1].tap);
	if (!ASSERT_GE(pfdb, 0, "AF_PACKET on port B's tap"))
		goto out;
	vufe_post_rx(w.feb, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping_on(w.feb, &w.vd, 1, pfdb, &w.pg, "port B before"))
			goto out;
	putenv("VNETD_TEST_TAKEOVER_FAIL=4");
	if (!two_handed_over(&w, w.feb, 1, pfdb))
		goto out;
	unsetenv("VNETD_TEST_TAKEOVER_FAIL");
	snprintf(want, sizeof(want),
		 "%s: taking the connection over: ", w.vd.port[0].sock);
	ASSERT_TRUE(vd_log_has(&w.nv, want),
		    "the new vnetd says port A's connection was not taken");
	snprintf(want, sizeof(want),
		 "%s: taken over: tap %s with 1 queue pair\n",
		 w.vd.port[0].sock, w.vd.port[0].tap);
	ASSERT_TRUE(vd_log_has(&w.nv, want),
		    "port A taken over without its frontend");
	ASSERT_TRUE(vufe_disconnected(w.fe, WAIT_MS),
		    "port A's frontend saw its connection closed");
	for (i = 0; i < 30; i++)
		if (!ping_on(w.feb, &w.vd, 1, pfdb, &w.pg, "port B after"))
			goto out;
	ASSERT_TRUE(vufe_connected(w.feb),
		    "port B's frontend kept its connection");
	if (!fe_pings(&fea, &w.vd, 0, w.pfd, &w.pg, "port A, anew"))
		goto out;
	two_passed(&w, &fea, "takeover_start_fails");
out:
	unsetenv("VNETD_TEST_TAKEOVER_FAIL");
	close_fd(&pfdb);
	if (fea)
		vufe_destroy(fea);
	two_down(&w);
}

enum refusal {
	REF_NO_FLAG,      /* B left out without --release-missing */
	REF_MISTYPED,     /* C: B's tap under another socket path */
	REF_TAP_HELD,     /* C: a tap another vnetd serves */
	REF_SOCKET_BUSY,  /* C: a socket path another vnetd listens on */
	REF_NEW_GIVES_UP, /* C set up, then the new vnetd gives up, frozen */
	REF_OLD_GIVES_UP, /* ... the running one gives up instead of COMMIT */
};

/*
 * A --takeover --release-missing given A and a new port C that fails as
 * HOW says: the new vnetd exits 1 saying EXPECT; the running vnetd serves
 * A and B on (no frame lost, B's frontend connected: B was not released)
 * and C left nothing behind (its socket; its tap and pins, when its own).
 */
static void ports_refused(const char *name, enum refusal how,
			  const char *expect)
{
	static char env[64];
	struct vd other = { .pid = -1 };
	char nvname[32], oname[32];
	struct two w;
	long long deadline;
	int i;

	snprintf(nvname, sizeof(nvname), "%sN", name);
	if (how == REF_OLD_GIVES_UP) {
		snprintf(env, sizeof(env), "VNETD_TEST_TAKEOVER_FAIL=3");
		putenv(env);
	}
	if (!two_up(&w, name, nvname))
		goto out;
	unsetenv("VNETD_TEST_TAKEOVER_FAIL");
	w.nv.extra = how == REF_NO_FLAG ? NULL : "--release-missing";
	if (how == REF_MISTYPED)
		snprintf(w.nv.port[1].tap, sizeof(w.nv.port[1].tap), "%s",
			 w.vd.port[1].tap);
	if (how == REF_TAP_HELD || how == REF_SOCKET_BUSY) {
		snprintf(oname, sizeof(oname), "%sO", name);
		vd_init(&other, oname, 1, 1);
		if (!vd_up(&other))
			goto out;
	}
	if (how == REF_TAP_HELD) {
		w.nv.port[1] = other.port[0];
		snprintf(w.nv.port[1].sock, sizeof(w.nv.port[1].sock),
			 "/tmp/vnet-vnetd-%d-%s-n1.sock", getpid(), name);
		snprintf(w.nv.port[1].ns, sizeof(w.nv.port[1].ns), "%s",
			 other.ns);
	}
	if (how == REF_SOCKET_BUSY)
		snprintf(w.nv.port[1].sock, sizeof(w.nv.port[1].sock), "%s",
			 other.port[0].sock);
	if (how == REF_NEW_GIVES_UP) {
		snprintf(env, sizeof(env), "VNETD_TEST_TAKEOVER_FAIL=1");
		putenv(env);
	}
	vd_log_mark(&w.vd);
	if (!vd_spawn(&w.nv))
		goto out;
	unsetenv("VNETD_TEST_TAKEOVER_FAIL");
	deadline = now_ms() + 60000;
	while (vd_running(&w.nv) && now_ms() < deadline)
		if (!ping_on(w.fe, &w.vd, 0, w.pfd, &w.pg,
			     "during the refused hand-over"))
			goto out;
	if (!ASSERT_FALSE(vd_running(&w.nv), "the new vnetd exited"))
		goto out;
	ASSERT_TRUE(WIFEXITED(w.nv.status) && WEXITSTATUS(w.nv.status) == 1,
		    "... with status 1");
	if (!vd_log_has(&w.nv, expect))
		test_fail("'%s' not said: %s", expect, vd_log_tail(&w.nv));
	ASSERT_TRUE(vd_running(&w.vd), "the running vnetd serves on");
	for (i = 0; i < 30; i++)
		if (!ping_on(w.fe, &w.vd, 0, w.pfd, &w.pg, "after the refusal"))
			goto out;
	ASSERT_TRUE(vufe_connected(w.fe),
		    "port A's frontend kept its connection");
	ASSERT_TRUE(vufe_connected(w.feb),
		    "port B's frontend kept its connection");
	if (how == REF_SOCKET_BUSY) {
		ASSERT_EQ(ns_link(w.vd.ns, w.nv.port[1].tap, NULL), 0,
			  "port C's tap was never made");
		ASSERT_OK(access(other.port[0].sock, F_OK),
			  "the other vnetd's socket is still there");
	} else {
		ASSERT_TRUE(port_gone(&w.vd, &w.nv.port[1],
				      how != REF_MISTYPED &&
					      how != REF_TAP_HELD),
			    "port C left nothing behind");
	}
	if (how == REF_TAP_HELD || how == REF_SOCKET_BUSY)
		ASSERT_TRUE(vd_running(&other),
			    "the other vnetd serves its port on");
	printf("# %s: %u round trips through a refused hand-over, none lost, the longest %lld ms\n",
	       name, w.pg.rounds, w.pg.worst_ms);
out:
	unsetenv("VNETD_TEST_TAKEOVER_FAIL");
	two_down(&w);
	if (other.nports)
		vd_cleanup(&other);
}

static void takeover_ports_no_flag(void)
{
	ports_refused("tkq1", REF_NO_FLAG, "only with --release-missing");
}

static void takeover_ports_mistyped(void)
{
	ports_refused("tkq2", REF_MISTYPED, "a mistyped socket path?");
}

static void takeover_ports_tap_held(void)
{
	ports_refused("tkq3", REF_TAP_HELD, "already attached by");
}

static void takeover_ports_socket_busy(void)
{
	ports_refused("tkq6", REF_SOCKET_BUSY,
		      "another process is listening there");
}

static void takeover_ports_new_gives_up(void)
{
	ports_refused("tkq4", REF_NEW_GIVES_UP,
		      "not added: the hand-over failed");
}

static void takeover_ports_old_gives_up(void)
{
	ports_refused("tkq5", REF_OLD_GIVES_UP,
		      "not added: the hand-over failed");
}

VNET_TEST("vnetd/takeover", takeover);
VNET_TEST("vnetd/packed/takeover", takeover_packed);
VNET_TEST("vnetd/takeover_mq", takeover_mq);
VNET_TEST("vnetd/takeover_rollback_new_gives_up", rollback_new_gives_up);
VNET_TEST("vnetd/takeover_rollback_new_dies", rollback_new_dies);
VNET_TEST("vnetd/takeover_rollback_old_gives_up", rollback_old_gives_up);
VNET_TEST("vnetd/takeover_hostile_peers", hostile_peers);
VNET_TEST("vnetd/takeover_from_hostile", takeover_from_hostile);
VNET_TEST("vnetd/takeover_port_gone", takeover_port_gone);
VNET_TEST("vnetd/takeover_netns_gone", takeover_netns_gone);
VNET_TEST("vnetd/takeover_any_order", takeover_any_order);
VNET_TEST("vnetd/takeover_refused_says_who", takeover_refused_says_who);
VNET_TEST("vnetd/takeover_concurrent", takeover_concurrent);
VNET_TEST("vnetd/takeover_ports_change", takeover_ports_change);
VNET_TEST("vnetd/takeover_start_fails", takeover_start_fails);
VNET_TEST("vnetd/takeover_ports_no_flag", takeover_ports_no_flag);
VNET_TEST("vnetd/takeover_ports_mistyped", takeover_ports_mistyped);
VNET_TEST("vnetd/takeover_ports_tap_held", takeover_ports_tap_held);
VNET_TEST("vnetd/takeover_ports_socket_busy", takeover_ports_socket_busy);
VNET_TEST("vnetd/takeover_ports_new_gives_up", takeover_ports_new_gives_up);
VNET_TEST("vnetd/takeover_ports_old_gives_up", takeover_ports_old_gives_up);
