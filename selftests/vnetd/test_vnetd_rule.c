// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd datapath tests: the notification rule on vnet's defaults (hold a
 * signal only when holding batches something, docs/policy.md), through a
 * real vnetd, tap and classifier (see vnetd_test.h):
 *  - a lone frame after a quiet period is signalled at once, no timer;
 *  - UDP request/response: the classifier puts the queue pair in latency
 *    mode and every answer and every request's completion is signalled at
 *    once;
 *  - a one-way stream to the guest is held and batched;
 *  - the guest's pure ACKs of such a stream: each completion goes with
 *    the next RX signal, no TX signal of its own.
 * None depends on how fast the machine is: the first needs only that
 * nothing happened on the ring before, the second counts frames, the
 * third holds for 100 ms per batch.
 */
#include "vnetd_test.h"

static bool rule_setup(struct vd *vd, const char *name, const struct coal *c,
		       struct vufe **fe, int *pfd)
{
	struct vufe_opts o;

	vd_init(vd, name, 1, 1);
	if (!vd_up(vd) || !cfg_set(&vd->port[0], 0, c))
		return false;
	o = fe_opts(&vd->port[0]);
	o.auto_rearm = true;
	*fe = fe_up(&o);
	if (!*fe)
		return false;
	*pfd = pkt_open(vd->ns, vd->port[0].tap);
	if (!ASSERT_GE(*pfd, 0, "AF_PACKET on the tap"))
		return false;
	vufe_post_rx(*fe, 0, 0);
	return true;
}

/* vnet's defaults, as attach writes them */
static const struct coal defaults = {
	.tx_frames = VNET_DEFAULT_TX_FRAMES, .tx_usecs = VNET_DEFAULT_TX_USECS,
	.rx_frames = VNET_DEFAULT_RX_FRAMES, .rx_usecs = VNET_DEFAULT_RX_USECS,
};

/* wait (bounded) until the RX counters show SIGNALS signals sent */
static bool rx_sent(const struct port *p, const struct vnet_dp_stats *d0,
		    __u64 signals, struct vnet_dp_stats *d)
{
	long long deadline = now_ms() + WAIT_MS;

	while (dps_read(p, VNET_DIR_RX, 0, d) &&
	       d->notify_sent - d0->notify_sent < signals) {
		if (now_ms() > deadline)
			return false;
		nap_ms(1);
	}
	return true;
}

/* one UDP frame to a guest that has heard nothing: at once, no hold */
static void rule_lone_frame(void)
{
	static __u8 f[256], got[FRAME_MAX];
	struct vnet_dp_stats d0, d;
	struct vufe_vq_stats st0;
	struct vufe *fe = NULL;
	__u16 sport = 32000;
	int pfd = -1;
	struct vd vd;

	if (!rule_setup(&vd, "rlone", &defaults, &fe, &pfd))
		goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	if (!ASSERT_OK(pkt_send(pfd, NULL, f, udp_frame(f, guest_mac, host_mac,
							 sport, 1)),
		       "send"))
		goto out;
	if (!ASSERT_GE(guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL,
				  match_sport, &sport, WAIT_MS),
		       0, "the frame arrived"))
		goto out;
	if (!ASSERT_TRUE(rx_sent(&vd.port[0], &d0, 1, &d), "a signal counted"))
		goto out;
	ASSERT_EQ(d.notify_quiet - d0.notify_quiet +
			  d.notify_latency - d0.notify_latency,
		  1, "signalled at once (quiet period or no window yet)");
	ASSERT_EQ(d.notify_timer - d0.notify_timer, 0, "no timer");
	ASSERT_EQ(d.holds - d0.holds, 0, "no hold");
	ASSERT_EQ(d.notify_deferred - d0.notify_deferred, 0, "nothing deferred");
out:
	vd_end(&vd, fe, &pfd);
}

#define RR_ROUNDS 24

/*
 * RR_ROUNDS UDP exchanges: the guest sends, the host answers, each answer
 * received before the next request.  WAIT_TX: the frontend waits for each
 * request's completion before the host answers (vufe's TX reaping: that
 * completion is signalled on its own); otherwise the host answers once
 * the request came out of the tap, as a server does.
 */
static bool udp_exchanges(struct vufe *fe, int pfd, bool wait_tx)
{
	static __u8 f[256], got[FRAME_MAX];
	__u16 sport = 33000;
	unsigned int i;

	for (i = 0; i < RR_ROUNDS; i++) {
		size_t len = udp_frame(f, host_mac, guest_mac, 7, i);

		if (!ASSERT_OK(tx_send(fe, 0, NULL, f, len, 0), "request"))
			return false;
		if (wait_tx &&
		    !ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "request sent"))
			return false;
		if (!wait_tx && !ASSERT_GE(pkt_recv(pfd, NULL, got, sizeof(got),
						    WAIT_MS),
					   0, "the request came out of the tap"))
			return false;
		if (!ASSERT_OK(pkt_send(pfd, NULL, f, udp_frame(f, guest_mac,
								 host_mac, sport,
								 i)),
			       "answer"))
			return false;
		if (!ASSERT_GE(guest_recv(fe, 1, got, sizeof(got), NULL, NULL,
					  NULL, match_sport, &sport, WAIT_MS),
			       0, "the answer arrived"))
			return false;
		/* as virtio_net's RX poll does: TX cleaned, its call re-armed */
		if (!wait_tx && !ASSERT_GE(vufe_tx_reap(fe, 0), 0, "TX reaped"))
			return false;
	}
	return true;
}

/*
 * UDP request/response: the payload turns direction on every frame:
 * latency mode in both entries, every answer signalled at once, no hold
 * and no timer on RX, whatever the gaps were (here the frontend waits for
 * each request's completion before the host answers; as a server answers:
 * rule_udp_rr_server).
 */
static void rule_udp_rr(void)
{
	struct vnet_dp_stats r0, r, t0, t;
	struct vnet_queue_state qt, qr;
	struct vufe *fe = NULL;
	int pfd = -1;
	struct vd vd;

	if (!rule_setup(&vd, "rrr", &defaults, &fe, &pfd))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &r0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &t0);
	if (!udp_exchanges(fe, pfd, true))
		goto out;
	if (!ASSERT_TRUE(rx_sent(&vd.port[0], &r0, RR_ROUNDS, &r),
			 "a signal per answer"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &t);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &qt);
	qs_read(&vd.port[0], VNET_DIR_RX, 0, &qr);
	dbg("udp rr: rx sent %llu latency %llu quiet %llu timer %llu holds %llu; tx sent %llu latency %llu timer %llu holds %llu carried %llu; mode tx %u rx %u, %u%% turns\n",
	    (unsigned long long)(r.notify_sent - r0.notify_sent),
	    (unsigned long long)(r.notify_latency - r0.notify_latency),
	    (unsigned long long)(r.notify_quiet - r0.notify_quiet),
	    (unsigned long long)(r.notify_timer - r0.notify_timer),
	    (unsigned long long)(r.holds - r0.holds),
	    (unsigned long long)(t.notify_sent - t0.notify_sent),
	    (unsigned long long)(t.notify_latency - t0.notify_latency),
	    (unsigned long long)(t.notify_timer - t0.notify_timer),
	    (unsigned long long)(t.holds - t0.holds),
	    (unsigned long long)(t.notify_paired - t0.notify_paired),
	    qt.notify_mode, qr.notify_mode, qt.turn_pct);
	ASSERT_EQ(qt.notify_mode, VNET_NOTIFY_LATENCY, "TX entry: latency mode");
	ASSERT_EQ(qr.notify_mode, VNET_NOTIFY_LATENCY, "RX entry: latency mode");
	ASSERT_GE(qt.turn_windows, RR_ROUNDS * 2 / VNET_TURN_WIN_FRAMES,
		  "a window per 8 payload frames");
	ASSERT_EQ(r.notify_sent - r0.notify_sent, RR_ROUNDS,
		  "every answer signalled");
	/* each answer was alone on the ring: at once, for one reason */
	ASSERT_EQ(r.notify_latency - r0.notify_latency +
			  r.notify_quiet - r0.notify_quiet,
		  RR_ROUNDS, "RX: every signal at once");
	ASSERT_GE(r.notify_latency - r0.notify_latency,
		  RR_ROUNDS - VNET_TURN_WIN_FRAMES,
		  "RX: latency mode after the first window");
	ASSERT_EQ(r.holds - r0.holds, 0, "RX: no hold");
	ASSERT_EQ(r.notify_timer - r0.notify_timer, 0, "RX: no timer");
	ASSERT_EQ(t.holds - t0.holds, 0, "TX: no hold");
	ASSERT_EQ(t.notify_timer - t0.notify_timer, 0, "TX: no timer");
out:
	vd_end(&vd, fe, &pfd);
}

/*
 * The same exchanges as a server answers them (as soon as the request
 * came out of the tap) and as virtio_net receives them (its RX poll
 * cleans the TX ring), with tx-usecs 1 s so that any hold would show:
 * latency mode holds nothing on TX either, not even for the answer's
 * signal to carry the request's completion (the guest would then clean
 * its TX ring on the round trip instead of while it waits), and `vnetctl
 * coalesce show` says so.
 */
static void rule_udp_rr_server(void)
{
	const struct coal c = { .tx_frames = 32, .tx_usecs = 1000000,
				.rx_frames = 32, .rx_usecs = 200 };
	struct vnet_dp_stats r0, r, t0, t;
	struct vufe *fe = NULL;
	int pfd = -1;
	struct vd vd;

	if (!rule_setup(&vd, "rrs", &c, &fe, &pfd))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &r0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &t0);
	if (!udp_exchanges(fe, pfd, false))
		goto out;
	if (!ASSERT_TRUE(rx_sent(&vd.port[0], &r0, RR_ROUNDS, &r),
			 "a signal per answer"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &t);
	dps_dbg("udp rr server: rx", &r, &r0);
	dps_dbg("udp rr server: tx", &t, &t0);
	ASSERT_EQ(t.frames - t0.frames, RR_ROUNDS, "every request written");
	ASSERT_EQ(t.holds - t0.holds, 0, "TX: no hold");
	ASSERT_EQ(t.notify_deferred - t0.notify_deferred, 0,
		  "TX: nothing deferred");
	ASSERT_EQ(t.notify_paired - t0.notify_paired, 0,
		  "TX: nothing left for the answer to carry");
	ASSERT_EQ(t.notify_timer - t0.notify_timer, 0, "TX: no timer");
	/* and the operator reads it so */
	ASSERT_EQ(sh("${OUT:-build}/vnetctl -n %s coalesce show %s | grep -q "
		     "'queue 0 tx: latency mode.*: signals at once; pure ACKs'",
		     vd.ns, vd.port[0].tap),
		  0, "vnetctl coalesce show: TX signals at once");
out:
	vd_end(&vd, fe, &pfd);
}

/*
 * A one-way UDP stream to the guest, in bursts of 4 each received before
 * the next: batch mode, and with rx-usecs 100 ms the holds gather frames up
 * to rx-frames, so signals are about frames / rx-frames (a signal per
 * burst would be frames / 4).
 */
static void rule_rx_stream(void)
{
	const struct coal c = { .tx_frames = 32, .tx_usecs = 200,
				.rx_frames = 16, .rx_usecs = 100000 };
	static __u8 f[256], got[FRAME_MAX];
	struct vnet_dp_stats d0, d;
	struct vnet_queue_state q;
	unsigned int i, k, frames = 256;
	struct vufe *fe = NULL;
	__u16 sport = 34000;
	int pfd = -1;
	struct vd vd;

	if (!rule_setup(&vd, "rstr", &c, &fe, &pfd))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	for (i = 0; i < frames; i += 4) {
		for (k = 0; k < 4; k++)
			if (!ASSERT_OK(pkt_send(pfd, NULL, f,
						udp_frame(f, guest_mac, host_mac,
							  sport, i + k)),
				       "send"))
				goto out;
		for (k = 0; k < 4; k++)
			if (!ASSERT_GE(guest_recv(fe, 1, got, sizeof(got), NULL,
						  NULL, NULL, match_sport,
						  &sport, WAIT_MS),
				       0, "received"))
				goto out;
	}
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d);
	qs_read(&vd.port[0], VNET_DIR_RX, 0, &q);
	dbg("rx stream: sent %llu frames-cap %llu timer %llu quiet %llu latency %llu holds %llu held %llu, mode %u\n",
	    (unsigned long long)(d.notify_sent - d0.notify_sent),
	    (unsigned long long)(d.notify_frames - d0.notify_frames),
	    (unsigned long long)(d.notify_timer - d0.notify_timer),
	    (unsigned long long)(d.notify_quiet - d0.notify_quiet),
	    (unsigned long long)(d.notify_latency - d0.notify_latency),
	    (unsigned long long)(d.holds - d0.holds),
	    (unsigned long long)(d.held - d0.held), q.notify_mode);
	ASSERT_EQ(q.notify_mode, VNET_NOTIFY_BATCH, "one way: batch mode");
	ASSERT_GT(d.holds - d0.holds, 0, "holds");
	ASSERT_GE(d.notify_frames - d0.notify_frames, frames / 16 / 2,
		  "signals on rx-frames");
	ASSERT_LE(d.notify_sent - d0.notify_sent, frames / 16 + 8,
		  "signals <= frames / rx-frames + a few");
out:
	vd_end(&vd, fe, &pfd);
}

/*
 * A TCP stream to the guest, each data segment (PSH: signalled at once)
 * answered by the guest's pure ACK, as a receiving virtio_net does (its RX
 * poll cleans the TX ring).  With tx-usecs 1 s, so that no hold ends by
 * its timer: every ACK's completion but the last is carried by the next
 * data segment's RX signal (TX's notify_paired), none is signalled on its
 * own, in batch mode too (a quiet period of the TX ring does not signal
 * them), and `vnetctl coalesce show` says so.
 */
static void rule_tx_acks_carried(void)
{
	const struct coal c = { .tx_frames = 32, .tx_usecs = 1000000,
				.rx_frames = 32, .rx_usecs = 200 };
	static __u8 f[256], got[FRAME_MAX];
	struct vnet_dp_stats r0, r, t0, t;
	struct vnet_queue_state q;
	struct vufe *fe = NULL;
	__u16 sport = 5201;
	unsigned int i;
	int pfd = -1;
	struct vd vd;

	if (!rule_setup(&vd, "racks", &c, &fe, &pfd))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &r0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &t0);
	for (i = 0; i < RR_ROUNDS; i++) {
		struct l4 data = { .dst = guest_mac, .src = host_mac,
				   .saddr = HOST_IP, .daddr = GUEST_IP,
				   .sport = 5201, .dport = 40000,
				   .proto = IPPROTO_TCP,
				   .tcp_flags = TH_ACK | TH_PSH,
				   .seq = 1000 + i * 100, .plen = 100,
				   .seed = 7, .off = (size_t)i * 100 };
		struct l4 ack = { .dst = host_mac, .src = guest_mac,
				  .saddr = GUEST_IP, .daddr = HOST_IP,
				  .sport = 40000, .dport = 5201,
				  .proto = IPPROTO_TCP, .tcp_flags = TH_ACK,
				  .seq = 1 };

		if (!ASSERT_OK(pkt_send(pfd, NULL, f, ip_frame(f, &data)),
			       "data"))
			goto out;
		if (!ASSERT_GE(guest_recv(fe, 1, got, sizeof(got), NULL, NULL,
					  NULL, match_sport, &sport, WAIT_MS),
			       0, "the data arrived"))
			goto out;
		/* virtio_net's RX poll: TX cleaned, its call re-armed */
		if (!ASSERT_GE(vufe_tx_reap(fe, 0), 0, "TX reaped"))
			goto out;
		if (!ASSERT_OK(tx_send(fe, 0, NULL, f, ip_frame(f, &ack), 0),
			       "the ACK"))
			goto out;
		if (!ASSERT_GE(pkt_recv(pfd, NULL, got, sizeof(got), WAIT_MS),
			       0, "the ACK came out of the tap"))
			goto out;
	}
	if (!ASSERT_TRUE(rx_sent(&vd.port[0], &r0, RR_ROUNDS, &r),
			 "a signal per data segment"))
		goto out;
	/* the last ACK left the tap before vnetd counted it (bounded) */
	for (long long end = now_ms() + WAIT_MS;
	     dps_read(&vd.port[0], VNET_DIR_TX, 0, &t) &&
	     t.holds - t0.holds < RR_ROUNDS && now_ms() < end;)
		nap_ms(1);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q);
	dbg("tx acks: rx sent %llu urgent %llu; tx sent %llu quiet %llu latency %llu timer %llu holds %llu carried %llu; mode %u\n",
	    (unsigned long long)(r.notify_sent - r0.notify_sent),
	    (unsigned long long)(r.notify_urgent - r0.notify_urgent),
	    (unsigned long long)(t.notify_sent - t0.notify_sent),
	    (unsigned long long)(t.notify_quiet - t0.notify_quiet),
	    (unsigned long long)(t.notify_latency - t0.notify_latency),
	    (unsigned long long)(t.notify_timer - t0.notify_timer),
	    (unsigned long long)(t.holds - t0.holds),
	    (unsigned long long)(t.notify_paired - t0.notify_paired),
	    q.notify_mode);
	ASSERT_EQ(q.notify_mode, VNET_NOTIFY_BATCH, "one way: batch mode");
	ASSERT_EQ(t.frames - t0.frames, RR_ROUNDS, "every ACK written");
	ASSERT_EQ(t.holds - t0.holds, RR_ROUNDS, "every ACK's completion held");
	ASSERT_EQ(t.notify_paired - t0.notify_paired, RR_ROUNDS - 1,
		  "TX: every ACK's completion but the last carried by an RX signal");
	ASSERT_EQ(t.notify_sent - t0.notify_sent, 0, "TX: no signal of its own");
	ASSERT_EQ(sh("${OUT:-build}/vnetctl -n %s coalesce show %s | grep -q "
		     "\"queue 0 tx: batch mode.*pure ACKs' completions go with the next RX signal.*; %u carried by RX signals\"",
		     vd.ns, vd.port[0].tap, RR_ROUNDS - 1),
		  0, "vnetctl coalesce show: the ACKs' completions carried");
out:
	vd_end(&vd, fe, &pfd);
}

VNET_TEST("vnetd/rule_lone_frame", rule_lone_frame);
VNET_TEST("vnetd/rule_udp_rr", rule_udp_rr);
VNET_TEST("vnetd/rule_udp_rr_server", rule_udp_rr_server);
VNET_TEST("vnetd/rule_rx_stream", rule_rx_stream);
VNET_TEST("vnetd/rule_tx_acks_carried", rule_tx_acks_carried);
