#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# fuzz/gen-corpus.sh: (re)write the seed corpora fuzz/corpus/TARGET/seed-*
# with fuzz/gen_corpus.c.  The other files there are kept: cov-* (a
# minimised campaign corpus) and crash-* (reproducers of bugs found, each
# replayed by selftests/test_fuzz.sh).
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
CC=${CC:-cc}

mkdir -p "$OUT/fuzz"
$CC -O1 -g -Wall -Wextra -Werror -std=gnu11 fuzz/gen_corpus.c -o "$OUT/fuzz/gen_corpus"
find fuzz/corpus -type f -name 'seed-*' -delete 2>/dev/null || true
"$OUT/fuzz/gen_corpus" fuzz/corpus
for d in fuzz/corpus/*/; do
	echo "$d: $(find "$d" -type f -name 'seed-*' | wc -l) seeds"
done
