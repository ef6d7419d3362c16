// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_classify: the classifier programs against crafted frames.
 *
 * Frame cases (classify/<shape>) run each frame through the three programs
 * with BPF_PROG_TEST_RUN: vnet_xdp_tx (must return XDP_PASS), vnet_tc_rx
 * and vnet_tc_tx (must return TC_ACT_UNSPEC: the classifier never gives a
 * verdict, see tc_classify.bpf.c).  After each run exactly one class
 * counter of the stats map must have moved, by one packet and by the frame
 * length in bytes, and the queues map must agree (urgent/push running
 * counts, last_*_ns).  Test runs account to queue 0:
 *  - XDP without ctx_in runs on the loopback's rx queue 0;
 *  - bpf_prog_test_run_skb() refuses a non-zero __sk_buff.queue_mapping in
 *    ctx_in (only mark, priority, ingress_ifindex, ifindex, cb, tstamp,
 *    wire_len, gso_segs, gso_size and hwtstamp may be set), so the skb has
 *    queue_mapping 0: vnet_tc_rx counts RX queue 0 and vnet_tc_tx TX queue 0.
 * Test runs are limited to one page of linear data (the kernel passes the
 * rest of a larger XDP frame as fragments, which a non-frags program never
 * sees on a real tap, and refuses larger skbs), so the largest test-run
 * frame is 3500 bytes.
 *
 * The skb test run also refuses an IPv4/IPv6 frame whose IP header is cut
 * short, and no test run takes a frame under ETH_HLEN: those shapes run
 * through XDP only (a short linear window stands for the short frame), and
 * through tc egress on the tap below.
 *
 * Queue and size cases (classify/xdp_rx_queue_index, classify/tap_*) use a
 * real multiqueue tap in a private network namespace: XDP test runs with
 * xdp_md.rx_queue_index (which needs a real ifindex), frames written into
 * given tap queues with the programs attached (XDP, tc ingress), and frames
 * sent out of the tap through a PACKET_VNET_HDR socket with vnet_tc_rx on
 * tc egress: 60 KB GSO frames and jumbo frames whose headers are not in the
 * skb's linear part (the pull path of vnet_tc_classify()).  Last, guest-RX
 * counting as vnetctl attach sets it up (rx_count_at_xmit: tc egress
 * classifies, vnet_xmit_rx on net_dev_start_xmit counts at the queue tun
 * picked) in a second instance of the skeleton.
 *
 * One program from several files (classify.h): the skeleton, the stats
 * snapshots and the test-run hooks in classify_lib.c, the frame table, the
 * short frames and the queues map in classify_frames.c, the tap cases in
 * classify_tap.c; main() here.
 *
 * Prints one PASS/FAIL/SKIP line per case (see test.h) and exits non-zero
 * when any case failed.
 */
#include "classify.h"

/* ------------------------------------------------------------------ */

static const char *const groups[] = {
	"classify/frames",
	"classify/short_window",
	"classify/queue_state",
	"classify/tap",
};

static void skip_groups(const char *why)
{
	size_t i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		test_skip_all(groups[i], why);
}

int main(void)
{
	char why[160];

	if (!test_have_root_bpf(why, sizeof(why))) {
		skip_groups(why);
		return test_summary("test_classify");
	}

	test_start("classify/load");
	skel = vnet__open();
	if (!ASSERT_OK_PTR(skel, "vnet__open")) {
		test_end();
		skip_groups("the vnet skeleton did not open");
		return test_summary("test_classify");
	}
	/*
	 * The frame cases need no tracepoint program (rx_count_at_xmit stays
	 * 0: tc egress counts), and without it the load needs no kernel BTF.
	 */
	bpf_program__set_autoload(skel->progs.vnet_xmit_rx, false);
	if (!ASSERT_OK(vnet__load(skel), "vnet__load")) {
		test_end();
		skip_groups("the vnet skeleton did not load");
		goto out;
	}
	nr_cpus = libbpf_num_possible_cpus();
	if (!ASSERT_GT(nr_cpus, 0, "libbpf_num_possible_cpus")) {
		test_end();
		skip_groups("cannot count the possible CPUs");
		goto out;
	}
	percpu_stats = calloc((size_t)nr_cpus, sizeof(*percpu_stats));
	if (!ASSERT_OK_PTR(percpu_stats, "calloc")) {
		test_end();
		skip_groups("out of memory");
		goto out;
	}
	stats_fd = bpf_map__fd(skel->maps.stats);
	queues_fd = bpf_map__fd(skel->maps.queues);
	hook_xdp = (struct hook){ "xdp",
				  bpf_program__fd(skel->progs.vnet_xdp_tx),
				  VNET_DIR_TX, XDP_PASS };
	hook_tc_rx = (struct hook){ "tc_rx",
				    bpf_program__fd(skel->progs.vnet_tc_rx),
				    VNET_DIR_RX, (__u32)TC_ACT_UNSPEC };
	hook_tc_tx = (struct hook){ "tc_tx",
				    bpf_program__fd(skel->progs.vnet_tc_tx),
				    VNET_DIR_TX, (__u32)TC_ACT_UNSPEC };
	test_end();

	run_frame_cases();

	run_short_window("classify/eth_short_10_bytes", 10);
	run_short_window("classify/eth_short_13_bytes", 13);

	test_queue_timestamps();
	test_queues_mmap();

	/* last: it moves the process into a private network namespace */
	run_tap_tests();
out:
	free(percpu_stats);
	vnet__destroy(skel);
	return test_summary("test_classify");
}
