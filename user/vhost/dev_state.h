/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A device handed to another process while its frontend stays connected
 * (dev_state.c): the old process freezes it (every ring stopped between two
 * bursts, the frontend's messages left unread in the socket) and writes
 * its state out as the vhost-user messages that rebuild it, with the fds
 * they carry; the new process feeds them to a fresh device, checked by the
 * same handlers as a frontend's, and takes the connection over.  The
 * frontend sees nothing: the connection is the same, no message of its own
 * is lost, and the rings go on from where they stopped.
 *
 *	old:  vhost_dev_freeze(dev);        new:  vhost_dev_import_begin(dev2);
 *	      n = vhost_dev_export(dev, m);       vhost_dev_import(dev2, &m[i]) ...
 *	      (send m[0..n) and their fds) -->    vhost_dev_import_end(dev2, conn);
 *	      vhost_dev_release(dev);             (or _import_abort(): the old
 *	                                           vhost_dev_thaw()s and serves on)
 */
#ifndef VNET_VHOST_DEV_STATE_H
#define VNET_VHOST_DEV_STATE_H

#include "vhost_user.h"

/*
 * The most messages an export takes: owner, protocol features, features,
 * a region per memory slot (each as often as it was added), the log's two,
 * and per ring its size, addresses, base, enable, call, error and kick.
 */
#define VHOST_HANDOVER_MAX_REGS (VHOST_MEM_MAX_REGIONS * 16)
#define VHOST_HANDOVER_MAX_MSGS \
	(5 + VHOST_HANDOVER_MAX_REGS + 7 * VHOST_USER_MAX_VQS)

/*
 * Stop every running ring (the device's queue_stop) and stop reading the
 * frontend's messages.  -EAGAIN while a message is half read (try again
 * when it is in), -ENOTCONN without a frontend.
 */
int vhost_dev_freeze(struct vhost_dev *dev);
/* The hand-over did not happen: read messages and run the rings again. */
void vhost_dev_thaw(struct vhost_dev *dev);

/*
 * Frozen DEV's state as messages, at most MAX into MSGS: their count, or
 * -E2BIG.  Their fds are DEV's own, valid while it stays frozen: send
 * them, do not close them.
 */
int vhost_dev_export(const struct vhost_dev *dev, struct vhost_user_msg *msgs,
		     unsigned int max);

/*
 * DEV fresh (vhost_dev_init(), no frontend).  Each message is checked and
 * applied as a frontend's would be, without a reply; its fds are taken or
 * closed.  No ring starts before vhost_dev_import_end(), which attaches the
 * connection CONN (the frontend's, unread messages included; the device's
 * connected() callback is not called: nothing was reset) and starts every
 * ready ring.  0 or -errno (the refused message is logged); after an error
 * vhost_dev_import_abort() undoes everything (no callback either).
 */
void vhost_dev_import_begin(struct vhost_dev *dev);
int vhost_dev_import(struct vhost_dev *dev, struct vhost_user_msg *msg);
int vhost_dev_import_end(struct vhost_dev *dev, int conn);
void vhost_dev_import_abort(struct vhost_dev *dev);

/*
 * Let go of frozen DEV that another process serves now: its fds closed,
 * its memory unmapped, no callback (nothing of the frontend's or the
 * tap's is reset), the rings forgotten.  DEV may be freed.
 */
void vhost_dev_release(struct vhost_dev *dev);

#endif /* VNET_VHOST_DEV_STATE_H */
