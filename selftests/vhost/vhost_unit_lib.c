// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vhost_unit: log capture, fd counts, a guest driver of one split ring, a device driven over the protocol */
#include "sendfds.h"
#include "vhost_unit.h"

/* --- log capture ------------------------------------------------------ */

struct log_counts logs;

void log_capture(enum vhost_log_level level, const char *msg,
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

void logs_reset(void)
{
	memset(&logs, 0, sizeof(logs));
}

int count_fds(void)
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

int memfd_guest(size_t size)
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

void close_pair(int a, int b)
{
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

/* GUEST_SIZE bytes of guest memory: its memfd in *MEMFD, mapped at *G */
static bool guest_map(int *memfd, uint8_t **g)
{
	*memfd = memfd_guest(GUEST_SIZE);
	if (!ASSERT_GE(*memfd, 0, "memfd"))
		return false;
	*g = mmap(NULL, GUEST_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, *memfd,
		  0);
	if (!ASSERT_TRUE(*g != MAP_FAILED, "mmap guest")) {
		*g = NULL;
		return false;
	}
	return true;
}

uint64_t efd_read(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* --- a guest driver of one split ring ----------------------------------- */

void drv_init(struct drv *d, uint8_t *g, uint16_t num)
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

void drv_set_base(struct drv *d, uint16_t idx)
{
	d->avail_idx = idx;
	d->avail->idx = idx;
	d->used->idx = idx;
}

uint16_t drv_chain(struct drv *d, const struct seg *s, unsigned int n)
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

void drv_publish(struct drv *d, uint16_t head)
{
	d->avail->ring[d->avail_idx % d->num] = head;
	d->avail_idx++;
	__atomic_store_n(&d->avail->idx, d->avail_idx, __ATOMIC_RELEASE);
}

void drv_set_used_event(struct drv *d, uint16_t v)
{
	d->avail->ring[d->num] = v;
}

uint16_t drv_avail_event(struct drv *d)
{
	uint16_t v;

	memcpy(&v, (uint8_t *)d->used + offsetof(struct vring_used, ring) +
			   d->num * sizeof(struct vring_used_elem),
	       sizeof(v));
	return v;
}

/* --- a virtqueue on its own: memory + ring, no protocol ----------------- */

bool env_setup(struct vqenv *e, uint16_t num, uint64_t features,
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
	if (!guest_map(&e->memfd, &e->g))
		return false;
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

void env_cleanup(struct vqenv *e)
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

struct vhost_vq_elem elems[8];

/* --- a device driven over the protocol ----------------------------------- */

uint64_t t_get_features(struct vhost_dev *dev)
{
	return ((struct tdev *)dev->priv)->offer;
}

int t_queue_start(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct tdev *t = dev->priv;

	t->starts++;
	t->running[vq->index] = true;
	return 0;
}

void t_queue_stop(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct tdev *t = dev->priv;

	t->stops++;
	t->running[vq->index] = false;
}

void t_mem_changed(struct vhost_dev *dev)
{
	((struct tdev *)dev->priv)->mem_changes++;
}

void t_disconnected(struct vhost_dev *dev)
{
	((struct tdev *)dev->priv)->disconnects++;
}

int t_send_rarp(struct vhost_dev *dev, const uint8_t mac[6])
{
	struct tdev *t = dev->priv;

	memcpy(t->rarp_mac, mac, 6);
	t->rarps++;
	return 0;
}

/* the device refuses 12345 (as a tap would refuse what it cannot take) */
int t_set_mtu(struct vhost_dev *dev, unsigned int mtu)
{
	struct tdev *t = dev->priv;

	if (mtu == 12345)
		return -EINVAL;
	t->mtu = mtu;
	return 0;
}

const struct vhost_dev_ops t_ops = {
	.get_features = t_get_features,
	.queue_start = t_queue_start,
	.queue_stop = t_queue_stop,
	.mem_changed = t_mem_changed,
	.disconnected = t_disconnected,
	.send_rarp = t_send_rarp,
	.set_mtu = t_set_mtu,
};

bool tdev_setup(struct tdev *t)
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
	return guest_map(&t->memfd, &t->g);
}

void tdev_cleanup(struct tdev *t)
{
	vhost_dev_cleanup(&t->dev);
	if (t->sock >= 0)
		close(t->sock);
	if (t->g)
		munmap(t->g, GUEST_SIZE);
	if (t->memfd >= 0)
		close(t->memfd);
}

int fe_send_raw(int sock, const void *buf, size_t len, const int *fds,
		unsigned int nfds)
{
	ssize_t r = vnet_send_fds(sock, buf, len, fds, nfds, MSG_NOSIGNAL);

	return r == (ssize_t)len ? 0 : -errno;
}

int fe_call(struct tdev *t, uint32_t req, uint32_t flags,
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

int fe_reply(int sock, struct vhost_user_msg *m)
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

uint64_t fe_get_u64(struct tdev *t, uint32_t req)
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

int64_t fe_ack(struct tdev *t, uint32_t req, const void *payload,
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

int64_t fe_ack_u64(struct tdev *t, uint32_t req, uint64_t v)
{
	return fe_ack(t, req, &v, sizeof(v), NULL, 0);
}

int64_t fe_ack_state(struct tdev *t, uint32_t req, uint32_t index,
		     uint32_t num)
{
	struct vhost_user_vring_state s = { .index = index, .num = num };

	return fe_ack(t, req, &s, sizeof(s), NULL, 0);
}

int64_t fe_ack_vring_fd(struct tdev *t, uint32_t req, uint32_t index,
			int fd)
{
	uint64_t v = index | (fd < 0 ? VHOST_USER_VRING_NOFD_MASK : 0);

	return fe_ack(t, req, &v, sizeof(v), fd < 0 ? NULL : &fd,
		      fd < 0 ? 0 : 1);
}

int64_t fe_mem_table(struct tdev *t, uint64_t size)
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

bool fe_setup_ring(struct tdev *t, uint32_t index, uint64_t features,
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

bool tdev_ring(struct tdev *t, uint32_t index, struct drv *d, int *call,
	       int *kick)
{
	return tdev_setup(t) && fe_setup_ring(t, index, F_RING, d, call, kick);
}

void tdev_ring_cleanup(struct tdev *t, int call, int kick)
{
	close_pair(call, kick);
	tdev_cleanup(t);
}
