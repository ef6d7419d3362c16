#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# scripts/format-check.sh [BASE]: the C lines changed since BASE, in the
# working tree, formatted as .clang-format says.  BASE defaults to the
# last commit's parent (HEAD~1), so that make check holds the last commit
# and whatever is not committed yet; the lines no change touched are not
# checked.  Prints what clang-format would change and the command that
# formats those lines; exits 1 then, 0 when they are formatted, 77 (skip)
# outside a git checkout or without clang-format-diff.
set -u
cd "$(dirname "$0")/.." || exit 1
base=${1:-HEAD~1}
command -v clang-format-diff >/dev/null 2>&1 ||
	{ echo "format-check: no clang-format-diff (apt-get install clang-format)"; exit 77; }
git rev-parse --verify -q "$base^{commit}" >/dev/null 2>&1 ||
	{ echo "format-check: no git history here ($base)"; exit 77; }
out=$(git diff -U0 --no-color "$base" -- '*.c' '*.h' | clang-format-diff -p1)
[ -z "$out" ] && exit 0
printf '%s\n' "$out"
echo "format-check: the lines above, changed since $base, are not formatted as .clang-format says; 'git clang-format -f $base' formats them"
exit 1
