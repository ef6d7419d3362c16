// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_vnetd_io: the small tools bench/bench_vnetd.sh measures vnetd with.
 *
 *   rate    --netns NS --dev DEV --counter rx_packets|tx_packets
 *           [--wait S] [--warmup S] [--seconds S] [--pid PID]
 *           frames/s of a link counter of DEV in NS, measured once it
 *           moves (bounded wait); prints "FRAMES/S FRAMES/CPU-S SHARE",
 *           the last two from the CPU time of process PID (the backend)
 *   write   --netns NS --tap TAP --size N [--cpu C] [--seconds S]
 *           [--warmup S] [--batch N]
 *           the guest->tap ceiling: one thread writes the same frame into
 *           a queue of TAP (an existing multi-queue vnet_hdr tap) with
 *           io_uring, batch writes per submit; prints the tap's rx_packets
 *           per second as "FRAMES/S FRAMES/CPU-S SHARE" (the writer's CPU)
 *   read    --netns NS --tap TAP [--cpu C] [--seconds S] [--warmup S]
 *           the tap->guest ceiling: one thread reads a queue of TAP with
 *           io_uring (64 reads in flight); prints frames read per second
 *   gen     --netns NS --dev DEV --size N [--cpu C] [--seconds S]
 *           load for tap->guest: UDP frames sent out of DEV with
 *           AF_PACKET sendmmsg (64 per call) until killed or S seconds
 *   floor   the same loop on a tap whose link is down: tun copies the
 *           frame and builds its skb, then drops it with EIO instead of
 *           running XDP and the stack; completions per second bound any
 *           tap writer whose frames go on into the host (perf: io_uring
 *           ~20%, tun_get_user/tun_build_skb/flow dissection the rest)
 *   refused the same loop writing 8 bytes, less than the virtio-net
 *           header: tun refuses each write at once (EINVAL); what
 *           io_uring and tun's entry cost, with no frame at all
 *   spin    [--cpu C] [--seconds S]
 *           a busy loop: a polling guest's use of its CPU
 *   signals --socket PATH --netns NS --tap TAP [--frames N]
 *           call-eventfd signals per 1000 frames with the vufe frontend
 *           (selftests/frontend) against vnetd, guest TX (bulk and urgent)
 *           and guest RX, with coalescing off and on; one line each
 *
 * Diagnostics go to stderr, the figure to stdout.  Exit 0 on success.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <liburing.h>
#include <vnet/abi.h>

#include "../selftests/frontend/vufe.h"

#define VNET_HDR_LEN 12
#define MAX_FRAME 2048

struct opts {
	const char *netns, *dev, *counter, *sock;
	unsigned int size, batch, frames;
	int cpu, pid;
	double seconds, warmup, wait;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench_vnetd_io: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void enter_netns(const char *name)
{
	char path[256];
	int fd;

	if (!name)
		return;
	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die("netns %s: %s", name, strerror(errno));
	close(fd);
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("CPU %d: %s", cpu, strerror(errno));
}

static uint64_t link_counter(const char *dev, const char *counter)
{
	struct ifaddrs *ifa, *i;
	uint64_t v = UINT64_MAX;

	if (getifaddrs(&ifa))
		die("getifaddrs: %s", strerror(errno));
	for (i = ifa; i; i = i->ifa_next) {
		const struct rtnl_link_stats *s = i->ifa_data;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET ||
		    strcmp(i->ifa_name, dev) || !s)
			continue;
		v = !strcmp(counter, "tx_packets") ? s->tx_packets :
							     s->rx_packets;
		break;
	}
	freeifaddrs(ifa);
	if (v == UINT64_MAX)
		die("no link %s", dev);
	return v;
}

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
		;
}

/* CPU seconds of process PID (all its threads), or -1 */
static double proc_cpu(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (pid <= 0 || clock_getcpuclockid(pid, &clk) ||
	    clock_gettime(clk, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * "FRAMES/S FRAMES/CPU-S SHARE": the rate, the rate per second of the
 * backend's CPU time, and the share of the window the backend ran
 */
static void report(uint64_t frames, double wall, double cpu)
{
	if (cpu > 0)
		printf("%.0f %.0f %.2f\n", frames / wall, frames / cpu,
		       cpu / wall);
	else
		printf("%.0f nan nan\n", frames / wall);
}

/* testpmd txonly's frame: UDP 198.18.0.1:9 -> 198.18.0.2:9 */
static unsigned int udp_frame(unsigned char *f, unsigned int len,
			      const unsigned char *dst)
{
	static const unsigned char src[ETH_ALEN] = { 2, 0, 0, 0, 0, 1 };
	unsigned char *ip = f + 14, *udp = ip + 20;
	unsigned int sum = 0, i;

	if (len < 60)
		len = 60;
	memset(f, 0, len);
	memcpy(f, dst, ETH_ALEN);
	memcpy(f + 6, src, ETH_ALEN);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (len - 14) >> 8;
	ip[3] = (len - 14) & 0xff;
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	ip[12] = 198, ip[13] = 18, ip[14] = 0, ip[15] = 1;
	ip[16] = 198, ip[17] = 18, ip[18] = 0, ip[19] = 2;
	for (i = 0; i < 20; i += 2)
		sum += ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = ~sum >> 8;
	ip[11] = ~sum & 0xff;
	udp[1] = 9;
	udp[3] = 9;
	udp[4] = (len - 34) >> 8;
	udp[5] = (len - 34) & 0xff;
	return len;
}

/* a queue of an existing multi-queue vnet_hdr tap */
static int tap_queue(const char *name, bool nonblock)
{
	struct ifreq ifr = { 0 };
	int fd, hdr = VNET_HDR_LEN;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC |
					  (nonblock ? O_NONBLOCK : 0));
	if (fd < 0)
		die("/dev/net/tun: %s", strerror(errno));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE;
	if (ioctl(fd, TUNSETIFF, &ifr))
		die("TUNSETIFF %s: %s", name, strerror(errno));
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr))
		die("TUNSETVNETHDRSZ: %s", strerror(errno));
	return fd;
}

static void ring_init(struct io_uring *ring, unsigned int entries)
{
	struct io_uring_params p;
	int err;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	err = io_uring_queue_init_params(entries, ring, &p);
	if (err) {
		memset(&p, 0, sizeof(p));
		err = io_uring_queue_init_params(entries, ring, &p);
	}
	if (err)
		die("io_uring_queue_init: %s", strerror(-err));
}

/* ---- write: the guest->tap ceiling ---- */

enum write_kind {
	W_FRAMES,	/* frames the tap takes: count rx_packets */
	W_FLOOR,	/* link down: tun builds the skb, drops it (EIO) */
	W_REFUSED,	/* 8 bytes, less than the virtio-net header: EINVAL */
};

static int do_write(const struct opts *o, enum write_kind kind)
{
	bool floor = kind != W_FRAMES;
	int fail = kind == W_FLOOR ? -EIO : -EINVAL;
	static const unsigned char dst[ETH_ALEN] = { 2, 0, 0, 0, 0, 0 };
	static unsigned char buf[VNET_HDR_LEN + MAX_FRAME];
	unsigned int len, i, head, n;
	uint64_t c0 = 0, c1, written = 0;
	double t0 = 0, t1, end, cpu0 = 0;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct iovec iov;
	bool measuring = false;
	int fd, err;

	enter_netns(o->netns);
	pin(o->cpu);
	len = VNET_HDR_LEN + udp_frame(buf + VNET_HDR_LEN, o->size, dst);
	if (kind == W_REFUSED)
		len = 8;
	fd = tap_queue(o->dev, true);
	ring_init(&ring, o->batch);
	iov = (struct iovec){ buf, sizeof(buf) };
	err = io_uring_register_buffers(&ring, &iov, 1);
	if (err)
		die("io_uring_register_buffers: %s", strerror(-err));
	err = io_uring_register_files(&ring, &fd, 1);
	if (err)
		die("io_uring_register_files: %s", strerror(-err));

	end = now_s() + o->warmup;
	while (!stop) {
		if (now_s() >= end) {
			if (measuring)
				break;
			measuring = true;
			c0 = link_counter(o->dev, "rx_packets");
			t0 = now_s();
			cpu0 = thread_cpu();
			written = 0;
			end = t0 + o->seconds;
		}
		for (i = 0; i < o->batch; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_write_fixed(sqe, 0, buf, len, 0, 0);
			sqe->flags |= IOSQE_FIXED_FILE;
		}
		err = io_uring_submit_and_wait(&ring, o->batch);
		if (err < 0)
			die("io_uring_submit: %s", strerror(-err));
		for (i = 0; i < o->batch;) {
			err = io_uring_wait_cqe(&ring, &cqe);
			if (err)
				die("io_uring_wait_cqe: %s", strerror(-err));
			n = 0;
			io_uring_for_each_cqe(&ring, head, cqe) {
				if (cqe->res == (int)len ||
				    (floor && cqe->res == fail))
					written++;
				else if (cqe->res != -EAGAIN)
					die("write into %s: %s", o->dev,
					    strerror(-cqe->res));
				n++;
			}
			io_uring_cq_advance(&ring, n);
			i += n;
		}
	}
	t1 = now_s();
	cpu0 = thread_cpu() - cpu0;
	c1 = link_counter(o->dev, "rx_packets");
	fprintf(stderr, "%s: %.0f completions/s, %.0f rx_packets/s\n",
		kind == W_FLOOR ? "floor" : kind == W_REFUSED ? "refused" : "write",
		written / (t1 - t0),
		(c1 - c0) / (t1 - t0));
	report(floor ? written : c1 - c0, t1 - t0, cpu0);
	return 0;
}

/* ---- read: the tap->guest ceiling ---- */

#define READS 64

static int do_read(const struct opts *o)
{
	static unsigned char bufs[READS][VNET_HDR_LEN + 65550];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint64_t frames = 0, bytes = 0;
	double t0 = 0, t1, end;
	bool measuring = false;
	unsigned int i, head, n;
	int fd, err;

	enter_netns(o->netns);
	pin(o->cpu);
	fd = tap_queue(o->dev, false);
	ring_init(&ring, 2 * READS);
	for (i = 0; i < READS; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_read(sqe, fd, bufs[i], sizeof(bufs[i]), 0);
		io_uring_sqe_set_data64(sqe, i);
	}
	end = now_s() + o->warmup;
	while (!stop) {
		struct __kernel_timespec ts = { 0, 100000000 };

		if (now_s() >= end) {
			if (measuring)
				break;
			measuring = true;
			t0 = now_s();
			frames = bytes = 0;
			end = t0 + o->seconds;
		}
		err = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts,
						       NULL);
		if (err < 0 && err != -ETIME && err != -EINTR)
			die("io_uring: %s", strerror(-err));
		n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			__u64 idx = io_uring_cqe_get_data64(cqe);
			struct io_uring_sqe *sqe;

			if (cqe->res > VNET_HDR_LEN) {
				frames++;
				bytes += cqe->res - VNET_HDR_LEN;
			} else if (cqe->res < 0 && cqe->res != -EAGAIN &&
				   cqe->res != -EINTR) {
				die("read from %s: %s", o->dev,
				    strerror(-cqe->res));
			}
			n++;
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read(sqe, fd, bufs[idx], sizeof(bufs[idx]),
					   0);
			io_uring_sqe_set_data64(sqe, idx);
		}
		io_uring_cq_advance(&ring, n);
	}
	t1 = now_s();
	fprintf(stderr, "read: %.0f frames/s, %.0f MB/s\n",
		frames / (t1 - t0), bytes / (t1 - t0) / 1e6);
	printf("%.0f\n", frames / (t1 - t0));
	return 0;
}

/* ---- gen: frames out of a device ---- */

static int do_gen(const struct opts *o)
{
	static const unsigned char dst[ETH_ALEN] = { 2, 0, 0, 0, 0, 2 };
	static unsigned char frame[MAX_FRAME];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	struct mmsghdr msgs[64];
	struct iovec iov;
	uint64_t sent = 0, nobufs = 0;
	double t0, end;
	unsigned int len, i;
	int fd;

	enter_netns(o->netns);
	pin(o->cpu);
	len = udp_frame(frame, o->size, dst);
	sll.sll_ifindex = if_nametoindex(o->dev);
	if (!sll.sll_ifindex)
		die("no link %s", o->dev);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		die("AF_PACKET on %s: %s", o->dev, strerror(errno));
	iov = (struct iovec){ frame, len };
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < 64; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now_s();
	end = o->seconds > 0 ? t0 + o->seconds : 1e18;
	while (!stop && now_s() < end) {
		int n = sendmmsg(fd, msgs, 64, 0);

		if (n > 0)
			sent += n;
		else if (errno == ENOBUFS || errno == EAGAIN)
			nobufs++;
		else if (errno != EINTR)
			die("sendmmsg: %s", strerror(errno));
	}
	fprintf(stderr, "gen: %.0f frames/s sent (%llu ENOBUFS)\n",
		sent / (now_s() - t0), (unsigned long long)nobufs);
	return 0;
}

static int do_spin(const struct opts *o)
{
	volatile unsigned long x = 0;
	double end;
	int i;

	pin(o->cpu);
	end = o->seconds > 0 ? now_s() + o->seconds : 1e18;
	while (!stop && now_s() < end)
		for (i = 0; i < 100000; i++)
			x++;
	return 0;
}

static int do_rate(const struct opts *o)
{
	uint64_t c0, c1;
	double t0, t1, end, p0, p1;

	enter_netns(o->netns);
	c0 = link_counter(o->dev, o->counter);
	end = now_s() + o->wait;
	while (link_counter(o->dev, o->counter) == c0) {
		if (now_s() > end || stop)
			die("%s %s did not move in %.0f s", o->dev, o->counter,
			    o->wait);
		nap(0.01);
	}
	nap(o->warmup);
	p0 = proc_cpu(o->pid);
	c0 = link_counter(o->dev, o->counter);
	t0 = now_s();
	nap(o->seconds);
	c1 = link_counter(o->dev, o->counter);
	t1 = now_s();
	p1 = proc_cpu(o->pid);
	report(c1 - c0, t1 - t0, p0 >= 0 && p1 >= 0 ? p1 - p0 : -1);
	return 0;
}

/* ---- signals: call-eventfd signals per 1000 frames ---- */

static bool tx_used(struct vufe *fe, void *arg)
{
	(void)arg;
	vufe_tx_reap(fe, 0);
	return vufe_tx_inflight(fe, 0) == 0;
}

static int set_coal(const char *tap, __u32 frames, __u32 usecs)
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
		c.tx_frames = c.rx_frames = frames;
		c.tx_usecs = c.rx_usecs = usecs;
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
		unsigned int sum = 0, i;

		ip[9] = IPPROTO_TCP;
		ip[10] = ip[11] = 0;
		for (i = 0; i < 20; i += 2)
			sum += ip[i] << 8 | ip[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		ip[10] = ~sum >> 8;
		ip[11] = ~sum & 0xff;
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

static int do_signals(const struct opts *o)
{
	static const struct {
		const char *name;
		__u32 frames, usecs;
	} modes[] = {
		{ "off", 0, 0 },
		{ "on (tx/rx-frames 32, tx/rx-usecs 200)", 32, 200 },
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

		err = set_coal(o->dev, modes[m].frames, modes[m].usecs);
		if (err)
			die("config map of %s: %s", o->dev, strerror(-err));
		ab = tx_armed(fe, o->frames, false);
		au = tx_armed(fe, o->frames, true);
		rb = rx_armed(fe, pfd, o->frames);
		sb = tx_stream(fe, o->frames, false);
		su = tx_stream(fe, o->frames, true);
		sr = rx_stream(fe, pfd, o->frames);
		printf("coalescing %s:\n"
		       "  armed guest:  tx bulk %.1f  tx urgent %.1f  rx %.1f\n"
		       "  stream guest: tx bulk %.1f  tx urgent %.1f  rx %.1f\n",
		       modes[m].name, ab, au, rb, sb, su, sr);
	}
	set_coal(o->dev, 0, 0);
	vufe_destroy(fe);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_vnetd_io rate|write|floor|refused|read|gen|spin|signals [options]\n"
		"  --netns NS --dev|--tap NAME --size N --cpu C --seconds S\n"
		"  --warmup S --wait S --batch N --counter rx_packets|tx_packets\n"
		"  --socket PATH --frames N --pid PID\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "netns", required_argument, NULL, 'n' },
		{ "dev", required_argument, NULL, 'd' },
		{ "tap", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "wait", required_argument, NULL, 'W' },
		{ "batch", required_argument, NULL, 'b' },
		{ "counter", required_argument, NULL, 'k' },
		{ "socket", required_argument, NULL, 'S' },
		{ "frames", required_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .size = 64, .batch = 128, .frames = 4000,
			  .cpu = -1, .seconds = 1, .warmup = 0.3, .wait = 15,
			  .counter = "rx_packets" };
	const char *mode;
	int ch;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'n': o.netns = optarg; break;
		case 'd': o.dev = optarg; break;
		case 's': o.size = atoi(optarg); break;
		case 'c': o.cpu = atoi(optarg); break;
		case 't': o.seconds = atof(optarg); break;
		case 'w': o.warmup = atof(optarg); break;
		case 'W': o.wait = atof(optarg); break;
		case 'b': o.batch = atoi(optarg); break;
		case 'k': o.counter = optarg; break;
		case 'S': o.sock = optarg; break;
		case 'f': o.frames = atoi(optarg); break;
		case 'p': o.pid = atoi(optarg); break;
		default: usage();
		}
	}
	if (o.size < 60 || o.size > MAX_FRAME || !o.batch || o.batch > 4096)
		usage();
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "spin"))
		return do_spin(&o);
	if (!o.dev)
		usage();
	if (!strcmp(mode, "rate"))
		return do_rate(&o);
	if (!strcmp(mode, "write"))
		return do_write(&o, W_FRAMES);
	if (!strcmp(mode, "floor"))
		return do_write(&o, W_FLOOR);
	if (!strcmp(mode, "refused"))
		return do_write(&o, W_REFUSED);
	if (!strcmp(mode, "read"))
		return do_read(&o);
	if (!strcmp(mode, "gen"))
		return do_gen(&o);
	if (!strcmp(mode, "signals") && o.sock)
		return do_signals(&o);
	usage();
	return 2;
}
