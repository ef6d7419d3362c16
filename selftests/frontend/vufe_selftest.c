// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Tests of the vufe frontend itself, in two parts.
 *
 * unit/...: in-process.  The ring logic (EVENT_IDX arithmetic across the u16
 * wrap, kick suppression, callbacks, TX header layouts, mergeable
 * reassembly, big and large RX buffers, signal counting) is checked with
 * the test playing the device directly on the rings; the vhost-user wire
 * format (QEMU's order, NEED_REPLY, fd counts, region contents, reconnect
 * bases) is checked against a scripted peer that only records and acks.
 *
 * dpdk/...: end to end against DPDK's vhost-user backend (dpdk-testpmd with
 * the net_vhost PMD, --no-huge, macswap forwarding on one port looped to
 * itself): frames the frontend sends come back with their MACs swapped and
 * every other byte intact, and the call-eventfd signals are counted.
 * Skipped, with the reason, when dpdk-testpmd is not installed.
 *
 *	vufe_selftest [-l] [-v] [-t GLOB]... [-d GLOB]... [FILTER]
 *			(test.h's test_main(): -l lists, -t selects, FILTER is a
 *			substring of the names)
 *
 * One program from several files: the scripted peer and the helpers in
 * vufe_selftest_peer.c (vufe_selftest.h), the unit cases in
 * vufe_selftest_wire.c (EVENT_IDX, the handshake, reconnect) and
 * vufe_selftest_ring.c (TX, kicks, callbacks, RX, signals, hostile
 * shapes), the DPDK cases in vufe_selftest_dpdk.c.
 *
 * VUFE_TESTPMD overrides the dpdk-testpmd binary.
 */
#include "vufe_selftest.h"

VNET_TEST("vufe/unit/need_event", unit_need_event);
VNET_TEST("vufe/unit/handshake_add_mem_reg", unit_handshake_mem_slots);
VNET_TEST("vufe/unit/handshake_set_mem_table", unit_handshake_mem_table);
VNET_TEST("vufe/unit/handshake_no_protocol_features", unit_handshake_legacy);
VNET_TEST("vufe/unit/handshake_nack", unit_handshake_nack);
VNET_TEST("vufe/unit/stop_reconnect_base", unit_stop_reconnect);
VNET_TEST("vufe/unit/tx_layouts", unit_tx_layouts);
VNET_TEST("vufe/unit/tx_reap", unit_tx_reap);
VNET_TEST("vufe/unit/kick_event_idx", unit_kick_event_idx);
VNET_TEST("vufe/unit/kick_event_idx_wrap", unit_kick_event_idx_wrap);
VNET_TEST("vufe/unit/kick_no_notify", unit_kick_no_notify);
VNET_TEST("vufe/unit/callbacks", unit_callbacks);
VNET_TEST("vufe/unit/rx_mergeable", unit_rx_mergeable);
VNET_TEST("vufe/unit/rx_mergeable_bad_device", unit_rx_mergeable_bad);
VNET_TEST("vufe/unit/rx_big", unit_rx_big);
VNET_TEST("vufe/unit/rx_big_indirect", unit_rx_big_indirect);
VNET_TEST("vufe/unit/rx_large", unit_rx_large);
VNET_TEST("vufe/unit/signals", unit_signals);
VNET_TEST("vufe/unit/hostile_ring_shapes", unit_hostile_ring_shapes);
VNET_TEST("vufe/unit/hostile_msg_shapes", unit_hostile_msg_shapes);

/*
 * The same scenarios on packed rings (VIRTIO_F_RING_PACKED), each
 * asserting that it was negotiated.  Not here: need_event (u16
 * arithmetic shared by both ring types; the packed event offsets are
 * kick_event_idx and kick_event_idx_wrap), handshake_nack (the
 * setup stops at SET_MEM_TABLE, before any ring) and
 * handshake_no_protocol_features (a legacy device without
 * VERSION_1, which packed rings need).  hostile_ring_shapes has its
 * packed forms.  signals and hostile_msg_shapes do not touch a ring:
 * they show that a packed negotiation leaves them as they are.
 */
VUFE_TEST_PACKED("vufe/unit/packed/handshake_add_mem_reg",
		 unit_handshake_mem_slots);
VUFE_TEST_PACKED("vufe/unit/packed/handshake_set_mem_table",
		 unit_handshake_mem_table);
VUFE_TEST_PACKED("vufe/unit/packed/stop_reconnect_base", unit_stop_reconnect);
VUFE_TEST_PACKED("vufe/unit/packed/tx_layouts", unit_tx_layouts);
VUFE_TEST_PACKED("vufe/unit/packed/tx_reap", unit_tx_reap);
VUFE_TEST_PACKED("vufe/unit/packed/kick_event_idx", unit_kick_event_idx);
VUFE_TEST_PACKED("vufe/unit/packed/kick_event_idx_wrap",
		 unit_kick_event_idx_wrap);
VUFE_TEST_PACKED("vufe/unit/packed/kick_no_notify", unit_kick_no_notify);
VUFE_TEST_PACKED("vufe/unit/packed/callbacks", unit_callbacks);
VUFE_TEST_PACKED("vufe/unit/packed/rx_mergeable", unit_rx_mergeable);
VUFE_TEST_PACKED("vufe/unit/packed/rx_mergeable_bad_device",
		 unit_rx_mergeable_bad);
VUFE_TEST_PACKED("vufe/unit/packed/rx_big", unit_rx_big);
VUFE_TEST_PACKED("vufe/unit/packed/rx_big_indirect", unit_rx_big_indirect);
VUFE_TEST_PACKED("vufe/unit/packed/rx_large", unit_rx_large);
VUFE_TEST_PACKED("vufe/unit/packed/signals", unit_signals);
VUFE_TEST_PACKED("vufe/unit/packed/hostile_ring_shapes",
		 unit_hostile_ring_shapes_packed);
VUFE_TEST_PACKED("vufe/unit/packed/hostile_msg_shapes",
		 unit_hostile_msg_shapes);

/*
 * DPDK: one testpmd shared by the cases, started by the first of them that
 * runs, stopped by the last (vufe_selftest_dpdk.c)
 */
VNET_TEST("vufe/dpdk/handshake", dpdk_handshake);
VNET_TEST("vufe/dpdk/mergeable_two_regions", dpdk_mergeable);
VNET_TEST("vufe/dpdk/tx_layouts", dpdk_tx_layouts);
VNET_TEST("vufe/dpdk/burst_1000", dpdk_burst);
VNET_TEST("vufe/dpdk/rx_big", dpdk_rx_big);
VNET_TEST("vufe/dpdk/rx_big_indirect", dpdk_rx_big_indirect);
VNET_TEST("vufe/dpdk/rx_large", dpdk_rx_large);
VNET_TEST("vufe/dpdk/multiqueue", dpdk_multiqueue);
VNET_TEST("vufe/dpdk/signals_event_idx", dpdk_signals);
VNET_TEST("vufe/dpdk/stop_reconnect", dpdk_stop_reconnect);
VNET_TEST("vufe/dpdk/client_mode", dpdk_client_mode);
VNET_TEST("vufe/dpdk/hostile_survives", dpdk_hostile);
/* the same on packed rings: DPDK's vhost takes them when negotiated */
VUFE_TEST_PACKED("vufe/dpdk/packed/handshake", dpdk_handshake);
VUFE_TEST_PACKED("vufe/dpdk/packed/mergeable_two_regions", dpdk_mergeable);
VUFE_TEST_PACKED("vufe/dpdk/packed/tx_layouts", dpdk_tx_layouts);
VUFE_TEST_PACKED("vufe/dpdk/packed/burst_1000", dpdk_burst);
VUFE_TEST_PACKED("vufe/dpdk/packed/rx_big", dpdk_rx_big);
VUFE_TEST_PACKED("vufe/dpdk/packed/rx_big_indirect", dpdk_rx_big_indirect);
VUFE_TEST_PACKED("vufe/dpdk/packed/rx_large", dpdk_rx_large);
VUFE_TEST_PACKED("vufe/dpdk/packed/multiqueue", dpdk_multiqueue);
VUFE_TEST_PACKED("vufe/dpdk/packed/signals_event_idx", dpdk_signals);
VUFE_TEST_PACKED("vufe/dpdk/packed/stop_reconnect", dpdk_stop_reconnect);
VUFE_TEST_PACKED("vufe/dpdk/packed/client_mode", dpdk_client_mode);
VUFE_TEST_PACKED("vufe/dpdk/packed/hostile_survives", dpdk_hostile);
/* last: the shared testpmd exits cleanly */
VNET_TEST("vufe/dpdk/testpmd_exit", dpdk_testpmd_exit);

int main(int argc, char **argv)
{
	static const struct test_main_opts opts = {
		.teardown = dpdk_teardown,
		.verbose = &verbose,
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	return test_main(argc, argv, "vufe_selftest", &opts);
}
