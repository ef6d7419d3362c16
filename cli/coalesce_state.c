// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl coalesce show: what was decided per queue and direction, under
 * the values: the notification rule's mode (the BPF programs' verdict) and
 * what vnetd did with it (its counters), and the adaptive policy's
 * recommendations (docs/policy.md).
 */
#include <stdio.h>

#include "libvnet.h"
#include "base/out.h"
#include "coalesce_state.h"

static const char *zone_name(__u32 zone)
{
	switch (zone) {
	case VNET_POLICY_ZONE_LATENCY:
		return "latency";
	case VNET_POLICY_ZONE_MIXED:
		return "mixed";
	case VNET_POLICY_ZONE_BULK:
		return "bulk";
	case VNET_POLICY_ZONE_STREAM:
		return "stream";
	default:
		return "none";
	}
}

/* the BPF recommendation of every (queue, dir) with adaptive on */
void coalesce_print_recommendations(const struct vnet_queue_state *qs)
{
	int q, dir, quiet = 0, n = 0;

	out_arr_open("recommendations");
	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		for (dir = VNET_DIR_TX; dir < VNET_DIR_MAX; dir++) {
			const struct vnet_queue_state *st =
				&qs[vnet_key((__u32)dir, (__u32)q)];

			if (!st->adaptive)
				continue;
			if (!st->nr_windows && !st->first_seen_ns) {
				quiet++;
				continue;
			}
			if (!n++)
				out_text("Adaptive recommendations (BPF policy):\n");
			out_obj_open(NULL);
			out_u64("queue", "  queue %llu", q);
			out_str("dir", " %s:", vnet_dir_name(dir));
			if (!st->nr_windows) {
				out_null("frames", " none yet (no window closed)\n");
				out_null("usecs", NULL);
			} else {
				out_text(" %s-frames", vnet_dir_name(dir));
				out_u64("frames", " %llu", st->rec_frames);
				out_text(" %s-usecs", vnet_dir_name(dir));
				out_u64("usecs", " %llu", st->rec_usecs);
				if (st->rec_profile != ~0u)
					out_u64("profile", " (profile %llu, ",
						st->rec_profile);
				else
					out_null("profile", " (");
				out_str("zone", "%s", zone_name(st->rec_zone));
				out_u64("windows", ", %llu window",
					st->nr_windows);
				out_text("%s)\n", st->nr_windows == 1 ? "" : "s");
			}
			out_u64("gen", NULL, st->rec_gen);
			out_obj_close();
		}
	}
	out_arr_close();
	if (quiet)
		out_text("Adaptive on for %d %squeue direction%s without traffic yet\n",
			 quiet, n ? "more " : "", quiet == 1 ? "" : "s");
}

static const char *mode_name(__u32 mode)
{
	switch (mode) {
	case VNET_NOTIFY_LATENCY:
		return "latency";
	case VNET_NOTIFY_BATCH:
		return "batch";
	default:
		return "none";
	}
}

static double per(__u64 a, __u64 b)
{
	return b ? (double)a / (double)b : 0;
}

/*
 * The notification rule of every (queue, dir) that carried traffic: the
 * mode the BPF programs decided, why, and what vnetd did (its counters).
 */
void coalesce_print_rule(const char *dev, bool served,
			 const struct vnet_config *cfg,
			 const struct vnet_queue_state *qs,
			 const struct vnet_dp_stats *dp)
{
	int q, dir, n = 0;

	out_arr_open("rule");
	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		for (dir = VNET_DIR_TX; dir < VNET_DIR_MAX; dir++) {
			__u32 k = vnet_key((__u32)dir, (__u32)q);
			const struct vnet_queue_state *st = &qs[k];
			const struct vnet_dp_stats *d = dp ? &dp[k] : NULL;
			bool always = cfg[q].flags &
				      (dir == VNET_DIR_TX ? VNET_CFG_TX_HOLD_ALWAYS :
							    VNET_CFG_RX_HOLD_ALWAYS);

			if (!st->first_seen_ns && !st->turn_windows &&
			    !(d && d->frames))
				continue;
			if (!n++)
				out_text(served ?
						 "Notification rule (hold a signal only when holding batches something; usecs and frames are its caps):\n" :
						 "Notification rule (the BPF programs' verdicts; no vnetd serves %s, so nothing acts on them):\n",
					 dev);
			out_obj_open(NULL);
			out_u64("queue", "  queue %llu", q);
			out_str("dir", " %s: ", vnet_dir_name(dir));
			out_str("hold", NULL, always ? "always" : "auto");
			out_str("mode", NULL, mode_name(st->notify_mode));
			out_u64("turn_pct", NULL, st->turn_pct);
			out_u64("windows", NULL, st->turn_windows);
			if (always)
				out_text("hold always (usecs from the first pending frame)");
			else if (st->notify_mode != VNET_NOTIFY_NONE)
				out_text("%s mode, %u%% of the last %u payload frames turned direction (%s): %s%s",
					 mode_name(st->notify_mode), st->turn_pct,
					 VNET_TURN_WIN_FRAMES,
					 st->turn_pct >= VNET_TURN_LATENCY_PCT ? "request/response" :
					 st->turn_pct <= VNET_TURN_BATCH_PCT ? "one way: a stream" :
									      "neither: the mode stays",
					 st->notify_mode != VNET_NOTIFY_LATENCY ?
						 "holds after a signal" :
						 "signals at once",
					 dir == VNET_DIR_TX ?
						 "; pure ACKs' completions go with the next RX signal" :
						 "");
			else
				out_text("no payload window closed yet: signals at once%s",
					 dir == VNET_DIR_TX ?
						 "; pure ACKs' completions go with the next RX signal" :
						 "");
			if (d) {
				out_double("frames_per_signal", "; %.1f frames per signal",
					   per(d->frames, d->notify_sent));
				out_u64("holds", ", %llu holds", d->holds);
				out_double("frames_per_hold", " of %.1f frames",
					   per(d->held, d->holds));
				out_obj_open("signals");
				out_u64("latency", " (at once: %llu latency", d->notify_latency);
				out_u64("quiet", ", %llu quiet", d->notify_quiet);
				out_u64("urgent", ", %llu bypass", d->notify_urgent);
				out_u64("frames", "; %llu on frames", d->notify_frames);
				out_u64("timer", ", %llu on usecs)", d->notify_timer);
				/* TX: holds an RX signal carried; RX: signals
				 * sent along with a TX signal */
				out_u64("paired", dir == VNET_DIR_TX ?
						  "; %llu carried by RX signals" : NULL,
					d->notify_paired);
				out_u64("sent", NULL, d->notify_sent);
				out_obj_close();
			}
			out_text("\n");
			out_obj_close();
		}
	}
	out_arr_close();
}
