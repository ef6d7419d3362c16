/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Adaptive batching policy, run by the classifier hooks (docs/policy.md).
 *
 * Per frame, and only on a queue whose state entry has `adaptive` set
 * (vnetctl coalesce set ... adaptive-tx|adaptive-rx on), the hook adds the
 * frame to a sampling window: a few increments in the entry it already
 * holds.  A window closes after VNET_POLICY_WIN_FRAMES frames, or on an
 * urgent or push frame once the accounting's timestamps show that
 * VNET_POLICY_WIN_NS have passed.  Only then does the policy run:
 * vnet_policy_window() turns the window into moving averages and a
 * recommended (frames, usecs) pair; the caller clamps the pair into the
 * queue's configured bounds, bumps rec_gen when it changed and starts the
 * next window.  With adaptive off nothing here runs: no map lookup, no
 * clock read.
 *
 * vnet_policy_window() is a weak global function: a policy object that
 * defines a strong one replaces it when `vnetctl attach DEV --policy
 * FILE.bpf.o` links FILE with the classifier (libbpf's static linker, as
 * `bpftool gen object` does) before loading.  Its signature is the
 * contract; see docs/policy.md and bpf/policy_example.bpf.c.  Being weak
 * also lets the three classifier objects that include this header link
 * into one: the linker keeps one definition.
 *
 * A replacement that wants the constants and helpers below defines
 * VNET_POLICY_REPLACEMENT before including this header: it then gets the
 * declaration of vnet_policy_window() instead of the built-in definition.
 */
#ifndef VNET_BPF_POLICY_H
#define VNET_BPF_POLICY_H

#include "maps.h"

/* sampling window */
#define VNET_POLICY_WIN_FRAMES 64
#define VNET_POLICY_WIN_NS 1000000ULL /* 1 ms */

/*
 * Profile table, after Linux's net DIM (lib/dim/net_dim.c): five steps from
 * the latency end (0: notify every frame at once) to the batch end (4).
 * RX holds notifications longer than TX, as DIM's RX usec ladder
 * (1, 8, 64, 128, 256) is longer than its TX ladder (1, 8, 32, 64, 128): a
 * late TX completion stalls a TSQ-limited sender, a late RX notification
 * only delays a receiver that GRO would batch anyway.
 */
#define VNET_POLICY_NR_PROFILES 5
#define VNET_POLICY_MID_PROFILE 2

/*
 * Rule thresholds (docs/policy.md), in plain units: rates and shares are
 * compared in the averages' fixed point, x VNET_POLICY_FP.
 */
#define VNET_POLICY_FP 16
#define VNET_POLICY_RR_PUSH_PCT 50   /* sample push share: request/response ... */
#define VNET_POLICY_RR_SIZE 256      /* ... of frames under this many bytes */
#define VNET_POLICY_RR_RATE 1        /* sample frames/ms below: sparse */
#define VNET_POLICY_BULK_PUSH_PCT 25 /* average push share at most ... */
#define VNET_POLICY_BULK_RATE 16     /* ... and frames/ms at least ... */
#define VNET_POLICY_BULK_URGENT_PCT 50 /* ... with urgent share at least */
#define VNET_POLICY_BULK_SIZE 512    /* ... or bytes/frame at least */
#define VNET_POLICY_FLOOD_RATE 128   /* frames/ms: batch whatever the size */

static __always_inline void vnet_policy_profile(__u32 dir, __u32 ix,
						__u32 *frames, __u32 *usecs)
{
	switch (ix) {
	case 0:
		*frames = 1;
		*usecs = 0;
		break;
	case 1:
		*frames = dir == VNET_DIR_TX ? 4 : 8;
		*usecs = 8;
		break;
	case 2:
		*frames = 16;
		*usecs = dir == VNET_DIR_TX ? 32 : 64;
		break;
	case 3:
		*frames = 32;
		*usecs = dir == VNET_DIR_TX ? 64 : 128;
		break;
	default:
		*frames = 64;
		*usecs = dir == VNET_DIR_TX ? 128 : 256;
		break;
	}
}

/* new = 3/4 old + 1/4 sample; the first window sets the average */
static __always_inline __u32 vnet_policy_ewma(__u32 avg, __u32 sample,
					      int first)
{
	if (first)
		return sample;
	return (__u32)(((__u64)avg * 3 + sample) / 4);
}

/* do the averages show a sustained stream? */
static __always_inline int vnet_policy_bulk(const struct vnet_queue_state *q)
{
	if (q->avg_push_pct > VNET_POLICY_BULK_PUSH_PCT * VNET_POLICY_FP)
		return 0;
	if (q->avg_rate >= VNET_POLICY_FLOOD_RATE * VNET_POLICY_FP)
		return 1;
	return q->avg_rate >= VNET_POLICY_BULK_RATE * VNET_POLICY_FP &&
	       (q->avg_urgent_pct >=
			VNET_POLICY_BULK_URGENT_PCT * VNET_POLICY_FP ||
		q->avg_size >= VNET_POLICY_BULK_SIZE);
}

/*
 * The policy.  Called once per closed window of (dir, queue) with the
 * window's counters in q->win_* (win_packets > 0), the queue's config
 * entry and the window's length win_ns (> 0).  Writes q->rec_frames and
 * q->rec_usecs, and the built-in also q->avg_*, q->rec_profile and
 * q->rec_zone.  Returns 0.  The caller clamps rec_* into cfg's bounds.
 */
#ifdef VNET_POLICY_REPLACEMENT
int vnet_policy_window(struct vnet_queue_state *q,
		       const struct vnet_config *cfg, __u32 dir, __u32 queue,
		       __u64 win_ns);
#else
__attribute__((weak)) __noinline int
vnet_policy_window(struct vnet_queue_state *q, const struct vnet_config *cfg,
		   __u32 dir, __u32 queue, __u64 win_ns)
{
	__u32 n, rate, size, push, urgent, ix, zone, frames, usecs;
	int first;

	if (!q || !cfg || !q->win_packets || !win_ns)
		return 0;
	n = q->win_packets;
	first = q->nr_windows == 0;

	/* this window: frames/ms, bytes/frame, shares in percent (x16) */
	rate = (__u32)((__u64)n * VNET_POLICY_FP * 1000000 / win_ns);
	size = q->win_bytes / n;
	push = q->win_push * 100 * VNET_POLICY_FP / n;
	urgent = q->win_urgent * 100 * VNET_POLICY_FP / n;

	q->avg_rate = vnet_policy_ewma(q->avg_rate, rate, first);
	q->avg_size = vnet_policy_ewma(q->avg_size, size, first);
	q->avg_push_pct = vnet_policy_ewma(q->avg_push_pct, push, first);
	q->avg_urgent_pct = vnet_policy_ewma(q->avg_urgent_pct, urgent, first);

	ix = q->rec_profile;
	if (ix >= VNET_POLICY_NR_PROFILES)
		ix = VNET_POLICY_MID_PROFILE;
	if (rate < VNET_POLICY_RR_RATE * VNET_POLICY_FP ||
	    (push >= VNET_POLICY_RR_PUSH_PCT * VNET_POLICY_FP &&
	     size < VNET_POLICY_RR_SIZE)) {
		/* this window looked like request/response: latency at once */
		zone = VNET_POLICY_ZONE_LATENCY;
		ix = 0;
	} else if (push >= VNET_POLICY_RR_PUSH_PCT * VNET_POLICY_FP) {
		/*
		 * PSH on most frames, and large ones: a stream of small writes,
		 * each write ending a segment that TCP's autocorking grows
		 * while completions are held.  Batching is what it needs.
		 */
		zone = VNET_POLICY_ZONE_STREAM;
		if (ix < VNET_POLICY_NR_PROFILES - 1)
			ix++;
	} else if (vnet_policy_bulk(q)) {
		/* a sustained stream: one step towards batching per window */
		zone = VNET_POLICY_ZONE_BULK;
		if (ix < VNET_POLICY_NR_PROFILES - 1)
			ix++;
	} else {
		/* neither: one step towards the middle */
		zone = VNET_POLICY_ZONE_MIXED;
		if (ix < VNET_POLICY_MID_PROFILE)
			ix++;
		else if (ix > VNET_POLICY_MID_PROFILE)
			ix--;
	}
	vnet_policy_profile(dir, ix, &frames, &usecs);
	q->rec_profile = ix;
	q->rec_zone = zone;
	q->rec_frames = frames;
	q->rec_usecs = usecs;
	return 0;
}
#endif /* VNET_POLICY_REPLACEMENT */

static __always_inline __u32 vnet_policy_clamp(__u32 v, __u32 lo, __u32 hi)
{
	if (v > hi)
		v = hi;
	if (v < lo)
		v = lo;
	return v;
}

#ifndef VNET_POLICY_REPLACEMENT
/*
 * End of a window: run the policy (unless the window is the first one
 * since adaptive was turned on, which only starts the clock), keep its
 * recommendation inside the bounds, start the next window.  The one clock
 * read of the window is here.
 */
static __noinline void vnet_policy_window_end(struct vnet_queue_state *q,
					      __u32 dir,
					      __u32 qkey VNET_TAP_DECL)
{
	__u32 key = qkey & (VNET_MAX_QUEUES - 1), frames, usecs, flag;
	struct vnet_config *cfg;
	__u64 now = bpf_ktime_get_ns();

	if (!q->win_start_ns || now <= q->win_start_ns || !q->win_packets)
		goto restart;
	cfg = VNET_LOOKUP(config, &key);
	if (!cfg)
		goto restart;
	flag = dir == VNET_DIR_TX ? VNET_CFG_ADAPTIVE_TX : VNET_CFG_ADAPTIVE_RX;
	if (!(cfg->flags & flag)) {
		/* adaptive was turned off in the config map behind our back */
		q->adaptive = 0;
		goto restart;
	}
	frames = q->rec_frames;
	usecs = q->rec_usecs;
	vnet_policy_window(q, cfg, dir, key, now - q->win_start_ns);
	q->rec_frames = vnet_policy_clamp(q->rec_frames, cfg->min_frames,
					  cfg->max_frames);
	q->rec_usecs = vnet_policy_clamp(q->rec_usecs, cfg->min_usecs,
					 cfg->max_usecs);
	if (q->rec_frames != frames || q->rec_usecs != usecs ||
	    !q->nr_windows)
		__sync_fetch_and_add(&q->rec_gen, 1);
	q->nr_windows++;
	q->policy_ns = now;
restart:
	q->win_start_ns = now;
	q->win_packets = 0;
	q->win_bytes = 0;
	q->win_urgent = 0;
	q->win_push = 0;
}

/*
 * Per frame, with adaptive on.  qkey is the entry's key, vnet_key(dir,
 * queue), which the caller keeps on its stack anyway.
 *
 * The window closes after VNET_POLICY_WIN_FRAMES frames, or once
 * VNET_POLICY_WIN_NS have passed by the time of the last urgent or push
 * frame as the accounting recorded it (last_urgent_ns, last_push_ns: to
 * the jiffy, see account.h), checked on urgent and push frames.  No clock
 * is read per frame, and nothing is passed that the caller would have to
 * keep alive across its helper calls: that keeps the path with adaptive
 * off as fast as without the policy.  The window's length, for the rate,
 * comes from a real clock read at its end.
 */
static __always_inline void vnet_policy_frame(struct vnet_queue_state *q,
					      __u32 dir, __u32 qkey,
					      __u32 class,
					      __u32 len VNET_TAP_DECL)
{
	__u64 seen = 0;

	q->win_packets++;
	q->win_bytes += len;
	if (class == VNET_CLASS_URGENT) {
		q->win_urgent++;
		seen = q->last_urgent_ns;
	} else if (class == VNET_CLASS_PUSH) {
		q->win_push++;
		seen = q->last_push_ns;
	}
	if (q->win_packets < VNET_POLICY_WIN_FRAMES && q->win_start_ns &&
	    seen < q->win_start_ns + VNET_POLICY_WIN_NS)
		return;
	vnet_policy_window_end(q, dir, qkey VNET_TAP_PASS);
}

#endif /* !VNET_POLICY_REPLACEMENT */

#endif
