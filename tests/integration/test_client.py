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
    def __init__(self, tmp):
        self.dir = tempfile.mkdtemp(dir=tmp)
        self.sock = os.path.join(self.dir, "b.sock")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SLURM_", "PBS_", "BERTH_"))}
        self.env["BERTH_SOCKET"] = self.sock
        self.err = open(os.path.join(self.dir, "d.err"), "w")
        self.p = subprocess.Popen([BERTHD, "--socket", self.sock, "--foreground",
                                   "--state-dir", self.dir], env=self.env,
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
    n = cores_of(d)
    lid = d.berth("acquire", "--cores", str(n)).stdout.strip()
    r = d.berth("acquire", "--cores", "1", "--no-wait")
    check(r.returncode == 1 and "berth acquire: busy:" in r.stderr, f"--no-wait: {r.stderr!r}")
    r = d.berth("acquire", "--cores", "1", "--timeout", "0.3")
    check(r.returncode == 1 and "berth acquire: timeout:" in r.stderr,
          f"--timeout expiry: rc {r.returncode} {r.stderr!r}")
    r = d.berth("run", "--local", "--cores", "1", "--timeout", "0.3", "--", "true")
    check(r.returncode == 1 and "berth run: timeout:" in r.stderr,
          f"run --timeout expiry: rc {r.returncode} {r.stderr!r}")
    d.berth("release", lid)
    r = d.berth("acquire", "--cores", str(n * 1000))
    check(r.returncode == 1 and "berth acquire: unsatisfiable:" in r.stderr,
          f"unsatisfiable: {r.stderr!r}")
    check(d.status()["leases"] == [], "nothing held after refusals")


def t_run_status(d):
    r = d.berth("run", "--local", "--cores", "1", "--", "sh", "-c", "exit 7")
    check(r.returncode == 7, f"run exit 7: {r.returncode} {r.stderr}")
    r = d.berth("run", "--local", "--cores", "1", "--", "sh", "-c", "kill -KILL $$")
    check(r.returncode == 128 + 9, f"run killed by SIGKILL: {r.returncode}")
    r = d.berth("run", "--local", "--cores", "1", "--", "/nonexistent/prog")
    check(r.returncode == 127 and "cannot run '/nonexistent/prog'" in r.stderr,
          f"run of a missing program: {r.returncode} {r.stderr!r}")
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
        check(r.returncode == 1 and "shutting_down" in r.stderr, f"draining refuses: {r.stderr!r}")
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
    finally:
        d.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="berth-client-test-")
    d = Daemon(tmp)
    try:
        t_acquire_release(d)
        t_env(d)
        t_busy_timeout_unsatisfiable(d)
        t_run_status(d)
        t_run_env_affinity(d)
        t_run_launch(d, tmp)
        t_verify(d)
        t_signals(d, tmp)
        t_killed_run_frees(d, tmp)
        t_waiting_served(d, tmp)
        t_status_json(d)
        check(d.p.poll() is None, "berthd still serving after all that")
    finally:
        d.stop()
    t_shutdown(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


main()
