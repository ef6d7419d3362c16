// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* test_classify: the frame cases, frames shorter than Ethernet, the queues map */
#include "classify.h"

/* ------------------------------------------------------------------ */
/*
 * Frame cases: a table of frame specs that frames.h's frame_build() builds,
 * each with the class it must be counted as.  A malformed frame is a good
 * one edited after it was built (EDIT_*, applied in order): a length cut,
 * a header byte or field overwritten, the IPv4 checksum fixed again.
 */

/* builds the case's frame into buf: its length, or -errno */
ssize_t frame_case_build(const struct frame_case *c, uint8_t *b,
			 size_t cap)
{
	struct frame_layout l;
	ssize_t len = frame_build(&c->spec, b, cap, &l);
	unsigned int i;

	for (i = 0; len >= 0 && i < FRAME_MAX_EDITS; i++) {
		const struct frame_edit *e = &c->edit[i];

		switch (e->op) {
		case EDIT_NONE:
			break;
		case EDIT_LEN_ETH:
			len = FRAME_ETH_HLEN + e->arg;
			break;
		case EDIT_LEN_L3:
			len = (ssize_t)l.l3_off + e->arg;
			break;
		case EDIT_LEN_L4:
			len = (ssize_t)l.l4_off + e->arg;
			break;
		case EDIT_IP_BYTE0:
			b[l.l3_off] = (uint8_t)e->arg;
			break;
		case EDIT_IPV4_TOT_LEN:
			frame_put16(b, l.l3_off + 2, (uint16_t)e->arg);
			break;
		case EDIT_IPV4_TOT_LEN_ADD:
			frame_put16(b, l.l3_off + 2,
				    frame_get16(b, l.l3_off + 2) + e->arg);
			break;
		case EDIT_IPV4_CSUM:
			frame_ipv4_fix_csum(b, l.l3_off);
			break;
		case EDIT_TCP_DOFF:
			b[l.l4_off + 12] = (uint8_t)(e->arg << 4);
			break;
		case EDIT_IPV6_PLEN:
			frame_put16(b, l.l3_off + 4, (uint16_t)e->arg);
			break;
		}
	}
	return len;
}

#define A FRAME_TCP_ACK
#define P (FRAME_TCP_PSH | FRAME_TCP_ACK)

/* the spec of a case: frame_spec fields */
#define SPEC(...) { __VA_ARGS__ }
#define TCP(et, flags, plen, ack)                                          \
	.ethertype = (et), .proto = IPPROTO_TCP, .tcp_flags = (flags),      \
	.seq = 1000, .ack_seq = (ack), .payload_len = (plen)
#define TCP4(flags, plen) TCP(ETH_P_IP, flags, plen, 2000)
#define TCP6(flags, plen) TCP(ETH_P_IPV6, flags, plen, 2000)
#define L4(et, p, plen) .ethertype = (et), .proto = (p), .payload_len = (plen)
#define VLAN1(t, v) .nr_vlans = 1, .vlan_tpid = { t }, .vlan_tci = { v }
#define VLAN2(t1, v1, t2, v2)                                              \
	.nr_vlans = 2, .vlan_tpid = { t1, t2 }, .vlan_tci = { v1, v2 }
#define VLAN3(t1, v1, t2, v2, t3, v3)                                      \
	.nr_vlans = 3, .vlan_tpid = { t1, t2, t3 }, .vlan_tci = { v1, v2, v3 }
#define QINQ VLAN2(ETH_P_8021AD, 10, ETH_P_8021Q, 100)
#define EXTS(n, ...) .nr_ext = (n), .ext = { __VA_ARGS__ }
#define EXT(t, l) { .type = (t), .len = (l) }
#define FRAG(off, more)                                                    \
	{ .type = IPPROTO_FRAGMENT, .frag_off = (off), .more_frags = (more) }
#define HOP EXT(IPPROTO_HOPOPTS, 0)
#define RT0 EXT(IPPROTO_ROUTING, 0)
#define DST0 EXT(IPPROTO_DSTOPTS, 0)
/* hop-by-hop, routing, then n - 2 destination options headers */
#define EXT_CHAIN8 EXTS(8, HOP, RT0, DST0, DST0, DST0, DST0, DST0, DST0)
#define EXT_CHAIN9 EXTS(9, HOP, RT0, DST0, DST0, DST0, DST0, DST0, DST0, DST0)
#define PAD .min_len = FRAME_MIN_LEN

/* a case: name, class, SPEC(...), then up to three { EDIT_*, arg } */
#define CASE(name, class, spec, ...)                                       \
	{ "classify/" #name, VNET_CLASS_##class, spec, { __VA_ARGS__ } }

/* a non-first fragment's payload: read as a TCP header, data offset 0 */
static const uint8_t zeros64[64];

static const struct frame_case frame_cases[] = {
	/* IPv4 TCP */
	CASE(ipv4_tcp_urgent, URGENT, SPEC(TCP4(A, 100))),
	CASE(ipv4_tcp_push, PUSH, SPEC(TCP4(P, 100))),
	CASE(ipv4_tcp_pure_ack, ACK, SPEC(TCP4(A, 0))),
	/* a real SYN carries options: MSS, SACK, timestamps, wscale */
	CASE(ipv4_tcp_syn, ACK,
	     SPEC(TCP(ETH_P_IP, FRAME_TCP_SYN, 0, 0), .tcp_doff = 10)),
	CASE(ipv4_tcp_synack, ACK, SPEC(TCP4(FRAME_TCP_SYN | A, 0), .tcp_doff = 8)),
	CASE(ipv4_tcp_fin, ACK, SPEC(TCP4(FRAME_TCP_FIN | A, 0))),
	CASE(ipv4_tcp_rst, ACK, SPEC(TCP4(FRAME_TCP_RST | A, 0))),
	/* FIN with data is classified by its data, not by the FIN */
	CASE(ipv4_tcp_fin_with_data, PUSH, SPEC(TCP4(FRAME_TCP_FIN | P, 50))),
	/* 54 bytes padded to 60: the 6 padding bytes are not payload */
	CASE(ipv4_tcp_ack_eth_padding, ACK, SPEC(TCP4(A, 0), PAD)),
	/* 2 bytes of payload (from the IP header), then 4 bytes of padding */
	CASE(ipv4_tcp_urgent_eth_padding, URGENT, SPEC(TCP4(A, 2), PAD)),
	CASE(ipv4_tcp_push_eth_padding, PUSH, SPEC(TCP4(P, 1), PAD)),
	CASE(ipv4_tcp_doff15_urgent, URGENT, SPEC(TCP4(A, 100), .tcp_doff = 15)),
	/* data offset exactly the IP payload: no data */
	CASE(ipv4_tcp_doff15_ack, ACK, SPEC(TCP4(A, 0), .tcp_doff = 15)),
	/* DF is not a fragment */
	CASE(ipv4_df_tcp_urgent, URGENT, SPEC(TCP4(A, 1448), .dont_frag = true)),
	CASE(ipv4_tcp_large_push, PUSH, SPEC(TCP4(P, TEST_RUN_MAX - 54))),
	/* IPv4 options */
	CASE(ipv4_opts_ihl6_urgent, URGENT, SPEC(TCP4(A, 100), .ip_opt_len = 4)),
	CASE(ipv4_opts_ihl10_push, PUSH, SPEC(TCP4(P, 100), .ip_opt_len = 20)),
	CASE(ipv4_opts_ihl15_push, PUSH, SPEC(TCP4(P, 100), .ip_opt_len = 40)),
	CASE(ipv4_opts_ihl15_ack, ACK,
	     SPEC(TCP4(A, 0), .ip_opt_len = 40, PAD)),
	/* IPv4 fragments */
	CASE(ipv4_frag_first_tcp_push, PUSH,
	     SPEC(TCP4(P, 1000), .more_frags = true, .ip_id = 77)),
	CASE(ipv4_frag_first_tcp_urgent, URGENT,
	     SPEC(TCP4(A, 1000), .more_frags = true, .ip_id = 78)),
	/* 1024 bytes in */
	CASE(ipv4_frag_middle, OTHER,
	     SPEC(TCP4(A, 1000), .frag_off = 128, .more_frags = true,
		  .ip_id = 77)),
	CASE(ipv4_frag_last, OTHER,
	     SPEC(TCP4(A, 300), .frag_off = 256, .ip_id = 77)),
	/*
	 * A non-first fragment whose first bytes, read as a TCP header, would
	 * be malformed (data offset 0): it has no TCP header, so it is "other".
	 */
	CASE(ipv4_frag_nonfirst_no_l4, OTHER,
	     SPEC(TCP4(A, sizeof(zeros64)), .payload = zeros64, .frag_off = 8,
		  .more_frags = true)),
	/* IPv4 other */
	CASE(ipv4_udp, OTHER, SPEC(L4(ETH_P_IP, IPPROTO_UDP, 100))),
	CASE(ipv4_udp_eth_padding, OTHER,
	     SPEC(L4(ETH_P_IP, IPPROTO_UDP, 2), PAD)),
	CASE(ipv4_icmp, OTHER, SPEC(L4(ETH_P_IP, IPPROTO_ICMP, 56))),
	CASE(ipv4_gre, OTHER, SPEC(L4(ETH_P_IP, IPPROTO_GRE, 40))),
	/* ARP, ethertypes, VLAN */
	CASE(arp_request, OTHER, SPEC(.ethertype = ETH_P_ARP, PAD)),
	CASE(arp_unpadded, OTHER, SPEC(.ethertype = ETH_P_ARP)),
	/* IEEE 802 local experimental ethertype */
	CASE(ethertype_unknown, OTHER,
	     SPEC(.ethertype = 0x88b5, .payload_len = 46)),
	/* nothing but an Ethernet header */
	CASE(ethertype_unknown_bare, OTHER, SPEC(.ethertype = 0x88b5)),
	CASE(vlan_tcp_urgent, URGENT,
	     SPEC(TCP4(A, 100), VLAN1(ETH_P_8021Q, 100))),
	CASE(vlan_arp, OTHER,
	     SPEC(.ethertype = ETH_P_ARP, PAD, VLAN1(ETH_P_8021Q, 100))),
	CASE(vlan_ipv6_tcp_push, PUSH,
	     SPEC(TCP6(P, 100), VLAN1(ETH_P_8021Q, 100))),
	CASE(qinq_tcp_push, PUSH, SPEC(TCP4(P, 100), QINQ)),
	CASE(qinq_ipv6_tcp_urgent, URGENT, SPEC(TCP6(A, 100), QINQ)),
	/* two 802.1Q tags (the old, pre-802.1ad QinQ) */
	CASE(vlan_double_8021q_ack, ACK,
	     SPEC(TCP4(A, 0), VLAN2(ETH_P_8021Q, 10, ETH_P_8021Q, 100))),
	/* the parser follows two tags; the third one is an unknown ethertype */
	CASE(vlan_three_tags, OTHER,
	     SPEC(TCP4(A, 100), VLAN3(ETH_P_8021AD, 10, ETH_P_8021Q, 100,
				      ETH_P_8021Q, 200))),
	/* IPv6 */
	CASE(ipv6_tcp_urgent, URGENT, SPEC(TCP6(A, 100))),
	CASE(ipv6_tcp_push, PUSH, SPEC(TCP6(P, 100))),
	CASE(ipv6_tcp_pure_ack, ACK, SPEC(TCP6(A, 0))),
	CASE(ipv6_tcp_syn, ACK,
	     SPEC(TCP(ETH_P_IPV6, FRAME_TCP_SYN, 0, 0), .tcp_doff = 10)),
	CASE(ipv6_tcp_fin, ACK, SPEC(TCP6(FRAME_TCP_FIN | A, 0))),
	/* bytes after the IPv6 payload are not payload */
	CASE(ipv6_tcp_ack_trailing_bytes, ACK,
	     SPEC(TCP6(A, 0), .min_len = 14 + 40 + 20 + 24)),
	CASE(ipv6_hopopts_tcp_urgent, URGENT, SPEC(TCP6(A, 100), EXTS(1, HOP))),
	CASE(ipv6_routing_tcp_push, PUSH,
	     SPEC(TCP6(P, 100), EXTS(1, EXT(IPPROTO_ROUTING, 2)))),
	CASE(ipv6_dstopts_tcp_ack, ACK,
	     SPEC(TCP6(A, 0), EXTS(1, EXT(IPPROTO_DSTOPTS, 1)))),
	CASE(ipv6_ah_tcp_urgent, URGENT,
	     SPEC(TCP6(A, 100), EXTS(1, EXT(IPPROTO_AH, 4)))),
	CASE(ipv6_frag_first_tcp_urgent, URGENT,
	     SPEC(TCP6(A, 1000), EXTS(1, FRAG(0, true)))),
	/* an "atomic" fragment: offset 0, no more fragments */
	CASE(ipv6_frag_atomic_tcp_push, PUSH,
	     SPEC(TCP6(P, 100), EXTS(1, FRAG(0, false)))),
	CASE(ipv6_frag_nonfirst, OTHER,
	     SPEC(TCP6(A, 500), EXTS(1, FRAG(128, false)))),
	CASE(ipv6_ext_chain3_tcp_push, PUSH,
	     SPEC(TCP6(P, 100), EXTS(3, HOP, EXT(IPPROTO_ROUTING, 2),
				     EXT(IPPROTO_DSTOPTS, 1)))),
	/* VNET_MAX_IPV6_EXT headers: the last one the bounded walk follows */
	CASE(ipv6_ext_chain8_tcp_urgent, URGENT, SPEC(TCP6(A, 100), EXT_CHAIN8)),
	CASE(ipv6_ext_chain9, MALFORMED, SPEC(TCP6(A, 100), EXT_CHAIN9)),
	/* 2 KB of hop-by-hop options: far headers are still parsed */
	CASE(ipv6_hopopts_2k_tcp_urgent, URGENT,
	     SPEC(TCP6(A, 100), EXTS(1, EXT(IPPROTO_HOPOPTS, 255)))),
	CASE(ipv6_tcp_large_urgent, URGENT, SPEC(TCP6(A, TEST_RUN_MAX - 74))),
	CASE(ipv6_udp, OTHER, SPEC(L4(ETH_P_IPV6, IPPROTO_UDP, 100))),
	CASE(ipv6_hopopts_udp, OTHER,
	     SPEC(L4(ETH_P_IPV6, IPPROTO_UDP, 100), EXTS(1, HOP))),
	CASE(ipv6_icmpv6, OTHER, SPEC(L4(ETH_P_IPV6, IPPROTO_ICMPV6, 56))),
	CASE(ipv6_no_next_header, OTHER, SPEC(L4(ETH_P_IPV6, IPPROTO_NONE, 0))),
	/* malformed: Ethernet and VLAN */
	/* 20 of the 28 bytes of the ARP message */
	CASE(arp_truncated, MALFORMED, SPEC(.ethertype = ETH_P_ARP),
	     { EDIT_LEN_ETH, 20 }),
	/* an Ethernet header saying IPv4, and nothing after it */
	CASE(ipv4_no_header, MALFORMED, SPEC(TCP4(A, 0)), { EDIT_LEN_ETH, 0 }),
	/* ethertype 802.1Q, then 2 of the tag's 4 bytes */
	CASE(vlan_tag_truncated, MALFORMED,
	     SPEC(.ethertype = ETH_P_8021Q, .payload_len = 2)),
	CASE(qinq_inner_tag_truncated, MALFORMED,
	     SPEC(.ethertype = ETH_P_8021Q, .payload_len = 2,
		  VLAN1(ETH_P_8021AD, 10))),
	/* malformed: IPv4 */
	CASE(ipv4_header_truncated, MALFORMED, SPEC(TCP4(A, 0)),
	     { EDIT_LEN_L3, 10 }),
	/* version 6, IHL 5, ethertype IPv4 */
	CASE(ipv4_version_6, MALFORMED, SPEC(TCP4(A, 0)),
	     { EDIT_IP_BYTE0, 0x65 }),
	CASE(ipv4_ihl_4, MALFORMED, SPEC(TCP4(A, 0)),
	     { EDIT_IP_BYTE0, 0x44 }, { EDIT_IPV4_CSUM, 0 }),
	/* IHL 15 (60 bytes) and a total length to match, in a 40-byte datagram */
	CASE(ipv4_ihl_beyond_frame, MALFORMED, SPEC(TCP4(A, 0)),
	     { EDIT_IP_BYTE0, 0x4f }, { EDIT_IPV4_TOT_LEN, 60 }),
	CASE(ipv4_total_len_beyond_frame, MALFORMED, SPEC(TCP4(A, 10)),
	     { EDIT_IPV4_TOT_LEN_ADD, 1 }, { EDIT_IPV4_CSUM, 0 }),
	CASE(ipv4_total_len_below_ihl, MALFORMED, SPEC(TCP4(A, 0), PAD),
	     { EDIT_IPV4_TOT_LEN, 19 }, { EDIT_IPV4_CSUM, 0 }),
	/*
	 * The IP header says 12 bytes of TCP; the frame is padded to 60 so the
	 * rest of a TCP header is there, but it is padding, not TCP.
	 */
	CASE(ipv4_tcp_header_truncated, MALFORMED, SPEC(TCP4(A, 0), PAD),
	     { EDIT_IPV4_TOT_LEN, 20 + 12 }, { EDIT_IPV4_CSUM, 0 }),
	/* the frame itself ends inside the TCP header */
	CASE(ipv4_tcp_header_cut, MALFORMED, SPEC(TCP4(A, 0)),
	     { EDIT_IPV4_TOT_LEN, 20 + 12 }, { EDIT_IPV4_CSUM, 0 },
	     { EDIT_LEN_L4, 12 }),
	CASE(ipv4_tcp_doff_4, MALFORMED, SPEC(TCP4(A, 100)),
	     { EDIT_TCP_DOFF, 4 }),
	CASE(ipv4_tcp_doff_0, MALFORMED, SPEC(TCP4(A, 100)),
	     { EDIT_TCP_DOFF, 0 }),
	/* 20 + 10 bytes of IP payload, data offset 32 */
	CASE(ipv4_tcp_doff_beyond_payload, MALFORMED, SPEC(TCP4(A, 10)),
	     { EDIT_TCP_DOFF, 8 }),
	/* data offset 24 in a 20-byte TCP segment padded to 60: padding is not TCP */
	CASE(ipv4_tcp_doff_into_padding, MALFORMED, SPEC(TCP4(A, 0), PAD),
	     { EDIT_TCP_DOFF, 6 }),
	CASE(ipv4_udp_header_truncated, MALFORMED,
	     SPEC(L4(ETH_P_IP, IPPROTO_UDP, 0), PAD),
	     { EDIT_IPV4_TOT_LEN, 20 + 4 }, { EDIT_IPV4_CSUM, 0 }),
	/* offsets behind tags: a bad IPv4 header inside QinQ */
	CASE(qinq_ipv4_ihl_4, MALFORMED, SPEC(TCP4(P, 100), QINQ),
	     { EDIT_IP_BYTE0, 0x44 }, { EDIT_IPV4_CSUM, 0 }),
	/* malformed: IPv6 */
	CASE(ipv6_header_truncated, MALFORMED, SPEC(TCP6(A, 0)),
	     { EDIT_LEN_L3, 30 }),
	CASE(ipv6_version_4, MALFORMED, SPEC(TCP6(A, 0)),
	     { EDIT_IP_BYTE0, 0x40 }),
	CASE(ipv6_payload_len_beyond_frame, MALFORMED, SPEC(TCP6(A, 10)),
	     { EDIT_IPV6_PLEN, 20 + 10 + 1 }),
	/* a 16-byte hop-by-hop header in a payload length of 10 */
	CASE(ipv6_ext_beyond_payload, MALFORMED,
	     SPEC(TCP6(A, 0), EXTS(1, EXT(IPPROTO_HOPOPTS, 1))),
	     { EDIT_IPV6_PLEN, 10 }),
	/* next header hop-by-hop, payload length 0, and the frame ends there */
	CASE(ipv6_ext_truncated, MALFORMED, SPEC(TCP6(A, 0), EXTS(1, HOP)),
	     { EDIT_IPV6_PLEN, 0 }, { EDIT_LEN_L3, FRAME_IPV6_HLEN }),
	/* the 8-byte fragment header of a first fragment in 4 bytes of payload */
	CASE(ipv6_frag_first_beyond_payload, MALFORMED,
	     SPEC(TCP6(A, 0), EXTS(1, FRAG(0, true))), { EDIT_IPV6_PLEN, 4 }),
	/* the same for a non-first fragment (which carries no TCP header) */
	CASE(ipv6_frag_nonfirst_beyond_payload, MALFORMED,
	     SPEC(TCP6(A, 16), EXTS(1, FRAG(100, true))),
	     { EDIT_IPV6_PLEN, 4 }),
	/*
	 * The chain's third header (32 bytes) runs past the payload length:
	 * 8 + 8 + 20 of the 32, TCP header bytes are in the frame.
	 */
	CASE(ipv6_ext_chain_beyond_payload, MALFORMED,
	     SPEC(TCP6(A, 0), EXTS(3, HOP, RT0, EXT(IPPROTO_DSTOPTS, 3))),
	     { EDIT_IPV6_PLEN, 36 }),
	CASE(ipv6_tcp_header_truncated, MALFORMED, SPEC(TCP6(A, 0)),
	     { EDIT_IPV6_PLEN, 12 }),
	CASE(ipv6_tcp_doff_4, MALFORMED, SPEC(TCP6(A, 100)),
	     { EDIT_TCP_DOFF, 4 }),
	CASE(ipv6_tcp_doff_beyond_payload, MALFORMED, SPEC(TCP6(A, 4)),
	     { EDIT_TCP_DOFF, 7 }),
	CASE(ipv6_udp_header_truncated, MALFORMED,
	     SPEC(L4(ETH_P_IPV6, IPPROTO_UDP, 0)), { EDIT_IPV6_PLEN, 4 }),
};

#undef CASE
#undef SPEC
#undef TCP
#undef TCP4
#undef TCP6
#undef L4
#undef VLAN1
#undef VLAN2
#undef VLAN3
#undef QINQ
#undef EXTS
#undef EXT
#undef FRAG
#undef HOP
#undef RT0
#undef DST0
#undef EXT_CHAIN8
#undef EXT_CHAIN9
#undef PAD
#undef A
#undef P

const struct frame_case *frame_case_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(frame_cases) / sizeof(frame_cases[0]); i++)
		if (!strcmp(frame_cases[i].name, name))
			return &frame_cases[i];
	return NULL;
}

/*
 * bpf_prog_test_run_skb() refuses (-EINVAL) a frame whose ethertype is IPv4
 * or IPv6 when the IP header is not all there (a 2026 syzbot fix, in stable
 * kernels too).  Such frames still reach tc egress on a real tap: the tap
 * cases send them out of one (classify/tap_short_ip_headers).
 */
static bool skb_test_run_refuses(const uint8_t *data, size_t len)
{
	uint16_t proto = frame_get16(data, 12);

	return (proto == ETH_P_IP &&
		len < FRAME_ETH_HLEN + FRAME_IPV4_HLEN) ||
	       (proto == ETH_P_IPV6 && len < FRAME_ETH_HLEN + FRAME_IPV6_HLEN);
}

/* frame case i (VNET_TEST_TABLE in test_classify.c) */
unsigned int frame_case_nr(void)
{
	return sizeof(frame_cases) / sizeof(frame_cases[0]);
}

const char *frame_case_name(unsigned int i)
{
	return frame_cases[i].name;
}

void frame_case_run(unsigned int i)
{
	const struct hook *hooks[] = { &hook_xdp, &hook_tc_rx, &hook_tc_tx };
	const struct frame_case *c = &frame_cases[i];
	ssize_t len;
	size_t k;

	if (!classify_ready())
		return;
	len = frame_case_build(c, frame, sizeof(frame));
	if (!ASSERT_GE(len, FRAME_ETH_HLEN, "build frame"))
		return;
	if (!ASSERT_LE(len, TEST_RUN_MAX, "frame fits a test run"))
		return;
	for (k = 0; k < sizeof(hooks) / sizeof(hooks[0]); k++) {
		if (hooks[k] != &hook_xdp &&
		    skb_test_run_refuses(frame, (size_t)len))
			continue;
		run_hook(hooks[k], frame, (size_t)len, NULL, 0,
			 vnet_key(hooks[k]->dir, 0), c->expect, (__u64)len);
	}
}

/* ------------------------------------------------------------------ */
/* Frames shorter than an Ethernet header. */

/*
 * Neither BPF_PROG_TEST_RUN nor tun accept a frame shorter than ETH_HLEN,
 * so the program can only see one when its linear window is that short.
 * Kernels with non-linear XDP test runs (6.18 here) take xdp_md.data_end
 * in ctx_in as the size of the linear part and put the rest of data_in in a
 * fragment; vnet_xdp_tx (not frags aware) takes data_end - data as the
 * frame, i.e. a frame of `window` bytes.  Older kernels refuse data_end !=
 * data_size_in: SKIP there.
 */
void short_window(__u32 window)
{
	struct frame_spec s = tcp4(FRAME_TCP_ACK, 0);
	struct xdp_md ctx = { .data_end = window };
	LIBBPF_OPTS(bpf_test_run_opts, probe, .data_in = frame,
		    .data_size_in = FRAME_MIN_LEN, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	ssize_t len;

	if (!classify_ready())
		return;
	s.min_len = FRAME_MIN_LEN;
	len = frame_build(&s, frame, sizeof(frame), NULL);
	if (!ASSERT_EQ(len, FRAME_MIN_LEN, "build frame"))
		return;
	if (bpf_prog_test_run_opts(hook_xdp.fd, &probe) == -EINVAL) {
		test_skip("kernel refuses an XDP test run with a linear part "
			  "shorter than the data (xdp_md.data_end)");
		return;
	}
	run_hook(&hook_xdp, frame, FRAME_MIN_LEN, &ctx, sizeof(ctx),
		 vnet_key(VNET_DIR_TX, 0), VNET_CLASS_MALFORMED, window);
}

/* ------------------------------------------------------------------ */
/* The queues map: timestamps and mmap. */

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static bool run_xdp_once(const void *data, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data,
		    .data_size_in = (__u32)len, .repeat = 1);

	return ASSERT_OK(bpf_prog_test_run_opts(hook_xdp.fd, &opts),
			 "xdp test_run");
}

/*
 * last_urgent_ns / last_push_ns are bpf_ktime_get_ns(), CLOCK_MONOTONIC:
 * userspace compares them with its own clock to tell how recent the last
 * urgent frame is.  The classifier reads the clock only when the jiffy
 * changed since the last such frame, so after a pause longer than a jiffy
 * (at most 10 ms: HZ >= 100) the next frame's time must fall inside the
 * window of its test run.
 */
#define JIFFY_PAUSE_US 25000

/*
 * After a pause of JIFFY_PAUSE_US, frame[0..LEN) through XDP once between
 * *T0 and *T1 (CLOCK_MONOTONIC), then the maps of KEY read into *A.
 */
static bool paused_run(ssize_t len, __u32 key, struct snap *a, __u64 *t0,
		       __u64 *t1)
{
	usleep(JIFFY_PAUSE_US);
	*t0 = mono_ns();
	if (!run_xdp_once(frame, (size_t)len))
		return false;
	*t1 = mono_ns();
	return ASSERT_OK(snap_read(key, a), "read maps");
}

void test_queue_timestamps(void)
{
	struct frame_spec urgent = tcp4(FRAME_TCP_ACK, 100);
	struct frame_spec push = tcp4(FRAME_TCP_PSH | FRAME_TCP_ACK, 100);
	__u32 key = vnet_key(VNET_DIR_TX, 0);
	struct snap b, a;
	__u64 t0, t1;
	ssize_t len;

	if (!classify_ready())
		return;
	len = frame_build(&urgent, frame, sizeof(frame), NULL);
	if (!ASSERT_GT(len, 0, "build urgent") ||
	    !ASSERT_OK(snap_read(key, &b), "read maps"))
		return;
	if (!paused_run(len, key, &a, &t0, &t1))
		return;
	ASSERT_EQ(a.q.urgent, b.q.urgent + 1, "urgent count");
	ASSERT_GE(a.q.last_urgent_ns, t0, "last_urgent_ns after the run");
	ASSERT_LE(a.q.last_urgent_ns, t1, "last_urgent_ns before its end");
	ASSERT_EQ(a.q.last_push_ns, b.q.last_push_ns, "last_push_ns still");
	ASSERT_NEQ(a.q.first_seen_ns, 0, "first_seen_ns set");
	ASSERT_LE(a.q.first_seen_ns, t1, "first_seen_ns in the past");

	len = frame_build(&push, frame, sizeof(frame), NULL);
	if (!ASSERT_GT(len, 0, "build push"))
		return;
	b = a;
	if (!paused_run(len, key, &a, &t0, &t1))
		return;
	ASSERT_EQ(a.q.push, b.q.push + 1, "push count");
	ASSERT_GE(a.q.last_push_ns, t0, "last_push_ns after the run");
	ASSERT_LE(a.q.last_push_ns, t1, "last_push_ns before its end");
	ASSERT_EQ(a.q.urgent, b.q.urgent, "urgent count still");
	ASSERT_EQ(a.q.last_urgent_ns, b.q.last_urgent_ns,
		  "last_urgent_ns still");
	ASSERT_EQ(a.q.first_seen_ns, b.q.first_seen_ns, "first_seen_ns kept");
}

/* vnetd reads the queues map through mmap: same bytes as a lookup. */
void test_queues_mmap(void)
{
	size_t size = (size_t)VNET_DIR_MAX * VNET_MAX_QUEUES *
		      sizeof(struct vnet_queue_state);
	__u32 key = vnet_key(VNET_DIR_TX, 0);
	const struct vnet_queue_state *map;
	struct vnet_queue_state q;
	struct frame_spec s = tcp4(FRAME_TCP_ACK, 10);
	ssize_t len;
	void *p;

	if (!classify_ready())
		return;
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, queues_fd, 0);
	if (!ASSERT_TRUE(p != MAP_FAILED, "mmap queues"))
		return;
	map = p;
	len = frame_build(&s, frame, sizeof(frame), NULL);
	if (ASSERT_GT(len, 0, "build frame") &&
	    run_xdp_once(frame, (size_t)len) &&
	    ASSERT_OK(bpf_map_lookup_elem(queues_fd, &key, &q), "lookup")) {
		ASSERT_NEQ(q.urgent, 0, "urgent count");
		ASSERT_MEMEQ(&map[key], &q, sizeof(q), "mmap == lookup");
	}
	munmap(p, size);
}
