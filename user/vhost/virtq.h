/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The virtqueue API (virtq.c), device side: split rings (virtio 1.2, 2.7;
 * split.c) and packed rings (2.8, VIRTIO_F_RING_PACKED; packed.c) behind
 * the same calls, the ring object itself in vq.h.
 *
 * Two kinds of callers, two kinds of fields:
 *
 *  - the protocol thread (vhost_user.c) configures a ring from vhost-user
 *    messages (size, addresses, base, eventfds) and starts/stops it.  It
 *    only writes while the ring is stopped, i.e. while no queue thread uses
 *    it (the device's queue_stop callback has returned);
 *
 *  - one queue thread per ring (the net device) runs the datapath:
 *
 *	for (;;) {
 *		wait for the kick fd (or poll);  vhost_vq_kick_drain(vq);
 *		vhost_vq_notify_disable(vq);
 *		do {
 *			while ((n = vhost_vq_pop_burst(vq, elems, N)) > 0) {
 *				... read elems[i].iov[0 .. out_num),
 *				    write elems[i].iov[out_num .. out_num + in_num),
 *				    vhost_vq_log_write(vq, &elems[i], written) ...
 *				vhost_vq_push_burst(vq, used, n);
 *				vhost_vq_notify(vq);   (or defer: coalescing)
 *			}
 *		} while (vhost_vq_notify_enable(vq));  (lost-wakeup re-check)
 *		if (vhost_vq_broken(vq)) stop using the ring;
 *	}
 *
 * Every guest-controlled value (indices, descriptor addresses, lengths,
 * flags, next links, indirect tables) is validated; any inconsistency
 * marks the ring broken: it is logged once with the reason, signalled on
 * the ring's error eventfd if the frontend gave one, and every datapath
 * call on it returns -EIO from then on.  Nothing a guest writes can crash
 * the process or reach memory outside its regions.
 *
 * Rings are little-endian (virtio 1.x, and legacy guests on little-endian
 * hosts); a big-endian host or a cross-endian legacy guest is not
 * supported.
 */
#ifndef VNET_VHOST_VIRTQ_H
#define VNET_VHOST_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>

#include "vq.h"

/* --- datapath: the queue thread ------------------------------------- */

/*
 * Pop up to N chains into ELEMS.  Returns how many (0: ring empty), or
 * -EIO when the ring is broken (now or before) and nothing was popped.
 * Elements popped before a chain broke the ring are returned and valid.
 */
int vhost_vq_pop_burst(struct vhost_vq *vq, struct vhost_vq_elem *elems,
		       unsigned int n);

/* Available chains not popped yet (re-reads avail->idx); 0 when broken. */
unsigned int vhost_vq_avail_count(struct vhost_vq *vq);

/* Give back the last N popped chains unused (e.g. RX: frame did not fit). */
void vhost_vq_rewind(struct vhost_vq *vq, unsigned int n);

/*
 * Publish N used entries with a single used->idx store (release: the
 * entries and the buffer contents are visible to the guest before the
 * index).  0, -EINVAL for an id that is not a head of this ring (nothing
 * is published), -EIO when the ring is broken.
 */
int vhost_vq_push_burst(struct vhost_vq *vq, const struct vhost_vq_used *used,
			unsigned int n);

static inline int vhost_vq_push(struct vhost_vq *vq, uint16_t head,
				uint32_t len)
{
	struct vhost_vq_used u = { .id = head, .len = len };

	return vhost_vq_push_burst(vq, &u, 1);
}

/*
 * Dirty-log the first LEN bytes written into ELEM's writable segments, when
 * VHOST_F_LOG_ALL is negotiated (live migration).  Call it before pushing.
 */
void vhost_vq_log_write(struct vhost_vq *vq, const struct vhost_vq_elem *elem,
			uint64_t len);

/*
 * Does the guest want a call for what was pushed since the last call?
 * EVENT_IDX: used_event crossed; otherwise VRING_AVAIL_F_NO_INTERRUPT
 * clear; NOTIFY_ON_EMPTY forces it.  With EVENT_IDX, a "true" answer
 * records the call as made: signal it (vhost_vq_signal()) or the guest
 * may wait forever.  Coalescing devices call it when the coalescing
 * decision is taken, not per push.
 */
bool vhost_vq_need_notify(struct vhost_vq *vq);

/*
 * The same question without recording anything: would the guest want a
 * call for what was pushed since the last decision?  A coalescing device
 * asks before it holds a signal back: when the answer is no, there is
 * nothing to hold (and no timer to arm) until a later push crosses the
 * guest's used_event.  The driver that moves used_event back over entries
 * already pushed re-checks the used ring itself (virtqueue_poll), so no
 * call is lost.
 */
bool vhost_vq_want_notify(struct vhost_vq *vq);

/*
 * From another thread than the ring's, for a watchdog: does the guest's
 * side show an entry the device has not taken (split: avail->idx past
 * the device's position; packed: the descriptor there available)?  *POS:
 * the device's position.  Reads only, racy by design: a true answer
 * twice with the same *POS means the ring waits for nothing (a kick
 * lost).  False on a ring not started or broken.
 */
bool vhost_vq_avail_waiting(const struct vhost_vq *vq, uint32_t *pos);

/* Write the call eventfd unconditionally (no-op without one). 0/-errno. */
int vhost_vq_signal(struct vhost_vq *vq);

/* need_notify + signal, counting sent/suppressed: 1 sent, 0 not, -errno. */
int vhost_vq_notify(struct vhost_vq *vq);

/*
 * Kick suppression while draining.  disable: the guest need not kick
 * (VRING_USED_F_NO_NOTIFY, or with EVENT_IDX avail_event is left behind).
 * enable: ask for kicks again, then re-read avail->idx after a full
 * barrier; true means buffers arrived in between (the guest may not have
 * kicked for them) and the caller must drain again.
 */
void vhost_vq_notify_disable(struct vhost_vq *vq);
bool vhost_vq_notify_enable(struct vhost_vq *vq);

/*
 * The ring's queue thread, while the ring runs (its memory table cannot
 * change): the guest memory's pages are no longer mapped in this process
 * until touched again (vhost_mem_drop_pages()).
 */
void vhost_vq_drop_pages(struct vhost_vq *vq);

/* Consume the kick eventfd's counter (non-blocking); how many kicks. */
uint64_t vhost_vq_kick_drain(struct vhost_vq *vq);

static inline int vhost_vq_kick_fd(const struct vhost_vq *vq)
{
	return vq->kick_fd;
}

/*
 * The queue thread's position in frontend-fd syscalls: odd while inside
 * one.  Another thread that reads the same odd value twice, some time
 * apart, knows the queue thread has been waiting on a frontend fd all
 * along (interrupt it with a signal; the library then treats the fd as
 * stuck).  Any thread.
 */
static inline unsigned int vhost_vq_fd_busy(const struct vhost_vq *vq)
{
	return __atomic_load_n(&vq->fd_op, __ATOMIC_RELAXED);
}

static inline int vhost_vq_call_fd(const struct vhost_vq *vq)
{
	return vq->call_fd;
}

/* --- control: the protocol thread, ring stopped ---------------------- */

void vhost_vq_init(struct vhost_vq *vq, unsigned int index, const char *name,
		   struct vhost_mem *mem);
/* Close the eventfds and forget the configuration and state. */
void vhost_vq_reset(struct vhost_vq *vq);

/*
 * Everything needed to run is known: size, addresses, started (kick) and
 * enabled.  Memory is checked by vhost_vq_start().
 */
bool vhost_vq_ready(const struct vhost_vq *vq);

/*
 * Translate the ring addresses through the memory table and prepare the
 * datapath state for FEATURES (the negotiated virtio features).  -EFAULT
 * (ring not inside one region), -EINVAL (misaligned, not configured).
 */
int vhost_vq_start(struct vhost_vq *vq, uint64_t features);

/*
 * GET/SET_VRING_BASE.  A split ring (PACKED false): the next avail index;
 * after a set, the first start resumes from the guest's used index when
 * it disagrees (chains in flight in a backend that went away).  A packed
 * ring: the 32-bit form of QEMU's vhost-user.rst, avail position and wrap
 * counter (bit 15) in the low 16 bits, used position and wrap counter in
 * the high 16 bits.  A zero high half (a frontend that sends the avail
 * half only, as DPDK's virtio-user does) means "used = avail": the ring
 * was stopped with nothing in flight.
 */
uint32_t vhost_vq_base(const struct vhost_vq *vq, bool packed);
void vhost_vq_set_base(struct vhost_vq *vq, uint32_t base, bool packed);

#endif /* VNET_VHOST_VIRTQ_H */
