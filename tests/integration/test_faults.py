#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd against clients that fail or misbehave (issue 10, "fault injection"):

- 1,000 client processes killed with SIGKILL at random points of acquire,
  wait and release: no core leaks, no waiter is stuck, the ledger is whole;
- berthd itself killed with SIGKILL under load and restarted on its state
  directory, three times: no core is ever held by two clients at once,
  judged from the clients' own records;
- a client that sends 10,000 status requests and never reads: berthd stops
  serving it at 1 MiB of unread replies, its memory stays bounded, others
  are served, and it is closed after --output-stall;
- a client that sends one byte at a time; clients that half-close after a
  request (the reply still arrives, a lease is held until the client goes);
  idle connections that never send anything.

(kill -9 recovery itself and journal write failures are tested with the
durability work; this file is about what clients do.)

usage: BERTHD=build/daemon/berthd test_faults.py [--rounds N]
"""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CORES_PER_NODE, NODES, Checks, Daemon, held_cores,  # noqa: E402
                     proc_status_kib, rss_kib, sanitized, status, wait_until)

ALL = CORES_PER_NODE * len(NODES)
BERTH = os.environ.get("BERTH", "")
BERTHD = os.environ.get("BERTHD", "")
t = Checks()
ROUNDS = 1000
for i, a in enumerate(sys.argv):
    if a == "--rounds":
        ROUNDS = int(sys.argv[i + 1])


def totals(d):
    s = status(d)
    return s["allocation"]["totals"]["cores_used"], len(s["leases"]), len(s["queue"])


# ---- clients killed at random points ----

def child(sock, mode, seed):
    """Runs in a forked process until SIGKILL."""
    rnd = random.Random(seed)
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        f = s.makefile("rwb")

        def send(o):
            f.write((json.dumps(o) + "\n").encode())
            f.flush()
        if mode == "acquire":
            send({"op": "acquire", "id": 1, "cores": rnd.randint(1, 8), "label": "k"})
            f.readline()
        elif mode == "wait":
            send({"op": "acquire", "id": 1, "cores": rnd.randint(16, 64), "label": "w"})
            f.readline()
        elif mode == "release":
            send({"op": "acquire", "id": 1, "cores": 2})
            r = json.loads(f.readline() or "{}")
            if r.get("ok"):
                send({"op": "release", "id": 2, "lease": r["lease"]})
                f.readline()
        elif mode == "detached":
            send({"op": "acquire", "id": 1, "cores": 1, "detach": True, "ttl": 0.2})
            f.readline()
        else:   # pipelined: acquire, release and a waiting acquire in one write
            f.write(b'{"op":"acquire","id":1,"cores":3}\n{"op":"release","id":2,"lease":"L1"}\n'
                    b'{"op":"acquire","id":3,"cores":100}\n{"op":"status","id":4}\n')
            f.flush()
            f.readline()
        time.sleep(10)
    except Exception:  # noqa: BLE001
        pass
    os._exit(0)


def test_killed_clients(d):
    rnd = random.Random(10)
    holder = d.client()
    big = holder.request("acquire", ntasks=3 * CORES_PER_NODE, cpus_per_task=1, label="hold-3-nodes")
    part = holder.request("acquire", cores=CORES_PER_NODE - 8, label="hold-120")
    t.check(big.get("ok") and part.get("ok"), "the holder leaves 8 cores free", str(part)[:200])
    base_used = ALL - 8
    modes = ["acquire", "wait", "release", "detached", "pipelined"]
    counts = dict.fromkeys(modes, 0)
    sentinel = None
    leaked_at = None
    for r in range(ROUNDS):
        if r == ROUNDS * 4 // 5:
            # a live waiter for a whole node, queued behind the killed ones
            sentinel = d.client(timeout=60)
            sentinel.send("acquire", cores=CORES_PER_NODE, label="sentinel")
        mode = modes[r % len(modes)]
        counts[mode] += 1
        pid = os.fork()
        if pid == 0:
            child(d.sock, mode, r)
        time.sleep(rnd.choice([0, 0, 0.0005, 0.001, 0.002, 0.004]))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if r % 100 == 99 and leaked_at is None:
            # every killed client's holdings end; detached ones by their ttl
            ok = wait_until(lambda: totals(d)[0] == base_used and totals(d)[2] == (1 if sentinel else 0),
                            timeout=10)
            if not ok:
                leaked_at = (r, totals(d))
    t.check(leaked_at is None, f"after every 100 of {ROUNDS} killed clients nothing is left held or "
            "queued but the test's own", str(leaked_at))
    t.check(d.alive(), f"berthd survives {ROUNDS} clients killed at random points", d.stderr())
    print(f"killed clients: {counts}", flush=True)
    holder.request("release", lease=part["lease"])
    g = sentinel.reply() if sentinel else {}
    t.check(g.get("ok") and len(g["placement"]["nodes"]) == 1,
            "the live waiter behind them is granted once cores are freed (no stuck waiter)", str(g)[:200])
    sentinel.close()
    holder.close()
    ok = wait_until(lambda: totals(d) == (0, 0, 0), timeout=10)
    t.check(ok, "the ledger is whole at the end: no lease, no waiter, no core used", str(totals(d)))
    c = d.client()
    whole = c.request("acquire", ntasks=ALL, cpus_per_task=1, wait=False)
    t.check(whole.get("ok") and len(held_cores(whole["placement"])) == ALL,
            "the whole allocation can be granted at once", str(whole)[:200])
    c.close()


# ---- berthd killed under load ----

class Life:
    gen = 0         # how many times berthd was restarted


def load_client(d, idx, stop, records, lock):
    """Acquire, hold a moment, release, until stop; records every grant with
    the time it arrived and the time this client stopped counting on it
    (release sent, or berthd gone)."""
    rnd = random.Random(1000 + idx)
    c, mine, dropped = None, [], []
    while not stop.is_set():
        try:
            if c is None:
                c = d.client(timeout=30)
                # a restarted berthd holds a lease while its holder process
                # lives: what this client stopped counting on, it releases
                while dropped:
                    c.request("release", lease=dropped[0])
                    dropped.pop(0)
            shape = rnd.choice([{"cores": rnd.randint(1, 32)},
                                {"ntasks": rnd.randint(2, 200), "cpus_per_task": 1},
                                {"cores": CORES_PER_NODE}])
            gen = Life.gen
            r = c.request("acquire", timeout=5, **shape)
            got = time.monotonic()
            if not r.get("ok"):
                continue
            rec = {"lease": r["lease"], "gen": gen, "cores": held_cores(r["placement"]),
                   "start": got, "end": None}
            with lock:
                records.append(rec)
            mine.append(rec)
            time.sleep(rnd.uniform(0, 0.03))
            rec["end"] = time.monotonic()
            c.request("release", lease=r["lease"])
            mine.remove(rec)
        except (OSError, EOFError, ValueError):
            now = time.monotonic()
            for rec in mine:
                if rec["end"] is None:
                    rec["end"] = now
                dropped.append(rec["lease"])
            mine.clear()
            if c is not None:
                try:
                    c.close()
                except OSError:
                    pass
            c = None
            time.sleep(0.05)
    if c is not None:
        c.close()


def test_daemon_killed_under_load():
    # A lease restored after a crash is held while its holder process (this
    # one) lives: each client releases by id, once it is connected again,
    # the leases it stopped counting on when berthd went away.
    d = Daemon(args=["--reclaim-grace", "1"])
    records, lock, stop = [], threading.Lock(), threading.Event()
    kills = 3
    try:
        d.start()
        threads = [threading.Thread(target=load_client, args=(d, i, stop, records, lock), daemon=True)
                   for i in range(24)]
        for th in threads:
            th.start()
        for _ in range(kills):
            time.sleep(2.0)
            d.kill9()
            Life.gen += 1
            time.sleep(0.2)
            d.start(wait_s=20)
        time.sleep(1.5)
        stop.set()
        for th in threads:
            th.join(60)
        t.check(not any(th.is_alive() for th in threads), "the load clients finish")
        check_no_double_grant(records, kills)
        # what the crashed lives left behind the clients released; grants
        # whose reply a crash swallowed are held while this process lives
        left = status(d)["leases"]
        t.check(all(x["holder"] == "orphaned" and x["holder_watched"] for x in left),
                "after the load only leases of unanswered grants are left, held for their living holder",
                str([(x["lease"], x["holder"]) for x in left]))
        c = d.client()
        for x in left:
            c.request("release", lease=x["lease"])
        c.close()
        t.check(totals(d) == (0, 0, 0), "and once they are released nothing is held", str(totals(d)))
        t.check(d.alive(), "the restarted berthd is running", d.stderr())
    finally:
        stop.set()
        d.cleanup()


def check_no_double_grant(records, kills):
    now = time.monotonic()
    byid = {}
    for rec in records:
        if rec["end"] is None:
            rec["end"] = now
    # per (node, core): the intervals the clients held it must not overlap
    spans = {}
    for rec in records:
        for nc in rec["cores"]:
            spans.setdefault(nc, []).append((rec["start"], rec["end"], rec["lease"], rec["gen"]))
    overlaps = []
    for nc, v in spans.items():
        v.sort()
        for a, b in zip(v, v[1:]):
            if b[0] < a[1]:
                overlaps.append((nc, a, b))
    gens = {rec["gen"] for rec in records}
    t.check(len(records) > 200 and len(gens) == kills + 1,
            f"the clients were granted {len(records)} leases over {kills + 1} lives of berthd",
            str(sorted(gens)))
    t.check(not overlaps, "no core was ever held by two clients at once (clients' own records)",
            str(overlaps[:3]))
    # a lease id is never handed out twice while its first holder may hold it
    for rec in records:
        byid.setdefault(rec["lease"], []).append(rec)
    dup = []
    for name, v in byid.items():
        v.sort(key=lambda r: r["start"])
        for a, b in zip(v, v[1:]):
            if b["start"] < a["end"]:
                dup.append((name, a["gen"], b["gen"]))
    t.check(not dup, "no lease id was granted to two clients at once", str(dup[:3]))
    print(f"daemon killed {kills} times under load: {len(records)} grants checked", flush=True)


# ---- clients that do not read, trickle, half-close, idle ----

def test_never_reads():
    d = Daemon(args=["--output-stall", "3"])
    try:
        d.start()
        other = d.client()
        before = rss_kib(d.proc.pid)
        hog = socket.socket(socket.AF_UNIX)
        hog.connect(d.sock)
        hog.setblocking(False)
        data = b"".join(b'{"op":"status","id":%d}\n' % i for i in range(10000))
        sent, stuck = 0, 0
        while sent < len(data) and stuck < 20:     # until berthd stops reading
            try:
                sent += hog.send(data[sent:sent + 65536])
                stuck = 0
            except BlockingIOError:
                stuck += 1
                time.sleep(0.01)
        time.sleep(0.3)
        during = rss_kib(d.proc.pid)
        t.check(sent > 0, "the hog sent requests", str(sent))
        print(f"never-reading client: {sent} bytes of requests sent, berthd RSS {before} -> {during} KiB",
              flush=True)
        r = other.request("status")
        t.check(r.get("ok") and r["daemon"]["connections"] == 2,
                "another client is served while the hog's replies pile up", str(r)[:200])
        t.check(during - before < 16 * 1024 or sanitized(),
                f"berthd's memory stays bounded (RSS {before} KiB -> {during} KiB with "
                f"{sent} bytes of status requests unread)")
        # it is closed once it has left its replies unread for 3 s
        ok = wait_until(lambda: other.request("status")["daemon"]["connections"] == 1,
                        timeout=15, step=0.5)
        t.check(ok, "the hog is disconnected after --output-stall 3")
        got = b""
        hog.setblocking(True)
        hog.settimeout(10)
        try:
            while True:
                chunk = hog.recv(1 << 20)
                if not chunk:
                    break
                got += chunk
        except OSError:
            pass
        n = got.count(b"\n")
        t.check(0 < n < 10000, f"the hog got some of its replies ({n}) and then end-of-file")
        hog.close()
        t.check(rss_kib(d.proc.pid) - before < 16 * 1024 or sanitized(), "berthd's memory is back near where it was",
                f"{before} -> {rss_kib(d.proc.pid)} KiB")
        # a slow reader that does read is not cut off
        slow = socket.socket(socket.AF_UNIX)
        slow.connect(d.sock)
        slow.sendall(b"".join(b'{"op":"status","id":%d}\n' % i for i in range(2000)))
        time.sleep(1)
        slow.settimeout(10)
        got = b""
        while got.count(b"\n") < 2000:
            chunk = slow.recv(65536)
            if not chunk:
                break
            got += chunk
            time.sleep(0.001)
        t.check(got.count(b"\n") == 2000, "a client that reads slowly gets every reply",
                str(got.count(b"\n")))
        slow.close()
        other.close()
        t.check(d.alive(), "berthd is still running", d.stderr())
    finally:
        d.cleanup()


def test_big_history():
    """Found by the 30-minute soak: a watch with history replays the events
    log from its file; once that log was past the 64 MiB output limit, the
    next event disconnected the watcher before it could read its history."""
    d = Daemon()
    try:
        d.start()
        pad = "x" * 180
        line = ('{"event":"released","time":1.0,"lease":"L0","label":"%s","reason":"released"}\n'
                % pad).encode()
        n = (70 << 20) // len(line) + 1
        with open(os.path.join(d.state, "events.jsonl"), "ab") as f:
            f.write(line * n)
        w = socket.socket(socket.AF_UNIX)
        w.connect(d.sock)
        w.sendall(b'{"op":"watch","id":1,"history":true}\n')
        time.sleep(0.3)
        c = d.client()
        for _ in range(10):
            r = c.request("acquire", cores=2, label="after-history")
            c.request("release", lease=r["lease"])
        time.sleep(0.3)
        w.settimeout(20)
        got, lines = b"", 0
        while True:
            try:
                chunk = w.recv(1 << 20)
            except socket.timeout:
                break
            if not chunk:
                break
            lines += chunk.count(b"\n")
            got = (got + chunk)[-4096:]
            if b'"after-history","reason":"released"' in got and lines >= n + 21:
                break
        t.check(lines >= n + 21, f"a watcher gets a {n * len(line) >> 20} MiB history and the events "
                "after it", f"{lines} lines of {n + 21}")
        w.sendall(b'{"op":"hello","id":2}\n')
        rest = b""
        while b'"id":2' not in rest:
            chunk = w.recv(65536)
            if not chunk:
                break
            rest += chunk
        t.check(b'"id":2' in rest, "and its connection stays open")
        w.close()
        c.close()
    finally:
        d.cleanup()


def test_trickle_halfclose_idle(d):
    # one byte at a time, while another client is served in between
    trick = socket.socket(socket.AF_UNIX)
    trick.connect(d.sock)
    other = d.client()
    line = b'{"op":"acquire","id":"slow","cores":2,"label":"drip"}\n'
    for i, b in enumerate(line):
        trick.sendall(bytes([b]))
        if i == 20:
            t.check(other.request("hello").get("ok"), "others are served while a line trickles in")
        time.sleep(0.002)
    trick.settimeout(10)
    r = json.loads(trick.makefile("rb").readline())
    t.check(r.get("ok") and r.get("id") == "slow", "a request sent one byte at a time is served", str(r))
    trick.close()
    t.check(wait_until(lambda: totals(d)[1] == 0), "its lease ends with its connection")

    # half-close after a request: the reply still arrives, then end-of-file
    h = socket.socket(socket.AF_UNIX)
    h.connect(d.sock)
    h.sendall(b'{"op":"status","id":1}\n')
    h.shutdown(socket.SHUT_WR)
    h.settimeout(10)
    f = h.makefile("rb")
    r = json.loads(f.readline() or b"{}")
    t.check(r.get("ok") and r.get("id") == 1, "a half-closed client gets its reply", str(r)[:100])
    t.check(f.readline() == b"", "and then end-of-file")
    f.close()
    h.close()

    # the last request without its newline is served too
    h = socket.socket(socket.AF_UNIX)
    h.connect(d.sock)
    h.sendall(b'{"op":"hello","id":2}')
    h.shutdown(socket.SHUT_WR)
    h.settimeout(10)
    f = h.makefile("rb")
    r = json.loads(f.readline() or b"{}")
    t.check(r.get("ok") and r.get("id") == 2, "a last line without newline before a half-close is served",
            str(r))
    f.close()
    h.close()

    # a waiting acquire, then half-close: granted later, held until the client goes
    blocker = d.client()
    b = blocker.request("acquire", ntasks=ALL, cpus_per_task=1)
    h = socket.socket(socket.AF_UNIX)
    h.connect(d.sock)
    h.sendall(b'{"op":"acquire","id":3,"cores":5,"label":"half"}\n')
    h.shutdown(socket.SHUT_WR)
    t.check(wait_until(lambda: totals(d)[2] == 1), "a half-closed client's acquire waits in the queue")
    blocker.request("release", lease=b["lease"])
    h.settimeout(10)
    f = h.makefile("rb")
    r = json.loads(f.readline() or b"{}")
    t.check(r.get("ok") and r.get("label") == "half", "and its grant arrives after the half-close", str(r)[:150])
    time.sleep(1.5)
    t.check(totals(d)[:2] == (5, 1), "the lease is held while the half-closed client lives", str(totals(d)))
    f.close()
    h.close()
    t.check(wait_until(lambda: totals(d) == (0, 0, 0), timeout=5),
            "and ends when it closes its socket", str(totals(d)))
    blocker.close()

    # idle connections, and one stuck in the middle of a line
    idle = []
    for _ in range(200):
        s = socket.socket(socket.AF_UNIX)
        s.connect(d.sock)
        idle.append(s)
    idle[0].sendall(b'{"op":"status","id":')
    time.sleep(0.5)
    r = other.request("acquire", cores=1, wait=False)
    t.check(r.get("ok"), "200 idle connections and a half-sent line do not stop service", str(r)[:100])
    s = status(d)
    t.check(s["daemon"]["connections"] >= 201, "berthd keeps idle connections open",
            str(s["daemon"]["connections"]))
    for s in idle:
        s.close()
    t.check(wait_until(lambda: status(d)["daemon"]["connections"] <= 2), "and forgets them when they close")
    other.close()


def test_descriptors_run_out():
    """Under a descriptor limit of 64, a lease holding every core and 84
    connections asking for one core each: --max-connections is fitted to the
    limit (and said), those over it are turned away, and a release and a
    status still get in (before: both hung; accept failed every 200 ms)."""
    import select
    import subprocess
    d = Daemon(machine=None, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
               wrapper=["prlimit", "--nofile=64:64"]).start()
    flood = []
    try:
        st = status(d)
        fitted = st["daemon"].get("max_connections", 1024)
        t.check(0 < fitted < 64, "--max-connections is fitted under the limit of 64", str(fitted))
        t.check(f"--max-connections 1024 fitted to {fitted}" in d.stderr(), "and berthd says so", d.stderr())
        holder = d.client()
        r = holder.request("acquire", cores=st["allocation"]["totals"]["cores"], detach=True, label="all")
        t.check(r.get("ok"), "a detached lease holds every core", str(r))
        for i in range(84):
            c = socket.socket(socket.AF_UNIX)
            c.setblocking(False)
            try:
                c.connect(d.sock)
            except BlockingIOError:     # the backlog is full: berthd is behind
                c.close()
                continue
            c.sendall(b'{"op":"acquire","id":1,"cores":1}\n')
            flood.append(c)
        turned = set()

        def answered():
            ready, _, _ = select.select([c for c in flood if c not in turned], [], [], 0.1)
            for c in ready:
                data = c.recv(65536)
                if b'"busy"' in data or not data:
                    turned.add(c)
            return len(turned) >= len(flood) - (fitted - 1)
        t.check(wait_until(answered, 60), "those over the limit are turned away (busy)",
                f"{len(turned)} of {len(flood)}")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "BERTH_SOCKET": d.sock}
        began = time.monotonic()
        try:
            rel = subprocess.run([BERTH, "release", r["lease"]], env=env, capture_output=True,
                                 text=True, timeout=60)
            code, err = rel.returncode, rel.stderr
        except subprocess.TimeoutExpired:
            code, err = None, "berth release still waits"
        t.check(code == 0, "the release gets in while the house is full", f"{code}: {err}")
        released = time.monotonic() - began
        began = time.monotonic()
        try:
            stp = subprocess.run([BERTH, "status"], env=env, capture_output=True, text=True, timeout=60)
            code, err = stp.returncode, stp.stderr
        except subprocess.TimeoutExpired:
            code, err = None, "berth status still waits"
        t.check(code == 0, "and so does a status", f"{code}: {err}")
        print(f"info: descriptor limit 64, --max-connections fitted to {fitted}, {len(flood)} connections "
              f"asking: berth release took {released * 1000:.0f} ms, berth status "
              f"{(time.monotonic() - began) * 1000:.0f} ms", flush=True)
        t.check(d.stderr().count("accepting a connection failed") <= 1,
                "accept's failures are not logged over and over", d.stderr())
    finally:
        for c in flood:
            c.close()
        d.cleanup()


def test_watchers_never_read():
    """20 watchers that never read under an acquire/release loop: berthd's
    unread output stays under its bound of 128 MiB in all (the watcher
    furthest behind is closed, and says so), and once they are gone its
    memory goes back to the system (before: RSS 3.6 MB -> 1.22 GB, kept)."""
    d = Daemon(args=["--output-stall", "600"])
    watchers = []
    try:
        d.start()
        before = rss_kib(d.proc.pid)
        for _ in range(20):
            w = socket.socket(socket.AF_UNIX)
            w.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            w.connect(d.sock)
            w.sendall(b'{"op":"watch","id":1}\n')
            watchers.append(w)
        c = d.client()
        peak, pairs = before, 0
        batch = b"".join(b'{"op":"acquire","id":%d,"cores":1,"label":"%s"}\n{"op":"release","id":%d,"lease":"L%d"}\n'
                         % (2 * i, b"x" * 200, 2 * i + 1, i + 1) for i in range(100000))
        lines = batch.split(b"\n")
        # acquire and release in order (lease ids run L1, L2, ...), 100 pairs a batch
        for k in range(0, 2 * 100000, 200):
            c.send_raw(b"\n".join(lines[k:k + 200]) + b"\n")
            for _ in range(200):
                c.reply()
            pairs += 100
            if pairs % 5000 == 0:
                peak = max(peak, rss_kib(d.proc.pid))
            if pairs >= 40000 and "the furthest behind" in open(d.err).read():
                break
        peak = max(peak, rss_kib(d.proc.pid))
        log = open(d.err).read()
        print(f"info: 20 watchers that never read, {pairs} acquire/release pairs: berthd RSS {before // 1024} MiB "
              f"-> peak {peak // 1024} MiB", flush=True)
        t.check("the furthest behind" in log and "a watcher" in log,
                "watchers furthest behind are closed once the unread output passes the bound", log[-400:])
        t.check(peak - before < 256 * 1024 or sanitized(),
                "berthd's memory stays near the bound (128 MiB of unread output)",
                f"RSS {before} -> {peak} KiB")
        for w in watchers:
            w.close()
        watchers = []
        settled = wait_until(lambda: rss_kib(d.proc.pid) - before < 64 * 1024, 30, 0.2)
        after = rss_kib(d.proc.pid)
        print(f"info: and {after // 1024} MiB once they are gone", flush=True)
        t.check(settled or sanitized(), "once they are gone, berthd gives its memory back",
                f"RSS {before} -> peak {peak} -> {after} KiB")
        r = c.request("status")
        t.check(r.get("ok") and not r["leases"], "and serves on, nothing held", str(r)[:200])
        c.close()
    finally:
        for w in watchers:
            w.close()
        d.cleanup()


def big_job(nodes, leases, waiting, flood=0, output_max=128):
    """A berthd over a fake Slurm job (tests/bench/big_status.py --keep),
    with room for FLOOD more connections: (the script's process, berthd's
    socket, berthd's pid, its log), or None (a failed check) if it did not
    start."""
    keep = tempfile.mkdtemp(prefix="berth-bigf-")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "big_status.py")
    p = subprocess.Popen([sys.executable, script, "--nodes", str(nodes), "--leases", str(leases),
                          "--waiting", str(waiting), "--flood", str(flood),
                          "--output-max", str(output_max), "--keep", keep], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=dict(os.environ, BERTHD=BERTHD))
    ready = p.stdout.readline().strip()
    pid = None
    if ready == "ready":
        out = subprocess.run(["pgrep", "-f", "berthd.*" + keep], capture_output=True, text=True).stdout.split()
        pid = int(out[0]) if out else None
    t.check(pid is not None, f"a berthd over a fake job of {nodes} nodes", ready)
    if pid is None:
        end_big_job(p, [])
        return None
    return p, os.path.join(keep, "s.sock"), pid, os.path.join(keep, "berthd.err")


def end_big_job(p, conns):
    for w in conns:
        w.close()
    p.stdin.close()
    p.wait()


def never_reading(sock, n, each):
    """n connections that each send `each` status requests and never read
    (their receive buffers as small as they go)."""
    out = []
    for _ in range(n):
        w = socket.socket(socket.AF_UNIX)
        w.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        w.connect(sock)
        w.sendall(b"".join(b'{"op":"status","id":%d}\n' % i for i in range(1, each + 1)))
        out.append(w)
    return out


def status_lines(sock, ids):
    """The replies to status requests of ids sent in one write."""
    c = socket.socket(socket.AF_UNIX)
    c.connect(sock)
    c.sendall(b"".join(b'{"op":"status","id":%d}\n' % i for i in ids))
    f = c.makefile("rb")
    replies = [json.loads(f.readline()) for _ in ids]
    c.close()
    return replies


def test_status_flood():
    """Issue 24, finding 6: status replies of a big job (1,000 fake nodes,
    500 leases: each reply about 800 KB) asked for by 100 clients, twice
    each, that never read, under --output-max 16 (MiB). While nothing
    changes, a status request is answered from the last reply built (the
    same snapshot: its uptime_s is the same), and any other request makes
    the next status a new one, and a kept reply is queued by reference, not
    copied for each; the connections furthest behind are closed, another
    client's status is answered. (That memory goes back once the clients
    are gone is test_watchers_never_read's.)"""
    job = big_job(1000, 500, 5, flood=100, output_max=16)
    if not job:
        return
    p, sock, pid, log = job
    flood = []
    try:
        a, b = status_lines(sock, (1, 2))
        t.check(a.get("ok") and b.get("ok") and (a["id"], b["id"]) == (1, 2), "two status requests answered",
                str(a)[:200])
        same = {k: v for k, v in a.items() if k != "id"} == {k: v for k, v in b.items() if k != "id"}
        t.check(same, "the second, sent with the first, is the same snapshot (nothing changed between them)",
                f"uptime_s {a['daemon']['uptime_s']} and {b['daemon']['uptime_s']}")
        c = socket.socket(socket.AF_UNIX)
        c.connect(sock)
        c.sendall(b'{"op":"release","id":9,"lease":"L999999"}\n')
        c.makefile("rb").readline()
        c.close()
        (after,) = status_lines(sock, (3,))
        t.check(after["daemon"]["uptime_s"] != a["daemon"]["uptime_s"],
                "after another request, the next status is built again", str(after["daemon"])[:200])
        before = rss_kib(pid)
        flood = never_reading(sock, 100, 2)
        (other,) = status_lines(sock, (4,))
        closed = wait_until(lambda: "over its bound of 16 MiB" in open(log).read(), 30, 0.2)
        wait_until(lambda: False, 2, 0.2)      # the rest of the flood served or closed
        peak = proc_status_kib(pid, "VmHWM")
        t.check(other.get("ok") and other["id"] == 4, "another client's status is answered during the flood",
                str(other)[:300])
        t.check(closed, "past --output-max 16 the connections furthest behind are closed (logged)",
                open(log).read()[-600:])
        t.check(peak - before < 64 * 1024 or sanitized(),
                "berthd's memory stays near its output bound (16 MiB), not the flood's 160 MB",
                f"RSS {before} -> {peak} KiB")
        for w in flood:
            w.close()
        flood = []
        wait_until(lambda: rss_kib(pid) - before < 8 * 1024, 10, 0.2)
        print(f"info: 100 clients x 2 status of 1,000 nodes, never read, --output-max 16: RSS "
              f"{before // 1024} -> {peak // 1024} MiB, {rss_kib(pid) // 1024} MiB once they are gone", flush=True)
    finally:
        end_big_job(p, flood)


def test_output_bound_drops():
    """Issue 24, finding 6: status replies under the size that is kept (200
    fake nodes: each about 185 KB, built for each request), asked for by
    150 clients, four times each (the first goes to the socket's buffer),
    that never read (sent while berthd is stopped, so that it reads them
    together), under --output-max 4 (MiB):
    the connection closed by the bound has its output dropped at once, so
    that berthd's memory stays near the bound, not the flood's 110 MB (before
    e938032 a closed connection's output stayed to the end of the loop's
    turn: all of it)."""
    job = big_job(200, 100, 5, flood=150, output_max=4)
    if not job:
        return
    p, sock, pid, log = job
    flood = []
    try:
        (a,) = status_lines(sock, (1,))
        size = len(json.dumps(a))
        t.check(100_000 < size < 256 * 1024, "a status reply too small to be kept, large enough to count",
                f"{size} bytes")
        before = rss_kib(pid)
        # all of them sent while berthd is stopped: it reads them in one
        # turn of its loop, however fast this machine is
        os.kill(pid, signal.SIGSTOP)
        try:
            flood = never_reading(sock, 150, 4)
        finally:
            os.kill(pid, signal.SIGCONT)
        closed = wait_until(lambda: "over its bound of 4 MiB" in open(log).read(), 30, 0.2)
        (other,) = status_lines(sock, (9,))
        peak = proc_status_kib(pid, "VmHWM")
        t.check(closed, "past --output-max 4 the connections furthest behind are closed (logged)",
                open(log).read()[-600:])
        t.check(other.get("ok") and other["id"] == 9, "another client's status is answered after the flood",
                str(other)[:300])
        t.check(peak - before < 16 * 1024 or sanitized(),
                "berthd's memory stays near its output bound (4 MiB), not the flood's 110 MB",
                f"RSS {before} -> {peak} KiB")
        print(f"info: 150 clients x 4 status of 200 nodes ({size} bytes), never read, --output-max 4: "
              f"RSS {before // 1024} -> {peak // 1024} MiB", flush=True)
    finally:
        end_big_job(p, flood)


def main():
    t.run_on(Daemon(), (test_killed_clients, test_trickle_halfclose_idle))
    t.run_each((test_never_reads, test_big_history, test_daemon_killed_under_load, test_descriptors_run_out,
                test_watchers_never_read, test_status_flood, test_output_bound_drops))
    t.finish()


main()
