// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl stats [DEV...] --prometheus and vnetctl exporter's /metrics: every
 * counter in the Prometheus text exposition format (version 0.0.4).  One
 * family per counter, its samples grouped across devices:
 *
 *   vnet_build_info{version,abi}                       1
 *   vnet_device_up{device,netns}                       1 per present device
 *   vnet_packets_total{device,queue,direction,class}   classifier
 *   vnet_bytes_total{device,queue,direction,class}
 *   vnet_queue_urgent_total, vnet_queue_push_total     {device,queue,direction}
 *   vnet_datapath_*_total                              vnetd's, same labels
 *   vnet_datapath_drops_total{...,reason}
 *   vnet_guard_dropped_total{device,reason}            spoofing protection
 *
 * Every series of a device whose VM is named (vnet_vm_set()) has the label
 * vm after device.  Rows are the queues `stats` shows (that carried
 * traffic).  A device that is gone (its pins are left, status GONE) has no
 * series at all.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvnet.h"
#include "base/statsdata.h"
#include "base/util.h"
#include "prom.h"
#include "prom_cache.h"

/* where this scrape goes */
static FILE *po;

/* a label value: backslash, double quote and newline escaped */
static void label(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(po, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", po);
		else
			fputc(*s, po);
	}
}

static void head_type(const char *name, const char *help, const char *type)
{
	fprintf(po, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void head(const char *name, const char *help)
{
	head_type(name, help, "counter");
}

static void sample_start(const char *name, const struct prom_dev *d, __u32 q,
			 int dir)
{
	fprintf(po, "%s{device=\"", name);
	label(d->name);
	fprintf(po, "\"%s,queue=\"%u\",direction=\"%s\"", d->vm, q,
		vnet_dir_name(dir));
}

/* the rows of D to show: the queues that carried traffic, or ONLY_QUEUE */
static void find_rows(struct prom_dev *d, int only_queue)
{
	d->nrows = 0;
	for (__u32 q = 0; q < VNET_MAX_QUEUES; q++) {
		if (only_queue >= 0 && q != (__u32)only_queue)
			continue;
		for (int dir = 0; dir < VNET_DIR_MAX; dir++) {
			if (only_queue < 0 &&
			    !stats_key_active(&d->snap, d->dp, vnet_key(dir, q)))
				continue;
			d->rows[d->nrows].q = (__u16)q;
			d->rows[d->nrows++].dir = (__u8)dir;
		}
	}
}

/* BODY for every shown (device d, queue q, direction dir, key k) */
#define FOR_ROWS(devs, n, only_queue, body)                                    \
	for (int i_ = 0; i_ < (n); i_++) {                                     \
		const struct prom_dev *d = &(devs)[i_];                        \
		(void)(only_queue);                                            \
		for (int r_ = 0; r_ < d->nrows; r_++) {                        \
			__u32 q = d->rows[r_].q;                               \
			int dir = d->rows[r_].dir;                             \
			__u32 k = vnet_key(dir, q);                            \
			body                                                   \
		}                                                              \
	}

/* the time the rate limit held each queue: seconds, Prometheus' base unit */
static void print_limited(const struct prom_dev *devs, int n, int only_queue)
{
	head("vnet_datapath_limited_seconds_total", "Time the port's rate limit held the queue (vnetctl limit), seconds.");
	FOR_ROWS(devs, n, only_queue, {
		if (!d->dp)
			continue;
		sample_start("vnet_datapath_limited_seconds_total", d, q, dir);
		fprintf(po, "} %.9f\n", (double)d->dp[k].limited_ns / 1e9);
	})
}

/* vnetd's datapath families (devices with a dp_stats map) */
static void print_datapath(const struct prom_dev *devs, int n, int only_queue)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} dpf[] = {
#define DPF(f, h) { "vnet_datapath_" #f "_total", h, offsetof(struct vnet_dp_stats, f) }
		DPF(frames, "Frames vnetd moved between the guest's rings and the tap."),
		DPF(bytes, "Bytes vnetd moved between the guest's rings and the tap."),
		DPF(batches, "Bursts vnetd processed."),
		DPF(kicks, "Guest kicks (eventfd) vnetd received."),
		DPF(busy_polls, "Busy-poll windows that found work."),
		DPF(bounced, "Guest RX frames delivered from a bounce slot (copied twice)."),
		DPF(notify_sent, "Guest notifications (call eventfd) vnetd sent."),
		DPF(notify_suppressed, "Notifications not sent: EVENT_IDX said the guest needs none."),
		DPF(notify_deferred, "Notifications held back by coalescing."),
		DPF(notify_urgent, "Notifications sent at once for an urgent (tx) or PSH (rx) frame."),
		DPF(notify_timer, "Notifications sent by the coalescing timer."),
		DPF(notify_frames, "Notifications sent because the frame count was reached."),
		DPF(notify_paired, "RX notifications sent along with a TX completion signal."),
		DPF(notify_latency, "Notifications sent at once: the queue pair is in latency mode (request/response)."),
		DPF(notify_quiet, "Notifications sent at once: the first after a quiet period of the direction's usecs."),
		DPF(limited, "Bursts the port's rate limit stopped (vnetctl limit): the queue waited for tokens."),
		DPF(holds, "Notifications held (a hold started)."),
		DPF(held, "Used entries signalled at the end of a hold."),
#undef DPF
	};
	int c;
	size_t f;

	for (f = 0; f < sizeof(dpf) / sizeof(dpf[0]); f++) {
		head(dpf[f].name, dpf[f].help);
		FOR_ROWS(devs, n, only_queue, {
			if (!d->dp)
				continue;
			sample_start(dpf[f].name, d, q, dir);
			fprintf(po, "} %llu\n", (unsigned long long)*(const __u64 *)
				       ((const char *)&d->dp[k] + dpf[f].off));
		})
	}
	print_limited(devs, n, only_queue);
	head("vnet_datapath_drops_total", "Frames vnetd dropped, by reason.");
	FOR_ROWS(devs, n, only_queue, {
		if (!d->dp)
			continue;
		for (c = 0; c < VNET_DROP_MAX; c++) {
			const char *r = stats_drop_name(c);

			if (!r && !d->dp[k].drops[c])
				continue; /* a reason without a name: only if counted */
			sample_start("vnet_datapath_drops_total", d, q, dir);
			if (r)
				fprintf(po, ",reason=\"%s\"} %llu\n", r,
				       (unsigned long long)d->dp[k].drops[c]);
			else
				fprintf(po, ",reason=\"drop_%d\"} %llu\n", c,
				       (unsigned long long)d->dp[k].drops[c]);
		}
	})
}

static void print_families(const struct prom_dev *devs, int n, int only_queue)
{
	int c;
	bool any_dp = false;

	for (int i = 0; i < n; i++)
		any_dp |= devs[i].dp != NULL;

	for (int bytes = 0; bytes < 2; bytes++) {
		head(bytes ? "vnet_bytes_total" : "vnet_packets_total",
		     bytes ? "Bytes the classifier saw, per queue, direction (tx: from the guest) and class." :
			     "Frames the classifier saw, per queue, direction (tx: from the guest) and class.");
		FOR_ROWS(devs, n, only_queue, {
			for (c = 0; c < VNET_CLASS_MAX; c++) {
				const struct vnet_counter *v =
					vnet_class_counter(&d->snap.cls[k], c);

				sample_start(bytes ? "vnet_bytes_total" : "vnet_packets_total",
					     d, q, dir);
				fprintf(po, ",class=\"%s\"} %llu\n", vnet_class_name(c),
				       (unsigned long long)(bytes ? v->bytes : v->packets));
			}
		})
	}
	head("vnet_queue_urgent_total", "Urgent frames (TCP payload without PSH) counted in the queue's state.");
	FOR_ROWS(devs, n, only_queue, {
		sample_start("vnet_queue_urgent_total", d, q, dir);
		fprintf(po, "} %llu\n", (unsigned long long)d->snap.state[k].urgent);
	})
	head("vnet_queue_push_total", "Push frames (TCP payload with PSH) counted in the queue's state.");
	FOR_ROWS(devs, n, only_queue, {
		sample_start("vnet_queue_push_total", d, q, dir);
		fprintf(po, "} %llu\n", (unsigned long long)d->snap.state[k].push);
	})
	if (any_dp)
		print_datapath(devs, n, only_queue);
}

/* the guard's drops by reason, per device (every reason, 0 included) */
static void print_guard(const struct prom_dev *devs, int n)
{
	int i, r;

	head("vnet_guard_dropped_total", "Frames from the guest the spoofing protection dropped, by reason (vnetctl guard).");
	for (i = 0; i < n; i++) {
		if (!devs[i].guard_ok)
			continue;
		for (r = 0; r < VNET_GUARD_R_MAX; r++) {
			fputs("vnet_guard_dropped_total{device=\"", po);
			label(devs[i].name);
			fprintf(po, "\"%s,reason=\"%s\"} %llu\n", devs[i].vm,
				vnet_guard_reason_name(r),
				(unsigned long long)devs[i].guard[r].packets);
		}
	}
}

/* the exposition's own families: what built it, which devices are there */
static void print_info(const struct prom_dev *devs, int n)
{
	head_type("vnet_build_info", "The vnetctl that exports these metrics (value 1).", "gauge");
	fprintf(po, "vnet_build_info{version=\"%s\",abi=\"%d\"} 1\n", VNET_VERSION,
		VNET_ABI_VERSION);
	head_type("vnet_device_up", "1 for each attached device that is present; a device that is gone has no series.",
		  "gauge");
	for (int i = 0; i < n; i++) {
		fputs("vnet_device_up{device=\"", po);
		label(devs[i].name);
		fprintf(po, "\"%s,netns=\"", devs[i].vm);
		label(devs[i].netns);
		fputs("\"} 1\n", po);
	}
}

/*
 * The devices a lenient scrape left out, and why: said on stderr when
 * that differs from the previous scrape's (not once per scrape).
 */
static char *skip_now, *skip_last;
static size_t skip_len;
static FILE *skip_f;

static void skipped(const char *msg)
{
	if (!skip_f)
		skip_f = open_memstream(&skip_now, &skip_len);
	if (skip_f)
		fprintf(skip_f, "%s: left out of the scrape: %s\n", prog_name, msg);
}

static void skipped_say(void)
{
	if (skip_f)
		fclose(skip_f);
	skip_f = NULL;
	if (skip_now && (!skip_last || strcmp(skip_now, skip_last)))
		fputs(skip_now, stderr);
	else if (!skip_now && skip_last)
		fprintf(stderr, "%s: every device is in the scrape again\n", prog_name);
	free(skip_last);
	skip_last = skip_now;
	skip_now = NULL;
}

static bool dp_any(const struct vnet_dp_stats *dp)
{
	for (int k = 0; k < VNET_DIR_MAX * VNET_MAX_QUEUES; k++)
		if (stats_dp_active(&dp[k]))
			return true;
	return false;
}

/*
 * D read the long way (every pin opened): 1, 0 when the device is gone
 * (no series), -1 with ERR set
 */
static int read_dev(const char *name, struct prom_dev *d, struct vnet_err *err)
{
	char vm[VNET_VM_NAME_MAX + 1];
	struct vnet_status st;
	struct vnet_guard g;

	if (vnet_pins_gone(name))
		return 0; /* gone: no series, and no status read */
	if (!vnet_status(name, &st, err) && !st.present)
		return 0; /* gone: no series */
	if (err->msg[0])
		return -1;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (!st.info.netns_ino ||
	    vnet_netns_name(st.info.netns_ino, d->netns, sizeof(d->netns)))
		d->netns[0] = '\0';
	/* no vm map (an older attach) or unreadable: no label */
	if (vnet_vm_get(name, vm, NULL))
		vm[0] = '\0';
	prom_vm_label(d->vm, sizeof(d->vm), vm);
	if (vnet_stats_read(name, &d->snap, err))
		return -1;
	d->served = st.info.vnetd_socket[0] != '\0';
	d->dp = stats_dp_read(name);
	d->guard_ok = !vnet_guard_get(name, &g, d->guard, NULL);
	return 1;
}

/* the exporter: its devices kept open between scrapes (prom_cache.c) */
static bool keep_open;

void stats_prometheus_keep_open(void)
{
	keep_open = true;
}

/*
 * N devices' room, zeroed; the exporter keeps it from scrape to scrape
 * (a snapshot is 74 KB: fresh pages for 256 taps cost more than reading
 * them)
 */
static struct prom_dev *devs_get(int n)
{
	static struct prom_dev *kept;
	static int room;
	struct prom_dev *d;

	if (!keep_open)
		return calloc(n ? n : 1, sizeof(*kept));
	/* room for one at least: no device attached is a scrape too */
	if (n > room || !kept) {
		d = realloc(kept, sizeof(*kept) * (size_t)(n ? n : 1));
		if (!d)
			return NULL;
		kept = d;
		room = n ? n : 1;
	}
	return kept;
}

int stats_prometheus(FILE *f, char (*names)[IF_NAMESIZE], int n, int only_queue,
		     bool lenient)
{
	struct vnet_err err = {};
	struct prom_dev *devs;
	int i, k = 0, ret = 0, left_out = 0, r;

	po = f;
	devs = devs_get(n);
	if (!devs)
		return cli_error("out of memory");
	if (keep_open)
		prom_cache_begin();
	for (i = 0; i < n; i++) {
		struct prom_dev *d = &devs[k];

		r = keep_open ? prom_cache_read(names[i], d) : -1;
		if (r < 0) {
			if (!d->dp_mapped)
				free(d->dp);
			memset(d, 0, sizeof(*d));
			r = read_dev(names[i], d, &err);
		}
		if (!r)
			continue;
		if (r < 0 && !lenient) {
			ret = cli_error("%s", err.msg);
			goto out;
		}
		if (r < 0) {
			skipped(err.msg);
			err.msg[0] = '\0';
			left_out++;
			continue;
		}
		/* a tap no vnetd serves (vnetctl attach): no datapath zeros */
		if (d->dp && !d->served && !dp_any(d->dp)) {
			if (!d->dp_mapped)
				free(d->dp);
			d->dp = NULL;
		}
		find_rows(d, only_queue);
		k++;
	}
	if (keep_open)
		prom_cache_end();
	print_info(devs, k);
	print_families(devs, k, only_queue);
	print_guard(devs, k);
	fflush(po);
	if (lenient) {
		skipped_say();
		ret = left_out;
	}
out:
	for (i = 0; i < k; i++)
		if (!devs[i].dp_mapped)
			free(devs[i].dp);
	if (!keep_open)
		free(devs);
	return ret;
}
