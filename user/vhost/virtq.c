// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The virtqueue calls (virtq.h): each datapath call goes to the layout
 * the ring was started with (split.c, packed.c, through its ops table);
 * what does not depend on the layout is here: the dirty log of written
 * buffers, call and kick eventfds, a ring's configuration, start and
 * base.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>

#include "log.h"
#include "packed.h"
#include "split.h"
#include "virtq.h"
#include "vq_int.h"
#include "mem.h"

/* --- datapath: the layout's ------------------------------------------ */

int vhost_vq_pop_burst(struct vhost_vq *vq, struct vhost_vq_elem *elems,
		       unsigned int n)
{
	return vq->ops ? vq->ops->pop_burst(vq, elems, n) : -EIO;
}

unsigned int vhost_vq_avail_count(struct vhost_vq *vq)
{
	return vq->ops ? vq->ops->avail_count(vq) : 0;
}

void vhost_vq_rewind(struct vhost_vq *vq, unsigned int n)
{
	if (vq->ops)
		vq->ops->rewind(vq, n);
}

/* the layouts push what was checked here */
int vhost_vq_push_burst(struct vhost_vq *vq, const struct vhost_vq_used *used,
			unsigned int n)
{
	unsigned int i;

	if (!vq->ops || vhost_vq_broken(vq))
		return -EIO;
	if (n > vq->num)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (used[i].id >= vq->num) {
			vhost_err("%s: vq %u: push of id %u, ring size %u",
				  vq_name(vq), vq->index, used[i].id, vq->num);
			return -EINVAL;
		}
	}
	return vq->ops->push_burst(vq, used, n);
}

bool vhost_vq_need_notify(struct vhost_vq *vq)
{
	return vq->ops && vq->ops->need_notify(vq);
}

bool vhost_vq_avail_waiting(const struct vhost_vq *vq, uint32_t *pos)
{
	const struct vhost_vq_ops *ops = __atomic_load_n(&vq->ops, __ATOMIC_ACQUIRE);

	*pos = (uint32_t)__atomic_load_n(&vq->last_avail_idx, __ATOMIC_RELAXED) |
	       (uint32_t)vq->avail_wrap << 16;
	return ops && vq->running && !vhost_vq_broken(vq) &&
	       ops->avail_waiting(vq);
}

bool vhost_vq_want_notify(struct vhost_vq *vq)
{
	return vq->ops && vq->ops->want_notify(vq);
}

void vhost_vq_notify_disable(struct vhost_vq *vq)
{
	if (vq->ops)
		vq->ops->notify_disable(vq);
}

bool vhost_vq_notify_enable(struct vhost_vq *vq)
{
	return vq->ops && vq->ops->notify_enable(vq);
}

/* --- datapath: either layout ------------------------------------------- */

void vhost_vq_log_write(struct vhost_vq *vq, const struct vhost_vq_elem *elem,
			uint64_t len)
{
	unsigned int i;

	if (!vq->log_all || !len)
		return;
	smp_wmb(); /* data before the dirty bits, see vq_log_ring() */
	for (i = elem->out_num; i < elem->out_num + elem->in_num && len; i++) {
		uint64_t chunk = elem->iov[i].iov_len;

		if (chunk > len)
			chunk = len;
		vhost_mem_log_write(vq->mem, elem->gpa[i], chunk);
		len -= chunk;
	}
}

int vhost_vq_signal(struct vhost_vq *vq)
{
	if (vq->call_fd < 0 || vq->call_stuck)
		return 0;
	if (vq_fe_write(vq, vq->call_fd) < 0) {
		/*
		 * EAGAIN: an eventfd's counter is saturated (the guest has
		 * calls pending), or a pipe is full (nobody reads it).
		 */
		if (errno == EAGAIN)
			return 0;
		if (errno == EINTR) {
			vq->call_stuck = true;
			vhost_err("%s: vq %u: the call fd blocked the queue thread (a full eventfd whose O_NONBLOCK the frontend cleared): interrupted, no more interrupts to it until the frontend sends another",
				  vq_name(vq), vq->index);
			return 0;
		}
		return -errno;
	}
	return 0;
}

int vhost_vq_notify(struct vhost_vq *vq)
{
	int ret;

	if (!vq->ops || vhost_vq_broken(vq))
		return 0;
	if (!vhost_vq_need_notify(vq)) {
		vq->stats.calls_suppressed++;
		return 0;
	}
	ret = vhost_vq_signal(vq);
	if (ret)
		return ret;
	vq->stats.calls++;
	return 1;
}

void vhost_vq_drop_pages(struct vhost_vq *vq)
{
	if (vq->mem)
		vhost_mem_drop_pages(vq->mem);
}

uint64_t vhost_vq_kick_drain(struct vhost_vq *vq)
{
	uint64_t v;
	ssize_t n;

	if (vq->kick_fd < 0)
		return 0;
	/* EINTR: interrupted in a read the frontend made blocking (vq_int.h) */
	fd_op_mark(vq);
	n = read(vq->kick_fd, &v, sizeof(v));
	fd_op_mark(vq);
	if (n != sizeof(v))
		return 0;
	vq->stats.kicks += v;
	return v;
}

/* --- control ------------------------------------------------------------ */

void vhost_vq_init(struct vhost_vq *vq, unsigned int index, const char *name,
		   struct vhost_mem *mem)
{
	memset(vq, 0, sizeof(*vq));
	vq->index = index;
	vq->name = name;
	vq->mem = mem;
	vq->kick_fd = vq->call_fd = vq->err_fd = -1;
	vq->sync_used = true;
	vq->avail_wrap = vq->used_wrap = true; /* packed rings start so */
}

void vhost_vq_reset(struct vhost_vq *vq)
{
	struct vhost_vq_stats stats = vq->stats;
	const char *name = vq->name;
	struct vhost_mem *mem = vq->mem;
	unsigned int index = vq->index;
	void *priv = vq->priv, *journal = vq->journal;

	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	if (vq->call_fd >= 0)
		close(vq->call_fd);
	if (vq->err_fd >= 0)
		close(vq->err_fd);
	vhost_vq_packed_free(vq);
	vhost_vq_init(vq, index, name, mem);
	vq->priv = priv;
	vq->journal = journal;
	/* the counters outlive connections */
	vq->stats = stats;
}

bool vhost_vq_ready(const struct vhost_vq *vq)
{
	return vq->num && vq->addr_set && vq->kick_set && vq->enabled &&
	       !vhost_vq_broken(vq);
}

int vhost_vq_start(struct vhost_vq *vq, uint64_t features)
{
	const struct vhost_vq_ops *ops =
		features & (1ULL << VIRTIO_F_RING_PACKED) ? &vhost_vq_packed_ops :
							   &vhost_vq_split_ops;
	int ret;

	if (!vq->num || !vq->addr_set)
		return -EINVAL;
	vq->ops = NULL;
	vq->features = features;
	vq->event_idx = features & (1ULL << VIRTIO_RING_F_EVENT_IDX);
	vq->indirect = features & (1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	vq->log_all = (features & (1ULL << VHOST_F_LOG_ALL)) &&
		      vhost_mem_has_log(vq->mem);
	vq->log_used = vq->log_all &&
		       (vq->addr_flags & (1u << VHOST_VRING_F_LOG));
	vq->owe_call = false;
	ret = ops->start(vq);
	if (!ret && vq->owe_call)
		vhost_vq_notify(vq);
	vq->owe_call = false;
	return ret;
}

uint32_t vhost_vq_base(const struct vhost_vq *vq, bool packed)
{
	return packed ? vhost_vq_packed_base(vq) : vq->last_avail_idx;
}

void vhost_vq_set_base(struct vhost_vq *vq, uint32_t base, bool packed)
{
	if (packed) {
		vhost_vq_packed_set_base(vq, base);
		return;
	}
	vq->last_avail_idx = (uint16_t)base;
	vq->used_idx = vq->last_avail_idx;
	vq->sync_used = true;
}
