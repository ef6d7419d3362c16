#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The code's dependencies point one way (docs/design.md, "Layers").  From
# the built objects (nm: which file defines a symbol, which files use it):
#
#   - no import circle among the production files (user/lib, user/vhost,
#     user/vnetd, cli): tsort finds none;
#   - the directories depend downwards only: cli and vnetd on libvnet and
#     libvhost, libvnet and libvhost on neither vnetd nor each other;
#   - inside vnetd and the vhost library, every file calls only files below
#     it in VNETD_LAYERS, VHOST_LAYERS.
#
# A call against the order names the caller, the callee and the symbol.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-build}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac

# files top to bottom, per directory: a file may call the ones after it
VNETD_LAYERS="main opts portcfg agent port monitor device mailbox qp qthread tx rx rx_inplace coal tapio sandbox seccomp maps tap notify"
VHOST_LAYERS="server vhost_user handlers vring_fds vu_dev virtq split packed vq fault mem log"

check() { # name, condition-result, reason
	if [ "$2" = 0 ]; then echo "PASS: $1"; else echo "FAIL: $1: $3"; fi
}

objs=$(ls "$OUT"/user/lib/*.o "$OUT"/user/vhost/*.o "$OUT"/user/vnetd/*.o \
	"$OUT"/cli/*.o 2>/dev/null)
if [ -z "$objs" ]; then
	echo "FAIL: layers/objects: no objects under $OUT (run make first)"
	exit 1
fi
tmp=$(mktemp -d /tmp/vnet-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

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

	bad=$(awk -v dir="$2/" -v layers="$3" 'BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
		index($1, dir) == 1 && index($2, dir) == 1 {
			a = $1; b = $2; sub(/.*\//, "", a); sub(/.*\//, "", b)
			if (!(a in rank)) { print a " is not in the list"; next }
			if (!(b in rank)) { print b " is not in the list"; next }
			if (rank[a] >= rank[b]) print a " -> " b " (" $3 ")"
		}' "$tmp/edges" | sort -u | head -5 | tr '\n' ';')
	[ -z "$bad" ]
	check "layers/$1" $? "calls upwards: $bad"
}
order_check vnetd_order user/vnetd "$VNETD_LAYERS"
order_check vhost_order user/vhost "$VHOST_LAYERS"
