// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The handler of every vhost-user request, and the table that says, per
 * request, its handler, how many fds and how large a payload it takes, and
 * how it is answered (the dispatcher in vhost_user.c checks all that
 * before a handler runs).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "handlers.h"
#include "journal_int.h"
#include "log.h"
#include "vhost_user_int.h"
#include "vring_fds.h"
#include "vu_dev_int.h"
#include "mem.h"
#include "virtq.h"

static uint64_t features_offered(struct vhost_dev *dev)
{
	uint64_t f = dev->ops->get_features(dev);

	f &= ~VHOST_LIB_UNSUPPORTED_FEATURES;
	f |= 1ULL << VHOST_USER_F_PROTOCOL_FEATURES;
	/* dirty logging is ours to provide, through the shared-memory log */
	if (dev->protocol_features_offered &
	    (1ULL << VHOST_USER_PROTOCOL_F_LOG_SHMFD))
		f |= 1ULL << VHOST_F_LOG_ALL;
	return f;
}

static int h_get_features(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	vu_reply_u64(msg, features_offered(dev));
	return 0;
}

static int h_set_features(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	uint64_t f = msg->payload.u64, offered = features_offered(dev);
	uint64_t old = dev->features;
	int ret = 0;

	if (f & ~offered) {
		vhost_err("%s: frontend acked features 0x%llx not offered (offered 0x%llx)",
			  vu_dev_name(dev), (unsigned long long)(f & ~offered),
			  (unsigned long long)offered);
		return -EINVAL;
	}
	/*
	 * Features change while rings run (VHOST_F_LOG_ALL at the start and
	 * end of a migration): the rings re-read them when restarted.
	 */
	vu_dev_pause(dev);
	dev->features = f;
	if (dev->ops->set_features) {
		ret = dev->ops->set_features(dev, f);
		if (ret)
			dev->features = old;
	}
	vu_dev_resume(dev);
	vhost_dbg("%s: features 0x%llx", vu_dev_name(dev),
		  (unsigned long long)dev->features);
	return ret;
}

static int h_get_protocol_features(struct vhost_dev *dev,
				   struct vhost_user_msg *msg)
{
	vu_reply_u64(msg, dev->protocol_features_offered);
	return 0;
}

static int h_set_protocol_features(struct vhost_dev *dev,
				   struct vhost_user_msg *msg)
{
	uint64_t f = msg->payload.u64;
	uint64_t extra = f & ~dev->protocol_features_offered;

	if (extra) {
		vhost_err("%s: frontend acked protocol features 0x%llx not offered",
			  vu_dev_name(dev), (unsigned long long)extra);
		return -EINVAL;
	}
	dev->protocol_features = f;
	return 0;
}

static int h_set_owner(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	(void)msg;
	dev->owner = true;
	return 0;
}

/* Deprecated; the spec recommends ignoring it or disabling all rings. */
static int h_reset_owner(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	unsigned int i;

	(void)msg;
	for (i = 0; i < dev->nr_vqs; i++) {
		vu_vq_halt(dev, &dev->vqs[i]);
		dev->vqs[i].enabled = false;
	}
	return 0;
}

static int h_get_queue_num(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	vu_reply_u64(msg, dev->ops->get_queue_num ? dev->ops->get_queue_num(dev) :
						 dev->nr_vqs);
	return 0;
}

static int h_get_max_mem_slots(struct vhost_dev *dev,
			       struct vhost_user_msg *msg)
{
	(void)dev;
	vu_reply_u64(msg, VHOST_MEM_MAX_REGIONS);
	return 0;
}

static void mem_changed(struct vhost_dev *dev)
{
	if (dev->ops->mem_changed)
		dev->ops->mem_changed(dev);
}

static int h_add_mem_reg(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	int ret;

	/* queue threads read the table without locks: stop them first */
	vu_dev_pause(dev);
	ret = vhost_mem_add(&dev->mem, &msg->payload.mem_reg.region,
			    vu_msg_take_fd(msg, 0));
	if (!ret)
		mem_changed(dev);
	vu_dev_resume(dev);
	return ret;
}

static int h_rem_mem_reg(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	int ret;

	/* an fd is tolerated (old QEMUs sent one) and closed unused */
	vu_dev_pause(dev);
	ret = vhost_mem_remove(&dev->mem, &msg->payload.mem_reg.region);
	if (!ret)
		mem_changed(dev);
	vu_dev_resume(dev);
	return ret;
}

static int h_set_mem_table(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_mem_table *t = &msg->payload.mem;
	int fds[VHOST_USER_MEM_TABLE_MAX];
	unsigned int i;
	int ret;

	if (t->nregions > VHOST_USER_MEM_TABLE_MAX ||
	    msg->hdr.size < offsetof(struct vhost_user_mem_table, regions) +
				    t->nregions * sizeof(t->regions[0])) {
		vhost_err("%s: memory table of %u regions in %u bytes",
			  vu_dev_name(dev), t->nregions, msg->hdr.size);
		return -EINVAL;
	}
	if (msg->nfds != t->nregions) {
		vhost_err("%s: memory table of %u regions with %u fds",
			  vu_dev_name(dev), t->nregions, msg->nfds);
		return -EINVAL;
	}
	for (i = 0; i < t->nregions; i++)
		fds[i] = vu_msg_take_fd(msg, i);
	vu_dev_pause(dev);
	ret = vhost_mem_set_table(&dev->mem, t->regions, fds, t->nregions);
	if (!ret)
		mem_changed(dev);
	vu_dev_resume(dev);
	return ret;
}

static int h_set_log_base(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_log *l = &msg->payload.log;
	int ret;

	vu_dev_pause(dev);
	ret = vhost_mem_set_log(&dev->mem, vu_msg_take_fd(msg, 0), l->mmap_size,
				l->mmap_offset);
	vu_dev_resume(dev);
	/* QEMU waits for this reply and checks only its request field */
	vu_reply_u64(msg, 0);
	return ret;
}

static int h_set_log_fd(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	if (dev->log_fd >= 0)
		close(dev->log_fd);
	dev->log_fd = vu_msg_take_fd(msg, 0);
	return 0;
}

/* Packed rings negotiated: sizes, bases and ring layout differ. */
static bool dev_packed(const struct vhost_dev *dev)
{
	return dev->features & (1ULL << VIRTIO_F_RING_PACKED);
}

static int h_set_vring_num(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_vring_state *s = &msg->payload.state;
	struct vhost_vq *vq = vu_msg_vq(dev, s->index);

	if (!vq)
		return -EINVAL;
	if (!s->num || s->num > VHOST_VQ_MAX_SIZE ||
	    (!dev_packed(dev) && (s->num & (s->num - 1)))) {
		vhost_err("%s: vq %u: size %u is not %s up to %u",
			  vu_dev_name(dev), s->index, s->num,
			  dev_packed(dev) ? "a size" : "a power of 2",
			  VHOST_VQ_MAX_SIZE);
		return -EINVAL;
	}
	vu_vq_halt(dev, vq);
	vq->num = (uint16_t)s->num;
	vu_vq_update(dev, vq);
	return 0;
}

static int h_set_vring_addr(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_vring_addr *a = &msg->payload.addr;
	struct vhost_vq *vq = vu_msg_vq(dev, a->index);

	if (!vq)
		return -EINVAL;
	/*
	 * Sent again on a running ring to switch used-ring logging on or off
	 * (migration): stop, swap, restart.  The addresses are the frontend's
	 * virtual addresses; they are translated at start, against the memory
	 * table of that moment.
	 */
	vu_vq_halt(dev, vq);
	vq->addr_flags = a->flags;
	vq->desc_uva = a->desc_user_addr;
	vq->used_uva = a->used_user_addr;
	vq->avail_uva = a->avail_user_addr;
	vq->log_guest_addr = a->log_guest_addr;
	vq->addr_set = true;
	vu_vq_update(dev, vq);
	return 0;
}

static int h_set_vring_base(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_vring_state *s = &msg->payload.state;
	struct vhost_vq *vq = vu_msg_vq(dev, s->index);

	if (!vq)
		return -EINVAL;
	if (!dev_packed(dev) && s->num > UINT16_MAX) {
		/* packed rings put wrap counters in the high bits */
		vhost_err("%s: vq %u: base 0x%x (packed ring?)", vu_dev_name(dev),
			  s->index, s->num);
		return -EINVAL;
	}
	vu_vq_halt(dev, vq);
	vhost_vq_set_base(vq, s->num, dev_packed(dev));
	vu_vq_update(dev, vq);
	return 0;
}

/*
 * Stops the ring and returns where the next avail entry is: the frontend
 * keeps it for a reconnect or sends it to the migration destination.  The
 * ring stays stopped until the next SET_VRING_KICK; a broken ring gets a
 * fresh start then.
 */
static int h_get_vring_base(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct vhost_user_vring_state *s = &msg->payload.state;
	struct vhost_vq *vq = vu_msg_vq(dev, s->index);

	if (!vq)
		return -EINVAL;
	vu_vq_halt(dev, vq);
	s->num = vhost_vq_base(vq, dev_packed(dev));
	msg->hdr.size = sizeof(*s);
	if (dev_packed(dev))
		vhost_jr_told(vq, s->num); /* the frontend knows it now */

	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	vq->kick_fd = -1;
	vq->kick_set = false;
	vq->kick_polling = false;
	if (vhost_vq_broken(vq)) {
		vhost_info("%s: vq %u stopped by the frontend after: %s",
			   vu_dev_name(dev), vq->index, vq->broken_reason);
		__atomic_store_n(&vq->broken, 0, __ATOMIC_RELEASE);
		vq->broken_reason[0] = '\0';
	}
	return 0;
}

static int h_set_vring_enable(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_vring_state *s = &msg->payload.state;
	struct vhost_vq *vq = vu_msg_vq(dev, s->index);

	if (!vq)
		return -EINVAL;
	if (s->num > 1) {
		vhost_err("%s: vq %u: enable %u", vu_dev_name(dev), s->index,
			  s->num);
		return -EINVAL;
	}
	/*
	 * A started but disabled ring is stopped here rather than processed
	 * "without side effects" (draining TX): what DPDK does too.
	 */
	if (!s->num)
		vu_vq_halt(dev, vq);
	vq->enabled = s->num;
	vu_vq_update(dev, vq);
	return 0;
}

static int h_send_rarp(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	if (!dev->ops->send_rarp)
		return -EOPNOTSUPP;
	return dev->ops->send_rarp(dev, msg->payload.mac);
}

static int h_net_set_mtu(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	uint64_t mtu = msg->payload.u64;

	if (!dev->ops->set_mtu)
		return -EOPNOTSUPP;
	/* IPv4's minimum, and the largest an IP packet can be */
	if (mtu < 68 || mtu > 65535) {
		vhost_err("%s: NET_SET_MTU %llu: not an MTU (68-65535)",
			  vu_dev_name(dev), (unsigned long long)mtu);
		return -EINVAL;
	}
	return dev->ops->set_mtu(dev, (unsigned int)mtu);
}

/* The device config space is QEMU's for vhost-user-net. */
static int h_config_unsupported(struct vhost_dev *dev,
				struct vhost_user_msg *msg)
{
	(void)dev;
	(void)msg;
	return -EOPNOTSUPP;
}

#define H(req, f, minf, maxf, sz, rep)                                    \
	[VHOST_USER_##req] = { .name = #req, .fn = f, .min_fds = minf,    \
			       .max_fds = maxf, .size = sz, .reply = rep }
/* known, not implemented: every fd closed, an answer if one is due */
#define UNSUPPORTED(req, rep)                                              \
	[VHOST_USER_##req] = { .name = #req, .fn = NULL, .min_fds = 0,     \
			       .max_fds = VHOST_USER_MAX_FDS, .size = 0,   \
			       .reply = rep }

const struct vhost_user_handler vu_handlers[VHOST_USER_REQUEST_MAX] = {
	H(GET_FEATURES, h_get_features, 0, 0, 0, REPLY_PAYLOAD),
	H(SET_FEATURES, h_set_features, 0, 0, 8, REPLY_NONE),
	H(SET_OWNER, h_set_owner, 0, 0, 0, REPLY_NONE),
	H(RESET_OWNER, h_reset_owner, 0, 0, 0, REPLY_NONE),
	H(SET_MEM_TABLE, h_set_mem_table, 0, VHOST_USER_MEM_TABLE_MAX, 8,
	  REPLY_NONE),
	H(SET_LOG_BASE, h_set_log_base, 1, 1,
	  sizeof(struct vhost_user_log), REPLY_IF_LOG_SHMFD),
	H(SET_LOG_FD, h_set_log_fd, 1, 1, 0, REPLY_NONE),
	H(SET_VRING_NUM, h_set_vring_num, 0, 0,
	  sizeof(struct vhost_user_vring_state), REPLY_NONE),
	H(SET_VRING_ADDR, h_set_vring_addr, 0, 0,
	  sizeof(struct vhost_user_vring_addr), REPLY_NONE),
	H(SET_VRING_BASE, h_set_vring_base, 0, 0,
	  sizeof(struct vhost_user_vring_state), REPLY_NONE),
	H(GET_VRING_BASE, h_get_vring_base, 0, 0,
	  sizeof(struct vhost_user_vring_state), REPLY_PAYLOAD),
	H(SET_VRING_KICK, vu_h_set_vring_kick, 0, 1, 8, REPLY_NONE),
	H(SET_VRING_CALL, vu_h_set_vring_call, 0, 1, 8, REPLY_NONE),
	H(SET_VRING_ERR, vu_h_set_vring_err, 0, 1, 8, REPLY_NONE),
	H(GET_PROTOCOL_FEATURES, h_get_protocol_features, 0, 0, 0,
	  REPLY_PAYLOAD),
	H(SET_PROTOCOL_FEATURES, h_set_protocol_features, 0, 0, 8,
	  REPLY_NONE),
	H(GET_QUEUE_NUM, h_get_queue_num, 0, 0, 0, REPLY_PAYLOAD),
	H(SET_VRING_ENABLE, h_set_vring_enable, 0, 0,
	  sizeof(struct vhost_user_vring_state), REPLY_NONE),
	H(SEND_RARP, h_send_rarp, 0, 0, 8, REPLY_NONE),
	H(NET_SET_MTU, h_net_set_mtu, 0, 0, 8, REPLY_NONE),
	UNSUPPORTED(SET_BACKEND_REQ_FD, REPLY_NONE),
	UNSUPPORTED(IOTLB_MSG, REPLY_PAYLOAD),
	UNSUPPORTED(SET_VRING_ENDIAN, REPLY_NONE),
	H(GET_CONFIG, h_config_unsupported, 0, 0, 0, REPLY_PAYLOAD),
	H(SET_CONFIG, h_config_unsupported, 0, 0, 0, REPLY_NONE),
	UNSUPPORTED(CREATE_CRYPTO_SESSION, REPLY_PAYLOAD),
	UNSUPPORTED(CLOSE_CRYPTO_SESSION, REPLY_NONE),
	UNSUPPORTED(POSTCOPY_ADVISE, REPLY_PAYLOAD),
	UNSUPPORTED(POSTCOPY_LISTEN, REPLY_NONE),
	UNSUPPORTED(POSTCOPY_END, REPLY_PAYLOAD),
	UNSUPPORTED(GET_INFLIGHT_FD, REPLY_PAYLOAD),
	UNSUPPORTED(SET_INFLIGHT_FD, REPLY_NONE),
	UNSUPPORTED(GPU_SET_SOCKET, REPLY_NONE),
	UNSUPPORTED(RESET_DEVICE, REPLY_NONE),
	UNSUPPORTED(VRING_KICK, REPLY_NONE),
	H(GET_MAX_MEM_SLOTS, h_get_max_mem_slots, 0, 0, 0, REPLY_PAYLOAD),
	H(ADD_MEM_REG, h_add_mem_reg, 1, 1,
	  sizeof(struct vhost_user_mem_reg), REPLY_NONE),
	H(REM_MEM_REG, h_rem_mem_reg, 0, 1,
	  sizeof(struct vhost_user_mem_reg), REPLY_NONE),
	UNSUPPORTED(SET_STATUS, REPLY_NONE),
	UNSUPPORTED(GET_STATUS, REPLY_PAYLOAD),
};

const char *vhost_user_request_name(uint32_t request)
{
	if (request < ARRAY_SIZE(vu_handlers) && vu_handlers[request].name)
		return vu_handlers[request].name;
	return "UNKNOWN";
}

