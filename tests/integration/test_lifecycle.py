#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd's life: detached leases (ttl, owner pid), shutdown drain and
force, SIGTERM, a stale or unreachable allocation at start (exit 3 / 4,
one squeue call), usage errors, --detach --print-env, crash recovery from
the journal (kill -9), socket activation and sd_notify.

usage: BERTHD=build/daemon/berthd test_lifecycle.py
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (BERTHD, CORES_PER_NODE, HOST, NODES, Checks, Daemon, connectable,  # noqa: E402
                     slurm_env, status, wait_until)

BERTH = os.environ.get("BERTH", "")

ALL = CORES_PER_NODE * len(NODES)
t = Checks()


def released_reason(d, lease):
    path = os.path.join(d.state, "events.jsonl")
    with open(path) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("event") == "released" and ev.get("lease") == lease:
                return ev.get("reason")
    return None


def test_detached():
    d = Daemon().start()
    try:
        c = d.client()
        r = c.request("acquire", cores=2, detach=True, ttl=0.3, label="short")
        t.check(r.get("ok"), "a detached lease with a ttl is granted", str(r))
        c.close()
        gone = wait_until(lambda: not status(d)["leases"], timeout=10)
        t.check(gone, "a detached lease ends when its ttl runs out")
        t.check(released_reason(d, r["lease"]) == "expired", "its release is logged as expired")

        sleeper = subprocess.Popen(["sleep", "60"])
        c = d.client()
        r = c.request("acquire", cores=2, detach=True, owner_pid=sleeper.pid, label="owned")
        c.close()
        time.sleep(0.1)
        t.check(any(x["lease"] == r.get("lease") for x in status(d)["leases"]),
                "a detached lease outlives its connection")
        sleeper.kill()
        sleeper.wait()
        t.check(wait_until(lambda: not status(d)["leases"]), "it ends when its owner process exits")
        t.check(released_reason(d, r["lease"]) == "owner_exited", "its release is logged as owner_exited")

        a, b = d.client(), d.client()
        r = a.request("acquire", cores=2, detach=True)
        t.check(b.request("release", lease=r["lease"]).get("ok"),
                "another connection may release a detached lease")
        bad = a.request("acquire", cores=1, ttl=5)
        t.check(bad.get("error", {}).get("code") == "invalid_request", "ttl without detach is refused", str(bad))
        dead = a.request("acquire", cores=1, detach=True, owner_pid=4194000)
        t.check(dead.get("error", {}).get("code") == "invalid_request",
                "an owner pid that does not run is refused", str(dead))
        a.close()
        b.close()
    finally:
        d.cleanup()


def test_shutdown():
    d = Daemon().start()
    try:
        holder, waiter, ctl = d.client(), d.client(), d.client()
        r = holder.request("acquire", ntasks=ALL, cpus_per_task=1)
        wid = waiter.send("acquire", cores=1)
        wait_until(lambda: status(d)["queue"])
        t.check(ctl.request("shutdown", mode="drain").get("ok"), "shutdown drain is accepted")
        w = waiter.reply()
        t.check(w.get("id") == wid and w.get("error", {}).get("code") == "shutting_down",
                "a waiting request is answered shutting_down", str(w))
        n = ctl.request("acquire", cores=1)
        t.check(n.get("error", {}).get("code") == "shutting_down", "new acquires are refused while draining", str(n))
        t.check(ctl.request("status").get("daemon", {}).get("draining") is True,
                "status still answers while draining")
        t.check(d.alive(), "berthd waits for the lease to end")
        holder.request("release", lease=r["lease"])
        try:
            rc = d.proc.wait(10)
        except subprocess.TimeoutExpired:
            rc = None
        t.check(rc == 0, "berthd exits 0 once drained", str(rc))
        t.check(not os.path.exists(d.sock), "the socket is removed")
    finally:
        d.cleanup()

    d = Daemon().start()
    try:
        holder, ctl = d.client(), d.client()
        holder.request("acquire", cores=8)
        t.check(ctl.request("shutdown", mode="force").get("ok"), "shutdown force is accepted")
        try:
            rc = d.proc.wait(10)
        except subprocess.TimeoutExpired:
            rc = None
        t.check(rc == 0, "force ends the leases and exits 0", str(rc))
        try:
            holder.read()
            eof = False
        except (EOFError, OSError):
            eof = True
        t.check(eof, "the holder's connection is closed")
    finally:
        d.cleanup()

    d = Daemon().start()
    try:
        d.proc.terminate()
        rc = d.proc.wait(10)
        t.check(rc == 0 and not os.path.exists(d.sock), "SIGTERM with nothing held: exit 0, socket removed", str(rc))
    finally:
        d.cleanup()


def fake_scheduler(tmp, mode):
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    calls = os.path.join(tmp, "calls")
    for cmd in ("squeue", "scontrol", "sinfo", "srun"):
        with open(os.path.join(bindir, cmd), "w") as f:
            f.write(f"""#!/bin/sh
echo "{cmd} $*" >> {calls}
case {mode} in
  dead) [ {cmd} = squeue ] && echo COMPLETED; exit 0;;
  down) echo "slurm_load_jobs error: Unable to contact slurm controller" >&2; exit 1;;
esac
exit 0
""")
        os.chmod(os.path.join(bindir, cmd), 0o755)
    return bindir, calls


def test_stale_allocation():
    for mode, want in (("dead", 3), ("down", 4)):
        tmp = tempfile.mkdtemp(prefix="berthd-stale-")
        try:
            bindir, calls = fake_scheduler(tmp, mode)
            env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": tmp, "SLURM_JOB_ID": "4242",
                   "SLURM_JOB_NUM_NODES": "3", "SLURM_JOB_NODELIST": "nid[000001-000003]"}
            os.makedirs(os.path.join(tmp, "state"))
            p = subprocess.run([BERTHD, "--machine", "pm-cpu", "--socket", os.path.join(tmp, "s.sock"),
                                "--state-dir", os.path.join(tmp, "state"), "--foreground"],
                               env=env, capture_output=True, text=True, timeout=30)
            with open(calls) as f:
                lines = f.read().splitlines()
            squeues = [x for x in lines if x.startswith("squeue")]
            if mode == "dead":
                t.check(p.returncode == 3, "a stale allocation exits 3", f"{p.returncode} {p.stderr}")
                t.check("4242" in p.stderr, "the refusal names the job", p.stderr)
                t.check(len(squeues) == 1 and len(lines) == 1, "exactly one squeue call", str(lines))
            else:
                t.check(p.returncode == 4, "an unreachable scheduler exits 4", f"{p.returncode} {p.stderr}")
                t.check(p.stderr.strip() != "", "and says why")
            t.check(not os.path.exists(os.path.join(tmp, "s.sock")), "no socket is left behind")
            # the same under --detach --print-env: the eval line fails
            p = subprocess.run([BERTHD, "--machine", "pm-cpu", "--socket", os.path.join(tmp, "s.sock"),
                                "--state-dir", os.path.join(tmp, "state"), "--detach", "--print-env"],
                               env=env, capture_output=True, text=True, timeout=30)
            t.check(p.returncode == want and p.stdout.rstrip().endswith("false") and "echo" in p.stdout,
                    f"--detach --print-env on a {mode} scheduler prints a failing line and exits {want}",
                    f"{p.returncode} {p.stdout!r}")
            sh = subprocess.run(["sh", "-c", 'set -e; eval "$1"; echo reached', "sh", p.stdout],
                                capture_output=True, text=True)
            t.check("reached" not in sh.stdout and "4242" in sh.stderr + p.stderr or mode == "down",
                    "a set -e script stops there, with the reason on stderr", sh.stdout + sh.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def test_usage():
    p = subprocess.run([BERTHD, "--no-such-option"], capture_output=True, text=True, timeout=10)
    t.check(p.returncode == 2 and "--no-such-option" in p.stderr, "an unknown option exits 2, naming it",
            f"{p.returncode} {p.stderr}")
    p = subprocess.run([BERTHD, "--max-connections", "zero", "--print-env"], capture_output=True, text=True,
                       timeout=10)
    t.check(p.returncode == 2 and "false" in p.stdout and "max-connections" in p.stderr,
            "a bad value exits 2; --print-env still prints a failing line", f"{p.returncode} {p.stdout!r}")
    p = subprocess.run([BERTHD, "--help"], capture_output=True, text=True, timeout=10)
    t.check(p.returncode == 0 and "--state-dir" in p.stdout, "--help lists the options")


def test_detach_print_env():
    d = Daemon()
    try:
        cmd = [x for x in d.command() if x != "--foreground"] + ["--detach", "--print-env"]
        p = subprocess.run(cmd, env=d.env, capture_output=True, text=True, timeout=30)
        t.check(p.returncode == 0 and p.stdout.strip() == f"export BERTH_SOCKET='{d.sock}'",
                "--detach --print-env prints the export line once ready", f"{p.returncode} {p.stdout!r} {p.stderr}")
        t.check(connectable(d.sock), "the detached daemon serves")
        c = d.client()
        pid = c.request("status").get("daemon", {}).get("pid")
        c.request("shutdown")
        c.close()
        t.check(wait_until(lambda: not os.path.exists(d.sock)), "the detached daemon stops on shutdown")
        t.check(pid and wait_until(lambda: not os.path.exists(f"/proc/{pid}")), "and exits")
        t.check(os.path.exists(os.path.join(d.state, "berthd.log")), "it logs into its state directory")
    finally:
        d.cleanup()


def test_detach_plain():
    """Without --print-env the ready line is the same export line: evaluated,
    a plain BERTH_SOCKET=... would not reach the berth commands the shell
    starts."""
    d = Daemon()
    try:
        cmd = [x for x in d.command() if x != "--foreground"] + ["--detach"]
        p = subprocess.run(cmd, env=d.env, capture_output=True, text=True, timeout=30)
        t.check(p.returncode == 0 and p.stdout.strip() == f"export BERTH_SOCKET='{d.sock}'",
                "--detach alone prints the export line once ready", f"{p.returncode} {p.stdout!r} {p.stderr}")
        c = d.client()
        c.request("shutdown")
        c.close()
        t.check(wait_until(lambda: not os.path.exists(d.sock)), "the detached daemon stops on shutdown")
    finally:
        d.cleanup()


def test_crash_recovery():
    d = Daemon(args=["--reclaim-grace", "0.5"]).start()
    try:
        a = d.client()
        r = a.request("acquire", ntasks=ALL, cpus_per_task=1, detach=True, label="survivor")
        t.check(r.get("ok"), "a detached lease of every core", str(r)[:200])
        b = d.client()
        d.kill9()
        a.close()
        b.close()
        d.start()
        s = status(d)
        t.check([x["lease"] for x in s["leases"]] == [r["lease"]] and s["leases"][0]["label"] == "survivor",
                "after kill -9 and restart the lease is still there", str(s["leases"])[:300])
        c = d.client()
        n = c.request("acquire", cores=1, wait=False)
        t.check(n.get("error", {}).get("code") == "busy", "nothing held is handed out again", str(n))
        t.check(c.request("release", lease=r["lease"]).get("ok"), "the lease can be released by id")
        g = c.request("acquire", ntasks=ALL, cpus_per_task=1, wait=False)
        t.check(g.get("ok") and g["lease"] != r["lease"], "its cores are granted again, under a new id", str(g)[:200])
        # a connection-bound lease restored after a crash is held while its holder lives
        d.kill9()
        c.close()
        d.start()
        s = status(d)
        t.check(len(s["leases"]) == 1, "a connection-bound lease is restored too", str(s["leases"]) + d.stderr())
        time.sleep(1)                   # past the grace
        s = status(d)
        t.check(len(s["leases"]) == 1 and s["leases"][0]["holder_watched"] and s["leases"][0]["reclaim_by"] is None,
                "and held past the grace while its holder (this process) lives", str(s["leases"]))
        c = d.client()
        t.check(c.request("release", lease=s["leases"][0]["lease"]).get("ok"), "anyone may release it by id")
        c.close()
        t.check(not status(d)["leases"], "and then it is gone")
        # an idle restart starts a fresh journal
        d.stop()
        d.start()
        t.check(os.path.exists(os.path.join(d.state, "journal.jsonl.prev")),
                "a journal with nothing held is set aside at start")
        # a journal cut short by a crash mid-line is read up to the cut
        c = d.client()
        keep = c.request("acquire", cores=5, detach=True)
        c.close()
        d.kill9()
        with open(os.path.join(d.state, "journal.jsonl"), "a") as f:
            f.write('{"op":"grant","id":99,"sha')
        d.start()
        s = status(d)
        t.check([x["lease"] for x in s["leases"]] == [keep["lease"]], "a torn last line is ignored",
                str(s["leases"])[:200] + d.stderr())
        c = d.client()
        t.check(c.request("release", lease=keep["lease"]).get("ok"), "and the journal goes on")
        c.close()
        # another daemon on the same state directory is refused
        other = subprocess.run([BERTHD, "--foreground", "--socket", os.path.join(d.dir, "o.sock"),
                                "--state-dir", d.state, "--machine", "pm-cpu"], env=d.env,
                               capture_output=True, text=True, timeout=20)
        t.check(other.returncode == 1 and "state directory" in other.stderr,
                "a second berthd on the same state directory is refused", other.stderr)
        same = subprocess.run([BERTHD, "--foreground", "--socket", d.sock, "--state-dir",
                               os.path.join(d.dir, "st2"), "--machine", "pm-cpu"], env=d.env,
                              capture_output=True, text=True, timeout=20)
        t.check(same.returncode == 1 and d.alive() and connectable(d.sock),
                "a second berthd on a live socket is refused and leaves it alone", same.stderr)
    finally:
        d.cleanup()


def test_systemd():
    act = shutil.which("systemd-socket-activate")
    d = Daemon()
    try:
        if not act:
            print("skipped: systemd-socket-activate is not installed")
        else:
            p = subprocess.Popen([act, "-l", d.sock, BERTHD, "--foreground", "--state-dir", d.state,
                                  "--machine", "pm-cpu"], env=d.env, stdout=subprocess.DEVNULL,
                                 stderr=open(d.err, "a"))
            try:
                ok = wait_until(lambda: os.path.exists(d.sock))
                s = status(d) if ok else {}
                t.check(s.get("ok") and s["daemon"]["socket"] == d.sock,
                        "socket activation: berthd serves the passed socket", str(s)[:200] + d.stderr())
            finally:
                p.terminate()
                p.wait(10)
        notify = os.path.join(d.dir, "notify.sock")
        ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ns.bind(notify)
        ns.settimeout(0.2)
        env = dict(d.env, NOTIFY_SOCKET=notify, WATCHDOG_USEC="200000")
        p = subprocess.Popen(d.command(), env=env, stdout=subprocess.DEVNULL, stderr=open(d.err, "a"))
        msgs = []
        end = time.time() + 1.5
        while time.time() < end:
            try:
                msgs.append(ns.recv(4096).decode())
            except socket.timeout:
                pass
        p.terminate()
        end = time.time() + 1.5
        while time.time() < end:
            try:
                msgs.append(ns.recv(4096).decode())
            except socket.timeout:
                pass
        p.wait(10)
        text = "\n".join(msgs)
        for key in ("READY=1", "STATUS=", "WATCHDOG=1", "STOPPING=1"):
            t.check(key in text, f"sd_notify sends {key}", text[:300])
    finally:
        d.cleanup()


def test_allocation_event():
    """The first line of the events log names every node in few bytes: a
    run of like nodes whose names follow one another is one entry (1,000
    nodes: one line of about 200 bytes, where one entry a node made 60 KB,
    590 KB at 10,000 nodes, and most of berthd's start-up), and the readers
    of the log (berth events, berth report) get every node back."""
    d = Daemon()
    d.env = slurm_env(d.dir, extra={"SLURM_JOB_NODELIST": f"{HOST},nid[000002-001000]",
                                    "SLURM_JOB_NUM_NODES": "1000"})
    d.start()
    try:
        status(d)                     # the log is written in batches: asking for the state flushes it
        with open(os.path.join(d.state, "events.jsonl")) as f:
            first = f.readline()
        ev = json.loads(first)
        t.check(ev["event"] == "allocation" and len(first) < 1024,
                "the allocation event of 1,000 nodes is one short line", f"{len(first)} bytes: {first[:300]}")
        t.check([(n.get("name"), n.get("names"), n.get("count", 1)) for n in ev["nodes"]]
                == [(HOST, None, 1), (None, "nid[000002-001000]", 999)],
                "this host alone, then the run of 999 like nodes", str(ev["nodes"]))
        if BERTH:
            shown = subprocess.run([BERTH, "events"], env=dict(os.environ, BERTH_SOCKET=d.sock),
                                   capture_output=True, text=True, timeout=30)
            t.check("berthd started: job 4242 on pm-cpu, 1000 nodes, 128000 cores" in shown.stdout,
                    "berth events counts every node of the runs", shown.stdout[:300] + shown.stderr)
            c = d.client()
            r = c.request("acquire", cores=2, label="one")
            c.request("release", lease=r.get("lease"))
            c.close()
            status(d)                 # whoever asks for the state has the log up to date
            report = subprocess.run([BERTH, "report", os.path.join(d.state, "events.jsonl")],
                                    capture_output=True, text=True, timeout=30)
            t.check(report.returncode == 0 and "steps 1 on 1000 nodes, 128000 cores" in report.stdout,
                    "berth report reads the runs back to every node", report.stdout[:300] + report.stderr)
    finally:
        d.stop()


def test_events_bounded():
    """--events-max MIB: past it the events log is kept as events.jsonl.1
    (one older file: the disk holds at most twice the bound) and a new one
    begins with the allocation line, so that a report of either knows every
    node; the leases go on."""
    p = subprocess.run([BERTHD, "--events-max", "-1"], capture_output=True, text=True, timeout=10)
    t.check(p.returncode == 2 and "events-max" in p.stderr and "-1" in p.stderr,
            "a bad --events-max exits 2, naming the value", f"{p.returncode} {p.stderr}")
    d = Daemon(args=["--events-max", "1"]).start()
    try:
        c = d.client()
        rotated = os.path.join(d.state, "events.jsonl.1")
        n = 0
        while not os.path.exists(rotated) and n < 20000:
            r = c.request("acquire", cores=1, label=f"step_{n:05d}_" + "x" * 200)
            c.request("release", lease=r.get("lease"))
            n += 1
            if n % 100 == 0:
                status(d)             # the log up to date: the bound is checked as it is written
        status(d)
        t.check(os.path.exists(rotated), "past 1 MiB the log is kept as events.jsonl.1", f"{n} grants")
        with open(rotated) as f:
            kept = f.readlines()
        with open(os.path.join(d.state, "events.jsonl")) as f:
            new = f.readlines()
        first = json.loads(kept[0])
        t.check(first["event"] == "allocation" and len("".join(kept)) >= 1 << 20,
                "the kept file starts with the allocation line and holds the bound",
                f"{len(kept)} lines, {kept[0][:100]}")
        t.check(new and new[0] == kept[0], "the new one begins with the same allocation line", str(new[:2])[:300])
        r = c.request("acquire", cores=1, label="after")
        t.check(r.get("ok"), "grants go on after the rotation", str(r))
        c.request("release", lease=r.get("lease"))
        c.close()
        status(d)
        if BERTH:
            report = subprocess.run([BERTH, "report", os.path.join(d.state, "events.jsonl")],
                                    capture_output=True, text=True, timeout=30)
            t.check(report.returncode == 0 and "on 4 nodes, 512 cores" in report.stdout,
                    "berth report reads the new file, every node known", report.stdout[:300] + report.stderr)
        t.check("a new one begun" in d.stderr(), "the rotation is logged", d.stderr()[-300:])
    finally:
        d.stop()


def main():
    t.run_each((test_allocation_event, test_events_bounded, test_detached, test_shutdown, test_stale_allocation, test_usage, test_detach_print_env, test_detach_plain,
                test_crash_recovery, test_systemd))
    t.finish()


main()
