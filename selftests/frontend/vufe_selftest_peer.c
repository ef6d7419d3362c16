// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vufe_selftest: a scripted vhost-user peer, ring and frame helpers */
#include "vufe_selftest.h"

bool verbose;
bool packed;

/* ------------------------------------------------------------------ */
/* A scripted vhost-user peer: records every message, answers GET_*,   */
/* acks NEED_REPLY, maps the memory regions it is given.  It moves no  */
/* packets: the unit tests play the device on the rings themselves.    */
/* ------------------------------------------------------------------ */

int peer_read(int fd, void *buf, size_t len, int *fds, unsigned int *nfds)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = vufe_recv_fds(fd, (char *)buf + got, len - got,
				  MSG_CMSG_CLOEXEC, fds, nfds, 8);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

void peer_reply(struct peer *pr, __u32 req, const void *p, __u32 size)
{
	__u32 hdr[3] = { req, VUFE_MSG_REPLY | VUFE_MSG_VERSION, size };
	__u8 buf[12 + 64];

	memcpy(buf, hdr, 12);
	memcpy(buf + 12, p, size);
	if (send(pr->fd, buf, 12 + size, MSG_NOSIGNAL) < 0)
		return;
}

void peer_map_region(struct peer *pr, const __u8 *p, int fd)
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

void *peer_main(void *arg)
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
			if (pr->packed_base)	/* avail 0x30+i, used 0x20+i */
				s.num = (0x8030 + s.index) |
					(0x8020 + s.index) << 16;
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

int peer_start(struct peer *pr, int *fe_fd)
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

void peer_join(struct peer *pr)
{
	unsigned int i;

	pthread_join(pr->th, NULL);
	close(pr->fd);
	for (i = 0; i < pr->nmaps; i++)
		munmap(pr->map[i].mapping, pr->map[i].len);
	pr->nmaps = 0;
}

unsigned int peer_count(struct peer *pr)
{
	return __atomic_load_n(&pr->n, __ATOMIC_ACQUIRE);
}

void *peer_hva(struct peer *pr, __u64 hva)
{
	unsigned int i;

	for (i = 0; i < pr->nmaps; i++)
		if (hva >= pr->map[i].hva && hva < pr->map[i].hva + pr->map[i].size)
			return pr->map[i].base + (hva - pr->map[i].hva);
	return NULL;
}

bool rig_up(struct rig *g, struct vufe_opts *o, __u64 features,
	    __u64 proto)
{
	int fd;

	memset(g, 0, sizeof(*g));
	g->pr.features = pkf(features);
	g->pr.proto = proto;
	g->pr.queue_num = 4;
	g->pr.max_slots = 32;
	o->want_features = pkf(o->want_features);
	if (!ASSERT_OK(vufe_create(o, &g->fe), "vufe_create"))
		return false;
	if (!ASSERT_OK(peer_start(&g->pr, &fd), "peer_start"))
		goto fail;
	if (!ASSERT_OK(vufe_attach_fd(g->fe, fd), "attach"))
		goto fail_peer;
	if (!ASSERT_OK(vufe_setup(g->fe), vufe_strerror(g->fe)))
		goto fail_conn;
	if (!ASSERT_EQ(vufe_packed(g->fe), packed,
		       packed ? "RING_PACKED negotiated" : "split rings"))
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

void rig_down(struct rig *g)
{
	if (!g->fe)
		return;
	vufe_disconnect(g->fe);
	peer_join(&g->pr);
	vufe_destroy(g->fe);
	g->fe = NULL;
}

bool rig_sync(struct rig *g)
{
	return ASSERT_EQ(vufe_backend_alive(g->fe, 2000), 1, "peer alive");
}

/* ------------------------------------------------------------------ */
/* Playing the device on the rings                                     */
/* ------------------------------------------------------------------ */

void dev_init(struct dev *d, struct vufe *fe, unsigned int vq)
{
	struct vufe_vq_stats st;

	memset(d, 0, sizeof(*d));
	d->fe = fe;
	vufe_ring(fe, vq, &d->r);
	if (d->r.packed) {
		vufe_vq_stats(fe, vq, &st);
		d->last_avail = st.avail_idx;
		d->used_idx = st.last_used;
		return;
	}
	d->last_avail = le16toh(d->r.avail->idx);
	d->used_idx = le16toh(d->r.used->idx);
}

void dev_rewind(struct dev *d)
{
	d->last_avail = d->used_idx;
}

__u16 dev_avail_idx(struct dev *d)
{
	return le16toh(__atomic_load_n(&d->r.avail->idx, __ATOMIC_ACQUIRE));
}

static bool pk_is_avail(__u16 flags, __u16 pos)
{
	bool w = pos & PK_WRAP_BIT;

	return !!(flags & (1u << VRING_PACKED_DESC_F_AVAIL)) == w &&
	       !!(flags & (1u << VRING_PACKED_DESC_F_USED)) != w;
}

static int pk_pop(struct dev *d)
{
	__u16 p = d->last_avail, head = p, f, id;
	unsigned int n = 0;

	f = le16toh(__atomic_load_n(&d->r.pdesc[p & ~PK_WRAP_BIT].flags,
				    __ATOMIC_ACQUIRE));
	if (!pk_is_avail(f, p))
		return -1;
	for (;;) {
		n++;
		f = le16toh(d->r.pdesc[p & ~PK_WRAP_BIT].flags);
		if (!(f & VRING_DESC_F_NEXT))
			break;
		if (n == d->r.num) {
			d->last_avail = pk_pos(p, 1, d->r.num);
			return -2;
		}
		p = pk_pos(p, 1, d->r.num);
	}
	id = le16toh(d->r.pdesc[p & ~PK_WRAP_BIT].id);
	d->last_avail = pk_pos(p, 1, d->r.num);
	if (id < DEV_IDS) {
		d->pos[id] = head;
		d->cnt[id] = n;
	}
	return id;
}

int dev_pop(struct dev *d)
{
	if (d->r.packed)
		return pk_pop(d);
	if (d->last_avail == dev_avail_idx(d))
		return -1;
	return le16toh(d->r.avail->ring[d->last_avail++ % d->r.num]);
}

/* a packed chain (indirect expanded) in split descriptors' form */
static int pk_chain(struct dev *d, unsigned int id, struct vring_desc *out,
		    unsigned int max, bool *indirect)
{
	const __u16 keep = VRING_DESC_F_NEXT | VRING_DESC_F_WRITE |
			   VRING_DESC_F_INDIRECT;
	struct vring_packed_desc *t;
	unsigned int n, i;
	__u16 p;

	*indirect = false;
	if (id >= DEV_IDS || !d->cnt[id])
		return -1;
	p = d->pos[id];
	t = &d->r.pdesc[p & ~PK_WRAP_BIT];
	if (le16toh(t->flags) & VRING_DESC_F_INDIRECT) {
		*indirect = true;
		n = le32toh(t->len) / 16;
		t = vufe_gpa_to_ptr(d->fe, le64toh(t->addr), le32toh(t->len));
		if (!t || n > max)
			return -1;
		for (i = 0; i < n; i++)
			out[i] = (struct vring_desc){
				.addr = t[i].addr, .len = t[i].len,
				.flags = htole16(le16toh(t[i].flags) & keep),
			};
		return n;
	}
	if (d->cnt[id] > max)
		return -1;
	for (i = 0; i < d->cnt[id]; i++) {
		t = &d->r.pdesc[p & ~PK_WRAP_BIT];
		out[i] = (struct vring_desc){
			.addr = t->addr, .len = t->len,
			.flags = htole16(le16toh(t->flags) & keep),
		};
		p = pk_pos(p, 1, d->r.num);
	}
	return i;
}

int dev_chain(struct dev *d, unsigned int head, struct vring_desc *out,
	      unsigned int max, bool *indirect)
{
	struct vring_desc *t = d->r.desc;
	unsigned int n = 0, i = head, tn = d->r.num;

	if (d->r.packed)
		return pk_chain(d, head, out, max, indirect);
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

int dev_read(struct dev *d, unsigned int head, __u8 *out, size_t cap)
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

int dev_write(struct dev *d, unsigned int head, const __u8 *in,
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

void dev_used(struct dev *d, __u32 id, __u32 len)
{
	struct vring_used_elem *e;
	struct vring_packed_desc *x;
	__u16 p = d->used_idx;

	if (d->r.packed) {
		/* id and len now, the flags at dev_publish() */
		x = &d->r.pdesc[p & ~PK_WRAP_BIT];
		x->id = htole16(id);
		x->len = htole32(len);
		if (d->npend < DEV_IDS) {
			d->pend_pos[d->npend] = p;
			d->pend_flags[d->npend++] =
				(p & PK_WRAP_BIT ?
					 (1u << VRING_PACKED_DESC_F_AVAIL) |
						 (1u << VRING_PACKED_DESC_F_USED) :
					 0) |
				(len ? VRING_DESC_F_WRITE : 0);
		}
		d->used_idx = pk_pos(p, id < DEV_IDS && d->cnt[id] ?
						d->cnt[id] : 1, d->r.num);
		return;
	}
	e = &d->r.used->ring[d->used_idx % d->r.num];
	e->id = htole32(id);
	e->len = htole32(len);
	d->used_idx++;
}

void dev_publish(struct dev *d)
{
	unsigned int i;

	if (d->r.packed) {
		/* the first used descriptor's flags last, as a device does */
		for (i = d->npend; i-- > 0;)
			__atomic_store_n(&d->r.pdesc[d->pend_pos[i] &
						     ~PK_WRAP_BIT].flags,
					 htole16(d->pend_flags[i]),
					 __ATOMIC_RELEASE);
		d->npend = 0;
		return;
	}
	__atomic_store_n(&d->r.used->idx, htole16(d->used_idx),
			 __ATOMIC_RELEASE);
}

__u16 dev_used_event(struct dev *d)
{
	if (d->r.packed)
		return le16toh(__atomic_load_n(&d->r.driver_event->off_wrap,
					       __ATOMIC_RELAXED));
	return le16toh(d->r.avail->ring[d->r.num]);
}

__u16 dev_driver_flags(struct dev *d)
{
	return le16toh(__atomic_load_n(&d->r.driver_event->flags,
				       __ATOMIC_RELAXED));
}

static void pk_device_event(struct dev *d, __u16 off_wrap, __u16 flags)
{
	struct vring_packed_desc_event ev = {
		.off_wrap = htole16(off_wrap), .flags = htole16(flags),
	};
	__u32 v;

	memcpy(&v, &ev, sizeof(v));
	__atomic_store_n((__u32 *)d->r.device_event, v, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void dev_set_avail_event(struct dev *d, __u16 v)
{
	/* avail_event sits right after the used ring's last entry */
	__u8 *p = (__u8 *)d->r.used + 4 + 8 * d->r.num;

	if (d->r.packed) {
		pk_device_event(d, v, VRING_PACKED_EVENT_FLAG_DESC);
		return;
	}
	memcpy(p, &(__u16){ htole16(v) }, 2);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void dev_set_event_flags(struct dev *d, __u16 flags)
{
	pk_device_event(d, le16toh(d->r.device_event->off_wrap), flags);
}

__u64 efd_read(int fd)
{
	__u64 v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

void efd_write(int fd, __u64 v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		test_fail("eventfd write: %s", strerror(errno));
}

void fill(__u8 *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)(seed * 131 + i * 7 + (i >> 8));
}
