/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vhost-user protocol, backend side (QEMU docs/interop/vhost-user.rst).
 *
 * A struct vhost_dev is one port: one frontend connection at a time, its
 * negotiated features, its guest memory and its virtqueues.  Messages are
 * read from a non-blocking socket into a small state machine (header, then
 * payload, SCM_RIGHTS fds collected on the way) and dispatched through a
 * table that says, per request, how many fds it carries, how big its
 * payload must at least be and what it replies.
 *
 * The device on top (vnetd's net device) plugs in through struct
 * vhost_dev_ops: it says which virtio features it offers and is told when
 * each ring starts and stops.  Locking is by quiescing, not by locks on the
 * datapath: anything that changes what a running ring uses (memory table,
 * features, dirty log, ring addresses, eventfds) first stops the affected
 * rings through ops->queue_stop, which must not return before the device's
 * threads have stopped touching them, then applies the change, then starts
 * them again through ops->queue_start.  All callbacks run on the thread
 * that calls vhost_dev_handle_input() (the event loop).
 */
#ifndef VNET_VHOST_USER_H
#define VNET_VHOST_USER_H

#include <stdbool.h>
#include <stdint.h>

#include "mem.h"
#include "virtq.h"

enum vhost_user_request {
	VHOST_USER_NONE = 0,
	VHOST_USER_GET_FEATURES = 1,
	VHOST_USER_SET_FEATURES = 2,
	VHOST_USER_SET_OWNER = 3,
	VHOST_USER_RESET_OWNER = 4,
	VHOST_USER_SET_MEM_TABLE = 5,
	VHOST_USER_SET_LOG_BASE = 6,
	VHOST_USER_SET_LOG_FD = 7,
	VHOST_USER_SET_VRING_NUM = 8,
	VHOST_USER_SET_VRING_ADDR = 9,
	VHOST_USER_SET_VRING_BASE = 10,
	VHOST_USER_GET_VRING_BASE = 11,
	VHOST_USER_SET_VRING_KICK = 12,
	VHOST_USER_SET_VRING_CALL = 13,
	VHOST_USER_SET_VRING_ERR = 14,
	VHOST_USER_GET_PROTOCOL_FEATURES = 15,
	VHOST_USER_SET_PROTOCOL_FEATURES = 16,
	VHOST_USER_GET_QUEUE_NUM = 17,
	VHOST_USER_SET_VRING_ENABLE = 18,
	VHOST_USER_SEND_RARP = 19,
	VHOST_USER_NET_SET_MTU = 20,
	VHOST_USER_SET_BACKEND_REQ_FD = 21,
	VHOST_USER_IOTLB_MSG = 22,
	VHOST_USER_SET_VRING_ENDIAN = 23,
	VHOST_USER_GET_CONFIG = 24,
	VHOST_USER_SET_CONFIG = 25,
	VHOST_USER_CREATE_CRYPTO_SESSION = 26,
	VHOST_USER_CLOSE_CRYPTO_SESSION = 27,
	VHOST_USER_POSTCOPY_ADVISE = 28,
	VHOST_USER_POSTCOPY_LISTEN = 29,
	VHOST_USER_POSTCOPY_END = 30,
	VHOST_USER_GET_INFLIGHT_FD = 31,
	VHOST_USER_SET_INFLIGHT_FD = 32,
	VHOST_USER_GPU_SET_SOCKET = 33,
	VHOST_USER_RESET_DEVICE = 34,
	VHOST_USER_VRING_KICK = 35,
	VHOST_USER_GET_MAX_MEM_SLOTS = 36,
	VHOST_USER_ADD_MEM_REG = 37,
	VHOST_USER_REM_MEM_REG = 38,
	VHOST_USER_SET_STATUS = 39,
	VHOST_USER_GET_STATUS = 40,
	VHOST_USER_REQUEST_MAX,
};

/* header flags */
#define VHOST_USER_VERSION 0x1
#define VHOST_USER_VERSION_MASK 0x3
#define VHOST_USER_REPLY_MASK (1u << 2)
#define VHOST_USER_NEED_REPLY_MASK (1u << 3)

/* u64 payload of SET_VRING_KICK/CALL/ERR */
#define VHOST_USER_VRING_IDX_MASK 0xffULL
#define VHOST_USER_VRING_NOFD_MASK (1ULL << 8)

/* fds in one message's ancillary data */
#define VHOST_USER_MAX_FDS 8
/* regions in one SET_MEM_TABLE (VHOST_MEMORY_BASELINE_NREGIONS) */
#define VHOST_USER_MEM_TABLE_MAX 8
/* vring index is 8 bits in SET_VRING_KICK/CALL/ERR */
#define VHOST_USER_MAX_VQS 256

/* virtio feature bit 30, reused by vhost-user (UNUSED in virtio 1.x) */
#define VHOST_USER_F_PROTOCOL_FEATURES 30

enum vhost_user_protocol_feature {
	VHOST_USER_PROTOCOL_F_MQ = 0,
	VHOST_USER_PROTOCOL_F_LOG_SHMFD = 1,
	VHOST_USER_PROTOCOL_F_RARP = 2,
	VHOST_USER_PROTOCOL_F_REPLY_ACK = 3,
	VHOST_USER_PROTOCOL_F_MTU = 4,
	VHOST_USER_PROTOCOL_F_BACKEND_REQ = 5,
	VHOST_USER_PROTOCOL_F_CROSS_ENDIAN = 6,
	VHOST_USER_PROTOCOL_F_CRYPTO_SESSION = 7,
	VHOST_USER_PROTOCOL_F_PAGEFAULT = 8,
	VHOST_USER_PROTOCOL_F_CONFIG = 9,
	VHOST_USER_PROTOCOL_F_BACKEND_SEND_FD = 10,
	VHOST_USER_PROTOCOL_F_HOST_NOTIFIER = 11,
	VHOST_USER_PROTOCOL_F_INFLIGHT_SHMFD = 12,
	VHOST_USER_PROTOCOL_F_RESET_DEVICE = 13,
	VHOST_USER_PROTOCOL_F_INBAND_NOTIFICATIONS = 14,
	VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS = 15,
	VHOST_USER_PROTOCOL_F_STATUS = 16,
};

/* What this library implements; a device may offer less (see vhost_dev). */
#define VHOST_USER_PROTOCOL_FEATURES                                   \
	((1ULL << VHOST_USER_PROTOCOL_F_MQ) |                          \
	 (1ULL << VHOST_USER_PROTOCOL_F_LOG_SHMFD) |                   \
	 (1ULL << VHOST_USER_PROTOCOL_F_RARP) |                        \
	 (1ULL << VHOST_USER_PROTOCOL_F_REPLY_ACK) |                   \
	 (1ULL << VHOST_USER_PROTOCOL_F_MTU) |                         \
	 (1ULL << VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS))

/* --- wire format: all fields in the machine's byte order ------------- */

struct vhost_user_hdr {
	uint32_t request;
	uint32_t flags;
	uint32_t size; /* of the payload that follows */
};

struct vhost_user_vring_state {
	uint32_t index;
	uint32_t num;
};

struct vhost_user_vring_addr {
	uint32_t index;
	uint32_t flags; /* 1 << VHOST_VRING_F_LOG */
	uint64_t desc_user_addr;
	uint64_t used_user_addr;
	uint64_t avail_user_addr;
	uint64_t log_guest_addr;
};

struct vhost_user_mem_table {
	uint32_t nregions;
	uint32_t padding;
	struct vhost_mem_region_desc regions[VHOST_USER_MEM_TABLE_MAX];
};

/* ADD_MEM_REG / REM_MEM_REG */
struct vhost_user_mem_reg {
	uint64_t padding;
	struct vhost_mem_region_desc region;
};

struct vhost_user_log {
	uint64_t mmap_size;
	uint64_t mmap_offset;
};

#define VHOST_USER_MAX_CONFIG_SIZE 256

struct vhost_user_config {
	uint32_t offset;
	uint32_t size;
	uint32_t flags;
	uint8_t region[VHOST_USER_MAX_CONFIG_SIZE];
};

union vhost_user_payload {
	uint64_t u64;
	struct vhost_user_vring_state state;
	struct vhost_user_vring_addr addr;
	struct vhost_user_mem_table mem;
	struct vhost_user_mem_reg mem_reg;
	struct vhost_user_log log;
	struct vhost_user_config config;
	uint8_t mac[6]; /* SEND_RARP: first 6 bytes of the u64 */
};

_Static_assert(sizeof(struct vhost_user_hdr) == 12, "vhost-user header");
_Static_assert(sizeof(struct vhost_user_vring_state) == 8, "vring state");
_Static_assert(sizeof(struct vhost_user_vring_addr) == 40, "vring addr");
_Static_assert(sizeof(struct vhost_user_mem_table) == 8 + 8 * 32,
	       "memory table");
_Static_assert(sizeof(struct vhost_user_mem_reg) == 40, "single region");
_Static_assert(sizeof(struct vhost_user_log) == 16, "log");
_Static_assert(sizeof(struct vhost_user_config) == 12 + 256, "config");

/* The largest payload accepted; a bigger header.size drops the connection. */
#define VHOST_USER_PAYLOAD_MAX sizeof(union vhost_user_payload)

/* A message as received or to be sent; fds are not on the wire. */
struct vhost_user_msg {
	struct vhost_user_hdr hdr;
	union vhost_user_payload payload;
	int fds[VHOST_USER_MAX_FDS]; /* a handler keeping one sets it to -1 */
	unsigned int nfds;
};

/* --- the device ------------------------------------------------------ */

struct vhost_dev;

struct vhost_dev_ops {
	/*
	 * Required.  The virtio features the device offers: device bits
	 * (e.g. VIRTIO_NET_F_*) and the ring/transport bits it wants
	 * (VIRTIO_F_VERSION_1, VIRTIO_RING_F_EVENT_IDX, ..._INDIRECT_DESC).
	 * The library adds VHOST_USER_F_PROTOCOL_FEATURES and VHOST_F_LOG_ALL
	 * and removes what it cannot do (packed rings, IOMMU, ...).
	 */
	uint64_t (*get_features)(struct vhost_dev *dev);
	/*
	 * Optional.  The frontend acked FEATURES (already checked to be a
	 * subset of the offer).  All rings are stopped.  -errno refuses them.
	 */
	int (*set_features)(struct vhost_dev *dev, uint64_t features);
	/* Optional.  GET_QUEUE_NUM's answer; default: the number of vqs. */
	uint64_t (*get_queue_num)(struct vhost_dev *dev);
	/*
	 * Required.  VQ is started, enabled, translated and its eventfds are
	 * set: the device may run it from its own thread from now on.  -errno
	 * leaves it stopped.
	 */
	int (*queue_start)(struct vhost_dev *dev, struct vhost_vq *vq);
	/*
	 * Required.  Stop using VQ.  Must not return until no device thread
	 * touches VQ or guest memory through it any more, and every chain
	 * popped from it was pushed or rewound (vhost_vq_rewind()): after it
	 * returns, memory may be unmapped and GET_VRING_BASE answered.
	 */
	void (*queue_stop)(struct vhost_dev *dev, struct vhost_vq *vq);
	/* Optional.  The memory table changed; all rings are stopped. */
	void (*mem_changed)(struct vhost_dev *dev);
	/* Optional.  SEND_RARP: announce the guest's MAC after migration. */
	int (*send_rarp)(struct vhost_dev *dev, const uint8_t mac[6]);
	/*
	 * Optional (offers VHOST_USER_PROTOCOL_F_MTU).  NET_SET_MTU: the
	 * frontend's MTU for the device (QEMU's host_mtu), 68..65535; 0 or
	 * -errno, which the frontend hears with REPLY_ACK and refuses.
	 */
	int (*set_mtu)(struct vhost_dev *dev, unsigned int mtu);
	/* Optional.  A frontend connected / went away (state is reset after). */
	void (*connected)(struct vhost_dev *dev);
	void (*disconnected)(struct vhost_dev *dev);
};

/* Receive state: a message being assembled from partial reads. */
struct vhost_user_rx {
	size_t got; /* bytes of header + payload read so far */
	struct vhost_user_msg msg;
};

struct vhost_dev {
	const char *name; /* log prefix, e.g. the socket path */
	const struct vhost_dev_ops *ops;
	void *priv; /* the device layer's */

	int fd; /* the frontend connection, -1 when none */
	struct vhost_user_rx rx;

	/* protocol features this port offers; set before connecting */
	uint64_t protocol_features_offered;
	uint64_t protocol_features; /* acked by SET_PROTOCOL_FEATURES */
	uint64_t features;	    /* acked by SET_FEATURES */
	bool owner;
	int log_fd; /* SET_LOG_FD, kept only to be closed */

	struct vhost_mem mem;
	unsigned int nr_vqs;
	struct vhost_vq *vqs;

	/* a hand-over (dev_state.c): rings stopped, messages left unread */
	bool frozen;
	/* ... being rebuilt from another process's messages: no reply, no ring started */
	bool importing;

	/* the packed rings' journal file, mapped (vhost_dev_journal_open()) */
	void *journal;
	size_t journal_len;
};

/*
 * NR_VQS virtqueues (at most VHOST_USER_MAX_VQS).  NAME is kept by
 * pointer.  0 or -errno.
 */
int vhost_dev_init(struct vhost_dev *dev, const char *name,
		   unsigned int nr_vqs, const struct vhost_dev_ops *ops,
		   void *priv);
/* Disconnect (if connected) and free. */
void vhost_dev_cleanup(struct vhost_dev *dev);

/* Take FD (a connected stream socket) as the frontend; -EBUSY if one is. */
int vhost_dev_attach(struct vhost_dev *dev, int fd);

/*
 * Read and handle what the frontend sent (call when the fd is readable;
 * it is non-blocking).  0: all available messages handled.  -errno: the
 * connection must go (EOF, truncated or oversized message, bad version,
 * a reply that could not be sent): call vhost_dev_disconnect().  A request
 * that is merely wrong (unknown, bad fd count, bad payload, refused) is
 * logged, answered with an error where an answer is due, and the
 * connection stays.
 */
int vhost_dev_handle_input(struct vhost_dev *dev);

/*
 * Stop all rings, tell the device, close the connection and forget all
 * per-connection state (features, memory, rings): ready for the next
 * frontend.
 */
void vhost_dev_disconnect(struct vhost_dev *dev);

static inline bool vhost_dev_connected(const struct vhost_dev *dev)
{
	return dev->fd >= 0;
}

static inline bool vhost_dev_has_feature(const struct vhost_dev *dev,
					 unsigned int bit)
{
	return dev->features & (1ULL << bit);
}

static inline struct vhost_vq *vhost_dev_vq(struct vhost_dev *dev,
					    unsigned int i)
{
	return i < dev->nr_vqs ? &dev->vqs[i] : NULL;
}

#endif /* VNET_VHOST_USER_H */
