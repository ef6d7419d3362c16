// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl stats [DEV] [--queue N] [--watch SECONDS [--count N]]
 *   (no DEV: every attached device that is present)
 * vnetctl stats [DEV...] --prometheus [--queue N]   (prom.c)
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/statsdata.h"
#include "base/util.h"
#include "exporter/prom.h"
#include "stats.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A datapath serves DEV: vnetd holds its queues, or counted something
 * (attach mode, where kernel vhost-net moves the frames, has all zeros).
 */
static bool served(const char *dev, const struct vnet_dp_stats *dp)
{
	struct vnet_tap_users u = {};
	__u32 k;

	if (!vnet_tap_users(dev, &u) && u.vnetd)
		return true;
	for (k = 0; k < DP_ENTRIES; k++)
		if (stats_dp_active(&dp[k]))
			return true;
	return false;
}

/* The "datapath" rows and object of one queue and direction. */
static void print_dp(__u32 q, int dir, const struct vnet_dp_stats *d)
{
	bool drops = false;
	int i;

	out_text("%-5u %-3s %-10s", q, vnet_dir_name(dir), "datapath");
	out_obj_open("datapath");
	out_u64("frames", " %14llu", d->frames);
	out_u64("bytes", " %16llu", d->bytes);
	out_u64("batches", "  batches %llu", d->batches);
	out_u64("kicks", " kicks %llu", d->kicks);
	out_u64("busy_polls", " busy-polls %llu", d->busy_polls);
	out_u64("bounced", " bounced %llu", d->bounced);
	out_text("\n%-5u %-3s %-10s", q, vnet_dir_name(dir), "notify");
	out_u64("notify_sent", " sent %llu", d->notify_sent);
	out_u64("notify_suppressed", " suppressed %llu", d->notify_suppressed);
	out_u64("notify_deferred", " deferred %llu", d->notify_deferred);
	out_u64("notify_urgent", " urgent %llu", d->notify_urgent);
	out_u64("notify_timer", " timer %llu", d->notify_timer);
	out_u64("notify_frames", " frames %llu", d->notify_frames);
	out_u64("notify_paired", " paired %llu", d->notify_paired);
	out_u64("notify_latency", " latency %llu", d->notify_latency);
	out_u64("notify_quiet", " quiet %llu", d->notify_quiet);
	out_u64("limited", d->limited ? " limited %llu" : NULL, d->limited);
	out_u64("limited_ns", d->limited ? " (%llu ns)" : NULL, d->limited_ns);
	out_u64("holds", " holds %llu", d->holds);
	out_u64("held", " held %llu", d->held);
	out_text("\n");
	/* by name; a reason without one only when it counted something */
	out_obj_open("drops");
	for (i = 0; i < VNET_DROP_MAX; i++) {
		char key[16];

		drops |= d->drops[i] != 0;
		if (stats_drop_name(i)) {
			out_u64(stats_drop_name(i), NULL, d->drops[i]);
		} else if (d->drops[i]) {
			snprintf(key, sizeof(key), "drop_%d", i);
			out_u64(key, NULL, d->drops[i]);
		}
	}
	out_obj_close();
	out_obj_close();
	if (!drops)
		return;
	out_text("%-5u %-3s %-10s", q, vnet_dir_name(dir), "drops");
	for (i = 0; i < VNET_DROP_MAX; i++)
		if (d->drops[i])
			out_text(" %s %llu", stats_drop_name(i) ? stats_drop_name(i) : "?",
				 (unsigned long long)d->drops[i]);
	out_text("\n");
}

/* A text row per class of key K (queue Q, DIR): counts, rates since PREV. */
static void print_classes(const struct vnet_stats_snapshot *s,
			  const struct vnet_stats_snapshot *prev, double dt,
			  __u32 q, __u32 dir, __u32 k)
{
	int c;

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
}

/* The classifier's state of key K and, with PREV, the rates (JSON only). */
static void print_state_rates(const struct vnet_stats_snapshot *s,
			      const struct vnet_stats_snapshot *prev,
			      double dt, __u32 k)
{
	int c;

	out_obj_open("state");
	out_u64("urgent", NULL, s->state[k].urgent);
	out_u64("push", NULL, s->state[k].push);
	out_u64("last_urgent_ns", NULL, s->state[k].last_urgent_ns);
	out_u64("last_push_ns", NULL, s->state[k].last_push_ns);
	out_obj_close();
	if (!prev)
		return;
	out_obj_open("rates");
	for (c = 0; c < VNET_CLASS_MAX; c++) {
		const struct vnet_counter *v =
			vnet_class_counter(&s->cls[k], c);
		const struct vnet_counter *p =
			vnet_class_counter(&prev->cls[k], c);

		out_obj_open(vnet_class_name(c));
		out_double("pps", NULL, (v->packets - p->packets) / dt);
		out_double("bps", NULL, (v->bytes - p->bytes) * 8 / dt);
		out_obj_close();
	}
	out_obj_close();
}

static void print_stats(const char *dev, const struct vnet_stats_snapshot *s,
			const struct vnet_stats_snapshot *prev, double dt,
			int only_queue, const struct vnet_dp_stats *dp)
{
	bool dp_served = dp && served(dev, dp);
	__u32 dir, q, k;
	int rows = 0;

	out_obj_open(NULL);
	out_str("ifname", "%s\n", dev);
	/* when the counters were read: wall clock, seconds since the epoch */
	out_double("timestamp", NULL, wall_s());
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
			if (only_queue < 0 && !stats_key_active(s, dp, k))
				continue;
			rows++;
			out_obj_open(NULL);
			out_u64("queue", NULL, q);
			out_str("dir", NULL, vnet_dir_name(dir));
			print_classes(s, prev, dt, q, dir, k);
			/*
			 * vnetd's counters: in JSON always (zeros where no
			 * datapath serves the tap), in text only where one does
			 */
			if (dp && (out_json || dp_served))
				print_dp(q, (int)dir, &dp[k]);
			print_state_rates(s, prev, dt, k);
			out_obj_close();
		}
	}
	out_arr_close();
	if (!rows)
		out_text("(no traffic seen yet)\n");
	out_obj_close();
}

/* --prometheus: DEVS, or every attached device */
static int prometheus(int ndev, char **devs, int only_queue, unsigned int watch)
{
	static char names[1024][IF_NAMESIZE];
	int n, i, ret;

	if (watch)
		return cli_usage("stats", "--prometheus prints one scrape: no --watch (the collector polls)");
	if (out_json)
		return cli_usage("stats", "--prometheus and -j are two formats: pick one");
	if (ndev > 1024)
		return cli_usage("stats", "too many devices");
	for (i = 0; i < ndev; i++) {
		if (devs[i][0] == '-')
			return cli_usage("stats", "unknown option '%s'", devs[i]);
		if (vnet_ifname_invalid(devs[i]))
			return cli_usage("stats", "'%s' is not a device name: %s",
					 devs[i], vnet_ifname_invalid(devs[i]));
		snprintf(names[i], IF_NAMESIZE, "%s", devs[i]);
	}
	n = ndev;
	if (!n) {
		n = vnet_list(names, 1024);
		if (n < 0)
			return cli_error("cannot read %s: %s", VNET_PIN_ROOT,
					 strerror(-n));
	}
	/* every device: one that cannot be read is left out (and said) */
	ret = stats_prometheus(stdout, names, n, only_queue, !ndev);
	return ndev ? ret : 0; /* every device: the ones left out are said */
}

const struct cli_opt stats_opts[] = {
	{ "queue", 'q', "N", "only queue N (0-255)" },
	{ "watch", 'w', "SECONDS", "print again every SECONDS with rates (pps, bit/s)" },
	{ "count", 'c', "N", "with --watch: stop after N reports" },
	{ "prometheus", 'P', NULL,
	  "every counter (classifier, datapath, notifications,\ndrops by reason) of DEV..., or of every attached\ndevice that is present, in the Prometheus text\nformat (for node_exporter's textfile collector)" },
	{ NULL, 0, NULL, NULL },
};

/* one device's counters, or every attached one's, read and printed */
struct stats_dev {
	char name[IF_NAMESIZE];
	struct vnet_stats_snapshot *cur, *prev;
	struct vnet_dp_stats *dp;
	bool ok; /* read this round */
};

/*
 * Read every device of DEVS (N) into its cur (prev: the last round's).
 * ALL (no DEV given): one that cannot be read is left out this round,
 * said on stderr; else it is the error (1).
 */
static int stats_read(struct stats_dev *devs, int n, bool all)
{
	struct vnet_stats_snapshot *tmp;
	struct vnet_err err = {};
	int i;

	for (i = 0; i < n; i++) {
		struct stats_dev *d = &devs[i];

		tmp = d->prev;
		d->prev = d->cur;
		d->cur = tmp;
		free(d->dp);
		d->dp = NULL;
		d->ok = !vnet_stats_read(d->name, d->cur, &err);
		if (!d->ok) {
			if (!all)
				return cli_error("%s", err.msg);
			fprintf(stderr, "Error: %s\n", err.msg);
			err.msg[0] = '\0';
			continue;
		}
		d->dp = stats_dp_read(d->name);
	}
	return 0;
}

/*
 * Every attached device that is present (status's listing): its name into
 * DEVS[i].name; the count, or -1 after the error.
 */
static int stats_all(struct stats_dev **devs)
{
	static char names[1024][IF_NAMESIZE];
	struct vnet_status st;
	int n, i, k = 0;

	n = vnet_list(names, 1024);
	if (n < 0) {
		cli_error("cannot read %s: %s", VNET_PIN_ROOT, strerror(-n));
		return -1;
	}
	*devs = calloc(n ? (size_t)n : 1, sizeof(**devs));
	if (!*devs) {
		cli_error("out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (vnet_status(names[i], &st, NULL) || !st.present)
			continue; /* gone: `vnetctl gc` */
		snprintf((*devs)[k++].name, IF_NAMESIZE, "%.15s", names[i]);
	}
	return k;
}

static void stats_print(struct stats_dev *devs, int n, bool all, double dt,
			int only_queue)
{
	int i, shown = 0;

	if (all)
		out_arr_open(NULL);
	for (i = 0; i < n; i++) {
		if (!devs[i].ok)
			continue;
		if (shown++)
			out_text("\n");
		print_stats(devs[i].name, devs[i].cur, dt > 0 ? devs[i].prev : NULL,
			    dt, only_queue, devs[i].dp);
	}
	if (all)
		out_arr_close();
	if (all && !n)
		out_text("no device attached (vnetctl attach DEV)\n");
	out_doc_end();
}

/* vnetctl stats's options */
struct stats_args {
	unsigned int queue, watch, count;
	bool have_queue, have_count, prom;
};

/* The options into A: 0, or the exit status of a bad one. */
static int stats_parse(int argc, char **argv, struct stats_args *a)
{
	unsigned int v;
	int opt;

	while ((opt = cli_getopt(argc, argv, stats_opts, "")) != -1) {
		switch (opt) {
		case 'q':
			if (!cli_parse_u32("stats", "--queue", optarg, 0,
					   VNET_MAX_QUEUES - 1, &a->queue))
				return EXIT_USAGE;
			a->have_queue = true;
			break;
		case 'w':
			if (!cli_parse_u32("stats", "--watch", optarg, 1, 3600,
					   &a->watch))
				return EXIT_USAGE;
			break;
		case 'c':
			if (!cli_parse_u32("stats", "--count", optarg, 1,
					   1000000, &v))
				return EXIT_USAGE;
			a->count = v;
			a->have_count = true;
			break;
		case 'P':
			a->prom = true;
			break;
		default:
			return cli_bad_option("stats", opt, argv);
		}
	}
	return 0;
}

/*
 * The devices to read: NAME, or (NULL) every attached one that is present,
 * each with its snapshots.  *N gets how many; 0 or the exit status.
 */
static int stats_devs(const char *name, struct stats_dev **devsp, int *n)
{
	struct stats_dev *devs;
	int k;

	if (!name) {
		*n = stats_all(devsp);
		if (*n < 0)
			return 1;
	} else {
		if (vnet_ifname_invalid(name))
			return cli_usage("stats", "'%s' is not a device name: %s",
					 name, vnet_ifname_invalid(name));
		*n = 1;
		*devsp = calloc(1, sizeof(**devsp));
		if (!*devsp)
			return cli_error("out of memory");
		snprintf((*devsp)[0].name, IF_NAMESIZE, "%.15s", name);
	}
	devs = *devsp;
	for (k = 0; k < *n; k++) {
		devs[k].cur = malloc(sizeof(*devs[k].cur));
		devs[k].prev = malloc(sizeof(*devs[k].prev));
		if (!devs[k].cur || !devs[k].prev)
			return cli_error("out of memory");
	}
	return 0;
}

static void stats_devs_free(struct stats_dev *devs, int n)
{
	int k;

	for (k = 0; devs && k < n; k++) {
		free(devs[k].dp);
		free(devs[k].cur);
		free(devs[k].prev);
	}
	free(devs);
}

/* Read and print once, or with --watch every A->watch seconds, with rates. */
static int stats_report(struct stats_dev *devs, int n, bool all,
			const struct stats_args *a)
{
	int only_queue = a->have_queue ? (int)a->queue : -1;
	struct timespec ts;
	double t0, t1;
	unsigned int i;
	int ret;

	ret = stats_read(devs, n, all);
	if (ret)
		return ret;
	t0 = now_s();
	if (!a->watch) {
		stats_print(devs, n, all, 0, only_queue);
		return 0;
	}
	for (i = 0; !a->have_count || i < a->count; i++) {
		ts.tv_sec = a->watch;
		ts.tv_nsec = 0;
		nanosleep(&ts, NULL);
		ret = stats_read(devs, n, all);
		if (ret)
			return ret;
		t1 = now_s();
		stats_print(devs, n, all, t1 - t0, only_queue);
		t0 = t1;
	}
	return 0;
}

int do_stats(int argc, char **argv)
{
	struct stats_args a = {};
	struct stats_dev *devs = NULL;
	bool all;
	int ret, n = 0;

	ret = stats_parse(argc, argv, &a);
	if (ret)
		return ret;
	if (a.prom)
		return prometheus(argc - optind, argv + optind,
				  a.have_queue ? (int)a.queue : -1, a.watch);
	if (optind < argc - 1)
		return cli_usage("stats", "too many arguments");
	if (a.have_count && !a.watch)
		return cli_usage("stats", "--count needs --watch");
	if (optind < argc && argv[optind][0] == '-')
		return cli_usage("stats", "unknown option '%s'", argv[optind]);

	/* no DEV: every attached device that is present */
	all = optind == argc;
	ret = stats_devs(all ? NULL : argv[optind], &devs, &n);
	if (!ret)
		ret = stats_report(devs, n, all, &a);
	stats_devs_free(devs, n);
	return ret;
}
