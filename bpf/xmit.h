/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The net_dev_start_xmit tracepoint's arguments, declared locally with CO-RE
 * relocations (the objects do not depend on the build machine's kernel),
 * and the device key both tracepoint programs use: the dispatcher
 * (xmit_dispatch.bpf.c) to find a tap's slot, each tap's vnet_xmit_rx
 * (tp_xmit.bpf.c) to check that the frame is its tap's.
 */
#ifndef VNET_BPF_XMIT_H
#define VNET_BPF_XMIT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vnet/abi.h>

struct ns_common___vnet {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net___vnet {
	struct ns_common___vnet ns;
} __attribute__((preserve_access_index));

typedef struct {
	struct net___vnet *net;
} possible_net_t___vnet;

struct net_device___vnet {
	int ifindex;
	possible_net_t___vnet nd_net;
} __attribute__((preserve_access_index));

struct sk_buff___vnet {
	unsigned int len;
	__u16 queue_mapping;
	__u16 transport_header;
	unsigned char *head;
	char cb[48];
} __attribute__((preserve_access_index));

/* the network namespace inode of DEV (ifindexes repeat across namespaces) */
static __always_inline __u32 vnet_dev_netns(struct net_device___vnet *dev)
{
	return BPF_CORE_READ(dev, nd_net.net, ns.inum);
}

#endif
