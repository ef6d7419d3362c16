// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The tap side of a port: the multi-queue tap (in its network namespace),
 * its offloads, vnet's BPF programs and maps on it, the steering program,
 * and frame I/O on one tap queue (io_uring, or plain read/writev).
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
#include <sys/uio.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <liburing.h>

#include "vnetd.h"
#include "sandbox.h"
#include "steer_flow.skel.h"

#define TAP_FLAGS (IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE | IFF_VNET_HDR)

/* --- network namespaces ------------------------------------------------ */

/*
 * Enter NETNS (only the network namespace: bpffs pins stay the host's),
 * remembering where we were in *saved (-1: nothing to restore).  ERR says
 * why not.
 */
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

static int tap_queue_open(struct vnetd_port *p, unsigned int q)
{
	struct ifreq ifr = {};
	int fd, ret;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		pr_err(p, "cannot open /dev/net/tun: %s%s", strerror(errno),
		       errno == ENOENT ? " (modprobe tun)" : "");
		return ret;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->cfg.tap);
	ifr.ifr_flags = TAP_FLAGS;
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		ret = -errno;
		if (errno == EINVAL && !p->created)
			pr_err(p, "tap %s: cannot attach queue %u: %s (a device of that name exists but is not a multi-queue tap; create it with 'ip tuntap add dev %s mode tap multi_queue vnet_hdr')",
			       p->cfg.tap, q, strerror(errno), p->cfg.tap);
		else if (errno == EBUSY)
			pr_err(p, "tap %s: cannot attach queue %u: %s (another process holds it without multi_queue, or a non-tun device has that name)",
			       p->cfg.tap, q, strerror(errno));
		else
			pr_err(p, "tap %s: cannot attach queue %u: %s",
			       p->cfg.tap, q, strerror(errno));
		close(fd);
		return ret;
	}
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
		p->qp[q].tap_fd = fd;
	}
	p->ifindex = (int)if_nametoindex(p->cfg.tap);
	/* nothing is negotiated yet: no offloads towards the guest */
	if (ioctl(p->qp[0].tap_fd, TUNSETOFFLOAD, 0))
		pr_warn(p, "tap %s: TUNSETOFFLOAD 0: %s", p->cfg.tap,
			strerror(errno));
	ret = link_up(p);
	if (ret)
		goto err_close;
	pr_info(p, "tap %s: %s, %u queue%s", p->cfg.tap,
		p->created ? "created" : "attached", p->nr_qp,
		p->nr_qp > 1 ? "s" : "");
	return 0;

err_close:
	for (i = (int)q - 1; i >= 0; i--) {
		close(p->qp[i].tap_fd);
		p->qp[i].tap_fd = -1;
	}
	return ret;
}

void vnetd_tap_close(struct vnetd_port *p)
{
	unsigned int q;

	for (q = 0; q < p->nr_qp; q++) {
		if (p->qp[q].tap_fd >= 0)
			close(p->qp[q].tap_fd);
		p->qp[q].tap_fd = -1;
	}
}

/*
 * The negotiated features decide the header size and what tun may hand
 * us for the guest (GUEST_* = what the guest accepts).  Called with every
 * ring stopped.
 */
int vnetd_tap_set_features(struct vnetd_port *p, uint64_t features)
{
	int fd = p->qp[0].tap_fd, le = 1, hdr;
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

/* --- BPF: vnet's programs and maps, the steering program ---------------- */

static void *map_mmap(struct vnetd_port *p, const char *name, size_t vsize,
		      bool write, size_t *len)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	struct vnet_err err = {};
	long page = sysconf(_SC_PAGESIZE);
	void *m = NULL;
	size_t sz;
	int fd;

	fd = vnet_map_open(p->cfg.tap, name, &err);
	if (fd < 0) {
		pr_err(p, "%s", err.msg);
		return NULL;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		pr_err(p, "map %s: %s", name, strerror(errno));
		goto out;
	}
	if (info.value_size != vsize || !(info.map_flags & BPF_F_MMAPABLE) ||
	    info.max_entries < VNET_DIR_MAX * VNET_MAX_QUEUES / 2) {
		pr_err(p, "map %s: value size %u, flags 0x%x, %u entries: not the layout this vnetd was built for (include/vnet/abi.h); detach and attach again",
		       name, info.value_size, info.map_flags, info.max_entries);
		goto out;
	}
	sz = (size_t)info.value_size * info.max_entries;
	sz = (sz + page - 1) / page * page;
	m = mmap(NULL, sz, PROT_READ | (write ? PROT_WRITE : 0), MAP_SHARED,
		 fd, 0);
	if (m == MAP_FAILED) {
		pr_err(p, "map %s: mmap: %s", name, strerror(errno));
		m = NULL;
		goto out;
	}
	*len = sz;
out:
	close(fd);
	return m;
}

/*
 * Attach vnet's programs like `vnetctl attach` (or take the pins that are
 * there), map the maps the datapath reads and writes, and install the
 * steering program.  The caller is in the tap's network namespace.
 */
int vnetd_bpf_setup(struct vnetd_port *p)
{
	struct vnet_err err = {};
	int ret, fd;
	unsigned int q;

	ret = vnet_attach(p->cfg.tap, NULL, &err);
	if (ret == -EALREADY) {
		pr_info(p, "tap %s: vnet already attached, using its pins",
			p->cfg.tap);
	} else if (ret) {
		pr_err(p, "%s", err.msg);
		return ret;
	} else {
		p->attached = true;
		pr_info(p, "tap %s: vnet attached (pins in %s/%s)", p->cfg.tap,
			VNET_PIN_ROOT, p->cfg.tap);
	}
	ret = -EINVAL;
	p->qs = map_mmap(p, "queues", sizeof(*p->qs), false, &p->qs_len);
	if (!p->qs)
		goto err;
	/* written only for tap_rx_frames, mirrored from ethtool -C */
	p->config = map_mmap(p, "config", sizeof(*p->config), true,
			     &p->config_len);
	if (!p->config)
		goto err;
	p->dps = map_mmap(p, "dp_stats", sizeof(*p->dps), true, &p->dps_len);
	if (!p->dps)
		goto err;

	p->steer = steer_flow__open_and_load();
	if (!p->steer) {
		ret = -errno;
		pr_err(p, "cannot load the steering program: %s",
		       strerror(errno));
		goto err;
	}
	fd = bpf_program__fd(p->steer->progs.vnetd_steer);
	if (ioctl(p->qp[0].tap_fd, TUNSETSTEERINGEBPF, &fd)) {
		ret = -errno;
		pr_err(p, "tap %s: TUNSETSTEERINGEBPF: %s", p->cfg.tap,
		       strerror(errno));
		goto err;
	}
	for (q = 0; q < p->nr_qp; q++) {
		struct vnetd_qp *qp = &p->qp[q];

		qp->tx_st = &p->dps[vnet_key(VNET_DIR_TX, q)];
		qp->rx_st = &p->dps[vnet_key(VNET_DIR_RX, q)];
		qp->tx_qs = &p->qs[vnet_key(VNET_DIR_TX, q)];
		qp->rx_qs = &p->qs[vnet_key(VNET_DIR_RX, q)];
		qp->cfg = &p->config[q];
	}
	return 0;

err:
	vnetd_bpf_cleanup(p);
	return ret;
}

/* Undo vnetd_bpf_setup(); the caller is in the tap's network namespace. */
void vnetd_bpf_cleanup(struct vnetd_port *p)
{
	struct vnet_err err = {};
	int off = -1;

	if (p->steer) {
		if (p->qp[0].tap_fd >= 0)
			ioctl(p->qp[0].tap_fd, TUNSETSTEERINGEBPF, &off);
		steer_flow__destroy(p->steer);
		p->steer = NULL;
	}
	if (p->dps)
		munmap(p->dps, p->dps_len);
	if (p->config)
		munmap(p->config, p->config_len);
	if (p->qs)
		munmap(p->qs, p->qs_len);
	p->dps = NULL;
	p->config = NULL;
	p->qs = NULL;
	if (p->attached) {
		if (vnet_detach(p->cfg.tap, &err))
			pr_warn(p, "%s", err.msg);
		else
			pr_info(p, "tap %s: vnet detached", p->cfg.tap);
		p->attached = false;
	}
}

/*
 * Queue pair QP's RX ring is (ON) or is no longer served: spread the flows
 * over the served ones.  The program reads nr_active, then an entry; a
 * reader racing with this sees a list that is briefly stale, never an
 * entry out of range.
 */
void vnetd_steer_update(struct vnetd_port *p, struct vnetd_qp *qp, bool on)
{
	unsigned int q, n = 0;

	if (!p->steer)
		return;
	pthread_mutex_lock(&p->steer_lock);
	qp->steer_on = on;
	for (q = 0; q < p->nr_qp; q++)
		if (p->qp[q].steer_on)
			__atomic_store_n(&p->steer->bss->active[n++], q,
					 __ATOMIC_RELAXED);
	__atomic_store_n(&p->steer->bss->nr_active, n, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->steer_lock);
}

/* --- frame I/O on one tap queue ---------------------------------------- */

#define URING_ENTRIES (VNETD_TX_BURST_MAX + VNETD_RX_BURST)

/*
 * One ring per queue-pair thread, created by that thread (SINGLE_ISSUER,
 * DEFER_TASKRUN: completions are reaped by the submitter), the tap fd
 * registered, and the RX bounce slots registered as fixed buffer 0 (tap
 * reads are READ_FIXED: no page pinning per read).  Guest memory is not
 * registered: that would pin all of the guest's RAM, and every memory
 * table change would have to re-register it under each queue thread; TX
 * writes the guest's iovecs with WRITEV.  Older kernels get fewer flags;
 * no io_uring at all (or kernel.io_uring_disabled) means plain syscalls;
 * a buffer registration that fails (RLIMIT_MEMLOCK) means plain READs.
 */
int vnetd_uring_init(struct vnetd_qp *qp)
{
	static const unsigned int flags[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct io_uring *ring;
	unsigned int i;
	int ret = -EINVAL;

	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		ret = io_uring_queue_init(URING_ENTRIES, ring,
					  flags[i] | vnetd_sandbox_uring_flags());
		if (ret != -EINVAL)
			break;
	}
	if (ret)
		goto err_free;
	ret = io_uring_register_files(ring, &qp->tap_fd, 1);
	if (ret)
		goto err_exit;
	if (qp->rx_buf) {
		struct iovec iov = {
			.iov_base = qp->rx_buf,
			.iov_len = (size_t)VNETD_RX_BURST * VNETD_RX_SLOT,
		};

		ret = io_uring_register_buffers(ring, &iov, 1);
		qp->rx_fixed = !ret;
		if (ret)
			pr_dbg(qp->port, "queue pair %u: io_uring buffers: %s; plain reads",
			       qp->index, strerror(-ret));
	}
	ret = vnetd_sandbox_uring(ring);
	if (ret)
		goto err_exit;
	qp->uring = ring;
	return 0;

err_exit:
	io_uring_queue_exit(ring);
err_free:
	free(ring);
	return ret;
}

void vnetd_uring_exit(struct vnetd_qp *qp)
{
	if (!qp->uring)
		return;
	io_uring_queue_exit(qp->uring);
	free(qp->uring);
	qp->uring = NULL;
	qp->rx_fixed = false;
}

/* Reap exactly N completions into RES[user_data] (CAP entries). */
static void uring_reap(struct io_uring *ring, int *res, unsigned int n,
		       unsigned int cap)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0, got;
	int ret;

	while (seen < n) {
		got = 0;
		io_uring_for_each_cqe(ring, head, cqe) {
			if (cqe->user_data < cap)
				res[cqe->user_data] = cqe->res;
			got++;
		}
		io_uring_cq_advance(ring, got);
		seen += got;
		if (seen == n)
			break;
		ret = io_uring_wait_cqe_nr(ring, &cqe, n - seen);
		if (ret && ret != -EINTR && ret != -EAGAIN)
			break;
	}
}

/*
 * Submit the N queued requests and reap their N completions into RES.  The
 * ring is sized for a burst and always drained, so submission cannot run
 * out of room; an error here means io_uring itself failed: the ring is
 * dropped and the queue goes on with plain syscalls (the caller redoes the
 * burst by hand; requests that did run may then run twice, which for a
 * failure that should not happen is the lesser evil).
 */
static int uring_run(struct vnetd_qp *qp, unsigned int n, int *res,
		     unsigned int cap)
{
	unsigned int done = 0;
	int ret;

	while (done < n) {
		/* one syscall in the usual case: submit all, wait for all */
		ret = io_uring_submit_and_wait(qp->uring, done ? 0 : n);
		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret <= 0) {
			ret = ret ? ret : -EIO;
			pr_warn(qp->port, "queue pair %u: io_uring: %s; using plain read/writev from now on",
				qp->index, strerror(-ret));
			vnetd_uring_exit(qp);
			return ret;
		}
		done += (unsigned int)ret;
	}
	uring_reap(qp->uring, res, n, cap);
	return 0;
}

/*
 * Write the first N chains of qp->tx_elems into the tap, each as its
 * device-readable iovecs: [virtio-net header + frame] in either layout is
 * exactly what a tap with IFF_VNET_HDR and the same header size takes, so
 * the guest's buffers are written in place.  qp->tx_res[i] gets the
 * result (bytes or -errno).  tun runs the XDP classifier inside each write.
 */
void vnetd_tap_write_burst(struct vnetd_qp *qp, unsigned int n)
{
	struct io_uring_sqe *sqe;
	unsigned int i, queued = 0;
	ssize_t w;

	for (i = 0; i < n; i++) {
		const struct vhost_vq_elem *e = &qp->tx_elems[i];

		qp->tx_res[i] = -EINVAL;
		if (e->err || !e->out_num)
			continue;
		/* the ring holds a whole burst: get_sqe does not fail */
		sqe = qp->uring ? io_uring_get_sqe(qp->uring) : NULL;
		if (sqe) {
			io_uring_prep_writev(sqe, 0, e->iov, e->out_num, 0);
			sqe->flags |= IOSQE_FIXED_FILE;
			sqe->user_data = i;
			queued++;
			continue;
		}
		w = writev(qp->tap_fd, e->iov, e->out_num);
		qp->tx_res[i] = w < 0 ? -errno : (int)w;
	}
	if (!queued || !uring_run(qp, queued, qp->tx_res, n))
		return;
	for (i = 0; i < n; i++) {
		const struct vhost_vq_elem *e = &qp->tx_elems[i];

		if (e->err || !e->out_num)
			continue;
		w = writev(qp->tap_fd, e->iov, e->out_num);
		qp->tx_res[i] = w < 0 ? -errno : (int)w;
	}
}

/*
 * Read up to N frames into the RX slots: qp->rx_order[0..m) get the slots
 * that hold a frame, in the order tun gave them, qp->rx_len[slot] their
 * lengths.  Returns m (0: the tap queue is empty), or -errno.
 *
 * io_uring: N independent reads with RWF_NOWAIT.  tun supports IOCB_NOWAIT,
 * so io_uring would ignore O_NONBLOCK and arm a poll for an empty queue
 * (the submit would then wait for N frames); with RWF_NOWAIT a read that
 * finds nothing completes with -EAGAIN.  They are not linked: a frame is a
 * short read, and a short read breaks an io_uring link.  They are issued
 * in order at submit, so the frames fill the slots in tun's order (a frame
 * arriving meanwhile can land after a slot that found nothing: the order
 * list skips the gap).
 */
int vnetd_tap_read_burst(struct vnetd_qp *qp, unsigned int n)
{
	int res[VNETD_RX_BURST];
	struct io_uring_sqe *sqe;
	unsigned int i, m = 0;
	ssize_t r;

	if (n > VNETD_RX_BURST)
		n = VNETD_RX_BURST;
	if (!n)
		return 0;
	if (!qp->uring)
		goto plain;
	for (i = 0; i < n; i++) {
		sqe = io_uring_get_sqe(qp->uring);
		if (!sqe)
			break;
		if (qp->rx_fixed)
			io_uring_prep_read_fixed(sqe, 0,
						 qp->rx_buf + (size_t)i * VNETD_RX_SLOT,
						 VNETD_RX_SLOT, 0, 0);
		else
			io_uring_prep_read(sqe, 0,
					   qp->rx_buf + (size_t)i * VNETD_RX_SLOT,
					   VNETD_RX_SLOT, 0);
		sqe->rw_flags = RWF_NOWAIT;
		sqe->flags |= IOSQE_FIXED_FILE;
		sqe->user_data = i;
		res[i] = -EAGAIN;
	}
	n = i;
	if (uring_run(qp, n, res, n))
		goto plain;
	for (i = 0; i < n; i++) {
		if (res[i] > 0) {
			qp->rx_len[i] = (uint32_t)res[i];
			qp->rx_order[m++] = (uint8_t)i;
		}
	}
	if (!m && res[0] < 0 && res[0] != -EAGAIN)
		return res[0];
	return (int)m;

plain:
	for (i = 0; i < n; i++) {
		r = read(qp->tap_fd, qp->rx_buf + (size_t)i * VNETD_RX_SLOT,
			 VNETD_RX_SLOT);
		if (r <= 0) {
			if (!i && r < 0 && errno != EAGAIN && errno != EINTR)
				return -errno;
			break;
		}
		qp->rx_len[i] = (uint32_t)r;
		qp->rx_order[i] = (uint8_t)i;
	}
	return (int)i;
}
