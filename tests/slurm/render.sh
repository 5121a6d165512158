#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth render on a real Slurm: the mechanism follows `srun --version`
# (SCHEDULER from 20.11.3: --exact and an explicit GPU statement), and the
# rendered command, run with its environment delta inside a batch job that
# asked for --mem and --gpus-per-node, really runs where it was placed.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"

cluster_start LOCAL_SLURM_NODES=2 LOCAL_SLURM_CPUS=2 LOCAL_SLURM_MEM_MB=2000 LOCAL_SLURM_GPUS=2
version=$(srun --version | grep -Eo '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -n 1)
want=$(expected_support "$version")
note "srun --version: $version -> $want"

d=$T/render
mkdir -p "$d"
# shellcheck disable=SC2016 # expanded by the step, not here
prog=(sh -c 'echo "task $SLURMD_NODENAME step=$SLURM_STEP_ID cvd=${CUDA_VISIBLE_DEVICES-unset} gpus=${SLURM_STEP_GPUS-unset} mem=${SLURM_MEM_PER_NODE-unset}"')
cat >"$d/job.sh" <<EOS
#!/bin/bash
cd "$d"
r() { name=\$1; shift; "$BERTH" render --json "\$@" > \$name.json 2> \$name.err; echo \$? > \$name.rc; }
r cpu -n 2 -c 1 --place-nodes node2 --place-cores 0-1 -- $(printf '%q ' "${prog[@]}")
r span -n 2 -c 1 --place-nodes node1,node2 --place-cores '0;0' -- $(printf '%q ' "${prog[@]}")
r gpu -n 1 -c 1 --place-nodes node1 --place-cores 1 --place-gpus 1 --place-gpu-ids 1 -- $(printf '%q ' "${prog[@]}")
r cap -n 1 -c 1 --place-nodes node2 --place-cores 0 --memory-cap 100 -- $(printf '%q ' "${prog[@]}")
r unnamed -n 2 -c 1 --place-cores 0-1 -- $(printf '%q ' "${prog[@]}")
r unnamed20 --launcher-version slurm:20.02 -n 2 -c 1 --place-cores 0-1 -- $(printf '%q ' "${prog[@]}")
r noc -n 2 --place-nodes node2 --place-cores 0-1 -- $(printf '%q ' "${prog[@]}")
r nocunplaced -n 2 -- $(printf '%q ' "${prog[@]}")
"$BERTH" render -n 2 -c 1 --place-nodes node2 --place-cores 0-1 -- hostname > text.out 2>&1
for n in cpu span gpu cap unnamed unnamed20 noc nocunplaced; do
  [[ \$(cat \$n.rc) == 0 ]] && timeout 60 "$here/launch.py" \$n.json > \$n.out 2>&1; echo \$? > \$n.run
done
EOS
chmod +x "$d/job.sh"
res=$(job_run "$d/job.out" -N2 -n4 --mem=1500 --gpus-per-node=2 -- "$d/job.sh")
check "the batch job ran to completion ($res)" test "${res%% *}" = COMPLETED

# argv_is NAME EXPECTED-ARGV...: the rendered argv, up to the program
argv_is() {
    local name=$1; shift
    local got
    got=$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["argv"]; print(" ".join(a[:a.index("sh")]))' "$d/$name.json" 2>&1)
    if [[ $got == "$*" ]]; then ok "render $name: $got"
    else not_ok "render $name: argv '$got', want '$*' ($(cat "$d/$name.err" 2>/dev/null))"; fi
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$d/$1.json" "$2" 2>/dev/null; }

for n in cpu span gpu cap unnamed noc nocunplaced; do
    check "render $n exits 0" test "$(cat "$d/$n.rc" 2>/dev/null)" = 0
    check "render $n: placement_support $want as srun $version implies" test "$(field $n placement_support)" = "$want"
done
if [[ $want == SCHEDULER ]]; then
    argv_is cpu srun -c 1 -N 1 -n 2 -w node2 --exact --gres=none
    argv_is span srun -c 1 -N 2 -n 2 -w node1,node2 --exact --gres=none
    argv_is gpu srun -c 1 -N 1 -n 1 -w node1 --exact --gpus=1
    argv_is cap srun -c 1 -N 1 -n 1 -w node2 --exact --gres=none --mem=100M
    # core sets without node names: no -w; no cpus per task given: no -c
    argv_is unnamed srun -c 1 -N 1 -n 2 --exact --gres=none
    argv_is noc srun -N 1 -n 2 -w node2 --exact --gres=none
    check "memory caps ENFORCED on this Slurm" test "$(field cap memory_cap_support)" = ENFORCED
    check "text form is the same command" grep -qx 'srun -c 1 -N 1 -n 2 -w node2 --exact --gres=none hostname' "$d/text.out"
fi
for v in SLURM_MEM_PER_NODE SLURM_GPUS_PER_NODE; do
    check "the env delta unsets $v" grep -q "\"$v\"" "$d/cpu.json"
done

# ran NAME NODE...: the launch exited 0 and one task reported from each NODE
ran() {
    local name=$1; shift
    local want got
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    got=$(sed -n 's/^task \([^ ]*\) .*/\1/p' "$d/$name.out" 2>/dev/null | sort | tr '\n' ' ')
    if [[ $(cat "$d/$name.run" 2>/dev/null) == 0 && $got == "$want" ]]; then ok "launch $name ran on: $got"
    else not_ok "launch $name: exit $(cat "$d/$name.run" 2>/dev/null), tasks on '$got', want '$want': $(tail -n 3 "$d/$name.out" 2>/dev/null)"; fi
}
ran cpu node2 node2
ran span node1 node2
ran gpu node1
ran cap node2
ran noc node2 node2
# the launcher's own node: both tasks on one node, whichever srun took
for n in unnamed unnamed20 nocunplaced; do
    nodes=$(sed -n 's/^task \([^ ]*\) .*/\1/p' "$d/$n.out" 2>/dev/null | sort | uniq -c | awk '{print $1}')
    if [[ $(cat "$d/$n.run" 2>/dev/null) == 0 && $nodes == 2 ]]; then ok "launch $n ran 2 tasks on one node"
    else not_ok "launch $n: exit $(cat "$d/$n.run" 2>/dev/null), '$(cat "$d/$n.out" 2>/dev/null | tail -n 3)' ($(cat "$d/$n.err" 2>/dev/null))"; fi
done
argv_is unnamed20 srun -c 1 -N 1 -n 2 --cpu-bind=mask_cpu:0x1,0x2
argv_is nocunplaced srun -N 1 -n 2
check "srun took every rendered line (no 'Invalid numeric value')" bash -c "! grep -l 'Invalid numeric value' $d/*.out"
check "no step waited in srun" bash -c "! grep -l 'step creation' $d/*.out"
check "the env delta reached the step (no SLURM_MEM_PER_NODE)" grep -q 'mem=unset' "$d/cpu.out"
check "the CPU step saw no GPU" grep -q 'cvd=unset\|cvd= ' "$d/cpu.out"
check "the GPU step saw exactly one GPU" grep -Eq 'cvd=[0-9]+ gpus=[0-9]+ ' "$d/gpu.out"
finish
