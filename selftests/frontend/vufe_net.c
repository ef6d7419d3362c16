// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vufe: the net device, TX and RX */
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

/* ---- net device: TX ---- */

int vufe_send(struct vufe *fe, unsigned int qp,
	      const struct virtio_net_hdr_mrg_rxbuf *hdr, const void *frame,
	      size_t len, unsigned int flags)
{
	static const struct virtio_net_hdr_mrg_rxbuf zero_hdr;
	struct vufe_vq *vq = get_vq(fe, VUFE_TXQ(qp));
	unsigned int segs = VUFE_TX_SEGS_GET(flags), pieces, ndescs, i, k;
	bool inl = flags & VUFE_TX_HDR_INLINE;
	bool indirect = flags & VUFE_TX_INDIRECT;
	__u64 addr[VUFE_MAX_SEGS + 1];
	__u32 lens[VUFE_MAX_SEGS + 1];
	__u16 ids[VUFE_MAX_SEGS + 1];
	size_t off = 0, fo = 0, sz, start;
	struct vufe_slot *s;
	__u16 slot;
	int err;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no TX queue %u", qp);
	if (!fe->hdr_len)
		return vufe_err(fe, -ENOTCONN, "send before setup");
	if (!hdr)
		hdr = &zero_hdr;
	if (!segs)
		segs = 1;
	if (segs > VUFE_MAX_SEGS || !len || segs > len)
		return vufe_err(fe, -EINVAL, "send: %zu bytes in %u segments",
				len, segs);
	if (indirect && !has(fe->features, VIRTIO_RING_F_INDIRECT_DESC))
		return vufe_err(fe, -EOPNOTSUPP,
				"send: INDIRECT_DESC not negotiated");
	if (fe->hdr_len + len + segs * VUFE_GUARD > vq->slot_size)
		return vufe_err(fe, -EMSGSIZE,
				"send: %zu bytes > TX buffer %zu", len,
				vq->slot_size);
	pieces = segs + !inl;
	ndescs = indirect ? 1 : pieces;
	if (!vq->nr_free_slots ||
	    (vq->packed ? pk_reserve(vq, ndescs) : vq_desc_get(vq, ndescs, ids)))
		return -ENOSPC;	/* ring full: reap, then send again */
	slot = vq->free_slots[--vq->nr_free_slots];
	s = &vq->slots[slot];

	k = 0;
	if (!inl) {
		memcpy(s->hdr, hdr, fe->hdr_len);
		addr[k] = s->hdr_gpa;
		lens[k++] = fe->hdr_len;
	}
	/* segments apart from each other, a poisoned gap between them */
	for (i = 0; i < segs; i++) {
		sz = len / segs + (i < len % segs);
		start = off;
		if (!i && inl) {
			memcpy(s->buf, hdr, fe->hdr_len);
			off += fe->hdr_len;
		}
		memcpy(s->buf + off, (const __u8 *)frame + fo, sz);
		off += sz;
		fo += sz;
		addr[k] = s->gpa + start;
		lens[k++] = off - start;
		poison(s->buf + off, VUFE_GUARD);
		off += VUFE_GUARD;
	}
	if (vq->packed) {
		pk_add(vq, s, indirect, pieces, addr, lens, 0,
		       (struct vufe_head){
			       .state = HEAD_TX, .ndescs = ndescs, .slot = slot,
		       });
	} else {
		if (indirect)
			vq_indirect_write(vq, s, ids[0], pieces, addr, lens, 0);
		else
			vq_desc_write(vq, ids, pieces, addr, lens, 0);
		vq->heads[ids[0]] = (struct vufe_head){
			.state = HEAD_TX, .ndescs = ndescs, .slot = slot,
		};
		vq_publish(vq, ids[0]);
	}
	vq->st.frames++;
	if (flags & VUFE_TX_NO_KICK)
		return 0;
	err = vufe_kick(fe, vq->index);
	return err < 0 ? err : 0;
}

static int used_elem(struct vufe *fe, struct vufe_vq *vq, __u16 pos, __u32 *id,
		     __u32 *len)
{
	struct vring_used_elem *e = &vq->used->ring[pos & (vq->num - 1)];

	*id = le32toh(e->id);
	*len = le32toh(e->len);
	if (*id >= vq->num)
		return vufe_err(fe, -EPROTO,
				"vring %u: used entry %u: id %u >= ring size %u",
				vq->index, pos, *id, vq->num);
	return 0;
}

int vufe_tx_reap(struct vufe *fe, unsigned int qp)
{
	struct vufe_vq *vq = get_vq(fe, VUFE_TXQ(qp));
	__u16 used_idx;
	__u32 id, len;
	int n = 0, err;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no TX queue %u", qp);
	if (vq->packed)
		return pk_tx_reap(fe, vq);
	do {
		used_idx = ld16(&vq->used->idx, __ATOMIC_ACQUIRE);
		if ((__u16)(used_idx - vq->last_used) > vq->inflight)
			return vufe_err(fe, -EPROTO,
					"TX vring %u: used idx %u is %u past %u "
					"with only %u in flight",
					vq->index, used_idx,
					(__u16)(used_idx - vq->last_used),
					vq->last_used, vq->inflight);
		while (vq->last_used != used_idx) {
			err = used_elem(fe, vq, vq->last_used, &id, &len);
			if (err)
				return err;
			if (vq->heads[id].state != HEAD_TX &&
			    vq->heads[id].state != HEAD_HOSTILE)
				return vufe_err(fe, -EPROTO,
						"TX vring %u: used id %u was not "
						"in flight", vq->index, id);
			vq_chain_free(vq, id);
			vq->last_used++;
			vq->inflight--;
			vq->st.used++;
			n++;
		}
	} while (rearm(fe, vq));
	return n;
}

unsigned int vufe_tx_inflight(const struct vufe *fe, unsigned int qp)
{
	unsigned int idx = VUFE_TXQ(qp);

	return idx < fe->nr_vq ? fe->vq[idx].inflight : 0;
}

/* ---- net device: RX ---- */

static int post_one_rx(struct vufe *fe, struct vufe_vq *vq)
{
	__u8 *p[VUFE_BIG_PIECES];
	__u64 addr[VUFE_BIG_PIECES];
	__u32 len[VUFE_BIG_PIECES], cap = 0;
	__u16 ids[VUFE_BIG_PIECES];
	unsigned int n, i, ndescs;
	struct vufe_slot *s;
	bool indirect;
	__u16 slot;

	if (!vq->nr_free_slots)
		return -ENOSPC;
	s = &vq->slots[vq->free_slots[vq->nr_free_slots - 1]];
	n = vq_rx_pieces(fe, vq, s, p, addr, len);
	indirect = n > 1 && has(fe->features, VIRTIO_RING_F_INDIRECT_DESC);
	ndescs = indirect ? 1 : n;
	if (vq->packed ? pk_reserve(vq, ndescs) : vq_desc_get(vq, ndescs, ids))
		return -ENOSPC;
	slot = vq->free_slots[--vq->nr_free_slots];
	for (i = 0; i < n; i++)
		cap += len[i];
	if (vq->packed) {
		pk_add(vq, s, indirect, n, addr, len, VRING_DESC_F_WRITE,
		       (struct vufe_head){
			       .state = HEAD_RX, .ndescs = ndescs, .slot = slot,
			       .cap = cap,
		       });
		return 0;
	}
	if (indirect)
		vq_indirect_write(vq, s, ids[0], n, addr, len,
				  VRING_DESC_F_WRITE);
	else
		vq_desc_write(vq, ids, n, addr, len, VRING_DESC_F_WRITE);
	vq->heads[ids[0]] = (struct vufe_head){
		.state = HEAD_RX, .ndescs = ndescs, .slot = slot, .cap = cap,
	};
	vq_publish(vq, ids[0]);
	return 0;
}

int vufe_post_rx(struct vufe *fe, unsigned int qp, unsigned int n)
{
	struct vufe_vq *vq = get_vq(fe, VUFE_RXQ(qp));
	unsigned int count = 0;
	int err;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no RX queue %u", qp);
	if (!fe->rx_ready)
		return vufe_err(fe, -ENOTCONN, "post_rx before setup");
	while (!n || count < n) {
		if (post_one_rx(fe, vq))
			break;
		count++;
	}
	if (count) {
		err = vufe_kick(fe, vq->index);
		if (err < 0)
			return err;
	}
	return count;
}

/*
 * One buffer of a frame: its bytes [SKIP, SKIP + C) to BUF + *FRAME when
 * they fit CAP (else *ERR says so, once), its guard bytes checked.
 */
void vq_rx_take(struct vufe *fe, const struct vufe_vq *vq,
		const struct vufe_slot *s, size_t skip, size_t c, void *buf,
		size_t cap, size_t *frame, int *err, unsigned int id)
{
	if (*frame + c <= cap)
		vq_rx_copy(fe, vq, s, skip, c, (__u8 *)buf + *frame);
	else if (!*err)
		*err = vufe_err(fe, -EMSGSIZE,
				"RX vring %u: frame larger than %zu",
				vq->index, cap);
	*frame += c;
	if (!vq_rx_guards_ok(fe, vq, s) && *err != -EPROTO)
		*err = vufe_err(fe, -EPROTO,
				"RX vring %u: the device wrote past the "
				"end of buffer id %u", vq->index, id);
}

/*
 * The first buffer ID (LEN bytes) of a frame: LEN in range, its header to
 * *H, the frame's buffer count to *NB (1 without MRG_RXBUF; at most MAX).
 */
int vq_rx_head(struct vufe *fe, const struct vufe_vq *vq, unsigned int id,
	       __u32 len, unsigned int max,
	       struct virtio_net_hdr_mrg_rxbuf *h, __u16 *nb)
{
	if (len < fe->hdr_len || len > vq->heads[id].cap)
		return vufe_err(fe, -EPROTO,
				"RX vring %u: used len %u of id %u outside "
				"[%u, %u]", vq->index, len, id, fe->hdr_len,
				vq->heads[id].cap);
	memset(h, 0, sizeof(*h));
	vq_rx_copy(fe, vq, &vq->slots[vq->heads[id].slot], 0, fe->hdr_len,
		   (__u8 *)h);
	*nb = 1;
	if (fe->rx_mode != VUFE_RX_MERGEABLE)
		return 0;
	*nb = le16toh(h->num_buffers);
	if (!*nb || *nb > max)
		return vufe_err(fe, -EPROTO,
				"RX vring %u: num_buffers %u with %u buffers "
				"posted", vq->index, *nb, vq->inflight);
	return 0;
}

/* A frame taken: counted, its header out, refill and re-arm as asked. */
ssize_t vq_rx_done(struct vufe *fe, struct vufe_vq *vq, unsigned int qp,
		   const struct virtio_net_hdr_mrg_rxbuf *h,
		   struct virtio_net_hdr_mrg_rxbuf *hdr, unsigned int nb,
		   unsigned int *nbufs, int err, size_t frame)
{
	vq->st.frames++;
	if (hdr)
		*hdr = *h;
	if (nbufs)
		*nbufs = nb;
	if (fe->o.rx_auto_refill) {
		int n = vufe_post_rx(fe, qp, 0);

		if (n < 0 && !err)
			err = n;
	}
	if (fe->o.auto_rearm)
		vufe_enable_cb(fe, vq->index);
	return err ? err : (ssize_t)frame;
}

/* copies the stream bytes [skip, skip + want) of a slot's pieces to out */
void vq_rx_copy(const struct vufe *fe, const struct vufe_vq *vq,
		const struct vufe_slot *s, size_t skip, size_t want, __u8 *out)
{
	__u8 *p[VUFE_BIG_PIECES];
	__u64 gpa[VUFE_BIG_PIECES];
	__u32 len[VUFE_BIG_PIECES];
	unsigned int n, k;
	size_t c;

	n = vq_rx_pieces(fe, vq, s, p, gpa, len);
	for (k = 0; k < n && want; k++) {
		if (skip >= len[k]) {
			skip -= len[k];
			continue;
		}
		c = len[k] - skip;
		if (c > want)
			c = want;
		memcpy(out, p[k] + skip, c);
		out += c;
		want -= c;
		skip = 0;
	}
}

/* the guards after every piece are intact; restores them either way */
bool vq_rx_guards_ok(const struct vufe *fe, const struct vufe_vq *vq,
		     const struct vufe_slot *s)
{
	__u8 *p[VUFE_BIG_PIECES];
	__u64 gpa[VUFE_BIG_PIECES];
	__u32 len[VUFE_BIG_PIECES];
	unsigned int n, k;
	bool ok = true;

	n = vq_rx_pieces(fe, vq, s, p, gpa, len);
	for (k = 0; k < n; k++) {
		if (!poisoned(p[k] + len[k], VUFE_GUARD)) {
			ok = false;
			poison(p[k] + len[k], VUFE_GUARD);
		}
	}
	return ok;
}

ssize_t vufe_recv(struct vufe *fe, unsigned int qp, void *buf, size_t cap,
		  struct virtio_net_hdr_mrg_rxbuf *hdr, unsigned int *nbufs)
{
	struct vufe_vq *vq = get_vq(fe, VUFE_RXQ(qp));
	struct virtio_net_hdr_mrg_rxbuf h;
	__u16 used_idx, pending, nb, j;
	size_t frame = 0, skip, c;
	__u32 id, len;
	int err = 0;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no RX queue %u", qp);
	if (!fe->rx_ready)
		return vufe_err(fe, -ENOTCONN, "recv before setup");
	if (vq->packed)
		return pk_recv(fe, vq, qp, buf, cap, hdr, nbufs);
	used_idx = ld16(&vq->used->idx, __ATOMIC_ACQUIRE);
	pending = used_idx - vq->last_used;
	if (!pending)
		return -EAGAIN;
	if (pending > vq->inflight)
		return vufe_err(fe, -EPROTO,
				"RX vring %u: used idx %u is %u past %u with "
				"only %u buffers posted",
				vq->index, used_idx, pending, vq->last_used,
				vq->inflight);

	/* the header is the first hdr_len bytes of the first buffer */
	err = used_elem(fe, vq, vq->last_used, &id, &len);
	if (err)
		return err;
	if (vq->heads[id].state != HEAD_RX)
		return vufe_err(fe, -EPROTO,
				"RX vring %u: used id %u was not posted",
				vq->index, id);
	err = vq_rx_head(fe, vq, id, len, vq->inflight, &h, &nb);
	if (err)
		return err;
	/* a frame is taken whole: wait for its last buffer */
	if (pending < nb)
		return -EAGAIN;

	/* check all first, so a bad entry consumes nothing */
	for (j = 0; j < nb; j++) {
		err = used_elem(fe, vq, vq->last_used + j, &id, &len);
		if (err)
			return err;
		if (vq->heads[id].state != HEAD_RX || len > vq->heads[id].cap)
			return vufe_err(fe, -EPROTO,
					"RX vring %u: used entry %u: id %u len "
					"%u not a posted buffer", vq->index,
					(__u16)(vq->last_used + j), id, len);
		if (j && len == 0)
			return vufe_err(fe, -EPROTO,
					"RX vring %u: empty merged buffer %u",
					vq->index, j);
	}
	for (j = 0; j < nb; j++) {
		struct vufe_slot *s;

		used_elem(fe, vq, vq->last_used, &id, &len);
		s = &vq->slots[vq->heads[id].slot];
		skip = j ? 0 : fe->hdr_len;
		c = len - skip;
		vq_rx_take(fe, vq, s, skip, c, buf, cap, &frame, &err, id);
		vq_chain_free(vq, id);
		vq->last_used++;
		vq->inflight--;
		vq->st.used++;
	}
	return vq_rx_done(fe, vq, qp, &h, hdr, nb, nbufs, err, frame);
}

