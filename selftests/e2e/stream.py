#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The peer of the live-migration scenario (selftests/e2e/faults.sh).

    stream.py HOST PORT BYTES RATE SEED

Connects to HOST:PORT (retrying for 30 s), sends BYTES pseudo-random bytes
(from SEED) at RATE bytes a second, closes, and prints one line:

    sent=N sha256=HEX secs=S [error=WHAT]

Every send is bounded (30 s without progress ends it with error=timeout).
"""
import hashlib
import random
import socket
import sys
import time


def main():
    host, port, total, rate, seed = (sys.argv[1], int(sys.argv[2]),
                                     int(sys.argv[3]), float(sys.argv[4]),
                                     int(sys.argv[5]))
    data = random.Random(seed).randbytes(total)
    h = hashlib.sha256()
    sent = 0
    err = ""
    t0 = time.monotonic()
    sock = None
    while sock is None:
        try:
            sock = socket.create_connection((host, port), timeout=5)
        except OSError as e:
            if time.monotonic() - t0 > 30:
                print(f"sent=0 sha256= secs=0 error=connect:{e.errno}")
                return 1
            time.sleep(0.2)
    sock.settimeout(30)
    start = time.monotonic()
    chunk = 16384
    try:
        while sent < total:
            due = start + sent / rate
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            n = sock.send(data[sent:sent + chunk])
            h.update(data[sent:sent + n])
            sent += n
        sock.shutdown(socket.SHUT_WR)
        # the guest closes once it has read everything
        sock.recv(1)
    except socket.timeout:
        err = " error=timeout"
    except OSError as e:
        err = f" error=errno{e.errno}"
    sock.close()
    print(f"sent={sent} sha256={h.hexdigest()} "
          f"secs={time.monotonic() - start:.1f}{err}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
