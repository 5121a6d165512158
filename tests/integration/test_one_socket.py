#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One berthd per socket, and clients that do not hang on a berthd that
takes nothing (issue 24, finding 10), with real berthd processes:

- two started at once on one --socket with different --state-dirs, round
  after round: exactly one stays up and serves; the other exits naming the
  winner's pid (before: both could stay up, one of them on an unlinked path);
- a berthd stopped (SIGSTOP) with its backlog full: a client's connect gives
  up after BERTH_CONNECT_S naming the pid and that it is stopped; a new
  berthd on that socket exits naming it (before: both hung in connect());
- a berthd stopped after its step ended: berth run returns the step's own
  status after BERTH_RELEASE_WAIT_S, saying the release was not recorded;
  resumed, berthd ends the lease as the command is gone.

No timing is asserted: each wait is a bound the check must stay inside,
generous on a loaded machine.

usage: BERTHD=build/daemon/berthd BERTH=build/client/berth test_one_socket.py
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BERTHD, Checks, Daemon, connectable, slurm_env, status, wait_until  # noqa: E402

t = Checks()
BERTH = os.environ.get("BERTH", "")
ROUNDS = 25
LONG = 60


def berthd_cmd(sock, state):
    return [BERTHD, "--foreground", "--machine", "pm-cpu", "--socket", sock, "--state-dir", state]


def test_race():
    """Two berthd started together on one socket: one wins, every round."""
    tmp = tempfile.mkdtemp(prefix="berthd-race-")
    os.chmod(tmp, 0o700)
    both_up = named = served = 0
    try:
        for i in range(ROUNDS):
            sock = os.path.join(tmp, "s.sock")
            errs = [os.path.join(tmp, f"err{i}.{k}") for k in range(2)]
            procs = [subprocess.Popen(berthd_cmd(sock, os.path.join(tmp, f"st{i}.{k}")), env=slurm_env(tmp),
                                      stdout=subprocess.DEVNULL, stderr=open(errs[k], "w"))
                     for k in range(2)]
            try:
                wait_until(lambda: any(p.poll() is not None for p in procs) and connectable(sock), LONG)
                up = [p for p in procs if p.poll() is None]
                if len(up) != 1:
                    both_up += 1
                    continue
                winner = up[0]
                loser = procs[1 - procs.index(winner)]
                with open(errs[procs.index(loser)]) as f:
                    err = f.read()
                if f"another berthd (pid {winner.pid}) holds the socket {sock}" in err:
                    named += 1
                else:
                    print(f"round {i}: the loser said: {err[-300:]}")
                c = socket.socket(socket.AF_UNIX)
                c.connect(sock)
                c.sendall(b'{"op":"status","id":1}\n')
                reply = json.loads(c.makefile().readline())
                c.close()
                if reply.get("daemon", {}).get("pid") == winner.pid:
                    served += 1
            finally:
                for p in procs:
                    if p.poll() is None:
                        p.terminate()
                        p.wait()
    finally:
        subprocess.run(["rm", "-rf", tmp])
    t.check(both_up == 0, f"one berthd of two stays up in each of {ROUNDS} rounds", f"{both_up} rounds had two")
    t.check(named == ROUNDS, "the other exits naming the winner's pid and the socket",
            f"{named} of {ROUNDS}")
    t.check(served == ROUNDS, "the socket is the winner's (status names its pid)", f"{served} of {ROUNDS}")
    print(f"info: {ROUNDS} rounds of two berthd started at once, {both_up} with both up", flush=True)


def fill_backlog(sock):
    """Connections until the stopped berthd's backlog is full; kept open."""
    held = []
    for _ in range(100000):
        s = socket.socket(socket.AF_UNIX)
        s.setblocking(False)
        try:
            s.connect(sock)
        except BlockingIOError:
            s.close()
            return held
        held.append(s)
    raise RuntimeError("the backlog never filled")


def test_stopped_accepts_nothing():
    d = Daemon().start()
    held = []
    try:
        pid = d.proc.pid
        os.kill(pid, signal.SIGSTOP)
        held = fill_backlog(d.sock)
        env = dict(d.env, BERTH_SOCKET=d.sock, BERTH_CONNECT_S="1")
        try:
            r = subprocess.run([BERTH, "status"], env=env, capture_output=True, text=True, timeout=LONG)
            code, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            code, err = None, "berth status still waits"
        t.check(code not in (0, None) and f"(pid {pid}) is stopped" in err and "kill -CONT" in err,
                "a client's connect to a stopped berthd with a full backlog gives up, naming it and how to "
                "resume it", f"{code}: {err[-400:]}")
        try:
            p = subprocess.run(berthd_cmd(d.sock, os.path.join(d.dir, "other")), env=d.env,
                               capture_output=True, text=True, timeout=LONG)
            code, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            code, err = None, "the second berthd still waits"
        t.check(code not in (0, None) and f"(pid {pid}) holds the socket" in err,
                "a new berthd on that socket exits naming the stopped one", f"{code}: {err[-400:]}")
    finally:
        for s in held:
            s.close()
        if d.alive():
            os.kill(d.proc.pid, signal.SIGCONT)
        d.cleanup()


def test_stopped_after_step():
    """berth run's step stops berthd, then exits 3: berth run returns 3."""
    d = Daemon(machine=None, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}).start()
    try:
        pid = d.proc.pid
        env = dict(d.env, BERTH_SOCKET=d.sock, BERTH_RELEASE_WAIT_S="1")
        try:
            r = subprocess.run([BERTH, "run", "--cores", "1", "--", "sh", "-c", f"kill -STOP {pid}; exit 3"],
                               env=env, capture_output=True, text=True, timeout=LONG)
            code, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            code, err = None, "berth run still waits"
        t.check(code == 3, "berth run returns its step's status though berthd does not answer", f"{code}: {err}")
        t.check("could not be recorded" in err and f"(pid {pid})" in err,
                "and says the release could not be recorded, naming berthd", err[-400:])
        os.kill(pid, signal.SIGCONT)
        t.check(wait_until(lambda: not status(d)["leases"], LONG),
                "resumed, berthd ends the lease: berth run is gone", str(status(d)["leases"]))
    finally:
        if d.alive():
            os.kill(d.proc.pid, signal.SIGCONT)
        d.cleanup()


def main():
    if not BERTH or not os.access(BERTH, os.X_OK):
        print("BERTH is not set to the built berth")
        sys.exit(2)
    t.run_each((test_race, test_stopped_accepts_nothing, test_stopped_after_step))
    t.finish()


if __name__ == "__main__":
    main()
