/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* maps.c's functions for libvnet's own files (not libvnet.h). */
#ifndef LIBVNET_MAPS_INT_H
#define LIBVNET_MAPS_INT_H

#include "libvnet.h"

/* vnet_map_get() without vnet_pins_check() (status, detach) */
int vnet_map_get_any_ns(const char *ifname, enum vnet_map_id id,
			unsigned int flags, struct vnet_map *m,
			struct vnet_err *err);

/*
 * An mmapped entry's sequence count GEN (odd while a writer is in the
 * middle, then even and greater: struct vnet_limit's and struct
 * vnet_vm's gen).  vnet_seq_read: LEN bytes of SRC into DST while *GEN
 * held one even value, that value into *SEEN; 0, or -EAGAIN after 1000
 * tries.  vnet_seq_begin/end bracket a writer's stores.
 */
int vnet_seq_read(const __u32 *gen, const void *src, void *dst, size_t len,
		  __u32 *seen);
__u32 vnet_seq_begin(__u32 *gen);
void vnet_seq_end(__u32 *gen, __u32 begun);

#endif
