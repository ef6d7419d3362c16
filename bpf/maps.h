/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The maps shared by every vnet program.  bpf/maps.bpf.c defines them
 * (VNET_DEFINE_MAPS); every other object declares them extern, and
 * `bpftool gen object` links all objects into one, so each map exists once.
 * Layouts: include/vnet/abi.h.
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
 * VNET_ARRAY(map_name, map_type, nr, value_type): the map MAP_NAME, an
 * array (BPF_MAP_TYPE_ARRAY or _PERCPU_ARRAY) of NR values of VALUE_TYPE
 * keyed by a __u32; VNET_MMAP_ARRAY: the same, mmapable (BPF_F_MMAPABLE).
 */
#define VNET_ARRAY_WITH(map_name, map_type, nr, value_type, ...)               \
	VNET_MAP struct {                                                      \
		__uint(type, map_type);                                        \
		__VA_ARGS__                                                    \
		__uint(max_entries, nr);                                       \
		__type(key, __u32);                                            \
		__type(value, value_type);                                     \
	} map_name SEC(".maps")
#define VNET_ARRAY(map_name, map_type, nr, value_type)                         \
	VNET_ARRAY_WITH(map_name, map_type, nr, value_type, )
#define VNET_MMAP_ARRAY(map_name, map_type, nr, value_type)                    \
	VNET_ARRAY_WITH(map_name, map_type, nr, value_type,                    \
			__uint(map_flags, BPF_F_MMAPABLE);)

VNET_ARRAY(stats, BPF_MAP_TYPE_PERCPU_ARRAY, (VNET_DIR_MAX * VNET_MAX_QUEUES),
	   struct vnet_class_stats);

VNET_MMAP_ARRAY(queues, BPF_MAP_TYPE_ARRAY, (VNET_DIR_MAX * VNET_MAX_QUEUES),
		struct vnet_queue_state);

VNET_MMAP_ARRAY(config, BPF_MAP_TYPE_ARRAY, VNET_MAX_QUEUES,
		struct vnet_config);

VNET_ARRAY(info, BPF_MAP_TYPE_ARRAY, 1, struct vnet_info);

VNET_MMAP_ARRAY(dp_stats, BPF_MAP_TYPE_ARRAY, (VNET_DIR_MAX * VNET_MAX_QUEUES),
		struct vnet_dp_stats);

VNET_MMAP_ARRAY(limits, BPF_MAP_TYPE_ARRAY, VNET_DIR_MAX, struct vnet_limit);

VNET_ARRAY(guard, BPF_MAP_TYPE_ARRAY, 1, struct vnet_guard);

VNET_ARRAY(guard_stats, BPF_MAP_TYPE_PERCPU_ARRAY, VNET_GUARD_R_MAX,
	   struct vnet_counter);

/* no program reads it: the VM's name, for the exporter's vm label */
VNET_MMAP_ARRAY(vm, BPF_MAP_TYPE_ARRAY, 1, struct vnet_vm);

#endif
