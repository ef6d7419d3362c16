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
 *           per second as "FRAMES/S FRAMES/CPU-S SHARE" (the writer's CPU);
 *           --seconds 0 (write, cold, floor, refused): write until SIGINT
 *           or SIGTERM, for slice
 *   read    --netns NS --tap TAP [--cpu C] [--seconds S] [--warmup S]
 *           the tap->guest ceiling: one thread reads a queue of TAP with
 *           io_uring (64 reads in flight); prints frames read per second
 *           as "FRAMES/S FRAMES/CPU-S SHARE" (the reader's CPU)
 *   gen     --netns NS --dev DEV --size N [--cpu C] [--seconds S] [--gso]
 *           load for tap->guest: UDP frames sent out of DEV with
 *           AF_PACKET sendmmsg (64 per call) until killed or S seconds;
 *           --gso: 64 KiB TCP frames with a virtio-net header asking for
 *           TCP segmentation (gso_size 1448), as a host's TCP sends them
 *           to a guest that takes TSO (PACKET_VNET_HDR; --size ignored)
 *   floor   the same loop on a tap whose link is down: tun copies the
 *           frame and builds its skb, then drops it with EIO instead of
 *           running XDP and the stack; completions per second bound any
 *           tap writer whose frames go on into the host (perf: io_uring
 *           ~20%, tun_get_user/tun_build_skb/flow dissection the rest)
 *   cold    the write loop with the frames taken in turn from 256 slots
 *           (a virtio ring's worth) that a thread on --touch-cpu C keeps
 *           rewriting, as a guest writes its frames on its own CPU: what
 *           the ceiling costs when the data comes from another CPU's cache
 *   refused the same loop writing 8 bytes, less than the virtio-net
 *           header: tun refuses each write at once (EINVAL); what
 *           io_uring and tun's entry cost, with no frame at all
 *   slice   --netns NS --arm NAME:PID:DEV[:CPU] --arm ... [--rounds N]
 *           [--slice-ms MS] [--settle-ms MS] [--warmup-rounds N]
 *           [--target R] [--max-wait W]
 *           time-sliced A/B of processes writing into taps of NS: lets one
 *           arm run at a time (SIGCONT PID, the others SIGSTOPped) for a
 *           slice of MS (100), in N rounds (40) of every arm once, the
 *           order rotating between rounds and reversed every other cycle,
 *           after warm-up rounds (1) not counted; in each slice the first
 *           settle MS (20) are dropped, then DEV's rx_packets and CPU's
 *           CPU time (PID: all its threads, PID/TID: one thread, -: none;
 *           default the stopped PID) are read at the start and the end.
 *           A line a round on stderr; on stdout every arm's slice rates
 *           (min, median, upper decile, max), frames per CPU-second, the
 *           steal share of the CPUs in its slices, and
 *           for each arm over each later one the per-round ratios (min /
 *           median / max), the ratio of the upper deciles, and one-sided
 *           Wilcoxon signed-rank (and sign test) p of ratio >= R (0.95)
 *           and of ratio < R; then the same over the undisturbed rounds,
 *           those where no arm's threads (the stopped process's and the
 *           backend's) waited for a CPU (schedstat) more than W (0.02)
 *           of the slice.  Every arm gets SIGCONT when it ends, also
 *           on SIGINT, SIGTERM, SIGHUP or an error
 *   spin    [--cpu C] [--seconds S]
 *           a busy loop: a polling guest's use of its CPU
 *   signals --socket PATH --netns NS --tap TAP [--frames N]
 *           call-eventfd signals per 1000 frames with the vufe frontend
 *           (selftests/frontend) against vnetd, guest TX (bulk and urgent)
 *           and guest RX, with coalescing off and on; one line each
 *
 * Diagnostics go to stderr, the figure to stdout.  Exit 0 on success.
 */
#include "bench_vnetd_io.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_vnetd_io rate|write|floor|refused|cold|read|gen|spin|signals|slice [options]\n"
		"  --netns NS --dev|--tap NAME --size N --cpu C --seconds S\n"
		"  --warmup S --wait S --batch N --counter rx_packets|tx_packets\n"
		"  --socket PATH --frames N --pid PID --touch-cpu C --unfixed --gso\n"
		"  slice: --arm NAME:PID:DEV[:CPU] (2 to %d) --rounds N --slice-ms MS\n"
		"         --settle-ms MS --warmup-rounds N --target R --max-wait W\n",
		SLICE_ARMS);
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
		{ "touch-cpu", required_argument, NULL, 'T' },
		{ "unfixed", no_argument, NULL, 'U' },
		{ "gso", no_argument, NULL, 'G' },
		{ "arm", required_argument, NULL, 'A' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "slice-ms", required_argument, NULL, 'L' },
		{ "settle-ms", required_argument, NULL, 'E' },
		{ "warmup-rounds", required_argument, NULL, 'R' },
		{ "target", required_argument, NULL, 'g' },
		{ "max-wait", required_argument, NULL, 'X' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .size = 64, .batch = 128, .frames = 4000,
			  .cpu = -1, .touch_cpu = -1, .seconds = 1, .warmup = 0.3, .wait = 15,
			  .counter = "rx_packets", .rounds = 40, .warm_rounds = 1,
			  .slice_ms = 100, .settle_ms = 20, .target = 0.95,
			  .max_wait = 0.02 };
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
		case 'T': o.touch_cpu = atoi(optarg); break;
		case 'U': o.unfixed = true; break;
		case 'G': o.gso = true; break;
		case 'A':
			if (o.narms == SLICE_ARMS)
				usage();
			o.arm[o.narms++] = optarg;
			break;
		case 'r': o.rounds = atoi(optarg); break;
		case 'L': o.slice_ms = atof(optarg); break;
		case 'E': o.settle_ms = atof(optarg); break;
		case 'R': o.warm_rounds = atoi(optarg); break;
		case 'g': o.target = atof(optarg); break;
		case 'X': o.max_wait = atof(optarg); break;
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
	if (!strcmp(mode, "slice"))
		return do_slice(&o);
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
	if (!strcmp(mode, "cold"))
		return do_write(&o, W_COLD);
	if (!strcmp(mode, "read"))
		return do_read(&o);
	if (!strcmp(mode, "gen"))
		return do_gen(&o);
	if (!strcmp(mode, "signals") && o.sock)
		return do_signals(&o);
	usage();
	return 2;
}
