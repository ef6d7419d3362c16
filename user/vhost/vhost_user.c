// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vhost-user protocol, backend side: message reception, the handler table,
 * replies, and ring start/stop around configuration changes (see
 * vhost_user.h for the model).
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

#include "log.h"
#include "vhost_user.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef VIRTIO_F_NOTIFICATION_DATA
#define VIRTIO_F_NOTIFICATION_DATA 38
#endif

/*
 * Ring and transport features this library does not implement, whatever
 * the device offers: an IOMMU (IOTLB messages), driver data in
 * notifications, per-ring reset.  Packed rings are the device's choice.
 */
#define VHOST_LIB_UNSUPPORTED_FEATURES                 \
	((1ULL << VIRTIO_F_ACCESS_PLATFORM) |          \
	 (1ULL << VIRTIO_F_NOTIFICATION_DATA) |        \
	 (1ULL << VIRTIO_F_RING_RESET))

/* A reply that cannot be sent within this long drops the connection. */
#define VHOST_USER_SEND_TIMEOUT_MS 1000
/* Messages handled per readable event, so one port cannot starve others. */
#define VHOST_USER_RX_BUDGET 64

enum reply_kind {
	REPLY_NONE,	  /* a u64 ack only when NEED_REPLY is set */
	REPLY_PAYLOAD,	  /* always a reply; on error an empty one (size 0) */
	REPLY_IF_LOG_SHMFD, /* SET_LOG_BASE: a reply iff LOG_SHMFD was acked */
};

struct vhost_user_handler {
	const char *name;
	/* NULL: known but not supported (rejected, answered if due) */
	int (*fn)(struct vhost_dev *dev, struct vhost_user_msg *msg);
	uint8_t min_fds, max_fds;
	uint32_t size; /* minimum payload size */
	enum reply_kind reply;
};

/* --- rings: start and stop ------------------------------------------- */

static const char *dev_name(const struct vhost_dev *dev)
{
	return dev->name ? dev->name : "vhost";
}

/* Stop VQ if it runs: the device lets go of it before we touch it. */
static void vq_halt(struct vhost_dev *dev, struct vhost_vq *vq)
{
	if (!vq->running)
		return;
	dev->ops->queue_stop(dev, vq);
	vq->running = false;
	vhost_vq_stop(vq);
	vhost_dbg("%s: vq %u stopped", dev_name(dev), vq->index);
}

/* Start VQ if everything it needs is there and it is not running. */
static void vq_update(struct vhost_dev *dev, struct vhost_vq *vq)
{
	int ret;

	if (vq->running || !vhost_vq_ready(vq) || !dev->mem.nregions)
		return;
	ret = vhost_vq_start(vq, dev->features);
	if (ret) {
		vhost_err("%s: vq %u not started: ring not usable (%s)",
			  dev_name(dev), vq->index, strerror(-ret));
		return;
	}
	/* logged first: once started, the datapath state is the thread's */
	vhost_dbg("%s: vq %u starting (size %u, avail %u, used %u)",
		  dev_name(dev), vq->index, vq->num, vq->last_avail_idx,
		  vq->used_idx);
	ret = dev->ops->queue_start(dev, vq);
	if (ret) {
		vhost_err("%s: vq %u not started by the device: %s",
			  dev_name(dev), vq->index, strerror(-ret));
		vhost_vq_stop(vq);
		return;
	}
	vq->running = true;
}

/* Quiesce every ring before a device-wide change (memory, features, log). */
static void dev_pause(struct vhost_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_vqs; i++)
		vq_halt(dev, &dev->vqs[i]);
}

static void dev_resume(struct vhost_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_vqs; i++)
		vq_update(dev, &dev->vqs[i]);
}

static struct vhost_vq *msg_vq(struct vhost_dev *dev, uint32_t index)
{
	if (index >= dev->nr_vqs) {
		vhost_err("%s: vq index %u, the device has %u", dev_name(dev),
			  index, dev->nr_vqs);
		return NULL;
	}
	return &dev->vqs[index];
}

/* Take fd I of MSG: the dispatcher will not close it. */
static int msg_take_fd(struct vhost_user_msg *msg, unsigned int i)
{
	int fd = msg->fds[i];

	msg->fds[i] = -1;
	return fd;
}

static void msg_close_fds(struct vhost_user_msg *msg)
{
	unsigned int i;

	for (i = 0; i < msg->nfds; i++)
		if (msg->fds[i] >= 0)
			close(msg->fds[i]);
	msg->nfds = 0;
}

static void reply_u64(struct vhost_user_msg *msg, uint64_t v)
{
	msg->payload.u64 = v;
	msg->hdr.size = sizeof(msg->payload.u64);
}

/* --- handlers -------------------------------------------------------- */

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
	reply_u64(msg, features_offered(dev));
	return 0;
}

static int h_set_features(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	uint64_t f = msg->payload.u64, offered = features_offered(dev);
	uint64_t old = dev->features;
	int ret = 0;

	if (f & ~offered) {
		vhost_err("%s: frontend acked features 0x%llx not offered (offered 0x%llx)",
			  dev_name(dev), (unsigned long long)(f & ~offered),
			  (unsigned long long)offered);
		return -EINVAL;
	}
	/*
	 * Features change while rings run (VHOST_F_LOG_ALL at the start and
	 * end of a migration): the rings re-read them when restarted.
	 */
	dev_pause(dev);
	dev->features = f;
	if (dev->ops->set_features) {
		ret = dev->ops->set_features(dev, f);
		if (ret)
			dev->features = old;
	}
	dev_resume(dev);
	vhost_dbg("%s: features 0x%llx", dev_name(dev),
		  (unsigned long long)dev->features);
	return ret;
}

static int h_get_protocol_features(struct vhost_dev *dev,
				   struct vhost_user_msg *msg)
{
	reply_u64(msg, dev->protocol_features_offered);
	return 0;
}

static int h_set_protocol_features(struct vhost_dev *dev,
				   struct vhost_user_msg *msg)
{
	uint64_t f = msg->payload.u64;
	uint64_t extra = f & ~dev->protocol_features_offered;

	if (extra) {
		vhost_err("%s: frontend acked protocol features 0x%llx not offered",
			  dev_name(dev), (unsigned long long)extra);
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
		vq_halt(dev, &dev->vqs[i]);
		dev->vqs[i].enabled = false;
	}
	return 0;
}

static int h_get_queue_num(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	reply_u64(msg, dev->ops->get_queue_num ? dev->ops->get_queue_num(dev) :
						 dev->nr_vqs);
	return 0;
}

static int h_get_max_mem_slots(struct vhost_dev *dev,
			       struct vhost_user_msg *msg)
{
	(void)dev;
	reply_u64(msg, VHOST_MEM_MAX_REGIONS);
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
	dev_pause(dev);
	ret = vhost_mem_add(&dev->mem, &msg->payload.mem_reg.region,
			    msg_take_fd(msg, 0));
	if (!ret)
		mem_changed(dev);
	dev_resume(dev);
	return ret;
}

static int h_rem_mem_reg(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	int ret;

	/* an fd is tolerated (old QEMUs sent one) and closed unused */
	dev_pause(dev);
	ret = vhost_mem_remove(&dev->mem, &msg->payload.mem_reg.region);
	if (!ret)
		mem_changed(dev);
	dev_resume(dev);
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
			  dev_name(dev), t->nregions, msg->hdr.size);
		return -EINVAL;
	}
	if (msg->nfds != t->nregions) {
		vhost_err("%s: memory table of %u regions with %u fds",
			  dev_name(dev), t->nregions, msg->nfds);
		return -EINVAL;
	}
	for (i = 0; i < t->nregions; i++)
		fds[i] = msg_take_fd(msg, i);
	dev_pause(dev);
	ret = vhost_mem_set_table(&dev->mem, t->regions, fds, t->nregions);
	if (!ret)
		mem_changed(dev);
	dev_resume(dev);
	return ret;
}

static int h_set_log_base(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_log *l = &msg->payload.log;
	int ret;

	dev_pause(dev);
	ret = vhost_mem_set_log(&dev->mem, msg_take_fd(msg, 0), l->mmap_size,
				l->mmap_offset);
	dev_resume(dev);
	/* QEMU waits for this reply and checks only its request field */
	reply_u64(msg, 0);
	return ret;
}

static int h_set_log_fd(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	if (dev->log_fd >= 0)
		close(dev->log_fd);
	dev->log_fd = msg_take_fd(msg, 0);
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
	struct vhost_vq *vq = msg_vq(dev, s->index);

	if (!vq)
		return -EINVAL;
	if (!s->num || s->num > VHOST_VQ_MAX_SIZE ||
	    (!dev_packed(dev) && (s->num & (s->num - 1)))) {
		vhost_err("%s: vq %u: size %u is not %s up to %u",
			  dev_name(dev), s->index, s->num,
			  dev_packed(dev) ? "a size" : "a power of 2",
			  VHOST_VQ_MAX_SIZE);
		return -EINVAL;
	}
	vq_halt(dev, vq);
	vq->num = (uint16_t)s->num;
	vq_update(dev, vq);
	return 0;
}

static int h_set_vring_addr(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_vring_addr *a = &msg->payload.addr;
	struct vhost_vq *vq = msg_vq(dev, a->index);

	if (!vq)
		return -EINVAL;
	/*
	 * Sent again on a running ring to switch used-ring logging on or off
	 * (migration): stop, swap, restart.  The addresses are the frontend's
	 * virtual addresses; they are translated at start, against the memory
	 * table of that moment.
	 */
	vq_halt(dev, vq);
	vq->addr_flags = a->flags;
	vq->desc_uva = a->desc_user_addr;
	vq->used_uva = a->used_user_addr;
	vq->avail_uva = a->avail_user_addr;
	vq->log_guest_addr = a->log_guest_addr;
	vq->addr_set = true;
	vq_update(dev, vq);
	return 0;
}

static int h_set_vring_base(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_vring_state *s = &msg->payload.state;
	struct vhost_vq *vq = msg_vq(dev, s->index);

	if (!vq)
		return -EINVAL;
	if (dev_packed(dev)) {
		vq_halt(dev, vq);
		vhost_vq_packed_set_base(vq, s->num);
		vq_update(dev, vq);
		return 0;
	}
	if (s->num > UINT16_MAX) {
		/* packed rings put wrap counters in the high bits */
		vhost_err("%s: vq %u: base 0x%x (packed ring?)", dev_name(dev),
			  s->index, s->num);
		return -EINVAL;
	}
	vq_halt(dev, vq);
	vq->last_avail_idx = (uint16_t)s->num;
	vq->shadow_avail_idx = vq->last_avail_idx;
	vq->used_idx = vq->last_avail_idx;
	vq->sync_used = true;
	vq_update(dev, vq);
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
	struct vhost_vq *vq = msg_vq(dev, s->index);

	if (!vq)
		return -EINVAL;
	vq_halt(dev, vq);
	s->num = dev_packed(dev) ? vhost_vq_packed_base(vq) :
				   vq->last_avail_idx;
	msg->hdr.size = sizeof(*s);

	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	vq->kick_fd = -1;
	vq->kick_set = false;
	vq->kick_polling = false;
	if (vhost_vq_broken(vq)) {
		vhost_info("%s: vq %u stopped by the frontend after: %s",
			   dev_name(dev), vq->index, vq->broken_reason);
		__atomic_store_n(&vq->broken, 0, __ATOMIC_RELEASE);
		vq->broken_reason[0] = '\0';
	}
	return 0;
}

/*
 * SET_VRING_KICK/CALL/ERR: u64 with the index in bits 0-7 and bit 8 set
 * when no fd comes with it.  The fd count must agree with that bit.
 */
static struct vhost_vq *vring_fd_parse(struct vhost_dev *dev,
				       struct vhost_user_msg *msg, int *fd)
{
	uint64_t u = msg->payload.u64;
	bool nofd = u & VHOST_USER_VRING_NOFD_MASK;
	unsigned int index = u & VHOST_USER_VRING_IDX_MASK;
	struct vhost_vq *vq = msg_vq(dev, index);

	if (!vq)
		return NULL;
	if (msg->nfds != (nofd ? 0u : 1u)) {
		vhost_err("%s: %s for vq %u: %u fds, invalid-fd flag %s",
			  dev_name(dev),
			  vhost_user_request_name(msg->hdr.request), index,
			  msg->nfds, nofd ? "set" : "clear");
		return NULL;
	}
	*fd = nofd ? -1 : msg_take_fd(msg, 0);
	return vq;
}

/*
 * Is FD an eventfd?  /proc/self/fd says so ("anon_inode:[eventfd]");
 * without /proc, an fd without a file type (an anonymous inode) is taken
 * for one, and sockets, regular files and devices are not.
 */
static bool fd_is_eventfd(int fd, const struct stat *st)
{
	char path[32], link[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return !(st->st_mode & S_IFMT);
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[eventfd]");
}

/*
 * Make a frontend's kick (READER), call or error fd one that the queue
 * thread can read or write without ever waiting.  O_NONBLOCK on the fd
 * as received is not enough: the flag belongs to the open file, which
 * the frontend shares and may change back at any time.
 *
 * - A pipe or FIFO is opened again through /proc/self/fd/N with
 *   O_NONBLOCK: a new open file of the same pipe, ours alone.
 * - An eventfd cannot be opened again (the kernel answers ENXIO for an
 *   anonymous inode): the shared flag is set, and a frontend that clears
 *   it and fills the counter makes the thread wait in write() until the
 *   device layer interrupts it (vhost_vq_fd_busy()); the ring then stops
 *   writing that fd.
 * - Anything else (a socket, a regular file, a device) is refused.
 *
 * Returns the fd to keep (FD itself or its replacement; FD is closed when
 * replaced) or -errno (FD closed).
 */
static int ring_fd_own(struct vhost_dev *dev, unsigned int index,
		       const char *what, int fd, bool reader)
{
	char path[32];
	struct stat st;
	int nfd, fl, ret;

	if (fstat(fd, &st)) {
		ret = -errno;
		goto err;
	}
	if (S_ISFIFO(st.st_mode)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		nfd = open(path, (reader ? O_RDONLY : O_WRONLY) | O_NONBLOCK |
					 O_CLOEXEC);
		if (nfd >= 0) {
			close(fd);
			return nfd;
		}
		/*
		 * ENXIO: a pipe without a reader (writes fail with EPIPE and
		 * never wait); else /proc is not there: the shared flag.
		 */
		if (errno != ENXIO)
			vhost_warn("%s: vq %u: %s pipe cannot be reopened (%s): using the frontend's open file",
				   dev_name(dev), index, what,
				   strerror(errno));
	} else if (!fd_is_eventfd(fd, &st)) {
		vhost_err("%s: vq %u: %s fd is neither an eventfd nor a pipe (mode 0%o)",
			  dev_name(dev), index, what, st.st_mode & S_IFMT);
		ret = -EINVAL;
		goto err;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (!(fl & O_NONBLOCK) &&
		       fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)) {
		ret = -errno;
		goto err;
	}
	return fd;
err:
	if (ret != -EINVAL)
		vhost_err("%s: vq %u: %s fd: %s", dev_name(dev), index, what,
			  strerror(-ret));
	close(fd);
	return ret;
}

static void fd_replace(int *slot, int fd)
{
	if (*slot >= 0)
		close(*slot);
	*slot = fd;
}

static int h_set_vring_kick(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct vhost_vq *vq;
	int fd;

	vq = vring_fd_parse(dev, msg, &fd);
	if (!vq)
		return -EINVAL;
	/* kick_drain() must not block (ring_fd_own()) */
	if (fd >= 0) {
		fd = ring_fd_own(dev, vq->index, "kick", fd, true);
		if (fd < 0)
			return fd;
	}
	vq_halt(dev, vq);
	fd_replace(&vq->kick_fd, fd);
	vq->kick_polling = fd < 0;
	vq->kick_set = true;
	/* without protocol features there is no SET_VRING_ENABLE */
	if (!vhost_dev_has_feature(dev, VHOST_USER_F_PROTOCOL_FEATURES))
		vq->enabled = true;
	vq_update(dev, vq);
	return 0;
}

static int h_set_vring_call(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct vhost_vq *vq;
	int fd;

	vq = vring_fd_parse(dev, msg, &fd);
	if (!vq)
		return -EINVAL;
	if (fd >= 0) {
		fd = ring_fd_own(dev, vq->index, "call", fd, false);
		if (fd < 0)
			return fd;
	}
	/*
	 * QEMU swaps the call fd on a running ring (guest masks/unmasks the
	 * interrupt).  The queue thread may be in write(call_fd): stop it
	 * before closing, or the write could land on a reused fd number.
	 */
	vq_halt(dev, vq);
	fd_replace(&vq->call_fd, fd);
	vq->call_stuck = false;
	vq_update(dev, vq);
	return 0;
}

static int h_set_vring_err(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct vhost_vq *vq;
	int fd;

	vq = vring_fd_parse(dev, msg, &fd);
	if (!vq)
		return -EINVAL;
	if (fd >= 0) {
		fd = ring_fd_own(dev, vq->index, "error", fd, false);
		if (fd < 0)
			return fd;
	}
	vq_halt(dev, vq);
	fd_replace(&vq->err_fd, fd);
	vq->err_stuck = false;
	vq_update(dev, vq);
	return 0;
}

static int h_set_vring_enable(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	const struct vhost_user_vring_state *s = &msg->payload.state;
	struct vhost_vq *vq = msg_vq(dev, s->index);

	if (!vq)
		return -EINVAL;
	if (s->num > 1) {
		vhost_err("%s: vq %u: enable %u", dev_name(dev), s->index,
			  s->num);
		return -EINVAL;
	}
	/*
	 * A started but disabled ring is stopped here rather than processed
	 * "without side effects" (draining TX): what DPDK does too.
	 */
	if (!s->num)
		vq_halt(dev, vq);
	vq->enabled = s->num;
	vq_update(dev, vq);
	return 0;
}

static int h_send_rarp(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	if (!dev->ops->send_rarp)
		return -EOPNOTSUPP;
	return dev->ops->send_rarp(dev, msg->payload.mac);
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

static const struct vhost_user_handler handlers[VHOST_USER_REQUEST_MAX] = {
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
	H(SET_VRING_KICK, h_set_vring_kick, 0, 1, 8, REPLY_NONE),
	H(SET_VRING_CALL, h_set_vring_call, 0, 1, 8, REPLY_NONE),
	H(SET_VRING_ERR, h_set_vring_err, 0, 1, 8, REPLY_NONE),
	H(GET_PROTOCOL_FEATURES, h_get_protocol_features, 0, 0, 0,
	  REPLY_PAYLOAD),
	H(SET_PROTOCOL_FEATURES, h_set_protocol_features, 0, 0, 8,
	  REPLY_NONE),
	H(GET_QUEUE_NUM, h_get_queue_num, 0, 0, 0, REPLY_PAYLOAD),
	H(SET_VRING_ENABLE, h_set_vring_enable, 0, 0,
	  sizeof(struct vhost_user_vring_state), REPLY_NONE),
	H(SEND_RARP, h_send_rarp, 0, 0, 8, REPLY_NONE),
	UNSUPPORTED(NET_SET_MTU, REPLY_NONE),
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
	if (request < ARRAY_SIZE(handlers) && handlers[request].name)
		return handlers[request].name;
	return "UNKNOWN";
}

/* --- sending --------------------------------------------------------- */

static int send_all(int fd, struct iovec *iov, int iovcnt)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = iovcnt };
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	ssize_t n;

	while (mh.msg_iovlen) {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			/* a frontend that does not read its replies: give up */
			n = poll(&pfd, 1, VHOST_USER_SEND_TIMEOUT_MS);
			if (n < 0 && errno != EINTR)
				return -errno;
			if (!n)
				return -ETIMEDOUT;
			continue;
		}
		while (mh.msg_iovlen && (size_t)n >= mh.msg_iov->iov_len) {
			n -= mh.msg_iov->iov_len;
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen) {
			uint8_t *base = mh.msg_iov->iov_base;

			mh.msg_iov->iov_base = base + n;
			mh.msg_iov->iov_len -= n;
		}
	}
	return 0;
}

static int send_reply(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct iovec iov[2] = {
		{ .iov_base = &msg->hdr, .iov_len = sizeof(msg->hdr) },
		{ .iov_base = &msg->payload, .iov_len = msg->hdr.size },
	};
	int ret;

	/* exactly version | REPLY: QEMU compares the whole flags word */
	msg->hdr.flags = VHOST_USER_VERSION | VHOST_USER_REPLY_MASK;
	ret = send_all(dev->fd, iov, msg->hdr.size ? 2 : 1);
	if (ret)
		vhost_err("%s: sending the %s reply: %s", dev_name(dev),
			  vhost_user_request_name(msg->hdr.request),
			  strerror(-ret));
	return ret;
}

/* --- dispatch -------------------------------------------------------- */

static int dispatch(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	uint32_t req = msg->hdr.request;
	bool need_reply = msg->hdr.flags & VHOST_USER_NEED_REPLY_MASK;
	const struct vhost_user_handler *h = NULL;
	bool payload_reply = false;
	int ret;

	if (req < ARRAY_SIZE(handlers) && handlers[req].name)
		h = &handlers[req];
	if (!h) {
		vhost_err("%s: unknown request %u (size %u, %u fds)%s, ignored",
			  dev_name(dev), req, msg->hdr.size, msg->nfds,
			  need_reply ? ", answering with an error" : "");
		ret = -EOPNOTSUPP;
		goto reply;
	}
	payload_reply = h->reply == REPLY_PAYLOAD ||
			(h->reply == REPLY_IF_LOG_SHMFD &&
			 dev->protocol_features &
				 (1ULL << VHOST_USER_PROTOCOL_F_LOG_SHMFD));
	if (!h->fn) {
		vhost_err("%s: request %s not supported, ignored", dev_name(dev),
			  h->name);
		ret = -EOPNOTSUPP;
		goto reply;
	}
	if (msg->nfds < h->min_fds || msg->nfds > h->max_fds) {
		vhost_err("%s: %s with %u fds, expected %u..%u: rejected",
			  dev_name(dev), h->name, msg->nfds, h->min_fds,
			  h->max_fds);
		ret = -EINVAL;
		goto reply;
	}
	if (msg->hdr.size < h->size) {
		vhost_err("%s: %s with a %u byte payload, expected %u: rejected",
			  dev_name(dev), h->name, msg->hdr.size, h->size);
		ret = -EINVAL;
		goto reply;
	}
	vhost_dbg("%s: %s (size %u, %u fds)", dev_name(dev), h->name,
		  msg->hdr.size, msg->nfds);
	ret = h->fn(dev, msg);
	if (ret)
		vhost_err("%s: %s failed: %s", dev_name(dev), h->name,
			  strerror(-ret));

reply:
	msg_close_fds(msg);
	if (payload_reply) {
		if (ret)
			msg->hdr.size = 0; /* the spec's error indication */
		return send_reply(dev, msg);
	}
	if (need_reply) {
		/* REPLY_ACK: 0 success, non-zero failure */
		reply_u64(msg, ret ? 1 : 0);
		return send_reply(dev, msg);
	}
	return 0;
}

/* --- receiving ------------------------------------------------------- */

static void rx_reset(struct vhost_user_rx *rx)
{
	msg_close_fds(&rx->msg);
	memset(rx, 0, sizeof(*rx));
}

/*
 * One recvmsg() of at most WANT bytes (never past the current message, so
 * fds of the next one are not picked up with this one).  Collected fds go
 * to RX's message.  Returns bytes read, 0 at EOF, -errno.
 */
static ssize_t rx_recv(struct vhost_dev *dev, void *dst, size_t want)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VHOST_USER_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = dst, .iov_len = want };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct vhost_user_msg *msg = &dev->rx.msg;
	bool too_many = false;
	struct cmsghdr *c;
	ssize_t n;

	do {
		n = recvmsg(dev->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;

	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t i, nfd;
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (msg->nfds < VHOST_USER_MAX_FDS)
				msg->fds[msg->nfds++] = fd;
			else {
				close(fd);
				too_many = true;
			}
		}
	}
	/* MSG_CTRUNC: the kernel dropped fds that did not fit */
	if (too_many || (mh.msg_flags & MSG_CTRUNC)) {
		vhost_err("%s: more than %d fds in one message", dev_name(dev),
			  VHOST_USER_MAX_FDS);
		return -EPROTO;
	}
	return n;
}

/* 1: a whole message is in dev->rx.msg; 0: need more input; -errno. */
static int rx_step(struct vhost_dev *dev)
{
	struct vhost_user_rx *rx = &dev->rx;
	const size_t hsize = sizeof(rx->msg.hdr);

	for (;;) {
		size_t want;
		void *dst;
		ssize_t n;

		if (rx->got < hsize) {
			dst = (uint8_t *)&rx->msg.hdr + rx->got;
			want = hsize - rx->got;
		} else {
			size_t have = rx->got - hsize;

			if (have == rx->msg.hdr.size)
				return 1;
			dst = (uint8_t *)&rx->msg.payload + have;
			want = rx->msg.hdr.size - have;
		}
		n = rx_recv(dev, dst, want);
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return 0;
		if (n < 0)
			return (int)n;
		if (!n) {
			if (rx->got || rx->msg.nfds) {
				vhost_err("%s: truncated message: connection closed after %zu of %zu bytes",
					  dev_name(dev), rx->got,
					  rx->got < hsize ?
						  hsize :
						  hsize + rx->msg.hdr.size);
				return -EPROTO;
			}
			vhost_info("%s: frontend closed the connection",
				   dev_name(dev));
			return -ECONNRESET;
		}
		rx->got += (size_t)n;
		if (rx->got != hsize)
			continue;
		/* the header is complete: can the payload be trusted? */
		if ((rx->msg.hdr.flags & VHOST_USER_VERSION_MASK) !=
		    VHOST_USER_VERSION) {
			vhost_err("%s: message version %u (flags 0x%x), expected %u",
				  dev_name(dev),
				  rx->msg.hdr.flags & VHOST_USER_VERSION_MASK,
				  rx->msg.hdr.flags, VHOST_USER_VERSION);
			return -EPROTO;
		}
		if (rx->msg.hdr.size > VHOST_USER_PAYLOAD_MAX) {
			vhost_err("%s: %s with a %u byte payload, at most %zu",
				  dev_name(dev),
				  vhost_user_request_name(rx->msg.hdr.request),
				  rx->msg.hdr.size, VHOST_USER_PAYLOAD_MAX);
			return -EMSGSIZE;
		}
	}
}

int vhost_dev_handle_input(struct vhost_dev *dev)
{
	int budget = VHOST_USER_RX_BUDGET, ret;

	if (dev->fd < 0)
		return -ENOTCONN;
	while (budget--) {
		ret = rx_step(dev);
		if (ret <= 0)
			return ret;
		ret = dispatch(dev, &dev->rx.msg);
		rx_reset(&dev->rx);
		if (ret)
			return ret;
	}
	return 0;
}

/* --- lifetime -------------------------------------------------------- */

int vhost_dev_init(struct vhost_dev *dev, const char *name,
		   unsigned int nr_vqs, const struct vhost_dev_ops *ops,
		   void *priv)
{
	unsigned int i;

	memset(dev, 0, sizeof(*dev));
	if (!nr_vqs || nr_vqs > VHOST_USER_MAX_VQS || !ops ||
	    !ops->get_features || !ops->queue_start || !ops->queue_stop)
		return -EINVAL;
	dev->vqs = calloc(nr_vqs, sizeof(*dev->vqs));
	if (!dev->vqs)
		return -ENOMEM;
	dev->name = name;
	dev->ops = ops;
	dev->priv = priv;
	dev->fd = -1;
	dev->log_fd = -1;
	dev->nr_vqs = nr_vqs;
	dev->protocol_features_offered = VHOST_USER_PROTOCOL_FEATURES;
	/* do not promise a RARP nobody will send */
	if (!ops->send_rarp)
		dev->protocol_features_offered &=
			~(1ULL << VHOST_USER_PROTOCOL_F_RARP);
	vhost_mem_init(&dev->mem);
	for (i = 0; i < nr_vqs; i++)
		vhost_vq_init(&dev->vqs[i], i, name, &dev->mem);
	return 0;
}

int vhost_dev_attach(struct vhost_dev *dev, int fd)
{
	int fl;

	if (dev->fd >= 0)
		return -EBUSY;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	dev->fd = fd;
	rx_reset(&dev->rx);
	vhost_info("%s: frontend connected", dev_name(dev));
	if (dev->ops->connected)
		dev->ops->connected(dev);
	return 0;
}

void vhost_dev_disconnect(struct vhost_dev *dev)
{
	bool was_connected = dev->fd >= 0;
	unsigned int i;

	/* rings first: device threads must let go of memory before unmap */
	dev_pause(dev);
	if (was_connected && dev->ops->disconnected)
		dev->ops->disconnected(dev);
	for (i = 0; i < dev->nr_vqs; i++)
		vhost_vq_reset(&dev->vqs[i]);
	vhost_mem_cleanup(&dev->mem);
	dev->features = 0;
	dev->protocol_features = 0;
	dev->owner = false;
	if (dev->log_fd >= 0)
		close(dev->log_fd);
	dev->log_fd = -1;
	rx_reset(&dev->rx);
	if (was_connected) {
		close(dev->fd);
		vhost_info("%s: frontend disconnected, state reset",
			   dev_name(dev));
	}
	dev->fd = -1;
}

void vhost_dev_cleanup(struct vhost_dev *dev)
{
	if (!dev->vqs)
		return;
	vhost_dev_disconnect(dev);
	free(dev->vqs);
	dev->vqs = NULL;
	dev->nr_vqs = 0;
}
