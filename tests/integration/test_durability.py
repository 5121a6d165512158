#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd's journal under faults: kill -9 during a busy run (many clients
acquiring and releasing, each recording what it held and when; no core is
held by two clients at overlapping times across the crash, no lease is lost,
clients reclaim their connection-bound leases by id); the reclaim op; holders
that are gone by the restart; compaction (100,000 grants leave a bounded
journal; a restart after compaction restores exactly the live leases); a torn
last line and a damaged middle line; a full disk (RLIMIT_FSIZE, and a 64 KiB
tmpfs where root may mount one): grants are refused naming the journal and
the reason, nothing is granted unrecorded.

usage: BERTHD=build/daemon/berthd test_durability.py
"""
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CORES_PER_NODE, HOST, NODES, Checks, Daemon, connectable,  # noqa: E402
                     held_cores, slurm_env, status, wait_until)

ALL = CORES_PER_NODE * len(NODES)
t = Checks()


def journal_path(d):
    return os.path.join(d.state, "journal.jsonl")


def journal_lines(d):
    with open(journal_path(d)) as f:
        return f.read().splitlines()


def lease_view(s):
    """{lease: (label, placement)} of a status reply."""
    return {x["lease"]: (x.get("label"), json.dumps(x["placement"], sort_keys=True)) for x in s["leases"]}


def restart(d):
    """kill -9 and start again; returns the seconds until it served."""
    d.kill9()
    t0 = time.monotonic()
    d.start()
    return time.monotonic() - t0


def error_code(r):
    return (r.get("error") or {}).get("code")


# ---- reclaim -------------------------------------------------------------

def test_reclaim():
    d = Daemon(args=["--reclaim-grace", "30"]).start()
    try:
        a = d.client()
        bound = a.request("acquire", cores=8, label="bound", env=True)
        other = a.request("acquire", cores=4, label="other")
        det = a.request("acquire", cores=2, detach=True, label="det")
        t.check(bound.get("ok") and other.get("ok") and det.get("ok"), "three leases granted")
        restart(d)
        a.close()
        s = status(d)
        holders = {x["lease"]: x["holder"] for x in s["leases"]}
        t.check(holders == {bound["lease"]: "orphaned", other["lease"]: "orphaned", det["lease"]: "detached"},
                "after kill -9 the connection-bound leases are orphaned, the detached one detached", str(holders))
        b, c = d.client(), d.client()
        r = b.request("reclaim", lease=bound["lease"])
        t.check(r.get("ok") and r["lease"] == bound["lease"] and r["placement"] == bound["placement"]
                and r.get("env") == bound.get("env") and r.get("label") == "bound",
                "reclaim answers with the lease as it was granted (placement, label, env)", str(r)[:300])
        t.check(b.request("reclaim", lease=bound["lease"]).get("ok"), "reclaiming it again on the same connection is fine")
        r = c.request("reclaim", lease=bound["lease"])
        t.check(error_code(r) == "forbidden" and "another open connection" in r["error"]["message"],
                "another connection cannot take a reclaimed lease", str(r))
        r = c.request("release", lease=bound["lease"])
        t.check(error_code(r) == "forbidden", "nor release it", str(r))
        r = c.request("reclaim", lease=det["lease"])
        t.check(error_code(r) == "invalid_request" and "detached" in r["error"]["message"],
                "a detached lease needs no reclaiming", str(r))
        r = c.request("reclaim", lease="L999")
        t.check(error_code(r) == "not_found" and "L999" in r["error"]["message"]
                and "within 30 s" in r["error"]["message"], "an unknown lease is not_found, naming the grace", str(r))
        r = c.request("reclaim")
        t.check(error_code(r) == "invalid_request" and "lease" in r["error"]["message"], "reclaim needs a lease", str(r))
        holders = {x["lease"]: x["holder"] for x in status(d)["leases"]}
        t.check(holders.get(bound["lease"]) == "connection", "the reclaimed lease is bound again", str(holders))
        # an orphaned lease may still be released by id from any connection
        t.check(c.request("release", lease=other["lease"]).get("ok"), "an orphaned lease can be released by id")
        # the reclaimed lease now ends with its new connection
        b.close()
        t.check(wait_until(lambda: bound["lease"] not in {x["lease"] for x in status(d)["leases"]}),
                "a reclaimed lease ends when its new connection closes")
        reasons = [json.loads(x) for x in open(os.path.join(d.state, "events.jsonl"))]
        t.check(any(e.get("event") == "released" and e.get("lease") == bound["lease"]
                    and e.get("reason") == "disconnected" for e in reasons), "its release is logged as disconnected")
        t.check(c.request("release", lease=det["lease"]).get("ok"), "the detached lease is released by id")
        c.close()
    finally:
        d.cleanup()


HOLDER = r"""
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rwb")
f.write(b'{"op":"acquire","id":1,"cores":16,"label":"holder"}\n'); f.flush()
print(json.loads(f.readline())["lease"], flush=True)
time.sleep(600)
"""


def test_holder_gone():
    """A connection-bound lease whose holder process is gone by the restart is
    freed at once; one whose holder exits during the grace period then."""
    d = Daemon(args=["--reclaim-grace", "60"]).start()
    try:
        h1 = subprocess.Popen([sys.executable, "-c", HOLDER, d.sock], stdout=subprocess.PIPE, text=True)
        h2 = subprocess.Popen([sys.executable, "-c", HOLDER, d.sock], stdout=subprocess.PIPE, text=True)
        l1, l2 = h1.stdout.readline().strip(), h2.stdout.readline().strip()
        t.check(l1.startswith("L") and l2.startswith("L"), "two holder processes hold a lease each", l1 + l2)
        d.kill9()
        h1.kill()
        h1.wait()
        d.start()
        left = {x["lease"] for x in status(d)["leases"]}
        t.check(left == {l2}, "the lease of a holder gone by the restart is freed at once; the other waits",
                f"{left} {d.stderr()}")
        h2.kill()
        h2.wait()
        t.check(wait_until(lambda: not status(d)["leases"], timeout=10),
                "and is freed when its holder exits during the grace period (not after 60 s)")
        t.check("restored 2 leases" in d.stderr(), "the restart says what it restored", d.stderr())
    finally:
        d.cleanup()


# ---- kill -9 during a busy run ------------------------------------------

class Busy:
    def __init__(self, d, nclients=10):
        self.d = d
        self.n = nclients
        self.lock = threading.Lock()
        self.records = []        # (client, lease, cores, t_granted, t_released)
        self.problems = []
        self.lost_inflight = 0   # acquires whose reply the crash swallowed
        self.reclaimed = 0
        self.across = 0          # leases held across the crash, by id again after it
        self.stop = threading.Event()
        self.kill_at = None

    def connect(self):
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                return self.d.client(timeout=60)
            except OSError:
                time.sleep(0.01)
        raise RuntimeError("could not reconnect within 60 s")

    def problem(self, what):
        with self.lock:
            self.problems.append(what)

    def finish_after_crash(self, c, i, lease, detached, placement, t_rel):
        """The connection died while holding (or releasing) lease: reconnect,
        reclaim it if it is connection-bound, release it. Returns the new
        connection and when the lease was released. A connection made while
        the dying daemon's listener still exists is reset: try again."""
        for _ in range(100):
            c.close()
            c = self.connect()
            try:
                return self.reclaim_release(c, i, lease, detached, placement, t_rel)
            except (EOFError, OSError, ValueError):
                time.sleep(0.02)
        self.problem(f"client {i}: could not reach berthd again for {lease}")
        return c, None

    def reclaim_release(self, c, i, lease, detached, placement, t_rel):
        if not detached:
            r = c.request("reclaim", lease=lease)
            if error_code(r) == "not_found":
                return c, t_rel          # the release had been served before the crash
            if not r.get("ok") or r["placement"] != placement:
                self.problem(f"client {i}: reclaim {lease}: {r}")
                return c, None
            with self.lock:
                self.reclaimed += 1
        t2 = time.monotonic()
        r = c.request("release", lease=lease)
        if r.get("ok"):
            with self.lock:
                self.across += 1
            return c, t2
        if error_code(r) == "not_found" and detached:
            return c, t_rel
        self.problem(f"client {i}: release {lease} after the crash: {r}")
        return c, None

    def worker(self, i):
        rnd = random.Random(1000 + i)
        c = self.connect()
        while not self.stop.is_set():
            detached = rnd.random() < 0.3
            if rnd.random() < 0.8:
                req = {"cores": rnd.randint(1, 96)}
            else:
                req = {"ntasks": rnd.randint(100, 300), "cpus_per_task": 1}
            req["label"] = f"c{i}"
            if detached:
                req["detach"] = True
            try:
                r = c.request("acquire", **req)
            except (EOFError, OSError, ValueError):
                with self.lock:
                    self.lost_inflight += 1
                c.close()
                c = self.connect()
                continue
            t0 = time.monotonic()
            if not r.get("ok"):
                self.problem(f"client {i}: acquire {req}: {r}")
                continue
            time.sleep(rnd.uniform(0.002, 0.04))
            t_rel = time.monotonic()
            try:
                rel = c.request("release", lease=r["lease"])
                end = t_rel if rel.get("ok") else None
                if not rel.get("ok"):
                    self.problem(f"client {i}: release {r['lease']}: {rel}")
            except (EOFError, OSError, ValueError):
                c, end = self.finish_after_crash(c, i, r["lease"], detached, r["placement"], t_rel)
            if end is not None:
                with self.lock:
                    self.records.append((i, r["lease"], held_cores(r["placement"]), t0, end))
        c.close()

    def overlaps(self):
        by_core = {}
        for i, lease, cores, t0, t1 in self.records:
            for core in cores:
                by_core.setdefault(core, []).append((t0, t1, i, lease))
        bad = []
        for core, spans in by_core.items():
            spans.sort()
            for (a0, a1, ai, al), (b0, b1, bi, bl) in zip(spans, spans[1:]):
                if b0 <= a1:
                    bad.append(f"{core}: {al} (client {ai}) until {a1:.4f} and {bl} (client {bi}) from {b0:.4f}")
        return bad


def test_busy_crash():
    d = Daemon(args=["--reclaim-grace", "5", "--journal-records", "64"]).start()
    try:
        busy = Busy(d)
        # sentinels: one connection-bound and one detached lease held through the crash
        s1 = d.client()
        bound = s1.request("acquire", cores=4, label="sentinel")
        det = s1.request("acquire", cores=4, label="sentinel-det", detach=True)
        t_sent = time.monotonic()
        threads = [threading.Thread(target=busy.worker, args=(i,), daemon=True) for i in range(busy.n)]
        for th in threads:
            th.start()
        wait_until(lambda: len(busy.records) >= 200, timeout=30)
        before = len(busy.records)
        held_at_kill = len(status(d)["leases"])
        busy.kill_at = time.monotonic()
        d.kill9()
        t0 = time.monotonic()
        d.start()
        recovery = time.monotonic() - t0
        print(f"info: kill -9 with {held_at_kill} leases held after {before} grants; served again in "
              f"{recovery * 1000:.0f} ms", flush=True)
        t.check(held_at_kill > 2, "leases were held when berthd was killed", str(held_at_kill))
        s1.close()
        s2 = d.client()
        r = s2.request("reclaim", lease=bound["lease"])
        t.check(r.get("ok") and r["placement"] == bound["placement"], "the sentinel reclaims its lease", str(r)[:200])
        t_rel = time.monotonic()
        t.check(s2.request("release", lease=bound["lease"]).get("ok"), "and releases it")
        t_rel_det = time.monotonic()
        t.check(s2.request("release", lease=det["lease"]).get("ok"),
                "the detached sentinel survived the crash and is released by id")
        s2.close()
        busy.records.append(("s", bound["lease"], held_cores(bound["placement"]), t_sent, t_rel))
        busy.records.append(("s", det["lease"], held_cores(det["placement"]), t_sent, t_rel_det))
        wait_until(lambda: len(busy.records) >= before + 200, timeout=60)
        busy.stop.set()
        for th in threads:
            th.join(60)
        t.check(not any(th.is_alive() for th in threads), "every client finished")
        t.check(not busy.problems, "no client saw an unexpected reply", "; ".join(busy.problems[:5]))
        t.check(len(busy.records) > before + 100, "the clients went on after the restart",
                f"{before} -> {len(busy.records)}")
        crossing = [r for r in busy.records if r[3] < busy.kill_at < r[4]]
        t.check(len(crossing) >= 2, "leases were held across the crash and released after it", str(len(crossing)))
        bad = busy.overlaps()
        t.check(not bad, f"no core was held by two clients at overlapping times ({len(busy.records)} leases)",
                "; ".join(bad[:5]))
        print(f"info: {len(busy.records)} leases, {len(crossing)} across the crash, {busy.reclaimed} reclaimed, "
              f"{busy.lost_inflight} requests cut by the crash", flush=True)
        # what the crash swallowed (grants never answered) stays: connection-bound ones
        # while their holder process (this one) lives, detached ones until released by id
        recorded = {r[1] for r in busy.records}
        t.check(all(x["holder_watched"] for x in status(d)["leases"] if x["holder"] == "orphaned"),
                "orphaned leases nobody reclaimed are held while their holder lives")
        left = status(d)["leases"]
        t.check(all(x["lease"] not in recorded for x in left) and len(left) <= busy.lost_inflight,
                "only grants whose reply the crash swallowed are left", str([(x["lease"], x["holder"]) for x in left]))
        c = d.client()
        for x in left:
            c.request("release", lease=x["lease"])
        c.close()
        s = status(d)
        t.check(not s["leases"] and s["allocation"]["totals"]["cores_free"] == ALL, "and then every core is free",
                str(s["allocation"]["totals"]))
        t.check(s["daemon"]["journal"]["compactions"] > 0, "the journal was compacted during the run")
        # the journal read back once more gives the same empty ledger
        restart(d)
        t.check(not status(d)["leases"], "a second restart finds nothing held")
    finally:
        d.cleanup()


# ---- compaction --------------------------------------------------------

def pipelined(c, reqs):
    """Send every request, then read every reply (in order)."""
    for op, fields in reqs:
        c.send(op, **fields)
    return [c.reply() for _ in reqs]


def test_compaction_restart():
    d = Daemon(args=["--journal-records", "64"]).start()
    try:
        c = d.client()
        keep = [c.request("acquire", cores=1 + i % 5, detach=True, label=f"keep{i}") for i in range(20)]
        t.check(all(k.get("ok") for k in keep), "20 detached leases held")
        maxlines, last = 0, 0
        for _ in range(20):
            got = pipelined(c, [("acquire", {"cores": 3})] * 50)
            pipelined(c, [("release", {"lease": g["lease"]}) for g in got])
            maxlines = max(maxlines, len(journal_lines(d)))
            last = max([last] + [int(g["lease"][1:]) for g in got])
        want = lease_view(status(d))
        js = status(d)["daemon"]["journal"]
        t.check(js["compactions"] >= 10, "2000 grants with --journal-records 64 compact often", str(js))
        t.check(maxlines <= 64 + 20 * 4 + 2 * 50 + 2, "the journal stays bounded (records, live leases, a batch)",
                str(maxlines))
        t.check(os.path.getsize(journal_path(d)) == js["bytes"], "status tells the journal's size")
        first = json.loads(journal_lines(d)[0])
        t.check(first.get("op") == "start" and first.get("next_id", 0) > 900,
                "a compacted journal starts with the next lease id", str(first)[:200])
        restart(d)
        t.check(lease_view(status(d)) == want and len(want) == 20,
                "a restart after compaction restores exactly the live leases (ids, labels, placements)")
        c = d.client()
        n = c.request("acquire", cores=1)
        t.check(n.get("ok") and int(n["lease"][1:]) > last >= 1000, "lease ids are not handed out again",
                f"{last} {str(n)[:100]}")
        c.close()
        # the journal of a restarted daemon is compacted once it is due
        d.stop()
    finally:
        d.cleanup()


def test_compaction_with_waits():
    """Waiting requests are journaled records too, and a compaction keeps
    them: counted as live, they do not make every later record compact the
    journal again (each compaction rewrites every waiting request)."""
    d = Daemon(args=["--journal-records", "16"]).start()
    try:
        c = d.client()
        full = [c.request("acquire", cores=CORES_PER_NODE, detach=True, label=f"full{i}")
                for i in range(len(NODES))]
        t.check(all(f.get("ok") for f in full), "every core held", str(full)[:200])
        waiters = []
        for i in range(120):
            w = d.client()
            w.send("acquire", cores=1, label=f"w{i}")
            waiters.append(w)
            # one at a time, as steps arrive: each its own pass of berthd's loop
            wait_until(lambda: len(status(d)["queue"]) == i + 1, 30)
        js = status(d)["daemon"]["journal"]
        t.check(js["compactions"] <= 8, "120 waiting requests with --journal-records 16 compact a few times, "
                "not at every record", str(js))
        waits = [x for x in journal_lines(d) if '"op":"wait"' in x]
        t.check(len(waits) == 120, "the journal holds every waiting request", f"{len(waits)} wait records")
        for w in waiters:
            w.close()
        d.stop()
    finally:
        d.cleanup()


def test_hundred_thousand():
    d = Daemon().start()
    try:
        c = d.client(timeout=120)
        keep = [c.request("acquire", cores=2, detach=True, label=f"k{i}") for i in range(10)]
        t0 = time.monotonic()
        biggest, batch, total = 0, 200, 100000
        for _ in range(total // batch):
            # at most 2 x 200 cores at once: every grant fits, none waits
            got = pipelined(c, [("acquire", {"cores": 1 + _ % 2})] * batch)
            if not all(g.get("ok") for g in got):
                t.check(False, "every grant of the run is served", str([g for g in got if not g.get("ok")][:1]))
                break
            pipelined(c, [("release", {"lease": g["lease"]}) for g in got])
            biggest = max(biggest, os.path.getsize(journal_path(d)))
        took = time.monotonic() - t0
        js = status(d)["daemon"]["journal"]
        longest = max(len(x) + 1 for x in journal_lines(d))
        print(f"info: {total} grants and releases in {took:.1f} s; journal at most {biggest} bytes "
              f"({biggest / 1024:.0f} KiB), {js['compactions']} compactions, now {js['records']} records",
              flush=True)
        t.check(js["compactions"] >= 2 * total // 4096 - 2, "the journal was compacted as it went", str(js))
        # past 4096 records, compaction comes before the next read from the socket: one
        # pipelined batch of grants or releases at most
        bound = (4096 + 1 + batch) * longest
        t.check(biggest <= bound, f"100,000 grants leave a bounded journal (<= {bound} bytes)", str(biggest))
        want = lease_view(status(d))
        restart(d)
        t.check(lease_view(status(d)) == want and len(want) == 10, "and a restart restores exactly the live leases")
        c.close()
    finally:
        d.cleanup()


# ---- damaged journals ---------------------------------------------------

def test_damaged_journal():
    d = Daemon().start()
    try:
        c = d.client()
        a = c.request("acquire", cores=5, detach=True, label="a")
        b = c.request("acquire", cores=6, detach=True, label="b")
        c.close()
        want = lease_view(status(d))
        d.kill9()
        good = open(journal_path(d)).read()
        # torn last line (a crash mid-write)
        with open(journal_path(d), "a") as f:
            f.write('{"op":"grant","id":9,"shape":{"mpi":fal')
        nlines = good.count("\n") + 1
        d.start()
        t.check(lease_view(status(d)) == want, "a torn last line is ignored; the rest is restored")
        t.check(f"line {nlines} is incomplete" in d.stderr() and "warning" in d.stderr(),
                "with a warning naming the line", d.stderr())
        t.check(open(journal_path(d)).read() == good, "and the torn line is cut off")
        # a whole but unreadable last line is tolerated too
        d.kill9()
        with open(journal_path(d), "a") as f:
            f.write('{"op":"release","id":' + a["lease"][1:] + ',,}\n')
        d.start()
        t.check(lease_view(status(d)) == want, "an unreadable complete last line is ignored too")
        d.kill9()
        # damage in the middle: refused, naming the file, the line and what was wrong
        lines = good.splitlines(True)
        lines[1] = lines[1][:40] + "#" + lines[1][41:]
        with open(journal_path(d), "w") as f:
            f.write("".join(lines))
        os.unlink(d.err)
        try:
            d.start()
            started = True
        except RuntimeError:
            started = False
        t.check(not started and d.proc.returncode == 1, "a damaged middle line: berthd refuses to start",
                str(d.proc.returncode))
        err = d.stderr()
        t.check(journal_path(d) in err and "line 2" in err and "not valid JSON" in err
                and "move the state directory aside" in err,
                "naming the file, the line, what was wrong and what to do", err)
        t.check(not os.path.exists(d.sock), "and serves nothing")
        t.check(open(journal_path(d)).read() == "".join(lines), "the journal is left as it was")
        # a semantic error in the middle: a release of a lease never granted
        lines = good.splitlines(True)
        lines.insert(2, '{"op":"release","id":77,"time":1,"reason":"released"}\n')
        with open(journal_path(d), "w") as f:
            f.write("".join(lines))
        try:
            d.start()
            started = True
        except RuntimeError:
            started = False
        t.check(not started and "line 3" in d.stderr() and "releases L77, which is not held" in d.stderr(),
                "a release of a lease never granted is refused too", d.stderr())
        # repaired: serves again
        with open(journal_path(d), "w") as f:
            f.write(good)
        d.start()
        t.check(lease_view(status(d)) == want, "the repaired journal restores both leases", str(b.get("lease")))
    finally:
        d.cleanup()


# ---- a full disk ----------------------------------------------------------

class LimitedDaemon(Daemon):
    """berthd whose files may not grow past limit bytes (RLIMIT_FSIZE, with
    SIGXFSZ ignored so that writes fail with EFBIG instead)."""

    def __init__(self, limit, **kw):
        super().__init__(**kw)
        self.limit = limit

    def start(self):
        limit = self.limit

        def child():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        self.proc = subprocess.Popen(self.command(), env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=open(self.err, "a"), preexec_fn=child)
        if not wait_until(lambda: self.proc.poll() is not None or connectable(self.sock), timeout=10) \
                or self.proc.poll() is not None:
            raise RuntimeError(f"berthd did not start: {self.stderr()}")
        return self


def fill_and_check(d, reason, room_after_release, no_space=False):
    """Grant until the journal cannot grow; check the refusal, releases while
    full, and what a kill -9 and restart bring back. no_space: the disk is
    full, where a request would wait for room (its grant held): these ask
    with "wait": false, so that it is refused instead, saying so."""
    c = d.client()
    ask = {"wait": False} if no_space else {}
    granted, refusal = [], None
    for i in range(400):
        r = c.request("acquire", cores=1, detach=True, label=f"f{i}", **ask)
        if not r.get("ok"):
            refusal = r
            break
        granted.append(r)
    t.check(refusal is not None and len(granted) > 5, f"{reason}: grants go on until the journal cannot grow",
            f"{len(granted)} granted")
    msg = (refusal or {}).get("error", {}).get("message", "")
    if no_space:
        why = (status(d)["daemon"]["grants_held"] or {}).get("why", "")
        t.check(error_code(refusal or {}) == "busy" and "for want of space" in msg
                and journal_path(d) in why and reason in why,
                f"{reason}: a request that may not wait is refused as busy, grants being held for want of "
                "space; status says why, naming the journal and the system's reason", msg + " / " + why)
    else:
        t.check(error_code(refusal or {}) == "internal" and journal_path(d) in msg and reason in msg
                and "refused" in msg, f"{reason}: the refusal names the journal and the system's reason", msg)
    held = {x["lease"] for x in status(d)["leases"]}
    t.check(held == {g["lease"] for g in granted}, f"{reason}: the refused grant holds nothing",
            f"{len(held)} held, {len(granted)} granted")
    again = c.request("acquire", cores=1, detach=True, **ask)
    t.check(not again.get("ok") and (reason if not no_space else "want of space")
            in again.get("error", {}).get("message", ""), f"{reason}: and so is the next one")
    with open(journal_path(d)) as f:
        recorded = {json.loads(x)["id"] for x in f if '"op":"grant"' in x}
    t.check({int(g["lease"][1:]) for g in granted} <= recorded, f"{reason}: every grant made is in the journal")
    # a release that cannot be recorded still ends the lease; the journal is then
    # rewritten from the live leases before anything else is granted
    gone = granted[:len(granted) // 2]
    rels = [c.request("release", lease=g["lease"]) for g in gone]
    t.check(all(r.get("ok") for r in rels), f"{reason}: releases are served while the disk is full")
    # whether a release finds room depends on how full the last block is (and,
    # when grants are held, on whether a compaction gave up the reserve first):
    # each release is either in the journal or logged as unrecorded
    with open(journal_path(d)) as f:
        released = {json.loads(x)["id"] for x in f if '"op":"release"' in x}
    t.check("ends unrecorded" in d.stderr() or {int(g["lease"][1:]) for g in gone} <= released,
            f"{reason}: a release is recorded, or logged as unrecorded", d.stderr()[-300:])
    n = c.request("acquire", cores=1, detach=True, label="after", **ask)
    if no_space:
        t.check(n.get("ok") or "want of space" in n["error"]["message"],
                f"{reason}: after releases a grant is made or refused, saying why", str(n)[:300])
    elif room_after_release:
        t.check(n.get("ok"), f"{reason}: after releases the rewritten journal has room for a grant again",
                str(n)[:300])
    else:
        t.check(n.get("ok") or (journal_path(d) in n["error"]["message"] and "rewriting it failed"
                                in n["error"]["message"]),
                f"{reason}: after releases a grant is made or refused, saying why", str(n)[:300])
    live = {x["lease"]: x["placement"] for x in status(d)["leases"]}
    c.close()
    return granted, live


def test_full_disk():
    # a file size limit: writes fail with EFBIG, per file
    d = LimitedDaemon(48 * 1024)
    try:
        d.start()
        granted, live = fill_and_check(d, "File too large", True)
        t.check(os.path.getsize(journal_path(d)) <= d.limit, "the journal stayed within the limit")
        d.kill9()
        d.limit = resource.RLIM_INFINITY
        d.start()
        back = {x["lease"]: x["placement"] for x in status(d)["leases"]}
        t.check(back == live, "after kill -9 exactly the held leases come back: nothing unrecorded, "
                "nothing released comes back", f"{sorted(set(back) ^ set(live))[:5]}")
    finally:
        d.cleanup()


def small_tmpfs(d):
    """A 64 KiB tmpfs as d's state directory: False where root may not
    mount one (said, and d cleaned up)."""
    os.makedirs(d.state)
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", d.state],
        capture_output=True).returncode == 0
    if not mounted:
        print("skipped: cannot mount a small tmpfs here (not root); the RLIMIT_FSIZE test covers a full disk")
        d.cleanup()
    return mounted


def fill(path):
    """Write path until the file system is full."""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"x" * 512)
        except OSError:
            pass


def test_full_tmpfs():
    """A real full file system (a 64 KiB tmpfs as the state directory), where
    root may mount one."""
    d = Daemon()
    if not small_tmpfs(d):
        return
    try:
        d.start()
        granted, live = fill_and_check(d, "No space left on device", False, no_space=True)
        d.kill9()
        d.start()
        back = {x["lease"]: x["placement"] for x in status(d)["leases"]}
        granted_ids = {g["lease"] for g in granted} | {"L%d" % (max(int(g["lease"][1:]) for g in granted) + 1)}
        t.check(set(live) <= set(back) <= granted_ids,
                "after kill -9 on a full disk no held lease is lost and nothing unrecorded appears "
                "(releases that could not be recorded may come back, to be released again)",
                f"{len(live)} live, {len(back)} back")
        cores = [core for x in status(d)["leases"] for core in held_cores(x["placement"])]
        t.check(len(cores) == len(set(cores)), "no core is held twice")
    finally:
        d.stop()
        subprocess.run(["umount", d.state], capture_output=True)
        d.cleanup()


def notify_lines(sock):
    said = []
    while True:
        try:
            said.append(sock.recv(4096).decode())
        except BlockingIOError:
            return said


def test_full_disk_waiters(reserve):
    """Issue 24, finding 4: a release on a full disk (the journal without
    room for even a short record), two berth run steps and a request waiting
    for its cores. With the reserve berthd keeps beside the journal, the
    journal is rewritten and the waiters granted; without it (it could not
    be had), grants are held, not refused: the requests keep their places,
    berthd says so in its log, status and sd_notify STATUS= line, and once
    there is room they are granted in order and the steps run."""
    what = "with the reserve" if reserve else "without the reserve"
    berth = os.environ.get("BERTH", "")
    if not berth:
        print("skipped: BERTH (the berth command) is not set")
        return
    tmp = tempfile.mkdtemp(prefix="berthd-notify-")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(os.path.join(tmp, "notify"))
    notify.setblocking(False)
    d = Daemon(env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp,
                    "NOTIFY_SOCKET": os.path.join(tmp, "notify")}, machine=None)
    if not small_tmpfs(d):
        notify.close()
        return
    runs = []
    try:
        d.start()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "BERTH_"))}
        env["BERTH_SOCKET"] = d.sock
        c = d.client()
        cores = status(d)["allocation"]["totals"]["cores"]
        hold = c.request("acquire", cores=cores, detach=True, label="hold")
        t.check(hold.get("ok"), f"{what}: a detached lease holds every core", str(hold)[:200])
        first = d.client()
        first.send("acquire", cores=1, label="first")
        wait_until(lambda: len(status(d)["queue"]) == 1, 30)
        out = os.path.join(tmp, "ran")
        for i in range(2):
            runs.append(subprocess.Popen([berth, "run", "--local", "--cores", "1", "--label", f"w{i}", "--",
                                          "sh", "-c", f"echo w{i} >> '{out}'"], env=env,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
            wait_until(lambda: len(status(d)["queue"]) == 2 + i, 30)
        t.check([q["label"] for q in status(d)["queue"]] == ["first", "w0", "w1"], f"{what}: three requests wait")
        if not reserve:
            os.unlink(os.path.join(d.state, "journal.reserve"))
        filler = os.path.join(d.state, "filler")
        fill(filler)
        # the journal's last block full too: requests that wait and go until
        # even the record of a new waiting request cannot be written
        for _ in range(200):
            if "a waiting request is unrecorded" in d.stderr():
                break
            pad = d.client()
            pad.send("acquire", cores=cores, label="pad")
            wait_until(lambda: len(status(d)["queue"]) == 4, 30)
            pad.close()
            wait_until(lambda: len(status(d)["queue"]) == 3, 30)
        t.check("a waiting request is unrecorded" in d.stderr(), f"{what}: the journal is full",
                d.stderr()[-300:])
        rewrites = status(d)["daemon"]["journal"]["compactions"]
        rel = c.request("release", lease=hold["lease"])
        t.check(rel.get("ok"), f"{what}: the release is served on a full disk", str(rel)[:200])
        if reserve:
            got = first.reply()
            st = status(d)
            t.check(got.get("ok") and st["daemon"]["grants_held"] is None,
                    f"{what}: the release unrecorded, the journal is rewritten in the reserve's room and the "
                    "first request granted", str(got)[:300])
            t.check(st["daemon"]["journal"]["compactions"] > rewrites and not st["daemon"]["journal"]["dirty"],
                    f"{what}: the journal was rewritten (it no longer lacks the release)",
                    str(st["daemon"]["journal"]))
        else:
            t.check(wait_until(lambda: status(d)["daemon"]["grants_held"] is not None, 30),
                    f"{what}: grants are held once one cannot be recorded")
            time.sleep(2.5)           # two retries of the held grants, the disk still full
            st = status(d)
            held = st["daemon"]["grants_held"] or {}
            t.check("No space left on device" in held.get("why", "") and journal_path(d) in held.get("why", ""),
                    f"{what}: status says why grants are held, naming the journal and the system's reason",
                    str(held)[:400])
            t.check([q["label"] for q in st["queue"]] == ["first", "w0", "w1"]
                    and all("want of space" in q["why"] for q in st["queue"]),
                    f"{what}: the requests keep their places, in order, saying why they wait",
                    str([(q["label"], q["why"]) for q in st["queue"]]))
            t.check(st["leases"] == [] and all(r.poll() is None for r in runs),
                    f"{what}: nothing is handed out unrecorded, and the berth run steps wait (not refused)",
                    str([r.poll() for r in runs]) + str(st["leases"])[:200])
            t.check("grants are held for want of space" in d.stderr(), f"{what}: the log says grants are held",
                    d.stderr()[-500:])
            shown = subprocess.run([berth, "status"], env=env, capture_output=True, text=True,
                                   timeout=60).stdout
            t.check("grants are held for want of space" in shown, f"{what}: berth status shows it", shown[:500])
            said = notify_lines(notify)
            t.check(any("STATUS=grants held for want of space" in m for m in said),
                    f"{what}: the sd_notify STATUS= line says grants are held", str(said[-3:]))
            no = c.request("acquire", cores=1, detach=True, wait=False)
            t.check(error_code(no) == "busy" and "want of space" in no["error"]["message"],
                    f"{what}: a request that may not wait is refused as busy, saying why", str(no)[:300])
            os.unlink(filler)
            got = first.reply()
            t.check(got.get("ok"), f"{what}: room again: the first request is granted", str(got)[:200])
        for r in runs:
            try:
                r.wait(timeout=60)
            except subprocess.TimeoutExpired:
                r.kill()
                r.wait()
        t.check([r.returncode for r in runs] == [0, 0], f"{what}: both berth run steps ran, exiting 0",
                str([(r.returncode, r.stderr.read()[-300:]) for r in runs]))
        if os.path.exists(out):
            with open(out) as f:
                t.check(sorted(f.read().split()) == ["w0", "w1"], f"{what}: each step ran once")
        if not reserve:
            t.check(status(d)["daemon"]["grants_held"] is None and "grants resume" in d.stderr(),
                    f"{what}: grants are no longer held, and the log says they resumed", d.stderr()[-300:])
            t.check(os.path.exists(os.path.join(d.state, "journal.reserve")),
                    f"{what}: the reserve is kept again once there is room")
        # what was granted is in the journal: a restart has it
        if got.get("ok"):
            d.kill9()
            d.start()
            t.check([x["lease"] for x in status(d)["leases"]] == [got["lease"]],
                    f"{what}: after kill -9 the restart has the lease still held")
        first.close()
        c.close()
    finally:
        for r in runs:
            if r.poll() is None:
                r.kill()
        d.stop()
        subprocess.run(["umount", d.state], capture_output=True)
        d.cleanup()
        notify.close()
        shutil.rmtree(tmp, ignore_errors=True)


# ---- the start record's node groups ---------------------------------------

def test_node_groups():
    """Alike nodes whose names count up are one group of the start record;
    a restart maps the groups back onto the allocation's nodes in order."""
    # (numbers of more than 9 digits cannot stand in a host list range)
    names = [HOST, "nid9", "nid10", "nid000011", "nid000012", "nid000013", "x1b", "login",
             "r100000000001", "r100000000002"]
    tmp = tempfile.mkdtemp(prefix="berthd-groups-")
    env = slurm_env(tmp, extra={"SLURM_JOB_NODELIST": ",".join(names),
                                "SLURM_JOB_NUM_NODES": str(len(names))})
    d = Daemon(env=env).start()
    try:
        start = json.loads(journal_lines(d)[0])
        groups = [(g["names"], g["count"]) for g in start["nodes"]]
        t.check(groups == [(HOST, 1), ("nid9", 1), ("nid10", 1), ("nid[000011-000013]", 3), ("x1b", 1),
                           ("login", 1), ("r100000000001", 1), ("r100000000002", 1)],
                "the start record groups only runs that count up with one width, in host list range",
                str(groups))
        c = d.client()
        wide = c.request("acquire", ntasks=3, cpus_per_task=100, detach=True, label="wide")
        held = [c.request("acquire", cores=60, detach=True, label=f"h{i}") for i in range(6)]
        t.check(wide.get("ok") and all(h.get("ok") for h in held), "leases over several nodes granted",
                str(wide)[:200])
        c.close()
        want = lease_view(status(d))
        restart(d)
        t.check(lease_view(status(d)) == want, "a restart restores every lease on its nodes from the groups")
        # a format 2 start record (one object per node) still restores
        d.kill9()
        lines = journal_lines(d)
        first = json.loads(lines[0])
        per_node = []
        for g in first["nodes"]:
            n = g["count"]
            group_names = names[len(per_node):len(per_node) + n]
            per_node += [{"name": x, "cores": g["cores"], "gpus": g["gpus"], "memory": g["memory"]}
                         for x in group_names]
        first.update(format=2, nodes=per_node)
        with open(journal_path(d), "w") as f:
            f.write("\n".join([json.dumps(first)] + lines[1:]) + "\n")
        d.start()
        t.check(lease_view(status(d)) == want, "a format 2 journal (a node per object) restores too")
        # a group that does not name the allocation's nodes: not this allocation's journal
        d.kill9()
        lines = journal_lines(d)
        first = json.loads(lines[0])
        first["nodes"] = [{"names": "nid[000011-000012]" if g.get("names", g.get("name")) == "nid[000011-000013]"
                           else g.get("names", g.get("name")), "count": g.get("count", 1), "cores": g["cores"],
                           "gpus": g["gpus"], "memory": g["memory"]} for g in start["nodes"]]
        with open(journal_path(d), "w") as f:
            f.write("\n".join([json.dumps(first)] + lines[1:]) + "\n")
        d.start()
        t.check(status(d)["leases"] == [] and "names 2 nodes, not 3" in d.stderr(),
                "a group naming other nodes sets the journal aside, saying why", d.stderr()[-300:])
        d.stop()
    finally:
        d.cleanup()


def main():
    t.run_each((test_node_groups, test_reclaim, test_holder_gone, test_damaged_journal, test_full_disk, test_full_tmpfs,
                lambda: test_full_disk_waiters(True), lambda: test_full_disk_waiters(False),
                test_compaction_restart, test_compaction_with_waits, test_busy_crash, test_hundred_thousand))
    t.finish()


main()
