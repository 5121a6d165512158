#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd's protocol edges: malformed and oversized lines answered without
harming other clients, pipelining, double release, another connection's
lease, another uid refused by SO_PEERCRED, status and resources JSON,
hello, render, watch.

usage: BERTHD=build/daemon/berthd test_protocol.py
"""
import json
import os
import pwd
import socket
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CORES_PER_NODE, NODES, Checks, Daemon, status, with_srun  # noqa: E402

t = Checks()


def test_malformed(d):
    bystander = d.client()
    lease = bystander.request("acquire", cores=4, label="bystander")
    t.check(lease.get("ok"), "a bystander holds a lease", str(lease))
    c = d.client()
    cases = [
        (b"{not json\n", None),
        (b'{"op": 42, "id": 1}\n', 1),
        (b'{"op": "acquire", "id": 2, "cores": -3}\n', 2),
        (b'{"op": "no-such-op", "id": 3}\n', 3),
        (b'{"op": "status", "id": 4, "pad": 1}\n', 4),
        (b'{"op": "release", "id": 5}\n', 5),
        (b'{"op": "acquire", "id": 6, "ttl": 60}\n', 6),
        (b'[1, 2, 3]\n', None),
        (b'\n', None),
        (b'{"op": "acquire", "id": "s", "cores": 1, "memroy": 5}\n', "s"),
        (b'{"op": "acquire", "id": 7, "label": "a\\u0000b", "cores": 1}\n', None),  # NUL: not JSON
        (b'\xff\xfe{}\n', None),
    ]
    for line, rid in cases:
        c.send_raw(line)
        r = c.reply()
        t.check(r.get("ok") is False and r.get("error", {}).get("code") == "invalid_request"
                and r.get("id") == rid, f"malformed line {line[:40]!r} gets invalid_request "
                f"with id {rid!r}", str(r))
    r = c.request("status")
    t.check(r.get("ok") is True, "the connection stays usable after bad lines", str(r))
    r = bystander.request("status")
    t.check(r.get("ok") and any(x["lease"] == lease["lease"] for x in r["leases"]),
            "the bystander is unharmed", str(r)[:200])
    c.close()
    bystander.request("release", lease=lease["lease"])
    bystander.close()


def test_oversized(d):
    bystander = d.client()
    held = bystander.request("acquire", cores=2)
    c = socket.socket(socket.AF_UNIX)
    c.settimeout(10)
    c.connect(d.sock)
    try:
        c.sendall(b'{"op":"status","id":5,"pad":"' + b"x" * (4 << 20) + b'"}\n')
    except OSError:
        pass
    data, closed = b"", False
    try:
        while True:
            chunk = c.recv(65536)
            if not chunk:
                closed = True
                break
            data += chunk
    except socket.timeout:
        pass
    except OSError:
        closed = True
    c.close()
    first = json.loads(data.split(b"\n")[0]) if data else {}
    t.check(first.get("ok") is False and first.get("error", {}).get("code") == "too_large"
            and first.get("id") is None, "an oversized line is answered too_large", str(data[:200]))
    t.check(closed, "the connection is closed after an oversized line")
    t.check(d.alive(), "berthd survives an oversized line")
    r = bystander.request("release", lease=held["lease"])
    t.check(r.get("ok"), "another client is unharmed by an oversized line", str(r))
    bystander.close()
    # exactly at the limit: an ordinary error, not too_large
    c = d.client()
    head = b'{"op":"status","id":9,"pad":"'
    tail = b'"}'
    line = head + b"y" * (65536 - len(head) - len(tail)) + tail
    c.send_raw(line + b"\n")
    r = c.reply()
    t.check(r.get("error", {}).get("code") == "invalid_request" and r.get("id") == 9,
            "a line of exactly 65536 bytes is read (and refused for its unknown field)", str(r)[:200])
    t.check(c.request("status").get("ok"), "and the connection stays open")
    c.close()


def test_reply_survives_late_input(d):
    """A client still sending after berthd decided to close (here: it keeps
    writing after an oversized line) must read the error reply, then a clean
    end of file: closing with unread input would reset the connection and
    destroy the reply (seen as a flaky 'forbidden' test before)."""
    c = socket.socket(socket.AF_UNIX)
    c.settimeout(10)
    c.connect(d.sock)
    # berthd reads past the limit, answers too_large and stops reading: the
    # rest of what was sent stays unread in the socket
    try:
        c.sendall(b'{"op":"status","id":6,"pad":"' + b"z" * 70000 + b'"}\n'
                  + b'{"op":"status","id":7}\n' * 3000)
    except OSError:
        pass
    time.sleep(0.5)
    data, err = b"", None
    try:
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError as e:
        err = e
    c.close()
    first = json.loads(data.split(b"\n")[0]) if data else {}
    t.check(first.get("error", {}).get("code") == "too_large" and err is None,
            "the reply arrives and the connection ends cleanly though the client kept "
            "writing", f"{data[:120]!r} {err!r}")


def test_pipelining(d):
    c = d.client()
    c.send_raw(b'{"op":"hello","id":1}\n{"op":"status","id":2}\n{"op":"bad","id":3}\n'
               b'{"op":"acquire","id":4,"cores":1}\n')
    rs = [c.reply() for _ in range(4)]
    t.check([r.get("id") for r in rs] == [1, 2, 3, 4], "pipelined requests are answered in order",
            str([r.get("id") for r in rs]))
    t.check(rs[3].get("ok"), "the pipelined acquire is granted", str(rs[3]))
    c.close()


def test_pipelined_slow_reader(d):
    """Replies leave berthd as each batch of lines is served, and what the
    socket will not take is written as the client reads (server.c). A client
    that pipelines 6000 mixed requests (over half a megabyte of replies, more
    than the socket holds), stops sending, and only then reads, slowly and
    in small pieces, must get every reply, in order, none twice."""
    c = socket.socket(socket.AF_UNIX)
    c.connect(d.sock)
    reqs, n = [], 0
    for i in range(1, 6001):
        n += 1
        k = i % 4
        if k == 1 and i < 800:      # 200 leases: all granted at once
            reqs.append(b'{"op":"acquire","id":%d,"cores":1,"label":"p%d"}\n' % (n, n))
        elif k == 2:
            reqs.append(b'{"op":"hello","id":"h%d"}\n' % n)
        else:                        # refused: not_found
            reqs.append(b'{"op":"release","id":%d,"lease":"L999999"}\n' % n)
    data = b"".join(reqs)
    sender_err = []

    def send_all():
        try:
            c.sendall(data)
        except OSError as e:
            sender_err.append(e)
    import threading
    th = threading.Thread(target=send_all)
    th.start()
    th.join(10)               # berthd reads it all, answers, fills the socket
    time.sleep(0.3)
    c.settimeout(20)
    got, ids, size = b"", [], 0
    while len(ids) < n:
        try:
            chunk = c.recv(3000)
        except TimeoutError:
            break
        if not chunk:
            break
        size += len(chunk)
        got += chunk
        *lines, got = got.split(b"\n")
        ids += [json.loads(x).get("id") for x in lines]
        time.sleep(0.0002)
    th.join(20)
    want = [i if i % 4 != 2 else f"h{i}" for i in range(1, n + 1)]
    t.check(not sender_err and ids == want and size > 512 * 1024,
            "a slow reader of 6000 pipelined requests gets every reply once, in order",
            f"{len(ids)} replies, {size} bytes; first difference at "
            f"{next((j for j, (a, b) in enumerate(zip(ids, want)) if a != b), None)} {sender_err}")
    c.close()
    # the leases of that connection ended with it
    ok = False
    for _ in range(50):
        if not [x for x in status(d)["leases"] if (x.get("label") or "").startswith("p")]:
            ok = True
            break
        time.sleep(0.1)
    t.check(ok, "its leases end when it closes")


def test_grant_to_waiting_client(d):
    """A grant made while serving another connection (its release) reaches
    the waiting client at once, though that client sends nothing more; so
    do the events to a watcher."""
    holder, waiter, watcher = d.client(), d.client(), d.client()
    r = watcher.request("watch")
    t.check(r.get("ok"), "a watcher watches", str(r))
    held = holder.request("acquire", cores=CORES_PER_NODE, may_span_nodes=False)
    rest = [holder.request("acquire", cores=CORES_PER_NODE) for _ in range(len(NODES) - 1)]
    t.check(held.get("ok") and all(x.get("ok") for x in rest), "the holder takes every core",
            str(held)[:200])
    waiter.send_raw(b'{"op":"acquire","id":"w","cores":2}\n')
    time.sleep(0.3)
    t0 = time.monotonic()
    r = holder.request("release", lease=held["lease"])
    t.check(r.get("ok"), "the holder releases a node", str(r))
    g = waiter.reply()
    t.check(g.get("id") == "w" and g.get("ok") is True and time.monotonic() - t0 < 5,
            "the waiting client gets its grant without sending anything more", str(g)[:200])
    evs = []
    while len(evs) < 4 + len(NODES):
        e = watcher.read()
        evs.append(e.get("event"))
        if e.get("event") == "granted" and e.get("lease") == g.get("lease"):
            break
    t.check("released" in evs and evs[-1] == "granted", "the watcher sees the release and the grant",
            str(evs))
    for x in rest:
        holder.request("release", lease=x["lease"])
    waiter.request("release", lease=g["lease"])
    for c in (holder, waiter, watcher):
        c.close()


def test_watchers_come_and_go(d):
    """Watchers are kept apart from the other connections (an event walks
    them only): four watch, the first, a middle one and the last to come
    close, one more comes; every watcher still open, and only those, gets
    every event, among many connections that do not watch."""
    others = [d.client() for _ in range(20)]
    for o in others:
        o.request("hello")
    ws = []
    for _ in range(4):
        w = d.client()
        t.check(w.request("watch").get("ok"), "a watcher watches")
        ws.append(w)
    for k in (3, 1, 0):
        ws.pop(k).close()
    w = d.client()
    t.check(w.request("watch").get("ok"), "one more watches after three closed")
    ws.append(w)
    c = d.client()
    r = c.request("acquire", cores=1, label="seen")
    c.request("release", lease=r.get("lease"))
    c.close()
    for i, w in enumerate(ws):
        evs = []
        while len(evs) < 2:
            evs.append(w.read())
        t.check([(e.get("event"), e.get("lease")) for e in evs] == [("granted", r.get("lease")),
                                                                     ("released", r.get("lease"))],
                f"watcher {i + 1} of {len(ws)} gets the grant and the release", str(evs)[:300])
    for x in ws + others:
        x.close()


def test_release_rules(d):
    a, b = d.client(), d.client()
    r = a.request("acquire", cores=3, label="mine")
    before = status(d)["allocation"]["totals"]["cores_used"]
    rb = b.request("release", lease=r["lease"])
    t.check(rb.get("error", {}).get("code") == "forbidden",
            "another connection cannot release a connection-bound lease", str(rb))
    t.check(a.request("release", lease=r["lease"]).get("ok"), "the holder releases it")
    again = a.request("release", lease=r["lease"])
    t.check(again.get("ok") is False and again["error"]["code"] == "not_found"
            and r["lease"] in again["error"]["message"], "a double release is not_found, naming the lease",
            str(again))
    t.check(a.request("release", lease="L999999").get("error", {}).get("code") == "not_found",
            "an unknown lease is not_found")
    t.check(a.request("release", lease="bogus").get("error", {}).get("code") == "not_found",
            "a malformed lease id is not_found")
    after = status(d)["allocation"]["totals"]["cores_used"]
    t.check(after == before - 3, "the double release changed nothing", f"{before} -> {after}")
    a.close()
    b.close()


def test_status_json(d):
    a = d.client()
    r = a.request("acquire", ntasks=2 * CORES_PER_NODE, cpus_per_task=1, label="wide", env=True)
    t.check(r.get("ok") and len(r["placement"]["nodes"]) == 2, "a wide step spans two nodes", str(r)[:300])
    env = r.get("env", {})
    t.check(env.get("BERTH_LEASE") == r["lease"] and env.get("BERTH_NODES") == ",".join(r["placement"]["nodes"])
            and env.get("BERTH_CORES") == f"0-{CORES_PER_NODE - 1}" and env.get("BERTH_GPUS") == ""
            and env.get("BERTH_MEMORY_MB", "").isdigit(), "the grant carries the BERTH_* variables", str(env))
    b = d.client()
    b.send("acquire", ntasks=4 * CORES_PER_NODE, cpus_per_task=1, label="blocked")
    import time
    time.sleep(0.2)
    s = status(d)
    alloc = s.get("allocation", {})
    t.check(s.get("ok") and s.get("version") == 1 and s.get("server", "").startswith("berthd"),
            "status names the server and protocol", str(s)[:200])
    t.check(alloc.get("system") == "slurm" and alloc.get("job_id") == "4242" and alloc.get("machine") == "pm-cpu"
            and "placement_support" in alloc, "status names system, job, machine, placement support",
            str(alloc)[:300])
    nodes = alloc.get("nodes", [])
    t.check([n["name"] for n in nodes] == NODES, "status lists the nodes", str([n.get("name") for n in nodes]))
    t.check(sum(n["cores_used"] for n in nodes) == 2 * CORES_PER_NODE
            and all(n["cores_used"] + n["cores_free"] == n["ncores"] for n in nodes),
            "per-node used and free cores add up", str(nodes)[:300])
    ls = s.get("leases", [])
    t.check(len(ls) == 1 and ls[0]["label"] == "wide" and ls[0]["age_s"] >= 0 and ls[0]["holder"] == "connection",
            "status lists the lease with label and age", str(ls)[:300])
    q = s.get("queue", [])
    t.check(len(q) == 1 and q[0]["label"] == "blocked" and q[0]["why"] and q[0]["waited_s"] >= 0,
            "status lists the waiting request with its reason", str(q))
    dm = s.get("daemon", {})
    t.check(dm.get("uptime_s", -1) >= 0 and dm.get("version") and dm.get("socket") == d.sock,
            "status describes the daemon", str(dm))
    res = a.request("resources", lease=r["lease"])
    t.check(res.get("ok") and res["totals"]["cores"] == 2 * CORES_PER_NODE and len(res["nodes"]) == 2,
            "resources of a lease is its subset", str(res)[:300])
    whole = a.request("resources")
    t.check(whole.get("ok") and whole["totals"]["cores"] == 4 * CORES_PER_NODE,
            "resources without a lease is the allocation", str(whole)[:200])
    t.check(a.request("resources", lease="L424242").get("error", {}).get("code") == "not_found",
            "resources of an unknown lease is not_found")
    b.close()
    a.close()


def test_hello_render(d):
    c = d.client()
    h = c.request("hello", version=1)
    t.check(h.get("ok") and h.get("version") == 1, "hello answers the version", str(h))
    h2 = c.request("hello", version=2)
    t.check(h2.get("error", {}).get("code") == "unsupported_version", "an unknown version is refused", str(h2))
    r = c.request("render", placement={"nodes": [NODES[0]], "cores": [[0, 1]], "gpus": 0}, argv=["./a"])
    t.check("ok" in r and (r.get("ok") and r.get("argv") or r.get("error", {}).get("code") == "invalid_request"),
            "render answers with a launch or a reasoned refusal", str(r))
    # the checks the stateless berth render makes too: what no node holds
    r = c.request("render", placement={"nodes": [NODES[0]], "cores": [[0]], "gpus": 1, "gpu_ids": [0]},
                  argv=["./a"])
    t.check(r.get("ok") is False and "GPU" in r["error"]["message"] and "none" in r["error"]["message"],
            "render refuses GPUs where nodes have none", str(r))
    r = c.request("render", placement={"nodes": [NODES[0]], "cores": [[0]]}, cpus_per_task=10 ** 6,
                  argv=["./a"])
    t.check(r.get("ok") is False and "needs 1000000 cores for each task" in r["error"]["message"],
            "render refuses more cores per task than a node holds", str(r))
    # no node names: the launcher's node, no -w
    r = c.request("render", placement={"cores": [[0]]}, argv=["./a"])
    t.check(r.get("ok") is False or (r["argv"][-1] == "./a" and "-w" not in r["argv"]),
            "render of an unnamed placement", str(r))
    c.close()


def test_other_uid(d):
    if os.getuid() != 0:
        print("skipped: the other-uid check needs root (to become nobody)")
        return
    nobody = pwd.getpwnam("nobody")
    # Let nobody reach the socket; only SO_PEERCRED stands in the way then.
    os.chmod(d.dir, 0o711)
    os.chmod(d.sock, 0o666)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        out = {}
        try:
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(5)
            s.connect(d.sock)
            f = s.makefile("rwb")
            try:
                f.write(b'{"op":"status","id":1}\n')
                f.flush()
            except OSError:
                pass
            out["reply"] = json.loads(f.readline() or "null")
            out["eof"] = f.readline() == b""
        except Exception as e:  # noqa: BLE001
            out["exception"] = repr(e)
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.waitpid(pid, 0)
    os.chmod(d.dir, 0o700)
    out = json.loads(data or b"{}")
    rep = out.get("reply") or {}
    t.check(rep.get("ok") is False and rep.get("error", {}).get("code") == "forbidden",
            "another uid is refused with forbidden (SO_PEERCRED), not a permission error", str(out))
    t.check(out.get("eof") is True, "and its connection is closed", str(out))
    t.check(status(d).get("ok"), "berthd still serves its own user")


def test_rendering():
    """With a Slurm that places (22.05: SCHEDULER), a grant carries its launch."""
    d = Daemon()
    try:
        with_srun(d).start()
        c = d.client()
        s = c.request("status")
        t.check(s["allocation"]["placement_support"] == "SCHEDULER" and s["allocation"]["layout"] == "scheduler",
                "the launcher's caps are detected at start", str(s["allocation"])[:300])
        r = c.request("acquire", ntasks=4, cpus_per_task=2, memory=1000, argv=["./model", "--x"], env=True)
        argv = r.get("argv", [])
        t.check(r.get("ok") and argv[:1] == ["srun"] and argv[-2:] == ["./model", "--x"]
                and "--exact" in argv and "--gres=none" in argv and "--mem=1000M" in argv
                and argv[argv.index("-w") + 1] == ",".join(r["placement"]["nodes"]),
                "a grant with argv carries the rendered placed launch", str(argv))
        t.check(r.get("env", {}).get("BERTH_MEMORY_MB") == "1000", "BERTH_MEMORY_MB is the declared cap",
                str(r.get("env")))
        t.check("SLURM_MEM_PER_NODE" in r.get("env_delta", {}).get("unset", []),
                "the launch comes with its environment delta", str(r.get("env_delta")))
        loc = c.request("acquire", cores=2, local=True, argv=["python3", "x.py"], env=True)
        la = loc.get("argv", [])
        t.check(loc.get("ok") and la[:1] == ["srun"] and la[-2:] == ["python3", "x.py"]
                and la[la.index("-w") + 1] == NODES[0] and "--exact" in la and "--gres=none" in la
                and loc["placement"]["nodes"] == [NODES[0]],
                "a local step runs on berthd's node, launched through srun (Slurm places it "
                "with the srun steps)", str(loc)[:300])
        rr = c.request("render", placement={"nodes": [NODES[1]], "cores": [[0, 1, 2, 3]], "gpus": 0},
                       ntasks=2, cpus_per_task=2, argv=["./b"])
        t.check(rr.get("ok") and rr.get("argv", [])[:1] == ["srun"] and rr["argv"][-1] == "./b",
                "render renders a given placement", str(rr))
        t.check(len(c.request("status")["leases"]) == 2, "render holds nothing")
        c.close()
    finally:
        d.cleanup()


def placed(c, lease, cores, **more):
    return c.request("placed", lease=lease, cores=cores, **more)


def test_placed():
    """SCHEDULER: a local step srun placed reports its real cores (op
    placed); its lease shows them from then on. Every refusal names what is
    wrong and changes nothing."""
    d = Daemon()
    try:
        with_srun(d).start()
        c, other = d.client(), d.client()
        loc = c.request("acquire", cores=2, local=True, argv=["./a"])
        mpi = c.request("acquire", ntasks=2, cpus_per_task=1, argv=["./m"])
        name = loc["lease"]
        held = loc["placement"]["cores"][0]
        real = sorted({CORES_PER_NODE - 1, CORES_PER_NODE - 2} - set(held)) or [CORES_PER_NODE - 1, 0]

        def shown():
            return next(le for le in status(d)["leases"] if le["lease"] == name)["placement"]["cores"][0]

        def refused(r, code, words, what):
            e = r.get("error", {})
            t.check(r.get("ok") is False and e.get("code") == code and all(w in e.get("message", "") for w in words),
                    what, str(r))

        refused(placed(c, name, [real[0]]), "invalid_request", ["1 cores", "holds 2"],
                "a report with fewer cores than the lease holds is refused, naming both counts")
        refused(placed(c, name, [real[0], real[0]]), "invalid_request", [f"CPU {real[0]} twice"],
                "a report naming a CPU twice is refused")
        refused(placed(c, name, real, gpu_ids=[0]), "invalid_request", ["1 GPUs", "holds 0"],
                "a report with GPUs the lease lacks is refused")
        refused(placed(c, "L999999", real), "not_found", ["L999999"], "an unknown lease is not_found")
        refused(placed(c, mpi["lease"], [0, 1]), "invalid_request", ["not local"],
                "a launched (not local) lease has nothing to report")
        t.check(shown() == held, "the refusals changed nothing", str(shown()))
        t.check("warning" not in loc, "a local step with argv comes with no warning", str(loc)[:300])
        bare = c.request("acquire", cores=1, local=True)
        t.check(bare.get("ok") and "without argv" in bare.get("warning", "")
                and "same CPUs" in bare.get("warning", ""),
                "a local lease without argv is granted with a warning that Slurm does not know its cores",
                str(bare)[:400])
        c.request("release", lease=bare["lease"])
        r = placed(other, name, list(reversed(real)))
        t.check(r.get("ok") is True, "the step's own report (any connection of its uid) is taken", str(r))
        t.check(shown() == sorted(real), "status shows the lease on the reported cores", str(shown()))
        rec = c.request("resources", lease=name)
        want = ",".join(map(str, sorted(real))) if real[1] - real[0] != 1 else f"{real[0]}-{real[1]}"
        t.check(rec.get("ok") and rec["nodes"][0]["cores"] == want,
                "resources shows the reported cores too", str(rec)[:300])
        t.check(c.request("release", lease=name).get("ok"), "and is released as usual")
        t.check(status(d)["allocation"]["totals"]["cores_used"] == 2,
                "its cores are free again (the MPI step's 2 stay held)", str(status(d)["allocation"]["totals"]))
        c.close()
        other.close()
    finally:
        d.cleanup()


def test_local_bound_where_launcher_binds():
    """CPU_BINDING (Slurm 20.02): a local step is not launched, its client
    binds it to the ledger's cores, which are the real ones; placed is
    refused."""
    d = Daemon()
    try:
        with_srun(d, "20.02.7").start()
        c = d.client()
        t.check(c.request("status")["allocation"]["placement_support"] == "CPU_BINDING",
                "Slurm 20.02 is CPU_BINDING")
        loc = c.request("acquire", cores=2, local=True, argv=["python3", "x.py"])
        t.check(loc.get("ok") and loc.get("argv") == ["python3", "x.py"],
                "a local step's argv is its program, unlaunched", str(loc)[:300])
        bare = c.request("acquire", cores=1, local=True)
        t.check(bare.get("ok") and "warning" not in bare, "a local lease without argv has no warning here",
                str(bare)[:300])
        r = placed(c, loc["lease"], loc["placement"]["cores"][0])
        t.check(r.get("ok") is False and r["error"]["code"] == "invalid_request"
                and "binds" in r["error"]["message"], "placed is refused: the ledger's ids are real here",
                str(r))
        c.close()
    finally:
        d.cleanup()


def main():
    t.run_on(Daemon(), (test_malformed, test_oversized, test_reply_survives_late_input, test_pipelining,
                        test_pipelined_slow_reader, test_grant_to_waiting_client, test_watchers_come_and_go,
                        test_release_rules,
                        test_status_json, test_hello_render, test_other_uid))
    t.run_each((test_rendering, test_placed, test_local_bound_where_launcher_binds))
    t.finish()


main()
