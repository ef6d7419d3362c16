// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What split (split.c) and packed (packed.c) rings share: a guest buffer
 * added to an element only inside guest memory, a ring area mapped, a
 * ring marked broken (logged once, the frontend's error fd signalled),
 * and a ring stopped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "vq_int.h"
#include "mem.h"

void vhost_vq_set_broken(struct vhost_vq *vq, const char *fmt, ...)
{
	int expected = 0;
	va_list ap;

	/* only the first reason is kept and logged */
	if (!__atomic_compare_exchange_n(&vq->broken, &expected, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(vq->broken_reason, sizeof(vq->broken_reason), fmt, ap);
	va_end(ap);
	vhost_err("%s: vq %u broken, stopped: %s", vq_name(vq), vq->index,
		  vq->broken_reason);
	/* QEMU reports "vhost vring error in virtqueue N" on this eventfd */
	if (vq->err_fd < 0 || vq->err_stuck || vq_fe_write(vq, vq->err_fd) >= 0)
		return;
	if (errno == EINTR) {
		vq->err_stuck = true;
		vhost_err("%s: vq %u: the error fd blocked the queue thread (a full eventfd whose O_NONBLOCK the frontend cleared): interrupted, not written again until the frontend sends another",
			  vq_name(vq), vq->index);
		return;
	}
	vhost_dbg("vq %u: error eventfd: %s", vq->index, strerror(errno));
}

int vhost_vq_elem_add(struct vhost_vq *vq, struct vhost_vq_elem *elem,
		      uint64_t addr, uint32_t len, bool write,
		      unsigned int *niov)
{
	int n;

	if (!write && elem->in_num) {
		vhost_vq_set_broken(vq, "chain at head %u: readable descriptor after a writable one",
				    elem->head);
		return -EINVAL;
	}
	if (!len)
		return 0;
	if (write)
		elem->in_len += len;
	else
		elem->out_len += len;
	if (elem->err)
		return 0; /* already too long: only the structure is walked */
	n = vhost_mem_gpa_to_iov(vq->mem, addr, len, &elem->iov[*niov],
				 &elem->gpa[*niov], VHOST_VQ_MAX_IOV - *niov);
	if (n == -ENOBUFS) {
		elem->err = -E2BIG;
		return 0;
	}
	if (n < 0) {
		vhost_vq_set_broken(vq, "chain at head %u: buffer 0x%llx+%u outside guest memory",
				    elem->head, (unsigned long long)addr,
				    len);
		return -EFAULT;
	}
	*niov += n;
	if (write)
		elem->in_num += n;
	else
		elem->out_num += n;
	return 0;
}

void *vhost_vq_map(struct vhost_vq *vq, const char *what, uint64_t uva,
		   uint64_t len, size_t align, uint64_t *gpa)
{
	void *p = vhost_mem_uva_to_host(vq->mem, uva, len);

	if (!p || (gpa && vhost_mem_uva_to_gpa(vq->mem, uva, gpa))) {
		vhost_err("%s: vq %u: %s 0x%llx+%llu is not inside one memory region",
			  vq_name(vq), vq->index, what, (unsigned long long)uva,
			  (unsigned long long)len);
		return NULL;
	}
	if ((uintptr_t)p % align) {
		vhost_err("%s: vq %u: %s 0x%llx is not %zu-byte aligned",
			  vq_name(vq), vq->index, what, (unsigned long long)uva,
			  align);
		return NULL;
	}
	return p;
}

/* Either layout's pointers: a ring that faulted in its start has some. */
void vhost_vq_stop(struct vhost_vq *vq)
{
	vq->ops = NULL;
	vq->split.desc = NULL;
	vq->split.avail = NULL;
	vq->split.used = NULL;
	vq->packed.desc = NULL;
	vq->packed.driver_event = vq->packed.device_event = NULL;
}
