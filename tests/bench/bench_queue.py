#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The wait queue at the length of a big ensemble (issue 25): a berthd over
a fake Slurm allocation of NODES nodes of 128 cores (pm-cpu, as
big_status.py), every core held first by detached leases, then N requests
that must wait, each on its own connection, one at a time. For each
request: the time from sending it to its `waited` event on a watching
connection (berthd has queued it and answered nothing else meanwhile), and
berthd's CPU time (/proc/PID/stat) per request, by decile of N. Then the
status op while the queue is full, the time from the release of one filling
lease to the first grant it allows, a progress poll (the whole queue, or
one process's entries), and the time to drain: every filling
lease released, each waiter releasing its grant at once, until none waits.

Shapes: single (1 to 64 cores on one node), span (4 nodes x 64 tasks,
may-span), mixed (both, 1 in 8 spanning).

--per-conn K: K requests a connection, which pipelines them (hello with
pipeline; berthd --max-leases K), as one process of an ensemble would; the
default, 1, is one connection a request, one at a time.

usage: bench_queue.py [--nodes N] [--waiting N] [--shape S] [--per-conn K] [--json FILE]
BERTH and BERTHD name the built tools. Timings are figures, never checks."""
import argparse
import json
import os
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--nodes", type=int, default=16)
ap.add_argument("--waiting", type=int, default=1000)
ap.add_argument("--shape", choices=("single", "span", "mixed"), default="mixed")
ap.add_argument("--per-conn", type=int, default=1)
ap.add_argument("--json")
args = ap.parse_args()
BERTHD = os.environ["BERTHD"]
N = args.waiting
K = max(args.per_conn, 1)
NCONN = (N + K - 1) // K
host = socket.gethostname().split(".")[0]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = NCONN + 1024
if soft < want:
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(want, hard), max(want, hard)))
    except (ValueError, OSError):
        sys.exit(f"bench_queue: {NCONN} connections need {want} open files; the limit is {hard}")

d = tempfile.mkdtemp(prefix="berth-bq-")
os.chmod(d, 0o700)
sock = os.path.join(d, "s.sock")
env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": d,
       "SLURM_JOB_ID": "777", "SLURMD_NODENAME": host,
       "SLURM_JOB_NODELIST": (f"{host},nid[000001-{args.nodes - 1:06d}]" if args.nodes > 1
                              else host),
       "SLURM_JOB_NUM_NODES": str(args.nodes)}
daemon = subprocess.Popen([BERTHD, "--foreground", "--socket", sock, "--state-dir",
                           os.path.join(d, "state"), "--machine", "pm-cpu",
                           "--max-connections", str(NCONN + 64)]
                          + (["--max-leases", str(K)] if K > 1 else []),
                          env=env, stdout=subprocess.DEVNULL,
                          stderr=open(os.path.join(d, "berthd.err"), "w"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu():
    with open(f"/proc/{daemon.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mib():
    with open(f"/proc/{daemon.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    return s


class Lines:
    def __init__(self, s):
        self.s, self.buf, self.out = s, b"", []

    def get(self):
        while not self.out:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise RuntimeError("berthd closed the connection")
            self.buf += chunk
            *done, self.buf = self.buf.split(b"\n")
            self.out += [json.loads(x) for x in done]
        return self.out.pop(0)


for _ in range(400):
    if daemon.poll() is not None:
        sys.exit(f"berthd exited: {open(os.path.join(d, 'berthd.err')).read()[-500:]}")
    try:
        connect().close()
        break
    except OSError:
        time.sleep(0.05)

# Every core held: one detached lease a node, pipelined.
filler = connect()
fl = Lines(filler)
fill = []
for k in range(0, args.nodes, 500):
    batch = range(k, min(k + 500, args.nodes))
    filler.sendall("".join(json.dumps({"op": "acquire", "id": i, "cores": 128, "detach": True,
                                       "wait": False}) + "\n" for i in batch).encode())
    for _ in batch:
        rep = fl.get()
        if not rep.get("ok"):
            sys.exit(f"filling lease refused: {rep['error']['message']}")
        fill.append(rep["lease"])

watch = connect()
wl = Lines(watch)
watch.sendall(b'{"op":"watch","id":1}\n')
wl.get()


def request(i):
    spans = args.shape == "span" or (args.shape == "mixed" and i % 8 == 7)
    r = {"op": "acquire", "id": i, "label": f"w{i}"}
    if spans:
        r.update(ntasks=256, may_span_nodes=True)
    else:
        r.update(cores=1 + (i * 37) % 64)
    return (json.dumps(r) + "\n").encode()


waiters, lat, cpus = [], [], []
c0 = cpu()
t_sub = time.perf_counter()
for i in range(N):
    if i % K == 0:
        w = connect()
        if K > 1:
            w.sendall(b'{"op":"hello","id":"h","pipeline":true}\n')
            rep = Lines(w).get()
            if (rep.get("pipeline") or {}).get("max_waiting") != K:
                sys.exit(f"berthd does not pipeline {K} acquires: {rep}")
        waiters.append(w)
    t = time.perf_counter()
    w.sendall(request(i))
    while True:
        ev = wl.get()
        if ev.get("event") == "waited" and ev.get("label") == f"w{i}":
            break
        if ev.get("event") in ("granted", "refused") and ev.get("label") == f"w{i}":
            sys.exit(f"request w{i} did not wait: {ev}")
    lat.append(time.perf_counter() - t)
    if (i + 1) % max(N // 10, 1) == 0:
        cpus.append(cpu())
submit_s = time.perf_counter() - t_sub
fig = {"nodes": args.nodes, "waiting": N, "shape": args.shape, "per_conn": K,
       "connections": NCONN, "submit_s": submit_s,
       "rss_mib_full": rss_mib()}


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


dec = max(N // 10, 1)
fig["deciles"] = []
prev = c0
for k in range(10):
    part = lat[k * dec:(k + 1) * dec]
    if not part:
        break
    c = cpus[k] if k < len(cpus) else cpu()
    fig["deciles"].append({"p50_us": pct(part, 50) * 1e6, "p99_us": pct(part, 99) * 1e6,
                           "cpu_us_per_request": (c - prev) / len(part) * 1e6})
    prev = c

probe = connect()
pl = Lines(probe)
st = []
for _ in range(5):
    t = time.perf_counter()
    probe.sendall(b'{"op":"status","id":1}\n')
    rep = pl.get()
    st.append(time.perf_counter() - t)
fig["status_ms_full"] = statistics.median(st) * 1000
if len(rep.get("queue", [])) != N:
    sys.exit(f"status shows {len(rep.get('queue', []))} waiting, not {N}")

# A progress poll (berth run -v asks once a second) while the queue changes
# between polls (so no kept reply is given): the round trip of a no-op
# request and a poll, less that of the no-op alone. queue_only builds the
# whole queue; pid only that process's entries (this one's: up to 64).
def poll_us(req, n=100):
    t = time.perf_counter()
    for i in range(n):
        probe.sendall(b'{"op":"release","id":0,"lease":"L999999999"}\n')
        pl.get()
        if req:
            probe.sendall((json.dumps(dict(req, id=i)) + "\n").encode())
            pl.get()
    return (time.perf_counter() - t) / n * 1e6


noop = poll_us(None)
fig["poll_queue_only_us"] = poll_us({"op": "status", "queue_only": True}) - noop
fig["poll_pid_us"] = poll_us({"op": "status", "pid": os.getpid()}) - noop

# One filling lease released: how long until the first grant it allows.
t = time.perf_counter()
filler.sendall((json.dumps({"op": "release", "id": 1, "lease": fill.pop()}) + "\n").encode())
while True:
    ev = wl.get()
    if ev.get("event") == "granted":
        break
fig["first_grant_ms"] = (time.perf_counter() - t) * 1000

# Drain: every waiter releases its grant at once; the fill goes too.
sel = selectors.DefaultSelector()
buf, out = {}, {}
for w in waiters:
    w.setblocking(False)
    sel.register(w, selectors.EVENT_READ)
    buf[w], out[w] = b"", b""
t = time.perf_counter()
c1 = cpu()
filler.sendall("".join(json.dumps({"op": "release", "id": 2, "lease": x}) + "\n"
                       for x in fill).encode())
left = N
# releases go out as the socket takes them: a pipelining connection gets
# many grants at once, and berthd reads no more from a connection whose
# replies wait unread, so blocking on a send would stall both sides
while left:
    for key, mask in sel.select(timeout=60):
        w = key.fileobj
        if mask & selectors.EVENT_WRITE and out[w]:
            try:
                out[w] = out[w][w.send(out[w]):]
            except BlockingIOError:
                pass
        if mask & selectors.EVENT_READ:
            try:
                chunk = w.recv(1 << 20)
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                sys.exit("berthd closed a waiting connection")
            buf[w] += chunk or b""
            *done, buf[w] = buf[w].split(b"\n")
            for line in done:
                rep = json.loads(line)
                if "lease" in rep and rep.get("ok") and isinstance(rep.get("id"), int):
                    out[w] += (json.dumps({"op": "release", "id": "r", "lease": rep["lease"]})
                               + "\n").encode()
                    left -= 1
                elif not rep.get("ok"):
                    sys.exit(f"a waiter got {rep}")
        sel.modify(w, selectors.EVENT_READ | (selectors.EVENT_WRITE if out[w] else 0))
fig["drain_s"] = time.perf_counter() - t
fig["drain_cpu_us_per_request"] = (cpu() - c1) / N * 1e6

print(f"queue {args.shape:6} {args.nodes:>6} nodes, {N:>7} waiting"
      + (f" ({K} a connection)" if K > 1 else "") + f": submit {submit_s:7.2f} s, "
      f"p50 {fig['deciles'][0]['p50_us']:7.0f} -> {fig['deciles'][-1]['p50_us']:7.0f} us, "
      f"p99 {fig['deciles'][0]['p99_us']:7.0f} -> {fig['deciles'][-1]['p99_us']:7.0f} us, "
      f"CPU/request {fig['deciles'][0]['cpu_us_per_request']:6.0f} -> "
      f"{fig['deciles'][-1]['cpu_us_per_request']:6.0f} us; status {fig['status_ms_full']:.1f} ms, "
      f"first grant {fig['first_grant_ms']:.2f} ms, drain {fig['drain_s']:.2f} s, "
      f"RSS {fig['rss_mib_full']:.0f} MiB; progress poll: queue_only "
      f"{fig['poll_queue_only_us']:.0f} us, pid {fig['poll_pid_us']:.0f} us")
if args.json:
    json.dump(fig, open(args.json, "w"), indent=2)
for w in waiters:
    w.close()
probe.sendall(b'{"op":"shutdown","id":2,"mode":"force"}\n')
try:
    daemon.wait(30)
except subprocess.TimeoutExpired:
    daemon.kill()
    daemon.wait()
