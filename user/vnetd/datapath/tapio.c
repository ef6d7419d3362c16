// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Frame I/O on one tap queue (tapio.h): bursts of writes (guest TX) and
 * reads (guest RX) through one io_uring per queue thread, or plain
 * read/writev.  Only the queue thread of the tap queue calls these.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <liburing.h>

#include "sandbox/sandbox.h"
#include "tapio.h"
#include "base/util.h"
#include "log.h"

#define URING_ENTRIES (VNETD_TX_BURST_MAX + VNETD_RX_BURST)

_Static_assert(VNETD_RX_BURST <= 32, "fixed_slots is a 32-bit mask");

/*
 * One ring per queue-pair thread, created by that thread (SINGLE_ISSUER,
 * DEFER_TASKRUN: completions are reaped by the submitter), the tap fd
 * registered, and a sparse table of VNETD_RX_BURST fixed buffers for the
 * RX slots, each registered on its first read in a burst of
 * VNETD_RX_FIXED_MIN reads or more (slot_fixed(); tap reads into it are
 * then READ_FIXED: no user-copy checks per read).  An idle port's slots,
 * and those of a port with sparse traffic, stay unregistered and are not
 * resident: registering pins, and so faults in, the whole 66 KiB of a
 * slot.  Guest memory is not
 * registered: that would pin all of the guest's RAM, and every memory
 * table change would have to re-register it under each queue thread; TX
 * writes the guest's iovecs with WRITEV.  Older kernels get fewer flags;
 * no io_uring at all (or kernel.io_uring_disabled) means plain syscalls;
 * a buffer registration that fails (RLIMIT_MEMLOCK) means plain READs.
 */
int vnetd_tapio_init(struct vnetd_tapio *io)
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
	ret = io_uring_register_files(ring, &io->fd, 1);
	if (ret)
		goto err_exit;
	io->fixed_slots = io->fixed_failed = 0;
	if (io->slots) {
		ret = io_uring_register_buffers_sparse(ring, VNETD_RX_BURST);
		io->fixed = !ret;
		if (ret)
			pr_dbg(io, "queue pair %u: io_uring buffers: %s; plain reads",
			       io->index, strerror(-ret));
	}
	ret = vnetd_sandbox_uring(ring);
	if (ret)
		goto err_exit;
	io->uring = ring;
	return 0;

err_exit:
	io_uring_queue_exit(ring);
err_free:
	free(ring);
	return ret;
}

void vnetd_tapio_exit(struct vnetd_tapio *io)
{
	if (!io->uring)
		return;
	io_uring_queue_exit(io->uring);
	free(io->uring);
	io->uring = NULL;
	io->fixed = false;
	io->fixed_slots = io->fixed_failed = 0;
}

void vnetd_tapio_trim(struct vnetd_tapio *io)
{
	struct iovec none[VNETD_RX_BURST];
	int ret;

	if (!io->slots)
		return;
	if (io->uring && io->fixed && io->fixed_slots) {
		/* an empty iovec clears a sparse table's entry */
		memset(none, 0, sizeof(none));
		ret = io_uring_register_buffers_update_tag(io->uring, 0, none,
							   NULL,
							   VNETD_RX_BURST);
		if (ret != VNETD_RX_BURST) {
			pr_dbg(io, "queue pair %u: io_uring buffers kept: %s",
			       io->index, strerror(ret < 0 ? -ret : EIO));
			return;
		}
		io->fixed_slots = 0;
	}
	madvise(io->slots, (size_t)VNETD_RX_BURST * VNETD_RX_SLOT,
		MADV_DONTNEED);
}

/*
 * Slot I as fixed buffer I, for a burst of N reads: registered on its
 * first use in a burst of VNETD_RX_FIXED_MIN or more (one io_uring_register
 * call per slot, ever); false: read it with a plain READ (no table, a
 * short burst into a slot not registered yet, or its registration failed,
 * e.g. RLIMIT_MEMLOCK).
 */
static bool slot_fixed(struct vnetd_tapio *io, unsigned int i, unsigned int n)
{
	uint32_t bit = 1u << i;
	struct iovec iov;
	int ret;

	if (!io->fixed || (io->fixed_failed & bit))
		return false;
	if (io->fixed_slots & bit)
		return true;
	if (n < VNETD_RX_FIXED_MIN)
		return false;
	iov.iov_base = io->slots + (size_t)i * VNETD_RX_SLOT;
	iov.iov_len = VNETD_RX_SLOT;
	ret = io_uring_register_buffers_update_tag(io->uring, i, &iov, NULL, 1);
	if (ret == 1) {
		io->fixed_slots |= bit;
		return true;
	}
	io->fixed_failed |= bit;
	pr_dbg(io, "queue pair %u: io_uring buffer %u: %s; plain reads into it",
	       io->index, i, strerror(ret < 0 ? -ret : EIO));
	return false;
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
static int uring_run(struct vnetd_tapio *io, unsigned int n, int *res,
		     unsigned int cap)
{
	unsigned int done = 0;
	int ret;

	while (done < n) {
		/* one syscall in the usual case: submit all, wait for all */
		ret = io_uring_submit_and_wait(io->uring, done ? 0 : n);
		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret <= 0) {
			ret = ret ? ret : -EIO;
			pr_warn(io, "queue pair %u: io_uring: %s; using plain read/writev from now on",
				io->index, strerror(-ret));
			vnetd_tapio_exit(io);
			return ret;
		}
		done += (unsigned int)ret;
	}
	uring_reap(io->uring, res, n, cap);
	return 0;
}

/*
 * Write N chains into the tap, each as its device-readable iovecs:
 * [virtio-net header + frame] in either layout is exactly what a tap with
 * IFF_VNET_HDR and the same header size takes, so the guest's buffers are
 * written in place.  RES[i] gets chain i's result (bytes or -errno).
 * Each frame has passed vnet's classifier when its write returns.
 */
void vnetd_tapio_write_burst(struct vnetd_tapio *io,
			     const struct vhost_vq_elem *elems, unsigned int n,
			     int *res)
{
	struct io_uring_sqe *sqe;
	unsigned int i, queued = 0;
	ssize_t w;

	for (i = 0; i < n; i++) {
		const struct vhost_vq_elem *e = &elems[i];

		res[i] = -EINVAL;
		if (e->err || !e->out_num)
			continue;
		/* the ring holds a whole burst: get_sqe does not fail */
		sqe = io->uring ? io_uring_get_sqe(io->uring) : NULL;
		if (sqe) {
			/*
			 * one segment (header inline, the usual layout): a
			 * plain WRITE, no iovec array to copy in and check
			 */
			if (e->out_num == 1)
				io_uring_prep_write(sqe, 0, e->iov[0].iov_base,
						    (unsigned int)e->iov[0].iov_len,
						    0);
			else
				io_uring_prep_writev(sqe, 0, e->iov, e->out_num,
						     0);
			sqe->flags |= IOSQE_FIXED_FILE;
			sqe->user_data = i;
			queued++;
			continue;
		}
		w = writev(io->fd, e->iov, e->out_num);
		res[i] = w < 0 ? -errno : (int)w;
	}
	if (!queued || !uring_run(io, queued, res, n))
		return;
	for (i = 0; i < n; i++) {
		const struct vhost_vq_elem *e = &elems[i];

		if (e->err || !e->out_num)
			continue;
		w = writev(io->fd, e->iov, e->out_num);
		res[i] = w < 0 ? -errno : (int)w;
	}
}

/*
 * Read N frames, read i into IOV[i * VNETD_RX_IOV ..] (IOVCNT[i] iovecs):
 * RES[i] gets its bytes, or -EAGAIN (nothing there), or -errno.  Returns
 * how many found a frame, or the first read's -errno when none did and it
 * was not -EAGAIN.  io_uring: N READVs with RWF_NOWAIT, not linked, issued
 * in order (see vnetd_tapio_read_burst: a frame can follow a read that
 * found nothing); plain: readv until the first that finds nothing.
 */
int vnetd_tapio_readv_burst(struct vnetd_tapio *io, const struct iovec *iov,
			    const unsigned int *iovcnt, unsigned int n,
			    int *res)
{
	struct io_uring_sqe *sqe;
	unsigned int i, m = 0;
	ssize_t r;

	if (n > VNETD_RX_BURST)
		n = VNETD_RX_BURST;
	for (i = 0; i < n; i++)
		res[i] = -EAGAIN;
	if (!n)
		return 0;
	if (!io->uring)
		goto plain;
	for (i = 0; i < n; i++) {
		sqe = io_uring_get_sqe(io->uring);
		if (!sqe)
			break;
		io_uring_prep_readv(sqe, 0, iov + (size_t)i * VNETD_RX_IOV,
				    iovcnt[i], 0);
		sqe->rw_flags = RWF_NOWAIT;
		sqe->flags |= IOSQE_FIXED_FILE;
		sqe->user_data = i;
	}
	n = i;
	if (uring_run(io, n, res, n)) {
		for (i = 0; i < n; i++)
			res[i] = -EAGAIN;
		goto plain;
	}
	for (i = 0; i < n; i++)
		m += res[i] > 0;
	if (!m && res[0] < 0 && res[0] != -EAGAIN)
		return res[0];
	return (int)m;

plain:
	for (i = 0; i < n; i++) {
		r = readv(io->fd, iov + (size_t)i * VNETD_RX_IOV, (int)iovcnt[i]);
		if (r <= 0) {
			if (!i && r < 0 && errno != EAGAIN && errno != EINTR)
				return -errno;
			break;
		}
		res[i] = (int)r;
	}
	return (int)i;
}

/*
 * Read up to N frames into the RX slots: ORDER[0..m) get the slots that
 * hold a frame, in the order tun gave them, LEN[slot] their lengths.
 * Returns m (0: the tap queue is empty), or -errno.
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
int vnetd_tapio_read_burst(struct vnetd_tapio *io, unsigned int n,
			   uint32_t *len, uint8_t *order)
{
	int res[VNETD_RX_BURST];
	struct io_uring_sqe *sqe;
	unsigned int i, m = 0;
	ssize_t r;

	if (n > VNETD_RX_BURST)
		n = VNETD_RX_BURST;
	if (!n)
		return 0;
	if (!io->uring)
		goto plain;
	for (i = 0; i < n; i++) {
		uint8_t *slot = io->slots + (size_t)i * VNETD_RX_SLOT;

		sqe = io_uring_get_sqe(io->uring);
		if (!sqe)
			break;
		if (slot_fixed(io, i, n))
			io_uring_prep_read_fixed(sqe, 0, slot, VNETD_RX_SLOT, 0,
						 (int)i);
		else
			io_uring_prep_read(sqe, 0, slot, VNETD_RX_SLOT, 0);
		sqe->rw_flags = RWF_NOWAIT;
		sqe->flags |= IOSQE_FIXED_FILE;
		sqe->user_data = i;
		res[i] = -EAGAIN;
	}
	n = i;
	if (uring_run(io, n, res, n))
		goto plain;
	for (i = 0; i < n; i++) {
		if (res[i] > 0) {
			len[i] = (uint32_t)res[i];
			order[m++] = (uint8_t)i;
		}
	}
	if (!m && res[0] < 0 && res[0] != -EAGAIN)
		return res[0];
	return (int)m;

plain:
	for (i = 0; i < n; i++) {
		r = read(io->fd, io->slots + (size_t)i * VNETD_RX_SLOT,
			 VNETD_RX_SLOT);
		if (r <= 0) {
			if (!i && r < 0 && errno != EAGAIN && errno != EINTR)
				return -errno;
			break;
		}
		len[i] = (uint32_t)r;
		order[i] = (uint8_t)i;
	}
	return (int)i;
}
