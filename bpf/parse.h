/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Frame parser shared by every classifier hook.  Works on a linear window
 * [data, data_end) of a frame whose full length is frame_len (for XDP the two
 * are equal; for tc the skb may hold headers outside its linear part, and the
 * parser then asks for a pull with VNET_NEED_PULL).
 *
 * Payload length always comes from the IP header, never from the frame
 * length: Ethernet padding is not payload, and a GSO frame is classified by
 * its headers.
 */
#ifndef VNET_BPF_PARSE_H
#define VNET_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <vnet/abi.h>

#define VNET_NEED_PULL (-1)

/* Bounds of the walk.  Headers further than this are not parsed. */
#define VNET_MAX_VLAN_TAGS 2
#define VNET_MAX_IPV6_EXT 8
#define VNET_MAX_HDR_OFF 4096

#define VNET_ETH_HLEN 14
#define VNET_VLAN_HLEN 4
#define VNET_IPV4_MIN_HLEN 20
#define VNET_IPV6_HLEN 40
#define VNET_TCP_MIN_HLEN 20
#define VNET_UDP_HLEN 8
#define VNET_ARP_HLEN 28 /* Ethernet/IPv4 ARP */

#define VNET_IPPROTO_HOPOPTS 0
#define VNET_IPPROTO_ROUTING 43
#define VNET_IPPROTO_FRAGMENT 44
#define VNET_IPPROTO_AH 51
#define VNET_IPPROTO_NONE 59
#define VNET_IPPROTO_DSTOPTS 60

#define VNET_TCP_FLAG_PSH 0x08

/*
 * Header bytes at [off, off + len) of the linear window, or NULL.  off is
 * bounded first so that the verifier can follow the variable offset.
 */
static __always_inline void *vnet_hdr(void *data, void *data_end, __u32 off,
				       __u32 len)
{
	void *p;

	if (off > VNET_MAX_HDR_OFF)
		return NULL;
	p = data + off;
	if (p + len > data_end)
		return NULL;
	return p;
}

/*
 * The class of a TCP segment whose IP payload (TCP header + data) is
 * l4_len bytes long, with the TCP header at off.
 */
static __always_inline int vnet_tcp_class(void *data, void *data_end,
					  __u32 off, __u32 l4_len, int short_ret)
{
	__u8 *th, flags;
	__u32 doff;

	if (l4_len < VNET_TCP_MIN_HLEN)
		return VNET_CLASS_MALFORMED;
	th = vnet_hdr(data, data_end, off, VNET_TCP_MIN_HLEN);
	if (!th)
		return short_ret;
	/*
	 * Load both bytes right after the bounds check: left to itself the
	 * compiler may sink the flags load and recompute the pointer, which
	 * the verifier then no longer knows to be in bounds.
	 */
	doff = (*(volatile __u8 *)&th[12] >> 4) * 4;
	flags = *(volatile __u8 *)&th[13];
	if (doff < VNET_TCP_MIN_HLEN || doff > l4_len)
		return VNET_CLASS_MALFORMED;
	if (l4_len == doff)
		return VNET_CLASS_ACK;
	return (flags & VNET_TCP_FLAG_PSH) ? VNET_CLASS_PUSH : VNET_CLASS_URGENT;
}

/* UDP and ICMP need no more than their fixed header to be "other". */
static __always_inline int vnet_l4_other(void *data, void *data_end, __u32 off,
					 __u32 l4_len, __u8 proto,
					 int short_ret)
{
	if (proto != IPPROTO_UDP)
		return VNET_CLASS_OTHER;
	if (l4_len < VNET_UDP_HLEN)
		return VNET_CLASS_MALFORMED;
	if (!vnet_hdr(data, data_end, off, VNET_UDP_HLEN))
		return short_ret;
	return VNET_CLASS_OTHER;
}

static __always_inline int vnet_parse_ipv4(void *data, void *data_end,
					   __u32 off, __u32 frame_len,
					   int short_ret)
{
	__u8 *iph = vnet_hdr(data, data_end, off, VNET_IPV4_MIN_HLEN);
	__u32 ihl, tot;
	__u16 frag;

	if (!iph)
		return short_ret;
	if ((iph[0] >> 4) != 4)
		return VNET_CLASS_MALFORMED;
	ihl = (iph[0] & 0x0f) * 4;
	tot = ((__u32)iph[2] << 8) | iph[3];
	if (ihl < VNET_IPV4_MIN_HLEN || tot < ihl || tot > frame_len - off)
		return VNET_CLASS_MALFORMED;
	/* options must be present too */
	if (!vnet_hdr(data, data_end, off, ihl))
		return short_ret;
	frag = ((__u16)iph[6] << 8) | iph[7];
	if (frag & 0x1fff) /* not the first fragment: no L4 header here */
		return VNET_CLASS_OTHER;
	if (iph[9] == IPPROTO_TCP)
		return vnet_tcp_class(data, data_end, off + ihl, tot - ihl,
				      short_ret);
	return vnet_l4_other(data, data_end, off + ihl, tot - ihl, iph[9],
			     short_ret);
}

static __always_inline int vnet_parse_ipv6(void *data, void *data_end,
					   __u32 off, __u32 frame_len,
					   int short_ret)
{
	__u8 *ip6 = vnet_hdr(data, data_end, off, VNET_IPV6_HLEN);
	__u32 plen, ext = 0, len;
	__u8 nexthdr, *h;
	int i;

	if (!ip6)
		return short_ret;
	if ((ip6[0] >> 4) != 6)
		return VNET_CLASS_MALFORMED;
	plen = ((__u32)ip6[4] << 8) | ip6[5];
	if (plen > frame_len - off - VNET_IPV6_HLEN)
		return VNET_CLASS_MALFORMED;
	nexthdr = ip6[6];
	off += VNET_IPV6_HLEN;

	/* up to VNET_MAX_IPV6_EXT extension headers, then the L4 header */
#pragma unroll
	for (i = 0; i < VNET_MAX_IPV6_EXT + 1; i++) {
		if (i == VNET_MAX_IPV6_EXT && nexthdr != IPPROTO_TCP &&
		    (nexthdr == VNET_IPPROTO_HOPOPTS ||
		     nexthdr == VNET_IPPROTO_ROUTING ||
		     nexthdr == VNET_IPPROTO_DSTOPTS ||
		     nexthdr == VNET_IPPROTO_AH ||
		     nexthdr == VNET_IPPROTO_FRAGMENT))
			break;
		switch (nexthdr) {
		case VNET_IPPROTO_HOPOPTS:
		case VNET_IPPROTO_ROUTING:
		case VNET_IPPROTO_DSTOPTS:
		case VNET_IPPROTO_AH:
			h = vnet_hdr(data, data_end, off, 2);
			if (!h)
				return ext + 2 > plen ? VNET_CLASS_MALFORMED :
							short_ret;
			if (nexthdr == VNET_IPPROTO_AH)
				len = ((__u32)h[1] + 2) * 4;
			else
				len = ((__u32)h[1] + 1) * 8;
			break;
		case VNET_IPPROTO_FRAGMENT:
			if (ext + 8 > plen)
				return VNET_CLASS_MALFORMED;
			h = vnet_hdr(data, data_end, off, 8);
			if (!h)
				return short_ret;
			/* offset is the upper 13 bits of bytes 2-3 */
			if ((((__u16)h[2] << 8) | h[3]) & 0xfff8)
				return VNET_CLASS_OTHER;
			len = 8;
			break;
		case IPPROTO_TCP:
			return vnet_tcp_class(data, data_end, off, plen - ext,
					      short_ret);
		default: /* UDP, ICMPv6, no next header, unknown */
			return vnet_l4_other(data, data_end, off, plen - ext,
					     nexthdr, short_ret);
		}
		ext += len;
		if (ext > plen)
			return VNET_CLASS_MALFORMED;
		nexthdr = h[0];
		off += len;
	}
	/* more extension headers than the bounded walk follows */
	return VNET_CLASS_MALFORMED;
}

/*
 * The class of the frame, or VNET_NEED_PULL when its headers continue beyond
 * the linear window (tc only: pull and call again).
 */
static __always_inline int vnet_classify(void *data, void *data_end,
					 __u32 frame_len)
{
	__u32 linear = (__u32)(data_end - data);
	int short_ret = linear < frame_len ? VNET_NEED_PULL :
					     VNET_CLASS_MALFORMED;
	__u32 off = VNET_ETH_HLEN;
	__u8 *eth, *tag;
	__u16 proto;
	int i;

	eth = vnet_hdr(data, data_end, 0, VNET_ETH_HLEN);
	if (!eth)
		return short_ret;
	proto = ((__u16)eth[12] << 8) | eth[13];

#pragma unroll
	for (i = 0; i < VNET_MAX_VLAN_TAGS; i++) {
		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
			break;
		tag = vnet_hdr(data, data_end, off, VNET_VLAN_HLEN);
		if (!tag)
			return short_ret;
		proto = ((__u16)tag[2] << 8) | tag[3];
		off += VNET_VLAN_HLEN;
	}

	switch (proto) {
	case ETH_P_IP:
		return vnet_parse_ipv4(data, data_end, off, frame_len,
				       short_ret);
	case ETH_P_IPV6:
		return vnet_parse_ipv6(data, data_end, off, frame_len,
				       short_ret);
	case ETH_P_ARP:
		if (frame_len - off < VNET_ARP_HLEN)
			return VNET_CLASS_MALFORMED;
		return VNET_CLASS_OTHER;
	default: /* unknown ethertype, or a third VLAN tag */
		return VNET_CLASS_OTHER;
	}
}

#endif
