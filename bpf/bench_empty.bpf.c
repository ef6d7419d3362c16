// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Empty programs on the same hooks: the benchmark's baseline. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int empty_xdp(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("tc")
int empty_tc(struct __sk_buff *skb)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
