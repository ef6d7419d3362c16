// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unit tests of the vhost-user backend library (user/vhost/): protocol,
 * guest memory, split virtqueues and the event loop, in-process.  The test
 * plays the frontend over a socketpair (or a unix socket for the server
 * tests) and the guest driver through a memfd shared as guest memory.  No
 * root, no QEMU, no network.
 *
 *	build/selftests/vhost_unit [-l] [-t GLOB] [SUBSTRING...]
 *					(test.h's test_main(): list, select)
 *
 * The cases are in vhost_unit_proto.c, vhost_unit_mem.c, vhost_unit_vq.c
 * and vhost_unit_server.c, their frontend and guest driver in
 * vhost_unit_lib.c (vhost_unit.h); this file registers and runs them.
 *
 * Hostile input (bad descriptors, bad messages) must give an error or a
 * broken ring, never a crash: the program runs under ASan/UBSan.
 */
#include "vhost_unit.h"

/* ======================================================================= */

VNET_TEST("vhost_proto/features", test_proto_features);
VNET_TEST("vhost_proto/send_rarp", test_proto_rarp);
VNET_TEST("vhost_proto/net_set_mtu", test_proto_mtu);
VNET_TEST("vhost_proto/ring_lifecycle", test_proto_ring_lifecycle);
VNET_TEST("vhost_proto/enable_at_kick_without_protocol_features",
	  test_proto_legacy_enable);
VNET_TEST("vhost_proto/vring_nofd_polling", test_proto_vring_nofd);
VNET_TEST("vhost_proto/wrong_fd_count", test_proto_wrong_fd_count);
VNET_TEST("vhost_proto/ring_fd_own", test_proto_ring_fd_own);
VNET_TEST("vhost_proto/unknown_request", test_proto_unknown_request);
VNET_TEST("vhost_proto/truncated_message", test_proto_truncated);
VNET_TEST("vhost_proto/bad_header", test_proto_bad_header);
VNET_TEST("vhost_proto/too_many_fds", test_proto_too_many_fds);
VNET_TEST("vhost_proto/partial_reads", test_proto_partial_reads);
VNET_TEST("vhost_proto/disconnect_reset", test_proto_disconnect_reset);
VNET_TEST("vhost_mem/add_remove_translate", test_mem_add_remove);
VNET_TEST("vhost_mem/region_validation", test_mem_validation);
VNET_TEST("vhost_mem/set_table", test_mem_set_table);
VNET_TEST("vhost_mem/dirty_log", test_mem_dirty_log);
VNET_TEST("vhost_mem/truncated_fd_fault", test_mem_fault);
VNET_TEST("vhost_vq/pop_push", test_vq_pop_push);
VNET_TEST("vhost_vq/event_idx_wrap", test_vq_event_idx_wrap);
VNET_TEST("vhost_vq/flags_notify", test_vq_flags_notify);
VNET_TEST("vhost_vq/indirect", test_vq_indirect);
VNET_TEST("vhost_vq/span_regions", test_vq_span_regions);
VNET_TEST("vhost_vq/hostile_chains", test_vq_hostile);
VNET_TEST("vhost_vq/partial_burst", test_vq_partial_burst);
VNET_TEST("vhost_vq/too_many_segments", test_vq_too_many_segments);
VNET_TEST("vhost_vq/dirty_log", test_vq_dirty_log);
VNET_TEST("vhost_vq/broken_via_protocol", test_vq_broken_via_protocol);
VNET_TEST("vhost_vq/bad_ring_addr", test_vq_bad_ring_addr);
VNET_TEST("vhost_dev/quiesce_threaded", test_dev_quiesce_threaded);
VNET_TEST("vhost_server/listen", test_server_listen);
VNET_TEST("vhost_server/mode_race", test_server_mode_race);
VNET_TEST("vhost_server/client_reconnect", test_server_client_reconnect);

int main(int argc, char **argv)
{
	vhost_log_set_fn(log_capture, NULL);
	return test_main(argc, argv, "vhost_unit", NULL);
}
