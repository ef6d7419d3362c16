// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetd datapath tests: two queue pairs (see vnetd_test.h) */
#include "vnetd_test.h"

/* ------------------------------------------------------------------ */
/* 3. two queue pairs                                                  */
/* ------------------------------------------------------------------ */

/* PACKED: vnetd --packed, four packed rings */
static void two_queue_pairs_case(bool packed)
{
	static __u8 f[2048], got[FRAME_MAX];
	unsigned int i, qp, flows = 64, rxq_of[64], per_q[2] = { 0, 0 };
	struct vnet_dp_stats tx0[2], tx1[2], rx0[2], rx1[2];
	struct vufe *fe = NULL;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, packed ? "mqpk" : "mq", 1, 2);
	fe = vd_up_fe(&vd, &pfd, packed);
	if (!fe || !ASSERT_EQ(vufe_packed(fe), packed,
			      packed ? "RING_PACKED negotiated" : "split rings"))
		goto out;
	if (!ASSERT_EQ(vufe_max_queues(fe) >= 2, 1, "GET_QUEUE_NUM >= 2") ||
	    !ASSERT_TRUE(vufe_features(fe) & (1ULL << VIRTIO_NET_F_MQ), "MQ"))
		goto out;
	for (qp = 0; qp < 2; qp++) {
		vufe_post_rx(fe, qp, 0);
		dps_read(&vd.port[0], VNET_DIR_TX, qp, &tx0[qp]);
		dps_read(&vd.port[0], VNET_DIR_RX, qp, &rx0[qp]);
	}

	/* TX on both queue pairs, each queue's frames in order */
	for (i = 0; i < 100; i++) {
		qp = i & 1;
		test_frame(f, 100 + i, nobody_mac, guest_mac, i);
		if (tx_send(fe, qp, NULL, f, 100 + i, 0)) {
			test_fail("send on queue %u: %s", qp, vufe_strerror(fe));
			goto out;
		}
	}
	{
		bool seen[100] = { false };
		unsigned int got_n = 0;
		long long deadline = now_ms() + WAIT_MS;

		while (got_n < 100) {
			long long left = deadline - now_ms();
			ssize_t n = pkt_recv(pfd, NULL, got, sizeof(got),
					     left > 0 ? (int)left : 0);
			long long id;

			if (n < 0) {
				test_fail("%u of 100 frames from two TX queues reached the tap",
					  got_n);
				goto out;
			}
			id = test_frame_id(got, n);
			if (id < 0 || id >= 100)
				continue;
			test_frame(f, 100 + id, nobody_mac, guest_mac, id);
			if (!ASSERT_EQ(n, 100 + id, "length") ||
			    !ASSERT_MEMEQ(got, f, (size_t)n, "content"))
				goto out;
			if (!seen[id]) {
				seen[id] = true;
				got_n++;
			}
		}
	}
	for (qp = 0; qp < 2; qp++)
		if (!ASSERT_OK(tx_wait_idle(fe, qp, WAIT_MS), "TX used"))
			goto out;

	/* RX: 64 flows, two frames each; a flow stays on one queue */
	for (i = 0; i < 2 * flows; i++) {
		struct l4 p = { .dst = guest_mac, .src = host_mac,
				.saddr = HOST_IP, .daddr = GUEST_IP,
				.sport = 20000 + i % flows, .dport = 7,
				.proto = IPPROTO_UDP, .plen = 64, .seed = i };
		size_t len = ip_frame(f, &p);
		ssize_t n;
		__u16 sport;

		if (!ASSERT_OK(pkt_send(pfd, NULL, f, len), "AF_PACKET send"))
			goto out;
		n = guest_recv(fe, 2, got, sizeof(got), NULL, NULL, &qp,
			       match_ipv4, NULL, WAIT_MS);
		if (n < 0) {
			test_fail("flow %u: frame did not reach the guest: %s",
				  i % flows,
				  n == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
			goto out;
		}
		if (!ASSERT_EQ(n, len, "length") ||
		    !ASSERT_MEMEQ(got, f, len, "content"))
			goto out;
		sport = frame_get16(got, L4_OFF);
		if (i < flows) {
			rxq_of[sport - 20000] = qp;
			per_q[qp]++;
		} else if (!ASSERT_EQ(qp, rxq_of[sport - 20000],
				      "a flow stays on its queue")) {
			goto out;
		}
	}
	dbg("RX flows per queue: %u %u\n", per_q[0], per_q[1]);
	ASSERT_GT(per_q[0], 0, "flows on RX queue 0");
	ASSERT_GT(per_q[1], 0, "flows on RX queue 1");

	for (qp = 0; qp < 2; qp++) {
		dps_read(&vd.port[0], VNET_DIR_TX, qp, &tx1[qp]);
		dps_read(&vd.port[0], VNET_DIR_RX, qp, &rx1[qp]);
		ASSERT_GE(tx1[qp].frames - tx0[qp].frames, 50,
			  "dp_stats tx frames per queue");
		ASSERT_GE(rx1[qp].frames - rx0[qp].frames, 2 * per_q[qp],
			  "dp_stats rx frames per queue");
	}
out:
	vd_end(&vd, fe, &pfd);
}

/*
 * Mergeable RX with an unusable chain in the middle of a frame: the guest
 * posts (by hand, on the raw ring) a 100-byte chain, a chain of 70
 * descriptors (more segments than vnetd maps per chain), then 2 KiB
 * chains; a 1012-byte frame (1000 bytes after the header) comes from the
 * tap.  The frame must reach the guest whole (the used entries of the
 * frame, num_buffers of them, hold all 1012 bytes) or not at all (a
 * counted drop); the dp_stats counters must equal what arrived.
 */
#define MANY_SEGS	70
static void two_queue_pairs(void)
{
	two_queue_pairs_case(false);
}

static void two_queue_pairs_packed(void)
{
	two_queue_pairs_case(true);
}

/* split only: it builds its chains on the split ring by hand */
static void rx_many_segs(void)
{
	static __u8 f[1000], got[2048];
	struct vnet_dp_stats d0, d1;
	struct vufe_ring r;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	__u64 gpa[4], sgpa, one = 1;
	__u8 *ptr[4], *sptr;
	unsigned int i, n, used, start = 0, nb = 0, total = 0, frames = 0;
	long long deadline, id = 0x60000000;
	struct vd vd;
	int pfd = -1;
	void *p;

	vd_init(&vd, "rxsegs", 1, 1);
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe || !ASSERT_EQ(vufe_hdr_len(fe), 12, "mergeable header") ||
	    !ASSERT_OK(vufe_ring(fe, VUFE_RXQ(0), &r), "RX ring"))
		goto out;
	for (i = 0; i < 4; i++) {
		if (!ASSERT_OK(vufe_alloc(fe, 2048, 64, 1, &gpa[i], &p),
			       "buffer"))
			goto out;
		ptr[i] = p;
	}
	if (!ASSERT_OK(vufe_alloc(fe, 16 * MANY_SEGS, 64, 1, &sgpa, &p),
		       "segments"))
		goto out;
	sptr = p;
	memset(sptr, 0xee, 16 * MANY_SEGS);
	/* desc 0: 100 bytes; descs 1..70: one chain of 16-byte segments */
	r.desc[0] = (struct vring_desc){ .addr = htole64(gpa[0]),
					 .len = htole32(100),
					 .flags = htole16(VRING_DESC_F_WRITE) };
	for (i = 0; i < MANY_SEGS; i++)
		r.desc[1 + i] = (struct vring_desc){
			.addr = htole64(sgpa + 16 * i), .len = htole32(16),
			.flags = htole16(VRING_DESC_F_WRITE |
					 (i + 1 < MANY_SEGS ? VRING_DESC_F_NEXT : 0)),
			.next = htole16(2 + i),
		};
	for (i = 1; i < 4; i++)
		r.desc[MANY_SEGS + i] = (struct vring_desc){
			.addr = htole64(gpa[i]), .len = htole32(2048),
			.flags = htole16(VRING_DESC_F_WRITE) };
	r.avail->ring[0] = htole16(0);
	r.avail->ring[1] = htole16(1);
	for (i = 1; i < 4; i++)
		r.avail->ring[1 + i] = htole16(MANY_SEGS + i);
	used = le16toh(__atomic_load_n(&r.used->idx, __ATOMIC_ACQUIRE));
	__atomic_store_n(&r.avail->idx, htole16(le16toh(r.avail->idx) + 5),
			 __ATOMIC_RELEASE);
	if (write(r.kick_fd, &one, sizeof(one)) < 0)
		dbg("kick: %s\n", strerror(errno));

	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	test_frame(f, sizeof(f), guest_mac, host_mac, (__u32)id);
	if (!ASSERT_OK(pkt_send(pfd, NULL, f, sizeof(f)), "AF_PACKET send"))
		goto out;
	/* the frame's buffers, or the counted drop */
	deadline = now_ms() + WAIT_MS;
	for (;;) {
		dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
		n = (__u16)(le16toh(__atomic_load_n(&r.used->idx,
						     __ATOMIC_ACQUIRE)) - used);
		if (d1.frames != d0.frames ||
		    d1.drops[VNET_DROP_TOO_BIG] != d0.drops[VNET_DROP_TOO_BIG] ||
		    d1.drops[VNET_DROP_BAD_DESC] > d0.drops[VNET_DROP_BAD_DESC] + 1 ||
		    now_ms() > deadline)
			break;
		nap_ms(2);
	}
	nap_ms(20);
	n = (__u16)(le16toh(__atomic_load_n(&r.used->idx, __ATOMIC_ACQUIRE)) -
		    used);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	/* walk the used entries as a mergeable guest does */
	for (i = 0; i < n; i++) {
		struct vring_used_elem *e = &r.used->ring[(used + i) % r.num];
		__u32 uid = le32toh(e->id), ulen = le32toh(e->len);
		const __u8 *b = uid == 0 ? ptr[0] : uid == 1 ? sptr :
				uid > MANY_SEGS ? ptr[uid - MANY_SEGS] : NULL;

		dbg("used[%u]: id %u len %u\n", i, uid, ulen);
		if (!b || !ASSERT_LE(ulen, uid == 0 ? 100u : uid == 1 ? 16u * MANY_SEGS : 2048u, "used len within the chain"))
			goto out;
		if (!nb) {
			if (ulen < 12)
				continue; /* given back empty: not a frame */
			nb = b[10] | b[11] << 8;
			start = i;
			frames++;
			if (!ASSERT_GE(nb, 1, "num_buffers"))
				goto out;
			memcpy(got, b + 12, ulen - 12);
			total = ulen - 12;
		} else {
			if (!ASSERT_LE(total + ulen, sizeof(got), "frame size"))
				goto out;
			memcpy(got + total, b, ulen);
			total += ulen;
		}
		if (i - start + 1 == nb)
			nb = 0;
	}
	dbg("frames %u, %u bytes; counters: frames +%llu bytes +%llu\n", frames,
	    total, (unsigned long long)(d1.frames - d0.frames),
	    (unsigned long long)(d1.bytes - d0.bytes));
	ASSERT_EQ(nb, 0, "every buffer num_buffers announced arrived");
	ASSERT_EQ(d1.frames - d0.frames, frames, "frames counter = frames that arrived");
	ASSERT_EQ(d1.bytes - d0.bytes, frames ? total : 0, "bytes counter = bytes that arrived");
	if (frames) {
		ASSERT_EQ(frames, 1, "one frame");
		ASSERT_EQ(total, sizeof(f), "the whole frame arrived");
		ASSERT_MEMEQ(got, f, sizeof(f), "content");
	} else {
		ASSERT_GT(d1.drops[VNET_DROP_TOO_BIG] + d1.drops[VNET_DROP_BAD_DESC],
			  d0.drops[VNET_DROP_TOO_BIG] + d0.drops[VNET_DROP_BAD_DESC] + 1,
			  "the frame's drop is counted");
	}
out:
	vd_end(&vd, fe, &pfd);
}

VNET_TEST("vnetd/two_queue_pairs", two_queue_pairs);
VNET_TEST("vnetd/packed/two_queue_pairs", two_queue_pairs_packed);
VNET_TEST("vnetd/rx_many_segs", rx_many_segs);
