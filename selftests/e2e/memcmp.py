#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Guest RAM of the migration source against the destination's.

    memcmp.py SRC DST

SRC and DST are the two QEMUs' memory-backend-memfd files (their
/proc/PID/fd/N), read while both QEMUs are paused after the switchover.
Prints one line:

    pages=N differ=M first=0xGPA,0xGPA,...

N 4 KiB pages compared, M of them differ; the first (up to 8) differing
pages by guest-physical address (for the pc machine's RAM below 4 GiB the
memfd offset is the guest-physical address).  Exit status 0 when the two
are the same size, 2 otherwise.
"""
import sys

PAGE = 4096
CHUNK = 256 * PAGE


def main():
    if len(sys.argv) != 3:
        print("usage: memcmp.py SRC DST", file=sys.stderr)
        return 2
    pages = 0
    diff = []
    ndiff = 0
    with open(sys.argv[1], "rb") as a, open(sys.argv[2], "rb") as b:
        off = 0
        while True:
            x = a.read(CHUNK)
            y = b.read(CHUNK)
            if len(x) != len(y):
                print("sizes differ at offset 0x%x" % (off + min(len(x), len(y))))
                return 2
            if not x:
                break
            if x != y:
                for p in range(0, len(x), PAGE):
                    if x[p:p + PAGE] != y[p:p + PAGE]:
                        ndiff += 1
                        if len(diff) < 8:
                            diff.append("0x%x" % (off + p))
            pages += len(x) // PAGE
            off += len(x)
    print("pages=%d differ=%d first=%s" % (pages, ndiff, ",".join(diff) or "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
