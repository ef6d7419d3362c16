// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The live hand-over of every port to a new vnetd (handover.h), both
 * sides, on a SOCK_SEQPACKET unix socket with the messages of record.h:
 *
 *   new                                  running (old)
 *   HELLO (its ports) ----------------->  the same ports?  else FAIL
 *                     <-----------------  PORT per port: tap queues,
 *   set up around them: pins, queue          netns, socket (fds)
 *   pairs and threads, the device
 *   READY ----------------------------->  freeze every port: rings
 *                                         stopped between two bursts,
 *                                         held signals sent, messages
 *                                         left unread
 *                     <-----------------  STATE per port: its device as
 *   import, checked by the handlers          messages (fds), the frontend's
 *   a frontend's messages go through         connection (fd); FRAMEs read
 *   PREPARED -------------------------->     from the tap, not delivered
 *                     <-----------------  COMMIT, then let go of it all
 *   start the rings, serve                   (nothing reset) and exit 0
 *
 * Until COMMIT the running vnetd can always go back: FAIL, a timeout or
 * the connection lost, and it thaws every port and serves on, the guests
 * having seen a pause of their rings at most.  The new one gives up the
 * same way, closing only what it was given.  The stall a guest sees is
 * from the freeze to the start of the rings: one round trip and the
 * import, milliseconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "handover_int.h"
#include "log.h"
#include "port/port.h"
#include "record.h"
#include "sendfds.h"
#include "server.h"

/* --takeovers queued behind another one: served in turn (handover_take.c) */
#define VNETD_HO_BACKLOG 64
/* a --takeover waits for the one before it: as long as a queued one */
#define LOCK_MS 100000

/* --- the socket -------------------------------------------------------- */

static uint8_t *rec_buf(void)
{
	static uint8_t *buf;

	if (!buf)
		buf = malloc(sizeof(struct vnetd_rec_hdr) + VNETD_REC_MAX);
	return buf;
}

int vnetd_ho_send(int fd, uint32_t type, const void *body, size_t len,
		  const void *extra, size_t elen, const int *fds,
		  unsigned int nfds)
{
	uint8_t *buf = rec_buf();
	size_t n;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	if (nfds > VNETD_REC_MAX_FDS)
		return -E2BIG;
	n = vnetd_rec_build(buf, sizeof(struct vnetd_rec_hdr) + VNETD_REC_MAX,
			    type, nfds, body, len, extra, elen);
	if (!n)
		return -E2BIG;
	do {
		r = vnet_send_fds(fd, buf, n, fds, nfds, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EMSGSIZE;
}

void vnetd_ho_fail(int fd, const char *fmt, ...)
{
	struct vnetd_rec_fail f = {};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f.reason, sizeof(f.reason), fmt, ap);
	va_end(ap);
	vnetd_ho_send(fd, VNETD_REC_FAIL, f.reason, strlen(f.reason), NULL, 0,
		      NULL, 0);
}

void vnetd_ho_fd_room(int fd, unsigned int want)
{
	struct rlimit rl;
	int lo, hi;

	lo = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (lo < 0)
		return;
	close(lo);
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur <= (rlim_t)lo + 1)
		return;
	if ((rlim_t)lo + want >= rl.rlim_cur)
		want = (unsigned int)(rl.rlim_cur - (rlim_t)lo - 1);
	/* the lowest free fd from LO + WANT on: the table grows to hold it */
	hi = fcntl(fd, F_DUPFD_CLOEXEC, lo + (int)want);
	if (hi >= 0)
		close(hi);
}

void vnetd_ho_close_fds(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * Wait up to TIMEOUT_MS for FD to be readable; SRV (may be NULL): its
 * frontends are served meanwhile.  0, or -ETIMEDOUT.
 */
static int wait_in(int fd, int timeout_ms, struct vhost_server *srv)
{
	struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
				 { .fd = srv ? vhost_server_fd(srv) : -1,
				   .events = POLLIN } };
	struct timespec t0, t;
	long left = timeout_ms, ms;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = poll(pfd, 2, (int)left);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret > 0 && pfd[0].revents)
			return 0;
		if (ret > 0 && pfd[1].revents)
			vhost_server_poll(srv, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= timeout_ms)
			return -ETIMEDOUT;
		left = timeout_ms - ms;
	}
}

int vnetd_ho_recv(int fd, int timeout_ms, uint32_t want,
		  struct vnetd_ho_msg *m, char *why, size_t wlen)
{
	return vnetd_ho_recv_serving(fd, timeout_ms, want, NULL, m, why, wlen);
}

/* The fds that came with MH, in M's (at most VNETD_REC_MAX_FDS). */
static void take_fds(struct msghdr *mh, struct vnetd_ho_msg *m)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t k, nfd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd && m->nfds < VNETD_REC_MAX_FDS; k++)
			memcpy(&m->fds[m->nfds++], CMSG_DATA(c) + k * sizeof(int),
			       sizeof(int));
	}
}

/*
 * The datagram of N bytes in BUF (MH's flags) into M: whole, a record,
 * of type WANT (or ALT, if not 0).  A FAIL is -ECANCELED with its reason
 * in WHY.
 */
static int check_msg(const uint8_t *buf, ssize_t n, int flags, uint32_t want,
		     uint32_t alt, struct vnetd_ho_msg *m, char *why,
		     size_t wlen)
{
	int ret;

	if (!n) {
		snprintf(why, wlen, "the other vnetd closed the connection before %s",
			 vnetd_rec_type_name(want));
		return -ECONNRESET;
	}
	if (flags & (MSG_TRUNC | MSG_CTRUNC)) {
		snprintf(why, wlen, "a message too large (or too many fds)");
		return -EMSGSIZE;
	}
	ret = vnetd_rec_check(buf, (size_t)n, m->nfds, &m->hdr, &m->body,
			      &m->len, why, wlen);
	if (ret)
		return ret;
	if (m->hdr.type == VNETD_REC_FAIL) {
		char reason[VNETD_REC_REASON];

		vnetd_rec_fail_parse(m->body, m->len, reason, sizeof(reason));
		snprintf(why, wlen, "the other vnetd gave up: %s", reason);
		return -ECANCELED;
	}
	if (m->hdr.type != want && (!alt || m->hdr.type != alt)) {
		snprintf(why, wlen, "%s where %s was due",
			 vnetd_rec_type_name(m->hdr.type),
			 vnetd_rec_type_name(want));
		return -EPROTO;
	}
	return 0;
}

static int recv_msg(int fd, int timeout_ms, uint32_t want, uint32_t alt,
		    struct vhost_server *srv, struct vnetd_ho_msg *m, char *why,
		    size_t wlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VNETD_REC_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	uint8_t *buf = rec_buf();
	struct iovec iov = { buf, sizeof(struct vnetd_rec_hdr) + VNETD_REC_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;
	int ret;

	m->nfds = 0;
	if (!buf) {
		snprintf(why, wlen, "out of memory");
		return -ENOMEM;
	}
	ret = wait_in(fd, timeout_ms, srv);
	if (ret) {
		snprintf(why, wlen, "no %s within %d ms",
			 vnetd_rec_type_name(want), timeout_ms);
		return ret;
	}
	do {
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		ret = -errno;
		snprintf(why, wlen, "waiting for %s: %s",
			 vnetd_rec_type_name(want), strerror(errno));
		return ret;
	}
	take_fds(&mh, m);
	ret = check_msg(buf, n, mh.msg_flags, want, alt, m, why, wlen);
	if (ret) {
		vnetd_ho_close_fds(m->fds, m->nfds);
		m->nfds = 0;
	}
	return ret;
}

int vnetd_ho_recv_serving(int fd, int timeout_ms, uint32_t want,
			  struct vhost_server *srv, struct vnetd_ho_msg *m,
			  char *why, size_t wlen)
{
	return recv_msg(fd, timeout_ms, want, 0, srv, m, why, wlen);
}

int vnetd_ho_recv_either(int fd, int timeout_ms, uint32_t want, uint32_t alt,
			 struct vnetd_ho_msg *m, char *why, size_t wlen)
{
	return recv_msg(fd, timeout_ms, want, alt, NULL, m, why, wlen);
}

/* --- one hand-over at a time (handover.h) ------------------------------ */

int vnetd_handover_lock(const char *path)
{
	const struct timespec nap = { 0, 10 * 1000 * 1000 };
	uint64_t deadline = vnetd_now_ns() + LOCK_MS * 1000000ULL;
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool said = false;
	int fd;

	vnetd_socket_dir(dir, sizeof(dir), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno; /* no directory: no vnetd there either */
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			vhost_warn("--takeover: flock %s: %s", dir,
				   strerror(errno));
			break;
		}
		if (vnetd_now_ns() > deadline) {
			vhost_warn("--takeover: another hand-over in %s still runs after %d s: going on without waiting for it",
				   dir, LOCK_MS / 1000);
			break;
		}
		if (!said)
			vhost_info("--takeover: another hand-over (flock on %s) is under way: waiting for it to finish, to take over from the vnetd it leaves",
				   dir);
		said = true;
		nanosleep(&nap, NULL);
	}
	return fd;
}

/* --- the running vnetd's side ------------------------------------------ */

/* the socket file this process bound (a socket's fstat is not its file's) */
static dev_t listen_dev;
static ino_t listen_ino;

int vnetd_handover_listen(const char *path)
{
	struct stat st;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			ret = -errno;
			vhost_err("hand-over socket %s: cannot create %s: %s",
				  path, dir, strerror(errno));
			return ret;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* a vnetd that holds it is found by the precheck of its ports */
	unlink(path);
	if (fchmod(fd, 0600) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, VNETD_HO_BACKLOG)) {
		ret = -errno;
		vhost_err("hand-over socket %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	if (!stat(path, &st)) {
		listen_dev = st.st_dev;
		listen_ino = st.st_ino;
	}
	return fd;
}

void vnetd_handover_unlisten(int lfd, const char *path)
{
	struct stat b;

	if (lfd < 0)
		return;
	/* ours still: no other vnetd took the path since */
	if (!stat(path, &b) && b.st_ino == listen_ino && b.st_dev == listen_dev)
		unlink(path);
	close(lfd);
}
