#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cluster in its exclusive binding mode (as many declared CPUs as real
# ones, so Slurm confines each step to its own real CPUs): round after round
# of --local steps and srun steps side by side on the batch node. Every
# process reads its own Cpus_allowed_list at its start and again at its end,
# while the others run; no two steps that ran at once may share a real CPU,
# local or not (issue 15: Slurm picks srun steps' CPUs, so a --local step
# goes through srun too and reports the CPUs it got). A local step also
# checks that `berth status` shows its lease on exactly those CPUs. Then
# the same with fake GPUs, every step asking for one: GPUs too are disjoint,
# and shown as the step has them; and on two nodes, where a --local step
# must run on the batch node.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"

real=$(nproc --all)
rounds=${BERTH_EXCLUSIVE_ROUNDS:-20}
# phase NAME ROUNDS GPUS NODES: ROUNDS rounds in one batch job of NODES
# nodes, on a cluster with GPUS fake GPUs (each step then asks for one); the
# analysis in $T/NAME.log
phase() {
    local name=$1 rounds=$2 gpus=$3 nodes=$4 d=$T/$1 g=""
    ((gpus)) && g="--gpus 1"
    mkdir -p "$d/steps"
    # One line per rank: rank, start, end, its CPUs at the start and at the
    # end, its lease, its GPUs (CUDA_VISIBLE_DEVICES: this cluster does not
    # constrain devices, so it holds the node's indices); a local step saves
    # berthd's status as it runs.
    cat >"$d/step.sh" <<EOS
#!/bin/sh
label=\$1
t0=\$(date +%s.%N)
c0=\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/\$\$/status)
case \$label in local*) "$BERTH" status --json > "$d/steps/\$label.status" ;; esac
sleep 0.4
c1=\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/\$\$/status)
echo "rank \${SLURM_PROCID:-0} \$t0 \$(date +%s.%N) \$c0 \$c1 \$BERTH_LEASE g\$CUDA_VISIBLE_DEVICES n\${SLURMD_NODENAME:-}"
EOS
    chmod +x "$d/step.sh"
    # label|berth run options|ranks: each round starts all its steps at
    # once, more than the CPUs hold, so berthd queues them and they pair up
    # in every way (local+local, local+srun, srun+srun); without GPUs every
    # third round has a two-rank step, every other one declares memory.
    local r mem
    for ((r = 1; r <= rounds; r++)); do
        mem=""
        ((r % 2)) && mem="--memory 100"
        echo "local${r}a|--local --cores 1 $g $mem|1"
        echo "srun${r}a|-n 1 -c 1 $g $mem|1"
        echo "local${r}b|--local --cores 1 $g|1"
        echo "srun${r}b|-n 1 -c 1 $g|1"
        ((r % 3 == 0 && !gpus)) && echo "srun${r}w|-n 2 -c 1|2"
    done >"$d/steps.txt"
    cat >"$d/job.sh" <<EOS
#!/bin/bash
envs=\$("$BERTHD" --detach --print-env --state-dir $d/state) || { echo "berthd did not start: \$envs"; exit 3; }
eval "\$envs"
echo "\$SLURMD_NODENAME" > $d/batchnode
nodes=$nodes
for ((r = 1; r <= $rounds; r++)); do
  while IFS='|' read -r label opts n; do
    [[ \$label =~ ^[a-z]+\${r}[a-z]\$ ]] || continue
    # on two nodes: the round's srun steps once a local one holds the batch
    # node, so that they run on the other node beside it
    if ((\$nodes > 1)) && [[ \$label == srun\${r}a ]]; then
      for ((i = 0; i < 200; i++)); do
        "$BERTH" status --json | grep -q '"local": *true' && break
        sleep 0.05
      done
    fi
    # stdin from /dev/null: a step started with & inside this read loop
    # inherits steps.txt, and srun (local steps run through it too) reads
    # its stdin to hand to task 0, swallowing the loop's lines
    { "$BERTH" run \$opts --label \$label -- "$d/step.sh" \$label < /dev/null > $d/steps/\$label.out 2>&1
      echo \$? > $d/steps/\$label.rc; } &
  done < $d/steps.txt
  wait
done
"$BERTH" shutdown >/dev/null 2>&1
EOS
    chmod +x "$d/job.sh"
    local res gres=()
    ((gpus)) && gres=(--gpus="$gpus")
    res=$(job_run "$d/job.out" -N"$nodes" -n"$real" --mem=$((1500 / nodes)) "${gres[@]}" -- "$d/job.sh")
    check "$name: the batch job succeeded ($res)" test "$res" = "COMPLETED 0:0"
    note "$name: $rounds rounds ran"
    PYTHONPATH=$here python3 - "$d" "$name" "$rounds" "$gpus" "$nodes" <<'PY' >"$T/$name.log"
import json, os, re, sys
from slurm_lists import idset
d, name, rounds, gpus, nodes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rank_re = re.compile(r"^(?:\s*\d+: )?rank (\d+) (\S+) (\S+) (\S+) (\S+) (\S+) g(\S*) n(\S*)$", re.M)
batch = open(os.path.join(d, "batchnode")).read().strip()
steps, bad = [], []
for line in open(os.path.join(d, "steps.txt")):
    label, opts, n = line.strip().split("|")
    text = open(os.path.join(d, "steps", label + ".out"), errors="replace").read()
    rc = open(os.path.join(d, "steps", label + ".rc")).read().strip()
    ranks = rank_re.findall(text)
    if rc != "0" or len(ranks) != int(n):
        bad.append(f"{label}: exit {rc}, {len(ranks)} of {n} ranks: {text[-200:]!r}")
        continue
    cpus = [idset(c0) | idset(c1) for _, _, _, c0, c1, _, _, _ in ranks]
    steps.append(dict(label=label, local=label.startswith("local"), lease=ranks[0][5],
                      t0=min(float(r[1]) for r in ranks), t1=max(float(r[2]) for r in ranks),
                      cpus=cpus, gpus=idset(ranks[0][6]), node=ranks[0][7],
                      moved=[r[0] for r in ranks if r[3] != r[4]]))
def result(ok, what, why):
    print(("ok - " if ok else "FAIL - ") + f"{name}: " + what + ("" if ok else ": " + "; ".join(why[:3])))
result(not bad, f"every step of {rounds} rounds exited 0 and every rank reported", bad)
wide = [f"{s['label']}: {sorted(c)}" for s in steps for c in s["cpus"] if len(c) != 1]
result(not wide, "each rank was confined to one real CPU, the same at its start and end",
       wide + [f"{s['label']} rank {s['moved']} moved" for s in steps if s["moved"]])
if gpus:
    odd = [f"{s['label']}: {sorted(s['gpus'])}" for s in steps if len(s["gpus"]) != 1]
    result(not odd, "each step saw exactly one GPU", odd)
# Every pair of steps that ran at once (their ranks' own clocks overlap),
# --local and srun alike, on disjoint real CPUs (and GPUs).
clash, pairs, mixed = [], 0, 0
for i, a in enumerate(steps):
    for b in steps[i + 1:]:
        if a["t0"] < b["t1"] and b["t0"] < a["t1"]:
            pairs += 1
            mixed += a["local"] != b["local"]
            ua, ub = set().union(*a["cpus"]), set().union(*b["cpus"])
            if ua & ub or (gpus and a["gpus"] & b["gpus"]):
                clash.append(f"{a['label']} {sorted(ua)} GPUs {sorted(a['gpus'])} and "
                             f"{b['label']} {sorted(ub)} GPUs {sorted(b['gpus'])}")
print(f"# {name}: {len(steps)} steps, {pairs} pairs ran at once ({mixed} of them a --local step "
      f"beside an srun step), {len(clash)} shared a real CPU" + (" or GPU" if gpus else ""))
result(pairs and not clash, f"{pairs} pairs of steps that ran at once had disjoint real CPUs"
       + (" and GPUs" if gpus else ""), clash)
# on one node the steps of a round pair up in every way; on two, berthd may
# well run a round's srun steps first, on both nodes, and its local ones after
if nodes == 1:
    result(mixed > 0, "--local steps ran beside srun steps", [f"{mixed} such pairs"])
away = [f"{s['label']} on {s['node']}" for s in steps if s["local"] and s["node"] != batch]
result(not away, f"every --local step ran on the batch node {batch}", away)
inner = [s["label"] for s in steps if len(s["cpus"]) > 1 and len(set().union(*s["cpus"])) != len(s["cpus"])]
result(not inner, "the ranks of a multi-rank step had disjoint CPUs", inner)
# What berthd shows for a local step is what the step has.
shown = []
for s in (s for s in steps if s["local"]):
    try:
        st = json.load(open(os.path.join(d, "steps", s["label"] + ".status")))
        lease = next(l for l in st["leases"] if l["lease"] == s["lease"])
        got = (set(lease["placement"]["cores"][0]), set(lease["placement"]["gpu_ids"] or []))
    except (OSError, ValueError, KeyError, StopIteration) as e:
        got = f"unreadable ({e!r})"
    if got != (s["cpus"][0], s["gpus"] if gpus else set()):
        shown.append(f"{s['label']} ({s['lease']}) runs on cores {sorted(s['cpus'][0])} GPUs "
                     f"{sorted(s['gpus'])}, status shows {got}")
result(not shown, "berth status showed each --local lease on the real cores"
       + (" and GPUs" if gpus else "") + " its step had", shown)
PY
    local status=$?
    cat "$T/$name.log"
    count_results "$T/$name.log"
    [[ $status == 0 ]] || not_ok "$name: the analysis failed (exit $status)"
}

cluster_start LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS="$real" LOCAL_SLURM_MEM_MB=2000
if [[ $LOCAL_SLURM_BINDING != exclusive ]]; then
    not_ok "the cluster is in binding mode $LOCAL_SLURM_BINDING, not exclusive"
    finish; exit 1
fi
phase cpus "$rounds" 0 1
cluster_start LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS="$real" LOCAL_SLURM_MEM_MB=2000 LOCAL_SLURM_GPUS="$real"
phase gpus "${BERTH_EXCLUSIVE_GPU_ROUNDS:-6}" "$real" 1
# two nodes of one real CPU each: a --local step runs on the batch node only
cluster_start LOCAL_SLURM_NODES=2 LOCAL_SLURM_CPUS=$((real / 2)) LOCAL_SLURM_MEM_MB=1000
if [[ $LOCAL_SLURM_BINDING == exclusive ]]; then
    phase nodes "${BERTH_EXCLUSIVE_NODE_ROUNDS:-6}" 0 2
else
    not_ok "two nodes of $((real / 2)) CPUs are in binding mode $LOCAL_SLURM_BINDING, not exclusive"
fi
note "finished"
finish
