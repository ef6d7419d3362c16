// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_tap: frames per second written into a tap from one thread, with no
 * program, with an empty program and with vnet's classifier on the guest-TX
 * hooks (native/generic XDP and tc ingress), interleaved in one run.
 *
 * The process moves into a network namespace of its own, creates a tap there
 * (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, 12-byte virtio_net_hdr as vhost/QEMU
 * use with VIRTIO_F_VERSION_1, O_NONBLOCK so that tun may run XDP natively)
 * and writes with io_uring in batches, so that the kernel's write path and
 * not syscall entry dominates.  Frames are TCP with payload and PSH clear
 * (class URGENT, the classifier's longest path), addressed to a MAC that is
 * not the tap's: the stack drops them in ip_rcv right after the hooks, at the
 * same small cost in every configuration.  Nothing outlives the process: the
 * tap and its namespace go away with it.
 *
 * Three figures:
 *  1. wall-clock frames/s per configuration, min/median/max over the
 *     repetitions, and per-repetition ratios (median/min/max).  A
 *     repetition gives each configuration the same time, cut into short
 *     slices interleaved ABCDE EDCBA: the host's speed drifts by tens of
 *     percent over hundreds of milliseconds, and only configurations
 *     measured close together in time compare well;
 *     Each write completes inline in the writer thread (checked: no io-wq
 *     worker ever appears), so the same frames are also counted per second
 *     of the writer's CPU time, which leaves out the time other tasks or
 *     the hypervisor held the CPU; the 5% verdict uses that figure;
 *  2. the programs' own run time from the kernel (BPF_STATS_RUN_TIME), in a
 *     separate phase so that the statistics' own cost does not distort (1);
 *  3. bpf_prog_test_run_opts(repeat) on the same frames.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <liburing.h>

#include <vnet/abi.h>
#include "vnet.skel.h"
#include "bench_empty.skel.h"
#include "../selftests/frames.h"

/* UAPI headers older than 6.6 lack tcx. */
#define BENCH_TCX_INGRESS 46 /* BPF_TCX_INGRESS */

#define VNET_HDR_LEN 12 /* struct virtio_net_hdr_mrg_rxbuf */
#define ETH_LEN 14
#define IP_LEN 20
#define TCP_LEN 20
#define HDRS_LEN (ETH_LEN + IP_LEN + TCP_LEN)
#define GSO_MSS 1448
#define GSO_SEGS 45 /* 45 * 1448 + 40 = 65200 bytes of IP */

#define MAX_REPS 101
#define LIMIT_PCT 5.0

/* ------------------------------------------------------------------ */
/* configurations and frame sizes */

enum cfg {
	CFG_NONE,
	CFG_EMPTY_XDP,
	CFG_VNET_XDP,
	CFG_EMPTY_TC,
	CFG_VNET_TC,
	CFG_MAX,
};

static const char *const cfg_name[CFG_MAX] = {
	[CFG_NONE] = "none",
	[CFG_EMPTY_XDP] = "empty-xdp",
	[CFG_VNET_XDP] = "vnet-xdp",
	[CFG_EMPTY_TC] = "empty-tc",
	[CFG_VNET_TC] = "vnet-tc",
};

static const char *const cfg_json[CFG_MAX] = {
	[CFG_NONE] = "none",
	[CFG_EMPTY_XDP] = "empty_xdp",
	[CFG_VNET_XDP] = "vnet_xdp",
	[CFG_EMPTY_TC] = "empty_tc",
	[CFG_VNET_TC] = "vnet_tc",
};

static bool cfg_is_vnet(enum cfg c)
{
	return c == CFG_VNET_XDP || c == CFG_VNET_TC;
}

enum size {
	SZ_64,
	SZ_1500,
	SZ_GSO,
	SZ_MAX,
};

static const char *const sz_name[SZ_MAX] = {
	[SZ_64] = "64B",
	[SZ_1500] = "1500B",
	[SZ_GSO] = "64KB-GSO",
};

static const char *const sz_json[SZ_MAX] = {
	[SZ_64] = "64",
	[SZ_1500] = "1500",
	[SZ_GSO] = "gso64k",
};

/* Ethernet frame length (without the virtio_net_hdr) per size. */
static const unsigned int sz_frame_len[SZ_MAX] = {
	[SZ_64] = 64,
	[SZ_1500] = ETH_LEN + 1500,
	[SZ_GSO] = HDRS_LEN + GSO_SEGS * GSO_MSS,
};

struct frame {
	unsigned char *buf; /* virtio_net_hdr + Ethernet frame */
	unsigned int len;   /* bytes written per frame */
	unsigned int eth_len;
	int buf_index;      /* registered buffer */
};

/* One sample's counters. */
struct counts {
	uint64_t frames;
	uint64_t eagain;
	uint64_t errors;
	int last_error;
};

/* Figures of one (size, configuration). */
struct result {
	double pps[MAX_REPS];
	double cpu[MAX_REPS];      /* thread CPU time / wall time */
	double cpu_pps[MAX_REPS];  /* frames per second of thread CPU time */
	uint64_t frames;           /* all frames written, warm-up included */
	uint64_t eagain;
	uint64_t urgent;           /* stats map: URGENT delta (vnet only) */
	double run_ns[MAX_REPS];   /* BPF_STATS_RUN_TIME ns per run */
	uint64_t run_cnt;
	int run_reps;
};

struct test_run {
	double ns[MAX_REPS];
	int reps;
	int err;
};

struct opts {
	int reps;
	double sample_s;
	double slice_s;
	double warmup_s;
	double stats_s;
	unsigned int batch;
	int cpu;
	bool fixed;
	bool json;
	bool size_on[SZ_MAX];
	unsigned int test_repeat;
};

struct bench {
	struct opts o;
	int tap_fd;
	int ifindex;
	char ifname[IFNAMSIZ];
	struct io_uring ring;
	bool ring_ok;
	unsigned int ring_flags;
	struct vnet *vnet;
	struct bench_empty *empty;
	struct frame frames[SZ_MAX];
	int ncpus;
	/* tc ingress */
	enum cfg cur; /* what is attached now */
	int tcx_fd;
	bool tc_legacy;
	bool tc_hook_created;
	struct bpf_tc_hook tc_hook;
	/* io_uring inline/punt evidence */
	int iowq_max;
	/* results */
	struct result res[SZ_MAX][CFG_MAX];
	struct test_run trun[SZ_MAX][CFG_MAX];
	bool bpf_stats_already_on;
};

/* ------------------------------------------------------------------ */
/* small helpers */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct summary {
	double min, med, max;
};

static struct summary summarise(const double *v, int n)
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

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Progress and diagnostics go to stderr; results to stdout. */
#define info(...) fprintf(stderr, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* frames */

/*
 * virtio_net_hdr + Ethernet/IPv4/TCP, payload, ACK set and PSH clear: class
 * URGENT.  The destination MAC differs from the tap's, so the frame is
 * PACKET_OTHERHOST and ip_rcv drops it right after the hooks.
 */
static int build_frame(struct frame *f, enum size sz,
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

static int pin_cpu(int *cpu)
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

static int create_tap(struct bench *b, unsigned char *mac)
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

/* newest flags first; fall back for older kernels */
static const unsigned int try_flags[] = {
	IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
		IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
	0,
};

static int setup_ring(struct bench *b)
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

/* Submit one batch of writes of frame f and reap all of it. */
static int write_batch(struct bench *b, const struct frame *f,
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

/* Write frame f for secs seconds. */
static int write_for(struct bench *b, const struct frame *f, double secs,
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

/* io-wq workers of this process: > 0 means some writes were punted. */
static int count_iowq_workers(void)
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

/* ------------------------------------------------------------------ */
/* attach / detach */

static int prog_fd_of(struct bench *b, enum cfg c)
{
	switch (c) {
	case CFG_EMPTY_XDP:
		return bpf_program__fd(b->empty->progs.empty_xdp);
	case CFG_VNET_XDP:
		return bpf_program__fd(b->vnet->progs.vnet_xdp_tx);
	case CFG_EMPTY_TC:
		return bpf_program__fd(b->empty->progs.empty_tc);
	case CFG_VNET_TC:
		return bpf_program__fd(b->vnet->progs.vnet_tc_tx);
	default:
		return -1;
	}
}

/* tc ingress: a tcx link, or a clsact filter on kernels without tcx. */
static int attach_tc(struct bench *b, int prog_fd, bool replace)
{
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = 1, .priority = 1);
	int fd, err;

	if (!b->tc_legacy && replace) {
		err = bpf_link_update(b->tcx_fd, prog_fd, NULL);
		if (err)
			info("bench_tap: tcx link update on %s: %s\n",
			     b->ifname, strerror(-err));
		return err;
	}
	if (!b->tc_legacy) {
		fd = bpf_link_create(prog_fd, b->ifindex, BENCH_TCX_INGRESS,
				     NULL);
		if (fd >= 0) {
			b->tcx_fd = fd;
			return 0;
		}
		if (fd != -EINVAL) {
			info("bench_tap: tcx ingress link on %s: %s\n",
			     b->ifname, strerror(-fd));
			return fd;
		}
		info("bench_tap: tcx not supported (EINVAL), using clsact\n");
		b->tc_legacy = true;
	}
	if (!b->tc_hook_created) {
		b->tc_hook.sz = sizeof(b->tc_hook);
		b->tc_hook.ifindex = b->ifindex;
		b->tc_hook.attach_point = BPF_TC_INGRESS;
		err = bpf_tc_hook_create(&b->tc_hook);
		if (err && err != -EEXIST) {
			info("bench_tap: clsact on %s: %s\n", b->ifname,
			     strerror(-err));
			return err;
		}
		b->tc_hook_created = true;
	}
	o.prog_fd = prog_fd;
	if (replace)
		o.flags = BPF_TC_F_REPLACE;
	err = bpf_tc_attach(&b->tc_hook, &o);
	if (err)
		info("bench_tap: tc ingress filter on %s: %s\n", b->ifname,
		     strerror(-err));
	return err;
}

static int detach_tc(struct bench *b)
{
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = 1, .priority = 1);
	int err;

	if (!b->tc_legacy) {
		if (b->tcx_fd >= 0)
			close(b->tcx_fd);
		b->tcx_fd = -1;
		return 0;
	}
	err = bpf_tc_detach(&b->tc_hook, &o);
	if (err)
		info("bench_tap: tc ingress detach on %s: %s\n", b->ifname,
		     strerror(-err));
	return err;
}

static bool cfg_is_xdp(enum cfg c)
{
	return c == CFG_EMPTY_XDP || c == CFG_VNET_XDP;
}

static bool cfg_is_tc(enum cfg c)
{
	return c == CFG_EMPTY_TC || c == CFG_VNET_TC;
}

/*
 * Move the tap from configuration b->cur to c.  Between two programs on the
 * same hook the program is replaced in place (XDP attach over XDP, tcx link
 * update): every attach and detach waits for an RCU grace period (about
 * 10 ms here), and halving their number halves the benchmark's idle time.
 */
static int switch_to(struct bench *b, enum cfg c)
{
	int fd = prog_fd_of(b, c), err = 0;

	if (c == b->cur)
		return 0;
	if (cfg_is_xdp(b->cur) && !cfg_is_xdp(c)) {
		err = bpf_xdp_detach(b->ifindex, XDP_FLAGS_DRV_MODE, NULL);
		if (err) {
			info("bench_tap: XDP detach from %s: %s\n", b->ifname,
			     strerror(-err));
			return err;
		}
	} else if (cfg_is_tc(b->cur) && !cfg_is_tc(c)) {
		err = detach_tc(b);
		if (err)
			return err;
	}
	if (cfg_is_xdp(c)) {
		/* over an XDP program: replaces it */
		err = bpf_xdp_attach(b->ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			info("bench_tap: native XDP attach of %s to %s: %s\n",
			     cfg_name[c], b->ifname, strerror(-err));
	} else if (cfg_is_tc(c)) {
		err = attach_tc(b, fd, cfg_is_tc(b->cur));
	}
	/* on failure the hook state is unknown: detach both */
	if (err) {
		bpf_xdp_detach(b->ifindex, XDP_FLAGS_DRV_MODE, NULL);
		if (cfg_is_tc(b->cur))
			detach_tc(b);
		b->cur = CFG_NONE;
		return err;
	}
	b->cur = c;
	return 0;
}

/* ------------------------------------------------------------------ */
/* vnet stats map: proof that the classifier ran and classified */

static int read_tx_stats(struct bench *b, struct vnet_class_stats *sum)
{
	__u32 key = vnet_key(VNET_DIR_TX, 0);
	struct vnet_class_stats *v;
	struct vnet_counter *s, *c;
	int err, cpu, k;

	v = calloc(b->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(b->vnet->maps.stats), &key, v);
	if (err) {
		err = -errno;
		info("bench_tap: reading vnet stats map: %s\n",
		     strerror(errno));
		goto out;
	}
	memset(sum, 0, sizeof(*sum));
	s = (struct vnet_counter *)sum;
	for (cpu = 0; cpu < b->ncpus; cpu++) {
		c = (struct vnet_counter *)&v[cpu];
		for (k = 0; k < VNET_CLASS_MAX; k++) {
			s[k].packets += c[k].packets;
			s[k].bytes += c[k].bytes;
		}
	}
out:
	free(v);
	return err;
}

static int check_classified(struct bench *b, enum size sz, enum cfg c,
			    const struct vnet_class_stats *before,
			    uint64_t frames)
{
	const struct vnet_counter *s0 = (const void *)before, *s1;
	struct vnet_class_stats after;
	uint64_t d[VNET_CLASS_MAX], bytes;
	int err, k;

	err = read_tx_stats(b, &after);
	if (err)
		return err;
	s1 = (const void *)&after;
	for (k = 0; k < VNET_CLASS_MAX; k++)
		d[k] = s1[k].packets - s0[k].packets;
	bytes = s1[VNET_CLASS_URGENT].bytes - s0[VNET_CLASS_URGENT].bytes;
	b->res[sz][c].urgent += d[VNET_CLASS_URGENT];
	if (d[VNET_CLASS_URGENT] != frames ||
	    bytes != frames * b->frames[sz].eth_len ||
	    d[VNET_CLASS_PUSH] || d[VNET_CLASS_ACK] || d[VNET_CLASS_OTHER] ||
	    d[VNET_CLASS_MALFORMED]) {
		info("bench_tap: %s %s: %llu frames written but the classifier counted urgent %llu (%llu bytes, expected %llu), push %llu, ack %llu, other %llu, malformed %llu\n",
		     sz_name[sz], cfg_name[c], (unsigned long long)frames,
		     (unsigned long long)d[VNET_CLASS_URGENT],
		     (unsigned long long)bytes,
		     (unsigned long long)(frames * b->frames[sz].eth_len),
		     (unsigned long long)d[VNET_CLASS_PUSH],
		     (unsigned long long)d[VNET_CLASS_ACK],
		     (unsigned long long)d[VNET_CLASS_OTHER],
		     (unsigned long long)d[VNET_CLASS_MALFORMED]);
		return -EPROTO;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* phase 1: interleaved wall-clock samples */

static int slices(const struct opts *o)
{
	int n = (int)(o->sample_s / o->slice_s + 0.5);

	return n < 1 ? 1 : n;
}

/* One configuration's share of a repetition, summed over its slices. */
struct acc {
	uint64_t frames;
	uint64_t ns;
	uint64_t cpu_ns;
};

/*
 * One slice: switch to configuration c, warm up, write for secs, check the
 * classifier's counters.
 */
static int one_slice(struct bench *b, enum size sz, enum cfg c, double secs,
		     struct acc *a)
{
	struct frame *f = &b->frames[sz];
	struct result *r = &b->res[sz][c];
	struct counts warm = { 0 }, meas = { 0 };
	struct vnet_class_stats before;
	uint64_t t0, t1, cpu0, cpu1;
	int err;

	err = switch_to(b, c);
	if (err)
		return err;
	if (cfg_is_vnet(c)) {
		err = read_tx_stats(b, &before);
		if (err)
			return err;
	}
	err = write_for(b, f, b->o.warmup_s, &warm);
	if (err)
		return err;
	cpu0 = thread_cpu_ns();
	t0 = now_ns();
	err = write_for(b, f, secs, &meas);
	t1 = now_ns();
	cpu1 = thread_cpu_ns();
	if (err)
		return err;
	a->frames += meas.frames;
	a->ns += t1 - t0;
	a->cpu_ns += cpu1 - cpu0;
	r->frames += warm.frames + meas.frames;
	r->eagain += warm.eagain + meas.eagain;
	if (cfg_is_vnet(c))
		return check_classified(b, sz, c, &before,
					warm.frames + meas.frames);
	return 0;
}

/*
 * One repetition of one frame size: every configuration gets sample_s
 * seconds, cut into slices of about slice_s and interleaved round-robin,
 * forwards then backwards (ABCDE EDCBA ...), so that the host's slow
 * swings in speed and any effect of the previous configuration fall on
 * every configuration alike.
 */
static int one_rep(struct bench *b, enum size sz, int rep)
{
	struct acc a[CFG_MAX] = { 0 };
	int n, i, k, err, w;
	double secs;
	enum cfg c;

	n = slices(&b->o);
	secs = b->o.sample_s / n;
	for (i = 0; i < n; i++) {
		for (k = 0; k < CFG_MAX; k++) {
			c = i % 2 ? CFG_MAX - 1 - k : k;
			err = one_slice(b, sz, c, secs, &a[c]);
			if (err) {
				info("bench_tap: %s %s failed\n", sz_name[sz],
				     cfg_name[c]);
				return err;
			}
		}
	}
	for (c = 0; c < CFG_MAX; c++) {
		b->res[sz][c].pps[rep] = a[c].frames / (a[c].ns / 1e9);
		b->res[sz][c].cpu[rep] = (double)a[c].cpu_ns / a[c].ns;
		b->res[sz][c].cpu_pps[rep] = a[c].frames / (a[c].cpu_ns / 1e9);
	}
	w = count_iowq_workers();
	if (w > b->iowq_max)
		b->iowq_max = w;
	return 0;
}

/* ------------------------------------------------------------------ */
/* phase 2: BPF_STATS_RUN_TIME */

static int prog_run_stats(int fd, uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi);
	int err;

	memset(&pi, 0, sizeof(pi));
	err = bpf_obj_get_info_by_fd(fd, &pi, &len);
	if (err)
		return -errno;
	*ns = pi.run_time_ns;
	*cnt = pi.run_cnt;
	return 0;
}

static int run_time_sample(struct bench *b, enum size sz, enum cfg c)
{
	struct result *r = &b->res[sz][c];
	struct counts warm = { 0 }, meas = { 0 };
	uint64_t ns0 = 0, cnt0 = 0, ns1 = 0, cnt1 = 0;
	int fd = prog_fd_of(b, c), err;

	err = switch_to(b, c);
	if (err)
		return err;
	err = write_for(b, &b->frames[sz], b->o.warmup_s, &warm);
	if (err)
		return err;
	err = prog_run_stats(fd, &ns0, &cnt0);
	if (err)
		goto info_err;
	err = write_for(b, &b->frames[sz], b->o.stats_s, &meas);
	if (err)
		return err;
	err = prog_run_stats(fd, &ns1, &cnt1);
	if (err)
		goto info_err;
	if (cnt1 - cnt0 != meas.frames) {
		info("bench_tap: %s %s: program ran %llu times for %llu frames\n",
		     sz_name[sz], cfg_name[c],
		     (unsigned long long)(cnt1 - cnt0),
		     (unsigned long long)meas.frames);
		return -EPROTO;
	}
	if (cnt1 > cnt0)
		r->run_ns[r->run_reps++] = (double)(ns1 - ns0) / (cnt1 - cnt0);
	r->run_cnt += cnt1 - cnt0;
	return 0;
info_err:
	info("bench_tap: bpf_obj_get_info_by_fd: %s\n", strerror(-err));
	return err;
}

/* ------------------------------------------------------------------ */
/* phase 3: bpf_prog_test_run_opts */

static int test_run_one(struct bench *b, enum size sz, enum cfg c)
{
	struct frame *f = &b->frames[sz];
	struct test_run *t = &b->trun[sz][c];
	int err;

	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = f->buf + VNET_HDR_LEN,
		    .data_size_in = f->eth_len,
		    .repeat = b->o.test_repeat);
	err = bpf_prog_test_run_opts(prog_fd_of(b, c), &o);
	if (err) {
		t->err = err;
		return err;
	}
	t->ns[t->reps++] = o.duration;
	return 0;
}

/* ------------------------------------------------------------------ */
/* reporting */

/* Per-repetition ratio of two configurations' rates, a / b. */
static int rate_ratios(struct bench *b, enum size sz, enum cfg a, enum cfg c,
		       double *out)
{
	int i;

	for (i = 0; i < b->o.reps; i++)
		out[i] = b->res[sz][a].pps[i] / b->res[sz][c].pps[i];
	return b->o.reps;
}

/*
 * Cost of configuration a over base: extra time per frame in percent,
 * rate(base) / rate(a) - 1, and in ns, per repetition.
 */
static void cost(struct bench *b, enum size sz, enum cfg a, enum cfg base,
		 double *pct, double *ns)
{
	const struct result *ra = &b->res[sz][a], *rb = &b->res[sz][base];
	int i;

	for (i = 0; i < b->o.reps; i++) {
		pct[i] = (rb->pps[i] / ra->pps[i] - 1) * 100;
		ns[i] = 1e9 / ra->pps[i] - 1e9 / rb->pps[i];
	}
}

/*
 * The same cost on the writer thread's CPU time instead of wall time: all
 * the work is done inline by that thread, so this leaves out the time other
 * tasks of a busy machine ran on its CPU.
 */
static void cost_cpu(struct bench *b, enum size sz, enum cfg a, enum cfg base,
		     double *pct)
{
	const struct result *ra = &b->res[sz][a], *rb = &b->res[sz][base];
	int i;

	for (i = 0; i < b->o.reps; i++)
		pct[i] = (rb->cpu_pps[i] / ra->cpu_pps[i] - 1) * 100;
}

struct cmp_def {
	const char *name;
	const char *json;
	enum cfg a, base;
};

static const struct cmp_def cmps[] = {
	{ "vnet-xdp over empty-xdp", "vnet_xdp_over_empty_xdp", CFG_VNET_XDP,
	  CFG_EMPTY_XDP },
	{ "empty-xdp over none (XDP hook)", "empty_xdp_over_none",
	  CFG_EMPTY_XDP, CFG_NONE },
	{ "vnet-tc over empty-tc", "vnet_tc_over_empty_tc", CFG_VNET_TC,
	  CFG_EMPTY_TC },
	{ "empty-tc over none (tc hook)", "empty_tc_over_none", CFG_EMPTY_TC,
	  CFG_NONE },
	{ "vnet-xdp over vnet-tc", "vnet_xdp_over_vnet_tc", CFG_VNET_XDP,
	  CFG_VNET_TC },
};

#define NCMPS (int)(sizeof(cmps) / sizeof(cmps[0]))

static double gbps(double pps, const struct frame *f)
{
	return pps * f->eth_len * 8 / 1e9;
}

static void machine(char *buf, size_t len)
{
	char line[256], *model = NULL, *p;
	struct utsname u;
	FILE *fp;

	uname(&u);
	fp = fopen("/proc/cpuinfo", "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, "model name", 10)) {
			p = strchr(line, ':');
			if (p) {
				model = p + 2;
				model[strcspn(model, "\n")] = 0;
			}
			break;
		}
	}
	if (fp)
		fclose(fp);
	snprintf(buf, len, "Linux %s %s, %ld CPUs online, %s", u.release,
		 u.machine, sysconf(_SC_NPROCESSORS_ONLN),
		 model ? model : "unknown CPU");
}

static const char *ring_flags_str(unsigned int f)
{
	if (f & IORING_SETUP_DEFER_TASKRUN)
		return "SUBMIT_ALL|SINGLE_ISSUER|DEFER_TASKRUN";
	if (f & IORING_SETUP_COOP_TASKRUN)
		return "SUBMIT_ALL|COOP_TASKRUN";
	return "none";
}

/* Median of the per-repetition thread CPU/wall over every sample. */
static double cpu_util(struct bench *b)
{
	double v[MAX_REPS * SZ_MAX * CFG_MAX];
	int n = 0, s, c, i;

	for (s = 0; s < SZ_MAX; s++) {
		if (!b->o.size_on[s])
			continue;
		for (c = 0; c < CFG_MAX; c++)
			for (i = 0; i < b->o.reps; i++)
				v[n++] = b->res[s][c].cpu[i];
	}
	qsort(v, n, sizeof(*v), cmp_double);
	return n ? v[n / 2] : NAN;
}

/* vnet-xdp over empty-xdp at 64 B, median of the repetitions, wall clock */
static double target_wall_pct(struct bench *b)
{
	double pct[MAX_REPS], ns[MAX_REPS];

	cost(b, SZ_64, CFG_VNET_XDP, CFG_EMPTY_XDP, pct, ns);
	return summarise(pct, b->o.reps).med;
}

/*
 * ... and on the writer's CPU time: the verdict.  Every write completes
 * inline in the writer thread (no io-wq), so its CPU time is the kernel
 * path's cost, without the time other tasks and the hypervisor took the
 * CPU away; on a quiet machine the two agree.
 */
static double target_pct(struct bench *b)
{
	double pct[MAX_REPS];

	cost_cpu(b, SZ_64, CFG_VNET_XDP, CFG_EMPTY_XDP, pct);
	return summarise(pct, b->o.reps).med;
}

static void print_text(struct bench *b)
{
	double pct[MAX_REPS], ns[MAX_REPS], rr[MAX_REPS], g[MAX_REPS];
	struct summary s, sg, sp, sn, sr, sc;
	char mach[512];
	enum size sz;
	enum cfg c;
	int i, k;

	machine(mach, sizeof(mach));
	printf("bench_tap: %s\n", mach);
	printf("tap %s, vnet hdr %d B, O_NONBLOCK, pinned to CPU %d; io_uring batch %u, %s buffers, ring flags %s; tc ingress via %s\n",
	       b->ifname, VNET_HDR_LEN, b->o.cpu, b->o.batch,
	       b->o.fixed ? "fixed" : "plain", ring_flags_str(b->ring_flags),
	       b->tc_legacy ? "clsact (bpf_tc_attach)" : "tcx link");
	printf("%d repetitions x %.2f s per configuration, interleaved in slices of %.3f s (+%.3f s warm-up after each attach)\n",
	       b->o.reps, b->o.sample_s, b->o.sample_s / slices(&b->o),
	       b->o.warmup_s);
	printf("io_uring: %s (io-wq workers seen: %d), writer thread CPU/wall median %.2f\n",
	       b->iowq_max ? "some writes were punted to io-wq" :
			     "all writes completed inline at submit",
	       b->iowq_max, cpu_util(b));
	if (b->bpf_stats_already_on)
		printf("WARNING: kernel.bpf_stats_enabled was already 1: every BPF run paid for run-time statistics\n");
	if (b->o.reps < 5)
		printf("WARNING: fewer than 5 repetitions: figures are indicative only\n");
	if (cpu_util(b) < 0.9)
		printf("WARNING: the writer had its CPU only %.0f%% of the time (other tasks on CPU %d): wall-clock rates are unreliable, compare the CPU-time figures\n",
		       cpu_util(b) * 100, b->o.cpu);

	for (sz = 0; sz < SZ_MAX; sz++) {
		if (!b->o.size_on[sz])
			continue;
		printf("\n== %s: %u B frame (+%d B virtio_net_hdr)%s ==\n",
		       sz_name[sz], b->frames[sz].eth_len, VNET_HDR_LEN,
		       sz == SZ_GSO ? ", TCPv4 GSO mss 1448, NEEDS_CSUM" : "");
		printf("  %-10s %8s %8s %8s %9s %9s  %7s %7s %7s  %s\n", "config",
		       "Mpps min", "median", "max", "ns/frame", "CPU Mpps",
		       "Gb/s min", "median", "max", "classified urgent");
		for (c = 0; c < CFG_MAX; c++) {
			const struct result *r = &b->res[sz][c];

			for (i = 0; i < b->o.reps; i++)
				g[i] = gbps(r->pps[i], &b->frames[sz]);
			s = summarise(r->pps, b->o.reps);
			sg = summarise(g, b->o.reps);
			sc = summarise(r->cpu_pps, b->o.reps);
			printf("  %-10s %8.4f %8.4f %8.4f %9.1f %9.4f  %7.2f %7.2f %7.2f  ",
			       cfg_name[c], s.min / 1e6, s.med / 1e6,
			       s.max / 1e6, 1e9 / s.med, sc.med / 1e6, sg.min,
			       sg.med, sg.max);
			if (cfg_is_vnet(c))
				printf("%llu/%llu", (unsigned long long)r->urgent,
				       (unsigned long long)r->frames);
			else
				printf("-");
			if (r->eagain)
				printf("  EAGAIN %llu",
				       (unsigned long long)r->eagain);
			printf("\n");
		}
		printf("  (ns/frame = 1e9 / median rate; CPU Mpps = median frames per second of the writer's CPU time)\n");
		printf("  per-repetition ratios, median [min .. max]:\n");
		for (k = 0; k < NCMPS; k++) {
			rate_ratios(b, sz, cmps[k].a, cmps[k].base, rr);
			cost(b, sz, cmps[k].a, cmps[k].base, pct, ns);
			sr = summarise(rr, b->o.reps);
			sp = summarise(pct, b->o.reps);
			sn = summarise(ns, b->o.reps);
			cost_cpu(b, sz, cmps[k].a, cmps[k].base, pct);
			sc = summarise(pct, b->o.reps);
			printf("    %-30s rate x%.3f [%.3f .. %.3f]  cost %+5.1f%% [%+.1f .. %+.1f] %+6.1f ns [%+.1f .. %+.1f]  CPU-time cost %+5.1f%% [%+.1f .. %+.1f]\n",
			       cmps[k].name, sr.med, sr.min, sr.max, sp.med,
			       sp.min, sp.max, sn.med, sn.min, sn.max, sc.med,
			       sc.min, sc.max);
		}
		printf("  BPF program run time (BPF_STATS_RUN_TIME, separate phase), ns/run median [min .. max]:\n");
		for (c = CFG_EMPTY_XDP; c < CFG_MAX; c++) {
			const struct result *r = &b->res[sz][c];

			s = summarise(r->run_ns, r->run_reps);
			printf("    %-10s %7.1f [%.1f .. %.1f]  (%llu runs)\n",
			       cfg_name[c], s.med, s.min, s.max,
			       (unsigned long long)r->run_cnt);
		}
		if (sz == SZ_GSO)
			continue;
		printf("  bpf_prog_test_run_opts (repeat %u), ns/run median [min .. max]:\n",
		       b->o.test_repeat);
		for (c = CFG_EMPTY_XDP; c < CFG_MAX; c++) {
			const struct test_run *t = &b->trun[sz][c];

			if (t->err) {
				printf("    %-10s failed: %s\n", cfg_name[c],
				       strerror(-t->err));
				continue;
			}
			s = summarise(t->ns, t->reps);
			printf("    %-10s %7.1f [%.1f .. %.1f]\n", cfg_name[c],
			       s.med, s.min, s.max);
		}
	}
	if (b->o.size_on[SZ_64]) {
		double t = target_pct(b);

		printf("\ntarget: vnet classifier overhead over empty XDP at 64B = %.1f%% (<= %.0f%%: %s)%s\n",
		       t, LIMIT_PCT, t <= LIMIT_PCT ? "met" : "NOT met",
		       b->o.reps < 5 ? " [fewer than 5 repetitions]" : "");
		printf("        (on the writer's CPU time, median of %d repetitions; wall clock: %.1f%%)\n",
		       b->o.reps, target_wall_pct(b));
		/* tc ingress is vnetctl's default guest-TX hook */
		cost_cpu(b, SZ_64, CFG_VNET_TC, CFG_EMPTY_TC, pct);
		sc = summarise(pct, b->o.reps);
		printf("target: vnet classifier overhead over empty tc ingress at 64B = %.1f%% (<= %.0f%%: %s) [the default hook]\n",
		       sc.med, LIMIT_PCT, sc.med <= LIMIT_PCT ? "met" : "NOT met");
	}
	if (b->o.size_on[SZ_GSO]) {
		cost_cpu(b, SZ_GSO, CFG_VNET_XDP, CFG_VNET_TC, pct);
		sc = summarise(pct, b->o.reps);
		rate_ratios(b, SZ_GSO, CFG_VNET_XDP, CFG_VNET_TC, rr);
		sr = summarise(rr, b->o.reps);
		printf("guest-TX hook for 64KB GSO: %s (vnet-xdp costs %+.1f%% [%+.1f .. %+.1f] of CPU time over vnet-tc; wall-clock rate x%.3f [%.3f .. %.3f])\n",
		       sc.med > 0 ? "tc ingress is cheaper" :
				    "XDP is cheaper",
		       sc.med, sc.min, sc.max, sr.med, sr.min, sr.max);
	}
}

static void json_summary(const char *name, struct summary s, double scale,
			 const char *sep)
{
	if (isnan(s.med)) { /* no sample: JSON has no NaN */
		printf("\"%s\": null%s", name, sep);
		return;
	}
	printf("\"%s\": {\"min\": %.6g, \"median\": %.6g, \"max\": %.6g}%s",
	       name, s.min * scale, s.med * scale, s.max * scale, sep);
}

static void json_array(const char *name, const double *v, int n,
		       double scale, const char *sep)
{
	int i;

	printf("\"%s\": [", name);
	for (i = 0; i < n; i++)
		printf("%s%.6g", i ? ", " : "", v[i] * scale);
	printf("]%s", sep);
}

static void print_json(struct bench *b)
{
	double pct[MAX_REPS], ns[MAX_REPS], rr[MAX_REPS], g[MAX_REPS];
	bool first_sz = true;
	char mach[512];
	enum size sz;
	enum cfg c;
	int i, k;

	machine(mach, sizeof(mach));
	printf("{\n  \"machine\": \"%s\",\n", mach);
	printf("  \"params\": {\"reps\": %d, \"sample_s\": %g, \"slices\": %d, \"warmup_s\": %g, \"stats_s\": %g, \"batch\": %u, \"cpu\": %d, \"fixed_buffers\": %s, \"vnet_hdr_len\": %d, \"test_run_repeat\": %u, \"tc_attach\": \"%s\"},\n",
	       b->o.reps, b->o.sample_s, slices(&b->o), b->o.warmup_s,
	       b->o.stats_s,
	       b->o.batch, b->o.cpu, b->o.fixed ? "true" : "false",
	       VNET_HDR_LEN, b->o.test_repeat,
	       b->tc_legacy ? "clsact" : "tcx");
	printf("  \"io_uring\": {\"setup_flags\": \"%s\", \"iowq_workers_seen\": %d, \"inline\": %s, \"thread_cpu_per_wall_median\": %.3f},\n",
	       ring_flags_str(b->ring_flags), b->iowq_max,
	       b->iowq_max ? "false" : "true", cpu_util(b));
	printf("  \"bpf_stats_enabled_before\": %s,\n",
	       b->bpf_stats_already_on ? "true" : "false");
	printf("  \"sizes\": {\n");
	for (sz = 0; sz < SZ_MAX; sz++) {
		if (!b->o.size_on[sz])
			continue;
		printf("%s    \"%s\": {\n", first_sz ? "" : ",\n", sz_json[sz]);
		first_sz = false;
		printf("      \"frame_bytes\": %u, \"write_bytes\": %u, \"gso\": %s,\n",
		       b->frames[sz].eth_len, b->frames[sz].len,
		       sz == SZ_GSO ? "true" : "false");
		printf("      \"configs\": {\n");
		for (c = 0; c < CFG_MAX; c++) {
			const struct result *r = &b->res[sz][c];

			for (i = 0; i < b->o.reps; i++)
				g[i] = gbps(r->pps[i], &b->frames[sz]);
			printf("        \"%s\": {", cfg_json[c]);
			json_summary("mpps", summarise(r->pps, b->o.reps),
				     1e-6, ", ");
			json_summary("gbps", summarise(g, b->o.reps), 1, ", ");
			json_summary("cpu_mpps", summarise(r->cpu_pps, b->o.reps),
				     1e-6, ", ");
			json_array("samples_mpps", r->pps, b->o.reps, 1e-6,
				   ", ");
			printf("\"frames\": %llu, \"eagain\": %llu",
			       (unsigned long long)r->frames,
			       (unsigned long long)r->eagain);
			if (cfg_is_vnet(c))
				printf(", \"classified_urgent\": %llu",
				       (unsigned long long)r->urgent);
			if (c != CFG_NONE) {
				printf(", ");
				json_summary("bpf_run_ns",
					     summarise(r->run_ns, r->run_reps),
					     1, "");
				if (sz != SZ_GSO && !b->trun[sz][c].err) {
					printf(", ");
					json_summary("test_run_ns",
						     summarise(b->trun[sz][c].ns,
							       b->trun[sz][c].reps),
						     1, "");
				}
			}
			printf("}%s\n", c + 1 < CFG_MAX ? "," : "");
		}
		printf("      },\n      \"ratios\": {\n");
		for (k = 0; k < NCMPS; k++) {
			rate_ratios(b, sz, cmps[k].a, cmps[k].base, rr);
			cost(b, sz, cmps[k].a, cmps[k].base, pct, ns);
			printf("        \"%s\": {", cmps[k].json);
			json_summary("rate_ratio", summarise(rr, b->o.reps), 1,
				     ", ");
			json_summary("cost_pct", summarise(pct, b->o.reps), 1,
				     ", ");
			json_summary("cost_ns", summarise(ns, b->o.reps), 1,
				     ", ");
			cost_cpu(b, sz, cmps[k].a, cmps[k].base, pct);
			json_summary("cpu_time_cost_pct", summarise(pct, b->o.reps),
				     1, "");
			printf("}%s\n", k + 1 < NCMPS ? "," : "");
		}
		printf("      }\n    }");
	}
	printf("\n  }");
	if (b->o.size_on[SZ_64]) {
		double t = target_pct(b);

		printf(",\n  \"target\": {\"vnet_xdp_over_empty_xdp_64_pct\": %.3f, \"basis\": \"cpu_time\", \"wall_pct\": %.3f, \"limit_pct\": %.0f, \"met\": %s}",
		       t, target_wall_pct(b), LIMIT_PCT,
		       t <= LIMIT_PCT ? "true" : "false");
	}
	printf("\n}\n");
}

/* ------------------------------------------------------------------ */
/* main */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: bench_tap [options]\n"
		"Frames/s written into a tap with io_uring: no program, empty and vnet\n"
		"programs on XDP and tc ingress, interleaved.  Needs root.  Costs are\n"
		"reported on wall-clock time and on the writer thread's CPU time; the\n"
		"5%% target verdict uses the latter (see docs/benchmarks.md).\n"
		"  -r, --reps N          repetitions, >= 5 for the target (default 7)\n"
		"  -d, --duration S      measured seconds per configuration and repetition\n"
		"                        (default 0.4)\n"
		"  -S, --slice S         ... cut into interleaved slices of S (default 0.02)\n"
		"  -w, --warmup S        warm-up after each attach, unmeasured (default 0.002)\n"
		"  -t, --stats-time S    seconds per BPF run-time sample (default 0.1)\n"
		"  -b, --batch N         writes per io_uring submit (default 128)\n"
		"  -c, --cpu N           CPU to pin to (default: the highest allowed)\n"
		"  -s, --sizes LIST      comma list of 64,1500,gso (default all)\n"
		"  -n, --test-repeat N   bpf_prog_test_run repeat (default 1000000)\n"
		"      --no-fixed        plain buffers instead of registered ones\n"
		"  -j, --json            JSON on stdout instead of text\n"
		"  -h, --help\n");
}

static int parse_sizes(struct opts *o, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL;
	int err = 0;

	if (!dup)
		return -ENOMEM;
	memset(o->size_on, 0, sizeof(o->size_on));
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "64"))
			o->size_on[SZ_64] = true;
		else if (!strcmp(tok, "1500"))
			o->size_on[SZ_1500] = true;
		else if (!strcmp(tok, "gso") || !strcmp(tok, "64k"))
			o->size_on[SZ_GSO] = true;
		else
			err = -EINVAL;
	}
	free(dup);
	return err;
}

static int parse_opts(struct opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "reps", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "slice", required_argument, NULL, 'S' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "stats-time", required_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "sizes", required_argument, NULL, 's' },
		{ "test-repeat", required_argument, NULL, 'n' },
		{ "no-fixed", no_argument, NULL, 'F' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int ch, s;

	o->reps = 7;
	o->sample_s = 0.4;
	o->slice_s = 0.02;
	o->warmup_s = 0.002;
	o->stats_s = 0.1;
	o->batch = 128;
	o->cpu = -1;
	o->fixed = true;
	o->test_repeat = 1000000;
	for (s = 0; s < SZ_MAX; s++)
		o->size_on[s] = true;

	while ((ch = getopt_long(argc, argv, "r:d:S:w:t:b:c:s:n:jh", lo,
				 NULL)) != -1) {
		switch (ch) {
		case 'r':
			o->reps = atoi(optarg);
			if (o->reps < 1 || o->reps > MAX_REPS) {
				info("bench_tap: -r must be 1..%d\n", MAX_REPS);
				return -EINVAL;
			}
			break;
		case 'd':
			o->sample_s = atof(optarg);
			break;
		case 'S':
			o->slice_s = atof(optarg);
			break;
		case 'w':
			o->warmup_s = atof(optarg);
			break;
		case 't':
			o->stats_s = atof(optarg);
			break;
		case 'b':
			o->batch = atoi(optarg);
			if (o->batch < 1 || o->batch > 4096) {
				info("bench_tap: -b must be 1..4096\n");
				return -EINVAL;
			}
			break;
		case 'c':
			o->cpu = atoi(optarg);
			if (o->cpu < 0 || o->cpu >= CPU_SETSIZE) {
				info("bench_tap: -c must be a CPU number\n");
				return -EINVAL;
			}
			break;
		case 's':
			if (parse_sizes(o, optarg)) {
				info("bench_tap: -s takes a comma list of 64, 1500, gso\n");
				return -EINVAL;
			}
			break;
		case 'n':
			o->test_repeat = strtoul(optarg, NULL, 0);
			break;
		case 'F':
			o->fixed = false;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return -EINVAL;
	}
	if (o->sample_s <= 0 || o->slice_s <= 0 || o->warmup_s < 0 ||
	    o->stats_s <= 0 ||
	    !o->test_repeat) {
		info("bench_tap: durations must be > 0 and -n >= 1\n");
		return -EINVAL;
	}
	for (s = 0; s < SZ_MAX; s++)
		if (o->size_on[s])
			return 0;
	info("bench_tap: no frame size selected\n");
	return -EINVAL;
}

static bool bpf_stats_enabled(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/*
 * Load only the two guest-TX programs of the vnet object: the others
 * (tc egress, tracepoints) are not measured here and may need kernel
 * features this benchmark does not.
 */
static void only_autoload(struct bpf_object *obj, struct bpf_program *a,
			  struct bpf_program *c)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == a || p == c);
}

static int run(struct bench *b)
{
	enum size sz;
	enum cfg c;
	int rep, err, stats_fd;

	/* settle page-frag and slab caches before the first sample */
	for (sz = 0; sz < SZ_MAX; sz++) {
		struct counts warm = { 0 };

		if (!b->o.size_on[sz])
			continue;
		err = write_for(b, &b->frames[sz], 0.1, &warm);
		if (err)
			return err;
	}

	/* phase 1: interleaved wall-clock samples */
	for (rep = 0; rep < b->o.reps; rep++) {
		info("bench_tap: repetition %d/%d\n", rep + 1, b->o.reps);
		for (sz = 0; sz < SZ_MAX; sz++) {
			if (!b->o.size_on[sz])
				continue;
			err = one_rep(b, sz, rep);
			if (err)
				return err;
		}
	}

	err = switch_to(b, CFG_NONE);
	if (err)
		return err;

	/* phase 2: the programs' own run time, measured by the kernel */
	info("bench_tap: BPF run-time statistics\n");
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		info("bench_tap: bpf_enable_stats(BPF_STATS_RUN_TIME): %s\n",
		     strerror(-stats_fd));
		return stats_fd;
	}
	for (rep = 0; rep < b->o.reps; rep++) {
		for (sz = 0; sz < SZ_MAX; sz++) {
			if (!b->o.size_on[sz])
				continue;
			for (c = CFG_EMPTY_XDP; c < CFG_MAX; c++) {
				err = run_time_sample(b, sz, c);
				if (err) {
					switch_to(b, CFG_NONE);
					close(stats_fd);
					return err;
				}
			}
		}
	}
	close(stats_fd);
	err = switch_to(b, CFG_NONE);
	if (err)
		return err;

	/* phase 3: bpf_prog_test_run (no GSO: test_run takes one page) */
	info("bench_tap: bpf_prog_test_run\n");
	for (rep = 0; rep < b->o.reps; rep++)
		for (sz = 0; sz < SZ_GSO; sz++)
			if (b->o.size_on[sz])
				for (c = CFG_EMPTY_XDP; c < CFG_MAX; c++)
					if (!b->trun[sz][c].err)
						test_run_one(b, sz, c);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char mac[ETH_ALEN];
	struct bench *b;
	int err, s;

	b = calloc(1, sizeof(*b));
	if (!b) {
		info("bench_tap: out of memory\n");
		return 1;
	}
	b->tap_fd = -1;
	b->tcx_fd = -1;
	err = parse_opts(&b->o, argc, argv);
	if (err)
		goto out_free;

	if (geteuid() != 0)
		info("bench_tap: warning: not running as root; this needs CAP_SYS_ADMIN and CAP_NET_ADMIN\n");
	if (unshare(CLONE_NEWNET)) {
		err = -errno;
		info("bench_tap: unshare(CLONE_NEWNET): %s%s\n",
		     strerror(errno),
		     errno == EPERM ? " (run as root)" : "");
		goto out_free;
	}
	err = pin_cpu(&b->o.cpu);
	if (err)
		goto out_free;
	b->bpf_stats_already_on = bpf_stats_enabled();
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		err = b->ncpus ? b->ncpus : -EINVAL;
		info("bench_tap: libbpf_num_possible_cpus: %s\n",
		     strerror(-err));
		goto out_free;
	}
	libbpf_set_print(libbpf_print);

	err = create_tap(b, mac);
	if (err)
		goto out_tap;
	for (s = 0; s < SZ_MAX; s++) {
		err = build_frame(&b->frames[s], s, mac);
		if (err) {
			info("bench_tap: out of memory for frames\n");
			goto out_frames;
		}
	}

	b->vnet = vnet__open();
	if (!b->vnet) {
		err = -errno;
		info("bench_tap: opening vnet BPF object: %s\n",
		     strerror(errno));
		goto out_frames;
	}
	only_autoload(b->vnet->obj, b->vnet->progs.vnet_xdp_tx,
		      b->vnet->progs.vnet_tc_tx);
	err = vnet__load(b->vnet);
	if (err) {
		info("bench_tap: loading vnet_xdp_tx and vnet_tc_tx: %s\n",
		     strerror(-err));
		goto out_vnet;
	}
	b->empty = bench_empty__open_and_load();
	if (!b->empty) {
		err = -errno;
		info("bench_tap: loading empty BPF programs: %s\n",
		     strerror(errno));
		goto out_vnet;
	}

	err = setup_ring(b);
	if (err)
		goto out_ring;

	err = run(b);
	if (err)
		goto out_ring;

	if (b->o.json)
		print_json(b);
	else
		print_text(b);
	fflush(stdout);

out_ring:
	if (b->ring_ok)
		io_uring_queue_exit(&b->ring);
	if (b->tcx_fd >= 0)
		close(b->tcx_fd);
	bench_empty__destroy(b->empty);
out_vnet:
	vnet__destroy(b->vnet);
out_frames:
	for (s = 0; s < SZ_MAX; s++)
		free(b->frames[s].buf);
out_tap:
	if (b->tap_fd >= 0)
		close(b->tap_fd);
out_free:
	free(b);
	return err ? 1 : 0;
}
