#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (reads the tree and the built binaries, changes nothing)
#
# The code's dependencies point one way (docs/design.md, "Layers").
#
# The layers are the folders.  vnetd (user/vnetd) and vnetctl (cli) are a
# folder per part, listed top to bottom in VNETD_PARTS and CLI_PARTS (the
# files at the top of the directory are the part "main"); a file's part
# is its folder.  Every folder with sources is in its list and every part
# of a list is a folder (layers/vnetd_parts, layers/cli_parts), so a new
# folder is placed in the order before anything else.  The vhost library
# (user/vhost) is one folder whose files are in order (VHOST_LAYERS).
#
# From the built objects (nm: which file defines a symbol, which files use
# it):
#   - no import circle among the production files (user/lib, user/vhost,
#     user/vnetd, cli): tsort finds none;
#   - the directories depend downwards only: cli and vnetd on libvnet and
#     libvhost, libvnet and libvhost on neither vnetd nor each other;
#   - inside vnetd and vnetctl, every file calls only files of its own part
#     or of the parts below it;
#   - inside the vhost library, every file calls only files below it in
#     VHOST_LAYERS.
#
# From the #include lines of the sources (user/vnetd, cli, user/vhost):
#   - a file includes only headers of its own layer and below (a part's
#     folder; vhost: a word of the list, the names of one layer joined by
#     commas);
#   - no include circle: between the modules (a module is a .c and its .h,
#     X_int.h being X's private header; vhost: the files of one layer),
#     the include edges have no loop;
#   - a file includes headers of its own directory, and of the
#     directories below it only (vnetd: libvnet, libvhost, and another
#     part's header by its folder, "datapath/qp.h"; cli: libvnet, and
#     "base/util.h");
#   - the private headers of user/vhost are included inside it only.
#
# Each header declares its own file's functions only
# (layers/headers_own_functions): a function declared in DIR/X.h or
# DIR/X_int.h (gcc -aux-info of every production file) is defined in
# DIR/X.c or in a DIR/X_*.c split from it (nm), or in the header itself
# (static inline).  The exception: user/lib/libvnet.h, the library's one
# public header, declares the API of every file of user/lib (HEADERS_ANY),
# and its parts that it includes (PUBLIC_PARTS) count as included with it.
# And a file includes the header that declares each function of another
# file it calls, not through another header (layers/includes_direct).
#
# No production function has more than 80 lines (layers/function_size).
# No production file (user/, cli/, bpf/, include/vnet) has more than 600
# lines, and no production folder more than 16 .c files.
#
# And the production build has no test switch (docs/vnetd.md, "Test
# builds"): the sources of user/ preprocessed as build/vnetd and
# build/vnetctl are built call getenv() for systemd's variables only; those
# binaries hold none of the switches' names, nor a test-only function,
# while the test builds hold every name (so that the check can see them).
#
# A call or an include against the order names the files and the symbol
# or the header.  The layers/catches_* cases run the same checks on small
# trees made here, each with one violation, and expect exactly that
# check to fail (and none on the tree without it).
#
#   selftests/test_layers.sh              this tree (OUT: its build)
#   selftests/test_layers.sh --tree DIR   the structure checks alone on
#                                         DIR (objects in DIR/build)
set -u
shopt -s nullglob
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
tree_only=0
if [ "${1:-}" = --tree ]; then
	top=$(cd "$2" && pwd)
	OUT=$top/build
	tree_only=1
else
	top=$(cd "$(dirname "$0")/.." && pwd)
	OUT=${OUT:-build}
	case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
fi

# layers top to bottom, per directory: a file may call the ones after it
# and include the headers of its own layer and of the ones after it
# vnetd's parts and vnetctl's (their folders; "main": the files at the
# top), top to bottom (the catches_* trees set their own)
VNETD_PARTS=${VNETD_PARTS:-"main handover config agent port datapath sandbox tap base"}
CLI_PARTS=${CLI_PARTS:-"main exporter base"}
VHOST_LAYERS="server dev_state vhost_user,handlers,vring_fds,vu_dev virtq split packed packed_event journal vq fault mem log"
# headers of user/vhost that only its own files include
VHOST_PRIVATE="vhost_user_int.h vu_dev_int.h vring_fds.h vq_int.h split.h packed.h packed_event.h journal_int.h"
# the environment production code may read: systemd's
ENV_ALLOWED="JOURNAL_STREAM NOTIFY_SOCKET"
# sources that only the test builds compile (the Makefile leaves them out)
TEST_ONLY="user/vnetd/base/testing.c"
# headers that may declare functions of any file of their folder
HEADERS_ANY="user/lib/libvnet.h"
# the parts of that public header it includes: a file that includes it
# includes them
PUBLIC_PARTS="user/lib/ethtool.h user/lib/xmit.h"
# .c files a production folder may hold directly
MAX_C=16

failed=0
check() { # name, condition-result, reason
	if [ "$2" = 0 ]; then
		echo "PASS: $1"
	else
		echo "FAIL: $1: $3"
		failed=1
	fi
}

objs=$(printf '%s\n' "$OUT"/user/lib/*.o "$OUT"/user/lib/*/*.o "$OUT"/user/vhost/*.o "$OUT"/user/vnetd/*.o "$OUT"/user/vnetd/*/*.o \
	"$OUT"/cli/*.o "$OUT"/cli/*/*.o)
if [ -z "$objs" ]; then
	echo "FAIL: layers/objects: no objects under $OUT (run make first)"
	exit 1
fi
tmp=$(mktemp -d /tmp/vnet-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# --- calls, from the objects ---------------------------------------------

# "file symbol" for every global definition and every use
: >"$tmp/def"
: >"$tmp/use"
for o in $objs; do
	f=${o#"$OUT"/}
	f=${f%.o}
	# an object left from a file that is gone
	[ -f "$top/$f.c" ] || continue
	nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print $3, f }' >>"$tmp/def"
	nm -u "$o" | awk -v f="$f" '{ print $NF, f }' >>"$tmp/use"
done
# edges "user used symbol"
sort -k1,1 "$tmp/def" >"$tmp/def.s"
sort -k1,1 "$tmp/use" >"$tmp/use.s"
join "$tmp/use.s" "$tmp/def.s" | awk '$2 != $3 { print $2, $3, $1 }' |
	sort -u >"$tmp/edges"

[ -s "$tmp/edges" ]
check "layers/edges_found" $? "no call between files found (nm output?)"

# 1. no circle: tsort reports a loop on stderr
awk '{ print $1, $2 }' "$tmp/edges" | sort -u | tsort >/dev/null 2>"$tmp/tsort"
loop=$(grep -v '^tsort: -: input contains a loop:$' "$tmp/tsort" | sed 's/^tsort: //' | tr '\n' ' ')
[ ! -s "$tmp/tsort" ]
check "layers/no_import_circle" $? "files that import each other: $loop"

# 2. directories: cli, user/vnetd -> user/lib, user/vhost; lib and vhost alone
bad=$(awk '{ split($1, a, "/"); split($2, b, "/")
	da = a[1] == "cli" ? "cli" : a[1] "/" a[2]
	db = b[1] == "cli" ? "cli" : b[1] "/" b[2]
	if (da == db) next
	ok = (da == "cli" && db == "user/lib") ||
	     (da == "user/vnetd" && (db == "user/lib" || db == "user/vhost"))
	if (!ok) print $1 " -> " $2 " (" $3 ")" }' "$tmp/edges" | head -5 | tr '\n' ';')
[ -z "$bad" ]
check "layers/directories" $? "calls against the directory order: $bad"

# 3. the files of a directory in order: order_check NAME DIR LAYERS
order_check()
{
	local bad

	bad=$(awk -v dir="$2/" -v layers="$3" 'BEGIN { gsub(",", " ", layers); n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
		index($1, dir) == 1 && index($2, dir) == 1 {
			a = $1; b = $2; sub(/.*\//, "", a); sub(/.*\//, "", b)
			if (!(a in rank)) { print a " is not in the list"; next }
			if (!(b in rank)) { print b " is not in the list"; next }
			if (rank[a] >= rank[b]) print a " -> " b " (" $3 ")"
		}' "$tmp/edges" | sort -u | head -5 | tr '\n' ';')
	[ -z "$bad" ]
	check "layers/$1" $? "calls upwards: $bad"
}

# the part of a file under a program's directory: its folder, "main" for
# the files at the top (awk; F relative to the directory)
PART_AWK='function part(f) { if (f !~ /\//) return "main"; sub(/\/.*/, "", f); return f }
	function module(f) { sub(/\.[ch]$/, "", f); sub(/_int$/, "", f); return f }'

# parts_folders NAME DIR PARTS: the folders of DIR are the parts, both ways
parts_folders()
{
	local name=$1 dir=$2 parts=$3 d p bad=""

	for d in "$top/$dir"/*/; do
		p=$(basename "$d")
		set -- "$d"*.[ch]
		[ $# -gt 0 ] || continue
		case " $parts " in *" $p "*) ;; *) bad+="$dir/$p/ is a folder in no part of the list;" ;; esac
	done
	for p in $parts; do
		[ "$p" = main ] || [ -d "$top/$dir/$p" ] || bad+="part $p of the list is no folder of $dir;"
	done
	[ -z "$bad" ]
	check "layers/${name}_parts" $? "$bad (the list: $parts)"
}

# parts_order NAME DIR PARTS: a file calls its own part or the parts below
parts_order()
{
	local bad

	bad=$(awk -v dir="$2/" -v parts="$3" "$PART_AWK"'
		BEGIN { n = split(parts, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
		index($1, dir) == 1 && index($2, dir) == 1 {
			a = part(substr($1, length(dir) + 1)); b = part(substr($2, length(dir) + 1))
			if (!(a in rank)) { print $1 " is in no part of the list"; next }
			if (!(b in rank)) { print $2 " is in no part of the list"; next }
			if (rank[a] > rank[b]) print $1 " -> " $2 " (" $3 ": " b " is above " a ")"
		}' "$tmp/edges" | sort -u | head -5 | tr '\n' ';')
	[ -z "$bad" ]
	check "layers/${1}_order" $? "calls upwards: $bad"
}

# "file header" with both as paths under DIR (a header of the file's own
# folder, or another part's by its folder: "datapath/qp.h"); headers of
# the libraries and the build are left out
part_includes()
{
	local dir=$1 f rel sub h

	for f in "$top/$dir"/*.[ch] "$top/$dir"/*/*.[ch]; do
		rel=${f#"$top/$dir"/}
		sub=$(dirname "$rel")
		for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			if [ -e "$top/$dir/$sub/$h" ]; then
				[ "$sub" = . ] && echo "$rel $h" || echo "$rel $sub/$h"
			elif [ -e "$top/$dir/$h" ]; then
				echo "$rel $h"
			fi
		done
	done
}

# include_verdict NAME BAD: the checks NAME_includes (no upward include:
# BAD is empty) and NAME_include_circle (the module edges in
# $tmp/medges.NAME sort: no circle)
include_verdict()
{
	local name=$1 loop

	[ -z "$2" ]
	check "layers/${name}_includes" $? "includes upwards: $2"
	sort -u "$tmp/medges.$name" | tsort >/dev/null 2>"$tmp/itsort.$name"
	loop=$(grep -v '^tsort: -: input contains a loop:$' "$tmp/itsort.$name" | sed 's/^tsort: //' | tr '\n' ' ')
	[ ! -s "$tmp/itsort.$name" ]
	check "layers/${name}_include_circle" $? "modules that include each other's headers: $loop"
}

# parts_includes NAME DIR PARTS: no include of a part above, no circle
parts_includes()
{
	local name=$1 bad

	part_includes "$2" >"$tmp/inc.$name"
	[ -s "$tmp/inc.$name" ]
	check "layers/${name}_includes_found" $? "no #include of a header of $2 found"
	bad=$(awk -v parts="$3" "$PART_AWK"'
		BEGIN { n = split(parts, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
		{ a = part($1); b = part($2)
		  if (!(a in rank)) { print $1 " is in no part of the list"; next }
		  if (!(b in rank)) { print $2 " is in no part of the list"; next }
		  if (rank[a] > rank[b]) print $1 " includes " $2 " (" b " is above " a ")"
		  if (module($1) != module($2)) print module($1), module($2) > "/dev/stderr" }' \
		"$tmp/inc.$name" 2>"$tmp/medges.$name" | sort -u | head -5 | tr '\n' ';')
	include_verdict "$name" "$bad"
}

parts_folders vnetd user/vnetd "$VNETD_PARTS"
parts_order vnetd user/vnetd "$VNETD_PARTS"
parts_folders cli cli "$CLI_PARTS"
parts_order cli cli "$CLI_PARTS"
[ -d "$top/user/vhost" ] && order_check vhost_order user/vhost "$VHOST_LAYERS"

# --- includes, from the sources ------------------------------------------

# "file header" for every #include "header" of the files of DIR
includes()
{
	local f

	for f in "$top/$1"/*.c "$top/$1"/*.h; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
			awk -v f="${f##*/}" '{ print f, $1 }'
	done
}

# include_check NAME DIR LAYERS: no upward include, no circle of modules
include_check()
{
	local bad

	includes "$2" >"$tmp/inc.$1"
	ls "$top/$2" >"$tmp/local.$1"
	# module FILE: the name without .c/.h and without a trailing _int
	bad=$(awk -v layers="$3" '
		function module(f) { sub(/\.[ch]$/, "", f); sub(/_int$/, "", f); return f }
		BEGIN { n = split(layers, l, " ")
			for (i = 1; i <= n; i++) { m = split(l[i], g, ","); for (j = 1; j <= m; j++) rank[g[j]] = i } }
		FNR == NR { local[$1] = 1; next }
		!($2 in local) { next }
		{ a = module($1); b = module($2)
		  if (!(a in rank)) { print $1 " is not in the list"; next }
		  if (!(b in rank)) { print $2 " is not in the list"; next }
		  if (rank[a] > rank[b]) print $1 " includes " $2 " (" l[rank[b]] " is above " l[rank[a]] ")"
		  if (rank[a] != rank[b]) print l[rank[a]], l[rank[b]] > "/dev/stderr" }' \
		"$tmp/local.$1" "$tmp/inc.$1" 2>"$tmp/medges.$1" | sort -u | head -5 | tr '\n' ';')
	include_verdict "$1" "$bad"
}
[ -d "$top/user/vhost" ] && include_check vhost user/vhost "$VHOST_LAYERS"
parts_includes vnetd user/vnetd "$VNETD_PARTS"
parts_includes cli cli "$CLI_PARTS"

# where a quoted include of a file in DIR is found: its own directory, or
# one of ALLOWED (in the compiler's -I order), or the build's skeletons
dir_check()
{
	local dir=$1 allowed=$2 f h d found bad=""

	for f in "$top/$dir"/*.[ch] "$top/$dir"/*/*.[ch]; do
		for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			[ -e "$(dirname "$f")/$h" ] && continue
			case $h in *.skel.h) continue ;; esac
			found=""
			# the program's own directory first: cli's -Icli
			for d in $dir user/lib user/vhost user/vnetd; do
				[ -e "$top/$d/$h" ] && { found=$d; break; }
			done
			case " $allowed " in *" $found "*) [ -n "$found" ] && continue ;; esac
			bad+="${f#"$top"/} includes $h (${found:-not found});"
		done
	done
	[ -z "$bad" ]
	check "layers/${dir//\//_}_include_dirs" $? "$bad"
}
dir_check user/vnetd "user/vnetd user/lib user/vhost"
dir_check user/vhost ""
dir_check user/lib "user/lib"
dir_check cli "cli user/lib"

bad=""
for h in $VHOST_PRIVATE; do
	for f in $(grep -lE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$h\"" /dev/null \
		"$top"/user/vnetd/*.[ch] "$top"/user/vnetd/*/*.[ch] "$top"/user/lib/*.[ch] "$top"/user/lib/*/*.[ch] "$top"/cli/*.[ch] "$top"/cli/*/*.[ch] \
		"$top"/selftests/*.[ch] "$top"/selftests/*/*.[ch] \
		"$top"/fuzz/*.[ch] "$top"/bench/*.[ch] </dev/null 2>/dev/null); do
		bad+="${f#"$top"/} includes $h;"
	done
done
[ -z "$bad" ]
check "layers/vhost_private_headers" $? "private to user/vhost: $bad"

# --- each header declares its own file's functions -----------------------

# "function header" for every function a production header declares (not
# defines: a static inline is its own), as gcc sees them compiling every
# production file with the build's flags (-aux-info)
: >"$tmp/decl"
: >"$tmp/incs"
for f in "$top"/user/lib/*.c "$top"/user/lib/*/*.c "$top"/user/vhost/*.c "$top"/user/vnetd/*.c "$top"/user/vnetd/*/*.c \
	"$top"/cli/*.c "$top"/cli/*/*.c; do
	rel=${f#"$top"/}
	case " $TEST_ONLY " in *" $rel "*) continue ;; esac
	inc="-Iinclude -Iuser/lib -Iuser/vhost -Iuser/vnetd -I$OUT"
	case $rel in cli/*) inc="-Icli $inc" ;; esac
	# shellcheck disable=SC2086 # the -I words
	if ! (cd "$top" && cc -fsyntax-only -std=gnu11 -D_GNU_SOURCE $inc -aux-info "$tmp/aux" "$rel") 2>"$tmp/aux.err"; then
		check "layers/headers_own_functions" 1 "$rel does not compile: $(head -c 300 "$tmp/aux.err")"
		continue
	fi
	# the headers it includes, as the compiler finds them
	sub=$(dirname "$rel")
	for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		for d in "$sub" $(case $rel in cli/*) echo cli ;; esac) include user/lib user/vhost user/vnetd; do
			[ -e "$top/$d/$h" ] && { echo "${rel%.c} $d/$h"; break; }
		done
	done >>"$tmp/incs"
	# libvnet.h is the library's public header: including it includes
	# the parts it includes (ethtool.h, xmit.h) for its callers
	grep -qxF "${rel%.c} user/lib/libvnet.h" "$tmp/incs" &&
		for h in $PUBLIC_PARTS; do echo "${rel%.c} $h"; done >>"$tmp/incs"
	sed -n 's|^/\* \([^:]*\.h\):[0-9]*:NC \*/ \(.*\)$|\1 \2|p' "$tmp/aux" |
		awk '$1 ~ /^(user|cli)\// { if (match($0, /[A-Za-z_][A-Za-z0-9_]* \(/)) print substr($0, RSTART, RLENGTH - 2), $1 }' >>"$tmp/decl"
done
sort -u "$tmp/decl" | sort -k1,1 >"$tmp/decl.s"
[ -s "$tmp/decl.s" ]
check "layers/declarations_found" $? "no function declared in a header of user/ or cli/ found (gcc -aux-info?)"
# "function header definer": the definer from the objects ("-": none)
bad=$(join -a1 -e - -o 0,1.2,2.2 "$tmp/decl.s" "$tmp/def.s" | awk -v any="$HEADERS_ANY" '
	BEGIN { n = split(any, a, " "); for (i = 1; i <= n; i++) exempt[a[i]] = 1 }
	$2 in exempt { next }
	{ hdir = $2; sub(/\/[^\/]*$/, "", hdir); x = $2; sub(/.*\//, "", x); sub(/\.h$/, "", x); sub(/_int$/, "", x)
	  if ($3 == "-") { print $1 " (" $2 ") is defined in no production file"; next }
	  cdir = $3; sub(/\/[^\/]*$/, "", cdir); c = $3; sub(/.*\//, "", c)
	  if (cdir == hdir && (c == x || index(c, x "_") == 1)) next
	  print $2 " declares " $1 " of " $3 ".c" }' | sort -u | head -8 | tr '\n' ';')
[ -z "$bad" ]
check "layers/headers_own_functions" $? "a header declares another file's function (give that file its own header): $bad"

# a file includes the header of each function of another file it calls
# (layers/includes_direct), not through another header
bad=$(awk '{ print $3, $1 }' "$tmp/edges" | sort -k1,1 | join - "$tmp/decl.s" |
	awk 'NR == FNR { have[$1 " " $2] = 1; next }
	     { k = $2 " " $1; if (have[$2 " " $3]) ok[k] = 1; else if (!(k in need)) need[k] = $3 }
	     END { for (k in need) if (!(k in ok)) { split(k, a, " "); print a[1] ".c calls " a[2] " without including " need[k] } }' \
	"$tmp/incs" - | sort | head -8 | tr '\n' ';')
[ -z "$bad" ]
check "layers/includes_direct" $? "include the header of what a file calls: $bad"

[ "$tree_only" = 1 ] && exit $failed

# --- size: concerns split into files, not grown into one ------------------

MAX_LINES=600
bad=$(wc -l "$top"/user/*/*.[ch] "$top"/user/vnetd/*/*.[ch] "$top"/cli/*.[ch] "$top"/cli/*/*.[ch] "$top"/bpf/*.[ch] \
	"$top"/include/vnet/*.h 2>/dev/null | awk -v max=$MAX_LINES -v top="$top/" \
	'$2 != "total" && $1 > max { sub(top, "", $2); print $2 " " $1 }' | tr '\n' ';')
[ -z "$bad" ]
check "layers/file_size" $? "production files over $MAX_LINES lines: $bad"

# a function is a step: past MAX_FN lines it is split into the steps it
# takes (a definition runs from a "{" alone on its line to the first "}"
# alone on its line, as the kernel's style writes them)
MAX_FN=80
bad=$(for f in "$top"/user/*/*.[ch] "$top"/user/vnetd/*/*.[ch] "$top"/user/vnetd/*.c "$top"/cli/*.[ch] \
	"$top"/cli/*/*.[ch] "$top"/bpf/*.[ch]; do
	awk -v max=$MAX_FN -v f="${f#"$top"/}" '/^\{/ { start = NR; name = prev }
		/^\}/ && start { if (NR - start + 1 > max) print f ": " name " " NR - start + 1; start = 0 }
		{ prev = $0 }' "$f"
done | tr '\n' ';')
[ -z "$bad" ]
check "layers/function_size" $? "production functions over $MAX_FN lines (split them by step): $bad"

# a folder is a concern: past MAX_C files it is split into folders
bad=""
for d in "$top"/user/*/ "$top"/user/lib/*/ "$top"/user/vnetd/*/ "$top"/cli/ "$top"/cli/*/ "$top"/bpf/; do
	n=$(printf '%s\n' "$d"*.c | grep -c .)
	[ "$n" -gt "$MAX_C" ] && bad+="${d#"$top"/} $n;"
done
[ -z "$bad" ]
check "layers/folder_size" $? "production folders with more than $MAX_C .c files: $bad"

# --- the production build has no test switch -----------------------------

# getenv() calls of the production sources, as the production build
# preprocesses them (name "?" when it is not a literal).  Preprocessed are
# the files that mention getenv themselves or through a header of user/.
bad=""
hdrs=$(grep -l getenv "$top"/user/*/*.h "$top"/user/lib/*/*.h "$top"/user/vnetd/*/*.h 2>/dev/null | xargs -r -n1 basename | tr '\n' '|')
for f in "$top"/user/*/*.c "$top"/user/lib/*/*.c "$top"/user/vnetd/*/*.c; do
	rel=${f#"$top"/}
	case " $TEST_ONLY " in *" $rel "*) continue ;; esac
	grep -q getenv "$f" ||
		{ [ -n "$hdrs" ] && grep -qE "#[[:space:]]*include[[:space:]]*\"(${hdrs%|})\"" "$f"; } ||
		continue
	if ! cc -E -P -std=gnu11 -D_GNU_SOURCE -I"$top/include" -I"$top/user/lib" \
		-I"$top/user/vhost" -I"$top/user/vnetd" -I"$OUT" "$f" -o "$tmp/pp.c" 2>"$tmp/pp.err"; then
		bad+="$rel does not preprocess: $(head -c 200 "$tmp/pp.err");"
		continue
	fi
	# a call, not libc's declaration of the function
	for n in $(grep -oE '\bgetenv[[:space:]]*\([^)]*\)' "$tmp/pp.c" |
		grep -v 'getenv[[:space:]]*(const char' |
		sed -E 's/getenv[[:space:]]*\([[:space:]]*"([A-Za-z0-9_]+)"[[:space:]]*\)/\1/; s/getenv.*/?/'); do
		case " $ENV_ALLOWED " in *" $n "*) continue ;; esac
		bad+="$rel: getenv($n);"
	done
done
[ -z "$bad" ]
check "layers/no_test_getenv" $? "production code reads the environment beyond systemd's $ENV_ALLOWED: $bad"

# the switches: every variable name the test-only code and the test
# builds' #ifdef VNET_TESTING blocks read
switches=$(cat "$top"/$TEST_ONLY "$top"/user/lib/attach/attach.c "$top"/user/lib/attach/hooks.c |
	grep -oE '"VNETD?_[A-Z0-9_]+"' | tr -d '"' | sort -u | tr '\n' ' ')
[ -n "$switches" ]
check "layers/switches_found" $? "no switch name found in $TEST_ONLY"
for b in vnetd vnetctl vnetd-testing vnetctl-testing; do
	[ -x "$OUT/$b" ] || { check "layers/binaries" 1 "$OUT/$b is not built"; continue; }
	strings "$OUT/$b" >"$tmp/strings.$b"
done
bad=""
for b in vnetd vnetctl; do
	[ -s "$tmp/strings.$b" ] || continue
	for s in $switches; do
		grep -qw "$s" "$tmp/strings.$b" && bad+="$b holds $s;"
	done
	nm "$OUT/$b" 2>/dev/null | grep -qwE 'vhost_mem_log_disable_for_test|vnetd_testing_init|vnetd_switch' &&
		bad+="$b has test-only functions;"
done
[ -z "$bad" ]
check "layers/production_no_switches" $? "$bad"
# ... and the test builds do hold them: the check above can see a name
missing=""
for s in $switches; do
	case $s in VNET_XMIT_DISPATCH) b=vnetctl-testing ;; *) b=vnetd-testing ;; esac
	[ -s "$tmp/strings.$b" ] && ! grep -qw "$s" "$tmp/strings.$b" && missing+="$b lacks $s;"
done
[ -z "$missing" ]
check "layers/test_builds_have_switches" $? "$missing"

# --- the checks catch what they are for ----------------------------------

# a small tree of the same shape (vnetd: main, port, datapath, base;
# vnetctl: main, exporter, base; a library), each file calling the one
# below it, built into TREE/build: no check fails on it
fixture()
{
	local t=$1 f

	mkdir -p "$t"/user/lib "$t"/user/vnetd/port "$t"/user/vnetd/datapath "$t"/user/vnetd/base \
		"$t"/cli/exporter "$t"/cli/base
	printf 'int vnet_lib(void);\n' >"$t/user/lib/libvnet.h"
	printf '#include "libvnet.h"\nint vnet_lib(void) { return 0; }\n' >"$t/user/lib/lib.c"
	printf 'int util_now(void);\n' >"$t/user/vnetd/base/util.h"
	printf '#include "util.h"\nint util_now(void) { return 1; }\n' >"$t/user/vnetd/base/util.c"
	printf 'int qp_run(void);\n' >"$t/user/vnetd/datapath/qp.h"
	printf '#include "qp.h"\n#include "base/util.h"\nint qp_run(void) { return util_now(); }\n' \
		>"$t/user/vnetd/datapath/qp.c"
	printf 'int port_add(void);\n' >"$t/user/vnetd/port/port.h"
	printf '#include "port.h"\n#include "datapath/qp.h"\n#include "libvnet.h"\nint port_add(void) { return qp_run() + vnet_lib(); }\n' \
		>"$t/user/vnetd/port/port.c"
	printf '#include "port/port.h"\nint main(void) { return port_add(); }\n' >"$t/user/vnetd/main.c"
	printf 'int cli_util(void);\n' >"$t/cli/base/util.h"
	printf '#include "util.h"\nint cli_util(void) { return 2; }\n' >"$t/cli/base/util.c"
	printf 'int do_exporter(void);\n' >"$t/cli/exporter/exporter.h"
	printf '#include "exporter.h"\n#include "base/util.h"\nint do_exporter(void) { return cli_util(); }\n' \
		>"$t/cli/exporter/exporter.c"
	printf 'int do_stats(void);\n' >"$t/cli/stats.h"
	printf '#include "stats.h"\n#include "exporter/exporter.h"\nint do_stats(void) { return do_exporter(); }\n' \
		>"$t/cli/stats.c"
}

# fixture_build TREE: every .c to TREE/build/FILE.o, with the build's -I
fixture_build()
{
	local t=$1 f rel inc

	for f in "$t"/user/*/*.c "$t"/user/vnetd/*/*.c "$t"/user/vnetd/*.c "$t"/cli/*.c "$t"/cli/*/*.c; do
		rel=${f#"$t"/}
		inc="-Iinclude -Iuser/lib -Iuser/vhost -Iuser/vnetd"
		case $rel in cli/*) inc="-Icli $inc" ;; esac
		mkdir -p "$t/build/$(dirname "$rel")"
		# shellcheck disable=SC2086 # the -I words
		(cd "$t" && cc -c -std=gnu11 $inc "$rel" -o "build/${rel%.c}.o") || return 1
	done
}

# catches NAME CHECK EDIT: a fixture, EDIT run in it (a shell command), its
# build: the structure checks fail CHECK and no other (CHECK "": none)
catches()
{
	local name=$1 want=$2 edit=$3 t=$tmp/fx.$1 out fails

	fixture "$t"
	{ (cd "$t" && eval "$edit") && fixture_build "$t"; } >"$tmp/fx.err" 2>&1 ||
		{ check "layers/catches_$name" 1 "the tree could not be made: $(head -c 300 "$tmp/fx.err")"; return; }
	out=$(VNETD_PARTS="main port datapath base" CLI_PARTS="main exporter base" \
		"$self" --tree "$t" 2>&1)
	fails=$(sed -n 's/^FAIL: \(layers\/[a-z_]*\).*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')
	[ "$fails" = "${want:+layers/$want }" ]
	check "layers/catches_$name" $? "wanted ${want:-no check} to fail, failed: '$fails' $(grep FAIL <<<"$out" | head -3 | tr '\n' ' ')"
}

catches clean_tree "" "true"
# a file split from X (X_more.c) may have its functions declared in X.h
catches split_file_shares_header "" \
	"printf 'int util_more(void);\n' >>user/vnetd/base/util.h
	 printf '#include \"util.h\"\nint util_more(void) { return util_now(); }\n' >user/vnetd/base/util_more.c"
# datapath includes a header of port, the part above it
catches upward_include vnetd_includes \
	"printf 'struct port_cfg { int n; };\n' >user/vnetd/port/port_types.h
	 sed -i '1i #include \"port/port_types.h\"' user/vnetd/datapath/qp.c"
# datapath calls a function of port
catches upward_call vnetd_order \
	"printf 'int port_mon(void) { return 3; }\n' >user/vnetd/port/mon.c
	 printf 'int port_mon(void);\nint qp_mon(void) { return port_mon(); }\n' >>user/vnetd/datapath/qp.c"
# base/util.h declares a function of base/clock.c
catches header_declares_another_file headers_own_functions \
	"printf 'int base_clock(void);\n' >>user/vnetd/base/util.h
	 printf '#include \"util.h\"\nint base_clock(void) { return 4; }\n' >user/vnetd/base/clock.c"
# a folder that is in no part of the list
catches folder_not_in_parts vnetd_parts \
	"mkdir user/vnetd/extra && printf 'int extra_x(void) { return 5; }\n' >user/vnetd/extra/x.c"
# port calls base's util_now() with base/util.h reached through qp.h
catches include_through_another_header includes_direct \
	"sed -i '1i #include \"base/util.h\"' user/vnetd/datapath/qp.h
	 printf 'int port_now(void) { return util_now(); }\n' >>user/vnetd/port/port.c"
# vnetctl's exporter includes a header of the commands above it
catches cli_upward_include cli_includes \
	"printf 'struct cmd_types { int n; };\n' >cli/cmd_types.h
	 sed -i '1i #include \"cmd_types.h\"' cli/exporter/exporter.c"

exit $failed
