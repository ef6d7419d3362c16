// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vhost_unit: split virtqueues */
#include "vhost_unit.h"

/* ======================================================================= */
/* virtqueue                                                                */
/* ======================================================================= */

void test_vq_pop_push(void)
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
void test_vq_event_idx_wrap(void)
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
	ASSERT_EQ(e.vq.stats.calls, 3, "notify_sent");
	ASSERT_EQ(e.vq.stats.calls_suppressed, 2, "notify_suppressed");

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
void test_vq_flags_notify(void)
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

void test_vq_indirect(void)
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
void test_vq_span_regions(void)
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

void test_vq_hostile(void)
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
void test_vq_partial_burst(void)
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
	ASSERT_EQ(e.vq.stats.bad_chains, 1, "counted");
out:
	env_cleanup(&e);
}

/* More segments than an element holds: an error element, not a break. */
void test_vq_too_many_segments(void)
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
	ASSERT_EQ(e.vq.stats.bad_chains, 1, "counted");
out:
	env_cleanup(&e);
}

/* Dirty logging of the used ring and of written buffers. */
void test_vq_dirty_log(void)
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
void test_vq_broken_via_protocol(void)
{
	struct vhost_user_vring_state st = { .index = 0 };
	struct vhost_user_msg m;
	int call = -1, kick = -1;
	struct vhost_vq *vq;
	struct drv d;
	struct tdev t;

	if (!tdev_ring(&t, 0, &d, &call, &kick))
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
	tdev_ring_cleanup(&t, call, kick);
}

/* Ring addresses that are not guest memory: not started, not a crash. */
void test_vq_bad_ring_addr(void)
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

	if (!tdev_ring(&t, 0, &d, &call, &kick))
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
	tdev_ring_cleanup(&t, call, kick);
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

void test_dev_quiesce_threaded(void)
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
	close_pair(call, kick);
	tdev_cleanup(&t);
}
