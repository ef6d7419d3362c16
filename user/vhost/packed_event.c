// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A packed ring's event suppression (virtio 1.2, 2.8.10), device side:
 * whether the driver wants a call for what was used (its event area,
 * VRING_PACKED_EVENT_FLAG_DESC with EVENT_IDX), and the device's own state
 * in the device event area (kicks off, on, or at a descriptor).
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mem.h"
#include "packed_event.h"
#include "vq.h"
#include "vq_int.h"

/*
 * Did the used position pass the driver's event offset OFF_WRAP between
 * OLD and the current position (both "lin")?  vring_need_event() on the
 * 2 * num circle.
 */
static bool event_crossed(const struct vhost_vq *vq, uint16_t off_wrap,
			  unsigned int old)
{
	unsigned int m = 2u * vq->num, off = off_wrap & ~WRAP_BIT;
	unsigned int cur = lin(vq, vq->used_idx, vq->used_wrap), ev;

	if (off >= vq->num)
		return true; /* nonsense offset: a call is never wrong */
	ev = lin(vq, (uint16_t)off, off_wrap & WRAP_BIT);
	return (cur + m - ev - 1) % m < (cur + m - old) % m;
}

/* The driver's suppression state, both halves at once (it writes them so). */
static void driver_event_load(const struct vhost_vq *vq, uint16_t *off_wrap,
			      uint16_t *flags)
{
	uint32_t v = __atomic_load_n((const uint32_t *)vq->packed.driver_event,
				     __ATOMIC_RELAXED);
	struct vring_packed_desc_event ev;

	memcpy(&ev, &v, sizeof(ev));
	*off_wrap = le16toh(ev.off_wrap);
	*flags = le16toh(ev.flags);
}

bool packed_need_notify(struct vhost_vq *vq)
{
	uint16_t off_wrap, flags;
	unsigned int old;
	bool valid;

	if (vhost_vq_broken(vq))
		return false;
	/* the used flags before the suppression state: see split.c */
	smp_mb();
	driver_event_load(vq, &off_wrap, &flags);
	old = vq->signalled_used;
	valid = vq->signalled_used_valid;
	vq->signalled_used = (uint16_t)lin(vq, vq->used_idx, vq->used_wrap);
	vq->signalled_used_valid = true;
	if (flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return false;
	if (flags != VRING_PACKED_EVENT_FLAG_DESC || !vq->event_idx || !valid)
		return true;
	return event_crossed(vq, off_wrap, old);
}

bool packed_want_notify(struct vhost_vq *vq)
{
	uint16_t off_wrap, flags;

	if (vhost_vq_broken(vq))
		return false;
	if (!vq->event_idx || !vq->signalled_used_valid)
		return true; /* the flags are read when the decision is taken */
	smp_mb();
	driver_event_load(vq, &off_wrap, &flags);
	if (flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return false;
	if (flags != VRING_PACKED_EVENT_FLAG_DESC)
		return true;
	return event_crossed(vq, off_wrap, vq->signalled_used);
}

/* Our suppression state, both halves in one store (the driver reads so). */
static void device_event_set(struct vhost_vq *vq, uint16_t off_wrap,
			     uint16_t flags)
{
	struct vring_packed_desc_event ev = { .off_wrap = htole16(off_wrap),
					      .flags = htole16(flags) };
	uint32_t v;

	memcpy(&v, &ev, sizeof(v));
	__atomic_store_n((uint32_t *)vq->packed.device_event, v,
			 __ATOMIC_RELAXED);
	vq_log_ring(vq, vq->packed.device_event_gpa, sizeof(ev));
}

void packed_notify_disable(struct vhost_vq *vq)
{
	if (vq->kicks_off || vhost_vq_broken(vq))
		return;
	vq->kicks_off = true;
	device_event_set(vq, 0, VRING_PACKED_EVENT_FLAG_DISABLE);
}

bool packed_notify_enable(struct vhost_vq *vq)
{
	uint16_t pos = pos_pack(vq->last_avail_idx, vq->avail_wrap);

	if (vhost_vq_broken(vq))
		return false;
	vq->kicks_off = false;
	if (vq->event_idx)
		/* kick me when the descriptor I take next is made available */
		device_event_set(vq, pos, VRING_PACKED_EVENT_FLAG_DESC);
	else
		device_event_set(vq, 0, VRING_PACKED_EVENT_FLAG_ENABLE);
	/* publish, then look again (lost wakeup): see split.c */
	smp_mb();
	return desc_avail(flags_load(vq, vq->last_avail_idx), vq->avail_wrap);
}
