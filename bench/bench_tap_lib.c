// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bench_tap: configurations, frame sizes, frames, namespace, tap, CPU, io_uring */
#include "bench_tap.h"


/* ------------------------------------------------------------------ */
/* configurations and frame sizes */

const char *const cfg_name[CFG_MAX] = {
	[CFG_NONE] = "none",
	[CFG_EMPTY_XDP] = "empty-xdp",
	[CFG_VNET_XDP] = "vnet-xdp",
	[CFG_EMPTY_TC] = "empty-tc",
	[CFG_VNET_TC] = "vnet-tc",
	[CFG_GUARD_TC] = "vnet-tc-guard",
	[CFG_SHARED_TC] = "vnet-tc-shared",
	[CFG_EMPTY_CLSACT] = "empty-tc-clsact",
	[CFG_SHARED_CLSACT] = "vnet-tc-shared-clsact",
};

const char *const cfg_json[CFG_MAX] = {
	[CFG_NONE] = "none",
	[CFG_EMPTY_XDP] = "empty_xdp",
	[CFG_VNET_XDP] = "vnet_xdp",
	[CFG_EMPTY_TC] = "empty_tc",
	[CFG_VNET_TC] = "vnet_tc",
	[CFG_GUARD_TC] = "vnet_tc_guard",
	[CFG_SHARED_TC] = "vnet_tc_shared",
	[CFG_EMPTY_CLSACT] = "empty_tc_clsact",
	[CFG_SHARED_CLSACT] = "vnet_tc_shared_clsact",
};

bool cfg_is_vnet(enum cfg c)
{
	return c == CFG_VNET_XDP || c == CFG_VNET_TC || c == CFG_GUARD_TC ||
	       c == CFG_SHARED_TC || c == CFG_SHARED_CLSACT;
}

enum cfg cfg_by_name(const char *name)
{
	enum cfg c;

	for (c = 0; c < CFG_MAX; c++)
		if (!strcmp(name, cfg_name[c]))
			break;
	return c;
}

const char *const sz_name[SZ_MAX] = {
	[SZ_64] = "64B",
	[SZ_1500] = "1500B",
	[SZ_GSO] = "64KB-GSO",
};

const char *const sz_json[SZ_MAX] = {
	[SZ_64] = "64",
	[SZ_1500] = "1500",
	[SZ_GSO] = "gso64k",
};

const unsigned int sz_frame_len[SZ_MAX] = {
	[SZ_64] = 64,
	[SZ_1500] = ETH_LEN + 1500,
	[SZ_GSO] = HDRS_LEN + GSO_SEGS * GSO_MSS,
};

/* ------------------------------------------------------------------ */
/* small helpers */

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct summary summarise(const double *v, int n)
{
	struct summary s = { NAN, NAN, NAN };
	double tmp[MAX_REPS];

	if (n <= 0)
		return s;
	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	s.min = tmp[0];
	s.max = tmp[n - 1];
	s.med = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	return s;
}

int libbpf_print(enum libbpf_print_level level, const char *fmt,
		 va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ------------------------------------------------------------------ */
/* frames */

int build_frame(struct frame *f, enum size sz,
		const unsigned char *tap_mac)
{
	unsigned char dst[ETH_ALEN] = { 0x02, 0x76, 0x6e, 0x65, 0x74, 0x02 };
	unsigned char src[ETH_ALEN] = { 0x02, 0x76, 0x6e, 0x65, 0x74, 0x01 };
	static const unsigned char saddr[4] = { 10, 0, 0, 1 };
	static const unsigned char daddr[4] = { 10, 0, 0, 2 };
	struct virtio_net_hdr_mrg_rxbuf *vh;
	unsigned int ip_len, tcp_len, i;
	unsigned char *eth, *ip, *tcp;
	uint32_t sum;
	bool gso = sz == SZ_GSO;

	if (!memcmp(dst, tap_mac, ETH_ALEN))
		dst[5] ^= 0x80;

	f->eth_len = sz_frame_len[sz];
	f->len = VNET_HDR_LEN + f->eth_len;
	f->buf = aligned_alloc(4096, (f->len + 4095) & ~4095u);
	if (!f->buf)
		return -ENOMEM;
	memset(f->buf, 0, f->len);

	vh = (void *)f->buf;
	eth = f->buf + VNET_HDR_LEN;
	ip = eth + ETH_LEN;
	tcp = ip + IP_LEN;
	ip_len = f->eth_len - ETH_LEN;
	tcp_len = ip_len - IP_LEN;

	memcpy(eth, dst, ETH_ALEN);
	memcpy(eth + ETH_ALEN, src, ETH_ALEN);
	frame_put16(eth, 12, ETH_P_IP);

	ip[0] = 0x45;
	frame_put16(ip, 2, ip_len);
	frame_put16(ip, 4, 0x1234);
	frame_put16(ip, 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	memcpy(ip + 12, saddr, 4);
	memcpy(ip + 16, daddr, 4);
	frame_put16(ip, 10, ~frame_csum_fold(frame_csum_add(0, ip, IP_LEN)) & 0xffff);

	frame_put16(tcp, 0, 40000);
	frame_put16(tcp, 2, 5201);
	frame_put16(tcp, 4, 0x0001);
	frame_put16(tcp, 8, 0x0002);
	tcp[12] = (TCP_LEN / 4) << 4;
	tcp[13] = 0x10; /* ACK, PSH clear: URGENT */
	frame_put16(tcp, 14, 65535);
	for (i = TCP_LEN; i < tcp_len; i++)
		tcp[i] = (unsigned char)i;

	/* pseudo header */
	sum = frame_csum_add(0, ip + 12, 8);
	sum += IPPROTO_TCP + tcp_len;
	if (gso) {
		/* CHECKSUM_PARTIAL: the field holds the pseudo-header sum */
		frame_put16(tcp, 16, frame_csum_fold(sum));
		vh->hdr.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->hdr.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
		vh->hdr.hdr_len = htole16(HDRS_LEN);
		vh->hdr.gso_size = htole16(GSO_MSS);
		vh->hdr.csum_start = htole16(ETH_LEN + IP_LEN);
		/* offsetof(struct tcphdr, check) */
		vh->hdr.csum_offset = htole16(16);
	} else {
		frame_put16(tcp, 16, ~frame_csum_fold(frame_csum_add(sum, tcp, tcp_len)) &
					0xffff);
		vh->hdr.gso_type = VIRTIO_NET_HDR_GSO_NONE;
	}
	vh->num_buffers = 0;
	f->buf_index = sz;
	return 0;
}

/* ------------------------------------------------------------------ */
/* namespace, tap, CPU */

int pin_cpu(int *cpu)
{
	cpu_set_t set;
	int i;

	if (*cpu < 0) {
		/* default: the highest CPU we may run on */
		if (sched_getaffinity(0, sizeof(set), &set)) {
			i = -errno;
			info("bench_tap: sched_getaffinity: %s\n",
			     strerror(-i));
			return i;
		}
		for (i = CPU_SETSIZE - 1; i >= 0; i--)
			if (CPU_ISSET(i, &set))
				break;
		*cpu = i;
	}
	CPU_ZERO(&set);
	CPU_SET(*cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		i = -errno;
		info("bench_tap: cannot pin to CPU %d: %s\n", *cpu,
		     strerror(-i));
		return i;
	}
	return 0;
}

int create_tap(struct bench *b, unsigned char *mac)
{
	unsigned int offload = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6;
	int hdr_sz = VNET_HDR_LEN, le = 1, sk = -1, err;
	struct ifreq ifr;

	b->tap_fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (b->tap_fd < 0) {
		err = -errno;
		info("bench_tap: open /dev/net/tun: %s\n", strerror(errno));
		return err;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, IFNAMSIZ, "vnetbench0");
	if (ioctl(b->tap_fd, TUNSETIFF, &ifr)) {
		err = -errno;
		info("bench_tap: TUNSETIFF: %s\n", strerror(errno));
		return err;
	}
	snprintf(b->ifname, IFNAMSIZ, "%s", ifr.ifr_name);
	if (ioctl(b->tap_fd, TUNSETVNETHDRSZ, &hdr_sz)) {
		err = -errno;
		info("bench_tap: TUNSETVNETHDRSZ %d: %s\n", hdr_sz,
		     strerror(errno));
		return err;
	}
	/* VIRTIO_F_VERSION_1: the header is little endian on every host */
	if (ioctl(b->tap_fd, TUNSETVNETLE, &le)) {
		err = -errno;
		info("bench_tap: TUNSETVNETLE: %s\n", strerror(errno));
		return err;
	}
	if (ioctl(b->tap_fd, TUNSETOFFLOAD, offload)) {
		err = -errno;
		info("bench_tap: TUNSETOFFLOAD csum|tso4|tso6: %s\n",
		     strerror(errno));
		return err;
	}

	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sk < 0) {
		err = -errno;
		info("bench_tap: socket: %s\n", strerror(errno));
		return err;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", b->ifname);
	if (ioctl(sk, SIOCGIFHWADDR, &ifr)) {
		err = -errno;
		info("bench_tap: SIOCGIFHWADDR %s: %s\n", b->ifname,
		     strerror(errno));
		goto out;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	if (ioctl(sk, SIOCGIFFLAGS, &ifr)) {
		err = -errno;
		info("bench_tap: SIOCGIFFLAGS %s: %s\n", b->ifname,
		     strerror(errno));
		goto out;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr)) {
		err = -errno;
		info("bench_tap: SIOCSIFFLAGS %s up: %s\n", b->ifname,
		     strerror(errno));
		goto out;
	}
	b->ifindex = if_nametoindex(b->ifname);
	if (!b->ifindex) {
		err = -errno;
		info("bench_tap: if_nametoindex %s: %s\n", b->ifname,
		     strerror(errno));
		goto out;
	}
	err = 0;
out:
	close(sk);
	return err;
}

/* ------------------------------------------------------------------ */
/* io_uring */

const unsigned int try_flags[] = {
	IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
		IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
	0,
};

int setup_ring(struct bench *b)
{
	struct iovec iov[SZ_MAX];
	unsigned int entries = 1, nbuf = 0;
	struct io_uring_params p;
	int err, i;

	while (entries < b->o.batch)
		entries <<= 1;

	err = -EINVAL;
	for (i = 0; i < (int)(sizeof(try_flags) / sizeof(try_flags[0]));
	     i++) {
		memset(&p, 0, sizeof(p));
		p.flags = try_flags[i] | IORING_SETUP_CQSIZE;
		p.cq_entries = entries * 2;
		err = io_uring_queue_init_params(entries, &b->ring, &p);
		if (!err) {
			b->ring_flags = try_flags[i];
			break;
		}
	}
	if (err) {
		info("bench_tap: io_uring_queue_init: %s%s\n", strerror(-err),
		     err == -EPERM ? " (kernel.io_uring_disabled?)" : "");
		return err;
	}
	b->ring_ok = true;

	err = io_uring_register_files(&b->ring, &b->tap_fd, 1);
	if (err) {
		info("bench_tap: io_uring_register_files: %s\n",
		     strerror(-err));
		return err;
	}
	if (!b->o.fixed)
		return 0;
	for (i = 0; i < SZ_MAX; i++) {
		iov[nbuf].iov_base = b->frames[i].buf;
		iov[nbuf].iov_len = b->frames[i].len;
		b->frames[i].buf_index = nbuf++;
	}
	err = io_uring_register_buffers(&b->ring, iov, nbuf);
	if (err) {
		info("bench_tap: io_uring_register_buffers: %s\n",
		     strerror(-err));
		return err;
	}
	return 0;
}

int write_batch(struct bench *b, const struct frame *f,
		struct counts *c)
{
	unsigned int i, head, n, seen = 0;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	for (i = 0; i < b->o.batch; i++) {
		sqe = io_uring_get_sqe(&b->ring);
		if (!sqe)
			return -EBUSY;
		if (b->o.fixed)
			io_uring_prep_write_fixed(sqe, 0, f->buf, f->len, 0,
						  f->buf_index);
		else
			io_uring_prep_write(sqe, 0, f->buf, f->len, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
	}
	ret = io_uring_submit_and_wait(&b->ring, b->o.batch);
	if (ret < 0)
		return ret;
	if ((unsigned int)ret != b->o.batch) {
		info("bench_tap: io_uring took %d of %u writes\n", ret,
		     b->o.batch);
		return -EIO;
	}
	for (;;) {
		n = 0;
		io_uring_for_each_cqe(&b->ring, head, cqe) {
			if (cqe->res == (int)f->len) {
				c->frames++;
			} else if (cqe->res == -EAGAIN) {
				c->eagain++;
			} else {
				c->errors++;
				c->last_error = cqe->res < 0 ? cqe->res : -EIO;
			}
			n++;
		}
		io_uring_cq_advance(&b->ring, n);
		seen += n;
		if (seen >= b->o.batch)
			return 0;
		ret = io_uring_wait_cqe_nr(&b->ring, &cqe, b->o.batch - seen);
		if (ret < 0)
			return ret;
	}
}

int write_for(struct bench *b, const struct frame *f, double secs,
	      struct counts *c)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	int err;

	do {
		err = write_batch(b, f, c);
		if (err) {
			info("bench_tap: io_uring submit: %s\n",
			     strerror(-err));
			return err;
		}
		if (c->errors) {
			info("bench_tap: write of a %u-byte frame into %s failed: %s\n",
			     f->len, b->ifname, strerror(-c->last_error));
			return c->last_error;
		}
	} while (now_ns() < end);
	return 0;
}

int count_iowq_workers(void)
{
	char path[300], comm[64];
	struct dirent *de;
	int n = 0, fd;
	ssize_t len;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (len <= 0)
			continue;
		comm[len] = 0;
		if (!strncmp(comm, "iou-wrk", 7))
			n++;
	}
	closedir(d);
	return n;
}
