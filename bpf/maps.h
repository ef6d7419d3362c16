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

VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VNET_DIR_MAX * VNET_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct vnet_class_stats);
} stats SEC(".maps");

VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VNET_DIR_MAX * VNET_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct vnet_queue_state);
} queues SEC(".maps");

VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VNET_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct vnet_config);
} config SEC(".maps");

VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vnet_info);
} info SEC(".maps");

VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VNET_DIR_MAX * VNET_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct vnet_dp_stats);
} dp_stats SEC(".maps");

VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VNET_DIR_MAX);
	__type(key, __u32);
	__type(value, struct vnet_limit);
} limits SEC(".maps");

VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vnet_guard);
} guard SEC(".maps");

VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VNET_GUARD_R_MAX);
	__type(key, __u32);
	__type(value, struct vnet_counter);
} guard_stats SEC(".maps");

/* no program reads it: the VM's name, for the exporter's vm label */
VNET_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vnet_vm);
} vm SEC(".maps");

#endif
