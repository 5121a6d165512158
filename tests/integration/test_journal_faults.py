#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd can always restart from the journal it wrote (issue 24).

- Grants of one scheduling round are journaled in lease id order: a request
  that goes ahead of a waiter (a higher priority) is granted in the same
  round as the waiter behind it; after kill -9 berthd starts again.
- The ids a local step that srun placed reports (op placed) are journaled
  apart from its grant's: a restart, after a compaction or not, shows them
  again and never feeds them to the ledger.
- berthd started as another allocation on a journal whose lease holders
  still run refuses to start (naming them) unless --discard-journal; lease
  ids keep growing across a journal set aside.
- The property: random request sequences (acquire with priorities, waits,
  detach, release, close) with kill -9 at random points, restarting every
  time; every restart must serve, lease ids never go back, and no core is
  held by two steps at overlapping times, counted from the clients' own
  records, and a request waiting at the crash whose process runs on is back
  in its place after the restart (or granted meanwhile) while its timeout
  lasts (rounds bounded so that it stays quick).

usage: BERTHD=build/daemon/berthd test_journal_faults.py [--rounds N] [--seed S]
"""
import json
import os
import random
import select
import subprocess
import socket
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CORES_PER_NODE, NODES, Checks, Daemon, held_cores, slurm_env, status, wait_until, with_srun  # noqa: E402

t = Checks()
ALL = CORES_PER_NODE * len(NODES)


def journal_ids(d):
    ids = []
    with open(os.path.join(d.state, "journal.jsonl")) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("op") == "grant":
                ids.append(int(r["id"]))
    return ids


def test_priority_round():
    """release L1, release L2 and a priority acquire pipelined on one
    connection while another connection waits for a core: the round grants
    the priority request and the waiter; the journal has them in id order
    and a restart after kill -9 serves."""
    d = Daemon().start()
    try:
        a = d.client()
        full = [a.request("acquire", cores=CORES_PER_NODE, detach=True) for _ in NODES]
        t.check(all(x.get("ok") for x in full), "detached leases hold every core", str(full)[:300])
        l1, l2 = full[0], full[1]
        w = d.client()
        w.send("acquire", cores=CORES_PER_NODE, label="waiter")
        t.check(wait_until(lambda: status(d)["daemon"]["waiting"] == 1), "the waiter waits")
        # one write, so that berthd reads the three in one go (one round)
        lines = [{"op": "release", "id": 101, "lease": l1["lease"]},
                 {"op": "release", "id": 102, "lease": l2["lease"]},
                 {"op": "acquire", "id": 103, "cores": CORES_PER_NODE, "priority": 10, "detach": True,
                  "label": "first"}]
        a.send_raw("".join(json.dumps(x) + "\n" for x in lines).encode())
        replies = [a.reply() for _ in range(3)]
        got = w.reply()
        t.check(all(r.get("ok") for r in replies) and got.get("ok"), "both are granted",
                str(replies) + str(got))
        ids = journal_ids(d)
        print("info: ids", ids, replies[2].get("lease"), got.get("lease"), flush=True)
        t.check(ids == sorted(ids), "the journal has its grants in id order", str(ids))
        d.kill9()
        try:
            d.start()
            ok = True
        except RuntimeError as e:
            ok = False
            t.check(False, "berthd starts again after kill -9", str(e)[-400:])
        if ok:
            held = sorted(x["lease"] for x in status(d)["leases"])
            t.check(held == sorted([x["lease"] for x in full[2:]] + [replies[2]["lease"], got["lease"]]),
                    "and both leases are held after the restart", str(held))
        a.close()
        w.close()
    finally:
        d.cleanup()


def shown_cores(d):
    return {le["lease"]: le["placement"]["cores"][0] for le in status(d)["leases"]}


def compacted(d):
    with open(os.path.join(d.state, "journal.jsonl")) as f:
        return "compacted" in json.loads(f.readline())


def test_placed_restart(compact):
    """SCHEDULER: a local step srun placed reports other cores than its
    grant's (op placed); another lease is granted the reported ones (the
    ledger counts the node). After kill -9, with or without a compaction
    in between, berthd starts again, both leases are held, and the first
    still shows the cores its step reported."""
    what = "after a compaction" if compact else "with no compaction"
    d = with_srun(Daemon(args=["--journal-records", "16"]))
    try:
        d.start()
        c = d.client()
        local = dict(cores=1, local=True, argv=["./a"], detach=True)
        a = c.request("acquire", label="a", **local)
        t.check(a.get("ok"), "the first local lease is granted", str(a)[:300])
        grant = a["placement"]["cores"][0]
        other = [x for x in range(CORES_PER_NODE) if x not in grant][:1]
        r = c.request("placed", lease=a["lease"], cores=other)
        t.check(r.get("ok"), f"its step reports core {other}", str(r))
        b = c.request("acquire", label="b", **local)
        t.check(b.get("ok"), "a second local lease is granted", str(b)[:300])
        if compact:
            for _ in range(20):
                x = c.request("acquire", cores=1)
                c.request("release", lease=x["lease"])
            t.check(compacted(d), "the journal was compacted")
        before = shown_cores(d)
        c.close()
        d.kill9()
        try:
            d.start()
        except RuntimeError as e:
            t.check(False, f"berthd starts again {what}", str(e)[-400:])
            return
        after = shown_cores(d)
        t.check(set(after) == {a["lease"], b["lease"]}, f"both leases are held {what}", str(after))
        t.check(after == before and after.get(a["lease"]) == other,
                f"and show the cores they showed before ({what}: {a['lease']} on its step's {other})",
                f"before {before}, after {after}")
        c = d.client()
        t.check(c.request("release", lease=a["lease"]).get("ok") and c.request("release", lease=b["lease"]).get("ok"),
                "both release as usual")
        t.check(status(d)["allocation"]["totals"]["cores_used"] == 0, "and every core is free again",
                str(status(d)["allocation"]["totals"]))
        c.close()
    finally:
        d.cleanup()


def lease_num(name):
    return int(name.lstrip("L"))


def test_set_aside_with_holders():
    """berthd restarted as another allocation (other SLURM_* variables) on
    a journal whose lease holders still run refuses to start, naming them;
    the journal stays. --discard-journal sets it aside anyway, and with its
    holders gone it is set aside by itself; lease ids go on growing across
    either, so that an old holder's release never ends a new lease."""
    d = Daemon()
    try:
        d.start()
        c = d.client()
        held = c.request("acquire", cores=1, label="held")
        free = c.request("acquire", cores=1, detach=True, label="ownerless")
        t.check(held.get("ok") and free.get("ok"), "a held and a detached lease", str(held)[:200] + str(free)[:200])
        journal = os.path.join(d.state, "journal.jsonl")
        with open(journal) as f:
            before = f.read()
        d.kill9()
        d.env = slurm_env(d.dir, job="5151")
        try:
            d.start()
            t.check(False, "berthd as another allocation refuses to start while a holder runs", d.stderr())
        except RuntimeError as e:
            msg = str(e)
            t.check("not this allocation's" in msg and "still runs" in msg
                    and f"{held['lease']} (pid {os.getpid()})" in msg and "--discard-journal" in msg
                    and free["lease"] not in msg,
                    "berthd as another allocation refuses to start while a holder runs, naming the lease, "
                    "its pid and --discard-journal (not the ownerless lease)", msg[-500:])
        with open(journal) as f:
            t.check(f.read() == before and not os.path.exists(journal + ".prev"),
                    "and the journal stays as it was")
        d.args.append("--discard-journal")
        d.start()
        c.close()
        c = d.client()
        t.check(status(d)["leases"] == [], "--discard-journal sets it aside: nothing held")
        x = c.request("acquire", cores=1)
        t.check(x.get("ok") and lease_num(x["lease"]) > lease_num(free["lease"]),
                "and lease ids go on growing across it", f"{x.get('lease')} after {free['lease']}")
        t.check("though these still run" in d.stderr(), "the log names the holders it set aside",
                d.stderr()[-300:])
        c.close()
        # a holder that is gone: set aside without --discard-journal
        d.args.remove("--discard-journal")
        script = ("import socket, sys, time\n"
                  "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
                  "s.sendall(b'{\"op\": \"acquire\", \"id\": 1, \"cores\": 1}\\n')\n"
                  "print(s.recv(65536).decode().strip(), flush=True); time.sleep(600)\n")
        holder = subprocess.Popen([sys.executable, "-c", script, d.sock], stdout=subprocess.PIPE, text=True)
        got = json.loads(holder.stdout.readline())
        t.check(got.get("ok"), "another process holds a lease", str(got)[:200])
        d.kill9()
        holder.kill()
        holder.wait()
        d.env = slurm_env(d.dir, job="5252")
        try:
            d.start()
        except RuntimeError as e:
            t.check(False, "with its holder gone, another allocation's journal is set aside", str(e)[-400:])
            return
        c = d.client()
        y = c.request("acquire", cores=1)
        t.check(status(d)["allocation"]["totals"]["cores_used"] == 1 and y.get("ok")
                and lease_num(y["lease"]) > lease_num(got["lease"]),
                "with its holder gone it is set aside by itself, and ids still grow",
                f"{y.get('lease')} after {got.get('lease')}")
        c.close()
    finally:
        d.cleanup()


class Conn:
    """A connection with at most one request in flight, read without blocking."""

    def __init__(self, d):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(10)
        self.s.connect(d.sock)
        self.s.setblocking(False)
        self.buf = b""
        self.pending = None       # (op, fields, sent_at)
        self.held = {}            # lease -> (cores, granted_at, detached)
        self.rid = 0

    def send(self, op, **fields):
        self.burst([(op, fields)])

    def burst(self, reqs):
        """Requests in one write: berthd reads them in one go (one round)."""
        text = ""
        for op, fields in reqs:
            self.rid += 1
            text += json.dumps(dict(op=op, id=self.rid, **fields)) + "\n"
        self.s.setblocking(True)
        self.s.sendall(text.encode())
        self.s.setblocking(False)
        self.pending = list(reqs)

    def poll(self):
        """Replies read so far (events skipped); None when closed."""
        out = []
        while True:
            try:
                data = self.s.recv(65536)
            except BlockingIOError:
                break
            except OSError:
                return None
            if not data:
                return None
            self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            m = json.loads(line)
            if "id" in m:
                out.append(m)
        return out

    def close(self):
        self.s.close()


WAIT_TIMEOUT = 3


class Property:
    def __init__(self, d, rng):
        self.d = d
        self.rng = rng
        self.records = []         # (lease, cores, start, end): the holders' own view
        self.max_id = 0
        self.floor = 0            # the highest id granted before the last crash
        self.seen = set()
        self.problems = []
        self.restarts = 0
        self.swallowed = 0
        self.requests = 0
        self.sent = {}            # label of a waiting acquire: when it was sent
        self.places = 0           # waiting at a crash, with time left
        self.lost = []            # of those, not back after the restart

    def grant(self, c, r, now, detach):
        lid = int(r["lease"][1:])
        if lid in self.seen or lid <= self.floor:
            self.problems.append(f"L{lid} granted again (before the last restart: up to L{self.floor})")
        self.seen.add(lid)
        self.max_id = max(self.max_id, lid)
        c.held[r["lease"]] = (held_cores(r["placement"]), now, detach)

    def end(self, lease, held, now):
        self.records.append((lease, held[0], held[1], now))

    def handle(self, c, replies):
        now = time.monotonic()
        for r in replies:
            op, fields = c.pending.pop(0) if c.pending else (None, {})
            if op == "acquire" and r.get("ok"):
                self.grant(c, r, now, fields.get("detach", False))
            elif op == "acquire" and r.get("error", {}).get("code") not in ("busy", "timeout"):
                self.problems.append("acquire refused: " + str(r)[:200])
            elif op == "release" and not r.get("ok"):
                self.problems.append("release refused: " + str(r)[:200])
        if not c.pending:
            c.pending = None

    def step(self, conns):
        rng = self.rng
        idle = [c for c in conns if c.pending is None]
        if not idle:
            return
        c = rng.choice(idle)
        k = rng.random()
        if c.held and k < 0.2:
            # releases and a request that goes ahead of the waiters, in one
            # round: the round grants it and the waiters behind it
            reqs = []
            for lease in rng.sample(sorted(c.held), min(len(c.held), 2)):
                self.end(lease, c.held.pop(lease), time.monotonic())
                reqs.append(("release", {"lease": lease}))
            reqs.append(("acquire", {"cores": rng.choice([1, 64, 128]), "priority": 10, "timeout": 3}))
            c.burst(reqs)
        elif c.held and k < 0.45:
            lease = rng.choice(sorted(c.held))
            # the holder stops using it before it asks for the release
            self.end(lease, c.held.pop(lease), time.monotonic())
            c.send("release", lease=lease)
        elif k < 0.95:
            fields = {"cores": rng.choice([1, 2, 8, 64, 128]), "wait": rng.random() < 0.7,
                      "timeout": WAIT_TIMEOUT}
            if fields["wait"]:
                fields["label"] = f"w{self.requests}"
                self.sent[fields["label"]] = time.monotonic()
            if rng.random() < 0.4:
                fields["priority"] = rng.randint(0, 10)
            if rng.random() < 0.3:
                fields["detach"] = True
            c.send("acquire", **fields)
        else:
            # close: its bound leases end (the holder stopped using them first)
            now = time.monotonic()
            for lease, h in list(c.held.items()):
                if h[2]:
                    self.orphans[lease] = h
                else:
                    self.end(lease, h, now)
            c.close()
            conns[conns.index(c)] = Conn(self.d)
        self.requests += 1

    def settle(self, conns, until):
        end = time.monotonic() + until
        while time.monotonic() < end:
            readable, _, _ = select.select([c.s for c in conns], [], [], 0.005)
            if not readable:
                return
            for c in conns:
                if c.s in readable:
                    got = c.poll()
                    if got:
                        self.handle(c, got)

    def crash(self, conns):
        """kill -9, restart; what each connection held goes on being held by
        id (detached or orphaned) until released below. In half the rounds
        the queue is seen just before the kill: each request waiting then,
        whose process (this one) runs on, must be back in its place after
        the restart (restored) or granted meanwhile, unless its timeout has
        passed."""
        waiting = None
        if self.rng.random() < 0.5:
            waiting = [x["label"] for x in status(self.d)["queue"] if x.get("label")]
        self.d.kill9()
        now = time.monotonic()
        for c in conns:
            for lease, h in c.held.items():
                self.orphans[lease] = h
            c.close()
        try:
            self.d.start()
        except RuntimeError as e:
            self.problems.append("no restart: " + " ".join(x for x in str(e).splitlines() if "error:" in x)[-400:])
            return False
        self.restarts += 1
        st = status(self.d)
        seen = time.monotonic()
        left = {x["lease"]: x for x in st["leases"]}
        back = {x["label"] for x in st["queue"] if x.get("restored")} | {x.get("label") for x in st["leases"]}
        for label in waiting or ():
            if self.sent[label] + WAIT_TIMEOUT - 0.5 > seen:
                self.places += 1
                if label not in back:
                    self.lost.append(label)
        for lease in self.orphans:
            if lease not in left:
                self.problems.append(f"{lease}, held at the crash, is gone after the restart")
        r = Conn(self.d)
        for lease in sorted(left, key=lambda x: int(x[1:])):
            self.max_id = max(self.max_id, int(lease[1:]))
            h = self.orphans.pop(lease, None)
            if h is None:
                self.swallowed += 1
            else:
                self.end(lease, h, time.monotonic())
            r.s.setblocking(True)
            r.s.sendall((json.dumps({"op": "release", "id": 1, "lease": lease}) + "\n").encode())
            f = r.s.makefile("rb")
            while True:
                m = json.loads(f.readline())
                if "id" in m:
                    break
            if not m.get("ok"):
                self.problems.append(f"release of {lease} after the restart: {m}")
        r.close()
        self.orphans = {}
        self.floor = self.max_id
        del now
        return True

    def overlaps(self):
        bad = []
        by_core = {}
        for lease, cores, a, b in self.records:
            for core in cores:
                by_core.setdefault(core, []).append((a, b, lease))
        for core, spans in by_core.items():
            spans.sort()
            for (a1, b1, l1), (a2, b2, l2) in zip(spans, spans[1:]):
                if a2 < b1:
                    bad.append(f"{core} held by {l1} and {l2}")
        return bad

    def run(self, rounds, per_round, nconns=6):
        self.orphans = {}
        for _ in range(rounds):
            conns = [Conn(self.d) for _ in range(nconns)]
            n = self.rng.randint(1, per_round)
            for _ in range(n):
                self.step(conns)
                self.settle(conns, 0.02 if self.rng.random() < 0.8 else 0.2)
            if not self.crash(conns):
                return


def test_kill9_property(rounds, seed):
    """random requests, kill -9 at a random point, restart, every round"""
    rng = random.Random(seed)
    d = Daemon(args=["--journal-records", "32", "--reclaim-grace", "30"]).start()
    try:
        p = Property(d, rng)
        t0 = time.monotonic()
        p.run(rounds, 40)
        bad = p.overlaps()
        print(f"info: kill -9 property (seed {seed}): {p.restarts} restarts of {rounds} rounds, "
              f"{p.requests} requests, {len(p.records)} leases recorded by their holders, "
              f"{len(bad)} double grants, {p.swallowed} grants whose reply the crash swallowed, "
              f"{len(p.lost)} of {p.places} places waiting at a crash lost, "
              f"{time.monotonic() - t0:.1f} s", flush=True)
        t.check(p.restarts == rounds, "berthd restarted after every kill -9",
                f"{p.restarts} of {rounds}: " + "; ".join(p.problems[:3]))
        t.check(not p.problems, "no wrong reply, no lease lost, ids only grow", "; ".join(p.problems[:5]))
        t.check(not bad, "no core held by two holders at overlapping times", "; ".join(bad[:5]))
        t.check(not p.lost, "every request waiting at a crash is back in its place after the restart",
                f"{len(p.lost)} of {p.places} lost: {p.lost[:10]}")
    finally:
        d.cleanup()


def test_cut_short():
    """A journal cut in the middle (truncated inside a grant record, as a
    copy cut off or a truncate would) is reported as cut, naming the grants
    lost, not as the mark of a crash; lease ids go on past them."""
    d = Daemon()
    try:
        d.start()
        c = d.client()
        names = [c.request("acquire", cores=1, detach=True, ttl=3600, label=f"d{i}")["lease"] for i in range(4)]
        t.check(names == [f"L{i}" for i in range(1, 5)], "four detached leases", str(names))
        d.kill9()
        path = os.path.join(d.state, "journal.jsonl")
        with open(path, "rb") as f:
            text = f.read()
        at = text.index(b'"op":"grant","id":3')      # inside L3's grant record
        os.truncate(path, at + 10)
        d.start()
        with open(d.err) as f:
            log = f.read()
        t.check("was cut short" in log and "the grants of L3 to L4" in log and "mark of a crash" not in log,
                "the restart says the journal was cut and which grants were lost", log[-600:])
        c.close()
        c = d.client()
        x = c.request("acquire", cores=1, detach=True, ttl=60)
        t.check(x.get("ok") and lease_num(x["lease"]) > 4, "and lease ids go on past the lost ones",
                str(x.get("lease")))
        t.check(sorted(str(le["label"]) for le in status(d)["leases"]) == ["None", "d0", "d1"],
                "the leases whose records survived are held", str(status(d)["leases"]))
        c.close()
        # a crash mid-write tears only what is past the mark: still the mark of a crash
        d.kill9()
        with open(path, "ab") as f:
            f.write(b'{"op":"release","id":1,"ti')
        d.start()
        with open(d.err) as f:
            log = f.read()
        t.check("mark of a crash" in log and log.count("was cut short") == 1,
                "a torn last line past what berthd wrote is still the mark of a crash", log[-400:])
    finally:
        d.cleanup()


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 25
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else random.randrange(1 << 30)
    tests = [test_priority_round, test_set_aside_with_holders, test_cut_short, lambda: test_placed_restart(False), lambda: test_placed_restart(True), lambda: test_kill9_property(rounds, seed)]
    t.run_each(tests)
    t.finish()


main()
