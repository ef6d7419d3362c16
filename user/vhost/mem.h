/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Guest memory as the vhost-user frontend shares it: up to
 * VHOST_MEM_MAX_REGIONS regions, each a file descriptor mapped MAP_SHARED,
 * known by its guest physical address (what descriptors carry) and by its
 * address in the frontend's own process (what SET_VRING_ADDR carries).
 *
 * Every translation is bounds checked: a range is accepted only if it lies
 * entirely inside one region (or, for the iovec variant, inside adjacent
 * regions), with arithmetic that cannot wrap.  The guest writes descriptors,
 * so every address here is hostile input.
 *
 * Concurrency: the table is read without locks by the queue threads; it is
 * changed only by the protocol thread while every queue of the device is
 * stopped (see vhost_user.c, vhost_dev_pause()).  The dirty log is written
 * by the queue threads with atomic byte ORs.
 */
#ifndef VNET_VHOST_MEM_H
#define VNET_VHOST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* GET_MAX_MEM_SLOTS answers this. */
#define VHOST_MEM_MAX_REGIONS 32
/* Dirty log granule: one bit per 4 KiB page of guest physical memory. */
#define VHOST_LOG_PAGE 4096ULL

/* A region as the frontend describes it: the vhost-user wire layout. */
struct vhost_mem_region_desc {
	uint64_t guest_phys_addr;
	uint64_t memory_size;
	uint64_t userspace_addr; /* frontend virtual address */
	uint64_t mmap_offset;	 /* where the region starts in the fd */
};

_Static_assert(sizeof(struct vhost_mem_region_desc) == 32,
	       "vhost-user memory region is 4 x u64");

struct vhost_mem_region {
	uint64_t gpa;
	uint64_t size;
	uint64_t uva;
	uint64_t mmap_offset;
	uint8_t *host;	/* gpa maps to host, uva maps to host */
	void *map_addr; /* the mmap() as made, for munmap() */
	size_t map_len;
	/*
	 * ADD_MEM_REGs of this very region (gpa, size, uva): QEMU 7.2 keeps
	 * one vhost device per queue pair on one connection and each adds
	 * (and later removes) the same regions; QEMU >= 8.0 sends them once.
	 */
	unsigned int refs;
	/* the frontend's fd of the region, kept (a hand-over sends it on) */
	int fd;
	bool has_fd;
};

struct vhost_mem {
	unsigned int nregions;
	/* sorted by gpa, non-overlapping */
	struct vhost_mem_region regions[VHOST_MEM_MAX_REGIONS];

	/* dirty log (SET_LOG_BASE): bit N = guest page N written */
	uint8_t *log;
	uint64_t log_size; /* bytes of bitmap at log */
	void *log_map;
	size_t log_map_len;
	uint64_t log_offset; /* where the bitmap starts in log_fd */
	int log_fd;	     /* the frontend's fd of it, kept; -1: none */
};

void vhost_mem_init(struct vhost_mem *mem);
/* Unmap every region and the log. */
void vhost_mem_cleanup(struct vhost_mem *mem);

/*
 * ADD_MEM_REG: map FD (always consumed: closed whatever the outcome) and
 * insert the region.  -EINVAL for an empty, wrapping or too small region,
 * -EEXIST if it overlaps one already there (other than the very same region,
 * which is counted again), -ENOSPC when all slots are used.
 */
int vhost_mem_add(struct vhost_mem *mem, const struct vhost_mem_region_desc *d,
		  int fd);
/* REM_MEM_REG: unmap the region with D's gpa, uva and size (-ENOENT). */
int vhost_mem_remove(struct vhost_mem *mem,
		     const struct vhost_mem_region_desc *d);
/*
 * SET_MEM_TABLE: replace the whole table with N regions.  All FDS are
 * consumed.  The new regions are mapped before the old ones are unmapped,
 * so on error the old table is left as it was.
 */
int vhost_mem_set_table(struct vhost_mem *mem,
			const struct vhost_mem_region_desc *d, const int *fds,
			unsigned int n);

/* Host pointer to [gpa, gpa + len) if it lies inside one region, or NULL. */
void *vhost_mem_gpa_to_host(const struct vhost_mem *mem, uint64_t gpa,
			    uint64_t len);
/* The same for a frontend virtual address (vring addresses). */
void *vhost_mem_uva_to_host(const struct vhost_mem *mem, uint64_t uva,
			    uint64_t len);
/* The guest physical address of a frontend virtual address (or -EFAULT). */
int vhost_mem_uva_to_gpa(const struct vhost_mem *mem, uint64_t uva,
			 uint64_t *gpa);

/*
 * Host iovecs covering [gpa, gpa + len), which may span adjacent regions.
 * Fills at most MAX entries of IOV (and of GPAS, the guest address of each
 * entry, if not NULL).  Returns the count (0 for len 0), -EFAULT when a
 * byte of the range is not guest memory, -ENOBUFS when MAX is too small.
 */
int vhost_mem_gpa_to_iov(const struct vhost_mem *mem, uint64_t gpa,
			 uint64_t len, struct iovec *iov, uint64_t *gpas,
			 unsigned int max);

/* Every byte of [gpa, gpa + len) is guest memory (regions may be adjacent). */
bool vhost_mem_range_ok(const struct vhost_mem *mem, uint64_t gpa,
			uint64_t len);

/*
 * Drop this process's page table entries of every region (MADV_DONTNEED
 * on the shared mappings): the guest's memory stays as it is, no longer
 * counted in this process's RSS until it is touched again (a minor fault
 * per page).  Any thread; the table must not change meanwhile.
 */
void vhost_mem_drop_pages(const struct vhost_mem *mem);

/* Copy guest memory out, across regions; 0 or -EFAULT. */
int vhost_mem_read(const struct vhost_mem *mem, uint64_t gpa, void *buf,
		   size_t len);

/*
 * SET_LOG_BASE: map SIZE bytes of bitmap at OFFSET of FD (consumed) and
 * make it the dirty log, replacing (and unmapping) any previous one.
 */
int vhost_mem_set_log(struct vhost_mem *mem, int fd, uint64_t size,
		      uint64_t offset);
void vhost_mem_clear_log(struct vhost_mem *mem);

static inline bool vhost_mem_has_log(const struct vhost_mem *mem)
{
	return mem->log != NULL;
}

/*
 * Mark the pages of [gpa, gpa + len) dirty.  Pages past the end of the log
 * are ignored (the frontend sized it; a guest cannot make us write out of
 * it).  Safe from any thread.
 */
void vhost_mem_log_write(const struct vhost_mem *mem, uint64_t gpa,
			 uint64_t len);

#ifdef VNET_TESTING
/*
 * Test builds only (-DVNET_TESTING; not in the library vnetd ships): from
 * now on vhost_mem_log_write() writes nothing, while VHOST_F_LOG_ALL and
 * LOG_SHMFD are still offered.  A live migration then loses what the
 * backend wrote into guest memory during it; the migration test shows
 * that it does (vnetd's test build: VNETD_TEST_NO_DIRTY_LOG=1).
 */
void vhost_mem_log_disable_for_test(void);
#endif

#endif /* VNET_VHOST_MEM_H */
