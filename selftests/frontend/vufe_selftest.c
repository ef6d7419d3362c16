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
 *	vufe_selftest [-v] [FILTER]	runs the tests whose name contains FILTER
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

int main(int argc, char **argv)
{
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = true;
		else
			filter = argv[i];
	}

	RUN(unit_need_event, "vufe/unit/need_event");
	RUN(unit_handshake_mem_slots, "vufe/unit/handshake_add_mem_reg");
	RUN(unit_handshake_mem_table, "vufe/unit/handshake_set_mem_table");
	RUN(unit_handshake_legacy, "vufe/unit/handshake_no_protocol_features");
	RUN(unit_handshake_nack, "vufe/unit/handshake_nack");
	RUN(unit_stop_reconnect, "vufe/unit/stop_reconnect_base");
	RUN(unit_tx_layouts, "vufe/unit/tx_layouts");
	RUN(unit_tx_reap, "vufe/unit/tx_reap");
	RUN(unit_kick_event_idx, "vufe/unit/kick_event_idx");
	RUN(unit_kick_event_idx_wrap, "vufe/unit/kick_event_idx_wrap");
	RUN(unit_kick_no_notify, "vufe/unit/kick_no_notify");
	RUN(unit_callbacks, "vufe/unit/callbacks");
	RUN(unit_rx_mergeable, "vufe/unit/rx_mergeable");
	RUN(unit_rx_mergeable_bad, "vufe/unit/rx_mergeable_bad_device");
	RUN(unit_rx_big, "vufe/unit/rx_big");
	RUN(unit_rx_big_indirect, "vufe/unit/rx_big_indirect");
	RUN(unit_rx_large, "vufe/unit/rx_large");
	RUN(unit_signals, "vufe/unit/signals");
	RUN(unit_hostile_ring_shapes, "vufe/unit/hostile_ring_shapes");
	RUN(unit_hostile_msg_shapes, "vufe/unit/hostile_msg_shapes");

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
	RUN_PK(unit_handshake_mem_slots, "vufe/unit/packed/handshake_add_mem_reg");
	RUN_PK(unit_handshake_mem_table, "vufe/unit/packed/handshake_set_mem_table");
	RUN_PK(unit_stop_reconnect, "vufe/unit/packed/stop_reconnect_base");
	RUN_PK(unit_tx_layouts, "vufe/unit/packed/tx_layouts");
	RUN_PK(unit_tx_reap, "vufe/unit/packed/tx_reap");
	RUN_PK(unit_kick_event_idx, "vufe/unit/packed/kick_event_idx");
	RUN_PK(unit_kick_event_idx_wrap, "vufe/unit/packed/kick_event_idx_wrap");
	RUN_PK(unit_kick_no_notify, "vufe/unit/packed/kick_no_notify");
	RUN_PK(unit_callbacks, "vufe/unit/packed/callbacks");
	RUN_PK(unit_rx_mergeable, "vufe/unit/packed/rx_mergeable");
	RUN_PK(unit_rx_mergeable_bad, "vufe/unit/packed/rx_mergeable_bad_device");
	RUN_PK(unit_rx_big, "vufe/unit/packed/rx_big");
	RUN_PK(unit_rx_big_indirect, "vufe/unit/packed/rx_big_indirect");
	RUN_PK(unit_rx_large, "vufe/unit/packed/rx_large");
	RUN_PK(unit_signals, "vufe/unit/packed/signals");
	RUN_PK(unit_hostile_ring_shapes_packed, "vufe/unit/packed/hostile_ring_shapes");
	RUN_PK(unit_hostile_msg_shapes, "vufe/unit/packed/hostile_msg_shapes");

	if (!filter || strstr("vufe/dpdk/", filter) || strstr(filter, "dpdk"))
		dpdk_setup_server();
	RUN(dpdk_handshake, "vufe/dpdk/handshake");
	RUN(dpdk_mergeable, "vufe/dpdk/mergeable_two_regions");
	RUN(dpdk_tx_layouts, "vufe/dpdk/tx_layouts");
	RUN(dpdk_burst, "vufe/dpdk/burst_1000");
	RUN(dpdk_rx_big, "vufe/dpdk/rx_big");
	RUN(dpdk_rx_big_indirect, "vufe/dpdk/rx_big_indirect");
	RUN(dpdk_rx_large, "vufe/dpdk/rx_large");
	RUN(dpdk_multiqueue, "vufe/dpdk/multiqueue");
	RUN(dpdk_signals, "vufe/dpdk/signals_event_idx");
	RUN(dpdk_stop_reconnect, "vufe/dpdk/stop_reconnect");
	RUN(dpdk_client_mode, "vufe/dpdk/client_mode");
	RUN(dpdk_hostile, "vufe/dpdk/hostile_survives");
	/* the same on packed rings: DPDK's vhost takes them when negotiated */
	RUN_PK(dpdk_handshake, "vufe/dpdk/packed/handshake");
	RUN_PK(dpdk_mergeable, "vufe/dpdk/packed/mergeable_two_regions");
	RUN_PK(dpdk_tx_layouts, "vufe/dpdk/packed/tx_layouts");
	RUN_PK(dpdk_burst, "vufe/dpdk/packed/burst_1000");
	RUN_PK(dpdk_rx_big, "vufe/dpdk/packed/rx_big");
	RUN_PK(dpdk_rx_big_indirect, "vufe/dpdk/packed/rx_big_indirect");
	RUN_PK(dpdk_rx_large, "vufe/dpdk/packed/rx_large");
	RUN_PK(dpdk_multiqueue, "vufe/dpdk/packed/multiqueue");
	RUN_PK(dpdk_signals, "vufe/dpdk/packed/signals_event_idx");
	RUN_PK(dpdk_stop_reconnect, "vufe/dpdk/packed/stop_reconnect");
	RUN_PK(dpdk_client_mode, "vufe/dpdk/packed/client_mode");
	RUN_PK(dpdk_hostile, "vufe/dpdk/packed/hostile_survives");
	dpdk_teardown();
	return test_summary("vufe_selftest");
}
