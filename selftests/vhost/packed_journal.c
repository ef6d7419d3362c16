// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * packed_unit: a packed ring's journal (user/vhost/journal.c).  A "crash"
 * is the ring object forgotten (vhost_vq_reset(): positions, tables, all
 * but the journal's slot) and set up again from the stale base a frontend
 * sends after losing its backend, as QEMU does: the base of the ring's
 * last start.  Without a journal that base breaks the ring (test_base in
 * packed_unit.c); with one the ring goes on where it was, and the chains
 * the dead process held come back used, with length 0, exactly once.
 */
#include "journal.h"
#include "packed_unit.h"

#define STALE 0x80008000u /* the base of the first start */

/*
 * The slot's layout (journal.c), in 16-bit words: what a process killed
 * in the middle of a step leaves is written here by hand.
 */
#define W_FE_BASE 6 /* 32 bits */
#define W_AVAIL 16
#define W_USED 17
#define W_PUSH_FIRST 18
#define W_PUSH_AFTER 19
#define W_PUSH_N 20 /* 32 bits */
#define W_LEN 2048  /* per id */
#define W_HEAD (W_LEN + VHOST_VQ_MAX_SIZE)
#define W_PUSH_IDS (W_LEN + 2 * VHOST_VQ_MAX_SIZE)

static void *slot;
static int restart_pid; /* the frontend a restarted ring is served to */

static bool jr_attach(struct env *e)
{
	slot = mmap(NULL, VHOST_VQ_JOURNAL_SIZE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(slot != MAP_FAILED, "journal slot"))
		return false;
	/* the ring as the first process starts it: the frontend's base */
	vhost_vq_stop(&e->vq);
	vhost_vq_set_journal(&e->vq, slot);
	vhost_vq_set_base(&e->vq, STALE, true);
	return ASSERT_OK(vhost_vq_start(&e->vq, F_PK), "start with a journal");
}

static uint16_t *jw(unsigned int word)
{
	return (uint16_t *)slot + word;
}

/* a push of ID from the used position to AFTER, recorded, not done */
static void push_recorded(uint16_t id, uint16_t after)
{
	*jw(W_PUSH_IDS) = id;
	*jw(W_PUSH_FIRST) = *jw(W_USED);
	*jw(W_PUSH_AFTER) = after;
	*(uint32_t *)jw(W_PUSH_N) = 1;
}

static void jr_detach(void)
{
	if (slot && slot != MAP_FAILED)
		munmap(slot, VHOST_VQ_JOURNAL_SIZE);
	slot = NULL;
}

/* E cleaned up and its journal detached: the end of a journal case */
static void jr_env_end(struct env *e)
{
	env_cleanup(e);
	jr_detach();
}

/* The process serving the ring ends; a new one starts it at BASE. */
static bool crash_restart(struct env *e, uint32_t base, bool journal)
{
	uint16_t num = e->vq.num;

	vhost_vq_stop(&e->vq);
	vhost_vq_reset(&e->vq); /* closes the eventfds it was given */
	if (!journal)
		vhost_vq_set_journal(&e->vq, NULL);
	e->vq.frontend_pid = restart_pid;
	e->vq.num = num;
	e->vq.desc_uva = UVA_BASE + DESC_GPA;
	e->vq.avail_uva = UVA_BASE + DRIVER_GPA;
	e->vq.used_uva = UVA_BASE + DEVICE_GPA;
	e->vq.addr_set = e->vq.kick_set = e->vq.enabled = true;
	e->vq.err_fd = dup(e->err_fd);
	e->vq.call_fd = dup(e->call_fd);
	efd_read(e->call_fd);
	broken_lines = 0;
	vhost_vq_set_base(&e->vq, base, true);
	return ASSERT_OK(vhost_vq_start(&e->vq, F_PK), "started again");
}

/*
 * Four chains made available (ids 0..3, id 1 of two descriptors), popped;
 * 0 and 2 pushed (out of order) and read by the driver: 1 and 3 in flight,
 * avail at 5, used at 2.
 */
static bool four_in(struct env *e)
{
	struct seg s[2] = { { BUF_GPA, 64, true }, { BUF_GPA + 64, 64, true } };
	uint16_t id;
	uint32_t len;

	drv_add(&e->d, 0, s, 1, 0);
	drv_add(&e->d, 1, s, 2, 0);
	drv_add(&e->d, 2, s, 1, 0);
	drv_add(&e->d, 3, s, 1, 0);
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e->vq, elems, 8), 4, "four popped"))
		return false;
	ASSERT_OK(vhost_vq_push(&e->vq, 0, 10), "push 0");
	ASSERT_OK(vhost_vq_push(&e->vq, 2, 12), "push 2");
	ASSERT_EQ(drv_used(&e->d, &id, &len), 1, "used");
	ASSERT_EQ(id, 0, "0 first");
	ASSERT_EQ(drv_used(&e->d, &id, &len), 1, "used");
	ASSERT_EQ(id, 2, "then 2");
	return !test_state.failed;
}

/* The driver reads ids WANT[0 .. n) with length 0, then nothing more. */
static void given_back(struct env *e, const uint16_t *want, unsigned int n)
{
	unsigned int i;
	uint16_t id;
	uint32_t len;

	for (i = 0; i < n; i++) {
		if (!ASSERT_EQ(drv_used(&e->d, &id, &len), 1, "given back"))
			return;
		ASSERT_EQ(id, want[i], "the id in flight");
		ASSERT_EQ(len, 0, "empty");
	}
	ASSERT_EQ(drv_used(&e->d, &id, &len), 0, "nothing given back twice");
}

/* ... and the ring serves on: a new chain is popped where it was made. */
static void serves_on(struct env *e, uint16_t id)
{
	struct seg s = { BUF_GPA, 64, true };
	uint32_t len;
	uint16_t got;

	drv_add(&e->d, id, &s, 1, 0);
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e->vq, elems, 8), 1, "the next chain"))
		return;
	ASSERT_EQ(elems[0].head, id, "its id");
	ASSERT_OK(vhost_vq_push(&e->vq, id, 5), "push");
	ASSERT_EQ(drv_used(&e->d, &got, &len), 1, "used");
	ASSERT_EQ(got, id, "that one");
	ASSERT_EQ(len, 5, "its length");
}

/*
 * E serving (WHAT) from BASE (AT: its name) after a restart, and on with
 * the chain of id N (serves_on)
 */
static void serving_at(struct env *e, const char *what, uint32_t base,
		       const char *at, uint16_t n)
{
	ASSERT_FALSE(vhost_vq_broken(&e->vq), what);
	ASSERT_EQ(vhost_vq_base(&e->vq, true), base, at);
	serves_on(e, n);
}

static void test_resume(void)
{
	static const uint16_t back[] = { 1, 3 };
	struct env e;

	/* without a journal the stale base breaks the ring */
	if (!env_setup(&e, 8, F_PK, STALE) || !four_in(&e) ||
	    !crash_restart(&e, STALE, false))
		goto out;
	ASSERT_TRUE(vhost_vq_broken(&e.vq), "no journal: stale base, broken");
	env_cleanup(&e);

	if (!env_setup(&e, 8, F_PK, STALE) || !jr_attach(&e) || !four_in(&e) ||
	    !crash_restart(&e, STALE, true))
		goto out;
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "journal: serving");
	ASSERT_EQ(broken_lines, 0, "nothing broken");
	ASSERT_EQ(vhost_vq_base(&e.vq, true), 0x80058005u,
		  "avail and used at 5: the two in flight given back");
	ASSERT_EQ(efd_read(e.call_fd), 1, "a call for them");
	given_back(&e, back, 2);
	serves_on(&e, 4);

	/* and again: the journal followed the new process */
	if (!crash_restart(&e, STALE, true))
		goto out;
	serving_at(&e, "second crash: serving", 0x80068006u, "at 6", 5);
out:
	jr_env_end(&e);
}

/* E with its journal, chains 0 and 1 added and popped */
static bool two_popped(struct env *e)
{
	struct seg s = { BUF_GPA, 64, true };

	if (!env_setup(e, 8, F_PK, STALE) || !jr_attach(e))
		return false;
	drv_add(&e->d, 0, &s, 1, 0);
	drv_add(&e->d, 1, &s, 1, 0);
	return ASSERT_EQ(vhost_vq_pop_burst(&e->vq, elems, 8), 2, "two popped");
}

/* A crash inside a push: before the used entries were written, and after. */
static void test_torn_push(void)
{
	static const uint16_t both[] = { 0, 1 }, one[] = { 1 };
	struct env e;
	uint16_t id;
	uint32_t len;

	if (!two_popped(&e))
		goto out;
	/* the push's record written, then the process died */
	push_recorded(0, 0x8001);
	if (!crash_restart(&e, STALE, true))
		goto out;
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "serving");
	given_back(&e, both, 2);
	serves_on(&e, 2);
	jr_env_end(&e);

	if (!two_popped(&e))
		goto out;
	/* the record and the used entry written, then the process died */
	ASSERT_OK(vhost_vq_push(&e.vq, 0, 10), "the used entry");
	*jw(W_USED) = 0x8000;
	*jw(W_LEN + 0) = 1;
	push_recorded(0, 0x8001);
	if (!crash_restart(&e, STALE, true))
		goto out;
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "serving");
	ASSERT_EQ(drv_used(&e.d, &id, &len), 1, "the push that landed");
	ASSERT_EQ(id, 0, "id 0");
	ASSERT_EQ(len, 10, "with its length: not given back again");
	given_back(&e, one, 1);
	serves_on(&e, 2);
out:
	jr_env_end(&e);
}

/*
 * A crash inside a pop (the id's record written, not the avail position)
 * and after a rewind: those chains are still available, taken once, by
 * the next process.
 */
static void test_torn_pop(void)
{
	struct seg s = { BUF_GPA, 64, true };
	struct env e;

	if (!env_setup(&e, 8, F_PK, STALE) || !jr_attach(&e))
		goto out;
	drv_add(&e.d, 0, &s, 1, 0);
	drv_add(&e.d, 1, &s, 1, 0);
	drv_add(&e.d, 2, &s, 1, 0);
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 2), 2, "two popped"))
		goto out;
	vhost_vq_rewind(&e.vq, 1); /* 1 given back untouched */
	/* 1 popped again: its record written, not the avail position */
	*jw(W_LEN + 1) = 1;
	*jw(W_HEAD + 1) = 0x8001;
	if (!crash_restart(&e, STALE, true))
		goto out;
	ASSERT_FALSE(vhost_vq_broken(&e.vq), "serving");
	given_back(&e, (const uint16_t[]){ 0 }, 1);
	if (!ASSERT_EQ(vhost_vq_pop_burst(&e.vq, elems, 8), 2, "1 and 2, once"))
		goto out;
	ASSERT_EQ(elems[0].head, 1, "1");
	ASSERT_EQ(elems[1].head, 2, "2");
out:
	jr_env_end(&e);
}

/*
 * Which base counts: another frontend's journal is not used; a base the
 * frontend got from GET_VRING_BASE is its own; a base equal to the
 * journal's positions (a hand-over) goes on and keeps the frontend's.
 */
static void test_whose(void)
{
	struct env e;
	uint32_t base;

	if (!env_setup(&e, 8, F_PK, STALE) || !jr_attach(&e) || !four_in(&e))
		goto out;
	restart_pid = 4242;
	if (!crash_restart(&e, STALE, true))
		goto out;
	restart_pid = 0;
	ASSERT_TRUE(vhost_vq_broken(&e.vq), "another frontend's journal: not used");
	jr_env_end(&e);

	/* GET_VRING_BASE: the frontend knows; its base is right again */
	if (!env_setup(&e, 8, F_PK, STALE) || !jr_attach(&e))
		goto out;
	serves_on(&e, 0);
	vhost_vq_stop(&e.vq);
	base = vhost_vq_base(&e.vq, true);
	/* what GET_VRING_BASE tells the journal (handlers.c) */
	*jw(W_AVAIL) = base & 0xffff;
	*jw(W_USED) = base >> 16;
	*(uint32_t *)jw(W_FE_BASE) = base;
	if (!crash_restart(&e, base, true))
		goto out;
	ASSERT_EQ(vhost_vq_base(&e.vq, true), 0x80018001u, "at the told base");
	serves_on(&e, 1);
	/* a hand-over: the new process gets the positions, then crashes */
	base = vhost_vq_base(&e.vq, true);
	if (!crash_restart(&e, base, true))
		goto out;
	serves_on(&e, 2);
	if (!crash_restart(&e, 0x80018001u, true))
		goto out;
	serving_at(&e, "after the hand-over: the frontend's base still counts",
		   0x80038003u, "at 3", 3);
out:
	jr_env_end(&e);
}

/* A journal that does not add up is not used, and says why. */
static void test_hostile_journal(void)
{
	static const struct {
		unsigned int off; /* 16-bit word in the slot */
		uint16_t v;
		const char *what;
	} bad[] = {
		{ W_LEN + 1, 3, "id 1 longer than the positions say" },
		{ W_LEN + 3, 999, "id 3: more descriptors than the ring" },
		{ W_AVAIL, 0x7777, "avail position outside the ring" },
		{ W_PUSH_N, 9, "a push of 9 entries on a ring of 8" },
	};
	unsigned int i;
	struct env e;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!env_setup(&e, 8, F_PK, STALE) || !jr_attach(&e) ||
		    !four_in(&e))
			goto out;
		((uint16_t *)slot)[bad[i].off] = bad[i].v;
		if (!crash_restart(&e, STALE, true))
			goto out;
		/* the frontend's stale base, then: the ring breaks */
		ASSERT_TRUE(vhost_vq_broken(&e.vq), bad[i].what);
		jr_env_end(&e);
	}
out:
	jr_env_end(&e);
}

VNET_TEST("packed/journal/resume", test_resume);
VNET_TEST("packed/journal/torn_push", test_torn_push);
VNET_TEST("packed/journal/torn_pop", test_torn_pop);
VNET_TEST("packed/journal/whose", test_whose);
VNET_TEST("packed/journal/hostile", test_hostile_journal);
