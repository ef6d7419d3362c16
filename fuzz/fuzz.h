/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Shared pieces of the libFuzzer targets (docs/robustness.md, "Fuzzing"):
 * a cursor over the input, an assertion that aborts (libFuzzer saves the
 * input as a crash), and the census of the leak checks.
 *
 * Header only, one translation unit per target.
 */
#ifndef VNET_FUZZ_H
#define VNET_FUZZ_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The input, consumed front to back; reads past the end give zeros. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline bool fuzz_left(const struct fuzz_in *in)
{
	return in->n > 0;
}

static inline void fuzz_bytes(struct fuzz_in *in, void *dst, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memcpy(dst, in->p, k);
	memset((uint8_t *)dst + k, 0, len - k);
	in->p += k;
	in->n -= k;
}

/* fuzz_u8() ... fuzz_u64(): the next whole number of the input (0 past it) */
#define FUZZ_UINT(bits)                                                        \
	static inline uint##bits##_t fuzz_u##bits(struct fuzz_in *in)          \
	{                                                                      \
		uint##bits##_t v;                                              \
                                                                               \
		fuzz_bytes(in, &v, sizeof(v));                                 \
		return v;                                                      \
	}
FUZZ_UINT(8)
FUZZ_UINT(16)
FUZZ_UINT(32)
FUZZ_UINT(64)

/*
 * What a target knows about the input that makes an oracle trip for a
 * reason already known (a bug being fixed elsewhere): printed first.
 */
static const char *fuzz_known __attribute__((unused)) = "";

/* A failed oracle: say what, then abort() so that libFuzzer keeps the input. */
#define FUZZ_ASSERT(cond, fmt, ...)                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "ORACLE: %s:%d: %s" fmt "\n",        \
				__FILE__, __LINE__, fuzz_known,             \
				##__VA_ARGS__);                             \
			abort();                                            \
		}                                                           \
	} while (0)

/*
 * Lines of /proc/self/maps; with MATCH, only the lines containing it (the
 * sanitizers' allocators map memory of their own while an input runs, so
 * a leak check of guest-memory mappings counts those by name).  The slow
 * way (the kernel formats every mapping, most of them the sanitizers'
 * anonymous ones): fuzz_census() uses it only where PROCMAP_QUERY is
 * missing.
 */
static inline int fuzz_count_maps(const char *match)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		abort();
	while (fgets(line, sizeof(line), f))
		if (!match || strstr(line, match))
			n++;
	fclose(f);
	return n;
}

/*
 * The leak census: which file descriptors are open (the set, from
 * /proc/self/fd) and how many mappings of memfds whose name contains a
 * string exist (the kernel's list of mappings).  Taken after every input
 * and compared with the one taken before the first: an input either
 * leaves both as they were or fails on its own.
 *
 * Both are read through descriptors opened once (part of every census):
 *  - /proc/self/fd, rewound: the same entries opendir() would list;
 *  - /proc/self/maps with the PROCMAP_QUERY ioctl (Linux 6.11): the
 *    file-backed mappings one by one, skipping the anonymous ones in the
 *    kernel; the name (what /proc/self/maps prints) is fetched for those
 *    on the memfds' device.  Without the ioctl, fuzz_count_maps().
 */
#define FUZZ_FD_SET 4096 /* fds below this are told apart, the rest counted */

struct fuzz_census {
	uint64_t fds[FUZZ_FD_SET / 64];
	int nfds, nfds_high;
	int maps;
};

#ifndef PROCMAP_QUERY
/* include/uapi/linux/fs.h of Linux 6.11; older headers lack it */
struct procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA 0x10
#define PROCMAP_QUERY_FILE_BACKED_VMA 0x20
#endif

static DIR *fuzz_fd_dir;
static int fuzz_maps_fd = -1;
static bool fuzz_maps_query; /* PROCMAP_QUERY works */
static unsigned int fuzz_memfd_major, fuzz_memfd_minor;

static inline void fuzz_census_open(void)
{
	struct procmap_query q = { .size = sizeof(q) };
	struct stat st;
	int fd;

	fuzz_fd_dir = opendir("/proc/self/fd");
	fuzz_maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (!fuzz_fd_dir || fuzz_maps_fd < 0)
		abort();
	/* the device memfds live on (all of them: the kernel's shmem mount) */
	fd = memfd_create("vnetfuzz-probe", MFD_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		abort();
	close(fd);
	fuzz_memfd_major = major(st.st_dev);
	fuzz_memfd_minor = minor(st.st_dev);
	q.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA |
			PROCMAP_QUERY_FILE_BACKED_VMA;
	fuzz_maps_query = !ioctl(fuzz_maps_fd, PROCMAP_QUERY, &q);
}

static inline int fuzz_census_maps(const char *match)
{
	struct procmap_query q;
	char name[4096];
	uint64_t addr = 0;
	int n = 0;

	if (!fuzz_maps_query)
		return fuzz_count_maps(match);
	for (;;) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA |
				PROCMAP_QUERY_FILE_BACKED_VMA;
		q.query_addr = addr;
		if (ioctl(fuzz_maps_fd, PROCMAP_QUERY, &q)) {
			if (errno == ENOENT) /* no mapping above addr */
				return n;
			abort();
		}
		addr = q.vma_end;
		if (q.dev_major != fuzz_memfd_major ||
		    q.dev_minor != fuzz_memfd_minor)
			continue;
		/* this one again, with its name */
		q.query_flags = PROCMAP_QUERY_FILE_BACKED_VMA;
		q.query_addr = q.vma_start;
		q.vma_name_addr = (uintptr_t)name;
		q.vma_name_size = sizeof(name);
		if (ioctl(fuzz_maps_fd, PROCMAP_QUERY, &q))
			abort();
		if (q.vma_name_size && strstr(name, match))
			n++;
	}
}

static inline void fuzz_census(struct fuzz_census *c, const char *match)
{
	struct dirent *e;

	if (!fuzz_fd_dir)
		fuzz_census_open();
	memset(c, 0, sizeof(*c));
	rewinddir(fuzz_fd_dir);
	while ((e = readdir(fuzz_fd_dir))) {
		unsigned long fd;

		if (e->d_name[0] == '.')
			continue;
		fd = strtoul(e->d_name, NULL, 10);
		c->nfds++;
		if (fd < FUZZ_FD_SET)
			c->fds[fd / 64] |= 1ULL << (fd % 64);
		else
			c->nfds_high++;
	}
	c->maps = fuzz_census_maps(match);
}

/* What fd FD is, for a report. */
static inline const char *fuzz_fd_what(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* AFTER must be BEFORE: report the first difference and abort. */
static inline void fuzz_census_check(const struct fuzz_census *b,
				     const struct fuzz_census *a)
{
	char what[256];
	unsigned int w, i;

	for (w = 0; w < FUZZ_FD_SET / 64; w++) {
		if (a->fds[w] == b->fds[w])
			continue;
		for (i = w * 64; i < w * 64 + 64; i++) {
			bool was = b->fds[w] >> (i % 64) & 1;
			bool is = a->fds[w] >> (i % 64) & 1;

			FUZZ_ASSERT(was || !is,
				    "fd leak: fd %u (%s) open after the input, not before; %d open before, %d after",
				    i, fuzz_fd_what(i, what, sizeof(what)),
				    b->nfds, a->nfds);
			FUZZ_ASSERT(is || !was,
				    "fd %u closed by the input, open before; %d open before, %d after",
				    i, b->nfds, a->nfds);
		}
	}
	FUZZ_ASSERT(a->nfds == b->nfds,
		    "fd leak: %d open before the input, %d after", b->nfds,
		    a->nfds);
	FUZZ_ASSERT(a->maps == b->maps,
		    "mmap leak: %d guest-memory mappings before the input, %d after",
		    b->maps, a->maps);
}

#endif /* VNET_FUZZ_H */
