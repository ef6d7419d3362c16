/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Datapath tests of vnetd, the vhost-user-net backend (docs/vnetd-contract.md),
 * driven by vufe, the test frontend (docs/frontend.md).
 *
 * Every case runs in a fresh network namespace vnet-v-<case>-<pid> with its
 * own vnetd (build/vnetd-asan, ASan/UBSan) started as a child process:
 *
 *	vnetd-asan --socket /tmp/vnet-vnetd-<pid>-<case>.sock --tap vvXXXXXX
 *		   --netns vnet-v-<case>-<pid> [--queues 2]
 *
 * (two ports: --config FILE).  vnetd is waited for with a bounded poll on
 * its socket, stopped with SIGTERM (then SIGKILL) and reaped at the end of
 * the case; its stderr goes to a file that is scanned for sanitizer reports
 * (any is a FAIL), its exit status must be 0 and its pins must be gone.
 *
 * The tap side is reached from inside the namespace with AF_PACKET sockets
 * (PACKET_VNET_HDR: GSO frames both ways), the guest side with vufe.
 * Interrupts are counted as call-eventfd signals, never by timing; every
 * wait is a bounded poll.
 *
 * The cases are grouped by feature, one program each (test_vnetd_tx,
 * test_vnetd_rx, test_vnetd_mq, test_vnetd_notify, test_vnetd_hostile,
 * test_vnetd_restart, test_vnetd_dpdk), built from a file of cases and
 * the helpers declared here (vnetd_util.c: shell, namespaces, AF_PACKET,
 * frames; vnetd_fixture.c: vnetd and its ports; vnetd_guest.c: the
 * frontend on a port); each registers its cases with VNET_TEST() and
 * vnetd_fixture.c's main() runs them (test.h's test_main()):
 *
 *	test_vnetd_<feature> [-l] [-v] [-t GLOB]... [-d GLOB]... [FILTER]
 *
 * Environment: VNETD (the daemon, default <build>/vnetd-asan), VNET_TESTPMD
 * (default dpdk-testpmd), VNETD_KEEP_LOGS=1 keeps every log.
 */
#ifndef VNET_SELFTESTS_VNETD_TEST_H
#define VNET_SELFTESTS_VNETD_TEST_H

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
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
#include <linux/virtio_config.h>
#include <linux/vhost_types.h>
#include <linux/virtio_net.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <vnet/abi.h>

#include "test.h"
#include "frames.h"
#include "frontend/vufe.h"
#include "frontend/testpmd.h"

/* ---- vnetd_util.c ---- */

#define PIN_ROOT	"/sys/fs/bpf/vnet"
#define ETH_P_VNET_TEST	0x88b5	/* IEEE 802 local experimental ethertype */
#define ETH_HLEN_	14
#define IP_HLEN		20
#define TCP_HLEN	20
#define UDP_HLEN	8
#define L4_OFF		(ETH_HLEN_ + IP_HLEN)
#define GSO_MSS		1448
#define GSO_SEGS	45	/* 45 * 1448 = 65160 bytes of payload */
#define GSO_PLEN	(GSO_MSS * GSO_SEGS)
#define FRAME_MAX	(70 * 1024)
#define WAIT_MS		3000	/* a frame, a reply, a log line */
#define START_MS	20000	/* vnetd (ASan, BPF verifier) up */
#define STOP_MS		15000	/* vnetd down (LeakSanitizer at exit) */

extern const __u8 guest_mac[ETH_ALEN];
/* a MAC nobody has: frames to it are PACKET_OTHERHOST on the tap */
extern const __u8 nobody_mac[ETH_ALEN];
extern const __u8 host_mac[ETH_ALEN];
#define GUEST_IP	0xc0000202u	/* 192.0.2.2 */
#define HOST_IP		0xc0000201u	/* 192.0.2.1 */

extern bool verbose;
extern char vnetd_bin[PATH_MAX];
extern int host_ns;

#define dbg(...)                                       \
	do {                                           \
		if (verbose)                           \
			fprintf(stderr, "  # " __VA_ARGS__); \
	} while (0)

long long now_ms(void);

void nap_ms(int ms);

int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int sh(const char *fmt, ...);

int ns_enter(const char *ns);

void ns_leave(void);

/* a socket that lives in NS */
int ns_socket(const char *ns, int domain, int type, int proto);

/* ifindex of DEV in NS (0 if absent), and whether it is up */
int ns_link(const char *ns, const char *dev, bool *up);

struct link_stats {
	__u64 rx_packets, tx_packets, rx_dropped, tx_dropped;
};

int ns_link_stats(const char *ns, const char *dev,
		  struct link_stats *ls);

void ns_sysctl(const char *ns, const char *path, const char *val);

int pkt_open(const char *ns, const char *dev);

int pkt_send(int fd, const struct virtio_net_hdr *vh, const void *f,
	     size_t len);

/*
 * One frame that came into the tap (not one the host sent out of it), or
 * -ETIMEDOUT once timeout_ms passed.
 */
ssize_t pkt_recv(int fd, struct virtio_net_hdr *vh, void *buf,
		 size_t cap, int timeout_ms);

__u8 pat(__u32 id, size_t i);

/*
 * A test frame: dst, src, ethertype 0x88b5, "VNTD", id, length, and a
 * pattern that differs by id and position.
 */
void test_frame(__u8 *f, size_t len, const __u8 *dst, const __u8 *src,
		__u32 id);

/* the id of a test frame, or -1 */
long long test_frame_id(const __u8 *f, size_t len);

__u8 tpat(__u32 seed, size_t off);

struct l4 {
	const __u8 *dst, *src;
	__u32 saddr, daddr;
	__u16 sport, dport;
	__u8 proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	__u8 tcp_flags;
	__u32 seq;
	size_t plen;		/* payload bytes */
	__u32 seed;		/* payload byte at stream offset o: tpat() */
	size_t off;		/* stream offset of the first payload byte */
	bool partial;		/* TCP checksum = pseudo header (NEEDS_CSUM) */
};

#define TH_FIN	0x01
#define TH_PSH	0x08
#define TH_ACK	0x10

/* Ethernet/IPv4/TCP or UDP; returns the frame length */
size_t ip_frame(__u8 *f, const struct l4 *p);

/* TCP checksum of a frame is right */
bool tcp_csum_ok(const __u8 *f, size_t len);

/* a bulk (class OTHER) frame: UDP, 100 bytes of payload */
size_t udp_frame(__u8 *f, const __u8 *dst, const __u8 *src,
		 __u16 sport, __u32 n);

/* a TCP frame with 100 bytes of payload: URGENT without PSH, else PUSH */
size_t tcp_frame(__u8 *f, const __u8 *dst, const __u8 *src,
		 __u32 n, bool psh);

/*
 * A 64 KB TCP segment for GSO (GSO_TCPV4, NEEDS_CSUM, MSS 1448) of flow
 * sport; the virtio_net_hdr goes to *vh.
 */
size_t gso_frame(__u8 *f, struct virtio_net_hdr *vh, const __u8 *dst,
		 const __u8 *src, __u32 saddr, __u32 daddr, __u16 sport,
		 __u32 isn);

/*
 * Payload continuity of one GSO flow however it arrives: as one frame or
 * in segments, each segment's payload checked at its sequence offset.
 */
struct gso_flow {
	__u16 sport;
	__u32 isn;
	size_t covered;		/* payload bytes seen (once each) */
	__u8 seen[GSO_PLEN];
	unsigned int frames;
	unsigned int gso_frames; /* arrived whole, with a GSO header */
	unsigned int bad_csum;	/* complete checksum that is wrong */
	char err[160];
};

void gso_flow_init(struct gso_flow *g, __u16 sport, __u32 isn);

/* 1 if the frame belongs to the flow, 0 if not, -1 if it is wrong */
int gso_feed(struct gso_flow *g, const struct virtio_net_hdr *vh,
	     const __u8 *f, size_t len);

/* the frame sizes and TX layouts the TX and RX cases walk through */
extern const unsigned int sizes[19];
extern const unsigned int layouts[7];
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

/* ---- vnetd_fixture.c ---- */

struct port {
	char sock[108];
	char tap[IFNAMSIZ];
	char ns[64];		/* "": the vnetd's namespace (vd.ns) */
	unsigned int queues;
	int cfg_fd, dps_fd, qs_fd;	/* pinned maps, -1 until opened */
};

struct vd {
	const char *name;
	char ns[64];
	char log[128];
	char conf[128];
	pid_t pid;
	int status;		/* wait status of the last exit */
	bool ns_made;
	bool use_config;	/* --config FILE (two ports) */
	bool check_pins;	/* pins must be gone after a clean exit */
	bool client;		/* --client: the frontend listens */
	bool own_tap;		/* the test makes a persistent tap first */
	bool own_tap_single;	/* ... without multi_queue and vnet_hdr */
	const char *extra;	/* one more option, e.g. --no-uring */
	const char *extra2;	/* and another */
	bool takeover;		/* --takeover: ready when it took the ports */
	unsigned int nports;
	struct port port[2];
	off_t mark;		/* log offset of vd_log_mark() */
};

/* netns names made, for the signal handler */
extern char made_ns[32][64];
extern unsigned int nr_made_ns;

void on_signal(int sig);

void vd_init(struct vd *vd, const char *name, unsigned int nports,
	     unsigned int queues);

bool vd_running(struct vd *vd);

/* the last line of the log that is not empty, for a failure reason */
const char *vd_log_tail(struct vd *vd);

void close_fd(int *fd);

void port_close_maps(struct port *p);

int pin_get(const struct port *p, const char *map);

bool vd_start(struct vd *vd);
/* vnetd started (its options from VD), not waited for */
bool vd_spawn(struct vd *vd);
/* does VD's log hold S? */
bool vd_log_has(struct vd *vd, const char *s);

/* 0 if the log has no sanitizer report, else 1 and the first line */
int vd_sanitizer_report(struct vd *vd, char *line, size_t len);

/* SIGTERM, bounded wait, SIGKILL; true if it exited on its own */
bool vd_kill(struct vd *vd, int sig);

void rm_pins(const char *tap);

/* SIGTERM and the contract's promises about a clean stop */
void vd_stop(struct vd *vd);

void vd_cleanup(struct vd *vd);

/*
 * A case's end: its frontend destroyed (when up), its tap socket closed
 * (when PFD), then vd_cleanup().
 */
void vd_end(struct vd *vd, struct vufe *fe, int *pfd);

bool vd_up(struct vd *vd);

/* vd_up() and an AF_PACKET socket on port 0's tap in *pfd */
bool vd_up_tap(struct vd *vd, int *pfd);

/* log lines after the mark */
void vd_log_mark(struct vd *vd);

/* the first complete line written since the mark, bounded wait */
bool vd_log_wait_line(struct vd *vd, char *line, size_t len,
		      int timeout_ms);

/*
 * Wait, at most TIMEOUT_MS, until VD's queue thread for pair QP sleeps in
 * epoll_wait with a timeout: it has run the bursts its last events asked
 * for and waits for the next event.  False on the timeout (or no thread).
 */
bool vd_qthread_waits(const struct vd *vd, unsigned int qp, int timeout_ms);

bool dps_read(const struct port *p, __u32 dir, __u32 q,
	      struct vnet_dp_stats *st);

/* -v: WHAT and the signal counters of D since D0 (dbg) */
void dps_dbg(const char *what, const struct vnet_dp_stats *d,
	     const struct vnet_dp_stats *d0);

bool qs_read(const struct port *p, __u32 dir, __u32 q,
	     struct vnet_queue_state *qs);

struct coal {
	__u32 tx_frames, tx_usecs, rx_frames, rx_usecs;
	__u32 flags; /* VNET_CFG_NO_*_BYPASS, VNET_CFG_*_HOLD_ALWAYS */
};

/* the guest NIC's coalescing of queue pair q, live in the config map */
bool cfg_set(const struct port *p, __u32 q, const struct coal *c);

#define ALL_OFFLOADS                                                         \
	((1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) |   \
	 (1ULL << VIRTIO_NET_F_HOST_TSO4) | (1ULL << VIRTIO_NET_F_HOST_TSO6) | \
	 (1ULL << VIRTIO_NET_F_HOST_ECN) | (1ULL << VIRTIO_NET_F_GUEST_TSO4) | \
	 (1ULL << VIRTIO_NET_F_GUEST_TSO6) | (1ULL << VIRTIO_NET_F_GUEST_ECN))

struct vufe_opts fe_opts(const struct port *p);

struct vufe *fe_up(const struct vufe_opts *o);

/*
 * The start most cases share: vd_up_tap() (vnetd --packed when PACKED),
 * then port 0's frontend up with fe_opts() (and packed rings).  The
 * frontend, or NULL when a step failed (the case has failed).
 */
struct vufe *vd_up_fe(struct vd *vd, int *pfd, bool packed);

bool tx_idle(struct vufe *fe, void *arg);

/* send, reaping (bounded) when the ring is full */
int tx_send(struct vufe *fe, unsigned int qp,
	    const struct virtio_net_hdr_mrg_rxbuf *hdr, const void *f,
	    size_t len, unsigned int flags);

/* every frame sent on qp was used (and reaped) */
int tx_wait_idle(struct vufe *fe, unsigned int qp, int timeout_ms);

struct rx_any_arg {
	unsigned int nr_qp;
};

bool rx_any(struct vufe *fe, void *arg);

/*
 * The next frame on any RX queue of the frontend for which match() is
 * true (others are dropped), bounded.  Returns its length, or -errno.
 */
typedef bool (*match_fn)(const __u8 *f, size_t len, void *arg);

ssize_t guest_recv(struct vufe *fe, unsigned int nr_qp, __u8 *buf,
		   size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
		   unsigned int *nbufs, unsigned int *qp_out,
		   match_fn match, void *arg, int timeout_ms);

bool match_id(const __u8 *f, size_t len, void *arg);

bool match_test(const __u8 *f, size_t len, void *arg);

bool match_sport(const __u8 *f, size_t len, void *arg);

bool match_ipv4(const __u8 *f, size_t len, void *arg);

/* the tap side: the next frame with test id, compared byte for byte */
bool tap_expect(int pfd, const __u8 *want, size_t len, int timeout_ms,
		const char *what);

/* one frame guest -> tap and one tap -> guest through a port */
bool ping_both(struct vufe *fe, const struct port *p, unsigned int qp,
	       int pfd, __u32 id, const char *what);

/* the kinds of frame tx_bursts() sends */
enum kind { BULK, URGENT, PUSH };

/*
 * frames in bursts of `burst` on TX queue 0, one kick per burst, each
 * burst used (and reaped) before the next; rearm: re-enable callbacks
 * after each reap (used_event = last used), as NAPI does.
 */
bool tx_bursts(struct vufe *fe, unsigned int frames,
	       unsigned int burst, enum kind kind, bool rearm,
	       unsigned int *seq);

/* collect every flow's payload from the tap until all are complete */
bool tap_collect_gso(int pfd, struct gso_flow *g, unsigned int n,
		     int timeout_ms);

#endif /* VNET_SELFTESTS_VNETD_TEST_H */
