// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetctl stats DEV [--queue N] [--watch SECONDS [--count N]] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnetctl.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool key_active(const struct vnet_stats_snapshot *s, __u32 k)
{
	int c;

	for (c = 0; c < VNET_CLASS_MAX; c++)
		if (vnet_class_counter(&s->cls[k], c)->packets)
			return true;
	return s->state[k].first_seen_ns != 0;
}

static void print_stats(const char *dev, const struct vnet_stats_snapshot *s,
			const struct vnet_stats_snapshot *prev, double dt,
			int only_queue)
{
	__u32 dir, q, k;
	int c, rows = 0;

	out_obj_open(NULL);
	out_str("ifname", "%s\n", dev);
	if (prev)
		out_double("interval_s", NULL, dt);
	out_text("%-5s %-3s %-10s %14s %16s", "QUEUE", "DIR", "CLASS",
		 "PACKETS", "BYTES");
	if (prev)
		out_text(" %12s %14s", "PPS", "BIT/S");
	out_text("\n");
	out_arr_open("queues");
	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		if (only_queue >= 0 && q != (__u32)only_queue)
			continue;
		for (dir = 0; dir < VNET_DIR_MAX; dir++) {
			k = vnet_key(dir, q);
			if (only_queue < 0 && !key_active(s, k))
				continue;
			rows++;
			out_obj_open(NULL);
			out_u64("queue", NULL, q);
			out_str("dir", NULL, vnet_dir_name(dir));
			for (c = 0; c < VNET_CLASS_MAX; c++) {
				const struct vnet_counter *v =
					vnet_class_counter(&s->cls[k], c);

				out_text("%-5u %-3s %-10s", q, vnet_dir_name(dir),
					 vnet_class_name(c));
				out_obj_open(vnet_class_name(c));
				out_u64("packets", " %14llu", v->packets);
				out_u64("bytes", " %16llu", v->bytes);
				out_obj_close();
				if (prev) {
					const struct vnet_counter *p =
						vnet_class_counter(&prev->cls[k], c);

					out_text(" %12.0f %14.0f",
						 (v->packets - p->packets) / dt,
						 (v->bytes - p->bytes) * 8 / dt);
				}
				out_text("\n");
			}
			out_obj_open("state");
			out_u64("urgent", NULL, s->state[k].urgent);
			out_u64("push", NULL, s->state[k].push);
			out_u64("last_urgent_ns", NULL, s->state[k].last_urgent_ns);
			out_u64("last_push_ns", NULL, s->state[k].last_push_ns);
			out_obj_close();
			if (prev) {
				out_obj_open("rates");
				for (c = 0; c < VNET_CLASS_MAX; c++) {
					const struct vnet_counter *v =
						vnet_class_counter(&s->cls[k], c);
					const struct vnet_counter *p =
						vnet_class_counter(&prev->cls[k], c);

					out_obj_open(vnet_class_name(c));
					out_double("pps", NULL,
						   (v->packets - p->packets) / dt);
					out_double("bps", NULL,
						   (v->bytes - p->bytes) * 8 / dt);
					out_obj_close();
				}
				out_obj_close();
			}
			out_obj_close();
		}
	}
	out_arr_close();
	if (!rows)
		out_text("(no traffic seen yet)\n");
	out_obj_close();
	out_doc_end();
}

int do_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "watch", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct vnet_stats_snapshot *cur = NULL, *prev = NULL, *tmp;
	unsigned int queue = 0, watch = 0, count = 0, v;
	bool have_queue = false, have_count = false;
	struct vnet_err err = {};
	struct timespec ts;
	double t0, t1;
	unsigned int i;
	const char *dev;
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, "q:w:c:", opts, NULL)) != -1) {
		switch (opt) {
		case 'q':
			if (!cli_parse_u32("stats", "--queue", optarg, 0,
					   VNET_MAX_QUEUES - 1, &queue))
				return EXIT_USAGE;
			have_queue = true;
			break;
		case 'w':
			if (!cli_parse_u32("stats", "--watch", optarg, 1, 3600,
					   &watch))
				return EXIT_USAGE;
			break;
		case 'c':
			if (!cli_parse_u32("stats", "--count", optarg, 1,
					   1000000, &v))
				return EXIT_USAGE;
			count = v;
			have_count = true;
			break;
		default:
			return cli_usage("stats", "unknown option");
		}
	}
	if (optind != argc - 1)
		return cli_usage("stats", optind >= argc ? "missing device name" :
							   "too many arguments");
	if (have_count && !watch)
		return cli_usage("stats", "--count needs --watch");
	dev = argv[optind];

	cur = malloc(sizeof(*cur));
	prev = malloc(sizeof(*prev));
	if (!cur || !prev) {
		ret = cli_error("out of memory");
		goto out;
	}
	if (vnet_stats_read(dev, cur, &err)) {
		ret = cli_error("%s", err.msg);
		goto out;
	}
	t0 = now_s();
	if (!watch) {
		print_stats(dev, cur, NULL, 0, have_queue ? (int)queue : -1);
		goto out;
	}
	for (i = 0; !have_count || i < count; i++) {
		ts.tv_sec = watch;
		ts.tv_nsec = 0;
		nanosleep(&ts, NULL);
		tmp = prev;
		prev = cur;
		cur = tmp;
		if (vnet_stats_read(dev, cur, &err)) {
			ret = cli_error("%s", err.msg);
			goto out;
		}
		t1 = now_s();
		print_stats(dev, cur, prev, t1 - t0,
			    have_queue ? (int)queue : -1);
		t0 = t1;
	}
out:
	free(cur);
	free(prev);
	return ret;
}
