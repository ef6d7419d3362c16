// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* tapwrite: options, the tap queues, frames */
#include "tapwrite.h"


const char *const cls_name[C_MAX] = {
	"urgent", "push", "ack", "other", "malformed", "gso",
};

const uint8_t guest_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x02 };
const uint8_t nobody_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x01 };

const char *prog = "tapwrite";
int fds[MAX_QUEUES];
int nq = 2;
const char *dev;
double deadline_s = 20.0;

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void usage(int code)
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

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

long parse_num(const char *s, long min, long max, const char *what)
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

bool is_num(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* --- setup --------------------------------------------------------------- */

void enter_netns(const char *name)
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

void open_queues(void)
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

void host_mac(uint8_t mac[ETH_ALEN])
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

uint32_t pseudo_sum(uint32_t saddr, uint32_t daddr, uint8_t proto,
		    uint32_t len)
{
	return (saddr >> 16) + (saddr & 0xffff) + (daddr >> 16) +
	       (daddr & 0xffff) + proto + len;
}

uint8_t *frame_data(struct frame *f)
{
	return f->buf + VNET_HDR_LEN;
}

uint16_t ip_id;

uint8_t *build_ip(struct frame *f, const uint8_t *dmac, uint8_t proto,
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

void build_tcp(struct frame *f, const uint8_t *dmac,
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

void build_udp(struct frame *f, uint32_t payload)
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

void build_malformed(struct frame *f, uint32_t payload)
{
	build_ip(f, nobody_mac, IPPROTO_TCP, TCP_LEN + payload);
	f->len = ETH_LEN + IP_LEN + 4; /* 4 bytes of the TCP header only */
}

void set_gso(struct frame *f)
{
	struct virtio_net_hdr *h = (struct virtio_net_hdr *)f->buf;

	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	h->hdr_len = htole16(ETH_LEN + IP_LEN + TCP_LEN);
	h->gso_size = htole16(GSO_MSS);
	h->csum_start = htole16(ETH_LEN + IP_LEN);
	h->csum_offset = htole16(16);
}

int write_frame(int q, struct frame *f)
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

struct frame txf;
