// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A device's state out to another process and back in, as the vhost-user
 * messages that rebuild it (dev_state.h).  Export writes what the frontend
 * told this device and where the rings are; import runs the messages
 * through the same dispatch and handlers as a frontend's, so whatever a
 * hostile frontend could not make the device accept, a damaged or hostile
 * state record cannot either.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <linux/virtio_config.h>

#include "dev_state.h"
#include "handlers.h"
#include "log.h"
#include "vhost_user_int.h"
#include "vu_dev_int.h"
#include "mem.h"
#include "virtq.h"

int vhost_dev_freeze(struct vhost_dev *dev)
{
	if (dev->fd < 0)
		return -ENOTCONN;
	if (dev->rx.got)
		return -EAGAIN;
	dev->frozen = true;
	vu_dev_pause(dev);
	return 0;
}

void vhost_dev_thaw(struct vhost_dev *dev)
{
	dev->frozen = false;
	vu_dev_resume(dev);
}

/* --- export ------------------------------------------------------------ */

struct out {
	struct vhost_user_msg *msgs;
	unsigned int n, max;
};

static struct vhost_user_msg *out_msg(struct out *o, uint32_t req,
				      uint32_t size)
{
	struct vhost_user_msg *m;

	if (o->n >= o->max)
		return NULL;
	m = &o->msgs[o->n++];
	memset(m, 0, sizeof(*m));
	m->hdr.request = req;
	m->hdr.flags = VHOST_USER_VERSION;
	m->hdr.size = size;
	return m;
}

static int out_u64(struct out *o, uint32_t req, uint64_t v)
{
	struct vhost_user_msg *m = out_msg(o, req, sizeof(uint64_t));

	if (!m)
		return -E2BIG;
	m->payload.u64 = v;
	return 0;
}

static int out_state(struct out *o, uint32_t req, unsigned int index,
		     uint32_t num)
{
	struct vhost_user_msg *m =
		out_msg(o, req, sizeof(struct vhost_user_vring_state));

	if (!m)
		return -E2BIG;
	m->payload.state.index = index;
	m->payload.state.num = num;
	return 0;
}

/* SET_VRING_KICK/CALL/ERR: FD, or "no fd" (polling) when it is -1 */
static int out_fd(struct out *o, uint32_t req, unsigned int index, int fd)
{
	struct vhost_user_msg *m = out_msg(o, req, sizeof(uint64_t));

	if (!m)
		return -E2BIG;
	m->payload.u64 = index;
	if (fd < 0) {
		m->payload.u64 |= VHOST_USER_VRING_NOFD_MASK;
		return 0;
	}
	m->fds[0] = fd;
	m->nfds = 1;
	return 0;
}

static int export_mem(const struct vhost_dev *dev, struct out *o)
{
	const struct vhost_mem *mem = &dev->mem;
	unsigned int i, k;

	for (i = 0; i < mem->nregions; i++) {
		const struct vhost_mem_region *r = &mem->regions[i];

		if (!r->has_fd)
			return -EBADF;
		/* as often as it was added: each REM_MEM_REG takes one */
		for (k = 0; k < r->refs; k++) {
			struct vhost_user_msg *m =
				out_msg(o, VHOST_USER_ADD_MEM_REG,
					sizeof(struct vhost_user_mem_reg));

			if (!m)
				return -E2BIG;
			m->payload.mem_reg.region = (struct vhost_mem_region_desc){
				.guest_phys_addr = r->gpa,
				.memory_size = r->size,
				.userspace_addr = r->uva,
				.mmap_offset = r->mmap_offset,
			};
			m->fds[0] = r->fd;
			m->nfds = 1;
		}
	}
	if (mem->log) {
		struct vhost_user_msg *m = out_msg(o, VHOST_USER_SET_LOG_BASE,
						   sizeof(struct vhost_user_log));

		if (!m || mem->log_fd < 0)
			return m ? -EBADF : -E2BIG;
		m->payload.log.mmap_size = mem->log_size;
		m->payload.log.mmap_offset = mem->log_offset;
		m->fds[0] = mem->log_fd;
		m->nfds = 1;
	}
	return 0;
}

static int export_vq(const struct vhost_dev *dev, const struct vhost_vq *vq,
		     struct out *o)
{
	bool packed = dev->features & (1ULL << VIRTIO_F_RING_PACKED);
	struct vhost_user_msg *m;
	int ret;

	if (!vq->num)
		return 0;
	ret = out_state(o, VHOST_USER_SET_VRING_NUM, vq->index, vq->num);
	if (!ret && vq->addr_set) {
		m = out_msg(o, VHOST_USER_SET_VRING_ADDR,
			    sizeof(struct vhost_user_vring_addr));
		if (!m)
			return -E2BIG;
		m->payload.addr = (struct vhost_user_vring_addr){
			.index = vq->index,
			.flags = vq->addr_flags,
			.desc_user_addr = vq->desc_uva,
			.used_user_addr = vq->used_uva,
			.avail_user_addr = vq->avail_uva,
			.log_guest_addr = vq->log_guest_addr,
		};
	}
	if (!ret)
		ret = out_state(o, VHOST_USER_SET_VRING_BASE, vq->index,
				vhost_vq_base(vq, packed));
	if (!ret)
		ret = out_state(o, VHOST_USER_SET_VRING_ENABLE, vq->index,
				vq->enabled);
	if (!ret && vq->call_fd >= 0)
		ret = out_fd(o, VHOST_USER_SET_VRING_CALL, vq->index,
			     vq->call_fd);
	if (!ret && vq->err_fd >= 0)
		ret = out_fd(o, VHOST_USER_SET_VRING_ERR, vq->index,
			     vq->err_fd);
	/* last: a kick starts the ring */
	if (!ret && vq->kick_set)
		ret = out_fd(o, VHOST_USER_SET_VRING_KICK, vq->index,
			     vq->kick_polling ? -1 : vq->kick_fd);
	return ret;
}

int vhost_dev_export(const struct vhost_dev *dev, struct vhost_user_msg *msgs,
		     unsigned int max)
{
	struct out o = { msgs, 0, max };
	unsigned int i;
	int ret = 0;

	if (!dev->frozen)
		return -EBUSY;
	if (dev->owner && !out_msg(&o, VHOST_USER_SET_OWNER, 0))
		return -E2BIG;
	ret = out_u64(&o, VHOST_USER_SET_PROTOCOL_FEATURES,
		      dev->protocol_features);
	if (!ret)
		ret = out_u64(&o, VHOST_USER_SET_FEATURES, dev->features);
	if (!ret)
		ret = export_mem(dev, &o);
	if (!ret && dev->log_fd >= 0) {
		struct vhost_user_msg *m = out_msg(&o, VHOST_USER_SET_LOG_FD, 0);

		if (!m)
			return -E2BIG;
		m->fds[0] = dev->log_fd;
		m->nfds = 1;
	}
	for (i = 0; !ret && i < dev->nr_vqs; i++)
		ret = export_vq(dev, &dev->vqs[i], &o);
	return ret ? ret : (int)o.n;
}

/* --- import ------------------------------------------------------------ */

void vhost_dev_import_begin(struct vhost_dev *dev)
{
	dev->importing = true;
}

int vhost_dev_import(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	if (!dev->importing) {
		vu_msg_close_fds(msg);
		return -EINVAL;
	}
	/* the version a frontend's header must carry too */
	if ((msg->hdr.flags & VHOST_USER_VERSION_MASK) != VHOST_USER_VERSION ||
	    msg->hdr.size > VHOST_USER_PAYLOAD_MAX ||
	    msg->nfds > VHOST_USER_MAX_FDS) {
		vhost_err("%s: hand-over: a malformed %s message",
			  vu_dev_name(dev),
			  vhost_user_request_name(msg->hdr.request));
		if (msg->nfds > VHOST_USER_MAX_FDS)
			msg->nfds = VHOST_USER_MAX_FDS;
		vu_msg_close_fds(msg);
		return -EINVAL;
	}
	/* what a state record may hold: no query, no one-off action */
	switch (msg->hdr.request) {
	case VHOST_USER_SET_OWNER:
	case VHOST_USER_SET_PROTOCOL_FEATURES:
	case VHOST_USER_SET_FEATURES:
	case VHOST_USER_ADD_MEM_REG:
	case VHOST_USER_SET_LOG_BASE:
	case VHOST_USER_SET_LOG_FD:
	case VHOST_USER_SET_VRING_NUM:
	case VHOST_USER_SET_VRING_ADDR:
	case VHOST_USER_SET_VRING_BASE:
	case VHOST_USER_SET_VRING_ENABLE:
	case VHOST_USER_SET_VRING_CALL:
	case VHOST_USER_SET_VRING_ERR:
	case VHOST_USER_SET_VRING_KICK:
		break;
	default:
		vhost_err("%s: hand-over: request %s is not part of a device's state",
			  vu_dev_name(dev),
			  vhost_user_request_name(msg->hdr.request));
		vu_msg_close_fds(msg);
		return -EINVAL;
	}
	return vu_dispatch(dev, msg);
}

int vhost_dev_import_end(struct vhost_dev *dev, int conn)
{
	int fl;

	if (!dev->importing || dev->fd >= 0)
		return -EINVAL;
	fl = fcntl(conn, F_GETFL);
	if (fl < 0 || fcntl(conn, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	dev->importing = false;
	dev->fd = conn;
	memset(&dev->rx, 0, sizeof(dev->rx));
	vu_dev_resume(dev);
	vhost_info("%s: frontend taken over (no message lost, no reset)",
		   vu_dev_name(dev));
	return 0;
}

/* Every ring and the memory forgotten, fds closed, without a callback. */
static void dev_forget(struct vhost_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_vqs; i++)
		vhost_vq_reset(&dev->vqs[i]);
	vhost_mem_cleanup(&dev->mem);
	if (dev->log_fd >= 0)
		close(dev->log_fd);
	dev->log_fd = -1;
	dev->features = 0;
	dev->protocol_features = 0;
	dev->owner = false;
}

void vhost_dev_import_abort(struct vhost_dev *dev)
{
	/* no ring was started: nothing for the device to stop */
	dev_forget(dev);
	dev->importing = false;
}

void vhost_dev_release(struct vhost_dev *dev)
{
	dev_forget(dev);
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
	memset(&dev->rx, 0, sizeof(dev->rx));
	dev->frozen = false;
}
