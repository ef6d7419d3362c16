# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# The benchmarks' options and usage text (sourced, bash).  Every option of
# a benchmark sets one variable: LETTER:NAME takes a value, LETTER=NAME is
# a switch that sets NAME to 1:
#
#   REPS=3 SECS=1 VM=0
#   bench_opts "r:REPS d:SECS V=VM" "$@"
#   shift "$BENCH_OPTIND"
#
# -h prints the script's header comment (its usage) and exits 0; an unknown
# option, or one without its value, says so and exits 2 after the usage.
# BENCH_USAGE names another function to print the usage with.

# bench_usage STATUS: the script's header comment (the lines after its
# SPDX line up to the first line that is not a comment), then exit STATUS;
# on stderr unless STATUS is 0
bench_usage()
{
	if [ "$1" = 0 ]; then
		awk 'NR >= 4 && !/^#/ { exit } NR >= 4' "$0" | sed 's/^# \{0,1\}//'
	else
		awk 'NR >= 4 && !/^#/ { exit } NR >= 4' "$0" | sed 's/^# \{0,1\}//' >&2
	fi
	exit "$1"
}

# bench_opts SPEC ARG...: each word of SPEC, LETTER:NAME, makes
# -LETTER VALUE set the variable NAME, and LETTER=NAME makes -LETTER set
# it to 1; BENCH_OPTIND := how many of the ARGs were options and values
bench_opts()
{
	local spec=$1 letters="" w o OPTIND=1 OPTARG usage=${BENCH_USAGE:-bench_usage}

	shift
	for w in $spec; do
		case $w in
		?:*) letters+=${w%%:*}: ;;
		*) letters+=${w%%=*} ;;
		esac
	done
	while getopts ":${letters}h" o; do
		case $o in
		h) "$usage" 0 ;;
		:)
			echo "${0##*/}: -$OPTARG needs a value" >&2
			"$usage" 2 ;;
		\?)
			echo "${0##*/}: unknown option -$OPTARG" >&2
			"$usage" 2 ;;
		esac
		for w in $spec; do
			case $w in
			"$o":*) printf -v "${w#*:}" '%s' "$OPTARG" ;;
			"$o"=*) printf -v "${w#*=}" 1 ;;
			esac
		done
	done
	BENCH_OPTIND=$((OPTIND - 1))
}
