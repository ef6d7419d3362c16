/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the vhost fuzzers check of guest memory (fuzz_vhost_user, fuzz_virtq) */
#ifndef VNET_FUZZ_MEM_H
#define VNET_FUZZ_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

/* Which region of M holds [p, p + len) whole, or -1. */
static inline int fuzz_region_of(const struct vhost_mem *m, const void *p,
				 size_t len)
{
	const uint8_t *b = p;
	unsigned int i;

	for (i = 0; i < m->nregions; i++) {
		const struct vhost_mem_region *r = &m->regions[i];

		if (b >= r->host && len <= r->size &&
		    (uint64_t)(b - r->host) <= r->size - len)
			return (int)i;
	}
	return -1;
}

#endif /* VNET_FUZZ_MEM_H */
