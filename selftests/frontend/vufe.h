// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vufe: a userspace virtio-net frontend for tests.
 *
 * It plays QEMU (the vhost-user frontend) and the guest's virtio_net driver
 * at once, against any vhost-user-net backend on a unix socket:
 *
 *	struct vufe_opts o = VUFE_OPTS_DEFAULT;
 *	struct vufe *fe;
 *
 *	o.path = "/run/vnetd.sock";
 *	err = vufe_create(&o, &fe);		memfd guest memory, split rings
 *						(packed: want VIRTIO_F_RING_PACKED)
 *	err = vufe_connect(fe);			or vufe_listen() + vufe_accept()
 *	err = vufe_setup(fe);			vhost-user handshake, QEMU's order
 *	err = vufe_post_rx(fe, 0, 0);		fill RX queue 0
 *	err = vufe_send(fe, 0, NULL, frame, len, 0);	frame on TX queue 0
 *	n = vufe_recv_wait(fe, 0, buf, sizeof(buf), &hdr, NULL, 1000);
 *	vufe_vq_stats(fe, VUFE_RXQ(0), &st);	st.signals: call-eventfd signals
 *	vufe_destroy(fe);
 *
 * Queues are numbered as virtio-net does: queue pair i has its RX ring at
 * vring index 2*i and its TX ring at 2*i+1.  Functions taking "qp" take a
 * queue-pair number; functions taking "vq" take a vring index.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; none prints or exits.  vufe_strerror() gives the frontend's own
 * account of the last failure (which message, what the backend answered,
 * what the device did wrong on a ring); vufe_strerror(NULL) says why the
 * thread's last vufe_create() failed.
 *
 * Not thread-safe: one thread drives one struct vufe.  The backend runs in
 * another process; ring indices are published with release stores and read
 * with acquire loads, as the Linux driver's virtio_wmb()/virtio_rmb() do.
 */
#ifndef VNET_SELFTESTS_VUFE_H
#define VNET_SELFTESTS_VUFE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

/* vhost-user requests (QEMU docs/interop/vhost-user.rst) */
enum vufe_request {
	VUFE_GET_FEATURES = 1,
	VUFE_SET_FEATURES = 2,
	VUFE_SET_OWNER = 3,
	VUFE_RESET_OWNER = 4,
	VUFE_SET_MEM_TABLE = 5,
	VUFE_SET_LOG_BASE = 6,
	VUFE_SET_LOG_FD = 7,
	VUFE_SET_VRING_NUM = 8,
	VUFE_SET_VRING_ADDR = 9,
	VUFE_SET_VRING_BASE = 10,
	VUFE_GET_VRING_BASE = 11,
	VUFE_SET_VRING_KICK = 12,
	VUFE_SET_VRING_CALL = 13,
	VUFE_SET_VRING_ERR = 14,
	VUFE_GET_PROTOCOL_FEATURES = 15,
	VUFE_SET_PROTOCOL_FEATURES = 16,
	VUFE_GET_QUEUE_NUM = 17,
	VUFE_SET_VRING_ENABLE = 18,
	VUFE_SEND_RARP = 19,
	VUFE_NET_SET_MTU = 20,
	VUFE_GET_MAX_MEM_SLOTS = 36,
	VUFE_ADD_MEM_REG = 37,
	VUFE_REM_MEM_REG = 38,
};

/* header flags */
#define VUFE_MSG_VERSION	0x1
#define VUFE_MSG_REPLY		(1u << 2)
#define VUFE_MSG_NEED_REPLY	(1u << 3)

/* SET_VRING_KICK/CALL/ERR payload: vring index, and "no fd" */
#define VUFE_VRING_IDX_MASK	0xffULL
#define VUFE_VRING_NOFD		(1ULL << 8)

/* feature bit 30: the backend speaks protocol features */
#define VUFE_F_PROTOCOL_FEATURES	30

/* protocol feature bits */
#define VUFE_PROTO_MQ			0
#define VUFE_PROTO_LOG_SHMFD		1
#define VUFE_PROTO_RARP			2
#define VUFE_PROTO_REPLY_ACK		3
#define VUFE_PROTO_MTU			4
#define VUFE_PROTO_BACKEND_REQ		5
#define VUFE_PROTO_CONFIGURE_MEM_SLOTS	15

/* the protocol features the frontend acks when offered (what QEMU acks) */
#define VUFE_PROTO_ACKED                                                      \
	((1ULL << VUFE_PROTO_MQ) | (1ULL << VUFE_PROTO_REPLY_ACK) |            \
	 (1ULL << VUFE_PROTO_CONFIGURE_MEM_SLOTS) |                            \
	 (1ULL << VUFE_PROTO_LOG_SHMFD) | (1ULL << VUFE_PROTO_RARP))

#define VUFE_RXQ(qp)	(2 * (qp))
#define VUFE_TXQ(qp)	(2 * (qp) + 1)

#define VUFE_MAX_QP		8
#define VUFE_MAX_VQ		(2 * VUFE_MAX_QP)
#define VUFE_MAX_REGIONS	2
#define VUFE_MAX_SEGS		16	/* data descriptors per TX frame */

/* Linux's "big packets" chain: header + 65550 bytes of data */
#define VUFE_BIG_DATA		65550
#define VUFE_PAGE		4096

/* How the RX queues are filled (Linux virtio_net's three modes). */
enum vufe_rx_mode {
	/*
	 * MRG_RXBUF: one page-sized descriptor per buffer, a frame spans
	 * num_buffers of them.  Chosen whenever MRG_RXBUF is negotiated.
	 */
	VUFE_RX_MERGEABLE,
	/*
	 * Linux's "big packets": a chain of a header descriptor and page
	 * descriptors, 65562 bytes in all, one chain per frame (an indirect
	 * table when INDIRECT_DESC is negotiated, as Linux does).
	 */
	VUFE_RX_BIG,
	/* one 65562-byte descriptor per frame, header and data together */
	VUFE_RX_LARGE,
};

struct vufe_opts {
	const char *path;		/* unix socket of the backend */
	int timeout_ms;			/* every blocking step; default 5000 */
	unsigned int nr_qp;		/* queue pairs to start; default 1 */
	unsigned int ring_size;		/* power of two, <= 32768; 256 */
	size_t mem_size;		/* guest memory; default 64 MiB */
	/*
	 * 2: split the memfd into two regions at different guest-physical
	 * bases (0 and 4 GiB, like QEMU's pc.ram below and above 4G), the
	 * second with a non-zero mmap_offset into the same memfd.  Rings and
	 * TX headers live in region 0, data buffers in region 1.
	 */
	unsigned int nr_regions;
	__u64 gpa_base;			/* guest-physical base of region 0 */
	/*
	 * Feature bits the driver wants; the frontend acks those the backend
	 * offers.  Default: VERSION_1, EVENT_IDX, INDIRECT_DESC, MRG_RXBUF,
	 * and PROTOCOL_FEATURES (not a virtio bit: vhost-user's bit 30).
	 * Adding VIRTIO_F_RING_PACKED asks for packed virtqueues: used when
	 * the backend offers it (vufe_packed() says which), split rings
	 * otherwise.  Without it, everything is split, as before.
	 */
	__u64 want_features;
	__u64 want_protocol;		/* ANDed with VUFE_PROTO_ACKED */
	/* RX mode when MRG_RXBUF is not negotiated: BIG or LARGE */
	enum vufe_rx_mode rx_mode;
	unsigned int tx_slots;		/* TX buffers per queue; 64 */
	size_t tx_buf_size;		/* bytes per TX buffer; 68 KiB */
	unsigned int rx_slots;		/* RX buffers per queue; see .c */
	/*
	 * NEED_REPLY on SET_VRING_ENABLE when REPLY_ACK is negotiated, as
	 * QEMU >= 8.2 does; QEMU 7.2 (the default here) does not wait.
	 */
	bool enable_need_reply;
	/*
	 * After each vufe_recv()/vufe_tx_reap(), re-arm the queue's
	 * callbacks (used_event = last used index), as NAPI does on
	 * completion.  Default true.
	 */
	bool auto_rearm;
	bool rx_auto_refill;		/* repost consumed RX buffers; true */
	/*
	 * Packed rings, a backend gone without GET_VRING_BASE: send the
	 * base the ring last started from, as QEMU does (it cannot read a
	 * packed ring's position from guest memory).  Default false: resume
	 * where the used descriptors end.
	 */
	bool qemu_packed_base;
};

#define VUFE_DEFAULT_FEATURES                                                 \
	((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_RING_F_EVENT_IDX) |    \
	 (1ULL << VIRTIO_RING_F_INDIRECT_DESC) |                               \
	 (1ULL << VIRTIO_NET_F_MRG_RXBUF) | (1ULL << VUFE_F_PROTOCOL_FEATURES))

#define VUFE_OPTS_DEFAULT                                                     \
	((struct vufe_opts){                                                   \
		.timeout_ms = 5000,                                            \
		.nr_qp = 1,                                                    \
		.ring_size = 256,                                              \
		.mem_size = 64UL << 20,                                        \
		.nr_regions = 1,                                               \
		.want_features = VUFE_DEFAULT_FEATURES,                        \
		.want_protocol = VUFE_PROTO_ACKED,                             \
		.rx_mode = VUFE_RX_BIG,                                        \
		.tx_slots = 64,                                                \
		.tx_buf_size = 68 << 10,                                       \
		.auto_rearm = true,                                            \
		.rx_auto_refill = true,                                        \
	})

struct vufe;

/* Per-vring counters. */
struct vufe_vq_stats {
	__u64 kicks;		/* kick-eventfd writes */
	__u64 kicks_suppressed;	/* kicks the backend's avail_event/flags saved */
	/*
	 * Call-eventfd signals: the sum of the eventfd counter values read,
	 * i.e. the number of eventfd_write(fd, 1) the backend did, however
	 * many of them coalesced into one read.
	 */
	__u64 signals;
	__u64 wakeups;		/* reads that found the counter non-zero */
	__u64 avail;		/* buffers (chains) made available */
	__u64 used;		/* used entries consumed */
	__u64 frames;		/* frames sent (TX) or received (RX) */
	/*
	 * Split: ring indices.  Packed: ring positions, idx | wrap << 15
	 * (avail_idx the next descriptor the driver makes available,
	 * last_used the next it reads used, used_idx where the used
	 * descriptors the device wrote end).
	 */
	__u16 avail_idx;	/* the driver's avail->idx */
	__u16 last_used;	/* next used entry the driver will read */
	__u16 used_idx;		/* the device's used->idx, now */
	__u16 used_pending;	/* used entries not consumed yet */
	/*
	 * Last GET_VRING_BASE answer.  Packed: avail position in the low
	 * 16 bits, used position in the high 16 (0: the same as avail).
	 */
	__u32 base;
};

/* vufe_send() flags */
#define VUFE_TX_HDR_INLINE	(1u << 0)	/* header and data in one desc */
#define VUFE_TX_INDIRECT	(1u << 1)	/* one indirect descriptor */
#define VUFE_TX_NO_KICK		(1u << 2)	/* caller kicks: vufe_kick() */
#define VUFE_TX_SEGS(n)		(((n) & 0x1fu) << 8) /* data in n descs */
#define VUFE_TX_SEGS_GET(f)	(((f) >> 8) & 0x1fu)

/* lifecycle */
int vufe_create(const struct vufe_opts *opts, struct vufe **fep);
void vufe_destroy(struct vufe *fe);
int vufe_connect(struct vufe *fe);
int vufe_listen(struct vufe *fe);
int vufe_accept(struct vufe *fe);
int vufe_attach_fd(struct vufe *fe, int fd);
int vufe_setup(struct vufe *fe);
int vufe_stop(struct vufe *fe);
void vufe_disconnect(struct vufe *fe);
int vufe_reconnect(struct vufe *fe);
const char *vufe_strerror(const struct vufe *fe);

/* what was negotiated */
__u64 vufe_features(const struct vufe *fe);
__u64 vufe_backend_features(const struct vufe *fe);
__u64 vufe_protocol_features(const struct vufe *fe);
__u64 vufe_backend_protocol_features(const struct vufe *fe);
__u64 vufe_max_queues(const struct vufe *fe);
__u64 vufe_max_mem_slots(const struct vufe *fe);
bool vufe_packed(const struct vufe *fe);	/* RING_PACKED negotiated */
unsigned int vufe_hdr_len(const struct vufe *fe);
enum vufe_rx_mode vufe_rx_mode(const struct vufe *fe);
int vufe_sock_fd(const struct vufe *fe);

/* guest memory */
void *vufe_gpa_to_ptr(struct vufe *fe, __u64 gpa, size_t len);
int vufe_alloc(struct vufe *fe, size_t size, size_t align, unsigned int region,
	       __u64 *gpa, void **ptr);
int vufe_region(const struct vufe *fe, unsigned int i, __u64 *gpa,
		__u64 *size, __u64 *hva);
/*
 * The memfd behind every region (a hostile frontend truncates it), and a
 * vring's kick eventfd (to kick without touching guest memory); -1: none.
 */
int vufe_mem_fd(const struct vufe *fe);
int vufe_kick_fd(const struct vufe *fe, unsigned int vq);

/* datapath */
int vufe_send(struct vufe *fe, unsigned int qp,
	      const struct virtio_net_hdr_mrg_rxbuf *hdr, const void *frame,
	      size_t len, unsigned int flags);
int vufe_kick(struct vufe *fe, unsigned int vq);
int vufe_tx_reap(struct vufe *fe, unsigned int qp);
unsigned int vufe_tx_inflight(const struct vufe *fe, unsigned int qp);
int vufe_post_rx(struct vufe *fe, unsigned int qp, unsigned int n);
ssize_t vufe_recv(struct vufe *fe, unsigned int qp, void *buf, size_t cap,
		  struct virtio_net_hdr_mrg_rxbuf *hdr, unsigned int *nbufs);
ssize_t vufe_recv_wait(struct vufe *fe, unsigned int qp, void *buf,
		       size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
		       unsigned int *nbufs, int timeout_ms);

/* notifications */
bool vufe_need_event(__u16 event_idx, __u16 new_idx, __u16 old_idx);
bool vufe_enable_cb(struct vufe *fe, unsigned int vq);
bool vufe_enable_cb_delayed(struct vufe *fe, unsigned int vq);
void vufe_disable_cb(struct vufe *fe, unsigned int vq);
int vufe_poll_signals(struct vufe *fe);
int vufe_vq_stats(struct vufe *fe, unsigned int vq, struct vufe_vq_stats *st);
typedef bool (*vufe_cond_t)(struct vufe *fe, void *arg);
int vufe_wait(struct vufe *fe, vufe_cond_t cond, void *arg, int timeout_ms);
int vufe_wait_signals(struct vufe *fe, unsigned int vq, __u64 n,
		      int timeout_ms);

/*
 * Ring access, for tests that play the device or check the layout.  A
 * packed ring uses the same three areas: pdesc = desc (the descriptor
 * ring), driver_event = avail, device_event = used (the event suppression
 * areas); its positions are idx | wrap counter << 15.
 */
struct vufe_ring {
	unsigned int num;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	__u64 desc_gpa, avail_gpa, used_gpa;
	int kick_fd;		/* the driver writes it */
	int call_fd;		/* the device writes it */
	bool packed;
	struct vring_packed_desc *pdesc;
	struct vring_packed_desc_event *driver_event, *device_event;
};
int vufe_ring(struct vufe *fe, unsigned int vq, struct vufe_ring *r);
/*
 * Before setup: start the ring at IDX (split: avail and used index; with
 * VIRTIO_F_RING_PACKED wanted: the packed position idx | wrap << 15 of
 * both halves, used if packed is negotiated).
 */
int vufe_set_vring_base(struct vufe *fe, unsigned int vq, __u16 idx);

/* raw vhost-user messages */
int vufe_send_msg(struct vufe *fe, __u32 request, __u32 flags,
		  const void *payload, __u32 size_field, size_t payload_len,
		  const int *fds, unsigned int nfds);
int vufe_recv_reply(struct vufe *fe, __u32 request, void *payload,
		    size_t cap, __u32 *size);
int vufe_backend_alive(struct vufe *fe, int timeout_ms);
/*
 * One recvmsg(2) of up to LEN bytes into BUF with FLAGS: the fds that came
 * with them kept in FDS (*NFDS of them, MAX at most) or, without FDS or
 * past MAX, closed.  recvmsg's return (-1 and errno).
 */
ssize_t vufe_recv_fds(int sock, void *buf, size_t len, int flags, int *fds,
		      unsigned int *nfds, unsigned int max);

/* hostile input, for the backend's hostile-input tests */
enum vufe_hostile_ring {
	VUFE_BAD_DESC_OOB,	  /* data descriptor beyond guest memory */
	VUFE_BAD_DESC_STRADDLE,	  /* addr in memory, addr+len past a region */
	VUFE_BAD_DESC_LOOP,	  /* chain whose next points back to its head */
	VUFE_BAD_DESC_NEXT_OOB,	  /* next >= ring size */
	VUFE_BAD_INDIRECT_OOB,	  /* indirect table outside guest memory */
	VUFE_BAD_INDIRECT_ENTRY,  /* indirect table fine, entry out of range */
	VUFE_BAD_INDIRECT_LEN,	  /* indirect len not a multiple of 16 */
	VUFE_BAD_INDIRECT_NESTED, /* indirect entry with INDIRECT set */
	VUFE_BAD_HEAD_OOB,	  /* avail ring entry >= ring size */
	VUFE_BAD_AVAIL_JUMP,	  /* avail->idx moved by more than the size */
};
/*
 * On a packed ring the split-only kinds have packed counterparts:
 *   DESC_LOOP      every ring descriptor chained (NEXT), the chain never ends
 *   DESC_NEXT_OOB  an indirect descriptor with NEXT, chained on
 *   HEAD_OOB       a buffer id >= ring size
 *   AVAIL_JUMP     an indirect descriptor inside a chain (not its first)
 * The others keep their meaning.
 */
enum vufe_hostile_msg {
	VUFE_BAD_MSG_TRUNCATED,	  /* size field shorter than the request */
	VUFE_BAD_MSG_CLOSE_SHORT, /* header, half a payload, then shutdown */
	VUFE_BAD_MSG_OVERSIZE,	  /* size field 0xffffffff */
	VUFE_BAD_MSG_KICK_2FDS,	  /* SET_VRING_KICK with two fds */
	VUFE_BAD_MSG_CALL_NOFD,	  /* SET_VRING_CALL, no fd, no NOFD flag */
	VUFE_BAD_MSG_ADD_MEM_NOFD, /* ADD_MEM_REG without its fd */
	VUFE_BAD_MSG_MEM_TABLE_FDS, /* SET_MEM_TABLE, 2 regions, 1 fd */
	VUFE_BAD_MSG_VRING_IDX,	  /* SET_VRING_NUM for vring 200 */
	VUFE_BAD_MSG_VRING_NUM,	  /* SET_VRING_NUM num 3 (not a power of 2) */
	VUFE_BAD_MSG_UNKNOWN,	  /* request 999 */
};
int vufe_hostile_ring(struct vufe *fe, unsigned int vq,
		      enum vufe_hostile_ring kind);
int vufe_hostile_msg(struct vufe *fe, enum vufe_hostile_msg kind);

#endif /* VNET_SELFTESTS_VUFE_H */
