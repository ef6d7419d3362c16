/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the ring layer, shared by its files:
 *
 *   virtq.c    the public vhost_vq_* calls: split rings, and a dispatch to
 *   packed.c   packed rings (VIRTIO_F_RING_PACKED)
 *   vq_core.c  what both ring types use: a buffer added to an element
 *              inside guest memory, a ring marked broken, a ring stopped
 */
#ifndef VNET_VHOST_VQ_INT_H
#define VNET_VHOST_VQ_INT_H

#include <stdint.h>
#include <unistd.h>

#include "virtq.h"

/*
 * Frontend fds.  Each was made non-blocking when it arrived (a private
 * O_NONBLOCK open file for pipes; the shared flag for eventfds, which
 * cannot be reopened), so these calls return at once.  A frontend can
 * still clear the shared flag of an eventfd and fill (or drain) it: then
 * the call waits in the kernel until the device layer interrupts the
 * thread with a signal (fd_op says where it is; see vhost_vq_fd_busy()).
 */
static inline void fd_op_mark(struct vhost_vq *vq)
{
	__atomic_store_n(&vq->fd_op, vq->fd_op + 1, __ATOMIC_RELAXED);
}

static inline ssize_t vq_fe_write(struct vhost_vq *vq, int fd)
{
	uint64_t one = 1;
	ssize_t n;

	fd_op_mark(vq);
	n = write(fd, &one, sizeof(one));
	fd_op_mark(vq);
	return n;
}

static inline const char *vq_name(const struct vhost_vq *vq)
{
	return vq->name ? vq->name : "vhost";
}

#endif /* VNET_VHOST_VQ_INT_H */
