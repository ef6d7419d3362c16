/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The vnet skeleton as the programs that run its hooks with
 * BPF_PROG_TEST_RUN load it (test_policy, test_notify_rule): without the
 * tracepoint program (test runs have none; tc egress counts at
 * queue_mapping).  Include after vnet.skel.h and test.h.
 */
#ifndef VNET_SELFTESTS_SKEL_TEST_H
#define VNET_SELFTESTS_SKEL_TEST_H

#include <stdio.h>

/* the skeleton, opened and loaded; NULL (WHY says which step) if not */
static inline struct vnet *vnet_test_skel(char *why, size_t len)
{
	struct vnet *skel = vnet__open();

	if (!ASSERT_OK_PTR(skel, "vnet__open")) {
		snprintf(why, len, "the vnet skeleton did not open");
		return NULL;
	}
	bpf_program__set_autoload(skel->progs.vnet_xmit_rx, false);
	if (!ASSERT_OK(vnet__load(skel), "vnet__load")) {
		snprintf(why, len, "the vnet skeleton did not load");
		vnet__destroy(skel);
		return NULL;
	}
	return skel;
}

#endif /* VNET_SELFTESTS_SKEL_TEST_H */
