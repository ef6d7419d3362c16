/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Split virtqueues (virtio 1.2, 2.7) seen from the device side, and packed
 * virtqueues (2.8, VIRTIO_F_RING_PACKED: packed.c) behind the same API.
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
#include <sys/uio.h>
#include <linux/virtio_ring.h>

#include "mem.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vhost: split rings are handled as little-endian only"
#endif

/*
 * Split ring sizes are powers of two up to 32768 (virtio 1.2, 2.7); packed
 * ring sizes are any number from 1 to 32768 (2.8).
 */
#define VHOST_VQ_MAX_SIZE 32768
/*
 * Segments per chain an element can hold.  Linux sends at most
 * MAX_SKB_FRAGS + 2 (19) per frame; a longer chain is not an attack, so it
 * does not break the ring: the element comes back with err = -E2BIG and
 * must be pushed back with length 0 (see struct vhost_vq_elem).
 */
#define VHOST_VQ_MAX_IOV 64

/* One descriptor chain taken from the available ring. */
struct vhost_vq_elem {
	uint16_t head;	  /* give it back with vhost_vq_push*() */
	uint16_t out_num; /* device-readable: iov[0 .. out_num) */
	uint16_t in_num;  /* device-writable: iov[out_num .. out_num + in_num) */
	int err;	  /* 0, or -E2BIG: too many segments, no iovecs given */
	uint64_t out_len; /* bytes in the readable segments */
	uint64_t in_len;  /* bytes in the writable segments */
	struct iovec iov[VHOST_VQ_MAX_IOV];
	uint64_t gpa[VHOST_VQ_MAX_IOV]; /* guest address of each iov (log) */
};

/*
 * What this layer counts per ring, for the device to report (it maps them
 * onto its own statistics).  Monotonic over the ring's life: a reset (a
 * new connection) keeps them.
 */
struct vhost_vq_stats {
	uint64_t kicks;		   /* kick eventfd counts consumed */
	uint64_t calls;		   /* call eventfd writes (vhost_vq_notify) */
	uint64_t calls_suppressed; /* notify asked, the guest wanted none */
	uint64_t bad_chains;	   /* chains given back unusable, ring intact */
};

/* One used ring entry: a chain's head and the bytes written into it. */
struct vhost_vq_used {
	uint32_t id;
	uint32_t len;
};

struct vhost_vq {
	/* --- identity, set once --- */
	unsigned int index;
	const char *name;	/* for log lines: the port's name */
	struct vhost_mem *mem;	/* the device's guest memory table */
	void *priv;		/* free for the device layer */

	/* --- configuration: protocol thread, ring stopped --- */
	uint16_t num;		/* 0 until SET_VRING_NUM */
	bool addr_set;
	uint32_t addr_flags;	/* VHOST_VRING_F_LOG */
	uint64_t desc_uva, avail_uva, used_uva, log_guest_addr;
	int kick_fd;		/* -1: none, or polling mode (kick_polling) */
	int call_fd;		/* -1: the guest polls, never signal */
	int err_fd;		/* -1: none */
	bool kick_set;		/* SET_VRING_KICK seen: the ring is started */
	bool kick_polling;	/* ... without an fd: poll the avail ring */
	bool enabled;		/* SET_VRING_ENABLE (or implicit) */
	bool running;		/* the device was told to run it */
	bool sync_used;		/* first start since SET_VRING_BASE */

	/* --- derived at start from the features and the memory table --- */
	uint64_t features;
	bool event_idx, indirect, notify_on_empty;
	bool log_all;		/* VHOST_F_LOG_ALL: log buffer writes */
	bool log_used;		/* ... and used ring writes (VHOST_VRING_F_LOG) */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;

	/*
	 * Packed rings (VIRTIO_F_RING_PACKED), packed.c.  The ring addresses
	 * are reused: desc_uva is the descriptor ring, avail_uva the driver
	 * event suppression area, used_uva the device's.  last_avail_idx and
	 * used_idx are ring positions (< num) with their wrap counters here;
	 * signalled_used is a position too (packed.c's linear form).
	 */
	bool packed;
	bool avail_wrap, used_wrap;
	struct vring_packed_desc *pdesc;
	struct vring_packed_desc_event *driver_event; /* the guest writes it */
	struct vring_packed_desc_event *device_event; /* we write it */
	uint64_t pdesc_gpa, device_event_gpa;	/* for the dirty log */
	uint16_t *chain_len;	/* per buffer id: ring descriptors it took */
	uint16_t *pop_pos;	/* per pop (mod num): start position, rewind */
	unsigned int pk_alloc;	/* entries of chain_len and pop_pos */
	uint16_t pops;		/* pops so far, mod num */
	uint16_t pk_cnt;	/* chains counted available past last_avail */
	uint16_t pk_scan;	/* position (idx | wrap << 15) after them */

	/* --- datapath state: the queue thread, ring running --- */
	uint16_t last_avail_idx;   /* next avail entry to pop */
	uint16_t shadow_avail_idx; /* avail->idx as last read */
	uint16_t used_idx;	   /* next used entry to fill */
	uint16_t signalled_used;   /* used_idx at the last call (EVENT_IDX) */
	bool signalled_used_valid;
	bool kicks_off;		   /* vhost_vq_notify_disable() in effect */

	int broken;		   /* atomic; see vhost_vq_set_broken() */
	char broken_reason[256];

	/*
	 * Odd while the queue thread is inside a read or write of a
	 * frontend fd (kick, call, error): atomic, read by another thread
	 * to find a thread that a frontend's fd holds (see
	 * vhost_vq_fd_busy()).  call_stuck/err_stuck: such a write was
	 * interrupted; that fd is no longer written until it is replaced.
	 */
	unsigned int fd_op;
	bool call_stuck, err_stuck;

	/* updated by the queue thread only; see struct vhost_vq_stats */
	struct vhost_vq_stats stats;
};

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

/* Consume the kick eventfd's counter (non-blocking); how many kicks. */
uint64_t vhost_vq_kick_drain(struct vhost_vq *vq);

/*
 * Mark the ring broken: log once with the reason, signal the error fd.
 * Idempotent and callable from the queue thread.
 */
void vhost_vq_set_broken(struct vhost_vq *vq, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline bool vhost_vq_broken(const struct vhost_vq *vq)
{
	return __atomic_load_n(&vq->broken, __ATOMIC_ACQUIRE);
}

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
/* Forget the host pointers (the memory table may change). */
void vhost_vq_stop(struct vhost_vq *vq);

/*
 * GET/SET_VRING_BASE of a packed ring: the 32-bit form of QEMU's
 * vhost-user.rst, avail position and wrap counter (bit 15) in the low 16
 * bits, used position and wrap counter in the high 16 bits.  A zero high
 * half (a frontend that sends the avail half only, as DPDK's virtio-user
 * does) means "used = avail": the ring was stopped with nothing in flight.
 */
uint32_t vhost_vq_packed_base(const struct vhost_vq *vq);
void vhost_vq_packed_set_base(struct vhost_vq *vq, uint32_t base);

/* --- packed.c, called by virtq.c's public functions on vq->packed ---- */

int vhost_vq_packed_pop_burst(struct vhost_vq *vq, struct vhost_vq_elem *elems,
			      unsigned int n);
unsigned int vhost_vq_packed_avail_count(struct vhost_vq *vq);
void vhost_vq_packed_rewind(struct vhost_vq *vq, unsigned int n);
int vhost_vq_packed_push_burst(struct vhost_vq *vq,
			       const struct vhost_vq_used *used, unsigned int n);
bool vhost_vq_packed_need_notify(struct vhost_vq *vq);
bool vhost_vq_packed_want_notify(struct vhost_vq *vq);
void vhost_vq_packed_notify_disable(struct vhost_vq *vq);
bool vhost_vq_packed_notify_enable(struct vhost_vq *vq);
int vhost_vq_packed_start(struct vhost_vq *vq, uint64_t features);
void vhost_vq_packed_free(struct vhost_vq *vq);

/* virtq.c's chain-building step, shared with packed.c */
int vhost_vq_elem_add(struct vhost_vq *vq, struct vhost_vq_elem *elem,
		      uint64_t addr, uint32_t len, bool write,
		      unsigned int *niov);

#endif /* VNET_VHOST_VIRTQ_H */
