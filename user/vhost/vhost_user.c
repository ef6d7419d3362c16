// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vhost-user protocol, backend side: message reception, dispatch through
 * the handler table (handlers.c), replies, and a device's lifetime (see
 * vhost_user.h for the model, vhost_user_int.h for the files).
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

#include "handlers.h"
#include "log.h"
#include "vhost_user_int.h"
#include "vu_dev.h"
#include "vu_dev_int.h"
#include "mem.h"
#include "virtq.h"

/* --- sending --------------------------------------------------------- */

static int send_all(int fd, struct iovec *iov, int iovcnt)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = iovcnt };
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	ssize_t n;

	while (mh.msg_iovlen) {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			/* a frontend that does not read its replies: give up */
			n = poll(&pfd, 1, VHOST_USER_SEND_TIMEOUT_MS);
			if (n < 0 && errno != EINTR)
				return -errno;
			if (!n)
				return -ETIMEDOUT;
			continue;
		}
		while (mh.msg_iovlen && (size_t)n >= mh.msg_iov->iov_len) {
			n -= mh.msg_iov->iov_len;
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen) {
			uint8_t *base = mh.msg_iov->iov_base;

			mh.msg_iov->iov_base = base + n;
			mh.msg_iov->iov_len -= n;
		}
	}
	return 0;
}

static int send_reply(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	struct iovec iov[2] = {
		{ .iov_base = &msg->hdr, .iov_len = sizeof(msg->hdr) },
		{ .iov_base = &msg->payload, .iov_len = msg->hdr.size },
	};
	int ret;

	/* exactly version | REPLY: QEMU compares the whole flags word */
	msg->hdr.flags = VHOST_USER_VERSION | VHOST_USER_REPLY_MASK;
	ret = send_all(dev->fd, iov, msg->hdr.size ? 2 : 1);
	if (ret)
		vhost_err("%s: sending the %s reply: %s", vu_dev_name(dev),
			  vhost_user_request_name(msg->hdr.request),
			  strerror(-ret));
	return ret;
}

/* --- dispatch -------------------------------------------------------- */

int vu_dispatch(struct vhost_dev *dev, struct vhost_user_msg *msg)
{
	uint32_t req = msg->hdr.request;
	bool need_reply = msg->hdr.flags & VHOST_USER_NEED_REPLY_MASK;
	const struct vhost_user_handler *h = NULL;
	bool payload_reply = false;
	int ret;

	if (req < ARRAY_SIZE(vu_handlers) && vu_handlers[req].name)
		h = &vu_handlers[req];
	if (!h) {
		vhost_err("%s: unknown request %u (size %u, %u fds)%s, ignored",
			  vu_dev_name(dev), req, msg->hdr.size, msg->nfds,
			  need_reply ? ", answering with an error" : "");
		ret = -EOPNOTSUPP;
		goto reply;
	}
	payload_reply = h->reply == REPLY_PAYLOAD ||
			(h->reply == REPLY_IF_LOG_SHMFD &&
			 dev->protocol_features &
				 (1ULL << VHOST_USER_PROTOCOL_F_LOG_SHMFD));
	if (!h->fn) {
		vhost_err("%s: request %s not supported, ignored", vu_dev_name(dev),
			  h->name);
		ret = -EOPNOTSUPP;
		goto reply;
	}
	if (msg->nfds < h->min_fds || msg->nfds > h->max_fds) {
		vhost_err("%s: %s with %u fds, expected %u..%u: rejected",
			  vu_dev_name(dev), h->name, msg->nfds, h->min_fds,
			  h->max_fds);
		ret = -EINVAL;
		goto reply;
	}
	if (msg->hdr.size < h->size) {
		vhost_err("%s: %s with a %u byte payload, expected %u: rejected",
			  vu_dev_name(dev), h->name, msg->hdr.size, h->size);
		ret = -EINVAL;
		goto reply;
	}
	vhost_dbg("%s: %s (size %u, %u fds)", vu_dev_name(dev), h->name,
		  msg->hdr.size, msg->nfds);
	ret = h->fn(dev, msg);
	if (ret)
		vhost_err("%s: %s failed: %s", vu_dev_name(dev), h->name,
			  strerror(-ret));

reply:
	vu_msg_close_fds(msg);
	/* a hand-over's messages (dev_state.c): nobody waits for an answer */
	if (dev->importing)
		return ret;
	if (payload_reply) {
		if (ret)
			msg->hdr.size = 0; /* the spec's error indication */
		return send_reply(dev, msg);
	}
	if (need_reply) {
		/* REPLY_ACK: 0 success, non-zero failure */
		vu_reply_u64(msg, ret ? 1 : 0);
		return send_reply(dev, msg);
	}
	return 0;
}

/* --- receiving ------------------------------------------------------- */

static void rx_reset(struct vhost_user_rx *rx)
{
	vu_msg_close_fds(&rx->msg);
	memset(rx, 0, sizeof(*rx));
}

/*
 * One recvmsg() of at most WANT bytes (never past the current message, so
 * fds of the next one are not picked up with this one).  Collected fds go
 * to RX's message.  Returns bytes read, 0 at EOF, -errno.
 */
static ssize_t rx_recv(struct vhost_dev *dev, void *dst, size_t want)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VHOST_USER_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = dst, .iov_len = want };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct vhost_user_msg *msg = &dev->rx.msg;
	bool too_many = false;
	struct cmsghdr *c;
	ssize_t n;

	do {
		n = recvmsg(dev->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;

	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t i, nfd;
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (msg->nfds < VHOST_USER_MAX_FDS)
				msg->fds[msg->nfds++] = fd;
			else {
				close(fd);
				too_many = true;
			}
		}
	}
	if (too_many) {
		vhost_err("%s: more than %d fds in one message", vu_dev_name(dev),
			  VHOST_USER_MAX_FDS);
		return -EPROTO;
	}
	/* MSG_CTRUNC: the kernel dropped fds: too many, or no fd free here */
	if (mh.msg_flags & MSG_CTRUNC) {
		vhost_err("%s: the kernel dropped fds of a message: more than %d in it, or this process has no fd free (raise RLIMIT_NOFILE, e.g. LimitNOFILE= of its unit)",
			  vu_dev_name(dev), VHOST_USER_MAX_FDS);
		return -EPROTO;
	}
	return n;
}

/* 1: a whole message is in dev->rx.msg; 0: need more input; -errno. */
static int rx_step(struct vhost_dev *dev)
{
	struct vhost_user_rx *rx = &dev->rx;
	const size_t hsize = sizeof(rx->msg.hdr);

	for (;;) {
		size_t want;
		void *dst;
		ssize_t n;

		if (rx->got < hsize) {
			dst = (uint8_t *)&rx->msg.hdr + rx->got;
			want = hsize - rx->got;
		} else {
			size_t have = rx->got - hsize;

			if (have == rx->msg.hdr.size)
				return 1;
			dst = (uint8_t *)&rx->msg.payload + have;
			want = rx->msg.hdr.size - have;
		}
		n = rx_recv(dev, dst, want);
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return 0;
		if (n < 0)
			return (int)n;
		if (!n) {
			if (rx->got || rx->msg.nfds) {
				vhost_err("%s: truncated message: connection closed after %zu of %zu bytes",
					  vu_dev_name(dev), rx->got,
					  rx->got < hsize ?
						  hsize :
						  hsize + rx->msg.hdr.size);
				return -EPROTO;
			}
			vhost_info("%s: frontend closed the connection",
				   vu_dev_name(dev));
			return -ECONNRESET;
		}
		rx->got += (size_t)n;
		if (rx->got != hsize)
			continue;
		/* the header is complete: can the payload be trusted? */
		if ((rx->msg.hdr.flags & VHOST_USER_VERSION_MASK) !=
		    VHOST_USER_VERSION) {
			vhost_err("%s: message version %u (flags 0x%x), expected %u",
				  vu_dev_name(dev),
				  rx->msg.hdr.flags & VHOST_USER_VERSION_MASK,
				  rx->msg.hdr.flags, VHOST_USER_VERSION);
			return -EPROTO;
		}
		if (rx->msg.hdr.size > VHOST_USER_PAYLOAD_MAX) {
			vhost_err("%s: %s with a %u byte payload, at most %zu",
				  vu_dev_name(dev),
				  vhost_user_request_name(rx->msg.hdr.request),
				  rx->msg.hdr.size, VHOST_USER_PAYLOAD_MAX);
			return -EMSGSIZE;
		}
	}
}

int vhost_dev_handle_input(struct vhost_dev *dev)
{
	int budget = VHOST_USER_RX_BUDGET, ret;

	if (dev->fd < 0)
		return -ENOTCONN;
	if (dev->frozen)
		return 0; /* left in the socket for the process taking over */
	while (budget--) {
		ret = rx_step(dev);
		if (ret <= 0)
			return ret;
		ret = vu_dispatch(dev, &dev->rx.msg);
		rx_reset(&dev->rx);
		if (ret)
			return ret;
	}
	return 0;
}

/* --- lifetime -------------------------------------------------------- */

int vhost_dev_init(struct vhost_dev *dev, const char *name,
		   unsigned int nr_vqs, const struct vhost_dev_ops *ops,
		   void *priv)
{
	unsigned int i;

	memset(dev, 0, sizeof(*dev));
	if (!nr_vqs || nr_vqs > VHOST_USER_MAX_VQS || !ops ||
	    !ops->get_features || !ops->queue_start || !ops->queue_stop)
		return -EINVAL;
	dev->vqs = calloc(nr_vqs, sizeof(*dev->vqs));
	if (!dev->vqs)
		return -ENOMEM;
	dev->name = name;
	dev->ops = ops;
	dev->priv = priv;
	dev->fd = -1;
	dev->log_fd = -1;
	dev->nr_vqs = nr_vqs;
	dev->protocol_features_offered = VHOST_USER_PROTOCOL_FEATURES;
	/* do not promise a RARP nobody will send */
	if (!ops->send_rarp)
		dev->protocol_features_offered &=
			~(1ULL << VHOST_USER_PROTOCOL_F_RARP);
	if (!ops->set_mtu)
		dev->protocol_features_offered &=
			~(1ULL << VHOST_USER_PROTOCOL_F_MTU);
	vhost_mem_init(&dev->mem);
	for (i = 0; i < nr_vqs; i++)
		vhost_vq_init(&dev->vqs[i], i, name, &dev->mem);
	return 0;
}

int vhost_dev_attach(struct vhost_dev *dev, int fd)
{
	int fl;

	if (dev->fd >= 0)
		return -EBUSY;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	dev->fd = fd;
	rx_reset(&dev->rx);
	vhost_info("%s: frontend connected", vu_dev_name(dev));
	if (dev->ops->connected)
		dev->ops->connected(dev);
	return 0;
}

void vhost_dev_disconnect(struct vhost_dev *dev)
{
	bool was_connected = dev->fd >= 0;
	unsigned int i;

	/* rings first: device threads must let go of memory before unmap */
	vu_dev_pause(dev);
	if (was_connected && dev->ops->disconnected)
		dev->ops->disconnected(dev);
	for (i = 0; i < dev->nr_vqs; i++)
		vhost_vq_reset(&dev->vqs[i]);
	vhost_mem_cleanup(&dev->mem);
	dev->features = 0;
	dev->protocol_features = 0;
	dev->owner = false;
	if (dev->log_fd >= 0)
		close(dev->log_fd);
	dev->log_fd = -1;
	rx_reset(&dev->rx);
	if (was_connected) {
		close(dev->fd);
		vhost_info("%s: frontend disconnected, state reset",
			   vu_dev_name(dev));
	}
	dev->fd = -1;
}

void vhost_dev_cleanup(struct vhost_dev *dev)
{
	if (!dev->vqs)
		return;
	vhost_dev_disconnect(dev);
	vhost_dev_journal_close(dev);
	free(dev->vqs);
	dev->vqs = NULL;
	dev->nr_vqs = 0;
}
