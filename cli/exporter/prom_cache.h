/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef VNETCTL_PROM_CACHE_H
#define VNETCTL_PROM_CACHE_H

#include <limits.h>
#include <stdbool.h>
#include <net/if.h>
#include "libvnet.h"

/* ,vm="" and the name, each byte escaped in two at most */
#define PROM_VM_LABEL_MAX (2 * VNET_VM_NAME_MAX + 8)
/* prom_cache.c: BUF = the vm label of VM NAME ("" for "": no label) */
void prom_vm_label(char *buf, size_t len, const char *name);
/* one device of a scrape (prom.c, prom_cache.c) */
struct prom_dev {
	char name[IF_NAMESIZE];
	char netns[NAME_MAX + 1]; /* "" when it has no name */
	/* ",vm=\"NAME\"" escaped, or "" (no VM name): after device= */
	char vm[PROM_VM_LABEL_MAX];
	struct vnet_stats_snapshot snap;
	struct vnet_dp_stats *dp; /* NULL: no dp_stats map */
	bool dp_mapped;           /* dp is the map's mmapped values */
	bool guard_ok;            /* guard maps read */
	bool served;              /* a vnetd port serves it */
	struct vnet_counter guard[VNET_GUARD_R_MAX];
	/* the rows shown, queue by queue, tx before rx: found once a scrape */
	int nrows;
	struct prom_row {
		__u16 q;
		__u8 dir;
	} rows[VNET_MAX_QUEUES * VNET_DIR_MAX];
};

/*
 * D of NAME through its kept-open maps: 1, 0 when it is gone (no series),
 * -1 when it cannot be kept open (read it the long way); begin and end
 * bracket a scrape (what was not read is closed)
 */
int prom_cache_read(const char *name, struct prom_dev *d);
void prom_cache_begin(void);
void prom_cache_end(void);

#endif
