/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A port's virtio-net device on top of the vhost-user library
 * (device.c): the vhost-user device with its rings, the features it
 * offers, and what the negotiated ones mean for the tap and the queue
 * pairs; every callback runs on the control thread.
 */
#ifndef VNETD_DEVICE_H
#define VNETD_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "datapath/qthread.h"
#include "tap/tap.h"
#include "vhost_user.h"

struct vnetd_device {
	const char *name;	/* log prefix: the port's */
	bool packed;		/* --packed: offer VIRTIO_F_RING_PACKED */
	struct vnetd_tap *tap;	/* what it serves: the tap, */
	struct vnetd_qp *qp;	/* ... its queue pairs */
	unsigned int nr_qp;

	struct vhost_dev dev;	/* the rings: 2 * nr_qp */
	bool ok;		/* dev is initialized */
	/* negotiated; changed only while every ring is stopped */
	uint64_t features;
	unsigned int hdr_len;	/* virtio-net header: 10 or 12 */
	bool mrg;		/* VIRTIO_NET_F_MRG_RXBUF */
	/* the packed rings' journal file ("": none) */
	char journal[256];
	/*
	 * a ring's start is posted to its thread, not waited for: set around
	 * a batch of starts, vnetd_device_wait() after it
	 */
	bool post_starts;
};

void vnetd_device_init(struct vnetd_device *d, const char *name, bool packed,
		       struct vnetd_tap *tap, struct vnetd_qp *qp,
		       unsigned int nr_qp);

/* The vhost-user device, before the socket; 0 or -errno (logged). */
int vnetd_device_open(struct vnetd_device *d);
/* Every ring command posted to D's queue threads applied. */
void vnetd_device_wait(struct vnetd_device *d);
/* After the server let go of it (every ring stopped). */
void vnetd_device_close(struct vnetd_device *d);

#endif /* VNETD_DEVICE_H */
