#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The allocation's end: berthd learns it from SLURM_JOB_END_TIME, else asks
squeue once, lazily (never at start, at most once per daemon); status shows
the time left; a request that states a duration running past the end is
refused (or, with --deadline-policy warn, granted with a warning), also when
it is granted after waiting. A fake squeue on PATH counts its calls. The
query runs off the event loop: while it runs, other clients are served, and
the requests that need its answer wait for it.

usage: BERTHD=build/daemon/berthd test_deadline.py
"""
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (BERTHD, CORES_PER_NODE, NODES, Checks, Daemon, slurm_env,  # noqa: E402
                     status, wait_until)

BERTH = os.path.join(os.path.dirname(os.path.dirname(BERTHD)), "client", "berth")
ALL = CORES_PER_NODE * len(NODES)
t = Checks()

FAKE_SQUEUE = """#!/bin/sh
echo "$* fmt=$SLURM_TIME_FORMAT" >> "{dir}/calls"
case "$*" in
  *%e*) [ -f "{dir}/fail" ] && {{ echo "squeue: error: Unable to contact slurm controller" >&2; exit 1; }}
        cat "{dir}/end";;
  *) echo RUNNING;;
esac
"""

# Asked for the end, it says it has started, then answers only once the test
# lets it (the file "go"; at most 6 s), and says when it has ended.
SLOW_SQUEUE = """#!/bin/sh
echo "$* fmt=$SLURM_TIME_FORMAT" >> "{dir}/calls"
case "$*" in
  *%e*) touch "{dir}/started"
        i=0
        while [ ! -f "{dir}/go" ] && [ $i -lt 60 ]; do sleep 0.1; i=$((i + 1)); done
        cat "{dir}/end"
        touch "{dir}/ended";;
  *) echo RUNNING;;
esac
"""


def daemon(args=(), end_in=3600.0, fail=False, env_end=None, script=FAKE_SQUEUE):
    """A daemon whose fake squeue says the job ends end_in seconds from now."""
    d = Daemon(args=list(args))
    bindir = os.path.join(d.dir, "bin")
    os.mkdir(bindir)
    d.bindir = bindir
    with open(os.path.join(bindir, "squeue"), "w") as f:
        f.write(script.format(dir=bindir))
    os.chmod(os.path.join(bindir, "squeue"), 0o755)
    with open(os.path.join(bindir, "end"), "w") as f:
        f.write(time.strftime("%Y-%m-%dT%H:%M:%S\n", time.gmtime(time.time() + end_in)))
    if fail:
        open(os.path.join(bindir, "fail"), "w").close()
    extra = {"PATH": bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"), "TZ": "UTC"}
    if env_end is not None:
        extra["SLURM_JOB_END_TIME"] = str(int(env_end))
    d.env = slurm_env(d.dir, extra=extra)
    d.calls_path = os.path.join(bindir, "calls")
    return d.start()


def calls(d):
    try:
        with open(d.calls_path) as f:
            return [line for line in f.read().splitlines() if "%e" in line]
    except FileNotFoundError:
        return []


def berth(d, *args):
    env = dict(os.environ, BERTH_SOCKET=d.sock)
    return subprocess.run([BERTH, *args], env=env, capture_output=True, text=True, timeout=60)


def test_lazy_squeue():
    d = daemon()
    try:
        c = d.client()
        t.check(calls(d) == [], "no squeue for the job's end at start-up", str(calls(d)))
        r = c.request("acquire", cores=2)
        t.check(r.get("ok") and calls(d) == [], "a request without a duration asks nothing",
                str(calls(d)))
        c.request("release", lease=r["lease"])
        r = c.request("acquire", cores=2, duration=60, label="short")
        t.check(r.get("ok"), "a step that ends before the allocation is granted", str(r))
        t.check("warning" not in r, "with no warning", str(r))
        t.check(len(calls(d)) == 1, "the first duration asks squeue once", str(calls(d)))
        t.check(calls(d) and "-h -j 4242 -o %e fmt=standard" in calls(d)[0],
                "squeue -h -j ID -o %e with ISO times", str(calls(d)))
        c.request("release", lease=r["lease"])
        r = c.request("acquire", cores=2, duration=7200, label="forward")
        err = r.get("error", {})
        t.check(not r.get("ok") and err.get("code") == "unsatisfiable",
                "a step that outlasts the allocation is refused", str(r))
        msg = err.get("message", "")
        t.check("step 'forward' states a duration of 2h00m (7200 s) but the allocation ends in"
                in msg and "past the end" in msg, "the refusal says why and by how much", msg)
        st = status(d)["allocation"]
        left = st.get("time_left_s")
        t.check(isinstance(left, (int, float)) and 3000 < left <= 3600,
                "status has the time left", str(left))
        t.check(st.get("job_end_source") == "squeue" and st.get("deadline_policy") == "refuse",
                "and where the end came from, and the policy", str(st.get("job_end_source")))
        t.check(isinstance(st.get("job_end"), (int, float)), "and the end itself")
        p = berth(d, "status")
        t.check(p.returncode == 0 and " \u00b7 time left 5" in p.stdout.splitlines()[0],
                "berth status shows the time left on its first line", p.stdout + p.stderr)
        p = berth(d, "run", "--local", "--cores", "1", "--duration", "7200", "--", "true")
        t.check(p.returncode == 125 and "past the end" in p.stderr,
                "berth run --duration refuses a step that outlasts the job", p.stderr)
        p = berth(d, "run", "--local", "--cores", "1", "--duration", "5", "--", "true")
        t.check(p.returncode == 0, "berth run --duration runs one that fits", p.stderr)
        p = berth(d, "acquire", "--cores", "1", "--duration", "9000")
        t.check(p.returncode == 125 and "past the end" in p.stderr,
                "berth acquire --duration refuses too", p.stderr)
        t.check(len(calls(d)) == 1, "squeue was asked once in all", str(calls(d)))
        c.close()
    finally:
        d.cleanup()


def test_status_asks_first():
    d = daemon(end_in=7200)
    try:
        st = status(d)["allocation"]
        t.check(not calls(d) and st.get("time_left_s") is None,
                "a plain status asks the scheduler nothing", str(calls(d)))
        c = d.client()
        st = c.request("status", time_left=True)["allocation"]
        t.check(len(calls(d)) == 1 and st.get("time_left_s", 0) > 7000,
                "asking for the time left asks squeue once", str(calls(d)))
        p = berth(d, "status", "--time-left")
        t.check(p.returncode == 0 and "time left" in p.stdout.splitlines()[0],
                "berth status --time-left shows it", p.stdout + p.stderr)
        r = c.request("acquire", cores=1, duration=3600)
        st = status(d)["allocation"]
        t.check(r.get("ok") and len(calls(d)) == 1, "and never again", str(calls(d)))
        t.check(st.get("time_left_s", 0) > 7000, "once known, a plain status shows it",
                str(st.get("time_left_s")))
        c.close()
    finally:
        d.cleanup()


def test_from_environment():
    d = daemon(env_end=time.time() + 1800)
    try:
        st = status(d)["allocation"]
        t.check(st.get("job_end_source") == "SLURM_JOB_END_TIME"
                and 1700 < st.get("time_left_s", 0) <= 1800,
                "SLURM_JOB_END_TIME gives the end", str(st.get("job_end_source")))
        c = d.client()
        r = c.request("acquire", cores=1, duration=3600)
        t.check(not r.get("ok") and "past the end" in r.get("error", {}).get("message", ""),
                "and is checked against", str(r))
        t.check(calls(d) == [], "without asking squeue", str(calls(d)))
        c.close()
    finally:
        d.cleanup()


def test_warn_policy():
    d = daemon(args=["--deadline-policy", "warn"], end_in=600)
    try:
        c = d.client()
        r = c.request("acquire", cores=2, duration=3600, label="long")
        t.check(r.get("ok"), "under warn, a step that outlasts the job is granted", str(r))
        t.check("past the end" in r.get("warning", ""), "with a warning that says so", str(r))
        t.check(status(d)["allocation"].get("deadline_policy") == "warn", "status names the policy")
        c.request("release", lease=r["lease"])   # free core 0 for the local step
        p = berth(d, "run", "--local", "--cores", "1", "--duration", "3600", "--", "true")
        t.check(p.returncode == 0 and "warning:" in p.stderr and "past the end" in p.stderr,
                "berth run prints the warning and runs the step", p.stderr)
        c.close()
    finally:
        d.cleanup()


def test_unknown_end():
    d = daemon(fail=True)
    try:
        c = d.client()
        r = c.request("acquire", cores=1, duration=10 ** 6)
        t.check(r.get("ok"), "when the end is not known, durations are not checked", str(r))
        st = status(d)["allocation"]
        t.check(st.get("time_left_s", 0) is None and st.get("job_end") is None,
                "status says the time left is not known (null)", str(st.get("time_left_s")))
        c.request("acquire", cores=1, duration=5)
        t.check(len(calls(d)) == 1, "a failed query is not repeated", str(calls(d)))
        p = berth(d, "status")
        t.check(p.returncode == 0 and "time left" not in p.stdout, "berth status leaves it out",
                p.stdout)
        c.close()
    finally:
        d.cleanup()


def test_checked_again_at_grant():
    d = daemon(end_in=3600)
    try:
        hold, waiter = d.client(), d.client()
        r = hold.request("acquire", ntasks=ALL, cpus_per_task=1, label="everything")
        t.check(r.get("ok"), "one step holds the whole allocation", str(r))
        left = hold.request("status", time_left=True)["allocation"]["time_left_s"]
        waiter.send("acquire", cores=4, duration=left - 1.5, label="tight")
        time.sleep(3)
        hold.request("release", lease=r["lease"])
        rr = waiter.reply()
        t.check(not rr.get("ok") and rr.get("error", {}).get("code") == "unsatisfiable"
                and "past the end" in rr.get("error", {}).get("message", ""),
                "a duration that fitted when asked but not after waiting is refused at grant",
                str(rr))
        t.check(not status(d)["leases"], "and holds nothing")
        r = waiter.request("acquire", cores=4, label="after")
        t.check(r.get("ok"), "the connection goes on", str(r))
        hold.close()
        waiter.close()
    finally:
        d.cleanup()


def slow_daemon():
    """A daemon whose squeue answers only when let (SLOW_SQUEUE)."""
    d = daemon(end_in=3600, script=SLOW_SQUEUE)
    d.marker = lambda name: os.path.exists(os.path.join(d.bindir, name))
    return d


def start_query(d, label):
    """A new connection whose acquire states a duration (60 s, 2 cores),
    once it has started the query."""
    c = d.client()
    c.send("acquire", cores=2, duration=60, label=label)
    t.check(wait_until(lambda: d.marker("started"), timeout=30),
            "a stated duration starts the query", d.stderr())
    return c


def test_query_off_the_loop():
    d = slow_daemon()
    marker = d.marker
    try:
        past, other = d.client(), d.client()
        fits = start_query(d, "fits")
        past.send("acquire", cores=2, duration=7200, label="past")
        env = dict(os.environ, BERTH_SOCKET=d.sock)
        cli = subprocess.Popen([BERTH, "status", "--time-left"], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        st = other.request("status")
        t.check("allocation" in st and st["allocation"].get("time_left_s") is None
                and not marker("ended"),
                "while the query runs, another client's status is answered", str(st))
        r = other.request("acquire", cores=4)
        t.check(r.get("ok") and not marker("ended"),
                "and an acquire without a duration is granted", str(r))
        r = other.request("release", lease=r.get("lease"))
        t.check(r.get("ok") and not marker("ended"), "and released", str(r))
        t.check(cli.poll() is None and not marker("ended"),
                "berth status --time-left waits for the answer", str(cli.poll()))
        open(os.path.join(d.bindir, "go"), "w").close()
        r = fits.reply()
        t.check(r.get("ok") and "warning" not in r,
                "then the step that ends before the job is granted", str(r))
        r = past.reply()
        t.check(not r.get("ok") and r.get("error", {}).get("code") == "unsatisfiable"
                and "past the end" in r.get("error", {}).get("message", ""),
                "and the one that outlasts it is refused", str(r))
        out, err = cli.communicate(timeout=60)
        t.check(cli.returncode == 0 and " \u00b7 time left 5" in out.splitlines()[0],
                "and berth status --time-left shows the time left", out + err)
        r = other.request("status", time_left=True)["allocation"]
        t.check(r.get("job_end_source") == "squeue" and r.get("time_left_s", 0) > 3000,
                "the answer is kept", str(r))
        t.check(len(calls(d)) == 1, "squeue was asked once in all", str(calls(d)))
        for c in (fits, past, other):
            c.close()
    finally:
        d.cleanup()


def test_drain_while_asking():
    d = slow_daemon()
    marker = d.marker
    try:
        hold, other = d.client(), d.client()
        held = hold.request("acquire", cores=2)
        waiter = start_query(d, "late")
        r = other.request("shutdown")
        t.check(r.get("ok"), "a drain begins while it runs", str(r))
        r = waiter.reply()
        t.check(r.get("error", {}).get("code") == "shutting_down" and not marker("ended"),
                "the request waiting for the end is refused at once", str(r))
        st = other.request("status", time_left=True)
        t.check(st.get("allocation", {}).get("time_left_s", 0) is None and not marker("ended"),
                "a draining berthd answers --time-left with what it knows", str(st))
        hold.request("release", lease=held.get("lease"))
        t.check(wait_until(lambda: not d.alive(), timeout=30) and d.proc.returncode == 0
                and not marker("ended"),
                "and stops once drained, the query still running", d.stderr())
        open(os.path.join(d.bindir, "go"), "w").close()
        for c in (hold, waiter, other):
            c.close()
    finally:
        d.cleanup()


def test_bad_policy():
    p = subprocess.run([BERTHD, "--foreground", "--deadline-policy", "maybe"],
                       capture_output=True, text=True, timeout=30)
    t.check(p.returncode == 2 and "--deadline-policy: deadline policy must be 'refuse' or "
            "'warn', got 'maybe'" in p.stderr, "a bad --deadline-policy is a usage error",
            p.stderr)


test_lazy_squeue()
test_status_asks_first()
test_from_environment()
test_warn_policy()
test_unknown_end()
test_checked_again_at_grant()
test_query_off_the_loop()
test_drain_while_asking()
test_bad_policy()
t.finish()
