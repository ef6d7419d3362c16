/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * soak (soak.c)'s parts: vnetd's use of fds and memory (soak_proc.c) and
 * the ring pauses (soak_gap.c).
 */
#ifndef SOAK_H
#define SOAK_H

#include <linux/types.h>

/* vnetd's, from /proc/PID: -1 what could not be read */
struct usage {
	long fds, rss_kb, anon_kb, shmem_kb, maps;
};

void sample(int pid, struct usage *u);
/* "sample t=T ..." and, WHAT not NULL, "WHAT fds=..." */
void print_sample(const char *what, double t, const struct usage *u);

/*
 * The ring pauses: per port, the longest gap between two frames it
 * received (CLOCK_MONOTONIC, as soak's loop saw them), since a reset
 * (SIGURG: the line below, then a reset).  What a hand-over's freeze
 * costs each guest (bench/bench_vnetd_scale.sh -H).
 */
/* before the first frame: NR ports, every gap from NOW */
int gap_init(unsigned int nr, double now);
/* port P received its peer's frame SEQ at NOW */
void gap_rx(unsigned int p, __u64 seq, double now);
/* port P's next frame to send is SEQ (its frames before are not counted) */
void gap_reset_port(unsigned int p, __u64 seq, double now);
/*
 * One line on stdout about the time since the last reset:
 *   gaps ports=N secs=S max_ms=X median_ms=X over50=N worst_port=P
 *        sent=N recv=N lost=N
 * the gaps taken up to NOW (a port still silent counts its silence);
 * sent: the frames the ports sent since (SENT - their seqs at the reset),
 * recv: of those, the ones received, lost: the ones missing below the
 * latest each port received (those after it may be in flight).
 */
void gap_report(double now, const __u64 *next_seq);

#endif
