#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real MPI programs launched the way berth renders them (issue 15): berthd in
# a batch job on the local cluster loads a site-style machine file whose
# launcher carries the MPI plugin (tests/data/machines/localslurm-MPI.cfg:
# `srun --mpi=pmi2 ...` for MPICH, `srun --mpi=pmix ...` for Open MPI), and
# ensembles of tests/mpi/mpi_report.c go through `berth run`, one ensemble
# per MPI and cluster shape:
#   wide  3 nodes x 2 CPUs, 2 fake GPUs each (binding mode shared): 1- and
#         2-rank and -c 2 steps on one node beside 3- to 6-rank steps over
#         two or three nodes, GPU steps on one node and over two
#   one   1 node x 2 CPUs, 2 GPUs (exclusive: declared CPUs are real CPUs)
#   two   2 nodes x 1 CPU, 2 GPUs each (exclusive): 2-rank steps over both
#         nodes beside 1-rank steps
# mpi_check.py holds each ensemble to its placements (see there). Controls
# show that its checks fail where they should: each MPI through the wrong
# srun plugin (MPICH under pmix: n jobs of size 1; Open MPI under pmi2: no
# start), and reports edited to share a CPU or to name another node. Without
# any MPI built (no ompi-c or mpich for pkg-config) the test skips loudly.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"
machines=${BERTH_SRCDIR:-$here/../..}/tests/data/machines

mpis=()
for m in mpich openmpi; do
    var=BERTH_MPI_REPORT_${m^^}
    if [[ -x ${!var:-} ]]; then mpis+=("$m"); else note "no $m build of mpi_report ($var unset)"; fi
done
((${#mpis[@]})) || skip "no MPI is installed (neither pkg-config mpich nor ompi-c; contrib/ci/deps.sh installs both)"
hold=3 # seconds each step holds after its reduction, so that steps overlap

# job DIR SHAPE MPI MACHINE-FILE SBATCH-OPTIONS...: berthd with that machine
# file in a batch job, and every step of DIR/steps.txt (label|berth run
# options|ranks|cpus per rank|GPUs[|peer]) through `berth run -v` at once;
# a step that names a peer step meets it (mpi_report MEET PEER): the two run
# at once, however late either starts. Prints the job's final state
job() {
    local d=$1 shape=$2 mpi=$3 cfg=$4; shift 4
    local var=BERTH_MPI_REPORT_${mpi^^}
    mkdir -p "$d/steps" "$d/tmp" "$d/shm" "$d/meet"
    mkdir -m 700 "$d/sock"
    # Open MPI's shared-memory transport names its files after the host, the
    # uid and the Slurm step: ranks of one step on two slurmds of this one
    # host would collide, so steps over several nodes talk TCP; on one node
    # it keeps them under this job's own directory (other clusters on this
    # host reuse the same job and step ids). The PMIx plugin's directories
    # are under each node's own TmpFS (SLURM_PMIX_TMPDIR would be one shared
    # by the nodes, where they collide too).
    local ompi=
    if [[ $mpi == openmpi && $shape == one ]]; then
        ompi="export OMPI_MCA_btl_vader_backing_directory=$d/shm"
    elif [[ $mpi == openmpi ]]; then
        ompi="export OMPI_MCA_btl=self,tcp"
    fi
    cat >"$d/job.sh" <<EOS
#!/bin/bash
# the MPI's own temporary files in this job's directory, not in /tmp
export TMPDIR=$d/tmp
$ompi
# its own socket: the default one is named after the job id, and other
# clusters on this host number their jobs from 1 too
envs=\$("$BERTHD" --detach --print-env --config "$cfg" --state-dir $d/state --socket $d/sock/berthd.sock) \
    || { echo "berthd did not start: \$envs"; exit 3; }
eval "\$envs"
# step LABEL OPTIONS: one berth run. Open MPI 4.1.4 now and then crashes in
# MPI_Init when ranks of one step sit on two slurmds of this one host: a
# rank calls through a NULL pointer from a callback of its TCP transport
# (mca_btl_tcp.so, from a core dump; some runs also print "Open MPI failed to
# TCP connect to a peer MPI process"), srun says "task N: Segmentation
# fault". Measured with srun alone, 2-rank steps over 2 nodes: 0 of 80 on an
# idle machine, 2 of 60 with both CPUs busy. A step whose rank died so (the
# program itself never does) runs once more, its first output kept as
# LABEL.out.wireup.
step() {
  local out=$d/steps/\$1.out rc meet=()
  [[ -n \$3 ]] && meet=($d/meet/\$1 $d/meet/\$3)
  "$BERTH" run -v \$2 --label \$1 -- "${!var}" $hold "\${meet[@]}" > \$out 2>&1; rc=\$?
  if [[ \$rc != 0 ]] && grep -Eq "task [0-9-]+: Segmentation fault" \$out; then
    mv \$out \$out.wireup
    "$BERTH" run -v \$2 --label \$1 -- "${!var}" $hold "\${meet[@]}" > \$out 2>&1; rc=\$?
  fi
  echo \$rc > $d/steps/\$1.rc
}
# the steps that meet a peer first, one at a time, each once it runs (its
# file is there): the later one fits beside the earlier, which holds its
# cores until it comes; then the others all at once
while IFS='|' read -r label opts n cpt gpus peer; do
  [[ -n \$peer ]] || continue
  step \$label "\$opts" "\$peer" < /dev/null &
  for i in {1..600}; do [[ -e $d/meet/\$label ]] && break; sleep 0.1; done
done < $d/steps.txt
while IFS='|' read -r label opts n cpt gpus peer; do
  [[ -z \$peer ]] || continue
  step \$label "\$opts" "" < /dev/null &
done < $d/steps.txt
wait
"$BERTH" shutdown > $d/shutdown.out 2>&1
EOS
    chmod +x "$d/job.sh"
    # 2 minutes, not job_run's 5: a step that hangs ends the job well within
    # the test's own time limit (each job takes well under a minute)
    job_run "$d/job.out" -t 2 "$@" -- "$d/job.sh"
}

# the launcher a machine file gives (its parallel_executable)
launcher_of() { sed -n 's/^parallel_executable *= *//p' "$1"; }

# ensemble SHAPE MPI SBATCH-OPTIONS...: run the steps on stdin in one job
# with the MPI's machine file, and check them
ensemble() {
    local shape=$1 mpi=$2; shift 2
    local d=$T/$shape-$mpi cfg=$machines/localslurm-$mpi.cfg t0=$SECONDS res
    mkdir -p "$d"
    cat >"$d/steps.txt"
    res=$(job "$d" "$shape" "$mpi" "$cfg" "$@")
    check "$shape-$mpi: the batch job ran to completion ($res, $((SECONDS - t0)) s): $(tail -c 300 "$d/job.out" | tr '\n' ' ')" \
        test "$res" = "COMPLETED 0:0"
    local flags=(--launcher "$(launcher_of "$cfg")" --binding "$LOCAL_SLURM_BINDING")
    [[ $shape == wide ]] && flags+=(--mixed)
    python3 "$here/mpi_check.py" "$d" "$mpi" "${flags[@]}"
    local status=$?
    count_results "$d/check.log"
    [[ $status == 0 ]] || not_ok "$shape-$mpi: mpi_check.py failed (exit $status)"
    note "$shape-$mpi: $(grep -c . "$d/steps.txt") steps"
}

# control MPI PLUGIN WHAT: the MPI's machine file with the wrong srun plugin
# makes mpi_check.py fail on WHAT (a pattern of its FAIL line): the checks
# see a launch that did not make one MPI job
control() {
    local mpi=$1 plugin=$2 what=$3
    local d=$T/control-$mpi cfg=$T/control-$mpi.cfg
    mkdir -p "$d"
    sed "s/--mpi=[a-z0-9_]*/--mpi=$plugin/" "$machines/localslurm-$mpi.cfg" >"$cfg"
    echo "c2|-n 2 -c 1|2|1|0" >"$d/steps.txt"
    job "$d" control "$mpi" "$cfg" -N1 -n2 --mem=1500 >/dev/null
    python3 "$here/mpi_check.py" "$d" "$mpi" --launcher "$(launcher_of "$cfg")" >/dev/null
    check "control: $mpi through srun --mpi=$plugin fails the check ($(grep -m1 '^FAIL' "$d/check.log" | cut -c1-200))" \
        grep -q "^FAIL - .*$what" "$d/check.log"
}

# tampered FROM SED-SCRIPT WHAT LAUNCHER: the reports of ensemble FROM, edited by
# SED-SCRIPT, make mpi_check.py fail on WHAT (its checks can fail)
tampered() {
    local from=$T/$1 d=$T/tampered-$1-$((++tampered_n)) f
    [[ -f $from/check.log ]] || { not_ok "tampered: no ensemble $1 to edit"; return; }
    mkdir -p "$d/steps"
    cp "$from/steps.txt" "$from/job.out" "$d/"
    for f in "$from"/steps/*; do sed "$2" "$f" >"$d/steps/${f##*/}"; done
    python3 "$here/mpi_check.py" "$d" "${1#*-}" --launcher "$4" --binding "$LOCAL_SLURM_BINDING" >/dev/null
    check "tampered: $1 with '$2' fails the check ($(grep -m1 '^FAIL' "$d/check.log" | cut -c1-160))" \
        grep -q "^FAIL - .*$3" "$d/check.log"
}
tampered_n=0

# the cluster must confine steps to real CPUs
need_exclusive() {
    [[ $LOCAL_SLURM_BINDING == exclusive ]] && return 0
    not_ok "$1: the cluster is in binding mode $LOCAL_SLURM_BINDING, not exclusive"
    return 1
}

# Node names of this test's own: Slurm's cgroups are named after the node
# (slurm_NODE/uid_U/job_N), and other clusters on this host (node1.., or the
# host name) number their jobs from 1 too.
# 2 CPUs per node: berthd's ledger holds what its node's CPU affinity gives.
# The multi-node steps come first (and first when waiting): most leave cores
# free for single-node steps beside them. w4 (over two or three nodes)
# starts first and holds its cores until w1a (one core, started once w4
# runs) comes, so a single-node and a multi-node step surely run at once
# (timing alone made such pairs in most runs, and in one CI run none).
cluster_start LOCAL_SLURM_NODE_NAMES=mpi1,mpi2,mpi3 LOCAL_SLURM_NODES=3 LOCAL_SLURM_CPUS=2 LOCAL_SLURM_MEM_MB=3000 LOCAL_SLURM_GPUS=2
for mpi in "${mpis[@]}"; do
    ensemble wide "$mpi" -N3 --ntasks-per-node=2 --mem=2000 --gpus-per-node=2 <<'EOF'
w4|-n 4 -c 1 --priority 1|4|1|0|w1a
w1a|-n 1 -c 1|1|1|0|w4
w3|-n 3 -c 1 --priority 1|3|1|0
w1b|-n 1 -c 1|1|1|0
w2|-n 2 -c 1 --no-span|2|1|0
g1a|-n 1 -c 1 --gpus 1|1|1|1
w1c|-n 1 -c 1|1|1|0
wc2|-n 1 -c 2|1|2|0
g4|-n 4 -c 1 --gpus 4 --priority 1|4|1|4
w5|-n 5 -c 1 --priority 1|5|1|0
g2|-n 2 -c 1 --gpus 2 --no-span|2|1|2
w6|-n 6 -c 1 --priority 1|6|1|0
g1b|-n 1 -c 1 --gpus 1|1|1|1
w1d|-n 1 -c 1|1|1|0
EOF
done
# the meeting's check fails where a step did not meet its peer
tampered "wide-${mpis[0]}" 's/"met": true/"met": false/' "meet a peer ran at once" \
    "$(launcher_of "$machines/localslurm-${mpis[0]}.cfg")"

cluster_start LOCAL_SLURM_NODE_NAMES=mpi1 LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS=2 LOCAL_SLURM_MEM_MB=2000 LOCAL_SLURM_GPUS=2
if need_exclusive one; then
    for mpi in "${mpis[@]}"; do
        ensemble one "$mpi" -N1 -n2 --mem=1500 --gpus-per-node=2 <<'EOF'
e1a|-n 1 -c 1|1|1|0
e1b|-n 1 -c 1|1|1|0
g1a|-n 1 -c 1 --gpus 1|1|1|1
g1b|-n 1 -c 1 --gpus 1|1|1|1
e2|-n 2 -c 1|2|1|0
e1c|-n 1 -c 1|1|1|0
e1d|-n 1 -c 1|1|1|0
EOF
    done
    # every rank on real CPU 0, a rank elsewhere than its placement
    mpi=${mpis[0]}
    tampered "one-$mpi" 's/"cpus": "[0-9,-]*"/"cpus": "0"/' "never shared a real CPU" \
        "$(launcher_of "$machines/localslurm-$mpi.cfg")"
    tampered "one-$mpi" '/"rank": 0,/s/"node": "[^"]*"/"node": "elsewhere"/' "node its placement named" \
        "$(launcher_of "$machines/localslurm-$mpi.cfg")"
    # MPICH under the PMIx plugin starts each rank as a job of its own and
    # still exits 0; Debian's Open MPI cannot start under PMI-2
    for mpi in "${mpis[@]}"; do
        case $mpi in
            mpich) control mpich pmix "size equals its -n" ;;
            openmpi) control openmpi pmi2 "exited 0" ;;
        esac
    done
fi

cluster_start LOCAL_SLURM_NODE_NAMES=mpi1,mpi2 LOCAL_SLURM_NODES=2 LOCAL_SLURM_CPUS=1 LOCAL_SLURM_MEM_MB=2000 LOCAL_SLURM_GPUS=2
if need_exclusive two; then
    for mpi in "${mpis[@]}"; do
        ensemble two "$mpi" -N2 --ntasks-per-node=1 --mem=1500 --gpus-per-node=2 <<'EOF'
x1a|-n 1 -c 1|1|1|0
x1b|-n 1 -c 1|1|1|0
x2a|-n 2 -c 1|2|1|0
g1|-n 1 -c 1 --gpus 1|1|1|1
x1c|-n 1 -c 1|1|1|0
x2b|-n 2 -c 1 --gpus 2|2|1|2
EOF
    done
fi
note "finished"
finish
