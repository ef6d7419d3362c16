/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* maps.c's function for libvnet's own files (not libvnet.h). */
#ifndef LIBVNET_MAPS_INT_H
#define LIBVNET_MAPS_INT_H

#include "libvnet.h"

/* vnet_map_get() without vnet_pins_check() (status, detach) */
int vnet_map_get_any_ns(const char *ifname, enum vnet_map_id id,
			unsigned int flags, struct vnet_map *m,
			struct vnet_err *err);

#endif
