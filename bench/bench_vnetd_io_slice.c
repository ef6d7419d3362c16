// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_vnetd_io slice: time-sliced A/B measurement of processes that
 * write frames into taps.  Every arm runs at the same time as a process;
 * the slicer lets one at a time run (SIGCONT, the rest SIGSTOPped) for a
 * slice, in rounds of every arm once (the order rotating, and reversed
 * every other cycle, between rounds), drops a settle time after each
 * switch and reads the arm's tap counter (rx_packets) and the CPU time of
 * its backend (/proc/PID/task/TID/schedstat, ns) at the start and the end of
 * the rest of its slice.  The machine's noise (other tenants slowing a
 * CPU for some 100 ms at a time) then hits the arms of a round alike, and
 * per-round ratios compare them.
 */
#include <dirent.h>
#include <math.h>
#include <sys/prctl.h>

#include "bench_vnetd_io.h"
#include "stats.h"

struct arm {
	char name[32], dev[IFNAMSIZ];
	pid_t stop;		/* what SIGSTOP/SIGCONT switch */
	pid_t cpu_pid, cpu_tid;	/* whose CPU time: all threads, or one */
	double *fps, *cpu, *wall;
	double *wait;		/* share of the slice its threads waited for a CPU */
	uint64_t frames;	/* over the recorded rounds */
	double cpu_total;
	uint64_t steal, ticks;	/* /proc/stat, all CPUs, recorded rounds */
};

static struct arm arms[SLICE_ARMS];
static int narms;

/* never leave an arm stopped, whatever ends the slicer */
static void cont_all(void)
{
	int i;

	for (i = 0; i < narms; i++)
		kill(arms[i].stop, SIGCONT);
}

/* "PID" or "PID/TID": CPU seconds of all the threads of PID, or of TID */
static void parse_cpu(struct arm *a, const char *s)
{
	char path[64], *end;

	a->cpu_pid = strtol(s, &end, 10);
	if (*end == '/')
		a->cpu_tid = strtol(end + 1, &end, 10);
	if (*end || a->cpu_pid <= 0 || a->cpu_tid < 0)
		die("--arm %s: CPU must be PID, PID/TID or -", a->name);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", a->cpu_pid,
		 a->cpu_tid ? a->cpu_tid : a->cpu_pid);
	if (access(path, F_OK))
		die("--arm %s: no thread %s", a->name, s);
}

/* NAME:PID:DEV[:CPU] */
static void parse_arm(struct arm *a, const char *spec)
{
	char buf[256], *name, *pid, *dev, *cpu, *end;

	snprintf(buf, sizeof(buf), "%s", spec);
	name = strtok(buf, ":");
	pid = strtok(NULL, ":");
	dev = strtok(NULL, ":");
	cpu = strtok(NULL, ":");
	if (!name || !pid || !dev || strlen(name) >= sizeof(a->name) ||
	    strlen(dev) >= sizeof(a->dev))
		die("--arm %s: want NAME:PID:DEV[:CPU]", spec);
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->dev, sizeof(a->dev), "%s", dev);
	a->stop = strtol(pid, &end, 10);
	if (*end || a->stop <= 1)
		die("--arm %s: bad PID %s", spec, pid);
	if (kill(a->stop, 0))
		die("--arm %s: PID %d: %s", spec, a->stop, strerror(errno));
	if (!cpu)
		a->cpu_pid = a->stop;
	else if (strcmp(cpu, "-"))
		parse_cpu(a, cpu);
}

/* schedstat: ns on a CPU, ns runnable but waiting for one */
static void schedstat_add(const char *path, uint64_t *run, uint64_t *wait)
{
	unsigned long long r, w;
	FILE *f = fopen(path, "r");

	if (!f)
		return;	/* a thread that is gone */
	if (fscanf(f, "%llu %llu", &r, &w) == 2) {
		*run += r;
		*wait += w;
	}
	fclose(f);
}

/* schedstat of thread TID of PID, or (TID 0) summed over its threads */
static void proc_sched(const struct arm *a, pid_t pid, pid_t tid,
		       uint64_t *run, uint64_t *wait)
{
	char path[128];
	struct dirent *e;
	DIR *d;

	*run = *wait = 0;
	if (tid) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat",
			 pid, tid);
		schedstat_add(path, run, wait);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		die("%s (PID %d) is gone: %s", a->name, pid, strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat",
			 pid, e->d_name);
		schedstat_add(path, run, wait);
	}
	closedir(d);
}

/* CPU seconds of the arm's backend, -1 without one */
static double arm_cpu(const struct arm *a)
{
	uint64_t run, wait;

	if (!a->cpu_pid)
		return -1;
	proc_sched(a, a->cpu_pid, a->cpu_tid, &run, &wait);
	return run / 1e9;
}

/*
 * seconds the arm's threads waited for a CPU: all threads of the process
 * that is stopped and continued, and of the backend if that is another
 * (vnetd for its guest)
 */
static double arm_wait(const struct arm *a)
{
	uint64_t run, wait, w2 = 0;

	proc_sched(a, a->stop, 0, &run, &wait);
	if (a->cpu_pid && a->cpu_pid != a->stop)
		proc_sched(a, a->cpu_pid, 0, &run, &w2);
	return (wait + w2) / 1e9;
}

/* steal and all ticks of the machine's CPUs so far (USER_HZ) */
static void cpu_ticks(uint64_t *steal, uint64_t *all)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int i;

	*steal = *all = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
		for (i = 0; i < 8; i++)
			*all += v[i];
		*steal = v[7];
	}
	fclose(f);
}

static void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (time_t)t) * 1e9) };

	while (!stop &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
		       EINTR)
		;
}

static void signal_arm(const struct arm *a, int sig)
{
	if (kill(a->stop, sig))
		die("%s (PID %d) is gone: %s", a->name, a->stop,
		    strerror(errno));
}

/* one slice of arm A from T (the switch); records into slot R if >= 0 */
static double one_slice(struct arm *a, const struct opts *o, double t, int r)
{
	uint64_t c0, c1, s0, s1, a0, a1;
	double t0, t1, p0, p1, w0, w1;

	if (t < now_s())	/* the slicer was held up: from now */
		t = now_s();
	signal_arm(a, SIGCONT);
	sleep_until(t + o->settle_ms / 1e3);
	p0 = arm_cpu(a);
	w0 = arm_wait(a);
	cpu_ticks(&s0, &a0);
	/* the window is the counter's: its clock read right around it */
	t0 = now_s();
	c0 = link_counter(a->dev, "rx_packets");
	t0 = (t0 + now_s()) / 2;
	sleep_until(t + o->slice_ms / 1e3);
	t1 = now_s();
	c1 = link_counter(a->dev, "rx_packets");
	t1 = (t1 + now_s()) / 2;
	p1 = arm_cpu(a);
	w1 = arm_wait(a);
	cpu_ticks(&s1, &a1);
	signal_arm(a, SIGSTOP);
	if (r >= 0) {
		a->fps[r] = (c1 - c0) / (t1 - t0);
		a->wall[r] = t1 - t0;
		a->cpu[r] = p0 >= 0 ? p1 - p0 : -1;
		a->wait[r] = (w1 - w0) / (t1 - t0);
		a->frames += c1 - c0;
		a->cpu_total += p0 >= 0 ? p1 - p0 : 0;
		a->steal += s1 - s0;
		a->ticks += a1 - a0;
	}
	return t + o->slice_ms / 1e3;
}

static void fmt_rate(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.3fM", v / 1e6);
	else
		snprintf(buf, len, "%.1fk", v / 1e3);
}

/* per-round ratios of arm I over arm J (frames/s, or per CPU-second) */
static int ratios(int i, int j, int n, const bool *use, bool per_cpu,
		  double *lr)
{
	int r, m = 0;

	for (r = 0; r < n; r++) {
		double x = arms[i].fps[r], y = arms[j].fps[r];

		if (!use[r])
			continue;
		if (per_cpu) {
			if (arms[i].cpu[r] <= 0 || arms[j].cpu[r] <= 0)
				continue;
			x *= arms[i].wall[r] / arms[i].cpu[r];
			y *= arms[j].wall[r] / arms[j].cpu[r];
		}
		if (x > 0 && y > 0)
			lr[m++] = log(x / y);
	}
	return m;
}

/* the q-quantile of arm A's slice rates over the rounds in USE */
static double arm_quantile(const struct arm *a, int n, const bool *use,
			   double q)
{
	double *v = calloc((size_t)n, sizeof(double)), x;
	int r, m = 0;

	if (!v)
		die("out of memory");
	for (r = 0; r < n; r++)
		if (use[r])
			v[m++] = a->fps[r];
	x = m ? stats_quantile(v, m, q) : 0;
	free(v);
	return x;
}

static void pair_line(int i, int j, int n, const bool *use, bool per_cpu,
		      double target)
{
	double *lr = calloc((size_t)n, sizeof(double));
	double *d = calloc((size_t)n, sizeof(double));
	double lo, hi, med, pge, plt, sge;
	char name[80];
	int m, k;

	if (!lr || !d)
		die("out of memory");
	m = ratios(i, j, n, use, per_cpu, lr);
	snprintf(name, sizeof(name), "%s/%s", arms[i].name, arms[j].name);
	if (!m) {
		printf("  %-16s n/a\n", name);
		free(lr);
		free(d);
		return;
	}
	stats_minmax(lr, m, &lo, &hi);
	med = stats_median(lr, m);
	for (k = 0; k < m; k++)
		d[k] = lr[k] - log(target);
	pge = stats_wilcoxon_greater(d, m);
	sge = stats_sign_greater(d, m);
	for (k = 0; k < m; k++)
		d[k] = -d[k];
	plt = stats_wilcoxon_greater(d, m);
	printf("  %-16s %.3f / %.3f / %.3f", name, exp(lo), exp(med),
	       exp(hi));
	if (per_cpu) {
		printf("  totals %.3f",
		       (arms[i].frames / arms[i].cpu_total) /
			       (arms[j].frames / arms[j].cpu_total));
	} else {
		printf("  p90 %.3f", arm_quantile(&arms[i], n, use, 0.9) /
					     arm_quantile(&arms[j], n, use, 0.9));
	}
	printf("  p(>=%.2f) %.2g (sign %.2g)  p(<%.2f) %.2g\n", target, pge,
	       sge, target, plt);
	free(lr);
	free(d);
}

static void summary(const struct opts *o, int n)
{
	char la[64] = "?\n";
	FILE *f = fopen("/proc/loadavg", "r");
	int i, j;

	if (f) {
		if (!fgets(la, sizeof(la), f))
			snprintf(la, sizeof(la), "?\n");
		fclose(f);
	}
	printf("%d rounds of %d arms, %.0f ms slices (%.0f ms settle dropped); load average at the end: %s",
	       n, narms, o->slice_ms, o->settle_ms, la);
	bool *all = calloc((size_t)n, sizeof(bool));
	bool *quiet = calloc((size_t)n, sizeof(bool));
	int r, nq = 0;

	if (!all || !quiet)
		die("out of memory");
	for (r = 0; r < n; r++) {
		all[r] = quiet[r] = true;
		for (i = 0; i < narms; i++)
			if (arms[i].wait[r] > o->max_wait)
				quiet[r] = false;
		nq += quiet[r];
	}
	printf("  %-10s %10s %10s %10s %10s %13s %9s %6s %6s\n", "arm",
	       "min/s", "median/s", "p90/s", "max/s", "frames/CPU-s",
	       "CPU share", "steal", "wait");
	for (i = 0; i < narms; i++) {
		struct arm *a = &arms[i];
		double lo, hi, wall = 0;
		char b[4][24], c[24] = "-", s[24] = "-", st[24] = "-";
		int r;

		for (r = 0; r < n; r++)
			wall += a->wall[r];
		stats_minmax(a->fps, n, &lo, &hi);
		fmt_rate(b[0], sizeof(b[0]), lo);
		fmt_rate(b[1], sizeof(b[1]), stats_median(a->fps, n));
		fmt_rate(b[2], sizeof(b[2]), stats_quantile(a->fps, n, 0.9));
		fmt_rate(b[3], sizeof(b[3]), hi);
		if (a->cpu_total > 0) {
			fmt_rate(c, sizeof(c), a->frames / a->cpu_total);
			snprintf(s, sizeof(s), "%.2f", a->cpu_total / wall);
		}
		if (a->ticks)
			snprintf(st, sizeof(st), "%.3f",
				 (double)a->steal / a->ticks);
		printf("  %-10s %10s %10s %10s %10s %13s %9s %6s %6.3f\n",
		       a->name, b[0], b[1], b[2], b[3], c, s, st,
		       stats_median(a->wait, n));
	}
	printf("(CPU share: the backend's CPU time over its slices' time; steal: the host's\n"
	       "share of all CPUs in them, /proc/stat; wait: median share of a slice the\n"
	       "arm's threads were runnable but waited for a CPU, schedstat)\n");
	printf("per-round ratios, frames/s (min / median / max; p90: ratio of the arms' upper-decile slices;\n"
	       "p: one-sided Wilcoxon signed-rank over the rounds, of the ratio >= or < the target):\n");
	for (i = 0; i < narms; i++)
		for (j = i + 1; j < narms; j++)
			pair_line(i, j, n, all, false, o->target);
	printf("per-round ratios, frames per CPU-second of each arm's backend (totals: ratio over all rounds):\n");
	for (i = 0; i < narms; i++)
		for (j = i + 1; j < narms; j++)
			if (arms[i].cpu_total > 0 && arms[j].cpu_total > 0)
				pair_line(i, j, n, all, true, o->target);
	printf("undisturbed rounds (no arm waited for a CPU more than %.0f%% of its slice): %d of %d\n",
	       o->max_wait * 100, nq, n);
	if (nq >= 5) {
		printf("per-round ratios over them, frames/s:\n");
		for (i = 0; i < narms; i++)
			for (j = i + 1; j < narms; j++)
				pair_line(i, j, n, quiet, false, o->target);
	}
	free(all);
	free(quiet);
}

int do_slice(const struct opts *o)
{
	int i, k, r, n = o->rounds, order[SLICE_ARMS];
	double t;

	if (o->narms < 2 || n < 1 || o->slice_ms <= 0 || o->settle_ms < 0 ||
	    o->settle_ms >= o->slice_ms || o->target <= 0)
		die("slice: --arm at least twice, --rounds >= 1, 0 <= --settle-ms < --slice-ms");
	for (i = 0; i < o->narms; i++) {
		parse_arm(&arms[i], o->arm[i]);
		arms[i].fps = calloc((size_t)n, sizeof(double));
		arms[i].cpu = calloc((size_t)n, sizeof(double));
		arms[i].wall = calloc((size_t)n, sizeof(double));
		arms[i].wait = calloc((size_t)n, sizeof(double));
		if (!arms[i].fps || !arms[i].cpu || !arms[i].wall ||
		    !arms[i].wait)
			die("out of memory");
		narms = i + 1;
	}
	atexit(cont_all);
	signal(SIGHUP, on_stop);
	signal(SIGPIPE, SIG_IGN);	/* a closed stderr must not kill it stopped */
	enter_netns(o->netns);
	prctl(PR_SET_TIMERSLACK, 1UL);
	/*
	 * normal priority on purpose: at SCHED_FIFO the slicer made the arms
	 * with a thread on the guest's CPU (vnetd's guest, the cold
	 * ceiling's toucher) wait for a CPU ~0.65 of their slices
	 */
	for (i = 0; i < narms; i++)
		signal_arm(&arms[i], SIGSTOP);
	t = now_s() + o->settle_ms / 1e3;
	sleep_until(t);
	for (r = -o->warm_rounds; r < n && !stop; r++) {
		int rr = r < 0 ? r + o->warm_rounds : r;

		for (k = 0; k < narms; k++)
			order[k] = (rr + k) % narms;
		if ((rr / narms) % 2)
			for (k = 0; k < narms / 2; k++) {
				int x = order[k];

				order[k] = order[narms - 1 - k];
				order[narms - 1 - k] = x;
			}
		for (k = 0; k < narms && !stop; k++)
			t = one_slice(&arms[order[k]], o, t, r);
		if (r < 0 || stop)
			continue;
		fprintf(stderr, "  round %3d:", r + 1);
		for (i = 0; i < narms; i++) {
			char b[24];

			fmt_rate(b, sizeof(b), arms[i].fps[r]);
			fprintf(stderr, "  %s %s", arms[i].name, b);
			if (arms[i].cpu[r] >= 0)
				fprintf(stderr, " (CPU %.2f)",
					arms[i].cpu[r] / arms[i].wall[r]);
			fprintf(stderr, " w%.2f", arms[i].wait[r]);
		}
		fprintf(stderr, "  order");
		for (k = 0; k < narms; k++)
			fprintf(stderr, "%s%s", k ? "," : " ",
				arms[order[k]].name);
		fputc('\n', stderr);
	}
	cont_all();
	if (stop) {
		fprintf(stderr, "slice: interrupted after %d rounds\n", r);
		return 1;
	}
	summary(o, n);
	return 0;
}
