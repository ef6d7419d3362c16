#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (reads the tree, changes nothing in it)
#
# .clang-format holds the C lines a change touches (scripts/format-check.sh):
#   format/changed_lines      the lines changed since the last commit's
#                             parent, in this tree, are formatted
#   format/catches_unformatted  in a scratch repository with this
#                             .clang-format: a badly formatted change
#                             fails and names the fix, the same change
#                             formatted passes, an untouched badly
#                             formatted line is left alone
#
#   selftests/test_format.sh
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

KSFT_PREFIX=format

main()
{
	local top=$VNET_SELFTESTS/.. repo out rc

	ksft_args "$@"
	require_cmd format clang-format clang-format-diff git || { ksft_exit; return; }

	out=$("$top/scripts/format-check.sh" 2>&1)
	rc=$?
	if [ "$rc" = 77 ]; then
		skip changed_lines "$out"
	else
		expect "format-check exit" 0 "$rc"
		report changed_lines "$out"
	fi

	repo=$VNET_TMP/repo
	mkdir -p "$repo/scripts" && cp "$top/.clang-format" "$repo/" &&
		cp "$top/scripts/format-check.sh" "$repo/scripts/" || { fail catches_unformatted "setup"; ksft_exit; return; }
	printf 'int  old_unformatted( int a ){return a;}\n' >"$repo/a.c"
	git -C "$repo" init -q && git -C "$repo" add -A &&
		git -C "$repo" -c user.name=t -c user.email=t@t commit -qm base ||
		{ fail catches_unformatted "git setup"; ksft_exit; return; }
	printf '\nint  f( int x ){ if(x) return 1; return 0; }\n' >>"$repo/a.c"
	out=$("$repo/scripts/format-check.sh" HEAD 2>&1)
	expect "a bad change fails" 1 "$?"
	expect "names the fix" yes "$(grep -q "git clang-format -f HEAD" <<<"$out" && echo yes || echo no)"
	expect "the untouched line is not changed" no "$(grep -q '^-int  old_unformatted' <<<"$out" && echo yes || echo no)"
	(cd "$repo" && git clang-format -q -f HEAD -- a.c >/dev/null 2>&1)
	out=$("$repo/scripts/format-check.sh" HEAD 2>&1)
	expect "formatted, it passes" 0 "$?"
	report catches_unformatted "$out"
	ksft_exit
}

main "$@"
