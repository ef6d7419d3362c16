// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The tap device of a port: its queues (one per queue pair, opened in the
 * port's network namespace), its link state and offloads; and entering
 * and leaving network namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>

#include "vnetd.h"

#define TAP_FLAGS (IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE | IFF_VNET_HDR)

/* --- network namespaces ------------------------------------------------ */

/* An fd of this thread's network namespace, to come back to; -errno. */
int vnetd_netns_here(struct vnet_err *err)
{
	int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fd = -errno;
		vnet_err_set(err, "/proc/thread-self/ns/net: %s",
			     strerror(errno));
	}
	return fd;
}

/*
 * Enter NETNS (only the network namespace: bpffs pins stay the host's),
 * remembering where we were in *saved (-1: nothing to restore).  ERR says
 * why not.
 */
int vnetd_netns_switch(const char *netns, int *saved, struct vnet_err *err)
{
	int fd, ret;

	*saved = -1;
	if (!netns || !*netns)
		return 0;
	fd = vnetd_netns_here(err);
	if (fd < 0)
		return fd;
	ret = vnet_netns_enter(netns, err);
	if (ret) {
		close(fd);
		return ret;
	}
	*saved = fd;
	return 0;
}

/* The same for a namespace held by fd (it may have lost its name). */
int vnetd_netns_enter_fd(int netns_fd, int *saved, struct vnet_err *err)
{
	int fd, ret;

	*saved = -1;
	fd = vnetd_netns_here(err);
	if (fd < 0)
		return fd;
	if (setns(netns_fd, CLONE_NEWNET)) {
		ret = -errno;
		vnet_err_set(err, "cannot enter the network namespace: %s",
			     strerror(errno));
		close(fd);
		return ret;
	}
	*saved = fd;
	return 0;
}

void vnetd_netns_restore(int saved)
{
	if (saved < 0)
		return;
	if (setns(saved, CLONE_NEWNET))
		vhost_err("cannot return to the original network namespace: %s",
			  strerror(errno));
	close(saved);
}

/* --- the tap ------------------------------------------------------------ */

/*
 * TUNSETIFF with FLAGS on a new fd: a queue of the tap, or -errno.  *SAID:
 * the error was logged (no /dev/net/tun).
 */
static int tap_queue_try(struct vnetd_port *p, short flags, bool *said)
{
	struct ifreq ifr = {};
	int fd, ret;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		pr_err(p, "cannot open /dev/net/tun: %s%s", strerror(errno),
		       errno == ENOENT ? " (modprobe tun)" : "");
		*said = true;
		return ret;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->cfg.tap);
	ifr.ifr_flags = flags;
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * Queue Q of the tap.  A tap that exists without multi_queue (what
 * `ip tuntap add dev NAME mode tap` makes) has one queue: it serves a
 * port of one queue pair, and tun refuses the multi-queue flag on it
 * (EINVAL), so the first queue is tried again without it.
 */
static int tap_queue_open(struct vnetd_port *p, unsigned int q)
{
	bool said = false;
	int fd;

	fd = tap_queue_try(p, p->single_queue ? TAP_FLAGS & ~IFF_MULTI_QUEUE :
						TAP_FLAGS, &said);
	if (fd == -EINVAL && !p->created && !q && p->nr_qp == 1) {
		fd = tap_queue_try(p, TAP_FLAGS & ~IFF_MULTI_QUEUE, &said);
		if (fd >= 0)
			p->single_queue = true;
	}
	if (fd >= 0 || said)
		return fd;
	if (fd == -EINVAL && !p->created)
		pr_err(p, "tap %s: cannot attach queue %u: %s (a device of that name exists but is not a multi-queue tap: create it with 'ip tuntap add dev %s mode tap multi_queue vnet_hdr', or serve it with --queues 1)",
		       p->cfg.tap, q, strerror(-fd), p->cfg.tap);
	else if (fd == -EBUSY)
		pr_err(p, "tap %s: cannot attach queue %u: %s (another process holds it without multi_queue, or a non-tun device has that name)",
		       p->cfg.tap, q, strerror(-fd));
	else
		pr_err(p, "tap %s: cannot attach queue %u: %s", p->cfg.tap, q,
		       strerror(-fd));
	return fd;
}

static int link_up(struct vnetd_port *p)
{
	struct ifreq ifr = {};
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->cfg.tap);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ret = -errno;
		goto out;
	}
	if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr))
			ret = -errno;
	}
out:
	if (ret)
		pr_err(p, "tap %s: cannot bring the link up: %s", p->cfg.tap,
		       strerror(-ret));
	close(fd);
	return ret;
}

/*
 * Open (or create) the tap with one queue per pair, in the port's network
 * namespace (the caller is in it).  Every fd is O_NONBLOCK: tun then runs
 * XDP natively on small frames, and reads return EAGAIN when it is empty.
 */
int vnetd_tap_open(struct vnetd_port *p)
{
	struct vnet_tap_users users;
	unsigned int q;
	int fd, ret, i;

	p->ifindex = (int)if_nametoindex(p->cfg.tap);
	p->created = !p->ifindex;
	if (!p->created && !vnet_tap_users(p->cfg.tap, &users) &&
	    users.nr_queues) {
		/*
		 * tun numbers queues in attach order: ours would not be 0..N-1
		 * and the per-queue maps would be read at the wrong entries.
		 */
		pr_err(p, "tap %s: %d queue(s) already attached by %s (pid %d); vnetd needs the tap's queues to itself",
		       p->cfg.tap, users.nr_queues,
		       users.nr ? users.user[0].comm : "?",
		       users.nr ? users.user[0].pid : 0);
		return -EBUSY;
	}
	for (q = 0; q < p->nr_qp; q++) {
		fd = tap_queue_open(p, q);
		if (fd < 0) {
			ret = fd;
			goto err_close;
		}
		p->qp[q].io.fd = fd;
	}
	p->ifindex = (int)if_nametoindex(p->cfg.tap);
	/* nothing is negotiated yet: no offloads towards the guest */
	if (ioctl(p->qp[0].io.fd, TUNSETOFFLOAD, 0))
		pr_warn(p, "tap %s: TUNSETOFFLOAD 0: %s", p->cfg.tap,
			strerror(errno));
	ret = link_up(p);
	if (ret)
		goto err_close;
	pr_info(p, "tap %s: %s, %u queue%s%s", p->cfg.tap,
		p->created ? "created" : "attached", p->nr_qp,
		p->nr_qp > 1 ? "s" : "",
		p->single_queue ? " (a single-queue tap)" : "");
	return 0;

err_close:
	for (i = (int)q - 1; i >= 0; i--) {
		close(p->qp[i].io.fd);
		p->qp[i].io.fd = -1;
	}
	return ret;
}

void vnetd_tap_close(struct vnetd_port *p)
{
	unsigned int q;

	for (q = 0; q < p->nr_qp; q++) {
		if (p->qp[q].io.fd >= 0)
			close(p->qp[q].io.fd);
		p->qp[q].io.fd = -1;
	}
}

/*
 * The negotiated features decide the header size and what tun may hand
 * us for the guest (GUEST_* = what the guest accepts).  Called with every
 * ring stopped.
 */
int vnetd_tap_set_features(struct vnetd_port *p, uint64_t features)
{
	int fd = p->qp[0].io.fd, le = 1, hdr;
	unsigned int off = 0;

	p->mrg = features & (1ULL << VIRTIO_NET_F_MRG_RXBUF);
	hdr = (features & (1ULL << VIRTIO_F_VERSION_1)) || p->mrg ?
		      (int)sizeof(struct virtio_net_hdr_mrg_rxbuf) :
		      (int)sizeof(struct virtio_net_hdr);
	if (features & (1ULL << VIRTIO_NET_F_GUEST_CSUM)) {
		off |= TUN_F_CSUM;
		/* tun accepts TSO flags only together with CSUM */
		if (features & (1ULL << VIRTIO_NET_F_GUEST_TSO4))
			off |= TUN_F_TSO4;
		if (features & (1ULL << VIRTIO_NET_F_GUEST_TSO6))
			off |= TUN_F_TSO6;
		if ((off & (TUN_F_TSO4 | TUN_F_TSO6)) &&
		    (features & (1ULL << VIRTIO_NET_F_GUEST_ECN)))
			off |= TUN_F_TSO_ECN;
	}
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr)) {
		pr_err(p, "tap %s: TUNSETVNETHDRSZ %d: %s", p->cfg.tap, hdr,
		       strerror(errno));
		return -errno;
	}
	/* virtio 1.x headers are little-endian whatever the host is */
	if ((features & (1ULL << VIRTIO_F_VERSION_1)) &&
	    ioctl(fd, TUNSETVNETLE, &le))
		pr_dbg(p, "tap %s: TUNSETVNETLE: %s", p->cfg.tap,
		       strerror(errno));
	if (ioctl(fd, TUNSETOFFLOAD, off)) {
		pr_err(p, "tap %s: TUNSETOFFLOAD 0x%x: %s", p->cfg.tap, off,
		       strerror(errno));
		return -errno;
	}
	p->hdr_len = (unsigned int)hdr;
	p->features = features;
	pr_info(p, "features 0x%llx: %u-byte header, %smergeable RX buffers, tap offloads%s%s%s%s",
		(unsigned long long)features, p->hdr_len, p->mrg ? "" : "no ",
		off & TUN_F_CSUM ? " csum" : "", off & TUN_F_TSO4 ? " tso4" : "",
		off & TUN_F_TSO6 ? " tso6" : "",
		!off ? " none" : off & TUN_F_TSO_ECN ? " ecn" : "");
	return 0;
}


/* SIOCGIFMTU/SIOCSIFMTU of the tap, in its netns (the caller is not). */
static int tap_mtu(struct vnetd_port *p, unsigned long req, unsigned int *mtu)
{
	struct vnet_err err = {};
	struct ifreq ifr = {};
	int fd, saved, ret = 0;

	ret = p->netns_fd >= 0 ?
		      vnetd_netns_enter_fd(p->netns_fd, &saved, &err) :
		      vnetd_netns_switch(p->cfg.netns, &saved, &err);
	if (ret) {
		pr_err(p, "tap %s: MTU: %s", p->cfg.tap, err.msg);
		return ret;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->cfg.tap);
	ifr.ifr_mtu = (int)*mtu;
	if (ioctl(fd, req, &ifr))
		ret = -errno;
	else if (req == SIOCGIFMTU)
		*mtu = (unsigned int)ifr.ifr_mtu;
	close(fd);
out:
	vnetd_netns_restore(saved);
	return ret;
}

/*
 * The frontend's MTU (NET_SET_MTU, QEMU's host_mtu) becomes the tap's, so
 * that the host side sends the guest frames of that size.  The tap's own
 * MTU is remembered the first time and given back when the frontend goes
 * (vnetd_tap_reset()).  0 or -errno (the frontend refuses).
 */
int vnetd_tap_set_mtu(struct vnetd_port *p, unsigned int mtu)
{
	unsigned int old = 0;
	int ret;

	if (!p->mtu_orig) {
		ret = tap_mtu(p, SIOCGIFMTU, &old);
		if (ret) {
			pr_err(p, "tap %s: cannot read the MTU: %s", p->cfg.tap,
			       strerror(-ret));
			return ret;
		}
	}
	ret = tap_mtu(p, SIOCSIFMTU, &mtu);
	if (ret) {
		pr_err(p, "tap %s: the frontend's MTU %u: %s%s", p->cfg.tap, mtu,
		       strerror(-ret),
		       ret == -EINVAL ? " (tun takes 68 to 65535)" : "");
		return ret;
	}
	if (!p->mtu_orig)
		p->mtu_orig = old;
	pr_info(p, "tap %s: MTU %u (the frontend's)", p->cfg.tap, mtu);
	return 0;
}

/* The frontend went: the tap's own MTU again. */
static void tap_mtu_restore(struct vnetd_port *p)
{
	unsigned int mtu = p->mtu_orig;
	int ret;

	if (!mtu)
		return;
	p->mtu_orig = 0;
	ret = tap_mtu(p, SIOCSIFMTU, &mtu);
	if (ret)
		pr_warn(p, "tap %s: cannot restore the MTU %u: %s", p->cfg.tap,
			mtu, strerror(-ret));
	else
		pr_info(p, "tap %s: MTU %u again", p->cfg.tap, mtu);
}

/*
 * The frontend went: the next one negotiates afresh; no offloads and the
 * tap's own MTU meanwhile.
 */
void vnetd_tap_reset(struct vnetd_port *p)
{
	if (ioctl(p->qp[0].io.fd, TUNSETOFFLOAD, 0))
		pr_dbg(p, "TUNSETOFFLOAD 0: %s", strerror(errno));
	p->features = 0;
	tap_mtu_restore(p);
}
