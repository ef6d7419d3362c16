// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * soak: many vufe frontends (selftests/frontend) against one vnetd, traffic
 * both ways for a long time, and vnetd's fds, RSS and mappings sampled
 * along the way (selftests/vnetd/test_soak.sh, `make soak`).
 *
 *   soak --sock FMT --ports N [--qp N] [--secs S] [--warmup S] [--rate R]
 *        [--sample S] [--self] [--go] [--max-lag MS] [--rate2 R] --pid PID
 *
 * FMT is a printf format with one %u, the port's index (e.g.
 * /tmp/x/p%u.sock).  Ports 2k and 2k+1 are peers: each frontend sends
 * Ethernet/IPv4/UDP frames (60-1514 bytes) to its peer's MAC, R frames a
 * second in all, spread over its queue pairs and over 8 UDP source ports (so
 * that the tap's steering spreads them over the queues); the test puts
 * the two taps of a pair on a bridge of their own.  With --self every port
 * is its own peer (any number of ports): its frames go to its own MAC, and
 * the caller puts each tap on a bridge of its own with hairpin mode on, so
 * that they come back.  The ports' frames are spread over each 1/R s
 * (port P's due 1/N of a frame later than port P-1's), not sent at the
 * same instant.  A frontend that fell behind (its process had no CPU)
 * catches up at once, unless --max-lag: then frames owed for longer than
 * MS ms are never sent, so that the offered rate stays the rate and does
 * not come in bursts.  Each frontend receives
 * what its peer sent and counts it.  A multicast frame whose source MAC is
 * not a frontend's came from the host (the bridge's own IGMP report when it
 * comes up, for instance): it is counted as "host" and otherwise ignored; any other
 * frame that is not one of the peer's, whole, is "foreign" (misdelivered or
 * damaged), and the first three of a port are shown on stderr.
 *
 * The first half of the warm-up floods the rings (below).  After WARMUP
 * seconds of traffic, vnetd's open fds (/proc/PID/fd), RSS (VmRSS, and of
 * it RssAnon and RssShmem: guest memory the frontends share counts as
 * RssShmem once vnetd touched a page) and mappings (/proc/PID/maps lines)
 * are sampled ("start"), then every SAMPLE seconds, and once more ("end")
 * after everything in flight has arrived (2 s without a frame) while every
 * frontend is still connected.  Output, one line each:
 *
 *   sample t=S fds=N rss_kb=N anon_kb=N shmem_kb=N maps=N (also start, end)
 *   port I sent=N recv=N foreign=N sent_q0=N sent_q1=N recv_q0=N recv_q1=N
 *          host=N
 *   done secs=S sent=N recv=N foreign=N
 *
 * With --go, every frontend connects and posts its RX buffers, then "ready"
 * is printed and nothing is sent until SIGUSR1 (SIGINT or SIGTERM ends it
 * there): the caller measures vnetd with its frontends connected and idle
 * first.  The clock of --warmup and --secs starts at SIGUSR1.  Each
 * SIGUSR2 then stops sending (the frontends stay and receive) or goes on
 * at --rate2 (--rate), in turn.  Each SIGURG prints, from the first
 * frame sent on, a line about the time since the SIGURG before (soak.h):
 *
 *   gaps ports=N secs=S max_ms=X median_ms=X over50=N worst_port=P
 *        sent=N recv=N lost=N
 *
 * the longest gap between two frames a port received (over the ports:
 * the largest, the median, how many over 50 ms), the frames sent since,
 * received and lost: what a hand-over paused (bench_vnetd_scale.sh -H).
 * At most 1024 ports, at the hard RLIMIT_NOFILE.
 *
 * Exit status 0 unless a frontend failed (the reason on stderr).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include "frontend/vufe.h"
#include "soak.h"

#define MAX_PORTS 1024
#define MAX_QP		8
#define MAGIC		0x564e534bu	/* "VNSK" */
#define FRAME_MAX	1514
#define BURST		16

struct port {
	struct vufe *fe;
	__u64 sent[MAX_QP], recv[MAX_QP], foreign, host;
	__u64 seq;
	__u64 skipped;	/* frames owed longer than --max-lag: never sent */
};

struct payload {
	__be32 magic;
	__be32 src;
	__be64 seq;
} __attribute__((packed));

static struct port ports[MAX_PORTS];
static unsigned int nr_ports, nr_qp = 2;
static bool self_peer;
static volatile sig_atomic_t stop, go, phase_req, gap_req;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		go = 1;
	else if (sig == SIGUSR2)
		phase_req++;
	else if (sig == SIGURG)
		gap_req++;
	else
		stop = 1;
}

/* the port that port P sends to and receives from */
static unsigned int peer_of(unsigned int p)
{
	return self_peer ? p : p ^ 1;
}

static void mac_of(unsigned int p, __u8 *mac)
{
	static const __u8 base[ETH_ALEN] = { 0x02, 0x5a, 0, 0, 0, 0 };

	memcpy(mac, base, ETH_ALEN);
	mac[4] = (__u8)(p >> 8), mac[5] = (__u8)p;
}

static __u16 ip_csum(const void *data, size_t len)
{
	const __u16 *w = data;
	__u32 sum = 0;

	for (; len > 1; len -= 2)
		sum += *w++;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* frame SEQ of port P to its peer; returns its length */
static size_t build(unsigned int p, __u64 seq, __u8 *f)
{
	size_t len = 60 + (seq * 37) % (FRAME_MAX - 60 + 1);
	struct ethhdr *eth = (struct ethhdr *)f;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	struct payload *pl = (struct payload *)(udp + 1);
	size_t i;

	mac_of(peer_of(p), eth->h_dest);
	mac_of(p, eth->h_source);
	eth->h_proto = htons(ETH_P_IP);
	memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(len - sizeof(*eth));
	ip->saddr = htonl(0xc0000200 | (10 + p));	/* 192.0.2.10+p */
	ip->daddr = htonl(0xc0000200 | (10 + peer_of(p)));
	ip->check = ip_csum(ip, sizeof(*ip));
	udp->source = htons(40000 + seq % 8);
	udp->dest = htons(50000);
	udp->len = htons(len - sizeof(*eth) - sizeof(*ip));
	udp->check = 0;
	pl->magic = htonl(MAGIC);
	pl->src = htonl(p);
	pl->seq = htobe64(seq);
	for (i = sizeof(*eth) + sizeof(*ip) + sizeof(*udp) + sizeof(*pl);
	     i < len; i++)
		f[i] = (__u8)(seq + i);
	return len;
}

/* a frame port P received: its peer's, whole?  Its seq in *SEQ */
static bool frame_ok(unsigned int p, const __u8 *f, size_t n, __u64 *seqp)
{
	size_t off = sizeof(struct ethhdr) + sizeof(struct iphdr) +
		     sizeof(struct udphdr);
	const struct payload *pl = (const struct payload *)(f + off);
	__u8 mac[ETH_ALEN];
	__u64 seq;
	size_t i;

	if (n < off + sizeof(*pl) || ntohl(pl->magic) != MAGIC ||
	    ntohl(pl->src) != peer_of(p))
		return false;
	mac_of(p, mac);
	if (memcmp(f, mac, ETH_ALEN))
		return false;
	*seqp = seq = be64toh(pl->seq);
	if (n != 60 + (seq * 37) % (FRAME_MAX - 60 + 1))
		return false;
	for (i = off + sizeof(*pl); i < n; i++)
		if (f[i] != (__u8)(seq + i))
			return false;
	return true;
}

/*
 * The host's own: to a multicast or broadcast address, from a source MAC
 * that is not one of mac_of()'s.  A frontend's frame, even damaged in its
 * source, goes to its peer's unicast MAC and stays "foreign".
 */
static bool from_host(const __u8 *f, size_t n)
{
	__u8 mac[ETH_ALEN];

	if (n < ETH_HLEN || !(f[0] & 1))
		return false;
	mac_of(0, mac);
	return memcmp(f + ETH_ALEN, mac, ETH_ALEN - 2) ||
	       ((unsigned int)f[2 * ETH_ALEN - 2] << 8 | f[2 * ETH_ALEN - 1]) >=
		       nr_ports;
}

/* what a frame that is not the peer's is, on stderr (the test shows it) */
static void show_foreign(unsigned int p, unsigned int q, const __u8 *f,
			 size_t n)
{
	size_t i;

	fprintf(stderr, "soak: port %u queue %u: foreign frame, %zu bytes:", p,
		q, n);
	for (i = 0; i < n && i < 48; i++)
		fprintf(stderr, "%s%02x", i % 4 ? "" : " ", f[i]);
	fprintf(stderr, "\n");
}

static int fail(unsigned int p, const char *what, int err)
{
	fprintf(stderr, "soak: port %u: %s: %s (%s)\n", p, what,
		strerror(-err), vufe_strerror(ports[p].fe));
	return 1;
}

/* reap the TX rings only */
static long reap(unsigned int p, int *err)
{
	unsigned int q;
	int r;

	for (q = 0; q < nr_qp; q++) {
		r = vufe_tx_reap(ports[p].fe, q);
		if (r < 0) {
			*err = r;
			return -1;
		}
	}
	return 0;
}

/* receive and reap everything there is; the number of frames received */
static long drain(unsigned int p, int *err)
{
	static __u8 buf[65536];
	struct port *pt = &ports[p];
	unsigned int q;
	long got = 0;
	ssize_t n;
	__u64 seq;
	int r;

	for (q = 0; q < nr_qp; q++) {
		r = vufe_tx_reap(pt->fe, q);
		if (r < 0) {
			*err = r;
			return -1;
		}
		for (;;) {
			n = vufe_recv(pt->fe, q, buf, sizeof(buf), NULL, NULL);
			if (n == -EAGAIN)
				break;
			if (n < 0) {
				*err = n;
				return -1;
			}
			if (frame_ok(p, buf, n, &seq)) {
				pt->recv[q]++;
				gap_rx(p, seq, now_s());
			} else if (from_host(buf, n))
				pt->host++;
			else if (pt->foreign++ < 3)
				show_foreign(p, q, buf, n);
			got++;
		}
	}
	return got;
}

/* SIGURG: the gaps since the last reset (soak.h), then a reset */
static void gaps_report(double now)
{
	static __u64 next[MAX_PORTS];
	unsigned int p;

	for (p = 0; p < nr_ports; p++)
		next[p] = ports[p].seq;
	gap_report(now, next);
	for (p = 0; p < nr_ports; p++)
		gap_reset_port(p, ports[p].seq, now);
}

static void usage(void)
{
	fprintf(stderr, "usage: soak --sock FMT --ports N [--qp N] [--secs S] "
			"[--warmup S] [--rate R] [--sample S] [--self] [--go] "
			"[--max-lag MS] [--rate2 R] --pid PID\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "sock", required_argument, NULL, 's' },
		{ "ports", required_argument, NULL, 'n' },
		{ "qp", required_argument, NULL, 'q' },
		{ "secs", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "sample", required_argument, NULL, 'S' },
		{ "pid", required_argument, NULL, 'p' },
		{ "self", no_argument, NULL, 'e' },
		{ "go", no_argument, NULL, 'g' },
		{ "max-lag", required_argument, NULL, 'l' },
		{ "rate2", required_argument, NULL, 'R' },
		{ 0 },
	};
	double secs = 20, warmup = 5, rate = 200, every = 60, max_lag = -1;
	double t0, t_warm, t_end, next_sample, last_rx, now, credit;
	double rate2 = -1, cur_rate, base, t_base;
	struct rlimit nofile;
	sig_atomic_t phase = 0, gap_done = 0;
	double last_flood_rx = 0;
	bool flood, rx_now;
	__u64 total_sent = 0, total_recv = 0, total_foreign = 0;
	const char *fmt = NULL;
	struct usage u;
	__u8 frame[FRAME_MAX];
	unsigned int p, q, i;
	bool warm = false, wait_go = false;
	sigset_t block, old;
	int c, pid = 0, err;
	long got;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': fmt = optarg; break;
		case 'n': nr_ports = atoi(optarg); break;
		case 'q': nr_qp = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'w': warmup = atof(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'S': every = atof(optarg); break;
		case 'p': pid = atoi(optarg); break;
		case 'e': self_peer = true; break;
		case 'g': wait_go = true; break;
		case 'l': max_lag = atof(optarg) / 1000; break;
		case 'R':
			rate2 = atof(optarg);
			break;
		default: usage();
		}
	}
	if (!fmt || !pid || nr_ports < 1 || nr_ports > MAX_PORTS ||
	    (!self_peer && nr_ports % 2) || !nr_qp || nr_qp > MAX_QP ||
	    rate <= 0)
		usage();
	if (!getrlimit(RLIMIT_NOFILE, &nofile)) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_signal);
	signal(SIGUSR2, on_signal);
	signal(SIGURG, on_signal);
	/* held until sigsuspend() below: none is lost before it */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);

	for (p = 0; p < nr_ports; p++) {
		struct vufe_opts o = VUFE_OPTS_DEFAULT;
		char path[256];

		snprintf(path, sizeof(path), fmt, p);
		o.path = path;
		o.nr_qp = nr_qp;
		o.mem_size = 16UL << 20;
		o.tx_buf_size = 4096;
		err = vufe_create(&o, &ports[p].fe);
		if (err) {
			fprintf(stderr, "soak: port %u: vufe_create: %s (%s)\n",
				p, strerror(-err), vufe_strerror(NULL));
			return 1;
		}
		err = vufe_connect(ports[p].fe);
		if (err)
			return fail(p, "connect", err);
		err = vufe_setup(ports[p].fe);
		if (err)
			return fail(p, "setup", err);
		for (q = 0; q < nr_qp; q++) {
			err = vufe_post_rx(ports[p].fe, q, 0);
			if (err < 0)
				return fail(p, "post_rx", err);
		}
	}

	if (wait_go) {
		printf("ready ports=%u\n", nr_ports);
		fflush(stdout);
		while (!go && !stop)
			sigsuspend(&old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);

	t0 = now_s();
	if (gap_init(nr_ports, t0)) {
		fprintf(stderr, "soak: out of memory\n");
		return 1;
	}
	/* due per port: base + (now - t_base) * cur_rate (SIGUSR2: 0, rate2) */
	cur_rate = rate, t_base = t0, base = warmup / 2 * rate * 9;
	rate2 = rate2 < 0 ? rate : rate2;
	t_warm = t0 + warmup;
	t_end = t_warm + secs;
	next_sample = t_warm + every;
	while (!stop) {
		bool idle = true;

		now = now_s();
		if (now >= t_end)
			break;
		if (gap_done != gap_req) {
			gap_done = gap_req;
			gaps_report(now);
		}
		if (!warm && now >= t_warm) {
			sample(pid, &u);
			print_sample("start", 0, &u);
			warm = true;
		}
		if (warm && now >= next_sample) {
			sample(pid, &u);
			print_sample(NULL, now - t_warm, &u);
			next_sample += every;
		}
		/*
		 * The first half of the warm-up floods: ten times the rate,
		 * frames taken from the RX rings only every 200 ms, so that
		 * the peers' rings fill, their taps queue and vnetd reads
		 * full bursts: every buffer it ever uses (bounce slots, guest
		 * pages) is touched before the first sample.
		 */
		flood = now < t0 + warmup / 2;
		if (!flood && phase != phase_req) {
			base += (now - t_base) * cur_rate;
			t_base = now;
			phase = phase_req;
			cur_rate = phase % 2 ? 0 : rate2;
		}
		if (flood)
			credit = (now - t0) * rate * 10;
		else
			credit = base + (now - t_base) * cur_rate;
		rx_now = !flood || now - last_flood_rx >= 0.2;
		if (rx_now)
			last_flood_rx = now;
		for (p = 0; p < nr_ports; p++) {
			struct port *pt = &ports[p];
			double c = credit - (double)p / nr_ports;
			__u64 due = c > 0 ? (__u64)c : 0;
			__u64 lag = max_lag >= 0 ? (__u64)(max_lag * rate) + 1 : 0;

			due = due > pt->skipped ? due - pt->skipped : 0;
			if (lag && due > pt->seq + lag) {
				pt->skipped += due - (pt->seq + lag);
				due = pt->seq + lag;
			}

			for (i = 0; i < BURST && pt->seq < due; i++) {
				q = pt->seq % nr_qp;
				err = vufe_send(pt->fe, q, NULL, frame,
						build(p, pt->seq, frame),
						VUFE_TX_NO_KICK);
				if (err == -ENOSPC)
					break;
				if (err)
					return fail(p, "send", err);
				pt->sent[q]++;
				pt->seq++;
				idle = false;
			}
			for (q = 0; q < nr_qp; q++) {
				err = vufe_kick(pt->fe, VUFE_TXQ(q));
				if (err < 0)
					return fail(p, "kick", err);
			}
			got = rx_now ? drain(p, &err) : reap(p, &err);
			if (got < 0)
				return fail(p, "drain", err);
			if (got)
				idle = false;
		}
		if (idle)
			usleep(1000);
	}

	/* everything in flight arrives: 2 s without a frame and no TX owed */
	last_rx = now_s();
	while (now_s() - last_rx < 2.0) {
		bool inflight = false;

		for (p = 0; p < nr_ports; p++) {
			got = drain(p, &err);
			if (got < 0)
				return fail(p, "drain", err);
			if (got)
				last_rx = now_s();
			for (q = 0; q < nr_qp; q++)
				inflight |= vufe_tx_inflight(ports[p].fe, q) > 0;
		}
		if (inflight)
			last_rx = now_s();
		if (now_s() - last_rx > 30)
			break;
		usleep(2000);
	}
	if (!warm) {
		sample(pid, &u);
		print_sample("start", 0, &u);
	}
	sample(pid, &u);
	print_sample("end", now_s() - t_warm, &u);

	for (p = 0; p < nr_ports; p++) {
		struct port *pt = &ports[p];
		__u64 s = 0, r = 0;

		for (q = 0; q < nr_qp; q++) {
			s += pt->sent[q];
			r += pt->recv[q];
		}
		printf("port %u sent=%llu recv=%llu foreign=%llu", p,
		       (unsigned long long)s, (unsigned long long)r,
		       (unsigned long long)pt->foreign);
		for (q = 0; q < nr_qp; q++)
			printf(" sent_q%u=%llu", q,
			       (unsigned long long)pt->sent[q]);
		for (q = 0; q < nr_qp; q++)
			printf(" recv_q%u=%llu", q,
			       (unsigned long long)pt->recv[q]);
		printf(" host=%llu\n", (unsigned long long)pt->host);
		total_sent += s;
		total_recv += r;
		total_foreign += pt->foreign;
	}
	printf("done secs=%.0f sent=%llu recv=%llu foreign=%llu\n",
	       now_s() - t_warm, (unsigned long long)total_sent,
	       (unsigned long long)total_recv,
	       (unsigned long long)total_foreign);
	fflush(stdout);
	for (p = 0; p < nr_ports; p++)
		vufe_destroy(ports[p].fe);
	return 0;
}
