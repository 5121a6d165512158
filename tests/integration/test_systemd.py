#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd under systemd, and its signals: socket activation (with
systemd-socket-activate, and a listening socket kept across a kill -9 the way
systemd keeps it, so that clients that connect meanwhile are served by the
restarted daemon); the sd_notify messages on a fake NOTIFY_SOCKET (READY=1
only once listening, STATUS= kept current, WATCHDOG=1 at half the interval,
none when the watchdog is another process's, STOPPING=1 on drain, no READY
when validation fails); nothing breaks without systemd; syslog priority
prefixes when JOURNAL_STREAM names stderr; SIGHUP reopens the logs; SIGTERM
drains (waiting requests answered shutting_down, no new grants, leases end
by themselves or at the drain timeout; a second signal forces).

usage: BERTHD=build/daemon/berthd test_systemd.py
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (BERTHD, CORES_PER_NODE, NODES, Checks, Client, Daemon,  # noqa: E402
                     connectable, status, wait_until)

ALL = CORES_PER_NODE * len(NODES)
t = Checks()


class Notify:
    """A fake NOTIFY_SOCKET: collects the datagrams berthd sends."""

    def __init__(self, d):
        self.path = os.path.join(d.dir, "notify.sock")
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(self.path)
        self.s.settimeout(0.05)
        self.msgs = []

    def pump(self, seconds=0.0, until=None):
        end = time.time() + seconds
        while True:
            try:
                self.msgs.append((time.time(), self.s.recv(65536).decode()))
            except socket.timeout:
                pass
            if until and until():
                return True
            if time.time() >= end:
                return bool(until and until())

    def lines(self):
        return [line for _, m in self.msgs for line in m.split("\n") if line]

    def has(self, prefix):
        return any(line.startswith(prefix) for line in self.lines())

    def statuses(self):
        return [line[len("STATUS="):] for line in self.lines() if line.startswith("STATUS=")]

    def close(self):
        self.s.close()


def spawn(d, env, extra=()):
    return subprocess.Popen(d.command() + list(extra), env=env, stdout=subprocess.DEVNULL, stderr=open(d.err, "a"))


def test_notify():
    d = Daemon()
    n = Notify(d)
    try:
        env = dict(d.env, NOTIFY_SOCKET=n.path, WATCHDOG_USEC="200000")
        p = spawn(d, env)
        ready_and_listening = []

        def ready():
            if n.has("READY=1"):
                if not ready_and_listening:
                    ready_and_listening.append(connectable(d.sock))
                return True
            return False

        t.check(n.pump(10, until=ready), "READY=1 arrives", d.stderr())
        t.check(ready_and_listening == [True], "and the socket already serves when it does")
        ready_msg = next(m for _, m in n.msgs if "READY=1" in m)
        t.check(f"MAINPID={p.pid}" in ready_msg and "STATUS=" in ready_msg,
                "READY=1 comes with MAINPID and a STATUS", ready_msg)
        first = n.statuses()[0]
        t.check("0 leases" in first and "0 waiting" in first and f"{ALL} of {ALL} cores free" in first,
                "STATUS counts leases, waiting requests and free cores", first)
        c = d.client()
        r = c.request("acquire", cores=100, label="x")
        w = d.client()
        wid = w.send("acquire", ntasks=ALL, cpus_per_task=1)
        want = f"1 leases, 1 waiting, {ALL - 100} of {ALL} cores free"
        t.check(n.pump(5, until=lambda: any(want in s for s in n.statuses())),
                "STATUS follows grants and waiting requests", str(n.statuses()[-3:]))
        c.request("release", lease=r["lease"])
        t.check(w.reply().get("id") == wid, "the waiting request is granted once the cores are free")
        w.close()
        t.check(n.pump(5, until=lambda: n.statuses()[-1].startswith("0 leases, 0 waiting")),
                "and STATUS comes back to nothing held", str(n.statuses()[-2:]))
        n.pump(1.0)
        dogs = [ts for ts, m in n.msgs if "WATCHDOG=1" in m]
        t.check(len(dogs) >= 5, "WATCHDOG=1 keeps coming (half of WATCHDOG_USEC)", str(len(dogs)))
        p.terminate()
        t.check(n.pump(5, until=lambda: n.has("STOPPING=1")), "STOPPING=1 on SIGTERM")
        stopping = next(m for _, m in n.msgs if "STOPPING=1" in m)
        t.check("STATUS=draining" in stopping, "with a draining STATUS", stopping)
        t.check(p.wait(10) == 0, "berthd exits 0")
        c.close()
        lines = n.lines()
        t.check(lines.index("READY=1") < lines.index("STOPPING=1") and lines.count("READY=1") == 1,
                "READY=1 once, before STOPPING=1")
    finally:
        n.close()
        d.cleanup()

    # the watchdog is another process's (WATCHDOG_PID): no pings
    d = Daemon()
    n = Notify(d)
    try:
        env = dict(d.env, NOTIFY_SOCKET=n.path, WATCHDOG_USEC="100000", WATCHDOG_PID="1")
        p = spawn(d, env)
        n.pump(10, until=lambda: n.has("READY=1"))
        n.pump(0.6)
        p.terminate()
        p.wait(10)
        n.pump(0.2)
        t.check(n.has("READY=1") and not n.has("WATCHDOG=1"), "no WATCHDOG=1 when WATCHDOG_PID names another process")
    finally:
        n.close()
        d.cleanup()

    # validation fails (the machine is unknown): no READY=1
    d = Daemon(machine="no-such-machine")
    n = Notify(d)
    try:
        p = spawn(d, dict(d.env, NOTIFY_SOCKET=n.path))
        rc = p.wait(20)
        n.pump(0.3)
        t.check(rc != 0 and not n.has("READY=1"), "a start that fails validation sends no READY=1", str(n.lines()))
    finally:
        n.close()
        d.cleanup()

    # without systemd nothing breaks: a NOTIFY_SOCKET nobody listens on
    d = Daemon(env=None)
    try:
        d.env = dict(d.env, NOTIFY_SOCKET=os.path.join(d.dir, "nobody.sock"), WATCHDOG_USEC="100000")
        d.start()
        c = d.client()
        t.check(c.request("acquire", cores=2).get("ok"), "a NOTIFY_SOCKET nobody reads changes nothing")
        c.close()
        t.check(d.stop() == 0, "and berthd still stops cleanly")
    finally:
        d.cleanup()


def test_socket_activation():
    act = shutil.which("systemd-socket-activate")
    if not act:
        print("skipped: systemd-socket-activate is not installed")
        return
    d = Daemon()
    try:
        # systemd-socket-activate hands the program only the variables named with -E
        args = [a for a in d.command() if a not in ("--socket", d.sock)]
        setenv = [x for k in d.env for x in ("-E", k)]
        p = subprocess.Popen([act, "-l", d.sock] + setenv + args, env=d.env, stdout=subprocess.DEVNULL,
                             stderr=open(d.err, "a"))
        t.check(wait_until(lambda: os.path.exists(d.sock)), "systemd-socket-activate listens")
        s = status(d)
        t.check(s.get("ok") and s["daemon"]["socket"] == d.sock and s["daemon"]["pid"] == p.pid,
                "berthd serves the socket it was passed", str(s)[:200])
        c = d.client()
        t.check(c.request("acquire", cores=4).get("ok"), "and grants through it")
        c.close()
        p.terminate()
        t.check(p.wait(10) == 0, "SIGTERM stops it cleanly")
        t.check(os.path.exists(d.sock), "and it leaves the passed socket to its owner")
    finally:
        d.cleanup()
    # two sockets are one too many
    d = Daemon()
    try:
        args = [a for a in d.command() if a not in ("--socket", d.sock)]
        setenv = [x for k in d.env for x in ("-E", k)]
        p = subprocess.Popen([act, "-l", d.sock, "-l", d.sock + "2"] + setenv + args, env=d.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_until(lambda: os.path.exists(d.sock + "2"))
        connectable(d.sock)                   # the first connection starts berthd
        try:
            _, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        t.check(p.returncode == 1 and "passed 2 sockets" in err, "two passed sockets are refused, saying so",
                err[-300:])
    finally:
        d.cleanup()


def test_kept_socket_across_crash():
    """What systemd does with Restart=on-failure: the listening socket outlives
    berthd. A client that connects while berthd is down is served by the
    restarted one, which finds the journal's leases."""
    d = Daemon(args=["--reclaim-grace", "30"])
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        lsock.bind(d.sock)
        lsock.listen(64)
        fd = lsock.fileno()
        args = [a for a in d.command() if a not in ("--socket", d.sock)]

        def start():
            def child():
                os.dup2(fd, 3)
                os.set_inheritable(3, True)
            env = dict(d.env, LISTEN_FDS="1")
            # LISTEN_PID must name berthd itself: set it in the process that execs it
            return subprocess.Popen(["sh", "-c", 'LISTEN_PID=$$ exec "$@"', "sh"] + args, env=env,
                                    stdout=subprocess.DEVNULL, stderr=open(d.err, "a"), preexec_fn=child,
                                    pass_fds=(fd,))

        p = start()
        c = Client(d.sock)
        r = c.request("acquire", cores=8, label="kept")
        t.check(r.get("ok"), "a lease through the passed socket", str(r)[:200] + d.stderr())
        p.kill()
        p.wait()
        early = Client(d.sock)                # queues in the backlog meanwhile
        early.send("status")
        p = start()
        s = early.reply()
        t.check(s.get("ok") and [x["lease"] for x in s["leases"]] == [r["lease"]],
                "a client that connected while berthd was down is served by the restarted one, "
                "which restored the lease", str(s)[:300])
        c.close()
        c = Client(d.sock)
        t.check(c.request("reclaim", lease=r["lease"]).get("ok"), "the holder reclaims it by id")
        c.close()
        p.terminate()
        t.check(p.wait(10) == 0, "the restarted berthd stops cleanly")
        early.close()
    finally:
        lsock.close()
        d.cleanup()


def test_journal_stream():
    d = Daemon()
    try:
        with open(d.err, "a"):
            pass
        st = os.stat(d.err)
        d.env = dict(d.env, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
        d.start()
        d.stop()
        lines = [x for x in open(d.err).read().splitlines() if x]
        t.check(lines and all(x.startswith("<") and x[1].isdigit() and x[2] == ">" for x in lines),
                "with JOURNAL_STREAM naming stderr, every line has a syslog priority prefix", str(lines[:3]))
        t.check(any(x.startswith("<6>serving") for x in lines) and any(x.startswith("<4>") for x in lines)
                and any(x.startswith("<5>") for x in lines), "info, notice and warning levels", str(lines[:6]))
    finally:
        d.cleanup()
    d = Daemon()
    try:
        d.env = dict(d.env, JOURNAL_STREAM="1:2")      # another stream: plain lines
        d.start()
        d.stop()
        lines = [x for x in open(d.err).read().splitlines() if x]
        t.check(lines and all(x.startswith("berthd: ") for x in lines), "otherwise plain lines", str(lines[:3]))
    finally:
        d.cleanup()


def test_sighup():
    d = Daemon()
    try:
        cmd = [x for x in d.command() if x != "--foreground"] + ["--detach"]
        p = subprocess.run(cmd, env=d.env, capture_output=True, text=True, timeout=30)
        t.check(p.returncode == 0, "berthd --detach starts", p.stderr)
        pid = status(d)["daemon"]["pid"]
        log, events = os.path.join(d.state, "berthd.log"), os.path.join(d.state, "events.jsonl")
        t.check(os.path.exists(log), "it logs into its state directory")
        os.rename(log, log + ".1")
        os.rename(events, events + ".1")
        os.kill(pid, 1)
        t.check(wait_until(lambda: os.path.exists(log)), "SIGHUP reopens berthd.log (rotated away)")
        c = d.client()
        r = c.request("acquire", cores=3, label="after-hup")
        t.check(wait_until(lambda: os.path.exists(events) and "after-hup" in open(events).read()),
                "and the events log: new events go to the new file")
        t.check("after-hup" not in open(events + ".1").read(), "not to the rotated one")
        t.check("SIGHUP" in open(log).read() and "SIGHUP" not in open(log + ".1").read(),
                "the new log carries what berthd says after SIGHUP", open(log).read()[-300:])
        c.request("release", lease=r["lease"])
        c.request("shutdown")
        c.close()
        t.check(wait_until(lambda: not os.path.exists(f"/proc/{pid}")), "and it still stops on request")
    finally:
        d.cleanup()


def test_sigterm_drain():
    d = Daemon(args=["--drain-timeout", "30"]).start()
    try:
        holder, waiter, other = d.client(), d.client(), d.client()
        r = holder.request("acquire", ntasks=ALL, cpus_per_task=1, label="all")
        wid = waiter.send("acquire", cores=1, label="waits")
        wait_until(lambda: status(d)["queue"])
        d.proc.terminate()
        w = waiter.reply()
        t.check(w.get("id") == wid and (w.get("error") or {}).get("code") == "shutting_down",
                "SIGTERM: a waiting request is answered shutting_down", str(w))
        n = other.request("acquire", cores=1)
        t.check((n.get("error") or {}).get("code") == "shutting_down", "no new grants while draining", str(n))
        s = other.request("status")
        t.check(s.get("daemon", {}).get("draining") is True and len(s["leases"]) == 1,
                "status answers, the lease is still held")
        time.sleep(0.3)
        t.check(d.alive(), "berthd waits for the lease to end")
        holder.request("release", lease=r["lease"])
        t.check(d.proc.wait(10) == 0, "and exits 0 once it has")
        events = [json.loads(x) for x in open(os.path.join(d.state, "events.jsonl"))]
        t.check(any(e.get("event") == "released" and e.get("reason") == "released" for e in events),
                "the lease ended by its own release")
    finally:
        d.cleanup()

    d = Daemon(args=["--drain-timeout", "0.5"]).start()
    try:
        holder = d.client()
        r = holder.request("acquire", cores=10, detach=True, label="stays")
        d.proc.terminate()
        t.check(d.proc.wait(10) == 0, "a lease that does not end is ended at the drain timeout; exit 0")
        events = [json.loads(x) for x in open(os.path.join(d.state, "events.jsonl"))]
        t.check(any(e.get("lease") == r["lease"] and e.get("reason") == "forced" for e in events),
                "its release is logged as forced")
        d.start()
        t.check(not status(d)["leases"], "and it is not restored at the next start")
    finally:
        d.cleanup()

    d = Daemon(args=["--drain-timeout", "60"]).start()
    try:
        holder = d.client()
        holder.request("acquire", cores=10, label="held")
        d.proc.terminate()
        time.sleep(0.2)
        t.check(d.alive(), "one SIGTERM drains")
        d.proc.terminate()
        t.check(d.proc.wait(10) == 0, "a second one forces: exit 0 at once")
    finally:
        d.cleanup()


def main():
    t.run_each((test_notify, test_socket_activation, test_kept_socket_across_crash, test_journal_stream, test_sighup,
                test_sigterm_drain))
    t.finish()


main()
