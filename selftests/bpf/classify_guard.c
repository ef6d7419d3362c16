// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Spoofing protection (bpf/guard.h) through BPF_PROG_TEST_RUN on the
 * guest-TX programs, tc ingress and XDP: with the guard on, each spoofed
 * frame is dropped and counted under its reason and nowhere else; the
 * guest's own frames pass and are classified as before; with the guard
 * off nothing is dropped.
 */
#include <arpa/inet.h>

#include "classify.h"

#define TC_ACT_SHOT 2

static const __u8 own_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const __u8 other_mac[6] = { 0x52, 0x54, 0x00, 0x99, 0x99, 0x99 };

static void guard_write(const struct vnet_guard *g)
{
	__u32 k = 0;

	ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.guard), &k, g,
				      BPF_ANY), "guard map written");
}

static __u64 guard_drops(int reason)
{
	struct vnet_counter per[512];
	__u32 k = (__u32)reason;
	__u64 n = 0;
	int c;

	if (nr_cpus > 512 ||
	    bpf_map_lookup_elem(bpf_map__fd(skel->maps.guard_stats), &k, per))
		return ~0ull;
	for (c = 0; c < nr_cpus; c++)
		n += per[c].packets;
	return n;
}

/* what an edit writes after frame_build(): LEN bytes at L3 + OFF, or L4 */
static struct {
	bool on, l4;
	size_t off, len;
	uint8_t bytes[32];
} edit;

/* run FRAME through HOOK: dropped under REASON, or passed (-1) */
static void expect_guard(const char *what, const struct hook *h,
			 const struct frame_spec *s, int reason)
{
	struct frame_layout l;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);
	static uint8_t f[2048];
	__u64 before[VNET_GUARD_R_MAX];
	ssize_t len = frame_build(s, f, sizeof(f), &l);
	char name[128];
	int r, want;

	if (!ASSERT_GT(len, 0, "frame_build"))
		return;
	if (edit.on)
		memcpy(f + (edit.l4 ? l.l4_off : l.l3_off) + edit.off,
		       edit.bytes, edit.len);
	for (r = 0; r < VNET_GUARD_R_MAX; r++)
		before[r] = guard_drops(r);
	opts.data_in = f;
	opts.data_size_in = (__u32)len;
	snprintf(name, sizeof(name), "%s (%s): test_run", what, h->name);
	if (!ASSERT_OK(bpf_prog_test_run_opts(h->fd, &opts), name))
		return;
	if (h == &hook_xdp)
		want = reason < 0 ? XDP_PASS : XDP_DROP;
	else
		want = reason < 0 ? TC_ACT_UNSPEC : TC_ACT_SHOT;
	snprintf(name, sizeof(name), "%s (%s): verdict", what, h->name);
	ASSERT_EQ((int)opts.retval, want, name);
	for (r = 0; r < VNET_GUARD_R_MAX; r++) {
		snprintf(name, sizeof(name), "%s (%s): drops[%d]", what,
			 h->name, r);
		ASSERT_EQ(guard_drops(r) - before[r], r == reason ? 1u : 0u,
			  name);
	}
}

static struct frame_spec from_guest(uint16_t ethertype, uint8_t proto)
{
	struct frame_spec s = {
		.ethertype = ethertype,
		.proto = proto,
		.payload_len = 32,
	};

	memcpy(s.src, own_mac, 6);
	if (ethertype == ETH_P_IP || ethertype == ETH_P_ARP)
		s.saddr = htonl(0xc0000202); /* 192.0.2.2 */
	if (ethertype == ETH_P_IPV6)
		inet_pton(AF_INET6, "2001:db8::2", &s.saddr6);
	return s;
}

static void guard_cases(const struct hook *h)
{
	struct frame_spec s;
	uint8_t icmp[32] = { 0 };

	s = from_guest(ETH_P_IP, IPPROTO_UDP);
	expect_guard("own IPv4 UDP", h, &s, -1);
	memcpy(s.src, other_mac, 6);
	expect_guard("a changed MAC", h, &s, VNET_GUARD_R_MAC);
	s = from_guest(ETH_P_IP, IPPROTO_TCP);
	s.saddr = htonl(0xc0000203);
	expect_guard("an added IPv4 address", h, &s, VNET_GUARD_R_IPV4);
	s = from_guest(ETH_P_IP, IPPROTO_TCP);
	s.saddr = htonl(0xc6336405); /* 198.51.100.5: inside the /24 */
	expect_guard("an address inside an allowed prefix", h, &s, -1);
	s = from_guest(ETH_P_IPV6, IPPROTO_TCP);
	expect_guard("own IPv6 TCP", h, &s, -1);
	inet_pton(AF_INET6, "2001:db8::3", &s.saddr6);
	expect_guard("an added IPv6 address", h, &s, VNET_GUARD_R_IPV6);
	s = from_guest(ETH_P_ARP, 0);
	expect_guard("ARP for its own address", h, &s, -1);
	s.saddr = htonl(0xc0000201);
	expect_guard("a gratuitous ARP for another address", h, &s,
		     VNET_GUARD_R_ARP);
	s = from_guest(ETH_P_IP, IPPROTO_UDP);
	s.sport = 67;
	s.dport = 68;
	expect_guard("a DHCP offer", h, &s, VNET_GUARD_R_DHCP);
	s = from_guest(ETH_P_IP, IPPROTO_UDP);
	s.sport = 68;
	s.dport = 67;
	/* source 0.0.0.0 (frame_build's 0 is 10.0.0.1): bytes 12-15 */
	edit.on = true;
	edit.l4 = false;
	edit.off = 12;
	edit.len = 4;
	memset(edit.bytes, 0, 4);
	expect_guard("a DHCP discover from 0.0.0.0", h, &s, -1);
	/* ICMPv6 messages written over the echo header frame_build made */
	s = from_guest(ETH_P_IPV6, IPPROTO_ICMPV6);
	memset(icmp, 0, sizeof(icmp));
	icmp[0] = 134;
	edit.l4 = true;
	edit.off = 0;
	edit.len = 24;
	memcpy(edit.bytes, icmp, 24);
	expect_guard("a router advertisement", h, &s, VNET_GUARD_R_RA);
	icmp[0] = 136;
	inet_pton(AF_INET6, "2001:db8::1", icmp + 8);
	memcpy(edit.bytes, icmp, 24);
	expect_guard("a neighbour advertisement for another address", h, &s,
		     VNET_GUARD_R_ND);
	inet_pton(AF_INET6, "2001:db8::2", icmp + 8);
	memcpy(edit.bytes, icmp, 24);
	expect_guard("a neighbour advertisement for its own", h, &s, -1);
	edit.on = false;
	s = from_guest(0x88b5, 0);
	expect_guard("neither IPv4, IPv6 nor ARP", h, &s, VNET_GUARD_R_L2);
}

static void test_guard(void)
{
	struct vnet_guard g = {
		.flags = VNET_GUARD_MAC | VNET_GUARD_IP | VNET_GUARD_ARP |
			 VNET_GUARD_ND | VNET_GUARD_DHCP | VNET_GUARD_RA,
		.nr_v4 = 2,
		.nr_v6 = 1,
	};
	struct vnet_guard off = {};
	struct frame_spec s;

	if (!classify_ready())
		return;
	memcpy(g.mac, own_mac, 6);
	g.v4[0].addr = htonl(0xc0000202);
	g.v4[0].prefix = 32;
	g.v4[1].addr = htonl(0xc6336400);
	g.v4[1].prefix = 24;
	inet_pton(AF_INET6, "2001:db8::2", g.v6[0].addr);
	g.v6[0].prefix = 128;
	guard_write(&g);
	guard_cases(&hook_tc_tx);
	guard_cases(&hook_xdp);

	/* off: a spoofed frame passes, nothing counted */
	guard_write(&off);
	s = from_guest(ETH_P_IP, IPPROTO_UDP);
	memcpy(s.src, other_mac, 6);
	s.sport = 67;
	expect_guard("guard off: a spoofed DHCP offer passes", &hook_tc_tx,
		     &s, -1);
}

VNET_TEST("classify/guard", test_guard);
