// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tc (clsact) on the tap.  Egress: frames going to the guest.  Ingress: the
 * alternative hook for frames the guest transmits (see docs/design.md for
 * the measurement that chose between XDP and tc ingress).  Classifies and
 * counts; always TC_ACT_OK.
 */
#include "parse.h"
#include "account.h"

#define TC_ACT_OK 0

static __always_inline int vnet_tc_classify(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	int class = vnet_classify(data, data_end, skb->len);

	if (class != VNET_NEED_PULL)
		return class;
	/* headers outside the linear part (GSO, fragmented skb): pull once */
	if (bpf_skb_pull_data(skb, skb->len < 256 ? skb->len : 256))
		return VNET_CLASS_MALFORMED;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	class = vnet_classify(data, data_end, skb->len);
	return class == VNET_NEED_PULL ? VNET_CLASS_MALFORMED : class;
}

/* to the guest */
SEC("tc")
int vnet_tc_rx(struct __sk_buff *skb)
{
	int class = vnet_tc_classify(skb);

	vnet_account(VNET_DIR_RX, skb->queue_mapping, class, skb->len);
	return TC_ACT_OK;
}

/* from the guest: the skb's queue mapping holds the recorded rx queue + 1 */
SEC("tc")
int vnet_tc_tx(struct __sk_buff *skb)
{
	int class = vnet_tc_classify(skb);
	__u32 q = skb->queue_mapping;

	vnet_account(VNET_DIR_TX, q ? q - 1 : 0, class, skb->len);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
