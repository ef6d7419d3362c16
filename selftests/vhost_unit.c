// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unit tests of the vhost-user backend library (user/vhost/): protocol,
 * guest memory, split virtqueues and the event loop, in-process.  The test
 * plays the frontend over a socketpair (or a unix socket for the server
 * tests) and the guest driver through a memfd shared as guest memory.  No
 * root, no QEMU, no network.
 *
 *	build/selftests/vhost_unit [SUBSTRING...]   run the matching cases
 *
 * Hostile input (bad descriptors, bad messages) must give an error or a
 * broken ring, never a crash: the program runs under ASan/UBSan.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "test.h"

#include "log.h"
#include "mem.h"
#include "server.h"
#include "vhost_user.h"
#include "virtq.h"

#define GUEST_SIZE (1u << 20)
/* where the frontend (QEMU) would have guest memory in its own process */
#define UVA_BASE 0x7f0000000000ULL
#define RING_NUM 256
#define DESC_GPA 0x1000ULL
#define AVAIL_GPA 0x3000ULL
#define USED_GPA 0x4000ULL
#define BUF_GPA 0x10000ULL

#define BIT(n) (1ULL << (n))

/* --- log capture ------------------------------------------------------ */

static struct {
	unsigned int errors;
	unsigned int broken; /* "broken" lines */
	char last[512];
} logs;

static void log_capture(enum vhost_log_level level, const char *msg,
			void *opaque)
{
	(void)opaque;
	if (level == VHOST_LOG_ERR)
		logs.errors++;
	if (strstr(msg, "broken"))
		logs.broken++;
	snprintf(logs.last, sizeof(logs.last), "%s", msg);
	/* keep the lines: a failing case is read with them */
	fprintf(stderr, "  vhost: %s\n", msg);
}

static void logs_reset(void)
{
	memset(&logs, 0, sizeof(logs));
}

/* Open fds of this process: a leak check around fd-passing cases. */
static int count_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static int memfd_guest(size_t size)
{
	int fd = memfd_create("vhost-unit-guest", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return -errno;
	}
	return fd;
}

static uint64_t efd_read(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* --- a guest driver of one split ring ----------------------------------- */

struct drv {
	uint8_t *g; /* guest memory as the test maps it: gpa 0 at g */
	uint16_t num;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t avail_idx;
	uint16_t next_desc;
};

struct seg {
	uint64_t gpa;
	uint32_t len;
	bool write;
};

static void drv_init(struct drv *d, uint8_t *g, uint16_t num)
{
	memset(d, 0, sizeof(*d));
	d->g = g;
	d->num = num;
	d->desc = (struct vring_desc *)(g + DESC_GPA);
	d->avail = (struct vring_avail *)(g + AVAIL_GPA);
	d->used = (struct vring_used *)(g + USED_GPA);
	memset(d->desc, 0, num * sizeof(*d->desc));
	memset(d->avail, 0, 6 + 2 * num);
	memset(d->used, 0, 6 + 8 * num);
}

static void drv_set_base(struct drv *d, uint16_t idx)
{
	d->avail_idx = idx;
	d->avail->idx = idx;
	d->used->idx = idx;
}

/* Write a chain of N segments into free descriptors; returns its head. */
static uint16_t drv_chain(struct drv *d, const struct seg *s, unsigned int n)
{
	uint16_t head = d->next_desc;
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint16_t id = (uint16_t)((head + i) % d->num);
		struct vring_desc *e = &d->desc[id];

		e->addr = s[i].gpa;
		e->len = s[i].len;
		e->flags = (s[i].write ? VRING_DESC_F_WRITE : 0) |
			   (i + 1 < n ? VRING_DESC_F_NEXT : 0);
		e->next = (uint16_t)((id + 1) % d->num);
	}
	d->next_desc = (uint16_t)((head + n) % d->num);
	return head;
}

static void drv_publish(struct drv *d, uint16_t head)
{
	d->avail->ring[d->avail_idx % d->num] = head;
	d->avail_idx++;
	__atomic_store_n(&d->avail->idx, d->avail_idx, __ATOMIC_RELEASE);
}

/* used_event follows avail->ring[num], avail_event used->ring[num] */
static void drv_set_used_event(struct drv *d, uint16_t v)
{
	d->avail->ring[d->num] = v;
}

static uint16_t drv_avail_event(struct drv *d)
{
	uint16_t v;

	memcpy(&v, (uint8_t *)d->used + offsetof(struct vring_used, ring) +
			   d->num * sizeof(struct vring_used_elem),
	       sizeof(v));
	return v;
}

/* --- a virtqueue on its own: memory + ring, no protocol ----------------- */

struct vqenv {
	int memfd;
	uint8_t *g;
	struct vhost_mem mem;
	struct vhost_vq vq;
	struct drv drv;
	int call_fd; /* the test's ends of the vq's eventfds */
	int err_fd;
};

/*
 * SPLIT: guest memory as two adjacent regions (gpa 0..512K and 512K..1M,
 * separate mappings) to exercise ranges spanning regions.
 */
static bool env_setup(struct vqenv *e, uint16_t num, uint64_t features,
		      uint16_t base, bool split)
{
	struct vhost_mem_region_desc r = {
		.guest_phys_addr = 0,
		.memory_size = GUEST_SIZE,
		.userspace_addr = UVA_BASE,
		.mmap_offset = 0,
	};

	memset(e, 0, sizeof(*e));
	e->call_fd = e->err_fd = -1;
	e->memfd = memfd_guest(GUEST_SIZE);
	if (!ASSERT_GE(e->memfd, 0, "memfd"))
		return false;
	e->g = mmap(NULL, GUEST_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    e->memfd, 0);
	if (!ASSERT_TRUE(e->g != MAP_FAILED, "mmap guest")) {
		e->g = NULL;
		return false;
	}
	vhost_mem_init(&e->mem);
	if (split) {
		r.memory_size = GUEST_SIZE / 2;
		if (!ASSERT_OK(vhost_mem_add(&e->mem, &r, dup(e->memfd)),
			       "add region 0"))
			return false;
		r.guest_phys_addr = GUEST_SIZE / 2;
		r.userspace_addr = UVA_BASE + GUEST_SIZE / 2;
		r.mmap_offset = GUEST_SIZE / 2;
	}
	if (!ASSERT_OK(vhost_mem_add(&e->mem, &r, dup(e->memfd)), "add region"))
		return false;

	vhost_vq_init(&e->vq, 0, "unit", &e->mem);
	e->vq.num = num;
	e->vq.desc_uva = UVA_BASE + DESC_GPA;
	e->vq.avail_uva = UVA_BASE + AVAIL_GPA;
	e->vq.used_uva = UVA_BASE + USED_GPA;
	e->vq.log_guest_addr = USED_GPA;
	e->vq.addr_set = true;
	e->vq.kick_set = true;
	e->vq.enabled = true;
	e->vq.last_avail_idx = base;
	e->call_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->err_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!ASSERT_GE(e->call_fd, 0, "call eventfd") ||
	    !ASSERT_GE(e->err_fd, 0, "err eventfd"))
		return false;
	e->vq.call_fd = dup(e->call_fd);
	e->vq.err_fd = dup(e->err_fd);

	drv_init(&e->drv, e->g, num);
	drv_set_base(&e->drv, base);
	e->drv.next_desc = 0;
	return ASSERT_OK(vhost_vq_start(&e->vq, features), "vq start");
}

static void env_cleanup(struct vqenv *e)
{
	vhost_vq_reset(&e->vq);
	vhost_mem_cleanup(&e->mem);
	if (e->g)
		munmap(e->g, GUEST_SIZE);
	if (e->memfd >= 0)
		close(e->memfd);
	if (e->call_fd >= 0)
		close(e->call_fd);
	if (e->err_fd >= 0)
		close(e->err_fd);
}

#define F_RING                                                    \
	(BIT(VIRTIO_F_VERSION_1) | BIT(VIRTIO_RING_F_EVENT_IDX) | \
	 BIT(VIRTIO_RING_F_INDIRECT_DESC))

static struct vhost_vq_elem elems[8];

/* --- a device driven over the protocol ----------------------------------- */

struct tdev {
	struct vhost_dev dev;
	int sock; /* the frontend's end */
	uint64_t offer;
	unsigned int starts, stops, disconnects, mem_changes;
	bool running[4];
	uint8_t rarp_mac[6];
	unsigned int rarps;
	int memfd;
	uint8_t *g;
};

static uint64_t t_get_features(struct vhost_dev *dev)
{
	return ((struct tdev *)dev->priv)->offer;
}

static int t_queue_start(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct tdev *t = dev->priv;

	t->starts++;
	t->running[vq->index] = true;
	return 0;
}

static void t_queue_stop(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct tdev *t = dev->priv;

	t->stops++;
	t->running[vq->index] = false;
}

static void t_mem_changed(struct vhost_dev *dev)
{
	((struct tdev *)dev->priv)->mem_changes++;
}

static void t_disconnected(struct vhost_dev *dev)
{
	((struct tdev *)dev->priv)->disconnects++;
}

static int t_send_rarp(struct vhost_dev *dev, const uint8_t mac[6])
{
	struct tdev *t = dev->priv;

	memcpy(t->rarp_mac, mac, 6);
	t->rarps++;
	return 0;
}

static const struct vhost_dev_ops t_ops = {
	.get_features = t_get_features,
	.queue_start = t_queue_start,
	.queue_stop = t_queue_stop,
	.mem_changed = t_mem_changed,
	.disconnected = t_disconnected,
	.send_rarp = t_send_rarp,
};

#define T_OFFER                                                   \
	(F_RING | BIT(VIRTIO_NET_F_MRG_RXBUF) | BIT(VIRTIO_NET_F_CSUM) | \
	 BIT(VIRTIO_F_RING_PACKED))

static bool tdev_setup(struct tdev *t)
{
	int sv[2];

	memset(t, 0, sizeof(*t));
	t->sock = -1;
	t->memfd = -1;
	t->offer = T_OFFER;
	if (!ASSERT_OK(vhost_dev_init(&t->dev, "unit", 2, &t_ops, t),
		       "dev init"))
		return false;
	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		       "socketpair"))
		return false;
	t->sock = sv[0];
	if (!ASSERT_OK(vhost_dev_attach(&t->dev, sv[1]), "attach")) {
		close(sv[1]);
		return false;
	}
	t->memfd = memfd_guest(GUEST_SIZE);
	if (!ASSERT_GE(t->memfd, 0, "memfd"))
		return false;
	t->g = mmap(NULL, GUEST_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    t->memfd, 0);
	if (!ASSERT_TRUE(t->g != MAP_FAILED, "mmap")) {
		t->g = NULL;
		return false;
	}
	return true;
}

static void tdev_cleanup(struct tdev *t)
{
	vhost_dev_cleanup(&t->dev);
	if (t->sock >= 0)
		close(t->sock);
	if (t->g)
		munmap(t->g, GUEST_SIZE);
	if (t->memfd >= 0)
		close(t->memfd);
}

static int fe_send_raw(int sock, const void *buf, size_t len, const int *fds,
		       unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 16)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

/* Send a request and let the backend handle it; the backend's verdict. */
static int fe_call(struct tdev *t, uint32_t req, uint32_t flags,
		   const void *payload, uint32_t size, const int *fds,
		   unsigned int nfds)
{
	uint8_t buf[sizeof(struct vhost_user_hdr) + 512];
	struct vhost_user_hdr h = {
		.request = req,
		.flags = VHOST_USER_VERSION | flags,
		.size = size,
	};
	int ret;

	if (size > 512)
		return -EINVAL;
	memcpy(buf, &h, sizeof(h));
	if (size)
		memcpy(buf + sizeof(h), payload, size);
	ret = fe_send_raw(t->sock, buf, sizeof(h) + size, fds, nfds);
	if (ret)
		return ret;
	return vhost_dev_handle_input(&t->dev);
}

/* A reply waiting on the frontend's end: 0, or -EAGAIN when none. */
static int fe_reply(int sock, struct vhost_user_msg *m)
{
	ssize_t n;

	memset(m, 0, sizeof(*m));
	n = recv(sock, &m->hdr, sizeof(m->hdr), MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	if (n != sizeof(m->hdr))
		return -EPROTO;
	if (m->hdr.size > sizeof(m->payload))
		return -EMSGSIZE;
	if (m->hdr.size &&
	    recv(sock, &m->payload, m->hdr.size, MSG_DONTWAIT) !=
		    (ssize_t)m->hdr.size)
		return -EPROTO;
	return 0;
}

/* GET_* with a u64 answer: the value, or ~0 on any problem. */
static uint64_t fe_get_u64(struct tdev *t, uint32_t req)
{
	struct vhost_user_msg m;

	if (fe_call(t, req, 0, NULL, 0, NULL, 0) || fe_reply(t->sock, &m))
		return ~0ULL;
	if (m.hdr.request != req ||
	    m.hdr.flags != (VHOST_USER_VERSION | VHOST_USER_REPLY_MASK) ||
	    m.hdr.size != 8)
		return ~0ULL;
	return m.payload.u64;
}

/* A request with NEED_REPLY: the ack (0 ok, 1 error), or -errno. */
static int64_t fe_ack(struct tdev *t, uint32_t req, const void *payload,
		      uint32_t size, const int *fds, unsigned int nfds)
{
	struct vhost_user_msg m;
	int ret;

	ret = fe_call(t, req, VHOST_USER_NEED_REPLY_MASK, payload, size, fds,
		      nfds);
	if (ret)
		return ret;
	ret = fe_reply(t->sock, &m);
	if (ret)
		return ret;
	if (m.hdr.request != req || m.hdr.size != 8)
		return -EPROTO;
	return (int64_t)m.payload.u64;
}

static int64_t fe_ack_u64(struct tdev *t, uint32_t req, uint64_t v)
{
	return fe_ack(t, req, &v, sizeof(v), NULL, 0);
}

static int64_t fe_ack_state(struct tdev *t, uint32_t req, uint32_t index,
			    uint32_t num)
{
	struct vhost_user_vring_state s = { .index = index, .num = num };

	return fe_ack(t, req, &s, sizeof(s), NULL, 0);
}

static int64_t fe_ack_vring_fd(struct tdev *t, uint32_t req, uint32_t index,
			       int fd)
{
	uint64_t v = index | (fd < 0 ? VHOST_USER_VRING_NOFD_MASK : 0);

	return fe_ack(t, req, &v, sizeof(v), fd < 0 ? NULL : &fd,
		      fd < 0 ? 0 : 1);
}

static int64_t fe_mem_table(struct tdev *t, uint64_t size)
{
	struct vhost_user_mem_table mt = { .nregions = 1 };

	mt.regions[0] = (struct vhost_mem_region_desc){
		.guest_phys_addr = 0,
		.memory_size = size,
		.userspace_addr = UVA_BASE,
		.mmap_offset = 0,
	};
	return fe_ack(t, VHOST_USER_SET_MEM_TABLE, &mt,
		      offsetof(struct vhost_user_mem_table, regions) +
			      sizeof(mt.regions[0]),
		      &t->memfd, 1);
}

/* Negotiate as QEMU does, map memory and configure ring INDEX up to kick. */
static bool fe_setup_ring(struct tdev *t, uint32_t index, uint64_t features,
			  struct drv *d, int *call, int *kick)
{
	struct vhost_user_vring_addr a = {
		.index = index,
		.desc_user_addr = UVA_BASE + DESC_GPA,
		.used_user_addr = UVA_BASE + USED_GPA,
		.avail_user_addr = UVA_BASE + AVAIL_GPA,
		.log_guest_addr = USED_GPA,
	};

	if (!ASSERT_EQ(fe_ack_u64(t, VHOST_USER_SET_PROTOCOL_FEATURES,
				  BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK) |
					  BIT(VHOST_USER_PROTOCOL_F_MQ)),
		       0, "SET_PROTOCOL_FEATURES"))
		return false;
	if (!ASSERT_EQ(fe_ack_u64(t, VHOST_USER_SET_FEATURES, features), 0,
		       "SET_FEATURES"))
		return false;
	if (!ASSERT_EQ(fe_mem_table(t, GUEST_SIZE), 0, "SET_MEM_TABLE"))
		return false;
	drv_init(d, t->g, RING_NUM);
	if (!ASSERT_EQ(fe_ack_state(t, VHOST_USER_SET_VRING_NUM, index,
				    RING_NUM),
		       0, "SET_VRING_NUM") ||
	    !ASSERT_EQ(fe_ack_state(t, VHOST_USER_SET_VRING_BASE, index, 0), 0,
		       "SET_VRING_BASE") ||
	    !ASSERT_EQ(fe_ack(t, VHOST_USER_SET_VRING_ADDR, &a, sizeof(a),
			      NULL, 0),
		       0, "SET_VRING_ADDR"))
		return false;
	*call = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	*kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!ASSERT_GE(*call, 0, "call") || !ASSERT_GE(*kick, 0, "kick"))
		return false;
	return ASSERT_EQ(fe_ack_vring_fd(t, VHOST_USER_SET_VRING_CALL, index,
					 *call),
			 0, "SET_VRING_CALL") &&
	       ASSERT_EQ(fe_ack_vring_fd(t, VHOST_USER_SET_VRING_KICK, index,
					 *kick),
			 0, "SET_VRING_KICK");
}

/* ======================================================================= */
/* protocol                                                                 */
/* ======================================================================= */

static void test_proto_features(void)
{
	struct tdev t;
	uint64_t f, pf;

	if (!tdev_setup(&t))
		goto out;
	f = fe_get_u64(&t, VHOST_USER_GET_FEATURES);
	ASSERT_NEQ(f, ~0ULL, "GET_FEATURES reply");
	/* the device's offer (packed rings included), plus the vhost bits */
	ASSERT_EQ(f & T_OFFER, T_OFFER, "device features");
	ASSERT_EQ(f & BIT(VIRTIO_F_RING_RESET), 0, "ring reset masked");
	ASSERT_NEQ(f & BIT(VHOST_USER_F_PROTOCOL_FEATURES), 0,
		   "PROTOCOL_FEATURES offered");
	ASSERT_NEQ(f & BIT(VHOST_F_LOG_ALL), 0, "LOG_ALL offered");

	pf = fe_get_u64(&t, VHOST_USER_GET_PROTOCOL_FEATURES);
	ASSERT_EQ(pf,
		  BIT(VHOST_USER_PROTOCOL_F_MQ) |
			  BIT(VHOST_USER_PROTOCOL_F_LOG_SHMFD) |
			  BIT(VHOST_USER_PROTOCOL_F_RARP) |
			  BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK) |
			  BIT(VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS),
		  "protocol features");
	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_PROTOCOL_FEATURES,
			     BIT(VHOST_USER_PROTOCOL_F_STATUS)),
		  1, "unoffered protocol feature refused");
	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_PROTOCOL_FEATURES, pf), 0,
		  "SET_PROTOCOL_FEATURES");
	ASSERT_EQ(t.dev.protocol_features, pf, "protocol features acked");

	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_FEATURES,
			     f | BIT(VIRTIO_F_RING_RESET)),
		  1, "unoffered feature refused");
	ASSERT_EQ(t.dev.features, 0, "features unchanged");
	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_FEATURES, f), 0,
		  "SET_FEATURES");
	ASSERT_EQ(t.dev.features, f, "features acked");

	ASSERT_EQ(fe_get_u64(&t, VHOST_USER_GET_QUEUE_NUM), 2, "GET_QUEUE_NUM");
	ASSERT_EQ(fe_get_u64(&t, VHOST_USER_GET_MAX_MEM_SLOTS), 32,
		  "GET_MAX_MEM_SLOTS");
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_OWNER, NULL, 0, NULL, 0), 0,
		  "SET_OWNER");
	ASSERT_TRUE(t.dev.owner, "owner");
out:
	tdev_cleanup(&t);
}

static void test_proto_rarp(void)
{
	static const uint8_t mac[8] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SEND_RARP, mac, 8, NULL, 0), 0,
		  "SEND_RARP");
	ASSERT_EQ(t.rarps, 1, "rarp callback");
	ASSERT_MEMEQ(t.rarp_mac, mac, 6, "rarp mac");
out:
	tdev_cleanup(&t);
}

/* QEMU's start sequence; ring disabled until SET_VRING_ENABLE; GET_VRING_BASE. */
static void test_proto_ring_lifecycle(void)
{
	struct vhost_user_vring_state s = { .index = 0 };
	struct vhost_user_msg m;
	struct vhost_vq *vq;
	int call = -1, kick = -1;
	struct seg sg = { BUF_GPA, 64, false };
	struct drv d;
	uint64_t one = 1;
	int n;

	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	vq = vhost_dev_vq(&t.dev, 0);
	if (!fe_setup_ring(&t, 0, F_RING | BIT(VHOST_USER_F_PROTOCOL_FEATURES),
			   &d, &call, &kick))
		goto out;
	ASSERT_EQ(t.mem_changes, 1, "mem_changed callback");
	/* protocol features negotiated: started but disabled */
	ASSERT_TRUE(vq->kick_set, "started by kick");
	ASSERT_FALSE(t.running[0], "not running before SET_VRING_ENABLE");
	ASSERT_EQ(fe_ack_state(&t, VHOST_USER_SET_VRING_ENABLE, 0, 1), 0,
		  "SET_VRING_ENABLE");
	if (!ASSERT_TRUE(t.running[0], "running after SET_VRING_ENABLE"))
		goto out;
	ASSERT_EQ(t.starts, 1, "one start");

	/* the datapath runs on what the protocol configured */
	drv_publish(&d, drv_chain(&d, &sg, 1));
	drv_publish(&d, drv_chain(&d, &sg, 1));
	ASSERT_EQ(write(kick, &one, sizeof(one)), 8, "kick");
	ASSERT_EQ(vhost_vq_kick_drain(vq), 1, "kick drained");
	n = vhost_vq_pop_burst(vq, elems, 8);
	ASSERT_EQ(n, 2, "popped");
	ASSERT_OK(vhost_vq_push(vq, elems[0].head, 0), "push");
	ASSERT_OK(vhost_vq_push(vq, elems[1].head, 0), "push");

	/* a running ring is stopped around a call fd swap */
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_CALL, 0, call), 0,
		  "SET_VRING_CALL again");
	ASSERT_EQ(t.stops, 1, "stopped for the swap");
	ASSERT_TRUE(t.running[0], "running again");

	/* GET_VRING_BASE stops it and answers last_avail_idx */
	if (!ASSERT_OK(fe_call(&t, VHOST_USER_GET_VRING_BASE, 0, &s, sizeof(s),
			       NULL, 0),
		       "GET_VRING_BASE"))
		goto out;
	if (!ASSERT_OK(fe_reply(t.sock, &m), "GET_VRING_BASE reply"))
		goto out;
	ASSERT_EQ(m.hdr.request, VHOST_USER_GET_VRING_BASE, "reply request");
	ASSERT_EQ(m.hdr.size, sizeof(s), "reply size");
	ASSERT_EQ(m.payload.state.index, 0, "reply index");
	ASSERT_EQ(m.payload.state.num, 2, "reply base");
	ASSERT_FALSE(t.running[0], "stopped");
	ASSERT_EQ(vq->kick_fd, -1, "kick fd dropped");

	/* restart at that base, as after a reconnect */
	ASSERT_EQ(fe_ack_state(&t, VHOST_USER_SET_VRING_BASE, 0, 2), 0,
		  "SET_VRING_BASE 2");
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_KICK, 0, kick), 0,
		  "SET_VRING_KICK again");
	ASSERT_TRUE(t.running[0], "running after the new kick");
	ASSERT_EQ(vq->last_avail_idx, 2, "resumed at the base");
	ASSERT_EQ(vq->used_idx, 2, "used idx from the guest");

	/* SET_VRING_ENABLE 0 stops it */
	ASSERT_EQ(fe_ack_state(&t, VHOST_USER_SET_VRING_ENABLE, 0, 0), 0,
		  "disable");
	ASSERT_FALSE(t.running[0], "stopped by disable");
out:
	if (call >= 0)
		close(call);
	if (kick >= 0)
		close(kick);
	tdev_cleanup(&t);
}

/* Without VHOST_USER_F_PROTOCOL_FEATURES the ring is enabled at kick. */
static void test_proto_legacy_enable(void)
{
	int call = -1, kick = -1;
	struct drv d;
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	if (!fe_setup_ring(&t, 1, F_RING, &d, &call, &kick))
		goto out;
	ASSERT_TRUE(t.running[1], "running at kick");
out:
	if (call >= 0)
		close(call);
	if (kick >= 0)
		close(kick);
	tdev_cleanup(&t);
}

/* Invalid-fd flag: polling mode, no kick fd, no call fd. */
static void test_proto_vring_nofd(void)
{
	int call = -1, kick = -1;
	struct drv d;
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	if (!fe_setup_ring(&t, 0, F_RING, &d, &call, &kick))
		goto out;
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_KICK, 0, -1), 0,
		  "SET_VRING_KICK nofd");
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_CALL, 0, -1), 0,
		  "SET_VRING_CALL nofd");
	ASSERT_TRUE(t.dev.vqs[0].kick_polling, "polling mode");
	ASSERT_EQ(t.dev.vqs[0].kick_fd, -1, "no kick fd");
	ASSERT_EQ(t.dev.vqs[0].call_fd, -1, "no call fd");
	ASSERT_TRUE(t.running[0], "running");
	ASSERT_EQ(vhost_vq_notify(&t.dev.vqs[0]), 1, "notify without fd");
out:
	if (call >= 0)
		close(call);
	if (kick >= 0)
		close(kick);
	tdev_cleanup(&t);
}

static void test_proto_wrong_fd_count(void)
{
	struct vhost_user_mem_table mt = { .nregions = 1 };
	int efd = eventfd(0, EFD_CLOEXEC), fds[2], before;
	struct tdev t;
	uint64_t v;

	if (!tdev_setup(&t) || !ASSERT_GE(efd, 0, "eventfd"))
		goto out;
	before = count_fds();

	/* fd expected (flag clear), none sent */
	v = 0;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_CALL, &v, 8, NULL, 0), 1,
		  "CALL without fd refused");
	/* no fd expected (flag set), one sent */
	v = VHOST_USER_VRING_NOFD_MASK;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_KICK, &v, 8, &efd, 1), 1,
		  "KICK nofd with fd refused");
	/* two fds where the table says 0..1 */
	fds[0] = efd;
	fds[1] = efd;
	v = 0;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_ERR, &v, 8, fds, 2), 1,
		  "ERR with 2 fds refused");
	/* a memory table of 1 region with 2 fds */
	mt.regions[0] = (struct vhost_mem_region_desc){ 0, GUEST_SIZE,
							UVA_BASE, 0 };
	fds[0] = t.memfd;
	fds[1] = efd;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_MEM_TABLE, &mt, 8 + 32, fds, 2),
		  1, "mem table 1 region 2 fds refused");
	ASSERT_EQ(t.dev.mem.nregions, 0, "no memory mapped");
	/* an fd on a message that takes none */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_FEATURES, &v, 8, &efd, 1), 1,
		  "SET_FEATURES with fd refused");
	/* ADD_MEM_REG without its fd */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_ADD_MEM_REG,
			 &(struct vhost_user_mem_reg){ .region = mt.regions[0] },
			 sizeof(struct vhost_user_mem_reg), NULL, 0),
		  1, "ADD_MEM_REG without fd refused");

	ASSERT_EQ(count_fds(), before, "every received fd closed");
	ASSERT_EQ(t.dev.vqs[0].call_fd, -1, "no call fd taken");
	ASSERT_EQ(t.dev.vqs[0].kick_set, false, "ring not started");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "still connected");
	ASSERT_NEQ(fe_get_u64(&t, VHOST_USER_GET_FEATURES), ~0ULL,
		   "still answering");
out:
	if (efd >= 0)
		close(efd);
	tdev_cleanup(&t);
}

/*
 * Ring fds are the backend's to use without waiting: a pipe becomes an
 * open file of its own (the frontend clearing O_NONBLOCK on its side
 * changes nothing), an eventfd gets O_NONBLOCK (checked), and an fd that
 * is neither (a socket) is refused.
 */
static void test_proto_ring_fd_own(void)
{
	int kp[2] = { -1, -1 }, cp[2] = { -1, -1 }, sp[2] = { -1, -1 };
	int efd = eventfd(0, EFD_CLOEXEC), fl;
	struct vhost_vq *vq;
	uint64_t v = 0;
	struct stat a, b;
	struct tdev t;
	char c = 0;

	if (!tdev_setup(&t) || !ASSERT_GE(efd, 0, "eventfd") ||
	    !ASSERT_OK(pipe2(kp, O_CLOEXEC), "kick pipe") ||
	    !ASSERT_OK(pipe2(cp, O_CLOEXEC), "call pipe") ||
	    !ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp),
		       "socketpair"))
		goto out;
	vq = &t.dev.vqs[0];
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_KICK, 0, kp[0]), 0,
		  "kick: a pipe");
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_CALL, 0, cp[1]), 0,
		  "call: a pipe");
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_ERR, 0, efd), 0,
		  "error: an eventfd");
	if (!ASSERT_GE(vq->kick_fd, 0, "kick fd") ||
	    !ASSERT_GE(vq->call_fd, 0, "call fd"))
		goto out;
	/* the same pipe, another open file: only the backend's is O_NONBLOCK */
	if (ASSERT_OK(fstat(vq->kick_fd, &a), "fstat") &&
	    ASSERT_OK(fstat(kp[0], &b), "fstat"))
		ASSERT_EQ(a.st_ino, b.st_ino, "kick: the frontend's pipe");
	ASSERT_TRUE(fcntl(vq->kick_fd, F_GETFL) & O_NONBLOCK,
		    "kick: non-blocking for the backend");
	ASSERT_FALSE(fcntl(kp[0], F_GETFL) & O_NONBLOCK,
		     "kick: the frontend's open file untouched");
	fcntl(kp[0], F_SETFL, 0);
	ASSERT_EQ(read(vq->kick_fd, &c, 1), -1, "kick: an empty pipe does not wait");
	ASSERT_EQ(errno, EAGAIN, "kick: EAGAIN");
	/* a full call pipe: the signal does not wait either */
	fl = fcntl(cp[1], F_GETFL);
	fcntl(cp[1], F_SETFL, fl | O_NONBLOCK);
	while (write(cp[1], &v, sizeof(v)) > 0)
		;
	fcntl(cp[1], F_SETFL, fl & ~O_NONBLOCK);
	ASSERT_EQ(vhost_vq_signal(vq), 0, "call: a full pipe does not wait");
	ASSERT_TRUE(fcntl(efd, F_GETFL) & O_NONBLOCK, "error: eventfd O_NONBLOCK");
	/* a socket is no ring fd */
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_CALL, 0, sp[0]), 1,
		  "call: a socket refused");
	ASSERT_GE(vq->call_fd, 0, "call: the pipe kept");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "still connected");
out:
	if (efd >= 0)
		close(efd);
	if (kp[0] >= 0) {
		close(kp[0]);
		close(kp[1]);
	}
	if (cp[0] >= 0) {
		close(cp[0]);
		close(cp[1]);
	}
	if (sp[0] >= 0) {
		close(sp[0]);
		close(sp[1]);
	}
	tdev_cleanup(&t);
}

static void test_proto_unknown_request(void)
{
	struct vhost_user_msg m;
	struct tdev t;
	uint64_t v = 0;

	if (!tdev_setup(&t))
		goto out;
	logs_reset();
	/* unknown, NEED_REPLY: an error ack */
	ASSERT_EQ(fe_ack(&t, 99, &v, 8, NULL, 0), 1, "unknown NEED_REPLY");
	ASSERT_GE(logs.errors, 1, "logged");
	ASSERT_TRUE(strstr(logs.last, "unknown request 99") != NULL,
		    "log names the request");
	/* unknown, no NEED_REPLY: nothing */
	ASSERT_OK(fe_call(&t, 1000, 0, &v, 8, NULL, 0), "unknown");
	ASSERT_EQ(fe_reply(t.sock, &m), -EAGAIN, "no reply");
	/* known, unsupported GET: an empty (error) reply */
	ASSERT_OK(fe_call(&t, VHOST_USER_GET_STATUS, 0, NULL, 0, NULL, 0),
		  "GET_STATUS");
	if (ASSERT_OK(fe_reply(t.sock, &m), "GET_STATUS reply")) {
		ASSERT_EQ(m.hdr.request, VHOST_USER_GET_STATUS, "request");
		ASSERT_EQ(m.hdr.size, 0, "empty reply");
	}
	ASSERT_OK(fe_call(&t, VHOST_USER_GET_CONFIG, 0, &v, 8, NULL, 0),
		  "GET_CONFIG");
	if (ASSERT_OK(fe_reply(t.sock, &m), "GET_CONFIG reply"))
		ASSERT_EQ(m.hdr.size, 0, "GET_CONFIG error reply");
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_CONFIG, &v, 8, NULL, 0), 1,
		  "SET_CONFIG refused");
	/* an unknown request's fds are closed too */
	ASSERT_EQ(fe_ack(&t, 77, &v, 8, &t.memfd, 1), 1, "unknown with fd");
	/* a payload shorter than the request needs */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_NUM, &v, 4, NULL, 0), 1,
		  "short payload refused");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "still connected");
	ASSERT_EQ(fe_get_u64(&t, VHOST_USER_GET_QUEUE_NUM), 2,
		  "still answering");
out:
	tdev_cleanup(&t);
}

static void test_proto_truncated(void)
{
	struct vhost_user_hdr h = { VHOST_USER_SET_FEATURES,
				    VHOST_USER_VERSION, 8 };
	uint8_t buf[sizeof(h) + 4];
	struct tdev t;
	int before;

	if (!tdev_setup(&t))
		goto out;
	before = count_fds();
	/* header says 8 bytes of payload; 4 come, then EOF; with an fd */
	memcpy(buf, &h, sizeof(h));
	memset(buf + sizeof(h), 0, 4);
	ASSERT_OK(fe_send_raw(t.sock, buf, sizeof(buf), &t.memfd, 1), "send");
	shutdown(t.sock, SHUT_WR);
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EPROTO, "truncated");
	vhost_dev_disconnect(&t.dev);
	ASSERT_FALSE(vhost_dev_connected(&t.dev), "dropped");
	ASSERT_EQ(t.disconnects, 1, "device told");
	ASSERT_EQ(count_fds(), before - 1, "fds closed (ours and the pending)");
	close(t.sock);
	t.sock = -1;

	/* a header cut short */
	{
		int sv[2];

		if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv),
			       "socketpair"))
			goto out;
		t.sock = sv[0];
		ASSERT_OK(vhost_dev_attach(&t.dev, sv[1]), "reattach");
		ASSERT_OK(fe_send_raw(t.sock, &h, 6, NULL, 0), "send 6");
		ASSERT_EQ(vhost_dev_handle_input(&t.dev), 0, "waits for more");
		shutdown(t.sock, SHUT_WR);
		ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EPROTO,
			  "truncated header");
		vhost_dev_disconnect(&t.dev);
	}
out:
	tdev_cleanup(&t);
}

static void test_proto_bad_header(void)
{
	struct vhost_user_hdr h = { VHOST_USER_SET_FEATURES,
				    VHOST_USER_VERSION, 4096 };
	struct tdev t;
	int sv[2];

	if (!tdev_setup(&t))
		goto out;
	ASSERT_OK(fe_send_raw(t.sock, &h, sizeof(h), NULL, 0), "send");
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EMSGSIZE, "oversized");
	vhost_dev_disconnect(&t.dev);
	close(t.sock);
	t.sock = -1;

	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair"))
		goto out;
	t.sock = sv[0];
	ASSERT_OK(vhost_dev_attach(&t.dev, sv[1]), "reattach");
	h.flags = 2; /* version 2 */
	h.size = 0;
	ASSERT_OK(fe_send_raw(t.sock, &h, sizeof(h), NULL, 0), "send");
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EPROTO, "bad version");
	vhost_dev_disconnect(&t.dev);
out:
	tdev_cleanup(&t);
}

static void test_proto_too_many_fds(void)
{
	struct vhost_user_hdr h = { VHOST_USER_SET_OWNER, VHOST_USER_VERSION,
				    0 };
	int fds[9], i, before;
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	for (i = 0; i < 9; i++)
		fds[i] = t.memfd;
	before = count_fds();
	ASSERT_OK(fe_send_raw(t.sock, &h, sizeof(h), fds, 9), "send 9 fds");
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EPROTO, "rejected");
	vhost_dev_disconnect(&t.dev);
	ASSERT_EQ(count_fds(), before - 1, "no fd leaked");
out:
	tdev_cleanup(&t);
}

/* A message that arrives a byte at a time is assembled, then handled. */
static void test_proto_partial_reads(void)
{
	struct vhost_user_hdr h = { VHOST_USER_GET_QUEUE_NUM,
				    VHOST_USER_VERSION, 0 };
	const uint8_t *p = (const uint8_t *)&h;
	struct vhost_user_msg m;
	struct tdev t;
	size_t i;

	if (!tdev_setup(&t))
		goto out;
	for (i = 0; i < sizeof(h); i++) {
		ASSERT_OK(fe_send_raw(t.sock, p + i, 1, NULL, 0), "send byte");
		ASSERT_OK(vhost_dev_handle_input(&t.dev), "partial");
		if (i + 1 < sizeof(h))
			ASSERT_EQ(fe_reply(t.sock, &m), -EAGAIN, "no reply yet");
	}
	if (ASSERT_OK(fe_reply(t.sock, &m), "reply"))
		ASSERT_EQ(m.payload.u64, 2, "GET_QUEUE_NUM");
out:
	tdev_cleanup(&t);
}

/* Reconnect: a disconnect resets everything; a new frontend starts afresh. */
static void test_proto_disconnect_reset(void)
{
	int call = -1, kick = -1, sv[2];
	struct drv d;
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	if (!fe_setup_ring(&t, 0, F_RING, &d, &call, &kick))
		goto out;
	ASSERT_TRUE(t.running[0], "running");
	close(t.sock);
	t.sock = -1;
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -ECONNRESET, "EOF");
	vhost_dev_disconnect(&t.dev);
	ASSERT_FALSE(t.running[0], "stopped before the reset");
	ASSERT_EQ(t.dev.mem.nregions, 0, "memory unmapped");
	ASSERT_EQ(t.dev.features, 0, "features reset");
	ASSERT_EQ(t.dev.vqs[0].num, 0, "ring reset");
	ASSERT_EQ(t.dev.vqs[0].call_fd, -1, "call fd closed");
	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair"))
		goto out;
	t.sock = sv[0];
	ASSERT_OK(vhost_dev_attach(&t.dev, sv[1]), "new frontend");
	ASSERT_EQ(fe_get_u64(&t, VHOST_USER_GET_QUEUE_NUM), 2, "answers");
out:
	if (call >= 0)
		close(call);
	if (kick >= 0)
		close(kick);
	tdev_cleanup(&t);
}

/* ======================================================================= */
/* guest memory                                                             */
/* ======================================================================= */

static void test_mem_add_remove(void)
{
	struct vhost_user_mem_reg r0 = { 0 }, r1 = { 0 }, bad = { 0 };
	struct iovec iov[4];
	uint64_t gpas[4], gpa;
	struct tdev t;
	uint8_t *h;
	int n;

	if (!tdev_setup(&t))
		goto out;
	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_PROTOCOL_FEATURES,
			     BIT(VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS) |
				     BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK)),
		  0, "protocol features");
	/* two adjacent 64K regions from one memfd, separate mappings */
	r0.region = (struct vhost_mem_region_desc){ 0, 0x10000, UVA_BASE, 0 };
	r1.region = (struct vhost_mem_region_desc){ 0x10000, 0x10000,
						    UVA_BASE + 0x10000,
						    0x10000 };
	ASSERT_EQ(fe_ack(&t, VHOST_USER_ADD_MEM_REG, &r1, sizeof(r1),
			 &t.memfd, 1),
		  0, "ADD_MEM_REG 1");
	ASSERT_EQ(fe_ack(&t, VHOST_USER_ADD_MEM_REG, &r0, sizeof(r0),
			 &t.memfd, 1),
		  0, "ADD_MEM_REG 0");
	ASSERT_EQ(t.dev.mem.nregions, 2, "2 regions");
	ASSERT_EQ(t.dev.mem.regions[0].gpa, 0, "sorted by gpa");
	/* overlapping */
	bad.region = (struct vhost_mem_region_desc){ 0xf000, 0x2000,
						     UVA_BASE + 0x40000, 0 };
	ASSERT_EQ(fe_ack(&t, VHOST_USER_ADD_MEM_REG, &bad, sizeof(bad),
			 &t.memfd, 1),
		  1, "overlap refused");

	/*
	 * The very same region again (QEMU 7.2 sends one ADD_MEM_REG per
	 * queue pair): counted, not refused; it stays mapped until removed
	 * as often as it was added.
	 */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_ADD_MEM_REG, &r1, sizeof(r1),
			 &t.memfd, 1),
		  0, "duplicate ADD_MEM_REG accepted");
	ASSERT_EQ(t.dev.mem.nregions, 2, "duplicate adds no region");
	ASSERT_EQ(fe_ack(&t, VHOST_USER_REM_MEM_REG, &r1, sizeof(r1), NULL, 0),
		  0, "REM_MEM_REG of the duplicate");
	ASSERT_TRUE(vhost_mem_gpa_to_host(&t.dev.mem, 0x10000, 0x10000) != NULL,
		    "region 1 still mapped after one of two removes");

	memcpy(t.g + 0xfffc, "ABCDEFGH", 8);
	/* edges */
	h = vhost_mem_gpa_to_host(&t.dev.mem, 0, 0x10000);
	ASSERT_TRUE(h != NULL, "whole region 0");
	ASSERT_TRUE(vhost_mem_gpa_to_host(&t.dev.mem, 0xffff, 1) != NULL,
		    "last byte of region 0");
	ASSERT_NULL(vhost_mem_gpa_to_host(&t.dev.mem, 0xffff, 2),
		    "range across regions is not one pointer");
	h = vhost_mem_gpa_to_host(&t.dev.mem, 0x10000, 4);
	if (ASSERT_TRUE(h != NULL, "first byte of region 1"))
		ASSERT_MEMEQ(h, "EFGH", 4, "region 1 contents");
	ASSERT_TRUE(vhost_mem_gpa_to_host(&t.dev.mem, 0x1ffff, 1) != NULL,
		    "last byte");
	ASSERT_NULL(vhost_mem_gpa_to_host(&t.dev.mem, 0x20000, 1),
		    "one past the end");
	ASSERT_NULL(vhost_mem_gpa_to_host(&t.dev.mem, 0x1ffff, 2),
		    "runs past the end");
	/* overflow */
	ASSERT_NULL(vhost_mem_gpa_to_host(&t.dev.mem, 8, UINT64_MAX),
		    "len overflow");
	ASSERT_NULL(vhost_mem_gpa_to_host(&t.dev.mem, UINT64_MAX, 2),
		    "gpa overflow");
	ASSERT_NULL(vhost_mem_gpa_to_host(&t.dev.mem, UINT64_MAX - 1,
					  UINT64_MAX),
		    "both");
	/* iovecs across the boundary */
	n = vhost_mem_gpa_to_iov(&t.dev.mem, 0xfffc, 8, iov, gpas, 4);
	if (ASSERT_EQ(n, 2, "2 iovecs")) {
		ASSERT_EQ(iov[0].iov_len, 4, "first part");
		ASSERT_EQ(iov[1].iov_len, 4, "second part");
		ASSERT_EQ(gpas[1], 0x10000, "second gpa");
		ASSERT_MEMEQ(iov[0].iov_base, "ABCD", 4, "first bytes");
		ASSERT_MEMEQ(iov[1].iov_base, "EFGH", 4, "second bytes");
	}
	ASSERT_EQ(vhost_mem_gpa_to_iov(&t.dev.mem, 0xfffc, 8, iov, gpas, 1),
		  -ENOBUFS, "iov array too small");
	ASSERT_EQ(vhost_mem_gpa_to_iov(&t.dev.mem, 0x1fff0, 0x20, iov, gpas,
				       4),
		  -EFAULT, "past the end");
	ASSERT_EQ(vhost_mem_gpa_to_iov(&t.dev.mem, 0, 0, iov, gpas, 4), 0,
		  "empty range");
	/* frontend virtual addresses */
	ASSERT_TRUE(vhost_mem_uva_to_host(&t.dev.mem, UVA_BASE + 0x1fff8, 8) !=
			    NULL,
		    "uva in range");
	ASSERT_NULL(vhost_mem_uva_to_host(&t.dev.mem, UVA_BASE + 0x1fff8, 9),
		    "uva past the end");
	ASSERT_NULL(vhost_mem_uva_to_host(&t.dev.mem, UVA_BASE - 1, 1),
		    "uva before");
	ASSERT_OK(vhost_mem_uva_to_gpa(&t.dev.mem, UVA_BASE + 0x10010, &gpa),
		  "uva to gpa");
	ASSERT_EQ(gpa, 0x10010, "gpa of uva");

	/* remove region 1: its addresses are gone, region 0 stays */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_REM_MEM_REG, &r1, sizeof(r1), NULL,
			 0),
		  0, "REM_MEM_REG");
	ASSERT_NULL(vhost_mem_gpa_to_host(&t.dev.mem, 0x10000, 1),
		    "removed region");
	ASSERT_TRUE(vhost_mem_gpa_to_host(&t.dev.mem, 0, 1) != NULL,
		    "other region");
	ASSERT_EQ(fe_ack(&t, VHOST_USER_REM_MEM_REG, &r1, sizeof(r1), NULL,
			 0),
		  1, "removing it again fails");
	/* an fd on REM_MEM_REG is tolerated and closed */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_REM_MEM_REG, &r0, sizeof(r0),
			 &t.memfd, 1),
		  0, "REM_MEM_REG with fd");
	ASSERT_EQ(t.dev.mem.nregions, 0, "empty");
	ASSERT_EQ(t.mem_changes, 6, "mem_changed per change");
out:
	tdev_cleanup(&t);
}

static void test_mem_validation(void)
{
	struct vhost_mem_region_desc d;
	struct vhost_mem mem;
	int fd = memfd_guest(0x10000), i;

	vhost_mem_init(&mem);
	if (!ASSERT_GE(fd, 0, "memfd"))
		return;
	d = (struct vhost_mem_region_desc){ 0, 0, UVA_BASE, 0 };
	ASSERT_EQ(vhost_mem_add(&mem, &d, dup(fd)), -EINVAL, "empty region");
	d = (struct vhost_mem_region_desc){ UINT64_MAX - 0xfff, 0x2000,
					    UVA_BASE, 0 };
	ASSERT_EQ(vhost_mem_add(&mem, &d, dup(fd)), -EINVAL, "gpa wraps");
	d = (struct vhost_mem_region_desc){ 0, 0x1000, UINT64_MAX, 0 };
	ASSERT_EQ(vhost_mem_add(&mem, &d, dup(fd)), -EINVAL, "uva wraps");
	d = (struct vhost_mem_region_desc){ 0, 0x1000, UVA_BASE, UINT64_MAX };
	ASSERT_EQ(vhost_mem_add(&mem, &d, dup(fd)), -EINVAL, "offset wraps");
	/* bigger than the file: touching it would be SIGBUS */
	d = (struct vhost_mem_region_desc){ 0, 0x20000, UVA_BASE, 0 };
	ASSERT_EQ(vhost_mem_add(&mem, &d, dup(fd)), -EINVAL, "past EOF");
	d = (struct vhost_mem_region_desc){ 0, 0x1000, UVA_BASE, 0xf001 };
	ASSERT_EQ(vhost_mem_add(&mem, &d, dup(fd)), -EINVAL,
		  "offset + size past EOF");
	ASSERT_EQ(vhost_mem_add(&mem, &d, -1), -EBADF, "no fd");
	/* a region ending at 2^64: no wrap to gpa 0 in the lookups */
	d = (struct vhost_mem_region_desc){ 0, 0x1000, UVA_BASE, 0 };
	ASSERT_OK(vhost_mem_add(&mem, &d, dup(fd)), "region at 0");
	d = (struct vhost_mem_region_desc){ 0ULL - 0x1000, 0x1000,
					    UVA_BASE + 0x1000, 0x1000 };
	ASSERT_OK(vhost_mem_add(&mem, &d, dup(fd)), "region at the top");
	ASSERT_TRUE(vhost_mem_gpa_to_host(&mem, UINT64_MAX, 1) != NULL,
		    "last byte of the address space");
	ASSERT_FALSE(vhost_mem_range_ok(&mem, UINT64_MAX, 2),
		     "no wrap to 0");
	{
		struct iovec iov[2];
		uint8_t b[2];

		ASSERT_EQ(vhost_mem_gpa_to_iov(&mem, UINT64_MAX, 2, iov, NULL,
					       2),
			  -EFAULT, "iov: no wrap to 0");
		ASSERT_EQ(vhost_mem_read(&mem, UINT64_MAX, b, 2), -EFAULT,
			  "read: no wrap to 0");
	}
	vhost_mem_cleanup(&mem);

	/* all 32 slots, then no more */
	for (i = 0; i < VHOST_MEM_MAX_REGIONS; i++) {
		d = (struct vhost_mem_region_desc){ (uint64_t)i * 0x1000,
						    0x1000,
						    UVA_BASE + i * 0x1000, 0 };
		if (!ASSERT_OK(vhost_mem_add(&mem, &d, dup(fd)), "add slot"))
			break;
	}
	d = (struct vhost_mem_region_desc){ 0x100000, 0x1000, UVA_BASE, 0 };
	ASSERT_EQ(vhost_mem_add(&mem, &d, dup(fd)), -ENOSPC, "33rd slot");
	vhost_mem_cleanup(&mem);
	close(fd);
}

static void test_mem_set_table(void)
{
	struct vhost_user_mem_table mt = { .nregions = 2 };
	int fds[2];
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	ASSERT_EQ(fe_mem_table(&t, GUEST_SIZE), 0, "first table");
	ASSERT_TRUE(vhost_mem_gpa_to_host(&t.dev.mem, GUEST_SIZE - 1, 1) !=
			    NULL,
		    "mapped");
	/* an overlapping table is refused and the old one stays */
	mt.regions[0] = (struct vhost_mem_region_desc){ 0, 0x2000, UVA_BASE,
							0 };
	mt.regions[1] = (struct vhost_mem_region_desc){ 0x1000, 0x2000,
							UVA_BASE + 0x4000, 0 };
	fds[0] = fds[1] = t.memfd;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_MEM_TABLE, &mt, 8 + 64, fds, 2), 1,
		  "overlapping table refused");
	ASSERT_TRUE(vhost_mem_gpa_to_host(&t.dev.mem, GUEST_SIZE - 1, 1) !=
			    NULL,
		    "old table kept");
	/* nregions larger than the payload */
	mt.nregions = 3;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_MEM_TABLE, &mt, 8 + 64, fds, 2), 1,
		  "short table refused");
	mt.nregions = 9;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_MEM_TABLE, &mt, 8 + 64, fds, 2), 1,
		  "9 regions refused");
	/* a smaller table replaces it */
	ASSERT_EQ(fe_mem_table(&t, 0x10000), 0, "second table");
	ASSERT_NULL(vhost_mem_gpa_to_host(&t.dev.mem, 0x10000, 1),
		    "old range gone");
out:
	tdev_cleanup(&t);
}

static void test_mem_dirty_log(void)
{
	struct vhost_user_log l = { .mmap_size = 64, .mmap_offset = 0 };
	struct vhost_user_msg m;
	int logfd = memfd_guest(4096);
	struct tdev t;
	uint8_t *bm = NULL;

	if (!tdev_setup(&t) || !ASSERT_GE(logfd, 0, "memfd"))
		goto out;
	bm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, logfd, 0);
	if (!ASSERT_TRUE(bm != MAP_FAILED, "mmap log")) {
		bm = NULL;
		goto out;
	}
	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_PROTOCOL_FEATURES,
			     BIT(VHOST_USER_PROTOCOL_F_LOG_SHMFD) |
				     BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK)),
		  0, "protocol features");
	/* with LOG_SHMFD, SET_LOG_BASE is answered */
	ASSERT_OK(fe_call(&t, VHOST_USER_SET_LOG_BASE, 0, &l, sizeof(l),
			  &logfd, 1),
		  "SET_LOG_BASE");
	if (ASSERT_OK(fe_reply(t.sock, &m), "SET_LOG_BASE reply"))
		ASSERT_EQ(m.hdr.request, VHOST_USER_SET_LOG_BASE, "request");
	if (!ASSERT_TRUE(vhost_mem_has_log(&t.dev.mem), "log mapped"))
		goto out;

	vhost_mem_log_write(&t.dev.mem, 4095, 2); /* pages 0 and 1 */
	ASSERT_EQ(bm[0], 0x03, "pages 0-1");
	vhost_mem_log_write(&t.dev.mem, 9 * 4096, 1); /* page 9 */
	ASSERT_EQ(bm[1], 0x02, "page 9");
	vhost_mem_log_write(&t.dev.mem, 64 * 8 * 4096, 4096); /* past the log */
	ASSERT_EQ(bm[64], 0, "nothing written past the log");
	vhost_mem_log_write(&t.dev.mem, UINT64_MAX - 10, 100); /* wraps */
	vhost_mem_log_write(&t.dev.mem, 16 * 4096, 0);
	ASSERT_EQ(bm[2], 0, "len 0 logs nothing");
	/* 63 pages from page 16: bytes 2..9, last bit 78 */
	vhost_mem_log_write(&t.dev.mem, 16 * 4096, 63 * 4096);
	ASSERT_EQ(bm[2], 0xff, "byte 2");
	ASSERT_EQ(bm[9], 0x7f, "byte 9");
out:
	if (bm)
		munmap(bm, 4096);
	if (logfd >= 0)
		close(logfd);
	tdev_cleanup(&t);
}

/* ======================================================================= */
/* virtqueue                                                                */
/* ======================================================================= */

static void test_vq_pop_push(void)
{
	struct seg out2[2] = { { BUF_GPA, 100, false },
			       { BUF_GPA + 0x1000, 200, false } };
	struct seg in1[1] = { { BUF_GPA + 0x2000, 1500, true } };
	struct seg mixed[3] = { { BUF_GPA + 0x3000, 12, false },
				{ BUF_GPA + 0x4000, 10, true },
				{ BUF_GPA + 0x5000, 20, true } };
	struct vhost_vq_used used[3];
	uint16_t h0, h1, h2;
	struct vqenv e;
	int n, i;

	if (!env_setup(&e, RING_NUM, F_RING, 0, false))
		goto out;
	memcpy(e.g + BUF_GPA, "hello", 5);
	h0 = drv_chain(&e.drv, out2, 2);
	h1 = drv_chain(&e.drv, in1, 1);
	h2 = drv_chain(&e.drv, mixed, 3);
	drv_publish(&e.drv, h0);
	drv_publish(&e.drv, h1);
	drv_publish(&e.drv, h2);
	ASSERT_EQ(vhost_vq_avail_count(&e.vq), 3, "avail count");

	n = vhost_vq_pop_burst(&e.vq, elems, 8);
	if (!ASSERT_EQ(n, 3, "popped 3"))
		goto out;
	ASSERT_EQ(elems[0].head, h0, "head 0");
	ASSERT_EQ(elems[0].out_num, 2, "2 readable");
	ASSERT_EQ(elems[0].in_num, 0, "0 writable");
	ASSERT_EQ(elems[0].out_len, 300, "out_len");
	ASSERT_MEMEQ(elems[0].iov[0].iov_base, "hello", 5, "contents");
	ASSERT_EQ(elems[1].in_num, 1, "1 writable");
	ASSERT_EQ(elems[1].in_len, 1500, "in_len");
	ASSERT_EQ(elems[2].out_num, 1, "mixed readable");
	ASSERT_EQ(elems[2].in_num, 2, "mixed writable");
	ASSERT_EQ(elems[2].gpa[1], BUF_GPA + 0x4000, "gpa kept");
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems + 3, 4), 0, "empty");

	memcpy(elems[1].iov[0].iov_base, "pong", 4);
	for (i = 0; i < 3; i++)
		used[i] = (struct vhost_vq_used){ elems[i].head, 10u * i };
	ASSERT_OK(vhost_vq_push_burst(&e.vq, used, 3), "push 3");
	ASSERT_EQ(e.drv.used->idx, 3, "used idx");
	ASSERT_EQ(e.drv.used->ring[1].id, h1, "used id");
	ASSERT_EQ(e.drv.used->ring[2].len, 20, "used len");
	ASSERT_MEMEQ(e.g + BUF_GPA + 0x2000, "pong", 4, "written to guest");

	used[0] = (struct vhost_vq_used){ RING_NUM, 0 };
	ASSERT_EQ(vhost_vq_push_burst(&e.vq, used, 1), -EINVAL,
		  "id out of range");
	ASSERT_EQ(e.drv.used->idx, 3, "nothing published");
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "not broken");

	/* rewind: the chain comes back */
	drv_publish(&e.drv, h1);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 1), 1, "pop");
	vhost_vq_rewind(&e.vq, 1);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 1), 1, "pop again");
	ASSERT_EQ(elems[0].head, h1, "same chain");
out:
	env_cleanup(&e);
}

/* EVENT_IDX: notifications across the u16 wrap of the indices. */
static void test_vq_event_idx_wrap(void)
{
	struct seg s = { BUF_GPA, 64, true };
	struct vqenv e;
	uint16_t head;
	int i;

	if (!env_setup(&e, RING_NUM, F_RING, 65533, false))
		goto out;
	ASSERT_EQ(e.vq.last_avail_idx, 65533, "base");
	ASSERT_EQ(drv_avail_event(&e.drv), 65533, "avail_event at start");
	head = drv_chain(&e.drv, &s, 1);
	for (i = 0; i < 6; i++)
		drv_publish(&e.drv, head);
	ASSERT_EQ(e.drv.avail->idx, 3, "avail idx wrapped");
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 6, "pop across wrap"))
		goto out;
	ASSERT_EQ(e.vq.last_avail_idx, 3, "last_avail wrapped");

	/* first notification is always sent */
	ASSERT_OK(vhost_vq_push(&e.vq, head, 1), "push"); /* used 65534 */
	ASSERT_EQ(vhost_vq_notify(&e.vq), 1, "first: sent");
	/* guest: interrupt me after entry 65533, which was signalled above */
	drv_set_used_event(&e.drv, 65533);
	ASSERT_OK(vhost_vq_push(&e.vq, head, 1), "push"); /* used 65535 */
	ASSERT_EQ(vhost_vq_notify(&e.vq), 0, "event already passed: suppressed");
	/* used_event 65535 is crossed by 65535 -> 0 */
	drv_set_used_event(&e.drv, 65535);
	ASSERT_OK(vhost_vq_push(&e.vq, head, 1), "push"); /* used 0 */
	ASSERT_EQ(vhost_vq_notify(&e.vq), 1, "crossed at the wrap: sent");
	/* used_event ahead: 2 pushes, the second crosses 1 */
	drv_set_used_event(&e.drv, 1);
	ASSERT_OK(vhost_vq_push(&e.vq, head, 1), "push"); /* used 1 */
	ASSERT_EQ(vhost_vq_notify(&e.vq), 0, "not yet");
	ASSERT_OK(vhost_vq_push(&e.vq, head, 1), "push"); /* used 2 */
	ASSERT_EQ(vhost_vq_notify(&e.vq), 1, "crossed");
	ASSERT_EQ(e.drv.used->idx, 2, "used idx wrapped");
	ASSERT_EQ(efd_read(e.call_fd), 3, "3 calls on the eventfd");
	ASSERT_EQ(e.vq.stats->notify_sent, 3, "notify_sent");
	ASSERT_EQ(e.vq.stats->notify_suppressed, 2, "notify_suppressed");

	/* kick suppression: disable leaves avail_event, enable re-checks */
	vhost_vq_notify_disable(&e.vq);
	ASSERT_FALSE(vhost_vq_notify_enable(&e.vq), "nothing new");
	ASSERT_EQ(drv_avail_event(&e.drv), 3, "avail_event = last_avail");
	vhost_vq_notify_disable(&e.vq);
	drv_publish(&e.drv, head); /* the guest adds without kicking */
	ASSERT_TRUE(vhost_vq_notify_enable(&e.vq), "lost wakeup caught");
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "drained");
out:
	env_cleanup(&e);
}

/* Without EVENT_IDX: flags on both sides. */
static void test_vq_flags_notify(void)
{
	struct seg s = { BUF_GPA, 64, true };
	struct vqenv e;
	uint16_t head;

	if (!env_setup(&e, RING_NUM, BIT(VIRTIO_F_VERSION_1), 0, false))
		goto out;
	head = drv_chain(&e.drv, &s, 1);
	drv_publish(&e.drv, head);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "pop");
	ASSERT_OK(vhost_vq_push(&e.vq, head, 0), "push");
	ASSERT_EQ(vhost_vq_notify(&e.vq), 1, "interrupts on");
	e.drv.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	ASSERT_EQ(vhost_vq_notify(&e.vq), 0, "NO_INTERRUPT");
	vhost_vq_notify_disable(&e.vq);
	ASSERT_EQ(e.drv.used->flags, VRING_USED_F_NO_NOTIFY, "NO_NOTIFY set");
	ASSERT_FALSE(vhost_vq_notify_enable(&e.vq), "nothing new");
	ASSERT_EQ(e.drv.used->flags, 0, "NO_NOTIFY cleared");
out:
	env_cleanup(&e);
}

static void test_vq_indirect(void)
{
	struct vring_desc *it;
	struct vqenv e;
	uint64_t table = BUF_GPA + 0x8000;
	struct seg s = { BUF_GPA, 8, false };
	uint16_t head;

	if (!env_setup(&e, RING_NUM, F_RING, 0, false))
		goto out;
	it = (struct vring_desc *)(e.g + table);
	it[0] = (struct vring_desc){ BUF_GPA, 10, VRING_DESC_F_NEXT, 1 };
	it[1] = (struct vring_desc){ BUF_GPA + 0x100, 20, VRING_DESC_F_NEXT, 2 };
	it[2] = (struct vring_desc){ BUF_GPA + 0x200, 30, VRING_DESC_F_WRITE, 0 };
	/* a direct descriptor, then the indirect one (virtio 1.2 2.7.5.3.2) */
	e.drv.desc[0] = (struct vring_desc){ BUF_GPA + 0x300, 4,
					     VRING_DESC_F_NEXT, 1 };
	e.drv.desc[1] = (struct vring_desc){ table, 3 * 16,
					     VRING_DESC_F_INDIRECT |
						     VRING_DESC_F_WRITE,
					     0 };
	drv_publish(&e.drv, 0);
	/* indirect only */
	e.drv.desc[2] = (struct vring_desc){ table, 3 * 16,
					     VRING_DESC_F_INDIRECT, 0 };
	drv_publish(&e.drv, 2);
	e.drv.next_desc = 3;
	head = drv_chain(&e.drv, &s, 1);
	drv_publish(&e.drv, head);

	if (!ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 3, "popped"))
		goto out;
	ASSERT_EQ(elems[0].out_num, 3, "direct + 2 indirect readable");
	ASSERT_EQ(elems[0].in_num, 1, "1 indirect writable");
	ASSERT_EQ(elems[0].out_len, 34, "out_len");
	ASSERT_EQ(elems[0].in_len, 30, "in_len");
	ASSERT_EQ(elems[1].out_num, 2, "indirect readable");
	ASSERT_EQ(elems[1].in_num, 1, "indirect writable");
	ASSERT_EQ(elems[1].head, 2, "head");
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "not broken");
out:
	env_cleanup(&e);
}

/* An indirect table and a buffer across two adjacent regions. */
static void test_vq_span_regions(void)
{
	const uint64_t edge = GUEST_SIZE / 2;
	uint64_t table = edge - 16; /* entry 0 before, entry 1 after */
	struct vring_desc *it;
	struct vqenv e;

	if (!env_setup(&e, RING_NUM, F_RING, 0, true))
		goto out;
	/* the buffer spans the edge too: fill it first, then the table */
	memset(e.g + edge - 100, 'x', 100);
	memset(e.g + edge, 'y', 100);
	it = (struct vring_desc *)(e.g + table);
	it[0] = (struct vring_desc){ edge - 100, 200, VRING_DESC_F_NEXT, 1 };
	it[1] = (struct vring_desc){ BUF_GPA, 50, VRING_DESC_F_WRITE, 0 };
	e.drv.desc[0] = (struct vring_desc){ table, 32, VRING_DESC_F_INDIRECT,
					     0 };
	drv_publish(&e.drv, 0);
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 1), 1, "popped"))
		goto out;
	ASSERT_EQ(elems[0].out_num, 2, "buffer split at the edge");
	ASSERT_EQ(elems[0].iov[0].iov_len, 100, "first part");
	ASSERT_EQ(elems[0].iov[1].iov_len, 100, "second part");
	ASSERT_EQ(((uint8_t *)elems[0].iov[0].iov_base)[0], 'x', "contents");
	ASSERT_EQ(((uint8_t *)elems[0].iov[1].iov_base)[16], 'y', "contents");
	ASSERT_EQ(elems[0].in_num, 1, "writable");
out:
	env_cleanup(&e);
}

/* Hostile chains: each breaks only its own ring, once, with a reason. */
struct hostile {
	const char *name;
	const char *reason; /* substring of the broken reason */
	void (*prepare)(struct vqenv *e);
};

static void h_desc_oob(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ GUEST_SIZE - 8, 16, 0, 0 };
	drv_publish(&e->drv, 0);
}

static void h_desc_far(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ 0xfffffffffffff000ULL, 0x2000,
					      VRING_DESC_F_WRITE, 0 };
	drv_publish(&e->drv, 0);
}

static void h_loop(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ BUF_GPA, 1, VRING_DESC_F_NEXT, 1 };
	e->drv.desc[1] = (struct vring_desc){ BUF_GPA, 1, VRING_DESC_F_NEXT, 0 };
	drv_publish(&e->drv, 0);
}

static void h_next_oob(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ BUF_GPA, 1, VRING_DESC_F_NEXT,
					      RING_NUM };
	drv_publish(&e->drv, 0);
}

static void h_indirect_oob(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ GUEST_SIZE - 16, 32,
					      VRING_DESC_F_INDIRECT, 0 };
	drv_publish(&e->drv, 0);
}

static void h_indirect_len(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ BUF_GPA, 24,
					      VRING_DESC_F_INDIRECT, 0 };
	drv_publish(&e->drv, 0);
}

static void h_indirect_big(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ BUF_GPA, (RING_NUM + 1) * 16,
					      VRING_DESC_F_INDIRECT, 0 };
	drv_publish(&e->drv, 0);
}

static void h_indirect_nested(struct vqenv *e)
{
	struct vring_desc *it = (struct vring_desc *)(e->g + BUF_GPA);

	it[0] = (struct vring_desc){ BUF_GPA, 32, VRING_DESC_F_INDIRECT, 0 };
	e->drv.desc[0] = (struct vring_desc){ BUF_GPA, 32,
					      VRING_DESC_F_INDIRECT, 0 };
	drv_publish(&e->drv, 0);
}

static void h_indirect_loop(struct vqenv *e)
{
	struct vring_desc *it = (struct vring_desc *)(e->g + BUF_GPA);

	it[0] = (struct vring_desc){ BUF_GPA + 0x100, 1, VRING_DESC_F_NEXT, 1 };
	it[1] = (struct vring_desc){ BUF_GPA + 0x100, 1, VRING_DESC_F_NEXT, 0 };
	e->drv.desc[0] = (struct vring_desc){ BUF_GPA, 32,
					      VRING_DESC_F_INDIRECT, 0 };
	drv_publish(&e->drv, 0);
}

static void h_indirect_next(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ BUF_GPA, 32,
					      VRING_DESC_F_INDIRECT |
						      VRING_DESC_F_NEXT,
					      1 };
	drv_publish(&e->drv, 0);
}

static void h_avail_jump(struct vqenv *e)
{
	e->drv.avail->idx = RING_NUM + 1;
}

static void h_head_oob(struct vqenv *e)
{
	e->drv.avail->ring[0] = RING_NUM + 5;
	e->drv.avail->idx = 1;
}

static void h_out_after_in(struct vqenv *e)
{
	e->drv.desc[0] = (struct vring_desc){ BUF_GPA, 1,
					      VRING_DESC_F_WRITE |
						      VRING_DESC_F_NEXT,
					      1 };
	e->drv.desc[1] = (struct vring_desc){ BUF_GPA, 1, 0, 0 };
	drv_publish(&e->drv, 0);
}

static const struct hostile hostiles[] = {
	{ "desc_outside_memory", "outside guest memory", h_desc_oob },
	{ "desc_far_away", "outside guest memory", h_desc_far },
	{ "desc_loop", "loop", h_loop },
	{ "desc_next_out_of_range", "out of a 256 entry ring", h_next_oob },
	{ "indirect_outside_memory", "indirect table", h_indirect_oob },
	{ "indirect_len_not_16", "indirect table of 24 bytes", h_indirect_len },
	{ "indirect_too_big", "indirect table of 4112 bytes", h_indirect_big },
	{ "indirect_nested", "nested indirect", h_indirect_nested },
	{ "indirect_loop", "loop", h_indirect_loop },
	{ "indirect_with_next", "INDIRECT and NEXT", h_indirect_next },
	{ "avail_idx_jump", "more than the ring size", h_avail_jump },
	{ "head_out_of_range", "head 261", h_head_oob },
	{ "readable_after_writable", "readable descriptor after",
	  h_out_after_in },
};

static void test_vq_hostile(void)
{
	struct seg s = { BUF_GPA, 64, true };
	unsigned int i;

	for (i = 0; i < sizeof(hostiles) / sizeof(hostiles[0]); i++) {
		const struct hostile *h = &hostiles[i];
		struct vqenv e, good;
		char what[128];

		snprintf(what, sizeof(what), "%s", h->name);
		logs_reset();
		if (!env_setup(&e, RING_NUM, F_RING, 0, false)) {
			env_cleanup(&e);
			return;
		}
		h->prepare(&e);
		ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), -EIO, what);
		ASSERT_TRUE(vhost_vq_broken(&e.vq), what);
		if (!ASSERT_TRUE(strstr(e.vq.broken_reason, h->reason) != NULL,
				 what))
			fprintf(stderr, "  %s: reason \"%s\"\n", h->name,
				e.vq.broken_reason);
		/* stays broken, logged once, the frontend told */
		ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), -EIO, what);
		ASSERT_EQ(vhost_vq_push(&e.vq, 0, 0), -EIO, what);
		ASSERT_EQ(vhost_vq_avail_count(&e.vq), 0, what);
		ASSERT_EQ(logs.broken, 1, what);
		ASSERT_EQ(efd_read(e.err_fd), 1, what);
		ASSERT_EQ(e.drv.used->idx, 0, what);
		env_cleanup(&e);

		/* another ring goes on */
		if (!env_setup(&good, RING_NUM, F_RING, 0, false)) {
			env_cleanup(&good);
			return;
		}
		drv_publish(&good.drv, drv_chain(&good.drv, &s, 1));
		ASSERT_EQ(vhost_vq_pop_burst(&good.vq, elems, 8), 1, what);
		env_cleanup(&good);
	}
}

/* Good chains before a bad one are returned; the ring breaks after them. */
static void test_vq_partial_burst(void)
{
	struct seg s = { BUF_GPA, 64, true };
	struct vqenv e;

	if (!env_setup(&e, RING_NUM, F_RING, 0, false))
		goto out;
	drv_publish(&e.drv, drv_chain(&e.drv, &s, 1));
	e.drv.desc[5] = (struct vring_desc){ GUEST_SIZE, 1, 0, 0 };
	drv_publish(&e.drv, 5);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "the good one");
	ASSERT_TRUE(vhost_vq_broken(&e.vq), "broken");
	ASSERT_EQ(e.vq.stats->drops[VNET_DROP_BAD_DESC], 1, "counted");
out:
	env_cleanup(&e);
}

/* More segments than an element holds: an error element, not a break. */
static void test_vq_too_many_segments(void)
{
	struct seg s[VHOST_VQ_MAX_IOV + 6];
	struct vqenv e;
	unsigned int i;
	uint16_t head;

	if (!env_setup(&e, RING_NUM, F_RING, 0, false))
		goto out;
	for (i = 0; i < VHOST_VQ_MAX_IOV + 6; i++)
		s[i] = (struct seg){ BUF_GPA + i * 16, 16, false };
	head = drv_chain(&e.drv, s, VHOST_VQ_MAX_IOV + 6);
	drv_publish(&e.drv, head);
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 1), 1, "popped"))
		goto out;
	ASSERT_EQ(elems[0].err, -E2BIG, "E2BIG");
	ASSERT_EQ(elems[0].out_num, 0, "no iovecs");
	ASSERT_EQ(elems[0].head, head, "head to give back");
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "not broken");
	ASSERT_OK(vhost_vq_push(&e.vq, head, 0), "pushed back");
	ASSERT_EQ(e.vq.stats->drops[VNET_DROP_BAD_DESC], 1, "counted");
out:
	env_cleanup(&e);
}

/* Dirty logging of the used ring and of written buffers. */
static void test_vq_dirty_log(void)
{
	struct seg s = { BUF_GPA + 4096 * 3 + 100, 5000, true }; /* pages 19-20 */
	int logfd = memfd_guest(4096);
	uint8_t *bm = NULL;
	struct vqenv e;
	uint16_t head;

	if (!ASSERT_GE(logfd, 0, "memfd"))
		return;
	bm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, logfd, 0);
	if (!ASSERT_TRUE(bm != MAP_FAILED, "mmap log")) {
		bm = NULL;
		goto out;
	}
	/* env_setup starts the ring: give it the log first */
	memset(&e, 0, sizeof(e));
	e.memfd = e.call_fd = e.err_fd = -1;
	if (!env_setup(&e, RING_NUM, F_RING, 0, false))
		goto out;
	if (!ASSERT_OK(vhost_mem_set_log(&e.mem, dup(logfd), 64, 0), "log"))
		goto out;
	e.vq.addr_flags = 1u << VHOST_VRING_F_LOG;
	vhost_vq_stop(&e.vq);
	if (!ASSERT_OK(vhost_vq_start(&e.vq, F_RING | BIT(VHOST_F_LOG_ALL)),
		       "restart with LOG_ALL"))
		goto out;
	ASSERT_TRUE(e.vq.log_used, "used ring logged");
	memset(bm, 0, 64);
	head = drv_chain(&e.drv, &s, 1);
	drv_publish(&e.drv, head);
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 1), 1, "pop"))
		goto out;
	vhost_vq_log_write(&e.vq, &elems[0], 4000); /* 3696 + 304: 19, 20 */
	ASSERT_EQ(bm[2], 0x18, "buffer pages 19-20");
	ASSERT_OK(vhost_vq_push(&e.vq, head, 4000), "push");
	ASSERT_EQ(bm[0], 0x10, "used ring page 4");
out:
	if (bm)
		munmap(bm, 4096);
	close(logfd);
	env_cleanup(&e);
}

/* A broken ring through the protocol: others run, GET_VRING_BASE resets. */
static void test_vq_broken_via_protocol(void)
{
	struct vhost_user_vring_state st = { .index = 0 };
	struct vhost_user_msg m;
	int call = -1, kick = -1;
	struct vhost_vq *vq;
	struct drv d;
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	if (!fe_setup_ring(&t, 0, F_RING, &d, &call, &kick))
		goto out;
	vq = vhost_dev_vq(&t.dev, 0);
	d.avail->idx = 1000; /* jump */
	ASSERT_EQ(vhost_vq_pop_burst(vq, elems, 8), -EIO, "broken");
	ASSERT_TRUE(t.running[0], "the device still holds it until stopped");
	ASSERT_OK(fe_call(&t, VHOST_USER_GET_VRING_BASE, 0, &st, sizeof(st),
			  NULL, 0),
		  "GET_VRING_BASE");
	if (ASSERT_OK(fe_reply(t.sock, &m), "reply"))
		ASSERT_EQ(m.payload.state.num, 0, "base");
	ASSERT_FALSE(vhost_vq_broken(vq), "reset by the stop");
	d.avail->idx = 0;
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_KICK, 0, kick), 0,
		  "restart");
	ASSERT_TRUE(t.running[0], "running again");
	ASSERT_EQ(vhost_vq_pop_burst(vq, elems, 8), 0, "usable");
out:
	if (call >= 0)
		close(call);
	if (kick >= 0)
		close(kick);
	tdev_cleanup(&t);
}

/* Ring addresses that are not guest memory: not started, not a crash. */
static void test_vq_bad_ring_addr(void)
{
	struct vhost_user_vring_addr a = {
		.index = 0,
		.desc_user_addr = UVA_BASE + GUEST_SIZE - 16,
		.used_user_addr = UVA_BASE + USED_GPA,
		.avail_user_addr = UVA_BASE + AVAIL_GPA,
	};
	int call = -1, kick = -1;
	struct drv d;
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	if (!fe_setup_ring(&t, 0, F_RING, &d, &call, &kick))
		goto out;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_ADDR, &a, sizeof(a), NULL,
			 0),
		  0, "accepted, checked at start");
	ASSERT_FALSE(t.running[0], "not started");
	a.desc_user_addr = UVA_BASE + DESC_GPA + 8; /* misaligned */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_ADDR, &a, sizeof(a), NULL,
			 0),
		  0, "misaligned");
	ASSERT_FALSE(t.running[0], "not started");
	ASSERT_EQ(fe_ack_state(&t, VHOST_USER_SET_VRING_NUM, 0, 100), 1,
		  "size not a power of 2");
	ASSERT_EQ(fe_ack_state(&t, VHOST_USER_SET_VRING_NUM, 7, 256), 1,
		  "index out of range");
	a.desc_user_addr = UVA_BASE + DESC_GPA;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_ADDR, &a, sizeof(a), NULL,
			 0),
		  0, "good address");
	ASSERT_TRUE(t.running[0], "started");
out:
	if (call >= 0)
		close(call);
	if (kick >= 0)
		close(kick);
	tdev_cleanup(&t);
}

/*
 * The quiescing contract with a real queue thread: the memory table is
 * replaced again and again while the thread pops and pushes.  If a thread
 * touched guest memory across a change, it would fault on an unmapped
 * region (or ASan would see it).
 */
struct qthread {
	pthread_t tid;
	struct vhost_vq *vq;
	int stop;
	bool started;
	unsigned int starts;
};

static struct qthread qthreads[2];

static void *qthread_fn(void *arg)
{
	struct qthread *q = arg;
	struct vhost_vq_elem *el = calloc(16, sizeof(*el));
	struct vhost_vq_used used[16];
	int n, i;

	if (!el)
		return NULL;
	while (!__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE)) {
		n = vhost_vq_pop_burst(q->vq, el, 16);
		if (n <= 0) {
			usleep(50);
			continue;
		}
		for (i = 0; i < n; i++) {
			/* touch the buffer as a device would */
			if (el[i].in_num)
				memset(el[i].iov[el[i].out_num].iov_base, 0xab,
				       el[i].iov[el[i].out_num].iov_len);
			used[i] = (struct vhost_vq_used){ el[i].head, 1 };
		}
		vhost_vq_push_burst(q->vq, used, (unsigned int)n);
		vhost_vq_notify(q->vq);
	}
	free(el);
	return NULL;
}

static int th_queue_start(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct qthread *q = &qthreads[vq->index];

	(void)dev;
	q->vq = vq;
	q->stop = 0;
	if (pthread_create(&q->tid, NULL, qthread_fn, q))
		return -EAGAIN;
	q->started = true;
	q->starts++;
	return 0;
}

/* synchronous: returns once the thread no longer touches the ring */
static void th_queue_stop(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct qthread *q = &qthreads[vq->index];

	(void)dev;
	if (!q->started)
		return;
	__atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
	pthread_join(q->tid, NULL);
	q->started = false;
}

static const struct vhost_dev_ops th_ops = {
	.get_features = t_get_features,
	.queue_start = th_queue_start,
	.queue_stop = th_queue_stop,
};

static void test_dev_quiesce_threaded(void)
{
	struct seg sg = { BUF_GPA, 2048, true };
	int call = -1, kick = -1, round, sv[2];
	unsigned int published = 0;
	struct drv d;
	struct tdev t;
	uint16_t head;

	if (!tdev_setup(&t))
		goto out;
	/* the same device, with threads behind it */
	vhost_dev_cleanup(&t.dev);
	close(t.sock);
	t.sock = -1;
	memset(qthreads, 0, sizeof(qthreads));
	if (!ASSERT_OK(vhost_dev_init(&t.dev, "threaded", 2, &th_ops, &t),
		       "init") ||
	    !ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		       "socketpair"))
		goto out;
	t.sock = sv[0];
	if (!ASSERT_OK(vhost_dev_attach(&t.dev, sv[1]), "attach"))
		goto out;
	if (!fe_setup_ring(&t, 0, F_RING, &d, &call, &kick))
		goto out;
	if (!ASSERT_TRUE(qthreads[0].started, "thread running"))
		goto out;
	head = drv_chain(&d, &sg, 1);
	for (round = 0; round < 40; round++) {
		int i, spin;

		for (i = 0; i < 50; i++) {
			drv_publish(&d, head);
			published++;
		}
		/* the whole table again: old mappings go away */
		if (!ASSERT_EQ(fe_mem_table(&t, GUEST_SIZE), 0, "SET_MEM_TABLE"))
			break;
		ASSERT_TRUE(qthreads[0].started, "restarted after the change");
		for (spin = 0; spin < 20000; spin++) {
			if (__atomic_load_n(&d.used->idx, __ATOMIC_ACQUIRE) ==
			    (uint16_t)published)
				break;
			usleep(50);
		}
		if (!ASSERT_EQ(d.used->idx, (uint16_t)published, "all used"))
			break;
	}
	ASSERT_FALSE(vhost_vq_broken(vhost_dev_vq(&t.dev, 0)), "not broken");
	/* one stop/start per table, plus the SET_VRING_CALL after the kick */
	ASSERT_GE(qthreads[0].starts, 41, "restarted around every change");
out:
	/* stops the thread before unmapping */
	vhost_dev_disconnect(&t.dev);
	ASSERT_FALSE(qthreads[0].started, "thread stopped");
	if (t.g)
		ASSERT_EQ(t.g[BUF_GPA], 0xab, "written by the thread");
	if (call >= 0)
		close(call);
	if (kick >= 0)
		close(kick);
	tdev_cleanup(&t);
}

/* ======================================================================= */
/* event loop                                                               */
/* ======================================================================= */

static char tmpdir[64];

static bool tmpdir_make(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vhost-unit.XXXXXX");
	return ASSERT_TRUE(mkdtemp(tmpdir) != NULL, "mkdtemp");
}

static int unix_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Run the loop until FD has something to read (or ~2 s). */
static bool pump_until_readable(struct vhost_server *srv, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int i;

	for (i = 0; i < 200; i++) {
		vhost_server_poll(srv, 10);
		if (poll(&p, 1, 0) == 1)
			return true;
	}
	return false;
}

static bool pump_until(struct vhost_server *srv, bool (*cond)(void *),
		       void *arg)
{
	int i;

	for (i = 0; i < 300 && !cond(arg); i++)
		vhost_server_poll(srv, 10);
	return cond(arg);
}

static bool dev_is_connected(void *arg)
{
	return vhost_dev_connected(arg);
}

static bool dev_is_disconnected(void *arg)
{
	return !vhost_dev_connected(arg);
}

static void test_server_listen(void)
{
	struct vhost_user_hdr h = { VHOST_USER_GET_QUEUE_NUM,
				    VHOST_USER_VERSION, 0 };
	struct vhost_server srv = { .epfd = -1, .stop_fd = -1 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vhost_user_msg m;
	char path[sizeof(sa.sun_path)], buf[8];
	int c1 = -1, c2 = -1, stale;
	struct stat st;
	struct tdev t;

	memset(&t, 0, sizeof(t));
	t.sock = t.memfd = -1;
	t.offer = T_OFFER;
	if (!tmpdir_make())
		return;
	snprintf(path, sizeof(path), "%s/port0.sock", tmpdir);
	/* a stale socket: bound, then its process gone */
	stale = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (!ASSERT_OK(bind(stale, (struct sockaddr *)&sa, sizeof(sa)),
		       "stale bind"))
		goto out;
	close(stale);

	if (!ASSERT_OK(vhost_dev_init(&t.dev, path, 2, &t_ops, &t), "init") ||
	    !ASSERT_OK(vhost_server_init(&srv), "server init"))
		goto out;
	if (!ASSERT_OK(vhost_server_add_port(&srv, &t.dev,
					     &(struct vhost_port_cfg){
						     .path = path,
						     .mode = 0600 }),
		       "listen over the stale socket"))
		goto out;
	if (ASSERT_OK(stat(path, &st), "stat"))
		ASSERT_EQ(st.st_mode & 0777, 0600, "mode");
	/* a live one is not taken over */
	{
		struct vhost_server srv2;
		struct vhost_dev dev2;

		if (ASSERT_OK(vhost_server_init(&srv2), "server 2") &&
		    ASSERT_OK(vhost_dev_init(&dev2, path, 2, &t_ops, &t),
			      "dev 2")) {
			ASSERT_EQ(vhost_server_add_port(&srv2, &dev2,
						       &(struct vhost_port_cfg){
							       .path = path }),
				  -EADDRINUSE, "live socket kept");
			vhost_dev_cleanup(&dev2);
		}
		vhost_server_cleanup(&srv2);
	}
	/*
	 * That check connected to see whether anyone listens: our port took
	 * it as a frontend that left at once.  Let it see that.
	 */
	ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev), "probe");
	ASSERT_TRUE(pump_until(&srv, dev_is_disconnected, &t.dev),
		    "probe handled");
	t.disconnects = 0;

	c1 = unix_connect(path);
	if (!ASSERT_GE(c1, 0, "connect"))
		goto out;
	if (!ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev),
			 "accepted"))
		goto out;
	ASSERT_OK(fe_send_raw(c1, &h, sizeof(h), NULL, 0), "send");
	if (ASSERT_TRUE(pump_until_readable(&srv, c1), "reply") &&
	    ASSERT_OK(fe_reply(c1, &m), "read reply"))
		ASSERT_EQ(m.payload.u64, 2, "GET_QUEUE_NUM over the socket");

	/* one frontend per port: the second gets EOF */
	c2 = unix_connect(path);
	if (ASSERT_GE(c2, 0, "connect 2") &&
	    ASSERT_TRUE(pump_until_readable(&srv, c2), "refused"))
		ASSERT_EQ(read(c2, buf, sizeof(buf)), 0, "EOF");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "first still connected");

	/* a protocol violation drops the connection, not the port */
	h.size = 100000;
	ASSERT_OK(fe_send_raw(c1, &h, sizeof(h), NULL, 0), "oversized");
	ASSERT_TRUE(pump_until(&srv, dev_is_disconnected, &t.dev), "dropped");
	ASSERT_EQ(t.disconnects, 1, "disconnected callback");
	close(c1);
	h.size = 0;
	c1 = unix_connect(path);
	if (ASSERT_GE(c1, 0, "reconnect") &&
	    ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev),
			"accepted again")) {
		ASSERT_OK(fe_send_raw(c1, &h, sizeof(h), NULL, 0), "send");
		ASSERT_TRUE(pump_until_readable(&srv, c1), "answers again");
	}
out:
	if (c1 >= 0)
		close(c1);
	if (c2 >= 0)
		close(c2);
	vhost_server_cleanup(&srv);
	vhost_dev_cleanup(&t.dev);
	ASSERT_EQ(access(path, F_OK), -1, "socket removed");
	rmdir(tmpdir);
}

/*
 * The socket's mode without a path-based chmod.  The library's chmod()
 * and bind() calls land here (these definitions take precedence over the
 * C library's in this program).  While armed, a chmod() of the socket path
 * first swaps a symlink to a victim file in at the path, as another
 * process could between bind() and chmod(); bind() records the mode the
 * socket file has the moment it exists.
 */
static struct {
	bool armed;
	const char *path, *victim;
	unsigned int chmods;
	mode_t bound_mode;
} race;

int chmod(const char *path, mode_t mode)
{
	if (race.armed && !strcmp(path, race.path)) {
		char tmp[128];

		race.chmods++;
		snprintf(tmp, sizeof(tmp), "%s.swap", race.path);
		if (!symlink(race.victim, tmp))
			rename(tmp, race.path);
	}
	return (int)syscall(SYS_fchmodat, AT_FDCWD, path, mode);
}

int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	const struct sockaddr_un *su = (const struct sockaddr_un *)sa;
	struct stat st;
	int ret;

	ret = (int)syscall(SYS_bind, fd, sa, len);
	if (!ret && race.armed && sa->sa_family == AF_UNIX &&
	    !strcmp(su->sun_path, race.path) && !lstat(race.path, &st))
		race.bound_mode = st.st_mode & 07777;
	return ret;
}

static void test_server_mode_race(void)
{
	struct vhost_server srv = { .epfd = -1, .stop_fd = -1 };
	char path[108], victim[108];
	struct stat st;
	struct tdev t;
	mode_t old_umask;
	int fd;

	memset(&t, 0, sizeof(t));
	t.sock = t.memfd = -1;
	t.offer = T_OFFER;
	if (!tmpdir_make())
		return;
	snprintf(path, sizeof(path), "%s/port.sock", tmpdir);
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	fd = open(victim, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (!ASSERT_GE(fd, 0, "victim file"))
		goto out;
	fchmod(fd, 0644);
	close(fd);
	race.path = path;
	race.victim = victim;
	race.armed = true;
	/* a permissive umask: only the library's own mode protects it */
	old_umask = umask(0);
	if (ASSERT_OK(vhost_dev_init(&t.dev, path, 2, &t_ops, &t), "init") &&
	    ASSERT_OK(vhost_server_init(&srv), "server init"))
		vhost_server_add_port(&srv, &t.dev,
				      &(struct vhost_port_cfg){ .path = path,
								.mode = 0600 });
	umask(old_umask);
	race.armed = false;
	ASSERT_EQ(race.chmods, 0, "no chmod() of the socket path");
	ASSERT_EQ(race.bound_mode, 0600, "mode of the socket when bind() made it");
	if (ASSERT_OK(stat(victim, &st), "stat victim"))
		ASSERT_EQ(st.st_mode & 07777, 0644, "mode of a file swapped in unchanged");
	if (ASSERT_OK(lstat(path, &st), "lstat socket")) {
		ASSERT_TRUE(S_ISSOCK(st.st_mode), "the socket is still there");
		ASSERT_EQ(st.st_mode & 07777, 0600, "socket mode");
	}
out:
	vhost_server_cleanup(&srv);
	vhost_dev_cleanup(&t.dev);
	unlink(path);
	unlink(victim);
	rmdir(tmpdir);
}

static void test_server_client_reconnect(void)
{
	struct vhost_server srv = { .epfd = -1, .stop_fd = -1 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd p;
	int lfd = -1, c = -1;
	char path[sizeof(sa.sun_path)];
	struct tdev t;

	memset(&t, 0, sizeof(t));
	t.sock = t.memfd = -1;
	t.offer = T_OFFER;
	if (!tmpdir_make())
		return;
	snprintf(path, sizeof(path), "%s/qemu.sock", tmpdir);
	if (!ASSERT_OK(vhost_dev_init(&t.dev, path, 2, &t_ops, &t), "init") ||
	    !ASSERT_OK(vhost_server_init(&srv), "server init"))
		goto out;
	/* the frontend is not there yet: retries in the background */
	if (!ASSERT_OK(vhost_server_add_port(&srv, &t.dev,
					     &(struct vhost_port_cfg){
						     .path = path,
						     .client = true,
						     .backoff_min_ms = 5,
						     .backoff_max_ms = 20 }),
		       "client port"))
		goto out;
	ASSERT_FALSE(vhost_dev_connected(&t.dev), "nobody to connect to");
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (!ASSERT_OK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), "bind") ||
	    !ASSERT_OK(listen(lfd, 4), "listen"))
		goto out;
	if (!ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev),
			 "connected by a retry"))
		goto out;
	c = accept(lfd, NULL, NULL);
	if (!ASSERT_GE(c, 0, "accept"))
		goto out;
	/* the frontend goes away: reset, and back to retrying */
	close(c);
	c = -1;
	ASSERT_TRUE(pump_until(&srv, dev_is_disconnected, &t.dev), "dropped");
	ASSERT_EQ(t.disconnects, 1, "disconnected callback");
	if (!ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev),
			 "reconnected"))
		goto out;
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	if (ASSERT_EQ(poll(&p, 1, 1000), 1, "pending connection"))
		c = accept(lfd, NULL, NULL);
	ASSERT_GE(c, 0, "accept again");
out:
	if (c >= 0)
		close(c);
	if (lfd >= 0)
		close(lfd);
	vhost_server_cleanup(&srv);
	vhost_dev_cleanup(&t.dev);
	unlink(path);
	rmdir(tmpdir);
}

/* ======================================================================= */

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "vhost_proto/features", test_proto_features },
	{ "vhost_proto/send_rarp", test_proto_rarp },
	{ "vhost_proto/ring_lifecycle", test_proto_ring_lifecycle },
	{ "vhost_proto/enable_at_kick_without_protocol_features",
	  test_proto_legacy_enable },
	{ "vhost_proto/vring_nofd_polling", test_proto_vring_nofd },
	{ "vhost_proto/wrong_fd_count", test_proto_wrong_fd_count },
	{ "vhost_proto/ring_fd_own", test_proto_ring_fd_own },
	{ "vhost_proto/unknown_request", test_proto_unknown_request },
	{ "vhost_proto/truncated_message", test_proto_truncated },
	{ "vhost_proto/bad_header", test_proto_bad_header },
	{ "vhost_proto/too_many_fds", test_proto_too_many_fds },
	{ "vhost_proto/partial_reads", test_proto_partial_reads },
	{ "vhost_proto/disconnect_reset", test_proto_disconnect_reset },
	{ "vhost_mem/add_remove_translate", test_mem_add_remove },
	{ "vhost_mem/region_validation", test_mem_validation },
	{ "vhost_mem/set_table", test_mem_set_table },
	{ "vhost_mem/dirty_log", test_mem_dirty_log },
	{ "vhost_vq/pop_push", test_vq_pop_push },
	{ "vhost_vq/event_idx_wrap", test_vq_event_idx_wrap },
	{ "vhost_vq/flags_notify", test_vq_flags_notify },
	{ "vhost_vq/indirect", test_vq_indirect },
	{ "vhost_vq/span_regions", test_vq_span_regions },
	{ "vhost_vq/hostile_chains", test_vq_hostile },
	{ "vhost_vq/partial_burst", test_vq_partial_burst },
	{ "vhost_vq/too_many_segments", test_vq_too_many_segments },
	{ "vhost_vq/dirty_log", test_vq_dirty_log },
	{ "vhost_vq/broken_via_protocol", test_vq_broken_via_protocol },
	{ "vhost_vq/bad_ring_addr", test_vq_bad_ring_addr },
	{ "vhost_dev/quiesce_threaded", test_dev_quiesce_threaded },
	{ "vhost_server/listen", test_server_listen },
	{ "vhost_server/mode_race", test_server_mode_race },
	{ "vhost_server/client_reconnect", test_server_client_reconnect },
};

static bool selected(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	size_t i;

	vhost_log_set_fn(log_capture, NULL);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (!selected(tests[i].name, argc, argv))
			continue;
		test_start(tests[i].name);
		tests[i].fn();
		test_end();
	}
	return test_summary("vhost_unit");
}
