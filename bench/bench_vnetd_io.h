/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* bench_vnetd_io: what its files share (see bench_vnetd_io.c) */
#ifndef VNET_BENCH_VNETD_IO_H
#define VNET_BENCH_VNETD_IO_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
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

/* ---- bench_vnetd_io_lib.c ---- */

#define VNET_HDR_LEN 12
#define MAX_FRAME 2048

#define SLICE_ARMS 8

struct opts {
	const char *netns, *dev, *counter, *sock;
	unsigned int size, batch, frames;
	int cpu, pid, touch_cpu;
	bool unfixed, gso;
	double seconds, warmup, wait;
	/* slice */
	const char *arm[SLICE_ARMS];
	int narms, rounds, warm_rounds;
	double slice_ms, settle_ms, target, max_wait;
};

extern volatile sig_atomic_t stop;

void on_stop(int sig);

double now_s(void);

int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int die(const char *fmt, ...);

void enter_netns(const char *name);

void pin(int cpu);

uint64_t link_counter(const char *dev, const char *counter);

void nap(double s);

/* CPU seconds of process PID (all its threads), or -1 */
double proc_cpu(pid_t pid);

double thread_cpu(void);

/*
 * "FRAMES/S FRAMES/CPU-S SHARE": the rate, the rate per second of the
 * backend's CPU time, and the share of the window the backend ran
 */
void report(uint64_t frames, double wall, double cpu);

/* testpmd txonly's frame: UDP 198.18.0.1:9 -> 198.18.0.2:9 */
/* the IPv4 header checksum of the 20-byte header at IP */
void ip_csum_set(unsigned char *ip);
unsigned int udp_frame(unsigned char *f, unsigned int len,
		       const unsigned char *dst);

/* a queue of an existing multi-queue vnet_hdr tap */
int tap_queue(const char *name, bool nonblock);

void ring_init(struct io_uring *ring, unsigned int entries);

/* ---- bench_vnetd_io_ceil.c: the ceilings, frame generation, rates ---- */

enum write_kind {
	W_FRAMES,	/* frames the tap takes: count rx_packets */
	W_FLOOR,	/* link down: tun builds the skb, drops it (EIO) */
	W_REFUSED,	/* 8 bytes, less than the virtio-net header: EINVAL */
	W_COLD,		/* frames from a ring of slots another CPU rewrites */
};

int do_write(const struct opts *o, enum write_kind kind);
int do_read(const struct opts *o);
int do_gen(const struct opts *o);
int do_spin(const struct opts *o);
int do_rate(const struct opts *o);

/* ---- bench_vnetd_io_slice.c ---- */

int do_slice(const struct opts *o);

/* ---- bench_vnetd_io_signals.c ---- */

int do_signals(const struct opts *o);

#endif /* VNET_BENCH_VNETD_IO_H */
