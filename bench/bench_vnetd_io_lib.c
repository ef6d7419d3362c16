// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bench_vnetd_io: options, timing, namespaces, taps, reporting */
#include "bench_vnetd_io.h"


volatile sig_atomic_t stop;

void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench_vnetd_io: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void enter_netns(const char *name)
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

void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("CPU %d: %s", cpu, strerror(errno));
}

uint64_t link_counter(const char *dev, const char *counter)
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

void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
		;
}

double proc_cpu(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (pid <= 0 || clock_getcpuclockid(pid, &clk) ||
	    clock_gettime(clk, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void report(uint64_t frames, double wall, double cpu)
{
	if (cpu > 0)
		printf("%.0f %.0f %.2f\n", frames / wall, frames / cpu,
		       cpu / wall);
	else
		printf("%.0f nan nan\n", frames / wall);
}

void ip_csum_set(unsigned char *ip)
{
	unsigned int sum = 0, i;

	ip[10] = ip[11] = 0;
	for (i = 0; i < 20; i += 2)
		sum += ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = ~sum >> 8;
	ip[11] = ~sum & 0xff;
}

unsigned int udp_frame(unsigned char *f, unsigned int len,
		       const unsigned char *dst)
{
	static const unsigned char src[ETH_ALEN] = { 2, 0, 0, 0, 0, 1 };
	unsigned char *ip = f + 14, *udp = ip + 20;

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
	ip_csum_set(ip);
	udp[1] = 9;
	udp[3] = 9;
	udp[4] = (len - 34) >> 8;
	udp[5] = (len - 34) & 0xff;
	return len;
}

int tap_queue(const char *name, bool nonblock)
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

void ring_init(struct io_uring *ring, unsigned int entries)
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
