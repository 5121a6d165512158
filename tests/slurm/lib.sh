# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the Slurm integration tests (tests/slurm/*.sh). Brings up the
# local Slurm cluster of ../shared/slurm/local-cluster.sh under a private state
# directory and private ports, stops it on exit, and counts results:
#   ok DESC | not_ok DESC  ...  finish  (prints "NAME: N passed, N failed")
# A machine that cannot run Slurm at all (not root, no packages and no
# apt-get, no cluster script, BERTH_SKIP_SLURM=1) skips the test loudly with
# exit 77, which meson reports as SKIP.
set -u
: "${BERTH:?BERTH must name the berth executable}"
slurm_test=$(basename "$0" .sh)
passed=0 failed=0

# Ports apart from the cluster's defaults (16817/8) and from the acceptance
# check's (16917/8), so a cluster left running by either does not collide.
export LOCAL_SLURM_CTLD_PORT=${BERTH_SLURM_CTLD_PORT:-17017}
export LOCAL_SLURM_SLURMD_PORT=${BERTH_SLURM_SLURMD_PORT:-17018}
export LOCAL_SLURM_CLUSTER=berthtest LOCAL_SLURM_SELFTEST=0

skip() {
    local msg="SKIPPED $slurm_test: $* (the Slurm integration tests did not run)"
    local line=${msg//?/#}
    printf '%s\n%s\n%s\n' "$line" "$msg" "$line" | tee /dev/stderr
    exit 77
}

[[ ${BERTH_SKIP_SLURM:-0} == 1 ]] && skip "BERTH_SKIP_SLURM=1"
cluster_script=${BERTH_LOCAL_SLURM:-${BERTH_SRCDIR:-$(dirname "$0")/../..}/../shared/slurm/local-cluster.sh}
[[ -f $cluster_script ]] || skip "no local cluster script at $cluster_script (set BERTH_LOCAL_SLURM)"
[[ $(id -u) == 0 ]] || skip "the local Slurm cluster needs root"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    command -v apt-get >/dev/null || skip "slurmctld/slurmd/munged are not installed and there is no apt-get to install them"
fi

T=$(mktemp -d "/tmp/berth-slurm-$slurm_test.XXXXXX")
chmod 755 "$T"
export LOCAL_SLURM_DIR=$T/cluster
cluster_up=0
cleanup() {
    [[ $cluster_up == 1 ]] && bash "$cluster_script" stop >/dev/null 2>&1
    if [[ ${BERTH_SLURM_KEEP:-0} == 1 ]]; then echo "kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); printf 'ok - %s\n' "$*"; }
not_ok() { failed=$((failed + 1)); printf 'FAIL - %s\n' "$*" | tee /dev/stderr; }
# check DESC CMD...: ok when CMD exits 0
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
note() { printf "# %s (%ss)\n" "$*" "$SECONDS"; }
# count_results FILE: fold the ok/FAIL lines a helper wrote into the counts
count_results() {
    local n
    n=$(grep -c '^ok - ' "$1" 2>/dev/null); passed=$((passed + ${n:-0}))
    n=$(grep -c '^FAIL - ' "$1" 2>/dev/null); failed=$((failed + ${n:-0}))
}
finish() {
    echo "$slurm_test: $passed passed, $failed failed"
    [[ $failed == 0 ]]
}

# cluster_start VAR=VALUE...: (re)start the cluster with these LOCAL_SLURM_*
# settings (the others at their defaults) and export its environment. A
# cluster that will not start on a machine that can run one is a failure,
# not a skip.
cluster_start() {
    local v
    [[ $cluster_up == 1 ]] && cluster_stop
    unset LOCAL_SLURM_NODES LOCAL_SLURM_CPUS LOCAL_SLURM_MEM_MB LOCAL_SLURM_GPUS LOCAL_SLURM_PBS
    for v in "$@"; do export "${v?}"; done
    local envs
    cluster_up=1
    if ! envs=$(bash "$cluster_script" start 2>"$T/cluster-start.err"); then
        not_ok "the local Slurm cluster ($*) did not start: $(tail -n 5 "$T/cluster-start.err")"
        finish; exit 1
    fi
    eval "$envs"
    note "cluster: $* binding=$LOCAL_SLURM_BINDING cgroup=$LOCAL_SLURM_CGROUP_ACTIVE"
}
cluster_stop() {
    bash "$cluster_script" stop >/dev/null 2>&1
    cluster_up=0
}

# job_run OUT SBATCH-OPTIONS... -- SCRIPT [ARGS]: submit, wait until the job
# has ended (polling the controller: sbatch --wait sleeps up to 10 s more),
# print its final state on stdout; its output goes to OUT. The time limit
# makes a hung job end instead of hanging the test.
job_run() {
    local out=$1; shift
    local opts=() id info state i
    while [[ $1 != -- ]]; do opts+=("$1"); shift; done
    shift
    id=$(sbatch --parsable -t 5 -o "$out" "${opts[@]}" "$@") || { echo SUBMIT_FAILED; return 1; }
    for ((i = 0; i < 3000; i++)); do
        info=$(scontrol -o show job "$id" 2>/dev/null)
        state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
        case $state in PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED | '') ;; *) break ;; esac
        sleep 0.2
    done
    echo "$state $(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$info")"
}

# The expected placement mechanism for a Slurm version.
expected_support() {
    local maj min mic
    IFS=. read -r maj min mic <<<"$1"
    maj=$((10#$maj)) min=$((10#$min)) mic=$((10#${mic:-0}))
    if ((maj > 20 || (maj == 20 && min > 11) || (maj == 20 && min == 11 && mic >= 3))); then echo SCHEDULER
    else echo CPU_BINDING; fi
}
