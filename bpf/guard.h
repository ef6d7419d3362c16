/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Spoofing protection on guest TX (docs/limits.md): a short list of named
 * checks in the order the frame's headers come, as libvirt's clean-traffic
 * filter chain (no-mac-spoofing, no-other-l2-traffic, no-ip-spoofing,
 * no-arp-spoofing, ...), each refusal counted by its reason.  The guard
 * map's entry says which checks are on; with none on, a frame costs one
 * array lookup.  vnet_guard() returns -1 to pass, else the reason.
 */
#ifndef VNET_BPF_GUARD_H
#define VNET_BPF_GUARD_H

#include "parse.h"
#include "maps.h"

#include <stdbool.h>

#define VNET_GUARD_PASS (-1)
/* a refusal is the rare case: the passing path falls through */
#define vnet_refused(x) __builtin_expect(!!(x), 0)
#define VNET_ETH_P_IP 0x0800
#define VNET_ETH_P_ARP 0x0806
#define VNET_ETH_P_IPV6 0x86dd
#define VNET_IPPROTO_ICMPV6 58
#define VNET_ICMPV6_RA 134
#define VNET_ICMPV6_NA 136
#define VNET_IPV6_EXT_WALK 4

/*
 * the 6 bytes at P differ from MAC: three 16-bit loads each (both are
 * 2-byte aligned: a MAC in an Ethernet or ARP header and in the guard
 * map's entry), no byte-wise memcpy
 */
static __always_inline bool vnet_mac_differs(const __u8 *p, const __u8 *mac)
{
	const __u16 *a = (const __u16 *)p, *b = (const __u16 *)mac;

	return (a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]);
}

/*
 * the 4 bytes at P as they are in memory (network order), from two 16-bit
 * loads: the addresses in IPv4, IPv6 and ARP headers are 2-byte aligned
 * behind an Ethernet header, not always 4-byte
 */
static __always_inline __be32 vnet_load_be32(const __u8 *p)
{
	const __u16 *h = (const __u16 *)p;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (__be32)((__u32)h[0] | (__u32)h[1] << 16);
#else
	return (__be32)((__u32)h[0] << 16 | (__u32)h[1]);
#endif
}

static __always_inline __u32 vnet_mask32(__u32 bits)
{
	return bits >= 32 ? 0xffffffffu : bits ? bpf_htonl(~0u << (32 - bits)) : 0;
}

/* SADDR (network order) in the guest's IPv4 list */
static __always_inline bool vnet_guard_v4(const struct vnet_guard *g,
					  __be32 saddr)
{
	for (int i = 0; i < VNET_GUARD_MAX_ADDRS; i++) {
		if (i >= g->nr_v4)
			break;
		if (!((saddr ^ g->v4[i].addr) & vnet_mask32(g->v4[i].prefix)))
			return true;
	}
	return false;
}

static __always_inline bool vnet_v6_in(const __be32 *a,
				       const struct vnet_guard_v6 *e)
{
	__u32 p = e->prefix, bits;

	for (int w = 0; w < 4; w++) {
		bits = p > 32 ? 32 : p;
		p -= bits;
		if ((a[w] ^ e->addr[w]) & vnet_mask32(bits))
			return false;
	}
	return true;
}

/* the 16 bytes at P in the guest's IPv6 list */
static __always_inline bool vnet_guard_v6(const struct vnet_guard *g,
					  const __u8 *p)
{
	__be32 a[4] = { vnet_load_be32(p), vnet_load_be32(p + 4),
			 vnet_load_be32(p + 8), vnet_load_be32(p + 12) };

	for (int i = 0; i < VNET_GUARD_MAX_ADDRS; i++) {
		if (i >= g->nr_v6)
			break;
		if (vnet_v6_in(a, &g->v6[i]))
			return true;
	}
	return false;
}

static __always_inline int vnet_guard_arp(const struct vnet_guard *g,
					  void *data, void *data_end)
{
	__u8 *arp = vnet_hdr(data, data_end, VNET_ETH_HLEN, VNET_ARP_HLEN);
	__be32 sip;

	if (!(g->flags & VNET_GUARD_ARP))
		return VNET_GUARD_PASS;
	if (!arp)
		return VNET_GUARD_R_ARP;
	/* Ethernet/IPv4 only: htype 1, ptype 0x0800, hlen 6, plen 4 */
	if (arp[0] != 0 || arp[1] != 1 || arp[2] != 0x08 || arp[3] != 0 ||
	    arp[4] != 6 || arp[5] != 4)
		return VNET_GUARD_R_ARP;
	if (vnet_mac_differs(arp + 8, g->mac))
		return VNET_GUARD_R_ARP;
	sip = vnet_load_be32(arp + 14);
	/* 0.0.0.0: an ARP probe (address conflict detection) */
	if (sip && !vnet_guard_v4(g, sip))
		return VNET_GUARD_R_ARP;
	return VNET_GUARD_PASS;
}

/* a UDP datagram behind the IPv4 header at IPH to or from PORT */
static __always_inline bool vnet_udp4_port(void *data, void *data_end,
					   const __u8 *iph, __u32 port_off,
					   __u8 port)
{
	__u32 ihl = (iph[0] & 0x0f) * 4;
	__u8 *udp;

	if (iph[9] != IPPROTO_UDP || ihl < VNET_IPV4_MIN_HLEN)
		return false;
	udp = vnet_hdr(data, data_end, VNET_ETH_HLEN + ihl, 4);
	return udp && udp[port_off] == 0 && udp[port_off + 1] == port;
}

static __always_inline int vnet_guard_ipv4(const struct vnet_guard *g,
					   void *data, void *data_end)
{
	__u8 *iph = vnet_hdr(data, data_end, VNET_ETH_HLEN, VNET_IPV4_MIN_HLEN);
	__be32 saddr;

	if (!iph)
		return VNET_GUARD_R_IPV4;
	saddr = vnet_load_be32(iph + 12);
	/* 0.0.0.0 to a DHCP server (port 67): a client asking for an address */
	if (vnet_refused((g->flags & VNET_GUARD_IP) && !vnet_guard_v4(g, saddr) &&
			 !(!saddr && vnet_udp4_port(data, data_end, iph, 2, 67))))
		return VNET_GUARD_R_IPV4;
	/* from port 67: a DHCP server's answer */
	if (vnet_refused((g->flags & VNET_GUARD_DHCP) &&
			 vnet_udp4_port(data, data_end, iph, 0, 67)))
		return VNET_GUARD_R_DHCP;
	return VNET_GUARD_PASS;
}

static __always_inline int vnet_guard_ipv6(const struct vnet_guard *g,
					   void *data, void *data_end)
{
	__u8 *ip6 = vnet_hdr(data, data_end, VNET_ETH_HLEN, VNET_IPV6_HLEN);
	__u32 off = VNET_ETH_HLEN + VNET_IPV6_HLEN;
	__u8 nexthdr, *h;
	__be32 src[4];

	if (!ip6)
		return VNET_GUARD_R_IPV6;
	src[0] = vnet_load_be32(ip6 + 8);
	src[1] = vnet_load_be32(ip6 + 12);
	src[2] = vnet_load_be32(ip6 + 16);
	src[3] = vnet_load_be32(ip6 + 20);
	/* ::, duplicate address detection's source */
	if ((g->flags & VNET_GUARD_IP) &&
	    (src[0] | src[1] | src[2] | src[3]) && !vnet_guard_v6(g, ip6 + 8))
		return VNET_GUARD_R_IPV6;
	nexthdr = ip6[6];
	/* a few extension headers (MLD reports carry hop-by-hop options) */
	for (int i = 0; i < VNET_IPV6_EXT_WALK; i++) {
		if (nexthdr != VNET_IPPROTO_HOPOPTS &&
		    nexthdr != VNET_IPPROTO_DSTOPTS &&
		    nexthdr != VNET_IPPROTO_ROUTING)
			break;
		h = vnet_hdr(data, data_end, off, 2);
		if (!h)
			return VNET_GUARD_R_IPV6;
		nexthdr = h[0];
		off += ((__u32)h[1] + 1) * 8;
	}
	if (nexthdr == VNET_IPPROTO_HOPOPTS || nexthdr == VNET_IPPROTO_DSTOPTS ||
	    nexthdr == VNET_IPPROTO_ROUTING)
		return VNET_GUARD_R_IPV6; /* deeper than any host sends */
	if (nexthdr == VNET_IPPROTO_ICMPV6) {
		h = vnet_hdr(data, data_end, off, 24);
		if (!h) {
			h = vnet_hdr(data, data_end, off, 1);
			if (h && h[0] == VNET_ICMPV6_RA && (g->flags & VNET_GUARD_RA))
				return VNET_GUARD_R_RA;
			if (h && h[0] == VNET_ICMPV6_NA && (g->flags & VNET_GUARD_ND))
				return VNET_GUARD_R_ND;
			return VNET_GUARD_PASS;
		}
		if (h[0] == VNET_ICMPV6_RA && (g->flags & VNET_GUARD_RA))
			return VNET_GUARD_R_RA;
		if (h[0] == VNET_ICMPV6_NA && (g->flags & VNET_GUARD_ND) &&
		    !vnet_guard_v6(g, h + 8))
			return VNET_GUARD_R_ND;
	} else if (nexthdr == IPPROTO_UDP && (g->flags & VNET_GUARD_DHCP)) {
		h = vnet_hdr(data, data_end, off, 2);
		/* DHCPv6 servers and relays answer from port 547 */
		if (h && h[0] == 0x02 && h[1] == 0x23)
			return VNET_GUARD_R_DHCP;
	}
	return VNET_GUARD_PASS;
}

/* -1 (VNET_GUARD_PASS) to pass the guest's frame, else why not */
static __always_inline int vnet_guard(void *data, void *data_end VNET_TAP_DECL)
{
	const struct vnet_guard *g;
	__u32 k = 0;
	__u8 *eth;
	__u16 proto;

	g = VNET_LOOKUP(guard, &k);
	if (__builtin_expect(!g || !g->flags, 1))
		return VNET_GUARD_PASS;
	eth = vnet_hdr(data, data_end, 0, VNET_ETH_HLEN);
	if (!eth)
		return VNET_GUARD_R_L2;
	if (vnet_refused((g->flags & VNET_GUARD_MAC) &&
			 vnet_mac_differs(eth + 6, g->mac)))
		return VNET_GUARD_R_MAC;
	proto = ((__u16)eth[12] << 8) | eth[13];
	if (proto == VNET_ETH_P_ARP)
		return vnet_guard_arp(g, data, data_end);
	if (proto == VNET_ETH_P_IP)
		return vnet_guard_ipv4(g, data, data_end);
	if (proto == VNET_ETH_P_IPV6)
		return vnet_guard_ipv6(g, data, data_end);
	return (g->flags & VNET_GUARD_IP) ? VNET_GUARD_R_L2 : VNET_GUARD_PASS;
}

static __always_inline void vnet_guard_count(int reason,
					     __u32 len VNET_TAP_DECL)
{
	__u32 k = (__u32)reason;
	struct vnet_counter *c = VNET_LOOKUP(guard_stats, &k);

	if (c) {
		c->packets++;
		c->bytes += len;
	}
}

#endif /* VNET_BPF_GUARD_H */
