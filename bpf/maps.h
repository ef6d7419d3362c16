/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The maps of a tap's classifier.  Two builds of the same programs:
 *
 * per tap (vnet.bpf.o)   bpf/maps.bpf.c defines the maps (VNET_DEFINE_MAPS);
 *                        every other object declares them extern, and
 *                        `bpftool gen object` links all objects into one, so
 *                        each map exists once.  Each tap loads its own copy,
 *                        its maps bound at load time.
 * shared (vnet_shared.bpf.o, VNET_SHARED)
 *                        loaded and verified once per network namespace and
 *                        attached to every tap there: the tap's slot comes
 *                        from taps (its ifindex), each of its maps from the
 *                        array of maps of that kind at the slot.  The inner
 *                        maps are the per-tap build's maps, made by a load of
 *                        that object without its programs, pinned per tap as
 *                        before.  Array-of-maps and inner array lookups are
 *                        inlined by the verifier: a frame pays one hash
 *                        lookup more than in the per-tap build.
 *
 * The programs reach a map through VNET_LOOKUP(map, key) in functions that
 * take VNET_TAP_DECL (the slot, in the shared build; nothing in the other)
 * and pass VNET_TAP_PASS.  Layouts: include/vnet/abi.h.
 */
#ifndef VNET_BPF_MAPS_H
#define VNET_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <vnet/abi.h>

#ifdef VNET_DEFINE_MAPS
#define VNET_MAP
#else
#define VNET_MAP extern
#endif

/*
 * The maps the programs read, defined once for both builds.  An inner
 * map's definition gives sizes, not types: in an object that only
 * declares it (extern) its value type may be a forward declaration, which
 * the linker cannot size.  The maps themselves have BTF (the per-tap
 * build's, whose load makes them).
 */
#ifdef VNET_SHARED
#define VNET_KEY_U32 __uint(key_size, sizeof(__u32))
#define VNET_VALUE(t) __uint(value_size, sizeof(t))
#else
#define VNET_KEY_U32 __type(key, __u32)
#define VNET_VALUE(t) __type(value, t)
#endif
/* an array of NR VALUEs keyed by a __u32: MAP_TYPE, then any flags */
#define VNET_ARRAY_DEF(map_type, nr, value, ...)                               \
	__uint(type, map_type);                                                \
	__VA_ARGS__                                                            \
	__uint(max_entries, nr);                                               \
	VNET_KEY_U32;                                                          \
	VNET_VALUE(value)
#define VNET_MMAP __uint(map_flags, BPF_F_MMAPABLE);
#define VNET_STATS_DEF                                                         \
	VNET_ARRAY_DEF(BPF_MAP_TYPE_PERCPU_ARRAY,                              \
		       VNET_DIR_MAX *VNET_MAX_QUEUES, struct vnet_class_stats)
#define VNET_QUEUES_DEF                                                        \
	VNET_ARRAY_DEF(BPF_MAP_TYPE_ARRAY, VNET_DIR_MAX *VNET_MAX_QUEUES,      \
		       struct vnet_queue_state, VNET_MMAP)
#define VNET_CONFIG_DEF                                                        \
	VNET_ARRAY_DEF(BPF_MAP_TYPE_ARRAY, VNET_MAX_QUEUES,                    \
		       struct vnet_config, VNET_MMAP)
#define VNET_GUARD_DEF VNET_ARRAY_DEF(BPF_MAP_TYPE_ARRAY, 1, struct vnet_guard)
#define VNET_GUARD_STATS_DEF                                                   \
	VNET_ARRAY_DEF(BPF_MAP_TYPE_PERCPU_ARRAY, VNET_GUARD_R_MAX,            \
		       struct vnet_counter)

#ifdef VNET_SHARED

/* ifindex -> the tap's slot (struct vnet_tap_slot), in this netns */
VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNET_SHARED_MAX_TAPS);
	__type(key, __u32);
	__type(value, struct vnet_tap_slot);
} taps SEC(".maps");

/* the same for an ifindex below VNET_SHARED_IFX_MAX, at the ifindex */
VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VNET_SHARED_IFX_MAX);
	__type(key, __u32);
	__type(value, struct vnet_tap_slot);
} tap_index SEC(".maps");

#define VNET_MAP_OF(name, def)                                                 \
	VNET_MAP struct {                                                      \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);                      \
		__uint(max_entries, VNET_SHARED_MAX_TAPS);                     \
		__type(key, __u32);                                            \
		__array(                                                       \
			values, struct { def; });                              \
	} name##_of SEC(".maps")

VNET_MAP_OF(stats, VNET_STATS_DEF);
VNET_MAP_OF(queues, VNET_QUEUES_DEF);
VNET_MAP_OF(config, VNET_CONFIG_DEF);
VNET_MAP_OF(guard, VNET_GUARD_DEF);
VNET_MAP_OF(guard_stats, VNET_GUARD_STATS_DEF);

#define VNET_TAP_DECL , __u32 vnet_slot
#define VNET_TAP_PASS , vnet_slot

/* the entry at KEY of the tap's map of the kind OUTER, or NULL */
static __always_inline void *vnet_tap_lookup(void *outer, __u32 slot,
					     const void *key)
{
	void *inner = bpf_map_lookup_elem(outer, &slot);

	return inner ? bpf_map_lookup_elem(inner, key) : NULL;
}
#define VNET_LOOKUP(map, key) vnet_tap_lookup(&map##_of, vnet_slot, key)

/*
 * The taps hash, in a call of its own: a lookup site that one map reaches
 * is inlined by the verifier (array: a few instructions); one that the
 * compiler merged for both maps would be a helper call for every frame.
 */
static __noinline __attribute__((unused)) struct vnet_tap_slot *
vnet_tap_hashed(__u32 ifx)
{
	return bpf_map_lookup_elem(&taps, &ifx);
}

/* a program's first step: the slot of the tap of ifindex DEV, else MISS */
#define VNET_TAP_FIND(dev, miss)                                               \
	__u32 vnet_slot;                                                       \
	do {                                                                   \
		__u32 ifx_ = (dev);                                            \
		struct vnet_tap_slot *s_ =                                     \
			ifx_ < VNET_SHARED_IFX_MAX ?                           \
				bpf_map_lookup_elem(&tap_index, &ifx_) :       \
				vnet_tap_hashed(ifx_);                         \
		if (!s_ || s_->ifindex != ifx_)                                \
			miss;                                                  \
		vnet_slot = s_->slot;                                          \
	} while (0)

#else /* per tap */

#define VNET_TAP_DECL
#define VNET_TAP_PASS
#define VNET_LOOKUP(map, key) bpf_map_lookup_elem(&map, key)
#define VNET_TAP_FIND(ifindex, miss)                                           \
	do {                                                                   \
	} while (0)

VNET_MAP struct {
	VNET_STATS_DEF;
} stats SEC(".maps");

VNET_MAP struct {
	VNET_QUEUES_DEF;
} queues SEC(".maps");

VNET_MAP struct {
	VNET_CONFIG_DEF;
} config SEC(".maps");

VNET_MAP struct {
	VNET_ARRAY_DEF(BPF_MAP_TYPE_ARRAY, 1, struct vnet_info);
} info SEC(".maps");

VNET_MAP struct {
	VNET_ARRAY_DEF(BPF_MAP_TYPE_ARRAY, VNET_DIR_MAX *VNET_MAX_QUEUES,
		       struct vnet_dp_stats, VNET_MMAP);
} dp_stats SEC(".maps");

VNET_MAP struct {
	VNET_ARRAY_DEF(BPF_MAP_TYPE_ARRAY, VNET_DIR_MAX, struct vnet_limit,
		       VNET_MMAP);
} limits SEC(".maps");

VNET_MAP struct {
	VNET_GUARD_DEF;
} guard SEC(".maps");

VNET_MAP struct {
	VNET_GUARD_STATS_DEF;
} guard_stats SEC(".maps");

/* no program reads it: the VM's name, for the exporter's vm label */
VNET_MAP struct {
	VNET_ARRAY_DEF(BPF_MAP_TYPE_ARRAY, 1, struct vnet_vm, VNET_MMAP);
} vm SEC(".maps");

#endif /* VNET_SHARED */

#endif
