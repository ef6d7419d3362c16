// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vufe_selftest: DPDK's vhost-user backend, through dpdk-testpmd */
#include "vufe_selftest.h"

/* ------------------------------------------------------------------ */
/* dpdk: DPDK's vhost-user backend, through dpdk-testpmd               */
/* ------------------------------------------------------------------ */

struct dpdk {
	struct testpmd pmd;
	char sock[108];
};

static struct dpdk srv = { .pmd = TESTPMD_INIT };
static char dpdk_skip[256];

static bool dpdk_running(struct dpdk *d)
{
	return testpmd_running(&d->pmd);
}

/*
 * Starts testpmd with one vhost port looped to itself and macswap
 * forwarding.  Server mode: waits for the socket; client mode: the caller
 * is already listening on d->sock.
 */
static int dpdk_start(struct dpdk *d, const char *tag, unsigned int queues,
		      bool client, char *why, size_t wlen)
{
	char vdev[256], prefix[64], q[32], txq[32];
	const char *bin = testpmd_bin("VUFE_TESTPMD");
	const char *app[] = {
		"--port-topology=loop", "--forward-mode=macswap",
		"--auto-start", "--disable-link-check", "--nb-cores=1", q, txq,
		"--total-num-mbufs=8192", NULL,
	};
	int err;

	if (!bin) {
		snprintf(why, wlen,
			 "dpdk-testpmd not installed (apt-get install dpdk-dev "
			 "librte-net-vhost23 librte-mempool-ring23)");
		return -ENOENT;
	}
	if (!client) {
		snprintf(d->sock, sizeof(d->sock), "/tmp/vufe-%d-%s.sock",
			 getpid(), tag);
		unlink(d->sock);
	}
	snprintf(d->pmd.log, sizeof(d->pmd.log), "/tmp/vufe-%d-%s.log",
		 getpid(), tag);
	snprintf(vdev, sizeof(vdev), "net_vhost0,iface=%s,queues=%u%s",
		 d->sock, queues, client ? ",client=1" : "");
	snprintf(prefix, sizeof(prefix), "vufe%d%s", getpid(), tag);
	snprintf(q, sizeof(q), "--rxq=%u", queues);
	snprintf(txq, sizeof(txq), "--txq=%u", queues);

	err = testpmd_start(&d->pmd, bin, vdev, prefix, 512, app);
	if (err) {
		snprintf(why, wlen, "starting testpmd: %s", strerror(-err));
		return err;
	}
	if (client)
		return 0;
	/* bounded: the socket appears, or testpmd dies, or 20 s pass */
	return testpmd_wait_socket(&d->pmd, d->sock, 20000, why, wlen);
}

/* ends testpmd (EOF on stdin, then signals); 0, or how it died */
static int dpdk_stop(struct dpdk *d, char *why, size_t wlen)
{
	return testpmd_stop(&d->pmd, why, wlen);
}

static void dpdk_setup_server(void);

/*
 * The shared testpmd: started by the first DPDK case that runs (none when
 * no DPDK case is selected), stopped by vufe/dpdk/testpmd_exit or at the
 * end.  Sets dpdk_skip when it cannot run.
 */
static bool dpdk_tried;

static void dpdk_need_server(void)
{
	if (dpdk_tried)
		return;
	dpdk_tried = true;
	dpdk_skip[0] = '\0';
	dpdk_setup_server();
}

static bool dpdk_ready(void)
{
	dpdk_need_server();
	if (dpdk_skip[0]) {
		test_skip("%s", dpdk_skip);
		return false;
	}
	if (!dpdk_running(&srv)) {
		test_fail("testpmd is gone (log %s)", srv.pmd.log);
		return false;
	}
	return true;
}

static struct vufe_opts dpdk_opts(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;

	o.path = srv.sock;
	o.timeout_ms = 10000;
	o.want_features = pkf(o.want_features);
	return o;
}

static bool dpdk_up(struct vufe_opts *o, struct vufe **fe)
{
	*fe = NULL;
	if (!ASSERT_OK(vufe_create(o, fe), vufe_strerror(NULL)))
		return false;
	if (!ASSERT_OK(vufe_connect(*fe), vufe_strerror(*fe)) ||
	    !ASSERT_OK(vufe_setup(*fe), vufe_strerror(*fe)) ||
	    !ASSERT_EQ(vufe_packed(*fe), packed,
		       packed ? "RING_PACKED negotiated" : "split rings")) {
		vufe_destroy(*fe);
		*fe = NULL;
		return false;
	}
	return true;
}

/* an Ethernet frame: two local MACs, ethertype 0x88b5, numbered payload */
static void make_frame(__u8 *f, size_t len, unsigned int seq)
{
	static const __u8 dst[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const __u8 src[6] = { 0x02, 0, 0, 0, 0, 0x02 };

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88;
	f[13] = 0xb5;
	fill(f + 14, len - 14, seq);
	memcpy(f + 14, &seq, sizeof(seq));
}

/* the frame came back with its MACs swapped and every other byte intact */
static bool check_macswap(const __u8 *sent, const __u8 *got, ssize_t n,
			  size_t len, const char *what)
{
	char name[160];

	snprintf(name, sizeof(name), "%s: length", what);
	if (!ASSERT_EQ(n, len, name))
		return false;
	snprintf(name, sizeof(name), "%s: dst = sent src", what);
	if (!ASSERT_MEMEQ(got, sent + 6, 6, name))
		return false;
	snprintf(name, sizeof(name), "%s: src = sent dst", what);
	if (!ASSERT_MEMEQ(got + 6, sent, 6, name))
		return false;
	snprintf(name, sizeof(name), "%s: rest intact", what);
	return ASSERT_MEMEQ(got + 12, sent + 12, len - 12, name);
}

/* sends one frame (reaping TX when the ring is full), gets it back */
static bool echo(struct vufe *fe, unsigned int qp, size_t len,
		 unsigned int flags, unsigned int seq, unsigned int *nbufs)
{
	static __u8 f[65536], got[70000];
	struct virtio_net_hdr_mrg_rxbuf h;
	char what[96];
	ssize_t n;
	int err, tries;

	make_frame(f, len, seq);
	for (tries = 0; tries < 1000; tries++) {
		err = vufe_send(fe, qp, NULL, f, len, flags);
		if (err != -ENOSPC)
			break;
		vufe_tx_reap(fe, qp);
		poll(NULL, 0, 1);
	}
	snprintf(what, sizeof(what), "send %zu bytes flags 0x%x qp %u", len,
		 flags, qp);
	if (!ASSERT_OK(err, what))
		return false;
	n = vufe_recv_wait(fe, qp, got, sizeof(got), &h, nbufs, 5000);
	if (n < 0) {
		test_fail("%s: recv: %s", what, vufe_strerror(fe));
		return false;
	}
	if (!ASSERT_EQ(h.hdr.gso_type, VIRTIO_NET_HDR_GSO_NONE, "gso none"))
		return false;
	return check_macswap(f, got, n, len, what);
}

static bool reap_all(struct vufe *fe, unsigned int qp)
{
	long long i;

	for (i = 0; i < 5000 && vufe_tx_inflight(fe, qp); i++) {
		if (vufe_tx_reap(fe, qp) < 0)
			break;
		if (vufe_tx_inflight(fe, qp))
			poll(NULL, 0, 1);
	}
	return ASSERT_EQ(vufe_tx_inflight(fe, qp), 0, "all TX completed");
}

/* dpdk_up() with dpdk_opts(), once the server is there */
static bool dpdk_fe(struct vufe **fe)
{
	struct vufe_opts o;

	if (!dpdk_ready())
		return false;
	o = dpdk_opts();
	return dpdk_up(&o, fe);
}

/* 1514-byte frames FROM..TO-1 echoed on queue pair 0, then all reaped */
static bool echo_range(struct vufe *fe, unsigned int from, unsigned int to)
{
	unsigned int i;

	for (i = from; i < to; i++)
		if (!echo(fe, 0, 1514, 0, i, NULL))
			return false;
	reap_all(fe, 0);
	return true;
}

void dpdk_handshake(void)
{
	struct vufe *fe;
	__u64 f;

	if (!dpdk_fe(&fe))
		return;
	f = vufe_features(fe);
	ASSERT_TRUE(f & (1ULL << VIRTIO_F_VERSION_1), "VERSION_1");
	ASSERT_TRUE(f & (1ULL << VIRTIO_RING_F_EVENT_IDX), "EVENT_IDX");
	ASSERT_TRUE(f & (1ULL << VIRTIO_NET_F_MRG_RXBUF), "MRG_RXBUF");
	ASSERT_TRUE(f & (1ULL << VUFE_F_PROTOCOL_FEATURES), "bit 30");
	ASSERT_EQ(vufe_protocol_features(fe),
		  vufe_backend_protocol_features(fe) & VUFE_PROTO_ACKED,
		  "acked = offered & wanted");
	ASSERT_TRUE(vufe_protocol_features(fe) & (1ULL << VUFE_PROTO_REPLY_ACK),
		    "REPLY_ACK (SET_MEM_TABLE acked)");
	ASSERT_GE(vufe_max_queues(fe), 2, "GET_QUEUE_NUM");
	if (verbose)
		fprintf(stderr,
			"  features 0x%llx of 0x%llx, protocol 0x%llx of 0x%llx\n",
			(unsigned long long)f,
			(unsigned long long)vufe_backend_features(fe),
			(unsigned long long)vufe_protocol_features(fe),
			(unsigned long long)vufe_backend_protocol_features(fe));
	ASSERT_EQ(vufe_backend_alive(fe, 2000), 1, "alive");
	vufe_destroy(fe);
}

void dpdk_mergeable(void)
{
	static const size_t sizes[] = { 60, 64, 1514, 4000, 4084, 4085, 9000,
					16000, 65000 };
	struct vufe_vq_stats rx, tx;
	struct vufe_opts o;
	unsigned int i, nb;
	struct vufe *fe;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	o.nr_regions = 2;
	if (!dpdk_up(&o, &fe))
		return;
	if (!ASSERT_EQ(vufe_post_rx(fe, 0, 0), 256, "posted"))
		goto out;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (!echo(fe, 0, sizes[i], 0, i, &nb))
			goto out;
		ASSERT_EQ(nb, (12 + sizes[i] + 4095) / 4096,
			  "num_buffers = pages needed");
	}
	reap_all(fe, 0);
	vufe_vq_stats(fe, VUFE_RXQ(0), &rx);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
	ASSERT_GE(rx.signals, 1, "RX signals counted");
	ASSERT_GE(tx.signals, 1, "TX completion signals counted");
	ASSERT_EQ(tx.frames, i, "TX frames");
	ASSERT_EQ(rx.frames, i, "RX frames");
	if (verbose)
		fprintf(stderr,
			"  rx: signals %llu wakeups %llu kicks %llu/%llu; "
			"tx: signals %llu kicks %llu suppressed %llu\n",
			(unsigned long long)rx.signals,
			(unsigned long long)rx.wakeups,
			(unsigned long long)rx.kicks,
			(unsigned long long)rx.kicks_suppressed,
			(unsigned long long)tx.signals,
			(unsigned long long)tx.kicks,
			(unsigned long long)tx.kicks_suppressed);
out:
	vufe_destroy(fe);
}

void dpdk_tx_layouts(void)
{
	static const unsigned int flags[] = {
		0,
		VUFE_TX_HDR_INLINE,
		VUFE_TX_SEGS(3),
		VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(4),
		VUFE_TX_INDIRECT,
		VUFE_TX_INDIRECT | VUFE_TX_SEGS(16),
		VUFE_TX_INDIRECT | VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(2),
	};
	struct vufe *fe;
	unsigned int i;

	if (!dpdk_fe(&fe))
		return;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!echo(fe, 0, 1514, flags[i], i, NULL) ||
		    !echo(fe, 0, 9000, flags[i], 100 + i, NULL))
			break;
	}
	reap_all(fe, 0);
	vufe_destroy(fe);
}

void dpdk_burst(void)
{
	static __u8 f[1514], got[2000];
	struct vufe_vq_stats tx;
	unsigned int i, seq, sent = 0, rcvd = 0;
	struct vufe *fe;
	ssize_t n;
	int err;

	if (!dpdk_fe(&fe))
		return;
	vufe_post_rx(fe, 0, 0);
	/* 1000 frames in bursts of 32, each burst kicked once */
	while (rcvd < 1000) {
		for (i = 0; i < 32 && sent < 1000; i++) {
			make_frame(f, sizeof(f), sent);
			err = vufe_send(fe, 0, NULL, f, sizeof(f),
					VUFE_TX_NO_KICK);
			if (err == -ENOSPC)
				break;
			if (!ASSERT_OK(err, vufe_strerror(fe)))
				goto out;
			sent++;
		}
		vufe_kick(fe, VUFE_TXQ(0));
		vufe_tx_reap(fe, 0);
		if (sent == rcvd) {
			/*
			 * Nothing went out: the TX ring is full of chains the
			 * device has taken but not yet marked used (DPDK's
			 * packed dequeue flushes its used marks late, when
			 * most of the ring is outstanding).  Wait for those
			 * completions, not for a frame that was never sent.
			 */
			unsigned int k, before = vufe_tx_inflight(fe, 0);

			/* the reap above made room already: send again */
			if (!before)
				continue;
			for (k = 0; k < 5000 && vufe_tx_inflight(fe, 0) >= before; k++) {
				vufe_poll_signals(fe);
				vufe_tx_reap(fe, 0);
				if (vufe_tx_inflight(fe, 0) >= before)
					usleep(1000);
			}
			if (!ASSERT_LT(vufe_tx_inflight(fe, 0), before,
				       "TX completions while the ring was full"))
				goto out;
			continue;
		}
		n = vufe_recv_wait(fe, 0, got, sizeof(got), NULL, NULL, 5000);
		if (n != (ssize_t)sizeof(f))
			test_fail("after %u sent, %u received, %u TX in flight: %s",
				  sent, rcvd, vufe_tx_inflight(fe, 0),
				  vufe_strerror(fe));
		if (!ASSERT_EQ(n, sizeof(f), vufe_strerror(fe)))
			goto out;
		memcpy(&seq, got + 14, sizeof(seq));
		if (!ASSERT_EQ(seq, rcvd, "in order"))
			goto out;
		rcvd++;
		while ((n = vufe_recv(fe, 0, got, sizeof(got), NULL, NULL)) > 0) {
			memcpy(&seq, got + 14, sizeof(seq));
			if (!ASSERT_EQ(seq, rcvd, "in order"))
				goto out;
			rcvd++;
		}
	}
	reap_all(fe, 0);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
	ASSERT_EQ(tx.frames, 1000, "sent");
	/* testpmd polls with notifications off: most kicks are saved */
	ASSERT_GT(tx.kicks_suppressed, 0, "avail_event honoured");
	if (verbose)
		fprintf(stderr, "  tx kicks %llu suppressed %llu signals %llu\n",
			(unsigned long long)tx.kicks,
			(unsigned long long)tx.kicks_suppressed,
			(unsigned long long)tx.signals);
out:
	vufe_destroy(fe);
}

static void rx_mode_case(enum vufe_rx_mode mode, bool indirect)
{
	static const size_t sizes[] = { 60, 1514, 9000, 65000 };
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i, nb;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	o.want_features &= ~(1ULL << VIRTIO_NET_F_MRG_RXBUF);
	if (!indirect)
		o.want_features &= ~(1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	o.rx_mode = mode;
	if (!dpdk_up(&o, &fe))
		return;
	ASSERT_EQ(vufe_rx_mode(fe), mode, "RX mode");
	if (!ASSERT_GT(vufe_post_rx(fe, 0, 0), 0, "posted"))
		goto out;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!echo(fe, 0, sizes[i], 0, i, &nb) ||
		    !ASSERT_EQ(nb, 1, "one chain per frame"))
			break;
	reap_all(fe, 0);
out:
	vufe_destroy(fe);
}

void dpdk_rx_big(void)
{
	rx_mode_case(VUFE_RX_BIG, false);
}

void dpdk_rx_big_indirect(void)
{
	rx_mode_case(VUFE_RX_BIG, true);
}

void dpdk_rx_large(void)
{
	rx_mode_case(VUFE_RX_LARGE, true);
}

void dpdk_multiqueue(void)
{
	struct vufe_vq_stats st;
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i, qp;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	o.nr_qp = 2;
	if (!dpdk_up(&o, &fe))
		return;
	for (qp = 0; qp < 2; qp++)
		vufe_post_rx(fe, qp, 0);
	for (i = 0; i < 20; i++)
		if (!echo(fe, i & 1, 1514, 0, i, NULL))
			break;
	for (qp = 0; qp < 2; qp++) {
		reap_all(fe, qp);
		vufe_vq_stats(fe, VUFE_RXQ(qp), &st);
		ASSERT_EQ(st.frames, 10, "frames back on the same queue pair");
	}
	vufe_destroy(fe);
}

struct used_arg {
	unsigned int vq;
	__u16 want;
};

/* the device has used WANT entries the driver has not consumed */
static bool used_reached(struct vufe *fe, void *arg)
{
	struct used_arg *a = arg;
	struct vufe_vq_stats st;

	vufe_vq_stats(fe, a->vq, &st);
	return st.used_pending == a->want;
}

void dpdk_signals(void)
{
	static __u8 f[1514], got[2000];
	struct vufe_vq_stats st, st2;
	struct used_arg ua = { VUFE_RXQ(0), 0 };
	struct vufe *fe;
	unsigned int i;

	if (!dpdk_fe(&fe))
		return;
	vufe_post_rx(fe, 0, 0);
	if (!echo_range(fe, 0, 10))
		goto out;

	/* RX callbacks off: 20 frames arrive, no signal */
	vufe_disable_cb(fe, VUFE_RXQ(0));
	vufe_vq_stats(fe, VUFE_RXQ(0), &st);
	ua.want = st.used_pending + 20;
	make_frame(f, sizeof(f), 0);
	for (i = 0; i < 20; i++)
		vufe_send(fe, 0, NULL, f, sizeof(f), 0);
	if (!ASSERT_OK(vufe_wait(fe, used_reached, &ua, 5000),
		       "20 frames used on RX"))
		goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &st2);
	ASSERT_EQ(st2.signals, st.signals,
		  "no RX signal while callbacks are off (used_event honoured)");

	/* callbacks on: the next frame is signalled */
	ASSERT_FALSE(vufe_enable_cb(fe, VUFE_RXQ(0)), "20 pending");
	for (i = 0; i < 20; i++)
		if (!ASSERT_EQ(vufe_recv(fe, 0, got, sizeof(got), NULL, NULL),
			       sizeof(f), "drain"))
			goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &st);
	vufe_send(fe, 0, NULL, f, sizeof(f), 0);
	ASSERT_OK(vufe_wait_signals(fe, VUFE_RXQ(0), st.signals + 1, 5000),
		  "signalled after enable_cb");
	reap_all(fe, 0);
out:
	vufe_destroy(fe);
}

void dpdk_stop_reconnect(void)
{
	struct vufe_vq_stats rx, tx;
	struct vufe *fe;

	if (!dpdk_fe(&fe))
		return;
	vufe_post_rx(fe, 0, 0);
	if (!echo_range(fe, 0, 5))
		goto out;
	if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)))
		goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &rx);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
	if (packed) {
		/*
		 * Positions: the avail half where the device stopped, the
		 * used half 0 (DPDK sends the avail half only: used = avail)
		 * or the same.
		 */
		ASSERT_EQ(rx.base & 0xffff, rx.used_idx, "RX base = buffers used");
		ASSERT_EQ(tx.base & 0xffff, tx.avail_idx, "TX base = frames sent");
		ASSERT_TRUE(!(rx.base >> 16) || rx.base >> 16 == rx.used_idx,
			    "RX used half");
		ASSERT_TRUE(!(tx.base >> 16) || tx.base >> 16 == tx.avail_idx,
			    "TX used half");
	} else {
		ASSERT_EQ(rx.base, rx.used_idx, "RX base = buffers used");
		ASSERT_EQ(tx.base, tx.avail_idx, "TX base = frames sent");
	}
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	if (!echo_range(fe, 5, 10))
		goto out;
	/* and again, without a clean stop: resume from used->idx */
	vufe_disconnect(fe);
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	if (!echo_range(fe, 10, 15))
		goto out;
out:
	vufe_destroy(fe);
}

void dpdk_client_mode(void)
{
	struct dpdk cl = { .pmd = TESTPMD_INIT };
	char why[256] = "";
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vufe *fe = NULL;

	dpdk_need_server();
	if (dpdk_skip[0]) {
		test_skip("%s", dpdk_skip);
		return;
	}
	snprintf(cl.sock, sizeof(cl.sock), "/tmp/vufe-%d-client.sock",
		 getpid());
	o.path = cl.sock;
	o.timeout_ms = 20000;
	o.want_features = pkf(o.want_features);
	if (!ASSERT_OK(vufe_create(&o, &fe), vufe_strerror(NULL)))
		return;
	if (!ASSERT_OK(vufe_listen(fe), vufe_strerror(fe)))
		goto out;
	if (dpdk_start(&cl, "client", 1, true, why, sizeof(why))) {
		test_fail("%s", why);
		goto out;
	}
	if (!ASSERT_OK(vufe_accept(fe), vufe_strerror(fe)) ||
	    !ASSERT_OK(vufe_setup(fe), vufe_strerror(fe)) ||
	    !ASSERT_EQ(vufe_packed(fe), packed, "ring type negotiated"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	if (!echo_range(fe, 0, 5))
		goto out;
	/* testpmd, a client, dials again after we hang up */
	if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)) ||
	    !ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	if (!echo_range(fe, 5, 10))
		goto out;
out:
	vufe_destroy(fe);
	if (dpdk_stop(&cl, why, sizeof(why)))
		test_fail("%s", why);
	unlink(cl.pmd.log);
}

/*
 * Hostile input against a backend nobody here wrote: DPDK must neither
 * crash nor stop serving new connections.  What it does with the bad
 * connection (drop it or ignore the message) is reported, not asserted.
 */
/*
 * After a hostile WHAT (msg, ring) NAME: whether the DPDK backend still
 * answers (verbose: ANSWERS, dropped, SILENT), FE gone, and testpmd runs
 */
static bool dpdk_survives(struct vufe *fe, const char *what, const char *name,
			  const char *answers, const char *silent)
{
	int alive = vufe_backend_alive(fe, 500);

	if (verbose)
		fprintf(stderr, "  %s %-*s: DPDK %s\n", what,
			31 - (int)strlen(what), name,
			alive == 1 ? answers :
			alive == 0 ? "dropped the connection" :
				     silent);
	vufe_destroy(fe);
	return ASSERT_TRUE(dpdk_running(&srv), "testpmd survives");
}

void dpdk_hostile(void)
{
	static const struct {
		enum vufe_hostile_msg kind;
		const char *name;
	} m[] = {
		{ VUFE_BAD_MSG_TRUNCATED, "truncated" },
		{ VUFE_BAD_MSG_KICK_2FDS, "kick with 2 fds" },
		{ VUFE_BAD_MSG_CALL_NOFD, "call without fd" },
		{ VUFE_BAD_MSG_ADD_MEM_NOFD, "ADD_MEM_REG without fd" },
		{ VUFE_BAD_MSG_MEM_TABLE_FDS, "mem table 2 regions 1 fd" },
		{ VUFE_BAD_MSG_VRING_IDX, "vring index 200" },
		{ VUFE_BAD_MSG_VRING_NUM, "vring num 3" },
		{ VUFE_BAD_MSG_UNKNOWN, "request 999" },
		{ VUFE_BAD_MSG_OVERSIZE, "size 0xffffffff" },
		{ VUFE_BAD_MSG_CLOSE_SHORT, "short payload, EOF" },
	};
	static const struct {
		enum vufe_hostile_ring kind;
		const char *name;
	} r[] = {
		{ VUFE_BAD_DESC_OOB, "desc outside memory" },
		{ VUFE_BAD_DESC_STRADDLE, "desc straddling region end" },
		{ VUFE_BAD_DESC_LOOP, "desc loop" },
		{ VUFE_BAD_DESC_NEXT_OOB, "next out of range" },
		{ VUFE_BAD_INDIRECT_OOB, "indirect table outside" },
		{ VUFE_BAD_INDIRECT_ENTRY, "indirect entry outside" },
		{ VUFE_BAD_INDIRECT_LEN, "indirect len 17" },
		{ VUFE_BAD_INDIRECT_NESTED, "nested indirect" },
		{ VUFE_BAD_HEAD_OOB, "head out of range" },
		{ VUFE_BAD_AVAIL_JUMP, "avail idx jump" },
	};
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		if (!dpdk_up(&o, &fe))
			return;
		ASSERT_OK(vufe_hostile_msg(fe, m[i].kind), m[i].name);
		if (!dpdk_survives(fe, "msg", m[i].name,
				   "ignored it, still answers",
				   "went silent on it"))
			return;
	}
	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		if (!dpdk_up(&o, &fe))
			return;
		vufe_post_rx(fe, 0, 0);
		ASSERT_GE(vufe_hostile_ring(fe, VUFE_TXQ(0), r[i].kind), 0,
			  r[i].name);
		/* let the forwarding core meet it */
		poll(NULL, 0, 50);
		if (!dpdk_survives(fe, "ring", r[i].name, "still answers",
				   "went silent"))
			return;
	}
	/* and a well-behaved guest still gets through */
	if (!dpdk_up(&o, &fe))
		return;
	vufe_post_rx(fe, 0, 0);
	echo(fe, 0, 1514, 0, 1, NULL);
	vufe_destroy(fe);
}

static void dpdk_setup_server(void)
{
	int err;

	if (!testpmd_bin("VUFE_TESTPMD")) {
		snprintf(dpdk_skip, sizeof(dpdk_skip),
			 "dpdk-testpmd not installed (apt-get install dpdk-dev "
			 "librte-net-vhost23 librte-mempool-ring23)");
		return;
	}
	if (geteuid() != 0) {
		snprintf(dpdk_skip, sizeof(dpdk_skip),
			 "dpdk-testpmd --no-huge needs root here");
		return;
	}
	err = dpdk_start(&srv, "srv", 2, false, dpdk_skip, sizeof(dpdk_skip));
	if (err && !dpdk_skip[0])
		snprintf(dpdk_skip, sizeof(dpdk_skip), "testpmd: %s",
			 strerror(-err));
}

static void dpdk_release(void)
{
	unlink(srv.sock);
	unlink(srv.pmd.log);
	dpdk_tried = false;
}

/* vufe/dpdk/testpmd_exit: the shared testpmd exits cleanly */
void dpdk_testpmd_exit(void)
{
	char why[256] = "";

	dpdk_need_server();
	if (dpdk_skip[0]) {
		test_skip("%s", dpdk_skip);
		return;
	}
	if (dpdk_stop(&srv, why, sizeof(why)))
		test_fail("%s", why);
	dpdk_release();
}

/* stops the shared testpmd if vufe/dpdk/testpmd_exit did not */
void dpdk_teardown(void)
{
	char why[256] = "";

	if (srv.pmd.pid > 0) {
		dpdk_stop(&srv, why, sizeof(why));
		dpdk_release();
	}
}
