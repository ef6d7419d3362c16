/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vu_dev.c, inside the vhost-user protocol layer: rings stopped and
 * started around a change, message helpers (vhost_user_int.h lists the
 * layer's files).
 */
#ifndef VNET_VHOST_VU_DEV_INT_H
#define VNET_VHOST_VU_DEV_INT_H

#include <stdint.h>

#include "vhost_user.h"

const char *vu_dev_name(const struct vhost_dev *dev);
void vu_vq_halt(struct vhost_dev *dev, struct vhost_vq *vq);
void vu_vq_update(struct vhost_dev *dev, struct vhost_vq *vq);
void vu_dev_pause(struct vhost_dev *dev);
void vu_dev_resume(struct vhost_dev *dev);
struct vhost_vq *vu_msg_vq(struct vhost_dev *dev, uint32_t index);
int vu_msg_take_fd(struct vhost_user_msg *msg, unsigned int i);
void vu_msg_close_fds(struct vhost_user_msg *msg);
void vu_reply_u64(struct vhost_user_msg *msg, uint64_t v);

#endif /* VNET_VHOST_VU_DEV_INT_H */
