/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A ring's kick, call and error fds (vring_fds.c). */
#ifndef VNET_VHOST_VRING_FDS_H
#define VNET_VHOST_VRING_FDS_H

#include "vhost_user.h"

/*
 * the handlers of SET_VRING_KICK, SET_VRING_CALL and SET_VRING_ERR (in
 * handlers.c's table)
 */
int vu_h_set_vring_kick(struct vhost_dev *dev, struct vhost_user_msg *msg);
int vu_h_set_vring_call(struct vhost_dev *dev, struct vhost_user_msg *msg);
int vu_h_set_vring_err(struct vhost_dev *dev, struct vhost_user_msg *msg);

#endif /* VNET_VHOST_VRING_FDS_H */
