// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetd datapath tests: guest TX -> tap (see vnetd_test.h) */
#include "vnetd_test.h"

/* ------------------------------------------------------------------ */
/* 1. guest TX -> tap                                                  */
/* ------------------------------------------------------------------ */

/* PACKED: vnetd --packed, the frontend on packed rings */
static void tx_to_tap_case(bool packed)
{
	static __u8 f[FRAME_MAX];
	static struct gso_flow g[3];
	static const unsigned int gso_layouts[3] = {
		0, VUFE_TX_HDR_INLINE, VUFE_TX_SEGS(16),
	};
	struct virtio_net_hdr_mrg_rxbuf hdr;
	struct vnet_dp_stats d0, d1;
	struct vnet_queue_state q0, q1;
	struct link_stats l0, l1;
	struct vufe *fe = NULL;
	unsigned int i, n = 200;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, packed ? "txpk" : "tx", 1, 1);
	fe = vd_up_fe(&vd, &pfd, packed);
	if (!fe)
		goto out;
	if (!ASSERT_EQ(vufe_packed(fe), packed,
		       packed ? "RING_PACKED negotiated" : "split rings"))
		goto out;
	ASSERT_EQ(vufe_hdr_len(fe), 12, "12-byte header with VERSION_1");
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q0);
	ns_link_stats(vd.ns, vd.port[0].tap, &l0);

	/* every size in every layout, then read back in order */
	for (i = 0; i < n; i++) {
		unsigned int len = sizes[i % NSIZES];

		test_frame(f, len, nobody_mac, guest_mac, i);
		if (tx_send(fe, 0, NULL, f, len, layouts[i % NLAYOUTS])) {
			test_fail("send frame %u: %s", i, vufe_strerror(fe));
			goto out;
		}
		if (i % 32 == 31 || i == n - 1) {
			unsigned int k;

			for (k = i - (i % 32); k <= i; k++) {
				unsigned int l = sizes[k % NSIZES];
				char what[64];

				test_frame(f, l, nobody_mac, guest_mac, k);
				snprintf(what, sizeof(what),
					 "frame %u (%u bytes, layout 0x%x)", k,
					 l, layouts[k % NLAYOUTS]);
				if (!tap_expect(pfd, f, l, WAIT_MS, what))
					goto out;
			}
		}
	}
	if (!ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "all TX buffers used"))
		goto out;

	/* 64 KB TCP GSO frames, header apart, inline, in 16 pieces */
	for (i = 0; i < 3; i++) {
		__u16 sport = 41000 + i;
		size_t len;

		gso_flow_init(&g[i], sport, 1000000 * (i + 1));
		memset(&hdr, 0, sizeof(hdr));
		len = gso_frame(f, &hdr.hdr, nobody_mac, guest_mac, GUEST_IP,
				HOST_IP, sport, g[i].isn);
		if (tx_send(fe, 0, &hdr, f, len, gso_layouts[i])) {
			test_fail("send GSO frame: %s", vufe_strerror(fe));
			goto out;
		}
	}
	if (!tap_collect_gso(pfd, g, 3, 5000))
		goto out;
	for (i = 0; i < 3; i++) {
		dbg("GSO flow %u: %u frames (%u with a GSO header), %u bad checksums\n",
		    g[i].sport, g[i].frames, g[i].gso_frames, g[i].bad_csum);
		if (g[i].frames == 1)
			ASSERT_EQ(g[i].gso_frames, 1,
				  "a whole GSO frame keeps its GSO header");
	}
	if (!ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "GSO buffers used"))
		goto out;

	/* vnetd's counters and the tap's agree with what was sent */
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d1);
	ns_link_stats(vd.ns, vd.port[0].tap, &l1);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q1);
	ASSERT_GE(d1.frames - d0.frames, n + 3, "dp_stats tx frames");
	ASSERT_GT(d1.bytes - d0.bytes, 3 * GSO_PLEN, "dp_stats tx bytes");
	ASSERT_GT(d1.batches - d0.batches, 0, "dp_stats tx batches");
	ASSERT_EQ(d1.drops[VNET_DROP_BAD_DESC], 0, "no bad descriptor");
	ASSERT_GE(l1.rx_packets - l0.rx_packets, n + 3, "tap rx_packets");
	ASSERT_GT(q1.first_seen_ns, 0, "the classifier saw guest-TX queue 0");
out:
	vd_end(&vd, fe, &pfd);
}

static void tx_to_tap(void)
{
	tx_to_tap_case(false);
}

static void tx_to_tap_packed(void)
{
	tx_to_tap_case(true);
}

/*
 * A TX entry posted without a kick (a kick lost on the way, as seen under
 * QEMU TCG): the watchdog finds it waiting at the same position twice and
 * kicks the ring itself; the frame reaches the tap, the log says so.
 */
static void tx_lost_kick_case(bool packed)
{
	static __u8 f[FRAME_MAX];
	struct vufe *fe = NULL;
	unsigned int i;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, packed ? "txlkp" : "txlk", 1, 1);
	fe = vd_up_fe(&vd, &pfd, packed);
	if (!fe)
		goto out;
	for (i = 0; i < 3; i++) {
		/* frame 1 goes without its kick; 0 and 2 are kicked */
		unsigned int flags = i == 1 ? VUFE_TX_NO_KICK : 0;

		/*
		 * Frame 1 only once vnetd's queue thread sleeps in epoll_wait:
		 * frame 0 at the tap does not mean its burst is over, and a
		 * burst takes what is posted until the ring is empty (and
		 * looks again after turning kicks on).  Posted meanwhile,
		 * frame 1 went out in frame 0's burst, the watchdog never
		 * needed (seen with two busy loops beside the test).
		 */
		if (i == 1 && !vd_qthread_waits(&vd, 0, WAIT_MS)) {
			test_fail("vnetd's queue thread did not wait in epoll_wait within %d ms",
				  WAIT_MS);
			goto out;
		}
		test_frame(f, 100, nobody_mac, guest_mac, i);
		if (vufe_send(fe, 0, NULL, f, 100, flags)) {
			test_fail("send frame %u: %s", i, vufe_strerror(fe));
			goto out;
		}
		if (!tap_expect(pfd, f, 100, i == 1 ? 3000 : WAIT_MS,
				i == 1 ? "the frame posted without a kick" :
					 "a kicked frame"))
			goto out;
	}
	ASSERT_TRUE(vd_log_has(&vd, "without a kick (1 time): served them"),
		    "the watchdog said it served a ring without a kick");
	ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "all TX buffers used");
out:
	vd_end(&vd, fe, &pfd);
}

static void tx_lost_kick(void)
{
	tx_lost_kick_case(false);
}

static void tx_lost_kick_packed(void)
{
	tx_lost_kick_case(true);
}

VNET_TEST("vnetd/tx_to_tap", tx_to_tap);
VNET_TEST("vnetd/packed/tx_to_tap", tx_to_tap_packed);
VNET_TEST("vnetd/tx_lost_kick", tx_lost_kick);
VNET_TEST("vnetd/packed/tx_lost_kick", tx_lost_kick_packed);
