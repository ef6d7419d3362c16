// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * packed_unit, part 2: hostile guest drivers of a packed ring, and a packed
 * ring's vhost-user messages through vhost_user.c.
 */
#include "packed_unit.h"

/* --- hostile drivers ------------------------------------------------------ */

struct hostile {
	const char *name;
	const char *reason;
	void (*prepare)(struct env *e);
	bool alone; /* no good chain before it: it needs the whole ring */
};

static void h_oob(struct env *e)
{
	struct seg s = { GUEST_SIZE - 10, 64, true };

	drv_add(&e->d, 0, &s, 1, 0);
}

static void h_far(struct env *e)
{
	struct seg s = { 1ULL << 62, 64, false };

	drv_add(&e->d, 0, &s, 1, 0);
}

static void h_len_wraps(struct env *e)
{
	struct seg s = { ~0ULL - 10, 100, false };

	drv_add(&e->d, 0, &s, 1, 0);
}

/* every descriptor has NEXT: a chain around the ring */
static void h_endless(struct env *e)
{
	struct seg s = { BUF_GPA, 64, false };
	unsigned int i;

	for (i = 0; i < e->d.num; i++)
		drv_add(&e->d, 0, &s, 1, VRING_DESC_F_NEXT);
}

static void h_id_oob(struct env *e)
{
	struct seg s = { BUF_GPA, 64, false };

	drv_add(&e->d, 200, &s, 1, 0);
}

static void h_out_after_in(struct env *e)
{
	struct seg s[2] = { { BUF_GPA, 64, true }, { BUF_GPA, 64, false } };

	drv_add(&e->d, 0, s, 2, 0);
}

static void table(struct env *e, uint32_t len, uint64_t gpa, uint16_t extra)
{
	struct seg s = { gpa, len, false };

	drv_add(&e->d, 0, &s, 1, VRING_DESC_F_INDIRECT | extra);
}

static void h_ind_oob(struct env *e)
{
	table(e, 64, GUEST_SIZE - 16, 0);
}

static void h_ind_len(struct env *e)
{
	table(e, 24, TABLE_GPA, 0);
}

static void h_ind_big(struct env *e)
{
	table(e, 17 * 16, TABLE_GPA, 0);
}

static void h_ind_empty(struct env *e)
{
	table(e, 0, TABLE_GPA, 0);
}

static void h_ind_next(struct env *e)
{
	struct seg s[2] = { { TABLE_GPA, 16, false }, { BUF_GPA, 16, false } };

	drv_add(&e->d, 0, s, 2, VRING_DESC_F_INDIRECT);
}

static void h_ind_in_chain(struct env *e)
{
	struct seg s[2] = { { BUF_GPA, 16, false }, { TABLE_GPA, 16, false } };
	uint16_t second = e->d.next + 1;

	drv_add(&e->d, 0, s, 2, 0);
	e->d.desc[second].flags |= VRING_DESC_F_INDIRECT;
}

static void h_ind_nested(struct env *e)
{
	struct vring_packed_desc *t = (void *)(e->g + TABLE_GPA);

	t[0] = (struct vring_packed_desc){ BUF_GPA, 16, 0, 0 };
	t[1] = (struct vring_packed_desc){ TABLE_GPA, 16, 0,
					   VRING_DESC_F_INDIRECT };
	table(e, 32, TABLE_GPA, 0);
}

static void h_ind_entry_oob(struct env *e)
{
	struct vring_packed_desc *t = (void *)(e->g + TABLE_GPA);

	t[0] = (struct vring_packed_desc){ GUEST_SIZE, 16, 0, 0 };
	table(e, 16, TABLE_GPA, 0);
}

static const struct hostile hostiles[] = {
	{ "desc_outside_memory", "outside guest memory", h_oob, false },
	{ "desc_far_away", "outside guest memory", h_far, false },
	{ "desc_addr_len_wraps", "outside guest memory", h_len_wraps, false },
	{ "chain_longer_than_ring", "longer than the ring", h_endless, true },
	{ "buffer_id_out_of_range", "buffer id 200", h_id_oob, false },
	{ "readable_after_writable", "readable descriptor after",
	  h_out_after_in, false },
	{ "indirect_outside_memory", "outside guest memory", h_ind_oob, false },
	{ "indirect_len_not_16", "indirect table of 24 bytes", h_ind_len, false },
	{ "indirect_too_big", "indirect table of 272 bytes", h_ind_big, false },
	{ "indirect_empty", "indirect table of 0 bytes", h_ind_empty, false },
	{ "indirect_with_next", "indirect descriptor with NEXT", h_ind_next, false },
	{ "indirect_inside_chain", "inside a chain", h_ind_in_chain, false },
	{ "indirect_nested", "nested indirect", h_ind_nested, false },
	{ "indirect_entry_outside_memory", "outside guest memory",
	  h_ind_entry_oob, false },
};

void test_hostile(void)
{
	struct seg good = { BUF_GPA, 64, true };
	unsigned int i, j;

	for (i = 0; i < sizeof(hostiles) / sizeof(hostiles[0]); i++) {
		const struct hostile *h = &hostiles[i];
		struct vring_packed_desc before[16];
		struct env e;

		broken_lines = 0;
		if (!env_setup(&e, 16, F_PK, 0x80008000)) {
			env_cleanup(&e);
			return;
		}
		/* a good chain first: popped and valid, then the ring breaks */
		if (!h->alone)
			drv_add(&e.d, 9, &good, 1, 0);
		h->prepare(&e);
		memcpy(before, e.d.desc, sizeof(before));
		/*
		 * The bad chain is counted too: a device that pops only what
		 * is counted (vnetd's RX) must meet it, or the ring neither
		 * breaks nor moves while the device looks again and again.
		 */
		ASSERT_EQ(vhost_vq_avail_count(&e.vq), 1 + !h->alone, h->name);
		if (h->alone) {
			ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), -EIO,
				  h->name);
		} else {
			ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1,
				  h->name);
			ASSERT_EQ(elems[0].head, 9, h->name);
		}
		ASSERT_TRUE(vhost_vq_broken(&e.vq), h->name);
		if (!ASSERT_TRUE(strstr(e.vq.broken_reason, h->reason) != NULL,
				 h->name))
			fprintf(stderr, "  %s: reason \"%s\"\n", h->name,
				e.vq.broken_reason);
		ASSERT_EQ(e.vq.stats.bad_chains, 1, h->name);
		/* stays broken, logged once, the frontend told, ring untouched */
		ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), -EIO, h->name);
		ASSERT_EQ(vhost_vq_push(&e.vq, 9, 0), -EIO, h->name);
		ASSERT_EQ(vhost_vq_avail_count(&e.vq), 0, h->name);
		ASSERT_FALSE(vhost_vq_notify_enable(&e.vq), h->name);
		ASSERT_FALSE(vhost_vq_need_notify(&e.vq), h->name);
		ASSERT_EQ(broken_lines, 1, h->name);
		ASSERT_EQ(efd_read(e.err_fd), 1, h->name);
		for (j = 0; j < 16; j++)
			ASSERT_MEMEQ(&e.d.desc[j], &before[j], sizeof(before[j]),
				     h->name);
		env_cleanup(&e);
	}
}

/* A push of an id that is no buffer of the ring: refused, nothing written. */
void test_push_bad_id(void)
{
	struct vhost_vq_used u[2] = { { 1, 0 }, { 16, 0 } };
	struct vring_packed_desc before;
	struct env e;

	if (!env_setup(&e, 16, F_PK, 0x80008000))
		goto out;
	before = e.d.desc[0];
	ASSERT_EQ(vhost_vq_push_burst(&e.vq, u, 2), -EINVAL, "id 16 of 16");
	ASSERT_MEMEQ(&e.d.desc[0], &before, sizeof(before), "nothing written");
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "not broken: the device's bug");
out:
	env_cleanup(&e);
}

/* --- the vhost-user messages of a packed ring ---------------------------- */

static uint64_t p_offer(struct vhost_dev *dev)
{
	(void)dev;
	return F_PK;
}

static int p_start(struct vhost_dev *dev, struct vhost_vq *vq)
{
	(void)dev;
	(void)vq;
	return 0;
}

static void p_stop(struct vhost_dev *dev, struct vhost_vq *vq)
{
	(void)dev;
	(void)vq;
}

static const struct vhost_dev_ops p_ops = {
	.get_features = p_offer,
	.queue_start = p_start,
	.queue_stop = p_stop,
};

/* REQ and its payload, header and payload back to back, handled. */
static int p_send(struct vhost_dev *dev, int sock, uint32_t req,
		  uint32_t flags, const void *payload, uint32_t size)
{
	struct vhost_user_hdr h = { .request = req,
				    .flags = VHOST_USER_VERSION | flags,
				    .size = size };
	uint8_t buf[sizeof(h) + 64];

	memcpy(buf, &h, sizeof(h));
	if (size)
		memcpy(buf + sizeof(h), payload, size);
	if (send(sock, buf, sizeof(h) + size, MSG_NOSIGNAL) !=
	    (ssize_t)(sizeof(h) + size))
		return -EIO;
	return vhost_dev_handle_input(dev);
}

/* Send REQ with NEED_REPLY; the ack (0 ok, 1 refused) or the answer. */
static int64_t p_call(struct vhost_dev *dev, int sock, uint32_t req,
		      const void *payload, uint32_t size)
{
	struct vhost_user_msg m;

	if (p_send(dev, sock, req, VHOST_USER_NEED_REPLY_MASK, payload, size))
		return -EIO;
	memset(&m, 0, sizeof(m));
	if (recv(sock, &m.hdr, sizeof(m.hdr), MSG_DONTWAIT) != sizeof(m.hdr) ||
	    m.hdr.size > sizeof(m.payload) ||
	    (m.hdr.size && recv(sock, &m.payload, m.hdr.size, MSG_DONTWAIT) !=
				   (ssize_t)m.hdr.size))
		return -EPROTO;
	if (req == VHOST_USER_GET_VRING_BASE)
		return m.payload.state.num;
	return (int64_t)m.payload.u64;
}

static int64_t p_state(struct vhost_dev *dev, int sock, uint32_t req,
		       uint32_t num)
{
	struct vhost_user_vring_state st = { .index = 1, .num = num };

	return p_call(dev, sock, req, &st, sizeof(st));
}

/*
 * Through vhost_user.c: the packed bit offered and acked, any ring size,
 * the 32-bit base round-trips; split rings keep their rules.
 */
void test_protocol(void)
{
	uint64_t f = F_PK | BIT(VHOST_USER_F_PROTOCOL_FEATURES);
	struct vhost_dev dev;
	int sv[2] = { -1, -1 };
	bool init = false;

	if (!ASSERT_OK(vhost_dev_init(&dev, "punit", 2, &p_ops, NULL),
		       "dev init"))
		return;
	init = true;
	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		       "socketpair") ||
	    !ASSERT_OK(vhost_dev_attach(&dev, sv[1]), "attach"))
		goto out;
	sv[1] = -1;
	/* REPLY_ACK, so that every request below is answered */
	if (!ASSERT_OK(p_send(&dev, sv[0], VHOST_USER_SET_PROTOCOL_FEATURES, 0,
			      &(uint64_t){ BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK) },
			      8),
		       "REPLY_ACK"))
		goto out;
	ASSERT_EQ(p_call(&dev, sv[0], VHOST_USER_GET_FEATURES, NULL, 0) &
			  BIT(VIRTIO_F_RING_PACKED),
		  BIT(VIRTIO_F_RING_PACKED), "the device's packed bit offered");
	/* split first: sizes are powers of two, bases 16 bits */
	ASSERT_EQ(p_call(&dev, sv[0], VHOST_USER_SET_FEATURES, &(uint64_t){ 0 },
			 8),
		  0, "split");
	ASSERT_EQ(p_state(&dev, sv[0], VHOST_USER_SET_VRING_NUM, 100), 1,
		  "split: 100 refused");
	ASSERT_EQ(p_state(&dev, sv[0], VHOST_USER_SET_VRING_BASE, 0x80008000),
		  1, "split: a 32-bit base refused");
	/* packed */
	ASSERT_EQ(p_call(&dev, sv[0], VHOST_USER_SET_FEATURES, &f, 8), 0,
		  "packed acked");
	ASSERT_EQ(p_state(&dev, sv[0], VHOST_USER_SET_VRING_NUM, 100), 0,
		  "packed: 100 entries");
	ASSERT_EQ(dev.vqs[1].num, 100, "size");
	ASSERT_EQ(p_state(&dev, sv[0], VHOST_USER_SET_VRING_BASE, 0x00058003),
		  0, "packed base");
	ASSERT_EQ(dev.vqs[1].last_avail_idx, 3, "avail index");
	ASSERT_TRUE(dev.vqs[1].avail_wrap, "avail wrap 1");
	ASSERT_EQ(dev.vqs[1].used_idx, 5, "used index");
	ASSERT_FALSE(dev.vqs[1].used_wrap, "used wrap 0");
	ASSERT_EQ(p_state(&dev, sv[0], VHOST_USER_GET_VRING_BASE, 0),
		  0x00058003, "GET_VRING_BASE: both halves back");
	ASSERT_EQ(p_state(&dev, sv[0], VHOST_USER_SET_VRING_BASE, 0x8010), 0,
		  "avail half only");
	ASSERT_EQ(p_state(&dev, sv[0], VHOST_USER_GET_VRING_BASE, 0),
		  0x80108010, "used = avail");
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	if (init)
		vhost_dev_cleanup(&dev);
}

