// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Coalescing parameters: the guest NIC's (virtio NOTF_COAL words, per queue
 * in the pinned config map) and the tap's own rx-frames (tun, through
 * ethtool netlink).  docs/coalesce.md has the words, ranges and where each
 * takes effect.
 *
 * The config and queues maps are BPF_F_MMAPABLE: values are written through
 * a shared mapping, field by field, and an entry's gen is bumped last, so a
 * reader (vnetd) that sees a new gen sees the new values.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libvnet.h"

#define CFG_SIZE (sizeof(struct vnet_config) * VNET_MAX_QUEUES)
#define QS_SIZE \
	(sizeof(struct vnet_queue_state) * VNET_DIR_MAX * VNET_MAX_QUEUES)

/* The guest NIC's words: ethtool's, plus vnet's bounds of the policy. */
static const struct coal_word {
	const char *word;
	__u32 bit;
	size_t off; /* in struct vnet_config; flags for the booleans */
	__u32 max;
	__u32 flag; /* the VNET_CFG_* flag of a boolean word */
	bool neg;   /* the flag is set when the word is off */
	const char *v0, *v1; /* a boolean's values; NULL: "off", "on" */
} coal_words[] = {
	{ "rx-usecs", VNET_COAL_RX_USECS, offsetof(struct vnet_config, rx_usecs),
	  VNET_COAL_USECS_MAX, 0, false, NULL, NULL },
	{ "rx-frames", VNET_COAL_RX_FRAMES,
	  offsetof(struct vnet_config, rx_frames), VNET_COAL_FRAMES_MAX, 0, false, NULL, NULL },
	{ "tx-usecs", VNET_COAL_TX_USECS, offsetof(struct vnet_config, tx_usecs),
	  VNET_COAL_USECS_MAX, 0, false, NULL, NULL },
	{ "tx-frames", VNET_COAL_TX_FRAMES,
	  offsetof(struct vnet_config, tx_frames), VNET_COAL_FRAMES_MAX, 0, false, NULL, NULL },
	{ "adaptive-rx", VNET_COAL_ADAPTIVE_RX,
	  offsetof(struct vnet_config, flags), 1, VNET_CFG_ADAPTIVE_RX, false, NULL, NULL },
	{ "adaptive-tx", VNET_COAL_ADAPTIVE_TX,
	  offsetof(struct vnet_config, flags), 1, VNET_CFG_ADAPTIVE_TX, false, NULL, NULL },
	{ "min-frames", VNET_COAL_MIN_FRAMES,
	  offsetof(struct vnet_config, min_frames), VNET_COAL_FRAMES_MAX, 0, false, NULL, NULL },
	{ "max-frames", VNET_COAL_MAX_FRAMES,
	  offsetof(struct vnet_config, max_frames), VNET_COAL_FRAMES_MAX, 0, false, NULL, NULL },
	{ "min-usecs", VNET_COAL_MIN_USECS,
	  offsetof(struct vnet_config, min_usecs), VNET_COAL_USECS_MAX, 0, false, NULL, NULL },
	{ "max-usecs", VNET_COAL_MAX_USECS,
	  offsetof(struct vnet_config, max_usecs), VNET_COAL_USECS_MAX, 0, false, NULL, NULL },
	{ "tx-urgent-bypass", VNET_COAL_TX_BYPASS,
	  offsetof(struct vnet_config, flags), 1, VNET_CFG_NO_TX_BYPASS, true, NULL, NULL },
	{ "rx-push-bypass", VNET_COAL_RX_BYPASS,
	  offsetof(struct vnet_config, flags), 1, VNET_CFG_NO_RX_BYPASS, true, NULL, NULL },
	{ "tx-hold", VNET_COAL_TX_HOLD, offsetof(struct vnet_config, flags), 1,
	  VNET_CFG_TX_HOLD_ALWAYS, false, "auto", "always" },
	{ "rx-hold", VNET_COAL_RX_HOLD, offsetof(struct vnet_config, flags), 1,
	  VNET_CFG_RX_HOLD_ALWAYS, false, "auto", "always" },
};

#define NR_WORDS (sizeof(coal_words) / sizeof(coal_words[0]))

static const struct coal_word *coal_word(const char *word)
{
	size_t i;

	for (i = 0; i < NR_WORDS; i++)
		if (!strcmp(coal_words[i].word, word))
			return &coal_words[i];
	return NULL;
}

static __u32 *cfg_field(struct vnet_config *c, const struct coal_word *w)
{
	return (__u32 *)((char *)c + w->off);
}

static __u32 cfg_value(const struct vnet_config *c, const struct coal_word *w)
{
	return *(const __u32 *)((const char *)c + w->off);
}

int vnet_coalesce_word(const char *word, bool *is_bool)
{
	const struct coal_word *w = coal_word(word);

	if (!w)
		return -ENOENT;
	if (is_bool)
		*is_bool = w->flag != 0;
	return 0;
}

int vnet_coalesce_word_values(const char *word, const char **off,
			      const char **on)
{
	const struct coal_word *w = coal_word(word);

	if (!w || !w->flag)
		return -ENOENT;
	*off = w->v0 ? w->v0 : "off";
	*on = w->v1 ? w->v1 : "on";
	return 0;
}

const char *vnet_coalesce_word_nth(unsigned int i, __u32 *max)
{
	if (i >= NR_WORDS)
		return NULL;
	if (max)
		*max = coal_words[i].max;
	return coal_words[i].word;
}

int vnet_coalesce_req_add(struct vnet_coalesce_req *req, const char *word,
			  __u64 value, struct vnet_err *err)
{
	const struct coal_word *w = coal_word(word);

	if (!w) {
		vnet_err_set(err, "unknown parameter '%s'", word);
		return -ENOENT;
	}
	if (value > w->max) {
		/* ethtool's words for it */
		vnet_err_set(err, "%s: value %llu out of range (0-%u)", word,
			     (unsigned long long)value, w->max);
		return -ERANGE;
	}
	if (w->flag) {
		if (!value != !w->neg)
			req->val.flags |= w->flag;
		else
			req->val.flags &= ~w->flag;
	} else {
		*cfg_field(&req->val, w) = (__u32)value;
	}
	req->mask |= w->bit;
	return 0;
}

int vnet_coalesce_tap_check(__u64 rx_frames, struct vnet_err *err)
{
	if (rx_frames <= VNET_TAP_RX_FRAMES_MAX)
		return 0;
	vnet_err_set(err, "rx-frames: value %llu out of range (0-%u)",
		     (unsigned long long)rx_frames, VNET_TAP_RX_FRAMES_MAX);
	return -ERANGE;
}

/* a copy of the first SIZE bytes of IFNAME's pinned map MAP (mmapped) */
static int map_copy(const char *ifname, enum vnet_map_id map, void *dst,
		    size_t size, struct vnet_err *err)
{
	struct vnet_map m;
	int ret;

	ret = vnet_map_get(ifname, map, VNET_MAP_MMAP, &m, err);
	if (ret)
		return ret;
	memcpy(dst, m.mem, size);
	vnet_map_put(&m);
	return 0;
}

int vnet_coalesce_read(const char *ifname, struct vnet_config *cfg,
		       struct vnet_err *err)
{
	return map_copy(ifname, VNET_MAP_CONFIG, cfg, CFG_SIZE, err);
}

int vnet_queues_read(const char *ifname, struct vnet_queue_state *qs,
		     struct vnet_err *err)
{
	return map_copy(ifname, VNET_MAP_QUEUES, qs, QS_SIZE, err);
}

/*
 * Turn the BPF policy of one (dir, queue) on or off.  On: a fresh start
 * (no window, no averages, no recommendation: rec_gen stays, so a reader
 * notices the change), then the gate.  Off: the gate only; the last
 * recommendation stays readable.
 */
static void policy_gate(struct vnet_queue_state *q, bool on)
{
	if (!on) {
		__atomic_store_n(&q->adaptive, 0, __ATOMIC_RELEASE);
		return;
	}
	if (__atomic_load_n(&q->adaptive, __ATOMIC_ACQUIRE))
		return; /* already on: keep its history */
	q->win_start_ns = 0;
	q->win_packets = 0;
	q->win_bytes = 0;
	q->win_urgent = 0;
	q->win_push = 0;
	q->avg_rate = 0;
	q->avg_size = 0;
	q->avg_push_pct = 0;
	q->avg_urgent_pct = 0;
	q->rec_frames = 0;
	q->rec_usecs = 0;
	q->rec_profile = ~0u; /* none yet: the policy starts in the middle */
	q->rec_zone = VNET_POLICY_ZONE_NONE;
	q->nr_windows = 0;
	__atomic_store_n(&q->adaptive, 1, __ATOMIC_RELEASE);
}

int vnet_coalesce_set(const char *ifname, int queue,
		      const struct vnet_coalesce_req *req,
		      struct vnet_err *err)
{
	struct vnet_map cm = VNET_MAP_INIT, qm = VNET_MAP_INIT;
	struct vnet_queue_state *qs = NULL;
	struct vnet_config *cfg, c;
	int q, first, last, ret = 0;
	size_t i;

	if (queue >= VNET_MAX_QUEUES) {
		vnet_err_set(err, "queue: value %d out of range (0-%d)", queue,
			     VNET_MAX_QUEUES - 1);
		return -ERANGE;
	}
	first = queue < 0 ? 0 : queue;
	last = queue < 0 ? VNET_MAX_QUEUES - 1 : queue;
	ret = vnet_map_get(ifname, VNET_MAP_CONFIG, VNET_MAP_WRITE, &cm, err);
	if (ret)
		return ret;
	cfg = cm.mem;
	if (req->mask & (VNET_COAL_ADAPTIVE_RX | VNET_COAL_ADAPTIVE_TX)) {
		ret = vnet_map_get(ifname, VNET_MAP_QUEUES, VNET_MAP_WRITE,
				   &qm, err);
		if (ret)
			goto out;
		qs = qm.mem;
	}

	/* check every queue first: all or nothing */
	for (q = first; q <= last; q++) {
		c = cfg[q];
		for (i = 0; i < NR_WORDS; i++) {
			const struct coal_word *w = &coal_words[i];

			if (!(req->mask & w->bit) || w->flag)
				continue;
			*cfg_field(&c, w) = cfg_value(&req->val, w);
		}
		if (c.min_frames > c.max_frames) {
			vnet_err_set(err, "min-frames %u is above max-frames %u (queue %d)",
				     c.min_frames, c.max_frames, q);
			ret = -EINVAL;
			goto out;
		}
		if (c.min_usecs > c.max_usecs) {
			vnet_err_set(err, "min-usecs %u is above max-usecs %u (queue %d)",
				     c.min_usecs, c.max_usecs, q);
			ret = -EINVAL;
			goto out;
		}
	}

	for (q = first; q <= last; q++) {
		for (i = 0; i < NR_WORDS; i++) {
			const struct coal_word *w = &coal_words[i];

			if (!(req->mask & w->bit))
				continue;
			if (w->flag)
				cfg[q].flags = (cfg[q].flags & ~w->flag) |
					       (req->val.flags & w->flag);
			else
				*cfg_field(&cfg[q], w) = cfg_value(&req->val, w);
		}
		__atomic_fetch_add(&cfg[q].gen, 1, __ATOMIC_RELEASE);
		if (!qs)
			continue;
		if (req->mask & VNET_COAL_ADAPTIVE_TX)
			policy_gate(&qs[vnet_key(VNET_DIR_TX, q)],
				    cfg[q].flags & VNET_CFG_ADAPTIVE_TX);
		if (req->mask & VNET_COAL_ADAPTIVE_RX)
			policy_gate(&qs[vnet_key(VNET_DIR_RX, q)],
				    cfg[q].flags & VNET_CFG_ADAPTIVE_RX);
	}
out:
	vnet_map_put(&qm);
	vnet_map_put(&cm);
	return ret;
}

int vnet_coalesce_set_tap(const char *ifname, __u32 rx_frames,
			  struct vnet_err *err)
{
	struct vnet_ethtool_coalesce c = { .present = VNET_ETC_RX_FRAMES,
					   .rx_frames = rx_frames };
	struct vnet_map m;
	struct vnet_config *cfg;
	int ifindex, q, ret;

	ret = vnet_coalesce_tap_check(rx_frames, err);
	if (ret)
		return ret;
	ret = vnet_tap_check(ifname, &ifindex, err);
	if (ret)
		return ret;
	/* attached?  (the config map is where vnetd reads it) */
	ret = vnet_map_get(ifname, VNET_MAP_CONFIG, VNET_MAP_WRITE, &m, err);
	if (ret)
		return ret;
	cfg = m.mem;
	ret = vnet_ethtool_coalesce_set(ifindex, &c, err);
	if (ret)
		goto out;
	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		cfg[q].tap_rx_frames = rx_frames;
		__atomic_fetch_add(&cfg[q].gen, 1, __ATOMIC_RELEASE);
	}
out:
	vnet_map_put(&m);
	return ret;
}

/* "/dev/net/tun" fd of pid attached to IFNAME?  (fdinfo "iff:\tIFNAME") */
static bool fd_on_tap(const char *pid, const char *fd, const char *ifname)
{
	char path[128], line[128];
	bool on = false;
	size_t n = strlen(ifname);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%.16s/fdinfo/%.16s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "iff:\t", 5) && !strncmp(line + 5, ifname, n) &&
		    (line[5 + n] == '\n' || !line[5 + n])) {
			on = true;
			break;
		}
	}
	fclose(f);
	return on;
}

int vnet_tap_users(const char *ifname, struct vnet_tap_users *u)
{
	char path[300], link[64];
	struct dirent *p, *f;
	DIR *proc, *fds;
	ssize_t n;

	memset(u, 0, sizeof(*u));
	proc = opendir("/proc");
	if (!proc)
		return -errno;
	while ((p = readdir(proc))) {
		struct vnet_tap_user me = {};

		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%.16s/fd/%.16s",
				 p->d_name, f->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (!strcmp(link, "/dev/vhost-net"))
				me.vhost_net = true;
			else if (!strcmp(link, "/dev/net/tun") &&
				 fd_on_tap(p->d_name, f->d_name, ifname))
				me.nr_queues++;
		}
		closedir(fds);
		if (!me.nr_queues)
			continue;
		me.pid = atoi(p->d_name);
		snprintf(path, sizeof(path), "/proc/%.16s/comm", p->d_name);
		FILE *c = fopen(path, "r");

		if (c) {
			if (fgets(me.comm, sizeof(me.comm), c))
				me.comm[strcspn(me.comm, "\n")] = '\0';
			fclose(c);
		}
		u->nr_queues += me.nr_queues;
		u->vnetd |= !strncmp(me.comm, "vnetd", 5); /* vnetd, vnetd-asan */
		u->vhost_net |= me.vhost_net;
		if (u->nr < VNET_TAP_USERS_MAX)
			u->user[u->nr++] = me;
	}
	closedir(proc);
	return 0;
}

/* a live (not zombie) process named vnetd*: "PID (COMM) STATE ..." */
bool vnet_vnetd_alive(__u32 pid)
{
	char path[64], buf[256], *open, *close_;
	bool ok = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		/* COMM may hold ')' itself: the last one ends it */
		open = strchr(buf, '(');
		close_ = strrchr(buf, ')');
		ok = open && close_ && !strncmp(open + 1, "vnetd", 5) &&
		     close_[1] == ' ' && close_[2] != 'Z' && close_[2] != 'X';
	}
	fclose(f);
	return ok;
}

bool vnet_agent_alive(const struct vnet_info *in, __u64 *age_ms)
{
	struct timespec ts;
	__u64 now, age, stale_ms;

	if (!in->agent_pid || !vnet_vnetd_alive(in->agent_pid))
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	age = now > in->agent_heartbeat_ns ?
		      (now - in->agent_heartbeat_ns) / 1000000 : 0;
	if (age_ms)
		*age_ms = age;
	stale_ms = 3ull * in->agent_interval_ms;
	if (stale_ms < 2000)
		stale_ms = 2000;
	return age <= stale_ms;
}
