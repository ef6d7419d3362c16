// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packed virtqueues (virtio 1.2, 2.8), device side: the layout behind
 * virtq.h's calls when VIRTIO_F_RING_PACKED is negotiated.
 *
 * One descriptor ring of NUM entries, read and written in order.  The
 * driver makes a descriptor available by giving it AVAIL = its wrap
 * counter and USED = the opposite; the device marks a buffer used by
 * writing one descriptor (the buffer id, the bytes written, AVAIL = USED =
 * the device's wrap counter) at its used position, which then moves by
 * the number of ring descriptors the buffer took.  Each side flips its
 * wrap counter when its position wraps.  Buffers may be used in any order
 * (VIRTIO_F_IN_ORDER is not offered).
 *
 * A position is kept as an index (< num) and a wrap counter; where one
 * number is handier, "pos" is idx | wrap << 15 (the GET/SET_VRING_BASE
 * halves) and "lin" is the position on a 2 * num circle (idx, plus num when
 * the wrap counter is 0), on which event offsets are compared.
 *
 * Guest-controlled input is validated as for split rings (split.c): every
 * buffer inside guest memory (vhost_vq_elem_add()), a chain at most NUM
 * descriptors, buffer ids below NUM, indirect tables inside guest memory,
 * of 1 to NUM entries, not nested, not chained; anything else breaks the
 * ring.  Descriptors after the first of a chain are read without looking at
 * their AVAIL/USED bits (the driver writes the first descriptor's flags
 * last, so the rest are in place once the first is available).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal_int.h"
#include "log.h"
#include "mem.h"
#include "packed.h"
#include "packed_event.h"
#include "vq.h"
#include "vq_int.h"

/* Move (IDX, WRAP) forward by N <= num descriptors. */
static inline void pos_add(const struct vhost_vq *vq, uint16_t *idx,
			   bool *wrap, unsigned int n)
{
	unsigned int i = *idx + n;

	if (i >= vq->num) {
		i -= vq->num;
		*wrap = !*wrap;
	}
	*idx = (uint16_t)i;
}

/* Walk an indirect table (descriptor D of the ring) into ELEM. */
static int indirect_walk(struct vhost_vq *vq, uint64_t addr, uint32_t len,
			 struct vhost_vq_elem *elem, unsigned int *niov)
{
	const struct vring_packed_desc *t;
	struct vring_packed_desc d;
	unsigned int i, n;
	int ret;

	if (!vq->indirect) {
		vhost_vq_set_broken(vq, "indirect descriptor without VIRTIO_RING_F_INDIRECT_DESC");
		return -EINVAL;
	}
	if (!len || len % sizeof(d) || len / sizeof(d) > vq->num) {
		vhost_vq_set_broken(vq, "indirect table of %u bytes (ring size %u)",
				    len, vq->num);
		return -EINVAL;
	}
	n = len / sizeof(d);
	t = vhost_mem_gpa_to_host(vq->mem, addr, len);
	if (t && (uintptr_t)t % _Alignof(struct vring_packed_desc))
		t = NULL;
	/* not one aligned block: copied entry by entry, checked once here */
	if (!t && !vhost_mem_range_ok(vq->mem, addr, len)) {
		vhost_vq_set_broken(vq, "indirect table 0x%llx+%u outside guest memory",
				    (unsigned long long)addr, len);
		return -EFAULT;
	}
	for (i = 0; i < n; i++) {
		if (t) {
			d.addr = RD(t[i].addr);
			d.len = RD(t[i].len);
			d.flags = RD(t[i].flags);
		} else if (vhost_mem_read(vq->mem, addr + (uint64_t)i * sizeof(d),
					  &d, sizeof(d))) {
			vhost_vq_set_broken(vq, "indirect table unreadable");
			return -EFAULT;
		}
		d.flags = le16toh(d.flags);
		/* WRITE is the only flag that counts in an indirect table */
		if (d.flags & VRING_DESC_F_INDIRECT) {
			vhost_vq_set_broken(vq, "chain at %u: nested indirect table",
					    elem->head);
			return -EINVAL;
		}
		ret = vhost_vq_elem_add(vq, elem, le64toh(d.addr),
					le32toh(d.len),
					d.flags & VRING_DESC_F_WRITE, niov);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Take the chain at last_avail into ELEM.  1: taken, 0: nothing available
 * there, < 0: the ring broke.
 */
static int chain_take(struct vhost_vq *vq, struct vhost_vq_elem *elem)
{
	uint16_t idx = vq->last_avail_idx, flags, id;
	bool wrap = vq->avail_wrap;
	unsigned int count = 0, niov = 0;
	struct vring_packed_desc *s;
	int ret;

	flags = flags_load(vq, idx);
	if (!desc_avail(flags, wrap))
		return 0;
	elem->head = idx; /* the ring position, for messages, until the id */
	elem->out_num = elem->in_num = 0;
	elem->out_len = elem->in_len = 0;
	elem->err = 0;
	for (;;) {
		s = &vq->packed.desc[idx];
		count++;
		if (flags & VRING_DESC_F_INDIRECT) {
			if (count > 1 || (flags & VRING_DESC_F_NEXT)) {
				vhost_vq_set_broken(vq, "chain at %u: indirect descriptor %s",
						    elem->head,
						    count > 1 ? "inside a chain" :
								"with NEXT");
				return -EINVAL;
			}
			ret = indirect_walk(vq, le64toh(RD(s->addr)),
					    le32toh(RD(s->len)), elem, &niov);
		} else {
			ret = vhost_vq_elem_add(vq, elem, le64toh(RD(s->addr)),
						le32toh(RD(s->len)),
						flags & VRING_DESC_F_WRITE, &niov);
		}
		if (ret)
			return ret;
		if (!(flags & VRING_DESC_F_NEXT))
			break;
		if (count == vq->num) {
			vhost_vq_set_broken(vq, "chain at %u: longer than the ring (%u descriptors)",
					    elem->head, vq->num);
			return -ELOOP;
		}
		pos_add(vq, &idx, &wrap, 1);
		flags = rd_le16(&vq->packed.desc[idx].flags);
	}
	/* the buffer id is the last descriptor's */
	id = rd_le16(&s->id);
	if (id >= vq->num) {
		vhost_vq_set_broken(vq, "chain at %u: buffer id %u out of a %u entry ring",
				    elem->head, id, vq->num);
		return -EINVAL;
	}
	elem->head = id;
	vq->packed.chain_len[id] = (uint16_t)count;
	vq->packed.pop_pos[vq->packed.pops] = pos_pack(vq->last_avail_idx, vq->avail_wrap);
	vq->packed.pop_id[vq->packed.pops] = id;
	vq->packed.pops = vq->packed.pops + 1 == vq->num ? 0 : vq->packed.pops + 1;
	pos_add(vq, &idx, &wrap, 1);
	vhost_jr_pop(vq, id, (uint16_t)count,
		     pos_pack(vq->last_avail_idx, vq->avail_wrap),
		     pos_pack(idx, wrap));
	vq->last_avail_idx = idx;
	vq->avail_wrap = wrap;
	if (vq->packed.cnt)
		vq->packed.cnt--;
	else
		vq->packed.scan = pos_pack(idx, wrap);
	if (elem->err) {
		elem->out_num = elem->in_num = 0;
		vq->stats.bad_chains++;
	}
	return 1;
}

static int packed_pop_burst(struct vhost_vq *vq, struct vhost_vq_elem *elems,
			    unsigned int n)
{
	unsigned int i;
	int ret = 0;

	if (vhost_vq_broken(vq))
		return -EIO;
	for (i = 0; i < n; i++) {
		ret = chain_take(vq, &elems[i]);
		if (ret <= 0)
			break;
	}
	if (ret < 0)
		vq->stats.bad_chains++;
	return i || !vhost_vq_broken(vq) ? (int)i : -EIO;
}

static unsigned int packed_avail_count(struct vhost_vq *vq)
{
	uint16_t idx = vq->packed.scan & ~WRAP_BIT, flags;
	bool wrap = vq->packed.scan & WRAP_BIT;
	unsigned int walked = 0, cnt = vq->packed.cnt;

	if (vhost_vq_broken(vq))
		return 0;
	/*
	 * Count on from where the last count stopped; at most NUM
	 * descriptors per call, and never more chains than the ring holds.
	 */
	while (cnt < vq->num && walked < vq->num) {
		flags = flags_load(vq, idx);
		if (!desc_avail(flags, wrap))
			break;
		while ((flags & VRING_DESC_F_NEXT) && ++walked < vq->num) {
			pos_add(vq, &idx, &wrap, 1);
			flags = rd_le16(&vq->packed.desc[idx].flags);
		}
		if (walked >= vq->num) {
			/*
			 * A chain longer than the ring: counted, so that the
			 * caller pops it and the pop breaks the ring (not
			 * counted, a device that pops only what is counted
			 * would look again and again, the ring neither moving
			 * nor broken).
			 */
			cnt++;
			break;
		}
		walked++;
		pos_add(vq, &idx, &wrap, 1);
		cnt++;
	}
	vq->packed.cnt = (uint16_t)cnt;
	vq->packed.scan = pos_pack(idx, wrap);
	return cnt;
}

static void packed_rewind(struct vhost_vq *vq, unsigned int n)
{
	uint16_t pos;

	if (!n || !vq->num)
		return;
	if (n > vq->num)
		n = vq->num;
	vq->packed.pops = (uint16_t)((vq->packed.pops + vq->num - n) % vq->num);
	pos = vq->packed.pop_pos[vq->packed.pops];
	vq->last_avail_idx = pos & ~WRAP_BIT;
	vq->avail_wrap = pos & WRAP_BIT;
	vhost_jr_rewind(vq, pos, vq->packed.pop_id, vq->packed.pops, n);
	vq->packed.cnt = (uint16_t)(vq->packed.cnt + n > vq->num ? vq->num :
							    vq->packed.cnt + n);
}

static int packed_push_burst(struct vhost_vq *vq,
			     const struct vhost_vq_used *used, unsigned int n)
{
	uint16_t idx = vq->used_idx, first_flags = 0;
	bool wrap = vq->used_wrap;
	struct vring_packed_desc *first = NULL, *e;
	unsigned int i;

	vhost_jr_push_begin(vq, used, n);
	/*
	 * Each entry's id and len before its flags, and the first entry's
	 * flags last: the driver reads in ring order and sees the burst at
	 * once (release: the buffer contents before the flags, too).
	 */
	for (i = 0; i < n; i++) {
		uint16_t fl = wrap ? F_AVAIL | F_USED : 0;
		unsigned int c = vq->packed.chain_len[used[i].id];

		e = &vq->packed.desc[idx];
		WR(e->id, htole16((uint16_t)used[i].id));
		WR(e->len, htole32(used[i].len));
		if (used[i].len)
			fl |= VRING_DESC_F_WRITE;
		if (!first) {
			first = e;
			first_flags = fl;
		} else {
			__atomic_store_n(&e->flags, htole16(fl),
					 __ATOMIC_RELEASE);
		}
		vq_log_ring(vq, vq->packed.desc_gpa + (uint64_t)idx * sizeof(*e),
			 sizeof(*e));
		/* an id pushed without a pop took one descriptor */
		pos_add(vq, &idx, &wrap, c ? c : 1);
	}
	if (first) {
		__atomic_store_n(&first->flags, htole16(first_flags),
				 __ATOMIC_RELEASE);
		vq_log_ring(vq, vq->packed.desc_gpa + (uint64_t)(first - vq->packed.desc) *
						    sizeof(*first),
			 sizeof(*first));
	}
	vq->used_idx = idx;
	vq->used_wrap = wrap;
	vhost_jr_push_end(vq, used, n);
	return 0;
}

static bool packed_avail_waiting(const struct vhost_vq *vq)
{
	uint16_t i = __atomic_load_n(&vq->last_avail_idx, __ATOMIC_RELAXED);

	return i < vq->num && desc_avail(flags_load(vq, i), vq->avail_wrap);
}

uint32_t vhost_vq_packed_base(const struct vhost_vq *vq)
{
	return pos_pack(vq->last_avail_idx, vq->avail_wrap) |
	       (uint32_t)pos_pack(vq->used_idx, vq->used_wrap) << 16;
}

void vhost_vq_packed_set_base(struct vhost_vq *vq, uint32_t base)
{
	uint16_t lo = base & 0xffff, hi = base >> 16;

	if (!hi)
		hi = lo;
	vq->last_avail_idx = lo & ~WRAP_BIT;
	vq->avail_wrap = lo & WRAP_BIT;
	vq->used_idx = hi & ~WRAP_BIT;
	vq->used_wrap = hi & WRAP_BIT;
	/* the positions are taken as they are, or the journal's: packed_start() */
	vq->sync_used = false;
	vq->packed.fe_base = base;
	vq->packed.fe_fresh = true;
}

/*
 * The chains IDS[0 .. N) a process that ended held: used with length 0;
 * a call is owed (what it had pushed may not have been signalled either).
 */
static void give_back(struct vhost_vq *vq, const uint16_t *ids, unsigned int n)
{
	struct vhost_vq_used u[64];
	unsigned int i, k;

	for (i = 0; i < n; i += k) {
		for (k = 0; k < 64 && i + k < n; k++)
			u[k] = (struct vhost_vq_used){ .id = ids[i + k] };
		packed_push_burst(vq, u, k);
	}
	vq->owe_call = true;
}

/* Map the descriptor ring and the event areas: false when one cannot be. */
static bool packed_map(struct vhost_vq *vq)
{
	uint64_t gpa;

	vq->packed.desc = vhost_vq_map(vq, "packed descriptor ring",
				       vq->desc_uva,
				       (uint64_t)vq->num * sizeof(*vq->packed.desc),
				       16, &vq->packed.desc_gpa);
	vq->packed.driver_event = vhost_vq_map(vq, "packed driver event area",
					       vq->avail_uva,
					       sizeof(*vq->packed.driver_event),
					       4, &gpa);
	vq->packed.device_event = vhost_vq_map(vq, "packed device event area",
					       vq->used_uva,
					       sizeof(*vq->packed.device_event),
					       4, &vq->packed.device_event_gpa);
	return vq->packed.desc && vq->packed.driver_event &&
	       vq->packed.device_event;
}

/*
 * The base is taken as it is (SET_VRING_BASE, the journal's, or where the
 * last run stopped): a packed ring keeps no index in shared memory to
 * resync from.  One thing is checked: the descriptor at the base must not
 * be a used one of the base's own lap.  The device writes used entries only
 * behind the chains it popped, so at a right base that slot is available
 * or still the previous lap's; a used entry there means the device went
 * further (QEMU hands a restarted backend the base of the ring's last
 * start).  Serving from there would hand the guest buffers it already got
 * back: the ring is broken instead, with the fix (docs/vhost-user-rings.md).
 */
static void packed_check_base(struct vhost_vq *vq)
{
	uint16_t f = flags_load(vq, vq->last_avail_idx);
	bool w = vq->avail_wrap;

	if (!!(f & F_AVAIL) == w && !!(f & F_USED) == w)
		vhost_vq_set_broken(vq, "packed ring base %u (wrap %u) is stale: that descriptor was already used (the frontend kept the base of an earlier start, as QEMU does when the backend restarted under a running guest); the guest's driver must reset the device (e.g. rebind virtio_net, or reboot)",
				    vq->last_avail_idx, w);
}

static int packed_start(struct vhost_vq *vq)
{
	unsigned int back;

	vq->notify_on_empty = false; /* a legacy feature: not with packed */
	if (vq->last_avail_idx >= vq->num || vq->used_idx >= vq->num) {
		vhost_err("%s: vq %u: packed base avail %u used %u, ring size %u",
			  vq_name(vq), vq->index, vq->last_avail_idx,
			  vq->used_idx, vq->num);
		return -EINVAL;
	}
	if (!packed_map(vq)) {
		vhost_vq_stop(vq);
		return -EFAULT;
	}
	/*
	 * Per id and per pop, kept over a stop and start of the same size:
	 * chains in flight are pushed with the counts they were popped with.
	 */
	if (vq->packed.alloc != vq->num) {
		vhost_vq_packed_free(vq);
		vq->packed.chain_len = calloc(vq->num,
					      sizeof(*vq->packed.chain_len));
		vq->packed.pop_pos = calloc(vq->num,
					    sizeof(*vq->packed.pop_pos));
		vq->packed.pop_id = calloc(vq->num, sizeof(*vq->packed.pop_id));
		vq->packed.alloc = vq->num;
	}
	if (!vq->packed.chain_len || !vq->packed.pop_pos ||
	    !vq->packed.pop_id) {
		vhost_vq_packed_free(vq);
		vhost_vq_stop(vq);
		return -ENOMEM;
	}
	/* a journal may know better than the frontend (journal.c) */
	back = vhost_jr_start(vq, vq->packed.pop_id);
	packed_check_base(vq);
	vq->packed.pops = 0;
	vq->packed.cnt = 0;
	vq->packed.scan = pos_pack(vq->last_avail_idx, vq->avail_wrap);
	vq->signalled_used_valid = false;
	vq->kicks_off = true;
	vq->ops = &vhost_vq_packed_ops;
	packed_notify_enable(vq);
	if (back && !vhost_vq_broken(vq))
		give_back(vq, vq->packed.pop_id, back);
	else if (back)
		vq->owe_call = false;
	return 0;
}

void vhost_vq_packed_free(struct vhost_vq *vq)
{
	free(vq->packed.chain_len);
	free(vq->packed.pop_pos);
	free(vq->packed.pop_id);
	vq->packed.chain_len = NULL;
	vq->packed.pop_pos = NULL;
	vq->packed.pop_id = NULL;
	vq->packed.alloc = 0;
}

const struct vhost_vq_ops vhost_vq_packed_ops = {
	.start = packed_start,
	.pop_burst = packed_pop_burst,
	.avail_count = packed_avail_count,
	.rewind = packed_rewind,
	.push_burst = packed_push_burst,
	.need_notify = packed_need_notify,
	.want_notify = packed_want_notify,
	.avail_waiting = packed_avail_waiting,
	.notify_disable = packed_notify_disable,
	.notify_enable = packed_notify_enable,
};
