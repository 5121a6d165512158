#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A step's cores are free only once the step is gone (issue 23), on the
localhost default with a real berthd, for each way people stop a step:
SIGTERM, SIGINT and SIGKILL to `berth run`, a step that ignores SIGTERM
(SIGKILL after the grace), a second SIGTERM (no more grace), --time-limit,
a Python `lease.run(timeout=, capture_output=True)` and a cancelled asyncio
`lease.run`. Every step has a child in its process group and one that left
it (setsid), both a copy of sleep under a name of this run, so that what
still runs is counted from /proc. The verdict of each: a request for every
core is granted only once no process of the step runs. Also: the exit
status berth run gives (the step's own; 128+N when it died of signal N),
and the outcome the release records (status's 'failed', with 'stopped').

No timing is asserted but bounds a slow machine only stays inside of: the
grace is a lower bound on how long the cores stay held, and "at once"
means well before a grace of 300 s.

usage: BERTHD=build/daemon/berthd BERTH=build/client/berth test_stop.py
"""
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "contrib", "python"))
from harness import Checks, Daemon, wait_until  # noqa: E402

import berth  # noqa: E402
import berth.aio  # noqa: E402

t = Checks()
BERTH = os.environ.get("BERTH", "")
MARK = f"stopmk{os.getpid()}"


def marks():
    """pids of the step's marker processes still running (zombies count
    as gone: they run nothing)."""
    out = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat") as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        state = st[st.rindex(")") + 2:][:1]
        if comm == MARK and state != "Z":
            out.append(int(e))
    return out


def kill_marks():
    for pid in marks():
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    wait_until(lambda: not marks(), 30)


class Setup:
    def __init__(self, tmp):
        self.tmp = tmp
        self.mark = os.path.join(tmp, MARK)
        shutil.copy(shutil.which("sleep"), self.mark)
        self.d = Daemon(env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp},
                        machine=None).start()
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SLURM_", "PBS_", "BERTH_"))}
        self.env["BERTH_SOCKET"] = self.d.sock
        self.env["BERTH"] = BERTH
        os.environ["BERTH_SOCKET"] = self.d.sock
        os.environ["BERTH"] = BERTH
        st = self.status()
        self.cores = st["allocation"]["totals"]["cores"]

    def status(self):
        r = subprocess.run([BERTH, "status", "--json"], env=self.env, capture_output=True,
                           text=True, timeout=60)
        return json.loads(r.stdout)

    def step(self, secs=300, ready=None, trap=""):
        """sh with a child in its group and one that left it."""
        touch = f": > '{ready}'; " if ready else ""
        return (f"{trap}'{self.mark}' {secs} & setsid '{self.mark}' {secs} & "
                f"{touch}while :; do wait; done")

    def run(self, *args, step, **kw):
        return subprocess.Popen([BERTH, "run", "--local", "--cores", str(self.cores), *args,
                                 "--", "sh", "-c", step], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)

    def started(self, ready):
        return wait_until(lambda: os.path.exists(ready) and len(marks()) == 2, 30)

    def verdict(self, what, since=None, at_least=0.0):
        """A request for every core, and what of the step runs once it is
        granted; at_least: seconds after since before which it must not be."""
        a = subprocess.Popen([BERTH, "acquire", "--cores", str(self.cores), "--label", "after",
                              "--json"], env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            out, err = a.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            a.kill()
            out, err = a.communicate()
        granted_at = time.monotonic()
        left = marks()
        t.check(a.returncode == 0, f"{what}: every core is granted again", err)
        t.check(not left, f"{what}: no process of the step runs once its cores are granted "
                "again", f"still running: {left}")
        if since is not None and at_least:
            t.check(granted_at - since >= at_least, f"{what}: the cores stay held for the "
                    f"grace ({at_least:g} s)", f"granted {granted_at - since:.2f} s after")
        try:
            lid = json.loads(out)["lease"]
            subprocess.run([BERTH, "release", lid], env=self.env, capture_output=True,
                           timeout=60)
        except (ValueError, KeyError):
            pass
        kill_marks()

    def failed(self, label):
        """The outcome status's 'failed' keeps for label."""
        for f in self.status().get("failed", {}).get("recent", []):
            if f.get("label") == label:
                return f.get("outcome") or {}
        return None


def t_signals(s):
    for sig, rc in (("TERM", 143), ("INT", 130), ("HUP", 129)):
        ready = os.path.join(s.tmp, f"ready.{sig}")
        p = s.run("--label", f"sig{sig}", step=s.step(ready=ready))
        t.check(s.started(ready), f"SIG{sig}: the step and both children started")
        p.send_signal(getattr(__import__("signal"), f"SIG{sig}"))
        got = p.wait(120)
        t.check(got == rc, f"SIG{sig} to berth run: it exits {rc}, the step having died of it",
                f"rc {got}: {p.stderr.read()[-300:]!r}")
        s.verdict(f"SIG{sig} to berth run")
        o = s.failed(f"sig{sig}")
        t.check(o is not None and o.get("stopped") == "signal" and o.get("status") == rc,
                f"SIG{sig}: the release says the step was stopped by a signal", repr(o))


def t_sigkill(s):
    ready = os.path.join(s.tmp, "ready.kill")
    p = s.run("--label", "sigkill", step=s.step(secs=300, ready=ready))
    t.check(s.started(ready), "SIGKILL: the step and both children started")
    p.kill()
    p.wait()
    # berth run is gone at once; its supervisor stops the step, and the
    # cores are its own until nothing of it runs
    s.verdict("SIGKILL to berth run")


def t_grace(s):
    ready = os.path.join(s.tmp, "ready.grace")
    # the shell and both children ignore SIGTERM: only SIGKILL ends them
    p = s.run("--grace", "2", "--label", "stubborn",
              step=s.step(ready=ready, trap="trap '' TERM; "))
    t.check(s.started(ready), "grace: the step started")
    t0 = time.monotonic()
    p.terminate()
    s.verdict("a step that ignores SIGTERM", since=t0, at_least=2.0)
    got = p.wait(120)
    t.check(got == 137, "a step that ignored SIGTERM is killed after the grace: berth run "
            "exits 137", f"rc {got}")


def t_second_signal(s):
    ready = os.path.join(s.tmp, "ready.second")
    p = s.run("--grace", "300", "--label", "second",
              step=s.step(ready=ready, trap="trap '' TERM INT; "))
    t.check(s.started(ready), "second signal: the step started")
    p.terminate()
    time.sleep(0.5)          # not a handshake: the first one only has to come first
    p.send_signal(2)
    try:
        got = p.wait(120)
    except subprocess.TimeoutExpired:
        got = None
    t.check(got == 137, "a second stopping signal ends the 300 s grace at once (SIGKILL): "
            "berth run exits 137", f"rc {got}")
    s.verdict("a second stopping signal")


def t_time_limit(s):
    p = s.run("--time-limit", "1", "--grace", "5", "--label", "limited", step=s.step())
    try:
        got = p.wait(120)
    except subprocess.TimeoutExpired:
        p.kill()
        got = None
    t.check(got == 143, "--time-limit 1: the step is stopped with SIGTERM, berth run exits 143",
            f"rc {got}")
    t.check(not marks(), "--time-limit: nothing of the step runs once berth run returned",
            str(marks()))
    o = s.failed("limited")
    t.check(o is not None and o.get("stopped") == "time-limit",
            "--time-limit: the release says the step was stopped by its time limit", repr(o))
    kill_marks()


def t_exit_status(s):
    ready = os.path.join(s.tmp, "ready.exit")
    p = s.run("--label", "trapper",
              step=f"trap 'exit 5' TERM; : > '{ready}'; while :; do sleep 0.05; done")
    wait_until(lambda: os.path.exists(ready), 30)
    p.terminate()
    got = p.wait(120)
    t.check(got == 5, "a step that catches SIGTERM and exits 5: berth run exits 5", f"rc {got}")


def t_python_timeout(s):
    c = berth.connect(s.d.sock)
    took = None
    err = None
    with c.acquire(cores=s.cores, local=True, label="pytimeout") as lease:
        t0 = time.monotonic()
        try:
            lease.run(["sh", "-c", "echo started; " + s.step()], timeout=1,
                      capture_output=True, text=True, grace=30)
        except subprocess.TimeoutExpired as e:
            err = e
        took = time.monotonic() - t0
    t.check(err is not None, "lease.run(timeout=1): TimeoutExpired")
    # before: 300 s (communicate waited for the grandchild holding the pipes)
    t.check(took is not None and took < 30, "TimeoutExpired is raised at the timeout plus at "
            "most the grace, with the pipes held open by a child that left the group",
            f"{took:.1f} s")
    out = err.output if err is not None else None
    t.check(out in (b"started\n", "started\n"), "TimeoutExpired has the output so far",
            repr(out))
    s.verdict("lease.run(timeout=1) and its with block")
    o = s.failed("pytimeout")
    t.check(o is not None and o.get("stopped") == "timeout",
            "the Python release says the step was stopped by its timeout", repr(o))
    c.close()


def t_python_time_limit(s):
    with berth.acquire(s.d.sock, cores=1, local=True, label="pylimit",
                       time_limit=1) as lease:
        r = lease.run(["sh", "-c", s.step()], grace=5)
    t.check(r.returncode == 143, "acquire(time_limit=1): run() stops the step (143)",
            f"rc {r.returncode}")
    t.check(not marks(), "acquire(time_limit=): nothing of the step runs after run()",
            str(marks()))
    o = s.failed("pylimit")
    t.check(o is not None and o.get("stopped") == "time-limit",
            "acquire(time_limit=): the release says so", repr(o))
    kill_marks()


def t_aio_cancel(s):
    async def main():
        lease = await berth.aio.acquire(s.d.sock, cores=s.cores, local=True, label="aiocancel")
        task = asyncio.ensure_future(lease.run(["sh", "-c", s.step()], grace=30))
        ok = await asyncio.get_running_loop().run_in_executor(
            None, lambda: wait_until(lambda: len(marks()) == 2, 30))
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        left = marks()
        await lease.release()
        return ok, left
    ok, left = asyncio.run(main())
    t.check(ok, "asyncio: the step started")
    t.check(not left, "asyncio: a cancelled lease.run stops its step before CancelledError "
            "propagates", str(left))
    s.verdict("an asyncio lease.run cancelled, then released")
    o = s.failed("aiocancel")
    t.check(o is not None and o.get("stopped") == "cancel",
            "asyncio: the release says the step was cancelled", repr(o))


def main():
    tmp = tempfile.mkdtemp(prefix="berth-stop-")
    s = Setup(tmp)
    try:
        for fn in (t_signals, t_sigkill, t_grace, t_second_signal, t_time_limit,
                   t_exit_status, t_python_timeout, t_python_time_limit, t_aio_cancel):
            try:
                fn(s)
            except Exception as e:  # noqa: BLE001
                import traceback
                traceback.print_exc()
                t.check(False, f"{fn.__name__} raised no exception", repr(e))
            kill_marks()
    finally:
        kill_marks()
        s.d.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
