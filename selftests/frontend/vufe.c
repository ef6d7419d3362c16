// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vufe: a userspace virtio-net frontend for tests (see vufe.h and
 * docs/frontend.md).
 *
 * Layers, bottom up:
 *   - guest memory: one memfd, one or two vhost-user regions, a bump
 *     allocator in guest-physical space;
 *   - vhost-user messages: header + payload + SCM_RIGHTS fds on a
 *     non-blocking unix socket, every wait bounded by opts.timeout_ms;
 *   - the handshake, in QEMU 7.2's order;
 *   - split virtqueues driven as Linux's virtio_ring.c/virtio_net.c do:
 *     a descriptor free list with a shadow of the next fields, avail
 *     publication with a release store, kick suppression through
 *     avail_event (EVENT_IDX) or VRING_USED_F_NO_NOTIFY, callbacks
 *     through used_event or VRING_AVAIL_F_NO_INTERRUPT;
 *   - the net device: TX header layouts, RX mergeable/big/large buffers.
 */
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

#include "vufe.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vufe assumes a little-endian host (virtio 1.x rings are little-endian)"
#endif

#define VUFE_GUARD		64	/* poisoned bytes after each buffer */
#define VUFE_POISON		0xa5
#define VUFE_INDIR_MAX		32	/* entries per slot's indirect table */
#define VUFE_MAX_PAYLOAD	4096
#define VUFE_MAX_FDS		8
#define VUFE_BIG_PIECES		(1 + (VUFE_BIG_DATA + VUFE_PAGE - 1) / VUFE_PAGE)
#define VUFE_SPLIT_GPA		(1ULL << 32)

_Static_assert(sizeof(struct vring_desc) == 16, "vring_desc");
_Static_assert(sizeof(struct vhost_vring_state) == 8, "vhost_vring_state");
_Static_assert(sizeof(struct vhost_vring_addr) == 40, "vhost_vring_addr");
_Static_assert(VUFE_BIG_PIECES == 18, "big packets chain: hdr + 17 pages");

/* vhost-user payloads that linux/vhost_types.h does not describe */
struct vufe_mem_region {
	__u64 guest_phys_addr;
	__u64 memory_size;
	__u64 userspace_addr;
	__u64 mmap_offset;
};

struct vufe_mem_table {
	__u32 nregions;
	__u32 padding;
	struct vufe_mem_region regions[8];
};

struct vufe_mem_reg {
	__u64 padding;
	struct vufe_mem_region region;
};

_Static_assert(sizeof(struct vufe_mem_region) == 32, "mem region");
_Static_assert(sizeof(struct vufe_mem_table) == 8 + 8 * 32, "mem table");
_Static_assert(sizeof(struct vufe_mem_reg) == 40, "mem reg");

struct vufe_region_state {
	__u64 gpa;
	__u64 size;
	__u64 mmap_offset;	/* into the memfd */
	__u8 *hva;
	__u64 next;		/* allocator: first free byte (offset) */
};

/* one buffer: a TX frame's memory or an RX buffer (or big chain) */
struct vufe_slot {
	__u8 *buf;
	__u64 gpa;
	__u8 *hdr;		/* TX: separate header, in region 0 */
	__u64 hdr_gpa;
	struct vring_desc *indir;
	__u64 indir_gpa;
};

enum { HEAD_FREE, HEAD_TX, HEAD_RX, HEAD_HOSTILE };

/* what the driver remembers about a descriptor that heads a chain */
struct vufe_head {
	__u8 state;
	__u16 ndescs;		/* ring descriptors (1 when indirect) */
	__u16 slot;
	__u32 cap;		/* RX: bytes the device may write */
};

struct vufe_vq {
	unsigned int index;
	bool tx;
	bool started;		/* set up at least once */
	unsigned int num;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	__u64 desc_gpa, avail_gpa, used_gpa;
	int kick_fd, call_fd;
	__u16 avail_idx;	/* shadow of avail->idx */
	__u16 last_used;
	__u16 num_added;	/* since the last kick decision */
	__u16 avail_flags;	/* shadow of avail->flags */
	__u16 *free;		/* free descriptor ids (a stack) */
	unsigned int nr_free;
	__u16 *next;		/* shadow of desc[].next */
	struct vufe_head *heads;
	struct vufe_slot *slots;
	unsigned int nr_slots;
	__u16 *free_slots;
	unsigned int nr_free_slots;
	size_t slot_size;
	unsigned int inflight;	/* chains made available, not yet used */
	bool base_saved;	/* GET_VRING_BASE answered since setup */
	__u16 base;		/* the answer, or the base to start from */
	struct vufe_vq_stats st;
};

struct vufe {
	struct vufe_opts o;
	char err[256];
	int sock;
	int listen_fd;
	bool listening;		/* accept on (re)connect instead of connect */
	int memfd;
	__u8 *mem;
	size_t mem_size;
	unsigned int nr_regions;
	struct vufe_region_state reg[VUFE_MAX_REGIONS];
	__u64 backend_features, features;
	__u64 backend_proto, proto;
	__u64 max_queues, max_mem_slots;
	unsigned int hdr_len;
	enum vufe_rx_mode rx_mode;
	bool rx_ready;		/* RX slots allocated for rx_mode */
	unsigned int nr_vq;
	struct vufe_vq vq[VUFE_MAX_VQ];
};

static int vufe_err(struct vufe *fe, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int vufe_err(struct vufe *fe, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fe->err, sizeof(fe->err), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

/* why the last vufe_create() of this thread failed */
static __thread char create_err[256];

const char *vufe_strerror(const struct vufe *fe)
{
	if (!fe)
		return create_err[0] ? create_err : "no error";
	return fe->err[0] ? fe->err : "no error";
}

static bool has(__u64 features, unsigned int bit)
{
	return features & (1ULL << bit);
}

/* deadlines are in microseconds, so a wait is never cut short by rounding */
static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static long long deadline_in(int ms)
{
	return now_us() + ms * 1000LL;
}

/* milliseconds left, rounded up; 0 once the deadline has passed */
static int remaining_ms(long long deadline)
{
	long long left = deadline - now_us();

	if (left <= 0)
		return 0;
	left = (left + 999) / 1000;
	return left > 1000000 ? 1000000 : (int)left;
}

/* ---- ring field access: little-endian, atomic where the device races ---- */

static __u16 ld16(const __virtio16 *p, int order)
{
	return le16toh(__atomic_load_n((const __u16 *)p, order));
}

static void st16(__virtio16 *p, __u16 v, int order)
{
	__atomic_store_n((__u16 *)p, htole16(v), order);
}

static __virtio16 *used_event(struct vufe_vq *vq)
{
	return &vq->avail->ring[vq->num];
}

static __virtio16 *avail_event(struct vufe_vq *vq)
{
	return (__virtio16 *)&vq->used->ring[vq->num];
}

static void mb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ---- guest memory ---- */

static int alloc_in(struct vufe *fe, unsigned int r, size_t size, size_t align,
		    __u64 *gpa, void **ptr)
{
	struct vufe_region_state *rs = &fe->reg[r];
	__u64 off = (rs->next + align - 1) & ~((__u64)align - 1);

	if (off + size > rs->size || off + size < off)
		return -ENOMEM;
	rs->next = off + size;
	*gpa = rs->gpa + off;
	*ptr = rs->hva + off;
	return 0;
}

int vufe_alloc(struct vufe *fe, size_t size, size_t align, unsigned int region,
	       __u64 *gpa, void **ptr)
{
	unsigned int i;

	if (!align || (align & (align - 1)))
		return vufe_err(fe, -EINVAL, "alloc: bad alignment %zu", align);
	if (region >= fe->nr_regions)
		region = fe->nr_regions - 1;
	/* the region asked for, then any other */
	if (!alloc_in(fe, region, size, align, gpa, ptr))
		return 0;
	for (i = 0; i < fe->nr_regions; i++)
		if (i != region && !alloc_in(fe, i, size, align, gpa, ptr))
			return 0;
	return vufe_err(fe, -ENOMEM,
			"guest memory exhausted allocating %zu bytes "
			"(mem_size %zu): raise opts.mem_size",
			size, fe->mem_size);
}

void *vufe_gpa_to_ptr(struct vufe *fe, __u64 gpa, size_t len)
{
	unsigned int i;

	for (i = 0; i < fe->nr_regions; i++) {
		struct vufe_region_state *rs = &fe->reg[i];

		if (gpa >= rs->gpa && gpa - rs->gpa <= rs->size &&
		    len <= rs->size - (gpa - rs->gpa))
			return rs->hva + (gpa - rs->gpa);
	}
	return NULL;
}

int vufe_region(const struct vufe *fe, unsigned int i, __u64 *gpa,
		__u64 *size, __u64 *hva)
{
	if (i >= fe->nr_regions)
		return -ENOENT;
	*gpa = fe->reg[i].gpa;
	*size = fe->reg[i].size;
	*hva = (__u64)(unsigned long)fe->reg[i].hva;
	return 0;
}

/* a guest-physical address in no region, well away from all of them */
static __u64 gpa_outside(const struct vufe *fe)
{
	__u64 end = 0;
	unsigned int i;

	for (i = 0; i < fe->nr_regions; i++)
		if (fe->reg[i].gpa + fe->reg[i].size > end)
			end = fe->reg[i].gpa + fe->reg[i].size;
	return end + (16ULL << 20);
}

static int mem_init(struct vufe *fe)
{
	size_t size = fe->o.mem_size;
	size_t half;

	size = (size + VUFE_PAGE - 1) & ~(size_t)(VUFE_PAGE - 1);
	fe->memfd = memfd_create("vufe-guest", MFD_CLOEXEC);
	if (fe->memfd < 0)
		return vufe_err(fe, -errno, "memfd_create: %s", strerror(errno));
	if (ftruncate(fe->memfd, size))
		return vufe_err(fe, -errno, "ftruncate memfd to %zu: %s", size,
				strerror(errno));
	fe->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fe->memfd, 0);
	if (fe->mem == MAP_FAILED) {
		fe->mem = NULL;
		return vufe_err(fe, -errno, "mmap guest memory: %s",
				strerror(errno));
	}
	fe->mem_size = size;

	fe->nr_regions = fe->o.nr_regions == 2 ? 2 : 1;
	if (fe->nr_regions == 1) {
		fe->reg[0] = (struct vufe_region_state){
			.gpa = fe->o.gpa_base, .size = size, .hva = fe->mem,
		};
	} else {
		half = (size / 2) & ~(size_t)(VUFE_PAGE - 1);
		fe->reg[0] = (struct vufe_region_state){
			.gpa = fe->o.gpa_base, .size = half, .hva = fe->mem,
		};
		fe->reg[1] = (struct vufe_region_state){
			.gpa = fe->o.gpa_base + half > VUFE_SPLIT_GPA ?
				       fe->o.gpa_base + 2 * VUFE_SPLIT_GPA :
				       VUFE_SPLIT_GPA,
			.size = size - half,
			.mmap_offset = half,
			.hva = fe->mem + half,
		};
	}
	/* nothing at guest-physical 0 of a region: a zero address is a bug */
	fe->reg[0].next = VUFE_PAGE;
	if (fe->nr_regions == 2)
		fe->reg[1].next = VUFE_PAGE;
	return 0;
}

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

/* reads exactly len bytes; fds that arrive are closed (replies carry none) */
static int read_full(struct vufe *fe, void *buf, size_t len, long long deadline)
{
	char cbuf[CMSG_SPACE(VUFE_MAX_FDS * sizeof(int))];
	size_t got = 0;
	ssize_t n;
	int err;

	while (got < len) {
		struct iovec iov = { (char *)buf + got, len - got };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *c;

		n = recvmsg(fe->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
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
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			int *fds = (int *)CMSG_DATA(c);
			size_t i, nr;

			if (c->cmsg_level != SOL_SOCKET ||
			    c->cmsg_type != SCM_RIGHTS)
				continue;
			nr = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (i = 0; i < nr; i++)
				close(fds[i]);
		}
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

static int msg(struct vufe *fe, __u32 request, bool need_reply,
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

static int get_u64(struct vufe *fe, __u32 request, __u64 *v)
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

static int set_u64(struct vufe *fe, __u32 request, __u64 v)
{
	return msg(fe, request, false, &v, sizeof(v), NULL, 0);
}

static int set_state(struct vufe *fe, __u32 request, unsigned int index,
		     unsigned int num, bool need_reply)
{
	struct vhost_vring_state s = { .index = index, .num = num };

	return msg(fe, request, need_reply, &s, sizeof(s), NULL, 0);
}

static int set_vring_fd(struct vufe *fe, __u32 request, unsigned int index,
			int fd)
{
	__u64 v = index & VUFE_VRING_IDX_MASK;

	if (fd < 0) {
		v |= VUFE_VRING_NOFD;
		return msg(fe, request, false, &v, sizeof(v), NULL, 0);
	}
	return msg(fe, request, false, &v, sizeof(v), &fd, 1);
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

/* ---- creation ---- */

static int vq_alloc_ring(struct vufe *fe, struct vufe_vq *vq)
{
	unsigned int n = vq->num, i;
	void *p;
	int err;

	/* desc table, avail ring (+ used_event), used ring (+ avail_event) */
	err = vufe_alloc(fe, 16 * n, VUFE_PAGE, 0, &vq->desc_gpa, &p);
	if (err)
		return err;
	vq->desc = p;
	err = vufe_alloc(fe, 6 + 2 * n, VUFE_PAGE, 0, &vq->avail_gpa, &p);
	if (err)
		return err;
	vq->avail = p;
	err = vufe_alloc(fe, 6 + 8 * n, VUFE_PAGE, 0, &vq->used_gpa, &p);
	if (err)
		return err;
	vq->used = p;

	vq->free = calloc(n, sizeof(*vq->free));
	vq->next = calloc(n, sizeof(*vq->next));
	vq->heads = calloc(n, sizeof(*vq->heads));
	if (!vq->free || !vq->next || !vq->heads)
		return vufe_err(fe, -ENOMEM, "out of memory");
	/* pop order 0, 1, 2...: the stack holds them reversed */
	for (i = 0; i < n; i++)
		vq->free[i] = n - 1 - i;
	vq->nr_free = n;

	vq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	vq->call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vq->kick_fd < 0 || vq->call_fd < 0)
		return vufe_err(fe, -errno, "eventfd: %s", strerror(errno));
	return 0;
}

static void poison(__u8 *p, size_t len)
{
	memset(p, VUFE_POISON, len);
}

static bool poisoned(const __u8 *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != VUFE_POISON)
			return false;
	return true;
}

static int vq_alloc_slots(struct vufe *fe, struct vufe_vq *vq,
			  unsigned int nr, size_t size, bool hdr)
{
	unsigned int data_region = fe->nr_regions - 1, i;
	void *p;
	int err;

	vq->slots = calloc(nr, sizeof(*vq->slots));
	vq->free_slots = calloc(nr, sizeof(*vq->free_slots));
	if (!vq->slots || !vq->free_slots)
		return vufe_err(fe, -ENOMEM, "out of memory");
	vq->nr_slots = nr;
	vq->slot_size = size;
	for (i = 0; i < nr; i++) {
		struct vufe_slot *s = &vq->slots[i];

		err = vufe_alloc(fe, size + VUFE_GUARD, 64, data_region,
				 &s->gpa, &p);
		if (err)
			return err;
		s->buf = p;
		poison(s->buf, size + VUFE_GUARD);
		err = vufe_alloc(fe, VUFE_INDIR_MAX * 16, 16, 0, &s->indir_gpa,
				 &p);
		if (err)
			return err;
		s->indir = p;
		if (hdr) {
			err = vufe_alloc(fe, 16 + VUFE_GUARD, 16, 0,
					 &s->hdr_gpa, &p);
			if (err)
				return err;
			s->hdr = p;
			poison(s->hdr, 16 + VUFE_GUARD);
		}
		vq->free_slots[i] = nr - 1 - i;
	}
	vq->nr_free_slots = nr;
	return 0;
}

int vufe_create(const struct vufe_opts *opts, struct vufe **fep)
{
	struct vufe *fe;
	unsigned int i, n;
	int err;

	*fep = NULL;
	fe = calloc(1, sizeof(*fe));
	if (!fe)
		return -ENOMEM;
	fe->o = *opts;
	fe->sock = -1;
	fe->listen_fd = -1;
	fe->memfd = -1;
	for (i = 0; i < VUFE_MAX_VQ; i++) {
		fe->vq[i].kick_fd = -1;
		fe->vq[i].call_fd = -1;
	}
	if (!fe->o.timeout_ms)
		fe->o.timeout_ms = 5000;
	if (!fe->o.nr_qp)
		fe->o.nr_qp = 1;
	if (!fe->o.ring_size)
		fe->o.ring_size = 256;
	if (!fe->o.mem_size)
		fe->o.mem_size = 64UL << 20;
	if (!fe->o.tx_slots)
		fe->o.tx_slots = 64;
	if (!fe->o.tx_buf_size)
		fe->o.tx_buf_size = 68 << 10;
	n = fe->o.ring_size;
	err = -EINVAL;
	if (fe->o.nr_qp > VUFE_MAX_QP) {
		vufe_err(fe, err, "nr_qp %u > %u", fe->o.nr_qp, VUFE_MAX_QP);
		goto fail;
	}
	if (n > 32768 || (n & (n - 1))) {
		vufe_err(fe, err, "ring_size %u: not a power of two <= 32768",
			 n);
		goto fail;
	}
	if (fe->o.rx_mode == VUFE_RX_MERGEABLE)
		fe->o.rx_mode = VUFE_RX_BIG;

	err = mem_init(fe);
	if (err)
		goto fail;
	fe->nr_vq = 2 * fe->o.nr_qp;
	for (i = 0; i < fe->nr_vq; i++) {
		struct vufe_vq *vq = &fe->vq[i];

		vq->index = i;
		vq->tx = i & 1;
		vq->num = n;
		err = vq_alloc_ring(fe, vq);
		if (err)
			goto fail;
		if (vq->tx) {
			err = vq_alloc_slots(fe, vq,
					     fe->o.tx_slots < n ? fe->o.tx_slots : n,
					     fe->o.tx_buf_size, true);
			if (err)
				goto fail;
		}
	}
	*fep = fe;
	return 0;
fail:
	/* fe goes away: keep its reason for vufe_strerror(NULL) */
	memcpy(create_err, fe->err, sizeof(create_err));
	vufe_destroy(fe);
	return err;
}

void vufe_destroy(struct vufe *fe)
{
	unsigned int i;

	if (!fe)
		return;
	vufe_disconnect(fe);
	if (fe->listen_fd >= 0) {
		close(fe->listen_fd);
		if (fe->o.path)
			unlink(fe->o.path);
	}
	for (i = 0; i < VUFE_MAX_VQ; i++) {
		struct vufe_vq *vq = &fe->vq[i];

		if (vq->kick_fd >= 0)
			close(vq->kick_fd);
		if (vq->call_fd >= 0)
			close(vq->call_fd);
		free(vq->free);
		free(vq->next);
		free(vq->heads);
		free(vq->slots);
		free(vq->free_slots);
	}
	if (fe->mem)
		munmap(fe->mem, fe->mem_size);
	if (fe->memfd >= 0)
		close(fe->memfd);
	free(fe);
}

/* ---- negotiation and setup, in QEMU 7.2's order ---- */

__u64 vufe_features(const struct vufe *fe)
{
	return fe->features;
}

__u64 vufe_backend_features(const struct vufe *fe)
{
	return fe->backend_features;
}

__u64 vufe_protocol_features(const struct vufe *fe)
{
	return fe->proto;
}

__u64 vufe_backend_protocol_features(const struct vufe *fe)
{
	return fe->backend_proto;
}

__u64 vufe_max_queues(const struct vufe *fe)
{
	return fe->max_queues;
}

__u64 vufe_max_mem_slots(const struct vufe *fe)
{
	return fe->max_mem_slots;
}

unsigned int vufe_hdr_len(const struct vufe *fe)
{
	return fe->hdr_len;
}

enum vufe_rx_mode vufe_rx_mode(const struct vufe *fe)
{
	return fe->rx_mode;
}

static struct vufe_vq *get_vq(struct vufe *fe, unsigned int vq)
{
	return vq < fe->nr_vq ? &fe->vq[vq] : NULL;
}

/* RX piece k of a slot: where the device writes, and how much */
static unsigned int rx_pieces(const struct vufe *fe, const struct vufe_vq *vq,
			      const struct vufe_slot *s, __u8 **p, __u64 *gpa,
			      __u32 *len)
{
	unsigned int k;
	__u32 left;

	switch (fe->rx_mode) {
	case VUFE_RX_MERGEABLE:
	case VUFE_RX_LARGE:
		p[0] = s->buf;
		gpa[0] = s->gpa;
		len[0] = vq->slot_size;
		return 1;
	case VUFE_RX_BIG:
		/* the header alone, then pages, each followed by a guard */
		left = VUFE_BIG_DATA;
		for (k = 0; k < VUFE_BIG_PIECES; k++) {
			p[k] = s->buf + k * (VUFE_PAGE + VUFE_GUARD);
			gpa[k] = s->gpa + k * (VUFE_PAGE + VUFE_GUARD);
			if (!k) {
				len[k] = fe->hdr_len;
			} else {
				len[k] = left < VUFE_PAGE ? left : VUFE_PAGE;
				left -= len[k];
			}
		}
		return VUFE_BIG_PIECES;
	}
	return 0;
}

static int rx_prepare(struct vufe *fe)
{
	enum vufe_rx_mode mode;
	unsigned int i, nr, want;
	size_t size;
	int err;

	if (has(fe->features, VIRTIO_NET_F_MRG_RXBUF))
		mode = VUFE_RX_MERGEABLE;
	else
		mode = fe->o.rx_mode;
	if (fe->rx_ready) {
		if (mode != fe->rx_mode)
			return vufe_err(fe, -EINVAL,
					"RX mode changed across reconnect");
		return 0;
	}
	fe->rx_mode = mode;
	for (i = 0; i < fe->nr_vq; i += 2) {
		struct vufe_vq *vq = &fe->vq[i];

		want = fe->o.rx_slots;
		switch (mode) {
		case VUFE_RX_MERGEABLE:
			size = VUFE_PAGE;
			nr = want ? want : vq->num;
			break;
		case VUFE_RX_BIG:
			size = VUFE_BIG_PIECES * (VUFE_PAGE + VUFE_GUARD);
			if (has(fe->features, VIRTIO_RING_F_INDIRECT_DESC))
				nr = want ? want : 64;
			else
				nr = want ? want : vq->num / VUFE_BIG_PIECES;
			break;
		default:
			size = fe->hdr_len + VUFE_BIG_DATA;
			nr = want ? want : 64;
			break;
		}
		if (nr > vq->num)
			nr = vq->num;
		if (!nr)
			return vufe_err(fe, -EINVAL,
					"ring_size %u too small for RX mode %d",
					vq->num, mode);
		err = vq_alloc_slots(fe, vq, nr, size, false);
		if (err)
			return err;
	}
	fe->rx_ready = true;
	return 0;
}

static int send_memory(struct vufe *fe)
{
	int fds[VUFE_MAX_REGIONS];
	struct vufe_mem_table t;
	unsigned int i;
	int err;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < fe->nr_regions; i++) {
		struct vufe_region_state *rs = &fe->reg[i];
		struct vufe_mem_region r = {
			.guest_phys_addr = rs->gpa,
			.memory_size = rs->size,
			.userspace_addr = (__u64)(unsigned long)rs->hva,
			.mmap_offset = rs->mmap_offset,
		};

		if (has(fe->proto, VUFE_PROTO_CONFIGURE_MEM_SLOTS)) {
			/* one region per message, each acked (QEMU) */
			struct vufe_mem_reg m = { .region = r };

			err = msg(fe, VUFE_ADD_MEM_REG, true, &m, sizeof(m),
				  &fe->memfd, 1);
			if (err)
				return err;
		}
		t.regions[i] = r;
		fds[i] = fe->memfd;
	}
	if (has(fe->proto, VUFE_PROTO_CONFIGURE_MEM_SLOTS))
		return 0;
	t.nregions = fe->nr_regions;
	return msg(fe, VUFE_SET_MEM_TABLE, true, &t,
		   8 + fe->nr_regions * sizeof(t.regions[0]), fds,
		   fe->nr_regions);
}

static __u16 start_base(struct vufe_vq *vq)
{
	if (!vq->started || vq->base_saved)
		return vq->base;
	/*
	 * The backend went away without GET_VRING_BASE: resume from what it
	 * had published, as QEMU does (in-flight buffers are made again).
	 */
	return ld16(&vq->used->idx, __ATOMIC_ACQUIRE);
}

static int start_vq(struct vufe *fe, struct vufe_vq *vq)
{
	struct vhost_vring_addr a = {
		.index = vq->index,
		.flags = 0,
		.desc_user_addr = (__u64)(unsigned long)vq->desc,
		.used_user_addr = (__u64)(unsigned long)vq->used,
		.avail_user_addr = (__u64)(unsigned long)vq->avail,
		/* guest-physical, as QEMU fills it even with logging off */
		.log_guest_addr = vq->used_gpa,
	};
	__u16 base = start_base(vq);
	int err;

	err = set_state(fe, VUFE_SET_VRING_NUM, vq->index, vq->num, false);
	if (!err)
		err = set_state(fe, VUFE_SET_VRING_BASE, vq->index, base,
				false);
	if (!err)
		err = msg(fe, VUFE_SET_VRING_ADDR, false, &a, sizeof(a), NULL,
			  0);
	if (!err)
		err = set_vring_fd(fe, VUFE_SET_VRING_KICK, vq->index,
				   vq->kick_fd);
	if (!err)
		err = set_vring_fd(fe, VUFE_SET_VRING_CALL, vq->index,
				   vq->call_fd);
	if (err)
		return err;
	vq->base = base;
	vq->base_saved = false;
	vq->started = true;
	return 0;
}

int vufe_setup(struct vufe *fe)
{
	__u64 want = fe->o.want_features, f;
	unsigned int i;
	int err;

	fe->backend_proto = 0;
	fe->proto = 0;
	fe->max_queues = 1;
	fe->max_mem_slots = 8;	/* VHOST_MEMORY_BASELINE_NREGIONS */

	err = get_u64(fe, VUFE_GET_FEATURES, &fe->backend_features);
	if (err)
		return err;
	if (has(fe->backend_features, VUFE_F_PROTOCOL_FEATURES) &&
	    has(want, VUFE_F_PROTOCOL_FEATURES)) {
		err = get_u64(fe, VUFE_GET_PROTOCOL_FEATURES,
			      &fe->backend_proto);
		if (err)
			return err;
		fe->proto = fe->backend_proto & fe->o.want_protocol &
			    VUFE_PROTO_ACKED;
		/* not acked yet: SET_PROTOCOL_FEATURES itself never waits */
		err = set_u64(fe, VUFE_SET_PROTOCOL_FEATURES, fe->proto);
		if (err)
			return err;
		if (has(fe->proto, VUFE_PROTO_MQ)) {
			err = get_u64(fe, VUFE_GET_QUEUE_NUM, &fe->max_queues);
			if (err)
				return err;
		}
		if (has(fe->proto, VUFE_PROTO_CONFIGURE_MEM_SLOTS)) {
			err = get_u64(fe, VUFE_GET_MAX_MEM_SLOTS,
				      &fe->max_mem_slots);
			if (err)
				return err;
		}
	}
	if (fe->o.nr_qp > fe->max_queues)
		return vufe_err(fe, -EOPNOTSUPP,
				"%u queue pairs wanted, the backend has %llu%s",
				fe->o.nr_qp,
				(unsigned long long)fe->max_queues,
				has(fe->proto, VUFE_PROTO_MQ) ?
					"" : " (no MQ protocol feature)");
	if (fe->nr_regions > fe->max_mem_slots)
		return vufe_err(fe, -EOPNOTSUPP,
				"%u memory regions, the backend takes %llu",
				fe->nr_regions,
				(unsigned long long)fe->max_mem_slots);

	err = msg(fe, VUFE_SET_OWNER, false, NULL, 0, NULL, 0);
	if (err)
		return err;
	/* QEMU's vhost_dev_init asks again after SET_OWNER */
	err = get_u64(fe, VUFE_GET_FEATURES, &f);
	if (err)
		return err;
	if (fe->o.nr_qp > 1)
		want |= 1ULL << VIRTIO_NET_F_MQ;
	fe->features = fe->backend_features & want;
	err = set_u64(fe, VUFE_SET_FEATURES, fe->features);
	if (err)
		return err;
	fe->hdr_len = has(fe->features, VIRTIO_F_VERSION_1) ||
				      has(fe->features, VIRTIO_NET_F_MRG_RXBUF) ?
			      sizeof(struct virtio_net_hdr_mrg_rxbuf) :
			      sizeof(struct virtio_net_hdr);
	err = rx_prepare(fe);
	if (err)
		return err;

	err = send_memory(fe);
	if (err)
		return err;
	for (i = 0; i < fe->nr_vq; i++) {
		err = start_vq(fe, &fe->vq[i]);
		if (err)
			return err;
	}
	/* rings start on SET_VRING_ENABLE, or at once without bit 30 */
	if (has(fe->features, VUFE_F_PROTOCOL_FEATURES)) {
		for (i = 0; i < fe->nr_vq; i++) {
			err = set_state(fe, VUFE_SET_VRING_ENABLE, i, 1,
					fe->o.enable_need_reply);
			if (err)
				return err;
		}
	}
	return 0;
}

int vufe_stop(struct vufe *fe)
{
	struct vhost_vring_state s;
	unsigned int i;
	__u32 size;
	int err;

	for (i = 0; i < fe->nr_vq; i++) {
		struct vufe_vq *vq = &fe->vq[i];

		if (!vq->started)
			continue;
		s = (struct vhost_vring_state){ .index = i };
		err = vufe_send_msg(fe, VUFE_GET_VRING_BASE, VUFE_MSG_VERSION,
				    &s, sizeof(s), sizeof(s), NULL, 0);
		if (err)
			return err;
		err = vufe_recv_reply(fe, VUFE_GET_VRING_BASE, &s, sizeof(s),
				      &size);
		if (err)
			return err;
		if (size != sizeof(s) || s.index != i)
			return vufe_err(fe, -EPROTO,
					"GET_VRING_BASE %u: reply size %u index %u",
					i, size, s.index);
		vq->base = s.num;
		vq->base_saved = true;
		vq->st.base = s.num;
	}
	return 0;
}

int vufe_reconnect(struct vufe *fe)
{
	int err;

	vufe_disconnect(fe);
	err = fe->listening ? vufe_accept(fe) : vufe_connect(fe);
	if (err)
		return err;
	return vufe_setup(fe);
}

int vufe_set_vring_base(struct vufe *fe, unsigned int idx, __u16 base)
{
	struct vufe_vq *vq = get_vq(fe, idx);

	if (!vq)
		return vufe_err(fe, -EINVAL, "no vring %u", idx);
	if (vq->started || vq->inflight)
		return vufe_err(fe, -EBUSY,
				"vring %u: base can only be set before setup",
				idx);
	vq->base = base;
	vq->avail_idx = base;
	vq->last_used = base;
	st16(&vq->avail->idx, base, __ATOMIC_RELEASE);
	st16(&vq->used->idx, base, __ATOMIC_RELEASE);
	st16(used_event(vq), base, __ATOMIC_RELAXED);
	st16(avail_event(vq), base, __ATOMIC_RELAXED);
	return 0;
}

int vufe_ring(struct vufe *fe, unsigned int idx, struct vufe_ring *r)
{
	struct vufe_vq *vq = get_vq(fe, idx);

	if (!vq)
		return -EINVAL;
	*r = (struct vufe_ring){
		.num = vq->num,
		.desc = vq->desc,
		.avail = vq->avail,
		.used = vq->used,
		.desc_gpa = vq->desc_gpa,
		.avail_gpa = vq->avail_gpa,
		.used_gpa = vq->used_gpa,
		.kick_fd = vq->kick_fd,
		.call_fd = vq->call_fd,
	};
	return 0;
}

/* ---- split virtqueue: descriptors, avail, kicks, callbacks ---- */

static int desc_get(struct vufe_vq *vq, unsigned int n, __u16 *ids)
{
	unsigned int i;

	if (vq->nr_free < n)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		ids[i] = vq->free[--vq->nr_free];
	return 0;
}

static void desc_write(struct vufe_vq *vq, const __u16 *ids, unsigned int n,
		       const __u64 *addr, const __u32 *len, __u16 flags)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vring_desc *d = &vq->desc[ids[i]];
		__u16 f = flags;

		if (i + 1 < n) {
			f |= VRING_DESC_F_NEXT;
			vq->next[ids[i]] = ids[i + 1];
		}
		d->addr = htole64(addr[i]);
		d->len = htole32(len[i]);
		d->flags = htole16(f);
		d->next = htole16(i + 1 < n ? ids[i + 1] : 0);
	}
}

/* an indirect table in the slot, and the one ring descriptor naming it */
static void indirect_write(struct vufe_vq *vq, struct vufe_slot *s, __u16 id,
			   unsigned int n, const __u64 *addr, const __u32 *len,
			   __u16 flags)
{
	struct vring_desc *d = &vq->desc[id];
	unsigned int i;

	for (i = 0; i < n; i++) {
		s->indir[i].addr = htole64(addr[i]);
		s->indir[i].len = htole32(len[i]);
		s->indir[i].flags =
			htole16(flags | (i + 1 < n ? VRING_DESC_F_NEXT : 0));
		s->indir[i].next = htole16(i + 1 < n ? i + 1 : 0);
	}
	d->addr = htole64(s->indir_gpa);
	d->len = htole32(n * sizeof(struct vring_desc));
	d->flags = htole16(VRING_DESC_F_INDIRECT);
	d->next = 0;
}

static void chain_free(struct vufe_vq *vq, __u16 head)
{
	struct vufe_head *h = &vq->heads[head];
	__u16 id = head;
	unsigned int i;

	for (i = 0; i < h->ndescs; i++) {
		vq->free[vq->nr_free++] = id;
		id = vq->next[id];
	}
	if (h->state == HEAD_TX || h->state == HEAD_RX)
		vq->free_slots[vq->nr_free_slots++] = h->slot;
	h->state = HEAD_FREE;
	h->ndescs = 0;
}

/*
 * Makes a chain available: the ring entry first, then avail->idx with a
 * release store (Linux: virtio_wmb() before the idx update).
 */
static void publish(struct vufe_vq *vq, __u16 head)
{
	vq->avail->ring[vq->avail_idx & (vq->num - 1)] = htole16(head);
	vq->avail_idx++;
	st16(&vq->avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
	vq->num_added++;
	vq->inflight++;
	vq->st.avail++;
}

bool vufe_need_event(__u16 event_idx, __u16 new_idx, __u16 old_idx)
{
	/* kick iff event_idx is in [old, new): the device asked for it */
	return (__u16)(new_idx - event_idx - 1) < (__u16)(new_idx - old_idx);
}

static int do_kick(struct vufe_vq *vq)
{
	__u64 one = 1;

	if (write(vq->kick_fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	vq->st.kicks++;
	return 1;
}

/*
 * virtqueue_kick_prepare_split() + notify: a full barrier between the avail
 * idx store and reading the device's suppression state, then kick only if
 * the device asked (avail_event crossed, or NO_NOTIFY clear).  Returns 1
 * if kicked, 0 if suppressed or nothing was added.
 */
int vufe_kick(struct vufe *fe, unsigned int idx)
{
	struct vufe_vq *vq = get_vq(fe, idx);
	__u16 new, old;
	bool need;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no vring %u", idx);
	if (!vq->num_added)
		return 0;
	mb();
	new = vq->avail_idx;
	old = new - vq->num_added;
	vq->num_added = 0;
	if (has(fe->features, VIRTIO_RING_F_EVENT_IDX))
		need = vufe_need_event(ld16(avail_event(vq), __ATOMIC_RELAXED),
				       new, old);
	else
		need = !(ld16(&vq->used->flags, __ATOMIC_RELAXED) &
			 VRING_USED_F_NO_NOTIFY);
	if (!need) {
		vq->st.kicks_suppressed++;
		return 0;
	}
	return do_kick(vq);
}

/* virtqueue_enable_cb(): true if callbacks are on and nothing is pending */
bool vufe_enable_cb(struct vufe *fe, unsigned int idx)
{
	struct vufe_vq *vq = get_vq(fe, idx);

	if (!vq)
		return false;
	if (vq->avail_flags & VRING_AVAIL_F_NO_INTERRUPT) {
		vq->avail_flags &= ~VRING_AVAIL_F_NO_INTERRUPT;
		if (!has(fe->features, VIRTIO_RING_F_EVENT_IDX))
			st16(&vq->avail->flags, vq->avail_flags,
			     __ATOMIC_RELAXED);
	}
	st16(used_event(vq), vq->last_used, __ATOMIC_RELAXED);
	mb();
	return ld16(&vq->used->idx, __ATOMIC_ACQUIRE) == vq->last_used;
}

/*
 * virtqueue_enable_cb_delayed(): ask for a signal only after 3/4 of the
 * outstanding buffers are used (Linux's TX completion path).
 */
bool vufe_enable_cb_delayed(struct vufe *fe, unsigned int idx)
{
	struct vufe_vq *vq = get_vq(fe, idx);
	__u16 bufs;

	if (!vq)
		return false;
	if (vq->avail_flags & VRING_AVAIL_F_NO_INTERRUPT) {
		vq->avail_flags &= ~VRING_AVAIL_F_NO_INTERRUPT;
		if (!has(fe->features, VIRTIO_RING_F_EVENT_IDX))
			st16(&vq->avail->flags, vq->avail_flags,
			     __ATOMIC_RELAXED);
	}
	bufs = (__u16)(vq->avail_idx - vq->last_used) * 3 / 4;
	st16(used_event(vq), vq->last_used + bufs, __ATOMIC_RELAXED);
	mb();
	return (__u16)(ld16(&vq->used->idx, __ATOMIC_ACQUIRE) -
		       vq->last_used) <= bufs;
}

/*
 * virtqueue_disable_cb(): NO_INTERRUPT, or with EVENT_IDX used_event = 0 as
 * Linux writes (its own comment calls it a hack: the device stays quiet
 * until its used idx next crosses 0).
 */
void vufe_disable_cb(struct vufe *fe, unsigned int idx)
{
	struct vufe_vq *vq = get_vq(fe, idx);

	if (!vq || (vq->avail_flags & VRING_AVAIL_F_NO_INTERRUPT))
		return;
	vq->avail_flags |= VRING_AVAIL_F_NO_INTERRUPT;
	if (has(fe->features, VIRTIO_RING_F_EVENT_IDX))
		st16(used_event(vq), 0, __ATOMIC_RELAXED);
	else
		st16(&vq->avail->flags, vq->avail_flags, __ATOMIC_RELAXED);
}

static bool rearm(struct vufe *fe, struct vufe_vq *vq)
{
	if (!fe->o.auto_rearm)
		return false;
	/* more pending after re-enabling: the caller polls again */
	return !vufe_enable_cb(fe, vq->index);
}

/* ---- net device: TX ---- */

int vufe_send(struct vufe *fe, unsigned int qp,
	      const struct virtio_net_hdr_mrg_rxbuf *hdr, const void *frame,
	      size_t len, unsigned int flags)
{
	static const struct virtio_net_hdr_mrg_rxbuf zero_hdr;
	struct vufe_vq *vq = get_vq(fe, VUFE_TXQ(qp));
	unsigned int segs = VUFE_TX_SEGS_GET(flags), pieces, ndescs, i, k;
	bool inl = flags & VUFE_TX_HDR_INLINE;
	bool indirect = flags & VUFE_TX_INDIRECT;
	__u64 addr[VUFE_MAX_SEGS + 1];
	__u32 lens[VUFE_MAX_SEGS + 1];
	__u16 ids[VUFE_MAX_SEGS + 1];
	size_t off = 0, fo = 0, sz, start;
	struct vufe_slot *s;
	__u16 slot;
	int err;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no TX queue %u", qp);
	if (!fe->hdr_len)
		return vufe_err(fe, -ENOTCONN, "send before setup");
	if (!hdr)
		hdr = &zero_hdr;
	if (!segs)
		segs = 1;
	if (segs > VUFE_MAX_SEGS || !len || segs > len)
		return vufe_err(fe, -EINVAL, "send: %zu bytes in %u segments",
				len, segs);
	if (indirect && !has(fe->features, VIRTIO_RING_F_INDIRECT_DESC))
		return vufe_err(fe, -EOPNOTSUPP,
				"send: INDIRECT_DESC not negotiated");
	if (fe->hdr_len + len + segs * VUFE_GUARD > vq->slot_size)
		return vufe_err(fe, -EMSGSIZE,
				"send: %zu bytes > TX buffer %zu", len,
				vq->slot_size);
	pieces = segs + !inl;
	ndescs = indirect ? 1 : pieces;
	if (!vq->nr_free_slots || desc_get(vq, ndescs, ids))
		return -ENOSPC;	/* ring full: reap, then send again */
	slot = vq->free_slots[--vq->nr_free_slots];
	s = &vq->slots[slot];

	k = 0;
	if (!inl) {
		memcpy(s->hdr, hdr, fe->hdr_len);
		addr[k] = s->hdr_gpa;
		lens[k++] = fe->hdr_len;
	}
	/* segments apart from each other, a poisoned gap between them */
	for (i = 0; i < segs; i++) {
		sz = len / segs + (i < len % segs);
		start = off;
		if (!i && inl) {
			memcpy(s->buf, hdr, fe->hdr_len);
			off += fe->hdr_len;
		}
		memcpy(s->buf + off, (const __u8 *)frame + fo, sz);
		off += sz;
		fo += sz;
		addr[k] = s->gpa + start;
		lens[k++] = off - start;
		poison(s->buf + off, VUFE_GUARD);
		off += VUFE_GUARD;
	}
	if (indirect)
		indirect_write(vq, s, ids[0], pieces, addr, lens, 0);
	else
		desc_write(vq, ids, pieces, addr, lens, 0);
	vq->heads[ids[0]] = (struct vufe_head){
		.state = HEAD_TX, .ndescs = ndescs, .slot = slot,
	};
	publish(vq, ids[0]);
	vq->st.frames++;
	if (flags & VUFE_TX_NO_KICK)
		return 0;
	err = vufe_kick(fe, vq->index);
	return err < 0 ? err : 0;
}

static int used_elem(struct vufe *fe, struct vufe_vq *vq, __u16 pos, __u32 *id,
		     __u32 *len)
{
	struct vring_used_elem *e = &vq->used->ring[pos & (vq->num - 1)];

	*id = le32toh(e->id);
	*len = le32toh(e->len);
	if (*id >= vq->num)
		return vufe_err(fe, -EPROTO,
				"vring %u: used entry %u: id %u >= ring size %u",
				vq->index, pos, *id, vq->num);
	return 0;
}

int vufe_tx_reap(struct vufe *fe, unsigned int qp)
{
	struct vufe_vq *vq = get_vq(fe, VUFE_TXQ(qp));
	__u16 used_idx;
	__u32 id, len;
	int n = 0, err;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no TX queue %u", qp);
	do {
		used_idx = ld16(&vq->used->idx, __ATOMIC_ACQUIRE);
		if ((__u16)(used_idx - vq->last_used) > vq->inflight)
			return vufe_err(fe, -EPROTO,
					"TX vring %u: used idx %u is %u past %u "
					"with only %u in flight",
					vq->index, used_idx,
					(__u16)(used_idx - vq->last_used),
					vq->last_used, vq->inflight);
		while (vq->last_used != used_idx) {
			err = used_elem(fe, vq, vq->last_used, &id, &len);
			if (err)
				return err;
			if (vq->heads[id].state != HEAD_TX &&
			    vq->heads[id].state != HEAD_HOSTILE)
				return vufe_err(fe, -EPROTO,
						"TX vring %u: used id %u was not "
						"in flight", vq->index, id);
			chain_free(vq, id);
			vq->last_used++;
			vq->inflight--;
			vq->st.used++;
			n++;
		}
	} while (rearm(fe, vq));
	return n;
}

unsigned int vufe_tx_inflight(const struct vufe *fe, unsigned int qp)
{
	unsigned int idx = VUFE_TXQ(qp);

	return idx < fe->nr_vq ? fe->vq[idx].inflight : 0;
}

/* ---- net device: RX ---- */

static int post_one_rx(struct vufe *fe, struct vufe_vq *vq)
{
	__u8 *p[VUFE_BIG_PIECES];
	__u64 addr[VUFE_BIG_PIECES];
	__u32 len[VUFE_BIG_PIECES], cap = 0;
	__u16 ids[VUFE_BIG_PIECES];
	unsigned int n, i, ndescs;
	struct vufe_slot *s;
	bool indirect;
	__u16 slot;

	if (!vq->nr_free_slots)
		return -ENOSPC;
	s = &vq->slots[vq->free_slots[vq->nr_free_slots - 1]];
	n = rx_pieces(fe, vq, s, p, addr, len);
	indirect = n > 1 && has(fe->features, VIRTIO_RING_F_INDIRECT_DESC);
	ndescs = indirect ? 1 : n;
	if (desc_get(vq, ndescs, ids))
		return -ENOSPC;
	slot = vq->free_slots[--vq->nr_free_slots];
	for (i = 0; i < n; i++)
		cap += len[i];
	if (indirect)
		indirect_write(vq, s, ids[0], n, addr, len,
			       VRING_DESC_F_WRITE);
	else
		desc_write(vq, ids, n, addr, len, VRING_DESC_F_WRITE);
	vq->heads[ids[0]] = (struct vufe_head){
		.state = HEAD_RX, .ndescs = ndescs, .slot = slot, .cap = cap,
	};
	publish(vq, ids[0]);
	return 0;
}

int vufe_post_rx(struct vufe *fe, unsigned int qp, unsigned int n)
{
	struct vufe_vq *vq = get_vq(fe, VUFE_RXQ(qp));
	unsigned int count = 0;
	int err;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no RX queue %u", qp);
	if (!fe->rx_ready)
		return vufe_err(fe, -ENOTCONN, "post_rx before setup");
	while (!n || count < n) {
		if (post_one_rx(fe, vq))
			break;
		count++;
	}
	if (count) {
		err = vufe_kick(fe, vq->index);
		if (err < 0)
			return err;
	}
	return count;
}

/* copies the stream bytes [skip, skip + want) of a slot's pieces to out */
static void rx_copy(const struct vufe *fe, const struct vufe_vq *vq,
		    const struct vufe_slot *s, size_t skip, size_t want,
		    __u8 *out)
{
	__u8 *p[VUFE_BIG_PIECES];
	__u64 gpa[VUFE_BIG_PIECES];
	__u32 len[VUFE_BIG_PIECES];
	unsigned int n, k;
	size_t c;

	n = rx_pieces(fe, vq, s, p, gpa, len);
	for (k = 0; k < n && want; k++) {
		if (skip >= len[k]) {
			skip -= len[k];
			continue;
		}
		c = len[k] - skip;
		if (c > want)
			c = want;
		memcpy(out, p[k] + skip, c);
		out += c;
		want -= c;
		skip = 0;
	}
}

/* the guards after every piece are intact; restores them either way */
static bool rx_guards_ok(const struct vufe *fe, const struct vufe_vq *vq,
			 const struct vufe_slot *s)
{
	__u8 *p[VUFE_BIG_PIECES];
	__u64 gpa[VUFE_BIG_PIECES];
	__u32 len[VUFE_BIG_PIECES];
	unsigned int n, k;
	bool ok = true;

	n = rx_pieces(fe, vq, s, p, gpa, len);
	for (k = 0; k < n; k++) {
		if (!poisoned(p[k] + len[k], VUFE_GUARD)) {
			ok = false;
			poison(p[k] + len[k], VUFE_GUARD);
		}
	}
	return ok;
}

ssize_t vufe_recv(struct vufe *fe, unsigned int qp, void *buf, size_t cap,
		  struct virtio_net_hdr_mrg_rxbuf *hdr, unsigned int *nbufs)
{
	struct vufe_vq *vq = get_vq(fe, VUFE_RXQ(qp));
	struct virtio_net_hdr_mrg_rxbuf h;
	__u16 used_idx, pending, nb, j;
	size_t frame = 0, skip, c;
	__u32 id, len;
	int err = 0;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no RX queue %u", qp);
	if (!fe->rx_ready)
		return vufe_err(fe, -ENOTCONN, "recv before setup");
	used_idx = ld16(&vq->used->idx, __ATOMIC_ACQUIRE);
	pending = used_idx - vq->last_used;
	if (!pending)
		return -EAGAIN;
	if (pending > vq->inflight)
		return vufe_err(fe, -EPROTO,
				"RX vring %u: used idx %u is %u past %u with "
				"only %u buffers posted",
				vq->index, used_idx, pending, vq->last_used,
				vq->inflight);

	/* the header is the first hdr_len bytes of the first buffer */
	err = used_elem(fe, vq, vq->last_used, &id, &len);
	if (err)
		return err;
	if (vq->heads[id].state != HEAD_RX)
		return vufe_err(fe, -EPROTO,
				"RX vring %u: used id %u was not posted",
				vq->index, id);
	if (len < fe->hdr_len || len > vq->heads[id].cap)
		return vufe_err(fe, -EPROTO,
				"RX vring %u: used len %u of id %u outside "
				"[%u, %u]", vq->index, len, id, fe->hdr_len,
				vq->heads[id].cap);
	memset(&h, 0, sizeof(h));
	rx_copy(fe, vq, &vq->slots[vq->heads[id].slot], 0, fe->hdr_len,
		(__u8 *)&h);
	nb = 1;
	if (fe->rx_mode == VUFE_RX_MERGEABLE) {
		nb = le16toh(h.num_buffers);
		if (!nb || nb > vq->inflight)
			return vufe_err(fe, -EPROTO,
					"RX vring %u: num_buffers %u with %u "
					"buffers posted", vq->index, nb,
					vq->inflight);
		/* a frame is taken whole: wait for its last buffer */
		if (pending < nb)
			return -EAGAIN;
	}

	/* check all first, so a bad entry consumes nothing */
	for (j = 0; j < nb; j++) {
		err = used_elem(fe, vq, vq->last_used + j, &id, &len);
		if (err)
			return err;
		if (vq->heads[id].state != HEAD_RX || len > vq->heads[id].cap)
			return vufe_err(fe, -EPROTO,
					"RX vring %u: used entry %u: id %u len "
					"%u not a posted buffer", vq->index,
					(__u16)(vq->last_used + j), id, len);
		if (j && len == 0)
			return vufe_err(fe, -EPROTO,
					"RX vring %u: empty merged buffer %u",
					vq->index, j);
	}
	for (j = 0; j < nb; j++) {
		struct vufe_slot *s;

		used_elem(fe, vq, vq->last_used, &id, &len);
		s = &vq->slots[vq->heads[id].slot];
		skip = j ? 0 : fe->hdr_len;
		c = len - skip;
		if (frame + c <= cap)
			rx_copy(fe, vq, s, skip, c, (__u8 *)buf + frame);
		else if (!err)
			err = vufe_err(fe, -EMSGSIZE,
				       "RX vring %u: frame larger than %zu",
				       vq->index, cap);
		frame += c;
		if (!rx_guards_ok(fe, vq, s) && err != -EPROTO)
			err = vufe_err(fe, -EPROTO,
				       "RX vring %u: the device wrote past the "
				       "end of buffer id %u", vq->index, id);
		chain_free(vq, id);
		vq->last_used++;
		vq->inflight--;
		vq->st.used++;
	}
	vq->st.frames++;
	if (hdr)
		*hdr = h;
	if (nbufs)
		*nbufs = nb;
	if (fe->o.rx_auto_refill) {
		int n = vufe_post_rx(fe, qp, 0);

		if (n < 0 && !err)
			err = n;
	}
	if (fe->o.auto_rearm)
		vufe_enable_cb(fe, vq->index);
	return err ? err : (ssize_t)frame;
}

/* ---- signals and bounded waits ---- */

static __u64 read_signals(struct vufe_vq *vq)
{
	__u64 v;

	if (vq->call_fd < 0 || read(vq->call_fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	vq->st.signals += v;
	vq->st.wakeups++;
	return v;
}

int vufe_poll_signals(struct vufe *fe)
{
	__u64 n = 0;
	unsigned int i;

	for (i = 0; i < fe->nr_vq; i++)
		n += read_signals(&fe->vq[i]);
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

int vufe_vq_stats(struct vufe *fe, unsigned int idx, struct vufe_vq_stats *st)
{
	struct vufe_vq *vq = get_vq(fe, idx);

	if (!vq)
		return -EINVAL;
	read_signals(vq);
	*st = vq->st;
	st->avail_idx = vq->avail_idx;
	st->last_used = vq->last_used;
	st->used_idx = ld16(&vq->used->idx, __ATOMIC_ACQUIRE);
	st->base = vq->base;
	return 0;
}

/* one bounded slice: wakes on a call eventfd, a hang-up, or after 5 ms */
static int wait_slice(struct vufe *fe, int ms)
{
	struct pollfd p[VUFE_MAX_VQ + 1];
	unsigned int i, n = 0;

	for (i = 0; i < fe->nr_vq; i++)
		p[n++] = (struct pollfd){ .fd = fe->vq[i].call_fd,
					  .events = POLLIN };
	if (fe->sock >= 0)
		p[n++] = (struct pollfd){ .fd = fe->sock, .events = POLLRDHUP };
	if (poll(p, n, ms < 5 ? ms : 5) < 0 && errno != EINTR)
		return -errno;
	if (fe->sock >= 0 &&
	    (p[n - 1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return vufe_err(fe, -ECONNRESET,
				"the backend closed the connection");
	return 0;
}

int vufe_wait(struct vufe *fe, vufe_cond_t cond, void *arg, int timeout_ms)
{
	long long deadline = deadline_in(timeout_ms);
	int err;

	for (;;) {
		vufe_poll_signals(fe);
		if (cond(fe, arg))
			return 0;
		if (!remaining_ms(deadline))
			return vufe_err(fe, -ETIMEDOUT,
					"condition not met in %d ms",
					timeout_ms);
		err = wait_slice(fe, remaining_ms(deadline));
		if (err)
			return err;
	}
}

struct signals_arg {
	unsigned int vq;
	__u64 n;
};

static bool signals_reached(struct vufe *fe, void *arg)
{
	struct signals_arg *a = arg;

	return fe->vq[a->vq].st.signals >= a->n;
}

int vufe_wait_signals(struct vufe *fe, unsigned int vq, __u64 n,
		      int timeout_ms)
{
	struct signals_arg a = { vq, n };

	if (vq >= fe->nr_vq)
		return -EINVAL;
	return vufe_wait(fe, signals_reached, &a, timeout_ms);
}

ssize_t vufe_recv_wait(struct vufe *fe, unsigned int qp, void *buf,
		       size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
		       unsigned int *nbufs, int timeout_ms)
{
	long long deadline = deadline_in(timeout_ms);
	ssize_t n;
	int err;

	for (;;) {
		vufe_poll_signals(fe);
		n = vufe_recv(fe, qp, buf, cap, hdr, nbufs);
		if (n != -EAGAIN)
			return n;
		if (!remaining_ms(deadline))
			return vufe_err(fe, -ETIMEDOUT,
					"no frame on RX queue %u in %d ms", qp,
					timeout_ms);
		err = wait_slice(fe, remaining_ms(deadline));
		if (err)
			return err;
	}
}

/* ---- hostile input ---- */

/*
 * Puts one malformed chain (or avail index) on a ring and kicks it,
 * whatever the device's suppression state says.  The ring is not fit for
 * traffic afterwards: reconnect with a fresh struct vufe.
 */
int vufe_hostile_ring(struct vufe *fe, unsigned int idx,
		      enum vufe_hostile_ring kind)
{
	struct vufe_vq *vq = get_vq(fe, idx);
	__u16 wflag, ids[2], head = 0;
	__u64 out = gpa_outside(fe), good;
	struct vufe_region_state *r0;
	struct vring_desc *d;
	void *p;
	int err;

	if (!vq)
		return vufe_err(fe, -EINVAL, "no vring %u", idx);
	wflag = vq->tx ? 0 : VRING_DESC_F_WRITE;
	r0 = &fe->reg[0];
	/* a good 2 KiB buffer, for the parts that are not the fault */
	err = vufe_alloc(fe, 2048, 64, fe->nr_regions - 1, &good, &p);
	if (err)
		return err;
	if (kind != VUFE_BAD_HEAD_OOB && kind != VUFE_BAD_AVAIL_JUMP) {
		if (desc_get(vq, 2, ids))
			return vufe_err(fe, -ENOSPC, "hostile: ring full");
		head = ids[0];
		/* both descriptors stay owned by the chain until used */
		vq->next[ids[0]] = ids[1];
		vq->heads[head] = (struct vufe_head){
			.state = HEAD_HOSTILE, .ndescs = 2,
		};
	}

	switch (kind) {
	case VUFE_BAD_DESC_OOB:
	case VUFE_BAD_DESC_STRADDLE:
		/* header descriptor fine, data descriptor not */
		d = &vq->desc[ids[0]];
		d->addr = htole64(good);
		d->len = htole32(fe->hdr_len);
		d->flags = htole16(wflag | VRING_DESC_F_NEXT);
		d->next = htole16(ids[1]);
		d = &vq->desc[ids[1]];
		if (kind == VUFE_BAD_DESC_OOB)
			d->addr = htole64(out);
		else
			d->addr = htole64(r0->gpa + r0->size - 100);
		d->len = htole32(1500);
		d->flags = htole16(wflag);
		d->next = 0;
		break;
	case VUFE_BAD_DESC_LOOP:
		d = &vq->desc[ids[0]];
		d->addr = htole64(good);
		d->len = htole32(fe->hdr_len);
		d->flags = htole16(wflag | VRING_DESC_F_NEXT);
		d->next = htole16(ids[1]);
		d = &vq->desc[ids[1]];
		d->addr = htole64(good + 64);
		d->len = htole32(64);
		d->flags = htole16(wflag | VRING_DESC_F_NEXT);
		d->next = htole16(ids[0]);	/* back to the head */
		break;
	case VUFE_BAD_DESC_NEXT_OOB:
		d = &vq->desc[ids[0]];
		d->addr = htole64(good);
		d->len = htole32(fe->hdr_len);
		d->flags = htole16(wflag | VRING_DESC_F_NEXT);
		d->next = htole16(vq->num + 5);
		break;
	case VUFE_BAD_INDIRECT_OOB:
	case VUFE_BAD_INDIRECT_ENTRY:
	case VUFE_BAD_INDIRECT_LEN:
	case VUFE_BAD_INDIRECT_NESTED: {
		/* the table: the good buffer's first 32 bytes hold 2 entries */
		struct vring_desc *t = p;
		__u64 data = good + 512;

		t[0] = (struct vring_desc){
			.addr = htole64(data), .len = htole32(fe->hdr_len),
			.flags = htole16(wflag | VRING_DESC_F_NEXT),
			.next = htole16(1),
		};
		t[1] = (struct vring_desc){
			.addr = htole64(data + 64), .len = htole32(1000),
			.flags = htole16(wflag),
		};
		if (kind == VUFE_BAD_INDIRECT_ENTRY)
			t[1].addr = htole64(out);
		if (kind == VUFE_BAD_INDIRECT_NESTED)
			t[1].flags = htole16(wflag | VRING_DESC_F_INDIRECT);
		d = &vq->desc[ids[0]];
		d->addr = htole64(kind == VUFE_BAD_INDIRECT_OOB ? out : good);
		d->len = htole32(kind == VUFE_BAD_INDIRECT_LEN ? 17 : 32);
		d->flags = htole16(VRING_DESC_F_INDIRECT);
		d->next = 0;
		break;
	}
	case VUFE_BAD_HEAD_OOB:
		vq->avail->ring[vq->avail_idx & (vq->num - 1)] =
			htole16(vq->num + 7);
		vq->avail_idx++;
		st16(&vq->avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
		vq->st.avail++;
		return do_kick(vq);
	case VUFE_BAD_AVAIL_JUMP:
		/* in memory only: the driver's shadow stays where it was */
		st16(&vq->avail->idx, vq->avail_idx + vq->num + 1,
		     __ATOMIC_RELEASE);
		return do_kick(vq);
	default:
		return vufe_err(fe, -EINVAL, "hostile: unknown kind %d", kind);
	}
	publish(vq, head);
	vq->num_added = 0;
	return do_kick(vq);
}

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
