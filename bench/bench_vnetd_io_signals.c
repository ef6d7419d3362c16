// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bench_vnetd_io: call-eventfd signals per 1000 frames */
#include "bench_vnetd_io.h"

/* ---- signals: call-eventfd signals per 1000 frames ---- */

static bool tx_used(struct vufe *fe, void *arg)
{
	(void)arg;
	vufe_tx_reap(fe, 0);
	return vufe_tx_inflight(fe, 0) == 0;
}

static int set_coal(const char *tap, __u32 tx_frames, __u32 tx_usecs,
		    __u32 rx_frames, __u32 rx_usecs)
{
	char path[256];
	struct vnet_config c;
	__u32 q = 0;
	int fd, err;

	snprintf(path, sizeof(path), "/sys/fs/bpf/vnet/%s/config", tap);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	err = bpf_map_lookup_elem(fd, &q, &c) ? -errno : 0;
	if (!err) {
		c.tx_frames = tx_frames;
		c.tx_usecs = tx_usecs;
		c.rx_frames = rx_frames;
		c.rx_usecs = rx_usecs;
		c.flags = 0;
		c.gen++;
		err = bpf_map_update_elem(fd, &q, &c, BPF_ANY) ? -errno : 0;
	}
	close(fd);
	return err;
}

/* a TCP frame with payload: PSH clear = URGENT; or UDP = bulk */
static unsigned int guest_frame(unsigned char *f, bool urgent, unsigned int n)
{
	static const unsigned char dst[ETH_ALEN] = { 2, 0, 0, 0, 0, 0x99 };
	unsigned int len = udp_frame(f, 160, dst);

	if (urgent) {
		unsigned char *ip = f + 14, *th = ip + 20;

		ip[9] = IPPROTO_TCP;
		ip_csum_set(ip);
		memset(th, 0, 20);
		th[0] = 0x9c, th[1] = 0x40;
		th[2] = 0x14, th[3] = 0x51;
		th[4] = n >> 24, th[5] = n >> 16, th[6] = n >> 8, th[7] = n;
		th[12] = 5 << 4;
		th[13] = 0x10; /* ACK, PSH clear */
		th[14] = 0xff, th[15] = 0xff;
	}
	return len;
}

/*
 * Two guests.  "armed": bursts of 4 frames, each burst's completions
 * reaped and callbacks re-armed (used_event = last used) before the next,
 * so EVENT_IDX never saves a signal and the count is vnetd's decision
 * alone (a request/response guest).  "stream": Linux virtio_net's TX
 * (start_xmit: reap old buffers with callbacks off, then
 * virtqueue_enable_cb_delayed() at the end of an xmit_more batch of 16;
 * a full ring waits for the interrupt), and NAPI RX (poll up to 64 frames
 * on a signal, then virtqueue_enable_cb()) while the host sends as fast as
 * the guest keeps up.
 */
#define BURST 4

static double tx_armed(struct vufe *fe, unsigned int frames, bool urgent)
{
	static unsigned char f[256];
	struct vufe_vq_stats s0, s1;
	unsigned int sent = 0, i;

	vufe_vq_stats(fe, VUFE_TXQ(0), &s0);
	while (sent < frames) {
		for (i = 0; i < BURST; i++, sent++) {
			unsigned int len = guest_frame(f, urgent, sent);

			if (vufe_send(fe, 0, NULL, f, len, VUFE_TX_NO_KICK))
				die("vufe_send: %s", vufe_strerror(fe));
		}
		vufe_kick(fe, VUFE_TXQ(0));
		if (vufe_wait(fe, tx_used, NULL, 5000))
			die("TX not used: %s", vufe_strerror(fe));
		vufe_enable_cb(fe, VUFE_TXQ(0));
	}
	nap(0.2); /* a coalescing timer still due */
	vufe_vq_stats(fe, VUFE_TXQ(0), &s1);
	return (s1.signals - s0.signals) * 1000.0 / frames;
}

static double tx_stream(struct vufe *fe, unsigned int frames, bool urgent)
{
	static unsigned char f[256];
	struct vufe_vq_stats s0, s1, st;
	unsigned int sent = 0, i;

	vufe_vq_stats(fe, VUFE_TXQ(0), &s0);
	while (sent < frames) {
		bool full = false;

		for (i = 0; i < 16 && sent < frames; i++) {
			unsigned int len = guest_frame(f, urgent, sent);
			int err;

			vufe_disable_cb(fe, VUFE_TXQ(0));
			vufe_tx_reap(fe, 0);
			err = vufe_send(fe, 0, NULL, f, len, VUFE_TX_NO_KICK);
			if (err == -ENOSPC) {
				full = true;
				break;
			}
			if (err)
				die("vufe_send: %s", vufe_strerror(fe));
			sent++;
		}
		vufe_kick(fe, VUFE_TXQ(0));
		while (!vufe_enable_cb_delayed(fe, VUFE_TXQ(0))) {
			vufe_disable_cb(fe, VUFE_TXQ(0));
			vufe_tx_reap(fe, 0);
		}
		if (full) {
			/* queue stopped: the TX interrupt wakes it */
			vufe_vq_stats(fe, VUFE_TXQ(0), &st);
			vufe_wait_signals(fe, VUFE_TXQ(0), st.signals + 1, 100);
		}
	}
	if (vufe_wait(fe, tx_used, NULL, 5000))
		die("TX not used: %s", vufe_strerror(fe));
	nap(0.2);
	vufe_vq_stats(fe, VUFE_TXQ(0), &s1);
	vufe_enable_cb(fe, VUFE_TXQ(0));
	return (s1.signals - s0.signals) * 1000.0 / frames;
}

static unsigned int rx_frame(unsigned char *f)
{
	static const unsigned char dst[ETH_ALEN] = { 2, 0, 0, 0, 0, 2 };

	return udp_frame(f, 160, dst);
}

/* receive what is there (NAPI poll); returns the frames of ours */
static unsigned int rx_poll(struct vufe *fe, const unsigned char *f,
			    unsigned int len, unsigned int budget)
{
	static unsigned char got[65536];
	unsigned int n = 0, k;

	for (k = 0; k < budget; k++) {
		ssize_t r = vufe_recv(fe, 0, got, sizeof(got), NULL, NULL);

		if (r == -EAGAIN)
			break;
		if (r < 0)
			die("RX: %s", vufe_strerror(fe));
		if ((size_t)r == len && !memcmp(got, f, 12))
			n++;
	}
	return n;
}

static double rx_armed(struct vufe *fe, int pfd, unsigned int frames)
{
	static unsigned char f[256];
	struct vufe_vq_stats s0, s1;
	unsigned int done = 0, i, len = rx_frame(f);

	vufe_vq_stats(fe, VUFE_RXQ(0), &s0);
	while (done < frames) {
		double end = now_s() + 5;

		for (i = 0; i < BURST; i++)
			if (send(pfd, f, len, 0) < 0)
				die("send: %s", strerror(errno));
		for (i = 0; i < BURST;) {
			i += rx_poll(fe, f, len, 64);
			vufe_enable_cb(fe, VUFE_RXQ(0));
			if (i < BURST && now_s() > end)
				die("RX: frames lost");
		}
		done += BURST;
	}
	nap(0.2);
	vufe_vq_stats(fe, VUFE_RXQ(0), &s1);
	return (s1.signals - s0.signals) * 1000.0 / done;
}

static double rx_stream(struct vufe *fe, int pfd, unsigned int frames)
{
	static unsigned char f[256];
	struct vufe_vq_stats s0, s1, st;
	unsigned int sent = 0, got = 0, i, len = rx_frame(f);
	double end = now_s() + 30;

	vufe_vq_stats(fe, VUFE_RXQ(0), &s0);
	vufe_enable_cb(fe, VUFE_RXQ(0));
	while (got < frames) {
		/* the host keeps up to 128 frames in flight */
		for (i = 0; i < 32 && sent < frames && sent - got < 128;
		     i++, sent++)
			if (send(pfd, f, len, 0) < 0)
				die("send: %s", strerror(errno));
		/* the interrupt, or 1 ms (the host's next chunk) */
		vufe_vq_stats(fe, VUFE_RXQ(0), &st);
		vufe_wait_signals(fe, VUFE_RXQ(0), st.signals + 1, 1);
		do
			got += rx_poll(fe, f, len, 64);
		while (!vufe_enable_cb(fe, VUFE_RXQ(0)));
		if (now_s() > end)
			die("RX: %u of %u frames arrived", got, frames);
	}
	nap(0.2);
	vufe_vq_stats(fe, VUFE_RXQ(0), &s1);
	return (s1.signals - s0.signals) * 1000.0 / got;
}

int do_signals(const struct opts *o)
{
	/* on: vnet's defaults (what attach and vnetd write) */
	static const struct {
		const char *name;
		__u32 tx_frames, tx_usecs, rx_frames, rx_usecs;
	} modes[] = {
		{ "off", 0, 0, 0, 0 },
		{ "on", VNET_DEFAULT_TX_FRAMES, VNET_DEFAULT_TX_USECS,
		  VNET_DEFAULT_RX_FRAMES, VNET_DEFAULT_RX_USECS },
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	struct vufe_opts vo = VUFE_OPTS_DEFAULT;
	struct vufe *fe;
	unsigned int m;
	int pfd, err;

	vo.path = o->sock;
	vo.auto_rearm = false;
	err = vufe_create(&vo, &fe);
	if (err)
		die("vufe_create: %s", vufe_strerror(NULL));
	if (vufe_connect(fe) || vufe_setup(fe))
		die("vhost-user: %s", vufe_strerror(fe));
	vufe_post_rx(fe, 0, 0);
	enter_netns(o->netns);
	sll.sll_ifindex = if_nametoindex(o->dev);
	pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (!sll.sll_ifindex || pfd < 0 ||
	    bind(pfd, (struct sockaddr *)&sll, sizeof(sll)))
		die("AF_PACKET on %s: %s", o->dev, strerror(errno));
	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		double ab, au, rb, sb, su, sr;

		err = set_coal(o->dev, modes[m].tx_frames, modes[m].tx_usecs,
			       modes[m].rx_frames, modes[m].rx_usecs);
		if (err)
			die("config map of %s: %s", o->dev, strerror(-err));
		ab = tx_armed(fe, o->frames, false);
		au = tx_armed(fe, o->frames, true);
		rb = rx_armed(fe, pfd, o->frames);
		sb = tx_stream(fe, o->frames, false);
		su = tx_stream(fe, o->frames, true);
		sr = rx_stream(fe, pfd, o->frames);
		printf("coalescing %s", modes[m].name);
		if (modes[m].tx_frames)
			printf(" (tx-frames %u tx-usecs %u rx-frames %u rx-usecs %u)",
			       modes[m].tx_frames, modes[m].tx_usecs,
			       modes[m].rx_frames, modes[m].rx_usecs);
		printf(":\n"
		       "  armed guest:  tx bulk %.1f  tx urgent %.1f  rx %.1f\n"
		       "  stream guest: tx bulk %.1f  tx urgent %.1f  rx %.1f\n",
		       ab, au, rb, sb, su, sr);
	}
	set_coal(o->dev, 0, 0, 0, 0);
	vufe_destroy(fe);
	return 0;
}
