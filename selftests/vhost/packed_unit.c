// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unit tests of the packed virtqueue (user/vhost/packed.c) through the
 * generic vhost_vq_* API, in-process: the test plays the guest driver on a
 * memfd shared as guest memory, including a hostile one.  No root.
 *
 *	build/selftests/packed_unit [-l] [-t GLOB] [SUBSTRING...]   (test.h)
 *
 * Runs under ASan/UBSan: a read or write outside guest memory is a crash.
 */
#include "packed_unit.h"

unsigned int broken_lines;

static void log_capture(enum vhost_log_level level, const char *msg,
			void *opaque)
{
	(void)level;
	(void)opaque;
	if (strstr(msg, "broken"))
		broken_lines++;
	fprintf(stderr, "  vhost: %s\n", msg);
}

static uint16_t avail_flags(bool wrap)
{
	return wrap ? F_AV : F_US;
}

/*
 * Add a chain of N segments with buffer id ID; the head's flags last, as
 * drivers do.  EXTRA: flags ORed into every descriptor.
 */
void drv_add(struct pdrv *d, uint16_t id, const struct seg *s, unsigned int n,
	     uint16_t extra)
{
	uint16_t head = d->next, hflags = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint16_t fl = avail_flags(d->wrap) | extra;

		if (s[i].write)
			fl |= VRING_DESC_F_WRITE;
		if (i + 1 < n)
			fl |= VRING_DESC_F_NEXT;
		d->desc[d->next].addr = s[i].gpa;
		d->desc[d->next].len = s[i].len;
		d->desc[d->next].id = id;
		if (i)
			__atomic_store_n(&d->desc[d->next].flags, fl,
					 __ATOMIC_RELEASE);
		else
			hflags = fl;
		if (++d->next == d->num) {
			d->next = 0;
			d->wrap = !d->wrap;
		}
	}
	d->ndesc[id % 256] = (uint16_t)n;
	__atomic_store_n(&d->desc[head].flags, hflags, __ATOMIC_RELEASE);
}

/* Read the next used descriptor: 1 and its id/len, or 0 (none yet). */
int drv_used(struct pdrv *d, uint16_t *id, uint32_t *len)
{
	uint16_t fl = __atomic_load_n(&d->desc[d->used].flags,
				      __ATOMIC_ACQUIRE);
	unsigned int i;

	if (!!(fl & F_AV) != d->used_wrap || !!(fl & F_US) != d->used_wrap)
		return 0;
	*id = d->desc[d->used].id;
	*len = d->desc[d->used].len;
	for (i = 0; i < d->ndesc[*id % 256]; i++) {
		if (++d->used == d->num) {
			d->used = 0;
			d->used_wrap = !d->used_wrap;
		}
	}
	return 1;
}



bool env_setup(struct env *e, uint16_t num, uint64_t features, uint32_t base)
{
	struct vhost_mem_region_desc r = {
		.guest_phys_addr = 0,
		.memory_size = GUEST_SIZE,
		.userspace_addr = UVA_BASE,
	};
	int fd;

	memset(e, 0, sizeof(*e));
	e->err_fd = e->call_fd = -1;
	vhost_mem_init(&e->mem);
	vhost_vq_init(&e->vq, 0, "punit", &e->mem);
	e->memfd = memfd_create("packed-unit", MFD_CLOEXEC);
	if (!ASSERT_GE(e->memfd, 0, "memfd") ||
	    !ASSERT_OK(ftruncate(e->memfd, GUEST_SIZE), "ftruncate"))
		return false;
	e->g = mmap(NULL, GUEST_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    e->memfd, 0);
	if (!ASSERT_TRUE(e->g != MAP_FAILED, "mmap")) {
		e->g = NULL;
		return false;
	}
	vhost_mem_init(&e->mem);
	fd = dup(e->memfd);
	if (!ASSERT_OK(vhost_mem_add(&e->mem, &r, fd), "region"))
		return false;
	vhost_vq_init(&e->vq, 0, "punit", &e->mem);
	e->vq.num = num;
	e->vq.desc_uva = UVA_BASE + DESC_GPA;
	e->vq.avail_uva = UVA_BASE + DRIVER_GPA;
	e->vq.used_uva = UVA_BASE + DEVICE_GPA;
	e->vq.addr_set = e->vq.kick_set = e->vq.enabled = true;
	e->err_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->call_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->vq.err_fd = dup(e->err_fd);
	e->vq.call_fd = dup(e->call_fd);
	vhost_vq_set_base(&e->vq, base, true);

	e->d.g = e->g;
	e->d.num = num;
	e->d.desc = (void *)(e->g + DESC_GPA);
	e->d.drv_ev = (void *)(e->g + DRIVER_GPA);
	e->d.dev_ev = (void *)(e->g + DEVICE_GPA);
	e->d.next = e->d.used = base & 0x7fff;
	e->d.wrap = e->d.used_wrap = base & 0x8000;
	return ASSERT_OK(vhost_vq_start(&e->vq, features), "vq start");
}

/* Idempotent: a case may clean up and set up again. */
void env_cleanup(struct env *e)
{
	if (e->memfd < 0)
		return;
	vhost_vq_reset(&e->vq);
	vhost_mem_cleanup(&e->mem);
	if (e->g)
		munmap(e->g, GUEST_SIZE);
	e->g = NULL;
	close(e->memfd);
	if (e->err_fd >= 0)
		close(e->err_fd);
	if (e->call_fd >= 0)
		close(e->call_fd);
	e->memfd = e->err_fd = e->call_fd = -1;
}

uint64_t efd_read(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

struct vhost_vq_elem elems[8];

/* --- cases ---------------------------------------------------------------- */

/* Chains of 1..3 descriptors, out-of-order use, several laps of a 7-ring. */
static void test_laps(void)
{
	struct seg s[3] = { { BUF_GPA, 100, false },
			    { BUF_GPA + 4096, 200, false },
			    { BUF_GPA + 8192, 300, true } };
	struct vhost_vq_used u[2];
	unsigned int lap, ok = 0;
	uint16_t id;
	uint32_t len;
	struct env e;

	if (!env_setup(&e, 7, F_PK, 0x80008000))
		goto out;
	for (lap = 0; lap < 20; lap++) {
		e.g[BUF_GPA] = (uint8_t)lap;
		/* id 3: 3 descriptors (2 out, 1 in), id 5: 1 descriptor */
		drv_add(&e.d, 3, s, 3, 0);
		drv_add(&e.d, 5, &s[2], 1, 0);
		if (!ASSERT_EQ(vhost_vq_avail_count(&e.vq), 2, "avail count") ||
		    !ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 2, "pop") ||
		    !ASSERT_EQ(elems[0].head, 3, "id of chain 0") ||
		    !ASSERT_EQ(elems[0].out_num, 2, "readable") ||
		    !ASSERT_EQ(elems[0].in_num, 1, "writable") ||
		    !ASSERT_EQ(elems[0].out_len, 300, "out bytes") ||
		    !ASSERT_EQ(elems[1].head, 5, "id of chain 1") ||
		    !ASSERT_EQ(elems[1].in_len, 300, "in bytes") ||
		    !ASSERT_EQ(elems[0].iov[0].iov_len, 100, "iov length") ||
		    !ASSERT_EQ(*(uint8_t *)elems[0].iov[0].iov_base, lap,
			       "iov maps the guest's buffer"))
			goto out;
		ASSERT_EQ(vhost_vq_avail_count(&e.vq), 0, "nothing left");
		/* used out of order: 5 first, then 3 */
		u[0] = (struct vhost_vq_used){ 5, 11 };
		u[1] = (struct vhost_vq_used){ 3, 22 };
		if (!ASSERT_OK(vhost_vq_push_burst(&e.vq, u, 2), "push"))
			goto out;
		if (!ASSERT_EQ(drv_used(&e.d, &id, &len), 1, "used 0") ||
		    !ASSERT_EQ(id, 5, "used id 0") || !ASSERT_EQ(len, 11, "len 0") ||
		    !ASSERT_EQ(drv_used(&e.d, &id, &len), 1, "used 1") ||
		    !ASSERT_EQ(id, 3, "used id 1") || !ASSERT_EQ(len, 22, "len 1") ||
		    !ASSERT_EQ(drv_used(&e.d, &id, &len), 0, "no more"))
			goto out;
		/* both sides agree on where they are */
		if (!ASSERT_EQ(vhost_vq_base(&e.vq, true),
			       (uint32_t)(e.d.next | (e.d.wrap ? 0x8000 : 0)) *
				       0x10001u,
			       "base matches the driver"))
			goto out;
		ok++;
	}
	ASSERT_EQ(ok, 20, "20 laps of 4 descriptors on a 7-ring");
out:
	env_cleanup(&e);
}

static void test_rewind(void)
{
	struct seg s = { BUF_GPA, 64, true };
	struct vhost_vq_used u[3];
	unsigned int i;
	uint16_t id;
	uint32_t len;
	struct env e;

	if (!env_setup(&e, 4, F_PK, 0x80008000))
		goto out;
	for (i = 0; i < 3; i++)
		drv_add(&e.d, (uint16_t)i, &s, 1, 0);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 3, "pop 3");
	vhost_vq_rewind(&e.vq, 2);
	ASSERT_EQ(vhost_vq_avail_count(&e.vq), 2, "2 back");
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 1), 1, "pop 1 again");
	ASSERT_EQ(elems[0].head, 1, "the first rewound one");
	ASSERT_EQ(vhost_vq_avail_count(&e.vq), 1, "1 left");
	/* the ring wraps under a rewind, too */
	drv_add(&e.d, 3, &s, 1, 0);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 2, "pop 2 + 3");
	vhost_vq_rewind(&e.vq, 2);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 2, "again");
	ASSERT_EQ(elems[1].head, 3, "id 3 last");
	for (i = 0; i < 3; i++)
		u[i] = (struct vhost_vq_used){ (uint32_t)(i + 1), 0 };
	ASSERT_OK(vhost_vq_push_burst(&e.vq, u, 1), "push 1");
	ASSERT_OK(vhost_vq_push_burst(&e.vq, &u[1], 2), "push 2, 3");
	ASSERT_OK(vhost_vq_push(&e.vq, 0, 0), "push 0");
	for (i = 0; i < 4; i++)
		ASSERT_EQ(drv_used(&e.d, &id, &len), 1, "used");
	ASSERT_EQ(id, 0, "id 0 last");
	ASSERT_EQ(vhost_vq_base(&e.vq, true), 0x00000000u,
		  "one lap: position 0, wrap counters 0");
out:
	env_cleanup(&e);
}

static void test_indirect(void)
{
	struct vring_packed_desc *t;
	struct seg ind = { TABLE_GPA, 3 * 16, false };
	struct env e;
	uint16_t id;
	uint32_t len;

	if (!env_setup(&e, 8, F_PK, 0x80008000))
		goto out;
	t = (void *)(e.g + TABLE_GPA);
	/* only WRITE counts in a table; the others are ignored */
	t[0] = (struct vring_packed_desc){ BUF_GPA, 12, 77, F_AV };
	t[1] = (struct vring_packed_desc){ BUF_GPA + 4096, 1000, 0,
					   VRING_DESC_F_NEXT };
	t[2] = (struct vring_packed_desc){ BUF_GPA + 8192, 500, 0,
					   VRING_DESC_F_WRITE };
	drv_add(&e.d, 6, &ind, 1, VRING_DESC_F_INDIRECT);
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "pop"))
		goto out;
	ASSERT_EQ(elems[0].head, 6, "id");
	ASSERT_EQ(elems[0].out_num, 2, "readable from the table");
	ASSERT_EQ(elems[0].out_len, 1012, "out bytes");
	ASSERT_EQ(elems[0].in_len, 500, "in bytes");
	ASSERT_OK(vhost_vq_push(&e.vq, 6, 500), "push");
	ASSERT_EQ(drv_used(&e.d, &id, &len), 1, "used");
	ASSERT_EQ(id, 6, "used id");
	ASSERT_EQ(vhost_vq_base(&e.vq, true), 0x80018001u,
		  "an indirect buffer takes one ring descriptor");
	/* without INDIRECT_DESC negotiated: broken */
	env_cleanup(&e);
	if (!env_setup(&e, 8, F_PK & ~BIT(VIRTIO_RING_F_INDIRECT_DESC),
		       0x80008000))
		goto out;
	drv_add(&e.d, 6, &ind, 1, VRING_DESC_F_INDIRECT);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), -EIO, "refused");
	ASSERT_TRUE(strstr(e.vq.broken_reason, "INDIRECT_DESC") != NULL,
		    "reason");
out:
	env_cleanup(&e);
}

/* Kick suppression we write, call suppression the driver writes. */
static void test_events(void)
{
	struct seg s = { BUF_GPA, 64, true };
	struct env e;
	unsigned int i;

	if (!env_setup(&e, 8, F_PK, 0x80008000))
		goto out;
	ASSERT_EQ(e.d.dev_ev->flags, VRING_PACKED_EVENT_FLAG_DESC,
		  "started with kicks asked for (EVENT_IDX: at a position)");
	ASSERT_EQ(e.d.dev_ev->off_wrap, 0x8000, "position 0, wrap 1");
	vhost_vq_notify_disable(&e.vq);
	ASSERT_EQ(e.d.dev_ev->flags, VRING_PACKED_EVENT_FLAG_DISABLE,
		  "kicks off");
	ASSERT_FALSE(vhost_vq_notify_enable(&e.vq), "nothing came");
	drv_add(&e.d, 0, &s, 1, 0);
	vhost_vq_notify_disable(&e.vq);
	ASSERT_TRUE(vhost_vq_notify_enable(&e.vq),
		    "a buffer came while kicks were off");
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "pop");
	vhost_vq_notify_enable(&e.vq);
	ASSERT_EQ(e.d.dev_ev->off_wrap, 0x8001, "kick at position 1");

	/* the driver: calls off, on, at a position */
	e.d.drv_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	ASSERT_OK(vhost_vq_push(&e.vq, 0, 0), "push");
	ASSERT_FALSE(vhost_vq_need_notify(&e.vq), "calls disabled");
	e.d.drv_ev->flags = VRING_PACKED_EVENT_FLAG_ENABLE;
	ASSERT_TRUE(vhost_vq_need_notify(&e.vq), "calls enabled");
	/* call when the used descriptor at 6 (wrap 1) is written */
	e.d.drv_ev->off_wrap = 0x8006;
	e.d.drv_ev->flags = VRING_PACKED_EVENT_FLAG_DESC;
	for (i = 1; i < 8; i++) {
		drv_add(&e.d, (uint16_t)i, &s, 1, 0);
		ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "pop");
		ASSERT_OK(vhost_vq_push(&e.vq, (uint16_t)i, 0), "push");
		if (i == 6)
			ASSERT_TRUE(vhost_vq_want_notify(&e.vq), "want at 6");
		if (!ASSERT_EQ(vhost_vq_need_notify(&e.vq), i == 6,
			       "a call exactly when position 6 is used"))
			fprintf(stderr, "  at %u\n", i);
	}
	/* the next lap: position 1 with wrap 0 */
	e.d.drv_ev->off_wrap = 0x0001;
	for (i = 0; i < 3; i++) {
		drv_add(&e.d, (uint16_t)i, &s, 1, 0);
		ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "pop");
		ASSERT_OK(vhost_vq_push(&e.vq, (uint16_t)i, 0), "push");
		ASSERT_EQ(vhost_vq_need_notify(&e.vq), i == 1,
			  "across the wrap: a call at position 1");
	}
	/* vhost_vq_notify() counts what it sends */
	e.d.drv_ev->flags = VRING_PACKED_EVENT_FLAG_ENABLE;
	ASSERT_EQ(vhost_vq_notify(&e.vq), 1, "notify sent");
	ASSERT_EQ(efd_read(e.call_fd), 1, "call fd written");
out:
	env_cleanup(&e);
}

/* GET/SET_VRING_BASE halves, and a base outside the ring. */
static void test_base(void)
{
	struct seg s = { BUF_GPA, 64, true };
	struct env e;
	uint16_t id;
	uint32_t len;

	/*
	 * avail 3, used 2, first lap: one chain in flight at 2 (a second
	 * lap on memory never written would look stale: its zeroed
	 * descriptors read as used ones of that lap)
	 */
	if (!env_setup(&e, 8, F_PK, 0x80028003))
		goto out;
	ASSERT_EQ(vhost_vq_base(&e.vq, true), 0x80028003u, "as set");
	e.d.used = 2;
	drv_add(&e.d, 1, &s, 1, 0);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "pop at 3");
	ASSERT_OK(vhost_vq_push(&e.vq, 1, 9), "push");
	/* used at the used position (2), not at the avail one */
	ASSERT_EQ(drv_used(&e.d, &id, &len), 1, "used at 2");
	ASSERT_EQ(id, 1, "id");
	env_cleanup(&e);

	/*
	 * A stale base (a frontend that kept the base of an earlier start):
	 * three chains made available and used from 0 on, then the ring
	 * restarted at 0 again.  The used entry at 0 gives it away: broken,
	 * nothing popped, the error eventfd signalled; the right base (3)
	 * starts and serves the next chain.
	 */
	if (!env_setup(&e, 8, F_PK, 0x80008000))
		goto out;
	for (id = 0; id < 3; id++) {
		drv_add(&e.d, id, &s, 1, 0);
		ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "pop");
		ASSERT_OK(vhost_vq_push(&e.vq, id, 9), "push");
		ASSERT_EQ(drv_used(&e.d, &id, &len), 1, "used");
	}
	drv_add(&e.d, 3, &s, 1, 0);
	vhost_vq_stop(&e.vq);
	efd_read(e.err_fd);
	broken_lines = 0;
	vhost_vq_set_base(&e.vq, 0x80008000, true);
	ASSERT_OK(vhost_vq_start(&e.vq, F_PK), "started at the stale base");
	ASSERT_TRUE(vhost_vq_broken(&e.vq), "stale base: broken");
	ASSERT_EQ(broken_lines, 1, "said once");
	ASSERT_EQ(efd_read(e.err_fd), 1, "error eventfd");
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), -EIO, "nothing popped");
	vhost_vq_stop(&e.vq);
	__atomic_store_n(&e.vq.broken, 0, __ATOMIC_RELEASE);
	vhost_vq_set_base(&e.vq, 0x80038003, true);
	ASSERT_OK(vhost_vq_start(&e.vq, F_PK), "started at the right base");
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "right base: serving");
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "the chain at 3");
	env_cleanup(&e);

	/* high half 0: used = avail */
	if (!env_setup(&e, 8, F_PK, 0x8005))
		goto out;
	ASSERT_EQ(vhost_vq_base(&e.vq, true), 0x80058005u, "used = avail");
	env_cleanup(&e);

	/* index past the ring: not started */
	if (!env_setup(&e, 8, 0, 0))
		goto out;
	vhost_vq_stop(&e.vq);
	vhost_vq_set_base(&e.vq, 0x8009, true);
	ASSERT_EQ(vhost_vq_start(&e.vq, F_PK), -EINVAL, "avail 9 of 8");
	vhost_vq_set_base(&e.vq, 0x80098001, true);
	ASSERT_EQ(vhost_vq_start(&e.vq, F_PK), -EINVAL, "used 9 of 8");
	/* a ring not inside guest memory: not started */
	vhost_vq_set_base(&e.vq, 0x8000, true);
	e.vq.desc_uva = UVA_BASE + GUEST_SIZE - 64;
	ASSERT_EQ(vhost_vq_start(&e.vq, F_PK), -EFAULT, "ring past memory");
out:
	env_cleanup(&e);
}

/* VHOST_F_LOG_ALL: used descriptors and the device area are logged. */
static void test_dirty_log(void)
{
	struct seg s = { 5 * 4096, 64, true };
	int logfd = memfd_create("packed-log", MFD_CLOEXEC);
	uint8_t *bm = MAP_FAILED;
	struct env e;

	if (!env_setup(&e, 8, F_PK, 0x80008000) || !ASSERT_GE(logfd, 0, "memfd") ||
	    !ASSERT_OK(ftruncate(logfd, 4096), "ftruncate"))
		goto out;
	bm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, logfd, 0);
	if (!ASSERT_TRUE(bm != MAP_FAILED, "mmap log") ||
	    !ASSERT_OK(vhost_mem_set_log(&e.mem, dup(logfd), 4096, 0),
		       "set log"))
		goto out;
	vhost_vq_stop(&e.vq);
	e.vq.addr_flags = 1u << VHOST_VRING_F_LOG;
	if (!ASSERT_OK(vhost_vq_start(&e.vq, F_PK | BIT(VHOST_F_LOG_ALL)),
		       "start, logging"))
		goto out;
	memset(bm, 0, 4096);
	drv_add(&e.d, 2, &s, 1, 0);
	ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 1, "pop");
	vhost_vq_log_write(&e.vq, &elems[0], 64);
	ASSERT_EQ(bm[0], 1u << 5, "the buffer's page (5)");
	ASSERT_OK(vhost_vq_push(&e.vq, 2, 64), "push");
	ASSERT_EQ(bm[0], (1u << 5) | (1u << 1), "and the ring's page (1)");
	bm[0] = 0;
	vhost_vq_notify_disable(&e.vq);
	ASSERT_EQ(bm[0], 1u << 3, "the device area's page (3)");
out:
	if (bm != MAP_FAILED)
		munmap(bm, 4096);
	if (logfd >= 0)
		close(logfd);
	env_cleanup(&e);
}

VNET_TEST("packed/protocol", test_protocol);
VNET_TEST("packed/laps_out_of_order", test_laps);
VNET_TEST("packed/rewind", test_rewind);
VNET_TEST("packed/indirect", test_indirect);
VNET_TEST("packed/event_suppression", test_events);
VNET_TEST("packed/vring_base", test_base);
VNET_TEST("packed/dirty_log", test_dirty_log);
VNET_TEST("packed/hostile", test_hostile);
VNET_TEST("packed/push_bad_id", test_push_bad_id);

int main(int argc, char **argv)
{
	vhost_log_set_fn(log_capture, NULL);
	return test_main(argc, argv, "packed_unit", NULL);
}
