/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A device's packed rings' journal file (vu_dev.c). */
#ifndef VNET_VHOST_VU_DEV_H
#define VNET_VHOST_VU_DEV_H

#include <stdbool.h>

struct vhost_dev;

/*
 * Give the device's packed rings a journal in the file PATH (created
 * 0600, or the one an earlier process of this device left): one slot of
 * VHOST_VQ_JOURNAL_SIZE bytes per ring (journal.h).
 * A process that serves the same frontend after this one crashed or
 * exited goes on where the rings were.  Before any ring starts; 0 or
 * -errno.
 */
int vhost_dev_journal_open(struct vhost_dev *dev, const char *path);
/*
 * Unmap it (every ring stopped).  Whether a ring was served with it:
 * false, the file holds nothing a later process could use.
 */
bool vhost_dev_journal_close(struct vhost_dev *dev);

#endif /* VNET_VHOST_VU_DEV_H */
