#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Holds the ensemble run of ensemble.sh to its placements.

From what the ranks reported (start, `berth verify --json`, end) and from
berthd's events log:
- start-up (and the whole job) made no scheduler query;
- every step exited 0 and every rank started, verified and ended;
- every rank ran on a node its placement named;
- no two steps running at once held more cores on a node than Slurm gave the
  job there, and leases alive at once never shared a core id (events log);
- where Slurm binds CPUs, their ranks on one node had disjoint real CPUs;
- GPU steps saw their own GPUs (SLURM_STEP_GPUS: Slurm's global ids), never
  those of a GPU step running beside them on the node; CPU steps saw none;
- a declared memory reached the step (BERTH_MEMORY_MB);
- no srun waited ("step creation temporarily disabled"): berthd did;
- the wall time against a lower bound of any packing (the ratio is reported;
  it fails only above BERTH_SLURM_MAX_PACKING_RATIO, default 2.5).
Usage: ensemble_check.py DIR STEP-SECONDS. Prints ok/FAIL lines, also to
DIR/check.log."""
import json
import os
import re
import sys

from slurm_lists import hosts, idset

d, duration = sys.argv[1], float(sys.argv[2])
log = open(os.path.join(d, "check.log"), "w")


def out(line):
    print(line)
    log.write(line + "\n")


def check(desc, cond, detail=""):
    out(("ok - " if cond else "FAIL - ") + desc + ("" if cond or not detail else ": " + detail))
    return cond


def read(name, default=""):
    try:
        with open(os.path.join(d, name), errors="replace") as f:
            return f.read()
    except OSError:
        return default


def counts(s):
    """SLURM_JOB_CPUS_PER_NODE '4(x2),2' -> [4, 4, 2]"""
    res = []
    for part in filter(None, s.split(",")):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part)
        res += [int(m.group(1))] * int(m.group(2) or 1)
    return res


# ---- the job's own view
env = dict(l.split("=", 1) for l in read("job.env").splitlines() if "=" in l)
nodes = hosts(env.get("SLURM_JOB_NODELIST", ""))
node_cpus = dict(zip(nodes, counts(env.get("SLURM_JOB_CPUS_PER_NODE", ""))))
check(f"the job ran on 3 nodes with CPUs {node_cpus}", len(node_cpus) == 3, env.get("SLURM_JOB_NODELIST", "?"))
check("start-up made no scheduler query", read("queries.startup").strip() == "", read("queries.startup")[:300])
check("the whole job made no scheduler query", read("queries").strip() == "", read("queries")[:300])
status0 = {}
try:
    status0 = json.loads(read("status0.json"))
except ValueError:
    pass
text0 = json.dumps(status0)
m = re.search(r'"(local proof[^"]*)"', text0)
check(f"berthd established the allocation by local proof ({m.group(1) if m else '?'})",
      bool(m) and ("SLURMD_NODENAME" in m.group(1) or "cgroup" in m.group(1)), text0[:300])
cgroup = read("job.cgroup")
out(f"# batch script cgroup: {' '.join(sorted(set(re.findall(r'job_[0-9]+', cgroup))))}; "
    f"SLURMD_NODENAME={env.get('SLURMD_NODENAME')}")

# ---- the steps
steps = []
for line in read("steps.txt").splitlines():
    label, opts, tasks, cpt, gpus, mem = line.split("|")
    steps.append(dict(label=label, opts=opts, tasks=int(tasks), cpt=int(cpt), gpus=int(gpus),
                      mem=int(mem) if mem else None))
check(f"{len(steps)} steps in the ensemble (at least 40)", len(steps) >= 40)

waits = len(re.findall(r"step creation (temporarily|still) disabled", read("job.out")))
bad_steps, waited = [], []
for s in steps:
    text = read(f"steps/{s['label']}.out")
    s["rc"] = read(f"steps/{s['label']}.rc").strip()
    n = len(re.findall(r"step creation (temporarily|still) disabled", text))
    if n:
        waited.append(s["label"])
    waits += n
    s["starts"], s["ends"], s["ranks"] = [], [], []
    for l in text.splitlines():
        l = re.sub(r"^\s*\d+: ", "", l)  # srun --label prefix
        f = l.split(" ", 4)
        if f[0] == "start" and len(f) >= 4:
            s["starts"].append((f[2], float(f[3])))
            s["step_id"] = f[4] if len(f) > 4 else None
        elif f[0] == "end" and len(f) == 4:
            s["ends"].append((f[2], float(f[3])))
        elif f[0] == "verify" and len(f) == 5:
            try:
                v = json.loads(f[4])
            except ValueError:
                continue
            s["ranks"].append(dict(node=f[3], verify_rc=f[1], **v))
    problems = []
    if s["rc"] != "0":
        problems.append(f"berth run exited {s['rc'] or '?'}")
    if not (len(s["starts"]) == len(s["ends"]) == len(s["ranks"]) == s["tasks"]):
        problems.append(f"{len(s['starts'])}/{len(s['ranks'])}/{len(s['ends'])} of {s['tasks']} ranks "
                        "started/verified/ended")
    if problems:
        bad_steps.append(f"{s['label']} ({s['opts']}): {'; '.join(problems)}: {text[-200:]!r}")
check("every step exited 0 and every rank started, verified and ended",
      not bad_steps, "; ".join(bad_steps[:4]) + (f" (+{len(bad_steps) - 4} more)" if len(bad_steps) > 4 else ""))
ran = [s for s in steps if s["starts"] and s["ends"] and s["ranks"]]

# berthd's events log (unparsable lines skipped)
events = []
for l in read("state/events.jsonl").splitlines():
    try:
        events.append(json.loads(l))
    except ValueError:
        pass
# each step's cores per node, as granted (where Slurm picks the cores, a span
# may hold different counts on its nodes; BERTH_CORES is node 0's)
granted_cores = {}
for e in events:
    if e.get("event") == "granted" and e.get("label"):
        pl = e.get("placement") or {}
        granted_cores[e["label"]] = {n: len(idset(c) if isinstance(c, str) else set(c))
                                     for n, c in zip(pl.get("nodes") or [], pl.get("cores") or [])}

# placement: nodes and cores, from the BERTH_* share each rank saw
misplaced = []
for s in ran:
    b = s["ranks"][0]["berth"]
    s["nodes"] = hosts(b.get("BERTH_NODES") or "")
    s["cores"] = idset(b.get("BERTH_CORES"))
    s["mem_seen"] = b.get("BERTH_MEMORY_MB")
    s["per_node"] = granted_cores.get(s["label"]) or {n: len(s["cores"]) for n in s["nodes"]}
    for r in s["ranks"]:
        if r["node"] not in s["nodes"]:
            misplaced.append(f"{s['label']}: rank {r.get('rank')} on {r['node']}, placement {s['nodes']}")
    for node, _ in s["starts"]:
        if node not in s["nodes"]:
            misplaced.append(f"{s['label']}: a rank started on {node}, placement {s['nodes']}")
check("every rank ran on a node its placement named", not misplaced, "; ".join(misplaced[:4]))
check("every step was placed on exactly as many cores as it asked for (as granted, per node)",
      all(sum(s["per_node"].values()) == s["tasks"] * s["cpt"] for s in ran),
      "; ".join(f"{s['label']}: {s['per_node']} for {s['tasks']} x {s['cpt']}" for s in ran
                if sum(s["per_node"].values()) != s["tasks"] * s["cpt"]))

# cores per node among steps running at once (their reported spans)
for s in ran:
    s["t0"] = min(t for _, t in s["starts"])
    s["t1"] = max(t for _, t in s["ends"])
over, peak = [], 0
for s in ran:
    running = [o for o in ran if o["t0"] <= s["t0"] < o["t1"]]
    peak = max(peak, len(running))
    for node in s["nodes"]:
        held = sum(o["per_node"].get(node, 0) for o in running)
        if held > node_cpus.get(node, 0):
            over.append(f"{node} at {s['label']}'s start: {held} cores held of {node_cpus.get(node)}")
check(f"steps ran side by side (peak {peak} at once)", peak >= 4)
check("no node ever held more cores than it has (from the steps' reports)", not over, "; ".join(over[:3]))

# where Slurm binds (the cluster's exclusive and shared modes), the ranks of
# steps running at once on one node had disjoint real CPUs
binding = os.environ.get("LOCAL_SLURM_BINDING", "none")
if binding in ("exclusive", "shared"):
    shared = []
    for a in ran:
        for b in ran:
            if a["label"] < b["label"] and a["t0"] < b["t1"] and b["t0"] < a["t1"]:
                for ra in a["ranks"]:
                    for rb in b["ranks"]:
                        both = idset(ra.get("cpus")) & idset(rb.get("cpus"))
                        if ra["node"] == rb["node"] and both:
                            shared.append(f"{a['label']} and {b['label']} on {ra['node']}: CPUs {sorted(both)}")
    check(f"steps running at once on a node had disjoint real CPUs ({binding} binding)", not shared,
          "; ".join(shared[:3]))

# GPUs: SLURM_STEP_GPUS are Slurm's global ids on the node
gpu_bad = []
for s in ran:
    for r in s["ranks"]:
        dev = r.get("devices", {})
        sg = dev.get("SLURM_STEP_GPUS")
        ids = set(filter(None, (sg or "").split(",")))
        r["gpu_ids"] = ids
        if s["gpus"] == 0:
            if ids or (dev.get("CUDA_VISIBLE_DEVICES") or "") != "":
                gpu_bad.append(f"{s['label']} (no GPUs) saw CUDA_VISIBLE_DEVICES="
                               f"{dev.get('CUDA_VISIBLE_DEVICES')} SLURM_STEP_GPUS={sg}")
        elif len(ids) != s["gpus"] // max(1, len(s["nodes"])):
            gpu_bad.append(f"{s['label']} ({s['gpus']} GPUs) saw SLURM_STEP_GPUS={sg}")
gpu_steps = [s for s in ran if s["gpus"]]
for a in gpu_steps:
    for b in gpu_steps:
        if a["label"] < b["label"] and a["t0"] < b["t1"] and b["t0"] < a["t1"]:
            for ra in a["ranks"]:
                for rb in b["ranks"]:
                    if ra["node"] == rb["node"] and ra["gpu_ids"] & rb["gpu_ids"]:
                        gpu_bad.append(f"{a['label']} and {b['label']} both had GPU "
                                       f"{sorted(ra['gpu_ids'] & rb['gpu_ids'])} on {ra['node']}")
check(f"GPU steps saw their own GPUs, CPU steps none ({len(gpu_steps)} GPU steps)",
      bool(gpu_steps) and not gpu_bad, "; ".join(gpu_bad[:4]))
mem_steps = [s for s in ran if s["mem"]]
check(f"declared memory reached the steps ({len(mem_steps)} steps, BERTH_MEMORY_MB)",
      bool(mem_steps) and all(str(s["mem_seen"]) == str(s["mem"]) for s in mem_steps),
      "; ".join(f"{s['label']}: {s['mem_seen']}" for s in mem_steps if str(s["mem_seen"]) != str(s["mem"])))
# For a step that waited, say whether Slurm still held a step that berthd had
# already released (its slurmstepd "done with job" after the new grant): srun
# of a multi-node step returns before every node has finished the step.
def slurmd_done():
    done = {}
    logdir = os.path.join(d, "..", "cluster", "log")
    for f in os.listdir(logdir) if os.path.isdir(logdir) else []:
        m = re.fullmatch(r"slurmd-(.*)\.log", f)
        for l in open(os.path.join(logdir, f), errors="replace") if m else []:
            x = re.match(r"\[(\S+)\] \[\d+\.(\d+)\] done with job", l)
            if x:
                import datetime
                done[(m.group(1), x.group(2))] = datetime.datetime.fromisoformat(x.group(1)).timestamp()
    return done


def why_waited(label):
    ev = [e for e in events if e.get("event") in ("granted", "released")]
    labels = {e["lease"]: e.get("label") for e in ev if e["event"] == "granted"}
    grant = next((e for e in ev if e["event"] == "granted" and e.get("label") == label), None)
    if not grant:
        return label
    by_label = {x["label"]: x for x in steps}
    late = []
    for e in ev:
        if e["event"] == "released" and grant["time"] - 1 < e["time"] <= grant["time"]:
            other = by_label.get(labels.get(e["lease"]), {})
            # the controller frees a step once every node of it is done
            ts = [done.get((n, other.get("step_id"))) for n in other.get("nodes", [])]
            t = max((x for x in ts if x), default=None)
            if set(other.get("nodes", [])) & set(grant["placement"]["nodes"]) and t and t > grant["time"]:
                late.append(f"{other['label']} released {grant['time'] - e['time']:.3f} s before, "
                            f"its last slurmstepd done {t - grant['time']:.3f} s after")
    return f"{label} ({'; '.join(late) or 'no late step found'})"


done = slurmd_done() if waited else {}
check(f"no srun waited (step creation temporarily disabled: {waits})", waits == 0,
      f"in steps {', '.join(why_waited(w) for w in waited)}" + (" and the job's output" if waits > len(waited) else ""))

# the events log: leases alive at once never share a core id on a node
kinds = {}
for e in events:
    k = e.get("event") or e.get("type") or "?"
    kinds[k] = kinds.get(k, 0) + 1
out(f"# events log: {len(events)} events {kinds}")
check("the events log has a grant and a release for every step",
      kinds.get("granted", 0) >= len(steps) and kinds.get("released", 0) >= len(steps), str(kinds))
held, clash = {}, []
for e in events:
    k = e.get("event") or e.get("type")
    lease = str(e.get("lease") or e.get("id") or "")
    if k == "granted":
        pl = e.get("placement") or {}
        cores = {}
        for n, c in zip(pl.get("nodes") or [], pl.get("cores") or []):
            cores[n] = idset(c) if isinstance(c, str) else set(c)
        for other, oc in held.items():
            for n, ids in cores.items():
                if ids & oc.get(n, set()):
                    clash.append(f"lease {lease} and {other} both hold {sorted(ids & oc[n])} on {n}")
        held[lease] = cores
    elif k == "released":
        held.pop(lease, None)
check("leases alive at once never shared a core (events log)", bool(events) and not clash, "; ".join(clash[:3]))

# packing: wall time against a lower bound of any packing of the same steps
try:
    wall = float(read("t1")) - float(read("t0"))
except ValueError:
    wall = 0.0
cap = sum(node_cpus.values())
# berthd's ledger may hold fewer cores than Slurm gave (its own node's CPU
# affinity); packing is judged against what it had to hand out
totals = status0.get("allocation", {}).get("totals", {})
cap = min(cap, totals.get("cores") or cap)
gpu_cap = totals.get("gpus") or 2 * len(node_cpus)
dur = {s["label"]: s["t1"] - s["t0"] for s in ran}
core_work = sum(len(s["cores"]) * len(s["nodes"]) * dur[s["label"]] for s in ran)
gpu_work = sum(s["gpus"] * dur[s["label"]] for s in ran)
bound = max(core_work / cap if cap else 0, gpu_work / gpu_cap, max(dur.values(), default=0))
ratio = wall / bound if bound else float("inf")
serial = sum(dur.values())
out(f"# packing: wall {wall:.1f} s for {len(ran)} steps ({serial:.0f} s one after another); "
    f"best packing at least {bound:.1f} s on {cap} cores / {gpu_cap} GPUs: ratio {ratio:.2f}")
limit = float(os.environ.get("BERTH_SLURM_MAX_PACKING_RATIO", "2.5"))
check(f"wall time {ratio:.2f} x the best packing's bound (at most {limit})", ratio <= limit)
log.close()
