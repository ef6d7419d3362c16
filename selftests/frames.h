// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Frame builder for the selftests and the integration test tools.
 *
 * One call, frame_build(), turns a struct frame_spec into the bytes of an
 * Ethernet frame: optional 802.1Q/802.1ad tags, then IPv4 (options,
 * fragments), IPv6 (extension headers), ARP or an opaque ethertype, then
 * TCP (flags, data offset, options), UDP, ICMP/ICMPv6 or opaque L4 bytes,
 * then the payload and optional Ethernet padding.  The IPv4 header checksum
 * and the TCP/UDP/ICMP checksums are computed, so a built frame is accepted
 * by a real kernel stack; the only exception is a fragment, whose L4
 * checksum covers the datagram that is not all there (see below).
 *
 * Malformed frames are made by building a well-formed one and then editing
 * it: struct frame_layout tells where each header landed, and the
 * frame_put*() helpers write big-endian fields.  Header only: every
 * function is static inline so that a test that uses a few of them does not
 * trip -Wunused-function.
 */
#ifndef VNET_SELFTESTS_FRAMES_H
#define VNET_SELFTESTS_FRAMES_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/virtio_net.h>

#define FRAME_TCP_FIN 0x01
#define FRAME_TCP_SYN 0x02
#define FRAME_TCP_RST 0x04
#define FRAME_TCP_PSH 0x08
#define FRAME_TCP_ACK 0x10
#define FRAME_TCP_URG 0x20

#define FRAME_ETH_HLEN 14
#define FRAME_VLAN_HLEN 4
#define FRAME_IPV4_HLEN 20
#define FRAME_IPV6_HLEN 40
#define FRAME_TCP_HLEN 20
#define FRAME_UDP_HLEN 8
#define FRAME_ICMP_HLEN 8 /* echo request/reply */
#define FRAME_ARP_LEN 28  /* Ethernet/IPv4 ARP */
#define FRAME_MIN_LEN 60  /* shortest Ethernet frame without FCS */

#define FRAME_MAX_VLANS 4
#define FRAME_MAX_EXT 16

/* One IPv6 extension header. */
struct frame_ext {
	/*
	 * IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_DSTOPTS, IPPROTO_FRAGMENT
	 * or IPPROTO_AH.
	 */
	uint8_t type;
	/*
	 * The "Hdr Ext Len" byte as it goes on the wire: the header is
	 * (len + 1) * 8 bytes long, (len + 2) * 4 for AH (len >= 1).
	 * Ignored for FRAGMENT, which is always 8 bytes.
	 */
	uint8_t len;
	uint16_t frag_off; /* FRAGMENT: offset in 8-byte units */
	bool more_frags;   /* FRAGMENT: the M flag */
};

/*
 * What to build.  Zero means "a sensible default" for every field where zero
 * is not itself a useful value (addresses, ports, TTL, TCP data offset,
 * window); start from a zeroed struct and set what the frame needs.
 */
struct frame_spec {
	uint8_t dst[6];			/* 00:..:00 = 02:00:00:00:00:02 */
	uint8_t src[6];			/* 00:..:00 = 02:00:00:00:00:01 */
	unsigned int nr_vlans;		/* outermost first */
	uint16_t vlan_tpid[FRAME_MAX_VLANS]; /* 0 = ETH_P_8021Q */
	uint16_t vlan_tci[FRAME_MAX_VLANS];
	/*
	 * ETH_P_IP, ETH_P_IPV6 or ETH_P_ARP build those headers; anything
	 * else is written as is and the payload follows the Ethernet header.
	 */
	uint16_t ethertype;

	/* IPv4 and ARP addresses, network byte order; 0 = 10.0.0.1/.2 */
	uint32_t saddr;
	uint32_t daddr;
	unsigned int ip_opt_len;	/* IPv4 options: 0..40, multiple of 4 */
	uint16_t frag_off;		/* IPv4 fragment offset, 8-byte units */
	bool more_frags;		/* IPv4 MF */
	bool dont_frag;			/* IPv4 DF */
	uint16_t ip_id;
	uint8_t tos;			/* IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;			/* IPv4 TTL / IPv6 hop limit; 0 = 64 */

	/* IPv6; all-zero = fd00::1 / fd00::2 */
	struct in6_addr saddr6;
	struct in6_addr daddr6;
	unsigned int nr_ext;
	struct frame_ext ext[FRAME_MAX_EXT];

	/*
	 * IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6 build those
	 * headers; any other value goes in the IP header and the payload
	 * follows the IP headers directly.
	 */
	uint8_t proto;
	uint16_t sport;			/* 0 = 40000; ICMP echo id, 0 = 1 */
	uint16_t dport;			/* 0 = 5201; ICMP echo seq, 0 = 1 */
	uint32_t seq;
	uint32_t ack_seq;
	uint8_t tcp_flags;		/* FRAME_TCP_* */
	unsigned int tcp_doff;		/* 32-bit words, 0 = 5; >5 adds NOPs */
	uint16_t window;		/* 0 = 65535 */

	const void *payload;		/* NULL = a counting byte pattern */
	size_t payload_len;
	/*
	 * Ethernet padding: zero bytes after the datagram until the frame is
	 * at least this long (FRAME_MIN_LEN for a real minimum-size frame).
	 * Padding is never counted in the IP lengths.
	 */
	size_t min_len;
};

/* an IPv4 TCP segment with FLAGS, seq 1000, ack 2000, PAYLOAD bytes */
static inline struct frame_spec tcp4(uint8_t flags, size_t payload)
{
	struct frame_spec s = {
		.ethertype = ETH_P_IP,
		.proto = IPPROTO_TCP,
		.tcp_flags = flags,
		.seq = 1000,
		.ack_seq = 2000,
		.payload_len = payload,
	};

	return s;
}

/* Where frame_build() put things, to edit a frame after building it. */
struct frame_layout {
	size_t len;		/* frame length, padding included */
	size_t l3_off;		/* after the Ethernet header and the tags */
	size_t ext_off[FRAME_MAX_EXT]; /* IPv6 extension headers */
	size_t l4_off;		/* L4 header (after IPv4 options / IPv6 exts) */
	size_t payload_off;	/* after the L4 header */
	size_t l3_end;		/* end of the datagram, start of the padding */
	bool has_l4;		/* false for non-first fragments */
};

static inline void frame_put16(void *buf, size_t off, uint16_t v)
{
	uint8_t *p = (uint8_t *)buf + off;

	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static inline void frame_put32(void *buf, size_t off, uint32_t v)
{
	frame_put16(buf, off, v >> 16);
	frame_put16(buf, off + 2, v & 0xffff);
}

static inline uint16_t frame_get16(const void *buf, size_t off)
{
	const uint8_t *p = (const uint8_t *)buf + off;

	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t frame_get32(const void *buf, size_t off)
{
	return (uint32_t)frame_get16(buf, off) << 16 | frame_get16(buf, off + 2);
}

/*
 * RFC 1071 one's complement sum.  64-bit accumulator: a 64 KB datagram sums
 * 32K words, which overflows 32 bits only in the pathological case, but
 * this costs nothing.  Only the last chunk of a sum may have an odd length.
 */
static inline uint64_t frame_csum_add(uint64_t sum, const void *data,
				      size_t len)
{
	const uint8_t *p = data;

	while (len > 1) {
		sum += (uint32_t)(p[0] << 8 | p[1]);
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* Folded to 16 bits, not inverted. */
static inline uint16_t frame_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Recomputes the IPv4 header checksum, e.g. after editing the header. */
static inline void frame_ipv4_fix_csum(void *buf, size_t l3_off)
{
	uint8_t *iph = (uint8_t *)buf + l3_off;
	size_t ihl = (iph[0] & 0x0f) * 4;

	frame_put16(iph, 10, 0);
	frame_put16(iph, 10, ~frame_csum_fold(frame_csum_add(0, iph, ihl)));
}

/*
 * Sum of the TCP/UDP/ICMPv6 pseudo header.  For IPv6 the destination is the
 * one in the fixed header: the builder only makes routing headers with no
 * segments left, for which that is the final destination.
 */
static inline uint64_t frame_pseudo_sum(const void *buf,
					const struct frame_layout *lay,
					bool ipv6, uint8_t proto,
					size_t l4_len)
{
	const uint8_t *l3 = (const uint8_t *)buf + lay->l3_off;
	uint64_t sum;

	if (ipv6) {
		sum = frame_csum_add(0, l3 + 8, 32); /* saddr, daddr */
		sum += (uint32_t)(l4_len >> 16) + (uint32_t)(l4_len & 0xffff);
	} else {
		sum = frame_csum_add(0, l3 + 12, 8);
		sum += (uint32_t)l4_len;
	}
	return sum + proto;
}

static inline void frame_fill_pattern(uint8_t *p, size_t len, size_t seed)
{
	size_t i;

	/* a counting pattern: easy to recognise in a hex dump */
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i);
}

/* Size of one IPv6 extension header on the wire. */
static inline size_t frame_ext_size(const struct frame_ext *e)
{
	switch (e->type) {
	case IPPROTO_FRAGMENT:
		return 8;
	case IPPROTO_AH:
		return ((size_t)(e->len ? e->len : 1) + 2) * 4;
	default:
		return ((size_t)e->len + 1) * 8;
	}
}

/* HBH / DSTOPTS body: PadN (or Pad1) options so the header stays valid. */
static inline void frame_fill_tlv_pad(uint8_t *p, size_t len)
{
	if (len == 1) {
		p[0] = 0; /* Pad1 */
		return;
	}
	p[0] = 1; /* PadN */
	p[1] = (uint8_t)(len - 2);
}

static inline void frame_build_ext(uint8_t *h, const struct frame_ext *e,
				   uint8_t next, size_t size, uint32_t id)
{
	h[0] = next;
	switch (e->type) {
	case IPPROTO_FRAGMENT:
		frame_put16(h, 2, (uint16_t)(e->frag_off << 3 |
					     (e->more_frags ? 1 : 0)));
		frame_put32(h, 4, id);
		break;
	case IPPROTO_AH:
		h[1] = (uint8_t)(size / 4 - 2);
		frame_put32(h, 4, 0x100); /* SPI */
		frame_put32(h, 8, 1);	  /* sequence number */
		break;
	case IPPROTO_ROUTING:
		h[1] = e->len;
		h[2] = 0; /* type 0 ... */
		h[3] = 0; /* ... with no segments left: accepted and skipped */
		break;
	default: /* HOPOPTS, DSTOPTS */
		h[1] = e->len;
		frame_fill_tlv_pad(h + 2, size - 2);
		break;
	}
}

/*
 * Builds the frame described by s into buf (cap bytes).  Returns the frame
 * length, or -EINVAL for a spec that cannot be encoded (IP length over
 * 65535, too many tags or headers, bad option length), -ENOSPC when buf is
 * too small.  lay may be NULL.
 *
 * Fragments: a non-first fragment (IPv4 offset > 0, or an IPv6 fragment
 * header with offset > 0) carries no L4 header; its bytes are the payload.
 * A first fragment with more fragments to follow carries the L4 header, and
 * its L4 checksum covers only the bytes present, so it would not verify on
 * the reassembled datagram.
 */
static inline ssize_t frame_build(const struct frame_spec *s, void *buf,
				  size_t cap, struct frame_layout *lay)
{
	static const uint8_t def_dst[6] = { 2, 0, 0, 0, 0, 2 };
	static const uint8_t def_src[6] = { 2, 0, 0, 0, 0, 1 };
	static const uint8_t zero[16];
	struct frame_layout l = { 0 };
	bool ipv4 = s->ethertype == ETH_P_IP;
	bool ipv6 = s->ethertype == ETH_P_IPV6;
	bool arp = s->ethertype == ETH_P_ARP;
	bool nonfirst = false;
	uint32_t saddr = s->saddr ? s->saddr : htonl(0x0a000001);
	uint32_t daddr = s->daddr ? s->daddr : htonl(0x0a000002);
	uint8_t ttl = s->ttl ? s->ttl : 64;
	size_t l3_hlen = 0, l4_hlen = 0, doff, off, csum_at, l4_len, i;
	uint8_t *p = buf, *h;
	uint64_t sum;

	if (s->nr_vlans > FRAME_MAX_VLANS || s->nr_ext > FRAME_MAX_EXT)
		return -EINVAL;
	if (s->ip_opt_len > 40 || s->ip_opt_len % 4)
		return -EINVAL;
	doff = s->tcp_doff ? s->tcp_doff : 5;
	if (doff < 5 || doff > 15)
		return -EINVAL;

	/* first the sizes, so that nothing is written on error */
	l.l3_off = FRAME_ETH_HLEN + s->nr_vlans * FRAME_VLAN_HLEN;
	if (ipv4) {
		l3_hlen = FRAME_IPV4_HLEN + s->ip_opt_len;
		nonfirst = s->frag_off != 0;
	} else if (ipv6) {
		l3_hlen = FRAME_IPV6_HLEN;
		for (i = 0; i < s->nr_ext; i++) {
			l.ext_off[i] = l.l3_off + l3_hlen;
			l3_hlen += frame_ext_size(&s->ext[i]);
			if (s->ext[i].type == IPPROTO_FRAGMENT &&
			    s->ext[i].frag_off)
				nonfirst = true;
		}
	} else if (arp) {
		l3_hlen = FRAME_ARP_LEN;
	}
	l.has_l4 = (ipv4 || ipv6) && !nonfirst;
	if (l.has_l4) {
		switch (s->proto) {
		case IPPROTO_TCP:
			l4_hlen = doff * 4;
			break;
		case IPPROTO_UDP:
			l4_hlen = FRAME_UDP_HLEN;
			break;
		case IPPROTO_ICMP:
		case IPPROTO_ICMPV6:
			l4_hlen = FRAME_ICMP_HLEN;
			break;
		default:
			l.has_l4 = false;
			break;
		}
	}
	l.l4_off = l.l3_off + l3_hlen;
	l.payload_off = l.l4_off + l4_hlen;
	/* ARP carries no payload: its 28 bytes are the whole message */
	l.l3_end = l.payload_off + (arp ? 0 : s->payload_len);
	l.len = l.l3_end > s->min_len ? l.l3_end : s->min_len;
	if (ipv4 && l.l3_end - l.l3_off > 0xffff)
		return -EINVAL;
	if (ipv6 && l.l3_end - l.l3_off - FRAME_IPV6_HLEN > 0xffff)
		return -EINVAL;
	if (l.len > cap)
		return -ENOSPC;

	memset(p, 0, l.len);

	/* Ethernet and tags */
	memcpy(p, memcmp(s->dst, zero, 6) ? s->dst : def_dst, 6);
	memcpy(p + 6, memcmp(s->src, zero, 6) ? s->src : def_src, 6);
	off = 12;
	for (i = 0; i < s->nr_vlans; i++) {
		frame_put16(p, off, s->vlan_tpid[i] ? s->vlan_tpid[i] :
						      ETH_P_8021Q);
		frame_put16(p, off + 2, s->vlan_tci[i]);
		off += FRAME_VLAN_HLEN;
	}
	frame_put16(p, off, s->ethertype);

	/* payload first: the L4 checksum covers it */
	if (!arp) {
		if (s->payload)
			memcpy(p + l.payload_off, s->payload, s->payload_len);
		else
			frame_fill_pattern(p + l.payload_off, s->payload_len,
					   l.payload_off);
	}

	h = p + l.l3_off;
	if (arp) {
		frame_put16(h, 0, 1);	   /* Ethernet */
		frame_put16(h, 2, ETH_P_IP);
		h[4] = 6;
		h[5] = 4;
		frame_put16(h, 6, 1);	   /* request */
		memcpy(h + 8, p + 6, 6);   /* sender MAC = source MAC */
		memcpy(h + 14, &saddr, 4);
		memcpy(h + 24, &daddr, 4); /* target MAC stays zero */
	} else if (ipv4) {
		h[0] = (uint8_t)(0x40 | l3_hlen / 4);
		h[1] = s->tos;
		frame_put16(h, 2, (uint16_t)(l.l3_end - l.l3_off));
		frame_put16(h, 4, s->ip_id);
		frame_put16(h, 6, (uint16_t)((s->dont_frag ? 0x4000 : 0) |
					     (s->more_frags ? 0x2000 : 0) |
					     (s->frag_off & 0x1fff)));
		h[8] = ttl;
		h[9] = s->proto;
		memcpy(h + 12, &saddr, 4);
		memcpy(h + 16, &daddr, 4);
		/* options: NOPs, valid for any length */
		memset(h + FRAME_IPV4_HLEN, 1, s->ip_opt_len);
	} else if (ipv6) {
		static const struct in6_addr def6_src = {
			{ { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 } }
		};
		static const struct in6_addr def6_dst = {
			{ { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 } }
		};

		frame_put32(h, 0, 0x60000000u | (uint32_t)s->tos << 20);
		frame_put16(h, 4, (uint16_t)(l.l3_end - l.l3_off -
					     FRAME_IPV6_HLEN));
		h[6] = s->nr_ext ? s->ext[0].type : s->proto;
		h[7] = ttl;
		memcpy(h + 8, memcmp(&s->saddr6, zero, 16) ? &s->saddr6 :
							     &def6_src, 16);
		memcpy(h + 24, memcmp(&s->daddr6, zero, 16) ? &s->daddr6 :
							      &def6_dst, 16);
		for (i = 0; i < s->nr_ext; i++) {
			size_t end = i + 1 < s->nr_ext ? l.ext_off[i + 1] :
							 l.l4_off;

			frame_build_ext(p + l.ext_off[i], &s->ext[i],
					i + 1 < s->nr_ext ? s->ext[i + 1].type :
							    s->proto,
					end - l.ext_off[i],
					0x5e000000u | s->ip_id);
		}
	}

	if (l.has_l4) {
		h = p + l.l4_off;
		l4_len = l.l3_end - l.l4_off;
		csum_at = 0;
		switch (s->proto) {
		case IPPROTO_TCP:
			frame_put16(h, 0, s->sport ? s->sport : 40000);
			frame_put16(h, 2, s->dport ? s->dport : 5201);
			frame_put32(h, 4, s->seq);
			frame_put32(h, 8, s->ack_seq);
			h[12] = (uint8_t)(doff << 4);
			h[13] = s->tcp_flags;
			frame_put16(h, 14, s->window ? s->window : 65535);
			memset(h + FRAME_TCP_HLEN, 1, l4_hlen - FRAME_TCP_HLEN);
			csum_at = 16;
			break;
		case IPPROTO_UDP:
			frame_put16(h, 0, s->sport ? s->sport : 40000);
			frame_put16(h, 2, s->dport ? s->dport : 5201);
			frame_put16(h, 4, (uint16_t)l4_len);
			csum_at = 6;
			break;
		default: /* ICMP, ICMPv6 echo request */
			h[0] = s->proto == IPPROTO_ICMPV6 ? 128 : 8;
			frame_put16(h, 4, s->sport ? s->sport : 1); /* id */
			frame_put16(h, 6, s->dport ? s->dport : 1); /* seq */
			csum_at = 2;
			break;
		}
		/* ICMP (v4) is the one without a pseudo header */
		sum = s->proto == IPPROTO_ICMP ? 0 :
			frame_pseudo_sum(p, &l, ipv6, s->proto, l4_len);
		sum = frame_csum_fold(frame_csum_add(sum, h, l4_len));
		sum = (uint16_t)~sum;
		if (s->proto == IPPROTO_UDP && !sum)
			sum = 0xffff; /* 0 means "no checksum" in UDP */
		frame_put16(h, csum_at, (uint16_t)sum);
	}
	if (ipv4)
		frame_ipv4_fix_csum(p, l.l3_off);

	if (lay)
		*lay = l;
	return (ssize_t)l.len;
}

/*
 * A virtio_net_hdr for a frame built by frame_build(), as a guest (or a
 * PACKET_VNET_HDR socket) would send it: checksum offload requested and,
 * with mss != 0, TCP segmentation offload.  Rewrites the L4 checksum in buf
 * to the pseudo-header sum that CHECKSUM_PARTIAL expects.  Fields are
 * little endian (virtio 1.0 / the host's order on x86 and arm64).
 * Returns -EINVAL when the frame has no TCP or UDP header.
 */
static inline int frame_vnet_hdr(void *buf, const struct frame_spec *s,
				 const struct frame_layout *lay, uint16_t mss,
				 struct virtio_net_hdr *vh)
{
	bool ipv6 = s->ethertype == ETH_P_IPV6;
	size_t csum_off, l4_len = lay->l3_end - lay->l4_off;

	if (!lay->has_l4 ||
	    (s->proto != IPPROTO_TCP && s->proto != IPPROTO_UDP))
		return -EINVAL;
	csum_off = s->proto == IPPROTO_TCP ? 16 : 6;
	memset(vh, 0, sizeof(*vh));
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->csum_start = htole16((uint16_t)lay->l4_off);
	vh->csum_offset = htole16((uint16_t)csum_off);
	vh->hdr_len = htole16((uint16_t)lay->payload_off);
	if (mss && s->proto == IPPROTO_TCP) {
		vh->gso_type = ipv6 ? VIRTIO_NET_HDR_GSO_TCPV6 :
				      VIRTIO_NET_HDR_GSO_TCPV4;
		vh->gso_size = htole16(mss);
	}
	frame_put16(buf, lay->l4_off + csum_off,
		    frame_csum_fold(frame_pseudo_sum(buf, lay, ipv6, s->proto,
						     l4_len)));
	return 0;
}

#endif /* VNET_SELFTESTS_FRAMES_H */
