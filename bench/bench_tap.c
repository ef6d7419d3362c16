// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_tap: frames per second written into a tap from one thread, with no
 * program, with an empty program and with vnet's classifier on the guest-TX
 * hooks (native/generic XDP and tc ingress), interleaved in one run.
 *
 * The process moves into a network namespace of its own, creates a tap there
 * (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, 12-byte virtio_net_hdr as vhost/QEMU
 * use with VIRTIO_F_VERSION_1, O_NONBLOCK so that tun may run XDP natively)
 * and writes with io_uring in batches, so that the kernel's write path and
 * not syscall entry dominates.  Frames are TCP with payload and PSH clear
 * (class URGENT, the classifier's longest path), addressed to a MAC that is
 * not the tap's: the stack drops them in ip_rcv right after the hooks, at the
 * same small cost in every configuration.  Nothing outlives the process: the
 * tap and its namespace go away with it.
 *
 * tc ingress programs hang on a tcx link, but the -clsact arms' on a clsact
 * qdisc as a direct-action filter (handle and priority 0x766e, as libvnet's
 * legacy attach), the way vnetd may attach its taps' classifier.  Each arm
 * runs on the tap as deployed: leaving a clsact arm deletes the qdisc, so
 * that no tcx arm pays for a clsact qdisc it would not have (tc ingress
 * would check the qdisc's filter list after the tcx programs).
 * --keep-clsact, the control: the qdisc stays for every arm, a clsact arm
 * adds and removes only its filter (both gave clsact over tcx alike).
 *
 * Three figures:
 *  1. wall-clock frames/s per configuration, min/median/max over the
 *     repetitions, and per-repetition ratios (median/min/max).  A
 *     repetition gives each configuration the same time, cut into short
 *     slices interleaved ABCDE EDCBA: the host's speed drifts by tens of
 *     percent over hundreds of milliseconds, and only configurations
 *     measured close together in time compare well;
 *     Each write completes inline in the writer thread (checked: no io-wq
 *     worker ever appears), so the same frames are also counted per second
 *     of the writer's CPU time, which leaves out the time other tasks or
 *     the hypervisor held the CPU; the 5% verdict uses that figure;
 *  2. the programs' own run time from the kernel (BPF_STATS_RUN_TIME), in a
 *     separate phase so that the statistics' own cost does not distort (1);
 *  3. bpf_prog_test_run_opts(repeat) on the same frames.
 */
#include "bench_tap.h"
/* ------------------------------------------------------------------ */
/* main */

void usage(FILE *fp)
{
	fprintf(fp,
		"usage: bench_tap [options]\n"
		"Frames/s written into a tap with io_uring: no program, empty and vnet\n"
		"programs on XDP and tc ingress, interleaved.  Needs root.  Costs are\n"
		"reported on wall-clock time and on the writer thread's CPU time; the\n"
		"5%% target verdict uses the latter (see docs/benchmarks.md).\n"
		"  -r, --reps N          repetitions, >= 5 for the target (default 7)\n"
		"  -d, --duration S      measured seconds per configuration and repetition\n"
		"                        (default 0.4)\n"
		"  -S, --slice S         ... cut into interleaved slices of S (default 0.02)\n"
		"  -w, --warmup S        warm-up after each attach, unmeasured (default 0.002)\n"
		"  -t, --stats-time S    seconds per BPF run-time sample (default 0.1)\n"
		"  -b, --batch N         writes per io_uring submit (default 128)\n"
		"  -c, --cpu N           CPU to pin to (default: the highest allowed)\n"
		"  -s, --sizes LIST      comma list of 64,1500,gso (default all)\n"
		"  -C, --configs LIST    comma list of configurations (default all): none,\n"
		"                        empty-xdp, vnet-xdp, empty-tc, vnet-tc, vnet-tc-guard,\n"
		"                        vnet-tc-shared (tcx), empty-tc-clsact,\n"
		"                        vnet-tc-shared-clsact (clsact filter)\n"
		"  -n, --test-repeat N   bpf_prog_test_run repeat (default 1000000)\n"
		"      --no-fixed        plain buffers instead of registered ones\n"
		"      --keep-clsact     a clsact qdisc on the tap for every arm (default: only\n"
		"                        for the -clsact arms, as deployed)\n"
		"  -j, --json            JSON on stdout instead of text\n"
		"  -h, --help\n");
}

int parse_sizes(struct opts *o, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL;
	int err = 0;

	if (!dup)
		return -ENOMEM;
	memset(o->size_on, 0, sizeof(o->size_on));
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "64"))
			o->size_on[SZ_64] = true;
		else if (!strcmp(tok, "1500"))
			o->size_on[SZ_1500] = true;
		else if (!strcmp(tok, "gso") || !strcmp(tok, "64k"))
			o->size_on[SZ_GSO] = true;
		else
			err = -EINVAL;
	}
	free(dup);
	return err;
}

int parse_configs(struct opts *o, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL;
	int err = 0;
	enum cfg c;

	if (!dup)
		return -ENOMEM;
	memset(o->cfg_on, 0, sizeof(o->cfg_on));
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		c = cfg_by_name(tok);
		if (c == CFG_MAX) {
			info("bench_tap: -C: no configuration '%s'\n", tok);
			err = -EINVAL;
			continue;
		}
		o->cfg_on[c] = true;
	}
	free(dup);
	return err;
}

int parse_opts(struct opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "reps", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "slice", required_argument, NULL, 'S' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "stats-time", required_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "sizes", required_argument, NULL, 's' },
		{ "configs", required_argument, NULL, 'C' },
		{ "test-repeat", required_argument, NULL, 'n' },
		{ "no-fixed", no_argument, NULL, 'F' },
		{ "keep-clsact", no_argument, NULL, 'K' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int ch, s;

	o->reps = 7;
	o->sample_s = 0.4;
	o->slice_s = 0.02;
	o->warmup_s = 0.002;
	o->stats_s = 0.1;
	o->batch = 128;
	o->cpu = -1;
	o->fixed = true;
	o->test_repeat = 1000000;
	for (s = 0; s < SZ_MAX; s++)
		o->size_on[s] = true;
	for (s = 0; s < CFG_MAX; s++)
		o->cfg_on[s] = true;

	while ((ch = getopt_long(argc, argv, "r:d:S:w:t:b:c:s:C:n:jh", lo,
				 NULL)) != -1) {
		switch (ch) {
		case 'r':
			o->reps = atoi(optarg);
			if (o->reps < 1 || o->reps > MAX_REPS) {
				info("bench_tap: -r must be 1..%d\n", MAX_REPS);
				return -EINVAL;
			}
			break;
		case 'd':
			o->sample_s = atof(optarg);
			break;
		case 'S':
			o->slice_s = atof(optarg);
			break;
		case 'w':
			o->warmup_s = atof(optarg);
			break;
		case 't':
			o->stats_s = atof(optarg);
			break;
		case 'b':
			o->batch = atoi(optarg);
			if (o->batch < 1 || o->batch > 4096) {
				info("bench_tap: -b must be 1..4096\n");
				return -EINVAL;
			}
			break;
		case 'c':
			o->cpu = atoi(optarg);
			if (o->cpu < 0 || o->cpu >= CPU_SETSIZE) {
				info("bench_tap: -c must be a CPU number\n");
				return -EINVAL;
			}
			break;
		case 's':
			if (parse_sizes(o, optarg)) {
				info("bench_tap: -s takes a comma list of 64, 1500, gso\n");
				return -EINVAL;
			}
			break;
		case 'C':
			if (parse_configs(o, optarg)) {
				info("bench_tap: -C takes a comma list of the configurations -h names\n");
				return -EINVAL;
			}
			break;
		case 'n':
			o->test_repeat = strtoul(optarg, NULL, 0);
			break;
		case 'F':
			o->fixed = false;
			break;
		case 'K':
			o->keep_clsact = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return -EINVAL;
	}
	if (o->sample_s <= 0 || o->slice_s <= 0 || o->warmup_s < 0 ||
	    o->stats_s <= 0 ||
	    !o->test_repeat) {
		info("bench_tap: durations must be > 0 and -n >= 1\n");
		return -EINVAL;
	}
	for (s = 0; s < CFG_MAX && !o->cfg_on[s]; s++)
		;
	if (s == CFG_MAX) {
		info("bench_tap: no configuration selected\n");
		return -EINVAL;
	}
	for (s = 0; s < SZ_MAX; s++)
		if (o->size_on[s])
			return 0;
	info("bench_tap: no frame size selected\n");
	return -EINVAL;
}

bool bpf_stats_enabled(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

void only_autoload(struct bpf_object *obj, struct bpf_program *a,
		   struct bpf_program *c)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == a || p == c);
}

int run(struct bench *b)
{
	enum size sz;
	enum cfg c;
	int rep, err, stats_fd;

	/* settle page-frag and slab caches before the first sample */
	for (sz = 0; sz < SZ_MAX; sz++) {
		struct counts warm = { 0 };

		if (!b->o.size_on[sz])
			continue;
		err = write_for(b, &b->frames[sz], 0.1, &warm);
		if (err)
			return err;
	}

	/* phase 1: interleaved wall-clock samples */
	for (rep = 0; rep < b->o.reps; rep++) {
		info("bench_tap: repetition %d/%d\n", rep + 1, b->o.reps);
		for (sz = 0; sz < SZ_MAX; sz++) {
			if (!b->o.size_on[sz])
				continue;
			err = one_rep(b, sz, rep);
			if (err)
				return err;
		}
	}

	err = switch_to(b, CFG_NONE);
	if (err)
		return err;

	/* phase 2: the programs' own run time, measured by the kernel */
	info("bench_tap: BPF run-time statistics\n");
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		info("bench_tap: bpf_enable_stats(BPF_STATS_RUN_TIME): %s\n",
		     strerror(-stats_fd));
		return stats_fd;
	}
	for (rep = 0; rep < b->o.reps; rep++) {
		for (sz = 0; sz < SZ_MAX; sz++) {
			if (!b->o.size_on[sz])
				continue;
			for (c = CFG_EMPTY_XDP; c < CFG_MAX; c++) {
				if (!b->o.cfg_on[c])
					continue;
				err = run_time_sample(b, sz, c);
				if (err) {
					switch_to(b, CFG_NONE);
					close(stats_fd);
					return err;
				}
			}
		}
	}
	close(stats_fd);
	err = switch_to(b, CFG_NONE);
	if (err)
		return err;

	/* phase 3: bpf_prog_test_run (no GSO: test_run takes one page) */
	info("bench_tap: bpf_prog_test_run\n");
	for (rep = 0; rep < b->o.reps; rep++)
		for (sz = 0; sz < SZ_GSO; sz++)
			if (b->o.size_on[sz])
				for (c = CFG_EMPTY_XDP; c < CFG_MAX; c++)
					if (b->o.cfg_on[c] &&
					    !b->trun[sz][c].err)
						test_run_one(b, sz, c);
	return 0;
}

/*
 * The shared build's vnet_tc_tx, as vnetctl attaches it to every tap of a
 * namespace: the bench tap in its taps map at slot 0, and at slot 0 of each
 * array of maps the per-tap object's map of that kind, so that both
 * configurations count into the same maps.
 */
static int shared_load(struct bench *b)
{
	const char *names[] = { "stats", "queues", "config", "guard",
				"guard_stats" };
	struct vnet_tap_slot ts = { .ifindex = (__u32)b->ifindex };
	__u32 key = (__u32)b->ifindex, slot = 0;
	char outer[32];
	int err, fd;

	b->shared = vnet_shared__open();
	if (!b->shared) {
		err = -errno;
		info("bench_tap: opening the shared vnet object: %s\n",
		     strerror(errno));
		return err;
	}
	only_autoload(b->shared->obj, b->shared->progs.vnet_tc_tx, NULL);
	err = vnet_shared__load(b->shared);
	for (size_t i = 0; !err && i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(outer, sizeof(outer), "%s_of", names[i]);
		fd = bpf_map__fd(
			bpf_object__find_map_by_name(b->vnet->obj, names[i]));
		if (bpf_map_update_elem(bpf_map__fd(
						bpf_object__find_map_by_name(b->shared
										     ->obj,
									     outer)),
					&slot, &fd, BPF_ANY))
			err = -errno;
	}
	if (!err && bpf_map_update_elem(bpf_map__fd(b->shared->maps.taps), &key,
					&ts, BPF_ANY))
		err = -errno;
	if (!err && key < VNET_SHARED_IFX_MAX &&
	    bpf_map_update_elem(bpf_map__fd(b->shared->maps.tap_index), &key,
				&ts, BPF_ANY))
		err = -errno;
	if (err)
		info("bench_tap: loading the shared vnet_tc_tx: %s\n",
		     strerror(-err));
	return err;
}

int main(int argc, char **argv)
{
	unsigned char mac[ETH_ALEN];
	struct bench *b;
	int err, s;

	b = calloc(1, sizeof(*b));
	if (!b) {
		info("bench_tap: out of memory\n");
		return 1;
	}
	b->tap_fd = -1;
	b->tcx_fd = -1;
	err = parse_opts(&b->o, argc, argv);
	if (err)
		goto out_free;

	if (geteuid() != 0)
		info("bench_tap: warning: not running as root; this needs CAP_SYS_ADMIN and CAP_NET_ADMIN\n");
	if (unshare(CLONE_NEWNET)) {
		err = -errno;
		info("bench_tap: unshare(CLONE_NEWNET): %s%s\n",
		     strerror(errno),
		     errno == EPERM ? " (run as root)" : "");
		goto out_free;
	}
	err = pin_cpu(&b->o.cpu);
	if (err)
		goto out_free;
	b->bpf_stats_already_on = bpf_stats_enabled();
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		err = b->ncpus ? b->ncpus : -EINVAL;
		info("bench_tap: libbpf_num_possible_cpus: %s\n",
		     strerror(-err));
		goto out_free;
	}
	libbpf_set_print(libbpf_print);

	err = create_tap(b, mac);
	if (err)
		goto out_tap;
	for (s = 0; s < SZ_MAX; s++) {
		err = build_frame(&b->frames[s], s, mac);
		if (err) {
			info("bench_tap: out of memory for frames\n");
			goto out_frames;
		}
	}

	b->vnet = vnet__open();
	if (!b->vnet) {
		err = -errno;
		info("bench_tap: opening vnet BPF object: %s\n",
		     strerror(errno));
		goto out_frames;
	}
	only_autoload(b->vnet->obj, b->vnet->progs.vnet_xdp_tx,
		      b->vnet->progs.vnet_tc_tx);
	err = vnet__load(b->vnet);
	if (err) {
		info("bench_tap: loading vnet_xdp_tx and vnet_tc_tx: %s\n",
		     strerror(-err));
		goto out_vnet;
	}
	err = shared_load(b);
	if (err)
		goto out_vnet;
	b->empty = bench_empty__open_and_load();
	if (!b->empty) {
		err = -errno;
		info("bench_tap: loading empty BPF programs: %s\n",
		     strerror(errno));
		goto out_vnet;
	}

	err = setup_ring(b);
	if (!err && b->o.keep_clsact)
		err = clsact_create(b);
	if (err)
		goto out_ring;

	err = run(b);
	if (err)
		goto out_ring;

	if (b->o.json)
		print_json(b);
	else
		print_text(b);
	fflush(stdout);

out_ring:
	if (b->ring_ok)
		io_uring_queue_exit(&b->ring);
	if (b->tcx_fd >= 0)
		close(b->tcx_fd);
	bench_empty__destroy(b->empty);
out_vnet:
	vnet_shared__destroy(b->shared);
	vnet__destroy(b->vnet);
out_frames:
	for (s = 0; s < SZ_MAX; s++)
		free(b->frames[s].buf);
out_tap:
	if (b->tap_fd >= 0)
		close(b->tap_fd);
out_free:
	free(b);
	return err ? 1 : 0;
}
