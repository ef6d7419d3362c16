// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Guest memory table and dirty log (see mem.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "log.h"
#include "mem.h"

void vhost_mem_init(struct vhost_mem *mem)
{
	memset(mem, 0, sizeof(*mem));
	mem->log_fd = -1;
}

static void region_unmap(struct vhost_mem_region *r)
{
	if (r->map_addr)
		munmap(r->map_addr, r->map_len);
	if (r->has_fd)
		close(r->fd);
	memset(r, 0, sizeof(*r));
}

void vhost_mem_cleanup(struct vhost_mem *mem)
{
	unsigned int i;

	for (i = 0; i < mem->nregions; i++)
		region_unmap(&mem->regions[i]);
	mem->nregions = 0;
	vhost_mem_clear_log(mem);
}

/*
 * Length to give mmap() for [0, len) of FD.  hugetlbfs refuses munmap() of
 * a length that is not a multiple of its page size (st_blksize there), so
 * round up to it; for everything else st_blksize is the base page size or
 * irrelevant.  It also checks that a regular file (memfd, tmpfs,
 * hugetlbfs) really is that long: touching a mapping past EOF raises
 * SIGBUS, and the frontend must not be able to kill us that way (it can
 * still shrink the file later; see docs/vhost-user.md).
 */
static int map_len_for(int fd, uint64_t len, size_t *out)
{
	uint64_t align = (uint64_t)sysconf(_SC_PAGESIZE);
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < len) {
		vhost_err("mem: fd is %llu bytes, the region needs %llu",
			  (unsigned long long)st.st_size,
			  (unsigned long long)len);
		return -EINVAL;
	}
	if (st.st_blksize > 0 && (uint64_t)st.st_blksize > align &&
	    !((uint64_t)st.st_blksize & ((uint64_t)st.st_blksize - 1)))
		align = (uint64_t)st.st_blksize;
	if (len > UINT64_MAX - (align - 1))
		return -EINVAL;
	len = (len + align - 1) & ~(align - 1);
	if (len > SIZE_MAX)
		return -EINVAL;
	*out = (size_t)len;
	return 0;
}

/* Check D and mmap it into R, which keeps FD (on success only). */
static int region_map(struct vhost_mem_region *r,
		      const struct vhost_mem_region_desc *d, int fd)
{
	uint64_t size = d->memory_size, off = d->mmap_offset;
	size_t map_len = 0;
	void *addr;
	int ret;

	if (fd < 0)
		return -EBADF;
	if (!size || size - 1 > UINT64_MAX - d->guest_phys_addr ||
	    size - 1 > UINT64_MAX - d->userspace_addr ||
	    size > UINT64_MAX - off) {
		vhost_err("mem: bad region gpa 0x%llx size 0x%llx uva 0x%llx offset 0x%llx",
			  (unsigned long long)d->guest_phys_addr,
			  (unsigned long long)size,
			  (unsigned long long)d->userspace_addr,
			  (unsigned long long)off);
		return -EINVAL;
	}
	ret = map_len_for(fd, off + size, &map_len);
	if (ret)
		return ret;
	/*
	 * Map from offset 0 and add mmap_offset ourselves: the offset need not
	 * be page aligned, and this is what QEMU's own backends do.
	 */
	addr = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (addr == MAP_FAILED) {
		ret = -errno;
		vhost_err("mem: mmap of %zu bytes: %s", map_len, strerror(errno));
		return ret;
	}
	r->gpa = d->guest_phys_addr;
	r->size = size;
	r->uva = d->userspace_addr;
	r->mmap_offset = off;
	r->map_addr = addr;
	r->map_len = map_len;
	r->host = (uint8_t *)addr + off;
	r->refs = 1;
	r->fd = fd;
	r->has_fd = true;
	return 0;
}

/* Last byte, inclusive, so that a region ending at 2^64 does not wrap. */
static inline uint64_t region_last(const struct vhost_mem_region *r)
{
	return r->gpa + (r->size - 1);
}

static bool overlaps(const struct vhost_mem_region *a,
		     const struct vhost_mem_region *b)
{
	return a->gpa <= region_last(b) && b->gpa <= region_last(a);
}

/* Insert R into the sorted array of N regions at A; room was checked. */
static void insert_sorted(struct vhost_mem_region *a, unsigned int n,
			  const struct vhost_mem_region *r)
{
	unsigned int i = n;

	while (i > 0 && a[i - 1].gpa > r->gpa) {
		a[i] = a[i - 1];
		i--;
	}
	a[i] = *r;
}

int vhost_mem_add(struct vhost_mem *mem, const struct vhost_mem_region_desc *d,
		  int fd)
{
	struct vhost_mem_region r = {};
	unsigned int i;
	int ret;

	for (i = 0; i < mem->nregions; i++) {
		struct vhost_mem_region *e = &mem->regions[i];

		if (e->gpa == d->guest_phys_addr && e->size == d->memory_size &&
		    e->uva == d->userspace_addr &&
		    e->mmap_offset == d->mmap_offset) {
			e->refs++;
			vhost_dbg("mem: region gpa 0x%llx size 0x%llx added again (%u)",
				  (unsigned long long)e->gpa,
				  (unsigned long long)e->size, e->refs);
			ret = 0;
			goto out_close;
		}
	}
	if (mem->nregions >= VHOST_MEM_MAX_REGIONS) {
		vhost_err("mem: all %u memory slots are used",
			  VHOST_MEM_MAX_REGIONS);
		ret = -ENOSPC;
		goto out_close;
	}
	ret = region_map(&r, d, fd);
	if (ret)
		goto out_close;
	for (i = 0; i < mem->nregions; i++) {
		if (overlaps(&r, &mem->regions[i])) {
			vhost_err("mem: region gpa 0x%llx size 0x%llx overlaps gpa 0x%llx size 0x%llx",
				  (unsigned long long)r.gpa,
				  (unsigned long long)r.size,
				  (unsigned long long)mem->regions[i].gpa,
				  (unsigned long long)mem->regions[i].size);
			ret = -EEXIST;
			goto out_unmap;
		}
	}
	insert_sorted(mem->regions, mem->nregions, &r);
	mem->nregions++;
	return 0;

out_unmap:
	region_unmap(&r); /* closes fd */
	return ret;
out_close:
	if (fd >= 0)
		close(fd);
	return ret;
}

int vhost_mem_remove(struct vhost_mem *mem,
		     const struct vhost_mem_region_desc *d)
{
	unsigned int i;

	for (i = 0; i < mem->nregions; i++) {
		struct vhost_mem_region *r = &mem->regions[i];

		/* the spec identifies it by gpa, uva and size; not the offset */
		if (r->gpa != d->guest_phys_addr || r->size != d->memory_size ||
		    r->uva != d->userspace_addr)
			continue;
		if (r->refs > 1) {
			r->refs--;
			return 0;
		}
		region_unmap(r);
		memmove(r, r + 1, (mem->nregions - i - 1) * sizeof(*r));
		mem->nregions--;
		memset(&mem->regions[mem->nregions], 0, sizeof(*r));
		return 0;
	}
	vhost_err("mem: no region gpa 0x%llx size 0x%llx uva 0x%llx to remove",
		  (unsigned long long)d->guest_phys_addr,
		  (unsigned long long)d->memory_size,
		  (unsigned long long)d->userspace_addr);
	return -ENOENT;
}

int vhost_mem_set_table(struct vhost_mem *mem,
			const struct vhost_mem_region_desc *d, const int *fds,
			unsigned int n)
{
	struct vhost_mem_region fresh[VHOST_MEM_MAX_REGIONS];
	bool used[VHOST_MEM_MAX_REGIONS] = {}; /* fds[i] is a region's now */
	unsigned int i, j, mapped = 0;
	int ret = 0;

	if (n > VHOST_MEM_MAX_REGIONS) {
		for (i = 0; i < n; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return -E2BIG;
	}
	memset(fresh, 0, sizeof(fresh));
	for (i = 0; i < n; i++) {
		struct vhost_mem_region r = {};

		ret = region_map(&r, &d[i], fds[i]);
		if (ret)
			goto out_unmap;
		used[i] = true;
		for (j = 0; j < mapped; j++) {
			if (overlaps(&r, &fresh[j])) {
				vhost_err("mem: table regions %u and %u overlap",
					  i, j);
				region_unmap(&r);
				ret = -EEXIST;
				goto out_unmap;
			}
		}
		insert_sorted(fresh, mapped, &r);
		mapped++;
	}
	/* only now that everything is mapped may the old table go */
	for (i = 0; i < mem->nregions; i++)
		region_unmap(&mem->regions[i]);
	memcpy(mem->regions, fresh, sizeof(fresh));
	mem->nregions = mapped;
	goto out_close;

out_unmap:
	/* the regions close the fds they took, the rest is closed below */
	for (j = 0; j < mapped; j++)
		region_unmap(&fresh[j]);
out_close:
	for (i = 0; i < n; i++)
		if (fds[i] >= 0 && !used[i])
			close(fds[i]);
	return ret;
}

/*
 * Region containing ADDR in the gpa (or uva) space.  A linear scan: guests
 * have a handful of regions (QEMU: usually 1-3), which beats a tree.
 */
static const struct vhost_mem_region *find_gpa(const struct vhost_mem *mem,
					       uint64_t gpa)
{
	unsigned int i;

	for (i = 0; i < mem->nregions; i++) {
		const struct vhost_mem_region *r = &mem->regions[i];

		if (gpa >= r->gpa && gpa - r->gpa < r->size)
			return r;
	}
	return NULL;
}

static const struct vhost_mem_region *find_uva(const struct vhost_mem *mem,
					       uint64_t uva)
{
	unsigned int i;

	for (i = 0; i < mem->nregions; i++) {
		const struct vhost_mem_region *r = &mem->regions[i];

		if (uva >= r->uva && uva - r->uva < r->size)
			return r;
	}
	return NULL;
}

void *vhost_mem_gpa_to_host(const struct vhost_mem *mem, uint64_t gpa,
			    uint64_t len)
{
	const struct vhost_mem_region *r = find_gpa(mem, gpa);
	uint64_t off;

	if (!r)
		return NULL;
	off = gpa - r->gpa;
	/* off < size, so this cannot wrap */
	if (len > r->size - off)
		return NULL;
	return r->host + off;
}

void *vhost_mem_uva_to_host(const struct vhost_mem *mem, uint64_t uva,
			    uint64_t len)
{
	const struct vhost_mem_region *r = find_uva(mem, uva);
	uint64_t off;

	if (!r)
		return NULL;
	off = uva - r->uva;
	if (len > r->size - off)
		return NULL;
	return r->host + off;
}

int vhost_mem_uva_to_gpa(const struct vhost_mem *mem, uint64_t uva,
			 uint64_t *gpa)
{
	const struct vhost_mem_region *r = find_uva(mem, uva);

	if (!r)
		return -EFAULT;
	*gpa = r->gpa + (uva - r->uva);
	return 0;
}

int vhost_mem_gpa_to_iov(const struct vhost_mem *mem, uint64_t gpa,
			 uint64_t len, struct iovec *iov, uint64_t *gpas,
			 unsigned int max)
{
	unsigned int n = 0;

	while (len) {
		const struct vhost_mem_region *r = find_gpa(mem, gpa);
		uint64_t off, chunk;

		if (!r)
			return -EFAULT;
		if (n == max)
			return -ENOBUFS;
		off = gpa - r->gpa;
		chunk = r->size - off;
		if (chunk > len)
			chunk = len;
		iov[n].iov_base = r->host + off;
		iov[n].iov_len = chunk;
		if (gpas)
			gpas[n] = gpa;
		n++;
		len -= chunk;
		if (len && region_last(r) == UINT64_MAX)
			return -EFAULT; /* would wrap around to gpa 0 */
		gpa += chunk;
	}
	return (int)n;
}

bool vhost_mem_range_ok(const struct vhost_mem *mem, uint64_t gpa,
			uint64_t len)
{
	while (len) {
		const struct vhost_mem_region *r = find_gpa(mem, gpa);
		uint64_t chunk;

		if (!r)
			return false;
		chunk = r->size - (gpa - r->gpa);
		if (chunk >= len)
			return true;
		if (region_last(r) == UINT64_MAX)
			return false; /* would wrap around to gpa 0 */
		len -= chunk;
		gpa += chunk;
	}
	return true;
}

int vhost_mem_read(const struct vhost_mem *mem, uint64_t gpa, void *buf,
		   size_t len)
{
	uint8_t *dst = buf;

	while (len) {
		const struct vhost_mem_region *r = find_gpa(mem, gpa);
		uint64_t off, chunk;

		if (!r)
			return -EFAULT;
		off = gpa - r->gpa;
		chunk = r->size - off;
		if (chunk > len)
			chunk = len;
		memcpy(dst, r->host + off, chunk);
		dst += chunk;
		len -= chunk;
		if (len && region_last(r) == UINT64_MAX)
			return -EFAULT; /* would wrap around to gpa 0 */
		gpa += chunk;
	}
	return 0;
}

void vhost_mem_clear_log(struct vhost_mem *mem)
{
	if (mem->log_map)
		munmap(mem->log_map, mem->log_map_len);
	if (mem->log_fd >= 0)
		close(mem->log_fd);
	mem->log = NULL;
	mem->log_size = 0;
	mem->log_offset = 0;
	mem->log_fd = -1;
	mem->log_map = NULL;
	mem->log_map_len = 0;
}

int vhost_mem_set_log(struct vhost_mem *mem, int fd, uint64_t size,
		      uint64_t offset)
{
	size_t map_len = 0;
	void *addr;
	int ret;

	if (fd < 0)
		return -EBADF;
	if (!size || size > UINT64_MAX - offset) {
		ret = -EINVAL;
		goto out_close;
	}
	ret = map_len_for(fd, offset + size, &map_len);
	if (ret)
		goto out_close;
	addr = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (addr == MAP_FAILED) {
		ret = -errno;
		vhost_err("mem: mmap of the %zu byte dirty log: %s", map_len,
			  strerror(errno));
		goto out_close;
	}
	vhost_mem_clear_log(mem);
	mem->log_map = addr;
	mem->log_map_len = map_len;
	mem->log = (uint8_t *)addr + offset;
	mem->log_size = size;
	mem->log_offset = offset;
	mem->log_fd = fd; /* kept: a hand-over sends it on */
	return 0;
out_close:
	close(fd);
	return ret;
}

#ifdef VNET_TESTING
static bool log_disabled_for_test;

void vhost_mem_log_disable_for_test(void)
{
	log_disabled_for_test = true;
}
#else
#define log_disabled_for_test false
#endif

void vhost_mem_log_write(const struct vhost_mem *mem, uint64_t gpa,
			 uint64_t len)
{
	uint64_t page, last;

	if (!mem->log || !len || log_disabled_for_test)
		return;
	page = gpa / VHOST_LOG_PAGE;
	/* last byte written, computed so that it cannot wrap */
	if (len - 1 > UINT64_MAX - gpa)
		last = UINT64_MAX / VHOST_LOG_PAGE;
	else
		last = (gpa + (len - 1)) / VHOST_LOG_PAGE;
	for (; page <= last; page++) {
		uint64_t byte = page / 8;

		if (byte >= mem->log_size)
			break;
		/*
		 * QEMU clears bits of this bitmap concurrently while it
		 * syncs: a plain read-modify-write could lose its clear or our
		 * set, so OR atomically.
		 */
		__atomic_fetch_or(&mem->log[byte], (uint8_t)(1u << (page % 8)),
				  __ATOMIC_RELAXED);
	}
}

void vhost_mem_drop_pages(const struct vhost_mem *mem)
{
	unsigned int i;

	/* always MAP_SHARED (above): nothing of the guest's is lost */
	for (i = 0; i < mem->nregions; i++)
		if (mem->regions[i].map_addr)
			madvise(mem->regions[i].map_addr,
				mem->regions[i].map_len, MADV_DONTNEED);
}
