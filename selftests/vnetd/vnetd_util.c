// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* test_vnetd_*: shell commands, namespaces, AF_PACKET on the tap, frames */
#include "vnetd_test.h"

const __u8 guest_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x02 };
const __u8 nobody_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x99 };
const __u8 host_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x01 };

bool verbose;
char vnetd_bin[PATH_MAX];
int host_ns = -1;

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void nap_ms(int ms)
{
	poll(NULL, 0, ms);
}

/* ------------------------------------------------------------------ */
/* shell commands, namespaces                                          */
/* ------------------------------------------------------------------ */

int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	dbg("$ %s\n", cmd);
	rc = system(cmd);
	return rc == -1 ? -errno : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

int ns_enter(const char *ns)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		err = -errno;
	close(fd);
	return err;
}

void ns_leave(void)
{
	if (setns(host_ns, CLONE_NEWNET)) {
		fprintf(stderr, "test_vnetd: cannot return to the host netns: %s\n",
			strerror(errno));
		exit(1);
	}
}

int ns_socket(const char *ns, int domain, int type, int proto)
{
	int fd, err;

	err = ns_enter(ns);
	if (err)
		return err;
	fd = socket(domain, type | SOCK_CLOEXEC, proto);
	if (fd < 0)
		fd = -errno;
	ns_leave();
	return fd;
}

int ns_link(const char *ns, const char *dev, bool *up)
{
	struct ifreq ifr = { 0 };
	int fd, idx;

	fd = ns_socket(ns, AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return fd;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	idx = ioctl(fd, SIOCGIFINDEX, &ifr) ? 0 : ifr.ifr_ifindex;
	if (idx && up)
		*up = !ioctl(fd, SIOCGIFFLAGS, &ifr) &&
		      (ifr.ifr_flags & IFF_UP);
	close(fd);
	return idx;
}

int ns_link_stats(const char *ns, const char *dev,
		  struct link_stats *ls)
{
	struct ifaddrs *ifa, *i;
	int err;

	err = ns_enter(ns);
	if (err)
		return err;
	err = getifaddrs(&ifa) ? -errno : -ENODEV;
	ns_leave();
	if (err == -ENODEV) {
		for (i = ifa; i; i = i->ifa_next) {
			const struct rtnl_link_stats *s = i->ifa_data;

			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET ||
			    strcmp(i->ifa_name, dev) || !s)
				continue;
			ls->rx_packets = s->rx_packets;
			ls->tx_packets = s->tx_packets;
			ls->rx_dropped = s->rx_dropped;
			ls->tx_dropped = s->tx_dropped;
			err = 0;
			break;
		}
		freeifaddrs(ifa);
	}
	return err;
}

void ns_sysctl(const char *ns, const char *path, const char *val)
{
	int fd;

	if (ns_enter(ns))
		return;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, val, strlen(val)) < 0)
			dbg("%s: %s\n", path, strerror(errno));
		close(fd);
	}
	ns_leave();
}

/* ------------------------------------------------------------------ */
/* AF_PACKET on the tap, with a virtio_net_hdr in front of every frame */
/* ------------------------------------------------------------------ */

int pkt_open(const char *ns, const char *dev)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	int fd, one = 1, buf = 16 << 20;

	sll.sll_ifindex = ns_link(ns, dev, NULL);
	if (sll.sll_ifindex <= 0)
		return -ENODEV;
	fd = ns_socket(ns, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		return fd;
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		int err = -errno;

		close(fd);
		return err;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf));
	return fd;
}

int pkt_send(int fd, const struct virtio_net_hdr *vh, const void *f,
	     size_t len)
{
	static const struct virtio_net_hdr zero;
	struct iovec iov[2] = {
		{ (void *)(vh ? vh : &zero), sizeof(*vh) },
		{ (void *)f, len },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;

	n = sendmsg(fd, &mh, 0);
	if (n < 0)
		return -errno;
	return n == (ssize_t)(sizeof(*vh) + len) ? 0 : -EIO;
}

ssize_t pkt_recv(int fd, struct virtio_net_hdr *vh, void *buf,
		 size_t cap, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct virtio_net_hdr h;
	struct sockaddr_ll sll;

	for (;;) {
		struct iovec iov[2] = { { &h, sizeof(h) }, { buf, cap } };
		struct msghdr mh = { .msg_name = &sll,
				     .msg_namelen = sizeof(sll),
				     .msg_iov = iov, .msg_iovlen = 2 };
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;

		if (left < 0)
			left = 0;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n >= (ssize_t)sizeof(h) &&
		    sll.sll_pkttype != PACKET_OUTGOING) {
			if (vh)
				*vh = h;
			n -= sizeof(h);
			return n > (ssize_t)cap ? -EMSGSIZE : n;
		}
		if (n < 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
	}
}

/* ------------------------------------------------------------------ */
/* frames                                                              */
/* ------------------------------------------------------------------ */

__u8 pat(__u32 id, size_t i)
{
	return (__u8)(id * 131 + i * 7 + (i >> 8));
}

void test_frame(__u8 *f, size_t len, const __u8 *dst, const __u8 *src,
		__u32 id)
{
	size_t i;

	memcpy(f, dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, src, ETH_ALEN);
	frame_put16(f, 12, ETH_P_VNET_TEST);
	memcpy(f + 14, "VNTD", 4);
	frame_put32(f, 18, id);
	frame_put32(f, 22, (__u32)len);
	for (i = 26; i < len; i++)
		f[i] = pat(id, i);
}

long long test_frame_id(const __u8 *f, size_t len)
{
	if (len < 26 || frame_get16(f, 12) != ETH_P_VNET_TEST ||
	    memcmp(f + 14, "VNTD", 4))
		return -1;
	return frame_get32(f, 18);
}

__u8 tpat(__u32 seed, size_t off)
{
	return (__u8)(seed + off * 7 + (off >> 9));
}

size_t ip_frame(__u8 *f, const struct l4 *p)
{
	size_t l4len = (p->proto == IPPROTO_TCP ? TCP_HLEN : UDP_HLEN) +
		       p->plen;
	__u8 *ip = f + ETH_HLEN_, *l4 = ip + IP_HLEN, *pl;
	__u32 sum;
	size_t i;

	memcpy(f, p->dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, p->src, ETH_ALEN);
	frame_put16(f, 12, ETH_P_IP);
	memset(ip, 0, IP_HLEN);
	ip[0] = 0x45;
	frame_put16(ip, 2, (__u16)(IP_HLEN + l4len));
	frame_put16(ip, 4, 0x1234);
	frame_put16(ip, 6, 0x4000);
	ip[8] = 64;
	ip[9] = p->proto;
	frame_put32(ip, 12, p->saddr);
	frame_put32(ip, 16, p->daddr);
	frame_put16(ip, 10, (__u16)~frame_csum_fold(frame_csum_add(0, ip, IP_HLEN)));

	memset(l4, 0, p->proto == IPPROTO_TCP ? TCP_HLEN : UDP_HLEN);
	frame_put16(l4, 0, p->sport);
	frame_put16(l4, 2, p->dport);
	if (p->proto == IPPROTO_TCP) {
		frame_put32(l4, 4, p->seq);
		frame_put32(l4, 8, 1);
		l4[12] = (TCP_HLEN / 4) << 4;
		l4[13] = p->tcp_flags;
		frame_put16(l4, 14, 65535);
		pl = l4 + TCP_HLEN;
	} else {
		frame_put16(l4, 4, (__u16)l4len);
		pl = l4 + UDP_HLEN;
	}
	for (i = 0; i < p->plen; i++)
		pl[i] = tpat(p->seed, p->off + i);
	if (p->proto == IPPROTO_TCP) {
		sum = frame_csum_add(0, ip + 12, 8) + IPPROTO_TCP + (__u32)l4len;
		if (p->partial)
			frame_put16(l4, 16, frame_csum_fold(sum));
		else
			frame_put16(l4, 16,
			      (__u16)~frame_csum_fold(frame_csum_add(sum, l4, l4len)));
	}
	return ETH_HLEN_ + IP_HLEN + l4len;
}

bool tcp_csum_ok(const __u8 *f, size_t len)
{
	const __u8 *ip = f + ETH_HLEN_;
	size_t l4len = frame_get16(ip, 2) - IP_HLEN;
	__u32 sum;

	if (ETH_HLEN_ + IP_HLEN + l4len > len)
		return false;
	sum = frame_csum_add(0, ip + 12, 8) + IPPROTO_TCP + (__u32)l4len;
	return frame_csum_fold(frame_csum_add(sum, ip + IP_HLEN, l4len)) == 0xffff;
}

size_t udp_frame(__u8 *f, const __u8 *dst, const __u8 *src,
		 __u16 sport, __u32 n)
{
	struct l4 p = { .dst = dst, .src = src, .saddr = GUEST_IP,
			.daddr = HOST_IP, .sport = sport, .dport = 9,
			.proto = IPPROTO_UDP, .plen = 100, .seed = n };

	return ip_frame(f, &p);
}

size_t tcp_frame(__u8 *f, const __u8 *dst, const __u8 *src,
		 __u32 n, bool psh)
{
	struct l4 p = { .dst = dst, .src = src, .saddr = GUEST_IP,
			.daddr = HOST_IP, .sport = 40000, .dport = 5201,
			.proto = IPPROTO_TCP,
			.tcp_flags = TH_ACK | (psh ? TH_PSH : 0),
			.seq = 1000 + n * 100, .plen = 100, .seed = 7,
			.off = (size_t)n * 100 };

	return ip_frame(f, &p);
}

size_t gso_frame(__u8 *f, struct virtio_net_hdr *vh, const __u8 *dst,
		 const __u8 *src, __u32 saddr, __u32 daddr, __u16 sport,
		 __u32 isn)
{
	struct l4 p = { .dst = dst, .src = src, .saddr = saddr,
			.daddr = daddr, .sport = sport, .dport = 5201,
			.proto = IPPROTO_TCP, .tcp_flags = TH_ACK,
			.seq = isn, .plen = GSO_PLEN, .seed = sport,
			.partial = true };

	memset(vh, 0, sizeof(*vh));
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh->hdr_len = ETH_HLEN_ + IP_HLEN + TCP_HLEN;
	vh->gso_size = GSO_MSS;
	vh->csum_start = L4_OFF;
	vh->csum_offset = 16;
	return ip_frame(f, &p);
}

void gso_flow_init(struct gso_flow *g, __u16 sport, __u32 isn)
{
	memset(g, 0, sizeof(*g));
	g->sport = sport;
	g->isn = isn;
}

int gso_feed(struct gso_flow *g, const struct virtio_net_hdr *vh,
	     const __u8 *f, size_t len)
{
	const __u8 *ip = f + ETH_HLEN_, *th = ip + IP_HLEN, *pl;
	size_t tot, plen, off, i;

	if (len < L4_OFF + TCP_HLEN || frame_get16(f, 12) != ETH_P_IP ||
	    ip[0] != 0x45 || ip[9] != IPPROTO_TCP || frame_get16(th, 0) != g->sport)
		return 0;
	g->frames++;
	tot = frame_get16(ip, 2);
	if (tot < IP_HLEN + TCP_HLEN || ETH_HLEN_ + tot > len) {
		snprintf(g->err, sizeof(g->err),
			 "flow %u: frame of %zu bytes, IP length %zu", g->sport,
			 len, tot);
		return -1;
	}
	plen = tot - IP_HLEN - TCP_HLEN;
	off = frame_get32(th, 4) - g->isn;
	pl = th + TCP_HLEN;
	if (off + plen > GSO_PLEN) {
		snprintf(g->err, sizeof(g->err),
			 "flow %u: payload [%zu, %zu) past %u", g->sport, off,
			 off + plen, GSO_PLEN);
		return -1;
	}
	for (i = 0; i < plen; i++) {
		if (pl[i] != tpat(g->sport, off + i)) {
			snprintf(g->err, sizeof(g->err),
				 "flow %u: payload byte %zu is 0x%02x, expected 0x%02x",
				 g->sport, off + i, pl[i],
				 tpat(g->sport, off + i));
			return -1;
		}
		if (!g->seen[off + i]) {
			g->seen[off + i] = 1;
			g->covered++;
		}
	}
	if (vh && vh->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
		g->gso_frames++;
		if ((vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) !=
			    VIRTIO_NET_HDR_GSO_TCPV4 ||
		    vh->gso_size != GSO_MSS) {
			snprintf(g->err, sizeof(g->err),
				 "flow %u: GSO header type %u size %u, expected TCPV4 %u",
				 g->sport, vh->gso_type, vh->gso_size, GSO_MSS);
			return -1;
		}
	}
	if ((!vh || !(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)) &&
	    !tcp_csum_ok(f, len))
		g->bad_csum++;
	return 1;
}

/* the frame sizes and TX layouts the TX and RX cases walk through */
const unsigned int sizes[19] = {
	60, 61, 64, 100, 127, 128, 255, 256, 511, 512, 777,
	1000, 1023, 1024, 1400, 1499, 1500, 1513, 1514,
};

const unsigned int layouts[7] = {
	0,
	VUFE_TX_HDR_INLINE,
	VUFE_TX_SEGS(3),
	VUFE_TX_INDIRECT,
	VUFE_TX_INDIRECT | VUFE_TX_SEGS(4),
	VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(2),
	VUFE_TX_SEGS(16),
};

void dps_dbg(const char *what, const struct vnet_dp_stats *d,
	     const struct vnet_dp_stats *d0)
{
#define DPS_DELTA(f) ((unsigned long long)(d->f - d0->f))
	dbg("%s: frames %llu batches %llu; signals sent %llu suppressed %llu deferred %llu, urgent %llu, on frames %llu, timer %llu, paired %llu, latency %llu, quiet %llu; holds %llu held %llu\n",
	    what, DPS_DELTA(frames), DPS_DELTA(batches), DPS_DELTA(notify_sent),
	    DPS_DELTA(notify_suppressed), DPS_DELTA(notify_deferred),
	    DPS_DELTA(notify_urgent), DPS_DELTA(notify_frames),
	    DPS_DELTA(notify_timer), DPS_DELTA(notify_paired),
	    DPS_DELTA(notify_latency), DPS_DELTA(notify_quiet),
	    DPS_DELTA(holds), DPS_DELTA(held));
#undef DPS_DELTA
}
