// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bench_tap: reporting (text and JSON) */
#include "bench_tap.h"
#include "stats.h"
/* ------------------------------------------------------------------ */
/* reporting */

int rate_ratios(struct bench *b, enum size sz, enum cfg a, enum cfg c,
		double *out)
{
	int i;

	for (i = 0; i < b->o.reps; i++)
		out[i] = b->res[sz][a].pps[i] / b->res[sz][c].pps[i];
	return b->o.reps;
}

void cost(struct bench *b, enum size sz, enum cfg a, enum cfg base,
	  double *pct, double *ns)
{
	const struct result *ra = &b->res[sz][a], *rb = &b->res[sz][base];
	int i;

	for (i = 0; i < b->o.reps; i++) {
		pct[i] = (rb->pps[i] / ra->pps[i] - 1) * 100;
		ns[i] = 1e9 / ra->pps[i] - 1e9 / rb->pps[i];
	}
}

void cost_cpu(struct bench *b, enum size sz, enum cfg a, enum cfg base,
	      double *pct)
{
	const struct result *ra = &b->res[sz][a], *rb = &b->res[sz][base];
	int i;

	for (i = 0; i < b->o.reps; i++)
		pct[i] = (rb->cpu_pps[i] / ra->cpu_pps[i] - 1) * 100;
}

const struct cmp_def cmps[] = {
	{ "vnet-xdp over empty-xdp", "vnet_xdp_over_empty_xdp", CFG_VNET_XDP,
	  CFG_EMPTY_XDP },
	{ "empty-xdp over none (XDP hook)", "empty_xdp_over_none",
	  CFG_EMPTY_XDP, CFG_NONE },
	{ "vnet-tc over empty-tc", "vnet_tc_over_empty_tc", CFG_VNET_TC,
	  CFG_EMPTY_TC },
	{ "empty-tc over none (tc hook)", "empty_tc_over_none", CFG_EMPTY_TC,
	  CFG_NONE },
	{ "vnet-xdp over vnet-tc", "vnet_xdp_over_vnet_tc", CFG_VNET_XDP,
	  CFG_VNET_TC },
	{ "vnet-tc-guard over vnet-tc (every spoofing check)",
	  "vnet_tc_guard_over_vnet_tc", CFG_GUARD_TC, CFG_VNET_TC },
	{ "vnet-tc-shared over vnet-tc (verified once, maps by slot)",
	  "vnet_tc_shared_over_vnet_tc", CFG_SHARED_TC, CFG_VNET_TC },
	{ "empty-tc-clsact over empty-tc (clsact hook over tcx)",
	  "empty_tc_clsact_over_empty_tc", CFG_EMPTY_CLSACT, CFG_EMPTY_TC },
	{ "vnet-tc-shared-clsact over vnet-tc-shared (clsact over tcx)",
	  "vnet_tc_shared_clsact_over_vnet_tc_shared", CFG_SHARED_CLSACT,
	  CFG_SHARED_TC },
	{ "vnet-tc-shared-clsact over vnet-tc (today's per-tap tcx)",
	  "vnet_tc_shared_clsact_over_vnet_tc", CFG_SHARED_CLSACT, CFG_VNET_TC },
	{ "vnet-tc-shared-clsact over empty-tc-clsact",
	  "vnet_tc_shared_clsact_over_empty_tc_clsact", CFG_SHARED_CLSACT,
	  CFG_EMPTY_CLSACT },
};

bool cmp_on(const struct bench *b, int k)
{
	return b->o.cfg_on[cmps[k].a] && b->o.cfg_on[cmps[k].base];
}

/*
 * One-sided Wilcoxon signed-rank p, over the repetitions, that the
 * CPU-time cost pct[] is centred above LIMIT (in percent): small p, a real
 * cost above LIMIT.  above = false: the p that it is centred below.
 */
static double cost_p(const double *pct, int n, double limit, bool above)
{
	double d[MAX_REPS];
	int i;

	for (i = 0; i < n; i++)
		d[i] = above ? pct[i] - limit : limit - pct[i];
	return stats_wilcoxon_greater(d, n);
}

double gbps(double pps, const struct frame *f)
{
	return pps * f->eth_len * 8 / 1e9;
}

void machine(char *buf, size_t len)
{
	char line[256], *model = NULL, *p;
	struct utsname u;
	FILE *fp;

	uname(&u);
	fp = fopen("/proc/cpuinfo", "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, "model name", 10)) {
			p = strchr(line, ':');
			if (p) {
				model = p + 2;
				model[strcspn(model, "\n")] = 0;
			}
			break;
		}
	}
	if (fp)
		fclose(fp);
	snprintf(buf, len, "Linux %s %s, %ld CPUs online, %s", u.release,
		 u.machine, sysconf(_SC_NPROCESSORS_ONLN),
		 model ? model : "unknown CPU");
}

const char *ring_flags_str(unsigned int f)
{
	if (f & IORING_SETUP_DEFER_TASKRUN)
		return "SUBMIT_ALL|SINGLE_ISSUER|DEFER_TASKRUN";
	if (f & IORING_SETUP_COOP_TASKRUN)
		return "SUBMIT_ALL|COOP_TASKRUN";
	return "none";
}

double cpu_util(struct bench *b)
{
	double v[MAX_REPS * SZ_MAX * CFG_MAX];
	int n = 0, s, c, i;

	for (s = 0; s < SZ_MAX; s++) {
		if (!b->o.size_on[s])
			continue;
		for (c = 0; c < CFG_MAX; c++)
			for (i = 0; b->o.cfg_on[c] && i < b->o.reps; i++)
				v[n++] = b->res[s][c].cpu[i];
	}
	qsort(v, n, sizeof(*v), cmp_double);
	return n ? v[n / 2] : NAN;
}

double target_wall_pct(struct bench *b)
{
	double pct[MAX_REPS], ns[MAX_REPS];

	cost(b, SZ_64, CFG_VNET_XDP, CFG_EMPTY_XDP, pct, ns);
	return summarise(pct, b->o.reps).med;
}

double target_pct(struct bench *b)
{
	double pct[MAX_REPS];

	cost_cpu(b, SZ_64, CFG_VNET_XDP, CFG_EMPTY_XDP, pct);
	return summarise(pct, b->o.reps).med;
}

/* A target line: cost of a over base at 64 B on the writer's CPU time. */
static void target_line(struct bench *b, const char *what, enum cfg a,
			enum cfg base, double limit, const char *note)
{
	double pct[MAX_REPS];
	struct summary sc;

	if (!b->o.cfg_on[a] || !b->o.cfg_on[base])
		return;
	cost_cpu(b, SZ_64, a, base, pct);
	sc = summarise(pct, b->o.reps);
	printf("target: %s at 64B = %.1f%% [%.1f .. %.1f] (<= %.0f%%: %s, p %.3f)%s\n",
	       what, sc.med, sc.min, sc.max, limit,
	       sc.med <= limit ? "met" : "NOT met",
	       cost_p(pct, b->o.reps, limit, false), note);
}

/*
 * The target lines: p is the one-sided Wilcoxon signed-rank p, over the
 * repetitions, that the cost is centred below the limit.
 */
static void print_targets(struct bench *b)
{
	double pct[MAX_REPS], rr[MAX_REPS];
	struct summary sc, sr;

	if (b->o.size_on[SZ_64] && b->o.cfg_on[CFG_VNET_XDP] &&
	    b->o.cfg_on[CFG_EMPTY_XDP]) {
		double t = target_pct(b);

		printf("\ntarget: vnet classifier overhead over empty XDP at 64B = %.1f%% (<= %.0f%%: %s)%s\n",
		       t, LIMIT_PCT, t <= LIMIT_PCT ? "met" : "NOT met",
		       b->o.reps < 5 ? " [fewer than 5 repetitions]" : "");
		printf("        (on the writer's CPU time, median of %d repetitions; wall clock: %.1f%%)\n",
		       b->o.reps, target_wall_pct(b));
	}
	if (b->o.size_on[SZ_64]) {
		printf("\n");
		/* tc ingress is vnetctl's default guest-TX hook */
		target_line(b, "vnet classifier overhead over empty tc ingress",
			    CFG_VNET_TC, CFG_EMPTY_TC, LIMIT_PCT,
			    " [the default hook]");
		target_line(b,
			    "spoofing checks (all on) over the classifier alone",
			    CFG_GUARD_TC, CFG_VNET_TC, 3.0, "");
		target_line(b, "the shared classifier over a tap's own",
			    CFG_SHARED_TC, CFG_VNET_TC, 3.0, "");
		target_line(b, "the shared classifier on clsact over it on tcx",
			    CFG_SHARED_CLSACT, CFG_SHARED_TC, 3.0, "");
		target_line(b,
			    "the shared classifier on clsact over a tap's own on tcx",
			    CFG_SHARED_CLSACT, CFG_VNET_TC, 3.0, " [today's]");
	}
	if (b->o.size_on[SZ_GSO] && b->o.cfg_on[CFG_VNET_XDP] &&
	    b->o.cfg_on[CFG_VNET_TC]) {
		cost_cpu(b, SZ_GSO, CFG_VNET_XDP, CFG_VNET_TC, pct);
		sc = summarise(pct, b->o.reps);
		rate_ratios(b, SZ_GSO, CFG_VNET_XDP, CFG_VNET_TC, rr);
		sr = summarise(rr, b->o.reps);
		printf("guest-TX hook for 64KB GSO: %s (vnet-xdp costs %+.1f%% [%+.1f .. %+.1f] of CPU time over vnet-tc; wall-clock rate x%.3f [%.3f .. %.3f])\n",
		       sc.med > 0 ? "tc ingress is cheaper" : "XDP is cheaper",
		       sc.med, sc.min, sc.max, sr.med, sr.min, sr.max);
	}
}

void print_text(struct bench *b)
{
	double pct[MAX_REPS], ns[MAX_REPS], rr[MAX_REPS], g[MAX_REPS];
	struct summary s, sg, sp, sn, sr, sc;
	char mach[512];
	enum size sz;
	enum cfg c;
	int i, k;

	machine(mach, sizeof(mach));
	printf("bench_tap: %s\n", mach);
	printf("tap %s, vnet hdr %d B, O_NONBLOCK, pinned to CPU %d; io_uring batch %u, %s buffers, ring flags %s; tc ingress via %s\n",
	       b->ifname, VNET_HDR_LEN, b->o.cpu, b->o.batch,
	       b->o.fixed ? "fixed" : "plain", ring_flags_str(b->ring_flags),
	       b->tc_legacy ? "clsact (bpf_tc_attach), every tc arm" :
			      "tcx link (the -clsact arms: a clsact filter)");
	printf("%d repetitions x %.2f s per configuration, interleaved in slices of %.3f s (+%.3f s warm-up after each attach)\n",
	       b->o.reps, b->o.sample_s, b->o.sample_s / slices(&b->o),
	       b->o.warmup_s);
	printf("io_uring: %s (io-wq workers seen: %d), writer thread CPU/wall median %.2f\n",
	       b->iowq_max ? "some writes were punted to io-wq" :
			     "all writes completed inline at submit",
	       b->iowq_max, cpu_util(b));
	if (b->bpf_stats_already_on)
		printf("WARNING: kernel.bpf_stats_enabled was already 1: every BPF run paid for run-time statistics\n");
	if (b->o.reps < 5)
		printf("WARNING: fewer than 5 repetitions: figures are indicative only\n");
	if (cpu_util(b) < 0.9)
		printf("WARNING: the writer had its CPU only %.0f%% of the time (other tasks on CPU %d): wall-clock rates are unreliable, compare the CPU-time figures\n",
		       cpu_util(b) * 100, b->o.cpu);

	for (sz = 0; sz < SZ_MAX; sz++) {
		if (!b->o.size_on[sz])
			continue;
		printf("\n== %s: %u B frame (+%d B virtio_net_hdr)%s ==\n",
		       sz_name[sz], b->frames[sz].eth_len, VNET_HDR_LEN,
		       sz == SZ_GSO ? ", TCPv4 GSO mss 1448, NEEDS_CSUM" : "");
		printf("  %-21s %8s %8s %8s %9s %9s  %7s %7s %7s  %s\n",
		       "config", "Mpps min", "median", "max", "ns/frame",
		       "CPU Mpps", "Gb/s min", "median", "max",
		       "classified urgent");
		for (c = 0; c < CFG_MAX; c++) {
			const struct result *r = &b->res[sz][c];

			if (!b->o.cfg_on[c])
				continue;
			for (i = 0; i < b->o.reps; i++)
				g[i] = gbps(r->pps[i], &b->frames[sz]);
			s = summarise(r->pps, b->o.reps);
			sg = summarise(g, b->o.reps);
			sc = summarise(r->cpu_pps, b->o.reps);
			printf("  %-21s %8.4f %8.4f %8.4f %9.1f %9.4f  %7.2f %7.2f %7.2f  ",
			       cfg_name[c], s.min / 1e6, s.med / 1e6,
			       s.max / 1e6, 1e9 / s.med, sc.med / 1e6, sg.min,
			       sg.med, sg.max);
			if (cfg_is_vnet(c))
				printf("%llu/%llu", (unsigned long long)r->urgent,
				       (unsigned long long)r->frames);
			else
				printf("-");
			if (r->eagain)
				printf("  EAGAIN %llu",
				       (unsigned long long)r->eagain);
			printf("\n");
		}
		printf("  (ns/frame = 1e9 / median rate; CPU Mpps = median frames per second of the writer's CPU time)\n");
		printf("  per-repetition ratios, median [min .. max]; p>0: one-sided Wilcoxon signed-rank p of a CPU-time cost above 0:\n");
		for (k = 0; k < NCMPS; k++) {
			if (!cmp_on(b, k))
				continue;
			rate_ratios(b, sz, cmps[k].a, cmps[k].base, rr);
			cost(b, sz, cmps[k].a, cmps[k].base, pct, ns);
			sr = summarise(rr, b->o.reps);
			sp = summarise(pct, b->o.reps);
			sn = summarise(ns, b->o.reps);
			cost_cpu(b, sz, cmps[k].a, cmps[k].base, pct);
			sc = summarise(pct, b->o.reps);
			printf("    %-57s rate x%.3f [%.3f .. %.3f]  cost %+5.1f%% [%+.1f .. %+.1f] %+6.1f ns [%+.1f .. %+.1f]  CPU-time cost %+5.1f%% [%+.1f .. %+.1f] p>0 %.3f\n",
			       cmps[k].name, sr.med, sr.min, sr.max, sp.med,
			       sp.min, sp.max, sn.med, sn.min, sn.max, sc.med,
			       sc.min, sc.max, cost_p(pct, b->o.reps, 0, true));
		}
		printf("  BPF program run time (BPF_STATS_RUN_TIME, separate phase), ns/run median [min .. max]:\n");
		for (c = CFG_EMPTY_XDP; c < CFG_MAX; c++) {
			const struct result *r = &b->res[sz][c];

			if (!b->o.cfg_on[c])
				continue;
			s = summarise(r->run_ns, r->run_reps);
			printf("    %-21s %7.1f [%.1f .. %.1f]  (%llu runs)\n",
			       cfg_name[c], s.med, s.min, s.max,
			       (unsigned long long)r->run_cnt);
		}
		if (sz == SZ_GSO)
			continue;
		printf("  bpf_prog_test_run_opts (repeat %u), ns/run median [min .. max]:\n",
		       b->o.test_repeat);
		for (c = CFG_EMPTY_XDP; c < CFG_MAX; c++) {
			const struct test_run *t = &b->trun[sz][c];

			if (!b->o.cfg_on[c])
				continue;
			if (t->err) {
				printf("    %-21s failed: %s\n", cfg_name[c],
				       strerror(-t->err));
				continue;
			}
			s = summarise(t->ns, t->reps);
			printf("    %-21s %7.1f [%.1f .. %.1f]\n", cfg_name[c],
			       s.med, s.min, s.max);
		}
	}
	print_targets(b);
}

void json_summary(const char *name, struct summary s, double scale,
		  const char *sep)
{
	if (isnan(s.med)) { /* no sample: JSON has no NaN */
		printf("\"%s\": null%s", name, sep);
		return;
	}
	printf("\"%s\": {\"min\": %.6g, \"median\": %.6g, \"max\": %.6g}%s",
	       name, s.min * scale, s.med * scale, s.max * scale, sep);
}

void json_array(const char *name, const double *v, int n,
		double scale, const char *sep)
{
	int i;

	printf("\"%s\": [", name);
	for (i = 0; i < n; i++)
		printf("%s%.6g", i ? ", " : "", v[i] * scale);
	printf("]%s", sep);
}

/*
 * "clsact_target": the shared classifier on clsact over it on tcx and over
 * a tap's own on tcx, 64 B, CPU time; p: that the cost is below 3%.
 */
static void json_clsact_target(struct bench *b)
{
	static const enum cfg base[] = { CFG_SHARED_TC, CFG_VNET_TC };
	static const char *const key[] = { "over_vnet_tc_shared",
					   "over_vnet_tc" };
	double pct[MAX_REPS];
	struct summary sc;
	int i;

	if (!b->o.size_on[SZ_64] || !b->o.cfg_on[CFG_SHARED_CLSACT])
		return;
	printf(",\n  \"clsact_target\": {\"basis\": \"cpu_time\", \"limit_pct\": 3");
	for (i = 0; i < 2; i++) {
		if (!b->o.cfg_on[base[i]])
			continue;
		cost_cpu(b, SZ_64, CFG_SHARED_CLSACT, base[i], pct);
		sc = summarise(pct, b->o.reps);
		printf(", \"%s\": {", key[i]);
		json_summary("cost_pct_64", sc, 1, ", ");
		printf("\"p_below_limit\": %.4g, \"met\": %s}",
		       cost_p(pct, b->o.reps, 3.0, false),
		       sc.med <= 3.0 ? "true" : "false");
	}
	printf("}");
}

void print_json(struct bench *b)
{
	double pct[MAX_REPS], ns[MAX_REPS], rr[MAX_REPS], g[MAX_REPS];
	const char *sep;
	bool first_sz = true;
	char mach[512];
	enum size sz;
	enum cfg c;
	int i, k;

	machine(mach, sizeof(mach));
	printf("{\n  \"machine\": \"%s\",\n", mach);
	printf("  \"params\": {\"reps\": %d, \"sample_s\": %g, \"slices\": %d, \"warmup_s\": %g, \"stats_s\": %g, \"batch\": %u, \"cpu\": %d, \"fixed_buffers\": %s, \"vnet_hdr_len\": %d, \"test_run_repeat\": %u, \"tc_attach\": \"%s\"},\n",
	       b->o.reps, b->o.sample_s, slices(&b->o), b->o.warmup_s,
	       b->o.stats_s,
	       b->o.batch, b->o.cpu, b->o.fixed ? "true" : "false",
	       VNET_HDR_LEN, b->o.test_repeat,
	       b->tc_legacy ? "clsact" : "tcx");
	printf("  \"configs_measured\": [");
	for (c = 0, sep = ""; c < CFG_MAX; c++)
		if (b->o.cfg_on[c]) {
			printf("%s\"%s\"", sep, cfg_json[c]);
			sep = ", ";
		}
	printf("],\n");
	printf("  \"io_uring\": {\"setup_flags\": \"%s\", \"iowq_workers_seen\": %d, \"inline\": %s, \"thread_cpu_per_wall_median\": %.3f},\n",
	       ring_flags_str(b->ring_flags), b->iowq_max,
	       b->iowq_max ? "false" : "true", cpu_util(b));
	printf("  \"bpf_stats_enabled_before\": %s,\n",
	       b->bpf_stats_already_on ? "true" : "false");
	printf("  \"sizes\": {\n");
	for (sz = 0; sz < SZ_MAX; sz++) {
		if (!b->o.size_on[sz])
			continue;
		printf("%s    \"%s\": {\n", first_sz ? "" : ",\n", sz_json[sz]);
		first_sz = false;
		printf("      \"frame_bytes\": %u, \"write_bytes\": %u, \"gso\": %s,\n",
		       b->frames[sz].eth_len, b->frames[sz].len,
		       sz == SZ_GSO ? "true" : "false");
		printf("      \"configs\": {\n");
		for (c = 0, sep = ""; c < CFG_MAX; c++) {
			const struct result *r = &b->res[sz][c];

			if (!b->o.cfg_on[c])
				continue;
			for (i = 0; i < b->o.reps; i++)
				g[i] = gbps(r->pps[i], &b->frames[sz]);
			printf("%s        \"%s\": {", sep, cfg_json[c]);
			sep = ",\n";
			json_summary("mpps", summarise(r->pps, b->o.reps),
				     1e-6, ", ");
			json_summary("gbps", summarise(g, b->o.reps), 1, ", ");
			json_summary("cpu_mpps", summarise(r->cpu_pps, b->o.reps),
				     1e-6, ", ");
			json_array("samples_mpps", r->pps, b->o.reps, 1e-6,
				   ", ");
			printf("\"frames\": %llu, \"eagain\": %llu",
			       (unsigned long long)r->frames,
			       (unsigned long long)r->eagain);
			if (cfg_is_vnet(c))
				printf(", \"classified_urgent\": %llu",
				       (unsigned long long)r->urgent);
			if (c != CFG_NONE) {
				printf(", ");
				json_summary("bpf_run_ns",
					     summarise(r->run_ns, r->run_reps),
					     1, "");
				if (sz != SZ_GSO && !b->trun[sz][c].err) {
					printf(", ");
					json_summary("test_run_ns",
						     summarise(b->trun[sz][c].ns,
							       b->trun[sz][c].reps),
						     1, "");
				}
			}
			printf("}");
		}
		printf("\n      },\n      \"ratios\": {\n");
		for (k = 0, sep = ""; k < NCMPS; k++) {
			if (!cmp_on(b, k))
				continue;
			rate_ratios(b, sz, cmps[k].a, cmps[k].base, rr);
			cost(b, sz, cmps[k].a, cmps[k].base, pct, ns);
			printf("%s        \"%s\": {", sep, cmps[k].json);
			sep = ",\n";
			json_summary("rate_ratio", summarise(rr, b->o.reps), 1,
				     ", ");
			json_summary("cost_pct", summarise(pct, b->o.reps), 1,
				     ", ");
			json_summary("cost_ns", summarise(ns, b->o.reps), 1,
				     ", ");
			cost_cpu(b, sz, cmps[k].a, cmps[k].base, pct);
			json_summary("cpu_time_cost_pct",
				     summarise(pct, b->o.reps), 1, ", ");
			printf("\"cpu_time_cost_p_above_0\": %.4g}",
			       cost_p(pct, b->o.reps, 0, true));
		}
		printf("\n      }\n    }");
	}
	printf("\n  }");
	json_clsact_target(b);
	if (b->o.size_on[SZ_64] && b->o.cfg_on[CFG_VNET_XDP] &&
	    b->o.cfg_on[CFG_EMPTY_XDP]) {
		double t = target_pct(b);

		printf(",\n  \"target\": {\"vnet_xdp_over_empty_xdp_64_pct\": %.3f, \"basis\": \"cpu_time\", \"wall_pct\": %.3f, \"limit_pct\": %.0f, \"met\": %s}",
		       t, target_wall_pct(b), LIMIT_PCT,
		       t <= LIMIT_PCT ? "true" : "false");
	}
	printf("\n}\n");
}
