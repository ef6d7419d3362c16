// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bench_tap: attach/detach, the stats map, the three measurement phases */
#include "bench_tap.h"
/* ------------------------------------------------------------------ */
/* attach / detach */

int prog_fd_of(struct bench *b, enum cfg c)
{
	switch (c) {
	case CFG_EMPTY_XDP:
		return bpf_program__fd(b->empty->progs.empty_xdp);
	case CFG_VNET_XDP:
		return bpf_program__fd(b->vnet->progs.vnet_xdp_tx);
	case CFG_EMPTY_TC:
	case CFG_EMPTY_CLSACT:
		return bpf_program__fd(b->empty->progs.empty_tc);
	case CFG_VNET_TC:
	case CFG_GUARD_TC:
		return bpf_program__fd(b->vnet->progs.vnet_tc_tx);
	case CFG_SHARED_TC:
	case CFG_SHARED_CLSACT:
		return bpf_program__fd(b->shared->progs.vnet_tc_tx);
	default:
		return -1;
	}
}

/*
 * The clsact arms' filter: handle and priority as vnet's own (libvnet's
 * legacy tc attach), direct action.
 */
#define BENCH_TC_HANDLE 0x766e
#define BENCH_TC_PRIO 0x766e

bool tc_clsact(const struct bench *b, enum cfg c)
{
	return b->tc_legacy || c == CFG_EMPTY_CLSACT || c == CFG_SHARED_CLSACT;
}

/* 1: the kernel has no tcx (EINVAL), b->tc_legacy is now set */
static int tcx_attach(struct bench *b, int prog_fd, bool replace)
{
	int fd, err;

	if (replace) {
		err = bpf_link_update(b->tcx_fd, prog_fd, NULL);
		if (err)
			info("bench_tap: tcx link update on %s: %s\n",
			     b->ifname, strerror(-err));
		return err;
	}
	fd = bpf_link_create(prog_fd, b->ifindex, BENCH_TCX_INGRESS, NULL);
	if (fd >= 0) {
		b->tcx_fd = fd;
		return 0;
	}
	if (fd != -EINVAL) {
		info("bench_tap: tcx ingress link on %s: %s\n", b->ifname,
		     strerror(-fd));
		return fd;
	}
	info("bench_tap: tcx not supported (EINVAL), every tc arm on clsact\n");
	b->tc_legacy = true;
	return 1;
}

int clsact_create(struct bench *b)
{
	int err;

	b->tc_hook.sz = sizeof(b->tc_hook);
	b->tc_hook.ifindex = b->ifindex;
	b->tc_hook.attach_point = BPF_TC_INGRESS;
	err = bpf_tc_hook_create(&b->tc_hook);
	if (err && err != -EEXIST) {
		info("bench_tap: clsact on %s: %s\n", b->ifname,
		     strerror(-err));
		return err;
	}
	b->clsact_on = true;
	return 0;
}

static int clsact_attach(struct bench *b, int prog_fd)
{
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = BENCH_TC_HANDLE,
		    .priority = BENCH_TC_PRIO, .prog_fd = prog_fd);
	int err;

	if (!b->clsact_on) {
		err = clsact_create(b);
		if (err)
			return err;
	}
	if (b->filter_on)
		o.flags = BPF_TC_F_REPLACE;
	err = bpf_tc_attach(&b->tc_hook, &o);
	if (err)
		info("bench_tap: tc ingress filter on %s: %s\n", b->ifname,
		     strerror(-err));
	else
		b->filter_on = true;
	return err;
}

int attach_tc(struct bench *b, enum cfg c, int prog_fd, bool replace)
{
	int err;

	if (!tc_clsact(b, c)) {
		err = tcx_attach(b, prog_fd, replace);
		if (err <= 0)
			return err;
	}
	return clsact_attach(b, prog_fd);
}

/*
 * The clsact qdisc goes with its filter unless --keep-clsact: by default
 * every arm runs on the tap as it is deployed, a tcx arm with no clsact
 * qdisc (whose tcx entry would make tc ingress check its filter list after
 * the tcx programs).
 */
int detach_tc(struct bench *b)
{
	LIBBPF_OPTS(bpf_tc_hook, h, .ifindex = b->ifindex,
		    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = BENCH_TC_HANDLE,
		    .priority = BENCH_TC_PRIO);
	int err = 0;

	if (b->tcx_fd >= 0)
		close(b->tcx_fd);
	b->tcx_fd = -1;
	if (b->filter_on && b->o.keep_clsact) {
		err = bpf_tc_detach(&b->tc_hook, &o);
		if (err)
			info("bench_tap: tc ingress detach on %s: %s\n",
			     b->ifname, strerror(-err));
	} else if (b->clsact_on && !b->o.keep_clsact) {
		err = bpf_tc_hook_destroy(&h);
		if (err)
			info("bench_tap: deleting the clsact qdisc of %s: %s\n",
			     b->ifname, strerror(-err));
		b->clsact_on = false;
	}
	b->filter_on = false;
	return err;
}

static __u32 prog_id_of(int prog_fd)
{
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi);

	memset(&pi, 0, sizeof(pi));
	return bpf_obj_get_info_by_fd(prog_fd, &pi, &len) ? 0 : pi.id;
}

/*
 * After an attach, tc ingress holds configuration c's program on its
 * hook and only there: the tcx link's program, or the clsact filter's, and
 * no filter of ours on a tcx arm nor a tcx program on a clsact arm.
 */
static int check_tc(struct bench *b, enum cfg c, int prog_fd)
{
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = BENCH_TC_HANDLE,
		    .priority = BENCH_TC_PRIO);
	__u32 want = prog_id_of(prog_fd), ids[4], cnt = 4, tcx_id = 0;
	bool clsact = tc_clsact(b, c), filter;

	if (!b->tc_legacy &&
	    !bpf_prog_query(b->ifindex, BENCH_TCX_INGRESS, 0, NULL, ids, &cnt) &&
	    cnt)
		tcx_id = cnt == 1 ? ids[0] : ~0u;
	filter = b->clsact_on && !bpf_tc_query(&b->tc_hook, &o);
	if (clsact ? filter && o.prog_id == want && !tcx_id :
		     tcx_id == want && !filter)
		return 0;
	info("bench_tap: %s on %s: expected program %u on %s, found tcx %u, clsact filter %u\n",
	     cfg_name[c], b->ifname, want, clsact ? "clsact" : "tcx", tcx_id,
	     filter ? o.prog_id : 0);
	return -EPROTO;
}

bool cfg_is_xdp(enum cfg c)
{
	return c == CFG_EMPTY_XDP || c == CFG_VNET_XDP;
}

bool cfg_is_tc(enum cfg c)
{
	return c == CFG_EMPTY_TC || c == CFG_VNET_TC || c == CFG_GUARD_TC ||
	       c == CFG_SHARED_TC || c == CFG_EMPTY_CLSACT ||
	       c == CFG_SHARED_CLSACT;
}

/*
 * CFG_GUARD_TC: every check of the guard on, for the MAC and IPv4 source
 * the bench's frames carry (so that they pass, each check run); off for
 * every other configuration
 */
static int guard_apply(struct bench *b, bool on)
{
	const unsigned char *eth = b->frames[SZ_64].buf + VNET_HDR_LEN;
	struct vnet_guard g = { 0 };
	__u32 k = 0;

	if (on) {
		g.flags = VNET_GUARD_MAC | VNET_GUARD_IP | VNET_GUARD_ARP |
			  VNET_GUARD_ND | VNET_GUARD_DHCP | VNET_GUARD_RA;
		memcpy(g.mac, eth + 6, 6);
		memcpy(&g.v4[0].addr, eth + ETH_LEN + 12, 4);
		g.v4[0].prefix = 32;
		g.nr_v4 = 1;
	}
	return bpf_map_update_elem(bpf_map__fd(b->vnet->maps.guard), &k, &g,
				   BPF_ANY) ? -errno : 0;
}

int switch_to(struct bench *b, enum cfg c)
{
	int fd = prog_fd_of(b, c), err = 0;
	/* a tc program over one of the same kind (tcx or clsact) */
	bool same_tc = cfg_is_tc(b->cur) && cfg_is_tc(c) &&
		       tc_clsact(b, b->cur) == tc_clsact(b, c);

	if (c == b->cur)
		return 0;
	if (cfg_is_xdp(b->cur) && !cfg_is_xdp(c)) {
		err = bpf_xdp_detach(b->ifindex, XDP_FLAGS_DRV_MODE, NULL);
		if (err) {
			info("bench_tap: XDP detach from %s: %s\n", b->ifname,
			     strerror(-err));
			return err;
		}
	} else if (cfg_is_tc(b->cur) && !same_tc) {
		err = detach_tc(b);
		if (err)
			return err;
	}
	if (cfg_is_xdp(c)) {
		/* over an XDP program: replaces it */
		err = bpf_xdp_attach(b->ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			info("bench_tap: native XDP attach of %s to %s: %s\n",
			     cfg_name[c], b->ifname, strerror(-err));
	} else if (cfg_is_tc(c)) {
		err = attach_tc(b, c, fd, same_tc);
		if (!err)
			err = check_tc(b, c, fd);
	}
	if (!err && (c == CFG_GUARD_TC || b->cur == CFG_GUARD_TC)) {
		err = guard_apply(b, c == CFG_GUARD_TC);
		if (err)
			info("bench_tap: the guard map: %s\n", strerror(-err));
	}
	/* on failure the hook state is unknown: detach both */
	if (err) {
		bpf_xdp_detach(b->ifindex, XDP_FLAGS_DRV_MODE, NULL);
		detach_tc(b);
		b->cur = CFG_NONE;
		return err;
	}
	b->cur = c;
	return 0;
}

/* ------------------------------------------------------------------ */
/* vnet stats map: proof that the classifier ran and classified */

int read_tx_stats(struct bench *b, struct vnet_class_stats *sum)
{
	__u32 key = vnet_key(VNET_DIR_TX, 0);
	struct vnet_class_stats *v;
	struct vnet_counter *s, *c;
	int err, cpu, k;

	v = calloc(b->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(b->vnet->maps.stats), &key, v);
	if (err) {
		err = -errno;
		info("bench_tap: reading vnet stats map: %s\n",
		     strerror(errno));
		goto out;
	}
	memset(sum, 0, sizeof(*sum));
	s = (struct vnet_counter *)sum;
	for (cpu = 0; cpu < b->ncpus; cpu++) {
		c = (struct vnet_counter *)&v[cpu];
		for (k = 0; k < VNET_CLASS_MAX; k++) {
			s[k].packets += c[k].packets;
			s[k].bytes += c[k].bytes;
		}
	}
out:
	free(v);
	return err;
}

int check_classified(struct bench *b, enum size sz, enum cfg c,
		     const struct vnet_class_stats *before,
		     uint64_t frames)
{
	const struct vnet_counter *s0 = (const void *)before, *s1;
	struct vnet_class_stats after;
	uint64_t d[VNET_CLASS_MAX], bytes;
	int err, k;

	err = read_tx_stats(b, &after);
	if (err)
		return err;
	s1 = (const void *)&after;
	for (k = 0; k < VNET_CLASS_MAX; k++)
		d[k] = s1[k].packets - s0[k].packets;
	bytes = s1[VNET_CLASS_URGENT].bytes - s0[VNET_CLASS_URGENT].bytes;
	b->res[sz][c].urgent += d[VNET_CLASS_URGENT];
	if (d[VNET_CLASS_URGENT] != frames ||
	    bytes != frames * b->frames[sz].eth_len ||
	    d[VNET_CLASS_PUSH] || d[VNET_CLASS_ACK] || d[VNET_CLASS_OTHER] ||
	    d[VNET_CLASS_MALFORMED]) {
		info("bench_tap: %s %s: %llu frames written but the classifier counted urgent %llu (%llu bytes, expected %llu), push %llu, ack %llu, other %llu, malformed %llu\n",
		     sz_name[sz], cfg_name[c], (unsigned long long)frames,
		     (unsigned long long)d[VNET_CLASS_URGENT],
		     (unsigned long long)bytes,
		     (unsigned long long)(frames * b->frames[sz].eth_len),
		     (unsigned long long)d[VNET_CLASS_PUSH],
		     (unsigned long long)d[VNET_CLASS_ACK],
		     (unsigned long long)d[VNET_CLASS_OTHER],
		     (unsigned long long)d[VNET_CLASS_MALFORMED]);
		return -EPROTO;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* phase 1: interleaved wall-clock samples */

int slices(const struct opts *o)
{
	int n = (int)(o->sample_s / o->slice_s + 0.5);

	return n < 1 ? 1 : n;
}

int one_slice(struct bench *b, enum size sz, enum cfg c, double secs,
	      struct acc *a)
{
	struct frame *f = &b->frames[sz];
	struct result *r = &b->res[sz][c];
	struct counts warm = { 0 }, meas = { 0 };
	struct vnet_class_stats before;
	uint64_t t0, t1, cpu0, cpu1;
	int err;

	err = switch_to(b, c);
	if (err)
		return err;
	if (cfg_is_vnet(c)) {
		err = read_tx_stats(b, &before);
		if (err)
			return err;
	}
	err = write_for(b, f, b->o.warmup_s, &warm);
	if (err)
		return err;
	cpu0 = thread_cpu_ns();
	t0 = now_ns();
	err = write_for(b, f, secs, &meas);
	t1 = now_ns();
	cpu1 = thread_cpu_ns();
	if (err)
		return err;
	a->frames += meas.frames;
	a->ns += t1 - t0;
	a->cpu_ns += cpu1 - cpu0;
	r->frames += warm.frames + meas.frames;
	r->eagain += warm.eagain + meas.eagain;
	if (cfg_is_vnet(c))
		return check_classified(b, sz, c, &before,
					warm.frames + meas.frames);
	return 0;
}

int one_rep(struct bench *b, enum size sz, int rep)
{
	struct acc a[CFG_MAX] = { 0 };
	int n, i, k, err, w;
	double secs;
	enum cfg c;

	n = slices(&b->o);
	secs = b->o.sample_s / n;
	for (i = 0; i < n; i++) {
		for (k = 0; k < CFG_MAX; k++) {
			c = i % 2 ? CFG_MAX - 1 - k : k;
			if (!b->o.cfg_on[c])
				continue;
			err = one_slice(b, sz, c, secs, &a[c]);
			if (err) {
				info("bench_tap: %s %s failed\n", sz_name[sz],
				     cfg_name[c]);
				return err;
			}
		}
	}
	for (c = 0; c < CFG_MAX; c++) {
		if (!b->o.cfg_on[c])
			continue;
		b->res[sz][c].pps[rep] = a[c].frames / (a[c].ns / 1e9);
		b->res[sz][c].cpu[rep] = (double)a[c].cpu_ns / a[c].ns;
		b->res[sz][c].cpu_pps[rep] = a[c].frames / (a[c].cpu_ns / 1e9);
	}
	w = count_iowq_workers();
	if (w > b->iowq_max)
		b->iowq_max = w;
	return 0;
}

/* ------------------------------------------------------------------ */
/* phase 2: BPF_STATS_RUN_TIME */

int prog_run_stats(int fd, uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi);
	int err;

	memset(&pi, 0, sizeof(pi));
	err = bpf_obj_get_info_by_fd(fd, &pi, &len);
	if (err)
		return -errno;
	*ns = pi.run_time_ns;
	*cnt = pi.run_cnt;
	return 0;
}

int run_time_sample(struct bench *b, enum size sz, enum cfg c)
{
	struct result *r = &b->res[sz][c];
	struct counts warm = { 0 }, meas = { 0 };
	uint64_t ns0 = 0, cnt0 = 0, ns1 = 0, cnt1 = 0;
	int fd = prog_fd_of(b, c), err;

	err = switch_to(b, c);
	if (err)
		return err;
	err = write_for(b, &b->frames[sz], b->o.warmup_s, &warm);
	if (err)
		return err;
	err = prog_run_stats(fd, &ns0, &cnt0);
	if (err)
		goto info_err;
	err = write_for(b, &b->frames[sz], b->o.stats_s, &meas);
	if (err)
		return err;
	err = prog_run_stats(fd, &ns1, &cnt1);
	if (err)
		goto info_err;
	if (cnt1 - cnt0 != meas.frames) {
		info("bench_tap: %s %s: program ran %llu times for %llu frames\n",
		     sz_name[sz], cfg_name[c],
		     (unsigned long long)(cnt1 - cnt0),
		     (unsigned long long)meas.frames);
		return -EPROTO;
	}
	if (cnt1 > cnt0)
		r->run_ns[r->run_reps++] = (double)(ns1 - ns0) / (cnt1 - cnt0);
	r->run_cnt += cnt1 - cnt0;
	return 0;
info_err:
	info("bench_tap: bpf_obj_get_info_by_fd: %s\n", strerror(-err));
	return err;
}

/* ------------------------------------------------------------------ */
/* phase 3: bpf_prog_test_run_opts */

int test_run_one(struct bench *b, enum size sz, enum cfg c)
{
	struct frame *f = &b->frames[sz];
	struct test_run *t = &b->trun[sz][c];
	int err;

	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = f->buf + VNET_HDR_LEN,
		    .data_size_in = f->eth_len,
		    .repeat = b->o.test_repeat);
	err = bpf_prog_test_run_opts(prog_fd_of(b, c), &o);
	if (err) {
		t->err = err;
		return err;
	}
	t->ns[t->reps++] = o.duration;
	return 0;
}
