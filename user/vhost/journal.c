// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A packed ring's journal: where the device is in the ring, kept in memory
 * that outlives the process (a file the device maps, virtq.h), so that the
 * next process can go on from there after a crash or an exit.
 *
 * Why: a split ring's used index is in guest memory, and a frontend that
 * lost its backend resumes from it.  A packed ring has no such index: the
 * device's positions and wrap counters, and which chains it holds, exist
 * only in the device.  QEMU hands a new backend the base of the ring's
 * last start (GET_VRING_BASE needed the backend that went away), which is
 * stale as soon as the ring moved; serving from it would give the guest
 * buffers it already got back.
 *
 * What is kept, per ring: the avail and used positions; per buffer id in
 * flight, the descriptors its chain took and its first position; a push
 * in progress (its ids, where it starts and ends), written before the
 * used entries are; the base the frontend holds (its SET_VRING_BASE, or
 * the answer to its GET_VRING_BASE); and whose ring it is (the frontend's
 * pid, the memory file of the descriptor ring, the ring's address and
 * size).
 *
 * A ring's slot: struct jr_hdr at 0; at 4096 three tables of
 * VHOST_VQ_MAX_SIZE 16-bit entries: per id its length, per id its head,
 * the ids of the push in progress.  Host byte order: the file is read by
 * the next process on the same host only.
 *
 * Every step leaves the journal consistent at any instruction a kill -9
 * may stop it at:
 *  - a pop writes the id's length and head, then the avail position;
 *    an id whose head is at or past the avail position was not taken
 *    (its chain is still available in the ring) and is ignored;
 *  - a rewind writes the avail position back first;
 *  - a push writes its record, then the used entries (packed.c writes the
 *    first entry's flags last, so the guest sees all or none), then the
 *    used position, then clears the record.  At the next start a record
 *    still there is decided from the ring: the descriptor at the push's
 *    first position has USED = the used wrap counter once the push landed
 *    (a used entry, or the driver's next lap already), and the opposite
 *    while it is still the available descriptor it was.
 *
 * At a start after SET_VRING_BASE the journal is used when it is this
 * frontend's ring (pid, memory, address, size) and the frontend's base is
 * the one the journal says it holds: the ring goes on at the journal's
 * positions and the chains in flight are given back used with length 0
 * (a TX frame the guest's TCP sends again, an RX buffer the driver drops
 * as a short frame and posts again).  A base equal to the journal's
 * positions (a hand-over) goes on and keeps the frontend's base; any other
 * base starts the journal afresh from it.  A journal that does not add up
 * (lengths, positions) is not used and says why.
 */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>

#include "journal.h"
#include "journal_int.h"
#include "log.h"

#define JR_MAGIC 0x6a6e7276u /* "vrnj" */
#define JR_VERSION 1
#define JR_HDR 4096u
#define WRAP_BIT (1u << VRING_PACKED_EVENT_F_WRAP_CTR)
#define F_USED (1u << VRING_PACKED_DESC_F_USED)

struct jr_hdr {
	uint32_t magic; /* JR_MAGIC once the rest is written */
	uint32_t version;
	uint32_t num;	  /* ring size */
	uint32_t fe_base; /* the base the frontend holds */
	uint64_t owner;	  /* the frontend's pid and memory (jr_owner()) */
	uint64_t desc_gpa;
	uint16_t avail, used;		/* positions: idx | wrap << 15 */
	uint16_t push_first, push_after; /* the push in progress */
	uint32_t push_n;		/* ... its entries; 0: none */
};

_Static_assert(sizeof(struct jr_hdr) <= JR_HDR, "journal header");
_Static_assert(VHOST_VQ_JOURNAL_SIZE == JR_HDR + 3 * 2 * VHOST_VQ_MAX_SIZE,
	       "journal slot: header and three tables of 16-bit entries");

static inline struct jr_hdr *jr(const struct vhost_vq *vq)
{
	return vq->journal;
}

/* per id: descriptors its chain took (0: not in flight) */
static inline uint16_t *jr_len(const struct vhost_vq *vq)
{
	return (uint16_t *)((char *)vq->journal + JR_HDR);
}

/* per id: the chain's first position */
static inline uint16_t *jr_head(const struct vhost_vq *vq)
{
	return jr_len(vq) + VHOST_VQ_MAX_SIZE;
}

/* the push in progress: its ids */
static inline uint16_t *jr_push(const struct vhost_vq *vq)
{
	return jr_len(vq) + 2 * VHOST_VQ_MAX_SIZE;
}

#define ST(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#define ST_REL(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

/* a position on the 2 * num circle (packed.c's "lin") */
static unsigned int jr_lin(const struct vhost_vq *vq, uint16_t pos)
{
	return (pos & ~WRAP_BIT) + (pos & WRAP_BIT ? 0 : vq->num);
}

/* ... and back: LIN taken mod 2 * num */
static uint16_t jr_pos(const struct vhost_vq *vq, unsigned int lin)
{
	lin %= 2u * vq->num;
	return lin < vq->num ? (uint16_t)(lin | WRAP_BIT) :
			       (uint16_t)(lin - vq->num);
}

void vhost_vq_set_journal(struct vhost_vq *vq, void *slot)
{
	vq->journal = slot;
}

void vhost_jr_pop(struct vhost_vq *vq, uint16_t id, uint16_t count,
		  uint16_t head, uint16_t next)
{
	if (!vq->journal)
		return;
	ST(jr_len(vq)[id], count);
	ST(jr_head(vq)[id], head);
	ST_REL(jr(vq)->avail, next);
}

void vhost_jr_rewind(struct vhost_vq *vq, uint16_t pos, const uint16_t *ids,
		     unsigned int first, unsigned int n)
{
	unsigned int k, i = first;

	if (!vq->journal)
		return;
	/* the position first: the ids' records are void past it */
	ST_REL(jr(vq)->avail, pos);
	for (k = 0; k < n; k++, i = i + 1 == vq->num ? 0 : i + 1)
		if (ids[i] < vq->num)
			ST(jr_len(vq)[ids[i]], 0);
}

void vhost_jr_push_begin(struct vhost_vq *vq, const struct vhost_vq_used *used,
			 unsigned int n)
{
	struct jr_hdr *h = jr(vq);
	unsigned int i, c, lin;

	if (!h || !n)
		return;
	/* where packed.c's push will end: an id pushed without a pop took one */
	lin = jr_lin(vq, h->used);
	for (i = 0; i < n; i++) {
		ST(jr_push(vq)[i], (uint16_t)used[i].id);
		c = vq->packed.chain_len[used[i].id];
		lin += c ? c : 1;
	}
	ST(h->push_first, h->used);
	ST(h->push_after, jr_pos(vq, lin));
	ST_REL(h->push_n, n);
}

void vhost_jr_push_end(struct vhost_vq *vq, const struct vhost_vq_used *used,
		       unsigned int n)
{
	struct jr_hdr *h = jr(vq);
	unsigned int i;

	if (!h || !n)
		return;
	ST_REL(h->used, h->push_after);
	for (i = 0; i < n; i++)
		if (used[i].id < vq->num)
			ST(jr_len(vq)[used[i].id], 0);
	ST_REL(h->push_n, 0);
}

/* FNV-1a, 64 bits */
static uint64_t mix(uint64_t h, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * Whose ring: the frontend process and the memory the descriptor ring is
 * in (the file's device and inode: a new frontend has new memory).
 */
static uint64_t jr_owner(const struct vhost_vq *vq)
{
	uint64_t h = mix(0xcbf29ce484222325ULL, (uint64_t)vq->frontend_pid);
	const struct vhost_mem *m = vq->mem;
	unsigned int i;
	struct stat st;

	for (i = 0; m && i < m->nregions; i++) {
		const struct vhost_mem_region *r = &m->regions[i];

		if (vq->packed.desc_gpa < r->gpa ||
		    vq->packed.desc_gpa - r->gpa >= r->size)
			continue;
		h = mix(mix(h, r->gpa), r->size);
		if (r->has_fd && !fstat(r->fd, &st))
			h = mix(mix(h, st.st_dev), st.st_ino);
		break;
	}
	return h;
}

static uint16_t cur_avail(const struct vhost_vq *vq)
{
	return vq->last_avail_idx | (vq->avail_wrap ? WRAP_BIT : 0);
}

static uint16_t cur_used(const struct vhost_vq *vq)
{
	return vq->used_idx | (vq->used_wrap ? WRAP_BIT : 0);
}

static void jr_init(struct vhost_vq *vq, uint64_t owner, uint32_t fe_base)
{
	struct jr_hdr *h = jr(vq);

	ST_REL(h->magic, 0);
	memset(jr_len(vq), 0, (size_t)vq->num * sizeof(uint16_t));
	h->version = JR_VERSION;
	h->num = vq->num;
	h->fe_base = fe_base;
	h->owner = owner;
	h->desc_gpa = vq->packed.desc_gpa;
	h->avail = cur_avail(vq);
	h->used = cur_used(vq);
	h->push_n = 0;
	ST_REL(h->magic, JR_MAGIC);
}


static bool pos_ok(const struct vhost_vq *vq, uint16_t pos)
{
	return (pos & ~WRAP_BIT) < vq->num;
}

/* from A forward to B on the 2 * num circle */
static unsigned int dist(const struct vhost_vq *vq, uint16_t a, uint16_t b)
{
	unsigned int m = 2u * vq->num;

	return (jr_lin(vq, b) + m - jr_lin(vq, a)) % m;
}

/*
 * Bring the journal to what the ring shows, and the ring's positions to
 * the journal's.  The number of chains in flight (their ids in BACK,
 * in id order), or -1 with WHY.
 */
static int jr_replay(struct vhost_vq *vq, uint16_t *back, char *why,
		     size_t wlen)
{
	struct jr_hdr *h = jr(vq);
	uint16_t *len = jr_len(vq), *head = jr_head(vq);
	uint16_t a = h->avail, u = h->used, id;
	unsigned int i, n = 0, total = 0, d, c;

	if (!pos_ok(vq, a) || !pos_ok(vq, u)) {
		snprintf(why, wlen, "positions 0x%x/0x%x outside a %u entry ring",
			 a, u, vq->num);
		return -1;
	}
	if (h->push_n) {
		uint16_t first = h->push_first, after = h->push_after, f;
		bool w = first & WRAP_BIT;

		if (h->push_n > vq->num || !pos_ok(vq, first) ||
		    !pos_ok(vq, after) || (u != first && u != after)) {
			snprintf(why, wlen, "a push of %u entries from 0x%x to 0x%x, the used position 0x%x",
				 h->push_n, first, after, u);
			return -1;
		}
		f = rd_le16(&vq->packed.desc[first & ~WRAP_BIT].flags);
		if (!!(f & F_USED) == w) {
			/* landed: a used entry there, or the driver's next lap */
			u = after;
			for (i = 0; i < h->push_n; i++)
				if (jr_push(vq)[i] < vq->num)
					len[jr_push(vq)[i]] = 0;
		} else {
			u = first;
		}
		h->push_n = 0;
	}
	for (i = 0; i < vq->num; i++) {
		c = len[i];
		if (!c)
			continue;
		if (c > vq->num || !pos_ok(vq, head[i])) {
			snprintf(why, wlen, "id %u: %u descriptors at 0x%x", i,
				 c, head[i]);
			return -1;
		}
		d = dist(vq, head[i], a);
		if (!d || d > vq->num) {
			len[i] = 0; /* popped after the last record: not taken */
			continue;
		}
		if (c > d) {
			snprintf(why, wlen, "id %u: %u descriptors from 0x%x, past the avail position 0x%x",
				 i, c, head[i], a);
			return -1;
		}
		/* in id order: used entries may come in any order */
		back[n++] = (uint16_t)i;
		total += c;
	}
	d = dist(vq, u, a);
	if (d > vq->num || total != d) {
		snprintf(why, wlen, "chains in flight take %u descriptors, the positions (avail 0x%x, used 0x%x) %u",
			 total, a, u, d);
		return -1;
	}
	for (i = 0; i < n; i++) {
		id = back[i];
		vq->packed.chain_len[id] = len[id];
	}
	h->avail = a;
	ST_REL(h->used, u);
	vq->last_avail_idx = a & ~WRAP_BIT;
	vq->avail_wrap = a & WRAP_BIT;
	vq->used_idx = u & ~WRAP_BIT;
	vq->used_wrap = u & WRAP_BIT;
	return (int)n;
}

unsigned int vhost_jr_start(struct vhost_vq *vq, uint16_t *back)
{
	struct jr_hdr *h = jr(vq);
	bool fresh = vq->packed.fe_fresh, mine;
	uint32_t base = vq->packed.fe_base;
	uint16_t a0 = cur_avail(vq), u0 = cur_used(vq);
	char why[160];
	uint64_t owner;
	int n;

	if (!h)
		return 0;
	vq->packed.fe_fresh = false;
	owner = jr_owner(vq);
	mine = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == JR_MAGIC &&
	       h->version == JR_VERSION && h->num == vq->num &&
	       h->owner == owner && h->desc_gpa == vq->packed.desc_gpa;
	if (mine && !fresh)
		return 0; /* started again in this process: it is current */
	if (mine && base == h->fe_base) {
		n = jr_replay(vq, back, why, sizeof(why));
		if (n >= 0) {
			if (a0 != cur_avail(vq) || u0 != cur_used(vq) || n)
				vhost_info("%s: vq %u: resumed where the ring journal says (avail %u wrap %u, used %u wrap %u), not at the frontend's base 0x%x; %d chain%s in flight given back empty",
					   vq_name(vq), vq->index,
					   vq->last_avail_idx, vq->avail_wrap,
					   vq->used_idx, vq->used_wrap, base, n,
					   n == 1 ? "" : "s");
			return (unsigned int)n;
		}
		vhost_err("%s: vq %u: ring journal not used: %s; starting at the frontend's base 0x%x",
			  vq_name(vq), vq->index, why, base);
	} else if (mine && !h->push_n && a0 == h->avail && u0 == h->used) {
		/* the positions agree (a hand-over): the frontend holds its base still */
		return 0;
	}
	jr_init(vq, owner, base);
	return 0;
}

void vhost_jr_told(struct vhost_vq *vq, uint32_t base)
{
	struct jr_hdr *h = jr(vq);

	vq->packed.fe_base = base;
	if (!h || __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != JR_MAGIC ||
	    h->num != vq->num)
		return;
	/* stopped: nothing in flight; the frontend knows the positions */
	memset(jr_len(vq), 0, (size_t)vq->num * sizeof(uint16_t));
	h->push_n = 0;
	h->avail = base & 0xffff;
	h->used = base >> 16;
	ST_REL(h->fe_base, base);
}

bool vhost_jr_live(const struct vhost_vq *vq)
{
	return vq->journal &&
	       __atomic_load_n(&jr(vq)->magic, __ATOMIC_ACQUIRE) == JR_MAGIC;
}
