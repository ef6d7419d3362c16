/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* status.c's functions for libvnet's own files (not libvnet.h). */
#ifndef LIBVNET_STATUS_INT_H
#define LIBVNET_STATUS_INT_H

#include <bpf/bpf.h>
#include <linux/types.h>

/* the info of the BPF link FD: 0 or -errno */
int vnet_link_info(int fd, struct bpf_link_info *info);
/* the id of the program, map or link pinned at PIN of IFNAME; 0: none */
__u32 vnet_pinned_id(const char *ifname, const char *pin);

#endif
