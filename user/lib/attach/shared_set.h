/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A network namespace's set of the shared classifier (shared_set.c): its
 * pin directory VNET_PIN_ROOT/classifier_ns<NETNS>_<TAG> (pins.c's
 * functions take it for a device's), its programs and maps, open.
 */
#ifndef LIBVNET_SHARED_SET_H
#define LIBVNET_SHARED_SET_H

#include <stdbool.h>
#include "libvnet.h"
#include "hooks_int.h"

#define SET_PREFIX "classifier_ns"
#define SET_DIR_LEN 48

/* the maps the programs read, in the order of struct vnet_shared_set's of */
#define VNET_SHARED_MAPS 5
#define VNET_SHARED_MAP_IDS                                                    \
	{                                                                      \
		VNET_MAP_STATS, VNET_MAP_QUEUES, VNET_MAP_CONFIG,              \
			VNET_MAP_GUARD, VNET_MAP_GUARD_STATS                   \
	}

/* a set's pinned programs and maps, open */
struct vnet_shared_set {
	struct vnet_progs progs; /* progs.xmit -1: guest RX at tc egress */
	int taps, tap_index;
	int of[VNET_SHARED_MAPS];
};

/* this build's set directory name for NETNS */
void vnet_set_dir(char dir[SET_DIR_LEN], __u32 netns);
/* *SH with nothing open; then the set in DIR opened (-ENOENT: none) */
void vnet_set_init(struct vnet_shared_set *sh);
int vnet_set_open(const char *dir, struct vnet_shared_set *sh);
/* the set of NETNS loaded, verified and pinned in DIR, then opened */
int vnet_set_create(const char *dir, __u32 netns, struct vnet_shared_set *sh,
		    struct vnet_err *err);
/* every pin of the set in DIR, and DIR, removed */
void vnet_set_remove(const char *dir);
void vnet_shared_close(struct vnet_shared_set *sh);
bool vnet_set_empty(const struct vnet_shared_set *sh);
/* FN on each set directory of NETNS (0: any), every build's; LOCKED:
 * under the pin root's lock */
void vnet_sets_each(__u32 netns, bool locked,
		    void (*fn)(const char *dir, void *arg), void *arg);

#endif
