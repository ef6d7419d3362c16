// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vhost_unit: guest memory */
#include "vhost_unit.h"

/* ======================================================================= */
/* guest memory                                                             */
/* ======================================================================= */

/* VHOST_USER_ADD_MEM_REG of R on T's memfd: the reply's status */
static int add_mem_reg(struct tdev *t, const struct vhost_user_mem_reg *r)
{
	return fe_ack(t, VHOST_USER_ADD_MEM_REG, r, sizeof(*r), &t->memfd, 1);
}

void test_mem_add_remove(void)
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
	ASSERT_EQ(add_mem_reg(&t, &r1), 0, "ADD_MEM_REG 1");
	ASSERT_EQ(add_mem_reg(&t, &r0), 0, "ADD_MEM_REG 0");
	ASSERT_EQ(t.dev.mem.nregions, 2, "2 regions");
	ASSERT_EQ(t.dev.mem.regions[0].gpa, 0, "sorted by gpa");
	/* overlapping */
	bad.region = (struct vhost_mem_region_desc){ 0xf000, 0x2000,
						     UVA_BASE + 0x40000, 0 };
	ASSERT_EQ(add_mem_reg(&t, &bad), 1, "overlap refused");

	/*
	 * The very same region again (QEMU 7.2 sends one ADD_MEM_REG per
	 * queue pair): counted, not refused; it stays mapped until removed
	 * as often as it was added.
	 */
	ASSERT_EQ(add_mem_reg(&t, &r1), 0, "duplicate ADD_MEM_REG accepted");
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

void test_mem_validation(void)
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

void test_mem_set_table(void)
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

void test_mem_dirty_log(void)
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

/*
 * A region whose fd the frontend truncated after it was mapped (fault.h):
 * an access under a recovery point jumps back with the address, and again
 * the next time (SIGBUS stays unblocked); without one, in a mapping that is
 * no region, or for a SIGBUS sent with kill(), the process dies of SIGBUS
 * as it would without the handler.  Each case runs in a child.
 */
enum fault_case { FC_GUARDED, FC_UNGUARDED, FC_OTHER_MAP, FC_SENT };

static int fault_child(enum fault_case c)
{
	struct vhost_mem_region_desc d = { 0x100000, 0x4000, UVA_BASE, 0 };
	struct rlimit nocore = { 0, 0 };
	volatile uint8_t *p, *other;
	struct vhost_mem mem;
	struct vhost_fault f;
	volatile int i;
	char why[200];
	int fd, keep, ofd;

	setrlimit(RLIMIT_CORE, &nocore);
	fd = memfd_create("fault", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0x4000))
		return 10;
	keep = dup(fd);
	vhost_mem_init(&mem);
	if (keep < 0 || vhost_mem_set_table(&mem, &d, &fd, 1))
		return 11;
	p = vhost_mem_gpa_to_host(&mem, 0x102000, 1);
	if (!p || ftruncate(keep, 0x1000) || vhost_fault_init())
		return 12;
	switch (c) {
	case FC_GUARDED:
		for (i = 0; i < 2; i++) {
			if (vhost_fault_try(&f, &mem)) {
				(void)p[0];
				vhost_fault_end(&f);
				return 13; /* no fault */
			}
			if (f.addr != (uintptr_t)p)
				return 14;
			vhost_fault_describe(&f, why, sizeof(why));
			if (!strstr(why, "GPA 0x102000") ||
			    !strstr(why, "no longer backed"))
				return 15;
		}
		vhost_mem_cleanup(&mem);
		return 0;
	case FC_UNGUARDED:
		(void)p[0];
		return 20;
	case FC_OTHER_MAP:
		ofd = memfd_create("other", MFD_CLOEXEC);
		if (ofd < 0 || ftruncate(ofd, 0x2000))
			return 30;
		other = mmap(NULL, 0x2000, PROT_READ, MAP_SHARED, ofd, 0);
		if (other == MAP_FAILED || ftruncate(ofd, 0))
			return 31;
		if (vhost_fault_try(&f, &mem)) {
			(void)other[0];
			vhost_fault_end(&f);
			return 32;
		}
		return 33; /* jumped back for memory that is no region */
	case FC_SENT:
		if (vhost_fault_try(&f, &mem)) {
			kill(getpid(), SIGBUS);
			vhost_fault_end(&f);
			return 40;
		}
		return 41;
	}
	return 1;
}

void test_mem_fault(void)
{
	static const char *const names[] = {
		"guarded access, twice", "no recovery point",
		"a mapping that is no region", "SIGBUS sent with kill()",
	};
	unsigned int c;
	int st;
	pid_t pid;

	for (c = FC_GUARDED; c <= FC_SENT; c++) {
		pid = fork();
		if (!ASSERT_GE(pid, 0, "fork"))
			return;
		if (!pid)
			_exit(fault_child((enum fault_case)c));
		if (!ASSERT_EQ(waitpid(pid, &st, 0), pid, "waitpid"))
			return;
		if (c == FC_GUARDED)
			ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st), names[c]);
		else
			ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS,
				    names[c]);
	}
}
