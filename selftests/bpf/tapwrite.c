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
 * One program from three files (tapwrite.h): the options, setup and
 * frames in tapwrite_lib.c, the tcp command in tapwrite_tcp.c, the send
 * command and main() here.
 *
 * Exit: 0 success, 1 error, 2 usage.
 */
#include "tapwrite.h"

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
