// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * evstat: the tables of `make evidence` (bench/evidence.sh) from its raw
 * measurements.
 *
 *   evstat --dir DIR      read DIR/results.tsv and DIR/machine.tsv, print
 *                         the summary (markdown) and write DIR/TABLE.dat and
 *                         DIR/TABLE.gp (gnuplot scripts that draw PNG plots)
 *   evstat --syscall-ns   the cost of a null syscall here, in ns (median
 *                         of 9 runs of 200000 getppid())
 *   evstat --wake-us      what one thread waking another costs here, in
 *                         us per wake-up: "SAME OTHER", two threads
 *                         passing a token through eventfds on one CPU, and
 *                         on CPUs 0 and 1 (the median of 5 runs of 2000
 *                         round trips each); every hop of a backend's path
 *                         is one such wake-up
 *   evstat --ratios BOUND paired measurements on stdin, one line per
 *                         repetition "KEY A B"; prints per KEY (in the
 *                         order of first appearance) "KEY n min median max
 *                         p_below p_above" of the ratios A/B: p_below is the
 *                         one-sided Wilcoxon signed-rank p of "the ratios are
 *                         centred below BOUND", p_above of "above BOUND"
 *                         (bench/bench_vnetd_rate.sh, bench_vnetd_scale.sh);
 *                         a line whose A or B is not a positive number is
 *                         left out
 *
 * results.tsv: TABLE WORKLOAD ARM REP METRIC VALUE, tab separated.  Every
 * cell is median [min..max] over the repetitions; ratios are of medians,
 * to the tap arm (QEMU's own backend) of the same table; p is the two-sided
 * p-value of Welch's t-test against the tap arm's repetitions.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "stats.h"

#define MAX_ROWS 65536
#define MAX_REPS 64
#define NAME 32

struct row {
	char table[NAME], wl[NAME], arm[NAME], metric[NAME];
	int rep;
	double v;
};

static struct row rows[MAX_ROWS];
static int nrows;
static double secs = 3;

static const char *const arms[] = { "tap",      "vnetd", "nocoal", "always",
				    "nobypass", "adaptive", "dpdk", "batch1" };
#define NR_ARMS (int)(sizeof(arms) / sizeof(arms[0]))
static const char *const wls[] = { "sw64",   "sw256",	 "sw1024",
				   "sw4096", "bulk-tx",	 "bulk-rx",
				   "rr64",   "udp-rr",	 "rr-sparse",
				   "udp-sparse", "rr-under-bulk", "rr-under-bulk-tx",
				   "udp64" };
/* the request/response workloads: round trips, per 1000 transactions */
static const char *const rrs[] = { "rr64", "udp-rr", "rr-sparse", "udp-sparse",
				   "rr-under-bulk", "rr-under-bulk-tx" };
#define NR_RRS (int)(sizeof(rrs) / sizeof(rrs[0]))

static int is_rr(const char *w)
{
	int i;

	for (i = 0; i < NR_RRS; i++)
		if (!strcmp(w, rrs[i]))
			return 1;
	return 0;
}
#define NR_WLS (int)(sizeof(wls) / sizeof(wls[0]))

/* --- statistics ---------------------------------------------------------- */

struct sample {
	double v[MAX_REPS];
	int n;
};

static double median(const struct sample *s)
{
	return stats_median(s->v, s->n);
}

static void minmax(const struct sample *s, double *lo, double *hi)
{
	stats_minmax(s->v, s->n, lo, hi);
}

/* Welch's t-test, two-sided p; 1 when it cannot tell (n < 2) */
static double welch_p(const struct sample *x, const struct sample *y)
{
	return stats_welch_p(x->v, x->n, y->v, y->n);
}

/* one-sample t-test of mean 0, two-sided p; 1 when it cannot tell */
static double one_sample_p(const struct sample *x)
{
	return stats_one_sample_p(x->v, x->n);
}

/* --- the measurements -------------------------------------------------------- */

static int load(const char *dir)
{
	char path[4096], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/results.tsv", dir);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "evstat: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) && nrows < MAX_ROWS) {
		struct row *r = &rows[nrows];

		if (sscanf(line, "%31s %31s %31s %d %31s %lf", r->table, r->wl,
			   r->arm, &r->rep, r->metric, &r->v) == 6)
			nrows++;
	}
	fclose(f);
	return 0;
}

/* metric of (table, workload, arm) per repetition; derived ones computed */
static double raw(const char *t, const char *w, const char *a, int rep,
		  const char *m, int *ok)
{
	int i;

	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		if (r->rep == rep && !strcmp(r->table, t) && !strcmp(r->wl, w) &&
		    !strcmp(r->arm, a) && !strcmp(r->metric, m)) {
			*ok = 1;
			return r->v;
		}
	}
	*ok = 0;
	return 0;
}

static double metric(const char *t, const char *w, const char *a, int rep,
		     const char *m, int *ok)
{
	double v, u;
	int ok2;

	/* per MB moved: interrupts, backend CPU ms */
	if (!strcmp(m, "irq_per_mb") || !strcmp(m, "cpu_ms_per_mb") ||
	    !strcmp(m, "cs_per_mb")) {
		v = raw(t, w, a, rep, !strcmp(m, "irq_per_mb") ? "irqs" :
				      !strcmp(m, "cs_per_mb")  ? "ctxsw" :
								 "backend_cpu_s",
			ok);
		u = raw(t, w, a, rep, "mbps", &ok2);
		if (!*ok || !ok2 || u <= 0) {
			*ok = 0;
			return 0;
		}
		if (!strcmp(m, "cpu_ms_per_mb"))
			v *= 1000;
		return v / (u * secs / 8);
	}
	/* per 1000 transactions or frames */
	if (!strcmp(m, "irq_per_k") || !strcmp(m, "cs_per_k")) {
		v = raw(t, w, a, rep, m[0] == 'i' ? "irqs" : "ctxsw", ok);
		if (is_rr(w)) {
			/* the transactions of the run (sparse ones run longer) */
			u = raw(t, w, a, rep, "rr_msgs", &ok2);
			if (!ok2)
				u = raw(t, w, a, rep, "rr_per_s", &ok2) * secs;
		} else {
			u = raw(t, w, a, rep, "udp_fps", &ok2) * secs;
		}
		if (!*ok || !ok2 || u <= 0) {
			*ok = 0;
			return 0;
		}
		return v * 1000 / u;
	}
	return raw(t, w, a, rep, m, ok);
}

static int sample_of(const char *t, const char *w, const char *a,
		     const char *m, struct sample *s)
{
	int rep, ok;

	s->n = 0;
	for (rep = 1; rep <= MAX_REPS && s->n < MAX_REPS; rep++) {
		double v = metric(t, w, a, rep, m, &ok);

		if (ok)
			s->v[s->n++] = v;
	}
	return s->n;
}

static int has_table(const char *t)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].table, t))
			return 1;
	return 0;
}

static int has_arm(const char *t, const char *w, const char *a)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].table, t) && !strcmp(rows[i].wl, w) &&
		    !strcmp(rows[i].arm, a))
			return 1;
	return 0;
}

static void fmt_num(char *buf, size_t len, double v)
{
	if (fabs(v) >= 100)
		snprintf(buf, len, "%.0f", v);
	else if (fabs(v) >= 10)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.2f", v);
}

static double metric(const char *t, const char *w, const char *a, int rep,
		     const char *m, int *ok);

/*
 * Per repetition, ARM's value over BASE's of the same repetition (the arms
 * of a repetition ran back to back, so the drift of the machine between
 * repetitions cancels): median [min..max] of the ratios, and the p-value
 * of a one-sample t-test of their logarithms (a paired t-test).
 */
static void paired(const char *t, const char *w, const char *arm,
		   const char *base, const char *m)
{
	struct sample r, l;
	double lo, hi;
	int rep, ok1, ok2, i;

	r.n = 0;
	for (rep = 1; rep <= MAX_REPS; rep++) {
		double a = metric(t, w, arm, rep, m, &ok1);
		double b = metric(t, w, base, rep, m, &ok2);

		if (ok1 && ok2 && a > 0 && b > 0)
			r.v[r.n++] = a / b;
	}
	if (r.n < 2)
		return;
	l.n = r.n;
	for (i = 0; i < r.n; i++)
		l.v[i] = log(r.v[i]);
	minmax(&r, &lo, &hi);
	printf("; per rep %.2fx [%.2f..%.2f] p=%.2g", median(&r), lo, hi,
	       one_sample_p(&l));
}

static const char *cur_t, *cur_w, *cur_arm, *cur_m;

/* one cell: median [min..max], and against BASE: ratio, p */
static void cell(const struct sample *s, const struct sample *base)
{
	char m[32], lo[32], hi[32];
	double a, b, bm;

	if (!s->n) {
		printf(" – |");
		return;
	}
	minmax(s, &a, &b);
	fmt_num(m, sizeof(m), median(s));
	fmt_num(lo, sizeof(lo), a);
	fmt_num(hi, sizeof(hi), b);
	printf(" %s [%s..%s]", m, lo, hi);
	if (base && base != s && base->n) {
		bm = median(base);
		if (bm != 0)
			printf(" **%.2fx**", median(s) / bm);
		printf(" p=%.3g", welch_p(s, base));
		if (cur_t)
			paired(cur_t, cur_w, cur_arm, "tap", cur_m);
	}
	printf(" |");
}

struct col {
	const char *metric, *title;
};

/* a table: one row per workload (or arm), one column per arm */
static void arm_table(const char *t, const char *title, const char *const *wl,
		      int nwl, const char *m)
{
	int i, j, any;

	printf("\n**%s**\n\n| workload |", title);
	for (j = 0; j < NR_ARMS; j++) {
		for (i = 0, any = 0; i < nwl; i++)
			any |= has_arm(t, wl[i], arms[j]);
		if (any)
			printf(" %s |", arms[j]);
	}
	printf("\n|---|");
	for (j = 0; j < NR_ARMS; j++) {
		for (i = 0, any = 0; i < nwl; i++)
			any |= has_arm(t, wl[i], arms[j]);
		if (any)
			printf("---|");
	}
	printf("\n");
	for (i = 0; i < nwl; i++) {
		struct sample base, s;

		if (!has_arm(t, wl[i], "tap") && !has_arm(t, wl[i], "vnetd"))
			continue;
		sample_of(t, wl[i], "tap", m, &base);
		printf("| %s |", wl[i]);
		for (j = 0; j < NR_ARMS; j++) {
			int k;

			for (k = 0, any = 0; k < nwl; k++)
				any |= has_arm(t, wl[k], arms[j]);
			if (!any)
				continue;
			if (!has_arm(t, wl[i], arms[j])) {
				printf(" |");
				continue;
			}
			sample_of(t, wl[i], arms[j], m, &s);
			cur_t = t;
			cur_w = wl[i];
			cur_arm = arms[j];
			cur_m = m;
			cell(&s, j ? &base : NULL);
			cur_t = NULL;
		}
		printf("\n");
	}
}

static void compare(const char *t, const char *w, const char *a,
		    const char *b, const char *m, const char *what)
{
	struct sample x, y;

	if (!sample_of(t, w, a, m, &x) || !sample_of(t, w, b, m, &y))
		return;
	printf("- %s (%s, %s %s): %s %.2f vs %s %.2f: **%.2fx**, p=%.3g",
	       what, t, w, m, a, median(&x), b, median(&y),
	       median(&y) ? median(&x) / median(&y) : 0, welch_p(&x, &y));
	paired(t, w, a, b, m);
	printf("\n");
}

/*
 * Per repetition, ARM's value over BASE's: the ratios in R; false when
 * fewer than two repetitions have both.
 */
static bool ratios(const char *t, const char *w, const char *arm,
		   const char *base, const char *m, struct sample *r)
{
	int rep, ok1, ok2;

	r->n = 0;
	for (rep = 1; rep <= MAX_REPS; rep++) {
		double a = metric(t, w, arm, rep, m, &ok1);
		double b = metric(t, w, base, rep, m, &ok2);

		if (ok1 && ok2 && a > 0 && b > 0)
			r->v[r->n++] = a / b;
	}
	return r->n >= 2;
}

/*
 * One target: the per-repetition ratio of ARM over BASE on (T, W, M) must
 * be at most (le) or at least (!le) BOUND.  Met when the median of the
 * ratios is; p is the paired t-test's of the ratios against 1 (is there a
 * difference between the arms at all).
 */
static void target(const char *t, const char *w, const char *m,
		   const char *arm, const char *base, bool le, double bound,
		   int *met, int *all)
{
	struct sample r, l;
	double lo, hi, med;
	bool ok;
	int i;

	if (!ratios(t, w, arm, base, m, &r))
		return;
	l.n = r.n;
	for (i = 0; i < r.n; i++)
		l.v[i] = log(r.v[i]);
	med = median(&r);
	minmax(&r, &lo, &hi);
	ok = le ? med <= bound : med >= bound;
	*met += ok;
	(*all)++;
	printf("| %s | %s | %s | %s / %s | %s %.2fx | %.2fx [%.2f..%.2f] | %.2g | %s |\n",
	       t, w, m, arm, base, le ? "<=" : ">=", bound, med, lo, hi,
	       one_sample_p(&l), ok ? "met" : "**not met**");
}

/* what the defaults must do against the stock path and coalescing off */
static void targets(void)
{
	static const char *const lat[] = { "udp-rr", "rr-sparse", "udp-sparse",
					   "rr64" };
	static const char *const streams[] = { "sw64", "sw256", "sw1024",
					       "sw4096", "bulk-tx", "bulk-rx" };
	int met = 0, all = 0;
	unsigned int i;

	if (!has_arm("quiet", "sw64", "vnetd") && !has_arm("quiet", "rr64", "vnetd"))
		return;
	printf("\n### targets: vnetd on its defaults\n\n"
	       "Per repetition, the vnetd arm's value over the other arm's of the same repetition; met when the median ratio is within the bound; p: paired t-test of the ratios against 1.\n\n"
	       "| table | workload | metric | arms | target | per rep | p | |\n|---|---|---|---|---|---|---|---|\n");
	for (i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
		target("quiet", lat[i], "rtt_p50", "vnetd", "tap", true, 1.05, &met, &all);
		target("quiet", lat[i], "rtt_p99", "vnetd", "tap", true, 1.10, &met, &all);
		target("quiet", lat[i], "rtt_p50", "vnetd", "nocoal", true, 1.05, &met, &all);
		target("quiet", lat[i], "rtt_p99", "vnetd", "nocoal", true, 1.05, &met, &all);
	}
	target("quiet", "rr-under-bulk", "rtt_p99", "vnetd", "tap", true, 1.10, &met, &all);
	target("quiet", "rr-under-bulk-tx", "rtt_p99", "vnetd", "tap", true, 1.10, &met, &all);
	target("quiet", "sw64", "mbps", "vnetd", "tap", false, 2.0, &met, &all);
	target("quiet", "sw256", "mbps", "vnetd", "tap", false, 1.5, &met, &all);
	target("quiet", "bulk-tx", "mbps", "vnetd", "tap", false, 1.0, &met, &all);
	target("quiet", "bulk-rx", "mbps", "vnetd", "tap", false, 1.0, &met, &all);
	for (i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
		target("quiet", streams[i], "irq_per_mb", "vnetd", "tap", true, 0.5, &met, &all);
	target("hog", "sw64", "mbps", "vnetd", "tap", false, 1.0, &met, &all);
	for (i = 0; i < sizeof(lat) / sizeof(lat[0]); i++)
		target("hog", lat[i], "rtt_p50", "vnetd", "tap", true, 1.10, &met, &all);
	target("hog", "rr-under-bulk", "rtt_p50", "vnetd", "tap", true, 1.10, &met, &all);
	printf("\n%d of %d targets met.\n", met, all);
}

static void plots(const char *dir, const char *t)
{
	static const int sizes[] = { 64, 256, 1024, 4096 };
	char path[4096];
	int i, j, k, col[NR_ARMS], ncol = 0;
	FILE *f;

	/* the arms with small-write data, in the table's order */
	for (j = 0; j < NR_ARMS; j++)
		if (has_arm(t, "sw64", arms[j]))
			col[ncol++] = j;
	snprintf(path, sizeof(path), "%s/%s-sw.dat", dir, t);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "# write size, then per arm: median min max (Mbit/s)\n");
	for (i = 0; i < 4; i++) {
		char w[16];

		snprintf(w, sizeof(w), "sw%d", sizes[i]);
		fprintf(f, "%d", sizes[i]);
		for (k = 0; k < ncol; k++) {
			struct sample s;
			double lo, hi;

			if (!sample_of(t, w, arms[col[k]], "mbps", &s)) {
				fprintf(f, " NaN NaN NaN");
				continue;
			}
			minmax(&s, &lo, &hi);
			fprintf(f, " %.3f %.3f %.3f", median(&s), lo, hi);
		}
		fprintf(f, "\n");
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s-rr.dat", dir, t);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "# arm p50 p50min p50max p99 p99min p99max (us)\n");
	for (j = 0; j < NR_ARMS; j++) {
		struct sample s50, s99;
		double a, b, c, d;

		if (!sample_of(t, "rr64", arms[j], "rtt_p50", &s50) ||
		    !sample_of(t, "rr64", arms[j], "rtt_p99", &s99))
			continue;
		minmax(&s50, &a, &b);
		minmax(&s99, &c, &d);
		fprintf(f, "%s %.2f %.2f %.2f %.2f %.2f %.2f\n", arms[j],
			median(&s50), a, b, median(&s99), c, d);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s.gp", dir, t);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "set terminal pngcairo size 800,480 font 'sans,10'\n"
		   "set output '%s-sw.png'\n"
		   "set title 'TCP guest -> host by write size (%s): median, min..max'\n"
		   "set logscale xy\nset xlabel 'write size (bytes)'\n"
		   "set ylabel 'Mbit/s'\nset key top left\nset grid\n"
		   "set xtics (64, 256, 1024, 4096)\nplot ",
		t, t);
	for (k = 0; k < ncol; k++)
		fprintf(f, "%s'%s-sw.dat' using 1:%d:%d:%d with yerrorlines title '%s'",
			k ? ", " : "", t, 2 + 3 * k, 3 + 3 * k, 4 + 3 * k,
			arms[col[k]]);
	fprintf(f, "\n\nunset logscale\nset output '%s-rr.png'\n"
		   "set title 'TCP RR 64 B round trip (%s): median, min..max'\n"
		   "set style data histogram\nset style histogram errorbars gap 2 lw 1\n"
		   "set style fill solid 0.6 border -1\nset xlabel 'arm'\n"
		   "set ylabel 'round trip (us)'\nset xtics auto\nset yrange [0:*]\n"
		   "plot '%s-rr.dat' using 2:3:4:xtic(1) title 'p50', '' using 5:6:7 title 'p99'\n",
		t, t, t);
	fclose(f);
}

static void machine(const char *dir)
{
	char path[4096], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/machine.tsv", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	printf("| machine | |\n|---|---|\n");
	while (fgets(line, sizeof(line), f)) {
		char *k, *v;

		line[strcspn(line, "\n")] = 0;
		k = strchr(line, '\t');
		if (!k)
			continue;
		k++;
		v = strchr(k, '\t');
		if (!v)
			continue;
		*v++ = 0;
		printf("| %s | %s |\n", k, v);
		if (!strcmp(k, "secs"))
			secs = atof(v);
	}
	fclose(f);
}

static void report(const char *dir)
{
	static const char *const stream[] = { "sw64", "sw256", "sw1024",
					      "sw4096", "bulk-tx", "bulk-rx" };
	static const char *const udp[] = { "udp64" };
	static const char *const perk[] = { "rr64",	  "udp-rr",
					    "rr-sparse",  "udp-sparse",
					    "rr-under-bulk", "rr-under-bulk-tx",
					    "udp64" };
	static const char *const tables[] = { "quiet", "hog" };
	unsigned int t;

	machine(dir);
	for (t = 0; t < 2; t++) {
		const char *tb = tables[t];

		if (!has_table(tb))
			continue;
		printf("\n### %s%s\n", tb,
		       t ? ": a busy loop on CPU 1" : ": nothing else running");
		printf("\nEach cell: median [min..max] over the repetitions; "
		       "the other arms also: ratio of medians to `tap` and Welch's p, "
		       "then the per-repetition ratios to `tap` (median [min..max]) "
		       "and their paired t-test's p.\n");
		arm_table(tb, "TCP throughput, Mbit/s", stream, 6, "mbps");
		arm_table(tb, "request/response 64 B round trip p50, us", rrs,
			  NR_RRS, "rtt_p50");
		arm_table(tb, "request/response 64 B round trip p99, us", rrs,
			  NR_RRS, "rtt_p99");
		arm_table(tb, "request/response 64 B round trip mean, us", rrs,
			  NR_RRS, "rtt_avg");
		arm_table(tb, "rr-under-bulk: the bulk stream's Mbit/s (rx: host -> guest, tx: guest -> host)",
			  (const char *const[]){ "rr-under-bulk",
						 "rr-under-bulk-tx" },
			  2, "bulk_mbps");
		arm_table(tb, "UDP 64 B frames/s into the tap", udp, 1, "udp_fps");
		arm_table(tb, "guest interrupts per MB", stream, 6, "irq_per_mb");
		arm_table(tb, "guest interrupts per 1000 transactions (RR) / frames (UDP)",
			  perk, 6, "irq_per_k");
		arm_table(tb, "mean guest-TX frame size, bytes (tap rx_bytes / rx_packets)",
			  stream, 6, "tx_frame_size");
		arm_table(tb, "host CPU outside the vCPU, ms per MB (QEMU's main thread + vnetd)",
			  stream, 6, "cpu_ms_per_mb");
		arm_table(tb, "context switches per MB (QEMU's main thread + vnetd's threads)",
			  stream, 6, "cs_per_mb");
		arm_table(tb, "context switches per 1000 transactions (RR) / frames (UDP)",
			  perk, 6, "cs_per_k");
		arm_table(tb, "guest kicks vnetd received",
			  wls, NR_WLS, "kicks");
		arm_table(tb, "call signals (vnetd's notify_sent, both directions)",
			  wls, NR_WLS, "signals");
		arm_table(tb, "guest RX frames through a bounce slot, % (vnetd's bounced / frames)",
			  stream, 6, "rx_bounced_pct");
		printf("\n");
		compare(tb, "rr64", "nobypass", "vnetd", "rtt_p50",
			"bypass off vs on, same coalescing values");
		compare(tb, "rr64", "nobypass", "vnetd", "rtt_p99",
			"bypass off vs on, same coalescing values");
		compare(tb, "rr64", "nocoal", "vnetd", "rtt_p50",
			"coalescing off vs the defaults");
		compare(tb, "sw64", "nocoal", "vnetd", "mbps",
			"coalescing off vs the defaults");
		compare(tb, "udp64", "batch1", "vnetd", "udp_fps",
			"vnetd TX batch 1 vs its default");
		plots(dir, tb);
	}
	targets();
}

static int syscall_ns(void)
{
	double runs[9];
	int r, i;

	for (r = 0; r < 9; r++) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		for (i = 0; i < 200000; i++)
			syscall(SYS_getppid);
		clock_gettime(CLOCK_MONOTONIC, &b);
		runs[r] = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) /
			  200000;
	}
	qsort(runs, 9, sizeof(double), stats_cmp_double);
	printf("%.0f\n", runs[4]);
	return 0;
}

/* --wake-us: two threads pass a token through two eventfds */
#define WAKE_ROUNDS 2000

struct wake_pair {
	int to_peer, to_main;
	int cpu;		/* the peer's */
};

static bool pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *wake_peer(void *arg)
{
	struct wake_pair *w = arg;
	uint64_t v;
	int i;

	pin_self(w->cpu);
	for (i = 0; i < WAKE_ROUNDS; i++) {
		if (read(w->to_peer, &v, sizeof(v)) != sizeof(v))
			break;
		v = 1;
		if (write(w->to_main, &v, sizeof(v)) != sizeof(v))
			break;
	}
	return NULL;
}

/* us per wake-up with the peer on CPU PEER, this thread on CPU 0; <0: error */
static double wake_once(int peer)
{
	struct wake_pair w = { .cpu = peer };
	struct timespec a, b;
	pthread_t t;
	uint64_t v = 1;
	double us = -1;
	int i;

	w.to_peer = eventfd(0, EFD_CLOEXEC);
	w.to_main = eventfd(0, EFD_CLOEXEC);
	if (w.to_peer < 0 || w.to_main < 0 || !pin_self(0) ||
	    pthread_create(&t, NULL, wake_peer, &w))
		goto out;
	/* the peer settles on its CPU and sleeps in read() */
	usleep(10000);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < WAKE_ROUNDS; i++) {
		v = 1;
		if (write(w.to_peer, &v, sizeof(v)) != sizeof(v) ||
		    read(w.to_main, &v, sizeof(v)) != sizeof(v))
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (i < WAKE_ROUNDS) {
		/* unblock the peer whatever it waits for */
		v = WAKE_ROUNDS;
		if (write(w.to_peer, &v, sizeof(v)) < 0)
			v = 0;
	}
	pthread_join(t, NULL);
	if (i == WAKE_ROUNDS)
		us = ((b.tv_sec - a.tv_sec) * 1e6 +
		      (b.tv_nsec - a.tv_nsec) / 1e3) / (2.0 * WAKE_ROUNDS);
out:
	if (w.to_peer >= 0)
		close(w.to_peer);
	if (w.to_main >= 0)
		close(w.to_main);
	return us;
}

static int wake_us(void)
{
	double runs[2][5];
	int c, r;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "Error: --wake-us needs CPUs 0 and 1\n");
		return 1;
	}
	for (r = 0; r < 5; r++)
		for (c = 0; c < 2; c++) {
			runs[c][r] = wake_once(c);
			if (runs[c][r] < 0) {
				fprintf(stderr, "Error: --wake-us: %s\n",
					strerror(errno));
				return 1;
			}
		}
	qsort(runs[0], 5, sizeof(double), stats_cmp_double);
	qsort(runs[1], 5, sizeof(double), stats_cmp_double);
	printf("%.1f %.1f\n", runs[0][2], runs[1][2]);
	return 0;
}

#define MAX_KEYS 256

/* evstat --ratios BOUND: per-repetition ratios and their tests */
static int paired_ratios(const char *bound_s)
{
	static char keys[MAX_KEYS][NAME];
	static struct sample r[MAX_KEYS];
	char line[512], key[NAME], *end;
	double bound, a, b, d[MAX_REPS], lo, hi;
	int nkeys = 0, k, i;

	bound = strtod(bound_s, &end);
	if (end == bound_s || *end || !(bound > 0)) {
		fprintf(stderr, "Error: --ratios %s: the bound must be a positive number, e.g. 1.05\n",
			bound_s);
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%31s %lf %lf", key, &a, &b) != 3 ||
		    !(a > 0) || !(b > 0) || isinf(a) || isinf(b))
			continue;
		for (k = 0; k < nkeys && strcmp(keys[k], key); k++)
			;
		if (k == nkeys) {
			if (nkeys == MAX_KEYS)
				continue;
			snprintf(keys[nkeys++], NAME, "%s", key);
		}
		if (r[k].n < MAX_REPS)
			r[k].v[r[k].n++] = a / b;
	}
	for (k = 0; k < nkeys; k++) {
		minmax(&r[k], &lo, &hi);
		for (i = 0; i < r[k].n; i++)
			d[i] = bound - r[k].v[i];
		printf("%s %d %.3f %.3f %.3f %.3g", keys[k], r[k].n, lo,
		       median(&r[k]), hi, stats_wilcoxon_greater(d, r[k].n));
		for (i = 0; i < r[k].n; i++)
			d[i] = r[k].v[i] - bound;
		printf(" %.3g\n", stats_wilcoxon_greater(d, r[k].n));
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--syscall-ns"))
		return syscall_ns();
	if (argc == 2 && !strcmp(argv[1], "--wake-us"))
		return wake_us();
	if (argc == 3 && !strcmp(argv[1], "--ratios"))
		return paired_ratios(argv[2]);
	if (argc != 3 || strcmp(argv[1], "--dir")) {
		fprintf(stderr, "Usage: evstat --dir DIR | --syscall-ns | --wake-us | --ratios BOUND\n");
		return 2;
	}
	if (load(argv[2]))
		return 1;
	report(argv[2]);
	return 0;
}
