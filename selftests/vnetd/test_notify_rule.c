// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_notify_rule: the notification rule (docs/policy.md) on traces.
 *
 * A trace is a list of frames with their arrival times, directions and
 * kinds (UDP, a TCP segment with PSH, one without, a pure ACK) and the
 * guest's EVENT_IDX state (does it want a call).  The test plays it the way
 * vnetd meets it: each frame goes through the real classifier programs
 * (BPF_PROG_TEST_RUN of the XDP program for guest TX, of tc egress for
 * guest RX, on queue 0), which count its class and decide the queue pair's
 * notify_mode; then the ring's rule (user/vnetd/datapath/rule.c, linked in) decides
 * from what vnetd reads: the class counts before and after, the mode, the
 * caps (tx/rx-frames 32, usecs 200, vnet's defaults), the hold flag.  A
 * hold's deadline is a simulated timer that fires before the next frame
 * that comes after it; a TX signal takes along what RX holds, as coal.c
 * does.  Out come the signals: when, for how many frames, why.
 *
 * Each trace runs twice: with the rule (hold auto, the default) and with
 * tx-hold/rx-hold always (every hold counts usecs from its first frame:
 * the static defaults the rule replaced).  The table says what the rule
 * must do (the largest delay from a frame to its signal, the timer
 * wake-ups, the holds, the signals) and, for the traces where holding
 * batches nothing, that the static rule fails the same expectations: a
 * trace that would pass either way tests nothing.  For the streams, the
 * rule must hold as the static rule does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <vnet/abi.h>
#include "vnet.skel.h"
#include "../../user/vnetd/datapath/rule.h"

#include "test.h"
#include "frames.h"
#include "skel_test.h"

enum kind { UDP, PSH, URG, ACK };

struct ev {
	uint32_t t_us;	/* arrival, from the start of the trace */
	uint8_t dir;	/* VNET_DIR_TX (guest sends) or VNET_DIR_RX */
	uint8_t kind;
	bool nowant;	/* the guest polls this ring: EVENT_IDX wants no call */
};

#define MAX_EV 1024

struct trace {
	struct ev ev[MAX_EV];
	unsigned int n;
};

/* what a run did, per direction */
struct outcome {
	unsigned int signals[2], timers[2], holds[2];
	unsigned int carried;		/* TX holds an answer's signal carried */
	uint32_t max_delay_us[2];	/* frame -> its signal, the largest */
	uint64_t sig_t[2][MAX_EV];	/* signal times, ns */
};

/* what the rule must do; -1: anything */
struct want {
	int rx_delay_us, tx_delay_us;	/* max frame -> signal, at most */
	int timers;			/* timer wake-ups, both directions, at most */
	int min_holds;			/* holds, both directions, at least */
	int rx_signals, tx_signals;	/* at most */
	int min_carried;		/* TX holds carried by RX signals, at least */
};

struct trace_case {
	const char *name;
	void (*gen)(struct trace *t);
	struct want want;
	bool static_fails;	/* the static rule breaks `want` */
	bool as_static;		/* signals at the static rule's times */
	bool no_cleantx;	/* the guest's RX interrupt leaves TX alone */
};

static struct vnet *skel;
static int queues_fd, xdp_fd, tc_fd;
static uint8_t frame[4][2][256];
static size_t frame_len[4][2];

/* --- the traces --------------------------------------------------------- */

static void add(struct trace *t, uint32_t at, int dir, int kind, bool nowant)
{
	if (t->n < MAX_EV)
		t->ev[t->n++] = (struct ev){ at, (uint8_t)dir, (uint8_t)kind,
					     nowant };
}

/* UDP ping-pong at full rate: 60 us round trip, the next 10 us later */
static void gen_udp_rr(struct trace *t)
{
	for (unsigned int i = 0; i < 40; i++) {
		add(t, i * 70, VNET_DIR_TX, UDP, false);
		add(t, i * 70 + 60, VNET_DIR_RX, UDP, false);
	}
}

/* UDP ping-pong at 100 messages/s */
static void gen_udp_sparse(struct trace *t)
{
	for (unsigned int i = 0; i < 20; i++) {
		add(t, i * 10000, VNET_DIR_TX, UDP, false);
		add(t, i * 10000 + 100, VNET_DIR_RX, UDP, false);
	}
}

/* TCP request/response at 100 messages/s: PSH both ways */
static void gen_tcp_sparse(struct trace *t)
{
	for (unsigned int i = 0; i < 20; i++) {
		add(t, i * 10000, VNET_DIR_TX, PSH, false);
		add(t, i * 10000 + 100, VNET_DIR_RX, PSH, false);
	}
}

/* TCP request/response at full rate, the answer ACKed by the next request */
static void gen_tcp_rr(struct trace *t)
{
	for (unsigned int i = 0; i < 40; i++) {
		add(t, i * 250, VNET_DIR_TX, PSH, false);
		add(t, i * 250 + 100, VNET_DIR_RX, PSH, false);
	}
}

/*
 * Two peers streaming UDP at each other, 2000 frames/s each way: the
 * payload turns direction on every frame (latency mode), but each "answer"
 * comes 300 us after the frame before it, later than 3/4 of tx-usecs
 */
static void gen_peers(struct trace *t)
{
	for (unsigned int i = 0; i < 40; i++) {
		add(t, i * 500, VNET_DIR_TX, UDP, false);
		add(t, i * 500 + 300, VNET_DIR_RX, UDP, false);
	}
}

/* requests every 50 us, each answered 160 us later (in time order) */
static void gen_pipelined(struct trace *t)
{
	for (unsigned int i = 0; i < 43; i++) {
		if (i < 40)
			add(t, i * 50, VNET_DIR_TX, UDP, false);
		if (i >= 3)
			add(t, (i - 3) * 50 + 160, VNET_DIR_RX, UDP, false);
	}
}

/* UDP ping-pong whose answers come after tx-usecs (a slow server) */
static void gen_udp_rr_slow(struct trace *t)
{
	for (unsigned int i = 0; i < 40; i++) {
		add(t, i * 500, VNET_DIR_TX, UDP, false);
		add(t, i * 500 + 400, VNET_DIR_RX, UDP, false);
	}
}

/* one-way UDP every millisecond (a resolver's answers, a log stream) */
static void gen_udp_oneway_sparse(struct trace *t)
{
	for (unsigned int i = 0; i < 40; i++)
		add(t, i * 1000, VNET_DIR_RX, UDP, false);
}

/*
 * A small-write TCP sender on a slow guest: a PSH segment every 500 us,
 * the host's pure ACK of each in between: holding its completions and its
 * ACKs is what lets it grow its segments (autocorking, Nagle), even though
 * no second frame comes in the hold.
 */
static void gen_small_writes(struct trace *t)
{
	for (unsigned int i = 0; i < 40; i++) {
		add(t, i * 500, VNET_DIR_TX, PSH, false);
		add(t, i * 500 + 250, VNET_DIR_RX, ACK, false);
	}
}

/* the same sender writing 100 times a second: nothing to grow */
static void gen_tcp_oneway_sparse(struct trace *t)
{
	for (unsigned int i = 0; i < 20; i++) {
		add(t, i * 10000, VNET_DIR_TX, PSH, false);
		add(t, i * 10000 + 150, VNET_DIR_RX, ACK, false);
	}
}

/* bulk to the guest: a data segment every 10 us, its ACKs every 40 us */
static void gen_rx_bulk(struct trace *t)
{
	for (unsigned int i = 0; i < 400; i++) {
		add(t, i * 10, VNET_DIR_RX, URG, false);
		if (i % 4 == 3)
			add(t, i * 10 + 5, VNET_DIR_TX, ACK, false);
	}
}

/*
 * A bulk stream to a slow guest: a 64 KiB frame every 300 us, PSH on every
 * other one, the guest's pure ACK 100 us after each PSH frame
 */
static void gen_rx_bulk_slow(struct trace *t)
{
	for (unsigned int i = 0; i < 40; i++) {
		add(t, i * 300, VNET_DIR_RX, i % 2 ? PSH : URG, false);
		if (i % 2)
			add(t, i * 300 + 100, VNET_DIR_TX, ACK, false);
	}
}

/* the same, the guest's ACKs stopping halfway (its TX ring full, say) */
static void gen_rx_bulk_acks_stop(struct trace *t)
{
	for (unsigned int i = 0; i < 40; i++) {
		add(t, i * 300, VNET_DIR_RX, i % 2 ? PSH : URG, false);
		if (i % 2 && i < 20)
			add(t, i * 300 + 100, VNET_DIR_TX, ACK, false);
	}
}

/* a UDP flood from the guest: a frame every 5 us */
static void gen_tx_flood(struct trace *t)
{
	for (unsigned int i = 0; i < 400; i++)
		add(t, i * 5, VNET_DIR_TX, UDP, false);
}

/* the guest polls its RX ring (NAPI busy): no call is wanted, none owed */
static void gen_polling(struct trace *t)
{
	for (unsigned int i = 0; i < 100; i++)
		add(t, i * 20, VNET_DIR_RX, UDP, true);
}

/* TCP request/response while bulk data flows to the guest */
static void gen_rr_under_bulk(struct trace *t)
{
	for (unsigned int i = 0; i < 300; i++) {
		add(t, i * 10, VNET_DIR_RX, URG, false);
		if (i % 30 == 0)
			add(t, i * 10 + 3, VNET_DIR_TX, PSH, false);
		if (i % 30 == 15)
			add(t, i * 10 + 3, VNET_DIR_RX, PSH, false);
	}
}

/*
 * The table.  Delays are from a frame's arrival to the signal that
 * carries it; a latency trace wants 0 (at once).
 */
static const struct trace_case cases[] = {
	/*
	 * Request/response: both ends of every exchange signalled at once,
	 * the request's completion too (held for the answer, it would be
	 * cleaned on the round trip), no timer
	 */
	{ "notify_rule/udp_rr", gen_udp_rr,
	  { .rx_delay_us = 0, .tx_delay_us = 0, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = 40 },
	  .static_fails = true },
	{ "notify_rule/tcp_rr", gen_tcp_rr,
	  { .rx_delay_us = 0, .tx_delay_us = 0, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = 40 },
	  .static_fails = true },
	/* sparse: every request after a quiet period, signalled at once */
	{ "notify_rule/udp_sparse", gen_udp_sparse,
	  { .rx_delay_us = 0, .tx_delay_us = 0, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = -1 },
	  .static_fails = true },
	{ "notify_rule/tcp_sparse", gen_tcp_sparse,
	  { .rx_delay_us = 0, .tx_delay_us = 0, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = -1 },
	  .static_fails = true },
	/* a slow server, peers streaming at each other: at once, no timer */
	{ "notify_rule/udp_rr_slow", gen_udp_rr_slow,
	  { .rx_delay_us = 0, .tx_delay_us = 0, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = 40 },
	  .static_fails = true },
	{ "notify_rule/peers_streaming", gen_peers,
	  { .rx_delay_us = 0, .tx_delay_us = 0, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = 40 },
	  .static_fails = true },
	/* requests 50 us apart, each answered 160 us later (pipelined) */
	{ "notify_rule/pipelined", gen_pipelined,
	  { .rx_delay_us = 0, .tx_delay_us = 0, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = -1 },
	  .static_fails = true },
	{ "notify_rule/udp_oneway_sparse", gen_udp_oneway_sparse,
	  { .rx_delay_us = 0, .tx_delay_us = -1, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = -1 },
	  .static_fails = true },
	/* the stream traces: holds (and their delay) are the point */
	{ "notify_rule/tcp_oneway_sparse", gen_tcp_oneway_sparse,
	  { .rx_delay_us = 0, .tx_delay_us = 0, .timers = 0, .min_holds = 0,
	    .rx_signals = -1, .tx_signals = -1 },
	  .static_fails = true },
	{ "notify_rule/small_writes", gen_small_writes,
	  { .rx_delay_us = 200, .tx_delay_us = 200, .timers = -1,
	    .min_holds = 60, .rx_signals = -1, .tx_signals = -1 },
	  .as_static = true },
	{ "notify_rule/rx_bulk", gen_rx_bulk,
	  { .rx_delay_us = 200, .tx_delay_us = -1, .timers = -1,
	    .min_holds = 5, .rx_signals = 400 / 8, .tx_signals = -1 },
	  .static_fails = false },
	/*
	 * The guest's pure ACKs are completions nobody waits for: the next
	 * RX signal carries each (no TX signal but the last ACK's, checked
	 * VNETD_RULE_CARRY_CHECK tx-usecs after it), where a quiet period
	 * would signal every one at once
	 */
	{ "notify_rule/rx_bulk_slow", gen_rx_bulk_slow,
	  { .rx_delay_us = 0, .tx_delay_us = 200 * VNETD_RULE_CARRY_CHECK,
	    .timers = 1, .min_holds = 0, .rx_signals = -1, .tx_signals = 1,
	    .min_carried = 19 },
	  .static_fails = true },
	/*
	 * When the ACKs stop, the carried ones are checked with EVENT_IDX
	 * VNETD_RULE_CARRY_CHECK tx-usecs after the last carry: a guest that
	 * cleaned them wants no call; one whose RX interrupt leaves TX alone
	 * gets a signal then, however long the RX stream goes on
	 */
	{ "notify_rule/rx_bulk_acks_stop", gen_rx_bulk_acks_stop,
	  { .rx_delay_us = 0, .tx_delay_us = 200, .timers = 1,
	    .min_holds = 0, .rx_signals = -1, .tx_signals = 0,
	    .min_carried = 10 },
	  .static_fails = true },
	{ "notify_rule/rx_bulk_acks_stop_no_cleantx", gen_rx_bulk_acks_stop,
	  { .rx_delay_us = 0, .tx_delay_us = 200 + 200 * VNETD_RULE_CARRY_CHECK,
	    .timers = 1, .min_holds = 0, .rx_signals = -1, .tx_signals = 1,
	    .min_carried = 10 },
	  .static_fails = true, .no_cleantx = true },
	{ "notify_rule/tx_flood", gen_tx_flood,
	  { .rx_delay_us = -1, .tx_delay_us = 200, .timers = -1,
	    .min_holds = 5, .rx_signals = -1, .tx_signals = 400 / 16 },
	  .static_fails = false },
	{ "notify_rule/polling_guest", gen_polling,
	  { .rx_delay_us = 0, .tx_delay_us = -1, .timers = 0, .min_holds = 0,
	    .rx_signals = 0, .tx_signals = -1 },
	  .static_fails = false },
	/* the push bypass answers the requests at once under the stream */
	{ "notify_rule/rr_under_bulk", gen_rr_under_bulk,
	  { .rx_delay_us = 200, .tx_delay_us = -1, .timers = -1,
	    .min_holds = 1, .rx_signals = 300 / 4, .tx_signals = -1 },
	  .static_fails = false },
};

/* --- playing a trace ---------------------------------------------------- */

struct ring {
	struct vnetd_rule rule;
	bool want;
	bool cleaned;	/* TX: the guest cleaned the carried entries */
};

/* virtio_net's RX interrupt cleans its TX ring; a case may say otherwise */
static bool guest_cleans_tx;

static bool want_cb(void *ctx)
{
	return ((struct ring *)ctx)->want;
}

static bool classify(const struct ev *e)
{
	int fd = e->dir == VNET_DIR_TX ? xdp_fd : tc_fd;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = frame[e->kind][e->dir],
		    .data_size_in = (__u32)frame_len[e->kind][e->dir],
		    .repeat = 1);

	return ASSERT_OK(bpf_prog_test_run_opts(fd, &opts), "test_run");
}

static bool qstate(__u32 dir, struct vnet_queue_state *q)
{
	__u32 key = vnet_key(dir, 0);

	return ASSERT_OK(bpf_map_lookup_elem(queues_fd, &key, q),
			 "queues lookup");
}

/* a fresh pair of entries for queue 0: counts and mode zero */
static bool qreset(void)
{
	struct vnet_queue_state z = {};
	__u32 k;

	for (k = 0; k < 2; k++) {
		__u32 key = vnet_key(k, 0);

		if (!ASSERT_OK(bpf_map_update_elem(queues_fd, &key, &z, BPF_ANY),
			       "queues reset"))
			return false;
	}
	return true;
}

static void record(struct outcome *o, int dir, const struct vnetd_rule *r,
		   uint64_t at, bool timer)
{
	uint32_t d = (uint32_t)((at - r->first_ns) / 1000);

	if (o->signals[dir] < MAX_EV)
		o->sig_t[dir][o->signals[dir]] = at;
	o->signals[dir]++;
	o->timers[dir] += timer;
	if (d > o->max_delay_us[dir])
		o->max_delay_us[dir] = d;
}

/*
 * DIR's pending frames signalled at AT, as coal.c does: a TX signal takes
 * RX along, an RX signal carries a TX hold for the answer.  A TX ring that
 * has only carried entries is checked with EVENT_IDX: a guest that cleaned
 * them wants no call.
 */
static void signal(struct ring *rg, struct outcome *o, int dir, uint64_t at,
		   bool timer)
{
	struct vnetd_rule *tx = &rg[VNET_DIR_TX].rule;
	uint32_t d;

	if (dir == VNET_DIR_TX && !tx->pending && rg[dir].cleaned) {
		o->timers[dir] += timer;	/* a wake-up all the same */
		vnetd_rule_signalled(tx, at);
		return;
	}
	record(o, dir, &rg[dir].rule, at, timer);
	vnetd_rule_signalled(&rg[dir].rule, at);
	if (dir == VNET_DIR_TX && rg[VNET_DIR_RX].rule.pending) {
		record(o, VNET_DIR_RX, &rg[VNET_DIR_RX].rule, at, false);
		vnetd_rule_signalled(&rg[VNET_DIR_RX].rule, at);
	}
	d = (uint32_t)((at - tx->first_ns) / 1000);
	if (dir == VNET_DIR_RX &&
	    vnetd_rule_carried(tx, at, VNET_DEFAULT_TX_USECS)) {
		o->carried++;
		rg[VNET_DIR_TX].cleaned = guest_cleans_tx;
		if (d > o->max_delay_us[VNET_DIR_TX])
			o->max_delay_us[VNET_DIR_TX] = d;
	}
}

/* holds due before AT expire (the earlier deadline first) */
static void expire(struct ring *rg, struct outcome *o, uint64_t at)
{
	for (;;) {
		int dir = -1, k;
		uint64_t t = 0;

		for (k = 0; k < 2; k++)
			if (rg[k].rule.deadline && rg[k].rule.deadline <= at &&
			    (dir < 0 || rg[k].rule.deadline < t)) {
				dir = k;
				t = rg[k].rule.deadline;
			}
		if (dir < 0)
			return;
		switch (vnetd_rule_expired(&rg[dir].rule, t,
					   VNET_DEFAULT_TX_FRAMES,
					   VNET_DEFAULT_TX_USECS)) {
		case VNETD_ACT_SIGNAL:
			signal(rg, o, dir, t, true);
			break;
		case VNETD_ACT_NONE:
			rg[dir].rule.deadline = 0;
			break;
		case VNETD_ACT_HOLD:
			break;
		}
	}
}

static bool play(const struct trace *t, bool always, struct outcome *o)
{
	/* the clock starts well away from 0, as CLOCK_MONOTONIC does */
	const uint64_t t0 = 1000000000ULL;
	struct ring rg[2] = {};
	unsigned int i;

	memset(o, 0, sizeof(*o));
	if (!qreset())
		return false;
	for (i = 0; i < t->n; i++) {
		const struct ev *e = &t->ev[i];
		uint64_t at = t0 + (uint64_t)e->t_us * 1000;
		struct vnet_queue_state q0, q1;
		struct vnetd_rule_in in = {};
		enum vnetd_why why;
		bool urgent, push, ack, had_hold;

		expire(rg, o, at);
		if (!qstate(e->dir, &q0) || !classify(e) ||
		    !qstate(e->dir, &q1))
			return false;
		urgent = q1.urgent != q0.urgent;
		push = q1.push != q0.push;
		ack = q1.ack != q0.ack;
		rg[e->dir].want = !e->nowant;
		in.now = at;
		in.n = 1;
		in.urgent = e->dir == VNET_DIR_TX ? urgent : push;
		in.stream = e->dir == VNET_DIR_TX ? push : ack;
		in.always = always;
		in.no_waiter = e->dir == VNET_DIR_TX && ack;
		in.mode = q1.notify_mode;
		in.frames = e->dir == VNET_DIR_TX ? VNET_DEFAULT_TX_FRAMES :
						    VNET_DEFAULT_RX_FRAMES;
		in.usecs = e->dir == VNET_DIR_TX ? VNET_DEFAULT_TX_USECS :
						   VNET_DEFAULT_RX_USECS;
		in.want = want_cb;
		in.ctx = &rg[e->dir];
		had_hold = rg[e->dir].rule.deadline && rg[e->dir].rule.pending;
		if (e->dir == VNET_DIR_TX)
			rg[e->dir].cleaned = false;
		switch (vnetd_rule_pushed(&rg[e->dir].rule, &in, &why)) {
		case VNETD_ACT_SIGNAL:
			signal(rg, o, e->dir, at, false);
			break;
		case VNETD_ACT_HOLD:
			o->holds[e->dir] += !had_hold;
			break;
		case VNETD_ACT_NONE:
			break;
		}
	}
	expire(rg, o, ~0ULL);
	return true;
}

/* does O meet W?  (WHY: the first broken expectation) */
static bool meets(const struct outcome *o, const struct want *w, char *why,
		  size_t len)
{
	unsigned int timers = o->timers[0] + o->timers[1];
	unsigned int holds = o->holds[0] + o->holds[1];

	if (w->rx_delay_us >= 0 && o->max_delay_us[VNET_DIR_RX] > (uint32_t)w->rx_delay_us)
		snprintf(why, len, "an RX frame waited %u us for its signal (at most %d)",
			 o->max_delay_us[VNET_DIR_RX], w->rx_delay_us);
	else if (w->tx_delay_us >= 0 && o->max_delay_us[VNET_DIR_TX] > (uint32_t)w->tx_delay_us)
		snprintf(why, len, "a TX completion waited %u us for its signal (at most %d)",
			 o->max_delay_us[VNET_DIR_TX], w->tx_delay_us);
	else if (w->timers >= 0 && timers > (unsigned int)w->timers)
		snprintf(why, len, "%u timer wake-ups (at most %d)", timers,
			 w->timers);
	else if (holds < (unsigned int)w->min_holds)
		snprintf(why, len, "%u holds (at least %d)", holds, w->min_holds);
	else if (w->rx_signals >= 0 && o->signals[VNET_DIR_RX] > (unsigned int)w->rx_signals)
		snprintf(why, len, "%u RX signals (at most %d)",
			 o->signals[VNET_DIR_RX], w->rx_signals);
	else if (w->tx_signals >= 0 && o->signals[VNET_DIR_TX] > (unsigned int)w->tx_signals)
		snprintf(why, len, "%u TX signals (at most %d)",
			 o->signals[VNET_DIR_TX], w->tx_signals);
	else if (o->carried < (unsigned int)w->min_carried)
		snprintf(why, len, "%u TX holds carried by an answer (at least %d)",
			 o->carried, w->min_carried);
	else
		return true;
	return false;
}

static void run_case(const struct trace_case *c)
{
	static struct trace t;
	static struct outcome rule, stat;
	char why[160];

	memset(&t, 0, sizeof(t));
	c->gen(&t);
	guest_cleans_tx = !c->no_cleantx;
	if (!play(&t, false, &rule) || !play(&t, true, &stat))
		return;
	printf("# %s: rule: signals rx %u tx %u, carried %u, timers %u, holds %u, max delay rx %u tx %u us; static: signals rx %u tx %u, timers %u, holds %u, max delay rx %u tx %u us\n",
	       c->name, rule.signals[1], rule.signals[0], rule.carried,
	       rule.timers[0] + rule.timers[1], rule.holds[0] + rule.holds[1],
	       rule.max_delay_us[1], rule.max_delay_us[0], stat.signals[1],
	       stat.signals[0], stat.timers[0] + stat.timers[1],
	       stat.holds[0] + stat.holds[1], stat.max_delay_us[1],
	       stat.max_delay_us[0]);
	if (!meets(&rule, &c->want, why, sizeof(why)))
		test_fail("the rule: %s", why);
	if (c->static_fails && meets(&stat, &c->want, why, sizeof(why)))
		test_fail("the static rule meets the expectations too: the trace tells nothing");
	/*
	 * Until the first window of payload frames closes, the mode is none
	 * and signals go at once; from then on the stream is held as the
	 * static rule holds it, both ways.
	 */
	for (int d = 0; c->as_static && d < 2; d++) {
		unsigned int n = rule.signals[d];

		if (!ASSERT_EQ(n, stat.signals[d], "signals: as many as the static rule's") ||
		    !ASSERT_GT(n, VNET_TURN_WIN_FRAMES, "more signals than one window"))
			break;
		ASSERT_TRUE(!memcmp(rule.sig_t[d] + VNET_TURN_WIN_FRAMES,
				    stat.sig_t[d] + VNET_TURN_WIN_FRAMES,
				    sizeof(rule.sig_t[0][0]) *
					    (n - VNET_TURN_WIN_FRAMES)),
			    "after the first window, signals at the static rule's times");
	}
}

/* the mode follows the traffic: request/response, then a stream, back */
static void mode_follows(void)
{
	struct vnet_queue_state tx, rx;
	unsigned int i;
	struct ev e;

	if (!qreset())
		return;
	for (i = 0; i < 2 * VNET_TURN_WIN_FRAMES; i++) {
		e = (struct ev){ 0, (uint8_t)(i % 2), UDP, false };
		if (!classify(&e))
			return;
	}
	if (!qstate(VNET_DIR_TX, &tx) || !qstate(VNET_DIR_RX, &rx))
		return;
	ASSERT_EQ(tx.notify_mode, VNET_NOTIFY_LATENCY, "ping-pong: TX latency");
	ASSERT_EQ(rx.notify_mode, VNET_NOTIFY_LATENCY, "ping-pong: RX latency");
	ASSERT_GE(tx.turn_pct, 80, "turn share");
	/* pure ACKs back do not count: the stream is one way */
	for (i = 0; i < 4 * VNET_TURN_WIN_FRAMES; i++) {
		e = (struct ev){ 0, VNET_DIR_RX, i % 3 ? URG : ACK, false };
		if (!classify(&e))
			return;
		e = (struct ev){ 0, VNET_DIR_TX, ACK, false };
		if (!classify(&e))
			return;
	}
	if (!qstate(VNET_DIR_TX, &tx) || !qstate(VNET_DIR_RX, &rx))
		return;
	ASSERT_EQ(rx.notify_mode, VNET_NOTIFY_BATCH, "stream: RX batch");
	ASSERT_EQ(tx.notify_mode, VNET_NOTIFY_BATCH, "stream: TX batch");
	ASSERT_EQ(tx.turn_pct, 0, "no turns");
	ASSERT_GE(tx.mode_changes, 2, "mode changes counted");
	ASSERT_EQ(rx.turn_windows, tx.turn_windows, "both entries' windows");
}

static size_t build(uint8_t *buf, int kind, int dir)
{
	struct frame_spec s = {
		.ethertype = ETH_P_IP,
		.proto = kind == UDP ? IPPROTO_UDP : IPPROTO_TCP,
		.tcp_flags = kind == PSH ? FRAME_TCP_ACK | FRAME_TCP_PSH :
					   FRAME_TCP_ACK,
		.payload_len = kind == ACK ? 0 : 64,
		.min_len = 60,
	};

	/* the guest is 10.0.0.2: its frames go the other way */
	if (dir == VNET_DIR_TX) {
		s.saddr = htonl(0x0a000002);
		s.daddr = htonl(0x0a000001);
	}
	return (size_t)frame_build(&s, buf, 256, NULL);
}

/* root, BPF and the skeleton, loaded once for every test */
static int setup(char *why, size_t len)
{
	int k, d;

	if (!test_have_root_bpf(why, len))
		return 1;
	for (k = 0; k < 4; k++)
		for (d = 0; d < 2; d++)
			frame_len[k][d] = build(frame[k][d], k, d);
	skel = vnet_test_skel(why, len);
	if (!skel)
		return 1;
	queues_fd = bpf_map__fd(skel->maps.queues);
	xdp_fd = bpf_program__fd(skel->progs.vnet_xdp_tx);
	tc_fd = bpf_program__fd(skel->progs.vnet_tc_rx);
	return 0;
}

static void teardown(void)
{
	vnet__destroy(skel);
}

/* the traces: a test each */
static unsigned int nr_traces(void)
{
	return sizeof(cases) / sizeof(cases[0]);
}

static const char *trace_name(unsigned int i)
{
	return cases[i].name;
}

static void trace_run(unsigned int i)
{
	run_case(&cases[i]);
}

VNET_TEST("notify_rule/mode_follows", mode_follows);
VNET_TEST_TABLE(nr_traces, trace_name, trace_run);

int main(int argc, char **argv)
{
	static const struct test_main_opts opts = {
		.setup = setup,
		.teardown = teardown,
	};

	return test_main(argc, argv, "test_notify_rule", &opts);
}
