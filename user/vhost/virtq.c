// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Split virtqueues, device side (see virtq.h). */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>

#include "log.h"
#include "virtq.h"
#include "vq_int.h"

/*
 * Shared-memory accessors.  The guest writes the rings concurrently, so a
 * value is read exactly once into a local (a compiler re-load after a
 * check would be a time-of-check/time-of-use hole) and written exactly
 * once; relaxed atomics say that without volatile.
 */
#define RD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define WR(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)

static inline void smp_mb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void smp_wmb(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* used_event lives after avail->ring[num], avail_event after used->ring[num] */
static inline uint16_t *used_event_ptr(struct vhost_vq *vq)
{
	return &vq->avail->ring[vq->num];
}

static inline uint64_t avail_event_off(const struct vhost_vq *vq)
{
	return offsetof(struct vring_used, ring) +
	       (uint64_t)vq->num * sizeof(struct vring_used_elem);
}

static inline uint16_t *avail_event_ptr(struct vhost_vq *vq)
{
	return (uint16_t *)((uint8_t *)vq->used + avail_event_off(vq));
}

/* The guest's available index; acquire: ring entries are read after it. */
static inline uint16_t avail_idx_load(struct vhost_vq *vq)
{
	return le16toh(__atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE));
}

static void log_used(struct vhost_vq *vq, uint64_t off, uint64_t len)
{
	if (!vq->log_used)
		return;
	/*
	 * The write must be visible before the bit: QEMU clears the bit and
	 * then copies the page, and must not copy the old contents.
	 */
	smp_wmb();
	vhost_mem_log_write(vq->mem, vq->log_guest_addr + off, len);
}

/*
 * A descriptor table being walked: the ring's own (host pointer), or an
 * indirect table, which is read in place when it lies in one region and is
 * suitably aligned, and copied entry by entry otherwise (a guest may put a
 * table across two adjacent regions).
 */
struct desc_table {
	const struct vring_desc *base; /* NULL: read through mem at gpa */
	uint64_t gpa;
	unsigned int num;
};

static int desc_fetch(struct vhost_vq *vq, const struct desc_table *t,
		      unsigned int i, struct vring_desc *d)
{
	if (t->base) {
		const struct vring_desc *s = &t->base[i];

		d->addr = le64toh(RD(s->addr));
		d->len = le32toh(RD(s->len));
		d->flags = le16toh(RD(s->flags));
		d->next = le16toh(RD(s->next));
		return 0;
	}
	/* i < num <= VHOST_VQ_MAX_SIZE: no overflow of the offset */
	if (vhost_mem_read(vq->mem, t->gpa + (uint64_t)i * sizeof(*d), d,
			   sizeof(*d)))
		return -EFAULT;
	d->addr = le64toh(d->addr);
	d->len = le32toh(d->len);
	d->flags = le16toh(d->flags);
	d->next = le16toh(d->next);
	return 0;
}

/* Switch T to the indirect table described by D; -EINVAL on a bad one. */
static int indirect_open(struct vhost_vq *vq, const struct vring_desc *d,
			 struct desc_table *t)
{
	const void *host;

	if (!vq->indirect) {
		vhost_vq_set_broken(vq, "indirect descriptor without VIRTIO_RING_F_INDIRECT_DESC");
		return -EINVAL;
	}
	if (d->flags & VRING_DESC_F_NEXT) {
		vhost_vq_set_broken(vq, "descriptor has both INDIRECT and NEXT");
		return -EINVAL;
	}
	if (!d->len || d->len % sizeof(struct vring_desc) ||
	    d->len / sizeof(struct vring_desc) > vq->num) {
		vhost_vq_set_broken(vq, "indirect table of %u bytes (ring size %u)",
				    d->len, vq->num);
		return -EINVAL;
	}
	t->num = d->len / sizeof(struct vring_desc);
	t->gpa = d->addr;
	host = vhost_mem_gpa_to_host(vq->mem, d->addr, d->len);
	if (host && !((uintptr_t)host % _Alignof(struct vring_desc))) {
		t->base = host;
		return 0;
	}
	/*
	 * Not one aligned block (it spans adjacent regions, or is
	 * misaligned): entries are copied out one by one.  Check the whole
	 * table once here, so that the reads cannot fail half way.
	 */
	t->base = NULL;
	if (!vhost_mem_range_ok(vq->mem, d->addr, d->len)) {
		vhost_vq_set_broken(vq, "indirect table 0x%llx+%u outside guest memory",
				    (unsigned long long)d->addr, d->len);
		return -EFAULT;
	}
	return 0;
}

/*
 * Walk the chain at HEAD.  The walk is bounded by the size of the table it
 * is in (the ring's, then at most one indirect table's): a longer walk is
 * a loop.  Any error has already broken the ring.
 */
static int chain_parse(struct vhost_vq *vq, uint16_t head,
		       struct vhost_vq_elem *elem)
{
	struct desc_table t = { .base = vq->desc, .num = vq->num };
	unsigned int i = head, count = 0, niov = 0;
	bool indirect = false;
	struct vring_desc d;
	int ret;

	elem->head = head;
	elem->out_num = elem->in_num = 0;
	elem->out_len = elem->in_len = 0;
	elem->err = 0;

	for (;;) {
		if (i >= t.num) {
			vhost_vq_set_broken(vq, "chain at head %u: descriptor index %u out of a %u entry %s table",
					    head, i, t.num,
					    indirect ? "indirect" : "ring");
			return -EINVAL;
		}
		if (++count > t.num) {
			vhost_vq_set_broken(vq, "chain at head %u: descriptor loop (more than %u descriptors)",
					    head, t.num);
			return -ELOOP;
		}
		if (desc_fetch(vq, &t, i, &d)) {
			vhost_vq_set_broken(vq, "chain at head %u: indirect table unreadable",
					    head);
			return -EFAULT;
		}
		if (d.flags & VRING_DESC_F_INDIRECT) {
			if (indirect) {
				vhost_vq_set_broken(vq, "chain at head %u: nested indirect table",
						    head);
				return -EINVAL;
			}
			ret = indirect_open(vq, &d, &t);
			if (ret)
				return ret;
			indirect = true;
			i = 0;
			count = 0;
			continue;
		}
		ret = vhost_vq_elem_add(vq, elem, d.addr, d.len,
					d.flags & VRING_DESC_F_WRITE, &niov);
		if (ret)
			return ret;
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		i = d.next;
	}
	if (elem->err) {
		elem->out_num = elem->in_num = 0;
		vq->stats.bad_chains++;
	}
	return 0;
}

/* Refresh the shadow index; false (ring broken) if it moved impossibly. */
static bool avail_refresh(struct vhost_vq *vq)
{
	uint16_t idx = avail_idx_load(vq);

	if ((uint16_t)(idx - vq->last_avail_idx) > vq->num) {
		vhost_vq_set_broken(vq, "avail idx moved from %u to %u, more than the ring size %u",
				    vq->last_avail_idx, idx, vq->num);
		return false;
	}
	vq->shadow_avail_idx = idx;
	return true;
}

unsigned int vhost_vq_avail_count(struct vhost_vq *vq)
{
	if (vq->packed)
		return vhost_vq_packed_avail_count(vq);
	if (vhost_vq_broken(vq) || !vq->avail || !avail_refresh(vq))
		return 0;
	return (uint16_t)(vq->shadow_avail_idx - vq->last_avail_idx);
}

int vhost_vq_pop_burst(struct vhost_vq *vq, struct vhost_vq_elem *elems,
		       unsigned int n)
{
	unsigned int avail, i;

	if (vq->packed)
		return vhost_vq_packed_pop_burst(vq, elems, n);
	if (vhost_vq_broken(vq) || !vq->avail)
		return -EIO;
	avail = (uint16_t)(vq->shadow_avail_idx - vq->last_avail_idx);
	if (avail < n) {
		/* only touch the guest's cache line when the shadow is short */
		if (!avail_refresh(vq))
			return -EIO;
		avail = (uint16_t)(vq->shadow_avail_idx - vq->last_avail_idx);
	}
	if (n > avail)
		n = avail;
	for (i = 0; i < n; i++) {
		uint16_t slot = vq->last_avail_idx & (vq->num - 1);
		uint16_t head = le16toh(RD(vq->avail->ring[slot]));

		if (head >= vq->num) {
			vhost_vq_set_broken(vq, "avail ring entry %u: head %u out of a %u entry ring",
					    vq->last_avail_idx, head, vq->num);
			break;
		}
		if (chain_parse(vq, head, &elems[i]))
			break;
		vq->last_avail_idx++;
	}
	if (i < n)
		vq->stats.bad_chains++;
	return i || !vhost_vq_broken(vq) ? (int)i : -EIO;
}

void vhost_vq_rewind(struct vhost_vq *vq, unsigned int n)
{
	if (vq->packed)
		return vhost_vq_packed_rewind(vq, n);
	vq->last_avail_idx -= (uint16_t)n;
}

int vhost_vq_push_burst(struct vhost_vq *vq, const struct vhost_vq_used *used,
			unsigned int n)
{
	uint16_t start = vq->used_idx, mask = vq->num - 1;
	unsigned int i, first;

	if (vq->packed)
		return vhost_vq_packed_push_burst(vq, used, n);
	if (vhost_vq_broken(vq) || !vq->used)
		return -EIO;
	if (n > vq->num)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (used[i].id >= vq->num) {
			vhost_err("%s: vq %u: push of id %u, ring size %u",
				  vq->name ? vq->name : "vhost", vq->index,
				  used[i].id, vq->num);
			return -EINVAL;
		}
	}
	for (i = 0; i < n; i++) {
		struct vring_used_elem *e = &vq->used->ring[(start + i) & mask];

		WR(e->id, htole32(used[i].id));
		WR(e->len, htole32(used[i].len));
	}
	/* the entries (and the buffers) before the index: release */
	__atomic_store_n(&vq->used->idx, htole16((uint16_t)(start + n)),
			 __ATOMIC_RELEASE);
	vq->used_idx = start + n;

	if (vq->log_used && n) {
		uint64_t ring = offsetof(struct vring_used, ring);
		uint64_t sz = sizeof(struct vring_used_elem);

		first = start & mask;
		if (first + n <= vq->num) {
			log_used(vq, ring + first * sz, n * sz);
		} else {
			log_used(vq, ring + first * sz, (vq->num - first) * sz);
			log_used(vq, ring, (first + n - vq->num) * sz);
		}
		log_used(vq, offsetof(struct vring_used, idx),
			 sizeof(uint16_t));
	}
	return 0;
}

void vhost_vq_log_write(struct vhost_vq *vq, const struct vhost_vq_elem *elem,
			uint64_t len)
{
	unsigned int i;

	if (!vq->log_all || !len)
		return;
	smp_wmb(); /* data before the dirty bits, see log_used() */
	for (i = elem->out_num; i < elem->out_num + elem->in_num && len; i++) {
		uint64_t chunk = elem->iov[i].iov_len;

		if (chunk > len)
			chunk = len;
		vhost_mem_log_write(vq->mem, elem->gpa[i], chunk);
		len -= chunk;
	}
}

bool vhost_vq_need_notify(struct vhost_vq *vq)
{
	uint16_t old, new;
	bool valid;

	if (vq->packed)
		return vhost_vq_packed_need_notify(vq);
	/* a broken ring is left alone, calls included */
	if (!vq->avail || vhost_vq_broken(vq))
		return false;
	/*
	 * Our used->idx store must be visible before we read the guest's
	 * suppression state, and the guest does the mirror image (publish
	 * used_event, barrier, re-read used->idx): without a full barrier on
	 * both sides each could miss the other's update (lost interrupt).
	 */
	smp_mb();
	if (vq->notify_on_empty && avail_idx_load(vq) == vq->last_avail_idx)
		return true;
	if (!vq->event_idx)
		return !(le16toh(RD(vq->avail->flags)) &
			 VRING_AVAIL_F_NO_INTERRUPT);
	old = vq->signalled_used;
	valid = vq->signalled_used_valid;
	new = vq->signalled_used = vq->used_idx;
	vq->signalled_used_valid = true;
	if (!valid)
		return true;
	return vring_need_event(le16toh(RD(*used_event_ptr(vq))), new, old);
}

bool vhost_vq_want_notify(struct vhost_vq *vq)
{
	if (vq->packed)
		return vhost_vq_packed_want_notify(vq);
	if (!vq->avail || vhost_vq_broken(vq))
		return false;
	if (!vq->event_idx || !vq->signalled_used_valid)
		return true; /* the flag is read when the decision is taken */
	if (vq->notify_on_empty)
		return true;
	/* the used->idx store before the used_event load, as above */
	smp_mb();
	return vring_need_event(le16toh(RD(*used_event_ptr(vq))), vq->used_idx,
				vq->signalled_used);
}

int vhost_vq_signal(struct vhost_vq *vq)
{
	if (vq->call_fd < 0 || vq->call_stuck)
		return 0;
	if (vq_fe_write(vq, vq->call_fd) < 0) {
		/*
		 * EAGAIN: an eventfd's counter is saturated (the guest has
		 * calls pending), or a pipe is full (nobody reads it).
		 */
		if (errno == EAGAIN)
			return 0;
		if (errno == EINTR) {
			vq->call_stuck = true;
			vhost_err("%s: vq %u: the call fd blocked the queue thread (a full eventfd whose O_NONBLOCK the frontend cleared): interrupted, no more interrupts to it until the frontend sends another",
				  vq_name(vq), vq->index);
			return 0;
		}
		return -errno;
	}
	return 0;
}

int vhost_vq_notify(struct vhost_vq *vq)
{
	int ret;

	if (!(vq->packed ? (void *)vq->pdesc : (void *)vq->avail) ||
	    vhost_vq_broken(vq))
		return 0;
	if (!vhost_vq_need_notify(vq)) {
		vq->stats.calls_suppressed++;
		return 0;
	}
	ret = vhost_vq_signal(vq);
	if (ret)
		return ret;
	vq->stats.calls++;
	return 1;
}

static void used_flags_set(struct vhost_vq *vq, bool no_notify)
{
	uint16_t flags = le16toh(RD(vq->used->flags));

	if (no_notify)
		flags |= VRING_USED_F_NO_NOTIFY;
	else
		flags &= ~VRING_USED_F_NO_NOTIFY;
	WR(vq->used->flags, htole16(flags));
	log_used(vq, offsetof(struct vring_used, flags), sizeof(uint16_t));
}

static void avail_event_set(struct vhost_vq *vq, uint16_t idx)
{
	WR(*avail_event_ptr(vq), htole16(idx));
	log_used(vq, avail_event_off(vq), sizeof(uint16_t));
}

void vhost_vq_notify_disable(struct vhost_vq *vq)
{
	if (vq->packed)
		return vhost_vq_packed_notify_disable(vq);
	if (vq->kicks_off || !vq->used || vhost_vq_broken(vq))
		return;
	vq->kicks_off = true;
	/*
	 * With EVENT_IDX nothing is written: the guest kicks only when its
	 * index crosses avail_event, which we stop moving forward.
	 */
	if (!vq->event_idx)
		used_flags_set(vq, true);
}

bool vhost_vq_notify_enable(struct vhost_vq *vq)
{
	if (vq->packed)
		return vhost_vq_packed_notify_enable(vq);
	if (!vq->used || vhost_vq_broken(vq))
		return false;
	vq->kicks_off = false;
	if (vq->event_idx)
		/* kick me for any entry past the ones I have taken */
		avail_event_set(vq, vq->last_avail_idx);
	else
		used_flags_set(vq, false);
	/*
	 * The guest may have added buffers after it last looked at our
	 * suppression state; publish it, then look at avail->idx again.
	 */
	smp_mb();
	return avail_idx_load(vq) != vq->last_avail_idx;
}

uint64_t vhost_vq_kick_drain(struct vhost_vq *vq)
{
	uint64_t v;
	ssize_t n;

	if (vq->kick_fd < 0)
		return 0;
	/* EINTR: interrupted in a read the frontend made blocking (above) */
	fd_op_mark(vq);
	n = read(vq->kick_fd, &v, sizeof(v));
	fd_op_mark(vq);
	if (n != sizeof(v))
		return 0;
	vq->stats.kicks += v;
	return v;
}

void vhost_vq_init(struct vhost_vq *vq, unsigned int index, const char *name,
		   struct vhost_mem *mem)
{
	memset(vq, 0, sizeof(*vq));
	vq->index = index;
	vq->name = name;
	vq->mem = mem;
	vq->kick_fd = vq->call_fd = vq->err_fd = -1;
	vq->sync_used = true;
	vq->avail_wrap = vq->used_wrap = true; /* packed rings start so */
}

void vhost_vq_reset(struct vhost_vq *vq)
{
	struct vhost_vq_stats stats = vq->stats;
	const char *name = vq->name;
	struct vhost_mem *mem = vq->mem;
	unsigned int index = vq->index;
	void *priv = vq->priv;

	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	if (vq->call_fd >= 0)
		close(vq->call_fd);
	if (vq->err_fd >= 0)
		close(vq->err_fd);
	vhost_vq_packed_free(vq);
	vhost_vq_init(vq, index, name, mem);
	vq->priv = priv;
	/* the counters outlive connections */
	vq->stats = stats;
}

bool vhost_vq_ready(const struct vhost_vq *vq)
{
	return vq->num && vq->addr_set && vq->kick_set && vq->enabled &&
	       !vhost_vq_broken(vq);
}

static void *ring_map(struct vhost_vq *vq, const char *what, uint64_t uva,
		      uint64_t len, size_t align)
{
	void *p = vhost_mem_uva_to_host(vq->mem, uva, len);

	if (!p) {
		vhost_err("%s: vq %u: %s ring 0x%llx+%llu is not inside one memory region",
			  vq->name ? vq->name : "vhost", vq->index, what,
			  (unsigned long long)uva, (unsigned long long)len);
		return NULL;
	}
	if ((uintptr_t)p % align) {
		vhost_err("%s: vq %u: %s ring 0x%llx is not %zu-byte aligned",
			  vq->name ? vq->name : "vhost", vq->index, what,
			  (unsigned long long)uva, align);
		return NULL;
	}
	return p;
}

int vhost_vq_start(struct vhost_vq *vq, uint64_t features)
{
	uint64_t n = vq->num, ev;

	if (!vq->num || !vq->addr_set)
		return -EINVAL;
	if (features & (1ULL << VIRTIO_F_RING_PACKED))
		return vhost_vq_packed_start(vq, features);
	vq->packed = false;
	if (vq->num & (vq->num - 1))
		return -EINVAL; /* a packed ring's size, features say split */
	vq->features = features;
	vq->event_idx = features & (1ULL << VIRTIO_RING_F_EVENT_IDX);
	vq->indirect = features & (1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	vq->notify_on_empty = features & (1ULL << VIRTIO_F_NOTIFY_ON_EMPTY);
	vq->log_all = (features & (1ULL << VHOST_F_LOG_ALL)) &&
		      vhost_mem_has_log(vq->mem);
	vq->log_used = vq->log_all &&
		       (vq->addr_flags & (1u << VHOST_VRING_F_LOG));
	/* used_event/avail_event exist only with EVENT_IDX */
	ev = vq->event_idx ? sizeof(uint16_t) : 0;

	vq->desc = ring_map(vq, "descriptor", vq->desc_uva,
			    n * sizeof(struct vring_desc), 16);
	vq->avail = ring_map(vq, "available", vq->avail_uva,
			     offsetof(struct vring_avail, ring) +
				     n * sizeof(uint16_t) + ev,
			     2);
	vq->used = ring_map(vq, "used", vq->used_uva,
			    offsetof(struct vring_used, ring) +
				    n * sizeof(struct vring_used_elem) + ev,
			    4);
	if (!vq->desc || !vq->avail || !vq->used) {
		vhost_vq_stop(vq);
		return -EFAULT;
	}
	if (vq->sync_used) {
		/*
		 * First start since SET_VRING_BASE.  If the guest's used index
		 * disagrees with the base, chains were in flight in a backend
		 * that died (reconnect) or on the migration source: resume from
		 * what the guest saw completed, as DPDK does; those chains are
		 * processed again.
		 */
		uint16_t u = le16toh(RD(vq->used->idx));

		if (u != vq->last_avail_idx)
			vhost_warn("%s: vq %u: base %u but used idx %u: resuming at %u",
				   vq->name ? vq->name : "vhost", vq->index,
				   vq->last_avail_idx, u, u);
		vq->last_avail_idx = u;
		vq->used_idx = u;
		vq->sync_used = false;
	}
	vq->shadow_avail_idx = vq->last_avail_idx;
	vq->signalled_used_valid = false;
	vq->kicks_off = true;
	/* ask for kicks: the first one must not be lost */
	vhost_vq_notify_enable(vq);
	return 0;
}
