/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One sendmsg(2) of a buffer with file descriptors attached (SCM_RIGHTS):
 * a vhost-user message, a vnetd hand-over record.  Header-only, so that
 * the tests and fuzzers that speak these protocols send the same way.
 */
#ifndef VNET_SENDFDS_H
#define VNET_SENDFDS_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/* the kernel's SCM_MAX_FD: the most fds one message carries */
#define VNET_SENDFDS_MAX 253

/*
 * sendmsg(FD) of LEN bytes at BUF with FDS[0..NFDS) attached, with FLAGS:
 * sendmsg's return (-1 and errno E2BIG for more than VNET_SENDFDS_MAX).
 */
static inline ssize_t vnet_send_fds(int fd, const void *buf, size_t len,
				    const int *fds, unsigned int nfds,
				    int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VNET_SENDFDS_MAX)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (nfds > VNET_SENDFDS_MAX) {
		errno = E2BIG;
		return -1;
	}
	if (nfds) {
		memset(ctl.buf, 0, CMSG_SPACE(sizeof(int) * nfds));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(fd, &mh, flags);
}

#endif /* VNET_SENDFDS_H */
