/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* status.c's functions for libvnet's own files (not libvnet.h). */
#ifndef LIBVNET_STATUS_INT_H
#define LIBVNET_STATUS_INT_H

#include <stdbool.h>
#include <bpf/bpf.h>
#include <linux/types.h>

/* the info of the BPF link FD: 0 or -errno */
int vnet_link_info(int fd, struct bpf_link_info *info);
/* the id of the program, map or link pinned at PIN of IFNAME; 0: none */
__u32 vnet_pinned_id(const char *ifname, const char *pin);

/* vnet's clsact filters: the handle and priority, on ingress and egress */
#define VNET_TC_LEGACY_HANDLE 0x766e /* "vn" */
#define VNET_TC_LEGACY_PRIO 0x766e
struct bpf_tc_hook;
struct bpf_tc_opts;
/* HOOK and O of vnet's clsact filter on IFINDEX's ingress or egress */
void vnet_legacy_tc_opts(int ifindex, bool ingress, struct bpf_tc_hook *hook,
			 struct bpf_tc_opts *o);
/*
 * The program of vnet's clsact filter on IFINDEX's ingress or egress (in
 * this thread's network namespace), 0 when there is none
 */
__u32 vnet_legacy_tc_prog(int ifindex, bool ingress);

#endif
