// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vufe: packed virtqueues (virtio 1.2, 2.8; VIRTIO_F_RING_PACKED), driven
 * as Linux's virtio_ring.c drives them.
 *
 * The three areas allocated for a split ring are reused: the descriptor
 * table is the descriptor ring (16 bytes a descriptor either way), the
 * avail ring's first 4 bytes are the driver event suppression area and the
 * used ring's the device's.  SET_VRING_ADDR sends the same addresses.
 *
 * A chain takes consecutive ring descriptors from the avail position; its
 * buffer id (one of num, from the free stack) is in every descriptor.  The
 * head's flags are written last, with a release store, so the device sees
 * the chain whole.  The device writes one used descriptor per buffer at
 * its used position (id, bytes written, AVAIL = USED = its wrap counter)
 * and moves on by the number of descriptors the buffer took; the driver
 * reads them in ring order, and frees what the id names.
 *
 * Positions are idx | wrap counter << 15, both counters starting at 1.
 * Kick suppression reads the device event area (ENABLE, DISABLE, or DESC:
 * kick when the descriptor at off_wrap is made available, EVENT_IDX only);
 * callbacks are asked for in the driver event area the same way.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include "vufe_int.h"

#define PK_MAX_MERGE	256	/* num_buffers taken in one frame */

static inline __u16 pos_idx(__u16 pos)
{
	return pos & ~PK_WRAP;
}

static inline bool pos_wrap(__u16 pos)
{
	return pos & PK_WRAP;
}

__u16 pk_pos_add(const struct vufe_vq *vq, __u16 pos, unsigned int n)
{
	unsigned int i = pos_idx(pos) + n;
	__u16 wrap = pos & PK_WRAP;

	while (i >= vq->num) {
		i -= vq->num;
		wrap ^= PK_WRAP;
	}
	return i | wrap;
}

/* the flags that make a descriptor available in the lap of POS */
static inline __u16 avail_bits(__u16 pos)
{
	return pos_wrap(pos) ? PK_F_AVAIL : PK_F_USED;
}

/* the driver event area, both halves in one store (the device reads so) */
static void drv_event_set(struct vufe_vq *vq, __u16 off_wrap, __u16 flags)
{
	struct vring_packed_desc_event ev = {
		.off_wrap = htole16(off_wrap), .flags = htole16(flags),
	};
	__u32 v;

	memcpy(&v, &ev, sizeof(v));
	__atomic_store_n((__u32 *)vq->drv_ev, v, __ATOMIC_RELAXED);
}

static void dev_event_get(const struct vufe_vq *vq, __u16 *off_wrap,
			  __u16 *flags)
{
	__u32 v = __atomic_load_n((const __u32 *)vq->dev_ev, __ATOMIC_RELAXED);
	struct vring_packed_desc_event ev;

	memcpy(&ev, &v, sizeof(ev));
	*off_wrap = le16toh(ev.off_wrap);
	*flags = le16toh(ev.flags);
}

void pk_init(struct vufe *fe, struct vufe_vq *vq)
{
	unsigned int i;

	vq->packed = true;
	vq->pdesc = (struct vring_packed_desc *)vq->desc;
	vq->drv_ev = (struct vring_packed_desc_event *)vq->avail;
	vq->dev_ev = (struct vring_packed_desc_event *)vq->used;
	vq->avail_idx = vq->pk_base;
	vq->last_used = vq->pk_base;
	vq->base = vq->pk_base | (__u32)vq->pk_base << 16;
	vq->num_added = 0;
	vq->pk_free = vq->num;
	/*
	 * Every descriptor as if used already, so that it is neither
	 * available to the device nor used for the driver: from the start
	 * position on in the lap before, before it in this lap (the driver
	 * meets those next with the other wrap counter).
	 */
	for (i = 0; i < vq->num; i++) {
		bool lap = pos_wrap(vq->pk_base) ^ (i >= pos_idx(vq->pk_base));

		vq->pdesc[i] = (struct vring_packed_desc){
			.flags = htole16(lap ? PK_F_AVAIL | PK_F_USED : 0),
		};
	}
	/* callbacks on: at the next used descriptor (EVENT_IDX), or each */
	if (has(fe->features, VIRTIO_RING_F_EVENT_IDX)) {
		vq->avail_flags = VRING_PACKED_EVENT_FLAG_DESC;
		drv_event_set(vq, vq->last_used, vq->avail_flags);
	} else {
		vq->avail_flags = VRING_PACKED_EVENT_FLAG_ENABLE;
		drv_event_set(vq, 0, vq->avail_flags);
	}
}

int pk_reserve(struct vufe_vq *vq, unsigned int ndescs)
{
	if (vq->pk_free < ndescs || !vq->nr_free)
		return -ENOSPC;
	return 0;
}

/*
 * Makes a chain of N buffers available (one indirect descriptor naming
 * the slot's table when INDIRECT); FLAGS (WRITE) go on every buffer.  The
 * caller reserved the descriptors (pk_reserve()).
 */
void pk_add(struct vufe_vq *vq, struct vufe_slot *s, bool indirect,
	    unsigned int n, const __u64 *addr, const __u32 *len, __u16 flags,
	    struct vufe_head h)
{
	__u16 id = vq->free[--vq->nr_free], pos = vq->avail_idx, hflags = 0;
	struct vring_packed_desc *head = &vq->pdesc[pos_idx(pos)], *d;
	unsigned int i;

	if (indirect) {
		struct vring_packed_desc *t = (struct vring_packed_desc *)s->indir;

		for (i = 0; i < n; i++)
			t[i] = (struct vring_packed_desc){
				.addr = htole64(addr[i]),
				.len = htole32(len[i]),
				.flags = htole16(flags),
			};
		head->addr = htole64(s->indir_gpa);
		head->len = htole32(n * sizeof(*t));
		head->id = htole16(id);
		hflags = VRING_DESC_F_INDIRECT | avail_bits(pos);
		pos = pk_pos_add(vq, pos, 1);
	} else {
		for (i = 0; i < n; i++) {
			__u16 f = flags | avail_bits(pos);

			if (i + 1 < n)
				f |= VRING_DESC_F_NEXT;
			d = &vq->pdesc[pos_idx(pos)];
			d->addr = htole64(addr[i]);
			d->len = htole32(len[i]);
			d->id = htole16(id);
			if (i)
				__atomic_store_n(&d->flags, htole16(f),
						 __ATOMIC_RELAXED);
			else
				hflags = f;
			pos = pk_pos_add(vq, pos, 1);
		}
	}
	vq->heads[id] = h;
	vq->pk_free -= h.ndescs;
	vq->avail_idx = pos;
	/* the head last: the rest of the chain is in place before it */
	__atomic_store_n(&head->flags, htole16(hflags), __ATOMIC_RELEASE);
	vq->num_added += h.ndescs;
	vq->inflight++;
	vq->st.avail++;
}

static void chain_free(struct vufe_vq *vq, __u16 id)
{
	struct vufe_head *h = &vq->heads[id];

	vq->pk_free += h->ndescs;
	vq->free[vq->nr_free++] = id;
	if (h->state == HEAD_TX || h->state == HEAD_RX)
		vq->free_slots[vq->nr_free_slots++] = h->slot;
	h->state = HEAD_FREE;
	h->ndescs = 0;
}

/* 1: the descriptor at POS is used in POS's lap (*id, *len); 0: not yet */
static int used_at(const struct vufe_vq *vq, __u16 pos, __u16 *id,
		   __u32 *len)
{
	struct vring_packed_desc *d = &vq->pdesc[pos_idx(pos)];
	__u16 f = le16toh(__atomic_load_n(&d->flags, __ATOMIC_ACQUIRE));
	bool w = pos_wrap(pos);

	if (!!(f & PK_F_AVAIL) != w || !!(f & PK_F_USED) != w)
		return 0;
	*id = le16toh(d->id);
	*len = le32toh(d->len);
	return 1;
}

/*
 * Used descriptors from *pos on that name buffers in flight: how many
 * buffers, *pos after them, *descs the ring descriptors they took.
 */
static unsigned int used_walk(struct vufe_vq *vq, __u16 *pos,
			      unsigned int *descs)
{
	unsigned int n = 0, d = 0;
	__u32 len;
	__u16 id;

	while (n < vq->inflight && used_at(vq, *pos, &id, &len) &&
	       id < vq->num && vq->heads[id].state != HEAD_FREE &&
	       vq->heads[id].ndescs) {
		*pos = pk_pos_add(vq, *pos, vq->heads[id].ndescs);
		d += vq->heads[id].ndescs;
		n++;
	}
	if (descs)
		*descs = d;
	return n;
}

unsigned int pk_used_walk(struct vufe_vq *vq, __u16 *pos)
{
	return used_walk(vq, pos, NULL);
}

/*
 * virtqueue_kick_prepare_packed() + notify: kick unless the device event
 * area says DISABLE, or says DESC (EVENT_IDX) with an offset outside the
 * descriptors just made available.
 */
int pk_kick(struct vufe *fe, struct vufe_vq *vq)
{
	__u16 new, old, off_wrap, flags, event;
	bool need;

	if (!vq->num_added)
		return 0;
	mb();
	new = pos_idx(vq->avail_idx);
	old = new - vq->num_added;
	vq->num_added = 0;
	dev_event_get(vq, &off_wrap, &flags);
	if (flags == VRING_PACKED_EVENT_FLAG_DESC &&
	    has(fe->features, VIRTIO_RING_F_EVENT_IDX)) {
		event = pos_idx(off_wrap);
		/* an offset in the other lap is behind: one ring back */
		if (pos_wrap(off_wrap) != pos_wrap(vq->avail_idx))
			event -= vq->num;
		need = vufe_need_event(event, new, old);
	} else {
		need = flags != VRING_PACKED_EVENT_FLAG_DISABLE;
	}
	if (!need) {
		vq->st.kicks_suppressed++;
		return 0;
	}
	return vq_kick(vq);
}

/*
 * virtqueue_enable_cb_prepare_packed() + poll: signal at the next used
 * descriptor (EVENT_IDX: DESC at last_used; else ENABLE); true if nothing
 * is pending.
 */
bool pk_enable_cb(struct vufe *fe, struct vufe_vq *vq)
{
	bool ev = has(fe->features, VIRTIO_RING_F_EVENT_IDX);
	__u32 len;
	__u16 id;

	vq->avail_flags = ev ? VRING_PACKED_EVENT_FLAG_DESC :
			       VRING_PACKED_EVENT_FLAG_ENABLE;
	drv_event_set(vq, ev ? vq->last_used : 0, vq->avail_flags);
	mb();
	return !used_at(vq, vq->last_used, &id, &len);
}

/*
 * virtqueue_enable_cb_delayed_packed(): with EVENT_IDX, a signal only once
 * the used descriptors pass 3/4 of those in flight; true if fewer than
 * that are used now.
 */
bool pk_enable_cb_delayed(struct vufe *fe, struct vufe_vq *vq)
{
	unsigned int bufs, descs;
	__u16 pos = vq->last_used;

	if (!has(fe->features, VIRTIO_RING_F_EVENT_IDX))
		return pk_enable_cb(fe, vq);
	bufs = (vq->num - vq->pk_free) * 3 / 4;
	vq->avail_flags = VRING_PACKED_EVENT_FLAG_DESC;
	drv_event_set(vq, pk_pos_add(vq, vq->last_used, bufs),
		      vq->avail_flags);
	mb();
	used_walk(vq, &pos, &descs);
	return descs <= bufs;
}

/* virtqueue_disable_cb_packed(): DISABLE, the offset kept */
void pk_disable_cb(struct vufe *fe, struct vufe_vq *vq)
{
	(void)fe;
	if (vq->avail_flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return;
	vq->avail_flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	drv_event_set(vq, le16toh(vq->drv_ev->off_wrap), vq->avail_flags);
}

/* the used descriptor at last_used, checked against what is in flight */
static int used_next(struct vufe *fe, struct vufe_vq *vq, __u16 pos,
		     __u8 state, __u16 *id, __u32 *len)
{
	if (!used_at(vq, pos, id, len))
		return 0;
	if (!vq->inflight)
		return vufe_err(fe, -EPROTO,
				"vring %u: used descriptor at %u (wrap %u) "
				"with nothing in flight", vq->index,
				pos_idx(pos), pos_wrap(pos));
	if (*id >= vq->num)
		return vufe_err(fe, -EPROTO,
				"vring %u: used descriptor at %u: id %u >= "
				"ring size %u", vq->index, pos_idx(pos), *id,
				vq->num);
	if (vq->heads[*id].state != state &&
	    !(state == HEAD_TX && vq->heads[*id].state == HEAD_HOSTILE))
		return vufe_err(fe, -EPROTO,
				"vring %u: used id %u at %u was not in flight",
				vq->index, *id, pos_idx(pos));
	return 1;
}

int pk_tx_reap(struct vufe *fe, struct vufe_vq *vq)
{
	int n = 0, r;
	__u32 len;
	__u16 id;

	do {
		while ((r = used_next(fe, vq, vq->last_used, HEAD_TX, &id,
				      &len)) > 0) {
			vq->last_used = pk_pos_add(vq, vq->last_used,
						   vq->heads[id].ndescs);
			chain_free(vq, id);
			vq->inflight--;
			vq->st.used++;
			n++;
		}
		if (r < 0)
			return r;
	} while (rearm(fe, vq));
	return n;
}

ssize_t pk_recv(struct vufe *fe, struct vufe_vq *vq, unsigned int qp,
		void *buf, size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
		unsigned int *nbufs)
{
	struct virtio_net_hdr_mrg_rxbuf h;
	__u16 ids[PK_MAX_MERGE], nb, j, k, pos;
	__u32 lens[PK_MAX_MERGE], len;
	size_t frame = 0, skip, c;
	__u16 id;
	int err = 0, r;

	r = used_next(fe, vq, vq->last_used, HEAD_RX, &id, &len);
	if (r <= 0)
		return r ? r : -EAGAIN;
	r = vq_rx_head(fe, vq, id, len,
		       vq->inflight < PK_MAX_MERGE ? vq->inflight : PK_MAX_MERGE,
		       &h, &nb);
	if (r)
		return r;

	/* check all first, so a bad descriptor consumes nothing */
	pos = vq->last_used;
	for (j = 0; j < nb; j++) {
		r = used_next(fe, vq, pos, HEAD_RX, &ids[j], &lens[j]);
		if (r < 0)
			return r;
		if (!r)
			return -EAGAIN;	/* a frame is taken whole */
		if (lens[j] > vq->heads[ids[j]].cap)
			return vufe_err(fe, -EPROTO,
					"RX vring %u: used id %u len %u > %u",
					vq->index, ids[j], lens[j],
					vq->heads[ids[j]].cap);
		if (j && lens[j] == 0)
			return vufe_err(fe, -EPROTO,
					"RX vring %u: empty merged buffer %u",
					vq->index, j);
		for (k = 0; k < j; k++)
			if (ids[k] == ids[j])
				return vufe_err(fe, -EPROTO,
						"RX vring %u: id %u used twice "
						"in one frame", vq->index,
						ids[j]);
		pos = pk_pos_add(vq, pos, vq->heads[ids[j]].ndescs);
	}
	for (j = 0; j < nb; j++) {
		struct vufe_slot *s = &vq->slots[vq->heads[ids[j]].slot];

		skip = j ? 0 : fe->hdr_len;
		c = lens[j] - skip;
		vq_rx_take(fe, vq, s, skip, c, buf, cap, &frame, &err, ids[j]);
		vq->last_used = pk_pos_add(vq, vq->last_used,
					   vq->heads[ids[j]].ndescs);
		chain_free(vq, ids[j]);
		vq->inflight--;
		vq->st.used++;
	}
	return vq_rx_done(fe, vq, qp, &h, hdr, nb, nbufs, err, frame);
}

/* ---- hostile input ---- */

/* one descriptor at the avail position; the head's flags are left to last */
static struct vring_packed_desc *put(struct vufe_vq *vq, __u64 addr,
				     __u32 len, __u16 id, __u16 flags,
				     bool head, __u16 *hflags)
{
	struct vring_packed_desc *d = &vq->pdesc[pos_idx(vq->avail_idx)];

	flags |= avail_bits(vq->avail_idx);
	d->addr = htole64(addr);
	d->len = htole32(len);
	d->id = htole16(id);
	if (head)
		*hflags = flags;
	else
		__atomic_store_n(&d->flags, htole16(flags), __ATOMIC_RELAXED);
	vq->avail_idx = pk_pos_add(vq, vq->avail_idx, 1);
	vq->pk_free--;
	return d;
}

static void publish(struct vufe_vq *vq, struct vring_packed_desc *head,
		    __u16 hflags, __u16 id, unsigned int ndescs)
{
	if (id < vq->num) {
		vq->heads[id] = (struct vufe_head){
			.state = HEAD_HOSTILE, .ndescs = ndescs,
		};
		vq->inflight++;
	}
	__atomic_store_n(&head->flags, htole16(hflags), __ATOMIC_RELEASE);
	vq->st.avail++;
}

/*
 * vufe_hostile_ring() on a packed ring: the same faults where they exist
 * (descriptor or indirect table outside memory, straddling a region,
 * indirect entry out of range, bad indirect length, nested indirect), and
 * for the split-only ones (next links, avail ring heads, avail->idx) the
 * packed faults in their place: see vufe.h.
 */
int pk_hostile_ring(struct vufe *fe, struct vufe_vq *vq,
		    enum vufe_hostile_ring kind)
{
	__u16 wflag = vq->tx ? 0 : VRING_DESC_F_WRITE, id, hflags = 0;
	__u64 out = gpa_outside(fe), good;
	struct vufe_region_state *r0 = &fe->reg[0];
	struct vring_packed_desc *head;
	unsigned int need, i;
	void *p;
	int err;

	err = vufe_alloc(fe, 2048, 64, fe->nr_regions - 1, &good, &p);
	if (err)
		return err;
	need = kind == VUFE_BAD_DESC_LOOP ? vq->num : 2;
	if (vq->pk_free < need || vq->nr_free < 1)
		return vufe_err(fe, -ENOSPC, "hostile: ring full");
	id = vq->free[--vq->nr_free];

	switch (kind) {
	case VUFE_BAD_DESC_OOB:
	case VUFE_BAD_DESC_STRADDLE:
		head = put(vq, good, fe->hdr_len, id, wflag | VRING_DESC_F_NEXT,
			   true, &hflags);
		put(vq, kind == VUFE_BAD_DESC_OOB ? out :
						    r0->gpa + r0->size - 100,
		    1500, id, wflag, false, NULL);
		publish(vq, head, hflags, id, 2);
		break;
	case VUFE_BAD_DESC_LOOP:
		/* every descriptor of the ring chained on: no end in sight */
		head = put(vq, good, fe->hdr_len, id, wflag | VRING_DESC_F_NEXT,
			   true, &hflags);
		for (i = 1; i < vq->num; i++)
			put(vq, good + 64, 64, id, wflag | VRING_DESC_F_NEXT,
			    false, NULL);
		publish(vq, head, hflags, id, vq->num);
		break;
	case VUFE_BAD_DESC_NEXT_OOB:
	case VUFE_BAD_INDIRECT_OOB:
	case VUFE_BAD_INDIRECT_ENTRY:
	case VUFE_BAD_INDIRECT_LEN:
	case VUFE_BAD_INDIRECT_NESTED: {
		/* the table: the good buffer's first 32 bytes hold 2 entries */
		struct vring_packed_desc *t = p;
		__u64 data = good + 512;
		__u16 f = VRING_DESC_F_INDIRECT;

		t[0] = (struct vring_packed_desc){
			.addr = htole64(data), .len = htole32(fe->hdr_len),
			.flags = htole16(wflag),
		};
		t[1] = (struct vring_packed_desc){
			.addr = htole64(data + 64), .len = htole32(1000),
			.flags = htole16(wflag),
		};
		if (kind == VUFE_BAD_INDIRECT_ENTRY)
			t[1].addr = htole64(out);
		if (kind == VUFE_BAD_INDIRECT_NESTED)
			t[1].flags = htole16(wflag | VRING_DESC_F_INDIRECT);
		if (kind == VUFE_BAD_DESC_NEXT_OOB)
			f |= VRING_DESC_F_NEXT;	/* and a chain after it */
		head = put(vq, kind == VUFE_BAD_INDIRECT_OOB ? out : good,
			   kind == VUFE_BAD_INDIRECT_LEN ? 17 : 32, id, f, true,
			   &hflags);
		if (kind == VUFE_BAD_DESC_NEXT_OOB)
			put(vq, good + 1024, 64, id, wflag, false, NULL);
		publish(vq, head, hflags, id,
			kind == VUFE_BAD_DESC_NEXT_OOB ? 2 : 1);
		break;
	}
	case VUFE_BAD_HEAD_OOB:
		/* a fine buffer under a buffer id past the ring */
		vq->free[vq->nr_free++] = id;
		head = put(vq, good, 64, vq->num + 7, wflag, true, &hflags);
		publish(vq, head, hflags, vq->num + 7, 1);
		break;
	case VUFE_BAD_AVAIL_JUMP: {
		/* a fine buffer, then a fine table, but inside the chain */
		struct vring_packed_desc *t =
			(struct vring_packed_desc *)((__u8 *)p + 1024);

		t[0] = (struct vring_packed_desc){
			.addr = htole64(good + 512), .len = htole32(64),
			.flags = htole16(wflag),
		};
		t[1] = t[0];
		head = put(vq, good, fe->hdr_len, id, wflag | VRING_DESC_F_NEXT,
			   true, &hflags);
		put(vq, good + 1024, 32, id, VRING_DESC_F_INDIRECT, false, NULL);
		publish(vq, head, hflags, id, 2);
		break;
	}
	default:
		vq->free[vq->nr_free++] = id;
		return vufe_err(fe, -EINVAL, "hostile: unknown kind %d", kind);
	}
	vq->num_added = 0;
	return vq_kick(vq);
}
