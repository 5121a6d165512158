#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd's read path (server.c reads each socket itself, one read per
readable event, into an input buffer held to one line past the limit):
lines split across many small writes and across reads, pipelined batches
larger than one read, a full input buffer while a request waits (reading
stops, then resumes), the limit at 65536/65537 bytes, end-of-file in the
middle of a line, and, where strace can watch berthd, no FIONREAD ioctl and
no epoll_ctl per request. Then the polling before sleeping, where strace can
watch: berthd's after a read (--spin-us) and libberth's while it waits for a
reply (BERTH_CLIENT_SPIN_US).

usage: BERTH=build/client/berth BERTHD=build/daemon/berthd test_readpath.py
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CORES_PER_NODE, NODES, Checks, Daemon, status, wait_until  # noqa: E402

t = Checks()
ALL = CORES_PER_NODE * len(NODES)
BERTH = os.environ.get("BERTH", "")


def raw(d, timeout=20):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(d.sock)
    return s


def read_lines(s, n):
    """n reply lines (fewer if the connection ends or stalls)."""
    got, out = b"", []
    while len(out) < n:
        try:
            chunk = s.recv(65536)
        except (socket.timeout, OSError):
            break
        if not chunk:
            break
        got += chunk
        *lines, got = got.split(b"\n")
        out += [json.loads(x) for x in lines]
    return out


def read_to_eof(s):
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data, True
            data += chunk
    except socket.timeout:
        return data, False
    except OSError:
        return data, True


def test_split_writes(d):
    # one request in pieces of 1 to 7 bytes, each its own write
    s = raw(d)
    line = b'{"op":"acquire","id":"split","cores":3,"label":"pieces"}\n'
    i, k = 0, 0
    while i < len(line):
        n = 1 + k % 7
        s.sendall(line[i:i + n])
        i += n
        k += 1
        time.sleep(0.001)
    r = read_lines(s, 1)
    t.check(r and r[0].get("ok") and r[0].get("id") == "split" and r[0].get("label") == "pieces",
            "a request written in pieces of 1-7 bytes is served", str(r)[:200])
    # a long line (40000 bytes, more than one read) in 1000-byte writes,
    # then two requests whose newlines fall inside later writes
    pad = b"p" * (40000 - 60)
    long_line = b'{"op":"hello","id":"long","pad":"' + pad + b'"}\n'
    tail = b'{"op":"hello","id":"a"}\n{"op":"status","id":"b"}\n'
    data = long_line + tail
    for j in range(0, len(data), 1000):
        s.sendall(data[j:j + 1000])
    rs = read_lines(s, 3)
    t.check([r.get("id") for r in rs] == ["long", "a", "b"],
            "a 40000-byte line written in 1000-byte pieces, then two more, answered in order",
            str([r.get("id") for r in rs]))
    t.check(rs and rs[0].get("error", {}).get("code") == "invalid_request",
            "the long line is read whole (refused for its unknown field, not too_large)", str(rs[:1])[:200])
    s.close()
    t.check(wait_until(lambda: not status(d)["leases"]), "its lease ends with its connection")


def test_pipelined_batches(d):
    # 3000 requests (about 80 KB) in one write: more than one read, more
    # than the input buffer holds; answered in order, none lost or twice
    s = raw(d)
    n = 3000
    reqs = b"".join(b'{"op":"hello","id":%d}\n' % i for i in range(n))
    th = threading.Thread(target=s.sendall, args=(reqs,))
    th.start()
    rs = read_lines(s, n)
    th.join(20)
    t.check([r.get("id") for r in rs] == list(range(n)) and all(r.get("ok") for r in rs),
            "3000 pipelined requests in one write are answered in order", f"{len(rs)} replies")
    s.close()


def test_full_input_while_waiting(d):
    # A request that waits (all cores held) with 150 KB of requests behind
    # it: berthd reads until its input holds a full line, stops, and reads
    # the rest once the wait is over.
    blocker = d.client()
    b = blocker.request("acquire", ntasks=ALL, cpus_per_task=1)
    t.check(b.get("ok"), "a blocker holds every core", str(b)[:200])
    s = raw(d)
    n = 6000
    reqs = [b'{"op":"acquire","id":"w","cores":2,"label":"waiter"}\n']
    reqs += [b'{"op":"hello","id":%d}\n' % i for i in range(n)]
    data = b"".join(reqs)
    t.check(len(data) > 2 * 65537, "the pipelined requests are over twice the input limit", str(len(data)))
    th = threading.Thread(target=s.sendall, args=(data,))
    th.start()
    time.sleep(0.5)
    t.check(d.alive() and len(status(d)["leases"]) == 1, "the acquire waits (the blocker alone holds a lease)")
    blocker.request("release", lease=b["lease"])
    rs = read_lines(s, n + 1)
    th.join(20)
    t.check(rs[:1] and rs[0].get("ok") and rs[0].get("label") == "waiter",
            "the waiting acquire is granted once the cores are free", str(rs[:1])[:200])
    t.check([r.get("id") for r in rs[1:]] == list(range(n)) and all(r.get("ok") for r in rs[1:]),
            "then every request behind it is read and answered, in order",
            f"{len(rs)} replies; ids {[r.get('id') for r in rs[1:4]]}...")
    s.close()
    blocker.close()
    t.check(wait_until(lambda: not status(d)["leases"]), "the leases end with their connections")


def test_line_limit(d):
    # 65536 bytes and its newline: read (an ordinary refusal)
    head = b'{"op":"status","id":9,"pad":"'
    tail = b'"}'
    line = head + b"y" * (65536 - len(head) - len(tail)) + tail
    s = raw(d)
    s.sendall(line + b"\n" + b'{"op":"hello","id":10}\n')
    rs = read_lines(s, 2)
    t.check([r.get("id") for r in rs] == [9, 10] and rs[0].get("error", {}).get("code") == "invalid_request",
            "a line of exactly 65536 bytes is read, and the next one after it", str(rs)[:200])
    s.close()
    # 65537 bytes without a newline, written slowly: too_large, then closed
    s = raw(d)
    big = b"z" * 65537
    for j in range(0, len(big), 5000):
        s.sendall(big[j:j + 5000])
    data, closed = read_to_eof(s)
    s.close()
    first = json.loads(data.split(b"\n")[0]) if data else {}
    msg = first.get("error", {}).get("message", "")
    t.check(first.get("error", {}).get("code") == "too_large" and "65537 bytes read" in msg,
            "65537 bytes without a newline are answered too_large, counting what was read", str(data[:300]))
    t.check(closed, "and the connection is closed")
    # 65537 bytes and a newline, after a request that is answered first
    s = raw(d)
    try:
        s.sendall(b'{"op":"hello","id":1}\n' + b"x" * 65537 + b"\n" + b'{"op":"hello","id":2}\n')
    except OSError:
        pass
    data, closed = read_to_eof(s)
    s.close()
    rs = [json.loads(x) for x in data.split(b"\n") if x]
    t.check(len(rs) == 2 and rs[0].get("id") == 1 and rs[1].get("error", {}).get("code") == "too_large",
            "a line one byte over the limit after a good one: the good one answered, then too_large",
            str(rs)[:300])
    t.check(closed, "and nothing after the oversized line is served", str(rs)[:300])
    t.check(d.alive(), "berthd lives")


def test_eof_mid_line(d):
    # a client that holds a lease and closes in the middle of a line
    s = raw(d)
    s.sendall(b'{"op":"acquire","id":1,"cores":4,"label":"midline"}\n')
    r = read_lines(s, 1)
    t.check(r and r[0].get("ok"), "a lease is granted", str(r)[:200])
    s.sendall(b'{"op":"release","id":2,"lea')
    time.sleep(0.2)
    s.close()
    t.check(wait_until(lambda: not status(d)["leases"]),
            "a client that closes in the middle of a line: its lease ends, nothing is served")
    # half-close in the middle of a line: that last line is served
    s = raw(d)
    s.sendall(b'{"op":"hello","id":"a"}\n{"op":"hel')
    time.sleep(0.1)
    s.sendall(b'lo","id":"b"}')
    s.shutdown(socket.SHUT_WR)
    data, closed = read_to_eof(s)
    s.close()
    rs = [json.loads(x) for x in data.split(b"\n") if x]
    t.check([r.get("id") for r in rs] == ["a", "b"] and closed,
            "a half-close in the middle of a line: both lines served, then end-of-file", str(data[:200]))
    # a half-close with a partial oversized line: too_large
    s = raw(d)
    s.sendall(b"w" * 70000)
    s.shutdown(socket.SHUT_WR)
    data, closed = read_to_eof(s)
    s.close()
    t.check(b'"too_large"' in data and closed, "an oversized last line before a half-close: too_large",
            str(data[:200]))
    t.check(d.alive(), "berthd lives")


def strace_counts(path):
    """Counts of each syscall name in an strace -o file."""
    counts = {}
    with open(path) as f:
        for line in f:
            parts = line.split(None, 1)
            rest = parts[1] if len(parts) > 1 and parts[0].isdigit() else line
            name = rest.split("(", 1)[0].strip()
            if name and name.isidentifier():
                counts[name] = counts.get(name, 0) + 1
            if "FIONREAD" in line:
                counts["FIONREAD"] = counts.get("FIONREAD", 0) + 1
    return counts


def attach_strace(pid, trace, out):
    """strace -f -e trace=... -o out attached to pid; None (and a skip line)
    where strace is missing or cannot attach."""
    strace = shutil.which("strace")
    if not strace:
        print("skipped: no strace")
        return None
    st = subprocess.Popen([strace, "-f", "-e", "trace=" + trace, "-o", out, "-p", str(pid)],
                          stderr=subprocess.PIPE, text=True)
    attached = st.stderr.readline()
    if "attached" not in attached:
        st.wait()
        print(f"skipped: strace cannot attach here ({attached.strip()})")
        return None
    return st


def traced_client(d, trace):
    """A client of d (one hello answered) with strace following berthd's
    `trace` calls into a file, the attach settled: (client, file, strace),
    or None (and a skip line) where strace cannot run."""
    c = d.client()
    c.request("hello")
    out = os.path.join(d.dir, "strace.out")
    st = attach_strace(d.proc.pid, trace, out)
    if not st:
        return None
    c.request("hello")
    time.sleep(0.2)
    return c, out, st


def acquire_release(c, pairs):
    for _ in range(pairs):
        r = c.request("acquire", cores=1)
        c.request("release", lease=r["lease"])


def zero_timeout_polls(path):
    """epoll_wait calls with a zero timeout (polls) in an strace -o file."""
    with open(path) as f:
        return sum(1 for line in f if "epoll_wait" in line and re.search(r", 0\) += ", line))


def test_daemon_spin():
    """After a read berthd polls for --spin-us before it sleeps (epoll_wait
    with a zero timeout until the next request comes); with 0 it sleeps at
    once. 100 acquire+release pairs each way."""
    for bad in ("20000", "-1", "abc"):
        r = subprocess.run([os.environ["BERTHD"], "--spin-us", bad], capture_output=True,
                           text=True, timeout=30)
        t.check(r.returncode == 2 and f"--spin-us wants a whole number from 0 to 10000, got '{bad}'"
                in r.stderr, f"--spin-us {bad} is refused, naming the value", r.stderr)
    if len(os.sched_getaffinity(0)) < 2:
        print("skipped: one CPU (berthd does not poll there)")
        return
    pairs = 100
    polls, idle_polls = {}, {}
    for spin in ("30", "0"):
        d = Daemon(args=("--spin-us", spin))
        try:
            d.start()
            traced = traced_client(d, "epoll_wait")
            if not traced:
                return
            c, out, st = traced
            before = zero_timeout_polls(out)
            acquire_release(c, pairs)
            after = zero_timeout_polls(out)
            # then idle: it sleeps (no poll while no request comes)
            time.sleep(0.3)
            idle = zero_timeout_polls(out)
            time.sleep(0.5)
            idle_polls[spin] = zero_timeout_polls(out) - idle
            st.send_signal(2)
            st.communicate(timeout=10)
            c.close()
            polls[spin] = after - before
        finally:
            d.cleanup()
    t.check(polls["30"] >= pairs, "--spin-us 30: berthd polls between requests",
            str(polls))
    t.check(polls["0"] < pairs // 2, "--spin-us 0: berthd sleeps at once", str(polls))
    t.check(idle_polls == {"30": 0, "0": 0}, "an idle berthd does not poll",
            str(idle_polls))


def client_waits(path):
    """[(seconds from a wait's first non-blocking read to its sleep, reads)]
    for each wait in an `strace -ttt` file: the non-blocking reads
    (MSG_DONTWAIT) a wait made on the socket before it slept there, in poll
    or in a blocking read (strace stamps a call when it is entered)."""
    waits, first, reads, fd = [], None, 0, None
    with open(path) as f:
        for line in f:
            m = re.match(r"\d+\s+(\d+\.\d+) (\w+)\((\d+|\[\{fd=(\d+))", line)
            if not m:
                continue
            ts, call = float(m.group(1)), m.group(2)
            on = m.group(4) or m.group(3)
            if call == "recvfrom" and "MSG_DONTWAIT" in line:
                if first is None:
                    first, fd = ts, on
                reads += 1
            elif call in ("poll", "read") and first is not None and on == fd:
                waits.append((round(ts - first, 6), reads))
                first, reads = None, 0
    return waits


def test_client_spin():
    """libberth (here in `berth acquire`, waiting behind a lease that holds
    every core) polls for its reply before it sleeps: with
    BERTH_CLIENT_SPIN_US=10000 its first sleep comes no sooner than the spin
    after its first non-blocking read; with 0 it sleeps after one read.
    Judged by when it slept and how often it read before, not by how many
    polls fit in the spin: that count falls on a loaded machine."""
    if len(os.sched_getaffinity(0)) < 2:
        print("skipped: one CPU (libberth does not poll there)")
        return
    strace = shutil.which("strace")
    if not strace:
        print("skipped: no strace")
        return
    d = Daemon()
    waits = {}
    try:
        d.start()
        c = d.client()
        held = c.request("acquire", cores=ALL, may_span_nodes=True)
        t.check(held.get("ok") is True, "a lease holds every core", str(held))
        for spin in ("10000", "0"):
            out = os.path.join(d.dir, f"strace-{spin}.out")
            env = dict(os.environ, BERTH_SOCKET=d.sock, BERTH_CLIENT_SPIN_US=spin)
            r = subprocess.run([strace, "-f", "-ttt", "-e", "trace=recvfrom,read,poll", "-o", out,
                                BERTH, "acquire", "--cores", "1", "--timeout", "0.5"],
                               env=env, capture_output=True, text=True, timeout=60)
            t.check(r.returncode != 0 and "timeout" in r.stderr,
                    f"spin {spin}: the acquire waits, then times out", r.stderr[-300:])
            waits[spin] = client_waits(out)
        c.close()
    finally:
        d.cleanup()
    spun = waits["10000"]
    # the spin's deadline is set just before the first read: allow half of
    # it for a deschedule between the two, which only a loaded machine has
    t.check(bool(spun) and spun[0][0] >= 0.005 and spun[0][1] >= 1,
            "BERTH_CLIENT_SPIN_US=10000: libberth polls for 10 ms before it sleeps",
            str(spun[:4]))
    t.check(bool(waits["0"]) and all(n == 1 for _, n in waits["0"]),
            "BERTH_CLIENT_SPIN_US=0: each wait reads once, then sleeps", str(waits["0"][:4]))


def test_syscalls():
    """One client, 200 acquire+release pairs: berthd asks no FIONREAD and
    arranges no epoll_ctl per request (one read per request, the reply
    written at once). Needs strace and the right to attach to berthd:
    skipped without."""
    d = Daemon()
    try:
        d.start()
        traced = traced_client(d, "ioctl,read,readv,epoll_ctl")
        if not traced:
            return
        c, out, st = traced
        before = strace_counts(out)
        pairs = 200
        acquire_release(c, pairs)
        time.sleep(0.2)
        after = strace_counts(out)
        st.send_signal(2)
        st.communicate(timeout=10)
        c.close()
        diff = {k: after.get(k, 0) - before.get(k, 0) for k in after}
        t.check(diff.get("FIONREAD", 0) == 0 and diff.get("ioctl", 0) == 0,
                "berthd reads requests without asking FIONREAD first", str(diff))
        t.check(diff.get("epoll_ctl", 0) < 10, "and without an epoll_ctl per request", str(diff))
        t.check(diff.get("read", 0) + diff.get("readv", 0) <= 2 * pairs + 10,
                "one read per request", str(diff))
    finally:
        d.cleanup()


def main():
    t.run_on(Daemon(), (test_split_writes, test_pipelined_batches, test_full_input_while_waiting,
                        test_line_limit, test_eof_mid_line))
    t.run_each((test_syscalls, test_daemon_spin, test_client_spin))
    t.finish()


main()
