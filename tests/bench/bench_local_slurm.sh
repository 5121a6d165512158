#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a --local step costs on Slurm (issue 15), the ways side by side in one
# batch job on the local cluster (1 node, 2 CPUs, its own state and ports):
#   bound:   berth run --local as berth binds it where it places by CPU
#            binding (a berthd that sees Slurm 20.02: an srun wrapper says so)
#   srun:    berth run --local where Slurm places every step (22.05: the
#            step goes through srun and reports its CPUs with berth placed)
#   holder:  the other design, prototyped by hand: one long srun step holds
#            a CPU in Slurm's books; bound local steps run inside it
# STEPS short steps (`true`) one at a time, then two at a time; the holder's
# start is timed apart (the pool grows by one srun, not one per step).
# Usage: bench_local_slurm.sh [STEPS]    (root; BERTH, BERTHD set)
set -euo pipefail
: "${BERTH:?set BERTH to the berth CLI}" "${BERTHD:?set BERTHD to berthd}"
n=${1:-40}
here=$(dirname "$(readlink -f "$0")")
cluster=${BERTH_LOCAL_CLUSTER:-$(readlink -f "$here/../../../shared/slurm/local-cluster.sh" 2>/dev/null || true)}
[[ -f $cluster ]] || cluster=/work/shared/slurm/local-cluster.sh
d=$(mktemp -d /tmp/bench-local-slurm.XXXXXX)
chmod 755 "$d"          # munged wants its socket's directories searchable
mkdir -m 700 "$d/sock"  # berthd wants its socket's private
export LOCAL_SLURM_DIR=$d/cluster LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS=2 LOCAL_SLURM_MEM_MB=2000 \
    LOCAL_SLURM_CTLD_PORT=${BERTH_SLURM_CTLD_PORT:-17117} \
    LOCAL_SLURM_SLURMD_PORT=${BERTH_SLURM_SLURMD_PORT:-17118} LOCAL_SLURM_CLUSTER=benchlocal \
    LOCAL_SLURM_SELFTEST=0
trap 'bash "$cluster" stop >/dev/null 2>&1; rm -rf "$d"' EXIT
bash "$cluster" start >/dev/null 2>"$d/start.err" || { cat "$d/start.err" >&2; exit 1; }
# shellcheck disable=SC1091
. "$LOCAL_SLURM_DIR/env.sh"
mkdir -p "$d/old"
# shellcheck disable=SC2016  # the wrapper's own $1 and $@
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "slurm 20.02.7"; exit 0; }\nexec %s "$@"\n' \
    "$(command -v srun)" >"$d/old/srun"
chmod +x "$d/old/srun"
cat >"$d/job.sh" <<EOS
#!/bin/bash
set -u
ms() { python3 -c 'import sys; a, b, k = map(float, sys.argv[1:]); print(f"{1000 * (b - a) / k:.1f} ms/step, {k / (b - a):.1f} steps/s")' "\$@"; }
burst() {   # LABEL PAIRS(0/1) CMD...: $n steps, one or two at a time
    local label=\$1 two=\$2 t0 i; shift 2
    t0=\$(date +%s.%N)
    for ((i = 0; i < $n; i += 1 + two)); do
        if ((two)); then "\$@" & "\$@"; wait; else "\$@"; fi
    done
    echo "\$label: \$(ms \$t0 \$(date +%s.%N) $n)"
}
eval "\$("$BERTHD" --detach --print-env --state-dir $d/s1 --socket $d/sock/1)"
PATH=$d/old:\$PATH "$BERTHD" --detach --state-dir $d/s2 --socket $d/sock/2 >/dev/null
for round in 1 2; do
    BERTH_SOCKET=$d/sock/2 burst "bound, one at a time" 0 "$BERTH" run --local --cores 1 -- true
    BERTH_SOCKET=$d/sock/2 burst "bound, two at a time" 1 "$BERTH" run --local --cores 1 -- true
    BERTH_SOCKET=$d/sock/1 burst "srun, one at a time" 0 "$BERTH" run --local --cores 1 -- true
    BERTH_SOCKET=$d/sock/1 burst "srun, two at a time" 1 "$BERTH" run --local --cores 1 -- true
    t0=\$(date +%s.%N)
    coproc H { exec srun --exact -N1 -n1 -c1 --mem=16 --gres=none sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status; exec cat >/dev/null'; }
    read -r cpu <&"\${H[0]}"
    took=\$(ms \$t0 \$(date +%s.%N) 1)
    echo "holder start: \${took%%/*} (CPU \$cpu)"
    BERTH_SOCKET=$d/sock/2 burst "holder, one at a time" 0 "$BERTH" run --local --cores 1 -- taskset -c "\$cpu" true
    exec {H[1]}>&-
    wait "\$H_PID"
done
BERTH_SOCKET=$d/sock/1 "$BERTH" shutdown >/dev/null 2>&1
BERTH_SOCKET=$d/sock/2 "$BERTH" shutdown >/dev/null 2>&1
EOS
chmod +x "$d/job.sh"
id=$(sbatch --parsable -t 10 -o "$d/job.out" -N1 -n2 --mem=1500 "$d/job.sh")
while [[ -n $(squeue -h -j "$id" 2>/dev/null) ]]; do sleep 0.5; done
echo "# $n steps of 'true' per line; load $(cut -d' ' -f1 /proc/loadavg)"
cat "$d/job.out"
