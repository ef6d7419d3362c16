# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# The bash completion under test (sourced by test_completion.sh and
# test_options.sh): completion/vnetctl and completion/vnetd loaded, and
# complete_reply to ask them.

_compl_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=completion/vnetctl
source "$_compl_top/completion/vnetctl"
# shellcheck source=completion/vnetd
source "$_compl_top/completion/vnetd"

# complete_reply FUNC WORD...: what the completion function FUNC offers for
# the command line WORD... (the last word is the one being completed), one
# a line
complete_reply()
{
	local fn=$1

	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	"$fn"
	printf '%s\n' "${COMPREPLY[@]}"
}
