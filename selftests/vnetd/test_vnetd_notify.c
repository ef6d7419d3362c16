// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetd datapath tests: notification economy: TX/RX signals, coalescing, busy polling, ring wrap (see vnetd_test.h) */
#include "vnetd_test.h"

/* ------------------------------------------------------------------ */
/* 4. notification economy                                             */
/* ------------------------------------------------------------------ */


/*
 * Wait (bounded) until vnetd's notify_sent on (dir, q) equals the signals
 * the frontend counted on vq and both stay put for quiet_ms (a coalescing
 * timer may still be due).  The counts are what the test asserts on.
 */
static void settle(struct vufe *fe, const struct port *p, unsigned int vq,
		   __u32 dir, const struct vufe_vq_stats *st0,
		   const struct vnet_dp_stats *d0, int quiet_ms,
		   struct vufe_vq_stats *st, struct vnet_dp_stats *d)
{
	long long deadline = now_ms() + 3000, since = now_ms();
	__u64 last = ~0ULL;

	for (;;) {
		__u64 sig, sent;

		vufe_vq_stats(fe, vq, st);
		dps_read(p, dir, 0, d);
		sig = st->signals - st0->signals;
		sent = d->notify_sent - d0->notify_sent;
		if (sig != sent || sig != last) {
			last = sig == sent ? sig : ~0ULL;
			since = now_ms();
		} else if (now_ms() - since >= quiet_ms) {
			return;
		}
		if (now_ms() > deadline)
			return;
		nap_ms(2);
	}
}

static __u64 fe_signals(struct vufe *fe, unsigned int vq)
{
	struct vufe_vq_stats st;

	vufe_vq_stats(fe, vq, &st);
	return st.signals;
}

/* the notify_setup() cases run packed: vnetd --packed, packed rings */
static bool pk_mode;

static bool notify_setup(struct vd *vd, const char *name,
			 const struct coal *c, bool auto_rearm,
			 struct vufe **fe)
{
	static char pk_name[32];
	struct vufe_opts o;

	if (pk_mode) {
		snprintf(pk_name, sizeof(pk_name), "%sp", name);
		name = pk_name;
	}
	vd_init(vd, name, 1, 1);
	if (pk_mode)
		vd->extra = "--packed";
	if (!vd_up(vd))
		return false;
	if (!cfg_set(&vd->port[0], 0, c))
		return false;
	o = fe_opts(&vd->port[0]);
	o.auto_rearm = auto_rearm;
	if (pk_mode)
		o.want_features |= 1ULL << VIRTIO_F_RING_PACKED;
	*fe = fe_up(&o);
	return *fe != NULL && ASSERT_EQ(vufe_packed(*fe), pk_mode,
					pk_mode ? "RING_PACKED negotiated" :
						  "split rings");
}

#define NOTIFY_FRAMES	1000
#define NOTIFY_BURST	4

/*
 * Guest TX on queue 0 of P: counters (ST0, D0), FRAMES frames of KIND in
 * bursts of NOTIFY_BURST, settled counters (ST, D).  False when a send
 * failed (the test failed).
 */
static bool tx_measure(struct vufe *fe, const struct port *p,
		       unsigned int frames, enum kind kind, unsigned int *seq,
		       struct vufe_vq_stats *st0, struct vnet_dp_stats *d0,
		       struct vufe_vq_stats *st, struct vnet_dp_stats *d)
{
	vufe_vq_stats(fe, VUFE_TXQ(0), st0);
	dps_read(p, VNET_DIR_TX, 0, d0);
	if (!tx_bursts(fe, frames, NOTIFY_BURST, kind, false, seq))
		return false;
	settle(fe, p, VUFE_TXQ(0), VNET_DIR_TX, st0, d0, 150, st, d);
	return true;
}

#define TX_FRAMES	8

/* bulk: at most one TX signal per tx-frames completions (and a few) */
static void notify_tx_bulk(void)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 50000 };
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0;
	__u64 sig;
	struct vd vd;

	if (!notify_setup(&vd, "nbulk", &c, true, &fe))
		goto out;
	if (!tx_measure(fe, &vd.port[0], NOTIFY_FRAMES, BULK, &seq, &st0, &d0, &st,
			&d))
		goto out;
	sig = st.signals - st0.signals;
	dbg("bulk: %llu signals for %u frames\n", (unsigned long long)sig,
	    NOTIFY_FRAMES);
	dps_dbg("bulk", &d, &d0);
	ASSERT_LE(sig, NOTIFY_FRAMES / TX_FRAMES + 8,
		  "bulk TX signals <= frames / tx-frames + a few");
	ASSERT_GE(sig, NOTIFY_FRAMES / TX_FRAMES / 2,
		  "bulk TX completions are signalled");
	ASSERT_EQ(d.notify_sent - d0.notify_sent, sig,
		  "dp_stats notify_sent = call-eventfd signals");
	ASSERT_EQ(d.notify_urgent - d0.notify_urgent, 0,
		  "no urgent signal for UDP");
	ASSERT_GE(d.notify_frames - d0.notify_frames,
		  NOTIFY_FRAMES / TX_FRAMES / 2, "notify_frames");
	ASSERT_GT(d.notify_deferred - d0.notify_deferred, 0,
		  "notify_deferred");
	ASSERT_GE(d.frames - d0.frames, NOTIFY_FRAMES, "dp_stats tx frames");
out:
	vd_end(&vd, fe, NULL);
}

/*
 * tx-frames changed live (the pinned config map, what `vnetctl coalesce set`
 * writes) changes the signal count of the next 1000 frames, with no restart
 * and no reconnect.
 */
#define TX_FRAMES_LIVE	32

static void notify_tx_live_change(void)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 50000 };
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0;
	__u64 sig8, sig32;
	struct vd vd;

	if (!notify_setup(&vd, "nlive", &c, true, &fe))
		goto out;
	if (!tx_measure(fe, &vd.port[0], NOTIFY_FRAMES, BULK, &seq, &st0, &d0, &st,
			&d))
		goto out;
	sig8 = st.signals - st0.signals;

	c.tx_frames = TX_FRAMES_LIVE;
	if (!cfg_set(&vd.port[0], 0, &c))
		goto out;
	st0 = st;
	d0 = d;
	if (!tx_bursts(fe, NOTIFY_FRAMES, NOTIFY_BURST, BULK, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 150, &st,
	       &d);
	sig32 = st.signals - st0.signals;
	dbg("live change: %llu signals with tx-frames %u, then %llu with %u\n",
	    (unsigned long long)sig8, TX_FRAMES, (unsigned long long)sig32,
	    TX_FRAMES_LIVE);
	ASSERT_LE(sig8, NOTIFY_FRAMES / TX_FRAMES + 8,
		  "tx-frames 8: signals <= frames / 8 + a few");
	ASSERT_LE(sig32, NOTIFY_FRAMES / TX_FRAMES_LIVE + 8,
		  "tx-frames 32 (set live): signals <= frames / 32 + a few");
	ASSERT_GE(sig8, 2 * sig32,
		  "raising tx-frames live cut the signals");
	ASSERT_GT(sig32, 0, "completions still signalled after the change");
	ASSERT_GE(d.frames - d0.frames, NOTIFY_FRAMES, "dp_stats tx frames");
out:
	vd_end(&vd, fe, NULL);
}

/* what one run of urgent bursts did: TX deltas */
struct urgent_run {
	__u64 signals, classified, batches;
	struct vnet_dp_stats d; /* differences */
};

/*
 * 1000 urgent frames (TCP payload, PSH clear) in bursts of 4 with
 * tx-frames 8 and the config FLAGS (VNET_CFG_NO_TX_BYPASS or 0).
 */
static bool urgent_bursts(const char *name, __u32 flags, struct urgent_run *u)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 50000,
			  .flags = flags };
	struct vnet_queue_state q0, q1;
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0, i;
	bool ok = false;
	struct vd vd;

	if (!notify_setup(&vd, name, &c, true, &fe))
		goto out;
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q0);
	if (!tx_bursts(fe, NOTIFY_FRAMES, NOTIFY_BURST, URGENT, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 150, &st,
	       &d);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q1);
	u->signals = st.signals - st0.signals;
	u->classified = q1.urgent - q0.urgent;
	u->batches = d.batches - d0.batches;
	/* every counter of the struct, as differences */
	for (i = 0; i < sizeof(d) / sizeof(__u64); i++)
		((__u64 *)&u->d)[i] = ((__u64 *)&d)[i] - ((__u64 *)&d0)[i];
	dbg("%s: %llu signals for %u bursts in %llu batches (urgent %llu frames %llu timer %llu)\n",
	    name, (unsigned long long)u->signals, NOTIFY_FRAMES / NOTIFY_BURST,
	    (unsigned long long)u->batches,
	    (unsigned long long)u->d.notify_urgent,
	    (unsigned long long)u->d.notify_frames,
	    (unsigned long long)u->d.notify_timer);
	ok = ASSERT_GE(u->classified, NOTIFY_FRAMES,
		       "the classifier counted the urgent frames") &&
	     ASSERT_EQ(u->d.notify_sent, u->signals,
		       "dp_stats notify_sent = call-eventfd signals");
out:
	vd_end(&vd, fe, NULL);
	return ok;
}

/* urgent (TCP payload, PSH clear): a signal per burst, not coalesced */
static void notify_tx_urgent(void)
{
	unsigned int bursts = NOTIFY_FRAMES / NOTIFY_BURST;
	struct urgent_run u;

	if (!urgent_bursts("nurg", 0, &u))
		return;
	ASSERT_GE(u.signals, bursts * 8 / 10, "urgent: a signal per burst");
	ASSERT_GT(u.signals, NOTIFY_FRAMES / TX_FRAMES + 8,
		  "urgent: more signals than tx-frames coalescing gives");
	ASSERT_LE(u.signals, u.batches, "at most one signal per used-ring update");
	ASSERT_GE(u.d.notify_urgent, bursts * 8 / 10, "notify_urgent");
}

/*
 * tx-urgent-bypass off: the same urgent frames are coalesced by tx-frames
 * like any others (what the bypass switch is for: the same coalescing
 * values with and without it)
 */
static void notify_tx_urgent_no_bypass(void)
{
	struct urgent_run u;

	if (!urgent_bursts("nnob", VNET_CFG_NO_TX_BYPASS, &u))
		return;
	ASSERT_EQ(u.d.notify_urgent, 0, "bypass off: no urgent signal");
	ASSERT_LE(u.signals, NOTIFY_FRAMES / TX_FRAMES + 8,
		  "bypass off: urgent frames coalesced by tx-frames");
	ASSERT_GE(u.signals, NOTIFY_FRAMES / TX_FRAMES / 2,
		  "bypass off: completions still signalled");
}

/*
 * Paired signals: a frame for the guest held by coalescing (rx-frames 8,
 * rx-usecs 100 ms) goes along with the TX signal of an urgent frame (sent
 * at once) instead of waiting for its timer: notify_paired counts it on
 * RX, the timer later finds nothing pending.
 */
static void notify_paired(void)
{
	/* held: hold always (a lone frame waits its usecs) */
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 100000,
			  .rx_frames = 8, .rx_usecs = 100000,
			  .flags = VNET_CFG_TX_HOLD_ALWAYS |
				   VNET_CFG_RX_HOLD_ALWAYS };
	struct vufe_vq_stats rx0, rx, tx0;
	struct vnet_dp_stats d0, d, t0;
	static __u8 f[256], got[FRAME_MAX];
	struct vufe *fe = NULL;
	unsigned int seq = 0;
	__u16 sport = 31000;
	struct vd vd;
	int pfd = -1;
	ssize_t n;

	if (!notify_setup(&vd, "npair", &c, true, &fe))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	vufe_vq_stats(fe, VUFE_RXQ(0), &rx0);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &t0);
	/* one UDP frame in: delivered, its signal held (1 < rx-frames) */
	if (!ASSERT_OK(pkt_send(pfd, NULL, f, udp_frame(f, guest_mac, host_mac,
							 sport, 1)),
		       "send"))
		goto out;
	n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL, match_sport,
		       &sport, WAIT_MS);
	if (!ASSERT_GE(n, 0, "the RX frame arrived"))
		goto out;
	/* one urgent frame out: signalled at once, the RX signal with it */
	if (!tx_bursts(fe, 1, 1, URGENT, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_RXQ(0), VNET_DIR_RX, &rx0, &d0, 150, &rx,
	       &d);
	/* past the RX timer's 100 ms: it found nothing left to signal */
	nap_ms(150);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d);
	vufe_vq_stats(fe, VUFE_RXQ(0), &rx);
	dbg("paired: rx signals %llu (paired %llu timer %llu)\n",
	    (unsigned long long)(rx.signals - rx0.signals),
	    (unsigned long long)(d.notify_paired - d0.notify_paired),
	    (unsigned long long)(d.notify_timer - d0.notify_timer));
	ASSERT_EQ(rx.signals - rx0.signals, 1, "one RX signal");
	ASSERT_EQ(d.notify_paired - d0.notify_paired, 1,
		  "the RX frame's signal went with the TX signal");
	ASSERT_EQ(d.notify_timer - d0.notify_timer, 0,
		  "the RX timer found nothing left");
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d);
	ASSERT_GE(d.notify_urgent - t0.notify_urgent, 1, "the urgent TX signal");
out:
	if (pfd >= 0)
		close(pfd);
	vd_end(&vd, fe, NULL);
}

/*
 * --busy-poll: 250 bursts of 4, each sent ~100 us after the previous one
 * was used.  Without busy polling vnetd has asked for a kick and gone to
 * sleep by then, so every burst needs a kick; with a 1000 us window vnetd
 * is still watching the ring when the next burst comes, so the guest's
 * kick is suppressed and the window counts busy_polls.  The assertions
 * count kicks and windows; the gap only has to be well inside the window.
 */
struct bp_run {
	__u64 kicks, suppressed, signals, busy_polls, frames;
};

static bool busy_poll_run(const char *name, const char *extra,
			  struct bp_run *r)
{
	struct coal c = { .tx_frames = 0, .tx_usecs = 0 };
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0, i;
	struct vufe_opts o;
	bool ok = false;
	struct vd vd;

	vd_init(&vd, name, 1, 1);
	vd.extra = extra;
	if (!vd_up(&vd) || !cfg_set(&vd.port[0], 0, &c))
		goto out;
	o = fe_opts(&vd.port[0]);
	o.auto_rearm = true;
	fe = fe_up(&o);
	if (!fe)
		goto out;
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	for (i = 0; i < NOTIFY_FRAMES / NOTIFY_BURST; i++) {
		if (!tx_bursts(fe, NOTIFY_BURST, NOTIFY_BURST, BULK, true,
			       &seq))
			goto out;
		usleep(100);
	}
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 50, &st,
	       &d);
	r->kicks = st.kicks - st0.kicks;
	r->suppressed = st.kicks_suppressed - st0.kicks_suppressed;
	r->signals = st.signals - st0.signals;
	r->busy_polls = d.busy_polls - d0.busy_polls;
	r->frames = d.frames - d0.frames;
	dbg("%s: %llu kicks, %llu suppressed, %llu signals, %llu busy polls, %llu frames\n",
	    name, (unsigned long long)r->kicks,
	    (unsigned long long)r->suppressed,
	    (unsigned long long)r->signals,
	    (unsigned long long)r->busy_polls,
	    (unsigned long long)r->frames);
	ok = true;
out:
	vd_end(&vd, fe, NULL);
	return ok;
}

static void busy_poll(void)
{
	unsigned int bursts = NOTIFY_FRAMES / NOTIFY_BURST;
	struct bp_run off = { 0 }, on = { 0 };
	int rc;

	rc = sh("%s --busy-poll 5000 --socket /tmp/vnet-none.sock --tap none >/dev/null 2>&1",
		vnetd_bin);
	ASSERT_EQ(rc, 2, "--busy-poll 5000 is a usage error (0-1000)");
	rc = sh("%s --busy-poll 5000 --socket /tmp/vnet-none.sock --tap none 2>&1 | grep -q 'busy-poll.*0-1000'",
		vnetd_bin);
	ASSERT_EQ(rc, 0, "the error names the allowed range");

	if (!busy_poll_run("bpoff", NULL, &off) ||
	    !busy_poll_run("bpon", "--busy-poll=1000", &on))
		return;
	ASSERT_GE(off.frames, NOTIFY_FRAMES, "control: every frame moved");
	ASSERT_GE(on.frames, NOTIFY_FRAMES, "busy poll: every frame moved");
	ASSERT_EQ(off.busy_polls, 0, "control: no busy polling by default");
	ASSERT_GE(off.kicks, bursts / 2,
		  "control: most bursts need a kick without busy polling");
	ASSERT_GE(on.busy_polls, bursts / 2,
		  "busy poll windows found most bursts");
	ASSERT_LE(on.kicks, bursts / 4,
		  "busy polling saved most of the guest's kicks");
	ASSERT_GE(on.signals, bursts * 8 / 10,
		  "busy polling keeps a signal per burst (coalescing off)");
}

/* coalescing off: EVENT_IDX alone decides, and it wins over urgency */
static void notify_tx_event_idx(void)
{
	struct coal c = { .tx_frames = 0, .tx_usecs = 0 };
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0, bursts;
	__u64 sig;
	struct vd vd;

	/* used_event is never advanced: at most the first crossing */
	if (!notify_setup(&vd, "nevidx", &c, false, &fe))
		goto out;
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	if (!tx_bursts(fe, NOTIFY_FRAMES / 2, NOTIFY_BURST, BULK, false,
		       &seq) ||
	    !tx_bursts(fe, NOTIFY_FRAMES / 2, NOTIFY_BURST, URGENT, false,
		       &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 50, &st,
	       &d);
	sig = st.signals - st0.signals;
	dbg("event_idx frozen: %llu signals, %llu suppressed, %llu batches\n",
	    (unsigned long long)sig,
	    (unsigned long long)(d.notify_suppressed - d0.notify_suppressed),
	    (unsigned long long)(d.batches - d0.batches));
	ASSERT_LE(sig, 2, "used_event never advanced: signals stay at ~1");
	ASSERT_GE(d.notify_suppressed - d0.notify_suppressed,
		  NOTIFY_FRAMES / NOTIFY_BURST / 2, "notify_suppressed");
	ASSERT_EQ(d.notify_sent - d0.notify_sent, sig,
		  "dp_stats notify_sent = call-eventfd signals");

	/* used_event re-armed after every burst: one signal per update */
	st0 = st;
	d0 = d;
	bursts = 250 / NOTIFY_BURST + 1;
	if (!tx_bursts(fe, 250, NOTIFY_BURST, BULK, true, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 50, &st,
	       &d);
	sig = st.signals - st0.signals;
	dbg("event_idx re-armed: %llu signals for %u bursts, %llu batches\n",
	    (unsigned long long)sig, bursts,
	    (unsigned long long)(d.batches - d0.batches));
	ASSERT_GE(sig, bursts * 8 / 10,
		  "no coalescing: a signal per burst");
	ASSERT_LE(sig, d.batches - d0.batches,
		  "signals <= used-ring updates");
	ASSERT_LE(sig, 250, "signals <= used buffers");
out:
	vd_end(&vd, fe, NULL);
}

/* a single frame is signalled eventually, by the timer */
static void notify_tx_single(void)
{
	/* the static rule: a lone completion waits its usecs */
	struct coal c = { .tx_frames = 64, .tx_usecs = 1000,
			  .flags = VNET_CFG_TX_HOLD_ALWAYS };
	static __u8 f[256];
	struct vufe_vq_stats st0;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0, i, k;
	struct vd vd;

	if (!notify_setup(&vd, "nsingle", &c, true, &fe))
		goto out;
	/*
	 * The guest waits for the interrupt: it does not look at the used
	 * ring first (a guest that consumed the completion and re-armed
	 * after it has asked for no signal, and EVENT_IDX wins).
	 */
	for (i = 0; i < 2; i++) {
		size_t len = udp_frame(f, nobody_mac, guest_mac, 30000, seq++);

		vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
		dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
		if (!ASSERT_OK(tx_send(fe, 0, NULL, f, len, 0), "send"))
			goto out;
		if (!ASSERT_OK(vufe_wait_signals(fe, VUFE_TXQ(0),
						 st0.signals + 1, 5000),
			       "one frame, tx-frames 64: signalled within 5 s"))
			goto out;
		/* the counter follows the signal: give it a moment */
		for (k = 0; k < 2000; k++) {
			dps_read(&vd.port[0], VNET_DIR_TX, 0, &d);
			if (d.notify_timer != d0.notify_timer)
				break;
			usleep(1000);
		}
		ASSERT_GE(d.notify_timer - d0.notify_timer, 1,
			  "notify_timer");
		if (!ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "TX used"))
			goto out;
	}
out:
	vd_end(&vd, fe, NULL);
}

/* guest RX: rx-frames coalescing, PSH bypass, timer (rx-hold always) */
static void notify_rx(void)
{
	/* the static rule: a lone frame waits its usecs */
	struct coal c = { .rx_frames = 8, .rx_usecs = 50000,
			  .flags = VNET_CFG_RX_HOLD_ALWAYS };
	static __u8 f[256], got[FRAME_MAX];
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vnet_queue_state q0, q1;
	struct vufe *fe = NULL;
	unsigned int i, k, frames = 256, burst = 2;
	__u16 sport = 30000;
	struct vd vd;
	int pfd = -1;
	__u64 sig;
	ssize_t n;

	if (!notify_setup(&vd, "nrx", &c, true, &fe))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	vufe_post_rx(fe, 0, 0);

	/*
	 * bulk: bursts of 2 UDP frames, each received before the next, so
	 * that signalling every burst (no coalescing) would give frames / 2
	 */
	vufe_vq_stats(fe, VUFE_RXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	for (i = 0; i < frames; i += burst) {
		for (k = 0; k < burst; k++) {
			size_t len = udp_frame(f, guest_mac, host_mac, sport,
					       i + k);

			if (!ASSERT_OK(pkt_send(pfd, NULL, f, len), "send"))
				goto out;
		}
		for (k = 0; k < burst; k++) {
			n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL,
				       NULL, match_sport, &sport, WAIT_MS);
			if (n < 0) {
				test_fail("RX frame %u: %s", i + k,
					  n == -ETIMEDOUT ? "timeout" :
							    vufe_strerror(fe));
				goto out;
			}
		}
	}
	settle(fe, &vd.port[0], VUFE_RXQ(0), VNET_DIR_RX, &st0, &d0, 150, &st,
	       &d);
	sig = st.signals - st0.signals;
	dbg("rx bulk: %llu signals for %u frames (frames %llu timer %llu urgent %llu batches %llu)\n",
	    (unsigned long long)sig, frames,
	    (unsigned long long)(d.notify_frames - d0.notify_frames),
	    (unsigned long long)(d.notify_timer - d0.notify_timer),
	    (unsigned long long)(d.notify_urgent - d0.notify_urgent),
	    (unsigned long long)(d.batches - d0.batches));
	ASSERT_LE(sig, frames / 8 + 8,
		  "bulk RX signals <= frames / rx-frames + a few");
	ASSERT_GE(sig, 1, "bulk RX is signalled");
	ASSERT_EQ(d.notify_urgent - d0.notify_urgent, 0,
		  "no PSH bypass for UDP");
	ASSERT_EQ(d.notify_sent - d0.notify_sent, sig,
		  "dp_stats notify_sent = call-eventfd signals");

	/* one UDP frame: signalled by the timer */
	vufe_vq_stats(fe, VUFE_RXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	udp_frame(f, guest_mac, host_mac, sport, 9999);
	if (!ASSERT_OK(pkt_send(pfd, NULL, f, udp_frame(f, guest_mac,
							 host_mac, sport,
							 9999)),
		       "send"))
		goto out;
	if (!ASSERT_OK(vufe_wait_signals(fe, VUFE_RXQ(0), st0.signals + 1,
					 5000),
		       "one RX frame, rx-frames 8: signalled within 5 s"))
		goto out;
	n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL, match_sport,
		       &sport, WAIT_MS);
	ASSERT_GT(n, 0, "the frame");
	/* vnetd counts the signal after sending it: bounded wait */
	{
		long long deadline = now_ms() + WAIT_MS;

		while (dps_read(&vd.port[0], VNET_DIR_RX, 0, &d) &&
		       d.notify_timer == d0.notify_timer &&
		       now_ms() < deadline)
			nap_ms(2);
	}
	ASSERT_GE(d.notify_timer - d0.notify_timer, 1, "rx notify_timer");

	/* a PSH frame: the PSH bypass */
	vufe_vq_stats(fe, VUFE_RXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	qs_read(&vd.port[0], VNET_DIR_RX, 0, &q0);
	{
		struct l4 p = { .dst = guest_mac, .src = host_mac,
				.saddr = HOST_IP, .daddr = GUEST_IP,
				.sport = 5201, .dport = 40000,
				.proto = IPPROTO_TCP,
				.tcp_flags = TH_ACK | TH_PSH, .seq = 1,
				.plen = 100, .seed = 3 };
		__u16 psport = 5201;

		if (!ASSERT_OK(pkt_send(pfd, NULL, f, ip_frame(f, &p)), "send"))
			goto out;
		if (!ASSERT_OK(vufe_wait_signals(fe, VUFE_RXQ(0),
						 st0.signals + 1, 5000),
			       "PSH frame signalled"))
			goto out;
		n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL,
			       match_sport, &psport, WAIT_MS);
		ASSERT_GT(n, 0, "the PSH frame");
	}
	/* the counters may lag the signal by a batch: bounded wait */
	{
		long long deadline = now_ms() + WAIT_MS;

		while (dps_read(&vd.port[0], VNET_DIR_RX, 0, &d) &&
		       d.notify_urgent == d0.notify_urgent &&
		       now_ms() < deadline)
			nap_ms(2);
	}
	qs_read(&vd.port[0], VNET_DIR_RX, 0, &q1);
	dbg("rx PSH: signals %llu -> %llu, urgent %llu timer %llu frames %llu sent %llu suppressed %llu, push %llu -> %llu\n",
	    (unsigned long long)st0.signals,
	    (unsigned long long)fe_signals(fe, VUFE_RXQ(0)),
	    (unsigned long long)(d.notify_urgent - d0.notify_urgent),
	    (unsigned long long)(d.notify_timer - d0.notify_timer),
	    (unsigned long long)(d.notify_frames - d0.notify_frames),
	    (unsigned long long)(d.notify_sent - d0.notify_sent),
	    (unsigned long long)(d.notify_suppressed - d0.notify_suppressed),
	    (unsigned long long)q0.push, (unsigned long long)q1.push);
	ASSERT_GE(q1.push - q0.push, 1, "the classifier counted the PSH frame");
	ASSERT_GE(d.notify_urgent - d0.notify_urgent, 1,
		  "rx notify_urgent: PSH bypass");
out:
	vd_end(&vd, fe, &pfd);
}

/*
 * Rings whose indices start just below the u16 wrap.  PACKED: vnetd
 * --packed, rings that start at position 200 of 256 with wrap counter 0
 * (SET_VRING_BASE 0x00c800c8), so both wrap counters flip during the case.
 */
static void ring_wrap_case(bool packed)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 50000 };
	unsigned int i, seq = 0, frames = 200;
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	struct vd vd;
	int pfd = -1;
	__u64 sig;

	__u16 base = packed ? 200 : 65500;

	vd_init(&vd, packed ? "wrappk" : "wrap", 1, 1);
	if (packed)
		vd.extra = "--packed";
	if (!vd_up(&vd) || !cfg_set(&vd.port[0], 0, &c))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	o = fe_opts(&vd.port[0]);
	if (packed)
		o.want_features |= 1ULL << VIRTIO_F_RING_PACKED;
	if (vufe_create(&o, &fe)) {
		test_fail("vufe_create: %s", vufe_strerror(NULL));
		fe = NULL;
		goto out;
	}
	if (!ASSERT_OK(vufe_set_vring_base(fe, VUFE_RXQ(0), base), "RX base") ||
	    !ASSERT_OK(vufe_set_vring_base(fe, VUFE_TXQ(0), base), "TX base"))
		goto out;
	if (vufe_connect(fe) || vufe_setup(fe)) {
		test_fail("vhost-user setup: %s", vufe_strerror(fe));
		goto out;
	}
	if (!ASSERT_EQ(vufe_packed(fe), packed,
		       packed ? "RING_PACKED negotiated" : "split rings"))
		goto out;
	vufe_post_rx(fe, 0, 0);

	/* TX coalescing and EVENT_IDX across the wrap of the used index */
	if (!tx_measure(fe, &vd.port[0], frames, BULK, &seq, &st0, &d0, &st,
			&d))
		goto out;
	sig = st.signals - st0.signals;
	dbg("wrap: TX used idx %u -> %u, %llu signals\n", st0.used_idx,
	    st.used_idx, (unsigned long long)sig);
	if (packed) {
		/*
		 * Every frame used; 200 frames of at least one descriptor
		 * from position 200 cross the end of the 256-entry ring
		 */
		ASSERT_EQ(st.used_idx, st.avail_idx, "TX all used");
		ASSERT_EQ(st.used + st.used_pending - st0.used - st0.used_pending,
			  frames, "TX used entries");
	} else {
		ASSERT_EQ(st.used_idx, (__u16)(65500 + frames),
			  "TX used idx wrapped");
	}
	ASSERT_LE(sig, frames / TX_FRAMES + 8,
		  "TX signals across the wrap <= frames / tx-frames + a few");
	ASSERT_GE(sig, frames / TX_FRAMES / 2,
		  "TX completions across the wrap are signalled");
	ASSERT_EQ(d.notify_sent - d0.notify_sent, sig,
		  "dp_stats notify_sent = call-eventfd signals");

	/* both ways, the RX used index wrapping too */
	for (i = 0; i < 60; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "across the wrap"))
			goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &st);
	if (packed) {
		ASSERT_TRUE(st.used_idx & 0x8000, "RX wrap counter flipped");
		ASSERT_LT(st.used_idx & 0x7fff, base, "RX position wrapped");
	} else {
		ASSERT_LT(st.used_idx, 65500, "RX used idx wrapped");
	}
out:
	vd_end(&vd, fe, &pfd);
}

static void ring_wrap(void)
{
	ring_wrap_case(false);
}

/*
 * Coalescing and EVENT_IDX on packed rings: the driver's event offset in
 * the driver event area (DESC), the device's kick suppression in its own.
 * Not notify_tx_event_idx: a frozen packed event offset is crossed again
 * every two laps of the ring (512 descriptors), not every 65536 entries,
 * so "signals stay at ~1" is a split ring's property.
 */
#define PACKED_CASE(fn)                 \
	static void fn##_packed(void)   \
	{                               \
		pk_mode = true;         \
		fn();                   \
		pk_mode = false;        \
	}
PACKED_CASE(notify_tx_bulk)
PACKED_CASE(notify_paired)
PACKED_CASE(notify_rx)

static void ring_wrap_packed(void)
{
	ring_wrap_case(true);
}

VNET_TEST("vnetd/notify_tx_bulk", notify_tx_bulk);
VNET_TEST("vnetd/notify_tx_live_change", notify_tx_live_change);
VNET_TEST("vnetd/notify_tx_urgent", notify_tx_urgent);
VNET_TEST("vnetd/notify_tx_urgent_no_bypass", notify_tx_urgent_no_bypass);
VNET_TEST("vnetd/notify_paired", notify_paired);
VNET_TEST("vnetd/notify_tx_event_idx", notify_tx_event_idx);
VNET_TEST("vnetd/busy_poll", busy_poll);
VNET_TEST("vnetd/notify_tx_single", notify_tx_single);
VNET_TEST("vnetd/notify_rx", notify_rx);
VNET_TEST("vnetd/ring_wrap", ring_wrap);
VNET_TEST("vnetd/packed/ring_wrap", ring_wrap_packed);
VNET_TEST("vnetd/packed/notify_tx_bulk", notify_tx_bulk_packed);
VNET_TEST("vnetd/packed/notify_paired", notify_paired_packed);
VNET_TEST("vnetd/packed/notify_rx", notify_rx_packed);
