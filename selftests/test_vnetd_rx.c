// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetd datapath tests: tap -> guest RX (see vnetd_test.h) */
#include "vnetd_test.h"

/* ------------------------------------------------------------------ */
/* 2. tap -> guest RX                                                  */
/* ------------------------------------------------------------------ */

static bool match_test_or_sport(const __u8 *f, size_t len, void *arg)
{
	__u16 *sport = arg;

	return match_test(f, len, NULL) || match_sport(f, len, &sport[0]) ||
	       match_sport(f, len, &sport[1]);
}

/*
 * mrg: frames sent back to back with two 64 KB GSO frames among them, so
 * that bursts mix frames read in place with ones that overflowed their
 * buffer (and the frames after those, turned into bounce frames): all
 * arrive, in order, whole.
 */
static void rx_mixed_run(struct vufe *fe, int pfd)
{
	static __u8 f[FRAME_MAX], got[FRAME_MAX];
	static struct gso_flow g[2];
	struct virtio_net_hdr_mrg_rxbuf hdr;
	struct virtio_net_hdr vh;
	unsigned int i, n = 48, small = 0, nbufs;
	__u16 sport[2] = { 42001, 42002 };
	long long next = 0x30000;
	size_t len;

	gso_flow_init(&g[0], sport[0], 7000000);
	gso_flow_init(&g[1], sport[1], 8000000);
	for (i = 0; i < n; i++) {
		if (i == 10 || i == 30) {
			len = gso_frame(f, &vh, guest_mac, host_mac, HOST_IP,
					GUEST_IP, sport[i == 30],
					i == 30 ? 8000000 : 7000000);
			if (!ASSERT_OK(pkt_send(pfd, &vh, f, len),
				       "AF_PACKET send (GSO)"))
				return;
			continue;
		}
		test_frame(f, sizes[i % NSIZES], guest_mac, host_mac,
			   (__u32)(0x30000 + i));
		if (!ASSERT_OK(pkt_send(pfd, NULL, f, sizes[i % NSIZES]),
			       "AF_PACKET send"))
			return;
	}
	while (small < n - 2 || g[0].covered < GSO_PLEN ||
	       g[1].covered < GSO_PLEN) {
		ssize_t r = guest_recv(fe, 1, got, sizeof(got), &hdr, &nbufs,
				       NULL, match_test_or_sport, sport,
				       WAIT_MS);
		struct gso_flow *gf;
		long long id;

		if (r < 0) {
			test_fail("mixed run: %u of %u small frames and %zu + %zu of 2 x %u GSO payload bytes arrived: %s",
				  small, n - 2, g[0].covered, g[1].covered,
				  GSO_PLEN,
				  r == -ETIMEDOUT ? "timeout" :
						    vufe_strerror(fe));
			return;
		}
		id = test_frame_id(got, r);
		if (id < 0) {
			gf = &g[match_sport(got, r, &sport[1])];
			if (gso_feed(gf, &hdr.hdr, got, r) < 0) {
				test_fail("mixed run: %s", gf->err);
				return;
			}
			continue;
		}
		while (next == 0x30000 + 10 || next == 0x30000 + 30)
			next++;
		test_frame(f, sizes[(next - 0x30000) % NSIZES], guest_mac,
			   host_mac, (__u32)next);
		if (!ASSERT_EQ(id, next, "mixed run: in order") ||
		    !ASSERT_EQ(r, sizes[(next - 0x30000) % NSIZES],
			       "mixed run: length") ||
		    !ASSERT_MEMEQ(got, f, (size_t)r, "mixed run: content") ||
		    !ASSERT_EQ(nbufs, 1, "mixed run: one buffer"))
			return;
		next++;
		small++;
	}
	ASSERT_EQ(g[0].gso_frames + g[1].gso_frames, 2,
		  "mixed run: both GSO frames whole");
}

/* PACKED: vnetd --packed, the frontend on packed rings */
static void rx_from_tap(bool mrg, bool packed)
{
	static __u8 f[FRAME_MAX], got[FRAME_MAX];
	static struct gso_flow g;
	struct virtio_net_hdr_mrg_rxbuf hdr;
	struct virtio_net_hdr vh;
	struct vnet_dp_stats d0, d1;
	struct link_stats l0, l1;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	unsigned int i, n = 200, nbufs;
	__u16 sport = 42000;
	struct vd vd;
	size_t len;
	int pfd = -1;

	/*
	 * mrg: the default choice (in place from a 512-byte mean); big
	 * buffers: always in place
	 */
	if (mrg)
		unsetenv("VNETD_RX_DIRECT_MIN");
	else
		setenv("VNETD_RX_DIRECT_MIN", "0", 1);
	vd_init(&vd, packed ? "rxpk" : mrg ? "rxmrg" : "rxbig", 1, 1);
	if (packed)
		vd.extra = "--packed";
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	o = fe_opts(&vd.port[0]);
	if (!mrg) {
		/*
		 * a legacy driver: no MRG_RXBUF, no VERSION_1 (10-byte
		 * header), Linux's big packets, no guest offloads (the
		 * host must segment and checksum)
		 */
		o.want_features = (1ULL << VIRTIO_RING_F_EVENT_IDX) |
				  (1ULL << VIRTIO_RING_F_INDIRECT_DESC) |
				  (1ULL << VUFE_F_PROTOCOL_FEATURES) |
				  (1ULL << VIRTIO_NET_F_CSUM) |
				  (1ULL << VIRTIO_NET_F_HOST_TSO4);
		o.rx_mode = VUFE_RX_BIG;
	}
	if (packed)
		o.want_features |= 1ULL << VIRTIO_F_RING_PACKED;
	fe = fe_up(&o);
	if (!fe)
		goto out;
	ASSERT_EQ(vufe_packed(fe), packed,
		  packed ? "RING_PACKED negotiated" : "split rings");
	if (mrg) {
		ASSERT_EQ(vufe_rx_mode(fe), VUFE_RX_MERGEABLE, "MRG_RXBUF");
		ASSERT_TRUE(vufe_features(fe) &
				    (1ULL << VIRTIO_NET_F_GUEST_TSO4),
			    "GUEST_TSO4 negotiated");
	} else {
		ASSERT_EQ(vufe_rx_mode(fe), VUFE_RX_BIG, "big packets");
		ASSERT_EQ(vufe_hdr_len(fe), 10, "10-byte legacy header");
	}
	if (test_state.failed)
		goto out;
	if (!ASSERT_GT(vufe_post_rx(fe, 0, 0), 0, "post RX buffers"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	ns_link_stats(vd.ns, vd.port[0].tap, &l0);

	for (i = 0; i < n; i++) {
		long long id = 0x10000 + i;
		unsigned int l = sizes[i % NSIZES];
		ssize_t r;

		test_frame(f, l, guest_mac, host_mac, (__u32)id);
		if (!ASSERT_OK(pkt_send(pfd, NULL, f, l), "AF_PACKET send"))
			goto out;
		r = guest_recv(fe, 1, got, sizeof(got), &hdr, &nbufs, NULL,
			       match_test, NULL, WAIT_MS);
		if (r < 0) {
			test_fail("frame %u (%u bytes) did not reach the guest: %s",
				  i, l,
				  r == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
			goto out;
		}
		if (!ASSERT_EQ(test_frame_id(got, r), id, "in order") ||
		    !ASSERT_EQ(r, l, "length") ||
		    !ASSERT_MEMEQ(got, f, l, "content") ||
		    !ASSERT_EQ(hdr.hdr.gso_type, VIRTIO_NET_HDR_GSO_NONE,
			       "no GSO on a small frame"))
			goto out;
		if (mrg && !ASSERT_EQ(nbufs, 1, "one buffer per small frame"))
			goto out;
	}
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	/*
	 * One frame a burst: frame i is read in place when frame i - 1 (the
	 * last burst's mean) had 512 bytes with its header; the rest bounce.
	 */
	for (i = 0, nbufs = 0; i < n; i++)
		nbufs += !mrg ? 0 :
			 !i || sizes[(i - 1) % NSIZES] + vufe_hdr_len(fe) < 512;
	ASSERT_EQ(d1.bounced - d0.bounced, nbufs,
		  "frames read in place from a 512-byte mean on");

	/* a 64 KB TCP GSO frame into the tap */
	len = gso_frame(f, &vh, guest_mac, host_mac, HOST_IP, GUEST_IP, sport,
			5000000);
	gso_flow_init(&g, sport, 5000000);
	if (!ASSERT_OK(pkt_send(pfd, &vh, f, len), "AF_PACKET send (GSO)"))
		goto out;
	while (g.covered < GSO_PLEN) {
		ssize_t r = guest_recv(fe, 1, got, sizeof(got), &hdr, &nbufs,
				       NULL, match_sport, &sport, WAIT_MS);

		if (r < 0) {
			test_fail("GSO frame: %zu of %u payload bytes reached the guest in %u frames: %s",
				  g.covered, GSO_PLEN, g.frames,
				  r == -ETIMEDOUT ? "timeout" :
						    vufe_strerror(fe));
			goto out;
		}
		if (gso_feed(&g, &hdr.hdr, got, r) < 0) {
			test_fail("%s", g.err);
			goto out;
		}
		if (mrg && hdr.hdr.gso_type != VIRTIO_NET_HDR_GSO_NONE)
			ASSERT_EQ(nbufs, (r + 12 + VUFE_PAGE - 1) / VUFE_PAGE,
				  "mergeable buffers of the GSO frame");
	}
	dbg("GSO into the guest: %u frames, %u with a GSO header, %u bad checksums\n",
	    g.frames, g.gso_frames, g.bad_csum);
	if (mrg) {
		/* GUEST_TSO4 negotiated: the tap hands the segment over whole */
		ASSERT_EQ(g.frames, 1, "GUEST_TSO4: one frame");
		ASSERT_EQ(g.gso_frames, 1, "GUEST_TSO4: GSO header");
		ASSERT_TRUE(hdr.hdr.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM,
			    "GUEST_CSUM: NEEDS_CSUM");
	} else {
		/* no guest offloads: the host segmented and checksummed */
		ASSERT_EQ(g.frames, GSO_SEGS, "no GUEST_TSO4: segments");
		ASSERT_EQ(g.gso_frames, 0, "no GUEST_TSO4: no GSO header");
		ASSERT_EQ(g.bad_csum, 0, "no GUEST_CSUM: checksums complete");
	}

	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	ns_link_stats(vd.ns, vd.port[0].tap, &l1);
	ASSERT_GE(d1.frames - d0.frames, n + g.frames, "dp_stats rx frames");
	if (mrg) {
		/* 64 KB into 4 KB buffers: through a bounce slot */
		ASSERT_GE(d1.bounced - d0.bounced, 1, "GSO frame bounced");
		rx_mixed_run(fe, pfd);
	} else {
		/* the segments fit the big chains */
		ASSERT_EQ(d1.bounced - d0.bounced, 0, "segments read in place");
	}
	ASSERT_GE(l1.tx_packets - l0.tx_packets, n + 1, "tap tx_packets");
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	vd_cleanup(&vd);
	unsetenv("VNETD_RX_DIRECT_MIN");
}

static void rx_from_tap_mrg(void)
{
	rx_from_tap(true, false);
}

static void rx_from_tap_nomrg(void)
{
	rx_from_tap(false, false);
}

static void rx_from_tap_mrg_packed(void)
{
	rx_from_tap(true, true);
}

static const struct vnetd_case cases[] = {
	{ rx_from_tap_mrg, "vnetd/rx_from_tap_mrg" },
	{ rx_from_tap_nomrg, "vnetd/rx_from_tap_nomrg" },
	{ rx_from_tap_mrg_packed, "vnetd/packed/rx_from_tap_mrg" },
};

int main(int argc, char **argv)
{
	return vnetd_test_main(argc, argv, cases,
			       sizeof(cases) / sizeof(cases[0]),
			       "test_vnetd_rx");
}
