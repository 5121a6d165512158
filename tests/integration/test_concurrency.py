#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berthd under concurrent clients: 200 clients acquiring and releasing in
random orders never hold overlapping leases; a killed client's lease is
freed; waiting requests are granted as others release; wait timeouts,
wait: false, and cancel-by-disconnect.

usage: BERTHD=build/daemon/berthd test_concurrency.py
"""
import os
import random
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CORES_PER_NODE, NODES, Checks, Daemon, held_cores,  # noqa: E402
                     status, wait_until)

ALL = CORES_PER_NODE * len(NODES)
t = Checks()


def many_clients(d, nclients=200, rounds=4):
    """Each client holds up to 3 leases and releases them in a random order.
    Returns [(cores held, granted seen, release sent)] and errors."""
    records, errors = [], []
    lock = threading.Lock()
    start = threading.Barrier(nclients)

    def run(seed):
        rnd = random.Random(seed)
        try:
            c = d.client(timeout=120)
            start.wait()
            held = []
            for _ in range(rounds):
                shape = rnd.choice([
                    {"cores": rnd.randint(1, 64)},
                    {"cores": rnd.randint(1, CORES_PER_NODE)},
                    {"ntasks": rnd.randint(2, 300), "cpus_per_task": 1},
                    {"ntasks": rnd.randint(1, 8), "cpus_per_task": rnd.randint(1, 16)},
                ])
                # Waiting while holding could deadlock the clients among
                # themselves (not berthd's doing): only an empty hand waits.
                r = c.request("acquire", label=f"c{seed}", wait=not held, **shape)
                got = time.monotonic()
                if not r.get("ok") and r.get("error", {}).get("code") == "busy" and held:
                    continue
                if not r.get("ok"):
                    with lock:
                        errors.append(r)
                    continue
                held.append((r["lease"], held_cores(r["placement"]), got))
                if len(held) >= rnd.randint(1, 3):
                    rnd.shuffle(held)
                    lease, cores, got = held.pop()
                    sent = time.monotonic()
                    rr = c.request("release", lease=lease)
                    with lock:
                        records.append((cores, got, sent))
                        if not rr.get("ok"):
                            errors.append(rr)
                time.sleep(rnd.random() * 0.003)
            rnd.shuffle(held)
            for lease, cores, got in held:
                sent = time.monotonic()
                rr = c.request("release", lease=lease)
                with lock:
                    records.append((cores, got, sent))
                    if not rr.get("ok"):
                        errors.append(rr)
            c.close()
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(nclients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(300)
    return records, errors, sum(th.is_alive() for th in threads)


def overlaps(records):
    """Pairs of leases held at the same time (as the clients saw it, which is
    inside the daemon's own interval) that share a core."""
    recs = sorted(records, key=lambda r: r[1])
    bad = 0
    concurrent = 0
    for i, (ci, gi, si) in enumerate(recs):
        for cj, gj, sj in recs[i + 1:]:
            if gj >= si:
                break
            concurrent += 1
            if ci & cj:
                bad += 1
    return bad, concurrent


def test_many(d):
    records, errors, hung = many_clients(d)
    t.check(hung == 0, "every client finished", f"{hung} still running")
    t.check(not errors, "every acquire and release succeeded", str(errors[:3]))
    t.check(len(records) >= 200, "every client held leases", str(len(records)))
    bad, concurrent = overlaps(records)
    print(f"{len(records)} leases by 200 clients, {concurrent} pairs held at once", flush=True)
    t.check(bad == 0, "no two leases held at the same time share a core", f"{bad} overlaps")
    t.check(concurrent > 0, "some leases were held at the same time")
    s = status(d)
    tot = s["allocation"]["totals"]
    t.check(tot["cores_free"] == ALL and tot["cores_used"] == 0 and s["leases"] == []
            and s["queue"] == [], "the ledger is whole again afterwards", str(tot))


def test_killed_client(d):
    holder = subprocess.Popen([sys.executable, "-c", f"""
import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
from harness import Client
c = Client({d.sock!r})
r = c.request("acquire", cores={CORES_PER_NODE}, label="doomed")
print(r["lease"], flush=True)
import time; time.sleep(600)
"""], stdout=subprocess.PIPE, text=True)
    lease = holder.stdout.readline().strip()
    t.check(lease.startswith("L"), "a client took a lease", lease)
    s = status(d)
    t.check(any(x["lease"] == lease and x["label"] == "doomed" for x in s["leases"]),
            "status shows the client's lease")
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    gone = wait_until(lambda: not status(d)["leases"])
    t.check(gone, "the lease of a killed client is freed")
    c = d.client()
    r = c.request("acquire", ntasks=ALL, cpus_per_task=1, wait=False)
    t.check(r.get("ok"), "all cores can be acquired after the kill", str(r))
    c.close()


def test_waiting(d):
    a, b, w = d.client(), d.client(), d.client()
    r = a.request("acquire", ntasks=ALL, cpus_per_task=1, label="all")
    t.check(r.get("ok"), "one client holds every core", str(r))
    w.send("watch")
    t.check(w.reply().get("ok"), "watch is accepted")
    idb = b.send("acquire", cores=CORES_PER_NODE, label="next")
    c = d.client()
    idc = c.send("acquire", cores=CORES_PER_NODE, label="after")
    q = wait_until(lambda: len(status(d)["queue"]) == 2 and status(d)["queue"])
    t.check(q and [e["label"] for e in q] == ["next", "after"],
            "two requests wait, in arrival order", str(q))
    t.check(q and all(e["why"] for e in q), "each waiting request says why", str(q))
    a.request("release", lease=r["lease"])
    rb, rc = b.reply(), c.reply()
    t.check(rb.get("ok") and rb["id"] == idb and rc.get("ok") and rc["id"] == idc,
            "both waiting requests are granted once the cores are released", f"{rb} {rc}")
    t.check(not (held_cores(rb["placement"]) & held_cores(rc["placement"])),
            "the two grants are disjoint")
    kinds = []
    while len(kinds) < 5:
        kinds.append(w.read().get("event"))
    t.check(kinds.count("waited") == 2 and "released" in kinds and kinds.count("granted") >= 2,
            "watchers see waited, released and granted events", str(kinds))
    for x in (a, b, c, w):
        x.close()
    wait_until(lambda: not status(d)["leases"])


def test_timeouts_and_cancel(d):
    a = d.client()
    r = a.request("acquire", ntasks=ALL, cpus_per_task=1)
    t.check(r.get("ok"), "hold every core", str(r))
    b = d.client()
    rt = b.request("acquire", cores=1, timeout=0.2, label="impatient")
    t.check(rt.get("ok") is False and rt["error"]["code"] == "timeout",
            "a wait times out with the code timeout", str(rt))
    t.check("impatient" in rt.get("error", {}).get("message", ""),
            "the timeout message names the step", str(rt))
    rb = b.request("acquire", cores=1, wait=False)
    t.check(rb.get("ok") is False and rb["error"]["code"] == "busy",
            "wait: false is refused at once with busy", str(rb))
    rn = b.request("acquire", cores=100000)
    t.check(rn.get("ok") is False and rn["error"]["code"] == "unsatisfiable",
            "a request the empty allocation cannot hold is refused at once", str(rn))
    rl = b.request("acquire", cores=CORES_PER_NODE + 1, may_span_nodes=False)
    t.check(rl.get("ok") is False and rl["error"]["code"] == "unsatisfiable"
            and "may_span_nodes" in rl["error"]["message"],
            "a step that may not span is told how to let it span", str(rl))
    # cancel by disconnect
    b.send("acquire", cores=2, label="leaver")
    q = wait_until(lambda: status(d)["queue"])
    t.check(q and q[0]["label"] == "leaver", "the request waits", str(q))
    b.close()
    t.check(wait_until(lambda: not status(d)["queue"]), "a waiting client that disconnects leaves the queue")
    a.request("release", lease=r["lease"])
    s = wait_until(lambda: (lambda s: s if not s["leases"] else None)(status(d)))
    t.check(s and not s["leases"], "nothing is granted to the client that left", str(s and s["leases"]))
    # a connection pipelines: its next request waits behind its acquire, in order
    a2 = d.client()
    hold = a2.request("acquire", ntasks=ALL, cpus_per_task=1)
    p = d.client()
    first = p.send("acquire", cores=1, timeout=0.3)
    second = p.send("status")
    r1, r2 = p.reply(), p.reply()
    t.check(r1["id"] == first and r2["id"] == second and r2.get("ok"),
            "replies come in request order on one connection", f"{r1.get('id')} {r2.get('id')}")
    a2.request("release", lease=hold["lease"])
    for x in (a, a2, p):
        x.close()


def settled(d):
    wait_until(lambda: not status(d)["leases"])


def main():
    t.run_on(Daemon(), (test_many, test_killed_client, settled, test_waiting, test_timeouts_and_cancel))
    t.finish()


main()
