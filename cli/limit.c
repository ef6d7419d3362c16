// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl limit: a port's rate limits in tc's words (docs/limits.md).
 *
 *   limit show DEV
 *   limit set DEV tx|rx [rate R] [burst B] [initial B]
 *                       [pkts-rate N] [pkts-burst N] [pkts-initial N]
 *   limit clear DEV [tx|rx]
 *
 * 'set' replaces the direction's limit whole (what it does not name is
 * off, or its default burst); vnetd takes the change at its next burst.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/statsdata.h"
#include "base/util.h"
#include "limit.h"

static int limit_dir(const char *s)
{
	if (!strcmp(s, "tx"))
		return VNET_DIR_TX;
	if (!strcmp(s, "rx"))
		return VNET_DIR_RX;
	return -1;
}

/* one word of 'set': 0, or the exit code of its error */
static int limit_word(struct vnet_limit *l, const char *w, const char *v)
{
	struct vnet_err err = {};

	return vnet_limit_word(l, w, v, &err) ? cli_usage("limit", "%s", err.msg) :
						0;
}

static int limit_set(int argc, char **argv)
{
	struct vnet_limit l = {};
	struct vnet_err err = {};
	int dir, i, ret;

	if (argc < 4)
		return cli_usage("limit", argc < 3 ? "missing device name" :
						    "missing direction: tx or rx");
	dir = limit_dir(argv[3]);
	if (dir < 0)
		return cli_usage("limit", "direction '%s': tx (from the guest) or rx (to the guest)",
				 argv[3]);
	if (argc == 4)
		return cli_usage("limit", "nothing to set: give rate R and/or pkts-rate N (to remove a limit: limit clear %s %s)",
				 argv[2], argv[3]);
	for (i = 4; i < argc; i += 2) {
		if (i + 1 >= argc)
			return cli_usage("limit", "'%s' needs a value", argv[i]);
		ret = limit_word(&l, argv[i], argv[i + 1]);
		if (ret)
			return ret;
	}
	if (vnet_limit_check(&l, argv[3], &err))
		return cli_usage("limit", "%s", err.msg);
	if (!l.bytes_per_sec && !l.frames_per_sec)
		return cli_usage("limit", "no rate: give rate R and/or pkts-rate N");
	if (vnet_limit_set(argv[2], dir, &l, &err))
		return cli_error("%s", err.msg);
	return 0;
}

static int limit_clear(int argc, char **argv)
{
	static const struct vnet_limit none;
	struct vnet_err err = {};
	int dir = -1, d;

	if (argc < 3 || argc > 4)
		return cli_usage("limit", argc < 3 ? "missing device name" :
						    "too many arguments");
	if (argc == 4) {
		dir = limit_dir(argv[3]);
		if (dir < 0)
			return cli_usage("limit", "direction '%s': tx or rx",
					 argv[3]);
	}
	for (d = 0; d < VNET_DIR_MAX; d++)
		if ((dir < 0 || d == dir) && vnet_limit_set(argv[2], d, &none, &err))
			return cli_error("%s", err.msg);
	return 0;
}

/* "12.5 Mbit/s"-style text of a byte rate, tc's units */
static void rate_text(char *buf, size_t len, __u64 bytes_per_sec)
{
	double bits = (double)bytes_per_sec * 8;

	if (bits >= 1e9)
		snprintf(buf, len, "%.6ggbit", bits / 1e9);
	else if (bits >= 1e6)
		snprintf(buf, len, "%.6gmbit", bits / 1e6);
	else if (bits >= 1e3)
		snprintf(buf, len, "%.6gkbit", bits / 1e3);
	else
		snprintf(buf, len, "%.6gbit", bits);
}

static void print_dir(const char *name, const struct vnet_limit *l,
		      const struct vnet_dp_stats *dp)
{
	__u64 limited = 0, limited_ns = 0;
	char r[32];
	int k;

	for (k = 0; dp && k < VNET_MAX_QUEUES; k++) {
		limited += dp[k].limited;
		limited_ns += dp[k].limited_ns;
	}
	out_obj_open(name);
	out_text("%s:", name);
	if (!l->bytes_per_sec && !l->frames_per_sec)
		out_text(" no limit");
	if (l->bytes_per_sec) {
		rate_text(r, sizeof(r), l->bytes_per_sec);
		out_text(" rate %s", r);
	}
	out_u64("bytes_per_sec", NULL, l->bytes_per_sec);
	out_u64("burst", l->bytes_per_sec ? " burst %llub" : NULL,
		l->bytes_burst);
	out_u64("initial", l->bytes_one_time ? " initial %llub" : NULL,
		l->bytes_one_time);
	out_u64("pkts_rate", l->frames_per_sec ? " pkts-rate %llu" : NULL,
		l->frames_per_sec);
	out_u64("pkts_burst", l->frames_per_sec ? " pkts-burst %llu" : NULL,
		l->frames_burst);
	out_u64("pkts_initial",
		l->frames_one_time ? " pkts-initial %llu" : NULL,
		l->frames_one_time);
	out_u64("limited", dp ? "; held %llu times" : NULL, limited);
	out_double("limited_sec", dp ? " for %.3f s" : NULL,
		   (double)limited_ns / 1e9);
	out_text("\n");
	out_obj_close();
}

static int limit_show(int argc, char **argv)
{
	struct vnet_limit l[VNET_DIR_MAX];
	struct vnet_dp_stats *dp;
	struct vnet_err err = {};

	if (argc != 3)
		return cli_usage("limit", argc < 3 ? "missing device name" :
						    "too many arguments");
	if (vnet_limit_get(argv[2], l, &err))
		return cli_error("%s", err.msg);
	/* the dp_stats map's keys: dir * VNET_MAX_QUEUES + queue */
	dp = stats_dp_read(argv[2]);
	out_obj_open(NULL);
	out_str("device", "%s\n", argv[2]);
	print_dir("tx", &l[VNET_DIR_TX], dp ? dp : NULL);
	print_dir("rx", &l[VNET_DIR_RX], dp ? dp + VNET_MAX_QUEUES : NULL);
	out_obj_close();
	out_doc_end();
	free(dp);
	return 0;
}

int do_limit(int argc, char **argv)
{
	return cli_show_set_clear("limit", argc, argv, limit_show, limit_set,
				  limit_clear);
}
