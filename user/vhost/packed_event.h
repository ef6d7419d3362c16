/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the ring layer: a packed ring's positions as packed.c and
 * packed_event.c both read them, and the event suppression
 * (packed_event.c) behind packed.c's ops.
 */
#ifndef VNET_VHOST_PACKED_EVENT_H
#define VNET_VHOST_PACKED_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/virtio_ring.h>

#include "vq.h"
#include "vq_int.h"

#define F_AVAIL (1u << VRING_PACKED_DESC_F_AVAIL)
#define F_USED (1u << VRING_PACKED_DESC_F_USED)
#define WRAP_BIT (1u << VRING_PACKED_EVENT_F_WRAP_CTR)

static inline uint16_t pos_pack(uint16_t idx, bool wrap)
{
	return idx | (wrap ? WRAP_BIT : 0);
}

static inline unsigned int lin(const struct vhost_vq *vq, uint16_t idx,
			       bool wrap)
{
	return idx + (wrap ? 0 : vq->num);
}

/* Is the descriptor with these FLAGS available in the lap WRAP? */
static inline bool desc_avail(uint16_t flags, bool wrap)
{
	return !!(flags & F_AVAIL) == wrap && !!(flags & F_USED) != wrap;
}

/* The flags of ring entry I; acquire: its other fields are read after. */
static inline uint16_t flags_load(const struct vhost_vq *vq, unsigned int i)
{
	return rd_le16_acquire(&vq->packed.desc[i].flags);
}

/*
 * The ring ops need_notify, want_notify, notify_disable and notify_enable
 * of packed rings (vq_int.h; virtq.h says what each answers)
 */
bool packed_need_notify(struct vhost_vq *vq);
bool packed_want_notify(struct vhost_vq *vq);
void packed_notify_disable(struct vhost_vq *vq);
bool packed_notify_enable(struct vhost_vq *vq);

#endif /* VNET_VHOST_PACKED_EVENT_H */
