/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Split rings (split.c), for virtq.c's dispatch; inside the ring layer. */
#ifndef VNET_VHOST_SPLIT_H
#define VNET_VHOST_SPLIT_H

#include "vq_int.h"

extern const struct vhost_vq_ops vhost_vq_split_ops;

#endif /* VNET_VHOST_SPLIT_H */
