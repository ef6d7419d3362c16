// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * When to signal the guest (the call eventfd = a guest interrupt), per
 * ring (one direction of a queue pair), after each burst of used entries:
 * the inputs of the notification rule (rule.c, docs/policy.md) gathered,
 * its answer carried out.
 *
 * Inputs: the classes the classifier counted on this queue during the
 * burst (the caller compares the queues map's running counts before and
 * after), the queue pair's notify_mode that the BPF programs decide
 * (request/response or not), the caps (tx-/rx-frames and -usecs, read
 * live from the queue pair's entry of the pinned config map with plain
 * loads; with adaptive-tx/-rx on, the BPF policy's recommendation once it
 * has one), the flags (bypass, hold always), the clock and EVENT_IDX.
 * Answers: signal now (counted by its reason: notify_urgent, _frames,
 * _latency, _quiet, _timer), hold until a deadline (a timerfd; the burst
 * counts notify_deferred, a new hold `holds`), or nothing owed.
 *
 * A TX signal takes along what the RX ring holds, an RX signal carries a
 * TX hold of pure ACKs (notify_paired, see flush_at()), and in every case
 * EVENT_IDX has the last word: vhost_vq_notify() asks
 * vhost_vq_need_notify() over everything pushed since the last decision
 * (the library counts the calls it makes and the ones the guest did not
 * want; the queue thread adds them to notify_sent and notify_suppressed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/timerfd.h>

#include "coal.h"
#include "base/testing.h"
#include "base/util.h"
#include "log.h"
#include "rule.h"
#include "virtq.h"

void vnetd_coal_params(const struct vnetd_ring *r, uint32_t *frames,
		       uint32_t *usecs)
{
	/* adaptive: the recommendation, once a window has produced one */
	if ((VNETD_LOAD(r->cfg->flags) & r->flag_adaptive) &&
	    VNETD_LOAD(r->qs->nr_windows)) {
		*frames = VNETD_LOAD(r->qs->rec_frames);
		*usecs = VNETD_LOAD(r->qs->rec_usecs);
		return;
	}
	*frames = VNETD_LOAD(*r->cfg_frames);
	*usecs = VNETD_LOAD(*r->cfg_usecs);
}

static void timer_set(struct vnetd_ring *r, uint64_t deadline)
{
	struct vnetd_coal *c = &r->coal;
	struct itimerspec its = {
		.it_value.tv_sec = (time_t)(deadline / 1000000000ULL),
		.it_value.tv_nsec = (long)(deadline % 1000000000ULL),
	};

	/* deadline 0 disarms */
	if (timerfd_settime(c->timer_fd, TFD_TIMER_ABSTIME, &its, NULL)) {
		pr_err(r, "queue pair %u: coalescing timer: %s", r->qp,
		       strerror(errno));
		return;
	}
	c->timer_ns = deadline;
}

/* each direction alone: a test build's VNETD_NO_PAIRED_SIGNALS=1 */
static bool paired_signals(void)
{
	static int paired = -1;

	if (paired < 0)
		paired = !vnetd_switch(VNETD_SW_NO_PAIRED_SIGNALS, 0);
	return paired;
}

/* pure ACKs signalled as other frames: a test build's VNETD_CARRY_ACKS=0 */
static bool carry_acks(void)
{
	static int on = -1;

	if (on < 0)
		on = (int)vnetd_switch(VNETD_SW_CARRY_ACKS, 1);
	return on;
}

static __u64 *why_counter(struct vnet_dp_stats *st, enum vnetd_why why)
{
	switch (why) {
	case VNETD_WHY_URGENT:
		return &st->notify_urgent;
	case VNETD_WHY_FRAMES:
		return &st->notify_frames;
	case VNETD_WHY_LATENCY:
		return &st->notify_latency;
	case VNETD_WHY_QUIET:
		return &st->notify_quiet;
	case VNETD_WHY_TIMER:
		return &st->notify_timer;
	default:
		return NULL;
	}
}

/* R's pending entries are signalled (or found not wanted) at NOW */
static bool ring_signal(struct vnetd_ring *r, uint64_t now)
{
	struct vnetd_rule *rule = &r->coal.rule;

	if (rule->deadline)
		r->st->held += rule->pending;
	vnetd_rule_signalled(rule, now);
	return r->vq && vhost_vq_notify(r->vq) == 1;
}

/*
 * Signal now; WHY counts the signal if it is sent (the guest's EVENT_IDX
 * may suppress it: counted by the library).
 *
 * A TX completion signal that is sent takes along the frames the RX ring
 * holds back (notify_paired): the guest's interrupt handler looks at both
 * rings of the device anyway (one INTx line per device), so the held RX
 * signal would cost a second interrupt, a timer wake-up here and one in
 * the VMM a little later; delivering earlier than rx-frames/rx-usecs ask
 * is always allowed.  Not the other way round: virtio_net's RX poll cleans
 * the TX ring itself, so a TX completion held while an RX signal goes out
 * needs no interrupt at all (EVENT_IDX then suppresses it), and sending it
 * along cost request/response an extra interrupt per transaction
 * (measured: docs/evidence.md).  A TX hold of pure ACKs (rule.c, 3) ends
 * with the RX signal without a TX signal (TX's notify_paired): carried,
 * with an EVENT_IDX check VNETD_RULE_CARRY_CHECK usecs later.
 */
static void flush_at(struct vnetd_ring *r, enum vnetd_why why, uint64_t now)
{
	struct vnetd_ring *pr = r->paired;
	__u64 *reason = why_counter(r->st, why);

	if (!ring_signal(r, now))
		return;
	if (reason)
		(*reason)++;
	if (pr && pr->coal.rule.pending && pr->vq && paired_signals() &&
	    ring_signal(pr, now))
		pr->st->notify_paired++;
	pr = r->carries;
	if (pr && pr->vq) {
		uint32_t frames, usecs;
		uint32_t n = pr->coal.rule.pending;

		vnetd_coal_params(pr, &frames, &usecs);
		if (vnetd_rule_carried(&pr->coal.rule, now, usecs)) {
			pr->st->held += n;
			pr->st->notify_paired++;
			timer_set(pr, pr->coal.rule.deadline);
		}
	}
	/* an armed timer is left to expire: it finds nothing pending */
}

/* what is pending is signalled now (a ring stops) */
void vnetd_coal_flush(struct vnetd_ring *r)
{
	flush_at(r, VNETD_WHY_NONE, vnetd_now_ns());
}

static bool want_notify(void *vq)
{
	return vhost_vq_want_notify(vq);
}

void vnetd_coal_pushed(struct vnetd_ring *r, unsigned int n,
		       unsigned int classes, unsigned int acks)
{
	struct vnetd_coal *c = &r->coal;
	struct vnet_dp_stats *st = r->st;
	uint32_t flags = VNETD_LOAD(r->cfg->flags);
	struct vnetd_rule_in in = {
		.now = vnetd_now_ns(),
		.n = n,
		.urgent = (classes & r->bypass_classes) &&
			  !(flags & r->flag_no_bypass),
		.stream = classes & r->stream_classes,
		.always = flags & r->flag_hold_always,
		/* a guest-TX pure ACK's completion frees nothing a sender
		 * waits for (TCP charges it to no small queue) */
		.no_waiter = r->dir == VNET_DIR_TX && acks >= n &&
			     carry_acks(),
		.mode = VNETD_LOAD(r->qs->notify_mode),
		.want = want_notify,
		.ctx = r->vq,
	};
	enum vnetd_why why;
	bool held = c->rule.deadline && c->rule.pending;

	vnetd_coal_params(r, &in.frames, &in.usecs);
	switch (vnetd_rule_pushed(&c->rule, &in, &why)) {
	case VNETD_ACT_SIGNAL:
		flush_at(r, why, in.now);
		return;
	case VNETD_ACT_NONE:
		return;
	case VNETD_ACT_HOLD:
		break;
	}
	st->notify_deferred++;
	st->holds += !held;
	/* an earlier armed deadline fires first and re-arms for this one */
	if (!c->timer_ns || c->timer_ns > c->rule.deadline)
		timer_set(r, c->rule.deadline);
}

void vnetd_coal_timer(struct vnetd_ring *r)
{
	struct vnetd_coal *c = &r->coal;
	uint32_t frames, usecs;
	uint64_t v, now;

	if (read(c->timer_fd, &v, sizeof(v)) < 0 && errno == EAGAIN)
		return; /* re-armed since it fired */
	c->timer_ns = 0;
	if (!r->vq)
		return;
	vnetd_coal_params(r, &frames, &usecs);
	now = vnetd_now_ns();
	switch (vnetd_rule_expired(&c->rule, now, frames, usecs)) {
	case VNETD_ACT_HOLD:
		timer_set(r, c->rule.deadline);
		return;
	case VNETD_ACT_SIGNAL:
		flush_at(r, VNETD_WHY_TIMER, now);
		return;
	case VNETD_ACT_NONE:
		return;
	}
}

void vnetd_coal_reset(struct vnetd_ring *r)
{
	struct vnetd_coal *c = &r->coal;
	struct itimerspec its = {};

	vnetd_rule_reset(&c->rule);
	if (c->timer_ns) {
		timerfd_settime(c->timer_fd, 0, &its, NULL);
		c->timer_ns = 0;
	}
}
