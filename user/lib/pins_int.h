/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pins.c's functions for libvnet's own files (user/lib/), not part of
 * libvnet.h: the pin directory of a device, the netns inode.
 */
#ifndef LIBVNET_PINS_INT_H
#define LIBVNET_PINS_INT_H

#include "libvnet.h"

/* VNET_PIN_ROOT/IFNAME/NAME */
int vnet_pin_dir_make(const char *ifname, struct vnet_err *err);
int vnet_pin_fd(int fd, const char *ifname, const char *name,
		struct vnet_err *err);
/* an fd of the pinned object, or -errno */
int vnet_pin_get(const char *ifname, const char *name);
/* everything under the pin dir goes: maps, links, programs */
int vnet_pin_dir_remove(const char *ifname);
/* why the pin directory DIR of IFNAME cannot be seen (stat set errno) */
int vnet_pins_missing(const char *ifname, const char *dir,
		      struct vnet_err *err);
/*
 * The inode of the calling thread's network namespace (vnetd enters one
 * per port).  The kernel's ns_common.inum is an unsigned int: what the BPF
 * programs compare (bpf/xmit.h) and what stat() returns, zero-extended.
 */
int vnet_netns_ino(__u32 *ino);
/*
 * flock(2) of the pin root (a bpffs directory: flock works on any inode),
 * which every change of the host-wide pins (the xmit dispatcher's, the
 * shared classifiers') is made under; returns the fd to unlock or -errno
 */
int vnet_pin_root_lock(void);
void vnet_pin_root_unlock(int fd);
/* -EEXIST when ST's pins are a present device's of another netns */
int vnet_pins_other_netns(const char *ifname, const struct vnet_status *st,
			  struct vnet_err *err);

#endif
