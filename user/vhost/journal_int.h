/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A packed ring's journal (journal.c), inside the ring layer: what packed.c
 * tells it as it pops, rewinds and pushes, and the decision at a ring's
 * start.  The device gives each ring its slot (journal.h,
 * vhost_vq_set_journal()).
 */
#ifndef VNET_VHOST_JOURNAL_INT_H
#define VNET_VHOST_JOURNAL_INT_H

#include "vq_int.h"

/* A chain taken at position HEAD (idx | wrap << 15); NEXT: the position after it. */
void vhost_jr_pop(struct vhost_vq *vq, uint16_t id, uint16_t count,
		  uint16_t head, uint16_t next);
/*
 * The last N pops given back untouched: the avail position is POS again;
 * their ids are IDS[FIRST ...] (mod num).
 */
void vhost_jr_rewind(struct vhost_vq *vq, uint16_t pos, const uint16_t *ids,
		     unsigned int first, unsigned int n);
/* Before N used entries are written from the used position. */
void vhost_jr_push_begin(struct vhost_vq *vq, const struct vhost_vq_used *used,
			 unsigned int n);
/* ... and once they are. */
void vhost_jr_push_end(struct vhost_vq *vq, const struct vhost_vq_used *used,
		       unsigned int n);

/*
 * At a packed ring's start, its memory mapped.  Returns how many chains
 * the ring had in flight when the process that wrote the journal ended:
 * the positions and chain lengths are then the journal's, and BACK[0 ..
 * ret) the ids to give back (used, length 0).  0: the frontend's base
 * stands (the journal follows from it).  BACK has room for vq->num ids.
 */
unsigned int vhost_jr_start(struct vhost_vq *vq, uint16_t *back);

/* Was a ring ever served with this journal (is there anything to resume)? */
bool vhost_jr_live(const struct vhost_vq *vq);

/* GET_VRING_BASE answered BASE: the frontend holds it now. */
void vhost_jr_told(struct vhost_vq *vq, uint32_t base);

#endif /* VNET_VHOST_JOURNAL_INT_H */
