/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Packed rings (packed.c), for virtq.c's dispatch; inside the ring layer. */
#ifndef VNET_VHOST_PACKED_H
#define VNET_VHOST_PACKED_H

#include "vq_int.h"

extern const struct vhost_vq_ops vhost_vq_packed_ops;

/* GET/SET_VRING_BASE's 32-bit form (virtq.h, vhost_vq_base()) */
uint32_t vhost_vq_packed_base(const struct vhost_vq *vq);
void vhost_vq_packed_set_base(struct vhost_vq *vq, uint32_t base);

/* the per-id and per-pop tables, kept over a stop; freed at a reset */
void vhost_vq_packed_free(struct vhost_vq *vq);

#endif /* VNET_VHOST_PACKED_H */
