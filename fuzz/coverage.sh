#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# fuzz/coverage.sh [TARGET...]: line coverage of the files each fuzz
# target reaches, from a replay of its corpus (docs/robustness.md).  The
# targets are built again with clang's source-based coverage
# (-fprofile-instr-generate -fcoverage-mapping, no sanitizers) under
# $OUT/fuzz-cov/, each runs its corpus once (libFuzzer -runs=0), and
# llvm-cov prints the lines covered per file.  The corpus is
# $FUZZ_CORPUS/TARGET: by default $OUT/fuzz/work/TARGET (what make fuzz
# grew) when it exists, else fuzz/corpus/TARGET.  fuzz_classify's
# programs run in the kernel, where llvm-cov does not see: its report
# covers the reference classifier.

set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
CLANG=${CLANG:-clang}
COV=$OUT/fuzz-cov
FUZZ_CORPUS=${FUZZ_CORPUS:-}
ALL=(fuzz_vhost_user fuzz_virtq fuzz_rx fuzz_classify fuzz_config)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL[@]}")

CFLAGS=(-O1 -g -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer
	-fprofile-instr-generate -fcoverage-mapping
	-Iinclude -Iuser/lib -Iuser/vhost -Iuser/vnetd -Ifuzz -I"$OUT")
VHOST=(user/vhost/*.c)
# vnetd's objects but main.c (the targets have their own entry point)
VNETD=($(ls user/vnetd/*.c user/vnetd/*/*.c | grep -v '/main\.c$') "${VHOST[@]}" user/lib/*.c)
LIBS=(-lbpf -lelf -lz -lmnl -luring -lpthread -lseccomp)

mkdir -p "$COV"
for t in "${targets[@]}"; do
	case $t in
	fuzz_vhost_user | fuzz_virtq)
		srcs=("fuzz/$t.c" "${VHOST[@]}"); libs=() ;;
	fuzz_rx | fuzz_config)
		srcs=("fuzz/$t.c" "${VNETD[@]}"); libs=("${LIBS[@]}") ;;
	fuzz_classify)
		srcs=("fuzz/$t.c"); libs=(-lbpf -lelf -lz) ;;
	*)
		echo "Error: unknown target $t" >&2
		exit 2 ;;
	esac
	case $t in
	fuzz_vhost_user) files=(user/vhost/vhost_user.c user/vhost/mem.c user/vhost/virtq.c user/vhost/split.c) ;;
	fuzz_virtq) files=(user/vhost/split.c user/vhost/packed.c user/vhost/mem.c) ;;
	fuzz_rx) files=(user/vnetd/datapath/rx.c user/vnetd/datapath/rx_inplace.c user/vnetd/datapath/coal.c user/vnetd/datapath/qthread.c user/vhost/split.c user/vhost/mem.c) ;;
	fuzz_classify) files=(fuzz/classify_ref.h) ;;
	fuzz_config) files=(user/vnetd/config/portcfg.c) ;;
	esac
	nice -n 19 chrt -i 0 "$CLANG" "${CFLAGS[@]}" "${srcs[@]}" -o "$COV/$t" "${libs[@]}"
	corpus=$FUZZ_CORPUS/$t
	if [ -z "$FUZZ_CORPUS" ]; then
		corpus=fuzz/corpus/$t
		[ -d "$OUT/fuzz/work/$t" ] && corpus=$OUT/fuzz/work/$t
	fi
	rm -rf "$COV/$t".*.profraw "$COV/$t.in"
	# the reproducers abort (a known issue's still does): not replayed
	mkdir -p "$COV/$t.in"
	find "$corpus" -type f ! -name 'crash-*' -exec cp {} "$COV/$t.in/" \;
	LLVM_PROFILE_FILE="$COV/$t.%p.profraw" \
		nice -n 19 chrt -i 0 "$COV/$t" -runs=0 -close_fd_mask=3 -artifact_prefix="$COV/$t." \
		"$COV/$t.in" >"$COV/$t.log" 2>&1 || true
	llvm-profdata merge -sparse "$COV/$t".*.profraw -o "$COV/$t.profdata"
	echo "== $t ($(find "$COV/$t.in" -type f | wc -l) inputs of $corpus)"
	llvm-cov report "$COV/$t" -instr-profile="$COV/$t.profdata" "${files[@]}" |
		awk '{ sub(/^.*\//, "", $1) } $1 ~ /\.[ch]$/ { printf "  %-18s lines %5d of %5d  %s\n", $1, $8 - $9, $8, $10 }'
	if [ "$t" = fuzz_config ]; then
		llvm-cov report "$COV/$t" -instr-profile="$COV/$t.profdata" \
			-show-functions user/vnetd/config/portcfg.c |
			awk '{ sub(/^.*:/, "", $1) } $1 ~ /^(vnetd_parse_config|vnetd_parse_port_spec|vnetd_port_kv|port_finish|vnetd_port_add|vnetd_parse_cpus|vnetd_parse_uint|vnetd_tap_name_ok|key_[a-z]+)$/ { printf "    %-16s lines %5d of %5d  %s\n", $1, $5 - $6, $5, $7 }'
	fi
done
