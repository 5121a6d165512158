#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berthd inside a real sbatch job (3 nodes, fake GPUs, submitted with --mem and
# --gpus-per-node): start-up makes no scheduler query; an ensemble of 42 steps
# of mixed widths (1-task, multi-task spanning nodes, declared memory, GPUs),
# more than fits at once, goes through `berth run`. Every rank runs
# `berth verify`; ensemble_check.py holds the reports and the events log to
# the placements (see there), and reports the packing ratio.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"

# 2 CPUs per node: what berthd's ledger holds (its node's CPU affinity) is
# what Slurm holds, so a ledger that over-commits makes srun wait
cluster_start LOCAL_SLURM_NODES=3 LOCAL_SLURM_CPUS=2 LOCAL_SLURM_MEM_MB=4000 LOCAL_SLURM_GPUS=2
d=$T/ensemble
mkdir -p "$d/bin" "$d/steps"
# every scheduler query in the job is counted (srun launches, it does not ask)
for q in squeue scontrol sinfo sacct; do
    real=$(command -v $q) || continue
    printf '#!/bin/bash\necho "%s $*" >> %s/queries\nexec %s "$@"\n' "$q" "$d" "$real" >"$d/bin/$q"
    chmod +x "$d/bin/$q"
done

# Each rank: its start, what berth verify saw, a short sleep, its end.
duration=2
cat >"$d/step.sh" <<EOS
#!/bin/sh
echo "start \${SLURM_PROCID:-0} \$SLURMD_NODENAME \$(date +%s.%N) \${SLURM_STEP_ID:-}"
v=\$("$BERTH" verify --json); echo "verify \$? \${SLURM_PROCID:-0} \$SLURMD_NODENAME \$v"
sleep $duration
echo "end \${SLURM_PROCID:-0} \$SLURMD_NODENAME \$(date +%s.%N)"
EOS
chmod +x "$d/step.sh"

# The ensemble: label|berth run options|tasks|cores per task|gpus|memory
steps=()
for i in $(seq 1 42); do
    case $((i % 7)) in
        0 | 3 | 5) steps+=("s$i|-n 1 -c 1|1|1|0|") ;;
        1) steps+=("s$i|-n 2 -c 1|2|1|0|") ;;
        2) if ((i % 14 == 2)); then steps+=("s$i|-n 6 -c 1|6|1|0|"); else steps+=("s$i|-n 3 -c 1 --may-span-nodes|3|1|0|"); fi ;;
        4) steps+=("s$i|-n 1 -c 1 --memory 400|1|1|0|400") ;;
        6) if ((i % 14 == 6)); then steps+=("s$i|-n 1 -c 2 --gpus 2|1|2|2|"); else steps+=("s$i|-n 1 -c 1 --gpus 1|1|1|1|"); fi ;;
    esac
done
printf '%s\n' "${steps[@]}" >"$d/steps.txt"

cat >"$d/job.sh" <<EOS
#!/bin/bash
export PATH=$d/bin:\$PATH
env | grep ^SLURM | sort > $d/job.env
cat /proc/self/cgroup > $d/job.cgroup
envs=\$("$BERTHD" --detach --print-env --state-dir $d/state) || { echo "berthd did not start: \$envs"; exit 3; }
eval "\$envs"
[[ -n \${BERTH_SOCKET:-} ]] || exit 4
cp $d/queries $d/queries.startup 2>/dev/null || : > $d/queries.startup
"$BERTH" status --json > $d/status0.json
date +%s.%N > $d/t0
while IFS='|' read -r label opts tasks cpt gpus mem; do
  { "$BERTH" run \$opts --label \$label -- "$d/step.sh" < /dev/null > $d/steps/\$label.out 2>&1
    echo \$? > $d/steps/\$label.rc; } &
done < $d/steps.txt
wait
date +%s.%N > $d/t1
"$BERTH" status --json > $d/status1.json
"$BERTH" shutdown > $d/shutdown.out 2>&1
EOS
chmod +x "$d/job.sh"

note "submitting the ensemble job (sbatch --wait)"
sbatch --wait -t 10 -N3 -n6 --mem=3000 --gpus-per-node=2 -o "$d/job.out" "$d/job.sh" >/dev/null 2>"$d/sbatch.err"
rc=$?
note "the job ended"
check "the batch job succeeded (sbatch --wait exit $rc): $(tail -c 300 "$d/job.out" "$d/sbatch.err" | tr '\n' ' ')" test "$rc" = 0
python3 "$here/ensemble_check.py" "$d" "$duration"
status=$?
# ensemble_check.py prints ok/FAIL lines; fold its count into ours
count_results "$d/check.log"
[[ $status == 0 ]] || not_ok "ensemble_check.py failed (exit $status)"
note "finished"
finish
