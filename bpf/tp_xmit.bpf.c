// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The net_dev_start_xmit tracepoint (BTF-typed): frames going to the guest,
 * after the kernel chose the tap queue and just before tun_net_xmit().
 * tc egress (tc_classify.bpf.c) classified the frame and left the class in
 * the skb's tc_classid; here it is counted at the queue tun picked
 * (skb->queue_mapping), which no tc hook can see: tc egress runs before queue
 * selection, and tun's own steering and filter programs need the tap's file
 * descriptor, which QEMU owns in attach mode.  A tracepoint rather than
 * fentry: it needs no function tracer (CONFIG_FUNCTION_TRACER) and is a
 * stable hook.
 *
 * It is not attached to the tracepoint itself: one shared dispatcher
 * (xmit_dispatch.bpf.c) is, for every tap, and tail-calls this tap's
 * program through its slot of a PROG_ARRAY, found by {netns, ifindex} in a
 * hash.  So a frame of any other device of the host costs one hash lookup,
 * however many taps are attached (docs/design.md).  Where the kernel
 * refuses that, vnetctl attaches this program to the tracepoint directly
 * (one program per tap, every one run on every frame of the host).  Either
 * way it first compares the device: the check that matters in the
 * per-tap fallback, and in the shared design what makes a slot reused by
 * another tap while a dispatcher run was in flight harmless.
 *
 * The kernel types are declared locally with CO-RE relocations (xmit.h),
 * so the object does not depend on the build machine's kernel.
 */
#include "maps.h"
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "parse.h"
#include "account.h"
#include "xmit.h"

/* the tap this instance counts for (set by vnetctl attach before load) */
const volatile __u32 target_ifindex = 0;
const volatile __u32 target_netns = 0;

/* struct qdisc_skb_cb: pkt_len (4), slave_dev_queue_mapping (2), tc_classid */
#define VNET_QDISC_CB_CLASSID_OFF 6

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(vnet_xmit_rx, struct sk_buff___vnet *skb,
	     struct net_device___vnet *dev)
{
	__u16 classid = 0;
	__u32 class;

#ifndef VNET_SHARED
	if (BPF_CORE_READ(dev, ifindex) != (int)target_ifindex)
		return 0;
#endif
	if (target_netns && vnet_dev_netns(dev) != target_netns)
		return 0;
	VNET_TAP_FIND(BPF_CORE_READ(dev, ifindex), return 0);
	bpf_probe_read_kernel(&classid, sizeof(classid),
			      (char *)skb + bpf_core_field_offset(skb->cb) +
				      VNET_QDISC_CB_CLASSID_OFF);
	/* no mark: the frame bypassed tc egress, or a qdisc reused the cb */
	class = (classid & VNET_CLASSID_MASK) == VNET_CLASSID_MARK ?
			classid & ~VNET_CLASSID_MASK :
			VNET_CLASS_OTHER;
	/*
	 * A GSO frame segmented in software after tc egress (the tap lacks
	 * TSO) arrives here as segments carrying the super-frame's class.
	 * Every segment has payload, but TCP clears PSH on all but the last:
	 * read the segment's own flags to tell urgent from push.
	 */
	if (class == VNET_CLASS_URGENT || class == VNET_CLASS_PUSH) {
		__u16 th = BPF_CORE_READ(skb, transport_header);
		unsigned char *head = BPF_CORE_READ(skb, head);
		__u8 flags;

		if (th != (__u16)~0U &&
		    !bpf_probe_read_kernel(&flags, 1, head + th + 13))
			class = (flags & VNET_TCP_FLAG_PSH) ? VNET_CLASS_PUSH :
							      VNET_CLASS_URGENT;
	}
	vnet_account(VNET_DIR_RX, BPF_CORE_READ(skb, queue_mapping), class,
		     BPF_CORE_READ(skb, len) VNET_TAP_PASS);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
