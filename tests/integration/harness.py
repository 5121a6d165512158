# SPDX-License-Identifier: MIT
"""Shared pieces of the berthd integration tests (standard library only):
start a real berthd in a private temporary directory on a real socket, talk
to it line by line, and count checks.

The daemon serves a fake 4-node Slurm job on the pm-cpu machine (this host
is one of its nodes, so the allocation is proven live without a scheduler
query), which gives a ledger of 4 x 128 cores on any test host.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback

BERTHD = os.environ.get("BERTHD", "")
HOST = socket.gethostname().split(".")[0]
SANITIZER_REPORTS = []        # berthd stderr with ASan/UBSan findings
NODES = [HOST, "nid000002", "nid000003", "nid000004"]
CORES_PER_NODE = 128


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL: {what}" + (f": {detail}" if detail else ""), flush=True)
        return cond

    def run_on(self, d, tests):
        """Start berthd d, run each test(d) on it in turn and check that it
        still serves; an exception fails the run. Cleans d up."""
        try:
            d.start()
            for fn in tests:
                fn(d)
            self.check(d.alive(), "berthd is still running", d.stderr())
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            self.check(False, "no exception", repr(e) + " " + d.stderr())
        finally:
            d.cleanup()

    def run_each(self, tests):
        """Run each test() (each with its own berthd): an exception fails
        that test and the next one still runs."""
        for fn in tests:
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                self.check(False, f"{fn.__name__} raised no exception", repr(e))

    def finish(self):
        for rep in SANITIZER_REPORTS:
            self.check(False, "berthd ran clean under the sanitizers", rep)
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        sys.exit(1 if self.failed or not self.passed else 0)


def slurm_env(tmp, job="4242", extra=None):
    """A fake job whose first node is this host."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tmp,
        "SLURM_JOB_ID": job,
        "SLURMD_NODENAME": HOST,
        "SLURM_JOB_NODELIST": f"{HOST},nid[000002-000004]",
        "SLURM_JOB_NUM_NODES": "4",
    }
    env.update(extra or {})
    return env


class Daemon:
    def __init__(self, args=(), env=None, machine="pm-cpu", wrapper=()):
        if not BERTHD or not os.access(BERTHD, os.X_OK):
            print("BERTHD is not set to the built berthd")
            sys.exit(2)
        self.dir = tempfile.mkdtemp(prefix="berthd-test-")
        os.chmod(self.dir, 0o700)
        self.sock = os.path.join(self.dir, "s.sock")
        self.state = os.path.join(self.dir, "state")
        self.err = os.path.join(self.dir, "berthd.err")
        self.env = env if env is not None else slurm_env(self.dir)
        self.args = list(args)
        self.machine = machine
        self.wrapper = list(wrapper)     # e.g. valgrind and its options
        self.proc = None

    def command(self):
        cmd = self.wrapper + [BERTHD, "--foreground", "--socket", self.sock, "--state-dir", self.state]
        if self.machine:
            cmd += ["--machine", self.machine]
        return cmd + self.args

    def start(self, wait_s=5):
        self.proc = subprocess.Popen(self.command(), env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=open(self.err, "a"))
        for _ in range(int(wait_s * 40)):
            if self.proc.poll() is not None:
                raise RuntimeError(f"berthd exited at start ({self.proc.returncode}): {self.stderr()}")
            if connectable(self.sock):
                return self
            time.sleep(0.025)
        raise RuntimeError(f"berthd did not accept connections within {wait_s} s")

    def stderr(self):
        try:
            with open(self.err) as f:
                return f.read()[-600:]
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None

    def cleanup(self):
        self.stop()
        try:
            with open(self.err) as f:
                text = f.read()
        except OSError:
            text = ""
        for mark in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
            if mark in text:
                i = text.index(mark)
                SANITIZER_REPORTS.append(text[max(0, i - 200):i + 1500])
                break
        shutil.rmtree(self.dir, ignore_errors=True)

    def client(self, timeout=30):
        return Client(self.sock, timeout)


def with_srun(d, version="22.05.8"):
    """A Slurm 22.05 srun (which places: SCHEDULER; 20.02 binds CPUs:
    CPU_BINDING) on the PATH of berthd d, so that berthd renders launches;
    returns d."""
    bindir = os.path.join(d.dir, "bin")
    os.mkdir(bindir)
    with open(os.path.join(bindir, "srun"), "w") as f:
        f.write(f"#!/bin/sh\n[ \"$1\" = --version ] && echo 'slurm {version}'\nexit 0\n")
    os.chmod(os.path.join(bindir, "srun"), 0o755)
    d.env["PATH"] = bindir + ":" + d.env["PATH"]
    return d


def connectable(path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


class Client:
    """One connection. request() sends an op and returns its reply; events
    that arrive meanwhile are kept in .events."""

    def __init__(self, path, timeout=30):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(timeout)
        # A full listen backlog answers EAGAIN to a socket with a timeout
        # (it is non-blocking underneath): try again until the timeout.
        end = time.time() + timeout
        while True:
            try:
                self.s.connect(path)
                break
            except BlockingIOError:
                if time.time() > end:
                    raise
                time.sleep(0.01)
        self.f = self.s.makefile("rwb")
        self.next_id = 1
        self.events = []

    def send_raw(self, data):
        self.f.write(data)
        self.f.flush()

    def send(self, op, **fields):
        rid = fields.pop("id", None)
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"op": op, "id": rid}
        msg.update(fields)
        self.send_raw((json.dumps(msg) + "\n").encode())
        return rid

    def read(self):
        line = self.f.readline()
        if not line:
            raise EOFError("berthd closed the connection")
        return json.loads(line)

    def reply(self):
        while True:
            m = self.read()
            if "event" in m and "id" not in m:
                self.events.append(m)
                continue
            return m

    def request(self, op, **fields):
        self.send(op, **fields)
        return self.reply()

    def close(self):
        try:
            self.f.close()
        except OSError:
            pass
        self.s.close()


def wait_until(pred, timeout=10.0, step=0.02):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def status(d):
    c = d.client()
    try:
        return c.request("status")
    finally:
        c.close()


def held_cores(placement):
    """{(node, core)} of a placement."""
    out = set()
    for node, cores in zip(placement["nodes"], placement["cores"]):
        out.update((node, c) for c in cores)
    return out


def proc_status_kib(pid, field):
    """A memory figure of /proc/PID/status (VmRSS, VmHWM, ...), KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_kib(pid):
    """Resident memory of a process, KiB."""
    return proc_status_kib(pid, "VmRSS")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def raise_nofile(want):
    """Raise this process's descriptor limit towards want (up to the hard
    limit); returns the soft limit now in force."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def sanitized():
    """True when the berthd under test is built with AddressSanitizer, whose
    quarantine keeps freed memory resident: memory figures mean little."""
    try:
        with open(BERTHD, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False
