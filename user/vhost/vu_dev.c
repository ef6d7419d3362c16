// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every part of the protocol layer uses: a ring stopped before a
 * change that touches it and started again once it has all it needs, the
 * whole device paused around a device-wide change, and message helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "fault.h"
#include "journal.h"
#include "journal_int.h"
#include "log.h"
#include "vu_dev.h"
#include "vu_dev_int.h"
#include "virtq.h"
#include "vq.h"

const char *vu_dev_name(const struct vhost_dev *dev)
{
	return dev->name ? dev->name : "vhost";
}

/* Stop VQ if it runs: the device lets go of it before we touch it. */
void vu_vq_halt(struct vhost_dev *dev, struct vhost_vq *vq)
{
	if (!vq->running)
		return;
	dev->ops->queue_stop(dev, vq);
	vq->running = false;
	vhost_vq_stop(vq);
	vhost_dbg("%s: vq %u stopped", vu_dev_name(dev), vq->index);
}

/*
 * vhost_vq_start() reads and writes the ring (used index, kick
 * suppression): in memory the frontend may have truncated since it was
 * mapped (fault.h).  -EFAULT and WHY then; the ring stays stopped.
 */
static int vq_start(struct vhost_dev *dev, struct vhost_vq *vq, char *why,
		    size_t len)
{
	socklen_t crlen = sizeof(struct ucred);
	struct vhost_fault f;
	struct ucred cr;
	int ret;

	/* whose ring it is, for a packed ring's journal */
	vq->frontend_pid = 0;
	if (dev->fd >= 0 &&
	    !getsockopt(dev->fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen))
		vq->frontend_pid = cr.pid;
	if (!vhost_fault_try(&f, &dev->mem)) {
		vhost_vq_stop(vq);
		vhost_fault_describe(&f, why, len);
		return -EFAULT;
	}
	ret = vhost_vq_start(vq, dev->features);
	vhost_fault_end(&f);
	return ret;
}

/* Start VQ if everything it needs is there and it is not running. */
void vu_vq_update(struct vhost_dev *dev, struct vhost_vq *vq)
{
	char why[200] = "";
	int ret;

	if (vq->running || !vhost_vq_ready(vq) || !dev->mem.nregions ||
	    dev->importing || dev->frozen)
		return;
	ret = vq_start(dev, vq, why, sizeof(why));
	if (ret && why[0]) {
		vhost_err("%s: vq %u not started: %s", vu_dev_name(dev),
			  vq->index, why);
		return;
	}
	if (ret) {
		vhost_err("%s: vq %u not started: ring not usable (%s)",
			  vu_dev_name(dev), vq->index, strerror(-ret));
		return;
	}
	/* logged first: once started, the datapath state is the thread's */
	vhost_dbg("%s: vq %u starting (size %u, avail %u, used %u)",
		  vu_dev_name(dev), vq->index, vq->num, vq->last_avail_idx,
		  vq->used_idx);
	ret = dev->ops->queue_start(dev, vq);
	if (ret) {
		vhost_err("%s: vq %u not started by the device: %s",
			  vu_dev_name(dev), vq->index, strerror(-ret));
		vhost_vq_stop(vq);
		return;
	}
	vq->running = true;
}

/* Quiesce every ring before a device-wide change (memory, features, log). */
void vu_dev_pause(struct vhost_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_vqs; i++)
		vu_vq_halt(dev, &dev->vqs[i]);
}

void vu_dev_resume(struct vhost_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_vqs; i++)
		vu_vq_update(dev, &dev->vqs[i]);
}

struct vhost_vq *vu_msg_vq(struct vhost_dev *dev, uint32_t index)
{
	if (index >= dev->nr_vqs) {
		vhost_err("%s: vq index %u, the device has %u", vu_dev_name(dev),
			  index, dev->nr_vqs);
		return NULL;
	}
	return &dev->vqs[index];
}

/* Take fd I of MSG: the dispatcher will not close it. */
int vu_msg_take_fd(struct vhost_user_msg *msg, unsigned int i)
{
	int fd = msg->fds[i];

	msg->fds[i] = -1;
	return fd;
}

void vu_msg_close_fds(struct vhost_user_msg *msg)
{
	unsigned int i;

	for (i = 0; i < msg->nfds; i++)
		if (msg->fds[i] >= 0)
			close(msg->fds[i]);
	msg->nfds = 0;
}

void vu_reply_u64(struct vhost_user_msg *msg, uint64_t v)
{
	msg->payload.u64 = v;
	msg->hdr.size = sizeof(msg->payload.u64);
}


/* --- the packed rings' journal file ----------------------------------- */

int vhost_dev_journal_open(struct vhost_dev *dev, const char *path)
{
	size_t len = (size_t)dev->nr_vqs * VHOST_VQ_JOURNAL_SIZE;
	struct stat st;
	unsigned int i;
	void *map;
	int fd, ret = 0;

	if (dev->journal)
		return -EBUSY;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* grown if an earlier run had fewer rings, never cut: sparse */
	if (fstat(fd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	else if ((size_t)st.st_size < len && ftruncate(fd, (off_t)len))
		ret = -errno;
	if (ret) {
		close(fd);
		return ret;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ret = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	dev->journal = map;
	dev->journal_len = len;
	for (i = 0; i < dev->nr_vqs; i++)
		vhost_vq_set_journal(&dev->vqs[i],
				     (char *)map + (size_t)i * VHOST_VQ_JOURNAL_SIZE);
	return 0;
}

bool vhost_dev_journal_close(struct vhost_dev *dev)
{
	bool live = false;
	unsigned int i;

	if (!dev->journal)
		return false;
	for (i = 0; i < dev->nr_vqs; i++) {
		live |= vhost_jr_live(&dev->vqs[i]);
		vhost_vq_set_journal(&dev->vqs[i], NULL);
	}
	munmap(dev->journal, dev->journal_len);
	dev->journal = NULL;
	dev->journal_len = 0;
	return live;
}
