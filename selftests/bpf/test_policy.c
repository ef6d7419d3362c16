// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_policy: the adaptive batching policy (bpf/policy.h, docs/policy.md)
 * through BPF_PROG_TEST_RUN on crafted frames.
 *
 * The classifier programs run the policy on a queue whose state entry has
 * `adaptive` set; each case sets that gate and the queue's config entry the
 * way vnet_coalesce_set() does (bounds, VNET_CFG_ADAPTIVE_* flags), then
 * plays a traffic pattern and reads the queue state back:
 *  - bulk: MTU-sized TCP segments without PSH, back to back (test runs with
 *    repeat), must walk the recommendation to the batch end of the profile
 *    table, one step per window;
 *  - request/response: a push frame and an ACK per transaction with gaps,
 *    or sparse ACKs, must put it at the latency end;
 *  - mixed: a third of the frames PSH: one step per window to the middle;
 *  - bounds: after every window the recommendation is inside the config's
 *    [min, max], for the built-in policy and for a replacement;
 *  - off: no window state moves while the gate is off.
 * policy/example_linked links bpf/policy_example.bpf.o into the classifier
 * with vnet_skel_open(), as `vnetctl attach --policy` does, and checks that
 * the replacement decides, with vnet's maps and inside the bounds.
 *
 * XDP test runs account to TX queue 0, tc test runs of vnet_tc_rx to RX
 * queue 0 (see test_classify.c).
 *
 * coalesce/ethtool_* exercise the ethtool netlink side of coalescing
 * (user/lib/ethtool.c) on taps in a network namespace of the test's own:
 * get/set of the tap's rx-frames, tun's silent cap at 64, the kernel's
 * extack message, and the monitor group's notification of a direct
 * `ethtool -C`.  One PASS/FAIL/SKIP line per case.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <linux/if_tun.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <vnet/abi.h>
#include "libvnet.h"
#include "vnet.skel.h"

#include "test.h"
#include "frames.h"
#include "skel_test.h"

#define TC_ACT_UNSPEC (-1)
#define NR_PROFILES 5
#define WIN_FRAMES 64 /* VNET_POLICY_WIN_FRAMES */

static struct vnet *skel;
static int cfg_fd, queues_fd, xdp_fd, tc_rx_fd;
static uint8_t bulk[2048], push[256], ack[128], swrite[1024];
static size_t bulk_len, push_len, ack_len, swrite_len;

static const struct vnet_config def_cfg = {
	.min_frames = 1, .max_frames = 64, .min_usecs = 0, .max_usecs = 256,
};

static ssize_t tcp_frame(uint8_t *buf, size_t cap, uint8_t flags,
			 size_t payload)
{
	struct frame_spec s = tcp4(flags, payload);

	return frame_build(&s, buf, cap, NULL);
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * The gate and config of one queue direction, as vnet_coalesce_set() sets
 * them: config entry with the adaptive flag and bounds, a fresh state entry
 * with the gate on (rec_profile ~0: none yet).
 */
static bool policy_on(__u32 dir, __u32 queue, const struct vnet_config *cfg,
		      bool gate)
{
	struct vnet_queue_state q = { .adaptive = gate, .rec_profile = ~0u };
	struct vnet_config c = *cfg;
	__u32 key = vnet_key(dir, queue);

	c.flags |= dir == VNET_DIR_TX ? VNET_CFG_ADAPTIVE_TX :
					VNET_CFG_ADAPTIVE_RX;
	return ASSERT_OK(bpf_map_update_elem(cfg_fd, &queue, &c, BPF_ANY),
			 "config update") &&
	       ASSERT_OK(bpf_map_update_elem(queues_fd, &key, &q, BPF_ANY),
			 "queues update");
}

static bool state(__u32 dir, __u32 queue, struct vnet_queue_state *q)
{
	__u32 key = vnet_key(dir, queue);

	return ASSERT_OK(bpf_map_lookup_elem(queues_fd, &key, q),
			 "queues lookup");
}

static bool run(int fd, const void *frame, size_t len, __u32 repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = (__u32)len, .repeat = repeat);

	return ASSERT_OK(bpf_prog_test_run_opts(fd, &opts), "test_run");
}

static bool in_bounds(const struct vnet_queue_state *q,
		      const struct vnet_config *c)
{
	return q->rec_frames >= c->min_frames &&
	       q->rec_frames <= c->max_frames &&
	       q->rec_usecs >= c->min_usecs && q->rec_usecs <= c->max_usecs;
}

/*
 * Back-to-back MTU segments, `windows` windows of them, checking the
 * bounds after each closed window.  One test run per frame: a test run
 * with repeat > 1 switches the XDP dispatcher (bpf_prog_change_xdp) and
 * synchronizes RCU twice, which puts tens of milliseconds between runs, an
 * idle gap that the policy rightly reads as sparse traffic.
 */
static bool play_bulk(int fd, __u32 dir, int windows,
		      const struct vnet_config *bounds)
{
	struct vnet_queue_state q;
	int i, f;

	for (i = 0; i < windows; i++) {
		for (f = 0; f < WIN_FRAMES; f++)
			if (!run(fd, bulk, bulk_len, 1))
				return false;
		if (!state(dir, 0, &q))
			return false;
		if (bounds && q.nr_windows &&
		    !ASSERT_TRUE(in_bounds(&q, bounds),
				 "bulk: inside the bounds"))
			return false;
	}
	return true;
}

/* transactions: a request with PSH and an ACK, gap_us apart */
static bool play_rr(int fd, __u32 dir, int transactions, long gap_us,
		    const struct vnet_config *bounds)
{
	struct vnet_queue_state q;
	int i;

	for (i = 0; i < transactions; i++) {
		if (!run(fd, push, push_len, 1) || !run(fd, ack, ack_len, 1))
			return false;
		if (bounds) {
			if (!state(dir, 0, &q) ||
			    (q.nr_windows &&
			     !ASSERT_TRUE(in_bounds(&q, bounds),
					  "rr: inside the bounds")))
				return false;
		}
		sleep_us(gap_us);
	}
	return true;
}

static void test_off(void)
{
	struct vnet_queue_state q;

	/* the config says adaptive, the gate is off: the gate decides */
	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, false))
		return;
	if (!run(xdp_fd, bulk, bulk_len, 1000) || !state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.urgent, 1000, "frames counted");
	ASSERT_EQ(q.win_packets, 0, "win_packets");
	ASSERT_EQ(q.win_bytes, 0, "win_bytes");
	ASSERT_EQ(q.win_start_ns, 0, "win_start_ns");
	ASSERT_EQ(q.nr_windows, 0, "nr_windows");
	ASSERT_EQ(q.rec_gen, 0, "rec_gen");
}

static void test_bulk_to_batch(void)
{
	struct vnet_queue_state q;

	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, true))
		return;
	/* 1 window to start the clock, 2 steps up from the middle, spare */
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 8, &def_cfg) ||
	    !state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.rec_profile, NR_PROFILES - 1, "rec_profile");
	ASSERT_EQ(q.rec_zone, VNET_POLICY_ZONE_BULK, "rec_zone");
	ASSERT_EQ(q.rec_frames, 64, "rec_frames");
	ASSERT_EQ(q.rec_usecs, 128, "rec_usecs (TX ladder)");
	ASSERT_GE(q.nr_windows, 3, "nr_windows");
	ASSERT_GE(q.avg_rate, 16 * 16, "avg_rate (frames/ms x16)");
	ASSERT_EQ(q.avg_size, bulk_len, "avg_size");
	ASSERT_EQ(q.avg_urgent_pct, 100 * 16, "avg_urgent_pct");
	ASSERT_EQ(q.avg_push_pct, 0, "avg_push_pct");
}

/* one step per window, never a jump, on the way to the batch end */
static void test_bulk_steps(void)
{
	struct vnet_queue_state q;
	__u32 prev = 2, gen = 0; /* the policy starts in the middle */
	int i;

	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, true))
		return;
	/* the first window only starts the clock */
	if (!run(xdp_fd, bulk, bulk_len, 1) || !state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.nr_windows, 0, "first frame: no window yet");
	for (i = 0; i < 4; i++) {
		if (!play_bulk(xdp_fd, VNET_DIR_TX, 1, NULL) ||
		    !state(VNET_DIR_TX, 0, &q))
			return;
		ASSERT_EQ(q.nr_windows, i + 1, "one window per 64 frames");
		ASSERT_EQ(q.rec_profile, prev + 1 < NR_PROFILES ? prev + 1 :
								    prev,
			  "one step up");
		if (q.rec_profile != prev || !i)
			ASSERT_EQ(q.rec_gen, gen + 1, "rec_gen bumped");
		else
			ASSERT_EQ(q.rec_gen, gen, "rec_gen unchanged");
		prev = q.rec_profile;
		gen = q.rec_gen;
	}
}

static void test_rr_to_latency(void)
{
	struct vnet_queue_state q;

	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, true))
		return;
	/* from the batch end ... */
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 8, NULL) ||
	    !state(VNET_DIR_TX, 0, &q) ||
	    !ASSERT_EQ(q.rec_profile, NR_PROFILES - 1, "bulk first"))
		return;
	/*
	 * ... request/response: 500 us per transaction, half PSH, for 15 ms:
	 * windows close on push frames by the accounting's timestamps, which
	 * are kept to the jiffy (up to 10 ms)
	 */
	if (!play_rr(xdp_fd, VNET_DIR_TX, 30, 500, &def_cfg) ||
	    !state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.rec_profile, 0, "rec_profile");
	ASSERT_EQ(q.rec_zone, VNET_POLICY_ZONE_LATENCY, "rec_zone");
	ASSERT_EQ(q.rec_frames, 1, "rec_frames");
	ASSERT_EQ(q.rec_usecs, 0, "rec_usecs");
	ASSERT_GT(q.avg_push_pct, 0, "avg_push_pct moved");
}

/* sparse pure ACKs: low rate alone means latency */
static void test_sparse_to_latency(void)
{
	struct vnet_queue_state q;
	int i;

	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, true))
		return;
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 8, NULL))
		return;
	/*
	 * ACKs carry no timestamp: the window closes after 64 of them; 1.5 ms
	 * apart is under the sparse rate (1 frame/ms)
	 */
	for (i = 0; i < WIN_FRAMES + 2; i++) {
		if (!run(xdp_fd, ack, ack_len, 1))
			return;
		sleep_us(1500);
	}
	if (!state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.rec_profile, 0, "rec_profile");
	ASSERT_EQ(q.rec_zone, VNET_POLICY_ZONE_LATENCY, "rec_zone");
	ASSERT_LT(q.avg_push_pct, 1, "no push frames");
}

/*
 * A small-write stream (iperf3 -l 64 in a guest): PSH on every segment,
 * because each write ends one, but segments of several writes (autocorking
 * grows them while completions are held) at a steady rate.  Not
 * request/response: from the latency end, one step per window to the
 * batch end.  Request/response frames of the same PSH share but small
 * (the rr case's 100-byte messages) still go to latency at once.
 */
static void test_small_writes_to_batch(void)
{
	struct vnet_queue_state q;
	int i, w;

	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, true))
		return;
	/* start at the latency end: sparse frames first */
	for (i = 0; i < WIN_FRAMES + 2; i++) {
		if (!run(xdp_fd, ack, ack_len, 1))
			return;
		sleep_us(1500);
	}
	if (!state(VNET_DIR_TX, 0, &q) ||
	    !ASSERT_EQ(q.rec_profile, 0, "latency first"))
		return;
	/* the window open since the last ACKs closes on the first writes */
	for (i = 0; i < WIN_FRAMES; i++)
		if (!run(xdp_fd, swrite, swrite_len, 1))
			return;
	for (w = 0; w < NR_PROFILES + 2; w++) {
		for (i = 0; i < WIN_FRAMES; i++)
			if (!run(xdp_fd, swrite, swrite_len, 1))
				return;
		if (!state(VNET_DIR_TX, 0, &q))
			return;
		if (w < NR_PROFILES - 1 &&
		    !ASSERT_LE(q.rec_profile, (__u32)w + 2,
			       "one step per window"))
			return;
		if (!ASSERT_NEQ(q.rec_zone, VNET_POLICY_ZONE_LATENCY,
				"small writes are not request/response"))
			return;
	}
	ASSERT_EQ(q.rec_zone, VNET_POLICY_ZONE_STREAM, "rec_zone");
	ASSERT_EQ(q.rec_profile, NR_PROFILES - 1, "rec_profile: batch end");
	ASSERT_EQ(q.rec_frames, 64, "rec_frames");
	ASSERT_EQ(q.rec_usecs, 128, "rec_usecs (TX ladder)");
	ASSERT_GE(q.avg_push_pct, 50 * 16, "avg_push_pct: PSH on most");
	ASSERT_GE(q.avg_size, 256, "avg_size: several writes a segment");
}

/* a third of the frames PSH: neither zone, one step to the middle */
static void test_mixed_to_middle(void)
{
	struct vnet_queue_state q;
	int i, w;

	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, true))
		return;
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 8, NULL) ||
	    !state(VNET_DIR_TX, 0, &q) ||
	    !ASSERT_EQ(q.rec_profile, NR_PROFILES - 1, "bulk first"))
		return;
	for (w = 0; w < 12; w++) {
		for (i = 0; i < WIN_FRAMES / 3 + 1; i++)
			if (!run(xdp_fd, push, push_len, 1) ||
			    !run(xdp_fd, bulk, bulk_len, 1) ||
			    !run(xdp_fd, bulk, bulk_len, 1))
				return;
	}
	if (!state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.rec_profile, 2, "rec_profile");
	ASSERT_EQ(q.rec_zone, VNET_POLICY_ZONE_MIXED, "rec_zone");
	ASSERT_EQ(q.rec_frames, 16, "rec_frames");
	ASSERT_EQ(q.rec_usecs, 32, "rec_usecs");
}

static void test_bounds(void)
{
	static const struct vnet_config narrow = {
		.min_frames = 4, .max_frames = 16,
		.min_usecs = 10, .max_usecs = 40,
	};
	struct vnet_queue_state q;

	if (!policy_on(VNET_DIR_TX, 0, &narrow, true))
		return;
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 8, &narrow) ||
	    !state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.rec_profile, NR_PROFILES - 1, "bulk: batch end");
	ASSERT_EQ(q.rec_frames, 16, "bulk: rec_frames = max-frames");
	ASSERT_EQ(q.rec_usecs, 40, "bulk: rec_usecs = max-usecs");
	if (!play_rr(xdp_fd, VNET_DIR_TX, 30, 500, &narrow) ||
	    !state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.rec_profile, 0, "rr: latency end");
	ASSERT_EQ(q.rec_frames, 4, "rr: rec_frames = min-frames");
	ASSERT_EQ(q.rec_usecs, 10, "rr: rec_usecs = min-usecs");
}

/* tc egress (to the guest): the RX direction and its longer ladder */
static void test_rx_direction(void)
{
	struct vnet_queue_state q, tx;

	if (!policy_on(VNET_DIR_RX, 0, &def_cfg, true) ||
	    !state(VNET_DIR_TX, 0, &tx))
		return;
	if (!play_bulk(tc_rx_fd, VNET_DIR_RX, 8, &def_cfg) ||
	    !state(VNET_DIR_RX, 0, &q))
		return;
	ASSERT_EQ(q.rec_profile, NR_PROFILES - 1, "rec_profile");
	ASSERT_EQ(q.rec_frames, 64, "rec_frames");
	ASSERT_EQ(q.rec_usecs, 256, "rec_usecs (RX ladder)");
	if (!state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.nr_windows, tx.nr_windows, "TX entry untouched");
}

/* the config flag cleared behind the gate's back: the gate follows */
static void test_flag_cleared(void)
{
	struct vnet_config c = def_cfg;
	struct vnet_queue_state q;
	__u32 queue = 0;

	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, true))
		return;
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 3, NULL))
		return;
	if (!ASSERT_OK(bpf_map_update_elem(cfg_fd, &queue, &c, BPF_ANY),
		       "clear the flag"))
		return;
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 2, NULL) ||
	    !state(VNET_DIR_TX, 0, &q))
		return;
	ASSERT_EQ(q.adaptive, 0, "gate turned off");
	ASSERT_EQ(q.win_packets, 0, "no window after that");
}

/* build/bpf/policy_example.bpf.o next to this program's build dir */
static bool example_path(char *path, size_t len, char *why, size_t wlen)
{
	char exe[PATH_MAX], cmd[PATH_MAX * 2 + 64], *p;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(why, wlen, "cannot find my build directory");
		return false;
	}
	exe[n] = '\0';
	p = strrchr(exe, '/'); /* .../OUT/selftests/test_policy */
	if (p)
		*p = '\0';
	p = strrchr(exe, '/');
	if (p)
		*p = '\0';
	if (snprintf(path, len, "%.*s/bpf/policy_example.bpf.o",
		     PATH_MAX - 64, exe) >= (int)len) {
		snprintf(why, wlen, "build directory path too long");
		return false;
	}
	/*
	 * Not part of `make all`: (re)build it with the Makefile's own rule
	 * when run from the source tree, so that it is never older than the
	 * ABI header (the linker refuses a stale layout).
	 */
	if (!access("bpf/policy_example.bpf.c", R_OK) &&
	    !access("Makefile", R_OK)) {
		snprintf(cmd, sizeof(cmd), "make -s OUT='%s' '%s' >&2", exe,
			 path);
		if (system(cmd))
			fprintf(stderr, "# make %s failed\n", path);
	}
	if (!access(path, R_OK))
		return true;
	snprintf(why, wlen, "%s is not built (make %s)", path, path);
	return false;
}

/*
 * The example policy linked in (vnet_skel_open()): its vnet_policy_window()
 * decides, reads the queues map (the classifier's, through its extern
 * declaration), and the caller's clamp still holds.
 */
static void test_example_policy(void)
{
	struct vnet_queue_state q, other = { .adaptive = 1 };
	struct vnet_config c = def_cfg;
	__u32 key = vnet_key(VNET_DIR_RX, 0), queue = 0;
	char path[PATH_MAX], why[PATH_MAX + 64];
	int saved_cfg = cfg_fd, saved_queues = queues_fd, saved_xdp = xdp_fd;
	struct vnet_err err = {};
	struct vnet *ex;

	if (!example_path(path, sizeof(path), why, sizeof(why))) {
		test_skip("%s", why);
		return;
	}
	ex = vnet_skel_open(path, &err);
	if (!ex) {
		test_fail("vnet_skel_open: %s", err.msg);
		return;
	}
	bpf_program__set_autoload(ex->progs.vnet_xmit_rx, false);
	if (!ASSERT_OK(vnet__load(ex), "load the linked classifier"))
		goto out;
	cfg_fd = bpf_map__fd(ex->maps.config);
	queues_fd = bpf_map__fd(ex->maps.queues);
	xdp_fd = bpf_program__fd(ex->progs.vnet_xdp_tx);

	if (!policy_on(VNET_DIR_TX, 0, &def_cfg, true))
		goto out;
	if (!ASSERT_OK(bpf_map_update_elem(queues_fd, &key, &other, BPF_ANY),
		       "RX entry"))
		goto out;
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 3, &def_cfg) ||
	    !state(VNET_DIR_TX, 0, &q))
		goto out;
	/* about 64 KB per notification, 50 us */
	ASSERT_EQ(q.rec_frames, 65536 / bulk_len, "example: rec_frames");
	ASSERT_EQ(q.rec_usecs, 50, "example: rec_usecs");
	ASSERT_EQ(q.rec_zone, VNET_POLICY_ZONE_BULK, "example: rec_zone");
	ASSERT_EQ(q.rec_profile, ~0u, "example: no profile");

	/* it reads the queues map: the RX side looks latency-bound */
	other.rec_zone = VNET_POLICY_ZONE_LATENCY;
	if (!ASSERT_OK(bpf_map_update_elem(queues_fd, &key, &other, BPF_ANY),
		       "RX entry latency"))
		goto out;
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 2, &def_cfg) ||
	    !state(VNET_DIR_TX, 0, &q))
		goto out;
	ASSERT_EQ(q.rec_frames, 1, "example follows the RX side: frames");
	ASSERT_EQ(q.rec_usecs, 0, "example follows the RX side: usecs");

	/* the caller's clamp holds for a replacement too */
	other.rec_zone = VNET_POLICY_ZONE_BULK;
	c.max_usecs = 40;
	c.flags = VNET_CFG_ADAPTIVE_TX;
	if (!ASSERT_OK(bpf_map_update_elem(queues_fd, &key, &other, BPF_ANY),
		       "RX entry bulk") ||
	    !ASSERT_OK(bpf_map_update_elem(cfg_fd, &queue, &c, BPF_ANY),
		       "max-usecs 40"))
		goto out;
	if (!play_bulk(xdp_fd, VNET_DIR_TX, 2, &c) ||
	    !state(VNET_DIR_TX, 0, &q))
		goto out;
	ASSERT_EQ(q.rec_usecs, 40, "example clamped to max-usecs");
out:
	cfg_fd = saved_cfg;
	queues_fd = saved_queues;
	xdp_fd = saved_xdp;
	vnet_skel_destroy(ex);
}

/* what is not a policy object is refused with a reason */
static void test_bad_policy(void)
{
	char path[PATH_MAX], why[PATH_MAX + 64], *p;
	struct vnet_err err = {};
	struct vnet *bad;

	if (!example_path(path, sizeof(path), why, sizeof(why))) {
		test_skip("%s", why);
		return;
	}
	/* the classifier object itself: programs, and a weak function */
	p = strstr(path, "/bpf/policy_example.bpf.o");
	if (!p)
		return;
	strcpy(p, "/bpf/xdp_classify.bpf.o");
	bad = vnet_skel_open(path, &err);
	ASSERT_NULL(bad, "xdp_classify.bpf.o refused");
	ASSERT_TRUE(strstr(err.msg, "no programs") != NULL,
		    "message: no programs");
	vnet_skel_destroy(bad);
	err.msg[0] = '\0';
	bad = vnet_skel_open("/nonexistent.bpf.o", &err);
	ASSERT_NULL(bad, "missing file refused");
	ASSERT_TRUE(strstr(err.msg, "/nonexistent.bpf.o") != NULL,
		    "message names the file");
	vnet_skel_destroy(bad);
	bad = vnet_skel_open("/proc/self/status", &err);
	ASSERT_NULL(bad, "not ELF refused");
	vnet_skel_destroy(bad);
}

/* ------------------------------------------------------------------ */
/*
 * ethtool netlink (user/lib/ethtool.c) on taps of a private network
 * namespace: what vnetctl coalesce and vnetd's monitor rely on.
 */

static int tap_new(char *name)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", "vnetpol%d");
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		close(fd);
		return -errno;
	}
	snprintf(name, IF_NAMESIZE, "%s", ifr.ifr_name);
	return fd;
}

/*
 * The ethtool tests' two taps, in a network namespace of this process's
 * own: made by the first of them that runs (it moves the process there,
 * so these tests come last), closed by the teardown.
 */
static struct {
	bool tried;
	char why[96];
	char a[IF_NAMESIZE], b[IF_NAMESIZE];
	int fa, fb, ia, ib;
} eth = { .fa = -1, .fb = -1 };

static bool ethtool_env(void)
{
	if (!eth.tried) {
		eth.tried = true;
		if (unshare(CLONE_NEWNET)) {
			snprintf(eth.why, sizeof(eth.why),
				 "cannot unshare a network namespace");
		} else {
			eth.fa = tap_new(eth.a);
			eth.fb = tap_new(eth.b);
			if (eth.fa < 0 || eth.fb < 0) {
				snprintf(eth.why, sizeof(eth.why),
					 "cannot create taps (/dev/net/tun)");
			} else {
				eth.ia = (int)if_nametoindex(eth.a);
				eth.ib = (int)if_nametoindex(eth.b);
			}
		}
	}
	if (eth.why[0]) {
		test_skip("%s", eth.why);
		return false;
	}
	return true;
}

static void test_ethtool_set_get(void)
{
	struct vnet_ethtool_coalesce c = { .present = VNET_ETC_RX_FRAMES };
	struct vnet_err err = {};
	int ret;

	if (!ethtool_env())
		return;
	c.rx_frames = 21;
	ret = vnet_ethtool_coalesce_set(eth.ia, &c, &err);
	if (ret)
		test_fail("set: %s", err.msg);
	memset(&c, 0, sizeof(c));
	ret = vnet_ethtool_coalesce_get(eth.ia, &c, &err);
	if (ret)
		test_fail("get: %s", err.msg);
	ASSERT_EQ(c.rx_frames, 21, "rx-frames");
	ASSERT_EQ(c.present, VNET_ETC_RX_FRAMES, "tun reports rx-frames only");
}

/* why vnetctl refuses more than 64: tun caps it without a word */
static void test_ethtool_tun_caps(void)
{
	struct vnet_ethtool_coalesce c = { .present = VNET_ETC_RX_FRAMES,
					   .rx_frames = 65 };
	struct vnet_err err = {};
	int ret;

	if (!ethtool_env())
		return;
	ret = vnet_ethtool_coalesce_set(eth.ia, &c, &err);
	ASSERT_OK(ret, "set 65 is accepted");
	ret = vnet_ethtool_coalesce_get(eth.ia, &c, &err);
	ASSERT_OK(ret, "get");
	ASSERT_EQ(c.rx_frames, 64, "rx-frames after 65");
}

static void test_ethtool_extack(void)
{
	struct vnet_ethtool_coalesce c = { .present = VNET_ETC_TX_FRAMES,
					   .tx_frames = 3 };
	struct vnet_err err = {};
	int ret;

	if (!ethtool_env())
		return;
	ret = vnet_ethtool_coalesce_set(eth.ia, &c, &err);
	ASSERT_EQ(ret, -EINVAL, "tx-frames on a tap");
	ASSERT_TRUE(strstr(err.msg, "unsupported parameter") != NULL,
		    "the kernel's extack message");
}

static void test_ethtool_monitor(void)
{
	struct vnet_ethtool_coalesce c;
	struct vnet_ethtool_monitor *mon = NULL;
	struct vnet_err err = {};
	char cmd[128];
	int ret;

	if (!ethtool_env())
		return;
	ret = vnet_ethtool_monitor_open(&mon, &err);
	if (ret) {
		test_fail("monitor_open: %s", err.msg);
		return;
	}
	/* another device's notification is not ours */
	c = (struct vnet_ethtool_coalesce){ .present = VNET_ETC_RX_FRAMES,
					    .rx_frames = 5 };
	ASSERT_OK(vnet_ethtool_coalesce_set(eth.ib, &c, &err),
		  "set on the other");
	ASSERT_EQ(vnet_ethtool_monitor_read(mon, eth.ia, 200, &c, &err), 0,
		  "no notification for this tap");
	/* a direct `ethtool -C`, as an operator types it */
	snprintf(cmd, sizeof(cmd), "ethtool -C %s rx-frames 7 >/dev/null 2>&1",
		 eth.a);
	if (system(cmd)) {
		c = (struct vnet_ethtool_coalesce){ .present = VNET_ETC_RX_FRAMES,
						    .rx_frames = 7 };
		ASSERT_OK(vnet_ethtool_coalesce_set(eth.ia, &c, &err),
			  "set (no ethtool binary)");
	}
	memset(&c, 0, sizeof(c));
	ret = vnet_ethtool_monitor_read(mon, eth.ia, 2000, &c, &err);
	ASSERT_EQ(ret, 1, "COALESCE_NTF for this tap");
	ASSERT_EQ(c.rx_frames, 7, "rx-frames in the notification");
	ASSERT_EQ(vnet_ethtool_monitor_read(mon, eth.ia, 0, &c, &err), 0,
		  "nothing more queued");
	vnet_ethtool_monitor_close(mon);
}

/*
 * core_btf.c: vnet_xmit_rx relocated against the cut of the kernel's BTF
 * (loaded through vnet's tp_btf handler, no kernel BTF parsed for the
 * object) is the program libbpf relocates against the kernel's whole BTF
 * itself: the same type, tracepoint and instructions (but for the
 * addresses of the maps).  libbpf's load comes first: making the cut
 * registers the handler for the rest of the process.
 */
static bool xmit_load(struct vnet *s, struct bpf_prog_info *info,
		      struct bpf_insn **insns, const char *what)
{
	struct bpf_program *prog;
	__u32 len = sizeof(*info), n;
	int fd;

	*insns = NULL;
	bpf_object__for_each_program(prog, s->obj)
		bpf_program__set_autoload(prog, prog == s->progs.vnet_xmit_rx);
	if (!ASSERT_OK(vnet__load(s), what))
		return false;
	fd = bpf_program__fd(s->progs.vnet_xmit_rx);
	memset(info, 0, sizeof(*info));
	if (!ASSERT_OK(bpf_obj_get_info_by_fd(fd, info, &len), "prog info"))
		return false;
	n = info->xlated_prog_len;
	*insns = calloc(1, n);
	if (!ASSERT_OK_PTR(*insns, "calloc"))
		return false;
	memset(info, 0, sizeof(*info));
	info->xlated_prog_len = n;
	info->xlated_prog_insns = (__u64)(unsigned long)*insns;
	len = sizeof(*info);
	return ASSERT_OK(bpf_obj_get_info_by_fd(fd, info, &len), "xlated");
}

static void test_core_btf(void)
{
	struct bpf_prog_info a, b;
	struct bpf_insn *ia = NULL, *ib = NULL;
	struct vnet *sa = NULL, *sb = NULL;
	struct vnet_err err = {};
	unsigned int i, n, diff = 0;

	sa = vnet__open();
	if (!ASSERT_OK_PTR(sa, "vnet__open") ||
	    !xmit_load(sa, &a, &ia, "load against the kernel's BTF"))
		goto out;
	sb = vnet_skel_open_core(NULL, vnet_skel_core_btf(), &err);
	if (!ASSERT_OK_PTR(sb, "vnet_skel_open_core") ||
	    !ASSERT_OK_PTR(vnet_core_btf(NULL), "the cut made") ||
	    !xmit_load(sb, &b, &ib, "load against the cut"))
		goto out;
	ASSERT_EQ(b.type, BPF_PROG_TYPE_TRACING, "program type");
	ASSERT_EQ(b.attach_btf_id, a.attach_btf_id, "tracepoint's BTF id");
	ASSERT_GT(a.attach_btf_id, 0, "a tracepoint's BTF id");
	if (!ASSERT_EQ(b.xlated_prog_len, a.xlated_prog_len, "length"))
		goto out;
	n = a.xlated_prog_len / sizeof(*ia);
	for (i = 0; i < n; i++) {
		if (ia[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			i++; /* a map's address: another map */
			continue;
		}
		diff += memcmp(&ia[i], &ib[i], sizeof(*ia)) != 0;
	}
	ASSERT_EQ(diff, 0, "instructions that differ");
out:
	free(ia);
	free(ib);
	vnet__destroy(sa);
	vnet_skel_destroy(sb);
}

/* root, BPF and the skeleton, loaded once for every test */
static int setup(char *why, size_t len)
{
	if (!test_have_root_bpf(why, len))
		return 1;
	bulk_len = (size_t)tcp_frame(bulk, sizeof(bulk), FRAME_TCP_ACK, 1446);
	push_len = (size_t)tcp_frame(push, sizeof(push),
				     FRAME_TCP_ACK | FRAME_TCP_PSH, 100);
	ack_len = (size_t)tcp_frame(ack, sizeof(ack), FRAME_TCP_ACK, 0);
	/* a small-write stream's segment: PSH (each write ends one), grown
	 * by autocorking to several writes */
	swrite_len = (size_t)tcp_frame(swrite, sizeof(swrite),
				       FRAME_TCP_ACK | FRAME_TCP_PSH, 640);

	skel = vnet_test_skel(why, len);
	if (!skel)
		return 1;
	cfg_fd = bpf_map__fd(skel->maps.config);
	queues_fd = bpf_map__fd(skel->maps.queues);
	xdp_fd = bpf_program__fd(skel->progs.vnet_xdp_tx);
	tc_rx_fd = bpf_program__fd(skel->progs.vnet_tc_rx);
	return 0;
}

static void teardown(void)
{
	vnet__destroy(skel);
	if (eth.fa >= 0)
		close(eth.fa);
	if (eth.fb >= 0)
		close(eth.fb);
}

VNET_TEST("policy/off_no_window", test_off);
VNET_TEST("policy/bulk_to_batch", test_bulk_to_batch);
VNET_TEST("policy/bulk_one_step_per_window", test_bulk_steps);
VNET_TEST("policy/rr_to_latency", test_rr_to_latency);
VNET_TEST("policy/sparse_to_latency", test_sparse_to_latency);
VNET_TEST("policy/small_writes_to_batch", test_small_writes_to_batch);
VNET_TEST("policy/mixed_to_middle", test_mixed_to_middle);
VNET_TEST("policy/bounds", test_bounds);
VNET_TEST("policy/rx_direction", test_rx_direction);
VNET_TEST("policy/flag_cleared", test_flag_cleared);
VNET_TEST("policy/example_linked", test_example_policy);
VNET_TEST("policy/core_btf_same_program", test_core_btf);
VNET_TEST("policy/bad_policy_refused", test_bad_policy);
/* last: they move this process into a network namespace of its own */
VNET_TEST("coalesce/ethtool_set_get", test_ethtool_set_get);
VNET_TEST("coalesce/ethtool_tun_caps_at_64", test_ethtool_tun_caps);
VNET_TEST("coalesce/ethtool_extack", test_ethtool_extack);
VNET_TEST("coalesce/ethtool_monitor", test_ethtool_monitor);

int main(int argc, char **argv)
{
	static const struct test_main_opts opts = {
		.setup = setup,
		.teardown = teardown,
	};

	return test_main(argc, argv, "test_policy", &opts);
}
