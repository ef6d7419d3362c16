// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_xmit_send: the CPU cost of transmitting a frame on a device vnet is
 * NOT attached to, which is what every program on the net_dev_start_xmit
 * tracepoint adds to every device of the host (bench/bench_xmit.sh drives
 * it with 0, 1, 16, 64 taps attached; docs/benchmarks.md).
 *
 * Sends FRAMES raw Ethernet frames of SIZE bytes on IFNAME (bench_xmit.sh
 * uses the loopback device of a namespace of its own: it transmits
 * synchronously, then drops the frame, addressed to a MAC nobody has, on
 * receive) with AF_PACKET sendmmsg in batches of BATCH, through the qdisc layer
 * (no PACKET_QDISC_BYPASS: that path skips xmit_one() and the tracepoint).
 * The frames complete in the sender's context, so the process's CPU time
 * (user + system, CLOCK_PROCESS_CPUTIME_ID) divided by the frames is the
 * per-frame cost, independent of what else runs on the machine (other than
 * cache and frequency effects).  Prints one line:
 *   ns_per_frame N.N frames N cpu_ns N wall_ns N
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#define MAX_BATCH 256

static unsigned long long ns_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_xmit_send -i IFNAME [-n FRAMES] [-b BATCH] [-s SIZE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static unsigned char frame[1514];
	struct mmsghdr msgs[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	const char *ifname = NULL;
	unsigned long long frames = 1000000, sent = 0, c0, c1, w0, w1;
	int batch = 64, size = 64, opt, fd, i, n;

	while ((opt = getopt(argc, argv, "i:n:b:s:")) != -1) {
		switch (opt) {
		case 'i':
			ifname = optarg;
			break;
		case 'n':
			frames = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			batch = atoi(optarg);
			break;
		case 's':
			size = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!ifname || batch < 1 || batch > MAX_BATCH || size < 60 ||
	    size > (int)sizeof(frame) || !frames)
		usage();

	fd = socket(AF_PACKET, SOCK_RAW, 0); /* send only: bind no protocol */
	if (fd < 0) {
		perror("socket(AF_PACKET)");
		return 1;
	}
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "%s: no such device\n", ifname);
		return 1;
	}
	sll.sll_halen = ETH_ALEN;
	/* to a MAC nobody has, from a locally administered one; IPv4-ish */
	memcpy(frame, "\x02\x00\x00\x00\xbe\x01\x02\x00\x00\x00\xbe\x02", 12);
	frame[12] = 0x08;
	frame[13] = 0x00;
	memcpy(sll.sll_addr, frame, ETH_ALEN);
	for (i = 0; i < batch; i++) {
		iov[i].iov_base = frame;
		iov[i].iov_len = (size_t)size;
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_name = &sll;
		msgs[i].msg_hdr.msg_namelen = sizeof(sll);
	}

	/* warm up: page in, fill the caches */
	for (i = 0; i < 64; i++)
		if (sendmmsg(fd, msgs, (unsigned int)batch, 0) < 0) {
			perror("sendmmsg");
			return 1;
		}

	c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	w0 = ns_of(CLOCK_MONOTONIC);
	while (sent < frames) {
		n = sendmmsg(fd, msgs, (unsigned int)batch, 0);
		if (n < 0) {
			if (errno == ENOBUFS || errno == EINTR)
				continue;
			perror("sendmmsg");
			return 1;
		}
		sent += (unsigned long long)n;
	}
	c1 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	w1 = ns_of(CLOCK_MONOTONIC);
	printf("ns_per_frame %.1f frames %llu cpu_ns %llu wall_ns %llu\n",
	       (double)(c1 - c0) / (double)sent, sent, c1 - c0, w1 - w0);
	close(fd);
	return 0;
}
