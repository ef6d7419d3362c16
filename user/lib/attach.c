// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Attach mode: load the classifier, attach it to a tap, pin maps and links
 * under /sys/fs/bpf/vnet/<ifname>/ so that the attachment outlives the
 * command, and take it all down again.
 *
 * Hooks: the guest-TX direction uses tc ingress (default) or XDP; the
 * guest-RX direction uses tc egress.  tc ingress is the default because any
 * XDP program on a tap sends every GSO frame the guest writes through
 * generic XDP, which linearizes it: +60% CPU per 64 KB frame, measured in
 * docs/benchmarks.md, against 1-4% saved on small frames.  tc programs are attached with tcx
 * links (kernel >= 6.6); on older kernels they fall back to a clsact filter
 * (no link; the program is pinned instead).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "vnet.skel.h"

/* libbpf 1.1's uapi copy predates tcx (kernel 6.6) */
#define VNET_BPF_TCX_INGRESS 46
#define VNET_BPF_TCX_EGRESS 47
#define VNET_TC_LEGACY_HANDLE 0x766e /* "vn" */
#define VNET_TC_LEGACY_PRIO 0x766e

static const char *const vnet_map_names[] = { "stats", "queues", "config",
					      "info", "dp_stats" };

/*
 * The tap's pin directory, mode 0700 whatever the umask or an older
 * directory had.  The mode is set on the opened directory, never by name,
 * and something else at the path (a symlink, a file) is refused: a path
 * change by another process between mkdir() and chmod() must not move
 * the mode, or the pins, elsewhere.
 */
static int pin_dir_make(const char *ifname, struct vnet_err *err)
{
	char path[PATH_MAX];
	struct stat st;
	int ret, fd;

	if (mkdir(VNET_PIN_ROOT, 0700) && errno != EEXIST)
		goto fail;
	ret = vnet_pin_path(path, sizeof(path), ifname, NULL);
	if (ret)
		return ret;
	if (mkdir(path, 0700) && errno != EEXIST)
		goto fail;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (errno == ELOOP || errno == ENOTDIR)
			vnet_err_set(err, "%s is not a directory (a symlink or a file is there): remove it",
				     path);
		else
			vnet_err_set(err, "cannot open %s: %s", path,
				     strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || ((st.st_mode & 07777) != 0700 &&
			       fchmod(fd, 0700))) {
		ret = -errno;
		vnet_err_set(err, "cannot make %s mode 0700: %s", path,
			     strerror(errno));
		close(fd);
		return ret;
	}
	close(fd);
	return 0;
fail:
	ret = -errno;
	vnet_err_set(err, "cannot create %s/%s: %s", VNET_PIN_ROOT, ifname,
		     strerror(errno));
	return ret;
}

static int pin_fd(int fd, const char *ifname, const char *name,
		  struct vnet_err *err)
{
	char path[PATH_MAX];
	int ret;

	ret = vnet_pin_path(path, sizeof(path), ifname, name);
	if (ret)
		return ret;
	if (bpf_obj_pin(fd, path)) {
		ret = -errno;
		vnet_err_set(err, "cannot pin %s: %s", path, strerror(errno));
		return ret;
	}
	return 0;
}

static int pin_get(const char *ifname, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (vnet_pin_path(path, sizeof(path), ifname, name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* Everything under the pin dir goes: maps, links, programs. */
static int pin_dir_remove(const char *ifname)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (vnet_pin_path(dir, sizeof(dir), ifname, NULL))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && errno != ENOENT)
			ret = -errno;
	}
	closedir(d);
	if (rmdir(dir) && errno != ENOENT)
		ret = -errno;
	return ret;
}

/* Why the pin directory of IFNAME cannot be seen (stat failed). */
static int pins_missing(const char *ifname, const char *dir,
			struct vnet_err *err)
{
	int ret = -errno;

	if (errno == EACCES || errno == EPERM)
		vnet_err_set(err, "%s: cannot read %s: permission denied (vnetctl needs root)",
			     ifname, dir);
	else if (errno == ENOENT)
		vnet_err_set(err, "%s: vnet is not attached (no pins in %s)",
			     ifname, dir);
	else
		vnet_err_set(err, "%s: cannot read %s: %s", ifname, dir,
			     strerror(errno));
	return ret;
}

static int link_info(int fd, struct bpf_link_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, len);
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

static void hook_status(const char *ifname, const char *pin,
			struct vnet_hook_status *hs)
{
	struct bpf_link_info info;
	int fd = pin_get(ifname, pin);

	memset(hs, 0, sizeof(*hs));
	if (fd < 0)
		return;
	if (!link_info(fd, &info)) {
		hs->prog_id = info.prog_id;
		hs->link_id = info.id;
		/* xdp and tcx link info both start with the ifindex */
		hs->ifindex = info.xdp.ifindex;
	}
	close(fd);
}

/* Legacy (pre-tcx) tc attachment: a pinned program, present iff pinned. */
static void legacy_tc_status(const char *ifname, const char *pin,
			     __u32 ifindex, struct vnet_hook_status *hs)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = pin_get(ifname, pin);

	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		hs->prog_id = info.id;
		hs->ifindex = ifindex;
	}
	close(fd);
}

static __u32 pinned_prog_id(const char *ifname, const char *pin)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = pin_get(ifname, pin);

	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

/*
 * How the tap's vnet_xmit_rx runs: its own link (per-tap fallback), or the
 * shared dispatcher, which must have it in the tap's slot right now.
 */
static void xmit_status(const char *ifname, struct vnet_status *st)
{
	struct vnet_xmit_status xs;

	hook_status(ifname, VNET_PIN_LINK_XMIT, &st->xmit);
	if (st->xmit.prog_id) {
		st->xmit_attach = VNET_XMIT_PER_TAP;
		return;
	}
	st->xmit.prog_id = pinned_prog_id(ifname, VNET_PIN_PROG_XMIT);
	if (!st->xmit.prog_id || vnet_xmit_query(&xs, st->xmit.prog_id) ||
	    !xs.found)
		return;
	st->xmit_attach = VNET_XMIT_SHARED;
	st->xmit_slot = xs.slot;
	st->xmit_dispatcher_id = xs.prog_id;
	st->xmit_dispatcher_link_id = xs.link_id;
}

int vnet_status(const char *ifname, struct vnet_status *st,
		struct vnet_err *err)
{
	size_t qsize = sizeof(struct vnet_queue_state) * VNET_DIR_MAX *
		       VNET_MAX_QUEUES;
	const struct vnet_queue_state *qs;
	char dir[PATH_MAX];
	struct stat sb;
	__u32 key = 0;
	int fd, i;

	memset(st, 0, sizeof(*st));
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname);
	if (vnet_pin_path(dir, sizeof(dir), ifname, NULL))
		return -ENAMETOOLONG;
	if (stat(dir, &sb))
		return pins_missing(ifname, dir, err);

	fd = pin_get(ifname, "info");
	if (fd >= 0) {
		bpf_map_lookup_elem(fd, &key, &st->info);
		close(fd);
	}
	hook_status(ifname, VNET_PIN_LINK_XDP, &st->xdp);
	hook_status(ifname, VNET_PIN_LINK_TC_INGRESS, &st->tc_ingress);
	hook_status(ifname, VNET_PIN_LINK_TC_EGRESS, &st->tc_egress);
	xmit_status(ifname, st);
	if (!st->tc_egress.prog_id)
		legacy_tc_status(ifname, VNET_PIN_PROG_TC_EGRESS,
				 st->info.ifindex, &st->tc_egress);
	if (!st->tc_ingress.prog_id)
		legacy_tc_status(ifname, VNET_PIN_PROG_TC_INGRESS,
				 st->info.ifindex, &st->tc_ingress);
	st->xdp_mode = st->info.xdp_mode;
	/* a link loses its device when the device goes away */
	st->present = st->xdp.ifindex || st->tc_ingress.ifindex ||
		      st->tc_egress.ifindex;
	if (st->present && !st->tc_egress.link_id) {
		/* legacy tc only: ask the kernel whether the ifindex lives */
		char name[IF_NAMESIZE];

		st->present = if_indextoname(st->info.ifindex, name) &&
			      !strcmp(name, ifname);
	}

	fd = pin_get(ifname, "queues");
	if (fd >= 0) {
		qs = mmap(NULL, qsize, PROT_READ, MAP_SHARED, fd, 0);
		if (qs != MAP_FAILED) {
			for (i = 0; i < VNET_DIR_MAX * VNET_MAX_QUEUES; i++)
				if (qs[i].first_seen_ns)
					st->seen[i / VNET_MAX_QUEUES]
						[(i % VNET_MAX_QUEUES) / 64] |=
						1ull << (i % 64);
			munmap((void *)qs, qsize);
		}
		close(fd);
	}
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int vnet_list(char (*names)[IF_NAMESIZE], int max)
{
	struct dirent *de;
	DIR *d = opendir(VNET_PIN_ROOT);
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < max) {
		/* the shared dispatcher's pins: too long for a device name */
		if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE)
			continue;
		snprintf(names[n++], IF_NAMESIZE, "%.15s", de->d_name);
	}
	closedir(d);
	qsort(names, n, IF_NAMESIZE, name_cmp);
	return n;
}

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
		if (!link_info(fd, &info) && info.type == BPF_LINK_TYPE_XDP &&
		    (int)info.xdp.ifindex == ifindex &&
		    info.prog_id == prog_id) {
			close(fd);
			return id;
		}
		close(fd);
	}
	return 0;
}

const char *vnet_xdp_mode_name(__u32 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

/*
 * A foreign XDP program on the device: refuse (naming it), or with force
 * take it off.
 */
static int foreign_xdp(const char *ifname, int ifindex, bool force,
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

/* the calling thread's network namespace (vnetd enters one per port) */
static int netns_cookie(__u64 *ino)
{
	struct stat sb;

	if (stat("/proc/thread-self/ns/net", &sb) &&
	    stat("/proc/self/ns/net", &sb))
		return -errno;
	*ino = sb.st_ino;
	return 0;
}

/*
 * The pins are named by device only, so the pins of DEV may be those of a
 * device DEV in another network namespace.  -EEXIST (err says so) when
 * they belong to a present device of another namespace and either
 *  - this namespace has a device of that name (attaching, detaching,
 *    reading or configuring here would act on that other device), or
 *  - the command named its namespace (vnetctl -n NS) or runs in one that
 *    is not PID 1's: the pins are not that namespace's.
 * From the host's namespace, without a device of that name there, the
 * pins of a tap in a netns stay usable (vnetctl stats DEV from the host).
 * Pins of a device that is gone are nobody's: they may be read, replaced
 * and removed from anywhere.
 */
static int pins_of_other_netns(const char *ifname,
			       const struct vnet_status *st,
			       struct vnet_err *err)
{
	struct stat host;
	bool named;
	char other[NAME_MAX + 1];
	__u64 cur;

	if (!st->present || !st->info.netns_cookie || netns_cookie(&cur) ||
	    cur == st->info.netns_cookie)
		return 0;
	/* PID 1's may be unreadable (a container): -n NAME says it too */
	named = vnet_netns_named() ||
		(!stat("/proc/1/ns/net", &host) && host.st_ino != cur);
	if (!named && !if_nametoindex(ifname))
		return 0;
	if (vnet_netns_name(st->info.netns_cookie, other, sizeof(other)))
		snprintf(other, sizeof(other), "NETNS");
	vnet_err_set(err, "%s: the pins in %s/%s belong to a device %s in another network namespace (netns inode %llu; this one is %llu): vnet names its pins by device, so one attached %s per host, and a command acts only on the device of the namespace it runs in; use 'vnetctl -n %s' of that namespace, or detach it there ('vnetctl -n %s detach %s') or give this tap another name",
		     ifname, VNET_PIN_ROOT, ifname, ifname,
		     (unsigned long long)st->info.netns_cookie,
		     (unsigned long long)cur, ifname, other, other, ifname);
	return -EEXIST;
}

int vnet_pins_check(const char *ifname, struct vnet_err *err)
{
	struct vnet_status st;

	/* no pins: the caller's own open says so */
	if (vnet_status(ifname, &st, NULL))
		return 0;
	return pins_of_other_netns(ifname, &st, err);
}

/* tc: a tcx link if the kernel has tcx, else a legacy clsact filter. */
static int attach_tc(struct bpf_program *prog, int ifindex, bool ingress,
		     const char *ifname, struct vnet_err *err)
{
	int fd, ret;

	fd = bpf_link_create(bpf_program__fd(prog), ifindex,
			     ingress ? VNET_BPF_TCX_INGRESS :
				       VNET_BPF_TCX_EGRESS,
			     NULL);
	if (fd >= 0) {
		ret = pin_fd(fd, ifname,
			     ingress ? VNET_PIN_LINK_TC_INGRESS :
				       VNET_PIN_LINK_TC_EGRESS,
			     err);
		close(fd);
		return ret;
	}
	if (errno != EINVAL && errno != EOPNOTSUPP) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot attach the tc %s program: %s",
			     ifname, ingress ? "ingress" : "egress",
			     strerror(errno));
		return ret;
	}

	/* kernel without tcx: clsact + direct-action filter */
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = ingress ? BPF_TC_INGRESS :
						      BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, topts,
			    .handle = VNET_TC_LEGACY_HANDLE,
			    .priority = VNET_TC_LEGACY_PRIO,
			    .prog_fd = bpf_program__fd(prog),
			    .flags = BPF_TC_F_REPLACE);
	ret = bpf_tc_hook_create(&hook);
	if (ret && ret != -EEXIST) {
		vnet_err_set(err, "%s: the kernel has neither tcx nor a usable clsact qdisc (CONFIG_NET_SCH_INGRESS): %s",
			     ifname, strerror(-ret));
		return ret;
	}
	ret = bpf_tc_attach(&hook, &topts);
	if (ret) {
		vnet_err_set(err, "%s: cannot attach the tc %s filter: %s",
			     ifname, ingress ? "ingress" : "egress",
			     strerror(-ret));
		return ret;
	}
	return pin_fd(bpf_program__fd(prog), ifname,
		      ingress ? VNET_PIN_PROG_TC_INGRESS :
				VNET_PIN_PROG_TC_EGRESS,
		      err);
}

static void detach_legacy_tc(int ifindex, bool ingress)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = ingress ? BPF_TC_INGRESS :
						      BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, topts,
			    .handle = VNET_TC_LEGACY_HANDLE,
			    .priority = VNET_TC_LEGACY_PRIO);

	bpf_tc_detach(&hook, &topts);
}

static void config_defaults(int fd)
{
	struct vnet_config c = {
		/* coalescing on, urgent/push bypass on (abi.h) */
		.tx_frames = VNET_DEFAULT_TX_FRAMES,
		.tx_usecs = VNET_DEFAULT_TX_USECS,
		.rx_frames = VNET_DEFAULT_RX_FRAMES,
		.rx_usecs = VNET_DEFAULT_RX_USECS,
		.min_frames = 1,
		.max_frames = 64,
		.min_usecs = 0,
		.max_usecs = 256,
	};
	__u32 q;

	for (q = 0; q < VNET_MAX_QUEUES; q++)
		bpf_map_update_elem(fd, &q, &c, BPF_ANY);
}

/* Take the tap's vnet_xmit_rx out of the shared dispatcher, if it is in. */
static void detach_xmit(const char *ifname)
{
	__u32 id = pinned_prog_id(ifname, VNET_PIN_PROG_XMIT);

	if (id)
		vnet_xmit_unregister(ifname, id);
}

/*
 * Guest-RX counting at net_dev_start_xmit: the tap's vnet_xmit_rx is
 * pinned (prog_xmit) and tail-called by the one shared dispatcher
 * (xmit.c), so that frames of other devices do not run one program per
 * attached tap.  If the kernel refuses that (tail calls between these
 * programs, the dispatcher's maps), the program is attached to the
 * tracepoint itself, as before (link_xmit), and info says which.
 * VNET_XMIT_DISPATCH=per-tap in the environment asks for the fallback
 * (tests, benchmarks).
 */
static int attach_xmit(struct vnet *skel, const char *ifname,
		       struct vnet_info *info, struct vnet_err *err)
{
	int prog = bpf_program__fd(skel->progs.vnet_xmit_rx);
	const char *env = getenv("VNET_XMIT_DISPATCH");
	struct vnet_err xerr = {};
	int fd, ret;

	ret = pin_fd(prog, ifname, VNET_PIN_PROG_XMIT, err);
	if (ret)
		return ret;
	if (!env || strcmp(env, "per-tap")) {
		ret = vnet_xmit_register(ifname, (__u32)info->netns_cookie,
					 (__u32)info->ifindex, prog, &xerr);
		if (!ret) {
			info->xmit_attach = VNET_XMIT_SHARED;
			return 0;
		}
	}
	fd = bpf_raw_tracepoint_open(NULL, prog);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot attach to the net_dev_start_xmit tracepoint: %s%s%s",
			     ifname, strerror(errno),
			     xerr.msg[0] ? "; nor through the shared dispatcher: " : "",
			     xerr.msg);
		return ret;
	}
	ret = pin_fd(fd, ifname, VNET_PIN_LINK_XMIT, err);
	close(fd);
	if (!ret)
		info->xmit_attach = VNET_XMIT_PER_TAP;
	return ret;
}

int vnet_attach(const char *ifname, const struct vnet_attach_opts *opts,
		struct vnet_err *err)
{
	int tx_hook = opts && opts->tx_hook ? opts->tx_hook : VNET_HOOK_TC;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct vnet_info info = {
		.abi_version = VNET_ABI_VERSION,
		.tx_hook = (__u32)tx_hook,
	};
	struct vnet_status st;
	struct vnet *skel = NULL;
	__u32 key = 0;
	int ifindex, fd, ret;
	size_t i;

	if (tx_hook != VNET_HOOK_XDP && tx_hook != VNET_HOOK_TC) {
		vnet_err_set(err, "unknown tx hook %d", tx_hook);
		return -EINVAL;
	}
	ret = vnet_bpffs_ensure(err);
	if (ret)
		return ret;
	ret = vnet_tap_check(ifname, &ifindex, err);
	if (ret)
		return ret;

	if (!vnet_status(ifname, &st, NULL)) {
		ret = pins_of_other_netns(ifname, &st, err);
		if (ret)
			return ret;
		if (st.present && st.info.ifindex == (__u32)ifindex &&
		    opts && opts->tx_hook && st.info.tx_hook != (__u32)tx_hook) {
			char ns[NAME_MAX + 8];

			/* asked for the other hook: say how, change nothing */
			vnet_hint_netns(ns, sizeof(ns));
			vnet_err_set(err, "%s: already attached with the guest-TX hook %s, not %s; to switch: 'vnetctl%s detach %s' then 'vnetctl%s attach %s --tx-hook %s' (the counters start again from zero)",
				     ifname, st.info.tx_hook == VNET_HOOK_XDP ? "xdp" : "tc",
				     tx_hook == VNET_HOOK_XDP ? "xdp" : "tc",
				     ns, ifname, ns, ifname,
				     tx_hook == VNET_HOOK_XDP ? "xdp" : "tc");
			return -EEXIST;
		}
		if (st.present && st.info.ifindex == (__u32)ifindex) {
			vnet_err_set(err, "%s: already attached (pins in %s/%s); nothing to do",
				     ifname, VNET_PIN_ROOT, ifname);
			return -EALREADY;
		}
		/* pins of a device that went away (or whose name was reused) */
		vnet_detach(ifname, NULL);
	}

	if (tx_hook == VNET_HOOK_XDP) {
		ret = foreign_xdp(ifname, ifindex, opts && opts->force, err);
		if (ret)
			return ret;
	}

	netns_cookie(&info.netns_cookie);
	info.ifindex = (__u32)ifindex;
	/*
	 * Guest-RX frames are counted at the net_dev_start_xmit tracepoint,
	 * where the queue is known; a kernel that cannot attach there (no BTF)
	 * gets tc egress counting at queue_mapping instead.
	 */
	for (int try = 0; try < 2; try++) {
		bool xmit = try == 0;

		/* with opts->policy linked in (policy.c, docs/policy.md) */
		skel = vnet_skel_open(opts ? opts->policy : NULL, err);
		if (!skel)
			return -errno;
		bpf_program__set_autoload(skel->progs.vnet_xdp_tx,
					  tx_hook == VNET_HOOK_XDP);
		bpf_program__set_autoload(skel->progs.vnet_tc_tx,
					  tx_hook == VNET_HOOK_TC);
		bpf_program__set_autoload(skel->progs.vnet_xmit_rx, xmit);
		skel->rodata->rx_count_at_xmit = xmit;
		skel->rodata->target_ifindex = (__u32)ifindex;
		skel->rodata->target_netns = (__u32)info.netns_cookie;
		info.rx_queue_src = xmit ? VNET_RXQ_XMIT : VNET_RXQ_TC;
		ret = vnet__load(skel);
		if (!ret)
			break;
		vnet_skel_destroy(skel);
		skel = NULL;
	}
	if (ret) {
		vnet_err_set(err, "cannot load the BPF programs: %s%s",
			     strerror(-ret),
			     ret == -EPERM ? " (vnetctl needs root: CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)" :
			     " (the kernel may lack BPF, XDP or BTF support; run with -d for the verifier's log)");
		goto out;
	}

	ret = pin_dir_make(ifname, err);
	if (ret)
		goto out;
	for (i = 0; i < sizeof(vnet_map_names) / sizeof(vnet_map_names[0]);
	     i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(
			skel->obj, vnet_map_names[i]);

		ret = pin_fd(bpf_map__fd(m), ifname, vnet_map_names[i], err);
		if (ret)
			goto unwind;
	}
	config_defaults(bpf_map__fd(skel->maps.config));
	/* which policy the programs were linked with (policy.c) */
	ret = vnet_policy_record(ifname, opts ? opts->policy : NULL, err);
	if (ret)
		goto unwind;

	if (tx_hook == VNET_HOOK_XDP) {
		fd = bpf_link_create(bpf_program__fd(skel->progs.vnet_xdp_tx),
				     ifindex, BPF_XDP, NULL);
		if (fd < 0) {
			ret = -errno;
			vnet_err_set(err, "%s: cannot attach XDP: %s%s", ifname,
				     strerror(errno),
				     errno == EBUSY ? " (another XDP program is attached; use --force)" :
				     errno == EINVAL ? " (the kernel may lack XDP links, Linux >= 5.9)" : "");
			goto unwind;
		}
		ret = pin_fd(fd, ifname, VNET_PIN_LINK_XDP, err);
		close(fd);
		if (ret)
			goto unwind;
		if (!bpf_xdp_query(ifindex, 0, &q))
			info.xdp_mode = q.attach_mode;
	} else {
		ret = attach_tc(skel->progs.vnet_tc_tx, ifindex, true, ifname,
				err);
		if (ret)
			goto unwind;
	}
	if (info.rx_queue_src == VNET_RXQ_XMIT) {
		ret = attach_xmit(skel, ifname, &info, err);
		if (ret)
			goto unwind;
	}
	ret = attach_tc(skel->progs.vnet_tc_rx, ifindex, false, ifname, err);
	if (ret)
		goto unwind;

	info.ifindex = (__u32)ifindex;
	info.attached_ns = (__u64)time(NULL);
	bpf_map_update_elem(bpf_map__fd(skel->maps.info), &key, &info, BPF_ANY);
	ret = 0;
	goto out;

unwind:
	{
		/* links close with their last reference: unpinning detaches */
		int lfd = pin_get(ifname, VNET_PIN_PROG_TC_INGRESS);

		if (lfd >= 0) {
			detach_legacy_tc(ifindex, true);
			close(lfd);
		}
		lfd = pin_get(ifname, VNET_PIN_PROG_TC_EGRESS);
		if (lfd >= 0) {
			detach_legacy_tc(ifindex, false);
			close(lfd);
		}
		detach_xmit(ifname);
		pin_dir_remove(ifname);
	}
out:
	vnet_skel_destroy(skel);
	return ret;
}

static void detach_link_pin(const char *ifname, const char *pin)
{
	int fd = pin_get(ifname, pin);

	if (fd < 0)
		return;
	bpf_link_detach(fd); /* fails harmlessly on a defunct link */
	close(fd);
}

int vnet_detach(const char *ifname, struct vnet_err *err)
{
	struct vnet_status st;
	struct vnet_info info = {};
	char dir[PATH_MAX];
	struct stat sb;
	__u32 key = 0;
	int fd, ret;

	if (vnet_pin_path(dir, sizeof(dir), ifname, NULL))
		return -ENAMETOOLONG;
	if (stat(dir, &sb))
		return pins_missing(ifname, dir, err);
	if (!vnet_status(ifname, &st, NULL)) {
		ret = pins_of_other_netns(ifname, &st, err);
		if (ret)
			return ret;
	}
	fd = pin_get(ifname, "info");
	if (fd >= 0) {
		bpf_map_lookup_elem(fd, &key, &info);
		close(fd);
	}
	detach_link_pin(ifname, VNET_PIN_LINK_XDP);
	detach_link_pin(ifname, VNET_PIN_LINK_TC_INGRESS);
	detach_link_pin(ifname, VNET_PIN_LINK_TC_EGRESS);
	detach_link_pin(ifname, VNET_PIN_LINK_XMIT);
	detach_xmit(ifname);
	/* legacy clsact filters: only where the device is in this netns */
	fd = pin_get(ifname, VNET_PIN_PROG_TC_INGRESS);
	if (fd >= 0) {
		detach_legacy_tc((int)info.ifindex, true);
		close(fd);
	}
	fd = pin_get(ifname, VNET_PIN_PROG_TC_EGRESS);
	if (fd >= 0) {
		detach_legacy_tc((int)info.ifindex, false);
		close(fd);
	}
	ret = pin_dir_remove(ifname);
	if (ret)
		vnet_err_set(err, "%s: cannot remove the pins in %s: %s",
			     ifname, dir, strerror(-ret));
	return ret;
}

int vnet_gc(char (*removed)[IF_NAMESIZE], int max, struct vnet_err *err)
{
	static char names[1024][IF_NAMESIZE];
	struct vnet_status st;
	int n, i, done = 0, ret;

	n = vnet_list(names, 1024);
	if (n < 0) {
		vnet_err_set(err, "cannot read %s: %s", VNET_PIN_ROOT,
			     strerror(-n));
		return n;
	}
	for (i = 0; i < n; i++) {
		if (vnet_status(names[i], &st, NULL) || st.present)
			continue;
		ret = vnet_detach(names[i], err);
		if (ret)
			return ret;
		if (done < max)
			snprintf(removed[done], IF_NAMESIZE, "%.15s",
				 names[i]);
		done++;
	}
	/* dispatcher entries whose pins are gone (removed by hand, say) */
	vnet_xmit_gc();
	return done;
}
