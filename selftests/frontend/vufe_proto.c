// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vufe: vhost-user messages, the connection, hostile messages */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include "vufe_int.h"

/* ---- vhost-user messages ---- */

static int sock_wait(struct vufe *fe, short events, long long deadline)
{
	struct pollfd p = { .fd = fe->sock, .events = events };
	int n;

	for (;;) {
		n = poll(&p, 1, remaining_ms(deadline));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		if (p.revents & POLLNVAL)
			return -EBADF;
		return 0;
	}
}

int vufe_send_msg(struct vufe *fe, __u32 request, __u32 flags,
		  const void *payload, __u32 size_field, size_t payload_len,
		  const int *fds, unsigned int nfds)
{
	long long deadline = deadline_in(fe->o.timeout_ms);
	__u32 hdr[3] = { request, flags, size_field };
	char cbuf[CMSG_SPACE(VUFE_MAX_FDS * sizeof(int))];
	struct iovec iov[2];
	struct msghdr mh;
	size_t total = sizeof(hdr) + payload_len, sent = 0;
	ssize_t n;
	int err;

	if (fe->sock < 0)
		return vufe_err(fe, -ENOTCONN, "request %u: not connected",
				request);
	if (nfds > VUFE_MAX_FDS)
		return vufe_err(fe, -EINVAL, "request %u: %u fds", request,
				nfds);
	while (sent < total) {
		memset(&mh, 0, sizeof(mh));
		if (sent < sizeof(hdr)) {
			iov[0].iov_base = (char *)hdr + sent;
			iov[0].iov_len = sizeof(hdr) - sent;
			iov[1].iov_base = (void *)payload;
			iov[1].iov_len = payload_len;
			mh.msg_iovlen = payload_len ? 2 : 1;
		} else {
			iov[0].iov_base = (char *)payload + (sent - sizeof(hdr));
			iov[0].iov_len = total - sent;
			mh.msg_iovlen = 1;
		}
		mh.msg_iov = iov;
		/* the fds travel with the first byte, as QEMU sends them */
		if (!sent && nfds) {
			struct cmsghdr *c;

			memset(cbuf, 0, sizeof(cbuf));
			mh.msg_control = cbuf;
			mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
			memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
		}
		n = sendmsg(fe->sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			err = sock_wait(fe, POLLOUT, deadline);
			if (err)
				return vufe_err(fe, err,
						"request %u: send: %s", request,
						strerror(-err));
			continue;
		}
		if (n < 0)
			return vufe_err(fe, -errno, "request %u: send: %s",
					request, strerror(errno));
		sent += n;
	}
	return 0;
}

ssize_t vufe_recv_fds(int sock, void *buf, size_t len, int flags, int *fds,
		      unsigned int *nfds, unsigned int max)
{
	char cbuf[CMSG_SPACE(VUFE_MAX_FDS * sizeof(int))];
	struct iovec iov = { buf, len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	ssize_t n;

	n = recvmsg(sock, &mh, flags);
	if (n < 0)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		const int *cfd = (const int *)CMSG_DATA(c);
		size_t i, nr;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nr = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nr; i++) {
			if (fds && *nfds < max)
				fds[(*nfds)++] = cfd[i];
			else
				close(cfd[i]);
		}
	}
	return n;
}

/* reads exactly len bytes; fds that arrive are closed (replies carry none) */
static int read_full(struct vufe *fe, void *buf, size_t len, long long deadline)
{
	size_t got = 0;
	ssize_t n;
	int err;

	while (got < len) {
		n = vufe_recv_fds(fe->sock, (char *)buf + got, len - got,
				  MSG_DONTWAIT | MSG_CMSG_CLOEXEC, NULL, NULL,
				  0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			err = sock_wait(fe, POLLIN, deadline);
			if (err)
				return err;
			continue;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		got += n;
	}
	return 0;
}

/*
 * Reads one reply (flags must be REPLY|VERSION, as QEMU insists) to
 * request into payload; *size gets the payload size.
 */
int vufe_recv_reply(struct vufe *fe, __u32 request, void *payload,
		    size_t cap, __u32 *size)
{
	long long deadline = deadline_in(fe->o.timeout_ms);
	__u8 scratch[VUFE_MAX_PAYLOAD];
	__u32 hdr[3];
	int err;

	if (fe->sock < 0)
		return vufe_err(fe, -ENOTCONN, "reply %u: not connected",
				request);
	err = read_full(fe, hdr, sizeof(hdr), deadline);
	if (err)
		return vufe_err(fe, err, "reply to request %u: %s", request,
				err == -ECONNRESET ?
					"the backend closed the connection" :
					strerror(-err));
	if (hdr[1] != (VUFE_MSG_REPLY | VUFE_MSG_VERSION))
		return vufe_err(fe, -EPROTO,
				"reply to request %u: flags 0x%x, expected 0x%x",
				request, hdr[1],
				VUFE_MSG_REPLY | VUFE_MSG_VERSION);
	if (hdr[2] > sizeof(scratch))
		return vufe_err(fe, -EPROTO,
				"reply to request %u: size %u too large",
				request, hdr[2]);
	err = read_full(fe, scratch, hdr[2], deadline);
	if (err)
		return vufe_err(fe, err, "reply to request %u: payload: %s",
				request, strerror(-err));
	if (hdr[0] != request)
		return vufe_err(fe, -EPROTO,
				"reply to request %u has request %u", request,
				hdr[0]);
	if (hdr[2] > cap)
		return vufe_err(fe, -EPROTO,
				"reply to request %u: size %u, expected <= %zu",
				request, hdr[2], cap);
	memcpy(payload, scratch, hdr[2]);
	if (size)
		*size = hdr[2];
	return 0;
}

static bool reply_ack(struct vufe *fe)
{
	return has(fe->proto, VUFE_PROTO_REPLY_ACK);
}

/* the ack of a NEED_REPLY message: a u64, zero for success */
static int read_ack(struct vufe *fe, __u32 request)
{
	__u64 v = 0;
	__u32 size;
	int err;

	err = vufe_recv_reply(fe, request, &v, sizeof(v), &size);
	if (err)
		return err;
	if (size != sizeof(v))
		return vufe_err(fe, -EPROTO, "ack of request %u: size %u",
				request, size);
	if (v)
		return vufe_err(fe, -EIO, "request %u: the backend nacked (%llu)",
				request, (unsigned long long)v);
	return 0;
}

int vu_msg(struct vufe *fe, __u32 request, bool need_reply,
	   const void *payload, size_t len, const int *fds,
	   unsigned int nfds)
{
	__u32 flags = VUFE_MSG_VERSION;
	int err;

	if (need_reply && reply_ack(fe))
		flags |= VUFE_MSG_NEED_REPLY;
	err = vufe_send_msg(fe, request, flags, payload, len, len, fds, nfds);
	if (err)
		return err;
	if (flags & VUFE_MSG_NEED_REPLY)
		return read_ack(fe, request);
	return 0;
}

int vu_get_u64(struct vufe *fe, __u32 request, __u64 *v)
{
	__u32 size;
	int err;

	err = vufe_send_msg(fe, request, VUFE_MSG_VERSION, NULL, 0, 0, NULL, 0);
	if (err)
		return err;
	err = vufe_recv_reply(fe, request, v, sizeof(*v), &size);
	if (err)
		return err;
	if (size != sizeof(*v))
		return vufe_err(fe, -EPROTO, "reply to request %u: size %u",
				request, size);
	return 0;
}

int vu_set_u64(struct vufe *fe, __u32 request, __u64 v)
{
	return vu_msg(fe, request, false, &v, sizeof(v), NULL, 0);
}

int vu_set_state(struct vufe *fe, __u32 request, unsigned int index,
		 unsigned int num, bool need_reply)
{
	struct vhost_vring_state s = { .index = index, .num = num };

	return vu_msg(fe, request, need_reply, &s, sizeof(s), NULL, 0);
}

int vu_set_vring_fd(struct vufe *fe, __u32 request, unsigned int index,
		    int fd)
{
	__u64 v = index & VUFE_VRING_IDX_MASK;

	if (fd < 0) {
		v |= VUFE_VRING_NOFD;
		return vu_msg(fe, request, false, &v, sizeof(v), NULL, 0);
	}
	return vu_msg(fe, request, false, &v, sizeof(v), &fd, 1);
}

/* ---- connection ---- */

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static int unix_addr(struct vufe *fe, struct sockaddr_un *sa)
{
	if (!fe->o.path)
		return vufe_err(fe, -EINVAL, "no socket path (opts.path)");
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(fe->o.path) >= sizeof(sa->sun_path))
		return vufe_err(fe, -ENAMETOOLONG, "socket path too long: %s",
				fe->o.path);
	strcpy(sa->sun_path, fe->o.path);
	return 0;
}

int vufe_attach_fd(struct vufe *fe, int fd)
{
	int err;

	if (fe->sock >= 0)
		return vufe_err(fe, -EISCONN, "already connected");
	err = set_nonblock(fd);
	if (err)
		return vufe_err(fe, err, "O_NONBLOCK on socket: %s",
				strerror(-err));
	fe->sock = fd;
	return 0;
}

/*
 * Connects to the backend's socket, retrying while it is not there yet or
 * refuses (a backend that is still starting), until opts.timeout_ms.
 */
int vufe_connect(struct vufe *fe)
{
	long long deadline = deadline_in(fe->o.timeout_ms);
	struct sockaddr_un sa;
	int fd, err;

	if (fe->sock >= 0)
		return vufe_err(fe, -EISCONN, "already connected");
	err = unix_addr(fe, &sa);
	if (err)
		return err;
	fe->listening = false;
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return vufe_err(fe, -errno, "socket: %s",
					strerror(errno));
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
		err = -errno;
		close(fd);
		if ((err != -ENOENT && err != -ECONNREFUSED) ||
		    !remaining_ms(deadline))
			return vufe_err(fe, err, "connect %s: %s", fe->o.path,
					strerror(-err));
		/* bounded retry while the backend comes up */
		poll(NULL, 0, 10);
	}
	return vufe_attach_fd(fe, fd);
}

/* For a backend in client mode: we own the socket and it connects to us. */
int vufe_listen(struct vufe *fe)
{
	struct sockaddr_un sa;
	int fd, err;

	err = unix_addr(fe, &sa);
	if (err)
		return err;
	if (fe->listen_fd >= 0)
		return vufe_err(fe, -EALREADY, "already listening");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return vufe_err(fe, -errno, "socket: %s", strerror(errno));
	unlink(fe->o.path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4)) {
		err = -errno;
		close(fd);
		return vufe_err(fe, err, "listen on %s: %s", fe->o.path,
				strerror(-err));
	}
	fe->listen_fd = fd;
	fe->listening = true;
	return 0;
}

int vufe_accept(struct vufe *fe)
{
	long long deadline = deadline_in(fe->o.timeout_ms);
	struct pollfd p;
	int fd, n;

	if (fe->listen_fd < 0)
		return vufe_err(fe, -EINVAL, "accept: not listening");
	if (fe->sock >= 0)
		return vufe_err(fe, -EISCONN, "already connected");
	for (;;) {
		fd = accept4(fe->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			return vufe_attach_fd(fe, fd);
		if (errno != EAGAIN && errno != EINTR)
			return vufe_err(fe, -errno, "accept: %s",
					strerror(errno));
		p = (struct pollfd){ .fd = fe->listen_fd, .events = POLLIN };
		n = poll(&p, 1, remaining_ms(deadline));
		if (n == 0)
			return vufe_err(fe, -ETIMEDOUT,
					"no backend connected to %s in %d ms",
					fe->o.path, fe->o.timeout_ms);
		if (n < 0 && errno != EINTR)
			return vufe_err(fe, -errno, "poll: %s",
					strerror(errno));
	}
}

void vufe_disconnect(struct vufe *fe)
{
	if (fe->sock >= 0)
		close(fe->sock);
	fe->sock = -1;
}

int vufe_sock_fd(const struct vufe *fe)
{
	return fe->sock;
}

/* ---- hostile messages ---- */

int vufe_hostile_msg(struct vufe *fe, enum vufe_hostile_msg kind)
{
	struct vhost_vring_state s = { .index = 0, .num = 256 };
	__u8 raw[64] = { 0 };
	struct vufe_mem_table t;
	struct vufe_mem_reg m;
	int efd[2], err;
	__u64 v = 0;

	switch (kind) {
	case VUFE_BAD_MSG_TRUNCATED:
		/* SET_VRING_NUM needs 8 payload bytes; size says (and has) 4 */
		return vufe_send_msg(fe, VUFE_SET_VRING_NUM, VUFE_MSG_VERSION,
				     &s, 4, 4, NULL, 0);
	case VUFE_BAD_MSG_CLOSE_SHORT:
		/* SET_VRING_ADDR announces 40 bytes, 20 arrive, then EOF */
		err = vufe_send_msg(fe, VUFE_SET_VRING_ADDR, VUFE_MSG_VERSION,
				    raw, 40, 20, NULL, 0);
		if (!err && shutdown(fe->sock, SHUT_WR))
			err = vufe_err(fe, -errno, "shutdown: %s",
				       strerror(errno));
		return err;
	case VUFE_BAD_MSG_OVERSIZE:
		return vufe_send_msg(fe, VUFE_GET_FEATURES, VUFE_MSG_VERSION,
				     raw, 0xffffffffu, 8, NULL, 0);
	case VUFE_BAD_MSG_KICK_2FDS:
	case VUFE_BAD_MSG_CALL_NOFD:
		efd[0] = eventfd(0, EFD_CLOEXEC);
		efd[1] = eventfd(0, EFD_CLOEXEC);
		if (efd[0] < 0 || efd[1] < 0) {
			err = vufe_err(fe, -errno, "eventfd: %s",
				       strerror(errno));
		} else if (kind == VUFE_BAD_MSG_KICK_2FDS) {
			err = vufe_send_msg(fe, VUFE_SET_VRING_KICK,
					    VUFE_MSG_VERSION, &v, 8, 8, efd, 2);
		} else {
			/* no fd and no VUFE_VRING_NOFD: one fd missing */
			err = vufe_send_msg(fe, VUFE_SET_VRING_CALL,
					    VUFE_MSG_VERSION, &v, 8, 8, NULL, 0);
		}
		if (efd[0] >= 0)
			close(efd[0]);
		if (efd[1] >= 0)
			close(efd[1]);
		return err;
	case VUFE_BAD_MSG_ADD_MEM_NOFD:
		memset(&m, 0, sizeof(m));
		m.region = (struct vufe_mem_region){
			.guest_phys_addr = gpa_outside(fe),
			.memory_size = VUFE_PAGE,
			.userspace_addr = (__u64)(unsigned long)fe->mem,
		};
		return vufe_send_msg(fe, VUFE_ADD_MEM_REG, VUFE_MSG_VERSION, &m,
				     sizeof(m), sizeof(m), NULL, 0);
	case VUFE_BAD_MSG_MEM_TABLE_FDS:
		memset(&t, 0, sizeof(t));
		t.nregions = 2;
		t.regions[0] = (struct vufe_mem_region){
			.guest_phys_addr = 0, .memory_size = fe->mem_size / 2,
			.userspace_addr = (__u64)(unsigned long)fe->mem,
		};
		t.regions[1] = (struct vufe_mem_region){
			.guest_phys_addr = VUFE_SPLIT_GPA,
			.memory_size = fe->mem_size / 2,
			.userspace_addr =
				(__u64)(unsigned long)fe->mem + fe->mem_size / 2,
			.mmap_offset = fe->mem_size / 2,
		};
		return vufe_send_msg(fe, VUFE_SET_MEM_TABLE, VUFE_MSG_VERSION,
				     &t, 8 + 2 * 32, 8 + 2 * 32, &fe->memfd, 1);
	case VUFE_BAD_MSG_VRING_IDX:
		s.index = 200;
		return vufe_send_msg(fe, VUFE_SET_VRING_NUM, VUFE_MSG_VERSION,
				     &s, sizeof(s), sizeof(s), NULL, 0);
	case VUFE_BAD_MSG_VRING_NUM:
		s.num = 3;
		return vufe_send_msg(fe, VUFE_SET_VRING_NUM, VUFE_MSG_VERSION,
				     &s, sizeof(s), sizeof(s), NULL, 0);
	case VUFE_BAD_MSG_UNKNOWN:
		return vufe_send_msg(fe, 999, VUFE_MSG_VERSION, &v, 8, 8, NULL,
				     0);
	}
	return vufe_err(fe, -EINVAL, "hostile: unknown message kind %d", kind);
}

/*
 * Whether the backend still serves this connection: 1 if it answers
 * GET_FEATURES, 0 if it closed the connection, -ETIMEDOUT if it neither
 * answers nor closes.  Replies to other requests on the way are skipped.
 */
int vufe_backend_alive(struct vufe *fe, int timeout_ms)
{
	long long deadline = deadline_in(timeout_ms);
	__u8 payload[VUFE_MAX_PAYLOAD];
	__u32 hdr[3];
	int err;

	if (fe->sock < 0)
		return 0;
	err = vufe_send_msg(fe, VUFE_GET_FEATURES, VUFE_MSG_VERSION, NULL, 0,
			    0, NULL, 0);
	if (err == -EPIPE || err == -ECONNRESET)
		return 0;
	if (err)
		return err;
	for (;;) {
		err = read_full(fe, hdr, sizeof(hdr), deadline);
		if (err == -ECONNRESET || err == -EPIPE)
			return 0;
		if (err)
			return vufe_err(fe, err, "backend_alive: %s",
					strerror(-err));
		if (hdr[2] > sizeof(payload))
			return vufe_err(fe, -EPROTO,
					"backend_alive: reply size %u", hdr[2]);
		err = read_full(fe, payload, hdr[2], deadline);
		if (err == -ECONNRESET || err == -EPIPE)
			return 0;
		if (err)
			return err;
		if (hdr[0] == VUFE_GET_FEATURES)
			return 1;
	}
}
