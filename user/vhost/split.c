// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Split virtqueues (virtio 1.2, 2.7), device side: the layout behind
 * virtq.h's calls when VIRTIO_F_RING_PACKED is not negotiated.
 *
 * Three areas: the descriptor table, the available ring (the guest's:
 * heads of chains and its index) and the used ring (ours: chains given
 * back and our index).  Every guest-controlled value is validated: a head
 * inside the ring, a chain walk bounded by its table, indirect tables of
 * 1 to NUM entries inside guest memory, not nested, not chained, every
 * buffer inside guest memory (vhost_vq_elem_add()), an available index
 * that moved by at most NUM; anything else breaks the ring.
 */
#include <errno.h>
#include <stddef.h>
#include <linux/virtio_config.h>

#include "log.h"
#include "split.h"
#include "vq_int.h"
#include "mem.h"
#include "vq.h"

/* used_event lives after avail->ring[num], avail_event after used->ring[num] */
static inline uint16_t *used_event_ptr(struct vhost_vq *vq)
{
	return &vq->split.avail->ring[vq->num];
}

static inline uint64_t avail_event_off(const struct vhost_vq *vq)
{
	return offsetof(struct vring_used, ring) +
	       (uint64_t)vq->num * sizeof(struct vring_used_elem);
}

static inline uint16_t *avail_event_ptr(struct vhost_vq *vq)
{
	return (uint16_t *)((uint8_t *)vq->split.used + avail_event_off(vq));
}

/* The guest's available index; acquire: ring entries are read after it. */
static inline uint16_t avail_idx_load(struct vhost_vq *vq)
{
	return rd_le16_acquire(&vq->split.avail->idx);
}

/* Dirty-log [OFF, OFF + LEN) of the used ring. */
static void log_used(struct vhost_vq *vq, uint64_t off, uint64_t len)
{
	vq_log_ring(vq, vq->log_guest_addr + off, len);
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
		d->flags = rd_le16(&s->flags);
		d->next = rd_le16(&s->next);
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
	struct desc_table t = { .base = vq->split.desc, .num = vq->num };
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
	vq->split.shadow_avail_idx = idx;
	return true;
}

static unsigned int split_avail_count(struct vhost_vq *vq)
{
	if (vhost_vq_broken(vq) || !avail_refresh(vq))
		return 0;
	return (uint16_t)(vq->split.shadow_avail_idx - vq->last_avail_idx);
}

static int split_pop_burst(struct vhost_vq *vq, struct vhost_vq_elem *elems,
			   unsigned int n)
{
	unsigned int avail, i;

	if (vhost_vq_broken(vq))
		return -EIO;
	avail = (uint16_t)(vq->split.shadow_avail_idx - vq->last_avail_idx);
	if (avail < n) {
		/* only touch the guest's cache line when the shadow is short */
		if (!avail_refresh(vq))
			return -EIO;
		avail = (uint16_t)(vq->split.shadow_avail_idx -
				   vq->last_avail_idx);
	}
	if (n > avail)
		n = avail;
	for (i = 0; i < n; i++) {
		uint16_t slot = vq->last_avail_idx & (vq->num - 1);
		uint16_t head = rd_le16(&vq->split.avail->ring[slot]);

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

static void split_rewind(struct vhost_vq *vq, unsigned int n)
{
	vq->last_avail_idx -= (uint16_t)n;
}

static int split_push_burst(struct vhost_vq *vq,
			    const struct vhost_vq_used *used, unsigned int n)
{
	uint16_t start = vq->used_idx, mask = vq->num - 1;
	unsigned int i, first;

	for (i = 0; i < n; i++) {
		struct vring_used_elem *e =
			&vq->split.used->ring[(start + i) & mask];

		WR(e->id, htole32(used[i].id));
		WR(e->len, htole32(used[i].len));
	}
	/* the entries (and the buffers) before the index: release */
	__atomic_store_n(&vq->split.used->idx, htole16((uint16_t)(start + n)),
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

static bool split_need_notify(struct vhost_vq *vq)
{
	uint16_t old, new;
	bool valid;

	/* a broken ring is left alone, calls included */
	if (vhost_vq_broken(vq))
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
		return !(rd_le16(&vq->split.avail->flags) &
			 VRING_AVAIL_F_NO_INTERRUPT);
	old = vq->signalled_used;
	valid = vq->signalled_used_valid;
	new = vq->signalled_used = vq->used_idx;
	vq->signalled_used_valid = true;
	if (!valid)
		return true;
	return vring_need_event(rd_le16(used_event_ptr(vq)), new, old);
}

static bool split_want_notify(struct vhost_vq *vq)
{
	if (vhost_vq_broken(vq))
		return false;
	if (!vq->event_idx || !vq->signalled_used_valid)
		return true; /* the flag is read when the decision is taken */
	if (vq->notify_on_empty)
		return true;
	/* the used->idx store before the used_event load, as above */
	smp_mb();
	return vring_need_event(rd_le16(used_event_ptr(vq)), vq->used_idx,
				vq->signalled_used);
}

static bool split_avail_waiting(const struct vhost_vq *vq)
{
	return rd_le16_acquire(&vq->split.avail->idx) !=
	       __atomic_load_n(&vq->last_avail_idx, __ATOMIC_RELAXED);
}

static void used_flags_set(struct vhost_vq *vq, bool no_notify)
{
	uint16_t flags = rd_le16(&vq->split.used->flags);

	if (no_notify)
		flags |= VRING_USED_F_NO_NOTIFY;
	else
		flags &= ~VRING_USED_F_NO_NOTIFY;
	wr_le16(&vq->split.used->flags, flags);
	log_used(vq, offsetof(struct vring_used, flags), sizeof(uint16_t));
}

static void avail_event_set(struct vhost_vq *vq, uint16_t idx)
{
	wr_le16(avail_event_ptr(vq), idx);
	log_used(vq, avail_event_off(vq), sizeof(uint16_t));
}

static void split_notify_disable(struct vhost_vq *vq)
{
	if (vq->kicks_off || vhost_vq_broken(vq))
		return;
	vq->kicks_off = true;
	/*
	 * With EVENT_IDX nothing is written: the guest kicks only when its
	 * index crosses avail_event, which we stop moving forward.
	 */
	if (!vq->event_idx)
		used_flags_set(vq, true);
}

static bool split_notify_enable(struct vhost_vq *vq)
{
	if (vhost_vq_broken(vq))
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

static int split_start(struct vhost_vq *vq)
{
	uint64_t n = vq->num, ev;

	if (vq->num & (vq->num - 1))
		return -EINVAL; /* a packed ring's size, features say split */
	vq->notify_on_empty = vq->features & (1ULL << VIRTIO_F_NOTIFY_ON_EMPTY);
	/* used_event/avail_event exist only with EVENT_IDX */
	ev = vq->event_idx ? sizeof(uint16_t) : 0;

	vq->split.desc = vhost_vq_map(vq, "descriptor ring", vq->desc_uva,
				      n * sizeof(struct vring_desc), 16, NULL);
	vq->split.avail = vhost_vq_map(vq, "available ring", vq->avail_uva,
				       offsetof(struct vring_avail, ring) +
					       n * sizeof(uint16_t) + ev,
				       2, NULL);
	vq->split.used = vhost_vq_map(vq, "used ring", vq->used_uva,
				      offsetof(struct vring_used, ring) +
					      n * sizeof(struct vring_used_elem) +
					      ev,
				      4, NULL);
	if (!vq->split.desc || !vq->split.avail || !vq->split.used) {
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
		uint16_t u = rd_le16(&vq->split.used->idx);

		if (u != vq->last_avail_idx)
			vhost_warn("%s: vq %u: base %u but used idx %u: resuming at %u",
				   vq_name(vq), vq->index, vq->last_avail_idx,
				   u, u);
		vq->last_avail_idx = u;
		vq->used_idx = u;
		vq->sync_used = false;
	}
	vq->split.shadow_avail_idx = vq->last_avail_idx;
	vq->signalled_used_valid = false;
	vq->kicks_off = true;
	vq->ops = &vhost_vq_split_ops;
	/* ask for kicks: the first one must not be lost */
	split_notify_enable(vq);
	return 0;
}

const struct vhost_vq_ops vhost_vq_split_ops = {
	.start = split_start,
	.pop_burst = split_pop_burst,
	.avail_count = split_avail_count,
	.rewind = split_rewind,
	.push_burst = split_push_burst,
	.need_notify = split_need_notify,
	.want_notify = split_want_notify,
	.avail_waiting = split_avail_waiting,
	.notify_disable = split_notify_disable,
	.notify_enable = split_notify_enable,
};
