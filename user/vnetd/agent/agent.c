// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd --agent TAP...: attach mode (kernel vhost-net owns the taps,
 * `vnetctl attach TAP` attached vnet's programs).  Every --agent-interval
 * it reads, per tap, the BPF policy's guest-TX recommendation from the
 * pinned queues map and, when adaptive-tx is on in the config map, pushes
 * it to tun's own rx-frames with ethtool netlink:
 *
 *   target  = max over the queues with adaptive-tx on and a recommendation
 *             (nr_windows > 0) of rec_frames, clamped to that queue's
 *             min-frames..max-frames, then to 1..64 (tun's cap);
 *   due     = target differs from tun's value (read live every sample,
 *             whoever set it) by >= 25 % of it and by >= 2 frames;
 *   change  = due for --agent-hold consecutive samples, and the rate bound
 *             allows it: a token bucket of depth one refilled at
 *             --agent-max-rate per second (at most 1 + rate * T changes in
 *             any T seconds).
 *
 * With adaptive-tx off on every queue the static value wins: a value the
 * agent set is replaced by the config map's tap_rx_frames (the operator's
 * `vnetctl coalesce set TAP tap rx-frames N`) once, as it is at a clean
 * exit; a value someone else set since is left alone.  The agent never
 * writes the config map.  What it does is published in the tap's info map
 * (struct vnet_info agent_* fields) for `vnetctl coalesce show`.
 *
 * docs/coalesce.md ("The vnetd agent") has the reasoning.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "libvnet.h"
#include "log.h"
#include "agent.h"
#include "base/util.h"
#include "base/sd_notify.h"

#define NSEC_PER_SEC 1000000000ull
#define NSEC_PER_MSEC 1000000ull
#define REOPEN_NS NSEC_PER_SEC /* a lost tap is looked for once a second */

#define ag_err(t, fmt, ...) vhost_err("agent: %s: " fmt, (t)->name, ##__VA_ARGS__)
#define ag_warn(t, fmt, ...) vhost_warn("agent: %s: " fmt, (t)->name, ##__VA_ARGS__)
#define ag_info(t, fmt, ...) vhost_info("agent: %s: " fmt, (t)->name, ##__VA_ARGS__)
#define ag_dbg(t, fmt, ...) vhost_dbg("agent: %s: " fmt, (t)->name, ##__VA_ARGS__)

struct agent_tap {
	const char *name;
	bool open;            /* maps mapped, the tap is driven */
	int ifindex;
	struct vnet_map info; /* the fd of the info map */
	dev_t info_dev;       /* the info pin, to notice detach/re-attach */
	ino_t info_ino;
	struct vnet_map cfg_map, qs_map;   /* read-only mappings of: */
	const struct vnet_config *cfg;
	const struct vnet_queue_state *qs;
	struct vnet_info pub; /* the agent_* fields we publish */
	__u32 cur;            /* tun's rx-frames as last read or set */
	bool driving;         /* cur is ours: the static value is owed back */
	unsigned int due;     /* consecutive samples a change was due */
	bool changed;         /* last_change_ns is valid */
	__u64 last_change_ns;
	__u64 retry_ns;       /* closed: next attempt to open */
	char last_err[sizeof(((struct vnet_err *)0)->msg)]; /* closed: why */
	char last_warn[sizeof(((struct vnet_err *)0)->msg)]; /* said once */
};

static int info_pin_stat(const struct agent_tap *t, struct stat *sb)
{
	char path[PATH_MAX];

	if (vnet_pin_path(path, sizeof(path), t->name,
			  vnet_map_name(VNET_MAP_INFO)))
		return -ENAMETOOLONG;
	return stat(path, sb) ? -errno : 0;
}

static void tap_close(struct agent_tap *t)
{
	vnet_map_put(&t->cfg_map);
	vnet_map_put(&t->qs_map);
	vnet_map_put(&t->info);
	t->cfg = NULL;
	t->qs = NULL;
	t->open = false;
	t->driving = false;
	t->due = 0;
}

/* merge our agent_* fields into the entry (attach's fields stay) */
static int publish(struct agent_tap *t)
{
	struct vnet_info in = {};
	__u32 key = 0;

	if (bpf_map_lookup_elem(t->info.fd, &key, &in))
		return -errno;
	in.agent_pid = t->pub.agent_pid;
	in.agent_state = t->pub.agent_state;
	in.agent_heartbeat_ns = t->pub.agent_heartbeat_ns;
	in.agent_samples = t->pub.agent_samples;
	in.agent_changes = t->pub.agent_changes;
	in.agent_limited = t->pub.agent_limited;
	in.agent_interval_ms = t->pub.agent_interval_ms;
	in.agent_max_rate = t->pub.agent_max_rate;
	in.agent_hold = t->pub.agent_hold;
	in.agent_target = t->pub.agent_target;
	in.agent_rx_frames = t->pub.agent_rx_frames;
	return bpf_map_update_elem(t->info.fd, &key, &in, BPF_EXIST) ? -errno : 0;
}

/* T's pins are this device's, no other agent nor vnetd drives it (*IN) */
static int tap_check_free(struct agent_tap *t, struct vnet_info *in,
			  struct vnet_err *err)
{
	struct vnet_tap_users u;
	__u32 key = 0;
	int i, ret;

	if (bpf_map_lookup_elem(t->info.fd, &key, in)) {
		ret = -errno;
		vnet_err_set(err, "%s: info map: %s", t->name, strerror(errno));
		return ret;
	}
	if ((int)in->ifindex != t->ifindex) {
		vnet_err_set(err, "%s: the pins are of another device (ifindex %u, %s is %d now: recreated?); run 'vnetctl detach %s' and 'vnetctl attach %s'",
			     t->name, in->ifindex, t->name, t->ifindex, t->name,
			     t->name);
		return -ESTALE;
	}
	if (in->agent_pid != (__u32)getpid() && vnet_agent_alive(in, NULL)) {
		vnet_err_set(err, "%s: already driven by the vnetd agent with pid %u; one agent per tap",
			     t->name, in->agent_pid);
		return -EBUSY;
	}
	if (!vnet_tap_users(t->name, &u) && u.vnetd) {
		for (i = 0; i < u.nr && strncmp(u.user[i].comm, "vnetd", 5); i++)
			;
		vnet_err_set(err, "%s: served by vnetd (pid %d), whose guest-TX batch is the tap's rx-frames already; the agent is for taps of kernel vhost-net (attach mode)",
			     t->name, i < u.nr ? u.user[i].pid : 0);
		return -EBUSY;
	}
	return 0;
}

/* The config and queues maps, read-only, and tun's rx-frames into *C. */
static int tap_map(struct agent_tap *t, struct vnet_ethtool_coalesce *c,
		   struct vnet_err *err)
{
	int ret;

	ret = vnet_map_get(t->name, VNET_MAP_CONFIG, VNET_MAP_MMAP,
			   &t->cfg_map, err);
	if (ret)
		return ret;
	t->cfg = t->cfg_map.mem;
	ret = vnet_map_get(t->name, VNET_MAP_QUEUES, VNET_MAP_MMAP,
			   &t->qs_map, err);
	if (ret)
		return ret;
	t->qs = t->qs_map.mem;
	ret = vnet_ethtool_coalesce_get(t->ifindex, c, err);
	if (ret)
		return ret;
	if (!(c->present & VNET_ETC_RX_FRAMES)) {
		vnet_err_set(err, "%s: the driver reports no rx-frames", t->name);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* T idle at RX_FRAMES; counters go on across a re-open of the same pins */
static void tap_reset(struct agent_tap *t, const struct vnetd_agent_opts *o,
		      const struct vnet_info *in, __u32 rx_frames)
{
	t->cur = rx_frames;
	t->driving = false;
	t->due = 0;
	t->changed = false;
	memset(&t->pub, 0, sizeof(t->pub));
	t->pub.agent_pid = (__u32)getpid();
	t->pub.agent_state = VNET_AGENT_IDLE;
	t->pub.agent_heartbeat_ns = vnetd_now_ns();
	t->pub.agent_interval_ms = o->interval_ms;
	t->pub.agent_max_rate = o->max_rate;
	t->pub.agent_hold = o->hold;
	if (in->agent_pid == (__u32)getpid()) {
		t->pub.agent_samples = in->agent_samples;
		t->pub.agent_changes = in->agent_changes;
		t->pub.agent_limited = in->agent_limited;
	}
}

/*
 * Start driving T: attached, the pins match the device, nobody else
 * drives it.  0, or -errno with err naming the cause and the fix.
 */
static int tap_open(struct agent_tap *t, const struct vnetd_agent_opts *o,
		    struct vnet_err *err)
{
	struct vnet_ethtool_coalesce c = {};
	struct vnet_info in = {};
	struct stat sb;
	int ret;

	ret = vnet_tap_check(t->name, &t->ifindex, err);
	if (ret)
		return ret;
	/* each map checked against abi.h, the info entry's ABI version too */
	ret = vnet_map_get(t->name, VNET_MAP_INFO, 0, &t->info, err);
	if (ret)
		return ret;
	ret = tap_check_free(t, &in, err);
	if (!ret)
		ret = tap_map(t, &c, err);
	if (ret)
		goto fail;
	ret = info_pin_stat(t, &sb);
	if (ret) {
		vnet_err_set(err, "%s: info pin: %s", t->name, strerror(-ret));
		goto fail;
	}
	t->info_dev = sb.st_dev;
	t->info_ino = sb.st_ino;
	tap_reset(t, o, &in, c.rx_frames);
	ret = publish(t);
	if (ret) {
		vnet_err_set(err, "%s: cannot write the info map: %s", t->name,
			     strerror(-ret));
		goto fail;
	}
	t->open = true;
	t->last_err[0] = '\0';
	return 0;
fail:
	tap_close(t);
	return ret;
}

/* tap_open() once a second while T is not driven; logs what changed */
static void tap_reopen(struct agent_tap *t, const struct vnetd_agent_opts *o,
		       __u64 now)
{
	struct vnet_err err = {};

	if (now < t->retry_ns)
		return;
	t->retry_ns = now + REOPEN_NS;
	if (tap_open(t, o, &err)) {
		if (strcmp(err.msg, t->last_err)) {
			ag_dbg(t, "not driven: %s", err.msg);
			snprintf(t->last_err, sizeof(t->last_err), "%s", err.msg);
		}
		return;
	}
	ag_info(t, "attached again: driving rx-frames (now %u)", t->cur);
}

static void tap_lost(struct agent_tap *t, const char *why, __u64 now)
{
	ag_warn(t, "%s: no longer driven; the agent looks for it again every second (other taps go on)",
		why);
	if (t->info.fd >= 0) {
		t->pub.agent_pid = 0;
		t->pub.agent_state = VNET_AGENT_IDLE;
		publish(t); /* the pins may be gone: best effort */
	}
	tap_close(t);
	t->retry_ns = now + REOPEN_NS;
	snprintf(t->last_err, sizeof(t->last_err), "%s", why);
}

/* the pins and the device are still those we opened */
static bool tap_present(struct agent_tap *t, __u64 now)
{
	struct stat sb;
	unsigned int idx;

	if (info_pin_stat(t, &sb) || sb.st_dev != t->info_dev ||
	    sb.st_ino != t->info_ino) {
		tap_lost(t, "vnet was detached (or attached again)", now);
		return false;
	}
	idx = if_nametoindex(t->name);
	if (!idx || (int)idx != t->ifindex) {
		tap_lost(t, "the device is gone", now);
		return false;
	}
	return true;
}

/* a move from cur to want is worth a change */
static bool step_due(__u32 cur, __u32 want)
{
	__u32 d = cur > want ? cur - want : want - cur;

	return d >= VNETD_AGENT_STEP_MIN &&
	       (__u64)d * 100 >= (__u64)cur * VNETD_AGENT_STEP_PCT;
}

/* the combined recommendation (0: none) and whether adaptive-tx is on */
static __u32 target(const struct agent_tap *t, bool *adaptive)
{
	__u32 q, best = 0, f, lo, hi;

	*adaptive = false;
	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		const struct vnet_config *c = &t->cfg[q];
		const struct vnet_queue_state *s =
			&t->qs[vnet_key(VNET_DIR_TX, q)];

		if (!(__atomic_load_n(&c->flags, __ATOMIC_RELAXED) &
		      VNET_CFG_ADAPTIVE_TX))
			continue;
		*adaptive = true;
		if (!__atomic_load_n(&s->nr_windows, __ATOMIC_ACQUIRE))
			continue;
		f = __atomic_load_n(&s->rec_frames, __ATOMIC_RELAXED);
		lo = __atomic_load_n(&c->min_frames, __ATOMIC_RELAXED);
		hi = __atomic_load_n(&c->max_frames, __ATOMIC_RELAXED);
		if (lo <= hi) {
			if (f < lo)
				f = lo;
			if (f > hi)
				f = hi;
		}
		if (f > best)
			best = f;
	}
	if (!best)
		return 0;
	if (best > VNET_TAP_RX_FRAMES_MAX)
		best = VNET_TAP_RX_FRAMES_MAX;
	return best;
}

/* the token bucket (depth one): may a change be made at NOW? */
static bool rate_ok(const struct agent_tap *t, const struct vnetd_agent_opts *o,
		    __u64 now)
{
	__u64 gap = (NSEC_PER_SEC + o->max_rate - 1) / o->max_rate;

	return !t->changed || now - t->last_change_ns >= gap;
}

/* a failure that repeats every sample is logged when it first appears */
static void warn_once(struct agent_tap *t, const char *msg)
{
	if (!strncmp(t->last_warn, msg, sizeof(t->last_warn) - 1))
		return;
	ag_warn(t, "%s", msg);
	snprintf(t->last_warn, sizeof(t->last_warn), "%s", msg);
}

/* tun's live rx-frames into t->cur; false when the device is gone */
static bool reread(struct agent_tap *t, __u64 now)
{
	struct vnet_ethtool_coalesce c = {};
	struct vnet_err err = {};
	int ret;

	ret = vnet_ethtool_coalesce_get(t->ifindex, &c, &err);
	if (ret == -ENODEV) {
		tap_lost(t, "the device is gone", now);
		return false;
	}
	if (ret) {
		warn_once(t, err.msg);
		return true;
	}
	t->last_warn[0] = '\0';
	if ((c.present & VNET_ETC_RX_FRAMES) && c.rx_frames != t->cur) {
		ag_info(t, "rx-frames %u was set by someone else (was %u)",
			c.rx_frames, t->cur);
		t->cur = c.rx_frames;
		t->driving = false;
	}
	return true;
}

/* ETHTOOL_MSG_COALESCE_SET; false when the device is gone */
static bool apply(struct agent_tap *t, __u32 v, const char *why, __u64 now)
{
	struct vnet_ethtool_coalesce c = { .present = VNET_ETC_RX_FRAMES,
					   .rx_frames = v };
	struct vnet_err err = {};
	int ret;

	ret = vnet_ethtool_coalesce_set(t->ifindex, &c, &err);
	if (ret == -ENODEV) {
		tap_lost(t, "the device is gone", now);
		return false;
	}
	/* a failure counts against the rate too: no retry storm */
	t->changed = true;
	t->last_change_ns = now;
	if (ret) {
		char msg[sizeof(err.msg) + 48];

		snprintf(msg, sizeof(msg), "cannot set rx-frames %u: %s", v,
			 err.msg);
		warn_once(t, msg);
		return true;
	}
	ag_info(t, "rx-frames %u -> %u (%s)", t->cur, v, why);
	t->cur = v;
	t->pub.agent_changes++;
	t->pub.agent_rx_frames = v;
	return true;
}

/*
 * The static value back, if tun still has ours (adaptive-tx off, exit).
 * FRESH: t->cur was read from tun in this sample.
 */
static void restore(struct agent_tap *t, const char *why, bool fresh,
		    __u64 now)
{
	__u32 v;

	if (!t->driving || (!fresh && !reread(t, now)) || !t->driving)
		return;
	t->driving = false;
	v = __atomic_load_n(&t->cfg[0].tap_rx_frames, __ATOMIC_RELAXED);
	if (v > VNET_TAP_RX_FRAMES_MAX)
		v = VNET_TAP_RX_FRAMES_MAX;
	if (v != t->cur)
		apply(t, v, why, now);
}

static void sample(struct agent_tap *t, const struct vnetd_agent_opts *o,
		   __u64 now)
{
	bool adaptive;
	__u32 want;
	int ret;

	/* tun's live value: an 'ethtool -C' of someone else counts */
	if (!tap_present(t, now) || !reread(t, now))
		return;
	want = target(t, &adaptive);
	t->pub.agent_target = want;
	t->pub.agent_state = !adaptive ? VNET_AGENT_IDLE :
			     want ? VNET_AGENT_FOLLOWING : VNET_AGENT_WAITING;

	if (!adaptive) {
		/* static values win: put the operator's value back, once */
		t->due = 0;
		if (t->driving) {
			if (rate_ok(t, o, now))
				restore(t, "adaptive-tx is off: the static value",
					true, now);
			else
				t->pub.agent_limited++;
		}
	} else if (want) {
		t->due = step_due(t->cur, want) ? t->due + 1 : 0;
		if (t->due >= o->hold) {
			if (!rate_ok(t, o, now)) {
				t->pub.agent_limited++;
			} else {
				if (!apply(t, want, "adaptive-tx recommendation", now))
					return; /* gone */
				t->driving = true;
				t->due = 0;
			}
		}
	} else {
		t->due = 0; /* no window closed yet: keep what tun has */
	}
	if (!t->open)
		return;
	t->pub.agent_samples++;
	t->pub.agent_heartbeat_ns = vnetd_now_ns();
	ret = publish(t);
	if (ret)
		ag_dbg(t, "info map: %s", strerror(-ret));
}

/* SIGINT/SIGTERM read from the signalfd: true; SIGHUP: a warning */
static bool signalled(int sfd)
{
	struct signalfd_siginfo si;

	if (read(sfd, &si, sizeof(si)) != sizeof(si))
		return false;
	if (si.ssi_signo == SIGHUP) {
		vhost_warn("agent: " VNETD_SIGHUP_WARNING);
		return false;
	}
	vnetd_notify("STOPPING=1");
	vhost_info("agent: %s, exiting", strsignal((int)si.ssi_signo));
	return true;
}

/* Open every tap of O, each said; 1 when one cannot be. */
static int taps_open(struct agent_tap *taps, const struct vnetd_agent_opts *o)
{
	struct vnet_err err = {};
	unsigned int i;

	for (i = 0; i < o->ntaps; i++) {
		taps[i].name = o->taps[i];
		taps[i].info.fd = -1;
		taps[i].cfg_map.fd = -1;
		taps[i].qs_map.fd = -1;
		if (tap_open(&taps[i], o, &err)) {
			vhost_err("agent: %s", err.msg);
			return 1;
		}
		ag_info(&taps[i], "driving tun's rx-frames (now %u) from the adaptive-tx recommendation: every %u ms, a step of %u %% and %u frames for %u samples, at most %u change%s per second",
			taps[i].cur, o->interval_ms, VNETD_AGENT_STEP_PCT,
			VNETD_AGENT_STEP_MIN, o->hold, o->max_rate,
			o->max_rate == 1 ? "" : "s");
	}
	return 0;
}

/* The agent exits: the static value back where it drove, its entry idle. */
static void taps_release(struct agent_tap *taps, unsigned int n)
{
	for (struct agent_tap *t = taps; t < taps + n; t++) {
		__u64 now = vnetd_now_ns();

		if (!t->open)
			continue;
		if (t->driving)
			restore(t, "the agent exits: the static value", false,
				now);
		if (!t->open)
			continue;
		t->pub.agent_pid = 0;
		t->pub.agent_state = VNET_AGENT_IDLE;
		t->pub.agent_heartbeat_ns = now;
		publish(t);
		tap_close(t);
	}
}

int vnetd_agent_run(const struct vnetd_agent_opts *o, int sfd)
{
	struct agent_tap *taps;
	struct vnet_err err = {};
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };
	__u64 next, now, period = (__u64)o->interval_ms * NSEC_PER_MSEC;
	unsigned int i;
	int ret = 0, n;

	if (o->netns && vnet_netns_enter(o->netns, &err)) {
		vhost_err("agent: %s", err.msg);
		return 1;
	}
	taps = calloc(o->ntaps, sizeof(*taps));
	if (!taps) {
		vhost_err("agent: out of memory");
		return 1;
	}
	ret = taps_open(taps, o);
	if (ret)
		goto out;
	vnetd_notify("READY=1"); /* systemd Type=notify: every tap is open */
	next = vnetd_now_ns();
	for (;;) {
		now = vnetd_now_ns();
		if (now >= next) {
			for (i = 0; i < o->ntaps; i++) {
				if (taps[i].open)
					sample(&taps[i], o, now);
				else
					tap_reopen(&taps[i], o, now);
			}
			next += period;
			now = vnetd_now_ns();
			if (next <= now) /* overrun: skip the missed ticks */
				next = now + period;
		}
		n = poll(&pfd, 1, (int)((next - now + NSEC_PER_MSEC - 1) /
					NSEC_PER_MSEC));
		if (n < 0 && errno != EINTR) {
			vhost_err("agent: poll: %s", strerror(errno));
			ret = 1;
			break;
		}
		if (n > 0 && signalled(sfd))
			break;
	}
out:
	taps_release(taps, o->ntaps);
	free(taps);
	return ret;
}
