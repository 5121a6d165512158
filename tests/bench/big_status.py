#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berth status at the size of a real run: a berthd over a fake Slurm
allocation of NODES nodes (the environment of a batch job: SLURM_JOB_ID,
SLURM_JOB_NODELIST naming this host and nid000001..., SLURMD_NODENAME; the
pm-cpu machine gives 128 cores a node), LEASES detached leases (most of them
200 ranks on two nodes: one full, one with 56 cores free), and WAITING
requests of 64 to 96 cores on one node, which cannot fit now, each on its own
connection. Then times `berth status`, `--json` and
`--nodes all` (median of REPS runs) and says how large each output is, and
the status op itself on one connection: the whole reply (built each time:
the runs are spaced past the time berthd keeps a large reply; and as given
again from what it kept) and the person's view {"op":"status","brief":50},
each with its reply's size in bytes.
With --flood N, then N more connections each send two status requests and
never read (issue 24, finding 6): how long another client's status takes
meanwhile, berthd's CPU time until the flood has been answered or closed,
and its RSS before, during and 3 s after the flood's clients close.

usage: big_status.py [--nodes N] [--leases N] [--waiting N] [--reps N]
                     [--flood N] [--output-max MIB] [--json FILE] [--keep DIR]
  --output-max MIB  berthd's bound on unread output for all clients
  --keep DIR  leave berthd running with its socket at DIR/s.sock, print
              "ready" and wait for stdin to close (tests use it)
BERTH and BERTHD name the built tools. Timings are figures, never checks."""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--nodes", type=int, default=10000)
ap.add_argument("--leases", type=int, default=5000)
ap.add_argument("--waiting", type=int, default=1000)
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--flood", type=int, default=0)
ap.add_argument("--output-max", type=int, default=128)
ap.add_argument("--json")
ap.add_argument("--keep")
args = ap.parse_args()
BERTH, BERTHD = os.environ["BERTH"], os.environ["BERTHD"]
host = socket.gethostname().split(".")[0]

d = args.keep or tempfile.mkdtemp(prefix="berth-big-")
os.makedirs(d, exist_ok=True)
os.chmod(d, 0o700)
sock = os.path.join(d, "s.sock")
env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": d,
       "SLURM_JOB_ID": "777", "SLURMD_NODENAME": host,
       "SLURM_JOB_NODELIST": f"{host},nid[000001-{args.nodes - 1:06d}]",
       "SLURM_JOB_NUM_NODES": str(args.nodes)}
daemon = subprocess.Popen([BERTHD, "--foreground", "--socket", sock, "--state-dir",
                           os.path.join(d, "state"), "--machine", "pm-cpu",
                           "--max-connections", str(args.waiting + args.flood + 64),
                           "--output-max", str(args.output_max)],
                          env=env, stdout=subprocess.DEVNULL,
                          stderr=open(os.path.join(d, "berthd.err"), "w"))


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    return s


for _ in range(400):
    if daemon.poll() is not None:
        sys.exit(f"berthd exited: {open(os.path.join(d, 'berthd.err')).read()[-500:]}")
    try:
        connect().close()
        break
    except OSError:
        time.sleep(0.05)


def lines(s, n):
    buf = b""
    out = []
    while len(out) < n:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("berthd closed the connection")
        buf += chunk
        *done, buf = buf.split(b"\n")
        out += [json.loads(x) for x in done]
    return out


# The leases: pipelined on one connection, detached (no per-connection limit).
c = connect()
reqs = [json.dumps({"op": "acquire", "id": i, "ntasks": 200, "detach": True, "wait": False,
                    "label": (f"ocean_forward_ensemble_member_{i:05d}" if i % 5
                              else f"analysis_{i:05d}")}) + "\n"
        for i in range(args.leases)]
for k in range(0, len(reqs), 500):
    c.sendall("".join(reqs[k:k + 500]).encode())
    for rep in lines(c, len(reqs[k:k + 500])):
        if not rep.get("ok"):
            sys.exit(f"lease {rep.get('id')} refused: {rep['error']['message']}")
# The waiting: more nodes than are free, one connection each.
waiters = []
for i in range(args.waiting):
    w = connect()
    w.sendall((json.dumps({"op": "acquire", "id": 1, "cores": 64 + 16 * (i % 3),
                           "label": f"mesh_refinement_step_with_a_long_name_{i:04d}"})
               + "\n").encode())
    waiters.append(w)
probe = connect()
for _ in range(600):
    probe.sendall(b'{"op":"status","id":1}\n')
    st = lines(probe, 1)[0]
    if len(st["queue"]) == args.waiting:
        break
    time.sleep(0.1)
else:
    sys.exit(f"only {len(st['queue'])} of {args.waiting} requests wait")

def proc_field(name):
    with open(f"/proc/{daemon.pid}/status") as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return 0


def cpu_s():
    with open(f"/proc/{daemon.pid}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")


def timed_status():
    s = connect()
    t = time.perf_counter()
    s.sendall(b'{"op":"status","id":1}\n')
    lines(s, 1)
    s.close()
    return time.perf_counter() - t


def raw_reply(s):
    """One whole reply line, as bytes (without its newline)."""
    buf = bytearray()
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("berthd closed the connection")
        buf += chunk
    return bytes(buf[:-1])


def timed_op(s, req, rid):
    """Seconds from sending req (its id rid) to its whole reply, the reply's
    bytes and the reply."""
    line = (json.dumps(dict(req, id=rid), separators=(",", ":")) + "\n").encode()
    t = time.perf_counter()
    s.sendall(line)
    raw = raw_reply(s)
    took = time.perf_counter() - t
    rep = json.loads(raw)
    if not rep.get("ok") or rep.get("id") != rid:
        sys.exit(f"{req}: {rep.get('error', rep)}")
    return took, len(raw), rep


def time_ops(reps):
    """The status op, whole and brief 50, on one connection: median and
    fastest of reps, the reply's size."""
    s = connect()
    out = {}
    built, kept, size = [], [], 0
    for i in range(reps):
        # berthd keeps a large reply while nothing changes, at most 0.2 s or
        # twice its build, whichever is longer: wait that out to build anew
        time.sleep(max(0.3, 3 * (built[-1] if built else 0)))
        took, size, _ = timed_op(s, {"op": "status"}, 2 * i + 1)
        built.append(took)
        kept.append(timed_op(s, {"op": "status"}, 2 * i + 2)[0])
    out["op"] = {"median_s": statistics.median(built), "min_s": min(built), "bytes": size,
                 "kept_median_s": statistics.median(kept)}
    brief = []
    for i in range(reps):
        took, size, rep = timed_op(s, {"op": "status", "brief": 50}, 1000 + i)
        if rep.get("brief") != 50:
            sys.exit(f"status brief 50 answered without \"brief\": 50 ({sorted(rep)})")
        brief.append(took)
    out["op_brief"] = {"median_s": statistics.median(brief), "min_s": min(brief),
                       "bytes": size}
    s.close()
    return out


def flood(n):
    """n connections, two status requests each, never read."""
    rss0, hwm0, cpu0 = proc_field("VmRSS"), proc_field("VmHWM"), cpu_s()
    conns = []
    for _ in range(n):
        w = connect()
        w.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        w.sendall(b'{"op":"status","id":1}\n{"op":"status","id":2}\n')
        conns.append(w)
    try:
        other = timed_status()
    except RuntimeError:          # closed as the furthest behind
        other = None
    # answered or closed: berthd's CPU stops moving
    last, still = cpu_s(), 0
    while still < 5:
        time.sleep(0.2)
        now = cpu_s()
        still = still + 1 if now == last else 0
        last = now
    peak = proc_field("VmHWM")
    cpu = cpu_s() - cpu0
    for w in conns:
        w.close()
    time.sleep(3)
    after = proc_field("VmRSS")
    fig = {"clients": n, "other_status_s": other, "cpu_s": cpu, "rss_kib": rss0, "hwm_before_kib": hwm0,
           "peak_kib": peak, "after_kib": after, "status_after_s": timed_status()}
    said = f"{other:.2f} s" if other is not None else "closed as the furthest behind"
    print(f"flood: {n} clients x 2 status, never read: another status {said}, berthd CPU "
          f"{cpu:.1f} s, RSS {rss0 // 1024} (peak so far {hwm0 // 1024}) -> peak {peak // 1024} -> {after // 1024} MiB 3 s after they "
          f"closed; a status then {fig['status_after_s'] * 1000:.0f} ms")
    return fig


if args.keep:
    print("ready", flush=True)
    sys.stdin.read()
else:
    cenv = dict(os.environ, BERTH_SOCKET=sock)
    fig = {"nodes": args.nodes, "leases": args.leases, "waiting": args.waiting}
    for name, argv in (("status", []), ("status --json", ["--json"]),
                       ("status --nodes all", ["--nodes", "all"])):
        times, size, nlines = [], 0, 0
        for _ in range(args.reps):
            t = time.perf_counter()
            p = subprocess.run([BERTH, "status"] + argv, env=cenv, capture_output=True)
            times.append(time.perf_counter() - t)
            if p.returncode:
                sys.exit(f"berth {name}: {p.stderr.decode()}")
            size, nlines = len(p.stdout), p.stdout.count(b"\n")
        fig[name] = {"median_s": statistics.median(times), "min_s": min(times),
                     "bytes": size, "lines": nlines}
        print(f"berth {name:<20} median {statistics.median(times) * 1000:7.1f} ms  "
              f"{size:>10,} bytes  {nlines:>6,} lines")
    ops = time_ops(args.reps)
    op, brief = ops["op"], ops["op_brief"]
    fig.update({"op_ms": op["median_s"] * 1000, "op_min_ms": op["min_s"] * 1000,
                "op_bytes": op["bytes"], "op_kept_ms": op["kept_median_s"] * 1000,
                "op_brief_ms": brief["median_s"] * 1000,
                "op_brief_min_ms": brief["min_s"] * 1000, "op_brief_bytes": brief["bytes"]})
    print(f"op {'status':<23} median {fig['op_ms']:7.1f} ms  {op['bytes']:>10,} bytes  "
          f"(built each time; given again from what berthd kept {fig['op_kept_ms']:.1f} ms)")
    print(f"op {'status brief 50':<23} median {fig['op_brief_ms']:7.1f} ms  "
          f"{brief['bytes']:>10,} bytes")
    if args.flood:
        fig["flood"] = flood(args.flood)
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
