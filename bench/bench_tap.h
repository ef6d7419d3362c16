/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* bench_tap: what its files share (see bench_tap.c) */
#ifndef VNET_BENCH_TAP_H
#define VNET_BENCH_TAP_H

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
#include "vnet_shared.skel.h"
#include "../selftests/frames.h"

/* ---- bench_tap_lib.c ---- */

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

enum cfg {
	CFG_NONE,
	CFG_EMPTY_XDP,
	CFG_VNET_XDP,
	CFG_EMPTY_TC,
	CFG_VNET_TC,
	CFG_GUARD_TC,  /* vnet-tc with every spoofing check on (frames pass) */
	CFG_SHARED_TC, /* vnet-tc as the namespace's shared classifier runs it */
	/* tc ingress as a clsact direct-action filter (the rest: tcx) */
	CFG_EMPTY_CLSACT,  /* empty-tc */
	CFG_SHARED_CLSACT, /* vnet-tc-shared */
	CFG_MAX,
};

extern const char *const cfg_name[CFG_MAX];

extern const char *const cfg_json[CFG_MAX];

bool cfg_is_vnet(enum cfg c);

/* The configuration whose name (cfg_name) is NAME, or CFG_MAX. */
enum cfg cfg_by_name(const char *name);

enum size {
	SZ_64,
	SZ_1500,
	SZ_GSO,
	SZ_MAX,
};

extern const char *const sz_name[SZ_MAX];

extern const char *const sz_json[SZ_MAX];

/* Ethernet frame length (without the virtio_net_hdr) per size. */
extern const unsigned int sz_frame_len[SZ_MAX];

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
	bool cfg_on[CFG_MAX]; /* -C: the configurations measured */
	bool keep_clsact;     /* the clsact qdisc there for every arm */
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
	/* vnet_tc_tx built to be shared: the tap at slot 0, vnet's maps there */
	struct vnet_shared *shared;
	struct frame frames[SZ_MAX];
	int ncpus;
	/* tc ingress */
	enum cfg cur; /* what is attached now */
	int tcx_fd;   /* the tcx link, when one is attached */
	bool tc_legacy; /* the kernel has no tcx: every tc arm on clsact */
	bool clsact_on; /* the clsact qdisc is there */
	bool filter_on; /* a clsact arm's filter is on it */
	struct bpf_tc_hook tc_hook;
	/* io_uring inline/punt evidence */
	int iowq_max;
	/* results */
	struct result res[SZ_MAX][CFG_MAX];
	struct test_run trun[SZ_MAX][CFG_MAX];
	bool bpf_stats_already_on;
};

uint64_t now_ns(void);

uint64_t thread_cpu_ns(void);

int cmp_double(const void *a, const void *b);

struct summary {
	double min, med, max;
};

struct summary summarise(const double *v, int n);

int libbpf_print(enum libbpf_print_level level, const char *fmt,
		 va_list ap);

/* Progress and diagnostics go to stderr; results to stdout. */
#define info(...) fprintf(stderr, __VA_ARGS__)

/*
 * virtio_net_hdr + Ethernet/IPv4/TCP, payload, ACK set and PSH clear: class
 * URGENT.  The destination MAC differs from the tap's, so the frame is
 * PACKET_OTHERHOST and ip_rcv drops it right after the hooks.
 */
int build_frame(struct frame *f, enum size sz,
		const unsigned char *tap_mac);

int pin_cpu(int *cpu);

int create_tap(struct bench *b, unsigned char *mac);

/* newest flags first; fall back for older kernels */
extern const unsigned int try_flags[];

int setup_ring(struct bench *b);

/* Submit one batch of writes of frame f and reap all of it. */
int write_batch(struct bench *b, const struct frame *f,
		struct counts *c);

/* Write frame f for secs seconds. */
int write_for(struct bench *b, const struct frame *f, double secs,
	      struct counts *c);

/* io-wq workers of this process: > 0 means some writes were punted. */
int count_iowq_workers(void);

/* ---- bench_tap_phases.c ---- */

int prog_fd_of(struct bench *b, enum cfg c);

/*
 * tc ingress of configuration c is a clsact direct-action filter: the
 * clsact arms, and every tc arm on a kernel without tcx; else a tcx link.
 */
bool tc_clsact(const struct bench *b, enum cfg c);

/*
 * Attach configuration c's program to tc ingress (a tcx link or a clsact
 * filter, tc_clsact); REPLACE: a program of the same kind is attached,
 * swap it in place.
 */
int attach_tc(struct bench *b, enum cfg c, int prog_fd, bool replace);

/* The clsact qdisc on the tap's ingress. */
int clsact_create(struct bench *b);

/*
 * Take whatever is on tc ingress off: the tcx link, the clsact qdisc (or,
 * --keep-clsact, only the filter).
 */
int detach_tc(struct bench *b);

bool cfg_is_xdp(enum cfg c);

bool cfg_is_tc(enum cfg c);

/*
 * Move the tap from configuration b->cur to c.  Between two programs on the
 * same hook the program is replaced in place (XDP attach over XDP, tcx link
 * update, clsact filter replace): every tcx or XDP attach and detach waits for an RCU grace period (about
 * 10 ms here), and halving their number halves the benchmark's idle time.
 */
int switch_to(struct bench *b, enum cfg c);

int read_tx_stats(struct bench *b, struct vnet_class_stats *sum);

int check_classified(struct bench *b, enum size sz, enum cfg c,
		     const struct vnet_class_stats *before,
		     uint64_t frames);

int slices(const struct opts *o);

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
int one_slice(struct bench *b, enum size sz, enum cfg c, double secs,
	      struct acc *a);

/*
 * One repetition of one frame size: every configuration gets sample_s
 * seconds, cut into slices of about slice_s and interleaved round-robin,
 * forwards then backwards (ABCDE EDCBA ...), so that the host's slow
 * swings in speed and any effect of the previous configuration fall on
 * every configuration alike.
 */
int one_rep(struct bench *b, enum size sz, int rep);

int prog_run_stats(int fd, uint64_t *ns, uint64_t *cnt);

int run_time_sample(struct bench *b, enum size sz, enum cfg c);

int test_run_one(struct bench *b, enum size sz, enum cfg c);

/* ---- bench_tap_report.c ---- */

/* Both configurations of comparison k (cmps) were measured. */
bool cmp_on(const struct bench *b, int k);

/* Per-repetition ratio of two configurations' rates, a / b. */
int rate_ratios(struct bench *b, enum size sz, enum cfg a, enum cfg c,
		double *out);

/*
 * Cost of configuration a over base: extra time per frame in percent,
 * rate(base) / rate(a) - 1, and in ns, per repetition.
 */
void cost(struct bench *b, enum size sz, enum cfg a, enum cfg base,
	  double *pct, double *ns);

/*
 * The same cost on the writer thread's CPU time instead of wall time: all
 * the work is done inline by that thread, so this leaves out the time other
 * tasks of a busy machine ran on its CPU.
 */
void cost_cpu(struct bench *b, enum size sz, enum cfg a, enum cfg base,
	      double *pct);

struct cmp_def {
	const char *name;
	const char *json;
	enum cfg a, base;
};

extern const struct cmp_def cmps[];

#define NCMPS (int)(sizeof(cmps) / sizeof(cmps[0]))

double gbps(double pps, const struct frame *f);

void machine(char *buf, size_t len);

const char *ring_flags_str(unsigned int f);

/* Median of the per-repetition thread CPU/wall over every sample. */
double cpu_util(struct bench *b);

/* vnet-xdp over empty-xdp at 64 B, median of the repetitions, wall clock */
double target_wall_pct(struct bench *b);

/*
 * ... and on the writer's CPU time: the verdict.  Every write completes
 * inline in the writer thread (no io-wq), so its CPU time is the kernel
 * path's cost, without the time other tasks and the hypervisor took the
 * CPU away; on a quiet machine the two agree.
 */
double target_pct(struct bench *b);

void print_text(struct bench *b);

void json_summary(const char *name, struct summary s, double scale,
		  const char *sep);

void json_array(const char *name, const double *v, int n,
		double scale, const char *sep);

void print_json(struct bench *b);

/* ---- bench_tap.c ---- */

void usage(FILE *fp);

int parse_sizes(struct opts *o, const char *arg);

int parse_configs(struct opts *o, const char *arg);

int parse_opts(struct opts *o, int argc, char **argv);

bool bpf_stats_enabled(void);

/*
 * Load only the two guest-TX programs of the vnet object: the others
 * (tc egress, tracepoints) are not measured here and may need kernel
 * features this benchmark does not.
 */
void only_autoload(struct bpf_object *obj, struct bpf_program *a,
		   struct bpf_program *c);

int run(struct bench *b);

#endif /* VNET_BENCH_TAP_H */
