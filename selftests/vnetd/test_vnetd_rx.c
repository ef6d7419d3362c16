// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetd datapath tests: tap -> guest RX (see vnetd_test.h) */
#include <sys/mman.h>

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

/* Send a 64 KB TCP GSO frame (ISN) into the tap; G follows its flow. */
static bool gso_send(int pfd, __u16 sport, __u32 isn, struct gso_flow *g)
{
	static __u8 f[FRAME_MAX];
	struct virtio_net_hdr vh;
	size_t len;

	len = gso_frame(f, &vh, guest_mac, host_mac, HOST_IP, GUEST_IP, sport,
			isn);
	gso_flow_init(g, sport, isn);
	return ASSERT_OK(pkt_send(pfd, &vh, f, len), "AF_PACKET send (GSO)");
}

/*
 * Receive G's frame whole in the guest: true when it arrived as one frame
 * with its GSO header, in *NBUFS (mergeable 4 KB) buffers.
 */
static bool gso_recv(struct vufe *fe, __u16 sport, struct gso_flow *g,
		     unsigned int *nbufs, const char *what)
{
	static __u8 got[FRAME_MAX];
	struct virtio_net_hdr_mrg_rxbuf hdr;
	ssize_t r = 0;

	while (g->covered < GSO_PLEN) {
		r = guest_recv(fe, 1, got, sizeof(got), &hdr, nbufs, NULL,
			       match_sport, &sport, WAIT_MS);
		if (r < 0) {
			test_fail("%s: %zu of %u payload bytes arrived: %s",
				  what, g->covered, GSO_PLEN,
				  r == -ETIMEDOUT ? "timeout" :
						    vufe_strerror(fe));
			return false;
		}
		if (gso_feed(g, &hdr.hdr, got, r) < 0) {
			test_fail("%s: %s", what, g->err);
			return false;
		}
	}
	return ASSERT_EQ(g->gso_frames, 1, what) &&
	       ASSERT_EQ(*nbufs, (r + 12 + VUFE_PAGE - 1) / VUFE_PAGE,
			 "mergeable buffers of the GSO frame");
}

static bool gso_one(struct vufe *fe, int pfd, __u16 sport, __u32 isn,
		    unsigned int *nbufs, const char *what)
{
	static struct gso_flow g;

	return gso_send(pfd, sport, isn, &g) &&
	       gso_recv(fe, sport, &g, nbufs, what);
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

		/*
		 * One frame a burst of one read: sent once vnetd's queue
		 * thread waits for the tap again.  A burst issues its reads
		 * at once, as many as the last one found frames, doubled (the
		 * one after frame i - 1: two); frame i coming while they run
		 * can land in the second after the first found nothing, and
		 * is then delivered from a slot (its chain is not the next
		 * one, rx.c).  On a busy host that race is lost now and then:
		 * one bounce more than the mean accounts for below.
		 */
		if (!vd_qthread_waits(&vd, 0, WAIT_MS)) {
			test_fail("frame %u: vnetd's queue thread did not wait in epoll_wait within %d ms",
				  i, WAIT_MS);
			goto out;
		}
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
		/*
		 * 64 KB into 4 KB buffers: the first one through a bounce
		 * slot (it overflowed its one-chain read); then big reads,
		 * into as many buffers as a frame can need: in place
		 */
		ASSERT_GE(d1.bounced - d0.bounced, 1, "GSO frame bounced");
		d0 = d1;
		for (i = 0; i < 4; i++)
			if (!gso_one(fe, pfd, sport, 6000000 + i * 100000,
				     &nbufs, "GSO frame after the first"))
				goto out;
		dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
		/*
		 * Without big reads each of the four overflows its one-chain
		 * read and bounces (VNETD_RX_BIG_BURSTS=0 shows it).  d0 was
		 * read after the first GSO frame arrived, and vnetd counts a
		 * round's frames, bounced ones too, before the guest can see
		 * them (rx_int.h, rx_push()): the first one's bounce is in
		 * d0 however late vnetd's thread runs on a busy host.
		 */
		ASSERT_EQ(d1.bounced - d0.bounced, 0,
			  "GSO frames after the first: read in place");
		ASSERT_EQ(d1.frames - d0.frames, 4, "GSO frames after the first");
		rx_mixed_run(fe, pfd);
	} else {
		/* the segments fit the big chains */
		ASSERT_EQ(d1.bounced - d0.bounced, 0, "segments read in place");
	}
	ASSERT_GE(l1.tx_packets - l0.tx_packets, n + 1, "tap tx_packets");
out:
	vd_end(&vd, fe, &pfd);
	unsetenv("VNETD_RX_DIRECT_MIN");
}

/*
 * Send a GSO frame while the guest has too few buffers posted: nothing
 * may arrive until MORE buffers are posted; then it arrives whole.
 */
static bool gso_post_then_recv(struct vufe *fe, int pfd, __u16 sport,
			       __u32 isn, unsigned int more,
			       unsigned int *nbufs, const char *what)
{
	static __u8 got[FRAME_MAX];
	static struct gso_flow g;
	struct virtio_net_hdr_mrg_rxbuf hdr;

	if (!gso_send(pfd, sport, isn, &g))
		return false;
	if (!ASSERT_EQ(guest_recv(fe, 1, got, sizeof(got), &hdr, nbufs, NULL,
				  match_sport, &sport, 300),
		       -ETIMEDOUT, "nothing before the buffers are there") ||
	    !ASSERT_EQ(vufe_post_rx(fe, 0, more), (int)more, "post the rest"))
		return false;
	return gso_recv(fe, sport, &g, nbufs, what);
}

/*
 * vnetd with port NAME (VNETD_RX_DIRECT_MIN unset: its default choice)
 * and a mergeable-buffer frontend that posts RX buffers only when the
 * case says (no auto refill): the frontend, NULL when a step failed.
 */
static struct vufe *rx_manual_up(struct vd *vd, const char *name, int *pfd)
{
	struct vufe_opts o;
	struct vufe *fe;

	unsetenv("VNETD_RX_DIRECT_MIN");
	vd_init(vd, name, 1, 1);
	if (!vd_up_tap(vd, pfd))
		return NULL;
	o = fe_opts(&vd->port[0]);
	o.rx_auto_refill = false;
	fe = fe_up(&o);
	if (fe && !ASSERT_EQ(vufe_rx_mode(fe), VUFE_RX_MERGEABLE, "MRG_RXBUF")) {
		vufe_destroy(fe);
		return NULL;
	}
	return fe;
}

/*
 * Big reads when the guest has posted fewer buffers than a GSO frame
 * needs: the frame that did not fit its buffers waits for more, whole and
 * in order, and the next one that fits is read in place again.
 */
static void rx_big_starved(void)
{
	struct vnet_dp_stats d0, d1;
	struct vufe *fe = NULL;
	static __u8 f[FRAME_MAX];
	struct virtio_net_hdr vh;
	unsigned int nbufs, need;
	__u16 sport = 42100;
	struct vd vd;
	int pfd = -1;

	/* buffers a GSO frame takes */
	need = (unsigned int)(gso_frame(f, &vh, guest_mac, host_mac, HOST_IP,
					GUEST_IP, sport, 1) +
			      12 + VUFE_PAGE - 1) / VUFE_PAGE;
	fe = rx_manual_up(&vd, "rxbigst", &pfd);
	if (!fe)
		goto out;
	/* frame 1 (one-chain read, overflows): bounced, waits for buffers */
	if (!ASSERT_EQ(vufe_post_rx(fe, 0, 4), 4, "post 4 RX buffers"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	if (!gso_post_then_recv(fe, pfd, sport, 1000000, need - 4, &nbufs,
				"GSO frame 1, 4 buffers posted"))
		goto out;
	/* the ring is empty now: frame 2 finds 5 buffers, needs NEED */
	if (!ASSERT_EQ(vufe_post_rx(fe, 0, 5), 5, "post 5 RX buffers") ||
	    !gso_post_then_recv(fe, pfd, sport, 2000000, need - 5, &nbufs,
				"GSO frame 2, 5 buffers posted"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	ASSERT_EQ(d1.bounced - d0.bounced, 2,
		  "frames short of buffers: through a bounce slot");
	ASSERT_EQ(d1.drops[VNET_DROP_TOO_BIG] - d0.drops[VNET_DROP_TOO_BIG], 0,
		  "no frame dropped");
	/* enough posted: in place */
	d0 = d1;
	if (!ASSERT_GT(vufe_post_rx(fe, 0, 0), (int)need, "fill the RX ring") ||
	    !gso_one(fe, pfd, sport, 3000000, &nbufs, "GSO frame 3"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	ASSERT_EQ(d1.bounced - d0.bounced, 0, "GSO frame 3 read in place");
out:
	vd_end(&vd, fe, &pfd);
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

/*
 * Live migration's dirty log, as QEMU drives it: SET_LOG_BASE, then
 * VHOST_F_LOG_ALL and the rings' log flag on running rings.  Frames go
 * both ways while the driver does not reap them (RX completions wait for
 * the coalescing timer, TX completions are not reaped), then both rings
 * are stopped with GET_VRING_BASE, as QEMU does at the switchover.  The
 * answer must be the used index published in guest memory (nothing in
 * flight, nothing taken and not completed), and every page vnetd wrote
 * since the log was cleared (the used entries, used->idx, and each RX
 * buffer as far as its used length) must have its bit in the log.
 */
static bool log_bit(const __u8 *bm, size_t size, __u64 gpa)
{
	__u64 page = gpa / VUFE_PAGE;

	return page / 8 < size && (bm[page / 8] & (1u << (page % 8)));
}

/* every page of [GPA, GPA + LEN) is logged; the first one that is not */
static bool log_range(const __u8 *bm, size_t size, __u64 gpa, __u64 len,
		      __u64 *miss)
{
	__u64 p;

	for (p = gpa & ~(__u64)(VUFE_PAGE - 1); len && p < gpa + len;
	     p += VUFE_PAGE) {
		if (!log_bit(bm, size, p)) {
			*miss = p;
			return false;
		}
	}
	return true;
}

static __u16 used_idx(const struct vufe_ring *r)
{
	return le16toh(__atomic_load_n(&r->used->idx, __ATOMIC_ACQUIRE));
}

/* wait until R's used index is AT least N past FROM */
static bool used_wait(const struct vufe_ring *r, __u16 from, unsigned int n,
		      int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	while ((__u16)(used_idx(r) - from) < n) {
		if (now_ms() > end)
			return false;
		nap_ms(1);
	}
	return true;
}

static int log_msg(struct vufe *fe, __u32 req, const void *p, size_t len,
		   const int *fds, unsigned int nfds)
{
	return vufe_send_msg(fe, req, VUFE_MSG_VERSION, p, (__u32)len, len,
			     fds, nfds);
}

static void dirty_log_stop(void)
{
	static __u8 f[FRAME_MAX];
	struct { __u64 size, offset; } lb;
	struct vufe_ring rr, tr;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	__u64 gpa, size, hva, u, miss = 0, feat;
	unsigned int i, vq, nrx = 24, ntx = 24, bad;
	__u16 rx0, tx0, rx1, tx1, k;
	size_t logsize = 0;
	__u8 *bm = NULL;
	struct vd vd;
	int pfd = -1, logfd = -1;
	__u32 sz;

	vd_init(&vd, "dlog", 1, 1);
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	/* RX completions held: the driver is not told until 100 ms later */
	if (!cfg_set(&vd.port[0], 0,
		     &(struct coal){ .rx_frames = 64, .rx_usecs = 100000,
				     .tx_frames = 64, .tx_usecs = 100000 }))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	feat = vufe_backend_features(fe);
	if (!ASSERT_TRUE(feat & (1ULL << VHOST_F_LOG_ALL), "VHOST_F_LOG_ALL offered") ||
	    !ASSERT_TRUE(vufe_protocol_features(fe) & (1ULL << VUFE_PROTO_LOG_SHMFD),
			 "LOG_SHMFD negotiated") ||
	    !ASSERT_EQ(vufe_rx_mode(fe), VUFE_RX_MERGEABLE, "MRG_RXBUF") ||
	    !ASSERT_OK(vufe_region(fe, 0, &gpa, &size, &hva), "region 0") ||
	    !ASSERT_OK(vufe_ring(fe, VUFE_RXQ(0), &rr), "RX ring") ||
	    !ASSERT_OK(vufe_ring(fe, VUFE_TXQ(0), &tr), "TX ring") ||
	    !ASSERT_GT(vufe_post_rx(fe, 0, 0), nrx, "post RX buffers"))
		goto out;

	/* the log, one bit per 4 KiB page of guest memory, in a memfd */
	for (i = 0; !vufe_region(fe, i, &gpa, &size, &hva); i++)
		if ((gpa + size) / VUFE_PAGE / 8 > logsize)
			logsize = (size_t)((gpa + size) / VUFE_PAGE / 8);
	logfd = memfd_create("dirty-log", MFD_CLOEXEC);
	if (!ASSERT_GE(logfd, 0, "memfd") ||
	    !ASSERT_OK(ftruncate(logfd, (off_t)logsize), "log size"))
		goto out;
	bm = mmap(NULL, logsize, PROT_READ | PROT_WRITE, MAP_SHARED, logfd, 0);
	if (!ASSERT_TRUE(bm != MAP_FAILED, "mmap log")) {
		bm = NULL;
		goto out;
	}
	lb.size = logsize;
	lb.offset = 0;
	if (!ASSERT_OK(log_msg(fe, VUFE_SET_LOG_BASE, &lb, sizeof(lb), &logfd, 1),
		       "SET_LOG_BASE") ||
	    !ASSERT_OK(vufe_recv_reply(fe, VUFE_SET_LOG_BASE, &u, sizeof(u), &sz),
		       "SET_LOG_BASE reply"))
		goto out;
	u = vufe_features(fe) | (1ULL << VHOST_F_LOG_ALL);
	if (!ASSERT_OK(log_msg(fe, VUFE_SET_FEATURES, &u, sizeof(u), NULL, 0),
		       "SET_FEATURES with LOG_ALL"))
		goto out;
	for (vq = 0; vq < 2; vq++) {
		const struct vufe_ring *r = vq ? &tr : &rr;
		struct vhost_vring_addr a = {
			.index = vq,
			.flags = 1u << VHOST_VRING_F_LOG,
			.desc_user_addr = (__u64)(unsigned long)r->desc,
			.used_user_addr = (__u64)(unsigned long)r->used,
			.avail_user_addr = (__u64)(unsigned long)r->avail,
			.log_guest_addr = r->used_gpa,
		};

		if (!ASSERT_OK(log_msg(fe, VUFE_SET_VRING_ADDR, &a, sizeof(a),
				       NULL, 0), "SET_VRING_ADDR with the log flag"))
			goto out;
	}
	/* a round trip: everything above is applied */
	if (!ASSERT_OK(log_msg(fe, VUFE_GET_FEATURES, NULL, 0, NULL, 0),
		       "GET_FEATURES") ||
	    !ASSERT_OK(vufe_recv_reply(fe, VUFE_GET_FEATURES, &u, sizeof(u), &sz),
		       "GET_FEATURES reply"))
		goto out;

	memset(bm, 0, logsize);
	rx0 = used_idx(&rr);
	tx0 = used_idx(&tr);
	for (i = 0; i < nrx; i++) {
		unsigned int l = 60 + 61 * i; /* 60 .. 1463 bytes */

		test_frame(f, l, guest_mac, host_mac, 0x30000 + i);
		if (!ASSERT_OK(pkt_send(pfd, NULL, f, l), "AF_PACKET send"))
			goto out;
	}
	for (i = 0; i < ntx; i++) {
		unsigned int l = sizes[i % NSIZES];

		test_frame(f, l, nobody_mac, guest_mac, 0x40000 + i);
		if (tx_send(fe, 0, NULL, f, l, layouts[i % NLAYOUTS])) {
			test_fail("send frame %u: %s", i, vufe_strerror(fe));
			goto out;
		}
	}
	if (!ASSERT_TRUE(used_wait(&rr, rx0, nrx, WAIT_MS), "RX frames used") ||
	    !ASSERT_TRUE(used_wait(&tr, tx0, ntx, WAIT_MS), "TX frames used"))
		goto out;

	/* the switchover: both rings stopped, RX first, as QEMU does */
	for (vq = 0; vq < 2; vq++) {
		const struct vufe_ring *r = vq ? &tr : &rr;
		struct vhost_vring_state st = { .index = vq };

		if (!ASSERT_OK(log_msg(fe, VUFE_GET_VRING_BASE, &st, sizeof(st),
				       NULL, 0), "GET_VRING_BASE") ||
		    !ASSERT_OK(vufe_recv_reply(fe, VUFE_GET_VRING_BASE, &st,
					       sizeof(st), &sz),
			       "GET_VRING_BASE reply"))
			goto out;
		dbg("vq %u: base %u, used->idx %u\n", vq, st.num, used_idx(r));
		ASSERT_EQ(st.num, used_idx(r),
			  vq ? "TX base = used->idx in guest memory" :
			       "RX base = used->idx in guest memory");
	}
	rx1 = used_idx(&rr);
	tx1 = used_idx(&tr);

	/* what vnetd wrote is in the log */
	for (vq = 0; vq < 2; vq++) {
		const struct vufe_ring *r = vq ? &tr : &rr;
		__u16 from = vq ? tx0 : rx0, to = vq ? tx1 : rx1;

		ASSERT_TRUE(log_bit(bm, logsize, r->used_gpa +
				    offsetof(struct vring_used, idx)),
			    vq ? "TX used->idx logged" : "RX used->idx logged");
		bad = 0;
		for (k = from; k != to; k++) {
			__u64 e = r->used_gpa + offsetof(struct vring_used, ring) +
				  (__u64)(k % r->num) * sizeof(struct vring_used_elem);

			if (!log_bit(bm, logsize, e) ||
			    !log_bit(bm, logsize, e + sizeof(struct vring_used_elem) - 1))
				bad++;
		}
		ASSERT_EQ(bad, 0, vq ? "TX used entries logged" :
				       "RX used entries logged");
	}
	bad = 0;
	for (k = rx0; k != rx1; k++) {
		const struct vring_used_elem *e = &rr.used->ring[k % rr.num];
		__u32 left = le32toh(e->len);
		__u16 d = (__u16)le32toh(e->id);

		/* mergeable buffers: one writable page-sized descriptor each */
		while (left) {
			const struct vring_desc *de = &rr.desc[d % rr.num];
			__u32 n = le32toh(de->len) < left ? le32toh(de->len) : left;

			if (!log_range(bm, logsize, le64toh(de->addr), n, &miss)) {
				if (!bad++)
					test_fail("RX buffer page 0x%llx (id %u) written, not logged",
						  (unsigned long long)miss, d);
			}
			left -= n;
			if (!(le16toh(de->flags) & VRING_DESC_F_NEXT))
				break;
			d = le16toh(de->next);
		}
	}
	ASSERT_EQ(bad, 0, "RX buffers logged");
out:
	if (bm)
		munmap(bm, logsize);
	close_fd(&logfd);
	vd_end(&vd, fe, &pfd);
}

/*
 * The RX bounce slots (32 x 66 KiB per queue pair, user/vnetd/datapath/tapio.h)
 * that io_uring holds as fixed buffers are pinned: VmPin of vnetd (the
 * pages io_uring pinned), KiB, or -1.
 */
#define SLOTS_KB (32 * 66)

static long pinned_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * Idle, and with frames one at a time, no slot is pinned, so none is
 * resident (registering a fixed buffer pins, and faults in, all of it:
 * the table is sparse, a slot goes in on its first read in a burst of
 * three or more); frames queued in the tap while the guest had no buffer
 * are read in growing bursts once it posts some, and those bursts' slots
 * are then registered (READ_FIXED, under the sandbox); the other slots
 * stay out.
 */
static bool slots_send(int pfd, unsigned int n, __u32 id0)
{
	static __u8 f[FRAME_MAX];
	unsigned int i;

	for (i = 0; i < n; i++) {
		test_frame(f, 100, guest_mac, host_mac, id0 + i);
		if (!ASSERT_OK(pkt_send(pfd, NULL, f, 100), "AF_PACKET send"))
			return false;
	}
	return true;
}

static bool slots_recv(struct vufe *fe, unsigned int n, __u32 id0)
{
	static __u8 got[FRAME_MAX];
	struct virtio_net_hdr_mrg_rxbuf hdr;
	unsigned int i, nbufs;
	ssize_t r;

	for (i = 0; i < n; i++) {
		r = guest_recv(fe, 1, got, sizeof(got), &hdr, &nbufs, NULL,
			       match_test, NULL, WAIT_MS);
		if (!ASSERT_EQ(r, 100, "small frame arrived") ||
		    !ASSERT_EQ(test_frame_id(got, r), id0 + i, "in order"))
			return false;
	}
	return true;
}

static void rx_slots_first_use(void)
{
	struct vnet_dp_stats d0, d1;
	struct vufe *fe = NULL;
	unsigned int i;
	struct vd vd;
	long kb;
	int pfd = -1;

	fe = rx_manual_up(&vd, "rxslots", &pfd);
	if (!fe)
		goto out;
	nap_ms(200);
	kb = pinned_kb(vd.pid);
	if (!ASSERT_EQ(kb, 0, "idle: KiB pinned (the RX slots registered)"))
		goto out;
	/* six buffers, six frames one at a time: the ring is empty again */
	if (!ASSERT_EQ(vufe_post_rx(fe, 0, 6), 6, "post 6 RX buffers"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	for (i = 0; i < 6; i++)
		if (!slots_send(pfd, 1, 0x51000 + i) ||
		    !slots_recv(fe, 1, 0x51000 + i))
			goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	if (!ASSERT_GT(d1.bounced - d0.bounced, 0, "small frames bounced"))
		goto out;
	kb = pinned_kb(vd.pid);
	if (!ASSERT_EQ(kb, 0, "frames one at a time: KiB pinned"))
		goto out;
	/* 24 frames wait in the tap (no buffer), then bursts of 1, 2, 4, ... */
	if (!slots_send(pfd, 24, 0x52000) ||
	    !ASSERT_GT(vufe_post_rx(fe, 0, 0), 24, "fill the RX ring") ||
	    !slots_recv(fe, 24, 0x52000))
		goto out;
	kb = pinned_kb(vd.pid);
	ASSERT_GE(kb, 3 * 66, "frames back to back: KiB pinned, a burst's slots");
	ASSERT_LT(kb, SLOTS_KB, "frames back to back: KiB pinned, not every slot");
out:
	vd_end(&vd, fe, &pfd);
}

VNET_TEST("vnetd/rx_from_tap_mrg", rx_from_tap_mrg);
VNET_TEST("vnetd/rx_slots_first_use", rx_slots_first_use);
VNET_TEST("vnetd/rx_from_tap_nomrg", rx_from_tap_nomrg);
VNET_TEST("vnetd/packed/rx_from_tap_mrg", rx_from_tap_mrg_packed);
VNET_TEST("vnetd/rx_big_starved", rx_big_starved);
VNET_TEST("vnetd/dirty_log_stop", dirty_log_stop);
