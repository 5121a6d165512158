#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd killed -9 and started again under running steps (issue 15, part 1).

Every step here is a real `berth run --local` holding every core of the
local allocation, so any two steps running at once on a core is a double
grant. Each step process records what it was given and when it ran (its own
Cpus_allowed_list and BERTH_CORES, its start and end times); the checks count
double grants from those records, never from berthd's books. Cases: kill -9
while a step runs, while a request waits (it keeps its place: a request that
arrives after the restart does not overtake it), while a release is in
flight, twice in a row, through a listening socket kept across the crash
(what systemd does with berthd@.socket and Restart=on-failure; this machine
has no user manager, so the test keeps the socket itself), berthd never
coming back (berth run still returns the step's status and says once that
the release was not recorded), a lease released by another client while its
holder was away (the holder is told once), a grant whose reply the crash
swallowed (the acquire sent again gets that lease), a holder berthd cannot watch (another pid
namespace: the grace applies and status says so), and `berth acquire`'s
detached leases (ttl and owner-pid bound), which a restart leaves alone.

usage: BERTHD=build/daemon/berthd BERTH=build/client/berth test_restart.py
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checks, Daemon, connectable, status, wait_until  # noqa: E402

BERTH = os.environ.get("BERTH", "")
t = Checks()
LONG = 60          # generous bound for anything polled

# The step: record what it got and when it started, wait for its release
# file, record when it ends, exit with the status asked for.
STEP = r"""
import json, os, sys, time
rec, go, code = sys.argv[1], sys.argv[2], int(sys.argv[3])
def cpus():
    for line in open("/proc/self/status"):
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
start = time.time()
with open(rec, "w") as f:
    json.dump({"cpus": cpus(), "berth_cores": os.environ.get("BERTH_CORES"),
               "lease": os.environ.get("BERTH_LEASE"), "start": start}, f)
end = start + 600
while not os.path.exists(go) and time.time() < end:
    time.sleep(0.02)
r = json.load(open(rec))
r["end"] = time.time()
with open(rec + ".tmp", "w") as f:
    json.dump(r, f)
os.rename(rec + ".tmp", rec)
sys.exit(code)
"""


def idset(text):
    out = set()
    for part in (text or "").split(","):
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        elif part.strip():
            out.add(int(part))
    return out


def plain_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_JOB_ID", "PBS_JOBID")}
    env.update(extra or {})
    return env


class Steps:
    """The `berth run` steps of one test and their own records."""

    def __init__(self, d):
        self.d = d
        self.dir = os.path.join(d.dir, "steps")
        os.makedirs(self.dir, exist_ok=True)
        with open(os.path.join(self.dir, "step.py"), "w") as f:
            f.write(STEP)
        self.runs = {}

    def start(self, label, code=0, env=None, cores=None):
        rec = os.path.join(self.dir, label + ".json")
        go = os.path.join(self.dir, label + ".go")
        err = open(os.path.join(self.dir, label + ".err"), "w")
        cores = cores or cores_of(self.d)
        p = subprocess.Popen([BERTH, "run", "--local", "--cores", str(cores), "--label", label, "--",
                              sys.executable, os.path.join(self.dir, "step.py"), rec, go, str(code)],
                             env=plain_env(dict(env or {}, BERTH_SOCKET=self.d.sock)),
                             stdout=subprocess.DEVNULL, stderr=err)
        self.runs[label] = p
        return p

    def record(self, label):
        try:
            with open(os.path.join(self.dir, label + ".json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def running(self, label):
        return wait_until(lambda: self.record(label) is not None, LONG)

    def release(self, label):
        open(os.path.join(self.dir, label + ".go"), "w").close()

    def finish(self, label):
        p = self.runs[label]
        try:
            return p.wait(LONG + 30)
        except subprocess.TimeoutExpired:
            p.kill()
            return p.wait()

    def stderr(self, label):
        with open(os.path.join(self.dir, label + ".err")) as f:
            return f.read()

    def kill_all(self):
        for label, p in self.runs.items():
            self.release(label)
            if p.poll() is None:
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    def overlaps(self):
        """Pairs of steps that ran at once on a shared core, from the steps'
        own records (a step still running counts as running until now)."""
        recs = {k: self.record(k) for k in self.runs}
        recs = {k: r for k, r in recs.items() if r}
        bad = []
        names = sorted(recs)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                ra, rb = recs[a], recs[b]
                shared = (idset(ra["cpus"]) & idset(rb["cpus"])) | \
                         (idset(ra["berth_cores"]) & idset(rb["berth_cores"]))
                ea, eb = ra.get("end", time.time()), rb.get("end", time.time())
                if shared and ra["start"] < eb and rb["start"] < ea:
                    bad.append((a, b, sorted(shared)))
        return bad, len(recs)


GRANTS = [0]       # steps whose records were checked, over all tests
RESTARTS = [0]


def cores_of(d):
    return status(d)["allocation"]["totals"]["cores"]


def local_daemon(args=("--reclaim-grace", "1")):
    """berthd on the localhost default (real cores), as a new user runs it."""
    return Daemon(args=list(args), env=plain_env(), machine=None)


def restart(d):
    d.kill9()
    RESTARTS[0] += 1
    d.start(wait_s=LONG)


def leases(d):
    return {x["label"]: x for x in status(d)["leases"]}


def acquire_cli(d, *args):
    """berth acquire --cores 1 with args: the lease id, or berth's stderr."""
    r = subprocess.run([BERTH, "acquire", "--cores", "1", "--json"] + list(args),
                       env=plain_env({"BERTH_SOCKET": d.sock}), capture_output=True, text=True)
    return json.loads(r.stdout)["lease"] if r.returncode == 0 else r.stderr


def killed_journal(d):
    """kill -9 berthd; its journal's path, records, and grants by label."""
    d.kill9()
    RESTARTS[0] += 1
    path = os.path.join(d.state, "journal.jsonl")
    with open(path) as f:
        recs = [json.loads(x) for x in f if x.strip()]
    return path, recs, {r["lease"]["label"]: r for r in recs if r.get("op") == "grant"}


def queue_labels(d):
    return [q["label"] for q in status(d)["queue"]]


def reclaimed(d, label):
    return wait_until(lambda: leases(d).get(label, {}).get("holder") == "connection", LONG)


def no_double_grant(steps, what):
    bad, n = steps.overlaps()
    GRANTS[0] += n
    t.check(not bad, f"{what}: no core granted twice while its holder ran (from {n} steps' own records)",
            str(bad))


def test_step_runs():
    """kill -9 while a step runs: past the grace it keeps its cores, it
    reclaims its lease, releases it itself and returns its own status."""
    d = local_daemon().start()
    s = Steps(d)
    try:
        s.start("holder", code=5)
        t.check(s.running("holder"), "the holder's step runs", d.stderr())
        restart(d)
        t.check(reclaimed(d, "holder"), "berth run reconnects and reclaims its lease by id",
                str(status(d).get("leases")) + d.stderr())
        time.sleep(2)                   # the 1 s grace is over
        t.check("holder" in leases(d), "the lease outlives the reclaim grace while its step runs")
        s.start("intruder")
        t.check(wait_until(lambda: queue_labels(d) == ["intruder"], LONG),
                "a request for every core waits while the restored holder runs", str(status(d)["queue"]))
        s.release("holder")
        rc = s.finish("holder")
        t.check(rc == 5, "berth run returns the step's own status (5) after the restart", str(rc))
        t.check(s.stderr("holder") == "", "and says nothing went wrong", s.stderr("holder"))
        t.check(s.running("intruder"), "the waiter is granted once the holder is done")
        s.release("intruder")
        t.check(s.finish("intruder") == 0, "and runs")
        no_double_grant(s, "a step running across a restart")
    finally:
        s.kill_all()
        d.cleanup()


def test_request_waits():
    """kill -9 while a request waits: its client sends it again and it keeps
    its place ahead of a request that arrived after the restart."""
    d = local_daemon(("--reclaim-grace", "60")).start()
    s = Steps(d)
    try:
        s.start("holder", code=3)
        t.check(s.running("holder"), "the holder's step runs")
        first = s.start("first")
        t.check(wait_until(lambda: queue_labels(d) == ["first"], LONG), "the first request waits")
        os.kill(first.pid, signal.SIGSTOP)  # it reconnects only after the later one has come
        restart(d)
        q = status(d)["queue"]
        t.check([x["label"] for x in q] == ["first"] and q[0]["restored"],
                "the first request is back in its place before its client sends it again (restored)",
                str(q) + d.stderr())
        s.start("later")
        t.check(wait_until(lambda: queue_labels(d) == ["first", "later"], LONG),
                "a request made after the restart waits behind it", str(status(d)["queue"]))
        os.kill(first.pid, signal.SIGCONT)
        t.check(wait_until(lambda: "takes back its place" in d.stderr(), LONG),
                "the first request is sent again", d.stderr())
        q = status(d)["queue"]
        t.check([x["label"] for x in q] == ["first", "later"] and not q[0]["restored"],
                "and takes back its place ahead of the later one", str(q))
        t.check(reclaimed(d, "holder"), "the holder reclaimed its lease")
        s.release("holder")
        t.check(s.finish("holder") == 3, "the holder's berth run returns its step's status")
        t.check(s.running("first"), "the first request is granted when the holder ends")
        time.sleep(0.5)
        t.check(s.record("later") is None, "the later one still waits")
        s.release("first")
        t.check(s.finish("first") == 0, "the first step ends")
        t.check(s.running("later"), "then the later one is granted")
        s.release("later")
        t.check(s.finish("later") == 0, "and ends")
        order = sorted(("first", "later"), key=lambda k: s.record(k)["start"])
        t.check(order == ["first", "later"], "steps ran in arrival order", str(order))
        no_double_grant(s, "a request waiting across a restart")
    finally:
        s.kill_all()
        d.cleanup()


def restored_place(grace):
    """A detached lease of every core owned by a sleep; a berth run for
    every core (first) waits behind it and is stopped; berthd is killed -9,
    the sleep ends while it is down, berthd starts again, and a berth run
    for one core (later) arrives before first sends its request again.
    (d, steps, first's process)."""
    d = local_daemon(("--reclaim-grace", str(grace))).start()
    s = Steps(d)
    owner = subprocess.Popen(["sleep", "600"])
    lease = subprocess.run([BERTH, "acquire", "--cores", str(cores_of(d)), "--owner-pid", str(owner.pid),
                            "--label", "hold", "--json"], env=plain_env({"BERTH_SOCKET": d.sock}),
                           capture_output=True, text=True)
    t.check(lease.returncode == 0, "a detached lease of every core, owned by a sleep", lease.stderr)
    first = s.start("first")
    t.check(wait_until(lambda: queue_labels(d) == ["first"], LONG), "a request for every core waits behind it")
    os.kill(first.pid, signal.SIGSTOP)  # it sends its request again only when let
    d.kill9()
    RESTARTS[0] += 1
    owner.kill()
    owner.wait()
    d.start(wait_s=LONG)
    s.start("later", cores=1)
    return d, s, first


def restored_cleanup(d, s, first):
    if first.poll() is None:
        os.kill(first.pid, signal.SIGCONT)
    s.kill_all()
    d.cleanup()


def test_restored_place_holds():
    """Issue 24, finding 7: a request that waited when berthd was killed is
    back in its place before its client sends it again, reserving as any
    waiter does: the lease it would have had once the cores freed is kept
    for it, and a request that arrives after the restart does not start
    ahead of it."""
    d, s, first = restored_place(60)
    try:
        t.check(wait_until(lambda: "later" in queue_labels(d), LONG),
                "the request made after the restart waits", str(status(d)["queue"]) + d.stderr())
        kept = leases(d).get("first", {})
        t.check(kept.get("holder") != "connection" and kept.get("reclaim_by") is not None,
                "the restored request, which fits, is granted while its client is away, and its lease "
                "kept for it", str(status(d)["leases"]) + d.stderr())
        time.sleep(1)
        t.check(s.record("later") is None, "the later step has not started")
        os.kill(first.pid, signal.SIGCONT)
        t.check(s.running("first"), "the first request, sent again, is answered with its lease and runs",
                s.stderr("first") + d.stderr())
        t.check(s.record("later") is None, "the later step still waits", str(status(d)["queue"]))
        s.release("first")
        t.check(s.finish("first") == 0, "the first step ends", s.stderr("first"))
        t.check(s.running("later"), "then the later one is granted")
        s.release("later")
        t.check(s.finish("later") == 0, "and ends")
        t.check(s.record("first")["end"] <= s.record("later")["start"],
                "the later step started after the first ended", str((s.record("first"), s.record("later"))))
        no_double_grant(s, "a restored place")
    finally:
        restored_cleanup(d, s, first)


def test_restored_place_lapses():
    """A restored request whose client does not send it again within the
    reclaim grace loses its place: the lease kept for it ends, the later
    request is granted, and the first, sent again after that, waits behind
    it as a new arrival."""
    d, s, first = restored_place(3)
    try:
        t.check(s.running("later"), "after the grace the later request is granted",
                str(status(d)) + d.stderr())
        t.check("first" not in leases(d), "the lease kept for the first request ended with the grace",
                str(status(d)["leases"]))
        t.check("disconnected" in released_reasons(d),
                "the lease kept for it ended as disconnected", str(released_reasons(d)) + d.stderr())
        os.kill(first.pid, signal.SIGCONT)
        t.check(wait_until(lambda: queue_labels(d) == ["first"], LONG),
                "the first request, sent again late, waits behind the later one", str(status(d)["queue"]))
        s.release("later")
        t.check(s.finish("later") == 0, "the later step ends")
        t.check(s.running("first"), "then the first is granted")
        s.release("first")
        t.check(s.finish("first") == 0, "and ends", s.stderr("first"))
        no_double_grant(s, "a restored place that lapsed")
    finally:
        restored_cleanup(d, s, first)


def released_reasons(d):
    with open(os.path.join(d.state, "events.jsonl")) as f:
        return [ev.get("reason") for ev in map(json.loads, f) if ev.get("event") == "released"]


def test_release_in_flight():
    """kill -9 while a release is in flight (berthd stopped, the release
    sent but unanswered): after the restart it is sent again and done."""
    d = local_daemon().start()
    s = Steps(d)
    try:
        s.start("holder", code=7)
        t.check(s.running("holder"), "the holder's step runs")
        os.kill(d.proc.pid, signal.SIGSTOP)
        s.release("holder")
        t.check(wait_until(lambda: "end" in (s.record("holder") or {}), LONG), "the step ends")
        time.sleep(0.3)                 # berth run sends its release meanwhile
        restart(d)
        rc = s.finish("holder")
        t.check(rc == 7, "berth run returns the step's status (7)", str(rc) + s.stderr("holder"))
        t.check(s.stderr("holder") == "", "with no complaint about its release", s.stderr("holder"))
        t.check(wait_until(lambda: not leases(d), LONG), "and the lease is gone", str(status(d)["leases"]))
        ev = [json.loads(x) for x in open(os.path.join(d.state, "events.jsonl"))]
        t.check(any(e.get("event") == "released" and e.get("label") == "holder" and e.get("reason") == "released"
                    for e in ev), "released by its holder, not freed for it", str(ev[-3:]))
        s.start("next")
        t.check(s.running("next"), "the cores are granted again")
        s.release("next")
        s.finish("next")
        no_double_grant(s, "a release in flight across a restart")
    finally:
        s.kill_all()
        d.cleanup()


def test_twice():
    """kill -9 twice in a row while a step runs."""
    d = local_daemon().start()
    s = Steps(d)
    try:
        s.start("holder", code=4)
        t.check(s.running("holder"), "the holder's step runs")
        restart(d)
        t.check(reclaimed(d, "holder"), "reclaimed after the first restart")
        restart(d)
        t.check(reclaimed(d, "holder"), "and after the second", str(status(d)["leases"]) + d.stderr())
        time.sleep(2)
        s.start("intruder")
        t.check(wait_until(lambda: queue_labels(d) == ["intruder"], LONG), "every core is still held")
        s.release("holder")
        t.check(s.finish("holder") == 4, "berth run returns the step's status (4)")
        t.check(s.stderr("holder") == "", "and is content", s.stderr("holder"))
        t.check(s.running("intruder"), "the waiter is granted after")
        s.release("intruder")
        s.finish("intruder")
        no_double_grant(s, "two restarts in a row")
    finally:
        s.kill_all()
        d.cleanup()


def test_kept_socket():
    """The restart path of systemd's berthd@.socket with Restart=on-failure:
    the listening socket outlives berthd and is passed to the new one."""
    d = local_daemon()
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s = None
    try:
        lsock.bind(d.sock)
        lsock.listen(64)
        fd = lsock.fileno()
        args = [a for a in d.command() if a not in ("--socket", d.sock)]

        def start():
            def child():
                os.dup2(fd, 3)
                os.set_inheritable(3, True)
            return subprocess.Popen(["sh", "-c", 'LISTEN_PID=$$ exec "$@"', "sh"] + args,
                                    env=dict(d.env, LISTEN_FDS="1"), stdout=subprocess.DEVNULL,
                                    stderr=open(d.err, "a"), preexec_fn=child, pass_fds=(fd,))
        d.proc = start()
        t.check(wait_until(lambda: status(d).get("ok"), LONG), "berthd serves the passed socket")
        s = Steps(d)
        s.start("holder", code=6)
        t.check(s.running("holder"), "the holder's step runs")
        d.proc.kill()
        d.proc.wait()
        RESTARTS[0] += 1
        d.proc = start()
        t.check(reclaimed(d, "holder"), "reclaimed through the kept socket", d.stderr())
        time.sleep(2)
        s.start("intruder")
        t.check(wait_until(lambda: queue_labels(d) == ["intruder"], LONG), "every core is still held")
        s.release("holder")
        t.check(s.finish("holder") == 6, "berth run returns the step's status (6)")
        t.check(s.running("intruder"), "the waiter is granted after")
        s.release("intruder")
        s.finish("intruder")
        no_double_grant(s, "a restart through the kept socket")
    finally:
        if s:
            s.kill_all()
        lsock.close()
        d.cleanup()


def test_never_back():
    """berthd does not come back in time: berth run returns the step's
    status and says once that the release could not be recorded; started
    later, berthd frees the lease of the gone holder at once."""
    d = local_daemon().start()
    s = Steps(d)
    try:
        s.start("holder", code=9, env={"BERTH_RECONNECT_S": "1"})
        t.check(s.running("holder"), "the holder's step runs")
        d.kill9()
        RESTARTS[0] += 1
        s.release("holder")
        rc = s.finish("holder")
        err = s.stderr("holder")
        t.check(rc == 9, "berth run returns the step's status (9) with berthd gone", str(rc))
        t.check(err.count("could not be recorded") == 1 and err.count("\n") == 1,
                "and says once, on one line, that the release could not be recorded", err)
        d.start(wait_s=LONG)
        t.check(wait_until(lambda: not leases(d), LONG), "a later berthd frees the gone holder's lease",
                str(status(d)["leases"]))
        no_double_grant(s, "berthd gone")
    finally:
        s.kill_all()
        d.cleanup()


def test_freed_meanwhile():
    """The lease is released by someone else while its holder is away (a
    restored lease may be released by id by anyone): the holder's reclaim
    finds it gone; berth run still returns the step's status and says once
    that the lease was freed while berthd was away."""
    d = local_daemon(("--reclaim-grace", "60")).start()
    s = Steps(d)
    try:
        p = s.start("holder", code=2)
        t.check(s.running("holder"), "the holder's step runs")
        os.kill(p.pid, signal.SIGSTOP)
        restart(d)
        lease = leases(d)["holder"]["lease"]
        c = d.client()
        t.check(c.request("release", lease=lease).get("ok"), "another client releases the restored lease by id")
        c.close()
        os.kill(p.pid, signal.SIGCONT)
        s.release("holder")
        rc = s.finish("holder")
        err = s.stderr("holder")
        t.check(rc == 2, "berth run returns the step's status (2)", str(rc))
        t.check(err.count("freed while berthd was away") == 1 and err.count("\n") == 1,
                "and says once that its lease was freed while berthd was away", err)
        no_double_grant(s, "a lease freed while its holder was away")
    finally:
        s.kill_all()
        d.cleanup()


def test_reply_lost():
    """A grant journaled whose reply the crash swallowed: the acquire sent
    again by the same process under the same id, with resume, is answered
    with that lease, not a second one; another id is a new request."""
    d = local_daemon(("--reclaim-grace", "60")).start()
    try:
        ncores = cores_of(d)
        c = d.client()
        first = c.request("acquire", id=123456789, cores=ncores, label="lost-reply")
        t.check(first.get("ok"), "every core granted", str(first)[:200])
        restart(d)
        c.close()
        again = d.client()
        r = again.request("acquire", id=123456789, cores=ncores, label="lost-reply", resume=True)
        t.check(r.get("ok") and r.get("lease") == first["lease"] and r["placement"] == first["placement"],
                "the same request sent again gets the lease granted to it", str(r)[:300])
        t.check(leases(d)["lost-reply"]["holder"] == "connection", "bound to the new connection")
        other = again.request("acquire", id=123456790, cores=ncores, resume=True, wait=False)
        t.check(other.get("error", {}).get("code") == "busy", "another id is a new request (nothing free)",
                str(other)[:200])
        again.close()
        t.check(wait_until(lambda: not leases(d), LONG), "the lease ends with its new connection")
    finally:
        d.cleanup()


def can_unshare():
    u = shutil.which("unshare")
    return u and subprocess.run([u, "--pid", "--fork", "--mount-proc", "true"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def test_unwatchable():
    """A holder berthd cannot watch (berthd in a pid namespace of its own,
    where the client's pid is not visible): the grace applies, and status
    says so (text and JSON)."""
    if not can_unshare():
        print("skipped: test_unwatchable needs unshare --pid (root or user namespaces)")
        return
    d = local_daemon(("--reclaim-grace", "60"))
    d.wrapper = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"]
    d.start(wait_s=LONG)
    s = Steps(d)
    try:
        s.start("holder", env={"BERTH_RECONNECT_S": "0"})
        t.check(s.running("holder"), "the holder's step runs")
        t.check(leases(d)["holder"]["peer_pid"] == 0, "berthd sees no pid for a peer outside its namespace",
                str(leases(d)))
        os.kill(s.runs["holder"].pid, signal.SIGSTOP)   # it must not reclaim
        d.kill9()
        RESTARTS[0] += 1
        # berthd dies with the namespace's first process, maybe a moment after unshare
        t.check(wait_until(lambda: not connectable(d.sock), LONG), "the old berthd is gone")
        d.start(wait_s=LONG)
        lease = leases(d).get("holder", {})
        t.check(lease.get("holder") == "orphaned" and lease.get("holder_watched") is False
                and lease.get("reclaim_by", 0) > time.time(),
                "status --json: orphaned, holder_watched false, reclaim_by ahead", str(lease))
        out = subprocess.run([BERTH, "status"], env=plain_env({"BERTH_SOCKET": d.sock}),
                             capture_output=True, text=True).stdout
        t.check("cannot be watched" in out and "unless reclaimed" in out,
                "berth status says the holder cannot be watched and when it is freed", out)
        os.kill(s.runs["holder"].pid, signal.SIGCONT)
    finally:
        s.kill_all()
        d.cleanup()


def test_detached():
    """berth acquire's detached leases are unaffected by a restart: a ttl
    one and an owner-pid one stay; the owner's exit still ends its lease."""
    d = local_daemon().start()
    owner = subprocess.Popen(["sleep", "600"])
    try:
        env = plain_env({"BERTH_SOCKET": d.sock})
        ttl = acquire_cli(d, "--label", "ttl", "--ttl", "600")
        own = acquire_cli(d, "--label", "owned", "--owner-pid", str(owner.pid))
        t.check(ttl.startswith("L") and own.startswith("L"), "two detached leases", ttl + own)
        restart(d)
        time.sleep(2)                   # past the grace
        ls = leases(d)
        t.check(ls.get("ttl", {}).get("holder") == "detached" and ls.get("owned", {}).get("holder") == "detached",
                "both outlive the restart, still detached", str(ls))
        owner.kill()
        owner.wait()
        t.check(wait_until(lambda: "owned" not in leases(d), LONG), "the owner's exit ends its lease")
        r = subprocess.run([BERTH, "release", ttl], env=env, capture_output=True, text=True)
        t.check(r.returncode == 0 and not leases(d), "the ttl lease is released by id", r.stderr)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        d.cleanup()


def proc_start(pid):
    """The process's start time in clock ticks (/proc/PID/stat field 22)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def test_owner_reused():
    """An owner-pid lease is bound to its owner process, not just its pid: a
    restart that finds the pid naming another process (its start time not the
    owner's) ends the lease as owner_exited rather than keeping it for a
    stranger. Pid reuse is staged by editing the journal's start time, since
    forcing a pid needs a pid namespace."""
    d = local_daemon().start()
    owner = subprocess.Popen(["sleep", "600"])
    kept = subprocess.Popen(["sleep", "600"])
    try:
        own = acquire_cli(d, "--label", "reused", "--owner-pid", str(owner.pid))
        same = acquire_cli(d, "--label", "same", "--owner-pid", str(kept.pid))
        t.check(own.startswith("L") and same.startswith("L"), "two owner-pid leases", own + same)
        path, recs, grants = killed_journal(d)
        t.check(grants.get("reused", {}).get("owner_start") == proc_start(owner.pid),
                "the grant record keeps the owner's start time", str(grants.get("reused")))
        with open(path, "w") as f:
            for r in recs:
                if r.get("op") == "grant" and r["lease"]["label"] == "reused":
                    r["owner_start"] = proc_start(owner.pid) + 1   # the pid is another's now
                f.write(json.dumps(r) + "\n")
        d.start(wait_s=LONG)
        t.check(wait_until(lambda: "reused" not in leases(d), LONG),
                "the lease whose owner pid names another process ends", str(leases(d)))
        t.check(released_reason(d, own) == "owner_exited", "its release is logged as owner_exited",
                str(released_reason(d, own)))
        t.check(leases(d).get("same", {}).get("holder") == "detached",
                "the lease whose owner still runs stays", str(leases(d)))
        kept.kill()
        kept.wait()
        t.check(wait_until(lambda: "same" not in leases(d), LONG), "and ends when that owner exits")
    finally:
        for p in (owner, kept):
            if p.poll() is None:
                p.kill()
                p.wait()
        d.cleanup()


def test_ttl_clock_jump():
    """A ttl counts on the boot clock across a restart: the wall clock set
    2 h forward while berthd was down (staged by moving the journal's wall
    instants 2 h back, which is what berthd sees either way) leaves a
    ttl=3600 lease with its hour; a lease journaled in another boot has only
    the wall clock, and ends."""
    d = local_daemon().start()
    try:
        mine = acquire_cli(d, "--label", "jumped", "--ttl", "3600")
        other = acquire_cli(d, "--label", "other-boot", "--ttl", "3600")
        t.check(mine.startswith("L") and other.startswith("L"), "two ttl leases", mine + other)
        path, recs, grants = killed_journal(d)
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        t.check(grants.get("jumped", {}).get("boot_id") == boot
                and isinstance(grants.get("jumped", {}).get("expires_boot"), float),
                "the grant record keeps the deadline on the boot clock, with the boot's id",
                str(grants.get("jumped")))
        with open(path, "w") as f:
            for r in recs:
                if r.get("op") == "grant":
                    r["time"] -= 7200
                    r["lease"]["granted"] -= 7200
                    r["expires"] -= 7200
                    if r["lease"]["label"] == "other-boot":
                        r["boot_id"] = "00000000-0000-4000-8000-000000000000"
                f.write(json.dumps(r) + "\n")
        d.start(wait_s=LONG)
        ls = leases(d)
        left = (ls.get("jumped", {}).get("expires") or 0) - time.time()
        t.check(3000 < left <= 3600, "the lease granted in this boot keeps its hour", f"{left:.0f} s left: {ls}")
        t.check(wait_until(lambda: "other-boot" not in leases(d), LONG),
                "the one from another boot ends on the wall clock", str(leases(d)))
        t.check(released_reason(d, other) == "expired", "as expired", str(released_reason(d, other)))
        t.check("the wall clock moved +7200 s" in d.stderr(), "berthd says the wall clock moved", d.stderr())
    finally:
        d.cleanup()


def test_gives_up():
    """A request in flight across 11 restarts in a row (as if it crashed
    berthd each time): its client gives up after 10 resends, saying that it
    gave up and why, not only that berthd closed the connection."""
    d = local_daemon(("--reclaim-grace", "60")).start()
    s = Steps(d)
    try:
        s.start("holder")
        t.check(s.running("holder"), "the holder's step runs")
        s.start("waiter")
        sent = 0
        for _ in range(11):
            # sent again by its client, not only back in its place
            if not wait_until(lambda: any(q["label"] == "waiter" and not q["restored"]
                                          for q in status(d)["queue"]), LONG):
                break
            sent += 1
            restart(d)
        t.check(sent == 11, "the waiting request is sent again after each of 10 restarts", str(sent))
        code = s.finish("waiter")
        err = s.stderr("waiter")
        t.check(code != 0 and "gave up on the acquire request" in err and "11 times" in err,
                "then its berth run gives up, saying so and why", f"{code}: {err[-500:]}")
        t.check(reclaimed(d, "holder"), "the holder still holds its lease")
    finally:
        s.kill_all()
        d.cleanup()


def released_reason(d, lease):
    with open(os.path.join(d.state, "events.jsonl")) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("event") == "released" and ev.get("lease") == lease:
                return ev.get("reason")
    return None


def main():
    if not BERTH or not os.access(BERTH, os.X_OK):
        print("BERTH is not set to the built berth")
        sys.exit(2)
    t.run_each((test_step_runs, test_request_waits, test_restored_place_holds, test_restored_place_lapses,
                test_release_in_flight, test_twice, test_kept_socket,
                test_never_back, test_freed_meanwhile, test_reply_lost, test_unwatchable, test_detached,
                test_owner_reused, test_ttl_clock_jump, test_gives_up))
    print(f"info: {RESTARTS[0]} restarts (kill -9), {GRANTS[0]} grants checked against the steps' own records, "
          f"0 double grants allowed", flush=True)
    t.finish()


if __name__ == "__main__":
    main()
