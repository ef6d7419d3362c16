// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fuzz_classify: the BPF classifier against a plain C reference of its
 * rules (classify_ref.h), a differential test.
 *
 * The input is one frame (padded to an Ethernet header, cut at 3500
 * bytes: what a test run takes in one page of linear data).  It runs
 * through the three programs of the vnet skeleton with
 * BPF_PROG_TEST_RUN in the running kernel, as selftests/bpf/test_classify.c
 * loads and runs them: vnet_xdp_tx, vnet_tc_tx and vnet_tc_rx.  The class
 * each program counted is read back from the stats map (the one counter
 * that moved, by one packet and the frame's length) and must be the
 * reference's.  The skb test run refuses an IPv4/IPv6 frame whose IP
 * header is cut short; for those only XDP runs (test_classify sends such
 * frames through a real tap).
 *
 * Needs root and BPF: without them every input is a no-op and the first
 * one says why (test_fuzz.sh checks before running it).
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "fuzz.h"
#include "classify_ref.h"
#include "vnet.skel.h"

#define TC_ACT_UNSPEC (-1)
#define FRAME_MAX 3500

static const char *const names[VNET_CLASS_MAX] = {
	"urgent", "push", "ack", "other", "malformed",
};

static struct vnet *skel;
static int stats_fd = -1, nr_cpus;
static struct vnet_class_stats *percpu;
/* the last counts read, per direction */
static struct vnet_counter last[2][VNET_CLASS_MAX];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static void counts_read(__u32 dir, struct vnet_counter *out)
{
	__u32 key = vnet_key(dir, 0);
	int cpu, i;

	memset(out, 0, sizeof(*out) * VNET_CLASS_MAX);
	if (bpf_map_lookup_elem(stats_fd, &key, percpu))
		abort();
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		const struct vnet_counter *c =
			(const struct vnet_counter *)&percpu[cpu];

		for (i = 0; i < VNET_CLASS_MAX; i++) {
			out[i].packets += c[i].packets;
			out[i].bytes += c[i].bytes;
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	libbpf_set_print(libbpf_quiet);
	if (geteuid())
		return 0;
	skel = vnet__open();
	if (!skel)
		return 0;
	/* the frame hooks only: no tracepoint, no kernel BTF needed */
	bpf_program__set_autoload(skel->progs.vnet_xmit_rx, false);
	if (vnet__load(skel)) {
		vnet__destroy(skel);
		skel = NULL;
		return 0;
	}
	nr_cpus = libbpf_num_possible_cpus();
	percpu = calloc((size_t)nr_cpus, sizeof(*percpu));
	if (!percpu)
		abort();
	stats_fd = bpf_map__fd(skel->maps.stats);
	counts_read(VNET_DIR_TX, last[VNET_DIR_TX]);
	counts_read(VNET_DIR_RX, last[VNET_DIR_RX]);
	return 0;
}

/* Run PROG on the frame; the class it counted, or -1 if the run refused. */
static int run(const char *hook, int prog, __u32 dir, __u32 want_ret,
	       const uint8_t *f, uint32_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f, .data_size_in = len,
		    .repeat = 1);
	struct vnet_counter now[VNET_CLASS_MAX];
	int i, class = -1, err;

	err = bpf_prog_test_run_opts(prog, &opts);
	if (err)
		return -1;
	FUZZ_ASSERT(opts.retval == want_ret, "%s: returned %d, not %d", hook,
		    (int)opts.retval, (int)want_ret);
	counts_read(dir, now);
	for (i = 0; i < VNET_CLASS_MAX; i++) {
		__u64 dp = now[i].packets - last[dir][i].packets;
		__u64 db = now[i].bytes - last[dir][i].bytes;

		if (!dp && !db)
			continue;
		FUZZ_ASSERT(class < 0, "%s: counted as %s and %s", hook,
			    names[class], names[i]);
		FUZZ_ASSERT(dp == 1 && db == len,
			    "%s: %s moved by %llu packets, %llu bytes (frame of %u)",
			    hook, names[i], (unsigned long long)dp,
			    (unsigned long long)db, len);
		class = i;
	}
	FUZZ_ASSERT(class >= 0, "%s: no counter moved", hook);
	memcpy(last[dir], now, sizeof(now));
	return class;
}

/* bpf_prog_test_run_skb() refuses these (EINVAL): short IP headers */
static bool skb_refuses(const uint8_t *f, uint32_t len)
{
	uint32_t proto = ref_be16(f + 12);

	return (proto == 0x0800 && len < 14 + 20) ||
	       (proto == 0x86dd && len < 14 + 40);
}

/*
 * A tc hook (HOOK, program PROG, direction DIR) on frame F: the class the
 * reference gives (WANT), unless the kernel refuses to run such a frame.
 */
static void tc_check(const char *hook, int prog, __u32 dir, const uint8_t *f,
		     uint32_t len, int want)
{
	int got = run(hook, prog, dir, (__u32)TC_ACT_UNSPEC, f, len);

	FUZZ_ASSERT(got >= 0 || skb_refuses(f, len),
		    "%s: test run refused a %u byte frame", hook, len);
	FUZZ_ASSERT(got < 0 || got == want, "%s: %s, the reference says %s",
		    hook, names[got], names[want]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool said;
	uint8_t f[FRAME_MAX];
	uint32_t len = size > FRAME_MAX ? FRAME_MAX : (uint32_t)size;
	int want, got;

	if (!skel) {
		if (!said)
			fprintf(stderr, "fuzz_classify: the vnet skeleton is not loaded (needs root and BPF): nothing runs\n");
		said = true;
		return 0;
	}
	memcpy(f, data, len);
	if (len < 14) {
		memset(f + len, 0, 14 - len);
		len = 14;
	}
	want = ref_classify(f, len);

	got = run("vnet_xdp_tx", bpf_program__fd(skel->progs.vnet_xdp_tx),
		  VNET_DIR_TX, XDP_PASS, f, len);
	FUZZ_ASSERT(got >= 0, "vnet_xdp_tx: test run refused a %u byte frame",
		    len);
	FUZZ_ASSERT(got == want, "vnet_xdp_tx: %s, the reference says %s",
		    names[got], names[want]);

	tc_check("vnet_tc_tx", bpf_program__fd(skel->progs.vnet_tc_tx),
		 VNET_DIR_TX, f, len, want);
	tc_check("vnet_tc_rx", bpf_program__fd(skel->progs.vnet_tc_rx),
		 VNET_DIR_RX, f, len, want);
	return 0;
}
