/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetd: vnet's vhost-user-net backend over a tap (docs/vnetd-contract.md,
 * docs/vnetd.md).  The layers, each calling only the ones below it
 * (docs/design.md has the same map):
 *
 *   main.c     signals, logging, the control loop (one thread)
 *   opts.c     the option table, --port and --config parsing
 *   port.c     a port's life: netns, tap, maps, device, socket; lost taps
 *   device.c   the virtio-net device (struct vhost_dev_ops): features,
 *              ring hand-over to the queue threads, RARP
 *   qthread.c  the queue-pair threads: their epoll set (the only code
 *              that arms and disarms fds), acting on what a burst reports
 *   mailbox.c  the control thread's side: start/stop, ring commands
 *   tx.c rx.c  the burst engines: guest TX ring -> tap, tap -> guest RX
 *              ring; they report what happened (enum vnetd_burst)
 *   coal.c     when a ring's used entries are signalled to the guest:
 *   rule.c     the notification rule it applies (pure)
 *   tap.c      the tap device: open, offloads, link; netns switching
 *   maps.c     vnet's BPF programs and pinned maps, the steering program
 *   tapio.c    frame I/O on one tap queue (io_uring or read/writev)
 *   sandbox.c  after setup: capabilities, --user, io_uring restrictions;
 *   seccomp.c  the threads' allow-lists, the SIGSYS handler
 *   agent.c    --agent (attach mode; needs only libvnet and util.h)
 *   notify.c   util.h: the monotonic clock, sd_notify(3)
 *
 * Threads: the control thread runs the vhost-user protocol (every
 * vhost_dev_ops callback), the ethtool monitor and signals.  Queue pair i
 * has its own thread serving RX ring 2i, TX ring 2i+1 and tap queue i; it
 * owns everything marked "queue thread only" below.  The control thread
 * hands rings to it and takes them back with a synchronous command
 * (mailbox.c, vnetd_qp_cmd()), so the datapath takes no lock.
 */
#ifndef VNETD_H
#define VNETD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <sys/types.h>
#include <sys/un.h>

#include <vnet/abi.h>
#include "libvnet.h"
#include "log.h"
#include "server.h"
#include "vhost_user.h"
#include "virtq.h"
#include "rule.h"
#include "util.h"

#define VNETD_VERSION "0.1.0"

#define VNETD_MAX_QP 16		/* --queues: queue pairs per port */
#define VNETD_TX_BURST 64	/* guest TX batch when tap_rx_frames is 0 */
#define VNETD_TX_BURST_MAX 64	/* ... and its cap (tun's rx-frames cap) */
#define VNETD_RX_BURST 32	/* frames read from the tap per burst */
#define VNETD_RX_ELEMS 64	/* guest RX chains popped per burst */
#define VNETD_BUSY_POLL_MAX_US 1000 /* --busy-poll's upper bound */
#define VNETD_BUDGET 256	/* frames per direction before looking around */
/*
 * One frame read from the tap: the largest GSO frame (64 KiB IP packet,
 * Ethernet header, two VLAN tags) plus the virtio-net header, rounded up.
 */
#define VNETD_RX_SLOT (66 * 1024)
/* a direct read: a chain's writable segments and its slot's tail */
#define VNETD_RX_IOV (VHOST_VQ_MAX_IOV + 1)
/*
 * bursts after a frame overflowed its buffer (rx.c): of big reads into
 * mergeable buffers (VNETD_RX_BIG_BURSTS in the environment overrides it,
 * for measurements; 0: none, bounce reads instead), or of bounce reads
 * without MRG_RXBUF
 */
#define VNETD_RX_BIG_BURSTS 64
/* a big read's iovecs at most: the kernel's UIO_MAXIOV */
#define VNETD_RX_BIG_IOV 1024
/*
 * Guest RX reads in place when the last burst's frames averaged at least
 * this many bytes (header included); below, bounce slots are faster
 * (docs/benchmarks.md).  VNETD_RX_DIRECT_MIN in the environment overrides
 * it, for measurements.
 */
#define VNETD_RX_DIRECT_MIN 512

/* log lines: "vnetd: PORT: ..." (main.c installs the writer) */
#define pr_err(p, fmt, ...) vhost_err("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_warn(p, fmt, ...) vhost_warn("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_info(p, fmt, ...) vhost_info("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_dbg(p, fmt, ...) vhost_dbg("%s: " fmt, (p)->name, ##__VA_ARGS__)

/* shared-memory loads: written by BPF or vnetctl concurrently */
#define VNETD_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* One port as configured (command line or --config). */
struct vnetd_port_cfg {
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char tap[IF_NAMESIZE];
	char netns[256];	/* "": the caller's namespace */
	unsigned int queues;
	bool client;
	unsigned int ncpus;
	int cpus[VNETD_MAX_QP * 4];
};

/* What every port of one vnetd shares (the command line). */
struct vnetd_port_opts {
	bool no_uring;		/* --no-uring */
	bool packed;		/* --packed: offer VIRTIO_F_RING_PACKED */
	unsigned int busy_poll_us; /* --busy-poll */
	gid_t socket_gid;	/* --socket-group; (gid_t)-1: vnetd's own */
	mode_t socket_mode;	/* --socket-mode (server sockets) */
};

struct vnetd_port;
struct vnetd_qp;
struct io_uring;

/* Frame I/O on one tap queue (tapio.c); queue thread only. */
struct vnetd_tapio {
	int fd;
	struct io_uring *uring;	/* NULL: plain syscalls */
	bool fixed;		/* the RX slots are io_uring buffer 0 */
	uint8_t *slots;		/* RX: VNETD_RX_BURST slots of VNETD_RX_SLOT */
	struct vnetd_qp *qp;	/* for log lines */
};

/* What has not been signalled yet on a ring (coal.c, rule.c). */
struct vnetd_coal {
	struct vnetd_rule rule;	/* pending entries, the hold */
	uint64_t timer_ns;	/* deadline the timerfd is armed for; 0: none */
	int timer_fd;
};

/*
 * One direction of a queue pair: its ring, its coalescing state and its
 * counters.  The direction is data (set up once by qthread.c and maps.c),
 * so the code that serves a ring never asks which one it is.
 */
struct vnetd_ring {
	struct vnetd_qp *qp;
	int dir;			/* VNET_DIR_TX or VNET_DIR_RX */
	uint32_t ev_kick, ev_timer;	/* its epoll tags */
	struct vnetd_ring *paired;	/* TX: the RX ring a signal takes along */

	/* the pinned maps' entries of this ring (mmapped, maps.c) */
	struct vnet_dp_stats *st;
	const struct vnet_queue_state *qs;
	const struct vnet_config *cfg;	/* the queue pair's entry */
	const __u32 *cfg_frames, *cfg_usecs; /* this direction's fields */
	uint32_t flag_adaptive;		/* VNET_CFG_ADAPTIVE_TX/RX */
	uint32_t flag_no_bypass;	/* VNET_CFG_NO_TX/RX_BYPASS */
	uint32_t flag_hold_always;	/* VNET_CFG_TX/RX_HOLD_ALWAYS */
	uint32_t bypass_classes;	/* 1 << VNET_CLASS_*: signalled at once */
	uint32_t stream_classes;	/* ... held from their first frame */

	/* --- queue thread only --- */
	struct vhost_vq *vq;		/* served, or NULL */
	bool more;			/* work left when the budget ran out */
	bool dead;			/* broken: untouched until restarted */
	bool kick_on;			/* kick fd in the epoll set */
	struct vhost_vq_stats seen;	/* the library's counters, in st */
	struct vnetd_coal coal;
	struct vhost_vq_elem *elems;	/* one burst of popped chains */
};

/* Guest TX: the ring and one burst's results. */
struct vnetd_tx {
	struct vnetd_ring r;
	struct vhost_vq_used used[VNETD_TX_BURST_MAX];
	int res[VNETD_TX_BURST_MAX];	/* per chain: bytes written or -errno */
};

/* Guest RX: the ring and the frames read from the tap, not delivered. */
struct vnetd_rx {
	struct vnetd_ring r;
	struct vhost_vq_used used[VNETD_RX_ELEMS];
	uint32_t len[VNETD_RX_BURST];	/* per slot: header + frame */
	uint8_t order[VNETD_RX_BURST];	/* slots holding frames, in order */
	unsigned int head, count;	/* pending: order[head..head+count) */
	unsigned int want;		/* reads to issue next burst */
	unsigned int read_hdr;		/* header size they were read with */
	unsigned int bounce;		/* bursts left to read into slots */
	unsigned int big;		/* bursts left of mergeable big reads */
	uint32_t chain_len;		/* big reads: the last chain's bytes */
	uint32_t mean;			/* the last burst's mean frame length */
	uint32_t direct_min;		/* VNETD_RX_DIRECT_MIN or the env's */
	uint32_t big_bursts;		/* VNETD_RX_BIG_BURSTS or the env's */
	struct iovec *iov;		/* direct reads: VNETD_RX_IOV each */
	unsigned int iovcnt[VNETD_RX_BURST];
	uint32_t in_chain[VNETD_RX_BURST]; /* per read: its chain's bytes */
	int res[VNETD_RX_BURST];	/* per read: bytes or -errno */
	uint64_t push_mark;		/* the queues map's push count seen */
	uint64_t ack_mark;		/* ... and its ack count */
	int tap_err;			/* VNETD_BURST_TAP_ERROR: -errno */
};

/* What a burst engine reports; the queue thread acts on it. */
enum vnetd_burst {
	VNETD_BURST_IDLE,	/* nothing left, kicks are on again */
	VNETD_BURST_MORE,	/* work left (budget, busy poll): come back */
	VNETD_BURST_TAP_EMPTY,	/* RX: tun is empty: wait for the tap */
	VNETD_BURST_STARVED,	/* RX: no guest buffer: kick asked for */
	VNETD_BURST_BROKEN,	/* the ring broke (the library logged why) */
	VNETD_BURST_TAP_ERROR,	/* RX: the tap queue fails (rx.tap_err) */
};

enum vnetd_cmd {
	VNETD_CMD_NONE,
	VNETD_CMD_START,	/* start serving cmd_vq */
	VNETD_CMD_STOP,		/* stop serving cmd_vq, flush its signal */
	VNETD_CMD_QUIT,
};

struct vnetd_qp {
	struct vnetd_port *port;
	unsigned int index;
	int cpu;		/* -1: no affinity */
	pthread_t thread;
	bool thread_ok;
	int epfd;
	int wake_fd;		/* eventfd: a command is waiting */

	/* the mailbox: control thread <-> queue thread */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum vnetd_cmd cmd;
	struct vhost_vq *cmd_vq;
	bool cmd_done;
	/* control thread only: vhost_vq_fd_busy() of vq 2q, 2q+1 last time */
	unsigned int fd_busy_seen[2];

	/* steering: the RX ring is served (under port->steer_lock) */
	bool steer_on;

	/* --- queue thread only --- */
	struct vnetd_tapio io;		/* tap queue `index` */
	bool tap_armed;			/* tap fd polled for input */
	bool polling;			/* a ring without kick fd: poll it */
	unsigned int hdr_len;		/* virtio-net header: 10 or 12 */
	bool mrg;			/* VIRTIO_NET_F_MRG_RXBUF */
	struct vnetd_tx tx;
	struct vnetd_rx rx;
};

struct vnetd_port {
	const char *name;		/* log prefix: the socket path */
	struct vnetd_port_cfg cfg;
	struct vnetd_port_opts opts;
	uint64_t busy_poll_ns;		/* --busy-poll: TX ring spin window */

	int ifindex;
	int netns_fd;			/* --netns, held from open on; else -1 */
	uint64_t netns_ino;		/* its inode: a new netns of that name differs */
	bool gone;			/* its tap or netns went: port closed */
	bool created;			/* the tap did not exist before us */
	bool single_queue;		/* the tap has no IFF_MULTI_QUEUE */
	bool attached;			/* we attached vnet's programs */
	unsigned int mtu_orig;		/* the tap's MTU before NET_SET_MTU; 0 */
	struct vnet_ethtool_monitor *mon;
	int mon_fd;

	/* the pinned maps, mmapped (maps.c) */
	struct vnet_map qs;		/* struct vnet_queue_state[], read */
	struct vnet_map config;		/* struct vnet_config[]; tap_rx_frames */
	struct vnet_map dps;		/* struct vnet_dp_stats[], written */

	struct steer_flow *steer;	/* the steering skeleton */
	pthread_mutex_t steer_lock;

	/* negotiated; changed only while every ring is stopped */
	uint64_t features;
	unsigned int hdr_len;
	bool mrg;

	struct vhost_dev dev;
	bool dev_ok;
	unsigned int nr_qp;
	struct vnetd_qp qp[VNETD_MAX_QP];
};

static inline struct vnet_config *vnetd_config(struct vnetd_port *p,
					       unsigned int q)
{
	return (struct vnet_config *)p->config.mem + q;
}

/* tap.c: the device, and network namespaces */
int vnetd_netns_here(struct vnet_err *err);
int vnetd_netns_switch(const char *netns, int *saved, struct vnet_err *err);
int vnetd_netns_enter_fd(int netns_fd, int *saved, struct vnet_err *err);
void vnetd_netns_restore(int saved);
int vnetd_tap_open(struct vnetd_port *p);
void vnetd_tap_close(struct vnetd_port *p);
int vnetd_tap_set_features(struct vnetd_port *p, uint64_t features);
int vnetd_tap_set_mtu(struct vnetd_port *p, unsigned int mtu);
void vnetd_tap_reset(struct vnetd_port *p);

/* maps.c: vnet's programs and maps on the tap, steering */
int vnetd_bpf_setup(struct vnetd_port *p);
void vnetd_bpf_cleanup(struct vnetd_port *p);
void vnetd_steer_update(struct vnetd_port *p, struct vnetd_qp *qp, bool on);

/* tapio.c: frames on one tap queue */
int vnetd_tapio_init(struct vnetd_tapio *io);
void vnetd_tapio_exit(struct vnetd_tapio *io);
void vnetd_tapio_write_burst(struct vnetd_tapio *io,
			     const struct vhost_vq_elem *elems, unsigned int n,
			     int *res);
int vnetd_tapio_readv_burst(struct vnetd_tapio *io, const struct iovec *iov,
			    const unsigned int *iovcnt, unsigned int n,
			    int *res);
int vnetd_tapio_read_burst(struct vnetd_tapio *io, unsigned int n,
			   uint32_t *len, uint8_t *order);
int vnetd_tapio_writev(struct vnetd_tapio *io, const struct iovec *iov,
		       unsigned int n);

/* coal.c: a ring's completion signals */
void vnetd_coal_params(const struct vnetd_ring *r, uint32_t *frames,
		       uint32_t *usecs);
void vnetd_coal_pushed(struct vnetd_ring *r, unsigned int n,
		       unsigned int classes);
void vnetd_coal_timer(struct vnetd_ring *r);
void vnetd_coal_flush(struct vnetd_ring *r);
void vnetd_coal_reset(struct vnetd_ring *r);

/* tx.c, rx.c: one burst (up to VNETD_BUDGET frames) */
enum vnetd_burst vnetd_tx_burst(struct vnetd_qp *qp);
enum vnetd_burst vnetd_rx_burst(struct vnetd_qp *qp);

/*
 * The signal that interrupts a queue thread held in a frontend fd's read
 * or write (mailbox.c); unblocked in the queue threads only.
 */
#define VNETD_SIG_WAKE SIGURG

/* qthread.c: the queue-pair threads */
int vnetd_qps_init(struct vnetd_port *p);
void vnetd_qps_free(struct vnetd_port *p);
void *vnetd_qp_thread(void *qp);
void vnetd_qp_run(struct vnetd_qp *qp);
void vnetd_qp_tap_arm(struct vnetd_qp *qp, bool on);

/* mailbox.c: the control thread's side of them */
int vnetd_qps_start(struct vnetd_port *p);
void vnetd_qps_stop(struct vnetd_port *p);
void vnetd_qp_cmd(struct vnetd_qp *qp, enum vnetd_cmd cmd,
		  struct vhost_vq *vq);
void vnetd_watchdog(struct vnetd_port *p);

/* device.c: the virtio-net device */
extern const struct vhost_dev_ops vnetd_net_ops;

/* port.c: a port's life (the control thread) */
void vnetd_port_init(struct vnetd_port *p, const struct vnetd_port_cfg *c,
		     const struct vnetd_port_opts *o);
int vnetd_port_open(struct vnetd_port *p, struct vhost_server *srv);
void vnetd_port_close(struct vnetd_port *p);
int vnetd_socket_precheck(const struct vnetd_port_cfg *c);
bool vnetd_port_lost(struct vnetd_port *p, char *why, size_t len);
void vnetd_port_lose(struct vhost_server *srv, struct vnetd_port *p,
		     int epfd, const char *why);
void vnetd_monitor_event(struct vnetd_port *p);

static inline void vnetd_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* VNETD_H */
