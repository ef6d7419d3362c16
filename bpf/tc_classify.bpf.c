// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tc (tcx) on the tap.  Egress: frames going to the guest.  Ingress: the
 * default hook for frames the guest transmits (XDP is the other, with
 * vnetctl attach --tx-hook xdp; docs/design.md has the measurement that
 * made tc ingress the default).
 *
 * The classifier never drops.  It returns TC_ACT_UNSPEC (TCX_NEXT): "no
 * verdict, let the next program decide", which the kernel turns into
 * TC_ACT_OK when no other program is attached.  Returning TC_ACT_OK would end
 * the chain and silently bypass any program attached after vnet's.
 */
#include "parse.h"
#include "account.h"
#include "guard.h"

#define TC_ACT_UNSPEC (-1)
#define TC_ACT_SHOT 2

/*
 * tc egress runs before the kernel picks the tap queue (netdev_core_pick_tx
 * comes after sch_handle_egress), so the queue a frame goes to is unknown
 * here.  With rx_count_at_xmit set (vnetctl attach does, when the kernel
 * lets it attach tp_xmit.bpf.c), egress only classifies and leaves the
 * class in the skb's tc_classid for the program on the net_dev_start_xmit tracepoint, which sees
 * the queue tun chose and does the counting.  Unset (unit tests, kernels
 * without BTF for tun), egress counts at skb->queue_mapping.
 */
const volatile __u32 rx_count_at_xmit = 0;

static __always_inline int vnet_tc_classify(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	int class = vnet_classify(data, data_end, skb->len);

	if (class != VNET_NEED_PULL)
		return class;
	/*
	 * Headers outside the linear part (GSO, paged skb): pull the usual
	 * headers first, and everything the parser may walk only if that was
	 * not enough (a long IPv6 extension header chain).
	 */
	for (int i = 0; i < 2; i++) {
		__u32 want = i == 0 ? 256 : VNET_MAX_HDR_OFF + 64;

		if (bpf_skb_pull_data(skb, skb->len < want ? skb->len : want))
			return VNET_CLASS_MALFORMED;
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
		class = vnet_classify(data, data_end, skb->len);
		if (class != VNET_NEED_PULL)
			return class;
	}
	return VNET_CLASS_MALFORMED;
}

/* to the guest */
SEC("tc")
int vnet_tc_rx(struct __sk_buff *skb)
{
	int class = vnet_tc_classify(skb);

	/* the mark needs no map: the tap's maps only where it counts */
	if (rx_count_at_xmit) {
		skb->tc_classid = VNET_CLASSID_MARK | (__u32)class;
		return TC_ACT_UNSPEC;
	}
	VNET_TAP_FIND(skb->ifindex, return TC_ACT_UNSPEC);
	vnet_account(VNET_DIR_RX, skb->queue_mapping, class,
		     skb->len VNET_TAP_PASS);
	return TC_ACT_UNSPEC;
}

/*
 * from the guest: the skb's queue mapping holds the recorded rx queue + 1;
 * a frame the guard refuses (spoofing protection, guard.h) is dropped and
 * counted by its reason only, before the classifier reads it (the checks
 * first: +1.8% of the tap writer's CPU time with every check on, against
 * +3.2% behind the classifier, docs/limits.md)
 */
SEC("tc")
int vnet_tc_tx(struct __sk_buff *skb)
{
	__u32 q = skb->queue_mapping;
	int why, class;

	VNET_TAP_FIND(skb->ifindex, return TC_ACT_UNSPEC);
	why = vnet_guard((void *)(long)skb->data,
			 (void *)(long)skb->data_end VNET_TAP_PASS);

	if (vnet_refused(why != VNET_GUARD_PASS)) {
		vnet_guard_count(why, skb->len VNET_TAP_PASS);
		return TC_ACT_SHOT;
	}
	class = vnet_tc_classify(skb);
	vnet_account(VNET_DIR_TX, q ? q - 1 : 0, class, skb->len VNET_TAP_PASS);
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
