// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The one program vnet puts on the net_dev_start_xmit tracepoint, however
 * many taps are attached.  The tracepoint fires for every device of the
 * host; per-tap programs on it would all run on every frame (O(taps) per
 * frame on the host's NICs, docs/benchmarks.md).  This dispatcher looks the
 * device up by {network namespace inode, ifindex} and tail-calls that tap's
 * own vnet_xmit_rx (tp_xmit.bpf.c, loaded per tap with the tap's maps and
 * policy) through its slot: one hash lookup per frame of any other device.
 *
 * Its own object and skeleton, not linked into vnet.bpf.o: one instance
 * for the host, pinned under /sys/fs/bpf/vnet/net_dev_start_xmit/ by the first
 * `vnetctl attach` and removed by the last detach (user/lib/xmit.c).
 */
#include "xmit.h"
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNET_XMIT_MAX_TAPS);
	__type(key, struct vnet_xmit_key);
	__type(value, struct vnet_xmit_entry);
} devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, VNET_XMIT_MAX_TAPS);
	__type(key, __u32);
	__type(value, __u32);
} progs SEC(".maps");

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(vnet_xmit_disp, struct sk_buff___vnet *skb,
	     struct net_device___vnet *dev)
{
	struct vnet_xmit_key key = {
		.netns = vnet_dev_netns(dev),
		.ifindex = (__u32)BPF_CORE_READ(dev, ifindex),
	};
	struct vnet_xmit_entry *e;

	e = bpf_map_lookup_elem(&devs, &key);
	if (!e)
		return 0;
	/* an empty slot (the tap was just detached) falls through */
	bpf_tail_call(ctx, &progs, e->slot);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
