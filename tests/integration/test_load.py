#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd under load (issue 10):

- 4,000 clients connected at once, each asking for one core: 512 are granted
  at once, the other 3,488 wait in the queue and are granted one by one as
  the holders disconnect; every client is served, no core is held twice;
- 100,000 grants (and as many releases) over 32 connections, each checked
  against the cores the test knows to be held; berthd's memory and
  descriptors before and after.

Both raise RLIMIT_NOFILE as needed (berthd raises its own soft limit to the
hard one at start). BERTH_LOAD_GRANTS changes the number of grants.

usage: BERTHD=build/daemon/berthd test_load.py
"""
import json
import os
import random
import selectors
import socket
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CORES_PER_NODE, NODES, Checks, Daemon, held_cores,  # noqa: E402
                     open_fds, raise_nofile, rss_kib, sanitized, status, wait_until)

ALL = CORES_PER_NODE * len(NODES)
NCLIENTS = int(os.environ.get("BERTH_LOAD_CLIENTS", "4000"))
NGRANTS = int(os.environ.get("BERTH_LOAD_GRANTS", "100000"))
t = Checks()


class Conn:
    def __init__(self, path, i):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.s.setblocking(False)
        self.i = i
        self.inbuf = b""
        self.out = b""
        self.held = None

    def lines(self, data):
        self.inbuf += data
        *done, self.inbuf = self.inbuf.split(b"\n")
        return [json.loads(x) for x in done]

    def send(self, sel, obj):
        self.out += (json.dumps(obj) + "\n").encode()
        self.flush(sel)

    def flush(self, sel):
        try:
            n = self.s.send(self.out)
            self.out = self.out[n:]
        except BlockingIOError:
            pass
        want = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.out else 0)
        sel.modify(self.s, want, self)


def test_many_clients(d):
    conns = []
    for i in range(NCLIENTS):
        conns.append(Conn(d.sock, i))
    s = status(d)
    peak = s["daemon"]["connections"]
    t.check(peak == NCLIENTS + 1, f"{NCLIENTS} clients are connected at once", str(peak))
    sel = selectors.DefaultSelector()
    for c in conns:
        sel.register(c.s, selectors.EVENT_READ, c)
    for c in conns:
        c.send(sel, {"op": "acquire", "id": c.i, "cores": 1, "label": f"c{c.i}"})
    held, granted, bad, queued_seen = set(), 0, [], 0
    open_conns = len(conns)
    deadline = time.time() + 300
    checked_queue = False
    while open_conns and time.time() < deadline:
        for key, ev in sel.select(timeout=1):
            c = key.data
            if ev & selectors.EVENT_WRITE:
                c.flush(sel)
            if not ev & selectors.EVENT_READ:
                continue
            try:
                data = c.s.recv(65536)
            except BlockingIOError:
                continue
            if not data:
                bad.append((c.i, "closed"))
                sel.unregister(c.s)
                c.s.close()
                open_conns -= 1
                continue
            for r in c.lines(data):
                cores = held_cores(r.get("placement", {"nodes": [], "cores": []})) if r.get("ok") else None
                if not cores or r.get("id") != c.i or cores & held:
                    bad.append((c.i, r))
                else:
                    held |= cores
                    c.held = cores
                    granted += 1
        if not checked_queue and granted >= ALL:
            s = status(d)
            queued_seen = len(s["queue"])
            checked_queue = True
        # the holders go away; their cores pass to the waiters
        for c in conns:
            if c.held is not None and c.s.fileno() >= 0:
                sel.unregister(c.s)
                c.s.close()
                open_conns -= 1
                held -= c.held
                c.held = None
    t.check(granted == NCLIENTS and not bad, f"all {NCLIENTS} clients are granted, no core twice",
            f"{granted} granted; {bad[:3]}")
    t.check(queued_seen >= NCLIENTS - 2 * ALL, "most of them waited in the queue", str(queued_seen))
    for c in conns:
        if c.s.fileno() >= 0:
            c.s.close()
    ok = wait_until(lambda: status(d)["daemon"]["connections"] == 1, timeout=30)
    t.check(ok, "and every connection is gone afterwards")
    print(f"peak connected clients: {peak - 1}; queue length seen: {queued_seen}", flush=True)
    return peak - 1


def test_many_grants(d):
    pid = d.proc.pid
    rss0, fds0 = rss_kib(pid), open_fds(pid)
    rnd = random.Random(7)
    sel = selectors.DefaultSelector()
    conns = [Conn(d.sock, i) for i in range(32)]
    for c in conns:
        sel.register(c.s, selectors.EVENT_READ, c)
    held, bad = set(), []
    granted = released = sent = 0
    shapes = [{"cores": 1}, {"cores": 8}, {"cores": 40}, {"ntasks": 150, "cpus_per_task": 1},
              {"ntasks": 4, "cpus_per_task": 4}]

    def acquire(c):
        nonlocal sent
        sent += 1
        c.send(sel, dict(op="acquire", id=sent, label="g", **rnd.choice(shapes)))

    for c in conns:
        acquire(c)
    start = time.time()
    while (granted < NGRANTS or any(c.held for c in conns)) and time.time() - start < 600:
        for key, ev in sel.select(timeout=5):
            c = key.data
            if ev & selectors.EVENT_WRITE:
                c.flush(sel)
            if not ev & selectors.EVENT_READ:
                continue
            data = c.s.recv(1 << 20)
            if not data:
                bad.append("closed")
                sel.unregister(c.s)
                continue
            for r in c.lines(data):
                if not r.get("ok"):
                    bad.append(r)
                elif "placement" in r:
                    cores = held_cores(r["placement"])
                    if cores & held:
                        bad.append(("twice", r["lease"]))
                    held |= cores
                    granted += 1
                    c.held = (r["lease"], cores)
                    # release it; the cores are free from the moment it is sent
                    held -= cores
                    c.send(sel, {"op": "release", "id": -1, "lease": r["lease"]})
                else:
                    released += 1
                    c.held = None
                    if sent < NGRANTS:
                        acquire(c)
    secs = time.time() - start
    t.check(granted == NGRANTS and released == NGRANTS and not bad,
            f"{NGRANTS} grants and releases, no core granted twice", f"{granted}/{released}; {bad[:3]}")
    for c in conns:
        c.s.close()
    wait_until(lambda: status(d)["daemon"]["connections"] == 1)
    rss1, fds1 = rss_kib(pid), open_fds(pid)
    t.check(fds1 <= fds0 + 2, f"berthd's open descriptors are back ({fds0} -> {fds1})")
    t.check(rss1 - rss0 < 64 * 1024 or sanitized(), f"berthd's memory did not grow with the grants ({rss0} -> {rss1} KiB)")
    s = status(d)
    t.check(s["allocation"]["totals"]["cores_used"] == 0 and not s["leases"], "nothing is held at the end")
    print(f"{NGRANTS} grants in {secs:.1f} s ({NGRANTS / secs:.0f} grants/s with their releases); "
          f"berthd RSS {rss0} -> {rss1} KiB, descriptors {fds0} -> {fds1}", flush=True)


def test_raised_limit(d):
    with open(f"/proc/{d.proc.pid}/limits") as f:
        soft = [ln for ln in f if ln.startswith("Max open files")][0].split()[3]
    t.check(int(soft) >= NCLIENTS + 64, f"berthd raised its descriptor limit ({soft})")


def main():
    global NCLIENTS
    limit = raise_nofile(NCLIENTS + 256)
    if limit < NCLIENTS + 64:
        print(f"only {limit} descriptors allowed: {limit - 64} clients instead of {NCLIENTS}")
        NCLIENTS = limit - 64
    t.run_on(Daemon(args=["--max-connections", str(NCLIENTS + 100)]),
             (test_raised_limit, test_many_clients, test_many_grants))
    t.finish()


main()
