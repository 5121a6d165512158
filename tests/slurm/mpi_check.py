#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Holds one MPI ensemble of mpi.sh to its placements.

Every rank of tests/mpi/mpi_report.c printed one JSON line (rank, size, node,
CPU affinity, the MPI_Allreduce it checked, its BERTH_* share, its GPUs).
From these and from the steps' output:
- every `berth run` exited 0 and every step had one report per rank;
- every step's size equals its -n, its ranks are 0..n-1, all in one Slurm
  step, and they ran the MPI the machine file is for;
- the reduction was right on every rank;
- every rank ran on a node its placement named (BERTH_NODES), with the tasks
  per node the placement says (n over its nodes, the remainder one each to
  the first nodes: how berth renders -N/-n for srun);
- GPU steps saw as many GPUs per node as they asked for and never a GPU of
  a GPU step running beside them on that node; CPU steps saw none;
- every launch `berth run -v` ran began with the machine file's launcher
  (--launcher, its parallel_executable: the MPI plugin came from there);
- where the cluster binds CPUs (--binding exclusive or shared): each rank
  ran on as many real CPUs as its -c, the ranks of one step never shared
  one, and ranks of steps running at once on one node never shared one; in
  exclusive mode every node has its own real CPUs, so steps running at once
  never shared one on any node;
- with --mixed: single-node and multi-node steps ran at once;
- steps that name a peer met it (mpi_report's "met");
- no srun waited or retried ("step creation temporarily disabled"), also
  in the first run of a step that mpi.sh ran again.
Usage: mpi_check.py DIR MPI --launcher TEXT [--binding MODE] [--mixed]. DIR
holds steps.txt (label|berth run options|ranks|cpus per rank|GPUs[|the
step it meets]),
steps/LABEL.out and steps/LABEL.rc, job.out. Prints ok/FAIL lines, also to
DIR/check.log."""
import argparse
import json
import os
import re

from slurm_lists import hosts, idset

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("mpi")
ap.add_argument("--launcher", required=True)
ap.add_argument("--binding", default="none")
ap.add_argument("--mixed", action="store_true")
args = ap.parse_args()
d, mpi = args.dir, args.mpi
log = open(os.path.join(d, "check.log"), "w")
tag = os.path.basename(d)


def out(line):
    print(line)
    log.write(line + "\n")


def check(desc, cond, problems=()):
    problems = list(problems)
    detail = "; ".join(problems[:4]) + (f" (+{len(problems) - 4} more)" if len(problems) > 4 else "")
    out(("ok - " if cond else "FAIL - ") + f"{tag}: {desc}" + ("" if cond or not detail else ": " + detail))


def read(name):
    try:
        with open(os.path.join(d, name), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def per_node(n, nodes):
    """Tasks on each placement node, as berth renders -N/-n for srun."""
    return [n // nodes + (i < n % nodes) for i in range(nodes)]


steps = []
for line in read("steps.txt").splitlines():
    label, opts, n, cpt, gpus, *peer = line.split("|")
    steps.append(dict(label=label, opts=opts, n=int(n), cpt=int(cpt), gpus=int(gpus),
                      peer=peer[0] if peer else None))

retries = len(re.findall(r"step creation (temporarily|still) disabled", read("job.out")))
# steps that ran a second time after a rank crashed in Open MPI's wire-up (mpi.sh)
wireup = sorted(f[:-len(".out.wireup")] for f in os.listdir(os.path.join(d, "steps"))
                if f.endswith(".out.wireup"))
for label in wireup:
    retries += len(re.findall(r"step creation (temporarily|still) disabled", read(f"steps/{label}.out.wireup")))

failed, bad_size, bad_sum, misplaced, launches = [], [], [], [], []
for s in steps:
    text = read(f"steps/{s['label']}.out")
    retries += len(re.findall(r"step creation (temporarily|still) disabled", text))
    ran_cmd = re.findall(r"^berth run: lease .*?; running (.*)$", text, re.M)
    if len(ran_cmd) != 1 or not ran_cmd[0].startswith(args.launcher + " "):
        launches.append(f"{s['label']}: ran {ran_cmd}")
    rc = read(f"steps/{s['label']}.rc").strip()
    ranks = []
    for l in text.splitlines():
        l = re.sub(r"^\s*\d+: ", "", l)  # srun -l labels
        if l.startswith('{"mpi_report"'):
            try:
                ranks.append(json.loads(l))
            except ValueError:
                pass
    s["ranks"] = ranks
    if rc != "0" or not ranks:
        failed.append(f"{s['label']} ({s['opts']}): exit {rc or '?'}, {len(ranks)} reports: {text[-240:]!r}")
        continue
    sizes = sorted({r["size"] for r in ranks})
    ids = sorted(r["rank"] for r in ranks)
    kinds = {r["mpi_report"] for r in ranks}
    steps_seen = {(r["job"], r["step"]) for r in ranks}
    if sizes != [s["n"]] or ids != list(range(s["n"])) or kinds != {mpi} or len(steps_seen) != 1:
        bad_size.append(f"{s['label']} (-n {s['n']}): sizes {sizes}, ranks {ids}, MPI {sorted(kinds)}, "
                        f"Slurm steps {sorted(map(str, steps_seen))}")
    bad_sum += [f"{s['label']} rank {r['rank']}: sum {r['sum']} count {r['ones']}, want {r['want']} and {r['size']}"
                for r in ranks if not (r["ok"] and r["sum"] == r["want"] and r["ones"] == r["size"])]
    # the placement, as every rank saw it
    s["nodes"] = hosts(ranks[0]["berth_nodes"] or "")
    leases = {r["berth_lease"] for r in ranks}
    if len(leases) != 1 or any(hosts(r["berth_nodes"] or "") != s["nodes"] for r in ranks):
        misplaced.append(f"{s['label']}: the ranks saw leases {sorted(map(str, leases))} and placements "
                         f"{sorted({r['berth_nodes'] or '' for r in ranks})}")
    want = dict(zip(s["nodes"], per_node(s["n"], len(s["nodes"])))) if s["nodes"] else {}
    got = {}
    for r in ranks:
        got[r["node"]] = got.get(r["node"], 0) + 1
    if got != want:
        misplaced.append(f"{s['label']} (-n {s['n']}): ranks per node {got}, the placement "
                         f"{','.join(s['nodes'])} says {want}")
    s["t0"] = min(r["t0"] for r in ranks)
    s["t1"] = max(r["t1"] for r in ranks)

ran = [s for s in steps if s["ranks"] and "t0" in s]
check(f"every berth run exited 0 with a report from its ranks ({len(ran)} of {len(steps)} steps)",
      not failed and len(ran) == len(steps), failed)
check(f"every step's size equals its -n (widths {sorted({s['n'] for s in steps})}), its ranks are "
      "0..n-1 in one Slurm step", not bad_size and bool(ran), bad_size)
check(f"the MPI_Allreduce was right on every rank ({sum(len(s['ranks']) for s in ran)} ranks)",
      not bad_sum and bool(ran), bad_sum)
multi = [s for s in ran if len(s["nodes"]) > 1]
check(f"every launch began with the machine file's launcher '{args.launcher}'", not launches, launches)
check(f"every rank ran on a node its placement named, with the placement's tasks per node "
      f"({len(multi)} multi-node steps)", not misplaced and bool(ran), misplaced)


def at_once(a, b):
    return a["t0"] < b["t1"] and b["t0"] < a["t1"]


pairs = [(a, b) for i, a in enumerate(ran) for b in ran[i + 1:] if at_once(a, b)]
peak = max((sum(1 for o in ran if o["t0"] <= s["t0"] < o["t1"]) for s in ran), default=0)
out(f"# {tag}: {len(ran)} steps, {len(pairs)} pairs ran at once, peak {peak} at once")
if wireup:
    out(f"# {tag}: ran again after a rank crashed in Open MPI's wire-up: {', '.join(wireup)}")


def shared(key, within, any_node=False):
    """(step, rank, step, rank, ids) for two ranks whose `key` id sets meet:
    of steps running at once, and with `within` of one step; on one node
    unless any_node."""
    ranks = [(a, ra, b, rb) for a, b in pairs for ra in a["ranks"] for rb in b["ranks"]]
    if within:
        ranks += [(s, ra, s, rb) for s in ran for i, ra in enumerate(s["ranks"]) for rb in s["ranks"][i + 1:]]
    return [(a, ra, b, rb, ra[key] & rb[key]) for a, ra, b, rb in ranks
            if ra[key] & rb[key] and (any_node or ra["node"] == rb["node"])]


# GPUs: SLURM_STEP_GPUS are Slurm's ids on the node
gpu_bad = []
for s in ran:
    for r in s["ranks"]:
        r["gpu_ids"] = set(filter(None, (r["step_gpus"] or "").split(",")))
        if s["gpus"] == 0 and (r["gpu_ids"] or (r["cuda_visible_devices"] or "") != ""):
            gpu_bad.append(f"{s['label']} (no GPUs) rank {r['rank']} saw CUDA_VISIBLE_DEVICES="
                           f"{r['cuda_visible_devices']} SLURM_STEP_GPUS={r['step_gpus']}")
        elif s["gpus"] and len(r["gpu_ids"]) != s["gpus"] // max(1, len(s["nodes"])):
            gpu_bad.append(f"{s['label']} ({s['gpus']} GPUs on {len(s['nodes'])} nodes) rank {r['rank']} "
                           f"saw SLURM_STEP_GPUS={r['step_gpus']}")
gpu_bad += [f"{a['label']} and {b['label']} both had GPU {sorted(both)} on {ra['node']}"
            for a, ra, b, rb, both in shared("gpu_ids", within=False)]
gpu_steps = [s for s in ran if s["gpus"]]
if any(s["gpus"] for s in steps):
    check(f"GPU steps saw their own GPUs, CPU steps none ({len(gpu_steps)} GPU steps)",
          bool(gpu_steps) and not gpu_bad, gpu_bad)

if args.binding in ("exclusive", "shared"):
    wide = []
    for s in ran:
        for r in s["ranks"]:
            r["cpu_set"] = idset(r["cpus"])
            if len(r["cpu_set"]) != s["cpt"]:
                wide.append(f"{s['label']} rank {r['rank']} on {r['node']}: CPUs {r['cpus']}, -c {s['cpt']}")
    cpu_bad = [f"{a['label']} rank {ra['rank']} on {ra['node']} and {b['label']} rank {rb['rank']} on "
               f"{rb['node']}: real CPUs {sorted(both)}"
               for a, ra, b, rb, both in shared("cpu_set", within=True, any_node=args.binding == "exclusive")]
    check("each rank ran on as many real CPUs as its -c", not wide and bool(ran), wide)
    where = "on any node" if args.binding == "exclusive" else "on one node"
    check(f"steps running at once never shared a real CPU {where} ({len(pairs)} pairs at once, "
          f"{args.binding} binding)", bool(pairs) and not cpu_bad, cpu_bad)

if args.mixed:
    both = [(a["label"], b["label"]) for a, b in pairs if (len(a["nodes"]) > 1) != (len(b["nodes"]) > 1)]
    check(f"single-node and multi-node steps ran at once ({len(both)} such pairs)", bool(both))

meeting = [s for s in steps if s["peer"]]
if meeting:
    unmet = [f"{s['label']} and {s['peer']}: met {[r.get('met') for r in s['ranks']]}" for s in meeting
             if not s["ranks"] or not all(r.get("met") for r in s["ranks"])
             or not any({a["label"], b["label"]} == {s["label"], s["peer"]} for a, b in pairs)]
    check(f"the steps that meet a peer ran at once with it ({', '.join(s['label'] for s in meeting)})",
          not unmet, unmet)

check(f"no srun waited or retried (step creation temporarily disabled: {retries})", retries == 0)
log.close()
