#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Is the allocation alive, on a real Slurm: a shell that kept SLURM_JOB_ID of
# an ended job (salloc then scancel; a batch job that finished; a job id the
# controller never had) is warned and works as a login node, at the cost of
# one squeue (two for a job without a record); berthd refuses to start there
# (exit 3) and fails loudly (exit 4) when the controller is down. Inside a
# batch job the local proof holds and no squeue runs at all. Every squeue is
# counted by a wrapper first on PATH.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"

# two nodes, so that the submitting host is not one of them (no local proof)
cluster_start LOCAL_SLURM_NODES=2 LOCAL_SLURM_CPUS=1 LOCAL_SLURM_MEM_MB=1000
real_squeue=$(command -v squeue)
mkdir -p "$T/bin"
cat >"$T/bin/squeue" <<EOS
#!/bin/bash
echo "\$*" >> "$T/squeue.calls"
exec "$real_squeue" "\$@"
EOS
chmod +x "$T/bin/squeue"
export PATH=$T/bin:$PATH
calls() { if [[ -f $T/squeue.calls ]]; then wc -l <"$T/squeue.calls"; else echo 0; fi; }

# as_stale_shell JOB CMD...: CMD in the environment a shell of job JOB kept
# (the variables salloc sets; the submitting host is not one of the nodes)
as_stale_shell() {
    local job=$1; shift
    rm -f "$T/squeue.calls"
    env -u SLURMD_NODENAME SLURM_JOB_ID="$job" SLURM_JOBID="$job" SLURM_JOB_NODELIST=node1 \
        SLURM_NODELIST=node1 SLURM_JOB_NUM_NODES=1 SLURM_NNODES=1 SLURM_JOB_CPUS_PER_NODE=1 "$@"
}
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

# wait_state JOB STATE: the controller has the job in STATE
wait_state() {
    local i
    for ((i = 0; i < 100; i++)); do
        [[ $("$real_squeue" --noheader -t all -j "$1" -o %T 2>/dev/null) == "$2" ]] && return 0
        sleep 0.1
    done
    return 1
}

# A live salloc shell: salloc runs its command on the submitting host, where
# no local proof holds, so one query says RUNNING.
cat >"$T/live.sh" <<EOS
#!/bin/bash
rm -f "$T/squeue.calls"
"$BERTH" machine --allocation --json > "$T/live.json" 2> "$T/live.err"
echo \$? > "$T/live.rc"
EOS
chmod +x "$T/live.sh"
timeout 60 salloc -N1 -n1 "$T/live.sh" >/dev/null 2>&1
check "live salloc shell: berth machine --allocation exits 0" test "$(cat "$T/live.rc" 2>/dev/null)" = 0
check "live salloc shell: system slurm" test "$(json_field "$T/live.json" system)" = slurm
check "live salloc shell: liveness from one query ($(json_field "$T/live.json" liveness))" \
    grep -qi 'squeue\|query' <<<"$(json_field "$T/live.json" liveness)"
check "live salloc shell: exactly one squeue ($(calls))" test "$(calls)" = 1

# Inside a batch job the local proof holds: no query at all.
cat >"$T/batch.sh" <<EOS
#!/bin/bash
export PATH=$T/bin:\$PATH
rm -f "$T/squeue.calls"
"$BERTH" machine --allocation --json > "$T/batch.json" 2> "$T/batch.err"
echo \$? > "$T/batch.rc"
EOS
chmod +x "$T/batch.sh"
res=$(job_run "$T/batch.out" -N1 -n1 -- "$T/batch.sh")
check "batch job: berth machine --allocation exits 0 ($res)" test "$(cat "$T/batch.rc" 2>/dev/null)" = 0
check "batch job: local proof ($(json_field "$T/batch.json" liveness))" \
    grep -q 'local proof' <<<"$(json_field "$T/batch.json" liveness)"
check "batch job: no squeue ($(calls))" test "$(calls)" = 0

# stale JOB STATE DESC QUERIES: berth machine --allocation warns, naming the
# job and STATE, and falls back to login after QUERIES squeue calls.
stale() {
    local job=$1 state=$2 desc=$3 queries=$4 rc
    as_stale_shell "$job" "$BERTH" machine --allocation --json >"$T/stale.json" 2>"$T/stale.err"; rc=$?
    local n; n=$(calls)
    check "$desc: exits 0 ($rc)" test "$rc" = 0
    check "$desc: falls back to login" test "$(json_field "$T/stale.json" system)" = login
    if grep -q "Slurm job $job .*$state" "$T/stale.err" && grep -q "salloc or sbatch" "$T/stale.err"; then
        ok "$desc: warned: $(head -c 160 "$T/stale.err")"
    else not_ok "$desc: no warning naming job $job and $state: $(cat "$T/stale.err")"; fi
    check "$desc: $queries squeue call(s) ($n)" test "$n" = "$queries"
}

# salloc, then scancel: the shell outlives its allocation
job=$(timeout 60 salloc --no-shell -N1 -n1 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
if [[ -n $job ]]; then
    scancel "$job"
    check "salloc job $job is CANCELLED" wait_state "$job" CANCELLED
    stale "$job" CANCELLED "salloc then scancel (job $job)" 1
else
    not_ok "salloc --no-shell granted no job"
fi
cancelled=$job

# a batch job that has finished
res=$(job_run "$T/done.out" -N1 -n1 --wrap true -- )
job=$(squeue --noheader -t all -o '%i %T' | awk '$2 == "COMPLETED" {print $1}' | tail -n 1)
stale "$job" COMPLETED "finished batch job $job" 1

# a job id the controller never had: the second query tells "no record"
# from "no scheduler"
stale 999999 "not known" "job 999999 without a record" 2

if [[ -n ${BERTHD:-} ]]; then
    st=$T/state-stale
    as_stale_shell "$cancelled" "$BERTHD" --detach --print-env --state-dir "$st" >"$T/d.out" 2>"$T/d.err"; rc=$?
    n=$(calls)
    check "berthd in the stale shell exits 3 ($rc)" test "$rc" = 3
    if grep -q "Slurm job $cancelled .*CANCELLED" "$T/d.err"; then ok "berthd names the stale job: $(head -c 160 "$T/d.err")"
    else not_ok "berthd stale: message does not name job $cancelled CANCELLED: $(cat "$T/d.err")"; fi
    check "berthd stale: exactly one squeue ($n)" test "$n" = 1
    check "berthd stale: --print-env output fails when evaluated" bash -c "! eval \"\$(cat '$T/d.out')\" 2>/dev/null"
    check "berthd stale: no socket left" bash -c "! ls '$st'/*.sock '$st'/sock* 2>/dev/null | grep -q ."
else
    note "BERTHD not set: the berthd part is not run"
fi

# The controller is down: nothing can say whether the job lives, so fail
# loudly rather than quietly working as a login node.
note "stopping the controller"; cluster_stop
# (both at once: each squeue to a dead controller retries for some 14 s)
as_stale_shell "$cancelled" timeout 120 "$BERTH" machine --allocation --json >"$T/down.json" 2>"$T/down.err" &
mpid=$!
if [[ -n ${BERTHD:-} ]]; then
    as_stale_shell "$cancelled" timeout 120 "$BERTHD" --detach --print-env --state-dir "$T/state-down" >"$T/dd.out" 2>"$T/dd.err"
    echo $? >"$T/dd.rc"
fi
wait "$mpid"; rc=$?
check "controller down: berth machine --allocation fails ($rc)" test "$rc" != 0 -a "$rc" != 124
check "controller down: says the scheduler cannot be reached" grep -q "cannot be reached" "$T/down.err"
check "controller down: no login fallback" bash -c "! grep -q '\"login\"' '$T/down.json'"
if [[ -n ${BERTHD:-} ]]; then
    check "controller down: berthd exits 4 ($(cat "$T/dd.rc"))" test "$(cat "$T/dd.rc")" = 4
    check "controller down: berthd says the scheduler cannot be reached" grep -q "cannot be reached" "$T/dd.err"
fi
note "finished"; finish
