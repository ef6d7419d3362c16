// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * When to signal the guest (the call eventfd = a guest interrupt), per
 * ring (one direction of a queue pair), after each burst of used entries:
 *
 *   1. urgent: at once if the classifier counted an urgent frame (TX) or
 *      a PSH frame (RX) on this queue in this burst   -> notify_urgent
 *      (unless tx-urgent-bypass / rx-push-bypass is off)
 *   2. frames == 0 || usecs == 0: at once (no coalescing)
 *   3. `frames` used entries pending                  -> notify_frames
 *   4. the guest wants no call yet (EVENT_IDX used_event not crossed):
 *      nothing is held, no timer armed
 *   5. `usecs` since the first pending one (timerfd)  -> notify_timer;
 *      a burst held back counts notify_deferred
 *
 * A TX signal takes along what the RX ring holds (notify_paired, see
 * vnetd_coal_flush()), and in every case EVENT_IDX has the last word:
 * vhost_vq_notify() asks vhost_vq_need_notify() over everything pushed
 * since the last decision (the library counts the calls it makes and the
 * ones the guest did not want; the queue thread adds them to notify_sent
 * and notify_suppressed).  The values are read live from the queue pair's
 * entry of the pinned config map (plain loads); with adaptive-tx/-rx on,
 * from the BPF policy's recommendation in the queues map once it has one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/timerfd.h>

#include "coal.h"
#include "testing.h"

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

/*
 * Decide now.  REASON (NULL: none) counts the signal if it is sent; the
 * guest's EVENT_IDX may suppress it (counted by the library).
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
 * (measured: docs/evidence.md).
 */
void vnetd_coal_flush(struct vnetd_ring *r, __u64 *reason)
{
	struct vnetd_ring *pr = r->paired;

	r->coal.pending = 0;
	if (!r->vq || vhost_vq_notify(r->vq) != 1)
		return;
	if (reason)
		(*reason)++;
	if (pr && pr->coal.pending && pr->vq && paired_signals()) {
		pr->coal.pending = 0;
		if (vhost_vq_notify(pr->vq) == 1)
			pr->st->notify_paired++;
	}
	/* an armed timer is left to expire: it finds nothing pending */
}

void vnetd_coal_pushed(struct vnetd_ring *r, unsigned int n, bool urgent)
{
	struct vnetd_coal *c = &r->coal;
	struct vnet_dp_stats *st = r->st;
	uint32_t frames, usecs;
	uint64_t now, deadline;

	c->pending += n;
	if (urgent && !(VNETD_LOAD(r->cfg->flags) & r->flag_no_bypass)) {
		vnetd_coal_flush(r, &st->notify_urgent);
		return;
	}
	vnetd_coal_params(r, &frames, &usecs);
	if (!frames || !usecs) {
		vnetd_coal_flush(r, NULL);
		return;
	}
	if (c->pending >= frames) {
		vnetd_coal_flush(r, &st->notify_frames);
		return;
	}
	/*
	 * The guest wants no call for these yet (EVENT_IDX: used_event not
	 * crossed): nothing is owed, nothing to hold, no timer to arm.  A
	 * later push that crosses used_event starts the window.
	 */
	if (!vhost_vq_want_notify(r->vq)) {
		c->pending = 0;
		return;
	}
	now = vnetd_now_ns();
	if (c->pending == n)
		c->first_ns = now; /* the first of a new window */
	deadline = c->first_ns + (uint64_t)usecs * 1000;
	if (now >= deadline) {
		vnetd_coal_flush(r, &st->notify_timer);
		return;
	}
	st->notify_deferred++;
	/* an earlier armed deadline fires first and re-arms for this one */
	if (!c->timer_ns || c->timer_ns > deadline)
		timer_set(r, deadline);
}

void vnetd_coal_timer(struct vnetd_ring *r)
{
	struct vnetd_coal *c = &r->coal;
	uint32_t frames, usecs;
	uint64_t v, now, deadline;

	if (read(c->timer_fd, &v, sizeof(v)) < 0 && errno == EAGAIN)
		return; /* re-armed since it fired */
	c->timer_ns = 0;
	if (!c->pending || !r->vq)
		return;
	vnetd_coal_params(r, &frames, &usecs);
	deadline = c->first_ns + (uint64_t)usecs * 1000;
	now = vnetd_now_ns();
	/* usecs may have grown since the timer was armed */
	if (frames && usecs && now < deadline) {
		timer_set(r, deadline);
		return;
	}
	vnetd_coal_flush(r, &r->st->notify_timer);
}

void vnetd_coal_reset(struct vnetd_ring *r)
{
	struct vnetd_coal *c = &r->coal;
	struct itimerspec its = {};

	c->pending = 0;
	c->first_ns = 0;
	if (c->timer_ns) {
		timerfd_settime(c->timer_fd, 0, &its, NULL);
		c->timer_ns = 0;
	}
}
