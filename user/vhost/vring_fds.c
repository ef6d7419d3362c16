// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A ring's kick, call and error eventfds: SET_VRING_KICK, SET_VRING_CALL
 * and SET_VRING_ERR.  The fd comes from the frontend, which may hand over
 * something that is not an eventfd or may clear O_NONBLOCK on it later:
 * ring_fd_own() makes sure the queue thread never waits on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "log.h"
#include "vring_fds.h"
#include "vu_dev_int.h"

static const char *req_name(uint32_t req)
{
	return req == VHOST_USER_SET_VRING_KICK ? "SET_VRING_KICK" :
	       req == VHOST_USER_SET_VRING_CALL ? "SET_VRING_CALL" :
						  "SET_VRING_ERR";
}

/*
 * SET_VRING_KICK/CALL/ERR: u64 with the index in bits 0-7 and bit 8 set
 * when no fd comes with it.  The fd count must agree with that bit.
 */
static struct vhost_vq *vring_fd_parse(struct vhost_dev *dev,
				       struct vhost_user_msg *msg, int *fd)
{
	uint64_t u = msg->payload.u64;
	bool nofd = u & VHOST_USER_VRING_NOFD_MASK;
	unsigned int index = u & VHOST_USER_VRING_IDX_MASK;
	struct vhost_vq *vq = vu_msg_vq(dev, index);

	if (!vq)
		return NULL;
	if (msg->nfds != (nofd ? 0u : 1u)) {
		vhost_err("%s: %s for vq %u: %u fds, invalid-fd flag %s",
			  vu_dev_name(dev),
			  req_name(msg->hdr.request), index,
			  msg->nfds, nofd ? "set" : "clear");
		return NULL;
	}
	*fd = nofd ? -1 : vu_msg_take_fd(msg, 0);
	return vq;
}

/*
 * Is FD an eventfd?  /proc/self/fd says so ("anon_inode:[eventfd]");
 * without /proc, an fd without a file type (an anonymous inode) is taken
 * for one, and sockets, regular files and devices are not.
 */
static bool fd_is_eventfd(int fd, const struct stat *st)
{
	char path[32], link[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return !(st->st_mode & S_IFMT);
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[eventfd]");
}

/*
 * Make a frontend's kick (READER), call or error fd one that the queue
 * thread can read or write without ever waiting.  O_NONBLOCK on the fd
 * as received is not enough: the flag belongs to the open file, which
 * the frontend shares and may change back at any time.
 *
 * - A pipe or FIFO is opened again through /proc/self/fd/N with
 *   O_NONBLOCK: a new open file of the same pipe, ours alone.
 * - An eventfd cannot be opened again (the kernel answers ENXIO for an
 *   anonymous inode): the shared flag is set, and a frontend that clears
 *   it and fills the counter makes the thread wait in write() until the
 *   device layer interrupts it (vhost_vq_fd_busy()); the ring then stops
 *   writing that fd.
 * - Anything else (a socket, a regular file, a device) is refused.
 *
 * Returns the fd to keep (FD itself or its replacement; FD is closed when
 * replaced) or -errno (FD closed).
 */
static int ring_fd_own(struct vhost_dev *dev, unsigned int index,
		       const char *what, int fd, bool reader)
{
	char path[32];
	struct stat st;
	int nfd, fl, ret;

	if (fstat(fd, &st)) {
		ret = -errno;
		goto err;
	}
	if (S_ISFIFO(st.st_mode)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		nfd = open(path, (reader ? O_RDONLY : O_WRONLY) | O_NONBLOCK |
					 O_CLOEXEC);
		if (nfd >= 0) {
			close(fd);
			return nfd;
		}
		/*
		 * ENXIO: a pipe without a reader (writes fail with EPIPE and
		 * never wait); else /proc is not there: the shared flag.
		 */
		if (errno != ENXIO)
			vhost_warn("%s: vq %u: %s pipe cannot be reopened (%s): using the frontend's open file",
				   vu_dev_name(dev), index, what,
				   strerror(errno));
	} else if (!fd_is_eventfd(fd, &st)) {
		vhost_err("%s: vq %u: %s fd is neither an eventfd nor a pipe (mode 0%o)",
			  vu_dev_name(dev), index, what, st.st_mode & S_IFMT);
		ret = -EINVAL;
		goto err;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (!(fl & O_NONBLOCK) &&
		       fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)) {
		ret = -errno;
		goto err;
	}
	return fd;
err:
	if (ret != -EINVAL)
		vhost_err("%s: vq %u: %s fd: %s", vu_dev_name(dev), index, what,
			  strerror(-ret));
	close(fd);
	return ret;
}

static void fd_replace(int *slot, int fd)
{
	if (*slot >= 0)
		close(*slot);
	*slot = fd;
}

/*
 * What SET_VRING_KICK/CALL/ERR share: the message parsed, its fd (if any)
 * taken on (ring_fd_own(); READER for the kick fd, which the queue thread
 * reads), then the ring halted so that the fd can be swapped.  QEMU swaps
 * the call fd on a running ring (the guest masks/unmasks the interrupt):
 * the queue thread may be in write(call_fd), so it is stopped before the
 * old fd is closed, or the write could land on a reused fd number.  NULL
 * with *ERR when the message is refused.
 */
static struct vhost_vq *vring_fd_take(struct vhost_dev *dev,
				      struct vhost_user_msg *msg,
				      const char *what, bool reader, int *fd,
				      int *err)
{
	struct vhost_vq *vq = vring_fd_parse(dev, msg, fd);

	*err = -EINVAL;
	if (!vq)
		return NULL;
	if (*fd >= 0) {
		*fd = ring_fd_own(dev, vq->index, what, *fd, reader);
		if (*fd < 0) {
			*err = *fd;
			return NULL;
		}
	}
	vu_vq_halt(dev, vq);
	return vq;
}

int vu_h_set_vring_kick(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct vhost_vq *vq;
	int fd, err;

	/* kick_drain() must not block (ring_fd_own()) */
	vq = vring_fd_take(dev, msg, "kick", true, &fd, &err);
	if (!vq)
		return err;
	fd_replace(&vq->kick_fd, fd);
	vq->kick_polling = fd < 0;
	vq->kick_set = true;
	/* without protocol features there is no SET_VRING_ENABLE */
	if (!vhost_dev_has_feature(dev, VHOST_USER_F_PROTOCOL_FEATURES))
		vq->enabled = true;
	vu_vq_update(dev, vq);
	return 0;
}

int vu_h_set_vring_call(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct vhost_vq *vq;
	int fd, err;

	vq = vring_fd_take(dev, msg, "call", false, &fd, &err);
	if (!vq)
		return err;
	fd_replace(&vq->call_fd, fd);
	vq->call_stuck = false;
	vu_vq_update(dev, vq);
	return 0;
}

int vu_h_set_vring_err(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct vhost_vq *vq;
	int fd, err;

	vq = vring_fd_take(dev, msg, "error", false, &fd, &err);
	if (!vq)
		return err;
	fd_replace(&vq->err_fd, fd);
	vq->err_stuck = false;
	vu_vq_update(dev, vq);
	return 0;
}
