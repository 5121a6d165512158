#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python client (contrib/python/berth) against a real berthd: connect
from BERTH_SOCKET or a path, acquire as a context manager (released on exit,
and when the process dies), render, resources, status, watch, one exception
class per stable error code; local steps run under the placed affinity; the
Polaris-shaped example driver runs its suite on the localhost default.

usage: BERTHD=build/daemon/berthd test_python_client.py
"""
import ast
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(TOP, "contrib", "python")
EXAMPLE = os.path.join(TOP, "contrib", "examples", "polaris_suite.py")
sys.path.insert(0, HERE)
sys.path.insert(0, PYDIR)
import berth  # noqa: E402
from harness import CORES_PER_NODE, NODES, Checks, Daemon, slurm_env, status, wait_until, with_srun  # noqa: E402

ALL = CORES_PER_NODE * len(NODES)
t = Checks()


def raises(cls, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except berth.BerthError as e:
        return e if isinstance(e, cls) else e
    return None


def test_package():
    """Standard library only, Python 3.9 syntax, typed."""
    pkg = os.path.join(PYDIR, "berth")
    t.check(os.path.exists(os.path.join(pkg, "py.typed")), "the package ships py.typed")
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name)) as f:
                src = f.read()
            try:
                tree = ast.parse(src, feature_version=(3, 9))
                ok = True
            except SyntaxError as e:
                ok, tree = False, None
                t.check(False, f"{name} parses as Python 3.9", str(e))
            if ok:
                t.check(True, f"{name} parses as Python 3.9")
                mods = {a.name.split(".")[0] for n in ast.walk(tree)
                        if isinstance(n, ast.Import) for a in n.names}
                mods |= {n.module.split(".")[0] for n in ast.walk(tree)
                         if isinstance(n, ast.ImportFrom) and n.module and not n.level}
                foreign = {m for m in mods if m not in sys.stdlib_module_names}
                t.check(not foreign, f"{name} imports the standard library only", str(foreign))
    t.check(all(issubclass(c, berth.BerthError) for c in berth.ERRORS.values())
            and set(berth.ERRORS) == {"invalid_request", "unsatisfiable", "timeout",
                                      "not_found", "forbidden", "too_large", "shutting_down",
                                      "unsupported_version", "busy", "internal"},
            "one BerthError class per stable code", str(sorted(berth.ERRORS)))
    e = berth.error_from_reply({"id": 1, "ok": False,
                                "error": {"code": "internal", "message": "out of memory"}})
    t.check(isinstance(e, berth.Internal) and e.code == "internal"
            and e.message == "out of memory" and str(e) == "out of memory (internal)",
            "an error carries the code and message", repr(e))
    e = berth.error_from_reply({"id": 1, "ok": False, "error": {"code": "new_one",
                                                                "message": "m"}})
    t.check(type(e) is berth.BerthError and e.code == "new_one", "an unknown code is a BerthError")


def test_default_path():
    """The default socket, by the rule of protocol/socket_path.c and libberth."""
    uid = os.getuid()
    p = berth.default_socket_path
    t.check(p({"XDG_RUNTIME_DIR": "/run/user/7", "SLURM_JOB_ID": "99"}, uid)
            == "/run/user/7/berth/99.sock", "XDG_RUNTIME_DIR/berth/JOB.sock")
    t.check(p({"PBS_JOBID": "12.pbs"}, uid) == f"/tmp/berth-{uid}/12.pbs.sock",
            "no XDG_RUNTIME_DIR: /tmp/berth-UID; PBS_JOBID when there is no Slurm job")
    t.check(p({"SLURM_JOB_ID": "", "PBS_JOBID": "5"}, uid) == f"/tmp/berth-{uid}/5.sock",
            "an empty SLURM_JOB_ID counts as unset")
    t.check(p({"XDG_RUNTIME_DIR": "relative", "SLURM_JOB_ID": "a/b"}, uid)
            == f"/tmp/berth-{uid}/local.sock", "a relative XDG dir and a job with '/' are not used")
    e = raises(berth.ConnectFailed, p, {"XDG_RUNTIME_DIR": "/" + "x" * 120}, uid)
    t.check(isinstance(e, berth.ConnectFailed) and "too long" in e.message,
            "a default path over the Unix limit: ConnectFailed saying so", repr(e))


class DefaultSocketDaemon(Daemon):
    """berthd left to choose its own socket (no --socket)."""

    def command(self):
        cmd = super().command()
        i = cmd.index("--socket")
        return cmd[:i] + cmd[i + 2:]


def test_default_socket():
    d = DefaultSocketDaemon()
    xdg = os.path.join(d.dir, "run")
    os.mkdir(xdg, 0o700)
    d.env = slurm_env(d.dir, extra={"XDG_RUNTIME_DIR": xdg})
    d.sock = os.path.join(xdg, "berth", d.env["SLURM_JOB_ID"] + ".sock")
    saved = {k: os.environ.get(k) for k in ("BERTH_SOCKET", "XDG_RUNTIME_DIR", "SLURM_JOB_ID",
                                            "PBS_JOBID")}
    try:
        d.start()
        for k in saved:
            os.environ.pop(k, None)
        os.environ.update(XDG_RUNTIME_DIR=xdg, SLURM_JOB_ID=d.env["SLURM_JOB_ID"])
        with berth.connect() as c:
            t.check(c.path == d.sock and c.hello().get("version") == 1,
                    "BERTH_SOCKET unset: connect() finds the socket berthd chose by default",
                    c.path)
        with berth.acquire(cores=1, label="found") as lease:
            t.check(lease.label == "found", "and so does berth.acquire()")
        d.stop()
        e = raises(berth.ConnectFailed, berth.connect)
        t.check(isinstance(e, berth.ConnectFailed) and d.sock in e.message
                and "BERTH_SOCKET is not set" in e.message,
                "no berthd there: ConnectFailed names the default path and says BERTH_SOCKET "
                "is not set", repr(e))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        d.cleanup()


def test_connect(d):
    old = os.environ.pop("BERTH_SOCKET", None)
    e = raises(berth.ConnectFailed, berth.connect, d.sock + ".none")
    t.check(isinstance(e, berth.ConnectFailed) and "no berthd socket at " + d.sock + ".none"
            in e.message, "a socket nobody serves: ConnectFailed names it", repr(e))
    os.environ["BERTH_SOCKET"] = d.sock
    with berth.connect() as c:
        h = c.hello()
        t.check(h.get("version") == 1 and c.path == d.sock, "connect() uses BERTH_SOCKET", str(h))
    if old is None:
        del os.environ["BERTH_SOCKET"]
    else:
        os.environ["BERTH_SOCKET"] = old


def test_acquire(d):
    c = berth.connect(d.sock)
    with c.acquire(ntasks=16, cpus_per_task=2, memory=8000, label="ocean",
                   argv=["./model", "--case", "a b"]) as lease:
        t.check(lease.label == "ocean" and lease.placement.ncores == 32
                and lease.memory_cap == 8000 and lease.placement.gpus == 0,
                "acquire returns the lease with its placement", repr(lease))
        t.check(lease.launch is not None and lease.launch.argv[0] == "srun"
                and lease.launch.argv[-3:] == ["./model", "--case", "a b"],
                "with the rendered launch", str(lease.launch))
        t.check(lease.env.get("BERTH_LEASE") == lease.id and "BERTH_CORES" in lease.environ(),
                "and the step's environment", str(lease.env))
        t.check(lease.command() == lease.launch.argv, "command() is the rendered launch")
        held = [x["lease"] for x in status(d)["leases"]]
        t.check(held == [lease.id], "the lease is held while the block runs", str(held))
        res = c.resources(lease)
        t.check(res.get("lease") == lease.id and res["totals"]["cores"] == 32,
                "resources(lease) is the lease's view", str(res.get("totals")))
    t.check(lease.released and not status(d)["leases"], "leaving the block releases it")
    res = c.resources()
    t.check(res["totals"]["cores"] == ALL and len(res["nodes"]) == len(NODES),
            "resources() is the whole allocation", str(res.get("totals")))
    st = c.status()
    t.check(set(st) >= {"allocation", "leases", "queue", "daemon"}
            and "time_left_s" in st["allocation"], "status() has the ledger and the time left",
            str(sorted(st)))
    launch = c.render(berth.Placement([NODES[1]], [[0, 1, 2, 3]]), ["./a.out"], ntasks=4,
                      cpus_per_task=1, memory_cap=2000)
    t.check(launch.argv[0] == "srun" and "--mem=2000M" in launch.argv
            and launch.argv[-1] == "./a.out", "render() renders for a placement", str(launch))
    # Release by id, twice: the second is NotFound.
    lease = c.acquire(cores=4)
    c.release(lease.id)
    e = raises(berth.NotFound, c.release, lease.id)
    t.check(isinstance(e, berth.NotFound) and lease.id in e.message,
            "releasing twice raises NotFound", repr(e))
    # A lease that ended by itself is no error on leaving the block.
    with c.acquire(cores=1, detach=True, ttl=0.1) as lease:
        time.sleep(0.5)
    t.check(lease.released, "a lease gone by its ttl leaves the block quietly")
    # Module-level acquire: a connection of its own, closed on release.
    with berth.acquire(d.sock, cores=2, label="own") as lease:
        t.check(any(x["lease"] == lease.id for x in status(d)["leases"]),
                "berth.acquire() holds a lease on its own connection")
    t.check(lease._client.closed and not status(d)["leases"], "and closes it on release")
    e = None
    try:
        c.acquire(**{"corez": 3})
    except TypeError as ex:
        e = ex
    t.check(e is not None, "an unknown field is a TypeError before anything is sent")
    e = None
    try:
        berth.acquire(d.sock, **{"corez": 3})
    except TypeError as ex:
        e = ex
    t.check(e is not None and "corez" in str(e), "and so for berth.acquire()", repr(e))
    c.close()


def test_status_brief(d):
    """status(brief=N): the person's view, its sums those of the whole job;
    a brief berthd would refuse is a ValueError before anything is sent."""
    c = berth.connect(d.sock)
    try:
        held = [c.acquire(cores=n, label=f"brief{n}") for n in (4, 8, 16)]
        full = c.status()
        st = c.status(brief=2)
        t.check(st.get("brief") == 2 and set(st) >= {"allocation", "leases", "queue", "daemon"},
                "status(brief=2) answers the brief view, saying brief 2", str(sorted(st)))
        ids = [x["lease"] for x in st["leases"]]
        t.check(len(full["leases"]) == 3 and len(ids) <= 2
                and ids == [x.id for x in held[:2]],
                "with at most 2 leases (the oldest) while 3 are held",
                f"{ids} of {[x['lease'] for x in full['leases']]}")
        t.check(st["daemon"]["leases"] == 3 == full["daemon"]["leases"],
                "daemon.leases is the whole count", str(st["daemon"]))
        used = sum(n["cores_used"] for n in full["allocation"]["nodes"])
        tot = st["allocation"].get("totals", {})
        t.check(used == 28 and tot.get("cores_used") == used,
                "totals.cores_used is the sum of the whole status's nodes' cores_used",
                f"{tot.get('cores_used')} vs {used}")
        t.check(len(st["allocation"]["nodes"]) <= 2, "and at most 2 nodes are listed",
                str([n["name"] for n in st["allocation"]["nodes"]]))
        sent = []
        request = c.request
        c.request = lambda op, **fields: (sent.append(op), request(op, **fields))[1]
        for bad in (0, True):
            e = None
            try:
                c.status(brief=bad)
            except (ValueError, berth.BerthError) as ex:   # berthd's refusal: sent
                e = ex
            t.check(isinstance(e, ValueError) and f"brief {bad!r}" in str(e) and not sent,
                    f"status(brief={bad!r}): ValueError naming it, nothing sent",
                    f"{e!r}, sent {sent}")
        del c.request
        t.check(c.status(brief=1)["brief"] == 1, "and the connection serves on")
    finally:
        c.close()
    t.check(wait_until(lambda: not status(d)["leases"]), "nothing left held")


def fill_but(d, free):
    """Hold all but `free` cores of node 0 (a Client holding them)."""
    h = berth.connect(d.sock)
    h.acquire(ntasks=ALL - CORES_PER_NODE, cpus_per_task=1, label="fill")
    h.acquire(cores=CORES_PER_NODE - free, label="fill0")
    return h


def queue(d):
    return status(d)["queue"]


def test_close_from_thread(d):
    """close() from another thread ends a waiting acquire and a watch."""
    h = fill_but(d, 0)
    c = berth.connect(d.sock)
    out = []

    def waits():
        try:
            out.append(c.acquire(cores=2, label="waiting"))
        except BaseException as e:  # noqa: BLE001
            out.append(e)
    th = threading.Thread(target=waits)
    th.start()
    t.check(wait_until(lambda: [q["label"] for q in queue(d)] == ["waiting"]),
            "the acquire waits in the queue")
    c.close()
    th.join(30)
    t.check(not th.is_alive() and out and isinstance(out[0], berth.Cancelled),
            "close() from another thread: the waiting acquire raises Cancelled", repr(out))
    t.check(wait_until(lambda: not queue(d)), "and its request leaves berthd's queue")
    w = berth.connect(d.sock)
    seen = []
    started = threading.Event()

    def watches():
        started.set()
        for ev in w.watch():
            seen.append(ev)
    th = threading.Thread(target=watches)
    th.start()
    started.wait(10)
    t.check(wait_until(lambda: status(d)["daemon"]["connections"] >= 3),
            "a thread watches")
    w.close()
    th.join(30)
    t.check(not th.is_alive(), "close() from another thread ends the watch quietly")
    h.close()
    t.check(wait_until(lambda: not status(d)["leases"]), "nothing left held")


def test_timeouts(d):
    """connect(timeout=) bounds connecting only; reply_timeout loses nothing."""
    h = fill_but(d, 2)
    c = berth.connect(d.sock, timeout=1)
    mine = c.acquire(cores=1, label="mine")
    out = []
    th = threading.Thread(target=lambda: out.append(c.acquire(cores=2, label="later")))
    th.start()
    # the wait outlasts the connect timeout (berthd's own count, no clock here)
    t.check(wait_until(lambda: any(q["label"] == "later" and q["waited_s"] > 1.5
                                   for q in queue(d)), 30),
            "an acquire on connect(timeout=1) waits past 1 s", str(queue(d)))
    h.close()
    th.join(30)
    t.check(len(out) == 1 and out[0].label == "later",
            "and is granted when room is made (no ProtocolError)", repr(out))
    held = sorted(x["lease"] for x in status(d)["leases"])
    t.check(held == sorted([mine.id, out[0].id]), "the lease held before it is still held",
            str(held))
    slow = berth.connect(d.sock, reply_timeout=0.5)
    d.proc.send_signal(signal.SIGSTOP)
    try:
        e = raises(berth.ClientTimeout, slow.status)
    finally:
        d.proc.send_signal(signal.SIGCONT)
    t.check(isinstance(e, berth.ClientTimeout) and not isinstance(e, berth.ProtocolError)
            and "kept" in e.message, "no reply within reply_timeout: ClientTimeout", repr(e))
    st = slow.status()
    t.check(sorted(x["lease"] for x in st["leases"]) == held,
            "the late reply is dropped, the next request is answered, leases are kept",
            str(st["leases"]))
    slow.close()
    c.close()
    t.check(wait_until(lambda: not status(d)["leases"]), "nothing left held")


def test_process_death(d):
    code = ("import sys, time; sys.path.insert(0, %r); import berth; "
            "l = berth.acquire(%r, cores=8, label='doomed'); print(l.id, flush=True); "
            "time.sleep(60)" % (PYDIR, d.sock))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    lid = p.stdout.readline().strip()
    t.check(any(x["lease"] == lid for x in status(d)["leases"]), "a child process holds a lease",
            lid)
    p.kill()
    p.wait()
    p.stdout.close()
    end = time.time() + 10
    while time.time() < end and status(d)["leases"]:
        time.sleep(0.02)
    t.check(not status(d)["leases"], "killing the process frees its lease (the connection closed)")


def test_watch(d):
    events, ready = [], threading.Event()

    def run():
        w = berth.connect(d.sock)
        it = w.watch()
        ready.set()
        for ev in it:
            events.append(ev)
            if ev.kind == "released":
                break
        w.close()

    th = threading.Thread(target=run)
    th.start()
    ready.wait(10)
    time.sleep(0.2)
    with berth.connect(d.sock) as c:
        with c.acquire(cores=3, label="watched"):
            pass
    th.join(10)
    kinds = [(e.kind, e.label) for e in events]
    t.check(("granted", "watched") in kinds and ("released", "watched") in kinds,
            "watch() yields the granted and released events", str(kinds))
    t.check(all(isinstance(e.time, float) and e.time > 0 for e in events), "events carry times")
    hist = []
    for ev in berth.watch(d.sock, history=True):
        hist.append(ev.kind)
        if len(hist) >= 2:
            break
    t.check(hist[:2] == ["granted", "released"] or "granted" in hist,
            "watch(history=True) replays the log first", str(hist))


def test_errors(d):
    c = berth.connect(d.sock)
    e = raises(berth.Unsatisfiable, c.acquire, cores=ALL + 1, may_span_nodes=True,
               label="big")
    t.check(isinstance(e, berth.Unsatisfiable) and e.code == "unsatisfiable"
            and "big" in e.message, "a step larger than the allocation: Unsatisfiable", repr(e))
    e = raises(berth.InvalidRequest, c.request, "acquire", cores=-3)
    t.check(isinstance(e, berth.InvalidRequest) and "field 'cores'" in e.message,
            "a bad field: InvalidRequest naming it", repr(e))
    e = raises(berth.UnsupportedVersion, c.hello, 2)
    t.check(isinstance(e, berth.UnsupportedVersion), "hello(2): UnsupportedVersion", repr(e))
    held = c.acquire(ntasks=ALL, cpus_per_task=1, label="everything")
    e = raises(berth.Busy, c.acquire, cores=1, wait=False)
    t.check(isinstance(e, berth.Busy), "wait=False when full: Busy", repr(e))
    with berth.connect(d.sock) as other:
        e = raises(berth.WaitTimeout, other.acquire, cores=1, timeout=0.2, label="patient")
        t.check(isinstance(e, berth.WaitTimeout) and "patient" in e.message,
                "a wait that times out: WaitTimeout", repr(e))
        e = raises(berth.Forbidden, other.release, held.id)
        t.check(isinstance(e, berth.Forbidden), "another connection's lease: Forbidden", repr(e))
    held.release()
    big = berth.connect(d.sock, reconnect=0)
    e = raises(berth.TooLarge, big.request, "status", pad="x" * 70000)
    t.check(isinstance(e, berth.TooLarge), "a line over the limit: TooLarge", repr(e))
    e = raises(berth.ProtocolError, big.status)
    t.check(isinstance(e, berth.ProtocolError) and "closed the connection" in e.message,
            "then berthd closes the connection: ProtocolError (reconnect=0)", repr(e))
    big.close()
    again = berth.connect(d.sock)
    held = again.acquire(cores=2, label="on-a-closed-line")
    e = raises(berth.TooLarge, again.request, "status", pad="x" * 70000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        st = again.status()
    t.check("leases" in st and again.reconnects == 1,
            "by default the client connects again after berthd closed the connection",
            f"{again.reconnects} reconnects")
    t.check(held.lost and held.released and any(held.id in str(w.message) for w in caught),
            "and says that the lease held on the closed one ended (RuntimeWarning, .lost)",
            f"{held.lost} {[str(w.message) for w in caught]}")
    again.close()
    e = raises(berth.ConnectFailed, big.status)
    t.check(isinstance(e, berth.ConnectFailed), "a closed client: ConnectFailed", repr(e))
    c.close()


def test_deadline_and_shutdown():
    d = Daemon(env=None)
    d.env = slurm_env(d.dir, extra={"SLURM_JOB_END_TIME": str(int(time.time()) + 600)})
    d.start()
    try:
        c = berth.connect(d.sock)
        e = raises(berth.Unsatisfiable, c.acquire, cores=1, duration=3600, label="long")
        t.check(isinstance(e, berth.Unsatisfiable) and "past the end" in e.message,
                "duration: a step that outlasts the job is Unsatisfiable", repr(e))
        with c.acquire(cores=1, duration=60) as lease:
            t.check(lease.warning is None, "one that fits is granted without a warning")
        left = c.status()["allocation"]["time_left_s"]
        t.check(500 < left <= 600, "status() has the time left", str(left))
        held = c.acquire(cores=1)
        berth.connect(d.sock).shutdown()
        e = raises(berth.ShuttingDown, berth.acquire, d.sock, cores=1)
        t.check(isinstance(e, berth.ShuttingDown), "while draining: ShuttingDown", repr(e))
        held.release()
        c.close()
    finally:
        d.cleanup()
    d = Daemon(args=["--deadline-policy", "warn"])
    d.env = slurm_env(d.dir, extra={"SLURM_JOB_END_TIME": str(int(time.time()) + 600)})
    d.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with berth.acquire(d.sock, cores=1, duration=3600) as lease:
                pass
        t.check(lease.warning and "past the end" in lease.warning
                and any("past the end" in str(w.message) for w in caught),
                "under --deadline-policy warn: granted, with lease.warning and a RuntimeWarning",
                str(lease.warning))
    finally:
        d.cleanup()


def test_local_through_srun(d):
    """SCHEDULER (Slurm 22.05): a local step's command is its srun launch,
    with `berth placed` in front of the program when berth is on PATH."""
    c = berth.connect(d.sock)
    with c.acquire(local=True, cores=1, argv=["./analysis", "x"]) as lease:
        cmd = lease.command()
        t.check(cmd[:1] == ["srun"] and cmd[-2:] == ["./analysis", "x"] and "--exact" in cmd
                and cmd[cmd.index("-w") + 1] == lease.placement.nodes[0],
                "a local step where Slurm places every step runs through srun on berthd's node",
                str(cmd))
        placed = [i for i, w in enumerate(cmd) if w.endswith("berth") and cmd[i + 1:i + 3] == ["placed", "--"]]
        t.check(bool(placed) == bool(shutil.which("berth")),
                "with berth placed before the program exactly when berth is on PATH", str(cmd))
        other = lease.command(["./other"])
        t.check(other[:1] == ["srun"] and other[-1:] == ["./other"] and "./analysis" not in other,
                "another program given to it runs in the same launch", str(other))
    c.close()


def test_localhost():
    d = Daemon(env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"},
               machine=None).start()
    try:
        c = berth.connect(d.sock)
        probe = [sys.executable, "-c",
                 "import os; print(sorted(os.sched_getaffinity(0)))"]
        with c.acquire(local=True, cores=1, argv=probe, label="probe") as lease:
            out = lease.run(stdout=subprocess.PIPE, text=True, check=True).stdout
            t.check(out.strip() == str(sorted(lease.cpus())),
                    "a local step runs under the placed affinity", out + " vs " +
                    str(sorted(lease.cpus())))
            echo = [sys.executable, "-c", "import os, sys; print(sys.stdin.read().upper(), "
                    "os.environ['BERTH_LEASE'], os.environ.get('EXTRA'), os.getcwd())"]
            p = lease.run(echo, input="abc", capture_output=True, text=True,
                          env={"EXTRA": "x", "PATH": os.environ.get("PATH", "")}, cwd="/")
            t.check(p.returncode == 0 and p.stdout.split() == ["ABC", lease.id, "x", "/"]
                    and p.stderr == "",
                    "lease.run takes input=, capture_output=, text=, env= (a base), cwd=",
                    repr(p))
            e = None
            try:
                lease.run([sys.executable, "-c", "import sys; sys.exit(4)"], check=True,
                          capture_output=True)
            except subprocess.CalledProcessError as ex:
                e = ex
            t.check(e is not None and e.returncode == 4, "check=True: CalledProcessError",
                    repr(e))
            e = None
            try:
                lease.run([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5)
            except subprocess.TimeoutExpired as ex:
                e = ex
            t.check(e is not None, "timeout=: TimeoutExpired, the step killed", repr(e))
            t.check(os.sched_getaffinity(0) == set(os.sched_getaffinity(0)),
                    "and this process's affinity is left as it was")
        lease = c.acquire(ntasks=1, argv=["prog"])
        t.check(lease.launch is not None and "prog" in lease.launch.argv,
                "a launched step on localhost has its rendered launch", str(lease.launch))
        lease.release()
        c.close()
        env = dict(os.environ, BERTH_SOCKET=d.sock, PYTHONPATH=PYDIR)
        p = subprocess.run([sys.executable, EXAMPLE, "--quick"], env=env, capture_output=True,
                           text=True, timeout=240)
        t.check(p.returncode == 0, "the Polaris-shaped example runs its suite", p.stdout[-2000:]
                + p.stderr[-2000:])
        out = p.stdout
        t.check("steps" in out and "wall time" in out and "mean cores busy" in out,
                "and prints the summary", out[-800:])
        t.check("no MPI launcher" in out or "launcher" in out,
                "and says how launched steps were run", out[-800:])
        t.check(not status(d)["leases"], "leaving nothing held")
    finally:
        d.cleanup()


test_package()
test_default_path()
test_default_socket()
main = with_srun(Daemon()).start()
try:
    test_connect(main)
    test_acquire(main)
    test_status_brief(main)
    test_process_death(main)
    test_watch(main)
    test_errors(main)
    test_close_from_thread(main)
    test_timeouts(main)
    test_local_through_srun(main)
finally:
    main.cleanup()
test_deadline_and_shutdown()
test_localhost()
t.finish()
