/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the ring layer, never included from outside user/vhost:
 *
 *   virtq.c    the public vhost_vq_* calls (virtq.h), dispatched to the
 *              layout the ring was started with through its ops table:
 *   split.c    split rings (split.h)
 *   packed.c   packed rings (packed.h)
 *   vq.c       what both layouts use (vq.h, and below): a buffer added to
 *              an element inside guest memory, a ring area mapped, a ring
 *              marked broken or stopped
 *
 * and the one set of shared-memory accessors all of them use.
 */
#ifndef VNET_VHOST_VQ_INT_H
#define VNET_VHOST_VQ_INT_H

#include <endian.h>
#include <stdint.h>
#include <unistd.h>

#include "vq.h"

/*
 * Shared-memory accessors.  The guest writes the rings concurrently, so a
 * value is read exactly once into a local (a compiler re-load after a
 * check would be a time-of-check/time-of-use hole) and written exactly
 * once; relaxed atomics say that without volatile.  Ring fields are
 * little-endian (vq.h).
 */
#define RD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define WR(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)

static inline uint16_t rd_le16(const uint16_t *p)
{
	return le16toh(__atomic_load_n(p, __ATOMIC_RELAXED));
}

/* ... with acquire: what the guest wrote before it is read after it */
static inline uint16_t rd_le16_acquire(const uint16_t *p)
{
	return le16toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

static inline void wr_le16(uint16_t *p, uint16_t v)
{
	__atomic_store_n(p, htole16(v), __ATOMIC_RELAXED);
}

static inline void smp_mb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void smp_wmb(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline const char *vq_name(const struct vhost_vq *vq)
{
	return vq->name ? vq->name : "vhost";
}

/*
 * Dirty-log [GPA, GPA + LEN) written in a ring area (used entries, event
 * suppression), when the frontend asked for ring logging.  The write must
 * be visible before the bit: QEMU clears the bit and then copies the
 * page, and must not copy the old contents.
 */
static inline void vq_log_ring(struct vhost_vq *vq, uint64_t gpa,
			       uint64_t len)
{
	if (!vq->log_used)
		return;
	smp_wmb();
	vhost_mem_log_write(vq->mem, gpa, len);
}

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

/*
 * A ring layout: what virtq.c's public calls of the same name do on it
 * (virtq.h).  start maps the ring areas, prepares the layout's state for
 * the features virtq.c derived into vq (event_idx, indirect, log_*) and
 * sets vq->ops; 0 or -errno, the ring left stopped.  The others are
 * called on a started ring only (vq->ops set); push_burst on a ring not
 * broken, with at most num entries whose ids are below num.
 */
struct vhost_vq_ops {
	int (*start)(struct vhost_vq *vq);
	int (*pop_burst)(struct vhost_vq *vq, struct vhost_vq_elem *elems,
			 unsigned int n);
	unsigned int (*avail_count)(struct vhost_vq *vq);
	void (*rewind)(struct vhost_vq *vq, unsigned int n);
	int (*push_burst)(struct vhost_vq *vq, const struct vhost_vq_used *used,
			  unsigned int n);
	bool (*need_notify)(struct vhost_vq *vq);
	bool (*want_notify)(struct vhost_vq *vq);
	void (*notify_disable)(struct vhost_vq *vq);
	bool (*notify_enable)(struct vhost_vq *vq);
	bool (*avail_waiting)(const struct vhost_vq *vq);
};

/* vq.c: append the guest buffer [ADDR, ADDR + LEN) to ELEM */
int vhost_vq_elem_add(struct vhost_vq *vq, struct vhost_vq_elem *elem,
		      uint64_t addr, uint32_t len, bool write,
		      unsigned int *niov);

/*
 * vq.c: the host address of ring area WHAT at UVA, LEN bytes inside one
 * memory region and ALIGN-aligned (its guest address in *GPA, when GPA is
 * not NULL); NULL, logged, when it is not.
 */
void *vhost_vq_map(struct vhost_vq *vq, const char *what, uint64_t uva,
		   uint64_t len, size_t align, uint64_t *gpa);

#endif /* VNET_VHOST_VQ_INT_H */
