/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A plain C reference of the classifier's rules (bpf/parse.h, written
 * again from its description, not shared with it), for fuzz_classify's
 * differential test.  The frame is whole: the parser's linear window is
 * the frame, so a header cut short is malformed.
 *
 *   Ethernet, then at most two 802.1Q/802.1ad tags; a third tag or an
 *   unknown ethertype: other.  ARP: other when 28 bytes follow, else
 *   malformed.
 *   IPv4: version 4, 20 <= IHL <= total length <= what the frame holds
 *   after the header start, else malformed; not the first fragment: other.
 *   IPv6: version 6, payload length within the frame, else malformed; up
 *   to eight extension headers (hop-by-hop, routing, destination options,
 *   AH in 4-byte units, fragment) inside the payload length; a ninth:
 *   malformed; a fragment with an offset: other.
 *   TCP (payload = what the IP lengths leave after the TCP header): at
 *   least 20 bytes and 20 <= data offset <= segment, else malformed;
 *   no payload: ack; payload with PSH: push; without: urgent.
 *   UDP: 8 bytes of header inside the IP payload, else malformed; other.
 *   Anything else over IP: other.
 */
#ifndef VNET_FUZZ_CLASSIFY_REF_H
#define VNET_FUZZ_CLASSIFY_REF_H

#include <stdint.h>
#include <vnet/abi.h>

static inline uint32_t ref_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* bytes [off, off + n) are in the frame */
static inline int ref_have(uint32_t len, uint64_t off, uint64_t n)
{
	return off + n <= len;
}

static int ref_tcp(const uint8_t *f, uint32_t len, uint32_t off,
		   uint32_t seg)
{
	uint32_t doff;

	if (seg < 20 || !ref_have(len, off, 20))
		return VNET_CLASS_MALFORMED;
	doff = (uint32_t)(f[off + 12] >> 4) * 4;
	if (doff < 20 || doff > seg)
		return VNET_CLASS_MALFORMED;
	if (doff == seg)
		return VNET_CLASS_ACK;
	return f[off + 13] & 0x08 ? VNET_CLASS_PUSH : VNET_CLASS_URGENT;
}

static int ref_l4(const uint8_t *f, uint32_t len, uint32_t off, uint8_t proto,
		  uint32_t l4)
{
	(void)f;
	if (proto == 6)
		return ref_tcp(f, len, off, l4);
	if (proto != 17)
		return VNET_CLASS_OTHER;
	if (l4 < 8 || !ref_have(len, off, 8))
		return VNET_CLASS_MALFORMED;
	return VNET_CLASS_OTHER;
}

static int ref_ipv4(const uint8_t *f, uint32_t len, uint32_t off)
{
	uint32_t ihl, tot;

	if (!ref_have(len, off, 20) || f[off] >> 4 != 4)
		return VNET_CLASS_MALFORMED;
	ihl = (uint32_t)(f[off] & 15) * 4;
	tot = ref_be16(f + off + 2);
	if (ihl < 20 || tot < ihl || tot > len - off)
		return VNET_CLASS_MALFORMED;
	if (ref_be16(f + off + 6) & 0x1fff)
		return VNET_CLASS_OTHER;
	return ref_l4(f, len, off + ihl, f[off + 9], tot - ihl);
}

static int ref_ipv6(const uint8_t *f, uint32_t len, uint32_t off)
{
	uint32_t plen, used = 0, hlen, n;
	uint8_t nh;

	if (!ref_have(len, off, 40) || f[off] >> 4 != 6)
		return VNET_CLASS_MALFORMED;
	plen = ref_be16(f + off + 4);
	if (plen > len - off - 40)
		return VNET_CLASS_MALFORMED;
	nh = f[off + 6];
	off += 40;
	for (n = 0;; n++) {
		switch (nh) {
		case 0:	 /* hop-by-hop */
		case 43: /* routing */
		case 60: /* destination options */
		case 51: /* AH */
			if (n == 8 || !ref_have(len, off, 2))
				return VNET_CLASS_MALFORMED;
			hlen = nh == 51 ? ((uint32_t)f[off + 1] + 2) * 4 :
					  ((uint32_t)f[off + 1] + 1) * 8;
			break;
		case 44: /* fragment */
			if (n == 8 || used + 8 > plen || !ref_have(len, off, 8))
				return VNET_CLASS_MALFORMED;
			if (ref_be16(f + off + 2) & 0xfff8)
				return VNET_CLASS_OTHER;
			hlen = 8;
			break;
		default:
			return ref_l4(f, len, off, nh, plen - used);
		}
		used += hlen;
		if (used > plen)
			return VNET_CLASS_MALFORMED;
		nh = f[off];
		off += hlen;
	}
}

static int ref_classify(const uint8_t *f, uint32_t len)
{
	uint32_t off = 14, proto, tags;

	if (len < 14)
		return VNET_CLASS_MALFORMED;
	proto = ref_be16(f + 12);
	for (tags = 0; tags < 2 && (proto == 0x8100 || proto == 0x88a8);
	     tags++) {
		if (!ref_have(len, off, 4))
			return VNET_CLASS_MALFORMED;
		proto = ref_be16(f + off + 2);
		off += 4;
	}
	switch (proto) {
	case 0x0800:
		return ref_ipv4(f, len, off);
	case 0x86dd:
		return ref_ipv6(f, len, off);
	case 0x0806:
		return len - off < 28 ? VNET_CLASS_MALFORMED : VNET_CLASS_OTHER;
	default:
		return VNET_CLASS_OTHER;
	}
}

#endif /* VNET_FUZZ_CLASSIFY_REF_H */
