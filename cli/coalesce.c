// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl coalesce show DEV
 * vnetctl coalesce set DEV [queue N] PARAM VALUE...
 * vnetctl coalesce set DEV tap rx-frames N
 *
 * Two sets of words, as docs/coalesce.md explains: the guest NIC's (virtio
 * NOTF_COAL, what `ethtool -C eth0` means inside the guest), per queue in
 * the config map; and the tap's own host-view rx-frames (`ethtool -C DEV`),
 * which lives in tun and is read back live through ethtool netlink.
 * In attach mode a `vnetd --agent DEV` may drive the tap's rx-frames; it
 * publishes itself in the info map and `show` says so while it lives.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/statsdata.h"
#include "base/util.h"
#include "coalesce.h"
#include "coalesce_state.h"

#define GUEST_FLAGS                                          \
	(VNET_CFG_ADAPTIVE_RX | VNET_CFG_ADAPTIVE_TX |        \
	 VNET_CFG_NO_RX_BYPASS | VNET_CFG_NO_TX_BYPASS |      \
	 VNET_CFG_RX_HOLD_ALWAYS | VNET_CFG_TX_HOLD_ALWAYS)

struct show {
	const char *dev;
	int ifindex;
	struct vnet_config cfg[VNET_MAX_QUEUES];
	struct vnet_queue_state qs[VNET_DIR_MAX * VNET_MAX_QUEUES];
	struct vnet_ethtool_coalesce tap;
	bool tap_ok;
	char tap_err[1024];
	struct vnet_tap_users users;
	struct vnet_policy_info policy;
	struct vnet_info info; /* zero when it cannot be read */
	struct vnet_dp_stats *dp; /* vnetd's counters; NULL: none */
};

/* the guest-NIC part of two entries is the same */
static bool guest_eq(const struct vnet_config *a, const struct vnet_config *b)
{
	return a->rx_usecs == b->rx_usecs && a->rx_frames == b->rx_frames &&
	       a->tx_usecs == b->tx_usecs && a->tx_frames == b->tx_frames &&
	       (a->flags & GUEST_FLAGS) == (b->flags & GUEST_FLAGS) &&
	       a->min_frames == b->min_frames &&
	       a->max_frames == b->max_frames &&
	       a->min_usecs == b->min_usecs && a->max_usecs == b->max_usecs;
}

/*
 * The queues the tap has, when known: those processes hold, or up to the
 * last that carried traffic; 0 when neither (a tap nobody serves yet).
 */
static int device_queues(const struct show *s)
{
	int q, n = s->users.nr_queues;

	for (q = n; q < VNET_MAX_QUEUES; q++)
		if (s->qs[vnet_key(VNET_DIR_TX, (__u32)q)].first_seen_ns ||
		    s->qs[vnet_key(VNET_DIR_RX, (__u32)q)].first_seen_ns)
			n = q + 1;
	return n;
}

/*
 * Queues whose guest-NIC values equal those of queue `lead`, as ranges:
 * all of them in JSON (the config map has 256 entries); in text only the
 * tap's own (NQ, when known) unless they were set apart from queue 0's.
 */
static void print_ranges(const struct show *s, int lead, bool *done,
			 bool text_too, int nq)
{
	int q, start = -1, end, n = 0;
	bool clip = nq > 0 && guest_eq(&s->cfg[lead], &s->cfg[0]);
	char text[32];

	out_arr_open("queues");
	for (q = 0; q <= VNET_MAX_QUEUES; q++) {
		bool in = q < VNET_MAX_QUEUES && !done[q] &&
			  guest_eq(&s->cfg[q], &s->cfg[lead]);

		if (in && start < 0)
			start = q;
		if (in || start < 0)
			continue;
		out_arr_open(NULL);
		out_u64(NULL, NULL, start);
		out_u64(NULL, NULL, q - 1);
		out_arr_close();
		end = clip && q - 1 >= nq ? nq - 1 : q - 1;
		if (start > end) {
			start = -1;
			continue;
		}
		if (start == end)
			snprintf(text, sizeof(text), "%s%d", n ? "," : "",
				 start);
		else
			snprintf(text, sizeof(text), "%s%d-%d", n ? "," : "",
				 start, end);
		if (text_too)
			out_text("%s", text);
		n++;
		start = -1;
	}
	out_arr_close();
	for (q = 0; q < VNET_MAX_QUEUES; q++)
		if (guest_eq(&s->cfg[q], &s->cfg[lead]))
			done[q] = true;
}

/* how many queues not yet printed share queue lead's values (as shown) */
static int group_size(const struct show *s, int lead, const bool *done,
		      int nq)
{
	bool clip = nq > 0 && guest_eq(&s->cfg[lead], &s->cfg[0]);
	int q, n = 0;

	for (q = lead; q < VNET_MAX_QUEUES && (!clip || q < nq); q++)
		n += !done[q] && guest_eq(&s->cfg[q], &s->cfg[lead]);
	return n;
}

static const char *on_off(bool on)
{
	return on ? "on" : "off";
}

static const char *hold_name(bool always)
{
	return always ? "always" : "auto";
}

static void print_guest(const struct vnet_config *c)
{
	out_text("Adaptive RX: %s  TX: %s\n",
		 on_off(c->flags & VNET_CFG_ADAPTIVE_RX),
		 on_off(c->flags & VNET_CFG_ADAPTIVE_TX));
	out_bool("adaptive_rx", NULL, c->flags & VNET_CFG_ADAPTIVE_RX);
	out_bool("adaptive_tx", NULL, c->flags & VNET_CFG_ADAPTIVE_TX);
	out_text("Bypass RX (push): %s  TX (urgent): %s\n",
		 on_off(!(c->flags & VNET_CFG_NO_RX_BYPASS)),
		 on_off(!(c->flags & VNET_CFG_NO_TX_BYPASS)));
	out_bool("rx_push_bypass", NULL, !(c->flags & VNET_CFG_NO_RX_BYPASS));
	out_bool("tx_urgent_bypass", NULL, !(c->flags & VNET_CFG_NO_TX_BYPASS));
	out_str("rx_hold", "Hold RX: %s", hold_name(c->flags & VNET_CFG_RX_HOLD_ALWAYS));
	out_str("tx_hold", "  TX: %s\n", hold_name(c->flags & VNET_CFG_TX_HOLD_ALWAYS));
	out_u64("rx_usecs", "rx-usecs: %llu\n", c->rx_usecs);
	out_u64("rx_frames", "rx-frames: %llu\n", c->rx_frames);
	out_text("\n");
	out_u64("tx_usecs", "tx-usecs: %llu\n", c->tx_usecs);
	out_u64("tx_frames", "tx-frames: %llu\n", c->tx_frames);
	out_text("\n");
	out_u64("min_frames", "adaptive bounds: frames %llu", c->min_frames);
	out_u64("max_frames", "-%llu", c->max_frames);
	out_u64("min_usecs", "  usecs %llu", c->min_usecs);
	out_u64("max_usecs", "-%llu\n", c->max_usecs);
}

/* "qemu-system-x86 (pid 12, 4 queues)" for the first holders */
static void holders(const struct vnet_tap_users *u, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < u->nr && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s (pid %d)",
				i ? ", " : "", u->user[i].comm,
				u->user[i].pid);
}

static void print_effect(const char *where, const char *detail)
{
	out_obj_open("effect");
	out_str("where", "takes effect: %s", where);
	out_str("detail", ": %s\n", detail);
	out_obj_close();
}

/* where the guest-NIC words take effect on this device */
static void guest_effect(const struct show *s)
{
	char who[256], detail[512];

	holders(&s->users, who, sizeof(who));
	if (s->users.vnetd) {
		snprintf(detail, sizeof(detail),
			 "%s serves %s and applies them live; adaptive directions follow the BPF recommendation",
			 who, s->dev);
		print_effect("vnetd", detail);
	} else if (s->users.nr_queues) {
		snprintf(detail, sizeof(detail),
			 "%s's queues are held by %s%s; only vnetd (vhost-user datapath) applies vnet's guest-NIC values, so they wait in the config map",
			 s->dev, who,
			 s->users.vhost_net ? " with kernel vhost_net" : "");
		print_effect("nowhere", detail);
	} else {
		snprintf(detail, sizeof(detail),
			 "no process holds %s's queues (no vnetd serves it); the values wait in the config map for vnetd",
			 s->dev);
		print_effect("nowhere", detail);
	}
}

/* where the tap's own rx-frames takes effect on this device */
static void tap_effect(const struct show *s)
{
	char who[256], detail[640];

	holders(&s->users, who, sizeof(who));
	if (s->users.vnetd) {
		snprintf(detail, sizeof(detail),
			 "%s uses it as its guest-TX batch into the tap; tun's own batching does not apply to vnetd's write()s",
			 who);
		print_effect("vnetd", detail);
	} else if (s->users.vhost_net) {
		snprintf(detail, sizeof(detail),
			 "tun, only if kernel vhost_net (%s) writes with MSG_MORE, i.e. the VMM set a limited sndbuf (QEMU -netdev tap,sndbuf=N); with the default sndbuf vhost_net's batched path bypasses it",
			 who);
		print_effect("tun", detail);
	} else if (s->users.nr_queues) {
		snprintf(detail, sizeof(detail),
			 "%s writes %s with write(), which bypasses tun's rx-frames (tun batches only MSG_MORE writers: kernel vhost_net with a limited sndbuf)",
			 who, s->dev);
		print_effect("nowhere", detail);
	} else {
		snprintf(detail, sizeof(detail),
			 "no process holds %s's queues; tun applies it only to MSG_MORE writers (kernel vhost_net with a limited sndbuf), never to write() or vhost_net's default batched path",
			 s->dev);
		print_effect("nowhere", detail);
	}
}

/* the agent's line of the tap section; true when an agent runs */
static bool print_agent(const struct show *s)
{
	const struct vnet_info *in = &s->info;
	__u64 age_ms = 0;

	if (!vnet_agent_alive(in, &age_ms)) {
		out_null("agent", NULL);
		return false;
	}
	out_obj_open("agent");
	out_u64("pid", "agent: vnetd --agent (pid %llu) drives rx-frames with the adaptive-tx recommendation: ",
		in->agent_pid);
	switch (in->agent_state) {
	case VNET_AGENT_FOLLOWING:
		out_str("state", NULL, "following");
		out_text("following %u\n", in->agent_target);
		break;
	case VNET_AGENT_WAITING:
		out_str("state", NULL, "waiting");
		out_text("waiting for one (no window closed yet)\n");
		break;
	default:
		out_str("state", NULL, "idle");
		out_text("idle (adaptive-tx is off: the static value applies)\n");
		break;
	}
	if (in->agent_target)
		out_u64("target", NULL, in->agent_target);
	else
		out_null("target", NULL);
	if (in->agent_changes)
		out_u64("rx_frames", NULL, in->agent_rx_frames);
	else
		out_null("rx_frames", NULL);
	out_u64("changes", "  %llu change", in->agent_changes);
	out_text("%s so far", in->agent_changes == 1 ? "" : "s");
	out_u64("max_rate", ", at most %llu per second", in->agent_max_rate);
	out_u64("hold", ", each after %llu samples", in->agent_hold);
	out_u64("interval_ms", " of %llu ms in a row", in->agent_interval_ms);
	out_u64("limited", " (%llu samples waited for the rate bound)\n",
		in->agent_limited);
	out_u64("samples", NULL, in->agent_samples);
	out_u64("heartbeat_age_ms", NULL, age_ms);
	out_obj_close();
	return true;
}

static void print_show(const struct show *s)
{
	bool done[VNET_MAX_QUEUES] = {}, grouped = false, agent;
	int q, nq = device_queues(s);

	out_obj_open(NULL);
	out_str("ifname", "Coalesce parameters for %s", s->dev);
	out_u64("ifindex", NULL, s->ifindex);
	out_text(" (guest NIC, virtio NOTF_COAL words):\n");

	for (q = 1; q < VNET_MAX_QUEUES; q++)
		if (!guest_eq(&s->cfg[q], &s->cfg[0]))
			grouped = true;
	out_obj_open("guest");
	out_arr_open("groups");
	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		if (done[q])
			continue;
		out_obj_open(NULL);
		if (grouped) {
			out_text("Queue%s ", group_size(s, q, done, nq) > 1 ? "s" : "");
			print_ranges(s, q, done, true, nq);
			out_text(":\n");
		} else {
			print_ranges(s, q, done, false, nq);
		}
		print_guest(&s->cfg[q]);
		out_obj_close();
	}
	out_arr_close();
	guest_effect(s);
	out_obj_close();
	out_text("\n");

	coalesce_print_rule(s->dev, s->users.vnetd, s->cfg, s->qs, s->dp);
	coalesce_print_recommendations(s->qs);
	out_obj_open("policy");
	if (s->policy.path[0])
		out_str("path", "Policy: %s (linked in at attach)\n",
			s->policy.path);
	else
		out_str("path", "Policy: %s\n", VNET_POLICY_BUILTIN);
	out_bool("builtin", NULL, !s->policy.path[0]);
	out_obj_close();
	out_text("\n");

	out_text("Tap (host view, ethtool -C %s):\n", s->dev);
	out_obj_open("tap");
	if (s->tap_ok && (s->tap.present & VNET_ETC_RX_FRAMES))
		out_u64("rx_frames", "rx-frames: %llu\n", s->tap.rx_frames);
	else
		out_null("rx_frames", "rx-frames: n/a\n");
	if (!s->tap_ok)
		out_str("error", "  (%s)\n", s->tap_err);
	/* what vnetd uses; a direct `ethtool -C` reaches it through vnetd */
	out_u64("config_rx_frames", NULL, s->cfg[0].tap_rx_frames);
	agent = print_agent(s);
	if (s->tap_ok && s->cfg[0].tap_rx_frames != s->tap.rx_frames)
		out_text(agent ? "config map: %u (the static value: the agent puts it back when adaptive-tx goes off or when it stops)\n" :
				 "config map: %u (set with 'ethtool -C' directly: vnetd takes the live value over while it runs)\n",
			 s->cfg[0].tap_rx_frames);
	tap_effect(s);
	out_obj_close();
	out_obj_close();
	out_doc_end();
}

static int coalesce_show(int argc, char **argv)
{
	char ns[NAME_MAX + 1];
	struct vnet_err err = {};
	struct show *s;
	int ret;

	if (argc != 3)
		return cli_usage("coalesce", argc < 3 ? "missing device name" :
							"too many arguments");
	s = calloc(1, sizeof(*s));
	if (!s)
		return cli_error("out of memory");
	s->dev = argv[2];
	if (vnet_coalesce_read(s->dev, s->cfg, &err) ||
	    vnet_queues_read(s->dev, s->qs, &err)) {
		ret = cli_error("%s", err.msg);
		goto out;
	}
	vnet_policy_query(s->dev, &s->policy, NULL);
	/* left zero when unreadable (another layout: no agent) */
	vnet_info_read(s->dev, &s->info, NULL);
	if (!vnet_tap_check(s->dev, &s->ifindex, &err) &&
	    !vnet_ethtool_coalesce_get(s->ifindex, &s->tap, &err))
		s->tap_ok = true;
	else if (!vnet_netns_of_dev(s->dev, ns, sizeof(ns)))
		/* pins are the host's; the tap's own value is in its netns */
		snprintf(s->tap_err, sizeof(s->tap_err),
			 "%s is in network namespace %s: 'vnetctl -n %s coalesce show %s' reads its live value",
			 s->dev, ns, ns, s->dev);
	else
		snprintf(s->tap_err, sizeof(s->tap_err), "%s", err.msg);
	vnet_tap_users(s->dev, &s->users);
	s->dp = stats_dp_read(s->dev);
	print_show(s);
	ret = 0;
out:
	free(s->dp);
	free(s);
	return ret;
}

/* Levenshtein distance of A and B (short words), capped at 9 */
static unsigned int word_distance(const char *a, const char *b)
{
	unsigned int d[32][32], i, j, la = strlen(a), lb = strlen(b);

	if (la > 30 || lb > 30)
		return 9;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			unsigned int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			d[i][j] = c;
		}
	return d[la][lb] > 9 ? 9 : d[la][lb];
}

/*
 * "unknown parameter 'W'", the nearest word when one is near (two edits
 * at most: tx-usec, tx_usecs, rx-frame) and every word there is
 */
static int unknown_word(const char *word)
{
	char list[512] = "", near[80] = "";
	unsigned int i, best = 3, dist;
	const char *w;
	size_t n = 0;

	for (i = 0; (w = vnet_coalesce_word_nth(i, NULL)); i++) {
		n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0,
				      "%s%s", i ? ", " : "", w);
		dist = word_distance(word, w);
		if (dist < best) {
			best = dist;
			snprintf(near, sizeof(near), " (did you mean '%s'?)", w);
		}
	}
	return cli_usage("coalesce", "unknown parameter '%s'%s; the parameters: %s, and 'tap rx-frames N' for the tap's own",
			 word, near, list);
}

/* the range of numeric WORD for a message: "0-100000" (tap: TAP) */
static void word_range(const char *word, bool tap, char *buf, size_t len)
{
	__u32 max = 0;
	const char *w;
	unsigned int i;

	if (tap)
		max = VNET_TAP_RX_FRAMES_MAX;
	for (i = 0; !tap && (w = vnet_coalesce_word_nth(i, &max)); i++)
		if (!strcmp(w, word))
			break;
	snprintf(buf, len, "0-%u", max);
}

/* ethtool's own message for a value that does not parse, with the range */
static bool parse_value(const char *word, const char *s, bool is_bool,
			bool tap, __u64 *v)
{
	char range[32];
	char *end;

	if (is_bool) {
		const char *off = "off", *on = "on";

		vnet_coalesce_word_values(word, &off, &on);
		if (!strcmp(s, on) || !strcmp(s, off)) {
			*v = !strcmp(s, on);
			return true;
		}
		cli_usage("coalesce", "invalid value '%s' for parameter '%s': expected %s or %s",
			  s, word, on, off);
		return false;
	}
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || s[0] == '+') {
		word_range(word, tap, range, sizeof(range));
		cli_usage("coalesce", "invalid value '%s' for parameter '%s': expected a whole number %s",
			  s, word, range);
		return false;
	}
	return true;
}

static int coalesce_set(int argc, char **argv)
{
	struct vnet_coalesce_req req = {};
	struct vnet_err err = {};
	unsigned int queue = 0;
	bool tap = false, have_queue = false;
	const char *dev;
	__u64 v, tap_rx = 0;
	int i = 3, ret;

	if (argc < 3)
		return cli_usage("coalesce", "missing device name");
	dev = argv[2];
	if (i < argc && !strcmp(argv[i], "queue")) {
		if (i + 1 >= argc)
			return cli_usage("coalesce", "queue needs a number");
		if (!cli_parse_u32("coalesce", "queue", argv[i + 1], 0,
				   VNET_MAX_QUEUES - 1, &queue))
			return EXIT_USAGE;
		have_queue = true;
		i += 2;
	} else if (i < argc && !strcmp(argv[i], "tap")) {
		tap = true;
		i++;
	}
	if (i >= argc)
		return cli_usage("coalesce", "nothing to set");
	for (; i < argc; i += 2) {
		const char *word = argv[i];
		bool is_bool = false;

		if (tap && strcmp(word, "rx-frames"))
			return cli_usage("coalesce", "tap: '%s' is not a tun parameter: tun has only rx-frames (the guest NIC's %s is 'vnetctl coalesce set %s %s ...')",
					 word, word, dev, word);
		if (!tap && vnet_coalesce_word(word, &is_bool))
			return unknown_word(word);
		if (i + 1 >= argc)
			return cli_usage("coalesce", "parameter '%s' needs a value",
					 word);
		if (!parse_value(word, argv[i + 1], is_bool, tap, &v))
			return EXIT_USAGE;
		if (tap) {
			if (vnet_coalesce_tap_check(v, &err))
				return cli_usage("coalesce", "%s", err.msg);
			tap_rx = v;
		} else if (vnet_coalesce_req_add(&req, word, v, &err)) {
			return cli_usage("coalesce", "%s", err.msg);
		}
	}
	if (tap)
		ret = vnet_coalesce_set_tap(dev, (__u32)tap_rx, &err);
	else
		ret = vnet_coalesce_set(dev, have_queue ? (int)queue : -1, &req,
					&err);
	if (ret)
		return cli_error("%s", err.msg);
	return 0;
}

int do_coalesce(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage("coalesce", "missing subcommand: show or set");
	/* unambiguous prefixes, like the commands: "sh" is show, "s" is not */
	if (argv[1][0] && strlen(argv[1]) > 1 && !strncmp("show", argv[1], strlen(argv[1])))
		return coalesce_show(argc, argv);
	if (argv[1][0] && strlen(argv[1]) > 1 && !strncmp("set", argv[1], strlen(argv[1])))
		return coalesce_set(argc, argv);
	return cli_usage("coalesce", "%s subcommand '%s': expected show or set",
			 !strcmp(argv[1], "s") ? "ambiguous" : "unknown",
			 argv[1]);
}
