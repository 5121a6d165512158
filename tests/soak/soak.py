#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A mixed soak of a real berthd: for the given time, clients acquire (all
shapes, waiting with timeouts, priorities), hold and release; detach leases
with a ttl and release them from other connections; watch events; ask for
status, resources and renders; send malformed lines; half-close; disconnect
while holding or waiting; get killed with SIGKILL; and one client at a time
sends requests without reading the replies. berthd's resident memory and
open descriptors are sampled; after the load ends and every client is gone,
both must be back near where they were once warmed up (flat, not growing
with time), and the ledger must be whole.

    tests/soak/soak.py --minutes 30        (documented; not in CI)
    tests/soak/soak.py --seconds 60        (CI: meson test --suite soak)

BERTHD names the berthd to run (default: build/daemon/berthd).
"""
import argparse
import json
import os
import random
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
if not os.environ.get("BERTHD"):
    os.environ["BERTHD"] = os.path.join(HERE, "..", "..", "build", "daemon", "berthd")
import harness  # noqa: E402

harness.BERTHD = os.environ["BERTHD"]
from harness import (CORES_PER_NODE, NODES, Checks, Daemon, held_cores, open_fds,  # noqa: E402
                     rss_kib, sanitized, status, wait_until)

t = Checks()
ALL = CORES_PER_NODE * len(NODES)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = {}

    def add(self, what, k=1):
        with self.lock:
            self.n[what] = self.n.get(what, 0) + k


def worker(d, idx, stop, st, errors):
    rnd = random.Random(idx * 7919)
    c = None
    while not stop.is_set():
        try:
            if c is None:
                c = d.client(timeout=60)
            act = rnd.random()
            if act < 0.45:
                shape = rnd.choice([{"cores": rnd.randint(1, 64)},
                                    {"ntasks": rnd.randint(2, 300), "cpus_per_task": 1},
                                    {"ntasks": rnd.randint(1, 16), "cpus_per_task": rnd.randint(1, 8),
                                     "memory": rnd.randint(1, 4000)},
                                    {"cores": CORES_PER_NODE, "priority": rnd.randint(-5, 5)},
                                    {"cores": 2, "local": True, "argv": ["true"]}])
                r = c.request("acquire", timeout=rnd.choice([0, 0.5, 3]), label=f"w{idx}", **shape)
                if r.get("ok"):
                    st.add("grants")
                    time.sleep(rnd.uniform(0, 0.05))
                    if rnd.random() < 0.1:
                        c.close()           # disconnect while holding
                        c = None
                        st.add("disconnects holding")
                        continue
                    rr = c.request("release", lease=r["lease"])
                    if not rr.get("ok"):
                        errors.append(("release", rr))
                elif r.get("error", {}).get("code") not in ("timeout", "busy"):
                    errors.append(("acquire", shape, r))
                else:
                    st.add("timeouts")
            elif act < 0.55:
                r = c.request("acquire", cores=1, detach=True, ttl=rnd.choice([0.2, 3]))
                if r.get("ok"):
                    st.add("detached")
                    other = d.client()
                    if rnd.random() < 0.5:
                        other.request("release", lease=r["lease"])
                    other.close()
            elif act < 0.65:
                c.request("status")
                c.request("resources")
                st.add("status")
            elif act < 0.7:
                c.request("render", placement={"nodes": [NODES[1]], "cores": [[0, 1, 2, 3]], "gpus": 0},
                          ntasks=2, cpus_per_task=2, argv=["./x"])
            elif act < 0.75:
                c.send_raw(rnd.choice([b"{bad\n", b'{"op":"acquire","id":1,"cores":-1}\n',
                                       b'{"op":"nope","id":2}\n', b"[" * 3000 + b"\n"]))
                c.reply()
                st.add("malformed")
            elif act < 0.8:
                w = d.client()
                w.request("watch", history=rnd.random() < 0.1)
                end = time.time() + rnd.uniform(0.1, 1)
                w.s.settimeout(0.2)
                while time.time() < end:
                    try:
                        w.read()
                    except (socket.timeout, OSError, ValueError):
                        break
                w.close()
                st.add("watches")
            elif act < 0.85:
                h = socket.socket(socket.AF_UNIX)
                h.connect(d.sock)
                h.sendall(b'{"op":"acquire","id":1,"cores":3,"timeout":1}\n{"op":"status","id":2}')
                h.shutdown(socket.SHUT_WR)
                h.settimeout(10)
                f = h.makefile("rb")
                f.readline()
                f.close()
                h.close()
                st.add("half-closes")
            elif act < 0.9:
                # a waiter that gives up by disconnecting
                c.send("acquire", ntasks=ALL, cpus_per_task=1)
                time.sleep(rnd.uniform(0, 0.2))
                c.close()
                c = None
                st.add("disconnects waiting")
            else:
                pid = os.fork()
                if pid == 0:
                    try:
                        k = socket.socket(socket.AF_UNIX)
                        k.connect(d.sock)
                        k.sendall(b'{"op":"acquire","id":1,"cores":4}\n')
                        k.recv(100)
                        time.sleep(5)
                    finally:
                        os._exit(0)
                time.sleep(rnd.uniform(0, 0.01))
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                st.add("killed clients")
        except (OSError, EOFError, ValueError) as e:
            errors.append(("exception", f"action {act:.2f}", repr(e)))
            if c is not None:
                c.close()
            c = None
    if c is not None:
        c.close()


def hog(d, stop, st):
    """Now and then a client sends requests and reads nothing."""
    while not stop.wait(5):
        h = socket.socket(socket.AF_UNIX)
        h.connect(d.sock)
        h.setblocking(False)
        data = b"".join(b'{"op":"status","id":%d}\n' % i for i in range(5000))
        sent = 0
        for _ in range(50):
            try:
                sent += h.send(data[sent:])
            except (BlockingIOError, BrokenPipeError):
                break
            if sent >= len(data):
                break
        stop.wait(2)
        h.close()
        st.add("hogs")


def sample(d):
    pid = d.proc.pid
    return rss_kib(pid), open_fds(pid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--workers", type=int, default=16)
    a = ap.parse_args()
    duration = a.seconds if a.seconds is not None else (a.minutes or 1) * 60
    d = Daemon(args=["--output-stall", "3", "--max-connections", "4096"])
    st, errors, stop = Stats(), [], threading.Event()
    samples = []
    try:
        d.start()
        threads = [threading.Thread(target=worker, args=(d, i, stop, st, errors), daemon=True)
                   for i in range(a.workers)]
        threads.append(threading.Thread(target=hog, args=(d, stop, st), daemon=True))
        for th in threads:
            th.start()
        begin = time.time()
        warm = min(60.0, duration / 6)
        while time.time() - begin < duration:
            time.sleep(min(5.0, duration / 12))
            samples.append((time.time() - begin, *sample(d)))
        stop.set()
        for th in threads:
            th.join(120)
        ok = wait_until(lambda: status(d)["daemon"]["connections"] == 1 and not status(d)["leases"],
                        timeout=60, step=0.5)
        t.check(ok, "after the load every client and lease is gone", str(status(d)["daemon"]))
        end_rss, end_fds = sample(d)
        s = status(d)
        t.check(s["allocation"]["totals"]["cores_used"] == 0 and not s["queue"], "the ledger is whole")
        base = [x for x in samples if x[0] >= warm] or samples
        rss0, fds0 = base[0][1], base[0][2]
        peak = max(x[1] for x in samples)
        print(f"soak {duration:.0f} s, {a.workers} workers: " +
              ", ".join(f"{k} {v}" for k, v in sorted(st.n.items())), flush=True)
        print(f"berthd RSS after warm-up {rss0} KiB, peak {peak} KiB, at the end {end_rss} KiB; "
              f"descriptors {fds0} -> {end_fds}", flush=True)
        print("samples (s, RSS KiB, fds): " + " ".join(f"{x[0]:.0f}:{x[1]}:{x[2]}" for x in samples),
              flush=True)
        t.check(st.n.get("grants", 0) > duration, "the soak granted leases steadily", str(st.n))
        t.check(not errors, "no client met an unexpected error",
                f"{len(errors)}: {errors[:5]}; berthd's last messages: {d.stderr()}")
        t.check(end_fds <= fds0 + 1, f"berthd's descriptors are flat ({fds0} -> {end_fds})")
        if sanitized():
            print("(memory not judged: AddressSanitizer keeps freed memory)")
        else:
            t.check(end_rss <= rss0 + max(8192, rss0 // 4),
                    f"berthd's memory is flat ({rss0} -> {end_rss} KiB)")
        t.check(d.alive(), "berthd is still running", d.stderr())
    except Exception as e:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        t.check(False, "no exception", repr(e) + " " + d.stderr())
    finally:
        stop.set()
        d.cleanup()
    t.finish()


main()
