#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The person's view of status ({"op": "status", "brief": N}) against a real
berthd: its sums equal those of the whole status counted node by node, its
nodes are the busiest (fewest free cores, ties in allocation order) with the
same entries the whole status has, its leases the oldest, its queue the
head; a job of at most N nodes gets every node in order; bad values are
refused naming the field, and berthd serves on.

usage: BERTHD=build/daemon/berthd test_status_brief.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import HOST, Checks, Daemon, slurm_env  # noqa: E402

t = Checks()
NNODES = 40


def full_and_brief(d, k):
    c = d.client()
    try:
        return c.request("status"), c.request("status", brief=k)
    finally:
        c.close()


def sums_of(full):
    """The totals the brief view must carry, counted from the whole view's
    nodes (not from berthd's kept sums)."""
    nodes = full["allocation"]["nodes"]
    mem = [n["memory_mb"] for n in nodes]
    unb = [n["memory_unbudgeted_mb"] for n in nodes]
    known = all(m is not None for m in mem)
    return {
        "nodes": len(nodes),
        "cores": sum(n["ncores"] for n in nodes),
        "cores_used": sum(n["cores_used"] for n in nodes),
        "cores_free": sum(n["cores_free"] for n in nodes),
        "gpus_used": sum(n["gpus_used"] for n in nodes),
        "leases": sum(n["leases"] for n in nodes),
        "nodes_full": sum(1 for n in nodes if n["cores_free"] == 0),
        "nodes_idle": sum(1 for n in nodes if n["leases"] == 0),
        "nodes_partly": sum(1 for n in nodes if n["leases"] and n["cores_free"]),
        "nodes_held": sum(1 for n in nodes if n["leases"]),
        "memory_mb": sum(mem) if known else None,
        "memory_unbudgeted_mb": sum(unb) if known else None,
    }


def check_sums(full, brief, what):
    want = sums_of(full)
    for view, name in ((brief, "brief"), (full, "whole")):
        got = view["allocation"]["totals"]
        bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
        t.check(not bad, f"{what}: the {name} view's totals are the nodes' sums",
                f"(got, counted): {bad}")


def busiest_of(full, k):
    nodes = full["allocation"]["nodes"]
    if len(nodes) <= k:
        return [n["name"] for n in nodes]
    held = [(n["cores_free"], i, n["name"]) for i, n in enumerate(nodes) if n["leases"]]
    return [name for _, _, name in sorted(held)[:k]]


def check_view(full, brief, k, what):
    t.check(brief.get("ok") and brief.get("brief") == k,
            f"{what}: the reply says it is brief {k}", str(brief)[:300])
    check_sums(full, brief, what)
    names = [n["name"] for n in brief["allocation"]["nodes"]]
    t.check(names == busiest_of(full, k), f"{what}: the nodes are the {k} busiest",
            f"{names} vs {busiest_of(full, k)}")
    by_name = {n["name"]: n for n in full["allocation"]["nodes"]}
    t.check(all(n == by_name.get(n["name"]) for n in brief["allocation"]["nodes"]),
            f"{what}: each node entry is the whole view's")
    head = {k2: v for k2, v in full["allocation"].items() if k2 != "nodes"}
    bhead = {k2: v for k2, v in brief["allocation"].items() if k2 != "nodes"}
    t.check(head == bhead, f"{what}: the allocation's other members are the whole view's",
            str([k2 for k2 in set(head) | set(bhead) if head.get(k2) != bhead.get(k2)]))
    strip = lambda ls: [{k2: v for k2, v in x.items() if k2 != "age_s"} for x in ls]  # noqa: E731
    t.check(strip(brief["leases"]) == strip(full["leases"][:k]),
            f"{what}: the leases are the {k} oldest",
            f"{[x['lease'] for x in brief['leases']]} vs {[x['lease'] for x in full['leases'][:k]]}")
    qk = lambda q: [(e["position"], e.get("label"), e["needs"], e["why"]) for e in q]  # noqa: E731
    t.check(qk(brief["queue"]) == qk(full["queue"][:k]), f"{what}: the queue is its first {k}",
            f"{qk(brief['queue'])} vs {qk(full['queue'][:k])}")
    t.check(brief["daemon"]["leases"] == len(full["leases"])
            and brief["daemon"]["waiting"] == len(full["queue"]),
            f"{what}: the daemon's counts give the whole lengths", str(brief["daemon"])[:200])
    t.check("failed" in brief, f"{what}: the failed steps are in it")


def test_small_job(d):
    """At most N nodes: every node, in order, as in the whole view."""
    c = d.client()
    held = [c.request("acquire", cores=n, label=f"s{n}") for n in (100, 3, 128)]
    t.check(all(r.get("ok") for r in held), "three leases granted", str(held)[:300])
    full, brief = full_and_brief(d, 50)
    check_view(full, brief, 50, "4 nodes, brief 50")
    t.check([n["name"] for n in brief["allocation"]["nodes"]]
            == [n["name"] for n in full["allocation"]["nodes"]],
            "a job of at most N nodes: every node in allocation order")
    c.close()


def test_big_job(d):
    holders, waiters = [], []
    c = d.client()
    # uneven use: nodes filled by 128, 100, 60, 60 (a tie) and 5 cores
    for cores in (128, 100, 60, 60, 5, 128, 1):
        r = c.request("acquire", cores=cores, label=f"c{cores}")
        t.check(r.get("ok"), f"{cores} cores granted", str(r)[:200])
        holders.append(r)
    # free the second lease: the oldest are no longer the first granted
    rel = c.request("release", lease=holders[1]["lease"])
    t.check(rel.get("ok"), "a lease released", str(rel)[:200])
    for k in (1, 3, 5, 50):
        full, brief = full_and_brief(d, k)
        check_view(full, brief, k, f"{NNODES} nodes, brief {k}")
    # fill the job and queue requests behind it, on their own connections
    fill = d.client()
    r = fill.request("status")
    free = [n["cores_free"] for n in r["allocation"]["nodes"]]
    for f in free:
        if f:
            g = fill.request("acquire", cores=f, label="fill")
            t.check(g.get("ok"), f"{f} cores granted to fill a node", str(g)[:200])
    for i in range(6):
        w = d.client()
        w.send("acquire", cores=2 + i, label=f"wait{i}")
        waiters.append(w)
    for k in (2, 6, 50):
        full, brief = full_and_brief(d, k)
        t.check(len(full["queue"]) == 6, "six requests wait", str(len(full["queue"])))
        check_view(full, brief, k, f"full job with a queue, brief {k}")
    t.check(full["allocation"]["totals"]["nodes_full"] == NNODES,
            "every node full", str(full["allocation"]["totals"]))
    for w in waiters:
        w.close()
    fill.close()
    c.close()


def test_refusals(d):
    c = d.client()
    cases = [
        ({"brief": 0}, ["brief", "0"]),
        ({"brief": 1001}, ["brief", "1001"]),
        ({"brief": "5"}, ["brief", "5"]),
        ({"brief": True}, ["brief", "true"]),
        ({"brief": 2.5}, ["brief", "2.5"]),
        ({"brief": 5, "queue_only": True}, ["brief", "queue_only"]),
        ({"brief": 5, "pid": os.getpid()}, ["brief", "pid"]),
    ]
    for fields, words in cases:
        r = c.request("status", **fields)
        err = r.get("error") or {}
        t.check(not r.get("ok") and err.get("code") == "invalid_request"
                and all(w in err.get("message", "") for w in words),
                f"status {fields} is refused naming {words}", str(r)[:300])
    r = c.request("status", brief=1000)
    t.check(r.get("ok") and r.get("brief") == 1000, "brief 1000, the bound, is served", str(r)[:200])
    c.close()


def main():
    t.run_on(Daemon(), (test_small_job, test_refusals))
    d = Daemon()
    d.env = slurm_env(d.dir, extra={
        "SLURM_JOB_NODELIST": f"{HOST},nid[000002-{NNODES:06d}]",
        "SLURM_JOB_NUM_NODES": str(NNODES)})
    t.run_on(d, (test_big_job,))
    t.finish()


if __name__ == "__main__":
    main()
