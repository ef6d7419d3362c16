// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* test_vnetd_*: the guest side, a vufe frontend on a port: send, reap, receive, bursts */
#include "vnetd_test.h"

/* ------------------------------------------------------------------ */
/* the frontend                                                        */
/* ------------------------------------------------------------------ */

struct vufe_opts fe_opts(const struct port *p)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;

	o.path = p->sock;
	o.nr_qp = p->queues;
	o.nr_regions = 2;
	o.mem_size = 128UL << 20;
	o.want_features |= ALL_OFFLOADS;
	return o;
}

struct vufe *fe_up(const struct vufe_opts *o)
{
	struct vufe *fe;
	int err;

	err = vufe_create(o, &fe);
	if (err) {
		test_fail("vufe_create: %s", vufe_strerror(NULL));
		return NULL;
	}
	err = vufe_connect(fe);
	if (!err)
		err = vufe_setup(fe);
	if (err) {
		test_fail("vhost-user setup: %s", vufe_strerror(fe));
		vufe_destroy(fe);
		return NULL;
	}
	dbg("features 0x%llx (backend 0x%llx), protocol 0x%llx, hdr %u\n",
	    (unsigned long long)vufe_features(fe),
	    (unsigned long long)vufe_backend_features(fe),
	    (unsigned long long)vufe_protocol_features(fe), vufe_hdr_len(fe));
	return fe;
}

struct vufe *vd_up_fe(struct vd *vd, int *pfd, bool packed)
{
	struct vufe_opts o;

	if (packed)
		vd->extra = "--packed";
	if (!vd_up_tap(vd, pfd))
		return NULL;
	o = fe_opts(&vd->port[0]);
	if (packed)
		o.want_features |= 1ULL << VIRTIO_F_RING_PACKED;
	return fe_up(&o);
}

void vd_end(struct vd *vd, struct vufe *fe, int *pfd)
{
	if (fe)
		vufe_destroy(fe);
	if (pfd)
		close_fd(pfd);
	vd_cleanup(vd);
}

bool tx_idle(struct vufe *fe, void *arg)
{
	unsigned int qp = *(unsigned int *)arg;

	if (vufe_tx_reap(fe, qp) < 0)
		return true;	/* the error shows in the caller's check */
	return vufe_tx_inflight(fe, qp) == 0;
}

int tx_send(struct vufe *fe, unsigned int qp,
	    const struct virtio_net_hdr_mrg_rxbuf *hdr, const void *f,
	    size_t len, unsigned int flags)
{
	long long deadline = now_ms() + WAIT_MS;
	int err;

	for (;;) {
		err = vufe_send(fe, qp, hdr, f, len, flags);
		if (err != -ENOSPC)
			return err;
		if (flags & VUFE_TX_NO_KICK)
			vufe_kick(fe, VUFE_TXQ(qp));
		err = vufe_tx_reap(fe, qp);
		if (err < 0)
			return err;
		if (err > 0)
			continue;
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		vufe_wait(fe, tx_idle, &qp, 5);
	}
}

int tx_wait_idle(struct vufe *fe, unsigned int qp, int timeout_ms)
{
	int err = vufe_wait(fe, tx_idle, &qp, timeout_ms);

	if (err)
		return err;
	err = vufe_tx_reap(fe, qp);
	return err < 0 ? err : 0;
}

bool rx_any(struct vufe *fe, void *arg)
{
	struct rx_any_arg *a = arg;
	struct vufe_vq_stats st;
	unsigned int qp;

	for (qp = 0; qp < a->nr_qp; qp++) {
		vufe_vq_stats(fe, VUFE_RXQ(qp), &st);
		if (st.used_idx != st.last_used)
			return true;
	}
	return false;
}

ssize_t guest_recv(struct vufe *fe, unsigned int nr_qp, __u8 *buf,
		   size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
		   unsigned int *nbufs, unsigned int *qp_out,
		   match_fn match, void *arg, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct rx_any_arg a = { nr_qp };
	unsigned int qp;
	ssize_t n;
	int err;

	for (;;) {
		bool again = false;

		for (qp = 0; qp < nr_qp; qp++) {
			n = vufe_recv(fe, qp, buf, cap, hdr, nbufs);
			if (n == -EAGAIN)
				continue;
			if (n < 0)
				return n;
			again = true;
			if (!match || match(buf, n, arg)) {
				if (qp_out)
					*qp_out = qp;
				return n;
			}
			dbg("guest: dropped a %zd-byte frame (type 0x%04x)\n",
			    n, n >= 14 ? frame_get16(buf, 12) : 0);
		}
		if (again)
			continue;
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		err = vufe_wait(fe, rx_any, &a,
				(int)(deadline - now_ms() > 0 ?
					      deadline - now_ms() : 1));
		if (err && err != -ETIMEDOUT)
			return err;
	}
}

bool match_id(const __u8 *f, size_t len, void *arg)
{
	return test_frame_id(f, len) == *(long long *)arg;
}

bool match_test(const __u8 *f, size_t len, void *arg)
{
	(void)arg;
	return test_frame_id(f, len) >= 0;
}

bool match_sport(const __u8 *f, size_t len, void *arg)
{
	return len >= L4_OFF + 4 && frame_get16(f, 12) == ETH_P_IP &&
	       frame_get16(f, L4_OFF) == *(__u16 *)arg;
}

bool match_ipv4(const __u8 *f, size_t len, void *arg)
{
	(void)arg;
	return len >= L4_OFF + 4 && frame_get16(f, 12) == ETH_P_IP;
}

bool tap_expect(int pfd, const __u8 *want, size_t len, int timeout_ms,
		const char *what)
{
	static __u8 got[FRAME_MAX];
	long long deadline = now_ms() + timeout_ms;
	long long id = test_frame_id(want, len);

	for (;;) {
		long long left = deadline - now_ms();
		ssize_t n = pkt_recv(pfd, NULL, got, sizeof(got),
				     left > 0 ? (int)left : 0);

		if (n < 0) {
			test_fail("%s: frame %lld (%zu bytes) did not reach the tap: %s",
				  what, id, len, strerror((int)-n));
			return false;
		}
		if (test_frame_id(got, n) != id) {
			dbg("tap: skipped a %zd-byte frame (id %lld)\n", n,
			    test_frame_id(got, n));
			continue;
		}
		if (!ASSERT_EQ(n, len, what))
			return false;
		return ASSERT_MEMEQ(got, want, len, what);
	}
}

bool ping_both(struct vufe *fe, const struct port *p, unsigned int qp,
	       int pfd, __u32 id, const char *what)
{
	static __u8 f[1514], got[FRAME_MAX];
	long long want = id | 0x40000000;
	ssize_t n;
	int err;

	test_frame(f, 300 + id % 1000, nobody_mac, guest_mac, id);
	err = tx_send(fe, qp, NULL, f, 300 + id % 1000, 0);
	if (err) {
		test_fail("%s: send on queue %u: %s", what, qp,
			  vufe_strerror(fe));
		return false;
	}
	if (!tap_expect(pfd, f, 300 + id % 1000, WAIT_MS, what))
		return false;
	if (tx_wait_idle(fe, qp, WAIT_MS)) {
		test_fail("%s: TX completion on queue %u: %s", what, qp,
			  vufe_strerror(fe));
		return false;
	}

	test_frame(f, 200 + id % 1000, guest_mac, host_mac, (__u32)want);
	err = pkt_send(pfd, NULL, f, 200 + id % 1000);
	if (err) {
		test_fail("%s: AF_PACKET send: %s", what, strerror(-err));
		return false;
	}
	n = guest_recv(fe, p->queues, got, sizeof(got), NULL, NULL, NULL,
		       match_id, &want, WAIT_MS);
	if (n < 0) {
		test_fail("%s: frame %lld from the tap did not reach the guest: %s",
			  what, want,
			  n == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
		return false;
	}
	return ASSERT_EQ(n, 200 + id % 1000, what) &&
	       ASSERT_MEMEQ(got, f, (size_t)n, what);
}

bool tx_bursts(struct vufe *fe, unsigned int frames,
	       unsigned int burst, enum kind kind, bool rearm,
	       unsigned int *seq)
{
	static __u8 f[256];
	unsigned int sent = 0, i;

	while (sent < frames) {
		unsigned int nb = frames - sent < burst ? frames - sent : burst;

		for (i = 0; i < nb; i++) {
			size_t len = kind == BULK ?
				udp_frame(f, nobody_mac, guest_mac, 30000,
					  *seq) :
				tcp_frame(f, nobody_mac, guest_mac, *seq,
					  kind == PUSH);

			(*seq)++;
			if (tx_send(fe, 0, NULL, f, len, VUFE_TX_NO_KICK)) {
				test_fail("send: %s", vufe_strerror(fe));
				return false;
			}
		}
		if (vufe_kick(fe, VUFE_TXQ(0)) < 0 ||
		    tx_wait_idle(fe, 0, WAIT_MS)) {
			test_fail("burst at frame %u not used: %s", sent,
				  vufe_strerror(fe));
			return false;
		}
		if (rearm)
			vufe_enable_cb(fe, VUFE_TXQ(0));
		sent += nb;
	}
	return true;
}

bool tap_collect_gso(int pfd, struct gso_flow *g, unsigned int n,
		     int timeout_ms)
{
	static __u8 buf[FRAME_MAX];
	long long deadline = now_ms() + timeout_ms;
	struct virtio_net_hdr vh;
	unsigned int i, done;

	for (;;) {
		long long left;
		ssize_t len;

		for (i = 0, done = 0; i < n; i++)
			done += g[i].covered == GSO_PLEN;
		if (done == n)
			return true;
		left = deadline - now_ms();
		len = pkt_recv(pfd, &vh, buf, sizeof(buf),
			       left > 0 ? (int)left : 0);
		if (len < 0) {
			for (i = 0; i < n; i++)
				if (g[i].covered != GSO_PLEN)
					break;
			test_fail("64 KB GSO frame (flow %u): %zu of %u payload bytes reached the tap in %u frames: %s",
				  g[i].sport, g[i].covered, GSO_PLEN,
				  g[i].frames, strerror((int)-len));
			return false;
		}
		for (i = 0; i < n; i++) {
			int r = gso_feed(&g[i], &vh, buf, len);

			if (r < 0) {
				test_fail("%s", g[i].err);
				return false;
			}
			if (r)
				break;
		}
	}
}
