// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Tests of the vufe frontend itself, in two parts.
 *
 * unit/...: in-process.  The ring logic (EVENT_IDX arithmetic across the u16
 * wrap, kick suppression, callbacks, TX header layouts, mergeable
 * reassembly, big and large RX buffers, signal counting) is checked with
 * the test playing the device directly on the rings; the vhost-user wire
 * format (QEMU's order, NEED_REPLY, fd counts, region contents, reconnect
 * bases) is checked against a scripted peer that only records and acks.
 *
 * dpdk/...: end to end against DPDK's vhost-user backend (dpdk-testpmd with
 * the net_vhost PMD, --no-huge, macswap forwarding on one port looped to
 * itself): frames the frontend sends come back with their MACs swapped and
 * every other byte intact, and the call-eventfd signals are counted.
 * Skipped, with the reason, when dpdk-testpmd is not installed.
 *
 *	vufe_selftest [-v] [FILTER]	runs the tests whose name contains FILTER
 *
 * VUFE_TESTPMD overrides the dpdk-testpmd binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>

#include "../test.h"
#include "vufe.h"
#include "../testpmd.h"

static const char *filter;
static bool verbose;

static bool want(const char *name)
{
	return !filter || strstr(name, filter);
}

#define RUN(fn, name)                           \
	do {                                    \
		if (want(name)) {               \
			test_start(name);       \
			fn();                   \
			test_end();             \
		}                               \
	} while (0)

/* ------------------------------------------------------------------ */
/* A scripted vhost-user peer: records every message, answers GET_*,   */
/* acks NEED_REPLY, maps the memory regions it is given.  It moves no  */
/* packets: the unit tests play the device on the rings themselves.    */
/* ------------------------------------------------------------------ */

#define PEER_MAX 256

struct peer_msg {
	__u32 req, flags, size;
	unsigned int nfds;
	__u8 p[512];
};

struct peer_map {
	__u8 *base;	/* where region's guest_phys_addr is mapped here */
	size_t len;	/* mapping length (size + mmap_offset) */
	__u8 *mapping;
	__u64 gpa, size, hva;
};

struct peer {
	int fd;
	pthread_t th;
	__u64 features, proto, queue_num, max_slots;
	__u32 nack_req;		/* nack this request's NEED_REPLY */
	unsigned int n;		/* messages logged (atomic) */
	struct peer_msg log[PEER_MAX];
	unsigned int nmaps;
	struct peer_map map[8];
};

static int peer_read(int fd, void *buf, size_t len, int *fds, unsigned int *nfds)
{
	char cbuf[CMSG_SPACE(8 * sizeof(int))];
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		struct iovec iov = { (char *)buf + got, len - got };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *c;

		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			unsigned int i, k;

			if (c->cmsg_type != SCM_RIGHTS)
				continue;
			k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (i = 0; i < k; i++) {
				int f = ((int *)CMSG_DATA(c))[i];

				if (fds && *nfds < 8)
					fds[(*nfds)++] = f;
				else
					close(f);
			}
		}
		got += n;
	}
	return 0;
}

static void peer_reply(struct peer *pr, __u32 req, const void *p, __u32 size)
{
	__u32 hdr[3] = { req, VUFE_MSG_REPLY | VUFE_MSG_VERSION, size };
	__u8 buf[12 + 64];

	memcpy(buf, hdr, 12);
	memcpy(buf + 12, p, size);
	if (send(pr->fd, buf, 12 + size, MSG_NOSIGNAL) < 0)
		return;
}

static void peer_map_region(struct peer *pr, const __u8 *p, int fd)
{
	struct peer_map *m;
	__u64 r[4];
	void *a;

	if (pr->nmaps >= 8 || fd < 0)
		return;
	memcpy(r, p, sizeof(r));	/* gpa, size, hva, mmap_offset */
	a = mmap(NULL, r[1] + r[3], PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED)
		return;
	m = &pr->map[pr->nmaps++];
	m->mapping = a;
	m->len = r[1] + r[3];
	m->base = (__u8 *)a + r[3];
	m->gpa = r[0];
	m->size = r[1];
	m->hva = r[2];
}

static void *peer_main(void *arg)
{
	struct peer *pr = arg;

	for (;;) {
		struct peer_msg *m;
		unsigned int n = __atomic_load_n(&pr->n, __ATOMIC_RELAXED);
		int fds[8], i;
		__u32 hdr[3];
		__u64 v;
		unsigned int nfds = 0;
		struct peer_msg scratch;

		m = n < PEER_MAX ? &pr->log[n] : &scratch;
		if (peer_read(pr->fd, hdr, 12, fds, &nfds))
			break;
		memset(m, 0, sizeof(*m));
		m->req = hdr[0];
		m->flags = hdr[1];
		m->size = hdr[2];
		if (hdr[2] > sizeof(m->p) ||
		    peer_read(pr->fd, m->p, hdr[2], fds, &nfds)) {
			for (i = 0; i < (int)nfds; i++)
				close(fds[i]);
			break;	/* an oversized message ends the session */
		}
		m->nfds = nfds;

		if (m->req == VUFE_SET_MEM_TABLE) {
			__u32 nr;

			memcpy(&nr, m->p, 4);
			for (i = 0; i < (int)nr && i < (int)nfds && i < 8; i++)
				peer_map_region(pr, m->p + 8 + 32 * i, fds[i]);
		} else if (m->req == VUFE_ADD_MEM_REG && nfds == 1) {
			peer_map_region(pr, m->p + 8, fds[0]);
		}
		for (i = 0; i < (int)nfds; i++)
			close(fds[i]);
		if (n < PEER_MAX)
			__atomic_store_n(&pr->n, n + 1, __ATOMIC_RELEASE);

		switch (m->req) {
		case VUFE_GET_FEATURES:
			peer_reply(pr, m->req, &pr->features, 8);
			break;
		case VUFE_GET_PROTOCOL_FEATURES:
			peer_reply(pr, m->req, &pr->proto, 8);
			break;
		case VUFE_GET_QUEUE_NUM:
			peer_reply(pr, m->req, &pr->queue_num, 8);
			break;
		case VUFE_GET_MAX_MEM_SLOTS:
			peer_reply(pr, m->req, &pr->max_slots, 8);
			break;
		case VUFE_GET_VRING_BASE: {
			struct vhost_vring_state s;

			memcpy(&s, m->p, sizeof(s));
			s.num = 0x1230 + s.index;
			peer_reply(pr, m->req, &s, sizeof(s));
			break;
		}
		default:
			if (m->flags & VUFE_MSG_NEED_REPLY) {
				v = m->req == pr->nack_req;
				peer_reply(pr, m->req, &v, 8);
			}
			break;
		}
	}
	/* the session is over: the frontend sees EOF */
	shutdown(pr->fd, SHUT_RDWR);
	return NULL;
}

/* the peer end of a fresh socketpair; *fe_fd is the frontend's end */
static int peer_start(struct peer *pr, int *fe_fd)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pr->fd = sv[0];
	*fe_fd = sv[1];
	if (pthread_create(&pr->th, NULL, peer_main, pr)) {
		close(sv[0]);
		close(sv[1]);
		return -EAGAIN;
	}
	return 0;
}

/* after the frontend closed its end: the thread sees EOF and ends */
static void peer_join(struct peer *pr)
{
	unsigned int i;

	pthread_join(pr->th, NULL);
	close(pr->fd);
	for (i = 0; i < pr->nmaps; i++)
		munmap(pr->map[i].mapping, pr->map[i].len);
	pr->nmaps = 0;
}

static unsigned int peer_count(struct peer *pr)
{
	return __atomic_load_n(&pr->n, __ATOMIC_ACQUIRE);
}

/* the peer's view of a frontend virtual address (SET_VRING_ADDR's words) */
static void *peer_hva(struct peer *pr, __u64 hva)
{
	unsigned int i;

	for (i = 0; i < pr->nmaps; i++)
		if (hva >= pr->map[i].hva && hva < pr->map[i].hva + pr->map[i].size)
			return pr->map[i].base + (hva - pr->map[i].hva);
	return NULL;
}

#define ALL_PROTO                                                            \
	((1ULL << VUFE_PROTO_MQ) | (1ULL << VUFE_PROTO_LOG_SHMFD) |           \
	 (1ULL << VUFE_PROTO_RARP) | (1ULL << VUFE_PROTO_REPLY_ACK) |         \
	 (1ULL << VUFE_PROTO_MTU) | (1ULL << VUFE_PROTO_BACKEND_REQ) |        \
	 (1ULL << VUFE_PROTO_CONFIGURE_MEM_SLOTS) | (1ULL << 16))

#define ALL_FEATURES                                                         \
	(VUFE_DEFAULT_FEATURES | (1ULL << VIRTIO_NET_F_MQ) |                  \
	 (1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_F_RING_PACKED))

/* a frontend set up against a scripted peer */
struct rig {
	struct peer pr;
	struct vufe *fe;
};

static bool rig_up(struct rig *g, struct vufe_opts *o, __u64 features,
		   __u64 proto)
{
	int fd;

	memset(g, 0, sizeof(*g));
	g->pr.features = features;
	g->pr.proto = proto;
	g->pr.queue_num = 4;
	g->pr.max_slots = 32;
	if (!ASSERT_OK(vufe_create(o, &g->fe), "vufe_create"))
		return false;
	if (!ASSERT_OK(peer_start(&g->pr, &fd), "peer_start"))
		goto fail;
	if (!ASSERT_OK(vufe_attach_fd(g->fe, fd), "attach"))
		goto fail_peer;
	if (!ASSERT_OK(vufe_setup(g->fe), vufe_strerror(g->fe)))
		goto fail_conn;
	return true;
fail_conn:
	vufe_disconnect(g->fe);
fail_peer:
	peer_join(&g->pr);
fail:
	vufe_destroy(g->fe);
	g->fe = NULL;
	return false;
}

static void rig_down(struct rig *g)
{
	if (!g->fe)
		return;
	vufe_disconnect(g->fe);
	peer_join(&g->pr);
	vufe_destroy(g->fe);
	g->fe = NULL;
}

/* every message the frontend sent so far has been read by the peer */
static bool rig_sync(struct rig *g)
{
	return ASSERT_EQ(vufe_backend_alive(g->fe, 2000), 1, "peer alive");
}

/* ------------------------------------------------------------------ */
/* Playing the device on the rings                                     */
/* ------------------------------------------------------------------ */

struct dev {
	struct vufe *fe;
	struct vufe_ring r;
	__u16 last_avail;
	__u16 used_idx;
};

static void dev_init(struct dev *d, struct vufe *fe, unsigned int vq)
{
	memset(d, 0, sizeof(*d));
	d->fe = fe;
	vufe_ring(fe, vq, &d->r);
	d->last_avail = le16toh(d->r.avail->idx);
	d->used_idx = le16toh(d->r.used->idx);
}

static __u16 dev_avail_idx(struct dev *d)
{
	return le16toh(__atomic_load_n(&d->r.avail->idx, __ATOMIC_ACQUIRE));
}

/* the next available head, or -1 */
static int dev_pop(struct dev *d)
{
	if (d->last_avail == dev_avail_idx(d))
		return -1;
	return le16toh(d->r.avail->ring[d->last_avail++ % d->r.num]);
}

/* the chain of head flattened: descriptors (indirect expanded) */
static int dev_chain(struct dev *d, unsigned int head, struct vring_desc *out,
		     unsigned int max, bool *indirect)
{
	struct vring_desc *t = d->r.desc;
	unsigned int n = 0, i = head, tn = d->r.num;

	*indirect = false;
	if (le16toh(t[head].flags) & VRING_DESC_F_INDIRECT) {
		*indirect = true;
		tn = le32toh(t[head].len) / 16;
		t = vufe_gpa_to_ptr(d->fe, le64toh(t[head].addr),
				    le32toh(t[head].len));
		if (!t)
			return -1;
		i = 0;
	}
	for (;;) {
		if (n >= max || i >= tn)
			return -1;
		out[n++] = t[i];
		if (!(le16toh(t[i].flags) & VRING_DESC_F_NEXT))
			return n;
		i = le16toh(t[i].next);
	}
}

/* gathers a TX chain's bytes */
static int dev_read(struct dev *d, unsigned int head, __u8 *out, size_t cap)
{
	struct vring_desc c[40];
	bool ind;
	int n, i;
	size_t off = 0;

	n = dev_chain(d, head, c, 40, &ind);
	for (i = 0; i < n; i++) {
		__u32 l = le32toh(c[i].len);
		void *p = vufe_gpa_to_ptr(d->fe, le64toh(c[i].addr), l);

		if (!p || off + l > cap)
			return -1;
		memcpy(out + off, p, l);
		off += l;
	}
	return off;
}

/* scatters bytes over an RX chain; returns the bytes written */
static int dev_write(struct dev *d, unsigned int head, const __u8 *in,
		     size_t len)
{
	struct vring_desc c[40];
	size_t off = 0;
	bool ind;
	int n, i;

	n = dev_chain(d, head, c, 40, &ind);
	for (i = 0; i < n && off < len; i++) {
		__u32 l = le32toh(c[i].len);
		void *p = vufe_gpa_to_ptr(d->fe, le64toh(c[i].addr), l);

		if (!p)
			return -1;
		if (l > len - off)
			l = len - off;
		memcpy(p, in + off, l);
		off += l;
	}
	return off;
}

static void dev_used(struct dev *d, __u32 id, __u32 len)
{
	struct vring_used_elem *e = &d->r.used->ring[d->used_idx % d->r.num];

	e->id = htole32(id);
	e->len = htole32(len);
	d->used_idx++;
}

static void dev_publish(struct dev *d)
{
	__atomic_store_n(&d->r.used->idx, htole16(d->used_idx),
			 __ATOMIC_RELEASE);
}

static __u16 dev_used_event(struct dev *d)
{
	return le16toh(d->r.avail->ring[d->r.num]);
}

static void dev_set_avail_event(struct dev *d, __u16 v)
{
	/* avail_event sits right after the used ring's last entry */
	__u8 *p = (__u8 *)d->r.used + 4 + 8 * d->r.num;

	memcpy(p, &(__u16){ htole16(v) }, 2);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static __u64 efd_read(int fd)
{
	__u64 v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

static void efd_write(int fd, __u64 v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		test_fail("eventfd write: %s", strerror(errno));
}

static void fill(__u8 *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)(seed * 131 + i * 7 + (i >> 8));
}

/* ------------------------------------------------------------------ */
/* unit: EVENT_IDX arithmetic                                          */
/* ------------------------------------------------------------------ */

static void unit_need_event(void)
{
	static const struct {
		__u16 event, new, old;
		bool kick;
	} t[] = {
		{ 0, 1, 0, true },		/* first entry, device waits at 0 */
		{ 5, 5, 0, false },		/* event not yet reached */
		{ 4, 5, 0, true },		/* event is the last added */
		{ 0, 5, 0, true },
		{ 5, 10, 5, true },
		{ 4, 10, 5, false },		/* event before old: already past */
		{ 10, 10, 5, false },
		{ 65535, 2, 65534, true },	/* wrap: old 65534, new 2 */
		{ 65533, 2, 65534, false },
		{ 1, 2, 65534, true },
		{ 2, 2, 65534, false },
		{ 0, 0, 65535, false },		/* new 0, event 0 not reached */
		{ 65535, 0, 65535, true },
		{ 100, 100, 100, false },	/* nothing added */
	};
	unsigned int i;
	__u32 e, o, k;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "need_event(%u, %u, %u)",
			 t[i].event, t[i].new, t[i].old);
		ASSERT_EQ(vufe_need_event(t[i].event, t[i].new, t[i].old),
			  t[i].kick, name);
	}
	/*
	 * Exhaustively around the wrap: kick iff event is among the indices
	 * just published, [old, new), counted modulo 2^16.
	 */
	for (o = 65500; o < 65500 + 80; o++) {
		for (k = 0; k < 40; k++) {
			__u16 old = o, new = o + k;

			for (e = 0; e < 60; e++) {
				__u16 ev = o - 10 + e;
				bool in = (__u16)(ev - old) < k;

				if (vufe_need_event(ev, new, old) != in ||
				    vring_need_event(ev, new, old) != in) {
					test_fail("need_event(%u, %u, %u) != %d",
						  ev, new, old, in);
					return;
				}
			}
		}
	}
}

/* ------------------------------------------------------------------ */
/* unit: the handshake on the wire                                     */
/* ------------------------------------------------------------------ */

struct expect {
	__u32 req;
	unsigned int nfds;
	bool need_reply;
};

static bool check_transcript(struct peer *pr, const struct expect *e,
			     unsigned int n)
{
	unsigned int i, got = peer_count(pr);

	if (!ASSERT_GE(got, n, "messages"))
		return false;
	for (i = 0; i < n; i++) {
		struct peer_msg *m = &pr->log[i];
		char name[64];

		snprintf(name, sizeof(name), "message %u request", i);
		if (!ASSERT_EQ(m->req, e[i].req, name))
			return false;
		snprintf(name, sizeof(name), "message %u (req %u) fds", i,
			 m->req);
		if (!ASSERT_EQ(m->nfds, e[i].nfds, name))
			return false;
		snprintf(name, sizeof(name), "message %u (req %u) NEED_REPLY",
			 i, m->req);
		if (!ASSERT_EQ(!!(m->flags & VUFE_MSG_NEED_REPLY),
			       e[i].need_reply, name))
			return false;
		snprintf(name, sizeof(name), "message %u version", i);
		if (!ASSERT_EQ(m->flags & 3, VUFE_MSG_VERSION, name))
			return false;
	}
	return true;
}

static __u64 msg_u64(const struct peer_msg *m)
{
	__u64 v;

	memcpy(&v, m->p, 8);
	return v;
}

static void unit_handshake_mem_slots(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	const struct expect e[] = {
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_GET_PROTOCOL_FEATURES, 0, false },
		{ VUFE_SET_PROTOCOL_FEATURES, 0, false },
		{ VUFE_GET_QUEUE_NUM, 0, false },
		{ VUFE_GET_MAX_MEM_SLOTS, 0, false },
		{ VUFE_SET_OWNER, 0, false },
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_SET_FEATURES, 0, false },
		{ VUFE_ADD_MEM_REG, 1, true },
		{ VUFE_ADD_MEM_REG, 1, true },
		{ VUFE_SET_VRING_NUM, 0, false },
		{ VUFE_SET_VRING_BASE, 0, false },
		{ VUFE_SET_VRING_ADDR, 0, false },
		{ VUFE_SET_VRING_KICK, 1, false },
		{ VUFE_SET_VRING_CALL, 1, false },
		{ VUFE_SET_VRING_NUM, 0, false },
		{ VUFE_SET_VRING_BASE, 0, false },
		{ VUFE_SET_VRING_ADDR, 0, false },
		{ VUFE_SET_VRING_KICK, 1, false },
		{ VUFE_SET_VRING_CALL, 1, false },
		{ VUFE_SET_VRING_ENABLE, 0, false },
		{ VUFE_SET_VRING_ENABLE, 0, false },
	};
	struct vhost_vring_addr a;
	struct vufe_ring r;
	struct rig g;
	__u64 gpa, size, hva;
	__u8 *peer_desc;

	o.nr_regions = 2;
	if (!rig_up(&g, &o, ALL_FEATURES, ALL_PROTO))
		return;
	if (!rig_sync(&g) || !check_transcript(&g.pr, e, 22))
		goto out;
	ASSERT_EQ(msg_u64(&g.pr.log[2]), VUFE_PROTO_ACKED,
		  "acked protocol features = offered & {MQ,REPLY_ACK,"
		  "CONFIGURE_MEM_SLOTS,LOG_SHMFD,RARP}");
	ASSERT_EQ(msg_u64(&g.pr.log[7]), VUFE_DEFAULT_FEATURES,
		  "SET_FEATURES = offered & wanted, bit 30 included");
	ASSERT_EQ(vufe_max_queues(g.fe), 4, "GET_QUEUE_NUM answer kept");
	ASSERT_EQ(vufe_max_mem_slots(g.fe), 32, "GET_MAX_MEM_SLOTS kept");
	ASSERT_EQ(vufe_hdr_len(g.fe), 12, "VERSION_1 header length");
	ASSERT_EQ(vufe_rx_mode(g.fe), VUFE_RX_MERGEABLE, "MRG_RXBUF mode");

	/* the regions: different guest-physical bases, second at an offset */
	ASSERT_OK(vufe_region(g.fe, 0, &gpa, &size, &hva), "region 0");
	ASSERT_EQ(g.pr.map[0].gpa, gpa, "region 0 gpa");
	ASSERT_EQ(g.pr.map[0].size, size, "region 0 size");
	ASSERT_EQ(g.pr.map[1].base - g.pr.map[1].mapping, size,
		  "region 1 mmap_offset = size of region 0");
	ASSERT_OK(vufe_region(g.fe, 1, &gpa, &size, &hva), "region 1");
	ASSERT_EQ(g.pr.map[1].gpa, gpa, "region 1 gpa");
	ASSERT_EQ(gpa, 1ULL << 32, "region 1 at 4 GiB");
	ASSERT_EQ(g.pr.map[1].hva, hva, "region 1 userspace_addr");

	/* the addresses are the frontend's own; the peer finds the rings */
	memcpy(&a, g.pr.log[12].p, sizeof(a));
	vufe_ring(g.fe, 0, &r);
	ASSERT_EQ(a.index, 0, "SET_VRING_ADDR index");
	ASSERT_EQ(a.desc_user_addr, (__u64)(unsigned long)r.desc,
		  "desc_user_addr is the frontend's address");
	ASSERT_EQ(a.used_user_addr, (__u64)(unsigned long)r.used, "used");
	ASSERT_EQ(a.avail_user_addr, (__u64)(unsigned long)r.avail, "avail");
	ASSERT_EQ(a.log_guest_addr, r.used_gpa, "log_guest_addr = used gpa");
	peer_desc = peer_hva(&g.pr, a.desc_user_addr);
	if (ASSERT_OK_PTR(peer_desc, "peer translates desc_user_addr")) {
		r.desc[3].addr = htole64(0x1122334455667788ULL);
		ASSERT_MEMEQ(peer_desc + 3 * 16, &r.desc[3].addr, 8,
			     "peer sees the same memory");
	}
out:
	rig_down(&g);
}

static void unit_handshake_mem_table(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	const struct expect e[] = {
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_GET_PROTOCOL_FEATURES, 0, false },
		{ VUFE_SET_PROTOCOL_FEATURES, 0, false },
		{ VUFE_SET_OWNER, 0, false },
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_SET_FEATURES, 0, false },
		{ VUFE_SET_MEM_TABLE, 2, true },
		{ VUFE_SET_VRING_NUM, 0, false },
	};
	struct rig g;
	__u32 nr;

	o.nr_regions = 2;
	o.enable_need_reply = true;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES,
		    (1ULL << VUFE_PROTO_REPLY_ACK) | (1ULL << VUFE_PROTO_MTU)))
		return;
	if (!rig_sync(&g) || !check_transcript(&g.pr, e, 8))
		goto out;
	ASSERT_EQ(msg_u64(&g.pr.log[2]), 1ULL << VUFE_PROTO_REPLY_ACK,
		  "MTU not acked");
	memcpy(&nr, g.pr.log[6].p, 4);
	ASSERT_EQ(nr, 2, "SET_MEM_TABLE nregions");
	ASSERT_EQ(g.pr.log[6].size, 8 + 2 * 32, "SET_MEM_TABLE size");
	ASSERT_EQ(g.pr.nmaps, 2, "peer mapped both regions");
	ASSERT_EQ(vufe_max_queues(g.fe), 1, "no MQ: one queue pair");
	/* QEMU >= 8.2: SET_VRING_ENABLE waits for its ack */
	ASSERT_EQ(g.pr.log[17].req, VUFE_SET_VRING_ENABLE, "enable");
	ASSERT_TRUE(g.pr.log[17].flags & VUFE_MSG_NEED_REPLY,
		    "enable_need_reply");
out:
	rig_down(&g);
}

static void unit_handshake_legacy(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	/* no PROTOCOL_FEATURES: no protocol messages, no acks, no ENABLE */
	const struct expect e[] = {
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_SET_OWNER, 0, false },
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_SET_FEATURES, 0, false },
		{ VUFE_SET_MEM_TABLE, 1, false },
		{ VUFE_SET_VRING_NUM, 0, false },
		{ VUFE_SET_VRING_BASE, 0, false },
		{ VUFE_SET_VRING_ADDR, 0, false },
		{ VUFE_SET_VRING_KICK, 1, false },
		{ VUFE_SET_VRING_CALL, 1, false },
		{ VUFE_SET_VRING_NUM, 0, false },
		{ VUFE_SET_VRING_BASE, 0, false },
		{ VUFE_SET_VRING_ADDR, 0, false },
		{ VUFE_SET_VRING_KICK, 1, false },
		{ VUFE_SET_VRING_CALL, 1, false },
		{ VUFE_GET_FEATURES, 0, false },	/* rig_sync's */
	};
	struct rig g;

	if (!rig_up(&g, &o,
		    (1ULL << VIRTIO_NET_F_MRG_RXBUF) |
			    (1ULL << VIRTIO_RING_F_EVENT_IDX),
		    0))
		return;
	if (rig_sync(&g) && check_transcript(&g.pr, e, 16))
		ASSERT_EQ(peer_count(&g.pr), 16, "nothing more");
	ASSERT_EQ(vufe_hdr_len(g.fe), 12, "MRG_RXBUF header without VERSION_1");
	rig_down(&g);
}

static void unit_handshake_nack(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vufe *fe;
	struct peer pr;
	int fd;

	memset(&pr, 0, sizeof(pr));
	pr.features = VUFE_DEFAULT_FEATURES;
	pr.proto = 1ULL << VUFE_PROTO_REPLY_ACK;
	pr.nack_req = VUFE_SET_MEM_TABLE;
	if (!ASSERT_OK(vufe_create(&o, &fe), "create"))
		return;
	if (ASSERT_OK(peer_start(&pr, &fd), "peer") &&
	    ASSERT_OK(vufe_attach_fd(fe, fd), "attach")) {
		ASSERT_EQ(vufe_setup(fe), -EIO, "nacked SET_MEM_TABLE fails");
		ASSERT_TRUE(strstr(vufe_strerror(fe), "nacked"),
			    vufe_strerror(fe));
		vufe_disconnect(fe);
		peer_join(&pr);
	}
	vufe_destroy(fe);
}

/* connect over a path; stop; reconnect with the bases GET_VRING_BASE gave */
struct listener {
	char path[108];
	int lfd;
	struct peer pr[2];
	pthread_t th;
	int err;
};

static void *listener_main(void *arg)
{
	struct listener *l = arg;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		l->pr[i].fd = accept4(l->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (l->pr[i].fd < 0) {
			l->err = -errno;
			return NULL;
		}
		/* serve this connection to its end before the next accept */
		peer_main(&l->pr[i]);
		close(l->pr[i].fd);
	}
	return NULL;
}

static void unit_stop_reconnect(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vhost_vring_state s;
	struct vufe_vq_stats st;
	struct listener l;
	struct vufe *fe = NULL;
	unsigned int i, n;
	struct peer *p2;
	bool started = false;
	unsigned int conns = 0;

	memset(&l, 0, sizeof(l));
	snprintf(l.path, sizeof(l.path), "/tmp/vufe-unit-%d.sock", getpid());
	strcpy(sa.sun_path, l.path);
	for (i = 0; i < 2; i++) {
		l.pr[i].features = VUFE_DEFAULT_FEATURES;
		l.pr[i].proto = VUFE_PROTO_ACKED;
		l.pr[i].queue_num = 1;
		l.pr[i].max_slots = 8;
	}
	unlink(l.path);
	l.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!ASSERT_OK(bind(l.lfd, (struct sockaddr *)&sa, sizeof(sa)), "bind") ||
	    !ASSERT_OK(listen(l.lfd, 2), "listen"))
		goto out;
	if (!ASSERT_OK(pthread_create(&l.th, NULL, listener_main, &l), "thread"))
		goto out;
	started = true;
	o.path = l.path;
	o.timeout_ms = 2000;
	if (!ASSERT_OK(vufe_create(&o, &fe), "create") ||
	    !ASSERT_OK(vufe_connect(fe), vufe_strerror(fe)))
		goto out;
	conns++;
	if (!ASSERT_OK(vufe_setup(fe), vufe_strerror(fe)))
		goto out;
	if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)))
		goto out;
	vufe_vq_stats(fe, 1, &st);
	ASSERT_EQ(st.base, 0x1231, "GET_VRING_BASE answer kept");
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe))) {
		if (vufe_sock_fd(fe) >= 0)
			conns++;
		goto out;
	}
	conns++;
	if (!ASSERT_EQ(vufe_backend_alive(fe, 2000), 1, "second peer"))
		goto out;
	p2 = &l.pr[1];
	n = peer_count(p2);
	for (i = 0; i < n; i++) {
		if (p2->log[i].req != VUFE_SET_VRING_BASE)
			continue;
		memcpy(&s, p2->log[i].p, sizeof(s));
		ASSERT_EQ(s.num, 0x1230 + s.index,
			  "SET_VRING_BASE after reconnect = saved base");
	}
	ASSERT_EQ(p2->log[0].req, VUFE_GET_FEATURES,
		  "the handshake is run again from the start");
out:
	if (fe)
		vufe_disconnect(fe);
	if (started) {
		/* connections that never came: dial them so accept returns */
		for (; conns < 2; conns++) {
			int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

			if (c >= 0 &&
			    connect(c, (struct sockaddr *)&sa, sizeof(sa)))
				test_fail("dummy connect: %s", strerror(errno));
			if (c >= 0)
				close(c);
		}
		pthread_join(l.th, NULL);
		for (i = 0; i < 2; i++) {
			unsigned int k;

			for (k = 0; k < l.pr[i].nmaps; k++)
				munmap(l.pr[i].map[k].mapping,
				       l.pr[i].map[k].len);
		}
	}
	vufe_destroy(fe);
	if (l.lfd > 0)
		close(l.lfd);
	unlink(l.path);
}

/* ------------------------------------------------------------------ */
/* unit: TX                                                            */
/* ------------------------------------------------------------------ */

static struct virtio_net_hdr_mrg_rxbuf test_hdr(void)
{
	struct virtio_net_hdr_mrg_rxbuf h = {
		.hdr = {
			.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
			.gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
			.hdr_len = htole16(54),
			.gso_size = htole16(1448),
			.csum_start = htole16(34),
			.csum_offset = htole16(16),
		},
	};
	return h;
}

static void unit_tx_layouts(void)
{
	static const struct {
		unsigned int flags;
		unsigned int ndescs;	/* ring or indirect-table entries */
		bool indirect;
	} c[] = {
		{ 0, 2, false },
		{ VUFE_TX_HDR_INLINE, 1, false },
		{ VUFE_TX_SEGS(3), 4, false },
		{ VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(3), 3, false },
		{ VUFE_TX_INDIRECT, 2, true },
		{ VUFE_TX_INDIRECT | VUFE_TX_SEGS(5), 6, true },
		{ VUFE_TX_INDIRECT | VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(2), 2,
		  true },
	};
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct virtio_net_hdr_mrg_rxbuf h = test_hdr();
	static __u8 frame[9000], got[9100];
	struct vring_desc ch[40];
	struct rig g;
	struct dev d;
	unsigned int i, k;
	bool ind;
	int head, n;

	o.nr_regions = 2;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	fill(frame, sizeof(frame), 1);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char name[80];

		snprintf(name, sizeof(name), "case %u: send", i);
		if (!ASSERT_OK(vufe_send(g.fe, 0, &h, frame, 1514 + i, c[i].flags),
			       name))
			break;
		head = dev_pop(&d);
		snprintf(name, sizeof(name), "case %u: avail head", i);
		if (!ASSERT_GE(head, 0, name))
			break;
		n = dev_chain(&d, head, ch, 40, &ind);
		snprintf(name, sizeof(name), "case %u: descriptors", i);
		ASSERT_EQ(n, c[i].ndescs, name);
		snprintf(name, sizeof(name), "case %u: indirect", i);
		ASSERT_EQ(ind, c[i].indirect, name);
		for (k = 0; k < (unsigned int)n; k++) {
			snprintf(name, sizeof(name), "case %u desc %u: no WRITE",
				 i, k);
			ASSERT_FALSE(le16toh(ch[k].flags) & VRING_DESC_F_WRITE,
				     name);
		}
		if (!(c[i].flags & VUFE_TX_HDR_INLINE)) {
			snprintf(name, sizeof(name),
				 "case %u: header alone in its descriptor", i);
			ASSERT_EQ(le32toh(ch[0].len), 12, name);
		}
		n = dev_read(&d, head, got, sizeof(got));
		snprintf(name, sizeof(name), "case %u: bytes", i);
		ASSERT_EQ(n, 12 + 1514 + i, name);
		ASSERT_MEMEQ(got, &h, 12, "header bytes");
		ASSERT_MEMEQ(got + 12, frame, 1514 + i, "frame bytes");
		dev_used(&d, head, 0);
		dev_publish(&d);
		ASSERT_EQ(vufe_tx_reap(g.fe, 0), 1, "reaped");
	}
	/* the header sits in region 0, the data in region 1 */
	vufe_send(g.fe, 0, &h, frame, 100, 0);
	head = dev_pop(&d);
	if (head >= 0 && dev_chain(&d, head, ch, 40, &ind) == 2) {
		ASSERT_LT(le64toh(ch[0].addr), 1ULL << 32, "header in region 0");
		ASSERT_GE(le64toh(ch[1].addr), 1ULL << 32, "data in region 1");
	}
	ASSERT_EQ(vufe_send(g.fe, 0, &h, frame, 10, VUFE_TX_SEGS(17)), -EINVAL,
		  "17 segments refused");
	ASSERT_EQ(vufe_send(g.fe, 0, &h, frame, 0, 0), -EINVAL, "empty frame");
	rig_down(&g);
}

static void unit_tx_reap(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[64];
	struct vufe_vq_stats st;
	int i, sent = 0, heads[8];
	struct rig g;
	struct dev d;

	o.ring_size = 16;
	o.tx_slots = 16;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	/* 16 descriptors, 2 per frame: 8 frames fill the ring */
	while (!vufe_send(g.fe, 0, NULL, frame, sizeof(frame), 0))
		sent++;
	ASSERT_EQ(sent, 8, "ring full after 8 two-descriptor frames");
	ASSERT_EQ(vufe_send(g.fe, 0, NULL, frame, sizeof(frame), 0), -ENOSPC,
		  "full ring: -ENOSPC");
	/* complete 3 of them, out of order */
	for (i = 0; i < 8; i++)
		heads[i] = dev_pop(&d);
	dev_used(&d, heads[5], 0);
	dev_used(&d, heads[1], 0);
	dev_used(&d, heads[6], 0);
	dev_publish(&d);
	ASSERT_EQ(vufe_tx_reap(g.fe, 0), 3, "3 completions");
	ASSERT_EQ(vufe_tx_inflight(g.fe, 0), 5, "5 in flight");
	ASSERT_EQ(dev_used_event(&d), d.used_idx, "auto rearm: used_event");
	for (i = 0; i < 3; i++)
		ASSERT_OK(vufe_send(g.fe, 0, NULL, frame, sizeof(frame), 0),
			  "room again");
	vufe_vq_stats(g.fe, VUFE_TXQ(0), &st);
	ASSERT_EQ(st.frames, 11, "frames counted");
	/* the second descriptor of a chain heads nothing: a device bug */
	dev_used(&d, le16toh(d.r.desc[heads[0]].next), 0);
	dev_publish(&d);
	ASSERT_EQ(vufe_tx_reap(g.fe, 0), -EPROTO, "used id not in flight");
	if (verbose)
		fprintf(stderr, "  %s\n", vufe_strerror(g.fe));
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* unit: kicks and callbacks                                           */
/* ------------------------------------------------------------------ */

static void kick_case(__u16 base)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[64];
	struct vufe_vq_stats st;
	struct vufe *fe;
	struct rig g;
	struct dev d;
	__u16 ev;
	int i;

	/* set the base before the handshake: a ring that starts near 65535 */
	memset(&g, 0, sizeof(g));
	o.tx_slots = 256;
	if (!ASSERT_OK(vufe_create(&o, &fe), "create"))
		return;
	vufe_set_vring_base(fe, VUFE_TXQ(0), base);
	g.fe = fe;
	g.pr.features = VUFE_DEFAULT_FEATURES;
	g.pr.proto = VUFE_PROTO_ACKED;
	g.pr.queue_num = 1;
	g.pr.max_slots = 8;
	{
		int fd;

		if (!ASSERT_OK(peer_start(&g.pr, &fd), "peer")) {
			vufe_destroy(fe);
			return;
		}
		if (!ASSERT_OK(vufe_attach_fd(fe, fd), "attach") ||
		    !ASSERT_OK(vufe_setup(fe), vufe_strerror(fe))) {
			if (vufe_sock_fd(fe) < 0)
				close(fd);
			rig_down(&g);
			return;
		}
	}
	dev_init(&d, fe, VUFE_TXQ(0));
	ASSERT_EQ(d.last_avail, base, "avail idx starts at the base");

	/* the device wants a kick when entry base+3 becomes available */
	ev = base + 3;
	dev_set_avail_event(&d, ev);
	for (i = 0; i < 3; i++)
		vufe_send(fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 0, "no kick before avail_event");
	vufe_send(fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "kick when base+3 is added");
	vufe_send(fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 0, "no kick after, event unchanged");

	/* a batch that crosses avail_event kicks once */
	dev_set_avail_event(&d, base + 7);
	for (i = 0; i < 5; i++)
		vufe_send(fe, 0, NULL, frame, 60, VUFE_TX_NO_KICK);
	ASSERT_EQ(vufe_kick(fe, VUFE_TXQ(0)), 1, "batch [5,10) covers 7");
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "one kick for the batch");
	/* a batch that does not cross it does not */
	dev_set_avail_event(&d, base + 100);
	for (i = 0; i < 5; i++)
		vufe_send(fe, 0, NULL, frame, 60, VUFE_TX_NO_KICK);
	ASSERT_EQ(vufe_kick(fe, VUFE_TXQ(0)), 0, "batch [10,15) misses 100");
	vufe_vq_stats(fe, VUFE_TXQ(0), &st);
	ASSERT_EQ(st.kicks, 2, "kicks counted");
	ASSERT_EQ(st.kicks_suppressed, 5, "suppressed counted");
	ASSERT_EQ(st.avail_idx, (__u16)(base + 15), "avail idx wrapped");
	rig_down(&g);
}

static void unit_kick_event_idx(void)
{
	kick_case(0);
}

static void unit_kick_event_idx_wrap(void)
{
	kick_case(65530);	/* entries 65530..65535, 0..8 */
}

static void unit_kick_no_notify(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[64];
	struct rig g;
	struct dev d;

	if (!rig_up(&g, &o,
		    VUFE_DEFAULT_FEATURES & ~(1ULL << VIRTIO_RING_F_EVENT_IDX),
		    VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	vufe_send(g.fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "kick while NO_NOTIFY clear");
	d.r.used->flags = htole16(VRING_USED_F_NO_NOTIFY);
	vufe_send(g.fe, 0, NULL, frame, 60, 0);
	vufe_send(g.fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 0, "no kick under NO_NOTIFY");
	d.r.used->flags = 0;
	vufe_send(g.fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "kick again");
	rig_down(&g);
}

static void unit_callbacks(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[64];
	struct rig g;
	struct dev d;
	int i;

	o.auto_rearm = false;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	for (i = 0; i < 8; i++)
		vufe_send(g.fe, 0, NULL, frame, 60, 0);
	ASSERT_TRUE(vufe_enable_cb(g.fe, VUFE_TXQ(0)), "nothing pending");
	ASSERT_EQ(dev_used_event(&d), 0, "used_event = last used");
	/* 8 outstanding: delayed asks for a signal after 6 */
	ASSERT_TRUE(vufe_enable_cb_delayed(g.fe, VUFE_TXQ(0)), "delayed");
	ASSERT_EQ(dev_used_event(&d), 6, "used_event = last + 3/4 of 8");
	vufe_disable_cb(g.fe, VUFE_TXQ(0));
	ASSERT_EQ(dev_used_event(&d), 0, "disable: used_event 0, as Linux");
	/* pending work: enable_cb says so */
	dev_used(&d, dev_pop(&d), 0);
	dev_publish(&d);
	ASSERT_FALSE(vufe_enable_cb(g.fe, VUFE_TXQ(0)), "one pending");
	rig_down(&g);

	/* without EVENT_IDX, the avail flags carry it */
	if (!rig_up(&g, &o,
		    VUFE_DEFAULT_FEATURES & ~(1ULL << VIRTIO_RING_F_EVENT_IDX),
		    VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_RXQ(0));
	vufe_disable_cb(g.fe, VUFE_RXQ(0));
	ASSERT_EQ(le16toh(d.r.avail->flags), VRING_AVAIL_F_NO_INTERRUPT,
		  "NO_INTERRUPT set");
	vufe_enable_cb(g.fe, VUFE_RXQ(0));
	ASSERT_EQ(le16toh(d.r.avail->flags), 0, "NO_INTERRUPT cleared");
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* unit: RX                                                            */
/* ------------------------------------------------------------------ */

/* what a device writes for a frame: the header, then the frame */
static size_t rx_stream(__u8 *out, const __u8 *frame, size_t len,
			__u16 num_buffers)
{
	struct virtio_net_hdr_mrg_rxbuf h = test_hdr();

	h.num_buffers = htole16(num_buffers);
	memcpy(out, &h, 12);
	memcpy(out + 12, frame, len);
	return 12 + len;
}

static void unit_rx_mergeable(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[9000], stream[9100], got[10000];
	struct virtio_net_hdr_mrg_rxbuf h, want = test_hdr();
	struct vufe_vq_stats st;
	struct vring_desc ch[4];
	unsigned int nb, k;
	int heads[3], posted;
	size_t len, off;
	struct rig g;
	struct dev d;
	bool ind;
	ssize_t n;

	o.nr_regions = 2;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	posted = vufe_post_rx(g.fe, 0, 0);
	ASSERT_EQ(posted, 256, "a page-sized buffer per descriptor");
	dev_init(&d, g.fe, VUFE_RXQ(0));
	d.last_avail = 0;
	heads[0] = dev_pop(&d);
	ASSERT_EQ(dev_chain(&d, heads[0], ch, 4, &ind), 1, "one descriptor");
	ASSERT_EQ(le32toh(ch[0].len), 4096, "page-sized");
	ASSERT_EQ(le16toh(ch[0].flags), VRING_DESC_F_WRITE, "device-writable");

	/* 9000 bytes + header over 3 buffers, published in two steps */
	fill(frame, sizeof(frame), 2);
	len = rx_stream(stream, frame, 9000, 3);
	heads[1] = dev_pop(&d);
	heads[2] = dev_pop(&d);
	for (k = 0, off = 0; k < 3; k++) {
		size_t c = len - off < 4096 ? len - off : 4096;

		dev_write(&d, heads[k], stream + off, c);
		dev_used(&d, heads[k], c);
		off += c;
		if (k == 1) {
			dev_publish(&d);
			ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb),
				  -EAGAIN, "2 of 3 buffers: not yet");
		}
	}
	dev_publish(&d);
	n = vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb);
	ASSERT_EQ(n, 9000, vufe_strerror(g.fe));
	ASSERT_EQ(nb, 3, "num_buffers");
	ASSERT_MEMEQ(got, frame, 9000, "reassembled frame");
	want.num_buffers = htole16(3);
	ASSERT_MEMEQ(&h, &want, 12, "header returned");
	vufe_vq_stats(g.fe, VUFE_RXQ(0), &st);
	ASSERT_EQ(st.avail_idx, 256 + 3, "3 buffers reposted");
	ASSERT_EQ(dev_used_event(&d), 3, "rearmed at the next used entry");

	/* a frame that fits one buffer exactly */
	len = rx_stream(stream, frame, 4096 - 12, 1);
	heads[0] = dev_pop(&d);
	dev_write(&d, heads[0], stream, len);
	dev_used(&d, heads[0], len);
	dev_publish(&d);
	ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb), 4096 - 12,
		  "one full buffer");
	/* too small a caller buffer: -EMSGSIZE, the frame is dropped */
	heads[0] = dev_pop(&d);
	dev_write(&d, heads[0], stream, len);
	dev_used(&d, heads[0], len);
	dev_publish(&d);
	ASSERT_EQ(vufe_recv(g.fe, 0, got, 100, &h, &nb), -EMSGSIZE,
		  "caller buffer too small");
	ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb), -EAGAIN,
		  "and consumed");
	rig_down(&g);
}

static void unit_rx_mergeable_bad(void)
{
	static const char *what[] = {
		"num_buffers 0", "used id never posted", "used len > 4096",
		"write past the buffer",
	};
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[5000], stream[5100], got[6000];
	unsigned int i;
	struct rig g;
	struct dev d;
	int head;

	for (i = 0; i < 4; i++) {
		if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
			return;
		vufe_post_rx(g.fe, 0, 8);
		dev_init(&d, g.fe, VUFE_RXQ(0));
		d.last_avail = 0;
		head = dev_pop(&d);
		rx_stream(stream, frame, 100, i == 0 ? 0 : 1);
		dev_write(&d, head, stream, 112);
		if (i == 1)
			head = 200;
		if (i == 3) {
			__u8 *p = vufe_gpa_to_ptr(g.fe,
						  le64toh(d.r.desc[head].addr),
						  4097);
			p[4096] = 0;	/* one byte past */
		}
		dev_used(&d, head, i == 2 ? 5000 : 112);
		dev_publish(&d);
		ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), NULL, NULL),
			  -EPROTO, what[i]);
		if (verbose)
			fprintf(stderr, "  %s: %s\n", what[i],
				vufe_strerror(g.fe));
		rig_down(&g);
	}
}

static void rx_big_case(bool indirect)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[65550], stream[65600], got[65600];
	struct virtio_net_hdr_mrg_rxbuf h;
	struct vring_desc ch[40];
	unsigned int k, total = 0, nb;
	__u64 f = VUFE_DEFAULT_FEATURES & ~(1ULL << VIRTIO_NET_F_MRG_RXBUF);
	struct rig g;
	struct dev d;
	int head, n, posted;
	bool ind;

	if (!indirect)
		f &= ~(1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	o.rx_mode = VUFE_RX_BIG;
	if (!rig_up(&g, &o, f, VUFE_PROTO_ACKED))
		return;
	ASSERT_EQ(vufe_rx_mode(g.fe), VUFE_RX_BIG, "big packets mode");
	posted = vufe_post_rx(g.fe, 0, 0);
	ASSERT_EQ(posted, indirect ? 64 : 256 / 18, "chains posted");
	dev_init(&d, g.fe, VUFE_RXQ(0));
	d.last_avail = 0;
	head = dev_pop(&d);
	n = dev_chain(&d, head, ch, 40, &ind);
	ASSERT_EQ(n, 18, "header + 17 pages");
	ASSERT_EQ(ind, indirect, "indirect iff negotiated");
	ASSERT_EQ(le32toh(ch[0].len), 12, "header descriptor");
	for (k = 0; k < (unsigned int)n; k++) {
		total += le32toh(ch[k].len);
		ASSERT_TRUE(le16toh(ch[k].flags) & VRING_DESC_F_WRITE, "WRITE");
	}
	ASSERT_EQ(total, 65562, "65562 bytes per chain");
	fill(frame, sizeof(frame), 3);
	n = rx_stream(stream, frame, 65550, 1);
	dev_write(&d, head, stream, n);
	dev_used(&d, head, n);
	dev_publish(&d);
	ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb), 65550,
		  vufe_strerror(g.fe));
	ASSERT_MEMEQ(got, frame, 65550, "frame across the chain");
	ASSERT_EQ(h.hdr.gso_type, VIRTIO_NET_HDR_GSO_TCPV4, "header");
	rig_down(&g);
}

static void unit_rx_big(void)
{
	rx_big_case(false);
}

static void unit_rx_big_indirect(void)
{
	rx_big_case(true);
}

static void unit_rx_large(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[2000], stream[2100], got[3000];
	struct vring_desc ch[2];
	struct rig g;
	struct dev d;
	int head, n;
	bool ind;

	o.rx_mode = VUFE_RX_LARGE;
	if (!rig_up(&g, &o,
		    VUFE_DEFAULT_FEATURES & ~(1ULL << VIRTIO_NET_F_MRG_RXBUF),
		    VUFE_PROTO_ACKED))
		return;
	ASSERT_EQ(vufe_post_rx(g.fe, 0, 0), 64, "64 large buffers");
	dev_init(&d, g.fe, VUFE_RXQ(0));
	d.last_avail = 0;
	head = dev_pop(&d);
	ASSERT_EQ(dev_chain(&d, head, ch, 2, &ind), 1, "one descriptor");
	ASSERT_EQ(le32toh(ch[0].len), 65562, "of 65562 bytes");
	fill(frame, sizeof(frame), 4);
	n = rx_stream(stream, frame, 2000, 1);
	dev_write(&d, head, stream, n);
	dev_used(&d, head, n);
	dev_publish(&d);
	ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), NULL, NULL), 2000,
		  vufe_strerror(g.fe));
	ASSERT_MEMEQ(got, frame, 2000, "frame");
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* unit: signals and waits                                             */
/* ------------------------------------------------------------------ */

static void unit_signals(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vufe_vq_stats st;
	struct timespec a, b;
	struct vufe_ring r;
	struct rig g;
	long ms;

	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	vufe_ring(g.fe, VUFE_RXQ(0), &r);
	/* three signals before the driver looks: one read, counter 3 */
	efd_write(r.call_fd, 1);
	efd_write(r.call_fd, 1);
	efd_write(r.call_fd, 1);
	ASSERT_EQ(vufe_poll_signals(g.fe), 3, "3 signals in one read");
	vufe_vq_stats(g.fe, VUFE_RXQ(0), &st);
	ASSERT_EQ(st.signals, 3, "signals");
	ASSERT_EQ(st.wakeups, 1, "wakeups");
	efd_write(r.call_fd, 1);
	ASSERT_OK(vufe_wait_signals(g.fe, VUFE_RXQ(0), 4, 1000), "wait for 4");
	/* a bounded wait that cannot succeed returns on time */
	clock_gettime(CLOCK_MONOTONIC, &a);
	ASSERT_EQ(vufe_wait_signals(g.fe, VUFE_RXQ(0), 5, 100), -ETIMEDOUT,
		  "times out");
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	ASSERT_GE(ms, 100, "waited the timeout");
	ASSERT_LT(ms, 1000, "and not much longer");
	/* the backend hanging up ends a wait at once */
	shutdown(g.pr.fd, SHUT_RDWR);
	ASSERT_EQ(vufe_wait_signals(g.fe, VUFE_RXQ(0), 5, 5000), -ECONNRESET,
		  "hang-up noticed");
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* unit: hostile input has the shape it claims                         */
/* ------------------------------------------------------------------ */

static void unit_hostile_ring_shapes(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vring_desc *t;
	struct rig g;
	struct dev d;
	int head;
	__u16 a, b;

	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));

	ASSERT_EQ(vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_LOOP), 1,
		  "kicked");
	head = dev_pop(&d);
	a = head;
	b = le16toh(d.r.desc[a].next);
	ASSERT_TRUE(le16toh(d.r.desc[b].flags) & VRING_DESC_F_NEXT, "loop");
	ASSERT_EQ(le16toh(d.r.desc[b].next), a, "next points back");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_OOB);
	head = dev_pop(&d);
	b = le16toh(d.r.desc[head].next);
	ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[b].addr), 1),
		    "data outside guest memory");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_STRADDLE);
	head = dev_pop(&d);
	b = le16toh(d.r.desc[head].next);
	ASSERT_OK_PTR(vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[b].addr), 1),
		      "starts inside");
	ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[b].addr),
				    le32toh(d.r.desc[b].len)),
		    "ends outside");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_OOB);
	head = dev_pop(&d);
	ASSERT_TRUE(le16toh(d.r.desc[head].flags) & VRING_DESC_F_INDIRECT,
		    "indirect");
	ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[head].addr), 32),
		    "table outside");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_ENTRY);
	head = dev_pop(&d);
	t = vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[head].addr), 32);
	if (ASSERT_OK_PTR(t, "table inside"))
		ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(t[1].addr), 1),
			    "entry outside");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_LEN);
	head = dev_pop(&d);
	ASSERT_EQ(le32toh(d.r.desc[head].len) % 16, 1, "len not 16k");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_NEXT_OOB);
	head = dev_pop(&d);
	ASSERT_GE(le16toh(d.r.desc[head].next), d.r.num, "next >= size");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_HEAD_OOB);
	head = dev_pop(&d);
	ASSERT_GE(head, d.r.num, "head >= size");

	a = dev_avail_idx(&d);
	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_AVAIL_JUMP);
	ASSERT_EQ((__u16)(dev_avail_idx(&d) - a), d.r.num + 1,
		  "avail idx jumps by size + 1");
	ASSERT_EQ(efd_read(d.r.kick_fd), 9, "every one kicked");
	rig_down(&g);
}

static void unit_hostile_msg_shapes(void)
{
	static const struct {
		enum vufe_hostile_msg kind;
		__u32 req, size;
		unsigned int nfds;
	} c[] = {
		{ VUFE_BAD_MSG_TRUNCATED, VUFE_SET_VRING_NUM, 4, 0 },
		{ VUFE_BAD_MSG_KICK_2FDS, VUFE_SET_VRING_KICK, 8, 2 },
		{ VUFE_BAD_MSG_CALL_NOFD, VUFE_SET_VRING_CALL, 8, 0 },
		{ VUFE_BAD_MSG_ADD_MEM_NOFD, VUFE_ADD_MEM_REG, 40, 0 },
		{ VUFE_BAD_MSG_MEM_TABLE_FDS, VUFE_SET_MEM_TABLE, 72, 1 },
		{ VUFE_BAD_MSG_VRING_IDX, VUFE_SET_VRING_NUM, 8, 0 },
		{ VUFE_BAD_MSG_VRING_NUM, VUFE_SET_VRING_NUM, 8, 0 },
		{ VUFE_BAD_MSG_UNKNOWN, 999, 8, 0 },
	};
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	unsigned int i, base;
	struct rig g;

	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	if (!rig_sync(&g))
		goto out;
	base = peer_count(&g.pr);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ASSERT_OK(vufe_hostile_msg(g.fe, c[i].kind), "sent");
	if (!rig_sync(&g))
		goto out;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct peer_msg *m = &g.pr.log[base + i];
		char name[48];

		snprintf(name, sizeof(name), "case %u request", i);
		ASSERT_EQ(m->req, c[i].req, name);
		snprintf(name, sizeof(name), "case %u size", i);
		ASSERT_EQ(m->size, c[i].size, name);
		snprintf(name, sizeof(name), "case %u fds", i);
		ASSERT_EQ(m->nfds, c[i].nfds, name);
	}
	/* the peer ends the session on an oversized message */
	ASSERT_OK(vufe_hostile_msg(g.fe, VUFE_BAD_MSG_OVERSIZE), "oversize");
	ASSERT_EQ(vufe_backend_alive(g.fe, 2000), 0, "peer hung up");
out:
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* dpdk: DPDK's vhost-user backend, through dpdk-testpmd               */
/* ------------------------------------------------------------------ */

struct dpdk {
	struct testpmd pmd;
	char sock[108];
};

static struct dpdk srv = { .pmd = TESTPMD_INIT };
static char dpdk_skip[256];

static bool dpdk_running(struct dpdk *d)
{
	return testpmd_running(&d->pmd);
}

/*
 * Starts testpmd with one vhost port looped to itself and macswap
 * forwarding.  Server mode: waits for the socket; client mode: the caller
 * is already listening on d->sock.
 */
static int dpdk_start(struct dpdk *d, const char *tag, unsigned int queues,
		      bool client, char *why, size_t wlen)
{
	char vdev[256], prefix[64], q[32], txq[32];
	const char *bin = testpmd_bin("VUFE_TESTPMD");
	const char *app[] = {
		"--port-topology=loop", "--forward-mode=macswap",
		"--auto-start", "--disable-link-check", "--nb-cores=1", q, txq,
		"--total-num-mbufs=8192", NULL,
	};
	int err;

	if (!bin) {
		snprintf(why, wlen,
			 "dpdk-testpmd not installed (apt-get install dpdk-dev "
			 "librte-net-vhost23 librte-mempool-ring23)");
		return -ENOENT;
	}
	if (!client) {
		snprintf(d->sock, sizeof(d->sock), "/tmp/vufe-%d-%s.sock",
			 getpid(), tag);
		unlink(d->sock);
	}
	snprintf(d->pmd.log, sizeof(d->pmd.log), "/tmp/vufe-%d-%s.log",
		 getpid(), tag);
	snprintf(vdev, sizeof(vdev), "net_vhost0,iface=%s,queues=%u%s",
		 d->sock, queues, client ? ",client=1" : "");
	snprintf(prefix, sizeof(prefix), "vufe%d%s", getpid(), tag);
	snprintf(q, sizeof(q), "--rxq=%u", queues);
	snprintf(txq, sizeof(txq), "--txq=%u", queues);

	err = testpmd_start(&d->pmd, bin, vdev, prefix, 512, app);
	if (err) {
		snprintf(why, wlen, "starting testpmd: %s", strerror(-err));
		return err;
	}
	if (client)
		return 0;
	/* bounded: the socket appears, or testpmd dies, or 20 s pass */
	return testpmd_wait_socket(&d->pmd, d->sock, 20000, why, wlen);
}

/* ends testpmd (EOF on stdin, then signals); 0, or how it died */
static int dpdk_stop(struct dpdk *d, char *why, size_t wlen)
{
	return testpmd_stop(&d->pmd, why, wlen);
}

static bool dpdk_ready(void)
{
	if (dpdk_skip[0]) {
		test_skip("%s", dpdk_skip);
		return false;
	}
	if (!dpdk_running(&srv)) {
		test_fail("testpmd is gone (log %s)", srv.pmd.log);
		return false;
	}
	return true;
}

static struct vufe_opts dpdk_opts(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;

	o.path = srv.sock;
	o.timeout_ms = 10000;
	return o;
}

static bool dpdk_up(struct vufe_opts *o, struct vufe **fe)
{
	*fe = NULL;
	if (!ASSERT_OK(vufe_create(o, fe), vufe_strerror(NULL)))
		return false;
	if (!ASSERT_OK(vufe_connect(*fe), vufe_strerror(*fe)) ||
	    !ASSERT_OK(vufe_setup(*fe), vufe_strerror(*fe))) {
		vufe_destroy(*fe);
		*fe = NULL;
		return false;
	}
	return true;
}

/* an Ethernet frame: two local MACs, ethertype 0x88b5, numbered payload */
static void make_frame(__u8 *f, size_t len, unsigned int seq)
{
	static const __u8 dst[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const __u8 src[6] = { 0x02, 0, 0, 0, 0, 0x02 };

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88;
	f[13] = 0xb5;
	fill(f + 14, len - 14, seq);
	memcpy(f + 14, &seq, sizeof(seq));
}

/* the frame came back with its MACs swapped and every other byte intact */
static bool check_macswap(const __u8 *sent, const __u8 *got, ssize_t n,
			  size_t len, const char *what)
{
	char name[160];

	snprintf(name, sizeof(name), "%s: length", what);
	if (!ASSERT_EQ(n, len, name))
		return false;
	snprintf(name, sizeof(name), "%s: dst = sent src", what);
	if (!ASSERT_MEMEQ(got, sent + 6, 6, name))
		return false;
	snprintf(name, sizeof(name), "%s: src = sent dst", what);
	if (!ASSERT_MEMEQ(got + 6, sent, 6, name))
		return false;
	snprintf(name, sizeof(name), "%s: rest intact", what);
	return ASSERT_MEMEQ(got + 12, sent + 12, len - 12, name);
}

/* sends one frame (reaping TX when the ring is full), gets it back */
static bool echo(struct vufe *fe, unsigned int qp, size_t len,
		 unsigned int flags, unsigned int seq, unsigned int *nbufs)
{
	static __u8 f[65536], got[70000];
	struct virtio_net_hdr_mrg_rxbuf h;
	char what[96];
	ssize_t n;
	int err, tries;

	make_frame(f, len, seq);
	for (tries = 0; tries < 1000; tries++) {
		err = vufe_send(fe, qp, NULL, f, len, flags);
		if (err != -ENOSPC)
			break;
		vufe_tx_reap(fe, qp);
		poll(NULL, 0, 1);
	}
	snprintf(what, sizeof(what), "send %zu bytes flags 0x%x qp %u", len,
		 flags, qp);
	if (!ASSERT_OK(err, what))
		return false;
	n = vufe_recv_wait(fe, qp, got, sizeof(got), &h, nbufs, 5000);
	if (n < 0) {
		test_fail("%s: recv: %s", what, vufe_strerror(fe));
		return false;
	}
	if (!ASSERT_EQ(h.hdr.gso_type, VIRTIO_NET_HDR_GSO_NONE, "gso none"))
		return false;
	return check_macswap(f, got, n, len, what);
}

static bool reap_all(struct vufe *fe, unsigned int qp)
{
	long long i;

	for (i = 0; i < 5000 && vufe_tx_inflight(fe, qp); i++) {
		if (vufe_tx_reap(fe, qp) < 0)
			break;
		if (vufe_tx_inflight(fe, qp))
			poll(NULL, 0, 1);
	}
	return ASSERT_EQ(vufe_tx_inflight(fe, qp), 0, "all TX completed");
}

static void dpdk_handshake(void)
{
	struct vufe_opts o;
	struct vufe *fe;
	__u64 f;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	if (!dpdk_up(&o, &fe))
		return;
	f = vufe_features(fe);
	ASSERT_TRUE(f & (1ULL << VIRTIO_F_VERSION_1), "VERSION_1");
	ASSERT_TRUE(f & (1ULL << VIRTIO_RING_F_EVENT_IDX), "EVENT_IDX");
	ASSERT_TRUE(f & (1ULL << VIRTIO_NET_F_MRG_RXBUF), "MRG_RXBUF");
	ASSERT_TRUE(f & (1ULL << VUFE_F_PROTOCOL_FEATURES), "bit 30");
	ASSERT_EQ(vufe_protocol_features(fe),
		  vufe_backend_protocol_features(fe) & VUFE_PROTO_ACKED,
		  "acked = offered & wanted");
	ASSERT_TRUE(vufe_protocol_features(fe) & (1ULL << VUFE_PROTO_REPLY_ACK),
		    "REPLY_ACK (SET_MEM_TABLE acked)");
	ASSERT_GE(vufe_max_queues(fe), 2, "GET_QUEUE_NUM");
	if (verbose)
		fprintf(stderr,
			"  features 0x%llx of 0x%llx, protocol 0x%llx of 0x%llx\n",
			(unsigned long long)f,
			(unsigned long long)vufe_backend_features(fe),
			(unsigned long long)vufe_protocol_features(fe),
			(unsigned long long)vufe_backend_protocol_features(fe));
	ASSERT_EQ(vufe_backend_alive(fe, 2000), 1, "alive");
	vufe_destroy(fe);
}

static void dpdk_mergeable(void)
{
	static const size_t sizes[] = { 60, 64, 1514, 4000, 4084, 4085, 9000,
					16000, 65000 };
	struct vufe_vq_stats rx, tx;
	struct vufe_opts o;
	unsigned int i, nb;
	struct vufe *fe;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	o.nr_regions = 2;
	if (!dpdk_up(&o, &fe))
		return;
	if (!ASSERT_EQ(vufe_post_rx(fe, 0, 0), 256, "posted"))
		goto out;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (!echo(fe, 0, sizes[i], 0, i, &nb))
			goto out;
		ASSERT_EQ(nb, (12 + sizes[i] + 4095) / 4096,
			  "num_buffers = pages needed");
	}
	reap_all(fe, 0);
	vufe_vq_stats(fe, VUFE_RXQ(0), &rx);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
	ASSERT_GE(rx.signals, 1, "RX signals counted");
	ASSERT_GE(tx.signals, 1, "TX completion signals counted");
	ASSERT_EQ(tx.frames, i, "TX frames");
	ASSERT_EQ(rx.frames, i, "RX frames");
	if (verbose)
		fprintf(stderr,
			"  rx: signals %llu wakeups %llu kicks %llu/%llu; "
			"tx: signals %llu kicks %llu suppressed %llu\n",
			(unsigned long long)rx.signals,
			(unsigned long long)rx.wakeups,
			(unsigned long long)rx.kicks,
			(unsigned long long)rx.kicks_suppressed,
			(unsigned long long)tx.signals,
			(unsigned long long)tx.kicks,
			(unsigned long long)tx.kicks_suppressed);
out:
	vufe_destroy(fe);
}

static void dpdk_tx_layouts(void)
{
	static const unsigned int flags[] = {
		0,
		VUFE_TX_HDR_INLINE,
		VUFE_TX_SEGS(3),
		VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(4),
		VUFE_TX_INDIRECT,
		VUFE_TX_INDIRECT | VUFE_TX_SEGS(16),
		VUFE_TX_INDIRECT | VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(2),
	};
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	if (!dpdk_up(&o, &fe))
		return;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!echo(fe, 0, 1514, flags[i], i, NULL) ||
		    !echo(fe, 0, 9000, flags[i], 100 + i, NULL))
			break;
	}
	reap_all(fe, 0);
	vufe_destroy(fe);
}

static void dpdk_burst(void)
{
	static __u8 f[1514], got[2000];
	struct vufe_vq_stats tx;
	unsigned int i, seq, sent = 0, rcvd = 0;
	struct vufe_opts o;
	struct vufe *fe;
	ssize_t n;
	int err;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	if (!dpdk_up(&o, &fe))
		return;
	vufe_post_rx(fe, 0, 0);
	/* 1000 frames in bursts of 32, each burst kicked once */
	while (rcvd < 1000) {
		for (i = 0; i < 32 && sent < 1000; i++) {
			make_frame(f, sizeof(f), sent);
			err = vufe_send(fe, 0, NULL, f, sizeof(f),
					VUFE_TX_NO_KICK);
			if (err == -ENOSPC)
				break;
			if (!ASSERT_OK(err, vufe_strerror(fe)))
				goto out;
			sent++;
		}
		vufe_kick(fe, VUFE_TXQ(0));
		vufe_tx_reap(fe, 0);
		n = vufe_recv_wait(fe, 0, got, sizeof(got), NULL, NULL, 5000);
		if (!ASSERT_EQ(n, sizeof(f), vufe_strerror(fe)))
			goto out;
		memcpy(&seq, got + 14, sizeof(seq));
		if (!ASSERT_EQ(seq, rcvd, "in order"))
			goto out;
		rcvd++;
		while ((n = vufe_recv(fe, 0, got, sizeof(got), NULL, NULL)) > 0) {
			memcpy(&seq, got + 14, sizeof(seq));
			if (!ASSERT_EQ(seq, rcvd, "in order"))
				goto out;
			rcvd++;
		}
	}
	reap_all(fe, 0);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
	ASSERT_EQ(tx.frames, 1000, "sent");
	/* testpmd polls with notifications off: most kicks are saved */
	ASSERT_GT(tx.kicks_suppressed, 0, "avail_event honoured");
	if (verbose)
		fprintf(stderr, "  tx kicks %llu suppressed %llu signals %llu\n",
			(unsigned long long)tx.kicks,
			(unsigned long long)tx.kicks_suppressed,
			(unsigned long long)tx.signals);
out:
	vufe_destroy(fe);
}

static void rx_mode_case(enum vufe_rx_mode mode, bool indirect)
{
	static const size_t sizes[] = { 60, 1514, 9000, 65000 };
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i, nb;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	o.want_features &= ~(1ULL << VIRTIO_NET_F_MRG_RXBUF);
	if (!indirect)
		o.want_features &= ~(1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	o.rx_mode = mode;
	if (!dpdk_up(&o, &fe))
		return;
	ASSERT_EQ(vufe_rx_mode(fe), mode, "RX mode");
	if (!ASSERT_GT(vufe_post_rx(fe, 0, 0), 0, "posted"))
		goto out;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!echo(fe, 0, sizes[i], 0, i, &nb) ||
		    !ASSERT_EQ(nb, 1, "one chain per frame"))
			break;
	reap_all(fe, 0);
out:
	vufe_destroy(fe);
}

static void dpdk_rx_big(void)
{
	rx_mode_case(VUFE_RX_BIG, false);
}

static void dpdk_rx_big_indirect(void)
{
	rx_mode_case(VUFE_RX_BIG, true);
}

static void dpdk_rx_large(void)
{
	rx_mode_case(VUFE_RX_LARGE, true);
}

static void dpdk_multiqueue(void)
{
	struct vufe_vq_stats st;
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i, qp;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	o.nr_qp = 2;
	if (!dpdk_up(&o, &fe))
		return;
	for (qp = 0; qp < 2; qp++)
		vufe_post_rx(fe, qp, 0);
	for (i = 0; i < 20; i++)
		if (!echo(fe, i & 1, 1514, 0, i, NULL))
			break;
	for (qp = 0; qp < 2; qp++) {
		reap_all(fe, qp);
		vufe_vq_stats(fe, VUFE_RXQ(qp), &st);
		ASSERT_EQ(st.frames, 10, "frames back on the same queue pair");
	}
	vufe_destroy(fe);
}

struct used_arg {
	unsigned int vq;
	__u16 want;
};

static bool used_reached(struct vufe *fe, void *arg)
{
	struct used_arg *a = arg;
	struct vufe_vq_stats st;

	vufe_vq_stats(fe, a->vq, &st);
	return st.used_idx == a->want;
}

static void dpdk_signals(void)
{
	static __u8 f[1514], got[2000];
	struct vufe_vq_stats st, st2;
	struct used_arg ua = { VUFE_RXQ(0), 0 };
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	if (!dpdk_up(&o, &fe))
		return;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!echo(fe, 0, 1514, 0, i, NULL))
			goto out;
	reap_all(fe, 0);

	/* RX callbacks off: 20 frames arrive, no signal */
	vufe_disable_cb(fe, VUFE_RXQ(0));
	vufe_vq_stats(fe, VUFE_RXQ(0), &st);
	ua.want = st.used_idx + 20;
	make_frame(f, sizeof(f), 0);
	for (i = 0; i < 20; i++)
		vufe_send(fe, 0, NULL, f, sizeof(f), 0);
	if (!ASSERT_OK(vufe_wait(fe, used_reached, &ua, 5000),
		       "20 frames used on RX"))
		goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &st2);
	ASSERT_EQ(st2.signals, st.signals,
		  "no RX signal while callbacks are off (used_event honoured)");

	/* callbacks on: the next frame is signalled */
	ASSERT_FALSE(vufe_enable_cb(fe, VUFE_RXQ(0)), "20 pending");
	for (i = 0; i < 20; i++)
		if (!ASSERT_EQ(vufe_recv(fe, 0, got, sizeof(got), NULL, NULL),
			       sizeof(f), "drain"))
			goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &st);
	vufe_send(fe, 0, NULL, f, sizeof(f), 0);
	ASSERT_OK(vufe_wait_signals(fe, VUFE_RXQ(0), st.signals + 1, 5000),
		  "signalled after enable_cb");
	reap_all(fe, 0);
out:
	vufe_destroy(fe);
}

static void dpdk_stop_reconnect(void)
{
	struct vufe_vq_stats rx, tx;
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	if (!dpdk_up(&o, &fe))
		return;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 5; i++)
		if (!echo(fe, 0, 1514, 0, i, NULL))
			goto out;
	reap_all(fe, 0);
	if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)))
		goto out;
	vufe_vq_stats(fe, VUFE_RXQ(0), &rx);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
	ASSERT_EQ(rx.base, rx.used_idx, "RX base = buffers used");
	ASSERT_EQ(tx.base, tx.avail_idx, "TX base = frames sent");
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 5; i < 10; i++)
		if (!echo(fe, 0, 1514, 0, i, NULL))
			goto out;
	reap_all(fe, 0);
	/* and again, without a clean stop: resume from used->idx */
	vufe_disconnect(fe);
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 10; i < 15; i++)
		if (!echo(fe, 0, 1514, 0, i, NULL))
			goto out;
	reap_all(fe, 0);
out:
	vufe_destroy(fe);
}

static void dpdk_client_mode(void)
{
	struct dpdk cl = { .pmd = TESTPMD_INIT };
	char why[256] = "";
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vufe *fe = NULL;
	unsigned int i;

	if (dpdk_skip[0]) {
		test_skip("%s", dpdk_skip);
		return;
	}
	snprintf(cl.sock, sizeof(cl.sock), "/tmp/vufe-%d-client.sock",
		 getpid());
	o.path = cl.sock;
	o.timeout_ms = 20000;
	if (!ASSERT_OK(vufe_create(&o, &fe), vufe_strerror(NULL)))
		return;
	if (!ASSERT_OK(vufe_listen(fe), vufe_strerror(fe)))
		goto out;
	if (dpdk_start(&cl, "client", 1, true, why, sizeof(why))) {
		test_fail("%s", why);
		goto out;
	}
	if (!ASSERT_OK(vufe_accept(fe), vufe_strerror(fe)) ||
	    !ASSERT_OK(vufe_setup(fe), vufe_strerror(fe)))
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 5; i++)
		if (!echo(fe, 0, 1514, 0, i, NULL))
			goto out;
	reap_all(fe, 0);
	/* testpmd, a client, dials again after we hang up */
	if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)) ||
	    !ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 5; i < 10; i++)
		if (!echo(fe, 0, 1514, 0, i, NULL))
			goto out;
	reap_all(fe, 0);
out:
	vufe_destroy(fe);
	if (dpdk_stop(&cl, why, sizeof(why)))
		test_fail("%s", why);
	unlink(cl.pmd.log);
}

/*
 * Hostile input against a backend nobody here wrote: DPDK must neither
 * crash nor stop serving new connections.  What it does with the bad
 * connection (drop it or ignore the message) is reported, not asserted.
 */
static void dpdk_hostile(void)
{
	static const struct {
		enum vufe_hostile_msg kind;
		const char *name;
	} m[] = {
		{ VUFE_BAD_MSG_TRUNCATED, "truncated" },
		{ VUFE_BAD_MSG_KICK_2FDS, "kick with 2 fds" },
		{ VUFE_BAD_MSG_CALL_NOFD, "call without fd" },
		{ VUFE_BAD_MSG_ADD_MEM_NOFD, "ADD_MEM_REG without fd" },
		{ VUFE_BAD_MSG_MEM_TABLE_FDS, "mem table 2 regions 1 fd" },
		{ VUFE_BAD_MSG_VRING_IDX, "vring index 200" },
		{ VUFE_BAD_MSG_VRING_NUM, "vring num 3" },
		{ VUFE_BAD_MSG_UNKNOWN, "request 999" },
		{ VUFE_BAD_MSG_OVERSIZE, "size 0xffffffff" },
		{ VUFE_BAD_MSG_CLOSE_SHORT, "short payload, EOF" },
	};
	static const struct {
		enum vufe_hostile_ring kind;
		const char *name;
	} r[] = {
		{ VUFE_BAD_DESC_OOB, "desc outside memory" },
		{ VUFE_BAD_DESC_STRADDLE, "desc straddling region end" },
		{ VUFE_BAD_DESC_LOOP, "desc loop" },
		{ VUFE_BAD_DESC_NEXT_OOB, "next out of range" },
		{ VUFE_BAD_INDIRECT_OOB, "indirect table outside" },
		{ VUFE_BAD_INDIRECT_ENTRY, "indirect entry outside" },
		{ VUFE_BAD_INDIRECT_LEN, "indirect len 17" },
		{ VUFE_BAD_INDIRECT_NESTED, "nested indirect" },
		{ VUFE_BAD_HEAD_OOB, "head out of range" },
		{ VUFE_BAD_AVAIL_JUMP, "avail idx jump" },
	};
	struct vufe_opts o;
	struct vufe *fe;
	unsigned int i;
	int alive;

	if (!dpdk_ready())
		return;
	o = dpdk_opts();
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		if (!dpdk_up(&o, &fe))
			return;
		ASSERT_OK(vufe_hostile_msg(fe, m[i].kind), m[i].name);
		alive = vufe_backend_alive(fe, 500);
		if (verbose)
			fprintf(stderr, "  msg %-28s: DPDK %s\n", m[i].name,
				alive == 1 ? "ignored it, still answers" :
				alive == 0 ? "dropped the connection" :
					     "went silent on it");
		vufe_destroy(fe);
		if (!ASSERT_TRUE(dpdk_running(&srv), "testpmd survives"))
			return;
	}
	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		if (!dpdk_up(&o, &fe))
			return;
		vufe_post_rx(fe, 0, 0);
		ASSERT_GE(vufe_hostile_ring(fe, VUFE_TXQ(0), r[i].kind), 0,
			  r[i].name);
		/* let the forwarding core meet it */
		poll(NULL, 0, 50);
		alive = vufe_backend_alive(fe, 500);
		if (verbose)
			fprintf(stderr, "  ring %-27s: DPDK %s\n", r[i].name,
				alive == 1 ? "still answers" :
				alive == 0 ? "dropped the connection" :
					     "went silent");
		vufe_destroy(fe);
		if (!ASSERT_TRUE(dpdk_running(&srv), "testpmd survives"))
			return;
	}
	/* and a well-behaved guest still gets through */
	if (!dpdk_up(&o, &fe))
		return;
	vufe_post_rx(fe, 0, 0);
	echo(fe, 0, 1514, 0, 1, NULL);
	vufe_destroy(fe);
}

static void dpdk_setup_server(void)
{
	int err;

	if (!testpmd_bin("VUFE_TESTPMD")) {
		snprintf(dpdk_skip, sizeof(dpdk_skip),
			 "dpdk-testpmd not installed (apt-get install dpdk-dev "
			 "librte-net-vhost23 librte-mempool-ring23)");
		return;
	}
	if (geteuid() != 0) {
		snprintf(dpdk_skip, sizeof(dpdk_skip),
			 "dpdk-testpmd --no-huge needs root here");
		return;
	}
	err = dpdk_start(&srv, "srv", 2, false, dpdk_skip, sizeof(dpdk_skip));
	if (err && !dpdk_skip[0])
		snprintf(dpdk_skip, sizeof(dpdk_skip), "testpmd: %s",
			 strerror(-err));
}

int main(int argc, char **argv)
{
	char why[256] = "";
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = true;
		else
			filter = argv[i];
	}

	RUN(unit_need_event, "vufe/unit/need_event");
	RUN(unit_handshake_mem_slots, "vufe/unit/handshake_add_mem_reg");
	RUN(unit_handshake_mem_table, "vufe/unit/handshake_set_mem_table");
	RUN(unit_handshake_legacy, "vufe/unit/handshake_no_protocol_features");
	RUN(unit_handshake_nack, "vufe/unit/handshake_nack");
	RUN(unit_stop_reconnect, "vufe/unit/stop_reconnect_base");
	RUN(unit_tx_layouts, "vufe/unit/tx_layouts");
	RUN(unit_tx_reap, "vufe/unit/tx_reap");
	RUN(unit_kick_event_idx, "vufe/unit/kick_event_idx");
	RUN(unit_kick_event_idx_wrap, "vufe/unit/kick_event_idx_wrap");
	RUN(unit_kick_no_notify, "vufe/unit/kick_no_notify");
	RUN(unit_callbacks, "vufe/unit/callbacks");
	RUN(unit_rx_mergeable, "vufe/unit/rx_mergeable");
	RUN(unit_rx_mergeable_bad, "vufe/unit/rx_mergeable_bad_device");
	RUN(unit_rx_big, "vufe/unit/rx_big");
	RUN(unit_rx_big_indirect, "vufe/unit/rx_big_indirect");
	RUN(unit_rx_large, "vufe/unit/rx_large");
	RUN(unit_signals, "vufe/unit/signals");
	RUN(unit_hostile_ring_shapes, "vufe/unit/hostile_ring_shapes");
	RUN(unit_hostile_msg_shapes, "vufe/unit/hostile_msg_shapes");

	if (!filter || strstr("vufe/dpdk/", filter) || strstr(filter, "dpdk"))
		dpdk_setup_server();
	RUN(dpdk_handshake, "vufe/dpdk/handshake");
	RUN(dpdk_mergeable, "vufe/dpdk/mergeable_two_regions");
	RUN(dpdk_tx_layouts, "vufe/dpdk/tx_layouts");
	RUN(dpdk_burst, "vufe/dpdk/burst_1000");
	RUN(dpdk_rx_big, "vufe/dpdk/rx_big");
	RUN(dpdk_rx_big_indirect, "vufe/dpdk/rx_big_indirect");
	RUN(dpdk_rx_large, "vufe/dpdk/rx_large");
	RUN(dpdk_multiqueue, "vufe/dpdk/multiqueue");
	RUN(dpdk_signals, "vufe/dpdk/signals_event_idx");
	RUN(dpdk_stop_reconnect, "vufe/dpdk/stop_reconnect");
	RUN(dpdk_client_mode, "vufe/dpdk/client_mode");
	RUN(dpdk_hostile, "vufe/dpdk/hostile_survives");
	if (srv.pmd.pid > 0) {
		if (want("vufe/dpdk/testpmd_exit")) {
			test_start("vufe/dpdk/testpmd_exit");
			if (dpdk_stop(&srv, why, sizeof(why)))
				test_fail("%s", why);
			test_end();
		} else {
			dpdk_stop(&srv, why, sizeof(why));
		}
		unlink(srv.sock);
		unlink(srv.pmd.log);
	}
	return test_summary("vufe_selftest");
}
