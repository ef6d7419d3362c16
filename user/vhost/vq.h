/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A virtqueue seen from the device side (vq.c): the ring object every part
 * of the ring layer shares, split (split.c) or packed (packed.c), and
 * what both layouts do to it alike: a ring marked broken, a ring stopped.
 * The datapath and control calls on it are in virtq.h.
 */
#ifndef VNET_VHOST_VQ_H
#define VNET_VHOST_VQ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <linux/virtio_ring.h>

#include "mem.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vhost: rings are handled as little-endian only"
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

/* A split ring's own state (split.c): its three areas, mapped at start. */
struct vhost_vq_split {
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t shadow_avail_idx; /* avail->idx as last read */
};

/*
 * A packed ring's own state (packed.c).  The ring addresses are reused:
 * desc_uva is the descriptor ring, avail_uva the driver event suppression
 * area, used_uva the device's.
 */
struct vhost_vq_packed {
	struct vring_packed_desc *desc;
	struct vring_packed_desc_event *driver_event; /* the guest writes it */
	struct vring_packed_desc_event *device_event; /* we write it */
	uint64_t desc_gpa, device_event_gpa;	/* for the dirty log */
	uint16_t *chain_len;	/* per buffer id: ring descriptors it took */
	uint16_t *pop_pos;	/* per pop (mod num): start position, rewind */
	uint16_t *pop_id;	/* ... and the buffer id it took */
	unsigned int alloc;	/* entries of chain_len and pop_pos */
	uint16_t pops;		/* pops so far, mod num */
	uint16_t cnt;		/* chains counted available past last_avail */
	uint16_t scan;		/* position (idx | wrap << 15) after them */
	uint32_t fe_base;	/* the frontend's last SET_VRING_BASE */
	bool fe_fresh;		/* ... not started from yet */
};

struct vhost_vq_ops;

struct vhost_vq {
	/* --- identity, set once --- */
	unsigned int index;
	const char *name;	/* for log lines: the port's name */
	struct vhost_mem *mem;	/* the device's guest memory table */
	void *priv;		/* free for the device layer */
	/*
	 * Packed rings: where the ring's journal lives (journal.c), memory
	 * that outlives the process; NULL: none.  Kept over a reset.
	 */
	void *journal;
	int frontend_pid;	/* the peer's, set at start; 0: unknown */

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
	bool sync_used;		/* first start since SET_VRING_BASE (split) */

	/* --- derived at start from the features and the memory table --- */
	uint64_t features;
	bool event_idx, indirect, notify_on_empty;
	bool log_all;		/* VHOST_F_LOG_ALL: log buffer writes */
	bool log_used;		/* ... and used ring writes (VHOST_VRING_F_LOG) */
	/* the layout being served (vq_int.h); NULL: stopped, nothing mapped */
	const struct vhost_vq_ops *ops;

	/*
	 * --- where the device is in the ring: the queue thread, ring
	 * running; GET/SET_VRING_BASE carry them ---
	 * Split: indices modulo 2^16.  Packed: ring positions (< num), each
	 * with its wrap counter; signalled_used is a position on packed.c's
	 * 2 * num circle.
	 */
	uint16_t last_avail_idx;   /* next avail entry to pop */
	uint16_t used_idx;	   /* next used entry to fill */
	bool avail_wrap, used_wrap; /* packed: the two wrap counters */
	uint16_t signalled_used;   /* used_idx at the last call (EVENT_IDX) */
	bool signalled_used_valid;
	bool kicks_off;		   /* vhost_vq_notify_disable() in effect */
	bool owe_call;		   /* at start: a call is due (journal.c) */

	/* --- each layout's own state: only the one of ops is in use --- */
	struct vhost_vq_split split;
	struct vhost_vq_packed packed;

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

/* Forget the host pointers of either layout (the memory table may change). */
void vhost_vq_stop(struct vhost_vq *vq);

#endif /* VNET_VHOST_VQ_H */
