#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd under valgrind (memcheck) through a short load and a shutdown: no
invalid access, no uninitialised value used, no memory definitely lost.

valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite

The load touches every op and the ways a connection ends: grants that wait
and time out, releases, detached leases with a ttl, watchers, status,
resources, render, malformed and oversized lines, half-closes, clients that
disconnect holding or waiting, a client that does not read, then a drain
shutdown with leases still held.

usage: BERTHD=build/daemon/berthd test_valgrind.py
"""
import os
import shutil
import socket
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CORES_PER_NODE, NODES, Checks, Daemon, sanitized, wait_until  # noqa: E402

t = Checks()
VALGRIND = ["valgrind", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--track-origins=yes", "--num-callers=30"]


def load(d):
    a, b = d.client(timeout=120), d.client(timeout=120)
    w = d.client(timeout=120)
    t.check(w.request("watch", history=True).get("ok"), "a watcher")
    for i in range(60):
        r = a.request("acquire", cores=1 + i % 40, label=f"s{i}", env=i % 2 == 0)
        t.check(r.get("ok"), f"grant {i}", str(r)[:200]) if i < 2 else None
        a.request("release", lease=r["lease"])
    big = a.request("acquire", ntasks=4 * CORES_PER_NODE, cpus_per_task=1)
    r = b.request("acquire", cores=8, timeout=0.5)
    t.check(r.get("error", {}).get("code") == "timeout", "a waiter times out", str(r)[:200])
    b.send("acquire", cores=8, label="waits")
    time.sleep(0.5)
    a.request("release", lease=big["lease"])
    t.check(b.reply().get("ok"), "the waiter is granted after the release")
    det = a.request("acquire", cores=2, detach=True, ttl=1)
    det2 = a.request("acquire", cores=2, detach=True)
    b.request("release", lease=det2["lease"])
    a.request("status")
    a.request("resources")
    a.request("resources", lease=det["lease"])
    a.request("render", placement={"nodes": [NODES[1]], "cores": [[0, 1]], "gpus": 0}, argv=["./x"])
    a.request("hello", version=1)
    for line in (b"{bad\n", b'{"op":"acquire","id":1,"cores":-1}\n', b'{"op":"x","id":2}\n',
                 b"[" * 3000 + b"\n", b'{"op":"status","id":3,"id":4}\n'):
        a.send_raw(line)
        a.reply()
    # an oversized line closes its connection
    o = socket.socket(socket.AF_UNIX)
    o.connect(d.sock)
    try:
        o.sendall(b"x" * 70000)
        o.settimeout(30)
        o.recv(1000)
    except OSError:
        pass
    o.close()
    # half-close, disconnect holding, disconnect waiting
    h = socket.socket(socket.AF_UNIX)
    h.connect(d.sock)
    h.sendall(b'{"op":"acquire","id":1,"cores":3}\n{"op":"status","id":2}')
    h.shutdown(socket.SHUT_WR)
    h.settimeout(60)
    f = h.makefile("rb")
    f.readline()
    f.close()
    h.close()
    c = d.client()
    c.request("acquire", cores=5)
    c.close()
    c = d.client()
    c.send("acquire", ntasks=4 * CORES_PER_NODE + 1, cpus_per_task=1)
    c.close()
    c = d.client()
    c.request("acquire", cores=100)
    c2 = d.client()
    c2.send("acquire", ntasks=4 * CORES_PER_NODE, cpus_per_task=1)
    time.sleep(0.3)
    c.close()
    c2.close()
    # a client that does not read
    n = socket.socket(socket.AF_UNIX)
    n.connect(d.sock)
    n.setblocking(False)
    try:
        n.send(b"".join(b'{"op":"status","id":%d}\n' % i for i in range(3000)))
    except OSError:
        pass
    time.sleep(2)
    n.close()
    time.sleep(1.5)        # the ttl lease expires
    held = a.request("acquire", cores=4, label="held at shutdown")
    t.check(held.get("ok"), "a lease is held at shutdown")
    for _ in range(3):
        w.read()
    r = b.request("shutdown", mode="force")
    t.check(r.get("ok"), "shutdown is accepted", str(r))
    for c in (a, b, w):
        c.close()


def main():
    if sanitized():
        print("skipped: berthd is built with AddressSanitizer (valgrind cannot run it)")
        sys.exit(77)
    if not shutil.which("valgrind"):
        print("skipped: valgrind is not installed")
        sys.exit(77)
    d = Daemon(wrapper=VALGRIND, args=["--output-stall", "1"])
    d.env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    try:
        d.start(wait_s=120)
        load(d)
        ok = wait_until(lambda: not d.alive(), timeout=120, step=0.2)
        t.check(ok, "berthd exits after the shutdown")
        code = d.proc.returncode
        with open(d.err) as f:
            text = f.read()
        t.check("ERROR SUMMARY: 0 errors" in text, "valgrind ran and reports no error",
                text[-3000:])
        t.check(code == 0, f"valgrind found nothing (exit {code}; 99 means errors or leaks)",
                text[-3000:] if code else "")
    except Exception as e:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        t.check(False, "no exception", repr(e) + " " + d.stderr()[-2000:])
    finally:
        d.cleanup()
    t.finish()


main()
