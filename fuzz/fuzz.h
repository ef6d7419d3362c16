/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Shared pieces of the libFuzzer targets (docs/robustness.md, "Fuzzing"):
 * a cursor over the input, an assertion that aborts (libFuzzer saves the
 * input as a crash), and the resource counts of the leak checks.
 *
 * Header only, one translation unit per target.
 */
#ifndef VNET_FUZZ_H
#define VNET_FUZZ_H

#include <dirent.h>
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

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v;

	fuzz_bytes(in, &v, sizeof(v));
	return v;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t v;

	fuzz_bytes(in, &v, sizeof(v));
	return v;
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t v;

	fuzz_bytes(in, &v, sizeof(v));
	return v;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t v;

	fuzz_bytes(in, &v, sizeof(v));
	return v;
}

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

/* Open file descriptors of this process (/proc/self/fd entries). */
static inline int fuzz_count_fds(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		abort();
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/*
 * Lines of /proc/self/maps; with MATCH, only the lines containing it (the
 * sanitizers' allocators map memory of their own while an input runs, so
 * a leak check of guest-memory mappings counts those by name).
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

#endif /* VNET_FUZZ_H */
