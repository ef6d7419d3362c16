// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetd datapath tests: hostile input: broken rings and messages, stuck fds, tap and netns gone, guest memory truncated (see vnetd_test.h) */
#include "vnetd_test.h"

/* ------------------------------------------------------------------ */
/* 5. hostile input                                                    */
/* ------------------------------------------------------------------ */

struct hostile_env {
	struct vd vd;
	struct vufe *fe_b;	/* a good guest on port 1 all along */
	int pfd[2];
	__u32 id;
	bool packed;		/* vnetd --packed, guests on packed rings */
};

static struct vufe_opts hostile_opts(struct hostile_env *h, unsigned int port)
{
	struct vufe_opts o = fe_opts(&h->vd.port[port]);

	if (h->packed)
		o.want_features |= 1ULL << VIRTIO_F_RING_PACKED;
	return o;
}

static bool hostile_up_mode(struct hostile_env *h, const char *name,
			    bool packed)
{
	struct vufe_opts o;

	memset(h, 0, sizeof(*h));
	h->pfd[0] = h->pfd[1] = -1;
	h->packed = packed;
	vd_init(&h->vd, name, 2, 1);
	if (packed)
		h->vd.extra = "--packed";
	if (!vd_up(&h->vd))
		return false;
	h->pfd[0] = pkt_open(h->vd.ns, h->vd.port[0].tap);
	h->pfd[1] = pkt_open(h->vd.ns, h->vd.port[1].tap);
	if (!ASSERT_GE(h->pfd[0], 0, "AF_PACKET on tap 0") ||
	    !ASSERT_GE(h->pfd[1], 0, "AF_PACKET on tap 1"))
		return false;
	o = hostile_opts(h, 1);
	h->fe_b = fe_up(&o);
	if (!h->fe_b || !ASSERT_EQ(vufe_packed(h->fe_b), packed,
				   packed ? "RING_PACKED negotiated" :
					    "split rings"))
		return false;
	vufe_post_rx(h->fe_b, 0, 0);
	return ping_both(h->fe_b, &h->vd.port[1], 0, h->pfd[1], h->id++,
			 "port 1 before");
}

static bool hostile_up(struct hostile_env *h, const char *name)
{
	return hostile_up_mode(h, name, false);
}

static void hostile_down(struct hostile_env *h)
{
	if (h->fe_b)
		vufe_destroy(h->fe_b);
	close_fd(&h->pfd[0]);
	close_fd(&h->pfd[1]);
	vd_cleanup(&h->vd);
}

/* a fresh good guest on port 0 */
static struct vufe *hostile_guest(struct hostile_env *h)
{
	struct vufe_opts o = hostile_opts(h, 0);
	struct vufe *fe = fe_up(&o);

	if (fe && !ASSERT_EQ(vufe_packed(fe), h->packed, "ring type")) {
		vufe_destroy(fe);
		return NULL;
	}
	return fe;
}

/*
 * After one hostile input: vnetd logged it, is alive, port 1 still moves
 * frames both ways, and port 0 serves a fresh guest.
 */
static bool hostile_after(struct hostile_env *h, const char *kind)
{
	char line[300], what[96];
	struct vufe *fe;
	bool ok;

	if (!vd_log_wait_line(&h->vd, line, sizeof(line), WAIT_MS)) {
		test_fail("%s: nothing logged", kind);
		return false;
	}
	dbg("%s: vnetd said: %s\n", kind, line);
	if (!vd_running(&h->vd)) {
		test_fail("%s: vnetd died (status 0x%x): %s", kind,
			  h->vd.status, vd_log_tail(&h->vd));
		return false;
	}
	snprintf(what, sizeof(what), "%s: port 1", kind);
	if (!ping_both(h->fe_b, &h->vd.port[1], 0, h->pfd[1], h->id++, what))
		return false;
	fe = hostile_guest(h);
	if (!fe) {
		test_fail("%s: port 0 does not serve a new guest: %s", kind,
			  vd_log_tail(&h->vd));
		return false;
	}
	vufe_post_rx(fe, 0, 0);
	snprintf(what, sizeof(what), "%s: port 0 afterwards", kind);
	ok = ping_both(fe, &h->vd.port[0], 0, h->pfd[0], h->id++, what);
	vufe_destroy(fe);
	return ok;
}

/* the ring that was not broken still moves frames on this connection */
static bool other_ring_alive(struct hostile_env *h, struct vufe *fe,
			     bool rx_broken, const char *kind)
{
	static __u8 f[512], got[FRAME_MAX];
	long long id = 0x20000000 + h->id++;
	char what[96];
	ssize_t n;

	snprintf(what, sizeof(what), "%s: the %s ring of the same guest", kind,
		 rx_broken ? "TX" : "RX");
	if (rx_broken) {
		test_frame(f, 400, nobody_mac, guest_mac, (__u32)id);
		if (tx_send(fe, 0, NULL, f, 400, 0)) {
			test_fail("%s: %s", what, vufe_strerror(fe));
			return false;
		}
		return tap_expect(h->pfd[0], f, 400, WAIT_MS, what);
	}
	if (vufe_post_rx(fe, 0, 0) <= 0) {
		test_fail("%s: post RX: %s", what, vufe_strerror(fe));
		return false;
	}
	test_frame(f, 400, guest_mac, host_mac, (__u32)id);
	if (!ASSERT_OK(pkt_send(h->pfd[0], NULL, f, 400), what))
		return false;
	n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL, match_id,
		       &id, WAIT_MS);
	if (n < 0) {
		test_fail("%s: frame lost: %s", what,
			  n == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
		return false;
	}
	return ASSERT_EQ(n, 400, what) && ASSERT_MEMEQ(got, f, 400, what);
}

static const struct {
	enum vufe_hostile_ring kind;
	const char *name;
} ring_cases[] = {
	{ VUFE_BAD_DESC_OOB, "desc_oob" },
	{ VUFE_BAD_DESC_STRADDLE, "desc_straddle" },
	{ VUFE_BAD_DESC_LOOP, "desc_loop" },
	{ VUFE_BAD_DESC_NEXT_OOB, "desc_next_oob" },
	{ VUFE_BAD_INDIRECT_OOB, "indirect_oob" },
	{ VUFE_BAD_INDIRECT_ENTRY, "indirect_entry" },
	{ VUFE_BAD_INDIRECT_LEN, "indirect_len" },
	{ VUFE_BAD_INDIRECT_NESTED, "indirect_nested" },
	{ VUFE_BAD_HEAD_OOB, "head_oob" },
	{ VUFE_BAD_AVAIL_JUMP, "avail_jump" },
};

static __u64 bad_drops(const struct vnet_dp_stats *d)
{
	return d->drops[VNET_DROP_BAD_DESC] + d->drops[VNET_DROP_BROKEN];
}

/*
 * PACKED: the same on packed rings, where the kinds without a packed form
 * are their packed counterparts (vufe.h): a chain around the whole ring,
 * an indirect table with NEXT or inside a chain, a buffer id past the ring.
 */
static void hostile_ring_case(bool packed)
{
	static __u8 f[256];
	struct vnet_dp_stats d0, d;
	struct hostile_env h;
	unsigned int i, rx;

	if (!hostile_up_mode(&h, packed ? "hringp" : "hring", packed))
		goto out;
	for (rx = 0; rx < 2; rx++) {
		for (i = 0; i < sizeof(ring_cases) / sizeof(ring_cases[0]);
		     i++) {
			unsigned int vq = rx ? VUFE_RXQ(0) : VUFE_TXQ(0);
			__u32 dir = rx ? VNET_DIR_RX : VNET_DIR_TX;
			char kind[64];
			long long deadline;
			struct vufe *fe;
			int err;

			/* on RX: the four kinds that reach the RX ring walk */
			if (rx && ring_cases[i].kind != VUFE_BAD_DESC_OOB &&
			    ring_cases[i].kind != VUFE_BAD_DESC_LOOP &&
			    ring_cases[i].kind != VUFE_BAD_INDIRECT_OOB &&
			    ring_cases[i].kind != VUFE_BAD_AVAIL_JUMP)
				continue;
			snprintf(kind, sizeof(kind), "%s %s",
				 rx ? "rx" : "tx", ring_cases[i].name);
			fe = hostile_guest(&h);
			if (!fe)
				goto out;
			/* every message of the setup is handled */
			if (!ASSERT_EQ(vufe_backend_alive(fe, WAIT_MS), 1,
				       "backend answers")) {
				vufe_destroy(fe);
				goto out;
			}
			dps_read(&h.vd.port[0], dir, 0, &d0);
			vd_log_mark(&h.vd);
			err = vufe_hostile_ring(fe, vq, ring_cases[i].kind);
			if (err < 0) {
				test_fail("%s: %s", kind, vufe_strerror(fe));
				vufe_destroy(fe);
				goto out;
			}
			/* RX rings are only read when a frame comes */
			if (rx) {
				size_t len = udp_frame(f, guest_mac, host_mac,
						       31000, i);

				pkt_send(h.pfd[0], NULL, f, len);
			}
			deadline = now_ms() + WAIT_MS;
			while (dps_read(&h.vd.port[0], dir, 0, &d) &&
			       bad_drops(&d) == bad_drops(&d0) &&
			       now_ms() < deadline)
				nap_ms(2);
			dbg("%s: drops bad_desc %llu broken %llu\n", kind,
			    (unsigned long long)d.drops[VNET_DROP_BAD_DESC],
			    (unsigned long long)d.drops[VNET_DROP_BROKEN]);
			if (!ASSERT_GT(bad_drops(&d), bad_drops(&d0), kind) ||
			    !other_ring_alive(&h, fe, rx, kind)) {
				vufe_destroy(fe);
				goto out;
			}
			vufe_destroy(fe);
			if (!hostile_after(&h, kind))
				goto out;
		}
	}
out:
	hostile_down(&h);
}

static void hostile_ring(void)
{
	hostile_ring_case(false);
}

static void hostile_ring_packed(void)
{
	hostile_ring_case(true);
}

#define BAD_MSG_VRING_ADDR ((enum vufe_hostile_msg)1000)

static const struct {
	enum vufe_hostile_msg kind;
	const char *name;
} msg_cases[] = {
	{ VUFE_BAD_MSG_TRUNCATED, "truncated" },
	{ VUFE_BAD_MSG_CLOSE_SHORT, "close_short" },
	{ VUFE_BAD_MSG_OVERSIZE, "oversize" },
	{ VUFE_BAD_MSG_KICK_2FDS, "kick_2fds" },
	{ VUFE_BAD_MSG_CALL_NOFD, "call_nofd" },
	{ VUFE_BAD_MSG_ADD_MEM_NOFD, "add_mem_nofd" },
	{ VUFE_BAD_MSG_MEM_TABLE_FDS, "mem_table_fds" },
	{ VUFE_BAD_MSG_VRING_IDX, "vring_idx" },
	{ VUFE_BAD_MSG_VRING_NUM, "vring_num" },
	{ VUFE_BAD_MSG_UNKNOWN, "unknown" },
	{ BAD_MSG_VRING_ADDR, "vring_addr" },
};

/*
 * RX ring 0 stopped (GET_VRING_BASE), given ring addresses that are in no
 * memory region, then started again (SET_VRING_KICK): the start must fail
 * on that ring alone.
 */
static int bad_vring_addr(struct vufe *fe)
{
	struct vhost_vring_state st = { .index = 0 };
	struct vhost_vring_addr a = {
		.index = 0,
		.desc_user_addr = 0xdead0000,
		.used_user_addr = 0xdead1000,
		.avail_user_addr = 0xdead2000,
	};
	__u64 idx = 0;
	__u32 size;
	int efd, err;

	err = vufe_send_msg(fe, VUFE_GET_VRING_BASE, VUFE_MSG_VERSION, &st,
			    sizeof(st), sizeof(st), NULL, 0);
	if (!err)
		err = vufe_recv_reply(fe, VUFE_GET_VRING_BASE, &st, sizeof(st),
				      &size);
	if (!err)
		err = vufe_send_msg(fe, VUFE_SET_VRING_ADDR, VUFE_MSG_VERSION,
				    &a, sizeof(a), sizeof(a), NULL, 0);
	if (err)
		return err;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	err = vufe_send_msg(fe, VUFE_SET_VRING_KICK, VUFE_MSG_VERSION, &idx,
			    sizeof(idx), sizeof(idx), &efd, 1);
	close(efd);
	return err;
}

static void hostile_msg(void)
{
	static __u8 f[512];
	struct hostile_env h;
	unsigned int i;

	if (!hostile_up(&h, "hmsg"))
		goto out;
	for (i = 0; i < sizeof(msg_cases) / sizeof(msg_cases[0]); i++) {
		const char *kind = msg_cases[i].name;
		struct vufe *fe;
		int err, alive;

		fe = hostile_guest(&h);
		if (!fe)
			goto out;
		if (!ASSERT_EQ(vufe_backend_alive(fe, WAIT_MS), 1,
			       "backend answers")) {
			vufe_destroy(fe);
			goto out;
		}
		vd_log_mark(&h.vd);
		if (msg_cases[i].kind == BAD_MSG_VRING_ADDR)
			err = bad_vring_addr(fe);
		else
			err = vufe_hostile_msg(fe, msg_cases[i].kind);
		if (err < 0) {
			test_fail("%s: %s", kind, vufe_strerror(fe));
			vufe_destroy(fe);
			goto out;
		}
		/* answered (kept) or closed (dropped); silence is a hang */
		alive = vufe_backend_alive(fe, WAIT_MS);
		dbg("%s: connection %s\n", kind,
		    alive == 1 ? "kept" : alive == 0 ? "dropped" : "silent");
		if (alive == 1 && msg_cases[i].kind == BAD_MSG_VRING_ADDR) {
			/* the TX ring of this guest was not touched */
			test_frame(f, 400, nobody_mac, guest_mac, 0x30000000);
			if (!ASSERT_OK(tx_send(fe, 0, NULL, f, 400, 0), kind) ||
			    !tap_expect(h.pfd[0], f, 400, WAIT_MS,
					"vring_addr: TX of the same guest")) {
				vufe_destroy(fe);
				goto out;
			}
		}
		vufe_destroy(fe);
		if (alive < 0) {
			test_fail("%s: vnetd neither answered nor closed the connection (%s)",
				  kind, strerror(-alive));
			goto out;
		}
		if (!hostile_after(&h, kind))
			goto out;
	}
out:
	hostile_down(&h);
}

/*
 * A frontend's kick, call and error fds must never hold vnetd: a pipe
 * nobody reads as the call or error fd, a blocking eventfd filled to its
 * maximum count as the call fd (with O_NONBLOCK cleared again after vnetd
 * saw it, in the "cleared" variant).  vnetd signals it (a frame delivered
 * to RX, a broken TX ring); then GET_VRING_BASE of that ring must be
 * answered within 2 s, port 1 must keep moving frames, port 0 must serve a
 * new guest, and SIGTERM must end vnetd (vd_cleanup()).
 */
enum stuck_kind { STUCK_CALL_PIPE, STUCK_ERR_PIPE, STUCK_CALL_EVENTFD,
		  STUCK_CALL_EVENTFD_CLEARED };

/* a pipe whose buffer is full, its write end blocking; -errno */
static int full_pipe(int p[2])
{
	static __u8 junk[4096];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	while (write(p[1], junk, sizeof(junk)) > 0)
		;
	if (errno != EAGAIN || fcntl(p[1], F_SETFL, 0)) {
		close(p[0]);
		close(p[1]);
		return -EIO;
	}
	return 0;
}

static int vring_fd_send(struct vufe *fe, __u32 req, unsigned int vq, int fd)
{
	__u64 u = vq;

	return vufe_send_msg(fe, req, VUFE_MSG_VERSION, &u, sizeof(u),
			     sizeof(u), &fd, 1);
}

/* GET_VRING_BASE of VQ: ms until the answer, or -1 (error, timeout) */
static long long get_base_ms(struct vufe *fe, unsigned int vq)
{
	struct vhost_vring_state st = { .index = vq };
	long long t0 = now_ms();
	__u32 size;

	if (vufe_send_msg(fe, VUFE_GET_VRING_BASE, VUFE_MSG_VERSION, &st,
			  sizeof(st), sizeof(st), NULL, 0) ||
	    vufe_recv_reply(fe, VUFE_GET_VRING_BASE, &st, sizeof(st), &size))
		return -1;
	return now_ms() - t0;
}

/* the log since the mark has NEEDLE */
static bool log_has(struct vd *vd, const char *needle)
{
	static char buf[1 << 16];
	ssize_t n = -1;
	int fd;

	fd = open(vd->log, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, buf, sizeof(buf) - 1, vd->mark);
		close(fd);
	}
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, needle);
}

static bool stuck_one(struct hostile_env *h, enum stuck_kind kind,
		      const char *name)
{
	static __u8 f[512];
	struct vufe_opts o = fe_opts(&h->vd.port[0]);
	unsigned int vq = kind == STUCK_ERR_PIPE ? VUFE_TXQ(0) : VUFE_RXQ(0);
	int pfd[2] = { -1, -1 }, efd = -1, fd;
	struct vufe_vq_stats st;
	char line[300];
	struct vufe *fe;
	long long ms, deadline;
	bool ok = false;

	o.timeout_ms = 4000;
	fe = fe_up(&o);
	if (!fe)
		return false;
	vufe_post_rx(fe, 0, 0);
	if (kind == STUCK_CALL_EVENTFD || kind == STUCK_CALL_EVENTFD_CLEARED) {
		__u64 max = 0xfffffffffffffffeULL;

		efd = eventfd(0, EFD_CLOEXEC);
		if (!ASSERT_GE(efd, 0, "eventfd") ||
		    !ASSERT_EQ(write(efd, &max, sizeof(max)), 8,
			       "eventfd filled"))
			goto out;
		fd = efd;
	} else {
		if (!ASSERT_OK(full_pipe(pfd), "full pipe"))
			goto out;
		fd = pfd[1];
	}
	if (!ASSERT_OK(vring_fd_send(fe, kind == STUCK_ERR_PIPE ?
					 VUFE_SET_VRING_ERR :
					 VUFE_SET_VRING_CALL, vq, fd),
		       name) ||
	    !ASSERT_EQ(vufe_backend_alive(fe, WAIT_MS), 1, "fd taken"))
		goto out;
	/* vnetd has it now: make the shared open file blocking again */
	if (kind == STUCK_CALL_EVENTFD_CLEARED &&
	    !ASSERT_OK(fcntl(efd, F_SETFL, 0), "O_NONBLOCK cleared"))
		goto out;
	vd_log_mark(&h->vd);
	if (kind == STUCK_ERR_PIPE) {
		/* the broken ring writes its error fd */
		if (vufe_hostile_ring(fe, vq, VUFE_BAD_DESC_OOB) < 0) {
			test_fail("%s: %s", name, vufe_strerror(fe));
			goto out;
		}
		if (!vd_log_wait_line(&h->vd, line, sizeof(line), WAIT_MS))
			dbg("%s: no log line about the broken ring\n", name);
	} else {
		/* a frame for the guest: delivered, then the call is written */
		test_frame(f, 400, guest_mac, host_mac, 0x50000000);
		if (!ASSERT_OK(pkt_send(h->pfd[0], NULL, f, 400), name))
			goto out;
		deadline = now_ms() + WAIT_MS;
		while (vufe_vq_stats(fe, VUFE_RXQ(0), &st) == 0 &&
		       st.used_idx == st.last_used && now_ms() < deadline)
			nap_ms(2);
		if (!ASSERT_NEQ(st.used_idx, st.last_used, "frame delivered"))
			goto out;
	}
	nap_ms(50); /* the queue thread is in its write now, if it blocks */
	if (kind == STUCK_CALL_EVENTFD_CLEARED) {
		/*
		 * No control message needed: the watchdog frees the thread,
		 * and the pair's TX ring moves frames again.
		 */
		deadline = now_ms() + 2000;
		while (!log_has(&h->vd, "interrupted") && now_ms() < deadline)
			nap_ms(10);
		if (!ASSERT_TRUE(log_has(&h->vd, "interrupted"),
				 "the held queue thread is interrupted") ||
		    !other_ring_alive(h, fe, true, name))
			goto out;
	}
	ms = get_base_ms(fe, vq);
	dbg("%s: GET_VRING_BASE answered after %lld ms\n", name, ms);
	if (!ASSERT_GE(ms, 0, "GET_VRING_BASE answered") ||
	    !ASSERT_LE(ms, 2000, "GET_VRING_BASE within 2 s"))
		goto out;
	/* held, interrupted, said so */
	if (kind == STUCK_CALL_EVENTFD_CLEARED &&
	    !ASSERT_TRUE(log_has(&h->vd, "the call fd blocked the queue thread"),
			 "log names the blocked call fd"))
		goto out;
	ok = true;
out:
	vufe_destroy(fe);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
	if (efd >= 0)
		close(efd);
	return ok && hostile_after(h, name);
}

static void stuck_fds(void)
{
	static const struct {
		enum stuck_kind kind;
		const char *name;
	} k[] = {
		{ STUCK_CALL_PIPE, "call fd: full pipe" },
		{ STUCK_ERR_PIPE, "error fd: full pipe" },
		{ STUCK_CALL_EVENTFD, "call fd: saturated eventfd" },
		{ STUCK_CALL_EVENTFD_CLEARED,
		  "call fd: saturated eventfd, O_NONBLOCK cleared" },
	};
	struct hostile_env h;
	unsigned int i;

	if (!hostile_up(&h, "stuck"))
		goto out;
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!stuck_one(&h, k[i].kind, k[i].name))
			break;
out:
	hostile_down(&h);
}

/*
 * A port whose tap, or whose netns, goes away while vnetd runs: vnetd
 * logs a line naming the tap, stops that port (its socket file and the
 * pins it made are removed) and the other port keeps moving frames.
 */
static bool gone_pins(const char *tap)
{
	char path[160];

	snprintf(path, sizeof(path), PIN_ROOT "/%s", tap);
	return access(path, F_OK) && errno == ENOENT;
}

static bool port_gone_check(struct vd *vd, const char *what)
{
	long long deadline = now_ms() + WAIT_MS;
	struct port *p = &vd->port[0];
	char needle[64];

	snprintf(needle, sizeof(needle), "tap %s", p->tap);
	while ((!access(p->sock, F_OK) || !gone_pins(p->tap) ||
		!log_has(vd, needle)) && now_ms() < deadline)
		nap_ms(10);
	return ASSERT_TRUE(access(p->sock, F_OK) && errno == ENOENT,
			   "the port's socket file is gone") &&
	       ASSERT_TRUE(gone_pins(p->tap), "the port's pins are gone") &&
	       ASSERT_TRUE(log_has(vd, needle), what) &&
	       ASSERT_TRUE(vd_running(vd), "vnetd still runs");
}

static void port_gone_run(bool netns)
{
	struct vufe *fe[2] = { NULL, NULL };
	char ns_b[64] = "";
	int pfd[2] = { -1, -1 };
	unsigned int i;
	struct vd vd;
	__u32 id = 0;

	vd_init(&vd, netns ? "nsgone" : "tapgone", 2, 1);
	if (netns) {
		/* port 0 in a netns of its own */
		snprintf(ns_b, sizeof(ns_b), "vnet-v-nsb-%d", getpid());
		if (sh("ip netns add %s", ns_b)) {
			test_fail("ip netns add %s failed", ns_b);
			goto out;
		}
		if (nr_made_ns < sizeof(made_ns) / sizeof(made_ns[0]))
			snprintf(made_ns[nr_made_ns++], sizeof(made_ns[0]),
				 "%s", ns_b);
		ns_sysctl(ns_b, "/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
		ns_sysctl(ns_b, "/proc/sys/net/ipv6/conf/default/disable_ipv6",
			  "1");
		snprintf(vd.port[0].ns, sizeof(vd.port[0].ns), "%s", ns_b);
	}
	if (!vd_up(&vd))
		goto out;
	for (i = 0; i < 2; i++) {
		struct vufe_opts o = fe_opts(&vd.port[i]);

		pfd[i] = pkt_open(vd.port[i].ns[0] ? vd.port[i].ns : vd.ns,
				  vd.port[i].tap);
		if (!ASSERT_GE(pfd[i], 0, "AF_PACKET on the tap"))
			goto out;
		fe[i] = fe_up(&o);
		if (!fe[i])
			goto out;
		vufe_post_rx(fe[i], 0, 0);
		if (!ping_both(fe[i], &vd.port[i], 0, pfd[i], id++, "before"))
			goto out;
	}
	vd_log_mark(&vd);
	close_fd(&pfd[0]);
	if (netns) {
		if (sh("ip netns del %s", ns_b)) {
			test_fail("ip netns del %s failed", ns_b);
			goto out;
		}
	} else if (sh("ip -n %s link del %s", vd.ns, vd.port[0].tap)) {
		test_fail("ip link del %s failed", vd.port[0].tap);
		goto out;
	}
	if (!port_gone_check(&vd, netns ? "a log line names the tap whose netns went" :
					  "a log line names the deleted tap"))
		goto out;
	dbg("vnetd said: %s\n", vd_log_tail(&vd));
	for (i = 0; i < 3; i++)
		if (!ping_both(fe[1], &vd.port[1], 0, pfd[1], id++,
			       "the other port afterwards"))
			goto out;
out:
	for (i = 0; i < 2; i++) {
		if (fe[i])
			vufe_destroy(fe[i]);
		close_fd(&pfd[i]);
	}
	vd_cleanup(&vd);
	if (ns_b[0]) {
		sh("ip netns del %s >/dev/null 2>&1", ns_b);
		for (i = 0; i < nr_made_ns; i++)
			if (!strcmp(made_ns[i], ns_b))
				made_ns[i][0] = '\0';
	}
}

static void tap_gone(void)
{
	port_gone_run(false);
}

static void netns_gone(void)
{
	port_gone_run(true);
}

/*
 * A frontend that shrinks its guest memory under running rings: port 0's
 * memfd is truncated while frames are on their way both ways on both
 * ports, to nothing (RINGS: the rings go too) or to 64 KiB (the rings, in
 * the first pages, stay; the buffers go).  vnetd's next access faults
 * (SIGBUS in a queue thread: reading the avail ring, or copying a frame
 * into a guest RX buffer): that queue pair's rings break with a line naming
 * the cause, vnetd lives on, port 1 keeps moving frames both ways,
 * GET_VRING_BASE of the broken rings is answered, a restart on memory
 * whose rings are gone is refused (the control thread faults, and lives),
 * a fresh guest on port 0 is served, and SIGTERM ends vnetd cleanly
 * (hostile_down(): exit status 0, no sanitizer report).  The test itself
 * never touches port 0's guest memory after the truncation: it kicks
 * through the kick eventfd and sends from the tap side.
 */
#define TRUNC_NEEDLE "is no longer backed"

static bool trunc_broken(struct hostile_env *h, const struct vnet_dp_stats *rx0,
			 const struct vnet_dp_stats *tx0)
{
	struct vnet_dp_stats rx, tx;

	return log_has(&h->vd, TRUNC_NEEDLE) &&
	       dps_read(&h->vd.port[0], VNET_DIR_RX, 0, &rx) &&
	       dps_read(&h->vd.port[0], VNET_DIR_TX, 0, &tx) &&
	       rx.drops[VNET_DROP_BROKEN] > rx0->drops[VNET_DROP_BROKEN] &&
	       tx.drops[VNET_DROP_BROKEN] > tx0->drops[VNET_DROP_BROKEN];
}

/*
 * RINGS: the memory fd truncated to 0 (rings and buffers gone), else to
 * 64 KiB (the rings stay, the buffers go).  READS: frames of 1400 bytes
 * read in place (VNETD_RX_DIRECT_MIN=0) and a TX frame posted before the
 * truncation and kicked after: the faults are then the kernel's (tun's
 * copy into and out of the guest's buffers: EFAULT), not vnetd's own
 * loads and stores (SIGBUS).
 */
static void mem_truncated_run(bool rings, bool reads)
{
	static __u8 f[1500];
	unsigned int flen = reads ? 1400 : 400;
	struct vnet_dp_stats rx0, tx0;
	struct hostile_env h;
	struct vufe *fe = NULL;
	long long deadline, ms;
	__u64 one = 1;
	unsigned int i;
	int efd = -1;

	if (reads)
		setenv("VNETD_RX_DIRECT_MIN", "0", 1);
	if (!hostile_up(&h, reads ? "memtruncr" : rings ? "memtrunc" : "memtruncb"))
		goto out;
	fe = hostile_guest(&h);
	if (!fe)
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 2; i++)
		if (!ping_both(fe, &h.vd.port[0], 0, h.pfd[0], h.id++,
			       "port 0 before") ||
		    !ping_both(h.fe_b, &h.vd.port[1], 0, h.pfd[1], h.id++,
			       "port 1 before"))
			goto out;
	if (!dps_read(&h.vd.port[0], VNET_DIR_RX, 0, &rx0) ||
	    !dps_read(&h.vd.port[0], VNET_DIR_TX, 0, &tx0)) {
		test_fail("port 0's stats map");
		goto out;
	}
	vd_log_mark(&h.vd);
	if (reads) {
		/* a TX frame in a buffer about to go: written, not kicked */
		test_frame(f, flen, host_mac, guest_mac, 0x61000000);
		if (!ASSERT_OK(vufe_send(fe, 0, NULL, f, flen, VUFE_TX_NO_KICK),
			       "a TX frame posted, not kicked"))
			goto out;
	}
	if (!ASSERT_OK(ftruncate(vufe_mem_fd(fe), rings ? 0 : 64 << 10),
		       "port 0's guest memory truncated"))
		goto out;
	/* traffic goes on: frames for port 0's guest, its TX ring kicked */
	deadline = now_ms() + WAIT_MS;
	do {
		test_frame(f, flen, guest_mac, host_mac, 0x60000000 + h.id++);
		pkt_send(h.pfd[0], NULL, f, flen);
		if (write(vufe_kick_fd(fe, VUFE_TXQ(0)), &one, sizeof(one)) < 0)
			dbg("kick: %s\n", strerror(errno));
		if (!vd_running(&h.vd))
			break;
		nap_ms(5);
	} while (!trunc_broken(&h, &rx0, &tx0) && now_ms() < deadline);
	if (!vd_running(&h.vd)) {
		test_fail("vnetd died after the frontend truncated its memory (status 0x%x%s%s): %s",
			  h.vd.status,
			  WIFSIGNALED(h.vd.status) ? ", signal " : "",
			  WIFSIGNALED(h.vd.status) ?
				  strsignal(WTERMSIG(h.vd.status)) : "",
			  vd_log_tail(&h.vd));
		goto out;
	}
	if (!ASSERT_TRUE(log_has(&h.vd, TRUNC_NEEDLE),
			 "the broken pair's log line names the cause") ||
	    !ASSERT_TRUE(trunc_broken(&h, &rx0, &tx0),
			 "both rings of port 0's pair broken"))
		goto out;
	if (reads &&
	    (!ASSERT_TRUE(log_has(&h.vd, "reading a frame into the guest's RX buffers faulted (EFAULT)"),
			  "RX: the tap read's EFAULT broke the ring") ||
	     !ASSERT_TRUE(log_has(&h.vd, "guest TX frame into the tap faulted (EFAULT)"),
			  "TX: the tap write's EFAULT broke the ring") ||
	     !ASSERT_FALSE(log_has(&h.vd, "no longer read"),
			   "the tap queue is not taken for failed")))
		goto out;
	for (i = 0; i < 3; i++)
		if (!ping_both(h.fe_b, &h.vd.port[1], 0, h.pfd[1], h.id++,
			       "port 1 after port 0's truncation"))
			goto out;
	/* the frontend stops the broken rings: answered, nothing touched */
	ms = get_base_ms(fe, VUFE_RXQ(0));
	if (!ASSERT_GE(ms, 0, "GET_VRING_BASE of the broken RX ring"))
		goto out;
	ms = get_base_ms(fe, VUFE_TXQ(0));
	if (!ASSERT_GE(ms, 0, "GET_VRING_BASE of the broken TX ring"))
		goto out;
	/* and restarts one on the same memory: refused, vnetd lives */
	if (!rings)
		goto fresh;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!ASSERT_GE(efd, 0, "eventfd") ||
	    !ASSERT_OK(vring_fd_send(fe, VUFE_SET_VRING_KICK, VUFE_TXQ(0), efd),
		       "SET_VRING_KICK on truncated memory") ||
	    !ASSERT_EQ(vufe_backend_alive(fe, WAIT_MS), 1,
		       "vnetd answers after the restart on truncated memory") ||
	    !ASSERT_TRUE(vd_running(&h.vd), "vnetd still runs"))
		goto out;
	deadline = now_ms() + WAIT_MS;
	while (!log_has(&h.vd, "not started") && now_ms() < deadline)
		nap_ms(10);
	if (!ASSERT_TRUE(log_has(&h.vd, "not started"),
			 "the restart on truncated memory is refused"))
		goto out;
fresh:
	dbg("vnetd said: %s\n", vd_log_tail(&h.vd));
	vufe_destroy(fe);
	fe = NULL;
	hostile_after(&h, "truncated guest memory");
out:
	if (efd >= 0)
		close(efd);
	vufe_destroy(fe);
	hostile_down(&h);
	unsetenv("VNETD_RX_DIRECT_MIN");
}

static void mem_truncated(void)
{
	mem_truncated_run(true, false);
}

static void mem_truncated_buffers(void)
{
	mem_truncated_run(false, false);
}

static void mem_truncated_reads(void)
{
	mem_truncated_run(false, true);
}

VNET_TEST("vnetd/hostile_ring", hostile_ring);
VNET_TEST("vnetd/packed/hostile_ring", hostile_ring_packed);
VNET_TEST("vnetd/hostile_msg", hostile_msg);
VNET_TEST("vnetd/stuck_fds", stuck_fds);
VNET_TEST("vnetd/tap_gone", tap_gone);
VNET_TEST("vnetd/netns_gone", netns_gone);
VNET_TEST("vnetd/mem_truncated", mem_truncated);
VNET_TEST("vnetd/mem_truncated_buffers", mem_truncated_buffers);
VNET_TEST("vnetd/mem_truncated_reads", mem_truncated_reads);
