// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Datapath tests of vnetd, the vhost-user-net backend (docs/vnetd-contract.md),
 * driven by vufe, the test frontend (docs/frontend.md).
 *
 * Every case runs in a fresh network namespace vnet-v-<case>-<pid> with its
 * own vnetd (build/vnetd-asan, ASan/UBSan) started as a child process:
 *
 *	vnetd-asan --socket /tmp/vnet-vnetd-<pid>-<case>.sock --tap vvXXXXXX
 *		   --netns vnet-v-<case>-<pid> [--queues 2]
 *
 * (two ports: --config FILE).  vnetd is waited for with a bounded poll on
 * its socket, stopped with SIGTERM (then SIGKILL) and reaped at the end of
 * the case; its stderr goes to a file that is scanned for sanitizer reports
 * (any is a FAIL), its exit status must be 0 and its pins must be gone.
 *
 * The tap side is reached from inside the namespace with AF_PACKET sockets
 * (PACKET_VNET_HDR: GSO frames both ways), the guest side with vufe.
 * Interrupts are counted as call-eventfd signals, never by timing; every
 * wait is a bounded poll.
 *
 *	test_vnetd [-v] [FILTER]	the cases whose name contains FILTER
 *
 * Environment: VNETD (the daemon, default <build>/vnetd-asan), VNET_TESTPMD
 * (default dpdk-testpmd), VNETD_KEEP_LOGS=1 keeps every log.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/virtio_config.h>
#include <linux/vhost_types.h>
#include <linux/virtio_net.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <vnet/abi.h>

#include "test.h"
#include "frontend/vufe.h"
#include "testpmd.h"

#define PIN_ROOT	"/sys/fs/bpf/vnet"
#define ETH_P_VNET_TEST	0x88b5	/* IEEE 802 local experimental ethertype */
#define ETH_HLEN_	14
#define IP_HLEN		20
#define TCP_HLEN	20
#define UDP_HLEN	8
#define L4_OFF		(ETH_HLEN_ + IP_HLEN)
#define GSO_MSS		1448
#define GSO_SEGS	45	/* 45 * 1448 = 65160 bytes of payload */
#define GSO_PLEN	(GSO_MSS * GSO_SEGS)
#define FRAME_MAX	(70 * 1024)
#define WAIT_MS		3000	/* a frame, a reply, a log line */
#define START_MS	20000	/* vnetd (ASan, BPF verifier) up */
#define STOP_MS		15000	/* vnetd down (LeakSanitizer at exit) */

static const __u8 guest_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x02 };
/* a MAC nobody has: frames to it are PACKET_OTHERHOST on the tap */
static const __u8 nobody_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x99 };
static const __u8 host_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x01 };
#define GUEST_IP	0xc0000202u	/* 192.0.2.2 */
#define HOST_IP		0xc0000201u	/* 192.0.2.1 */

static const char *filter;
static bool verbose;
static char vnetd_bin[PATH_MAX];
static int host_ns = -1;

#define dbg(...)                                       \
	do {                                           \
		if (verbose)                           \
			fprintf(stderr, "  # " __VA_ARGS__); \
	} while (0)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void nap_ms(int ms)
{
	poll(NULL, 0, ms);
}

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(__u8 *p, __u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static __u32 get32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

/* ------------------------------------------------------------------ */
/* shell commands, namespaces                                          */
/* ------------------------------------------------------------------ */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
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

static int ns_enter(const char *ns)
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

static void ns_leave(void)
{
	if (setns(host_ns, CLONE_NEWNET)) {
		fprintf(stderr, "test_vnetd: cannot return to the host netns: %s\n",
			strerror(errno));
		exit(1);
	}
}

/* a socket that lives in NS */
static int ns_socket(const char *ns, int domain, int type, int proto)
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

/* ifindex of DEV in NS (0 if absent), and whether it is up */
static int ns_link(const char *ns, const char *dev, bool *up)
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

struct link_stats {
	__u64 rx_packets, tx_packets, rx_dropped, tx_dropped;
};

static int ns_link_stats(const char *ns, const char *dev,
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

static void ns_sysctl(const char *ns, const char *path, const char *val)
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

static int pkt_open(const char *ns, const char *dev)
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

static int pkt_send(int fd, const struct virtio_net_hdr *vh, const void *f,
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

/*
 * One frame that came into the tap (not one the host sent out of it), or
 * -ETIMEDOUT once timeout_ms passed.
 */
static ssize_t pkt_recv(int fd, struct virtio_net_hdr *vh, void *buf,
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

static __u8 pat(__u32 id, size_t i)
{
	return (__u8)(id * 131 + i * 7 + (i >> 8));
}

/*
 * A test frame: dst, src, ethertype 0x88b5, "VNTD", id, length, and a
 * pattern that differs by id and position.
 */
static void test_frame(__u8 *f, size_t len, const __u8 *dst, const __u8 *src,
		       __u32 id)
{
	size_t i;

	memcpy(f, dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, src, ETH_ALEN);
	put16(f + 12, ETH_P_VNET_TEST);
	memcpy(f + 14, "VNTD", 4);
	put32(f + 18, id);
	put32(f + 22, (__u32)len);
	for (i = 26; i < len; i++)
		f[i] = pat(id, i);
}

/* the id of a test frame, or -1 */
static long long test_frame_id(const __u8 *f, size_t len)
{
	if (len < 26 || get16(f + 12) != ETH_P_VNET_TEST ||
	    memcmp(f + 14, "VNTD", 4))
		return -1;
	return get32(f + 18);
}

static __u32 csum_add(__u32 sum, const void *data, size_t len)
{
	const __u8 *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	return sum;
}

static __u16 csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

static __u8 tpat(__u32 seed, size_t off)
{
	return (__u8)(seed + off * 7 + (off >> 9));
}

struct l4 {
	const __u8 *dst, *src;
	__u32 saddr, daddr;
	__u16 sport, dport;
	__u8 proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	__u8 tcp_flags;
	__u32 seq;
	size_t plen;		/* payload bytes */
	__u32 seed;		/* payload byte at stream offset o: tpat() */
	size_t off;		/* stream offset of the first payload byte */
	bool partial;		/* TCP checksum = pseudo header (NEEDS_CSUM) */
};

#define TH_FIN	0x01
#define TH_PSH	0x08
#define TH_ACK	0x10

/* Ethernet/IPv4/TCP or UDP; returns the frame length */
static size_t ip_frame(__u8 *f, const struct l4 *p)
{
	size_t l4len = (p->proto == IPPROTO_TCP ? TCP_HLEN : UDP_HLEN) +
		       p->plen;
	__u8 *ip = f + ETH_HLEN_, *l4 = ip + IP_HLEN, *pl;
	__u32 sum;
	size_t i;

	memcpy(f, p->dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, p->src, ETH_ALEN);
	put16(f + 12, ETH_P_IP);
	memset(ip, 0, IP_HLEN);
	ip[0] = 0x45;
	put16(ip + 2, (__u16)(IP_HLEN + l4len));
	put16(ip + 4, 0x1234);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = p->proto;
	put32(ip + 12, p->saddr);
	put32(ip + 16, p->daddr);
	put16(ip + 10, (__u16)~csum_fold(csum_add(0, ip, IP_HLEN)));

	memset(l4, 0, p->proto == IPPROTO_TCP ? TCP_HLEN : UDP_HLEN);
	put16(l4, p->sport);
	put16(l4 + 2, p->dport);
	if (p->proto == IPPROTO_TCP) {
		put32(l4 + 4, p->seq);
		put32(l4 + 8, 1);
		l4[12] = (TCP_HLEN / 4) << 4;
		l4[13] = p->tcp_flags;
		put16(l4 + 14, 65535);
		pl = l4 + TCP_HLEN;
	} else {
		put16(l4 + 4, (__u16)l4len);
		pl = l4 + UDP_HLEN;
	}
	for (i = 0; i < p->plen; i++)
		pl[i] = tpat(p->seed, p->off + i);
	if (p->proto == IPPROTO_TCP) {
		sum = csum_add(0, ip + 12, 8) + IPPROTO_TCP + (__u32)l4len;
		if (p->partial)
			put16(l4 + 16, csum_fold(sum));
		else
			put16(l4 + 16,
			      (__u16)~csum_fold(csum_add(sum, l4, l4len)));
	}
	return ETH_HLEN_ + IP_HLEN + l4len;
}

/* TCP checksum of a frame is right */
static bool tcp_csum_ok(const __u8 *f, size_t len)
{
	const __u8 *ip = f + ETH_HLEN_;
	size_t l4len = get16(ip + 2) - IP_HLEN;
	__u32 sum;

	if (ETH_HLEN_ + IP_HLEN + l4len > len)
		return false;
	sum = csum_add(0, ip + 12, 8) + IPPROTO_TCP + (__u32)l4len;
	return csum_fold(csum_add(sum, ip + IP_HLEN, l4len)) == 0xffff;
}

/* a bulk (class OTHER) frame: UDP, 100 bytes of payload */
static size_t udp_frame(__u8 *f, const __u8 *dst, const __u8 *src,
			__u16 sport, __u32 n)
{
	struct l4 p = { .dst = dst, .src = src, .saddr = GUEST_IP,
			.daddr = HOST_IP, .sport = sport, .dport = 9,
			.proto = IPPROTO_UDP, .plen = 100, .seed = n };

	return ip_frame(f, &p);
}

/* a TCP frame with 100 bytes of payload: URGENT without PSH, else PUSH */
static size_t tcp_frame(__u8 *f, const __u8 *dst, const __u8 *src,
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

/*
 * A 64 KB TCP segment for GSO (GSO_TCPV4, NEEDS_CSUM, MSS 1448) of flow
 * sport; the virtio_net_hdr goes to *vh.
 */
static size_t gso_frame(__u8 *f, struct virtio_net_hdr *vh, const __u8 *dst,
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

/*
 * Payload continuity of one GSO flow however it arrives: as one frame or
 * in segments, each segment's payload checked at its sequence offset.
 */
struct gso_flow {
	__u16 sport;
	__u32 isn;
	size_t covered;		/* payload bytes seen (once each) */
	__u8 seen[GSO_PLEN];
	unsigned int frames;
	unsigned int gso_frames; /* arrived whole, with a GSO header */
	unsigned int bad_csum;	/* complete checksum that is wrong */
	char err[160];
};

static void gso_flow_init(struct gso_flow *g, __u16 sport, __u32 isn)
{
	memset(g, 0, sizeof(*g));
	g->sport = sport;
	g->isn = isn;
}

/* 1 if the frame belongs to the flow, 0 if not, -1 if it is wrong */
static int gso_feed(struct gso_flow *g, const struct virtio_net_hdr *vh,
		    const __u8 *f, size_t len)
{
	const __u8 *ip = f + ETH_HLEN_, *th = ip + IP_HLEN, *pl;
	size_t tot, plen, off, i;

	if (len < L4_OFF + TCP_HLEN || get16(f + 12) != ETH_P_IP ||
	    ip[0] != 0x45 || ip[9] != IPPROTO_TCP || get16(th) != g->sport)
		return 0;
	g->frames++;
	tot = get16(ip + 2);
	if (tot < IP_HLEN + TCP_HLEN || ETH_HLEN_ + tot > len) {
		snprintf(g->err, sizeof(g->err),
			 "flow %u: frame of %zu bytes, IP length %zu", g->sport,
			 len, tot);
		return -1;
	}
	plen = tot - IP_HLEN - TCP_HLEN;
	off = get32(th + 4) - g->isn;
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

/* ------------------------------------------------------------------ */
/* vnetd: one process, its namespace, its ports                        */
/* ------------------------------------------------------------------ */

struct port {
	char sock[108];
	char tap[IFNAMSIZ];
	char ns[64];		/* "": the vnetd's namespace (vd.ns) */
	unsigned int queues;
	int cfg_fd, dps_fd, qs_fd;	/* pinned maps, -1 until opened */
};

struct vd {
	const char *name;
	char ns[64];
	char log[128];
	char conf[128];
	pid_t pid;
	int status;		/* wait status of the last exit */
	bool ns_made;
	bool use_config;	/* --config FILE (two ports) */
	bool check_pins;	/* pins must be gone after a clean exit */
	bool client;		/* --client: the frontend listens */
	bool own_tap;		/* the test makes a persistent tap first */
	const char *extra;	/* one more option, e.g. --no-uring */
	unsigned int nports;
	struct port port[2];
	off_t mark;		/* log offset of vd_log_mark() */
};

/* netns names made, for the signal handler */
static char made_ns[32][64];
static unsigned int nr_made_ns;

static void on_signal(int sig)
{
	unsigned int i;

	for (i = 0; i < nr_made_ns; i++) {
		pid_t p;

		if (!made_ns[i][0])
			continue;
		p = fork();
		if (!p) {
			char *argv[] = { "ip", "netns", "del", made_ns[i], NULL };

			execvp("ip", argv);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void vd_init(struct vd *vd, const char *name, unsigned int nports,
		    unsigned int queues)
{
	unsigned int i;

	memset(vd, 0, sizeof(*vd));
	vd->name = name;
	vd->pid = -1;
	vd->nports = nports;
	vd->use_config = nports > 1;
	vd->check_pins = true;
	snprintf(vd->ns, sizeof(vd->ns), "vnet-v-%s-%d", name, getpid());
	snprintf(vd->log, sizeof(vd->log), "/tmp/vnet-vnetd-%d-%s.log",
		 getpid(), name);
	snprintf(vd->conf, sizeof(vd->conf), "/tmp/vnet-vnetd-%d-%s.conf",
		 getpid(), name);
	for (i = 0; i < nports; i++) {
		struct port *p = &vd->port[i];
		static unsigned int seq;

		snprintf(p->sock, sizeof(p->sock),
			 "/tmp/vnet-vnetd-%d-%s-%u.sock", getpid(), name, i);
		snprintf(p->tap, sizeof(p->tap), "vv%06x%02x",
			 (unsigned int)getpid() & 0xffffff, seq++ & 0xff);
		p->queues = queues;
		p->cfg_fd = p->dps_fd = p->qs_fd = -1;
	}
}

static bool vd_running(struct vd *vd)
{
	pid_t r;

	if (vd->pid <= 0)
		return false;
	r = waitpid(vd->pid, &vd->status, WNOHANG);
	if (r == vd->pid) {
		vd->pid = -1;
		return false;
	}
	return true;
}

/* the last line of the log that is not empty, for a failure reason */
static const char *vd_log_tail(struct vd *vd)
{
	static char line[200];
	char buf[4096];
	ssize_t n;
	int fd;
	off_t sz;

	line[0] = '\0';
	fd = open(vd->log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return line;
	sz = lseek(fd, 0, SEEK_END);
	n = pread(fd, buf, sizeof(buf) - 1, sz > (off_t)sizeof(buf) - 1 ?
						    sz - (off_t)sizeof(buf) + 1 :
						    0);
	close(fd);
	if (n <= 0)
		return line;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	{
		char *nl = strrchr(buf, '\n');

		snprintf(line, sizeof(line), "%.199s", nl ? nl + 1 : buf);
	}
	return line;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void port_close_maps(struct port *p)
{
	close_fd(&p->cfg_fd);
	close_fd(&p->dps_fd);
	close_fd(&p->qs_fd);
}

static int pin_get(const struct port *p, const char *map)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), PIN_ROOT "/%s/%s", p->tap, map);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

static bool vd_start(struct vd *vd)
{
	struct stat old[2];
	long long deadline;
	unsigned int i;
	struct stat sb;
	char q[16];

	memset(old, 0, sizeof(old));
	for (i = 0; i < vd->nports; i++) {
		stat(vd->port[i].sock, &old[i]);
		port_close_maps(&vd->port[i]);
	}
	if (vd->use_config) {
		FILE *f = fopen(vd->conf, "w");

		if (!f) {
			test_fail("%s: %s", vd->conf, strerror(errno));
			return false;
		}
		fprintf(f, "# test_vnetd %s\n", vd->name);
		for (i = 0; i < vd->nports; i++)
			fprintf(f, "socket=%s tap=%s queues=%u netns=%s\n",
				vd->port[i].sock, vd->port[i].tap,
				vd->port[i].queues,
				vd->port[i].ns[0] ? vd->port[i].ns : vd->ns);
		fclose(f);
	}
	snprintf(q, sizeof(q), "%u", vd->port[0].queues);

	vd->pid = fork();
	if (vd->pid < 0) {
		test_fail("fork: %s", strerror(errno));
		return false;
	}
	if (!vd->pid) {
		char *argv[16];
		int n = 0, fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(vd->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			  0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		setenv("ASAN_OPTIONS",
		       "detect_leaks=1:abort_on_error=0:halt_on_error=1", 1);
		setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=0",
		       1);
		argv[n++] = vnetd_bin;
		if (vd->use_config) {
			argv[n++] = "--config";
			argv[n++] = vd->conf;
		} else {
			argv[n++] = "--socket";
			argv[n++] = vd->port[0].sock;
			argv[n++] = "--tap";
			argv[n++] = vd->port[0].tap;
			argv[n++] = "--netns";
			argv[n++] = vd->ns;
			if (vd->port[0].queues > 1) {
				argv[n++] = "--queues";
				argv[n++] = q;
			}
			if (vd->client)
				argv[n++] = "--client";
		}
		if (vd->extra)
			argv[n++] = (char *)vd->extra;
		argv[n] = NULL;
		execv(vnetd_bin, argv);
		fprintf(stderr, "exec %s: %s\n", vnetd_bin, strerror(errno));
		_exit(127);
	}

	/*
	 * ready: every socket exists, a new one and not a stale file (tmpfs
	 * reuses inode numbers: the change time tells them apart)
	 */
	deadline = now_ms() + START_MS;
	for (i = 0; i < vd->nports && !vd->client; i++) {
		for (;;) {
			if (!stat(vd->port[i].sock, &sb) &&
			    S_ISSOCK(sb.st_mode) &&
			    (sb.st_ino != old[i].st_ino ||
			     sb.st_ctim.tv_sec != old[i].st_ctim.tv_sec ||
			     sb.st_ctim.tv_nsec != old[i].st_ctim.tv_nsec))
				break;
			if (!vd_running(vd)) {
				test_fail("vnetd exited (status 0x%x) before its socket %s existed: %s",
					  vd->status, vd->port[i].sock,
					  vd_log_tail(vd));
				return false;
			}
			if (now_ms() > deadline) {
				test_fail("vnetd made no socket %s in %d ms: %s",
					  vd->port[i].sock, START_MS,
					  vd_log_tail(vd));
				return false;
			}
			nap_ms(10);
		}
	}
	/* the taps exist and are up, the pins are there */
	for (i = 0; i < vd->nports; i++) {
		struct port *p = &vd->port[i];
		const char *ns = p->ns[0] ? p->ns : vd->ns;
		char path[160];
		bool up = false;

		while (ns_link(ns, p->tap, &up) <= 0 || !up) {
			if (now_ms() > deadline) {
				test_fail("tap %s in %s is %s after vnetd is ready",
					  p->tap, ns,
					  ns_link(ns, p->tap, NULL) > 0 ?
						  "not up" : "missing");
				return false;
			}
			nap_ms(10);
		}
		for (;;) {
			p->cfg_fd = pin_get(p, "config");
			p->dps_fd = pin_get(p, "dp_stats");
			p->qs_fd = pin_get(p, "queues");
			if (p->cfg_fd >= 0 && p->dps_fd >= 0 && p->qs_fd >= 0)
				break;
			port_close_maps(p);
			if (now_ms() > deadline) {
				test_fail("no pinned config/dp_stats/queues under " PIN_ROOT "/%s",
					  p->tap);
				return false;
			}
			nap_ms(10);
		}
		/* no IPv6 chatter (RS, MLD) on the test links */
		snprintf(path, sizeof(path),
			 "/proc/sys/net/ipv6/conf/%s/disable_ipv6", p->tap);
		ns_sysctl(ns, path, "1");
	}
	return true;
}

/* 0 if the log has no sanitizer report, else 1 and the first line */
static int vd_sanitizer_report(struct vd *vd, char *line, size_t len)
{
	static const char *const pat_[] = {
		"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
		"runtime error:", "UndefinedBehaviorSanitizer",
		"AddressSanitizer:", "SUMMARY: ",
	};
	char buf[1024];
	unsigned int i;
	FILE *f;

	f = fopen(vd->log, "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		for (i = 0; i < sizeof(pat_) / sizeof(pat_[0]); i++) {
			if (strstr(buf, pat_[i])) {
				buf[strcspn(buf, "\n")] = '\0';
				snprintf(line, len, "%.*s", (int)len - 1, buf);
				fclose(f);
				return 1;
			}
		}
	}
	fclose(f);
	return 0;
}

/* SIGTERM, bounded wait, SIGKILL; true if it exited on its own */
static bool vd_kill(struct vd *vd, int sig)
{
	long long deadline = now_ms() + STOP_MS;

	if (vd->pid <= 0)
		return true;
	kill(vd->pid, sig);
	while (vd_running(vd)) {
		if (now_ms() > deadline) {
			kill(vd->pid, SIGKILL);
			waitpid(vd->pid, &vd->status, 0);
			vd->pid = -1;
			return false;
		}
		nap_ms(5);
	}
	return true;
}

static void rm_pins(const char *tap)
{
	char dir[256], path[512];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), PIN_ROOT "/%s", tap);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* SIGTERM and the contract's promises about a clean stop */
static void vd_stop(struct vd *vd)
{
	unsigned int i;
	struct stat sb;
	char line[300];

	if (vd->pid > 0) {
		if (!vd_kill(vd, SIGTERM))
			test_fail("vnetd did not exit within %d ms of SIGTERM",
				  STOP_MS);
		else if (!WIFEXITED(vd->status) || WEXITSTATUS(vd->status))
			test_fail("vnetd: exit status 0x%x after SIGTERM, expected 0: %s",
				  vd->status, vd_log_tail(vd));
	}
	for (i = 0; i < vd->nports; i++) {
		char dir[160];

		port_close_maps(&vd->port[i]);
		snprintf(dir, sizeof(dir), PIN_ROOT "/%s", vd->port[i].tap);
		if (vd->check_pins && !stat(dir, &sb))
			test_fail("vnetd left its pins behind: %s", dir);
	}
	if (vd_sanitizer_report(vd, line, sizeof(line)))
		test_fail("sanitizer report in %s: %s", vd->log, line);
}

static void vd_cleanup(struct vd *vd)
{
	unsigned int i;

	if (vd->pid > 0)
		vd_stop(vd);
	for (i = 0; i < vd->nports; i++) {
		port_close_maps(&vd->port[i]);
		rm_pins(vd->port[i].tap);
		unlink(vd->port[i].sock);
	}
	if (vd->ns_made) {
		sh("ip netns del %s >/dev/null 2>&1", vd->ns);
		for (i = 0; i < nr_made_ns; i++)
			if (!strcmp(made_ns[i], vd->ns))
				made_ns[i][0] = '\0';
		vd->ns_made = false;
	}
	unlink(vd->conf);
	if (test_state.failed || getenv("VNETD_KEEP_LOGS"))
		fprintf(stderr, "  # vnetd log kept: %s\n", vd->log);
	else
		unlink(vd->log);
}

static bool vd_up(struct vd *vd)
{
	unlink(vd->log);
	if (sh("ip netns add %s", vd->ns)) {
		test_fail("ip netns add %s failed", vd->ns);
		return false;
	}
	vd->ns_made = true;
	if (nr_made_ns < sizeof(made_ns) / sizeof(made_ns[0]))
		snprintf(made_ns[nr_made_ns++], sizeof(made_ns[0]), "%s",
			 vd->ns);
	sh("ip -n %s link set lo up", vd->ns);
	/* no IPv6 chatter (RS, MLD) on the taps vnetd creates */
	ns_sysctl(vd->ns, "/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	ns_sysctl(vd->ns, "/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	if (vd->own_tap &&
	    sh("ip -n %s tuntap add dev %s mode tap multi_queue vnet_hdr",
	       vd->ns, vd->port[0].tap)) {
		test_fail("ip tuntap add %s failed", vd->port[0].tap);
		return false;
	}
	return vd_start(vd);
}

/* log lines after the mark */
static void vd_log_mark(struct vd *vd)
{
	struct stat sb;

	vd->mark = stat(vd->log, &sb) ? 0 : sb.st_size;
}

/* the first complete line written since the mark, bounded wait */
static bool vd_log_wait_line(struct vd *vd, char *line, size_t len,
			     int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	char buf[2048];

	do {
		int fd = open(vd->log, O_RDONLY | O_CLOEXEC);
		ssize_t n = -1;

		if (fd >= 0) {
			n = pread(fd, buf, sizeof(buf) - 1, vd->mark);
			close(fd);
		}
		if (n > 0) {
			char *nl;

			buf[n] = '\0';
			nl = strchr(buf, '\n');
			if (nl) {
				*nl = '\0';
				snprintf(line, len, "%.*s", (int)len - 1,
					 buf);
				return true;
			}
		}
		nap_ms(5);
	} while (now_ms() < deadline);
	return false;
}

/* ---- maps ---- */

static bool dps_read(const struct port *p, __u32 dir, __u32 q,
		     struct vnet_dp_stats *st)
{
	__u32 key = vnet_key(dir, q);

	memset(st, 0, sizeof(*st));
	return p->dps_fd >= 0 && !bpf_map_lookup_elem(p->dps_fd, &key, st);
}

static bool qs_read(const struct port *p, __u32 dir, __u32 q,
		    struct vnet_queue_state *qs)
{
	__u32 key = vnet_key(dir, q);

	memset(qs, 0, sizeof(*qs));
	return p->qs_fd >= 0 && !bpf_map_lookup_elem(p->qs_fd, &key, qs);
}

struct coal {
	__u32 tx_frames, tx_usecs, rx_frames, rx_usecs;
	__u32 flags; /* VNET_CFG_NO_*_BYPASS */
};

/* the guest NIC's coalescing of queue pair q, live in the config map */
static bool cfg_set(const struct port *p, __u32 q, const struct coal *c)
{
	struct vnet_config cfg;

	if (p->cfg_fd < 0 || bpf_map_lookup_elem(p->cfg_fd, &q, &cfg))
		return ASSERT_OK(-1, "read config map");
	cfg.tx_frames = c->tx_frames;
	cfg.tx_usecs = c->tx_usecs;
	cfg.rx_frames = c->rx_frames;
	cfg.rx_usecs = c->rx_usecs;
	cfg.flags &= ~(VNET_CFG_ADAPTIVE_TX | VNET_CFG_ADAPTIVE_RX |
		       VNET_CFG_NO_TX_BYPASS | VNET_CFG_NO_RX_BYPASS);
	cfg.flags |= c->flags;
	cfg.gen++;
	return ASSERT_OK(bpf_map_update_elem(p->cfg_fd, &q, &cfg, BPF_ANY),
			 "write config map");
}

/* ------------------------------------------------------------------ */
/* the frontend                                                        */
/* ------------------------------------------------------------------ */

#define ALL_OFFLOADS                                                         \
	((1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) |   \
	 (1ULL << VIRTIO_NET_F_HOST_TSO4) | (1ULL << VIRTIO_NET_F_HOST_TSO6) | \
	 (1ULL << VIRTIO_NET_F_HOST_ECN) | (1ULL << VIRTIO_NET_F_GUEST_TSO4) | \
	 (1ULL << VIRTIO_NET_F_GUEST_TSO6) | (1ULL << VIRTIO_NET_F_GUEST_ECN))

static struct vufe_opts fe_opts(const struct port *p)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;

	o.path = p->sock;
	o.nr_qp = p->queues;
	o.nr_regions = 2;
	o.mem_size = 128UL << 20;
	o.want_features |= ALL_OFFLOADS;
	return o;
}

static struct vufe *fe_up(const struct vufe_opts *o)
{
	struct vufe *fe;
	int err;

	err = vufe_create(o, &fe);
	if (err) {
		test_fail("vufe_create: %s", vufe_strerror(NULL));
		return NULL;
	}
	err = vufe_connect(fe);
	if (!err)
		err = vufe_setup(fe);
	if (err) {
		test_fail("vhost-user setup: %s", vufe_strerror(fe));
		vufe_destroy(fe);
		return NULL;
	}
	dbg("features 0x%llx (backend 0x%llx), protocol 0x%llx, hdr %u\n",
	    (unsigned long long)vufe_features(fe),
	    (unsigned long long)vufe_backend_features(fe),
	    (unsigned long long)vufe_protocol_features(fe), vufe_hdr_len(fe));
	return fe;
}

static bool tx_idle(struct vufe *fe, void *arg)
{
	unsigned int qp = *(unsigned int *)arg;

	if (vufe_tx_reap(fe, qp) < 0)
		return true;	/* the error shows in the caller's check */
	return vufe_tx_inflight(fe, qp) == 0;
}

/* send, reaping (bounded) when the ring is full */
static int tx_send(struct vufe *fe, unsigned int qp,
		   const struct virtio_net_hdr_mrg_rxbuf *hdr, const void *f,
		   size_t len, unsigned int flags)
{
	long long deadline = now_ms() + WAIT_MS;
	int err;

	for (;;) {
		err = vufe_send(fe, qp, hdr, f, len, flags);
		if (err != -ENOSPC)
			return err;
		if (flags & VUFE_TX_NO_KICK)
			vufe_kick(fe, VUFE_TXQ(qp));
		err = vufe_tx_reap(fe, qp);
		if (err < 0)
			return err;
		if (err > 0)
			continue;
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		vufe_wait(fe, tx_idle, &qp, 5);
	}
}

/* every frame sent on qp was used (and reaped) */
static int tx_wait_idle(struct vufe *fe, unsigned int qp, int timeout_ms)
{
	int err = vufe_wait(fe, tx_idle, &qp, timeout_ms);

	if (err)
		return err;
	err = vufe_tx_reap(fe, qp);
	return err < 0 ? err : 0;
}

struct rx_any_arg {
	unsigned int nr_qp;
};

static bool rx_any(struct vufe *fe, void *arg)
{
	struct rx_any_arg *a = arg;
	struct vufe_vq_stats st;
	unsigned int qp;

	for (qp = 0; qp < a->nr_qp; qp++) {
		vufe_vq_stats(fe, VUFE_RXQ(qp), &st);
		if (st.used_idx != st.last_used)
			return true;
	}
	return false;
}

/*
 * The next frame on any RX queue of the frontend for which match() is
 * true (others are dropped), bounded.  Returns its length, or -errno.
 */
typedef bool (*match_fn)(const __u8 *f, size_t len, void *arg);

static ssize_t guest_recv(struct vufe *fe, unsigned int nr_qp, __u8 *buf,
			  size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
			  unsigned int *nbufs, unsigned int *qp_out,
			  match_fn match, void *arg, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct rx_any_arg a = { nr_qp };
	unsigned int qp;
	ssize_t n;
	int err;

	for (;;) {
		bool again = false;

		for (qp = 0; qp < nr_qp; qp++) {
			n = vufe_recv(fe, qp, buf, cap, hdr, nbufs);
			if (n == -EAGAIN)
				continue;
			if (n < 0)
				return n;
			again = true;
			if (!match || match(buf, n, arg)) {
				if (qp_out)
					*qp_out = qp;
				return n;
			}
			dbg("guest: dropped a %zd-byte frame (type 0x%04x)\n",
			    n, n >= 14 ? get16(buf + 12) : 0);
		}
		if (again)
			continue;
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		err = vufe_wait(fe, rx_any, &a,
				(int)(deadline - now_ms() > 0 ?
					      deadline - now_ms() : 1));
		if (err && err != -ETIMEDOUT)
			return err;
	}
}

static bool match_id(const __u8 *f, size_t len, void *arg)
{
	return test_frame_id(f, len) == *(long long *)arg;
}

static bool match_test(const __u8 *f, size_t len, void *arg)
{
	(void)arg;
	return test_frame_id(f, len) >= 0;
}

static bool match_sport(const __u8 *f, size_t len, void *arg)
{
	return len >= L4_OFF + 4 && get16(f + 12) == ETH_P_IP &&
	       get16(f + L4_OFF) == *(__u16 *)arg;
}

static bool match_ipv4(const __u8 *f, size_t len, void *arg)
{
	(void)arg;
	return len >= L4_OFF + 4 && get16(f + 12) == ETH_P_IP;
}

/* the tap side: the next frame with test id, compared byte for byte */
static bool tap_expect(int pfd, const __u8 *want, size_t len, int timeout_ms,
		       const char *what)
{
	static __u8 got[FRAME_MAX];
	long long deadline = now_ms() + timeout_ms;
	long long id = test_frame_id(want, len);

	for (;;) {
		long long left = deadline - now_ms();
		ssize_t n = pkt_recv(pfd, NULL, got, sizeof(got),
				     left > 0 ? (int)left : 0);

		if (n < 0) {
			test_fail("%s: frame %lld (%zu bytes) did not reach the tap: %s",
				  what, id, len, strerror((int)-n));
			return false;
		}
		if (test_frame_id(got, n) != id) {
			dbg("tap: skipped a %zd-byte frame (id %lld)\n", n,
			    test_frame_id(got, n));
			continue;
		}
		if (!ASSERT_EQ(n, len, what))
			return false;
		return ASSERT_MEMEQ(got, want, len, what);
	}
}

/* one frame guest -> tap and one tap -> guest through a port */
static bool ping_both(struct vufe *fe, const struct port *p, unsigned int qp,
		      int pfd, __u32 id, const char *what)
{
	static __u8 f[1514], got[FRAME_MAX];
	long long want = id | 0x40000000;
	ssize_t n;
	int err;

	test_frame(f, 300 + id % 1000, nobody_mac, guest_mac, id);
	err = tx_send(fe, qp, NULL, f, 300 + id % 1000, 0);
	if (err) {
		test_fail("%s: send on queue %u: %s", what, qp,
			  vufe_strerror(fe));
		return false;
	}
	if (!tap_expect(pfd, f, 300 + id % 1000, WAIT_MS, what))
		return false;
	if (tx_wait_idle(fe, qp, WAIT_MS)) {
		test_fail("%s: TX completion on queue %u: %s", what, qp,
			  vufe_strerror(fe));
		return false;
	}

	test_frame(f, 200 + id % 1000, guest_mac, host_mac, (__u32)want);
	err = pkt_send(pfd, NULL, f, 200 + id % 1000);
	if (err) {
		test_fail("%s: AF_PACKET send: %s", what, strerror(-err));
		return false;
	}
	n = guest_recv(fe, p->queues, got, sizeof(got), NULL, NULL, NULL,
		       match_id, &want, WAIT_MS);
	if (n < 0) {
		test_fail("%s: frame %lld from the tap did not reach the guest: %s",
			  what, want,
			  n == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
		return false;
	}
	return ASSERT_EQ(n, 200 + id % 1000, what) &&
	       ASSERT_MEMEQ(got, f, (size_t)n, what);
}

/* ------------------------------------------------------------------ */
/* 1. guest TX -> tap                                                  */
/* ------------------------------------------------------------------ */

static const unsigned int sizes[] = {
	60, 61, 64, 100, 127, 128, 255, 256, 511, 512, 777,
	1000, 1023, 1024, 1400, 1499, 1500, 1513, 1514,
};

static const unsigned int layouts[] = {
	0,
	VUFE_TX_HDR_INLINE,
	VUFE_TX_SEGS(3),
	VUFE_TX_INDIRECT,
	VUFE_TX_INDIRECT | VUFE_TX_SEGS(4),
	VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(2),
	VUFE_TX_SEGS(16),
};

#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

/* collect every flow's payload from the tap until all are complete */
static bool tap_collect_gso(int pfd, struct gso_flow *g, unsigned int n,
			    int timeout_ms)
{
	static __u8 buf[FRAME_MAX];
	long long deadline = now_ms() + timeout_ms;
	struct virtio_net_hdr vh;
	unsigned int i, done;

	for (;;) {
		long long left;
		ssize_t len;

		for (i = 0, done = 0; i < n; i++)
			done += g[i].covered == GSO_PLEN;
		if (done == n)
			return true;
		left = deadline - now_ms();
		len = pkt_recv(pfd, &vh, buf, sizeof(buf),
			       left > 0 ? (int)left : 0);
		if (len < 0) {
			for (i = 0; i < n; i++)
				if (g[i].covered != GSO_PLEN)
					break;
			test_fail("64 KB GSO frame (flow %u): %zu of %u payload bytes reached the tap in %u frames: %s",
				  g[i].sport, g[i].covered, GSO_PLEN,
				  g[i].frames, strerror((int)-len));
			return false;
		}
		for (i = 0; i < n; i++) {
			int r = gso_feed(&g[i], &vh, buf, len);

			if (r < 0) {
				test_fail("%s", g[i].err);
				return false;
			}
			if (r)
				break;
		}
	}
}

static void tx_to_tap(void)
{
	static __u8 f[FRAME_MAX];
	static struct gso_flow g[3];
	static const unsigned int gso_layouts[3] = {
		0, VUFE_TX_HDR_INLINE, VUFE_TX_SEGS(16),
	};
	struct virtio_net_hdr_mrg_rxbuf hdr;
	struct vnet_dp_stats d0, d1;
	struct vnet_queue_state q0, q1;
	struct link_stats l0, l1;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	unsigned int i, n = 200;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, "tx", 1, 1);
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	ASSERT_EQ(vufe_hdr_len(fe), 12, "12-byte header with VERSION_1");
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q0);
	ns_link_stats(vd.ns, vd.port[0].tap, &l0);

	/* every size in every layout, then read back in order */
	for (i = 0; i < n; i++) {
		unsigned int len = sizes[i % NSIZES];

		test_frame(f, len, nobody_mac, guest_mac, i);
		if (tx_send(fe, 0, NULL, f, len, layouts[i % NLAYOUTS])) {
			test_fail("send frame %u: %s", i, vufe_strerror(fe));
			goto out;
		}
		if (i % 32 == 31 || i == n - 1) {
			unsigned int k;

			for (k = i - (i % 32); k <= i; k++) {
				unsigned int l = sizes[k % NSIZES];
				char what[64];

				test_frame(f, l, nobody_mac, guest_mac, k);
				snprintf(what, sizeof(what),
					 "frame %u (%u bytes, layout 0x%x)", k,
					 l, layouts[k % NLAYOUTS]);
				if (!tap_expect(pfd, f, l, WAIT_MS, what))
					goto out;
			}
		}
	}
	if (!ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "all TX buffers used"))
		goto out;

	/* 64 KB TCP GSO frames, header apart, inline, in 16 pieces */
	for (i = 0; i < 3; i++) {
		__u16 sport = 41000 + i;
		size_t len;

		gso_flow_init(&g[i], sport, 1000000 * (i + 1));
		memset(&hdr, 0, sizeof(hdr));
		len = gso_frame(f, &hdr.hdr, nobody_mac, guest_mac, GUEST_IP,
				HOST_IP, sport, g[i].isn);
		if (tx_send(fe, 0, &hdr, f, len, gso_layouts[i])) {
			test_fail("send GSO frame: %s", vufe_strerror(fe));
			goto out;
		}
	}
	if (!tap_collect_gso(pfd, g, 3, 5000))
		goto out;
	for (i = 0; i < 3; i++) {
		dbg("GSO flow %u: %u frames (%u with a GSO header), %u bad checksums\n",
		    g[i].sport, g[i].frames, g[i].gso_frames, g[i].bad_csum);
		if (g[i].frames == 1)
			ASSERT_EQ(g[i].gso_frames, 1,
				  "a whole GSO frame keeps its GSO header");
	}
	if (!ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "GSO buffers used"))
		goto out;

	/* vnetd's counters and the tap's agree with what was sent */
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d1);
	ns_link_stats(vd.ns, vd.port[0].tap, &l1);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q1);
	ASSERT_GE(d1.frames - d0.frames, n + 3, "dp_stats tx frames");
	ASSERT_GT(d1.bytes - d0.bytes, 3 * GSO_PLEN, "dp_stats tx bytes");
	ASSERT_GT(d1.batches - d0.batches, 0, "dp_stats tx batches");
	ASSERT_EQ(d1.drops[VNET_DROP_BAD_DESC], 0, "no bad descriptor");
	ASSERT_GE(l1.rx_packets - l0.rx_packets, n + 3, "tap rx_packets");
	ASSERT_GT(q1.first_seen_ns, 0, "the classifier saw guest-TX queue 0");
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	vd_cleanup(&vd);
}

/* ------------------------------------------------------------------ */
/* 2. tap -> guest RX                                                  */
/* ------------------------------------------------------------------ */

static void rx_from_tap(bool mrg)
{
	static __u8 f[FRAME_MAX], got[FRAME_MAX];
	static struct gso_flow g;
	struct virtio_net_hdr_mrg_rxbuf hdr;
	struct virtio_net_hdr vh;
	struct vnet_dp_stats d0, d1;
	struct link_stats l0, l1;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	unsigned int i, n = 200, nbufs;
	__u16 sport = 42000;
	struct vd vd;
	size_t len;
	int pfd = -1;

	vd_init(&vd, mrg ? "rxmrg" : "rxbig", 1, 1);
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	o = fe_opts(&vd.port[0]);
	if (!mrg) {
		/*
		 * a legacy driver: no MRG_RXBUF, no VERSION_1 (10-byte
		 * header), Linux's big packets, no guest offloads (the
		 * host must segment and checksum)
		 */
		o.want_features = (1ULL << VIRTIO_RING_F_EVENT_IDX) |
				  (1ULL << VIRTIO_RING_F_INDIRECT_DESC) |
				  (1ULL << VUFE_F_PROTOCOL_FEATURES) |
				  (1ULL << VIRTIO_NET_F_CSUM) |
				  (1ULL << VIRTIO_NET_F_HOST_TSO4);
		o.rx_mode = VUFE_RX_BIG;
	}
	fe = fe_up(&o);
	if (!fe)
		goto out;
	if (mrg) {
		ASSERT_EQ(vufe_rx_mode(fe), VUFE_RX_MERGEABLE, "MRG_RXBUF");
		ASSERT_TRUE(vufe_features(fe) &
				    (1ULL << VIRTIO_NET_F_GUEST_TSO4),
			    "GUEST_TSO4 negotiated");
	} else {
		ASSERT_EQ(vufe_rx_mode(fe), VUFE_RX_BIG, "big packets");
		ASSERT_EQ(vufe_hdr_len(fe), 10, "10-byte legacy header");
	}
	if (test_state.failed)
		goto out;
	if (!ASSERT_GT(vufe_post_rx(fe, 0, 0), 0, "post RX buffers"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	ns_link_stats(vd.ns, vd.port[0].tap, &l0);

	for (i = 0; i < n; i++) {
		long long id = 0x10000 + i;
		unsigned int l = sizes[i % NSIZES];
		ssize_t r;

		test_frame(f, l, guest_mac, host_mac, (__u32)id);
		if (!ASSERT_OK(pkt_send(pfd, NULL, f, l), "AF_PACKET send"))
			goto out;
		r = guest_recv(fe, 1, got, sizeof(got), &hdr, &nbufs, NULL,
			       match_test, NULL, WAIT_MS);
		if (r < 0) {
			test_fail("frame %u (%u bytes) did not reach the guest: %s",
				  i, l,
				  r == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
			goto out;
		}
		if (!ASSERT_EQ(test_frame_id(got, r), id, "in order") ||
		    !ASSERT_EQ(r, l, "length") ||
		    !ASSERT_MEMEQ(got, f, l, "content") ||
		    !ASSERT_EQ(hdr.hdr.gso_type, VIRTIO_NET_HDR_GSO_NONE,
			       "no GSO on a small frame"))
			goto out;
		if (mrg && !ASSERT_EQ(nbufs, 1, "one buffer per small frame"))
			goto out;
	}

	/* a 64 KB TCP GSO frame into the tap */
	len = gso_frame(f, &vh, guest_mac, host_mac, HOST_IP, GUEST_IP, sport,
			5000000);
	gso_flow_init(&g, sport, 5000000);
	if (!ASSERT_OK(pkt_send(pfd, &vh, f, len), "AF_PACKET send (GSO)"))
		goto out;
	while (g.covered < GSO_PLEN) {
		ssize_t r = guest_recv(fe, 1, got, sizeof(got), &hdr, &nbufs,
				       NULL, match_sport, &sport, WAIT_MS);

		if (r < 0) {
			test_fail("GSO frame: %zu of %u payload bytes reached the guest in %u frames: %s",
				  g.covered, GSO_PLEN, g.frames,
				  r == -ETIMEDOUT ? "timeout" :
						    vufe_strerror(fe));
			goto out;
		}
		if (gso_feed(&g, &hdr.hdr, got, r) < 0) {
			test_fail("%s", g.err);
			goto out;
		}
		if (mrg && hdr.hdr.gso_type != VIRTIO_NET_HDR_GSO_NONE)
			ASSERT_EQ(nbufs, (r + 12 + VUFE_PAGE - 1) / VUFE_PAGE,
				  "mergeable buffers of the GSO frame");
	}
	dbg("GSO into the guest: %u frames, %u with a GSO header, %u bad checksums\n",
	    g.frames, g.gso_frames, g.bad_csum);
	if (mrg) {
		/* GUEST_TSO4 negotiated: the tap hands the segment over whole */
		ASSERT_EQ(g.frames, 1, "GUEST_TSO4: one frame");
		ASSERT_EQ(g.gso_frames, 1, "GUEST_TSO4: GSO header");
		ASSERT_TRUE(hdr.hdr.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM,
			    "GUEST_CSUM: NEEDS_CSUM");
	} else {
		/* no guest offloads: the host segmented and checksummed */
		ASSERT_EQ(g.frames, GSO_SEGS, "no GUEST_TSO4: segments");
		ASSERT_EQ(g.gso_frames, 0, "no GUEST_TSO4: no GSO header");
		ASSERT_EQ(g.bad_csum, 0, "no GUEST_CSUM: checksums complete");
	}

	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	ns_link_stats(vd.ns, vd.port[0].tap, &l1);
	ASSERT_GE(d1.frames - d0.frames, n + g.frames, "dp_stats rx frames");
	ASSERT_GE(l1.tx_packets - l0.tx_packets, n + 1, "tap tx_packets");
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	vd_cleanup(&vd);
}

static void rx_from_tap_mrg(void)
{
	rx_from_tap(true);
}

static void rx_from_tap_nomrg(void)
{
	rx_from_tap(false);
}

/* ------------------------------------------------------------------ */
/* 3. two queue pairs                                                  */
/* ------------------------------------------------------------------ */

static void two_queue_pairs(void)
{
	static __u8 f[2048], got[FRAME_MAX];
	unsigned int i, qp, flows = 64, rxq_of[64], per_q[2] = { 0, 0 };
	struct vnet_dp_stats tx0[2], tx1[2], rx0[2], rx1[2];
	struct vufe_opts o;
	struct vufe *fe = NULL;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, "mq", 1, 2);
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe)
		goto out;
	if (!ASSERT_EQ(vufe_max_queues(fe) >= 2, 1, "GET_QUEUE_NUM >= 2") ||
	    !ASSERT_TRUE(vufe_features(fe) & (1ULL << VIRTIO_NET_F_MQ), "MQ"))
		goto out;
	for (qp = 0; qp < 2; qp++) {
		vufe_post_rx(fe, qp, 0);
		dps_read(&vd.port[0], VNET_DIR_TX, qp, &tx0[qp]);
		dps_read(&vd.port[0], VNET_DIR_RX, qp, &rx0[qp]);
	}

	/* TX on both queue pairs, each queue's frames in order */
	for (i = 0; i < 100; i++) {
		qp = i & 1;
		test_frame(f, 100 + i, nobody_mac, guest_mac, i);
		if (tx_send(fe, qp, NULL, f, 100 + i, 0)) {
			test_fail("send on queue %u: %s", qp, vufe_strerror(fe));
			goto out;
		}
	}
	{
		bool seen[100] = { false };
		unsigned int got_n = 0;
		long long deadline = now_ms() + WAIT_MS;

		while (got_n < 100) {
			long long left = deadline - now_ms();
			ssize_t n = pkt_recv(pfd, NULL, got, sizeof(got),
					     left > 0 ? (int)left : 0);
			long long id;

			if (n < 0) {
				test_fail("%u of 100 frames from two TX queues reached the tap",
					  got_n);
				goto out;
			}
			id = test_frame_id(got, n);
			if (id < 0 || id >= 100)
				continue;
			test_frame(f, 100 + id, nobody_mac, guest_mac, id);
			if (!ASSERT_EQ(n, 100 + id, "length") ||
			    !ASSERT_MEMEQ(got, f, (size_t)n, "content"))
				goto out;
			if (!seen[id]) {
				seen[id] = true;
				got_n++;
			}
		}
	}
	for (qp = 0; qp < 2; qp++)
		if (!ASSERT_OK(tx_wait_idle(fe, qp, WAIT_MS), "TX used"))
			goto out;

	/* RX: 64 flows, two frames each; a flow stays on one queue */
	for (i = 0; i < 2 * flows; i++) {
		struct l4 p = { .dst = guest_mac, .src = host_mac,
				.saddr = HOST_IP, .daddr = GUEST_IP,
				.sport = 20000 + i % flows, .dport = 7,
				.proto = IPPROTO_UDP, .plen = 64, .seed = i };
		size_t len = ip_frame(f, &p);
		ssize_t n;
		__u16 sport;

		if (!ASSERT_OK(pkt_send(pfd, NULL, f, len), "AF_PACKET send"))
			goto out;
		n = guest_recv(fe, 2, got, sizeof(got), NULL, NULL, &qp,
			       match_ipv4, NULL, WAIT_MS);
		if (n < 0) {
			test_fail("flow %u: frame did not reach the guest: %s",
				  i % flows,
				  n == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
			goto out;
		}
		if (!ASSERT_EQ(n, len, "length") ||
		    !ASSERT_MEMEQ(got, f, len, "content"))
			goto out;
		sport = get16(got + L4_OFF);
		if (i < flows) {
			rxq_of[sport - 20000] = qp;
			per_q[qp]++;
		} else if (!ASSERT_EQ(qp, rxq_of[sport - 20000],
				      "a flow stays on its queue")) {
			goto out;
		}
	}
	dbg("RX flows per queue: %u %u\n", per_q[0], per_q[1]);
	ASSERT_GT(per_q[0], 0, "flows on RX queue 0");
	ASSERT_GT(per_q[1], 0, "flows on RX queue 1");

	for (qp = 0; qp < 2; qp++) {
		dps_read(&vd.port[0], VNET_DIR_TX, qp, &tx1[qp]);
		dps_read(&vd.port[0], VNET_DIR_RX, qp, &rx1[qp]);
		ASSERT_GE(tx1[qp].frames - tx0[qp].frames, 50,
			  "dp_stats tx frames per queue");
		ASSERT_GE(rx1[qp].frames - rx0[qp].frames, 2 * per_q[qp],
			  "dp_stats rx frames per queue");
	}
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	vd_cleanup(&vd);
}

/*
 * Mergeable RX with an unusable chain in the middle of a frame: the guest
 * posts (by hand, on the raw ring) a 100-byte chain, a chain of 70
 * descriptors (more segments than vnetd maps per chain), then 2 KiB
 * chains; a 1012-byte frame (1000 bytes after the header) comes from the
 * tap.  The frame must reach the guest whole (the used entries of the
 * frame, num_buffers of them, hold all 1012 bytes) or not at all (a
 * counted drop); the dp_stats counters must equal what arrived.
 */
#define MANY_SEGS	70
static void rx_many_segs(void)
{
	static __u8 f[1000], got[2048];
	struct vnet_dp_stats d0, d1;
	struct vufe_ring r;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	__u64 gpa[4], sgpa, one = 1;
	__u8 *ptr[4], *sptr;
	unsigned int i, n, used, start = 0, nb = 0, total = 0, frames = 0;
	long long deadline, id = 0x60000000;
	struct vd vd;
	int pfd = -1;
	void *p;

	vd_init(&vd, "rxsegs", 1, 1);
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe || !ASSERT_EQ(vufe_hdr_len(fe), 12, "mergeable header") ||
	    !ASSERT_OK(vufe_ring(fe, VUFE_RXQ(0), &r), "RX ring"))
		goto out;
	for (i = 0; i < 4; i++) {
		if (!ASSERT_OK(vufe_alloc(fe, 2048, 64, 1, &gpa[i], &p),
			       "buffer"))
			goto out;
		ptr[i] = p;
	}
	if (!ASSERT_OK(vufe_alloc(fe, 16 * MANY_SEGS, 64, 1, &sgpa, &p),
		       "segments"))
		goto out;
	sptr = p;
	memset(sptr, 0xee, 16 * MANY_SEGS);
	/* desc 0: 100 bytes; descs 1..70: one chain of 16-byte segments */
	r.desc[0] = (struct vring_desc){ .addr = htole64(gpa[0]),
					 .len = htole32(100),
					 .flags = htole16(VRING_DESC_F_WRITE) };
	for (i = 0; i < MANY_SEGS; i++)
		r.desc[1 + i] = (struct vring_desc){
			.addr = htole64(sgpa + 16 * i), .len = htole32(16),
			.flags = htole16(VRING_DESC_F_WRITE |
					 (i + 1 < MANY_SEGS ? VRING_DESC_F_NEXT : 0)),
			.next = htole16(2 + i),
		};
	for (i = 1; i < 4; i++)
		r.desc[MANY_SEGS + i] = (struct vring_desc){
			.addr = htole64(gpa[i]), .len = htole32(2048),
			.flags = htole16(VRING_DESC_F_WRITE) };
	r.avail->ring[0] = htole16(0);
	r.avail->ring[1] = htole16(1);
	for (i = 1; i < 4; i++)
		r.avail->ring[1 + i] = htole16(MANY_SEGS + i);
	used = le16toh(__atomic_load_n(&r.used->idx, __ATOMIC_ACQUIRE));
	__atomic_store_n(&r.avail->idx, htole16(le16toh(r.avail->idx) + 5),
			 __ATOMIC_RELEASE);
	if (write(r.kick_fd, &one, sizeof(one)) < 0)
		dbg("kick: %s\n", strerror(errno));

	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	test_frame(f, sizeof(f), guest_mac, host_mac, (__u32)id);
	if (!ASSERT_OK(pkt_send(pfd, NULL, f, sizeof(f)), "AF_PACKET send"))
		goto out;
	/* the frame's buffers, or the counted drop */
	deadline = now_ms() + WAIT_MS;
	for (;;) {
		dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
		n = (__u16)(le16toh(__atomic_load_n(&r.used->idx,
						     __ATOMIC_ACQUIRE)) - used);
		if (d1.frames != d0.frames ||
		    d1.drops[VNET_DROP_TOO_BIG] != d0.drops[VNET_DROP_TOO_BIG] ||
		    d1.drops[VNET_DROP_BAD_DESC] > d0.drops[VNET_DROP_BAD_DESC] + 1 ||
		    now_ms() > deadline)
			break;
		nap_ms(2);
	}
	nap_ms(20);
	n = (__u16)(le16toh(__atomic_load_n(&r.used->idx, __ATOMIC_ACQUIRE)) -
		    used);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d1);
	/* walk the used entries as a mergeable guest does */
	for (i = 0; i < n; i++) {
		struct vring_used_elem *e = &r.used->ring[(used + i) % r.num];
		__u32 uid = le32toh(e->id), ulen = le32toh(e->len);
		const __u8 *b = uid == 0 ? ptr[0] : uid == 1 ? sptr :
				uid > MANY_SEGS ? ptr[uid - MANY_SEGS] : NULL;

		dbg("used[%u]: id %u len %u\n", i, uid, ulen);
		if (!b || !ASSERT_LE(ulen, uid == 0 ? 100u : uid == 1 ? 16u * MANY_SEGS : 2048u, "used len within the chain"))
			goto out;
		if (!nb) {
			if (ulen < 12)
				continue; /* given back empty: not a frame */
			nb = b[10] | b[11] << 8;
			start = i;
			frames++;
			if (!ASSERT_GE(nb, 1, "num_buffers"))
				goto out;
			memcpy(got, b + 12, ulen - 12);
			total = ulen - 12;
		} else {
			if (!ASSERT_LE(total + ulen, sizeof(got), "frame size"))
				goto out;
			memcpy(got + total, b, ulen);
			total += ulen;
		}
		if (i - start + 1 == nb)
			nb = 0;
	}
	dbg("frames %u, %u bytes; counters: frames +%llu bytes +%llu\n", frames,
	    total, (unsigned long long)(d1.frames - d0.frames),
	    (unsigned long long)(d1.bytes - d0.bytes));
	ASSERT_EQ(nb, 0, "every buffer num_buffers announced arrived");
	ASSERT_EQ(d1.frames - d0.frames, frames, "frames counter = frames that arrived");
	ASSERT_EQ(d1.bytes - d0.bytes, frames ? total : 0, "bytes counter = bytes that arrived");
	if (frames) {
		ASSERT_EQ(frames, 1, "one frame");
		ASSERT_EQ(total, sizeof(f), "the whole frame arrived");
		ASSERT_MEMEQ(got, f, sizeof(f), "content");
	} else {
		ASSERT_GT(d1.drops[VNET_DROP_TOO_BIG] + d1.drops[VNET_DROP_BAD_DESC],
			  d0.drops[VNET_DROP_TOO_BIG] + d0.drops[VNET_DROP_BAD_DESC] + 1,
			  "the frame's drop is counted");
	}
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	vd_cleanup(&vd);
}

/* ------------------------------------------------------------------ */
/* 4. notification economy                                             */
/* ------------------------------------------------------------------ */

enum kind { BULK, URGENT, PUSH };

/*
 * frames in bursts of `burst` on TX queue 0, one kick per burst, each
 * burst used (and reaped) before the next; rearm: re-enable callbacks
 * after each reap (used_event = last used), as NAPI does.
 */
static bool tx_bursts(struct vufe *fe, unsigned int frames,
		      unsigned int burst, enum kind kind, bool rearm,
		      unsigned int *seq)
{
	static __u8 f[256];
	unsigned int sent = 0, i;

	while (sent < frames) {
		unsigned int nb = frames - sent < burst ? frames - sent : burst;

		for (i = 0; i < nb; i++) {
			size_t len = kind == BULK ?
				udp_frame(f, nobody_mac, guest_mac, 30000,
					  *seq) :
				tcp_frame(f, nobody_mac, guest_mac, *seq,
					  kind == PUSH);

			(*seq)++;
			if (tx_send(fe, 0, NULL, f, len, VUFE_TX_NO_KICK)) {
				test_fail("send: %s", vufe_strerror(fe));
				return false;
			}
		}
		if (vufe_kick(fe, VUFE_TXQ(0)) < 0 ||
		    tx_wait_idle(fe, 0, WAIT_MS)) {
			test_fail("burst at frame %u not used: %s", sent,
				  vufe_strerror(fe));
			return false;
		}
		if (rearm)
			vufe_enable_cb(fe, VUFE_TXQ(0));
		sent += nb;
	}
	return true;
}

/*
 * Wait (bounded) until vnetd's notify_sent on (dir, q) equals the signals
 * the frontend counted on vq and both stay put for quiet_ms (a coalescing
 * timer may still be due).  The counts are what the test asserts on.
 */
static void settle(struct vufe *fe, const struct port *p, unsigned int vq,
		   __u32 dir, const struct vufe_vq_stats *st0,
		   const struct vnet_dp_stats *d0, int quiet_ms,
		   struct vufe_vq_stats *st, struct vnet_dp_stats *d)
{
	long long deadline = now_ms() + 3000, since = now_ms();
	__u64 last = ~0ULL;

	for (;;) {
		__u64 sig, sent;

		vufe_vq_stats(fe, vq, st);
		dps_read(p, dir, 0, d);
		sig = st->signals - st0->signals;
		sent = d->notify_sent - d0->notify_sent;
		if (sig != sent || sig != last) {
			last = sig == sent ? sig : ~0ULL;
			since = now_ms();
		} else if (now_ms() - since >= quiet_ms) {
			return;
		}
		if (now_ms() > deadline)
			return;
		nap_ms(2);
	}
}

static __u64 fe_signals(struct vufe *fe, unsigned int vq)
{
	struct vufe_vq_stats st;

	vufe_vq_stats(fe, vq, &st);
	return st.signals;
}

static bool notify_setup(struct vd *vd, const char *name,
			 const struct coal *c, bool auto_rearm,
			 struct vufe **fe)
{
	struct vufe_opts o;

	vd_init(vd, name, 1, 1);
	if (!vd_up(vd))
		return false;
	if (!cfg_set(&vd->port[0], 0, c))
		return false;
	o = fe_opts(&vd->port[0]);
	o.auto_rearm = auto_rearm;
	*fe = fe_up(&o);
	return *fe != NULL;
}

#define NOTIFY_FRAMES	1000
#define NOTIFY_BURST	4
#define TX_FRAMES	8

/* bulk: at most one TX signal per tx-frames completions (and a few) */
static void notify_tx_bulk(void)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 50000 };
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0;
	__u64 sig;
	struct vd vd;

	if (!notify_setup(&vd, "nbulk", &c, true, &fe))
		goto out;
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	if (!tx_bursts(fe, NOTIFY_FRAMES, NOTIFY_BURST, BULK, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 150, &st,
	       &d);
	sig = st.signals - st0.signals;
	dbg("bulk: %llu signals for %u frames in %llu batches (frames %llu timer %llu urgent %llu deferred %llu suppressed %llu)\n",
	    (unsigned long long)sig, NOTIFY_FRAMES,
	    (unsigned long long)(d.batches - d0.batches),
	    (unsigned long long)(d.notify_frames - d0.notify_frames),
	    (unsigned long long)(d.notify_timer - d0.notify_timer),
	    (unsigned long long)(d.notify_urgent - d0.notify_urgent),
	    (unsigned long long)(d.notify_deferred - d0.notify_deferred),
	    (unsigned long long)(d.notify_suppressed - d0.notify_suppressed));
	ASSERT_LE(sig, NOTIFY_FRAMES / TX_FRAMES + 8,
		  "bulk TX signals <= frames / tx-frames + a few");
	ASSERT_GE(sig, NOTIFY_FRAMES / TX_FRAMES / 2,
		  "bulk TX completions are signalled");
	ASSERT_EQ(d.notify_sent - d0.notify_sent, sig,
		  "dp_stats notify_sent = call-eventfd signals");
	ASSERT_EQ(d.notify_urgent - d0.notify_urgent, 0,
		  "no urgent signal for UDP");
	ASSERT_GE(d.notify_frames - d0.notify_frames,
		  NOTIFY_FRAMES / TX_FRAMES / 2, "notify_frames");
	ASSERT_GT(d.notify_deferred - d0.notify_deferred, 0,
		  "notify_deferred");
	ASSERT_GE(d.frames - d0.frames, NOTIFY_FRAMES, "dp_stats tx frames");
out:
	if (fe)
		vufe_destroy(fe);
	vd_cleanup(&vd);
}

/*
 * tx-frames changed live (the pinned config map, what `vnetctl coalesce set`
 * writes) changes the signal count of the next 1000 frames, with no restart
 * and no reconnect.
 */
#define TX_FRAMES_LIVE	32

static void notify_tx_live_change(void)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 50000 };
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0;
	__u64 sig8, sig32;
	struct vd vd;

	if (!notify_setup(&vd, "nlive", &c, true, &fe))
		goto out;
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	if (!tx_bursts(fe, NOTIFY_FRAMES, NOTIFY_BURST, BULK, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 150, &st,
	       &d);
	sig8 = st.signals - st0.signals;

	c.tx_frames = TX_FRAMES_LIVE;
	if (!cfg_set(&vd.port[0], 0, &c))
		goto out;
	st0 = st;
	d0 = d;
	if (!tx_bursts(fe, NOTIFY_FRAMES, NOTIFY_BURST, BULK, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 150, &st,
	       &d);
	sig32 = st.signals - st0.signals;
	dbg("live change: %llu signals with tx-frames %u, then %llu with %u\n",
	    (unsigned long long)sig8, TX_FRAMES, (unsigned long long)sig32,
	    TX_FRAMES_LIVE);
	ASSERT_LE(sig8, NOTIFY_FRAMES / TX_FRAMES + 8,
		  "tx-frames 8: signals <= frames / 8 + a few");
	ASSERT_LE(sig32, NOTIFY_FRAMES / TX_FRAMES_LIVE + 8,
		  "tx-frames 32 (set live): signals <= frames / 32 + a few");
	ASSERT_GE(sig8, 2 * sig32,
		  "raising tx-frames live cut the signals");
	ASSERT_GT(sig32, 0, "completions still signalled after the change");
	ASSERT_GE(d.frames - d0.frames, NOTIFY_FRAMES, "dp_stats tx frames");
out:
	if (fe)
		vufe_destroy(fe);
	vd_cleanup(&vd);
}

/* what one run of urgent bursts did: TX deltas */
struct urgent_run {
	__u64 signals, classified, batches;
	struct vnet_dp_stats d; /* differences */
};

/*
 * 1000 urgent frames (TCP payload, PSH clear) in bursts of 4 with
 * tx-frames 8 and the config FLAGS (VNET_CFG_NO_TX_BYPASS or 0).
 */
static bool urgent_bursts(const char *name, __u32 flags, struct urgent_run *u)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 50000,
			  .flags = flags };
	struct vnet_queue_state q0, q1;
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0, i;
	bool ok = false;
	struct vd vd;

	if (!notify_setup(&vd, name, &c, true, &fe))
		goto out;
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q0);
	if (!tx_bursts(fe, NOTIFY_FRAMES, NOTIFY_BURST, URGENT, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 150, &st,
	       &d);
	qs_read(&vd.port[0], VNET_DIR_TX, 0, &q1);
	u->signals = st.signals - st0.signals;
	u->classified = q1.urgent - q0.urgent;
	u->batches = d.batches - d0.batches;
	/* every counter of the struct, as differences */
	for (i = 0; i < sizeof(d) / sizeof(__u64); i++)
		((__u64 *)&u->d)[i] = ((__u64 *)&d)[i] - ((__u64 *)&d0)[i];
	dbg("%s: %llu signals for %u bursts in %llu batches (urgent %llu frames %llu timer %llu)\n",
	    name, (unsigned long long)u->signals, NOTIFY_FRAMES / NOTIFY_BURST,
	    (unsigned long long)u->batches,
	    (unsigned long long)u->d.notify_urgent,
	    (unsigned long long)u->d.notify_frames,
	    (unsigned long long)u->d.notify_timer);
	ok = ASSERT_GE(u->classified, NOTIFY_FRAMES,
		       "the classifier counted the urgent frames") &&
	     ASSERT_EQ(u->d.notify_sent, u->signals,
		       "dp_stats notify_sent = call-eventfd signals");
out:
	if (fe)
		vufe_destroy(fe);
	vd_cleanup(&vd);
	return ok;
}

/* urgent (TCP payload, PSH clear): a signal per burst, not coalesced */
static void notify_tx_urgent(void)
{
	unsigned int bursts = NOTIFY_FRAMES / NOTIFY_BURST;
	struct urgent_run u;

	if (!urgent_bursts("nurg", 0, &u))
		return;
	ASSERT_GE(u.signals, bursts * 8 / 10, "urgent: a signal per burst");
	ASSERT_GT(u.signals, NOTIFY_FRAMES / TX_FRAMES + 8,
		  "urgent: more signals than tx-frames coalescing gives");
	ASSERT_LE(u.signals, u.batches, "at most one signal per used-ring update");
	ASSERT_GE(u.d.notify_urgent, bursts * 8 / 10, "notify_urgent");
}

/*
 * tx-urgent-bypass off: the same urgent frames are coalesced by tx-frames
 * like any others (what the bypass switch is for: the same coalescing
 * values with and without it)
 */
static void notify_tx_urgent_no_bypass(void)
{
	struct urgent_run u;

	if (!urgent_bursts("nnob", VNET_CFG_NO_TX_BYPASS, &u))
		return;
	ASSERT_EQ(u.d.notify_urgent, 0, "bypass off: no urgent signal");
	ASSERT_LE(u.signals, NOTIFY_FRAMES / TX_FRAMES + 8,
		  "bypass off: urgent frames coalesced by tx-frames");
	ASSERT_GE(u.signals, NOTIFY_FRAMES / TX_FRAMES / 2,
		  "bypass off: completions still signalled");
}

/*
 * Paired signals: a frame for the guest held by coalescing (rx-frames 8,
 * rx-usecs 100 ms) goes along with the TX signal of an urgent frame (sent
 * at once) instead of waiting for its timer: notify_paired counts it on
 * RX, the timer later finds nothing pending.
 */
static void notify_paired(void)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 100000,
			  .rx_frames = 8, .rx_usecs = 100000 };
	struct vufe_vq_stats rx0, rx, tx0;
	struct vnet_dp_stats d0, d, t0;
	static __u8 f[256], got[FRAME_MAX];
	struct vufe *fe = NULL;
	unsigned int seq = 0;
	__u16 sport = 31000;
	struct vd vd;
	int pfd = -1;
	ssize_t n;

	if (!notify_setup(&vd, "npair", &c, true, &fe))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	vufe_vq_stats(fe, VUFE_RXQ(0), &rx0);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &t0);
	/* one UDP frame in: delivered, its signal held (1 < rx-frames) */
	if (!ASSERT_OK(pkt_send(pfd, NULL, f, udp_frame(f, guest_mac, host_mac,
							 sport, 1)),
		       "send"))
		goto out;
	n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL, match_sport,
		       &sport, WAIT_MS);
	if (!ASSERT_GE(n, 0, "the RX frame arrived"))
		goto out;
	/* one urgent frame out: signalled at once, the RX signal with it */
	if (!tx_bursts(fe, 1, 1, URGENT, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_RXQ(0), VNET_DIR_RX, &rx0, &d0, 150, &rx,
	       &d);
	/* past the RX timer's 100 ms: it found nothing left to signal */
	nap_ms(150);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d);
	vufe_vq_stats(fe, VUFE_RXQ(0), &rx);
	dbg("paired: rx signals %llu (paired %llu timer %llu)\n",
	    (unsigned long long)(rx.signals - rx0.signals),
	    (unsigned long long)(d.notify_paired - d0.notify_paired),
	    (unsigned long long)(d.notify_timer - d0.notify_timer));
	ASSERT_EQ(rx.signals - rx0.signals, 1, "one RX signal");
	ASSERT_EQ(d.notify_paired - d0.notify_paired, 1,
		  "the RX frame's signal went with the TX signal");
	ASSERT_EQ(d.notify_timer - d0.notify_timer, 0,
		  "the RX timer found nothing left");
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d);
	ASSERT_GE(d.notify_urgent - t0.notify_urgent, 1, "the urgent TX signal");
out:
	if (pfd >= 0)
		close(pfd);
	if (fe)
		vufe_destroy(fe);
	vd_cleanup(&vd);
}

/*
 * --busy-poll: 250 bursts of 4, each sent ~100 us after the previous one
 * was used.  Without busy polling vnetd has asked for a kick and gone to
 * sleep by then, so every burst needs a kick; with a 1000 us window vnetd
 * is still watching the ring when the next burst comes, so the guest's
 * kick is suppressed and the window counts busy_polls.  The assertions
 * count kicks and windows; the gap only has to be well inside the window.
 */
struct bp_run {
	__u64 kicks, suppressed, signals, busy_polls, frames;
};

static bool busy_poll_run(const char *name, const char *extra,
			  struct bp_run *r)
{
	struct coal c = { .tx_frames = 0, .tx_usecs = 0 };
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0, i;
	struct vufe_opts o;
	bool ok = false;
	struct vd vd;

	vd_init(&vd, name, 1, 1);
	vd.extra = extra;
	if (!vd_up(&vd) || !cfg_set(&vd.port[0], 0, &c))
		goto out;
	o = fe_opts(&vd.port[0]);
	o.auto_rearm = true;
	fe = fe_up(&o);
	if (!fe)
		goto out;
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	for (i = 0; i < NOTIFY_FRAMES / NOTIFY_BURST; i++) {
		if (!tx_bursts(fe, NOTIFY_BURST, NOTIFY_BURST, BULK, true,
			       &seq))
			goto out;
		usleep(100);
	}
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 50, &st,
	       &d);
	r->kicks = st.kicks - st0.kicks;
	r->suppressed = st.kicks_suppressed - st0.kicks_suppressed;
	r->signals = st.signals - st0.signals;
	r->busy_polls = d.busy_polls - d0.busy_polls;
	r->frames = d.frames - d0.frames;
	dbg("%s: %llu kicks, %llu suppressed, %llu signals, %llu busy polls, %llu frames\n",
	    name, (unsigned long long)r->kicks,
	    (unsigned long long)r->suppressed,
	    (unsigned long long)r->signals,
	    (unsigned long long)r->busy_polls,
	    (unsigned long long)r->frames);
	ok = true;
out:
	if (fe)
		vufe_destroy(fe);
	vd_cleanup(&vd);
	return ok;
}

static void busy_poll(void)
{
	unsigned int bursts = NOTIFY_FRAMES / NOTIFY_BURST;
	struct bp_run off = { 0 }, on = { 0 };
	int rc;

	rc = sh("%s --busy-poll 5000 --socket /tmp/vnet-none.sock --tap none >/dev/null 2>&1",
		vnetd_bin);
	ASSERT_EQ(rc, 2, "--busy-poll 5000 is a usage error (0-1000)");
	rc = sh("%s --busy-poll 5000 --socket /tmp/vnet-none.sock --tap none 2>&1 | grep -q 'busy-poll.*0-1000'",
		vnetd_bin);
	ASSERT_EQ(rc, 0, "the error names the allowed range");

	if (!busy_poll_run("bpoff", NULL, &off) ||
	    !busy_poll_run("bpon", "--busy-poll=1000", &on))
		return;
	ASSERT_GE(off.frames, NOTIFY_FRAMES, "control: every frame moved");
	ASSERT_GE(on.frames, NOTIFY_FRAMES, "busy poll: every frame moved");
	ASSERT_EQ(off.busy_polls, 0, "control: no busy polling by default");
	ASSERT_GE(off.kicks, bursts / 2,
		  "control: most bursts need a kick without busy polling");
	ASSERT_GE(on.busy_polls, bursts / 2,
		  "busy poll windows found most bursts");
	ASSERT_LE(on.kicks, bursts / 4,
		  "busy polling saved most of the guest's kicks");
	ASSERT_GE(on.signals, bursts * 8 / 10,
		  "busy polling keeps a signal per burst (coalescing off)");
}

/* coalescing off: EVENT_IDX alone decides, and it wins over urgency */
static void notify_tx_event_idx(void)
{
	struct coal c = { .tx_frames = 0, .tx_usecs = 0 };
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0, bursts;
	__u64 sig;
	struct vd vd;

	/* used_event is never advanced: at most the first crossing */
	if (!notify_setup(&vd, "nevidx", &c, false, &fe))
		goto out;
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	if (!tx_bursts(fe, NOTIFY_FRAMES / 2, NOTIFY_BURST, BULK, false,
		       &seq) ||
	    !tx_bursts(fe, NOTIFY_FRAMES / 2, NOTIFY_BURST, URGENT, false,
		       &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 50, &st,
	       &d);
	sig = st.signals - st0.signals;
	dbg("event_idx frozen: %llu signals, %llu suppressed, %llu batches\n",
	    (unsigned long long)sig,
	    (unsigned long long)(d.notify_suppressed - d0.notify_suppressed),
	    (unsigned long long)(d.batches - d0.batches));
	ASSERT_LE(sig, 2, "used_event never advanced: signals stay at ~1");
	ASSERT_GE(d.notify_suppressed - d0.notify_suppressed,
		  NOTIFY_FRAMES / NOTIFY_BURST / 2, "notify_suppressed");
	ASSERT_EQ(d.notify_sent - d0.notify_sent, sig,
		  "dp_stats notify_sent = call-eventfd signals");

	/* used_event re-armed after every burst: one signal per update */
	st0 = st;
	d0 = d;
	bursts = 250 / NOTIFY_BURST + 1;
	if (!tx_bursts(fe, 250, NOTIFY_BURST, BULK, true, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 50, &st,
	       &d);
	sig = st.signals - st0.signals;
	dbg("event_idx re-armed: %llu signals for %u bursts, %llu batches\n",
	    (unsigned long long)sig, bursts,
	    (unsigned long long)(d.batches - d0.batches));
	ASSERT_GE(sig, bursts * 8 / 10,
		  "no coalescing: a signal per burst");
	ASSERT_LE(sig, d.batches - d0.batches,
		  "signals <= used-ring updates");
	ASSERT_LE(sig, 250, "signals <= used buffers");
out:
	if (fe)
		vufe_destroy(fe);
	vd_cleanup(&vd);
}

/* a single frame is signalled eventually, by the timer */
static void notify_tx_single(void)
{
	struct coal c = { .tx_frames = 64, .tx_usecs = 1000 };
	static __u8 f[256];
	struct vufe_vq_stats st0;
	struct vnet_dp_stats d0, d;
	struct vufe *fe = NULL;
	unsigned int seq = 0, i;
	struct vd vd;

	if (!notify_setup(&vd, "nsingle", &c, true, &fe))
		goto out;
	/*
	 * The guest waits for the interrupt: it does not look at the used
	 * ring first (a guest that consumed the completion and re-armed
	 * after it has asked for no signal, and EVENT_IDX wins).
	 */
	for (i = 0; i < 2; i++) {
		size_t len = udp_frame(f, nobody_mac, guest_mac, 30000, seq++);

		vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
		dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
		if (!ASSERT_OK(tx_send(fe, 0, NULL, f, len, 0), "send"))
			goto out;
		if (!ASSERT_OK(vufe_wait_signals(fe, VUFE_TXQ(0),
						 st0.signals + 1, 5000),
			       "one frame, tx-frames 64: signalled within 5 s"))
			goto out;
		dps_read(&vd.port[0], VNET_DIR_TX, 0, &d);
		ASSERT_GE(d.notify_timer - d0.notify_timer, 1,
			  "notify_timer");
		if (!ASSERT_OK(tx_wait_idle(fe, 0, WAIT_MS), "TX used"))
			goto out;
	}
out:
	if (fe)
		vufe_destroy(fe);
	vd_cleanup(&vd);
}

/* guest RX: rx-frames coalescing, PSH bypass, timer */
static void notify_rx(void)
{
	struct coal c = { .rx_frames = 8, .rx_usecs = 50000 };
	static __u8 f[256], got[FRAME_MAX];
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vnet_queue_state q0, q1;
	struct vufe *fe = NULL;
	unsigned int i, k, frames = 256, burst = 2;
	__u16 sport = 30000;
	struct vd vd;
	int pfd = -1;
	__u64 sig;
	ssize_t n;

	if (!notify_setup(&vd, "nrx", &c, true, &fe))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	vufe_post_rx(fe, 0, 0);

	/*
	 * bulk: bursts of 2 UDP frames, each received before the next, so
	 * that signalling every burst (no coalescing) would give frames / 2
	 */
	vufe_vq_stats(fe, VUFE_RXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	for (i = 0; i < frames; i += burst) {
		for (k = 0; k < burst; k++) {
			size_t len = udp_frame(f, guest_mac, host_mac, sport,
					       i + k);

			if (!ASSERT_OK(pkt_send(pfd, NULL, f, len), "send"))
				goto out;
		}
		for (k = 0; k < burst; k++) {
			n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL,
				       NULL, match_sport, &sport, WAIT_MS);
			if (n < 0) {
				test_fail("RX frame %u: %s", i + k,
					  n == -ETIMEDOUT ? "timeout" :
							    vufe_strerror(fe));
				goto out;
			}
		}
	}
	settle(fe, &vd.port[0], VUFE_RXQ(0), VNET_DIR_RX, &st0, &d0, 150, &st,
	       &d);
	sig = st.signals - st0.signals;
	dbg("rx bulk: %llu signals for %u frames (frames %llu timer %llu urgent %llu batches %llu)\n",
	    (unsigned long long)sig, frames,
	    (unsigned long long)(d.notify_frames - d0.notify_frames),
	    (unsigned long long)(d.notify_timer - d0.notify_timer),
	    (unsigned long long)(d.notify_urgent - d0.notify_urgent),
	    (unsigned long long)(d.batches - d0.batches));
	ASSERT_LE(sig, frames / 8 + 8,
		  "bulk RX signals <= frames / rx-frames + a few");
	ASSERT_GE(sig, 1, "bulk RX is signalled");
	ASSERT_EQ(d.notify_urgent - d0.notify_urgent, 0,
		  "no PSH bypass for UDP");
	ASSERT_EQ(d.notify_sent - d0.notify_sent, sig,
		  "dp_stats notify_sent = call-eventfd signals");

	/* one UDP frame: signalled by the timer */
	vufe_vq_stats(fe, VUFE_RXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	udp_frame(f, guest_mac, host_mac, sport, 9999);
	if (!ASSERT_OK(pkt_send(pfd, NULL, f, udp_frame(f, guest_mac,
							 host_mac, sport,
							 9999)),
		       "send"))
		goto out;
	if (!ASSERT_OK(vufe_wait_signals(fe, VUFE_RXQ(0), st0.signals + 1,
					 5000),
		       "one RX frame, rx-frames 8: signalled within 5 s"))
		goto out;
	n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL, match_sport,
		       &sport, WAIT_MS);
	ASSERT_GT(n, 0, "the frame");
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d);
	ASSERT_GE(d.notify_timer - d0.notify_timer, 1, "rx notify_timer");

	/* a PSH frame: the PSH bypass */
	vufe_vq_stats(fe, VUFE_RXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	qs_read(&vd.port[0], VNET_DIR_RX, 0, &q0);
	{
		struct l4 p = { .dst = guest_mac, .src = host_mac,
				.saddr = HOST_IP, .daddr = GUEST_IP,
				.sport = 5201, .dport = 40000,
				.proto = IPPROTO_TCP,
				.tcp_flags = TH_ACK | TH_PSH, .seq = 1,
				.plen = 100, .seed = 3 };
		__u16 psport = 5201;

		if (!ASSERT_OK(pkt_send(pfd, NULL, f, ip_frame(f, &p)), "send"))
			goto out;
		if (!ASSERT_OK(vufe_wait_signals(fe, VUFE_RXQ(0),
						 st0.signals + 1, 5000),
			       "PSH frame signalled"))
			goto out;
		n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL,
			       match_sport, &psport, WAIT_MS);
		ASSERT_GT(n, 0, "the PSH frame");
	}
	/* the counters may lag the signal by a batch: bounded wait */
	{
		long long deadline = now_ms() + WAIT_MS;

		while (dps_read(&vd.port[0], VNET_DIR_RX, 0, &d) &&
		       d.notify_urgent == d0.notify_urgent &&
		       now_ms() < deadline)
			nap_ms(2);
	}
	qs_read(&vd.port[0], VNET_DIR_RX, 0, &q1);
	dbg("rx PSH: signals %llu -> %llu, urgent %llu timer %llu frames %llu sent %llu suppressed %llu, push %llu -> %llu\n",
	    (unsigned long long)st0.signals,
	    (unsigned long long)fe_signals(fe, VUFE_RXQ(0)),
	    (unsigned long long)(d.notify_urgent - d0.notify_urgent),
	    (unsigned long long)(d.notify_timer - d0.notify_timer),
	    (unsigned long long)(d.notify_frames - d0.notify_frames),
	    (unsigned long long)(d.notify_sent - d0.notify_sent),
	    (unsigned long long)(d.notify_suppressed - d0.notify_suppressed),
	    (unsigned long long)q0.push, (unsigned long long)q1.push);
	ASSERT_GE(q1.push - q0.push, 1, "the classifier counted the PSH frame");
	ASSERT_GE(d.notify_urgent - d0.notify_urgent, 1,
		  "rx notify_urgent: PSH bypass");
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	vd_cleanup(&vd);
}

/* rings whose indices start just below the u16 wrap */
static void ring_wrap(void)
{
	struct coal c = { .tx_frames = TX_FRAMES, .tx_usecs = 50000 };
	unsigned int i, seq = 0, frames = 200;
	struct vufe_vq_stats st0, st;
	struct vnet_dp_stats d0, d;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	struct vd vd;
	int pfd = -1;
	__u64 sig;

	vd_init(&vd, "wrap", 1, 1);
	if (!vd_up(&vd) || !cfg_set(&vd.port[0], 0, &c))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	o = fe_opts(&vd.port[0]);
	if (vufe_create(&o, &fe)) {
		test_fail("vufe_create: %s", vufe_strerror(NULL));
		fe = NULL;
		goto out;
	}
	if (!ASSERT_OK(vufe_set_vring_base(fe, VUFE_RXQ(0), 65500), "RX base") ||
	    !ASSERT_OK(vufe_set_vring_base(fe, VUFE_TXQ(0), 65500), "TX base"))
		goto out;
	if (vufe_connect(fe) || vufe_setup(fe)) {
		test_fail("vhost-user setup: %s", vufe_strerror(fe));
		goto out;
	}
	vufe_post_rx(fe, 0, 0);

	/* TX coalescing and EVENT_IDX across the wrap of the used index */
	vufe_vq_stats(fe, VUFE_TXQ(0), &st0);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	if (!tx_bursts(fe, frames, NOTIFY_BURST, BULK, false, &seq))
		goto out;
	settle(fe, &vd.port[0], VUFE_TXQ(0), VNET_DIR_TX, &st0, &d0, 150, &st,
	       &d);
	sig = st.signals - st0.signals;
	dbg("wrap: TX used idx %u -> %u, %llu signals\n", st0.used_idx,
	    st.used_idx, (unsigned long long)sig);
	ASSERT_EQ(st.used_idx, (__u16)(65500 + frames), "TX used idx wrapped");
	ASSERT_LE(sig, frames / TX_FRAMES + 8,
		  "TX signals across the wrap <= frames / tx-frames + a few");
	ASSERT_GE(sig, frames / TX_FRAMES / 2,
		  "TX completions across the wrap are signalled");
	ASSERT_EQ(d.notify_sent - d0.notify_sent, sig,
		  "dp_stats notify_sent = call-eventfd signals");

	/* both ways, the RX used index wrapping too */
	for (i = 0; i < 60; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "across the wrap"))
			goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &st);
	ASSERT_LT(st.used_idx, 65500, "RX used idx wrapped");
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	vd_cleanup(&vd);
}

/* ------------------------------------------------------------------ */
/* 5. hostile input                                                    */
/* ------------------------------------------------------------------ */

struct hostile_env {
	struct vd vd;
	struct vufe *fe_b;	/* a good guest on port 1 all along */
	int pfd[2];
	__u32 id;
};

static bool hostile_up(struct hostile_env *h, const char *name)
{
	struct vufe_opts o;

	memset(h, 0, sizeof(*h));
	h->pfd[0] = h->pfd[1] = -1;
	vd_init(&h->vd, name, 2, 1);
	if (!vd_up(&h->vd))
		return false;
	h->pfd[0] = pkt_open(h->vd.ns, h->vd.port[0].tap);
	h->pfd[1] = pkt_open(h->vd.ns, h->vd.port[1].tap);
	if (!ASSERT_GE(h->pfd[0], 0, "AF_PACKET on tap 0") ||
	    !ASSERT_GE(h->pfd[1], 0, "AF_PACKET on tap 1"))
		return false;
	o = fe_opts(&h->vd.port[1]);
	h->fe_b = fe_up(&o);
	if (!h->fe_b)
		return false;
	vufe_post_rx(h->fe_b, 0, 0);
	return ping_both(h->fe_b, &h->vd.port[1], 0, h->pfd[1], h->id++,
			 "port 1 before");
}

static void hostile_down(struct hostile_env *h)
{
	if (h->fe_b)
		vufe_destroy(h->fe_b);
	close_fd(&h->pfd[0]);
	close_fd(&h->pfd[1]);
	vd_cleanup(&h->vd);
}

/* a fresh good guest on port 0 */
static struct vufe *hostile_guest(struct hostile_env *h)
{
	struct vufe_opts o = fe_opts(&h->vd.port[0]);

	return fe_up(&o);
}

/*
 * After one hostile input: vnetd logged it, is alive, port 1 still moves
 * frames both ways, and port 0 serves a fresh guest.
 */
static bool hostile_after(struct hostile_env *h, const char *kind)
{
	char line[300], what[96];
	struct vufe *fe;
	bool ok;

	if (!vd_log_wait_line(&h->vd, line, sizeof(line), WAIT_MS)) {
		test_fail("%s: nothing logged", kind);
		return false;
	}
	dbg("%s: vnetd said: %s\n", kind, line);
	if (!vd_running(&h->vd)) {
		test_fail("%s: vnetd died (status 0x%x): %s", kind,
			  h->vd.status, vd_log_tail(&h->vd));
		return false;
	}
	snprintf(what, sizeof(what), "%s: port 1", kind);
	if (!ping_both(h->fe_b, &h->vd.port[1], 0, h->pfd[1], h->id++, what))
		return false;
	fe = hostile_guest(h);
	if (!fe) {
		test_fail("%s: port 0 does not serve a new guest: %s", kind,
			  vd_log_tail(&h->vd));
		return false;
	}
	vufe_post_rx(fe, 0, 0);
	snprintf(what, sizeof(what), "%s: port 0 afterwards", kind);
	ok = ping_both(fe, &h->vd.port[0], 0, h->pfd[0], h->id++, what);
	vufe_destroy(fe);
	return ok;
}

/* the ring that was not broken still moves frames on this connection */
static bool other_ring_alive(struct hostile_env *h, struct vufe *fe,
			     bool rx_broken, const char *kind)
{
	static __u8 f[512], got[FRAME_MAX];
	long long id = 0x20000000 + h->id++;
	char what[96];
	ssize_t n;

	snprintf(what, sizeof(what), "%s: the %s ring of the same guest", kind,
		 rx_broken ? "TX" : "RX");
	if (rx_broken) {
		test_frame(f, 400, nobody_mac, guest_mac, (__u32)id);
		if (tx_send(fe, 0, NULL, f, 400, 0)) {
			test_fail("%s: %s", what, vufe_strerror(fe));
			return false;
		}
		return tap_expect(h->pfd[0], f, 400, WAIT_MS, what);
	}
	if (vufe_post_rx(fe, 0, 0) <= 0) {
		test_fail("%s: post RX: %s", what, vufe_strerror(fe));
		return false;
	}
	test_frame(f, 400, guest_mac, host_mac, (__u32)id);
	if (!ASSERT_OK(pkt_send(h->pfd[0], NULL, f, 400), what))
		return false;
	n = guest_recv(fe, 1, got, sizeof(got), NULL, NULL, NULL, match_id,
		       &id, WAIT_MS);
	if (n < 0) {
		test_fail("%s: frame lost: %s", what,
			  n == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
		return false;
	}
	return ASSERT_EQ(n, 400, what) && ASSERT_MEMEQ(got, f, 400, what);
}

static const struct {
	enum vufe_hostile_ring kind;
	const char *name;
} ring_cases[] = {
	{ VUFE_BAD_DESC_OOB, "desc_oob" },
	{ VUFE_BAD_DESC_STRADDLE, "desc_straddle" },
	{ VUFE_BAD_DESC_LOOP, "desc_loop" },
	{ VUFE_BAD_DESC_NEXT_OOB, "desc_next_oob" },
	{ VUFE_BAD_INDIRECT_OOB, "indirect_oob" },
	{ VUFE_BAD_INDIRECT_ENTRY, "indirect_entry" },
	{ VUFE_BAD_INDIRECT_LEN, "indirect_len" },
	{ VUFE_BAD_INDIRECT_NESTED, "indirect_nested" },
	{ VUFE_BAD_HEAD_OOB, "head_oob" },
	{ VUFE_BAD_AVAIL_JUMP, "avail_jump" },
};

static __u64 bad_drops(const struct vnet_dp_stats *d)
{
	return d->drops[VNET_DROP_BAD_DESC] + d->drops[VNET_DROP_BROKEN];
}

static void hostile_ring(void)
{
	static __u8 f[256];
	struct vnet_dp_stats d0, d;
	struct hostile_env h;
	unsigned int i, rx;

	if (!hostile_up(&h, "hring"))
		goto out;
	for (rx = 0; rx < 2; rx++) {
		for (i = 0; i < sizeof(ring_cases) / sizeof(ring_cases[0]);
		     i++) {
			unsigned int vq = rx ? VUFE_RXQ(0) : VUFE_TXQ(0);
			__u32 dir = rx ? VNET_DIR_RX : VNET_DIR_TX;
			char kind[64];
			long long deadline;
			struct vufe *fe;
			int err;

			/* on RX: the four kinds that reach the RX ring walk */
			if (rx && ring_cases[i].kind != VUFE_BAD_DESC_OOB &&
			    ring_cases[i].kind != VUFE_BAD_DESC_LOOP &&
			    ring_cases[i].kind != VUFE_BAD_INDIRECT_OOB &&
			    ring_cases[i].kind != VUFE_BAD_AVAIL_JUMP)
				continue;
			snprintf(kind, sizeof(kind), "%s %s",
				 rx ? "rx" : "tx", ring_cases[i].name);
			fe = hostile_guest(&h);
			if (!fe)
				goto out;
			/* every message of the setup is handled */
			if (!ASSERT_EQ(vufe_backend_alive(fe, WAIT_MS), 1,
				       "backend answers")) {
				vufe_destroy(fe);
				goto out;
			}
			dps_read(&h.vd.port[0], dir, 0, &d0);
			vd_log_mark(&h.vd);
			err = vufe_hostile_ring(fe, vq, ring_cases[i].kind);
			if (err < 0) {
				test_fail("%s: %s", kind, vufe_strerror(fe));
				vufe_destroy(fe);
				goto out;
			}
			/* RX rings are only read when a frame comes */
			if (rx) {
				size_t len = udp_frame(f, guest_mac, host_mac,
						       31000, i);

				pkt_send(h.pfd[0], NULL, f, len);
			}
			deadline = now_ms() + WAIT_MS;
			while (dps_read(&h.vd.port[0], dir, 0, &d) &&
			       bad_drops(&d) == bad_drops(&d0) &&
			       now_ms() < deadline)
				nap_ms(2);
			dbg("%s: drops bad_desc %llu broken %llu\n", kind,
			    (unsigned long long)d.drops[VNET_DROP_BAD_DESC],
			    (unsigned long long)d.drops[VNET_DROP_BROKEN]);
			if (!ASSERT_GT(bad_drops(&d), bad_drops(&d0), kind) ||
			    !other_ring_alive(&h, fe, rx, kind)) {
				vufe_destroy(fe);
				goto out;
			}
			vufe_destroy(fe);
			if (!hostile_after(&h, kind))
				goto out;
		}
	}
out:
	hostile_down(&h);
}

#define BAD_MSG_VRING_ADDR ((enum vufe_hostile_msg)1000)

static const struct {
	enum vufe_hostile_msg kind;
	const char *name;
} msg_cases[] = {
	{ VUFE_BAD_MSG_TRUNCATED, "truncated" },
	{ VUFE_BAD_MSG_CLOSE_SHORT, "close_short" },
	{ VUFE_BAD_MSG_OVERSIZE, "oversize" },
	{ VUFE_BAD_MSG_KICK_2FDS, "kick_2fds" },
	{ VUFE_BAD_MSG_CALL_NOFD, "call_nofd" },
	{ VUFE_BAD_MSG_ADD_MEM_NOFD, "add_mem_nofd" },
	{ VUFE_BAD_MSG_MEM_TABLE_FDS, "mem_table_fds" },
	{ VUFE_BAD_MSG_VRING_IDX, "vring_idx" },
	{ VUFE_BAD_MSG_VRING_NUM, "vring_num" },
	{ VUFE_BAD_MSG_UNKNOWN, "unknown" },
	{ BAD_MSG_VRING_ADDR, "vring_addr" },
};

/*
 * RX ring 0 stopped (GET_VRING_BASE), given ring addresses that are in no
 * memory region, then started again (SET_VRING_KICK): the start must fail
 * on that ring alone.
 */
static int bad_vring_addr(struct vufe *fe)
{
	struct vhost_vring_state st = { .index = 0 };
	struct vhost_vring_addr a = {
		.index = 0,
		.desc_user_addr = 0xdead0000,
		.used_user_addr = 0xdead1000,
		.avail_user_addr = 0xdead2000,
	};
	__u64 idx = 0;
	__u32 size;
	int efd, err;

	err = vufe_send_msg(fe, VUFE_GET_VRING_BASE, VUFE_MSG_VERSION, &st,
			    sizeof(st), sizeof(st), NULL, 0);
	if (!err)
		err = vufe_recv_reply(fe, VUFE_GET_VRING_BASE, &st, sizeof(st),
				      &size);
	if (!err)
		err = vufe_send_msg(fe, VUFE_SET_VRING_ADDR, VUFE_MSG_VERSION,
				    &a, sizeof(a), sizeof(a), NULL, 0);
	if (err)
		return err;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	err = vufe_send_msg(fe, VUFE_SET_VRING_KICK, VUFE_MSG_VERSION, &idx,
			    sizeof(idx), sizeof(idx), &efd, 1);
	close(efd);
	return err;
}

static void hostile_msg(void)
{
	static __u8 f[512];
	struct hostile_env h;
	unsigned int i;

	if (!hostile_up(&h, "hmsg"))
		goto out;
	for (i = 0; i < sizeof(msg_cases) / sizeof(msg_cases[0]); i++) {
		const char *kind = msg_cases[i].name;
		struct vufe *fe;
		int err, alive;

		fe = hostile_guest(&h);
		if (!fe)
			goto out;
		if (!ASSERT_EQ(vufe_backend_alive(fe, WAIT_MS), 1,
			       "backend answers")) {
			vufe_destroy(fe);
			goto out;
		}
		vd_log_mark(&h.vd);
		if (msg_cases[i].kind == BAD_MSG_VRING_ADDR)
			err = bad_vring_addr(fe);
		else
			err = vufe_hostile_msg(fe, msg_cases[i].kind);
		if (err < 0) {
			test_fail("%s: %s", kind, vufe_strerror(fe));
			vufe_destroy(fe);
			goto out;
		}
		/* answered (kept) or closed (dropped); silence is a hang */
		alive = vufe_backend_alive(fe, WAIT_MS);
		dbg("%s: connection %s\n", kind,
		    alive == 1 ? "kept" : alive == 0 ? "dropped" : "silent");
		if (alive == 1 && msg_cases[i].kind == BAD_MSG_VRING_ADDR) {
			/* the TX ring of this guest was not touched */
			test_frame(f, 400, nobody_mac, guest_mac, 0x30000000);
			if (!ASSERT_OK(tx_send(fe, 0, NULL, f, 400, 0), kind) ||
			    !tap_expect(h.pfd[0], f, 400, WAIT_MS,
					"vring_addr: TX of the same guest")) {
				vufe_destroy(fe);
				goto out;
			}
		}
		vufe_destroy(fe);
		if (alive < 0) {
			test_fail("%s: vnetd neither answered nor closed the connection (%s)",
				  kind, strerror(-alive));
			goto out;
		}
		if (!hostile_after(&h, kind))
			goto out;
	}
out:
	hostile_down(&h);
}

/*
 * A frontend's kick, call and error fds must never hold vnetd: a pipe
 * nobody reads as the call or error fd, a blocking eventfd filled to its
 * maximum count as the call fd (with O_NONBLOCK cleared again after vnetd
 * saw it, in the "cleared" variant).  vnetd signals it (a frame delivered
 * to RX, a broken TX ring); then GET_VRING_BASE of that ring must be
 * answered within 2 s, port 1 must keep moving frames, port 0 must serve a
 * new guest, and SIGTERM must end vnetd (vd_cleanup()).
 */
enum stuck_kind { STUCK_CALL_PIPE, STUCK_ERR_PIPE, STUCK_CALL_EVENTFD,
		  STUCK_CALL_EVENTFD_CLEARED };

/* a pipe whose buffer is full, its write end blocking; -errno */
static int full_pipe(int p[2])
{
	static __u8 junk[4096];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	while (write(p[1], junk, sizeof(junk)) > 0)
		;
	if (errno != EAGAIN || fcntl(p[1], F_SETFL, 0)) {
		close(p[0]);
		close(p[1]);
		return -EIO;
	}
	return 0;
}

static int vring_fd_send(struct vufe *fe, __u32 req, unsigned int vq, int fd)
{
	__u64 u = vq;

	return vufe_send_msg(fe, req, VUFE_MSG_VERSION, &u, sizeof(u),
			     sizeof(u), &fd, 1);
}

/* GET_VRING_BASE of VQ: ms until the answer, or -1 (error, timeout) */
static long long get_base_ms(struct vufe *fe, unsigned int vq)
{
	struct vhost_vring_state st = { .index = vq };
	long long t0 = now_ms();
	__u32 size;

	if (vufe_send_msg(fe, VUFE_GET_VRING_BASE, VUFE_MSG_VERSION, &st,
			  sizeof(st), sizeof(st), NULL, 0) ||
	    vufe_recv_reply(fe, VUFE_GET_VRING_BASE, &st, sizeof(st), &size))
		return -1;
	return now_ms() - t0;
}

/* the log since the mark has NEEDLE */
static bool log_has(struct vd *vd, const char *needle)
{
	static char buf[1 << 16];
	ssize_t n = -1;
	int fd;

	fd = open(vd->log, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, buf, sizeof(buf) - 1, vd->mark);
		close(fd);
	}
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, needle);
}

static bool stuck_one(struct hostile_env *h, enum stuck_kind kind,
		      const char *name)
{
	static __u8 f[512];
	struct vufe_opts o = fe_opts(&h->vd.port[0]);
	unsigned int vq = kind == STUCK_ERR_PIPE ? VUFE_TXQ(0) : VUFE_RXQ(0);
	int pfd[2] = { -1, -1 }, efd = -1, fd;
	struct vufe_vq_stats st;
	char line[300];
	struct vufe *fe;
	long long ms, deadline;
	bool ok = false;

	o.timeout_ms = 4000;
	fe = fe_up(&o);
	if (!fe)
		return false;
	vufe_post_rx(fe, 0, 0);
	if (kind == STUCK_CALL_EVENTFD || kind == STUCK_CALL_EVENTFD_CLEARED) {
		__u64 max = 0xfffffffffffffffeULL;

		efd = eventfd(0, EFD_CLOEXEC);
		if (!ASSERT_GE(efd, 0, "eventfd") ||
		    !ASSERT_EQ(write(efd, &max, sizeof(max)), 8,
			       "eventfd filled"))
			goto out;
		fd = efd;
	} else {
		if (!ASSERT_OK(full_pipe(pfd), "full pipe"))
			goto out;
		fd = pfd[1];
	}
	if (!ASSERT_OK(vring_fd_send(fe, kind == STUCK_ERR_PIPE ?
					 VUFE_SET_VRING_ERR :
					 VUFE_SET_VRING_CALL, vq, fd),
		       name) ||
	    !ASSERT_EQ(vufe_backend_alive(fe, WAIT_MS), 1, "fd taken"))
		goto out;
	/* vnetd has it now: make the shared open file blocking again */
	if (kind == STUCK_CALL_EVENTFD_CLEARED &&
	    !ASSERT_OK(fcntl(efd, F_SETFL, 0), "O_NONBLOCK cleared"))
		goto out;
	vd_log_mark(&h->vd);
	if (kind == STUCK_ERR_PIPE) {
		/* the broken ring writes its error fd */
		if (vufe_hostile_ring(fe, vq, VUFE_BAD_DESC_OOB) < 0) {
			test_fail("%s: %s", name, vufe_strerror(fe));
			goto out;
		}
		if (!vd_log_wait_line(&h->vd, line, sizeof(line), WAIT_MS))
			dbg("%s: no log line about the broken ring\n", name);
	} else {
		/* a frame for the guest: delivered, then the call is written */
		test_frame(f, 400, guest_mac, host_mac, 0x50000000);
		if (!ASSERT_OK(pkt_send(h->pfd[0], NULL, f, 400), name))
			goto out;
		deadline = now_ms() + WAIT_MS;
		while (vufe_vq_stats(fe, VUFE_RXQ(0), &st) == 0 &&
		       st.used_idx == st.last_used && now_ms() < deadline)
			nap_ms(2);
		if (!ASSERT_NEQ(st.used_idx, st.last_used, "frame delivered"))
			goto out;
	}
	nap_ms(50); /* the queue thread is in its write now, if it blocks */
	if (kind == STUCK_CALL_EVENTFD_CLEARED) {
		/*
		 * No control message needed: the watchdog frees the thread,
		 * and the pair's TX ring moves frames again.
		 */
		deadline = now_ms() + 2000;
		while (!log_has(&h->vd, "interrupted") && now_ms() < deadline)
			nap_ms(10);
		if (!ASSERT_TRUE(log_has(&h->vd, "interrupted"),
				 "the held queue thread is interrupted") ||
		    !other_ring_alive(h, fe, true, name))
			goto out;
	}
	ms = get_base_ms(fe, vq);
	dbg("%s: GET_VRING_BASE answered after %lld ms\n", name, ms);
	if (!ASSERT_GE(ms, 0, "GET_VRING_BASE answered") ||
	    !ASSERT_LE(ms, 2000, "GET_VRING_BASE within 2 s"))
		goto out;
	/* held, interrupted, said so */
	if (kind == STUCK_CALL_EVENTFD_CLEARED &&
	    !ASSERT_TRUE(log_has(&h->vd, "the call fd blocked the queue thread"),
			 "log names the blocked call fd"))
		goto out;
	ok = true;
out:
	vufe_destroy(fe);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
	if (efd >= 0)
		close(efd);
	return ok && hostile_after(h, name);
}

static void stuck_fds(void)
{
	static const struct {
		enum stuck_kind kind;
		const char *name;
	} k[] = {
		{ STUCK_CALL_PIPE, "call fd: full pipe" },
		{ STUCK_ERR_PIPE, "error fd: full pipe" },
		{ STUCK_CALL_EVENTFD, "call fd: saturated eventfd" },
		{ STUCK_CALL_EVENTFD_CLEARED,
		  "call fd: saturated eventfd, O_NONBLOCK cleared" },
	};
	struct hostile_env h;
	unsigned int i;

	if (!hostile_up(&h, "stuck"))
		goto out;
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!stuck_one(&h, k[i].kind, k[i].name))
			break;
out:
	hostile_down(&h);
}

/*
 * A port whose tap, or whose netns, goes away while vnetd runs: vnetd
 * logs a line naming the tap, stops that port (its socket file and the
 * pins it made are removed) and the other port keeps moving frames.
 */
static bool gone_pins(const char *tap)
{
	char path[160];

	snprintf(path, sizeof(path), PIN_ROOT "/%s", tap);
	return access(path, F_OK) && errno == ENOENT;
}

static bool port_gone_check(struct vd *vd, const char *what)
{
	long long deadline = now_ms() + WAIT_MS;
	struct port *p = &vd->port[0];
	char needle[64];

	snprintf(needle, sizeof(needle), "tap %s", p->tap);
	while ((!access(p->sock, F_OK) || !gone_pins(p->tap) ||
		!log_has(vd, needle)) && now_ms() < deadline)
		nap_ms(10);
	return ASSERT_TRUE(access(p->sock, F_OK) && errno == ENOENT,
			   "the port's socket file is gone") &&
	       ASSERT_TRUE(gone_pins(p->tap), "the port's pins are gone") &&
	       ASSERT_TRUE(log_has(vd, needle), what) &&
	       ASSERT_TRUE(vd_running(vd), "vnetd still runs");
}

static void port_gone_run(bool netns)
{
	struct vufe *fe[2] = { NULL, NULL };
	char ns_b[64] = "";
	int pfd[2] = { -1, -1 };
	unsigned int i;
	struct vd vd;
	__u32 id = 0;

	vd_init(&vd, netns ? "nsgone" : "tapgone", 2, 1);
	if (netns) {
		/* port 0 in a netns of its own */
		snprintf(ns_b, sizeof(ns_b), "vnet-v-nsb-%d", getpid());
		if (sh("ip netns add %s", ns_b)) {
			test_fail("ip netns add %s failed", ns_b);
			goto out;
		}
		if (nr_made_ns < sizeof(made_ns) / sizeof(made_ns[0]))
			snprintf(made_ns[nr_made_ns++], sizeof(made_ns[0]),
				 "%s", ns_b);
		ns_sysctl(ns_b, "/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
		ns_sysctl(ns_b, "/proc/sys/net/ipv6/conf/default/disable_ipv6",
			  "1");
		snprintf(vd.port[0].ns, sizeof(vd.port[0].ns), "%s", ns_b);
	}
	if (!vd_up(&vd))
		goto out;
	for (i = 0; i < 2; i++) {
		struct vufe_opts o = fe_opts(&vd.port[i]);

		pfd[i] = pkt_open(vd.port[i].ns[0] ? vd.port[i].ns : vd.ns,
				  vd.port[i].tap);
		if (!ASSERT_GE(pfd[i], 0, "AF_PACKET on the tap"))
			goto out;
		fe[i] = fe_up(&o);
		if (!fe[i])
			goto out;
		vufe_post_rx(fe[i], 0, 0);
		if (!ping_both(fe[i], &vd.port[i], 0, pfd[i], id++, "before"))
			goto out;
	}
	vd_log_mark(&vd);
	close_fd(&pfd[0]);
	if (netns) {
		if (sh("ip netns del %s", ns_b)) {
			test_fail("ip netns del %s failed", ns_b);
			goto out;
		}
	} else if (sh("ip -n %s link del %s", vd.ns, vd.port[0].tap)) {
		test_fail("ip link del %s failed", vd.port[0].tap);
		goto out;
	}
	if (!port_gone_check(&vd, netns ? "a log line names the tap whose netns went" :
					  "a log line names the deleted tap"))
		goto out;
	dbg("vnetd said: %s\n", vd_log_tail(&vd));
	for (i = 0; i < 3; i++)
		if (!ping_both(fe[1], &vd.port[1], 0, pfd[1], id++,
			       "the other port afterwards"))
			goto out;
out:
	for (i = 0; i < 2; i++) {
		if (fe[i])
			vufe_destroy(fe[i]);
		close_fd(&pfd[i]);
	}
	vd_cleanup(&vd);
	if (ns_b[0]) {
		sh("ip netns del %s >/dev/null 2>&1", ns_b);
		for (i = 0; i < nr_made_ns; i++)
			if (!strcmp(made_ns[i], ns_b))
				made_ns[i][0] = '\0';
	}
}

static void tap_gone(void)
{
	port_gone_run(false);
}

static void netns_gone(void)
{
	port_gone_run(true);
}

/* ------------------------------------------------------------------ */
/* 6. restart                                                          */
/* ------------------------------------------------------------------ */

/* the classifier runs on the (new) tap: urgent frames are counted */
static bool classifier_live(struct vufe *fe, const struct port *p,
			    unsigned int *seq)
{
	struct vnet_queue_state q0, q1;
	long long deadline;

	qs_read(p, VNET_DIR_TX, 0, &q0);
	if (!tx_bursts(fe, 5, 5, URGENT, true, seq))
		return false;
	deadline = now_ms() + WAIT_MS;
	while (qs_read(p, VNET_DIR_TX, 0, &q1) && q1.urgent - q0.urgent < 5 &&
	       now_ms() < deadline)
		nap_ms(2);
	return ASSERT_GE(q1.urgent - q0.urgent, 5,
			 "the classifier runs on the tap");
}

static void restart(bool clean)
{
	struct vufe_vq_stats rx, tx;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	unsigned int i, seq = 0;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, clean ? "restart" : "restartk", 1, 1);
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	o = fe_opts(&vd.port[0]);
	o.timeout_ms = START_MS;	/* reconnect waits for the new vnetd */
	fe = fe_up(&o);
	if (!fe || !ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "before"))
			goto out;
	if (!classifier_live(fe, &vd.port[0], &seq))
		goto out;

	/* the frontend stops and comes back to the same vnetd */
	if (clean) {
		if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)) ||
		    !ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
			goto out;
		for (i = 100; i < 105; i++)
			if (!ping_both(fe, &vd.port[0], 0, pfd, i,
				       "frontend reconnected"))
				goto out;
	}

	if (clean) {
		if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)))
			goto out;
		vufe_vq_stats(fe, VUFE_RXQ(0), &rx);
		vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
		ASSERT_EQ(tx.base, tx.avail_idx, "TX base = frames sent");
		ASSERT_EQ(rx.base, rx.used_idx, "RX base = buffers used");
		vd_stop(&vd);
	} else {
		vd_kill(&vd, SIGKILL);
		/* it could not clean up; the next one must cope */
		vd.check_pins = false;
	}
	close_fd(&pfd);
	if (test_state.failed)
		goto out;
	if (!vd_start(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the new tap"))
		goto out;
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 10; i < 20; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "after the restart"))
			goto out;
	classifier_live(fe, &vd.port[0], &seq);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
	ASSERT_EQ(tx.used_idx, tx.avail_idx, "every TX frame used");
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	vd_cleanup(&vd);
}

static void restart_clean(void)
{
	restart(true);
}

static void restart_after_kill(void)
{
	restart(false);
}

/* --client: vnetd dials the frontend, and again when it goes away */
static void client_mode(void)
{
	struct vufe_opts o;
	struct vufe *fe = NULL;
	unsigned int i;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, "client", 1, 1);
	vd.client = true;
	o = fe_opts(&vd.port[0]);
	o.timeout_ms = START_MS;
	unlink(vd.port[0].sock);
	if (vufe_create(&o, &fe)) {
		test_fail("vufe_create: %s", vufe_strerror(NULL));
		fe = NULL;
		goto out;
	}
	if (!ASSERT_OK(vufe_listen(fe), vufe_strerror(fe)) || !vd_up(&vd))
		goto out;
	if (!ASSERT_OK(vufe_accept(fe), vufe_strerror(fe)) ||
	    !ASSERT_OK(vufe_setup(fe), vufe_strerror(fe)))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 5; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "client"))
			goto out;
	/* the frontend goes away (saved bases) and listens again */
	if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)) ||
	    !ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 5; i < 10; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "client, reconnected"))
			goto out;
	/* and once more after an abrupt hang-up */
	vufe_disconnect(fe);
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 10; i < 15; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "client, after a hang-up"))
			goto out;
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	unlink(vd.port[0].sock);
	vd_cleanup(&vd);
}

/*
 * A tap made beforehand (persistent, as libvirt makes them), plain
 * read/write instead of io_uring; vnetd stops while the guest is still
 * connected, and leaves the tap it did not create.
 */
static void existing_tap_no_uring(void)
{
	static __u8 f[FRAME_MAX];
	struct virtio_net_hdr_mrg_rxbuf hdr;
	static struct gso_flow g;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	unsigned int i;
	struct vd vd;
	int pfd = -1;
	size_t len;

	vd_init(&vd, "nouring", 1, 1);
	vd.own_tap = true;
	vd.extra = "--no-uring";
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!fe || !ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 40; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i * 37, "--no-uring"))
			goto out;
	gso_flow_init(&g, 43000, 7000);
	memset(&hdr, 0, sizeof(hdr));
	len = gso_frame(f, &hdr.hdr, nobody_mac, guest_mac, GUEST_IP, HOST_IP,
			43000, 7000);
	if (!ASSERT_OK(tx_send(fe, 0, &hdr, f, len, 0), "send GSO frame") ||
	    !tap_collect_gso(pfd, &g, 1, 5000))
		goto out;
	vd_stop(&vd);
	ASSERT_GT(ns_link(vd.ns, vd.port[0].tap, NULL), 0,
		  "the persistent tap is still there after vnetd exits");
out:
	vd_cleanup(&vd);
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
}

/* ------------------------------------------------------------------ */
/* 7. DPDK virtio-user against vnetd                                   */
/* ------------------------------------------------------------------ */

/* testpmd as a virtio-user frontend of SOCK, forwarding mode MODE */
static int pmd_start(struct testpmd *d, const char *sock, const char *mode)
{
	char vdev[200], prefix[64], fwd[64];
	const char *app[] = {
		fwd, "--auto-start", "--disable-link-check", "--nb-cores=1",
		"--total-num-mbufs=32768", NULL,
	};

	snprintf(d->log, sizeof(d->log), "/tmp/vnet-vnetd-%d-testpmd-%s.log",
		 getpid(), mode);
	snprintf(vdev, sizeof(vdev), "net_virtio_user0,path=%s,queues=1",
		 sock);
	snprintf(prefix, sizeof(prefix), "vnetdt%d%s", getpid(), mode);
	snprintf(fwd, sizeof(fwd), "--forward-mode=%s", mode);
	return testpmd_start(d, testpmd_bin("VNET_TESTPMD"), vdev, prefix,
			     1024, app);
}

/* EOF on stdin: testpmd stops, prints its statistics and exits */
static void pmd_stop(struct testpmd *d)
{
	char why[256];

	testpmd_stop(d, why, sizeof(why));
}

static void dpdk_smoke(void)
{
	static __u8 f[256];
	struct vnet_dp_stats d0, d;
	struct link_stats l0, l;
	struct testpmd pmd = TESTPMD_INIT;
	long long deadline, rxp, txp;
	unsigned int i = 0, k;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, "dpdk", 1, 1);
	if (!testpmd_bin("VNET_TESTPMD")) {
		test_skip("dpdk-testpmd not installed (apt-get install dpdk-dev librte-net-virtio23 librte-mempool-ring23)");
		return;
	}
	if (!vd_up(&vd))
		goto out;

	/* guest -> tap: txonly */
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d0);
	ns_link_stats(vd.ns, vd.port[0].tap, &l0);
	if (!ASSERT_OK(pmd_start(&pmd, vd.port[0].sock, "txonly"),
		       "start testpmd"))
		goto out;
	deadline = now_ms() + 30000;
	do {
		nap_ms(20);
		ns_link_stats(vd.ns, vd.port[0].tap, &l);
		if (!testpmd_running(&pmd))
			break;
	} while (l.rx_packets - l0.rx_packets < 10000 && now_ms() < deadline);
	pmd_stop(&pmd);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d);
	ns_link_stats(vd.ns, vd.port[0].tap, &l);
	txp = testpmd_stat(&pmd, "TX-packets:");
	dbg("txonly: testpmd TX-packets %lld, dp_stats tx frames %llu, tap rx_packets +%llu\n",
	    txp, (unsigned long long)(d.frames - d0.frames),
	    (unsigned long long)(l.rx_packets - l0.rx_packets));
	if (!ASSERT_GE(l.rx_packets - l0.rx_packets, 10000,
		       "txonly: tap rx_packets") ||
	    !ASSERT_GE(d.frames - d0.frames, 10000, "txonly: dp_stats tx") ||
	    !ASSERT_GT(txp, 0, "txonly: testpmd TX-packets") ||
	    !ASSERT_EQ(l.rx_packets - l0.rx_packets, d.frames - d0.frames,
		       "txonly: every frame vnetd moved is in the tap") ||
	    !ASSERT_EQ(d.frames - d0.frames, txp,
		       "txonly: every frame testpmd sent was moved")) {
		test_fail("testpmd log %s: vnetd: %s", pmd.log,
			  vd_log_tail(&vd));
		goto out;
	}

	/* tap -> guest: rxonly while frames go out of the tap */
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	dps_read(&vd.port[0], VNET_DIR_RX, 0, &d0);
	ns_link_stats(vd.ns, vd.port[0].tap, &l0);
	if (!ASSERT_OK(pmd_start(&pmd, vd.port[0].sock, "rxonly"),
		       "start testpmd"))
		goto out;
	deadline = now_ms() + 30000;
	do {
		for (k = 0; k < 32; k++, i++) {
			size_t len = udp_frame(f, guest_mac, host_mac, 33000,
					       i);

			pkt_send(pfd, NULL, f, len);
		}
		nap_ms(2);
		dps_read(&vd.port[0], VNET_DIR_RX, 0, &d);
		if (!testpmd_running(&pmd))
			break;
	} while (d.frames - d0.frames < 5000 && now_ms() < deadline);
	pmd_stop(&pmd);
	ns_link_stats(vd.ns, vd.port[0].tap, &l);
	rxp = testpmd_stat(&pmd, "RX-packets:");
	dbg("rxonly: testpmd RX-packets %lld, dp_stats rx frames %llu, tap tx_packets +%llu (sent %u)\n",
	    rxp, (unsigned long long)(d.frames - d0.frames),
	    (unsigned long long)(l.tx_packets - l0.tx_packets), i);
	if (!ASSERT_GE(d.frames - d0.frames, 5000, "rxonly: dp_stats rx") ||
	    !ASSERT_GT(rxp, 0, "rxonly: testpmd RX-packets") ||
	    !ASSERT_GT(l.tx_packets - l0.tx_packets, 0,
		       "rxonly: tap tx_packets"))
		test_fail("testpmd log %s: vnetd: %s", pmd.log,
			  vd_log_tail(&vd));
out:
	if (pmd.pid > 0)
		pmd_stop(&pmd);
	close_fd(&pfd);
	vd_cleanup(&vd);
	if (!test_state.failed) {
		unlink(pmd.log);
		snprintf(pmd.log, sizeof(pmd.log),
			 "/tmp/vnet-vnetd-%d-testpmd-txonly.log", getpid());
		unlink(pmd.log);
	}
}

/* ------------------------------------------------------------------ */

static const struct {
	void (*fn)(void);
	const char *name;
} cases[] = {
	{ tx_to_tap, "vnetd/tx_to_tap" },
	{ rx_from_tap_mrg, "vnetd/rx_from_tap_mrg" },
	{ rx_from_tap_nomrg, "vnetd/rx_from_tap_nomrg" },
	{ two_queue_pairs, "vnetd/two_queue_pairs" },
	{ rx_many_segs, "vnetd/rx_many_segs" },
	{ notify_tx_bulk, "vnetd/notify_tx_bulk" },
	{ notify_tx_live_change, "vnetd/notify_tx_live_change" },
	{ notify_tx_urgent, "vnetd/notify_tx_urgent" },
	{ notify_tx_urgent_no_bypass, "vnetd/notify_tx_urgent_no_bypass" },
	{ notify_paired, "vnetd/notify_paired" },
	{ notify_tx_event_idx, "vnetd/notify_tx_event_idx" },
	{ busy_poll, "vnetd/busy_poll" },
	{ notify_tx_single, "vnetd/notify_tx_single" },
	{ notify_rx, "vnetd/notify_rx" },
	{ ring_wrap, "vnetd/ring_wrap" },
	{ hostile_ring, "vnetd/hostile_ring" },
	{ hostile_msg, "vnetd/hostile_msg" },
	{ stuck_fds, "vnetd/stuck_fds" },
	{ tap_gone, "vnetd/tap_gone" },
	{ netns_gone, "vnetd/netns_gone" },
	{ restart_clean, "vnetd/restart" },
	{ restart_after_kill, "vnetd/restart_after_kill" },
	{ client_mode, "vnetd/client_mode" },
	{ existing_tap_no_uring, "vnetd/existing_tap_no_uring" },
	{ dpdk_smoke, "vnetd/dpdk_smoke" },
};

static bool find_vnetd(char *why, size_t len)
{
	const char *env = getenv("VNETD");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(vnetd_bin, sizeof(vnetd_bin), "%s", env);
	} else {
		/* build/selftests/test_vnetd -> build/vnetd-asan */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			snprintf(why, len, "readlink /proc/self/exe: %s",
				 strerror(errno));
			return false;
		}
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(vnetd_bin, sizeof(vnetd_bin), "%.*s/../vnetd-asan",
			 (int)(sizeof(vnetd_bin) - 16), self);
	}
	if (access(vnetd_bin, X_OK)) {
		snprintf(why, len, "%s: %s (make all builds it)", vnetd_bin,
			 strerror(errno));
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	char why[PATH_MAX + 64];
	unsigned int i;
	bool have;
	int opt;

	while ((opt = getopt(argc, argv, "vh")) != -1) {
		switch (opt) {
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, "usage: test_vnetd [-v] [FILTER]\n");
			return 2;
		}
	}
	if (optind < argc)
		filter = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	have = test_have_root_bpf(why, sizeof(why));
	if (have) {
		host_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (host_ns < 0) {
			snprintf(why, sizeof(why), "/proc/self/ns/net: %s",
				 strerror(errno));
			have = false;
		}
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (filter && !strstr(cases[i].name, filter))
			continue;
		test_start(cases[i].name);
		if (!have)
			test_skip("%s", why);
		else if (!find_vnetd(why, sizeof(why)))
			test_fail("%s", why);
		else
			cases[i].fn();
		test_end();
	}
	return test_summary("test_vnetd");
}
