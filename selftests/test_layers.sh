#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# vnet-test: parallel (reads the tree and the built binaries, changes nothing)
#
# The code's dependencies point one way (docs/design.md, "Layers").
#
# From the built objects (nm: which file defines a symbol, which files use
# it):
#   - no import circle among the production files (user/lib, user/vhost,
#     user/vnetd, cli): tsort finds none;
#   - the directories depend downwards only: cli and vnetd on libvnet and
#     libvhost, libvnet and libvhost on neither vnetd nor each other;
#   - inside vnetd, every file calls only files of its own part or of the
#     parts below it; the parts are vnetd's folders, top to bottom in
#     VNETD_PARTS (main.c, at the top of user/vnetd/, is the part "main");
#   - inside the vhost library, every file calls only files below it in
#     VHOST_LAYERS.
#
# From the #include lines of the sources (user/vnetd, user/vhost):
#   - a file includes only headers of its own layer and below (vnetd: a
#     layer is a part, a folder; vhost: a word of the list, the names of
#     one layer joined by commas);
#   - no include circle: between the modules (a module is a .c and its .h,
#     X_int.h being X's private header; vhost: the files of one layer),
#     the include edges have no loop;
#   - a file includes headers of its own directory, and of the
#     directories below it only (vnetd: libvnet, libvhost, and another
#     part's header by its folder, "datapath/qp.h");
#   - the private headers of user/vhost are included inside it only.
#
# No production file (user/, cli/, bpf/, include/vnet) has more than 600
# lines.
#
# And the production build has no test switch (docs/vnetd.md, "Test
# builds"): the sources of user/ preprocessed as build/vnetd and
# build/vnetctl are built call getenv() for systemd's variables only; those
# binaries hold none of the switches' names, nor a test-only function,
# while the test builds hold every name (so that the check can see them).
#
# A call or an include against the order names the files and the symbol
# or the header.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-build}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac

# layers top to bottom, per directory: a file may call the ones after it
# and include the headers of its own layer and of the ones after it
# vnetd's parts (the folders of user/vnetd/), top to bottom
VNETD_PARTS="main handover config agent port datapath sandbox tap base"
VHOST_LAYERS="server dev_state vhost_user,handlers,vring_fds,vu_dev virtq split packed packed_event journal vq fault mem log"
# headers of user/vhost that only its own files include
VHOST_PRIVATE="vhost_user_int.h vu_dev_int.h vring_fds.h vq_int.h split.h packed.h packed_event.h journal_int.h"
# the environment production code may read: systemd's
ENV_ALLOWED="JOURNAL_STREAM NOTIFY_SOCKET"
# sources that only the test builds compile (the Makefile leaves them out)
TEST_ONLY="user/vnetd/base/testing.c"

failed=0
check() { # name, condition-result, reason
	if [ "$2" = 0 ]; then
		echo "PASS: $1"
	else
		echo "FAIL: $1: $3"
		failed=1
	fi
}

objs=$(ls "$OUT"/user/lib/*.o "$OUT"/user/vhost/*.o "$OUT"/user/vnetd/*.o "$OUT"/user/vnetd/*/*.o \
	"$OUT"/cli/*.o "$OUT"/cli/*/*.o 2>/dev/null)
if [ -z "$objs" ]; then
	echo "FAIL: layers/objects: no objects under $OUT (run make first)"
	exit 1
fi
tmp=$(mktemp -d /tmp/vnet-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# --- calls, from the objects ---------------------------------------------

# "file symbol" for every global definition and every use
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
# 3b. vnetd's parts in order: a file calls its own part or the parts below
# (a file's part is its folder under user/vnetd/; main.c's is "main")
bad=$(awk -v parts="$VNETD_PARTS" '
	function part(f) { sub(/^user\/vnetd\//, "", f); if (f !~ /\//) return f; sub(/\/.*/, "", f); return f }
	BEGIN { n = split(parts, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
	index($1, "user/vnetd/") == 1 && index($2, "user/vnetd/") == 1 {
		a = part($1); b = part($2)
		if (!(a in rank)) { print $1 " is in no part of the list"; next }
		if (!(b in rank)) { print $2 " is in no part of the list"; next }
		if (rank[a] > rank[b]) print $1 " -> " $2 " (" $3 ": " b " is above " a ")"
	}' "$tmp/edges" | sort -u | head -5 | tr '\n' ';')
[ -z "$bad" ]
check "layers/vnetd_order" $? "calls upwards: $bad"
order_check vhost_order user/vhost "$VHOST_LAYERS"

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
	local bad loop

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
	[ -z "$bad" ]
	check "layers/$1_includes" $? "includes upwards: $bad"
	sort -u "$tmp/medges.$1" | tsort >/dev/null 2>"$tmp/itsort.$1"
	loop=$(grep -v '^tsort: -: input contains a loop:$' "$tmp/itsort.$1" | sed 's/^tsort: //' | tr '\n' ' ')
	[ ! -s "$tmp/itsort.$1" ]
	check "layers/$1_include_circle" $? "modules that include each other's headers: $loop"
}
include_check vhost user/vhost "$VHOST_LAYERS"

# vnetd: "file header" with both as paths under user/vnetd/ (a header of
# the file's own folder, or another part's by its folder: "datapath/qp.h");
# headers of libvnet, libvhost and the build are left out
vnetd_includes()
{
	local f rel dir h

	for f in "$top"/user/vnetd/*.[ch] "$top"/user/vnetd/*/*.[ch]; do
		rel=${f#"$top"/user/vnetd/}
		dir=$(dirname "$rel")
		for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			if [ -e "$top/user/vnetd/$dir/$h" ]; then
				[ "$dir" = . ] && echo "$rel $h" || echo "$rel $dir/$h"
			elif [ -e "$top/user/vnetd/$h" ]; then
				echo "$rel $h"
			fi
		done
	done
}
vnetd_includes >"$tmp/inc.vnetd"
[ -s "$tmp/inc.vnetd" ]
check "layers/vnetd_includes_found" $? "no #include of a vnetd header found"
bad=$(awk -v parts="$VNETD_PARTS" '
	function part(f) { if (f !~ /\//) { sub(/\.[ch]$/, "", f); return f } sub(/\/.*/, "", f); return f }
	function module(f) { sub(/\.[ch]$/, "", f); sub(/_int$/, "", f); return f }
	BEGIN { n = split(parts, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
	{ a = part($1); b = part($2)
	  if (!(a in rank)) { print $1 " is in no part of the list"; next }
	  if (!(b in rank)) { print $2 " is in no part of the list"; next }
	  if (rank[a] > rank[b]) print $1 " includes " $2 " (" b " is above " a ")"
	  if (module($1) != module($2)) print module($1), module($2) > "/dev/stderr" }' \
	"$tmp/inc.vnetd" 2>"$tmp/medges.vnetd" | sort -u | head -5 | tr '\n' ';')
[ -z "$bad" ]
check "layers/vnetd_includes" $? "includes upwards: $bad"
sort -u "$tmp/medges.vnetd" | tsort >/dev/null 2>"$tmp/itsort.vnetd"
loop=$(grep -v '^tsort: -: input contains a loop:$' "$tmp/itsort.vnetd" | sed 's/^tsort: //' | tr '\n' ' ')
[ ! -s "$tmp/itsort.vnetd" ]
check "layers/vnetd_include_circle" $? "modules that include each other's headers: $loop"

# where a quoted include of a file in DIR is found: its own directory, or
# one of ALLOWED (in the compiler's -I order), or the build's skeletons
dir_check()
{
	local dir=$1 allowed=$2 f h d found bad=""

	for f in "$top/$dir"/*.[ch] "$top/$dir"/*/*.[ch]; do
		[ -e "$f" ] || continue
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
dir_check user/lib ""
dir_check cli "cli user/lib"

bad=""
for h in $VHOST_PRIVATE; do
	for f in $(grep -lE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$h\"" \
		"$top"/user/vnetd/*.[ch] "$top"/user/vnetd/*/*.[ch] "$top"/user/lib/*.[ch] "$top"/cli/*.[ch] "$top"/cli/*/*.[ch] \
		"$top"/selftests/*.[ch] "$top"/selftests/frontend/*.[ch] \
		"$top"/fuzz/*.[ch] "$top"/bench/*.[ch] 2>/dev/null); do
		bad+="${f#"$top"/} includes $h;"
	done
done
[ -z "$bad" ]
check "layers/vhost_private_headers" $? "private to user/vhost: $bad"

# --- size: concerns split into files, not grown into one ------------------

MAX_LINES=600
bad=$(wc -l "$top"/user/*/*.[ch] "$top"/user/vnetd/*/*.[ch] "$top"/cli/*.[ch] "$top"/cli/*/*.[ch] "$top"/bpf/*.[ch] \
	"$top"/include/vnet/*.h 2>/dev/null | awk -v max=$MAX_LINES -v top="$top/" \
	'$2 != "total" && $1 > max { sub(top, "", $2); print $2 " " $1 }' | tr '\n' ';')
[ -z "$bad" ]
check "layers/file_size" $? "production files over $MAX_LINES lines: $bad"

# --- the production build has no test switch -----------------------------

# getenv() calls of the production sources, as the production build
# preprocesses them (name "?" when it is not a literal).  Preprocessed are
# the files that mention getenv themselves or through a header of user/.
bad=""
hdrs=$(grep -l getenv "$top"/user/*/*.h "$top"/user/vnetd/*/*.h 2>/dev/null | xargs -r -n1 basename | tr '\n' '|')
for f in "$top"/user/*/*.c "$top"/user/vnetd/*/*.c; do
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
switches=$(cat "$top"/$TEST_ONLY "$top"/user/lib/attach.c |
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

exit $failed
