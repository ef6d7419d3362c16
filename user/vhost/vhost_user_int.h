/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the vhost-user protocol layer, shared by its files:
 *
 *   vhost_user.c  receiving, dispatch through the handler table, replies,
 *                 a device's lifetime            (calls the two below)
 *   handlers.c    the handler table and the handlers of every request
 *   vring_fds.c   the kick, call and error fds of a ring (and what a
 *                 frontend can do with them)
 *   dev_state.c   a device's state as messages, out to another process
 *                 and back in (a live hand-over)  (calls the ones below)
 *   vu_dev.c      rings stopped and started around a change, message
 *                 helpers                         (called by all three)
 *
 * Here: the handler table (handlers.c) and the dispatch (vhost_user.c);
 * each file's own functions are in its header (vring_fds.h, vu_dev_int.h;
 * handlers.h and vu_dev.h are the ones the library's callers use).
 */
#ifndef VNET_VHOST_USER_INT_H
#define VNET_VHOST_USER_INT_H

#include <stdint.h>

#include "vhost_user.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef VIRTIO_F_NOTIFICATION_DATA
#define VIRTIO_F_NOTIFICATION_DATA 38
#endif

/*
 * Ring and transport features this library does not implement, whatever
 * the device offers: an IOMMU (IOTLB messages), driver data in
 * notifications, per-ring reset.  Packed rings are the device's choice.
 */
#define VHOST_LIB_UNSUPPORTED_FEATURES                 \
	((1ULL << VIRTIO_F_ACCESS_PLATFORM) |          \
	 (1ULL << VIRTIO_F_NOTIFICATION_DATA) |        \
	 (1ULL << VIRTIO_F_RING_RESET))

/* A reply that cannot be sent within this long drops the connection. */
#define VHOST_USER_SEND_TIMEOUT_MS 1000
/* Messages handled per readable event, so one port cannot starve others. */
#define VHOST_USER_RX_BUDGET 64

enum reply_kind {
	REPLY_NONE,	  /* a u64 ack only when NEED_REPLY is set */
	REPLY_PAYLOAD,	  /* always a reply; on error an empty one (size 0) */
	REPLY_IF_LOG_SHMFD, /* SET_LOG_BASE: a reply iff LOG_SHMFD was acked */
};

struct vhost_user_handler {
	const char *name;
	/* NULL: known but not supported (rejected, answered if due) */
	int (*fn)(struct vhost_dev *dev, struct vhost_user_msg *msg);
	uint8_t min_fds, max_fds;
	uint32_t size; /* minimum payload size */
	enum reply_kind reply;
};

extern const struct vhost_user_handler vu_handlers[VHOST_USER_REQUEST_MAX];

/*
 * vhost_user.c: check MSG against its handler and run it, then the reply
 * (none while importing: dev_state.c); its fds are closed unless taken.
 * 0, -errno of the handler, or of sending the reply.
 */
int vu_dispatch(struct vhost_dev *dev, struct vhost_user_msg *msg);

#endif
