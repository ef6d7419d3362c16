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
 * classify_tap.c; the registrations and main() here.
 *
 * Prints one PASS/FAIL/SKIP line per case (see test.h) and exits non-zero
 * when any case failed.
 */
#include "classify.h"

/* ------------------------------------------------------------------ */

/* 0: not tried, 1: loaded, -1: did not load (load_why) */
static int load_state;
static char load_why[64];

/* the skeleton: its maps and programs (no tracepoint program) */
static bool load(void)
{
	skel = vnet__open();
	if (!ASSERT_OK_PTR(skel, "vnet__open")) {
		snprintf(load_why, sizeof(load_why),
			 "the vnet skeleton did not open");
		return false;
	}
	/*
	 * The frame cases need no tracepoint program (rx_count_at_xmit stays
	 * 0: tc egress counts), and without it the load needs no kernel BTF.
	 */
	bpf_program__set_autoload(skel->progs.vnet_xmit_rx, false);
	if (!ASSERT_OK(vnet__load(skel), "vnet__load")) {
		snprintf(load_why, sizeof(load_why),
			 "the vnet skeleton did not load");
		return false;
	}
	nr_cpus = libbpf_num_possible_cpus();
	if (!ASSERT_GT(nr_cpus, 0, "libbpf_num_possible_cpus")) {
		snprintf(load_why, sizeof(load_why),
			 "cannot count the possible CPUs");
		return false;
	}
	percpu_stats = calloc((size_t)nr_cpus, sizeof(*percpu_stats));
	if (!ASSERT_OK_PTR(percpu_stats, "calloc")) {
		snprintf(load_why, sizeof(load_why), "out of memory");
		return false;
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
	return true;
}

/*
 * A load that fails fails the test it runs in (classify/load, or the first
 * test selected); the tests after it skip.
 */
bool classify_ready(void)
{
	if (!load_state)
		load_state = load() ? 1 : -1;
	if (load_state < 0) {
		test_skip("%s", load_why);
		return false;
	}
	return true;
}

static void test_load(void)
{
	classify_ready();
}

static void short_10(void)
{
	short_window(10);
}

static void short_13(void)
{
	short_window(13);
}

static int setup(char *why, size_t len)
{
	return test_have_root_bpf(why, len) ? 0 : 1;
}

static void teardown(void)
{
	classify_tap_teardown();
	free(percpu_stats);
	vnet__destroy(skel);
}

VNET_TEST("classify/load", test_load);
VNET_TEST_TABLE(frame_case_nr, frame_case_name, frame_case_run);
VNET_TEST("classify/eth_short_10_bytes", short_10);
VNET_TEST("classify/eth_short_13_bytes", short_13);
VNET_TEST("classify/queue_timestamps", test_queue_timestamps);
VNET_TEST("classify/queues_mmap", test_queues_mmap);
/* last: the first of them moves the process into a private network namespace */
VNET_TEST("classify/xdp_rx_queue_index", test_xdp_rx_queue_index);
VNET_TEST("classify/tap_tc_ingress_queue", test_tap_tc_ingress);
VNET_TEST("classify/tap_xdp_queue", test_tap_xdp);
VNET_TEST("classify/tap_gso_ipv4_tcp_60k_push", test_tap_gso_ipv4_push);
VNET_TEST("classify/tap_gso_ipv6_tcp_60k_urgent", test_tap_gso_ipv6_urgent);
VNET_TEST("classify/tap_nonlinear_ipv4_tcp_9000_urgent",
	  test_tap_nonlinear_ipv4_urgent);
VNET_TEST("classify/tap_nonlinear_vlan_ipv6_tcp_9000_push",
	  test_tap_nonlinear_vlan_ipv6_push);
VNET_TEST("classify/tap_nonlinear_ipv6_ext_300_tcp_urgent",
	  test_tap_nonlinear_ipv6_ext_urgent);
VNET_TEST("classify/tap_short_ip_headers", test_tap_short_ip_headers);
VNET_TEST("classify/tap_xmit_rx_queue", test_tap_xmit_rx_queue);

int main(int argc, char **argv)
{
	static const struct test_main_opts opts = {
		.setup = setup,
		.teardown = teardown,
	};

	return test_main(argc, argv, "test_classify", &opts);
}
