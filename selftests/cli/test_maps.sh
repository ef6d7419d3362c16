#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# libvnet's accessor of the pinned maps (vnet_map_get(), user/lib/maps.c)
# refuses a map that is not the one include/vnet/abi.h describes.  Each
# case attaches a real tap in its own netns, then replaces one pin with a
# map of the wrong value size, entry count, BPF_F_MMAPABLE flag or type,
# or an info entry of another ABI version (bpftool), as a vnetctl of
# another version would have left them.  The command that reads it fails
# with the cause and the fix (detach and attach again), and the fix works.
#
#   selftests/cli/test_maps.sh [CASE...]

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

KSFT_PREFIX=maps
VNETD=${VNETD:-$OUT/vnetd}

ALL_CASES="value_size entries mmapable type abi_version"

BPF_MAP_TYPE_ARRAY=array
BPF_F_MMAPABLE=1024
ABI=$(awk '$2 == "VNET_ABI_VERSION" { print $3 }' "$VNET_ROOT/include/vnet/abi.h")

# swap MAP TYPE VALUE_SIZE ENTRIES FLAGS: DEV's pin MAP is now another map
swap()
{
	rm -f "$PIN_ROOT/$DEV/$1" &&
		bpftool map create "$PIN_ROOT/$DEV/$1" type "$2" key 4 \
			value "$3" entries "$4" name "$1" flags "$5"
}

# swapped CASE MAP TYPE VALUE_SIZE ENTRIES FLAGS: case CASE's attached tap
# with its pin MAP swapped (swap); false (CASE_setup failed) if not
swapped()
{
	local c=$1

	shift
	attached_case "$c" || { fail "${c}_setup" "$(run_said)"; case_cleanup; return 1; }
	swap "$@" || { fail "${c}_setup" "bpftool map create"; case_cleanup; return 1; }
}

# refused DESC WHAT: RUN_* is a refusal naming WHAT and the fix
refused()
{
	expect "$1: exit" 1 "$RUN_RC"
	expect "$1: names the difference" yes "$(grep -qF -- "$2" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
	expect "$1: names the fix" yes "$(grep -qF "detach and attach again ('vnetctl -n $NS detach $DEV', then 'vnetctl -n $NS attach $DEV')" <<<"$RUN_ERR" && echo yes || echo "no: $RUN_ERR")"
}

# the fix named: detach and attach again, and the maps read again
fixed()
{
	run vnetctl -n "$NS" detach "$DEV"
	expect "detach" 0 "$RUN_RC"
	run vnetctl -n "$NS" attach "$DEV"
	expect "attach again" 0 "$RUN_RC"
	run vnetctl -n "$NS" stats "$DEV"
	expect "stats after the fix" 0 "$RUN_RC"
	run vnetctl -n "$NS" coalesce show "$DEV"
	expect "coalesce show after the fix" 0 "$RUN_RC"
}

case_value_size()
{
	swapped value_size queues "$BPF_MAP_TYPE_ARRAY" 64 512 "$BPF_F_MMAPABLE" || return
	run vnetctl -n "$NS" stats "$DEV"
	refused stats "$DEV: the pinned queues map has value size 64, this vnet expects 192"
	run vnetctl -n "$NS" coalesce show "$DEV"
	refused "coalesce show" "the pinned queues map has value size 64"
	# status reads the queues too, and still works
	run vnetctl -n "$NS" status "$DEV"
	expect "status" 0 "$RUN_RC"
	report value_size_refused "$(run_said)"
	fixed
	report value_size_fix_works "$(run_said)"
	case_cleanup
}

case_entries()
{
	swapped entries config "$BPF_MAP_TYPE_ARRAY" 48 128 "$BPF_F_MMAPABLE" || return
	run vnetctl -n "$NS" coalesce set "$DEV" tx-frames 8
	refused "coalesce set" "the pinned config map has entries 128, this vnet expects 256"
	# (no BTF: bytes in hex)
	expect "nothing written" 0 "$(bpftool -j map dump pinned "$PIN_ROOT/$DEV/config" | jq '[.[].value[] | select(. != "0x00")] | length')"
	report entries_refused "$(run_said)"
	case_cleanup
}

case_mmapable()
{
	swapped mmapable config "$BPF_MAP_TYPE_ARRAY" 48 256 0 || return
	run vnetctl -n "$NS" coalesce show "$DEV"
	refused "coalesce show" "the pinned config map has BPF_F_MMAPABLE 0, this vnet expects 1"
	report mmapable_refused "$(run_said)"
	case_cleanup
}

case_type()
{
	# a plain array where the per-CPU one was: a lookup would fill one
	# value per CPU into it
	swapped type stats "$BPF_MAP_TYPE_ARRAY" 80 512 0 || return
	run vnetctl -n "$NS" stats "$DEV"
	refused stats "the pinned stats map has type 2, this vnet expects 6"
	report type_refused "$(run_said)"
	case_cleanup
}

# an info entry written by another ABI version (same size): the agent,
# which writes into it, refuses it; detach, which must undo it, does not
case_abi_version()
{
	local val size

	attached_case abi_version || { fail abi_version_setup "$(run_said)"; case_cleanup; return; }
	# struct vnet_info (its size from abi.h): abi_version 1 (little
	# endian), the rest zero
	size=$(sed -n 's/.*sizeof(struct vnet_info) == \([0-9]*\).*/\1/p' "$VNET_ROOT/include/vnet/abi.h")
	# shellcheck disable=SC2046
	val=$(printf '1 0 0 0'; printf ' 0%.0s' $(seq $((size - 4))))
	swap info "$BPF_MAP_TYPE_ARRAY" "$size" 1 0 &&
		# shellcheck disable=SC2086
		bpftool map update pinned "$PIN_ROOT/$DEV/info" key 0 0 0 0 \
			value $val ||
		{ fail abi_version_setup "bpftool map"; case_cleanup; return; }
	run timeout 10 "$VNETD" --agent "$DEV" --netns "$NS"
	refused "vnetd --agent" "the pinned info map has ABI version 1, this vnet expects $ABI"
	run vnetctl -n "$NS" status "$DEV"
	expect "status" 0 "$RUN_RC"
	report abi_version_refused "$(run_said)"
	fixed
	report abi_version_fix_works "$(run_said)"
	case_cleanup
}

main()
{
	ksft_args "$@"
	require_root maps || { ksft_exit; return; }
	require_cmd maps bpftool jq "$VNETD" || { ksft_exit; return; }
	ksft_run :
	ksft_exit
}

main "$@"
