// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd's rate limits (docs/limits.md), through the pinned limits map as
 * vnetctl writes it, with the test frontend as the guest:
 *  - guest TX at a frame rate: every frame reaches the tap in order, none
 *    dropped, and no sooner than the buckets allow (burst + rate x time,
 *    a bound that holds however slow the machine); vnetd counts the holds;
 *  - the same for guest RX, frames written into the tap;
 *  - a limit removed live: the frames held behind it flow at once;
 *  - the guard and a limit changed again and again under traffic: every
 *    frame that passes them reaches the tap, in order, none dropped; a
 *    spoofed one among them does not.
 */
#include <bpf/libbpf.h>

#include "vnetd_test.h"

/* V as key K's value in port P's pinned map MAP ("limits", "guard") */
static bool map_put(const struct port *p, const char *map, const void *k,
		    const void *v)
{
	int fd = pin_get(p, map);
	char what[64];
	bool ok;

	snprintf(what, sizeof(what), "%s map pinned", map);
	if (!ASSERT_GE(fd, 0, what))
		return false;
	snprintf(what, sizeof(what), "%s map written", map);
	ok = ASSERT_OK(bpf_map_update_elem(fd, k, v, BPF_ANY), what);
	close(fd);
	return ok;
}

/* write L as direction DIR's limit (gen even: no writer inside) */
static bool limit_write(const struct port *p, __u32 dir, __u64 pps,
			__u64 pburst, __u32 gen)
{
	struct vnet_limit l = {
		.frames_per_sec = pps,
		.frames_burst = pburst,
		.gen = gen,
	};

	return map_put(p, "limits", &dir, &l);
}

/* vnetd with one port NAME, its tap's packet socket *PFD, a frontend */
static struct vufe *limit_setup(struct vd *vd, const char *name, int *pfd)
{
	struct vufe_opts o;

	vd_init(vd, name, 1, 1);
	if (!vd_up_tap(vd, pfd))
		return NULL;
	o = fe_opts(&vd->port[0]);
	return fe_up(&o);
}

#define LIM_N		300	/* frames sent */
#define LIM_PPS		200	/* the limit */
#define LIM_BURST	20
/* burst + rate x t >= N: t >= (N - burst) / rate, less 10% for rounding */
#define LIM_MIN_MS	((LIM_N - LIM_BURST) * 1000 / LIM_PPS * 9 / 10)

static void limit_tx(void)
{
	static __u8 f[1514];
	struct vnet_dp_stats d0, d1;
	struct link_stats l0, l1;
	struct vufe *fe;
	long long t0, ms;
	unsigned int i, k = 0;
	struct vd vd;
	int pfd = -1;

	fe = limit_setup(&vd, "limtx", &pfd);
	if (!fe)
		goto out;
	if (!limit_write(&vd.port[0], VNET_DIR_TX, LIM_PPS, LIM_BURST, 2))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	ns_link_stats(vd.ns, vd.port[0].tap, &l0);

	t0 = now_ms();
	for (i = 0; i < LIM_N; i++) {
		test_frame(f, 200, nobody_mac, guest_mac, i);
		if (tx_send(fe, 0, NULL, f, 200, 0)) {
			test_fail("send frame %u: %s", i, vufe_strerror(fe));
			goto out;
		}
		/* read what came so far: the tap's socket never overflows */
		for (; k <= i && (i - k >= 32 || i == LIM_N - 1); k++) {
			char what[48];

			test_frame(f, 200, nobody_mac, guest_mac, k);
			snprintf(what, sizeof(what), "limited frame %u", k);
			if (!tap_expect(pfd, f, 200, WAIT_MS, what))
				goto out;
		}
	}
	ms = now_ms() - t0;
	if (!ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "all TX buffers used"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d1);
	ns_link_stats(vd.ns, vd.port[0].tap, &l1);
	dbg("%u frames at %u/s (burst %u) took %lld ms, held %llu times, %llu ms\n",
	    LIM_N, LIM_PPS, LIM_BURST, ms,
	    (unsigned long long)(d1.limited - d0.limited),
	    (unsigned long long)(d1.limited_ns - d0.limited_ns) / 1000000);
	ASSERT_GE(ms, LIM_MIN_MS, "no sooner than the buckets allow");
	ASSERT_EQ(d1.frames - d0.frames, LIM_N, "every frame went (none dropped)");
	ASSERT_EQ(l1.rx_packets - l0.rx_packets, LIM_N, "the tap took every frame");
	ASSERT_EQ(d1.drops[VNET_DROP_TAP], d0.drops[VNET_DROP_TAP], "no tap drop");
	ASSERT_GT(d1.limited - d0.limited, 0, "vnetd counted its holds");
	ASSERT_GT(d1.limited_ns - d0.limited_ns, 0, "... and their time");

	/* a limit removed live releases what it held */
	if (!limit_write(&vd.port[0], VNET_DIR_TX, 2, 1, 4))
		goto out;
	for (i = 0; i < 20; i++) {
		test_frame(f, 200, nobody_mac, guest_mac, 1000 + i);
		if (tx_send(fe, 0, NULL, f, 200, 0)) {
			test_fail("send frame %u: %s", 1000 + i, vufe_strerror(fe));
			goto out;
		}
	}
	/* at 2 frames/s these 20 would take about 10 s */
	if (!limit_write(&vd.port[0], VNET_DIR_TX, 0, 0, 6))
		goto out;
	for (i = 0; i < 20; i++) {
		test_frame(f, 200, nobody_mac, guest_mac, 1000 + i);
		if (!tap_expect(pfd, f, 200, WAIT_MS, "a frame held, then released"))
			goto out;
	}
out:
	vd_end(&vd, fe, &pfd);
}

static void limit_rx(void)
{
	static __u8 f[1514], got[FRAME_MAX];
	struct vnet_dp_stats d0, d1;
	struct vufe *fe;
	long long t0, ms, want;
	unsigned int i;
	struct vd vd;
	ssize_t n;
	int pfd = -1;

	fe = limit_setup(&vd, "limrx", &pfd);
	if (!fe)
		goto out;
	if (!ASSERT_GT(vufe_post_rx(fe, 0, 0), 0, "post RX buffers") ||
	    !limit_write(&vd.port[0], VNET_DIR_RX, LIM_PPS, LIM_BURST, 2))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);

	t0 = now_ms();
	/* under tun's queue (500): none dropped there either */
	for (i = 0; i < LIM_N; i++) {
		test_frame(f, 200, guest_mac, host_mac, 0x40000000 | i);
		if (!ASSERT_OK(pkt_send(pfd, NULL, f, 200), "AF_PACKET send"))
			goto out;
	}
	for (i = 0; i < LIM_N; i++) {
		want = 0x40000000 | i;
		n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL,
			       match_id, &want, WAIT_MS);
		if (n < 0) {
			test_fail("frame %u did not reach the guest: %s", i,
				  n == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
			goto out;
		}
	}
	ms = now_ms() - t0;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	dbg("%u frames to the guest at %u/s took %lld ms, held %llu times\n",
	    LIM_N, LIM_PPS, ms, (unsigned long long)(d1.limited - d0.limited));
	ASSERT_GE(ms, LIM_MIN_MS, "no sooner than the buckets allow");
	ASSERT_GE(d1.frames - d0.frames, LIM_N, "every frame delivered");
	ASSERT_GT(d1.limited - d0.limited, 0, "vnetd counted its holds");
out:
	vd_end(&vd, fe, &pfd);
}

/* the guard's entry: the guest's MAC and address, EXTRA another prefix */
static bool guard_write(const struct port *p, bool extra)
{
	struct vnet_guard g = {
		.flags = VNET_GUARD_MAC | VNET_GUARD_IP | VNET_GUARD_ARP |
			 VNET_GUARD_ND | VNET_GUARD_DHCP | VNET_GUARD_RA,
		.nr_v4 = extra ? 2 : 1,
	};
	__u32 k = 0;

	memcpy(g.mac, guest_mac, ETH_ALEN);
	g.v4[0].addr = htonl(GUEST_IP);
	g.v4[0].prefix = 32;
	g.v4[1].addr = htonl(0xc6336400); /* 198.51.100.0/24 */
	g.v4[1].prefix = 24;
	return map_put(p, "guard", &k, &g);
}

/* the guard's drops under every reason, summed over the CPUs */
static __u64 guard_drops(const struct port *p)
{
	struct vnet_counter per[512];
	int fd = pin_get(p, "guard_stats"), c, n = libbpf_num_possible_cpus();
	__u64 sum = 0;
	__u32 k;

	if (fd < 0 || n > 512)
		return ~0ull;
	for (k = 0; k < VNET_GUARD_R_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, per))
			continue;
		for (c = 0; c < n; c++)
			sum += per[c].packets;
	}
	close(fd);
	return sum;
}

static void limit_guard_live(void)
{
	static __u8 f[1514];
	struct vnet_dp_stats d0, d1;
	struct vufe *fe;
	unsigned int i, k = 0, n = 300;
	size_t len;
	struct vd vd;
	int pfd = -1;

	fe = limit_setup(&vd, "limgd", &pfd);
	if (!fe || !guard_write(&vd.port[0], false))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	for (i = 0; i < n; i++) {
		/* every 10 frames: the guard and the limit written again */
		if (i % 10 == 0 &&
		    (!guard_write(&vd.port[0], i % 20 == 0) ||
		     !limit_write(&vd.port[0], VNET_DIR_TX,
				  i % 20 ? 100000 : 200000, 64, 2 * (i + 2))))
			goto out;
		len = udp_frame(f, nobody_mac, guest_mac, 5000, i);
		if (tx_send(fe, 0, NULL, f, len, 0)) {
			test_fail("send frame %u: %s", i, vufe_strerror(fe));
			goto out;
		}
		for (; k <= i && (i - k >= 16 || i == n - 1); k++) {
			len = udp_frame(f, nobody_mac, guest_mac, 5000, k);
			if (!tap_expect(pfd, f, len, WAIT_MS, "a frame the guard passes"))
				goto out;
		}
	}
	if (!ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "all TX buffers used"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d1);
	ASSERT_EQ(d1.frames - d0.frames, n, "every frame went");
	ASSERT_EQ(guard_drops(&vd.port[0]), 0, "the guard dropped none of the guest's");

	/*
	 * a spoofed frame, then a good one: the spoofed one is dropped (the
	 * tap's AF_PACKET socket sees frames before tc ingress, so it sees
	 * both), and the good one still goes
	 */
	len = udp_frame(f, nobody_mac, nobody_mac, 5000, 9999);
	if (tx_send(fe, 0, NULL, f, len, 0) ||
	    !tap_expect(pfd, f, len, WAIT_MS, "the spoofed frame reaches the tap"))
		goto out;
	len = udp_frame(f, nobody_mac, guest_mac, 5000, 10000);
	if (tx_send(fe, 0, NULL, f, len, 0) ||
	    !tap_expect(pfd, f, len, WAIT_MS, "the good frame after a spoofed one"))
		goto out;
	ASSERT_EQ(guard_drops(&vd.port[0]), 1, "the spoofed frame dropped");
out:
	vd_end(&vd, fe, &pfd);
}

VNET_TEST("vnetd/limit/tx_frames", limit_tx);
VNET_TEST("vnetd/limit/guard_live", limit_guard_live);
VNET_TEST("vnetd/limit/rx_frames", limit_rx);
