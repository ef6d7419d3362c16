/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetd: vnet's vhost-user-net backend over a multi-queue tap
 * (docs/vnetd-contract.md, docs/vnetd.md).
 *
 *   main.c   options, --config, signals, the control loop (one thread)
 *   tap.c    the tap (netns, ioctls, steering), its BPF maps, tap I/O
 *            (io_uring or plain read/writev)
 *   net.c    the net device on struct vhost_dev_ops; one thread per queue
 *            pair and the start/stop handshake with the control thread
 *   tx.c     guest TX: ring -> tap
 *   rx.c     guest RX: tap -> ring
 *   coal.c   when to signal the guest (urgent/PSH, frames, usecs, EVENT_IDX)
 *
 * Threads: the control thread runs the vhost-user protocol (all
 * vhost_dev_ops callbacks), the ethtool monitor and signals.  Queue pair i
 * has its own thread serving RX ring 2i, TX ring 2i+1 and tap queue i; it
 * owns everything under "queue thread only" below.  The control thread
 * hands rings to it and takes them back with a synchronous command
 * (vnetd_qp_cmd()), so the datapath takes no lock.
 */
#ifndef VNETD_H
#define VNETD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <sys/un.h>

#include <vnet/abi.h>
#include "libvnet.h"
#include "log.h"
#include "server.h"
#include "vhost_user.h"
#include "virtq.h"

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

/* log lines: "vnetd: PORT: ..." (main.c installs the writer) */
#define pr_err(p, fmt, ...) vhost_err("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_warn(p, fmt, ...) vhost_warn("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_info(p, fmt, ...) vhost_info("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_dbg(p, fmt, ...) vhost_dbg("%s: " fmt, (p)->name, ##__VA_ARGS__)

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

/* Per direction of a queue pair: what has not been signalled yet. */
struct vnetd_coal {
	uint32_t pending;	/* used entries (frames) pushed, not signalled */
	uint64_t first_ns;	/* CLOCK_MONOTONIC of the oldest of them */
	uint64_t timer_ns;	/* deadline the timerfd is armed for; 0: none */
	int timer_fd;
	uint64_t mark;		/* RX: push count of the queues map last seen */
};

enum vnetd_cmd {
	VNETD_CMD_NONE,
	VNETD_CMD_START,	/* start serving cmd_vq */
	VNETD_CMD_STOP,		/* stop serving cmd_vq, flush its signal */
	VNETD_CMD_QUIT,
};

/* epoll tags of a queue pair's thread */
enum vnetd_ev {
	VNETD_EV_WAKE,
	VNETD_EV_TX_KICK,
	VNETD_EV_RX_KICK,
	VNETD_EV_TAP,
	VNETD_EV_TX_TIMER,
	VNETD_EV_RX_TIMER,
};

struct vnetd_port;
struct io_uring;

struct vnetd_qp {
	struct vnetd_port *port;
	unsigned int index;
	int tap_fd;
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
	struct vhost_vq *tx, *rx;	/* rings being served, or NULL */
	bool tx_more, rx_more;		/* work left when the budget ran out */
	bool tx_dead, rx_dead;		/* broken: untouched until restarted */
	bool tx_kick_on, rx_kick_on;	/* kick fd in the epoll set */
	bool tap_armed;			/* tap fd polled for input */
	bool polling;			/* a ring without kick fd: poll it */
	unsigned int hdr_len;		/* virtio-net header: 10 or 12 */
	bool mrg;			/* VIRTIO_NET_F_MRG_RXBUF */
	struct io_uring *uring;		/* NULL: plain syscalls */
	bool rx_fixed;			/* rx_buf is io_uring buffer 0 */

	/* the pinned maps' entries of this pair (mmapped) */
	struct vnet_dp_stats *tx_st, *rx_st;
	const struct vnet_config *cfg;
	const struct vnet_queue_state *tx_qs, *rx_qs;

	struct vnetd_coal tx_coal, rx_coal;

	/* TX: one burst */
	struct vhost_vq_elem *tx_elems;
	struct vhost_vq_used tx_used[VNETD_TX_BURST_MAX];
	int tx_res[VNETD_TX_BURST_MAX];

	/* RX: frames read from the tap and not delivered yet */
	uint8_t *rx_buf;		/* VNETD_RX_BURST slots */
	uint32_t rx_len[VNETD_RX_BURST];	/* per slot: header + frame */
	uint8_t rx_order[VNETD_RX_BURST];	/* slots holding frames, in order */
	unsigned int rx_head, rx_count;		/* pending: rx_order[head..] */
	unsigned int rx_want;			/* reads to issue next burst */
	unsigned int rx_read_hdr;		/* header size they were read with */
	struct vhost_vq_elem *rx_elems;
	struct vhost_vq_used rx_used[VNETD_RX_ELEMS];
};

struct vnetd_port {
	const char *name;		/* log prefix: the socket path */
	struct vnetd_port_cfg cfg;
	bool no_uring;
	bool packed;			/* --packed: offer VIRTIO_F_RING_PACKED */
	uint64_t busy_poll_ns;		/* --busy-poll: TX ring spin window */

	int ifindex;
	int netns_fd;			/* --netns, held from open on; else -1 */
	uint64_t netns_ino;		/* its inode: a new netns of that name differs */
	bool gone;			/* its tap or netns went: port closed */
	bool created;			/* the tap did not exist before us */
	bool attached;			/* we attached vnet's programs */
	struct vnet_ethtool_monitor *mon;
	int mon_fd;

	/* the pinned maps, mmapped */
	struct vnet_queue_state *qs;	/* read */
	size_t qs_len;
	struct vnet_config *config;	/* read; tap_rx_frames written */
	size_t config_len;
	struct vnet_dp_stats *dps;	/* written */
	size_t dps_len;

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

/* tap.c */
int vnetd_netns_here(struct vnet_err *err);
int vnetd_netns_switch(const char *netns, int *saved, struct vnet_err *err);
void vnetd_netns_restore(int saved);
int vnetd_tap_open(struct vnetd_port *p);
void vnetd_tap_close(struct vnetd_port *p);
int vnetd_tap_set_features(struct vnetd_port *p, uint64_t features);
int vnetd_bpf_setup(struct vnetd_port *p);
void vnetd_bpf_cleanup(struct vnetd_port *p);
void vnetd_steer_update(struct vnetd_port *p, struct vnetd_qp *qp, bool on);
int vnetd_uring_init(struct vnetd_qp *qp);
void vnetd_uring_exit(struct vnetd_qp *qp);
void vnetd_tap_write_burst(struct vnetd_qp *qp, unsigned int n);
int vnetd_tap_read_burst(struct vnetd_qp *qp, unsigned int n);

/* net.c */
extern const struct vhost_dev_ops vnetd_net_ops;
int vnetd_port_start(struct vnetd_port *p);
void vnetd_port_stop(struct vnetd_port *p);
void vnetd_epoll_set(struct vnetd_qp *qp, int fd, uint32_t tag, bool on,
		     bool *state);
void vnetd_tap_arm(struct vnetd_qp *qp, bool on);
void vnetd_tap_gone(struct vnetd_qp *qp, int err);
void vnetd_watchdog(struct vnetd_port *p);

/* tx.c, rx.c: true when work is left (the budget ran out) */
bool vnetd_tx_run(struct vnetd_qp *qp);
void vnetd_tx_broken(struct vnetd_qp *qp);
bool vnetd_rx_run(struct vnetd_qp *qp);
void vnetd_rx_broken(struct vnetd_qp *qp);

/* coal.c */
uint64_t vnetd_now_ns(void);

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
void vnetd_coal_params(const struct vnetd_qp *qp, int dir, uint32_t *frames,
		       uint32_t *usecs);
void vnetd_coal_pushed(struct vnetd_qp *qp, int dir, unsigned int n,
		       bool urgent);
void vnetd_coal_timer(struct vnetd_qp *qp, int dir);
void vnetd_coal_flush(struct vnetd_qp *qp, int dir, __u64 *reason);
void vnetd_coal_reset(struct vnetd_coal *c);

/* shared-memory loads: written by BPF or vnetctl concurrently */
#define VNETD_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* sd_notify(3)'s datagram to $NOTIFY_SOCKET (notify.c); 0 without one */
int vnetd_notify(const char *state);

#endif /* VNETD_H */
