// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * XDP on the tap: frames the guest transmits, written into the tap by
 * vhost-net, QEMU or vnetd.  tun runs this natively for small frames written
 * with O_NONBLOCK and generically (on the skb) otherwise.  The queue is the
 * tap queue the frame was written to (tun registers one xdp_rxq per queue).
 * Classifies and counts; never drops.
 */
#include "parse.h"
#include "account.h"
#include "guard.h"

SEC("xdp")
int vnet_xdp_tx(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 len = (__u32)(data_end - data);
	int why, class;

	VNET_TAP_FIND(ctx->ingress_ifindex, return XDP_PASS);
	why = vnet_guard(data, data_end VNET_TAP_PASS);

	if (vnet_refused(why != VNET_GUARD_PASS)) {
		vnet_guard_count(why, len VNET_TAP_PASS);
		return XDP_DROP;
	}
	class = vnet_classify(data, data_end, len);
	vnet_account(VNET_DIR_TX, ctx->rx_queue_index, class,
		     len VNET_TAP_PASS);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
