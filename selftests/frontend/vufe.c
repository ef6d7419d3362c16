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
#include "vufe_int.h"

int vufe_err(struct vufe *fe, int err, const char *fmt, ...)
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

int vufe_mem_fd(const struct vufe *fe)
{
	return fe->memfd;
}

int vufe_kick_fd(const struct vufe *fe, unsigned int vq)
{
	return vq < VUFE_MAX_VQ ? fe->vq[vq].kick_fd : -1;
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
		vq->pk_base = PK_WRAP;	/* position 0, wrap counter 1 */
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

/* the negotiated values, as the accessors of vufe.h read them */
#define VUFE_GET(type, name, field)                                            \
	type vufe_##name(const struct vufe *fe)                                \
	{                                                                      \
		return fe->field;                                              \
	}
VUFE_GET(__u64, features, features)
VUFE_GET(__u64, backend_features, backend_features)
VUFE_GET(__u64, protocol_features, proto)
VUFE_GET(__u64, backend_protocol_features, backend_proto)
VUFE_GET(__u64, max_queues, max_queues)
VUFE_GET(__u64, max_mem_slots, max_mem_slots)
VUFE_GET(unsigned int, hdr_len, hdr_len)
VUFE_GET(enum vufe_rx_mode, rx_mode, rx_mode)

bool vufe_packed(const struct vufe *fe)
{
	return has(fe->features, VIRTIO_F_RING_PACKED);
}

/* RX piece k of a slot: where the device writes, and how much */
unsigned int vq_rx_pieces(const struct vufe *fe, const struct vufe_vq *vq,
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

			err = vu_msg(fe, VUFE_ADD_MEM_REG, true, &m, sizeof(m),
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
	return vu_msg(fe, VUFE_SET_MEM_TABLE, true, &t,
		      8 + fe->nr_regions * sizeof(t.regions[0]), fds,
		      fe->nr_regions);
}

static __u32 start_base(struct vufe *fe, struct vufe_vq *vq)
{
	__u16 pos;

	if (vq->packed) {
		if (vq->base_saved)
			return vq->base;
		/* QEMU's: the base of the last start (vq->base: as sent) */
		if (vq->started && fe->o.qemu_packed_base)
			return vq->base;
		pos = vq->pk_base;
		/*
		 * Gone without GET_VRING_BASE: resume where the used
		 * descriptors the device wrote end, both halves there (as
		 * split resumes from used->idx).
		 */
		if (vq->started) {
			pos = vq->last_used;
			pk_used_walk(vq, &pos);
		}
		return pos | (__u32)pos << 16;
	}
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
	__u32 base = start_base(fe, vq);
	int err;

	err = vu_set_state(fe, VUFE_SET_VRING_NUM, vq->index, vq->num, false);
	if (!err)
		err = vu_set_state(fe, VUFE_SET_VRING_BASE, vq->index, base,
				   false);
	if (!err)
		err = vu_msg(fe, VUFE_SET_VRING_ADDR, false, &a, sizeof(a), NULL,
			     0);
	if (!err)
		err = vu_set_vring_fd(fe, VUFE_SET_VRING_KICK, vq->index,
				      vq->kick_fd);
	if (!err)
		err = vu_set_vring_fd(fe, VUFE_SET_VRING_CALL, vq->index,
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

	err = vu_get_u64(fe, VUFE_GET_FEATURES, &fe->backend_features);
	if (err)
		return err;
	if (has(fe->backend_features, VUFE_F_PROTOCOL_FEATURES) &&
	    has(want, VUFE_F_PROTOCOL_FEATURES)) {
		err = vu_get_u64(fe, VUFE_GET_PROTOCOL_FEATURES,
				 &fe->backend_proto);
		if (err)
			return err;
		fe->proto = fe->backend_proto & fe->o.want_protocol &
			    VUFE_PROTO_ACKED;
		/* not acked yet: SET_PROTOCOL_FEATURES itself never waits */
		err = vu_set_u64(fe, VUFE_SET_PROTOCOL_FEATURES, fe->proto);
		if (err)
			return err;
		if (has(fe->proto, VUFE_PROTO_MQ)) {
			err = vu_get_u64(fe, VUFE_GET_QUEUE_NUM, &fe->max_queues);
			if (err)
				return err;
		}
		if (has(fe->proto, VUFE_PROTO_CONFIGURE_MEM_SLOTS)) {
			err = vu_get_u64(fe, VUFE_GET_MAX_MEM_SLOTS,
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

	err = vu_msg(fe, VUFE_SET_OWNER, false, NULL, 0, NULL, 0);
	if (err)
		return err;
	/* QEMU's vhost_dev_init asks again after SET_OWNER */
	err = vu_get_u64(fe, VUFE_GET_FEATURES, &f);
	if (err)
		return err;
	if (fe->o.nr_qp > 1)
		want |= 1ULL << VIRTIO_NET_F_MQ;
	fe->features = fe->backend_features & want;
	err = vu_set_u64(fe, VUFE_SET_FEATURES, fe->features);
	if (err)
		return err;
	fe->hdr_len = has(fe->features, VIRTIO_F_VERSION_1) ||
				      has(fe->features, VIRTIO_NET_F_MRG_RXBUF) ?
			      sizeof(struct virtio_net_hdr_mrg_rxbuf) :
			      sizeof(struct virtio_net_hdr);
	err = rx_prepare(fe);
	if (err)
		return err;
	for (i = 0; i < fe->nr_vq; i++) {
		struct vufe_vq *vq = &fe->vq[i];
		bool packed = has(fe->features, VIRTIO_F_RING_PACKED);

		if (vq->started && vq->packed != packed)
			return vufe_err(fe, -EINVAL,
					"vring %u: %s ring, the backend now "
					"negotiates %s", i,
					vq->packed ? "packed" : "split",
					packed ? "packed" : "split");
		if (packed && !vq->started)
			pk_init(fe, vq);
	}

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
			err = vu_set_state(fe, VUFE_SET_VRING_ENABLE, i, 1,
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
		/* split: a 16-bit index; packed: both 16-bit positions */
		vq->base = vq->packed ? s.num : (__u16)s.num;
		vq->base_saved = true;
		vq->st.base = vq->base;
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
	if (has(fe->o.want_features, VIRTIO_F_RING_PACKED)) {
		if ((base & ~PK_WRAP) >= vq->num)
			return vufe_err(fe, -EINVAL,
					"vring %u: packed position 0x%x past "
					"the ring (%u)", idx, base, vq->num);
		vq->pk_base = base;
		return 0;
	}
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
		.packed = vq->packed,
		.pdesc = (struct vring_packed_desc *)vq->desc,
		.driver_event = (struct vring_packed_desc_event *)vq->avail,
		.device_event = (struct vring_packed_desc_event *)vq->used,
	};
	return 0;
}

