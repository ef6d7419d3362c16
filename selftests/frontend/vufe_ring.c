// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vufe: split virtqueues, signals and bounded waits, hostile rings */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include "vufe_int.h"

/* ---- split virtqueue: descriptors, avail, kicks, callbacks ---- */

int vq_desc_get(struct vufe_vq *vq, unsigned int n, __u16 *ids)
{
	unsigned int i;

	if (vq->nr_free < n)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		ids[i] = vq->free[--vq->nr_free];
	return 0;
}

void vq_desc_write(struct vufe_vq *vq, const __u16 *ids, unsigned int n,
		   const __u64 *addr, const __u32 *len, __u16 flags)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vring_desc *d = &vq->desc[ids[i]];
		__u16 f = flags;

		if (i + 1 < n) {
			f |= VRING_DESC_F_NEXT;
			vq->next[ids[i]] = ids[i + 1];
		}
		d->addr = htole64(addr[i]);
		d->len = htole32(len[i]);
		d->flags = htole16(f);
		d->next = htole16(i + 1 < n ? ids[i + 1] : 0);
	}
}

/* an indirect table in the slot, and the one ring descriptor naming it */
void vq_indirect_write(struct vufe_vq *vq, struct vufe_slot *s, __u16 id,
		       unsigned int n, const __u64 *addr, const __u32 *len,
		       __u16 flags)
{
	struct vring_desc *d = &vq->desc[id];
	unsigned int i;

	for (i = 0; i < n; i++) {
		s->indir[i].addr = htole64(addr[i]);
		s->indir[i].len = htole32(len[i]);
		s->indir[i].flags =
			htole16(flags | (i + 1 < n ? VRING_DESC_F_NEXT : 0));
		s->indir[i].next = htole16(i + 1 < n ? i + 1 : 0);
	}
	d->addr = htole64(s->indir_gpa);
	d->len = htole32(n * sizeof(struct vring_desc));
	d->flags = htole16(VRING_DESC_F_INDIRECT);
	d->next = 0;
}

void vq_chain_free(struct vufe_vq *vq, __u16 head)
{
	struct vufe_head *h = &vq->heads[head];
	__u16 id = head;
	unsigned int i;

	for (i = 0; i < h->ndescs; i++) {
		vq->free[vq->nr_free++] = id;
		id = vq->next[id];
	}
	if (h->state == HEAD_TX || h->state == HEAD_RX)
		vq->free_slots[vq->nr_free_slots++] = h->slot;
	h->state = HEAD_FREE;
	h->ndescs = 0;
}

/*
 * Makes a chain available: the ring entry first, then avail->idx with a
 * release store (Linux: virtio_wmb() before the idx update).
 */
void vq_publish(struct vufe_vq *vq, __u16 head)
{
	vq->avail->ring[vq->avail_idx & (vq->num - 1)] = htole16(head);
	vq->avail_idx++;
	st16(&vq->avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
	vq->num_added++;
	vq->inflight++;
	vq->st.avail++;
}

bool vufe_need_event(__u16 event_idx, __u16 new_idx, __u16 old_idx)
{
	/* kick iff event_idx is in [old, new): the device asked for it */
	return (__u16)(new_idx - event_idx - 1) < (__u16)(new_idx - old_idx);
}

int vq_kick(struct vufe_vq *vq)
{
	__u64 one = 1;

	if (write(vq->kick_fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	vq->st.kicks++;
	return 1;
}

/*
 * virtqueue_kick_prepare_split() + notify: a full barrier between the avail
 * idx store and reading the device's suppression state, then kick only if
 * the device asked (avail_event crossed, or NO_NOTIFY clear).  Returns 1
 * if kicked, 0 if suppressed or nothing was added.
 */
int vufe_kick(struct vufe *fe, unsigned int idx)
{
	struct vufe_vq *vq = get_vq(fe, idx);
	__u16 new, old;
	bool need;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no vring %u", idx);
	if (vq->packed)
		return pk_kick(fe, vq);
	if (!vq->num_added)
		return 0;
	mb();
	new = vq->avail_idx;
	old = new - vq->num_added;
	vq->num_added = 0;
	if (has(fe->features, VIRTIO_RING_F_EVENT_IDX))
		need = vufe_need_event(ld16(avail_event(vq), __ATOMIC_RELAXED),
				       new, old);
	else
		need = !(ld16(&vq->used->flags, __ATOMIC_RELAXED) &
			 VRING_USED_F_NO_NOTIFY);
	if (!need) {
		vq->st.kicks_suppressed++;
		return 0;
	}
	return vq_kick(vq);
}

/* a split ring's signals back on (the avail flag, without EVENT_IDX) */
static void split_cb_on(struct vufe *fe, struct vufe_vq *vq)
{
	if (!(vq->avail_flags & VRING_AVAIL_F_NO_INTERRUPT))
		return;
	vq->avail_flags &= ~VRING_AVAIL_F_NO_INTERRUPT;
	if (!has(fe->features, VIRTIO_RING_F_EVENT_IDX))
		st16(&vq->avail->flags, vq->avail_flags, __ATOMIC_RELAXED);
}

/* virtqueue_enable_cb(): true if callbacks are on and nothing is pending */
bool vufe_enable_cb(struct vufe *fe, unsigned int idx)
{
	struct vufe_vq *vq = get_vq(fe, idx);

	if (!vq)
		return false;
	if (vq->packed)
		return pk_enable_cb(fe, vq);
	split_cb_on(fe, vq);
	st16(used_event(vq), vq->last_used, __ATOMIC_RELAXED);
	mb();
	return ld16(&vq->used->idx, __ATOMIC_ACQUIRE) == vq->last_used;
}

/*
 * virtqueue_enable_cb_delayed(): ask for a signal only after 3/4 of the
 * outstanding buffers are used (Linux's TX completion path).
 */
bool vufe_enable_cb_delayed(struct vufe *fe, unsigned int idx)
{
	struct vufe_vq *vq = get_vq(fe, idx);
	__u16 bufs;

	if (!vq)
		return false;
	if (vq->packed)
		return pk_enable_cb_delayed(fe, vq);
	split_cb_on(fe, vq);
	bufs = (__u16)(vq->avail_idx - vq->last_used) * 3 / 4;
	st16(used_event(vq), vq->last_used + bufs, __ATOMIC_RELAXED);
	mb();
	return (__u16)(ld16(&vq->used->idx, __ATOMIC_ACQUIRE) -
		       vq->last_used) <= bufs;
}

/*
 * virtqueue_disable_cb(): NO_INTERRUPT, or with EVENT_IDX used_event = 0 as
 * Linux writes (its own comment calls it a hack: the device stays quiet
 * until its used idx next crosses 0).
 */
void vufe_disable_cb(struct vufe *fe, unsigned int idx)
{
	struct vufe_vq *vq = get_vq(fe, idx);

	if (vq && vq->packed) {
		pk_disable_cb(fe, vq);
		return;
	}
	if (!vq || (vq->avail_flags & VRING_AVAIL_F_NO_INTERRUPT))
		return;
	vq->avail_flags |= VRING_AVAIL_F_NO_INTERRUPT;
	if (has(fe->features, VIRTIO_RING_F_EVENT_IDX))
		st16(used_event(vq), 0, __ATOMIC_RELAXED);
	else
		st16(&vq->avail->flags, vq->avail_flags, __ATOMIC_RELAXED);
}

/* ---- signals and bounded waits ---- */

static __u64 read_signals(struct vufe_vq *vq)
{
	__u64 v;

	if (vq->call_fd < 0 || read(vq->call_fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	vq->st.signals += v;
	vq->st.wakeups++;
	return v;
}

int vufe_poll_signals(struct vufe *fe)
{
	__u64 n = 0;
	unsigned int i;

	for (i = 0; i < fe->nr_vq; i++)
		n += read_signals(&fe->vq[i]);
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

int vufe_vq_stats(struct vufe *fe, unsigned int idx, struct vufe_vq_stats *st)
{
	struct vufe_vq *vq = get_vq(fe, idx);

	if (!vq)
		return -EINVAL;
	read_signals(vq);
	*st = vq->st;
	st->avail_idx = vq->avail_idx;
	st->last_used = vq->last_used;
	st->base = vq->base;
	if (vq->packed) {
		/* no used index in memory: where the used descriptors end */
		st->used_idx = vq->last_used;
		st->used_pending = pk_used_walk(vq, &st->used_idx);
		return 0;
	}
	st->used_idx = ld16(&vq->used->idx, __ATOMIC_ACQUIRE);
	st->used_pending = (__u16)(st->used_idx - vq->last_used);
	return 0;
}

/* one bounded slice: wakes on a call eventfd, a hang-up, or after 5 ms */
static int wait_slice(struct vufe *fe, int ms)
{
	struct pollfd p[VUFE_MAX_VQ + 1];
	unsigned int i, n = 0;

	for (i = 0; i < fe->nr_vq; i++)
		p[n++] = (struct pollfd){ .fd = fe->vq[i].call_fd,
					  .events = POLLIN };
	if (fe->sock >= 0)
		p[n++] = (struct pollfd){ .fd = fe->sock, .events = POLLRDHUP };
	if (poll(p, n, ms < 5 ? ms : 5) < 0 && errno != EINTR)
		return -errno;
	if (fe->sock >= 0 &&
	    (p[n - 1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return vufe_err(fe, -ECONNRESET,
				"the backend closed the connection");
	return 0;
}

int vufe_wait(struct vufe *fe, vufe_cond_t cond, void *arg, int timeout_ms)
{
	long long deadline = deadline_in(timeout_ms);
	int err;

	for (;;) {
		vufe_poll_signals(fe);
		if (cond(fe, arg))
			return 0;
		if (!remaining_ms(deadline))
			return vufe_err(fe, -ETIMEDOUT,
					"condition not met in %d ms",
					timeout_ms);
		err = wait_slice(fe, remaining_ms(deadline));
		if (err)
			return err;
	}
}

struct signals_arg {
	unsigned int vq;
	__u64 n;
};

static bool signals_reached(struct vufe *fe, void *arg)
{
	struct signals_arg *a = arg;

	return fe->vq[a->vq].st.signals >= a->n;
}

int vufe_wait_signals(struct vufe *fe, unsigned int vq, __u64 n,
		      int timeout_ms)
{
	struct signals_arg a = { vq, n };

	if (vq >= fe->nr_vq)
		return -EINVAL;
	return vufe_wait(fe, signals_reached, &a, timeout_ms);
}

ssize_t vufe_recv_wait(struct vufe *fe, unsigned int qp, void *buf,
		       size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
		       unsigned int *nbufs, int timeout_ms)
{
	long long deadline = deadline_in(timeout_ms);
	ssize_t n;
	int err;

	for (;;) {
		vufe_poll_signals(fe);
		n = vufe_recv(fe, qp, buf, cap, hdr, nbufs);
		if (n != -EAGAIN)
			return n;
		if (!remaining_ms(deadline))
			return vufe_err(fe, -ETIMEDOUT,
					"no frame on RX queue %u in %d ms", qp,
					timeout_ms);
		err = wait_slice(fe, remaining_ms(deadline));
		if (err)
			return err;
	}
}

/* split descriptor D: ADDR, LEN, FLAGS, NEXT (in the ring's little endian) */
static void desc_set(struct vring_desc *d, __u64 addr, __u32 len, __u16 flags,
		     __u16 next)
{
	d->addr = htole64(addr);
	d->len = htole32(len);
	d->flags = htole16(flags);
	d->next = htole16(next);
}

/* ---- hostile input ---- */

/*
 * Puts one malformed chain (or avail index) on a ring and kicks it,
 * whatever the device's suppression state says.  The ring is not fit for
 * traffic afterwards: reconnect with a fresh struct vufe.
 */
int vufe_hostile_ring(struct vufe *fe, unsigned int idx,
		      enum vufe_hostile_ring kind)
{
	struct vufe_vq *vq = get_vq(fe, idx);
	__u16 wflag, ids[2], head = 0;
	__u64 out = gpa_outside(fe), good;
	struct vufe_region_state *r0;
	struct vring_desc *d;
	void *p;
	int err;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no vring %u", idx);
	if (vq->packed)
		return pk_hostile_ring(fe, vq, kind);
	wflag = vq->tx ? 0 : VRING_DESC_F_WRITE;
	r0 = &fe->reg[0];
	/* a good 2 KiB buffer, for the parts that are not the fault */
	err = vufe_alloc(fe, 2048, 64, fe->nr_regions - 1, &good, &p);
	if (err)
		return err;
	if (kind != VUFE_BAD_HEAD_OOB && kind != VUFE_BAD_AVAIL_JUMP) {
		if (vq_desc_get(vq, 2, ids))
			return vufe_err(fe, -ENOSPC, "hostile: ring full");
		head = ids[0];
		/* both descriptors stay owned by the chain until used */
		vq->next[ids[0]] = ids[1];
		vq->heads[head] = (struct vufe_head){
			.state = HEAD_HOSTILE, .ndescs = 2,
		};
	}

	switch (kind) {
	case VUFE_BAD_DESC_OOB:
	case VUFE_BAD_DESC_STRADDLE:
		/* header descriptor fine, data descriptor not */
		desc_set(&vq->desc[ids[0]], good, fe->hdr_len,
			 wflag | VRING_DESC_F_NEXT, ids[1]);
		desc_set(&vq->desc[ids[1]],
			 kind == VUFE_BAD_DESC_OOB ? out :
						     r0->gpa + r0->size - 100,
			 1500, wflag, 0);
		break;
	case VUFE_BAD_DESC_LOOP:
		desc_set(&vq->desc[ids[0]], good, fe->hdr_len,
			 wflag | VRING_DESC_F_NEXT, ids[1]);
		/* back to the head */
		desc_set(&vq->desc[ids[1]], good + 64, 64,
			 wflag | VRING_DESC_F_NEXT, ids[0]);
		break;
	case VUFE_BAD_DESC_NEXT_OOB:
		desc_set(&vq->desc[ids[0]], good, fe->hdr_len,
			 wflag | VRING_DESC_F_NEXT, vq->num + 5);
		break;
	case VUFE_BAD_INDIRECT_OOB:
	case VUFE_BAD_INDIRECT_ENTRY:
	case VUFE_BAD_INDIRECT_LEN:
	case VUFE_BAD_INDIRECT_NESTED: {
		/* the table: the good buffer's first 32 bytes hold 2 entries */
		struct vring_desc *t = p;
		__u64 data = good + 512;

		t[0] = (struct vring_desc){
			.addr = htole64(data), .len = htole32(fe->hdr_len),
			.flags = htole16(wflag | VRING_DESC_F_NEXT),
			.next = htole16(1),
		};
		t[1] = (struct vring_desc){
			.addr = htole64(data + 64), .len = htole32(1000),
			.flags = htole16(wflag),
		};
		if (kind == VUFE_BAD_INDIRECT_ENTRY)
			t[1].addr = htole64(out);
		if (kind == VUFE_BAD_INDIRECT_NESTED)
			t[1].flags = htole16(wflag | VRING_DESC_F_INDIRECT);
		d = &vq->desc[ids[0]];
		d->addr = htole64(kind == VUFE_BAD_INDIRECT_OOB ? out : good);
		d->len = htole32(kind == VUFE_BAD_INDIRECT_LEN ? 17 : 32);
		d->flags = htole16(VRING_DESC_F_INDIRECT);
		d->next = 0;
		break;
	}
	case VUFE_BAD_HEAD_OOB:
		vq->avail->ring[vq->avail_idx & (vq->num - 1)] =
			htole16(vq->num + 7);
		vq->avail_idx++;
		st16(&vq->avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
		vq->st.avail++;
		return vq_kick(vq);
	case VUFE_BAD_AVAIL_JUMP:
		/* in memory only: the driver's shadow stays where it was */
		st16(&vq->avail->idx, vq->avail_idx + vq->num + 1,
		     __ATOMIC_RELEASE);
		return vq_kick(vq);
	default:
		return vufe_err(fe, -EINVAL, "hostile: unknown kind %d", kind);
	}
	vq_publish(vq, head);
	vq->num_added = 0;
	return vq_kick(vq);
}

