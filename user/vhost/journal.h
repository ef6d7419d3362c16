/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A packed ring's journal (journal.c): the ring's slot, given by the device. */
#ifndef VNET_VHOST_JOURNAL_H
#define VNET_VHOST_JOURNAL_H

#include "vq.h"

/*
 * A packed ring's journal: SLOT, VHOST_VQ_JOURNAL_SIZE bytes
 * of memory that outlives the process (a shared mapping of a file, zeroed
 * when new), where the ring keeps its positions and the chains it holds,
 * so that the next process serving the same frontend goes on from there
 * instead of from the stale base a frontend sends after losing its
 * backend.  Mostly untouched (sparse): a page and 6 bytes per ring entry
 * in use.  NULL: none.  Set while the ring is stopped; kept over a reset.
 */
#define VHOST_VQ_JOURNAL_SIZE (4096u + 3u * 2u * VHOST_VQ_MAX_SIZE)
void vhost_vq_set_journal(struct vhost_vq *vq, void *slot);

#endif /* VNET_VHOST_JOURNAL_H */
