/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A tap's hooks (hooks.c): the loaded programs attached, and taken off. */
#ifndef VNET_HOOKS_INT_H
#define VNET_HOOKS_INT_H

#include <stdbool.h>
#include "libvnet.h"

/* the programs to attach, by fd (xmit: -1 without guest-RX at xmit) */
struct vnet_progs {
	int tc_tx, tc_rx, xdp_tx, xmit;
	bool shared; /* the namespace's shared classifier (shared.c) */
	bool clsact; /* tc as clsact filters, not tcx links */
};

/*
 * Attach P's programs to IFNAME (IFINDEX): guest TX at TX_HOOK, guest RX
 * at net_dev_start_xmit (info->rx_queue_src VNET_RXQ_XMIT) and tc egress;
 * each link pinned, INFO told how.
 */
int vnet_hooks_attach(const struct vnet_progs *p, const char *ifname,
		      int ifindex, int tx_hook, struct vnet_info *info,
		      struct vnet_err *err);
/* Take down a half-done attach; INFO: its device and netns. */
void vnet_hooks_unwind(const char *ifname, const struct vnet_info *info);
/*
 * Take the tap's vnet_xmit_rx out of the shared dispatcher, if it is in;
 * INFO (may be NULL): the attach's, whose device is the entry's key.
 */
void vnet_hooks_detach_xmit(const char *ifname, const struct vnet_info *info);
/* The legacy clsact filter of IFINDEX's ingress or egress, removed. */
void vnet_hooks_detach_legacy_tc(int ifindex, bool ingress);

#endif
