#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The environment delta of a placed Slurm launch, measured: a batch job's own
# requests (--mem, --gpus-per-node, --mem-per-gpu, --cpus-per-gpu) reach every
# srun in it through SLURM_* variables. With the rendered delta applied, two
# GPU steps and two CPU steps without declared memory run side by side, each
# GPU step on its own GPU and the CPU steps on none. Keeping any one of the
# variables below (the rest of the delta applied) breaks that on Slurm 22.05:
# this is the experiment that chose the renderer's list, kept as a test. A
# declared cap reaches srun as --mem=<N>M and a step above it is killed.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"

cluster_start LOCAL_SLURM_NODES=2 LOCAL_SLURM_CPUS=4 LOCAL_SLURM_MEM_MB=2000 LOCAL_SLURM_GPUS=2
d=$T/delta
mkdir -p "$d"
cat >"$d/step.sh" <<'EOS'
#!/bin/sh
echo "start $(date +%s.%N) node=$SLURMD_NODENAME cvd=${CUDA_VISIBLE_DEVICES-unset} sg=${SLURM_STEP_GPUS-unset}"
sleep 3
echo "end $(date +%s.%N)"
EOS
cat >"$d/hog.sh" <<'EOS'
#!/bin/sh
# touches 300 MB, more than its 100 MB cap
exec python3 -c 'import time; b = b"x" * (300 << 20); time.sleep(2); print("survived")'
EOS
chmod +x "$d/step.sh" "$d/hog.sh"

# The job script: render four steps on its node, then launch them all at once
# for each variant: "delta" (as berth run does), "keep:VAR" (the delta without
# VAR), "none" (no delta at all).
cat >"$d/job.sh" <<EOS
#!/bin/bash
out=\$1; shift
mkdir -p \$out; cd \$out
env | grep ^SLURM_ | sort > env
node=\$SLURMD_NODENAME
"$BERTH" render --json -n 1 -c 1 --place-nodes \$node --place-cores 0 --place-gpus 1 --place-gpu-ids 0 -- "$d/step.sh" > g0.json
"$BERTH" render --json -n 1 -c 1 --place-nodes \$node --place-cores 1 --place-gpus 1 --place-gpu-ids 1 -- "$d/step.sh" > g1.json
"$BERTH" render --json -n 1 -c 1 --place-nodes \$node --place-cores 2 -- "$d/step.sh" > c0.json
"$BERTH" render --json -n 1 -c 1 --place-nodes \$node --place-cores 3 -- "$d/step.sh" > c1.json
for variant in delta "\$@" none; do
  mkdir -p \$variant
  for s in g0 g1 c0 c1; do
    case \$variant in
      delta) cp \$s.json \$variant/\$s.json; keep=;;
      none) cp \$s.json \$variant/\$s.json; keep=--keep-env;;
      keep:*) python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["env"]["unset"].remove(sys.argv[2]); print(json.dumps(r))' \$s.json \${variant#keep:} > \$variant/\$s.json; keep=;;
    esac
    timeout 40 "$here/launch.py" \$keep \$variant/\$s.json > \$variant/\$s.out 2>&1 &
  done
  wait
done
EOS
chmod +x "$d/job.sh"

# jobs: name, what the job asks for, the variables to keep one at a time
jobs=(
    "mem|--mem=1500 --gpus-per-node=2|SLURM_MEM_PER_NODE SLURM_GPUS_PER_NODE"
    "mempergpu|--gpus=2 --mem-per-gpu=500|SLURM_MEM_PER_GPU"
    "cpuspergpu|--gpus=2 --cpus-per-gpu=2|SLURM_CPUS_PER_GPU"
)
ids=()
for j in "${jobs[@]}"; do
    IFS='|' read -r name opts keep <<<"$j"
    vars=()
    for v in $keep; do vars+=("keep:$v"); done
    # shellcheck disable=SC2086
    ids+=("$(sbatch --parsable -t 5 -N1 -n4 $opts -o "$d/$name.job.out" "$d/job.sh" "$d/$name" "${vars[@]}")")
done
# The memory cap, enforced by the cluster: cgroup OOM kill, or slurmd's
# polling without cgroups.
cat >"$d/cap.sh" <<EOS
#!/bin/bash
"$BERTH" render --json -n 1 -c 1 --place-nodes \$SLURMD_NODENAME --place-cores 0 --memory-cap 100 -- "$d/hog.sh" > "$d/cap.json"
timeout 40 "$here/launch.py" "$d/cap.json" > "$d/cap.out" 2>&1; echo \$? > "$d/cap.rc"
EOS
chmod +x "$d/cap.sh"
ids+=("$(sbatch --parsable -t 5 -N1 -n2 --mem=1000 -o "$d/cap.job.out" "$d/cap.sh")")
for id in "${ids[@]}"; do
    for ((i = 0; i < 600; i++)); do
        [[ $(squeue --noheader -t all -j "$id" -o %T 2>/dev/null) =~ ^(PENDING|RUNNING|CONFIGURING|COMPLETING)$ ]] || break
        sleep 0.2
    done
done

note "memory enforcement: cgroup=$LOCAL_SLURM_CGROUP_ACTIVE; the capped step exited $(cat "$d/cap.rc" 2>/dev/null): $(grep -v '^$' "$d/cap.out" | tail -n 1)"
check "the cap reaches srun as --mem=100M" grep -q '"--mem=100M"' "$d/cap.json"
check "the step above its cap was killed (exit $(cat "$d/cap.rc" 2>/dev/null))" \
    bash -c "[[ \$(cat '$d/cap.rc') != 0 ]] && ! grep -q survived '$d/cap.out'"
if [[ $LOCAL_SLURM_CGROUP_ACTIVE == yes ]]; then
    check "cgroups: killed as Out Of Memory" grep -qi 'out of memory\|oom' "$d/cap.out"
else
    check "no cgroups: killed for exceeding its limit" grep -qi 'exceeded memory limit' "$d/cap.out"
fi

python3 - "$d" "${jobs[@]}" <<'PY' >"$d/verdicts"
import os, re, sys
d, jobs = sys.argv[1], sys.argv[2:]
for j in jobs:
    name, opts, keep = j.split("|")
    for variant in ["delta"] + ["keep:" + v for v in keep.split()] + ["none"]:
        vd = os.path.join(d, name, variant)
        starts, ends, why = [], [], []
        gpus = {}
        for s in ("g0", "g1", "c0", "c1"):
            try:
                text = open(os.path.join(vd, s + ".out"), errors="replace").read()
            except OSError:
                why.append(f"{s} left no output"); continue
            m = re.search(r"^start (\S+) node=\S* cvd=(\S*) sg=(\S*)", text, re.M)
            e = re.search(r"^end (\S+)", text, re.M)
            if "step creation" in text:
                why.append(f"{s} waited in srun")
            if not m or not e:
                why.append(f"{s} failed: {text.strip().splitlines()[-1][:80] if text.strip() else ''}")
                continue
            starts.append(float(m.group(1))); ends.append(float(e.group(1)))
            gpus[s] = m.group(3)
        if len(starts) == 4 and max(starts) >= min(ends):
            why.append("not side by side")
        g = [gpus.get("g0"), gpus.get("g1")]
        if None not in g and (g[0] == g[1] or "," in g[0] + g[1] or "unset" in g):
            why.append(f"GPU steps got {g[0]} and {g[1]}")
        for s in ("c0", "c1"):
            if gpus.get(s, "unset") != "unset":
                why.append(f"CPU step {s} got GPU {gpus[s]}")
        verdict = "good" if not why else "bad"
        print(f"{name} {variant} {verdict} {'; '.join(why)}")
PY
while read -r name variant verdict why; do
    case $variant in
        delta) check "job $name: with the delta, 2 GPU + 2 CPU steps side by side, own GPUs ${why:+($why)}" test "$verdict" = good ;;
        *) check "job $name: with $variant the steps clash ($why)" test "$verdict" = bad ;;
    esac
done <"$d/verdicts"
check "every job variant was judged" test "$(wc -l <"$d/verdicts")" = 10
note "finished"
finish
