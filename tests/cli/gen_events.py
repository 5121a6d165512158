#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a synthetic, well-formed berthd events log (events.jsonl, the events
of protocol/PROTOCOL.md as daemon/events.c writes them) to stdout: STEPS steps
on NODES nodes of CORES cores, simulated with a first-fit ledger so that no
core is ever held twice; steps that do not fit wait (a `waited` event, then
their grant when room frees), a few span two nodes, one is refused.
usage: gen_events.py STEPS NODES [CORES] [SEED]   (also writes the matching
allocation, as `berth status --json` would, to $ALLOCATION when set)"""
import heapq
import json
import os
import random
import sys

steps = int(sys.argv[1])
nnodes = int(sys.argv[2])
ncores = int(sys.argv[3]) if len(sys.argv) > 3 else 32
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 7)
nodes = [f"nid{i:06d}" for i in range(1, nnodes + 1)]
free = {n: set(range(ncores)) for n in nodes}
t = 1754300000.0
out = []
running = []          # (end, lease, label, [(node, cores)])
families = ["ocean_qu240", "mesh", "init", "viz", "analysis", "forward", "a_rather_long_label_name"]


def emit(ev):
    out.append(ev)


def release_until(when):
    while running and running[0][0] <= when:
        end, lease, label, held = heapq.heappop(running)
        for node, cores in held:
            free[node] |= set(cores)
        emit({"event": "released", "time": end, "lease": lease, "label": label,
              "reason": "released"})


def place(width, span):
    if span:
        nd = [n for n in nodes if len(free[n]) >= width // 2][:2]
        if len(nd) < 2:
            return None
        return [(n, sorted(free[n])[:width // 2]) for n in nd]
    fits = [n for n in nodes if len(free[n]) >= width]
    if not fits:
        return None
    n = min(fits, key=lambda n: len(free[n]))
    return [(n, sorted(free[n])[:width])]


lease_no = 0
emit({"event": "refused", "time": t, "label": "too_big",
      "error": {"code": "unsatisfiable",
                "message": f"step 'too_big' needs {ncores * nnodes * 2} cores"}})
for i in range(steps):
    t += rng.uniform(0.0, 1.5)
    release_until(t)
    fam = rng.choice(families)
    label = f"{fam}_{i}"
    span = rng.random() < 0.08
    width = rng.choice([1, 2, 4, 8, 16]) * (2 if span else 1)
    width = min(width, ncores * (2 if span else 1))
    asked = t
    pl = place(width, span)
    if pl is None:
        emit({"event": "waited", "time": t, "label": label, "position": 1,
              "why": f"no node with {width} free cores"})
        while pl is None:
            t = running[0][0]
            release_until(t)
            pl = place(width, span)
    lease_no += 1
    lease = f"L{lease_no}"
    for node, cores in pl:
        free[node] -= set(cores)
    emit({"event": "granted", "time": t, "lease": lease, "label": label,
          "placement": {"nodes": [n for n, _ in pl], "cores": [c for _, c in pl],
                        "gpus": 0, "gpu_ids": []},
          "memory_cap": None, "budget_mb": 1000 * width, "env_delta": {"unset": [], "set": {}},
          "owner_pid": 1000 + i, "granted": t})
    heapq.heappush(running, (t + rng.uniform(10, 90), lease, label, pl))
    t = max(t, asked)
release_until(float("inf"))
for ev in out:
    print(json.dumps(ev, separators=(",", ":")))
if os.environ.get("ALLOCATION"):
    with open(os.environ["ALLOCATION"], "w") as f:
        json.dump({"allocation": {"nodes": [{"name": n, "cores": f"0-{ncores - 1}",
                                             "ncores": ncores} for n in nodes]}}, f)
