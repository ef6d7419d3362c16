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
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/if_tun.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>

#include "tap.h"
#include "base/util.h"
#include "libvnet.h"
#include "log.h"

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

int vnetd_tap_ns_open(struct vnetd_tap *t, int *saved)
{
	struct vnet_err err = {};
	struct stat st;
	int ret;

	ret = vnetd_netns_switch(t->netns, saved, &err);
	if (ret) {
		pr_err(t, "%s", err.msg);
		return ret;
	}
	if (*saved < 0)
		return 0;
	/* held: the port notices when the name goes (vnetd_tap_lost()) */
	t->netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (t->netns_fd < 0 || fstat(t->netns_fd, &st)) {
		ret = -errno;
		pr_err(t, "netns %s: %s", t->netns, strerror(errno));
		vnetd_tap_ns_close(t);
		vnetd_netns_restore(*saved);
		*saved = -1;
		return ret;
	}
	t->netns_ino = st.st_ino;
	return 0;
}

void vnetd_tap_ns_close(struct vnetd_tap *t)
{
	if (t->netns_fd >= 0)
		close(t->netns_fd);
	t->netns_fd = -1;
}

int vnetd_tap_ns_enter(struct vnetd_tap *t, int *saved, struct vnet_err *err)
{
	int ret;

	if (t->netns_fd < 0)
		return vnetd_netns_switch(t->netns, saved, err);
	ret = vnetd_netns_enter_fd(t->netns_fd, saved, err);
	if (ret)
		vnet_err_set(err, "cannot enter the network namespace of tap %s: %s",
			     t->ifname, strerror(-ret));
	return ret;
}

/* --- the tap ------------------------------------------------------------ */

void vnetd_tap_init(struct vnetd_tap *t, const char *name, const char *ifname,
		    const char *netns, unsigned int nr_queues)
{
	unsigned int q;

	memset(t, 0, sizeof(*t));
	t->name = name;
	t->ifname = ifname;
	t->netns = netns;
	t->nr_queues = nr_queues;
	t->netns_fd = -1;
	for (q = 0; q < VNETD_MAX_QP; q++)
		t->fd[q] = -1;
}

/*
 * TUNSETIFF with FLAGS on a new fd: a queue of the tap, or -errno.  *SAID:
 * the error was logged (no /dev/net/tun).
 */
static int tap_queue_try(struct vnetd_tap *t, short flags, bool *said)
{
	struct ifreq ifr = {};
	int fd, ret;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		pr_err(t, "cannot open /dev/net/tun: %s%s", strerror(errno),
		       errno == ENOENT ? " (modprobe tun)" : "");
		*said = true;
		return ret;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->ifname);
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
static int tap_queue_open(struct vnetd_tap *t, unsigned int q)
{
	bool said = false;
	int fd;

	fd = tap_queue_try(t, t->single_queue ? TAP_FLAGS & ~IFF_MULTI_QUEUE :
						TAP_FLAGS, &said);
	if (fd == -EINVAL && !t->created && !q && t->nr_queues == 1) {
		fd = tap_queue_try(t, TAP_FLAGS & ~IFF_MULTI_QUEUE, &said);
		if (fd >= 0)
			t->single_queue = true;
	}
	if (fd >= 0 || said)
		return fd;
	if (fd == -EINVAL && !t->created)
		pr_err(t, "tap %s: cannot attach queue %u: %s (a device of that name exists but is not a multi-queue tap: create it with 'ip tuntap add dev %s mode tap multi_queue vnet_hdr', or serve it with --queues 1)",
		       t->ifname, q, strerror(-fd), t->ifname);
	else if (fd == -EBUSY)
		pr_err(t, "tap %s: cannot attach queue %u: %s (another process holds it without multi_queue, or a non-tun device has that name)",
		       t->ifname, q, strerror(-fd));
	else
		pr_err(t, "tap %s: cannot attach queue %u: %s", t->ifname, q,
		       strerror(-fd));
	return fd;
}

static int link_up(struct vnetd_tap *t)
{
	struct ifreq ifr = {};
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->ifname);
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
		pr_err(t, "tap %s: cannot bring the link up: %s", t->ifname,
		       strerror(-ret));
	close(fd);
	return ret;
}

/*
 * Wait until the kernel counts no queue on the existing tap, the caller
 * having found none held as an fd by a live process (vnet_tap_users).  A
 * process that died with a queue's fd in an io_uring's file table (as
 * vnetd's tap reads hold theirs) keeps that queue attached until the
 * kernel tears the ring down, some milliseconds after the exit.  Attached
 * meanwhile, ours would be queue 1, and tun would steer frames to the
 * dead queue 0, where nobody reads them; so wait for it, bounded.  0, or
 * -EBUSY when queues stay (logged).  A kernel without tun's link data
 * (-EOPNOTSUPP) is not waited for.
 */
static int tap_wait_unheld(struct vnetd_tap *t)
{
	uint64_t start = vnetd_now_ns(), waited;
	const struct timespec nap = { 0, 5 * 1000 * 1000 };
	struct vnet_tap_flags f;
	bool said = false;

	for (;;) {
		if (vnet_tap_flags(t->ifindex, &f) || !f.queues)
			break;
		waited = (vnetd_now_ns() - start) / 1000000;
		if (!said) {
			pr_info(t, "tap %s: waiting for %u queue(s) no process holds to go (a process that exited with the tap in an io_uring)",
				t->ifname, f.queues);
			said = true;
		}
		if (waited >= VNETD_TAP_UNHELD_MS) {
			pr_err(t, "tap %s: %u queue(s) still attached after %u ms, held by no process's fds (an io_uring or an fd in flight): vnetd needs the tap's queues to itself; stop their holder, or delete the tap (ip link del %s) and let vnetd create it",
			       t->ifname, f.queues, VNETD_TAP_UNHELD_MS,
			       t->ifname);
			return -EBUSY;
		}
		nanosleep(&nap, NULL);
	}
	if (said)
		pr_info(t, "tap %s: its queues went after %llu ms", t->ifname,
			(unsigned long long)(vnetd_now_ns() - start) / 1000000);
	return 0;
}

/*
 * May a process hold a queue of the existing tap?  Only when the kernel
 * counts one attached (or cannot say, an old kernel) is every process's
 * fds walked to name the holder (vnet_tap_users(): a readlink per fd of
 * the host, and vnetd's own fds grow with its ports): a port's set-up
 * then costs the same whatever the number of ports before it.
 */
static bool tap_held(const struct vnetd_tap *t)
{
	struct vnet_tap_flags f;

	return vnet_tap_flags(t->ifindex, &f) || f.queues;
}

/*
 * Open (or create) the tap with one queue per pair, in the port's network
 * namespace (the caller is in it).  Every fd is O_NONBLOCK: tun then runs
 * XDP natively on small frames, and reads return EAGAIN when it is empty.
 */
int vnetd_tap_open(struct vnetd_tap *t)
{
	struct vnet_tap_users users;
	unsigned int q;
	int fd, ret, i;

	t->ifindex = (int)if_nametoindex(t->ifname);
	t->created = !t->ifindex;
	if (!t->created && tap_held(t) && !vnet_tap_users(t->ifname, &users) &&
	    users.nr_queues) {
		/*
		 * tun numbers queues in attach order: ours would not be 0..N-1
		 * and the per-queue maps would be read at the wrong entries.
		 */
		pr_err(t, "tap %s: %d queue(s) already attached by %s (pid %d); vnetd needs the tap's queues to itself",
		       t->ifname, users.nr_queues,
		       users.nr ? users.user[0].comm : "?",
		       users.nr ? users.user[0].pid : 0);
		return -EBUSY;
	}
	if (!t->created) {
		ret = tap_wait_unheld(t);
		if (ret)
			return ret;
	}
	for (q = 0; q < t->nr_queues; q++) {
		fd = tap_queue_open(t, q);
		if (fd < 0) {
			ret = fd;
			goto err_close;
		}
		t->fd[q] = fd;
	}
	t->ifindex = (int)if_nametoindex(t->ifname);
	/* nothing is negotiated yet: no offloads towards the guest */
	if (ioctl(t->fd[0], TUNSETOFFLOAD, 0))
		pr_warn(t, "tap %s: TUNSETOFFLOAD 0: %s", t->ifname,
			strerror(errno));
	ret = link_up(t);
	if (ret)
		goto err_close;
	pr_info(t, "tap %s: %s, %u queue%s%s", t->ifname,
		t->created ? "created" : "attached", t->nr_queues,
		t->nr_queues > 1 ? "s" : "",
		t->single_queue ? " (a single-queue tap)" : "");
	return 0;

err_close:
	for (i = (int)q - 1; i >= 0; i--) {
		close(t->fd[i]);
		t->fd[i] = -1;
	}
	return ret;
}

void vnetd_tap_close(struct vnetd_tap *t)
{
	unsigned int q;

	for (q = 0; q < t->nr_queues; q++) {
		if (t->fd[q] >= 0)
			close(t->fd[q]);
		t->fd[q] = -1;
	}
}

/*
 * The negotiated features decide the header size (the device's choice,
 * HDR_LEN) and what tun may hand us for the guest (GUEST_* = what the
 * guest accepts).  Called with every ring stopped.
 */
int vnetd_tap_set_vnet(struct vnetd_tap *t, uint64_t features,
		       unsigned int hdr_len)
{
	int fd = t->fd[0], le = 1, hdr = (int)hdr_len;
	bool mrg = features & (1ULL << VIRTIO_NET_F_MRG_RXBUF);
	unsigned int off = 0;

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
		pr_err(t, "tap %s: TUNSETVNETHDRSZ %d: %s", t->ifname, hdr,
		       strerror(errno));
		return -errno;
	}
	/* virtio 1.x headers are little-endian whatever the host is */
	if ((features & (1ULL << VIRTIO_F_VERSION_1)) &&
	    ioctl(fd, TUNSETVNETLE, &le))
		pr_dbg(t, "tap %s: TUNSETVNETLE: %s", t->ifname,
		       strerror(errno));
	if (ioctl(fd, TUNSETOFFLOAD, off)) {
		pr_err(t, "tap %s: TUNSETOFFLOAD 0x%x: %s", t->ifname, off,
		       strerror(errno));
		return -errno;
	}
	pr_info(t, "features 0x%llx: %u-byte header, %smergeable RX buffers, tap offloads%s%s%s%s",
		(unsigned long long)features, hdr_len, mrg ? "" : "no ",
		off & TUN_F_CSUM ? " csum" : "", off & TUN_F_TSO4 ? " tso4" : "",
		off & TUN_F_TSO6 ? " tso6" : "",
		!off ? " none" : off & TUN_F_TSO_ECN ? " ecn" : "");
	return 0;
}

/* SIOCGIFMTU/SIOCSIFMTU of the tap, in its netns (the caller is not). */
static int tap_mtu(struct vnetd_tap *t, unsigned long req, unsigned int *mtu)
{
	struct vnet_err err = {};
	struct ifreq ifr = {};
	int fd, saved, ret = 0;

	ret = vnetd_tap_ns_enter(t, &saved, &err);
	if (ret) {
		pr_err(t, "tap %s: MTU: %s", t->ifname, err.msg);
		return ret;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->ifname);
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
int vnetd_tap_set_mtu(struct vnetd_tap *t, unsigned int mtu)
{
	unsigned int old = 0;
	int ret;

	if (!t->mtu_orig) {
		ret = tap_mtu(t, SIOCGIFMTU, &old);
		if (ret) {
			pr_err(t, "tap %s: cannot read the MTU: %s", t->ifname,
			       strerror(-ret));
			return ret;
		}
	}
	ret = tap_mtu(t, SIOCSIFMTU, &mtu);
	if (ret) {
		pr_err(t, "tap %s: the frontend's MTU %u: %s%s", t->ifname, mtu,
		       strerror(-ret),
		       ret == -EINVAL ? " (tun takes 68 to 65535)" : "");
		return ret;
	}
	if (!t->mtu_orig)
		t->mtu_orig = old;
	pr_info(t, "tap %s: MTU %u (the frontend's)", t->ifname, mtu);
	return 0;
}

/* The frontend went: the tap's own MTU again. */
static void tap_mtu_restore(struct vnetd_tap *t)
{
	unsigned int mtu = t->mtu_orig;
	int ret;

	if (!mtu)
		return;
	t->mtu_orig = 0;
	ret = tap_mtu(t, SIOCSIFMTU, &mtu);
	if (ret)
		pr_warn(t, "tap %s: cannot restore the MTU %u: %s", t->ifname,
			mtu, strerror(-ret));
	else
		pr_info(t, "tap %s: MTU %u again", t->ifname, mtu);
}

/*
 * The frontend went: the next one negotiates afresh; no offloads and the
 * tap's own MTU meanwhile.
 */
void vnetd_tap_reset(struct vnetd_tap *t)
{
	if (ioctl(t->fd[0], TUNSETOFFLOAD, 0))
		pr_dbg(t, "TUNSETOFFLOAD 0: %s", strerror(errno));
	tap_mtu_restore(t);
}

/* One frame written outside a burst (RARP): bytes or -errno. */
int vnetd_tap_write(struct vnetd_tap *t, const struct iovec *iov,
		    unsigned int n)
{
	ssize_t w = writev(t->fd[0], iov, (int)n);

	return w < 0 ? -errno : (int)w;
}

/*
 * Is the tap, or its netns, gone?  The tap: tun answers EBADFD on a queue
 * fd whose device was deleted.  The netns: its name no longer leads to
 * the namespace the tap was opened in (ip netns del; the namespace itself
 * lives on as long as the port holds its tap).  Fills WHY.
 */
bool vnetd_tap_lost(struct vnetd_tap *t, char *why, size_t len)
{
	struct ifreq ifr = {};
	char path[300];
	struct stat st;

	if (t->netns_fd >= 0) {
		if (strchr(t->netns, '/'))
			snprintf(path, sizeof(path), "%s", t->netns);
		else
			snprintf(path, sizeof(path), "/var/run/netns/%s",
				 t->netns);
		if (stat(path, &st) || st.st_ino != t->netns_ino) {
			snprintf(why, len, "netns %s of tap %s is gone (%s)",
				 t->netns, t->ifname,
				 errno == ENOENT ? "deleted" :
						   "another one has its name");
			return true;
		}
	}
	if (t->fd[0] >= 0 && ioctl(t->fd[0], TUNGETIFF, &ifr) &&
	    errno == EBADFD) {
		snprintf(why, len, "tap %s is gone (deleted)", t->ifname);
		return true;
	}
	return false;
}
