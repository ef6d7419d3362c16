#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# scripts/format-check.sh [BASE]: the C lines changed since BASE, in the
# working tree, formatted as .clang-format says.  BASE defaults to the
# last commit's parent (HEAD~1), so that make check holds the last commit
# and whatever is not committed yet; the lines no change touched are not
# checked.  Prints what clang-format would change and the command that
# formats those lines; exits 1 then, 0 when they are formatted, 77 (skip)
# outside a git checkout or without clang-format-diff.  In a shallow clone
# without the last commit's parent, the uncommitted changes are checked.
set -u
cd "$(dirname "$0")/.." || exit 1
base=${1:-HEAD~1}
command -v clang-format-diff >/dev/null 2>&1 ||
	{ echo "format-check: no clang-format-diff (apt-get install clang-format)"; exit 77; }
git rev-parse --verify -q HEAD >/dev/null 2>&1 ||
	{ echo "format-check: not a git checkout: no change to check"; exit 77; }
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null 2>&1; then
	[ $# -eq 0 ] || { echo "format-check: no commit $base here"; exit 2; }
	# a shallow clone of one commit: what is not committed yet
	echo "format-check: no $base here (a shallow clone?): checking the uncommitted changes against HEAD"
	base=HEAD
fi
out=$(git diff -U0 --no-color "$base" -- '*.c' '*.h' | clang-format-diff -p1)
[ -z "$out" ] && exit 0
printf '%s\n' "$out"
echo "format-check: the lines above, changed since $base, are not formatted as .clang-format says; 'git clang-format -f $base' formats them"
exit 1
