# SPDX-License-Identifier: MIT
"""The berth CLI against a real berthd: acquire/release, --env, run (exit
statuses, signals passed on, a killed run freeing its lease, waiting requests
served as others release, --timeout), status, shutdown, verify.

usage: BERTH=... BERTHD=... python3 test_client.py
Waits below are deadlines for something to happen, never timing assertions.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BERTH = os.environ["BERTH"]
BERTHD = os.environ["BERTHD"]
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def until(cond, deadline=20.0):
    """Poll cond until it holds or the deadline passes; returns its last value."""
    end = time.time() + deadline
    while True:
        v = cond()
        if v or time.time() > end:
            return v
        time.sleep(0.02)


class Daemon:
    def __init__(self, tmp, args=()):
        self.dir = tempfile.mkdtemp(dir=tmp)
        self.sock = os.path.join(self.dir, "b.sock")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SLURM_", "PBS_", "BERTH_"))}
        self.env["BERTH_SOCKET"] = self.sock
        self.err = open(os.path.join(self.dir, "d.err"), "w")
        self.p = subprocess.Popen([BERTHD, "--socket", self.sock, "--foreground",
                                   "--state-dir", self.dir, *args], env=self.env,
                                  stdout=subprocess.DEVNULL, stderr=self.err)
        if not until(self.connectable, 10):
            raise SystemExit(f"berthd did not start: {open(self.err.name).read()[-400:]}")

    def connectable(self):
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(self.sock)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def berth(self, *args, env=None, timeout=60):
        e = dict(self.env, **(env or {}))
        return subprocess.run([BERTH, *args], capture_output=True, text=True, env=e,
                              timeout=timeout)

    def popen(self, *args, env=None, **kw):
        e = dict(self.env, **(env or {}))
        return subprocess.Popen([BERTH, *args], env=e, text=True, **kw)

    def status(self):
        r = self.berth("status", "--json")
        return json.loads(r.stdout) if r.returncode == 0 else None

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()


def cores_of(d):
    return d.status()["allocation"]["totals"]["cores"]


def t_acquire_release(d):
    r = d.berth("acquire", "--cores", "1", "--label", "one", "--json")
    check(r.returncode == 0, f"acquire --json: rc {r.returncode} {r.stderr}")
    lease = json.loads(r.stdout)
    lid = lease["lease"]
    check(re.fullmatch(r"L\d+", lid), f"lease id {lid!r}")
    check(len(lease["placement"]["nodes"]) == 1 and len(lease["placement"]["cores"][0]) == 1,
          f"placement of --cores 1: {lease['placement']}")
    check(lease["label"] == "one", f"label in the lease: {lease}")
    check(r.stdout.count("\n") == 1, "acquire --json is one line")
    held = d.status()["leases"]
    check([x["lease"] for x in held] == [lid], f"status lists the detached lease: {held}")
    r = d.berth("release", lid)
    check(r.returncode == 0 and r.stdout == "" and r.stderr == "",
          f"release: rc {r.returncode} {r.stdout!r} {r.stderr!r}")
    check(d.status()["leases"] == [], "released lease gone from status")
    r = d.berth("release", lid)
    check(r.returncode == 1 and "not_found" in r.stderr and lid in r.stderr,
          f"releasing twice: rc {r.returncode} {r.stderr!r}")
    r = d.berth("release", "L999999")
    check(r.returncode == 1 and "berth release: not_found:" in r.stderr,
          f"releasing an unknown lease: {r.stderr!r}")
    # several ids at once; one unknown fails the command, the others are released
    a = d.berth("acquire", "--cores", "1").stdout.strip()
    check(re.fullmatch(r"L\d+", a), f"plain acquire prints the id alone: {a!r}")
    r = d.berth("release", "L999998", a)
    check(r.returncode == 1 and d.status()["leases"] == [],
          f"release of a known and an unknown lease: rc {r.returncode}, {d.status()['leases']}")


def t_env(d):
    r = subprocess.run(["sh", "-c", f'eval "$("{BERTH}" acquire --cores 1 --env)" && '
                        'echo "$BERTH_LEASE|$BERTH_NODES|$BERTH_CORES|$BERTH_GPUS|$BERTH_MEMORY_MB"'],
                       capture_output=True, text=True, env=d.env)
    check(r.returncode == 0, f"eval of acquire --env: {r.stderr}")
    lid, nodes, cores, gpus, mem = r.stdout.strip().split("|")
    lease = next(x for x in d.status()["leases"] if x["lease"] == lid)
    check(nodes == ",".join(lease["placement"]["nodes"]), f"BERTH_NODES {nodes!r} vs {lease}")
    check(cores == str(lease["placement"]["cores"][0][0]), f"BERTH_CORES {cores!r} vs {lease}")
    check(gpus == "", f"BERTH_GPUS is empty for none: {gpus!r}")
    check(mem == "" or int(mem) > 0, f"BERTH_MEMORY_MB {mem!r}")
    d.berth("release", lid)


def t_busy_timeout_unsatisfiable(d):
    """berth's own failures exit 125 (as timeout(1) and env(1) do), never a
    status a step could have returned (1)."""
    n = cores_of(d)
    lid = d.berth("acquire", "--cores", str(n)).stdout.strip()
    r = d.berth("acquire", "--cores", "1", "--no-wait")
    check(r.returncode == 125 and "berth acquire: busy:" in r.stderr, f"--no-wait: {r.returncode} {r.stderr!r}")
    r = d.berth("acquire", "--cores", "1", "--timeout", "0.3")
    check(r.returncode == 125 and "berth acquire: timeout:" in r.stderr,
          f"--timeout expiry: rc {r.returncode} {r.stderr!r}")
    check("waited 0.3 s for 1 core" in r.stderr and "not tried yet" not in r.stderr
          and "no node with 1 free core (best: 0)" in r.stderr,
          f"the timeout says how long and why (tried when it came): {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", "1", "--timeout", "0.3", "--", "true")
    check(r.returncode == 125 and "berth run: timeout:" in r.stderr,
          f"run --timeout expiry: rc {r.returncode} {r.stderr!r}")
    d.berth("release", lid)
    r = d.berth("acquire", "--cores", str(n * 1000))
    check(r.returncode == 125 and "berth acquire: unsatisfiable:" in r.stderr,
          f"unsatisfiable: {r.returncode} {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", str(n * 1000), "--", "true")
    check(r.returncode == 125 and "berth run: unsatisfiable:" in r.stderr,
          f"run unsatisfiable: {r.returncode} {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", "1", "--", "sh", "-c", "exit 1")
    check(r.returncode == 1, f"a step's own 1 stays 1: {r.returncode} {r.stderr!r}")
    check(d.status()["leases"] == [], "nothing held after refusals")


def t_refusal_hints(d):
    """A refusal's hint names a CLI option that works here, never a protocol
    field: a local step on one node cannot span, a cut can be asked for."""
    n = cores_of(d)
    nodes = len(d.status()["allocation"]["nodes"])
    r = d.berth("run", "--local", "--cores", str(n // nodes + 1), "--", "true")
    check(r.returncode == 125 and f"give --min-cores {n // nodes} to let berthd cut it" in r.stderr
          and "may_span" not in r.stderr and "may-span" not in r.stderr
          and "min_cores" not in r.stderr,
          f"run --local over a node: hint --min-cores, no spanning: {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", str(n // nodes + 1), "--min-cores", str(n // nodes),
                "--", "true")
    check(r.returncode == 0, f"the hint works: {r.returncode} {r.stderr!r}")
    lid = d.berth("acquire", "--cores", str(n)).stdout.strip()
    r = d.berth("acquire", "--cores", "1", "--no-wait")
    check(r.returncode == 125 and "not waiting because --no-wait was given" in r.stderr
          and '"wait"' not in r.stderr, f"busy names --no-wait: {r.stderr!r}")
    d.berth("release", lid)
    check(d.status()["leases"] == [], "nothing held after the hints")


def t_run_status(d):
    r = d.berth("run", "--local", "--cores", "1", "--", "sh", "-c", "exit 7")
    check(r.returncode == 7, f"run exit 7: {r.returncode} {r.stderr}")
    r = d.berth("run", "--local", "--cores", "1", "--", "sh", "-c", "kill -KILL $$")
    check(r.returncode == 128 + 9, f"run killed by SIGKILL: {r.returncode}")
    r = d.berth("run", "--local", "--cores", "1", "--", "/nonexistent/prog")
    check(r.returncode == 127 and "cannot run '/nonexistent/prog'" in r.stderr,
          f"run of a missing program: {r.returncode} {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", "1", "--", "/")
    check(r.returncode == 126 and "cannot run '/'" in r.stderr,
          f"run of something that is not a program: {r.returncode} {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", "1", "--", "sh", "-c", "echo out; echo err >&2")
    check(r.returncode == 0 and r.stdout == "out\n" and r.stderr == "err\n",
          f"run passes stdout and stderr through: {r.stdout!r} {r.stderr!r}")
    check(d.status()["leases"] == [], "run releases its lease")


def t_run_env_affinity(d):
    n = cores_of(d)
    r = d.berth("run", "--local", "--cores", str(n), "--label", "aff", "--", "python3", "-c",
                "import os; print(os.environ['BERTH_LEASE'], os.environ['BERTH_CORES'], "
                "sorted(os.sched_getaffinity(0)), os.environ.get('BERTH_GPUS'), "
                "os.environ.get('OMP_NUM_THREADS'))")
    check(r.returncode == 0, f"run --local: {r.stderr}")
    parts = r.stdout.strip().split(" ")
    lid, cores = parts[0], parts[1]
    check(re.fullmatch(r"L\d+", lid), f"BERTH_LEASE {lid!r}")
    want = set()
    for a, b in re.findall(r"(\d+)(?:-(\d+))?", cores):
        want.update(range(int(a), int(b or a) + 1))
    aff = set(json.loads(r.stdout[r.stdout.index("["):r.stdout.index("]") + 1]))
    check(len(want) == n, f"BERTH_CORES {cores!r} names {n} cores")
    check(want <= aff, f"affinity {aff} covers BERTH_CORES {cores}")
    check(r.stdout.strip().endswith("None"), f"no OMP_NUM_THREADS unless asked: {r.stdout!r}")
    r = d.berth("run", "--local", "--cores", "1", "--omp", "--", "sh", "-c", 'echo "$OMP_NUM_THREADS"')
    check(r.stdout == "1\n", f"--omp sets OMP_NUM_THREADS to the cores: {r.stdout!r}")
    # a --cores step (one process, not --local) gets its granted cores too (was 1)
    for local in ([], ["--local"]):
        r = d.berth("run", *local, "--cores", str(n), "--omp", "--", "sh", "-c",
                    'echo "$OMP_NUM_THREADS"')
        check(r.stdout == f"{n}\n",
              f"run {local} --cores {n} --omp sets OMP_NUM_THREADS={n}: {r.stdout!r} {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", "1", "-v", "--", "true")
    check(re.search(r"berth run: lease L\d+: \S+ \(cores \d+\), 0 GPUs; running true", r.stderr),
          f"-v says what runs: {r.stderr!r}")
    check(re.search(r"berth run: lease L\d+ held \d+ ms: step \d+ ms, settle 0 ms, status 0\n", r.stderr),
          f"-v says where the lease's time went (no settle for a local step): {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", "1", "-v", "--", "sh", "-c", "exit 3")
    check(r.returncode == 3 and "settle 0 ms, status 3" in r.stderr,
          f"-v reports the step's status: {r.returncode} {r.stderr!r}")


def t_run_launch(d, tmp):
    """Without --local the rendered launch runs: a stand-in mpirun runs the program."""
    fake = os.path.join(tmp, "bin")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "mpirun"), "w") as f:
        f.write('#!/bin/sh\n# stand-in: drop the options, run the program once\n'
                'while [ $# -gt 0 ]; do case $1 in -n|-c|-np|--bind-to|--map-by|-bind-to) shift 2;; -*) shift;; *) break;; esac; done\n'
                'echo "launched by mpirun" >&2\nexec "$@"\n')
        os.fchmod(f.fileno(), 0o755)
    env = {"PATH": fake + ":" + os.environ["PATH"], "KEEP": "me"}
    r = d.berth("run", "-n", "1", "--", "sh", "-c", 'echo "$BERTH_LEASE $KEEP"; exit 4', env=env)
    check(r.returncode == 4 and "launched by mpirun" in r.stderr,
          f"run through the launch: rc {r.returncode} {r.stderr!r}")
    check(re.fullmatch(r"L\d+ me\n", r.stdout), f"step env through the launch: {r.stdout!r}")


def t_verify(d):
    r = d.berth("run", "--local", "--cores", "1", "--", BERTH, "verify", "--json")
    check(r.returncode == 0, f"verify in a step: rc {r.returncode} {r.stderr} {r.stdout}")
    v = json.loads(r.stdout)
    check(v["ncores"] == 1, f"verify counts one physical core: {v}")
    check(v["within_berth_cores"] is True, f"verify: inside BERTH_CORES: {v}")
    check(re.fullmatch(r"L\d+", v["berth"]["BERTH_LEASE"] or ""), f"verify sees BERTH_LEASE: {v}")
    check(v["mismatches"] == [], f"verify: no mismatch in a local step: {v}")


def t_signals(d, tmp):
    for sig, want in ((signal.SIGTERM, 5), (signal.SIGINT, 6), (signal.SIGHUP, 8)):
        ready = os.path.join(tmp, f"ready.{sig}")
        got = os.path.join(tmp, f"got.{sig}")
        name = signal.Signals(sig).name[3:]
        p = d.popen("run", "--local", "--cores", "1", "--", "sh", "-c",
                    f'trap "echo {name} > {got}; exit {want}" {name}; : > {ready}; '
                    'while :; do sleep 0.05; done',
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        check(until(lambda: os.path.exists(ready)), f"step for {name} started")
        p.send_signal(sig)
        try:
            rc = p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        check(rc == want, f"SIG{name} to berth run reaches the step: rc {rc} (want {want})")
        check(os.path.exists(got) and open(got).read().strip() == name,
              f"the step saw SIG{name}")
    # a step that does not catch it dies of it: 128 + signal
    ready = os.path.join(tmp, "ready.plain")
    p = d.popen("run", "--local", "--cores", "1", "--", "sh", "-c",
                f': > {ready}; exec sleep 60', stdout=subprocess.DEVNULL)
    until(lambda: os.path.exists(ready))
    time.sleep(0.1)    # let sh exec sleep; either way SIGTERM ends it
    p.send_signal(signal.SIGTERM)
    check(p.wait(20) == 128 + signal.SIGTERM, "SIGTERM: berth run exits 143")
    check(until(lambda: d.status()["leases"] == []), "leases freed after signalled steps")


def t_killed_run_frees(d, tmp):
    n = cores_of(d)
    pidfile = os.path.join(tmp, "step.pid")
    p = d.popen("run", "--local", "--cores", str(n), "--label", "victim", "--", "sh", "-c",
                f"echo $$ > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; exec sleep 120",
                stdout=subprocess.DEVNULL)
    check(until(lambda: os.path.exists(pidfile)), "victim step started")
    step = int(open(pidfile).read())
    check([x["label"] for x in d.status()["leases"]] == ["victim"], "victim holds its lease")
    p.kill()
    p.wait()
    r = d.berth("acquire", "--cores", str(n), "--timeout", "10", "--json")
    check(r.returncode == 0, f"after kill -9 of berth run its cores are free: {r.stderr!r}")
    if r.returncode == 0:
        d.berth("release", json.loads(r.stdout)["lease"])

    def gone():
        try:
            os.kill(step, 0)
            return False
        except ProcessLookupError:
            return True
    check(until(gone), "the step of a killed berth run is ended too (its lease is gone)")


def t_waiting_served(d, tmp):
    n = cores_of(d)
    log, go, started = (os.path.join(tmp, x) for x in ("order.log", "go", "a.started"))
    a = d.popen("run", "--local", "--cores", str(n), "--label", "first", "--", "sh", "-c",
                f"echo first >> {log}; : > {started}; while [ ! -e {go} ]; do sleep 0.02; done; "
                f"echo first-end >> {log}")
    check(until(lambda: os.path.exists(started)), "first step started")
    b = d.popen("run", "--local", "--cores", "1", "--label", "waiter", "--", "sh", "-c",
                f"echo waiter >> {log}")
    st = until(lambda: (lambda s: s if s and s["queue"] else None)(d.status()))
    check(st and [q["label"] for q in st["queue"]] == ["waiter"], f"waiter queued: {st and st['queue']}")
    r = d.berth("status")
    check(r.returncode == 0 and re.search(r"^WAITING .*\n1 +waiter ", r.stdout, re.M),
          f"status table shows the waiting request: {r.stdout}")
    check(re.search(r"^\S+ +%d/%d " % (n, n), r.stdout, re.M) and "first (%d)" % n in r.stdout,
          f"status table shows the node full, held by 'first': {r.stdout}")
    check(re.search(r"^L\d+ +first +1 +%d " % n, r.stdout, re.M), f"status lease row: {r.stdout}")
    open(go, "w").close()
    check(a.wait(30) == 0 and b.wait(30) == 0, "both steps succeed")
    check(open(log).read().split() == ["first", "first-end", "waiter"],
          f"the waiter ran once the first released: {open(log).read().split()}")


def raw_request(d, line):
    s = socket.socket(socket.AF_UNIX)
    s.connect(d.sock)
    s.sendall(line.encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    return json.loads(buf)


def t_wait_progress(d, tmp):
    """While berth run -v waits it says where it stands in the queue, why,
    when it could start by the stated durations, and a cut by --min-*; a line
    only when that changes. Without -v and without a terminal, nothing."""
    n = cores_of(d)
    held = d.berth("acquire", "--cores", str(n), "--duration", "600", "--label", "holder").stdout.strip()
    errs = [os.path.join(tmp, f"wait{i}.err") for i in range(3)]
    asks = [("-v", "--cores", "1", "--label", "first"),
            ("-v", "--cores", str(n * 4), "--min-cores", "1", "--label", "second"),
            ("--cores", "1", "--label", "quiet")]
    runs = []
    for i, a in enumerate(asks):
        runs.append(d.popen("run", "--local", *a, "--", "true", stderr=open(errs[i], "w")))
        check(until(lambda: len((d.status() or {}).get("queue", [])) == i + 1),
              f"request {i + 1} waits, in order")
    said = lambda i, *words: all(w in open(errs[i]).read() for w in words)
    check(until(lambda: said(0, "#1 of 3 in the queue for 1 core", "could start in ")),
          f"-v: place, needs and estimate: {open(errs[0]).read()!r}")
    check(until(lambda: said(1, "#2 of 3 in the queue", f"cut by --min-* from {n * 4} cores")),
          f"-v: the second's place and its cut: {open(errs[1]).read()!r}")
    check(re.search(r"could start in (\d+m\d+s|\d+s|9m\d+s|10m)", open(errs[0]).read()),
          f"the estimate is the holder's duration: {open(errs[0]).read()!r}")
    # a waiting line is not repeated while nothing changes (no terminal)
    time.sleep(2.5)
    lines = [x for x in open(errs[0]).read().splitlines() if "in the queue" in x]
    check(len(lines) == 1, f"one line while nothing changed: {lines}")
    # the queue's reply for it, and the cheap form it uses
    q = raw_request(d, '{"op": "status", "id": 1, "queue_only": true}')
    check(q.get("ok") and q["allocation"] == {} and q["leases"] == [] and len(q["queue"]) == 3,
          f"queue_only leaves out the allocation and the leases: {str(q)[:300]}")
    e = q["queue"][1]
    check(e["cores"] == n and e["gpus"] == 0 and e["start_in_s"] is not None
          and 0 < e["start_in_s"] <= 600, f"queue entry figures: {e}")
    r = raw_request(d, '{"op": "status", "id": 2, "queue_only": 1}')
    check(r.get("ok") is False and r["error"]["code"] == "invalid_request"
          and "queue_only" in r["error"]["message"], f"queue_only decoded strictly: {r}")
    # the progress poll's own form: one process's entries only (berth run -v asks it)
    mine = raw_request(d, '{"op": "status", "id": 3, "pid": %d}' % runs[1].pid)
    ref = [dict(x, waited_s=None, start_in_s=None) for x in q["queue"] if x["pid"] == runs[1].pid]
    check(mine.get("ok") and mine["allocation"] == {} and mine["leases"] == []
          and [dict(x, waited_s=None, start_in_s=None) for x in mine["queue"]] == ref and len(ref) == 1
          and mine["daemon"]["waiting"] == 3,
          f"status of a pid: that process's entry alone, the whole queue counted: {str(mine)[:400]}")
    none = raw_request(d, '{"op": "status", "id": 4, "pid": %d}' % os.getpid())
    check(none.get("ok") and none["queue"] == [], f"a pid with nothing waiting: an empty queue: {none}")
    r = raw_request(d, '{"op": "status", "id": 5, "pid": 0}')
    check(r.get("ok") is False and r["error"]["code"] == "invalid_request"
          and "pid" in r["error"]["message"] and "got 0" in r["error"]["message"], f"pid decoded strictly: {r}")
    d.berth("release", held)
    for p in runs:
        check(p.wait(30) == 0, "each waiter runs once the holder released")
    check(re.search(r"lease L\d+: \S+ \(cores [0-9,-]+\), 0 GPUs \(cut by --min-\* from "
                    rf"{n * 4} cores to {n}\)", open(errs[1]).read()),
          f"-v says the cut at the grant: {open(errs[1]).read()!r}")
    check(open(errs[2]).read() == "", f"no -v, no terminal: silent: {open(errs[2]).read()!r}")
    # a holder that stated no duration: no estimate
    held = d.berth("acquire", "--cores", str(n)).stdout.strip()
    p = d.popen("run", "-v", "--local", "--cores", "1", "--", "true", stderr=open(errs[0], "w"))
    check(until(lambda: said(0, "#1 of 1 in the queue")), f"waits: {open(errs[0]).read()!r}")
    check("could start" not in open(errs[0]).read(), f"no estimate without durations: {open(errs[0]).read()!r}")
    d.berth("release", held)
    check(p.wait(30) == 0, "and runs")
    # on a terminal, without -v: the line is drawn in place and cleared at the grant
    import pty
    held = d.berth("acquire", "--cores", str(n)).stdout.strip()
    mfd, sfd = pty.openpty()
    import fcntl
    import termios

    def controlling_terminal():
        # the terminal on stderr becomes its own, with berth run in the foreground
        os.setsid()
        fcntl.ioctl(2, termios.TIOCSCTTY, 0)
    p = d.popen("run", "--local", "--cores", "1", "--", "true", stderr=sfd,
                preexec_fn=controlling_terminal)
    os.close(sfd)
    out = b""

    def read_some():
        nonlocal out
        import select
        while select.select([mfd], [], [], 0.05)[0]:
            try:
                out += os.read(mfd, 4096)
            except OSError:
                return True
        return b"in the queue" in out
    check(until(read_some), f"a terminal shows the wait: {out!r}")
    d.berth("release", held)
    check(p.wait(30) == 0, "and runs")
    read_some()
    os.close(mfd)
    check(out.startswith(b"\r\x1b[Kberth run: waiting ") and out.endswith(b"\r\x1b[K"),
          f"drawn in place, cleared at the grant: {out!r}")


def t_status_json(d):
    lid = d.berth("acquire", "--cores", "1", "--label", "tabled").stdout.strip()
    st = d.status()
    check(st["version"] == 1 and [x["label"] for x in st["leases"]] == ["tabled"],
          f"status --json leases: {st['leases']}")
    r = d.berth("status")
    check(re.search(r"^NODE +CORES +GPUS +MEM MB +LEASES$", r.stdout, re.M), f"table header: {r.stdout}")
    check(re.search(rf"^{lid} +tabled +1 +1 ", r.stdout, re.M), f"lease row: {r.stdout}")
    check("nothing waiting" in r.stdout, f"empty queue said: {r.stdout}")
    d.berth("release", lid)


def t_shutdown(tmp):
    d = Daemon(tmp)
    try:
        ready = os.path.join(tmp, "holder.ready")
        p = d.popen("run", "--local", "--cores", "1", "--", "sh", "-c",
                    f": > {ready}; exec sleep 60", stdout=subprocess.DEVNULL)
        until(lambda: os.path.exists(ready))
        r = d.berth("shutdown", "--timeout", "0.5")
        check(r.returncode == 1 and "has not finished after 0.5 s" in r.stderr,
              f"drain with a lease held times out, saying so: {r.returncode} {r.stderr!r}")
        r = d.berth("acquire", "--cores", "1")
        check(r.returncode == 125 and "shutting_down" in r.stderr,
              f"draining refuses: {r.returncode} {r.stderr!r}")
        r = d.berth("run", "--local", "--cores", "1", "--", "true")
        check(r.returncode == 125 and "shutting_down" in r.stderr,
              f"draining refuses berth run, 125: {r.returncode} {r.stderr!r}")
        # a second client waits for the drain to finish
        w = d.popen("shutdown", "--timeout", "30", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # connected: the holder, the waiting shutdown, and this status
        until(lambda: (d.status() or {}).get("daemon", {}).get("connections", 0) >= 3)
        p.terminate()
        p.wait(20)
        out, err = w.communicate(timeout=40)
        check(w.returncode == 0 and "has stopped" in out, f"shutdown: {w.returncode} {err!r}")
        check(not os.path.exists(d.sock), "socket removed when shutdown returns")
        check(until(lambda: d.p.poll() is not None, 10), "berthd exited")
    finally:
        d.stop()
    d = Daemon(tmp)
    try:
        d.berth("acquire", "--cores", "1")
        r = d.berth("shutdown", "--force")
        check(r.returncode == 0 and not os.path.exists(d.sock),
              f"shutdown --force with a detached lease: {r.returncode} {r.stderr!r}")
        r = d.berth("status")
        check(r.returncode == 1 and "no berthd socket" in r.stderr, f"status after shutdown: {r.stderr!r}")
        r = d.berth("run", "--local", "--cores", "1", "--", "true")
        check(r.returncode == 125 and "no berthd socket" in r.stderr,
              f"berth run without a daemon: 125: {r.returncode} {r.stderr!r}")
    finally:
        d.stop()


def t_login_node(tmp):
    """A Slurm machine outside a job is a login node: the status header says
    what the JSON says (no launcher placement), and the refusal of a launched
    step names the options that work."""
    d = Daemon(tmp, ["--machine", "pm-cpu"])
    try:
        a = d.status()["allocation"]
        check(a["system"] == "login" and a["placement_support"] == "NONE",
              f"pm-cpu outside a job: {a['system']} {a['placement_support']}")
        r = d.berth("status")
        check("(login, no launcher placement: local steps only, bound by CPU affinity)"
              in r.stdout.splitlines()[0] and "launcher binding" not in r.stdout,
              f"the header agrees with placement_support NONE: {r.stdout.splitlines()[:1]}")
        r = d.berth("run", "-n", "1", "--", "true")
        check(r.returncode == 125 and "run it with --local, or take a lease with berth acquire"
              in r.stderr and "argv" not in r.stderr, f"a launched step on a login node: {r.stderr!r}")
        r = d.berth("run", "--local", "--cores", "1", "--", "true")
        check(r.returncode == 0, f"and --local works there: {r.returncode} {r.stderr!r}")
    finally:
        d.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="berth-client-test-")
    d = Daemon(tmp)
    try:
        t_acquire_release(d)
        t_env(d)
        t_busy_timeout_unsatisfiable(d)
        t_refusal_hints(d)
        t_run_status(d)
        t_run_env_affinity(d)
        t_run_launch(d, tmp)
        t_verify(d)
        t_signals(d, tmp)
        t_killed_run_frees(d, tmp)
        t_waiting_served(d, tmp)
        t_wait_progress(d, tmp)
        t_status_json(d)
        check(d.p.poll() is None, "berthd still serving after all that")
    finally:
        d.stop()
    t_shutdown(tmp)
    t_login_node(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


main()
