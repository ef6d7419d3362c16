// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tapwrite: play the guest side of a multi-queue tap, the way vhost-net and
 * QEMU do, for vnet's integration tests.
 *
 * Opens /dev/net/tun once per queue on an existing persistent multi-queue
 * tap (IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE | IFF_VNET_HDR, O_NONBLOCK), so
 * that fd i is queue i, with a 12-byte virtio_net_hdr and TSO/checksum
 * offloads (GSO frames are accepted from the "guest", and the host may send
 * GSO frames to it).
 *
 *   tapwrite [-n NETNS] -d DEV [-q NQUEUES] [-t SECONDS] COMMAND...
 *
 *   send QUEUE CLASS COUNT [SIZE]   write COUNT frames of CLASS through
 *                                   QUEUE; may be repeated
 *   tcp QUEUE PORT [BYTES]          a minimal guest TCP peer, see below
 *
 * CLASS is urgent | push | ack | other | malformed | gso.  SIZE is the
 * payload of urgent, push, other (default 100) and gso (default 63712 =
 * 44 * 1448) frames.  Frames are IPv4 from 192.0.2.2 (02:00:00:00:00:02) to
 * 192.0.2.1 at 02:00:00:00:00:01, a MAC the host does not own, so that the
 * host's stack drops them after the hooks have seen them.  A gso frame is
 * one TCP segment with virtio_net_hdr GSO_TCPV4, gso_size 1448, NEEDS_CSUM:
 * vnet classifies it by its headers (urgent).
 *
 * tcp: the tool is a guest at 192.0.2.2 on queue QUEUE.  It listens on
 * 192.0.2.1:PORT in the netns (the address must be on DEV), sends a SYN to
 * it through the tap, completes the handshake with the SYN-ACK read from
 * any queue, makes the host side write BYTES (default 65536) and shut down,
 * ACKs every segment the host sends through the tap, answers the FIN and
 * then drains the queues briefly.  It reports which queue every host frame
 * came out of and how it classifies (urgent/push/ack/other/malformed, PSH or
 * not, payload or not, GSO or not) as one JSON document on stdout.
 *
 * Exit: 0 success, 1 error, 2 usage.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "frames.h"

#define MAX_QUEUES 16
#define VNET_HDR_LEN 12 /* struct virtio_net_hdr_mrg_rxbuf */
#define ETH_LEN 14
#define IP_LEN 20
#define TCP_LEN 20
#define UDP_LEN 8
#define GSO_MSS 1448
#define DEF_SIZE 100
#define DEF_GSO_SIZE (44 * GSO_MSS)
#define GSO_MAX_SIZE (65535 - IP_LEN - TCP_LEN) /* IPv4 tot_len limit */
#define DEF_TCP_BYTES 65536
#define FRAME_MAX (VNET_HDR_LEN + 65536 + 256)
#define RX_BUF (VNET_HDR_LEN + 128 * 1024)

#define TCPF_FIN 0x01
#define TCPF_SYN 0x02
#define TCPF_RST 0x04
#define TCPF_PSH 0x08
#define TCPF_ACK 0x10

enum cls { C_URGENT, C_PUSH, C_ACK, C_OTHER, C_MALFORMED, C_GSO, C_MAX };

static const char *const cls_name[C_MAX] = {
	"urgent", "push", "ack", "other", "malformed", "gso",
};

static const uint8_t guest_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t nobody_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x01 };
#define GUEST_IP 0xc0000202u /* 192.0.2.2 */
#define HOST_IP 0xc0000201u  /* 192.0.2.1 */

static const char *prog = "tapwrite";
static int fds[MAX_QUEUES];
static int nq = 2;
static const char *dev;
static double deadline_s = 20.0;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void usage(int code)
{
	FILE *f = code ? stderr : stdout;

	fprintf(f,
		"usage: %s [-n NETNS] -d DEV [-q NQUEUES] [-t SECONDS] COMMAND...\n"
		"  send QUEUE CLASS COUNT [SIZE]  (repeatable)\n"
		"       CLASS: urgent|push|ack|other|malformed|gso\n"
		"  tcp QUEUE PORT [BYTES]\n",
		prog);
	exit(code);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long parse_num(const char *s, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "%s: bad %s '%s' (%ld..%ld)\n", prog, what, s,
			min, max);
		usage(2);
	}
	return v;
}

static bool is_num(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* --- setup --------------------------------------------------------------- */

static void enter_netns(const char *name)
{
	char path[256];
	int fd;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	if (setns(fd, CLONE_NEWNET))
		die("setns %s: %s", path, strerror(errno));
	close(fd);
}

static void open_queues(void)
{
	unsigned int offload = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6;
	int hdrsz = VNET_HDR_LEN;
	struct ifreq ifr;
	int i;

	for (i = 0; i < nq; i++) {
		fds[i] = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fds[i] < 0)
			die("open /dev/net/tun: %s", strerror(errno));
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
		ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE |
				IFF_VNET_HDR;
		if (ioctl(fds[i], TUNSETIFF, &ifr))
			die("TUNSETIFF %s queue %d: %s (is it a persistent "
			    "multi_queue vnet_hdr tap?)",
			    dev, i, strerror(errno));
		if (ioctl(fds[i], TUNSETVNETHDRSZ, &hdrsz))
			die("TUNSETVNETHDRSZ: %s", strerror(errno));
		if (ioctl(fds[i], TUNSETOFFLOAD, offload))
			die("TUNSETOFFLOAD: %s", strerror(errno));
	}
}

static void host_mac(uint8_t mac[ETH_ALEN])
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		die("socket: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(s, SIOCGIFHWADDR, &ifr))
		die("SIOCGIFHWADDR %s: %s", dev, strerror(errno));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	close(s);
}

/* --- frames -------------------------------------------------------------- */

static uint32_t pseudo_sum(uint32_t saddr, uint32_t daddr, uint8_t proto,
			   uint32_t len)
{
	return (saddr >> 16) + (saddr & 0xffff) + (daddr >> 16) +
	       (daddr & 0xffff) + proto + len;
}

struct frame {
	uint8_t buf[FRAME_MAX]; /* virtio_net_hdr followed by the frame */
	size_t len;             /* frame length, without the vnet header */
};

static uint8_t *frame_data(struct frame *f)
{
	return f->buf + VNET_HDR_LEN;
}

static uint16_t ip_id;

/*
 * Ethernet + IPv4 header for an L4 payload of l4_len bytes (tot_len is
 * IP_LEN + l4_len); returns the L4 header.
 */
static uint8_t *build_ip(struct frame *f, const uint8_t *dmac, uint8_t proto,
			 uint32_t l4_len)
{
	uint8_t *eth = frame_data(f), *ip = eth + ETH_LEN;

	memset(f->buf, 0, VNET_HDR_LEN + ETH_LEN + IP_LEN);
	memcpy(eth, dmac, ETH_ALEN);
	memcpy(eth + ETH_ALEN, guest_mac, ETH_ALEN);
	frame_put16(eth, 12, ETH_P_IP);
	ip[0] = 0x45;
	frame_put16(ip, 2, IP_LEN + l4_len);
	frame_put16(ip, 4, ip_id++);
	frame_put16(ip, 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = proto;
	frame_put32(ip, 12, GUEST_IP);
	frame_put32(ip, 16, HOST_IP);
	frame_put16(ip, 10, ~frame_csum_fold(frame_csum_add(0, ip, IP_LEN)));
	f->len = ETH_LEN + IP_LEN + l4_len;
	return ip + IP_LEN;
}

struct tcp_seg {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint32_t payload;
	bool mss_opt;
	bool partial; /* NEEDS_CSUM: checksum field holds the pseudo sum */
};

static void build_tcp(struct frame *f, const uint8_t *dmac,
		      const struct tcp_seg *s)
{
	uint32_t hlen = TCP_LEN + (s->mss_opt ? 4 : 0);
	uint32_t l4 = hlen + s->payload, i;
	uint8_t *th = build_ip(f, dmac, IPPROTO_TCP, l4);
	uint32_t sum = pseudo_sum(GUEST_IP, HOST_IP, IPPROTO_TCP, l4);

	memset(th, 0, hlen);
	frame_put16(th, 0, s->sport);
	frame_put16(th, 2, s->dport);
	frame_put32(th, 4, s->seq);
	frame_put32(th, 8, s->ack);
	th[12] = (hlen / 4) << 4;
	th[13] = s->flags;
	frame_put16(th, 14, s->win);
	if (s->mss_opt) {
		th[20] = 2;
		th[21] = 4;
		frame_put16(th, 22, 1460);
	}
	for (i = 0; i < s->payload; i++)
		th[hlen + i] = 'a' + i % 26;
	if (s->partial)
		frame_put16(th, 16, frame_csum_fold(sum));
	else
		frame_put16(th, 16, ~frame_csum_fold(frame_csum_add(sum, th, l4)));
}

static void build_udp(struct frame *f, uint32_t payload)
{
	uint32_t l4 = UDP_LEN + payload, i;
	uint8_t *uh = build_ip(f, nobody_mac, IPPROTO_UDP, l4);
	uint16_t c;

	frame_put16(uh, 0, 40000);
	frame_put16(uh, 2, 9); /* discard */
	frame_put16(uh, 4, l4);
	frame_put16(uh, 6, 0);
	for (i = 0; i < payload; i++)
		uh[UDP_LEN + i] = 'u';
	c = ~frame_csum_fold(frame_csum_add(pseudo_sum(GUEST_IP, HOST_IP, IPPROTO_UDP, l4),
				uh, l4));
	frame_put16(uh, 6, c ? c : 0xffff);
}

/* IPv4 claims a TCP header and payload that the frame does not carry. */
static void build_malformed(struct frame *f, uint32_t payload)
{
	build_ip(f, nobody_mac, IPPROTO_TCP, TCP_LEN + payload);
	f->len = ETH_LEN + IP_LEN + 4; /* 4 bytes of the TCP header only */
}

static void set_gso(struct frame *f)
{
	struct virtio_net_hdr *h = (struct virtio_net_hdr *)f->buf;

	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	h->hdr_len = htole16(ETH_LEN + IP_LEN + TCP_LEN);
	h->gso_size = htole16(GSO_MSS);
	h->csum_start = htole16(ETH_LEN + IP_LEN);
	h->csum_offset = htole16(16);
}

static int write_frame(int q, struct frame *f)
{
	double end = now_s() + 2.0;
	size_t total = VNET_HDR_LEN + f->len;
	struct pollfd pfd = { .fd = fds[q], .events = POLLOUT };
	ssize_t n;

	for (;;) {
		n = write(fds[q], f->buf, total);
		if (n == (ssize_t)total)
			return 0;
		if (n >= 0) {
			fprintf(stderr,
				"%s: short write on queue %d: %zd of %zu\n",
				prog, q, n, total);
			return -EIO;
		}
		if (errno != EAGAIN && errno != EINTR) {
			int e = errno;

			fprintf(stderr, "%s: write queue %d (%zu bytes): %s\n",
				prog, q, f->len, strerror(e));
			return -e;
		}
		if (now_s() > end) {
			fprintf(stderr, "%s: write queue %d: timed out\n", prog,
				q);
			return -ETIMEDOUT;
		}
		poll(&pfd, 1, 100);
	}
}

/* --- send ---------------------------------------------------------------- */

struct send_group {
	int queue;
	enum cls cls;
	long count;
	long size;
	size_t frame_len;
};

static int cls_parse(const char *s)
{
	int i;

	for (i = 0; i < C_MAX; i++)
		if (!strcmp(s, cls_name[i]))
			return i;
	return -1;
}

static struct frame txf;

static int send_group(struct send_group *g)
{
	static uint32_t seq = 1000;
	struct tcp_seg s = {
		.sport = 40000, .dport = 5001, .ack = 1, .win = 65535,
		.flags = TCPF_ACK,
	};
	long i;
	int err;

	for (i = 0; i < g->count; i++) {
		s.seq = seq;
		s.payload = 0;
		s.partial = false;
		memset(txf.buf, 0, VNET_HDR_LEN);
		switch (g->cls) {
		case C_URGENT:
			s.payload = g->size;
			break;
		case C_PUSH:
			s.flags |= TCPF_PSH;
			s.payload = g->size;
			break;
		case C_ACK:
			break;
		case C_GSO:
			s.payload = g->size;
			s.partial = true;
			break;
		default:
			break;
		}
		if (g->cls == C_OTHER)
			build_udp(&txf, g->size);
		else if (g->cls == C_MALFORMED)
			build_malformed(&txf, g->size);
		else
			build_tcp(&txf, nobody_mac, &s);
		if (g->cls == C_GSO)
			set_gso(&txf);
		s.flags &= ~TCPF_PSH;
		seq += s.payload;
		err = write_frame(g->queue, &txf);
		if (err)
			return err;
		g->frame_len = txf.len;
	}
	return 0;
}

static int cmd_send(struct send_group *groups, int ngroups)
{
	int i, err = 0;

	for (i = 0; i < ngroups && !err; i++)
		err = send_group(&groups[i]);
	printf("{\"dev\":\"%s\",\"queues\":%d,\"sent\":[", dev, nq);
	for (i = 0; i < ngroups; i++) {
		struct send_group *g = &groups[i];

		printf("%s{\"queue\":%d,\"class\":\"%s\",\"vnet_class\":\"%s\","
		       "\"count\":%ld,\"frame_len\":%zu,\"bytes\":%zu}",
		       i ? "," : "", g->queue, cls_name[g->cls],
		       cls_name[g->cls == C_GSO ? C_URGENT : g->cls], g->count,
		       g->frame_len, g->frame_len * g->count);
	}
	printf("],\"ok\":%s}\n", err ? "false" : "true");
	return err ? 1 : 0;
}

/* --- tcp ----------------------------------------------------------------- */

struct counts {
	unsigned long frames, bytes, cls[C_MAX];
	unsigned long psh, no_psh, payload, no_payload;
};

struct tcp_state {
	int queue;
	uint16_t port, gport;
	long want;       /* bytes the host writes */
	long written;    /* ... written so far */
	long received;   /* bytes received in order */
	uint32_t iss, snd_nxt, rcv_nxt;
	bool established, fin_rcvd, fin_sent, fin_acked, shut, reset;
	int lfd, cfd;
	uint8_t hmac[ETH_ALEN];
	struct counts rx[MAX_QUEUES], tx[MAX_QUEUES];
	unsigned long syn_sent, dup_acks, ooo;
};

static void count_frame(struct counts *c, const uint8_t *p, size_t len,
			bool gso);

static int tcp_send(struct tcp_state *t, uint8_t flags, bool mss)
{
	struct tcp_seg s = {
		.sport = t->gport, .dport = t->port, .seq = t->snd_nxt,
		.ack = (flags & TCPF_ACK) ? t->rcv_nxt : 0,
		.flags = flags, .win = 65535, .mss_opt = mss,
	};
	int err;

	memset(txf.buf, 0, VNET_HDR_LEN);
	build_tcp(&txf, t->hmac, &s);
	err = write_frame(t->queue, &txf);
	if (!err)
		count_frame(&t->tx[t->queue], frame_data(&txf), txf.len, false);
	return err;
}

static void arp_reply(struct tcp_state *t, const uint8_t *req)
{
	uint8_t *eth = frame_data(&txf), *arp = eth + ETH_LEN;

	memset(txf.buf, 0, VNET_HDR_LEN + ETH_LEN + 28);
	memcpy(eth, req + ETH_ALEN, ETH_ALEN);
	memcpy(eth + ETH_ALEN, guest_mac, ETH_ALEN);
	frame_put16(eth, 12, ETH_P_ARP);
	frame_put16(arp, 0, 1);
	frame_put16(arp, 2, ETH_P_IP);
	arp[4] = 6;
	arp[5] = 4;
	frame_put16(arp, 6, 2); /* reply */
	memcpy(arp + 8, guest_mac, ETH_ALEN);
	frame_put32(arp, 14, GUEST_IP);
	memcpy(arp + 18, req + ETH_LEN + 8, ETH_ALEN); /* sender hw */
	memcpy(arp + 24, req + ETH_LEN + 14, 4);      /* sender ip */
	txf.len = ETH_LEN + 28;
	if (!write_frame(t->queue, &txf))
		count_frame(&t->tx[t->queue], eth, txf.len, false);
}

/*
 * The class vnet gives a frame (see bpf/parse.h), for the frames this test
 * produces: IPv4/IPv6 (no extension headers) TCP, UDP, ARP, anything else.
 */
static int classify(const uint8_t *p, size_t len, uint8_t *tcp_flags)
{
	uint32_t ihl, tot, doff, l4_len, off = ETH_LEN;
	uint16_t proto;
	const uint8_t *l4;
	uint8_t l4proto;

	*tcp_flags = 0;
	if (len < ETH_LEN)
		return C_MALFORMED;
	proto = frame_get16(p, 12);
	if (proto == ETH_P_ARP)
		return len - off < 28 ? C_MALFORMED : C_OTHER;
	if (proto == ETH_P_IP) {
		if (len < off + IP_LEN || p[off] >> 4 != 4)
			return C_MALFORMED;
		ihl = (p[off] & 0xf) * 4;
		tot = frame_get16(p + off, 2);
		if (ihl < IP_LEN || tot < ihl || tot > len - off)
			return C_MALFORMED;
		if (frame_get16(p + off, 6) & 0x1fff)
			return C_OTHER;
		l4proto = p[off + 9];
		l4 = p + off + ihl;
		l4_len = tot - ihl;
	} else if (proto == ETH_P_IPV6) {
		if (len < off + 40 || p[off] >> 4 != 6)
			return C_MALFORMED;
		l4_len = frame_get16(p + off, 4);
		if (l4_len > len - off - 40)
			return C_MALFORMED;
		l4proto = p[off + 6];
		l4 = p + off + 40;
	} else {
		return C_OTHER;
	}
	if (l4proto != IPPROTO_TCP)
		return (l4proto == IPPROTO_UDP && l4_len < UDP_LEN) ?
			       C_MALFORMED : C_OTHER;
	if (l4_len < TCP_LEN)
		return C_MALFORMED;
	doff = (l4[12] >> 4) * 4;
	if (doff < TCP_LEN || doff > l4_len)
		return C_MALFORMED;
	*tcp_flags = l4[13];
	if (l4_len == doff)
		return C_ACK;
	return (l4[13] & TCPF_PSH) ? C_PUSH : C_URGENT;
}

static void count_frame(struct counts *c, const uint8_t *p, size_t len,
			bool gso)
{
	uint8_t flags;
	int k = classify(p, len, &flags);

	c->frames++;
	c->bytes += len;
	c->cls[k]++;
	if (gso)
		c->cls[C_GSO]++;
	if (k == C_URGENT || k == C_PUSH || k == C_ACK) {
		if (flags & TCPF_PSH)
			c->psh++;
		else
			c->no_psh++;
		if (k == C_ACK)
			c->no_payload++;
		else
			c->payload++;
	}
}

/* One frame the host sent to the guest through queue q. */
static int tcp_input(struct tcp_state *t, int q, const uint8_t *buf,
		     size_t n)
{
	const struct virtio_net_hdr *vh = (const void *)buf;
	const uint8_t *p = buf + VNET_HDR_LEN, *ip, *th;
	size_t len = n - VNET_HDR_LEN;
	uint32_t ihl, tot, doff, seq, ack, plen;
	uint8_t flags;

	count_frame(&t->rx[q], p, len, vh->gso_type != VIRTIO_NET_HDR_GSO_NONE);

	if (len >= ETH_LEN + 28 && frame_get16(p, 12) == ETH_P_ARP &&
	    frame_get16(p + ETH_LEN, 6) == 1 &&
	    frame_get32(p + ETH_LEN, 24) == GUEST_IP) {
		arp_reply(t, p);
		return 0;
	}
	if (len < ETH_LEN + IP_LEN + TCP_LEN || frame_get16(p, 12) != ETH_P_IP)
		return 0;
	ip = p + ETH_LEN;
	ihl = (ip[0] & 0xf) * 4;
	tot = frame_get16(ip, 2);
	if (ip[9] != IPPROTO_TCP || frame_get32(ip, 16) != GUEST_IP ||
	    tot > len - ETH_LEN || ihl + TCP_LEN > tot)
		return 0;
	th = ip + ihl;
	if (frame_get16(th, 0) != t->port || frame_get16(th, 2) != t->gport)
		return 0;
	doff = (th[12] >> 4) * 4;
	if (doff < TCP_LEN || ihl + doff > tot)
		return 0;
	seq = frame_get32(th, 4);
	ack = frame_get32(th, 8);
	flags = th[13];
	plen = tot - ihl - doff;

	if (flags & TCPF_RST) {
		t->reset = true;
		return -ECONNRESET;
	}
	if (flags & TCPF_SYN) {
		if (!(flags & TCPF_ACK) || ack != t->iss + 1)
			return 0;
		if (!t->established) {
			t->established = true;
			t->rcv_nxt = seq + 1;
			t->snd_nxt = t->iss + 1;
		}
		return tcp_send(t, TCPF_ACK, false); /* (re)ACK the SYN-ACK */
	}
	if (!t->established)
		return 0;
	if ((flags & TCPF_ACK) && t->fin_sent && ack == t->snd_nxt)
		t->fin_acked = true;
	if (!plen && !(flags & TCPF_FIN))
		return 0; /* a pure ACK: nothing to acknowledge */
	if (seq == t->rcv_nxt) {
		t->rcv_nxt += plen;
		t->received += plen;
		if (flags & TCPF_FIN) {
			t->rcv_nxt++;
			t->fin_rcvd = true;
		}
	} else {
		t->ooo++;
		t->dup_acks++;
	}
	if (t->fin_rcvd && !t->fin_sent) {
		t->fin_sent = true;
		if (tcp_send(t, TCPF_FIN | TCPF_ACK, false))
			return -EIO;
		t->snd_nxt++; /* the FIN takes one sequence number */
		return 0;
	}
	return tcp_send(t, TCPF_ACK, false);
}

static uint8_t rxbuf[RX_BUF];

/* Read every frame waiting on every queue; returns frames read or -errno. */
static int tcp_drain(struct tcp_state *t)
{
	int q, n = 0, err;
	ssize_t r;

	for (q = 0; q < nq; q++) {
		for (;;) {
			r = read(fds[q], rxbuf, sizeof(rxbuf));
			if (r < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				fprintf(stderr, "%s: read queue %d: %s\n",
					prog, q, strerror(errno));
				return -errno;
			}
			if (r < VNET_HDR_LEN + ETH_LEN)
				continue;
			n++;
			err = tcp_input(t, q, rxbuf, r);
			if (err)
				return err;
		}
	}
	return n;
}

static void host_io(struct tcp_state *t)
{
	static char chunk[16384];
	ssize_t w;
	long left;

	if (t->cfd < 0) {
		t->cfd = accept4(t->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (t->cfd < 0)
			return;
		memset(chunk, 'h', sizeof(chunk));
	}
	while (t->written < t->want) {
		left = t->want - t->written;
		/*
		 * MSG_MORE on all but the last chunk: the host's TCP then
		 * marks PSH on some segments only, so both urgent and push
		 * frames go to the guest.
		 */
		w = send(t->cfd, chunk,
			 left < (long)sizeof(chunk) ? (size_t)left :
						      sizeof(chunk),
			 left > (long)sizeof(chunk) ? MSG_MORE : 0);
		if (w <= 0)
			break;
		t->written += w;
	}
	if (t->written == t->want && !t->shut) {
		shutdown(t->cfd, SHUT_WR);
		t->shut = true;
	}
}

static void poll_queues(struct pollfd *pfd)
{
	int i;

	for (i = 0; i < nq; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
}

static void print_counts(const char *name, struct counts *c)
{
	int q;

	printf("\"%s\":[", name);
	for (q = 0; q < nq; q++) {
		printf("%s{\"queue\":%d,\"frames\":%lu,\"bytes\":%lu",
		       q ? "," : "", q, c[q].frames, c[q].bytes);
		printf(",\"urgent\":%lu,\"push\":%lu,\"ack\":%lu,\"other\":%lu,"
		       "\"malformed\":%lu,\"gso\":%lu",
		       c[q].cls[C_URGENT], c[q].cls[C_PUSH], c[q].cls[C_ACK],
		       c[q].cls[C_OTHER], c[q].cls[C_MALFORMED],
		       c[q].cls[C_GSO]);
		printf(",\"psh\":%lu,\"no_psh\":%lu,\"payload\":%lu,"
		       "\"no_payload\":%lu}",
		       c[q].psh, c[q].no_psh, c[q].payload, c[q].no_payload);
	}
	printf("]");
}

static int cmd_tcp(int queue, int port, long bytes)
{
	static struct tcp_state t;
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(HOST_IP),
	};
	struct pollfd pfd[MAX_QUEUES + 2];
	double start = now_s(), syn_at = 0, done_at = 0, end;
	const char *error = NULL;
	int one = 1, n, err = 0;

	t.queue = queue;
	t.port = port;
	t.gport = 40000 + (getpid() % 20000);
	t.want = bytes;
	t.iss = 0x10000000u + (uint32_t)getpid() * 7919u;
	t.snd_nxt = t.iss;
	t.cfd = -1;
	host_mac(t.hmac);

	t.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t.lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(t.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(t.lfd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind 192.0.2.1:%d: %s (is 192.0.2.1/24 on %s?)", port,
		    strerror(errno), dev);
	if (listen(t.lfd, 4))
		die("listen: %s", strerror(errno));

	end = start + deadline_s;
	for (;;) {
		double now = now_s();

		if (now > end) {
			error = "timed out";
			break;
		}
		if (!t.established && now - syn_at > 1.0) {
			if (t.syn_sent >= 5) {
				error = "no SYN-ACK";
				break;
			}
			t.snd_nxt = t.iss;
			if (tcp_send(&t, TCPF_SYN, true)) {
				error = "cannot write the SYN";
				break;
			}
			t.syn_sent++;
			syn_at = now;
		}
		if (t.fin_sent && !done_at)
			done_at = now;
		/* after our FIN: wait for its ACK, at most 1 s */
		if (done_at && (t.fin_acked || now - done_at > 1.0))
			break;

		poll_queues(pfd);
		pfd[nq] = (struct pollfd){ .fd = t.lfd, .events = POLLIN };
		pfd[nq + 1] = (struct pollfd){
			.fd = t.cfd,
			.events = (t.cfd >= 0 && !t.shut) ? POLLOUT : 0,
		};
		n = poll(pfd, nq + 2, 50);
		if (n < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		err = tcp_drain(&t);
		if (err < 0) {
			error = t.reset ? "connection reset by the host" :
					  "tap read/write failed";
			break;
		}
		host_io(&t);
	}

	/* drain late frames for 200 ms so that every frame is counted */
	end = now_s() + 0.2;
	while (!t.reset && now_s() < end) {
		poll_queues(pfd);
		poll(pfd, nq, 20);
		if (tcp_drain(&t) < 0)
			break;
	}

	if (!error && t.received != t.want)
		error = "short transfer";
	printf("{\"mode\":\"tcp\",\"dev\":\"%s\",\"queues\":%d,\"queue\":%d,"
	       "\"port\":%d,\"bytes_requested\":%ld,\"bytes_written\":%ld,"
	       "\"bytes_received\":%ld,\"established\":%s,\"fin_acked\":%s,"
	       "\"syn_sent\":%lu,\"out_of_order\":%lu,\"seconds\":%.3f,"
	       "\"complete\":%s,\"error\":",
	       dev, nq, queue, port, t.want, t.written, t.received,
	       t.established ? "true" : "false",
	       t.fin_acked ? "true" : "false", t.syn_sent, t.ooo,
	       now_s() - start, error ? "false" : "true");
	if (error)
		printf("\"%s\",", error);
	else
		printf("null,");
	print_counts("rx", t.rx);
	printf(",");
	print_counts("tx", t.tx);
	printf("}\n");
	if (t.cfd >= 0)
		close(t.cfd);
	close(t.lfd);
	return error ? 1 : 0;
}

/* --- main ---------------------------------------------------------------- */

#define MAX_GROUPS 64

int main(int argc, char **argv)
{
	static struct send_group groups[MAX_GROUPS];
	const char *netns = NULL;
	int ngroups = 0, opt, i, tcp_queue = -1, tcp_port = 0;
	long tcp_bytes = DEF_TCP_BYTES;

	while ((opt = getopt(argc, argv, "+n:d:q:t:h")) != -1) {
		switch (opt) {
		case 'n':
			netns = optarg;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'q':
			nq = parse_num(optarg, 1, MAX_QUEUES, "queue count");
			break;
		case 't':
			deadline_s = parse_num(optarg, 1, 600, "timeout");
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (!dev || strlen(dev) >= IFNAMSIZ || optind >= argc)
		usage(2);

	for (i = optind; i < argc;) {
		if (!strcmp(argv[i], "send")) {
			struct send_group *g;
			int c;

			if (i + 3 >= argc || ngroups == MAX_GROUPS ||
			    tcp_queue >= 0)
				usage(2);
			g = &groups[ngroups++];
			g->queue = parse_num(argv[i + 1], 0, nq - 1, "queue");
			c = cls_parse(argv[i + 2]);
			if (c < 0) {
				fprintf(stderr, "%s: unknown class '%s'\n",
					prog, argv[i + 2]);
				usage(2);
			}
			g->cls = c;
			g->count = parse_num(argv[i + 3], 0, 1000000, "count");
			g->size = c == C_GSO ? DEF_GSO_SIZE : DEF_SIZE;
			i += 4;
			if (i < argc && is_num(argv[i]))
				g->size = parse_num(argv[i++], 0,
						    c == C_GSO ? GSO_MAX_SIZE :
								 9000,
						    "size");
		} else if (!strcmp(argv[i], "tcp")) {
			if (i + 2 >= argc || ngroups || tcp_queue >= 0)
				usage(2);
			tcp_queue = parse_num(argv[i + 1], 0, nq - 1, "queue");
			tcp_port = parse_num(argv[i + 2], 1, 65535, "port");
			i += 3;
			if (i < argc && is_num(argv[i]))
				tcp_bytes = parse_num(argv[i++], 1, 1L << 30,
						      "bytes");
		} else {
			fprintf(stderr, "%s: unknown command '%s'\n", prog,
				argv[i]);
			usage(2);
		}
	}

	if (netns)
		enter_netns(netns);
	open_queues();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (tcp_queue >= 0)
		return cmd_tcp(tcp_queue, tcp_port, tcp_bytes);
	return cmd_send(groups, ngroups);
}
