// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Tap queue steering for vnetd (TUNSETSTEERINGEBPF): which tun queue, and
 * so which guest RX ring, a frame the host sends to the guest goes to.
 *
 * tun runs this socket filter in its ndo_select_queue for every frame and
 * takes the return value modulo the number of attached queues.  It returns
 * a *symmetric* flow hash (the same for both directions of a connection:
 * addresses and ports are combined with XOR before mixing), so that one
 * flow always lands on one queue, and only queues whose guest RX ring vnetd
 * serves are used: vnetd keeps their list in `active` (this object's .bss,
 * mmapped by the skeleton, written by vnetd's control thread).  A guest that
 * enables 1 of 4 queue pairs gets all its frames on pair 0 instead of three
 * quarters of them stuck in queues nobody reads.
 *
 * Socket filters have no direct packet access: headers are read with
 * bpf_skb_load_bytes_relative() from the MAC header, which
 * __dev_queue_xmit() has just reset (skb->data is not the same in every
 * context that runs socket filters).  IP fragments are hashed on addresses
 * only, so all fragments of a datagram stay together.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define STEER_MAX_QUEUES 16

/* written by vnetd: the queues to spread over, and how many */
__u32 nr_active = 0;
__u32 active[STEER_MAX_QUEUES] = {};

static __always_inline __u32 mix(__u32 h)
{
	/* murmur3 finaliser: every input bit reaches every output bit */
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

/* LEN bytes at OFF from the start of the Ethernet header */
static __always_inline int load(struct __sk_buff *skb, __u32 off, void *to,
				__u32 len)
{
	return bpf_skb_load_bytes_relative(skb, off, to, len,
					   BPF_HDR_START_MAC);
}

static __always_inline __u32 ports_hash(struct __sk_buff *skb, __u32 off)
{
	__u16 p[2];

	if (load(skb, off, p, sizeof(p)))
		return 0;
	return (__u32)(p[0] ^ p[1]);
}

static __always_inline __u32 flow_hash(struct __sk_buff *skb)
{
	__u32 off = ETH_HLEN, h = 0;
	__u16 proto;
	__u8 mac[12];
	int i;

	if (load(skb, 0, mac, sizeof(mac)))
		return 0;
	if (load(skb, 12, &proto, sizeof(proto)))
		return 0;
	/* up to two in-band VLAN tags (an offloaded tag is not in the data) */
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		if (load(skb, off + 2, &proto, sizeof(proto)))
			return 0;
		off += 4;
	}

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (load(skb, off, &ip, sizeof(ip)))
			return 0;
		h = ip.saddr ^ ip.daddr;
		h ^= (__u32)ip.protocol << 24;
		/* no ports in fragments: keep the datagram's pieces together */
		if (ip.frag_off & bpf_htons(0x3fff))
			return mix(h);
		if (ip.protocol == IPPROTO_TCP || ip.protocol == IPPROTO_UDP ||
		    ip.protocol == IPPROTO_SCTP ||
		    ip.protocol == IPPROTO_UDPLITE)
			h ^= ports_hash(skb, off + ip.ihl * 4);
		return mix(h);
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (load(skb, off, &ip6, sizeof(ip6)))
			return 0;
#pragma unroll
		for (i = 0; i < 4; i++)
			h ^= ip6.saddr.in6_u.u6_addr32[i] ^
			     ip6.daddr.in6_u.u6_addr32[i];
		h ^= (__u32)ip6.nexthdr << 24;
		/* extension headers are not walked: hashed on addresses only */
		if (ip6.nexthdr == IPPROTO_TCP || ip6.nexthdr == IPPROTO_UDP ||
		    ip6.nexthdr == IPPROTO_SCTP ||
		    ip6.nexthdr == IPPROTO_UDPLITE)
			h ^= ports_hash(skb, off + sizeof(ip6));
		return mix(h);
	}
	/* ARP and the rest: the two MAC addresses, symmetric too */
#pragma unroll
	for (i = 0; i < 6; i++)
		h ^= (__u32)(mac[i] ^ mac[6 + i]) << (8 * (i & 3));
	return mix(h ^ proto);
}

SEC("socket")
int vnetd_steer(struct __sk_buff *skb)
{
	__u32 n = nr_active, h, i;

	if (!n || n > STEER_MAX_QUEUES)
		return 0;
	h = flow_hash(skb);
	i = h % n;
	/*
	 * i < n <= 16 already, and the compiler knows it and would drop a
	 * mask; the verifier does not track a modulo: hide i, then mask.
	 */
	asm volatile("" : "+r"(i));
	i &= STEER_MAX_QUEUES - 1;
	/* tun takes this modulo its queue count: it is already below it */
	return active[i];
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
