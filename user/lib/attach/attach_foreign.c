// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Attach with the XDP hook over a foreign XDP program (attach.c): name
 * the program, how it is attached and who holds its link, then refuse
 * or, with --force, take it off.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "attach_foreign_int.h"
#include "status_int.h"
/* Who holds bpf link LINK_ID open?  Fills "pid N (comm)" or "". */
static void link_holder(__u32 link_id, char *buf, size_t len)
{
	char path[512], line[256], comm[64];
	struct dirent *p, *f;
	DIR *proc, *fds;
	FILE *fp;
	__u32 id;

	buf[0] = '\0';
	proc = opendir("/proc");
	if (!proc)
		return;
	while (!buf[0] && (p = readdir(proc))) {
		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/fdinfo", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!buf[0] && (f = readdir(fds))) {
			snprintf(path, sizeof(path), "/proc/%.16s/fdinfo/%.16s",
				 p->d_name, f->d_name);
			fp = fopen(path, "r");
			if (!fp)
				continue;
			while (fgets(line, sizeof(line), fp)) {
				if (sscanf(line, "link_id: %u", &id) != 1 ||
				    id != link_id)
					continue;
				comm[0] = '\0';
				snprintf(path, sizeof(path), "/proc/%.16s/comm",
					 p->d_name);
				FILE *c = fopen(path, "r");
				if (c) {
					if (fgets(comm, sizeof(comm), c))
						comm[strcspn(comm, "\n")] = 0;
					fclose(c);
				}
				snprintf(buf, len, "pid %d (%.32s)",
					 atoi(p->d_name), comm);
				break;
			}
			fclose(fp);
		}
		closedir(fds);
	}
	closedir(proc);
}

/*
 * The XDP link that holds PROG_ID on IFINDEX, if it was attached with one.
 * ifindexes repeat across network namespaces (every new namespace numbers
 * its first device 2), program ids do not: match both.
 */
static __u32 xdp_link_of(int ifindex, __u32 prog_id)
{
	struct bpf_link_info info;
	__u32 id = 0;
	int fd;

	while (!bpf_link_get_next_id(id, &id)) {
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!vnet_link_info(fd, &info) && info.type == BPF_LINK_TYPE_XDP &&
		    (int)info.xdp.ifindex == ifindex &&
		    info.prog_id == prog_id) {
			close(fd);
			return id;
		}
		close(fd);
	}
	return 0;
}

/*
 * A foreign XDP program on the device: refuse (naming it), or with force
 * take it off.
 */
int vnet_foreign_xdp(const char *ifname, int ifindex, bool force,
		     struct vnet_err *err)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info pinfo = {};
	__u32 plen = sizeof(pinfo), link_id;
	char holder[128] = "", how[256];
	int fd, ret;

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0; /* cannot tell; the attach itself will say */
	if (!q.prog_id)
		return 0;
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (fd >= 0) {
		bpf_obj_get_info_by_fd(fd, &pinfo, &plen);
		close(fd);
	}
	link_id = xdp_link_of(ifindex, q.prog_id);
	if (link_id)
		link_holder(link_id, holder, sizeof(holder));
	if (link_id)
		snprintf(how, sizeof(how), "attached with bpf link %u%s%s",
			 link_id, holder[0] ? " held by " : "", holder);
	else
		snprintf(how, sizeof(how),
			 "attached through netlink, no process holds it");

	if (!force) {
		char ns[NAME_MAX + 8];

		vnet_err_set(err, "%s: a foreign XDP program is attached: '%s' (prog id %u, %s mode, %s); detach it first, use 'vnetctl%s attach %s --tx-hook xdp --force' to replace it, or keep it with the default tc hook ('vnetctl%s attach %s')",
			     ifname, pinfo.name[0] ? pinfo.name : "?",
			     q.prog_id, vnet_xdp_mode_name(q.attach_mode), how,
			     vnet_hint_netns(ns, sizeof(ns)), ifname, ns,
			     ifname);
		return -EBUSY;
	}
	if (link_id) {
		fd = bpf_link_get_fd_by_id(link_id);
		ret = fd < 0 ? -errno : bpf_link_detach(fd) ? -errno : 0;
		if (fd >= 0)
			close(fd);
	} else {
		__u32 flags = q.attach_mode == XDP_ATTACHED_SKB ?
				      XDP_FLAGS_SKB_MODE :
			      q.attach_mode == XDP_ATTACHED_HW ?
				      XDP_FLAGS_HW_MODE :
				      XDP_FLAGS_DRV_MODE;
		ret = bpf_xdp_detach(ifindex, flags, NULL) ? -errno : 0;
	}
	if (ret)
		vnet_err_set(err, "%s: cannot remove the foreign XDP program '%s' (id %u): %s",
			     ifname, pinfo.name, q.prog_id, strerror(-ret));
	return ret;
}
