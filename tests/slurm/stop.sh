#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# srun steps are stopped the way srun wants (issue 23), inside a real sbatch
# job on a 1-node, 2-CPU local cluster: a 2-task srun step (berth run
# without --local, the rendered srun launch) stopped by SIGTERM to berth
# run, and one started by the Python client's lease.run and stopped by its
# timeout. Each time: berth run / TimeoutExpired come back, no step of the
# job is left in `squeue -s` once the lease has ended, and the next step
# over the same CPUs starts without srun's "step creation temporarily
# disabled". (Before: Python's timeout SIGKILLed srun, which left the step
# in Slurm and the next srun waiting for it.) And srun killed from outside:
# the step it left in Slurm is cancelled before the lease ends.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"
pydir=${BERTH_SRCDIR:-$here/../..}/contrib/python

cluster_start LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS=2 LOCAL_SLURM_MEM_MB=2000
d=$T/stop
mkdir -p "$d"
mkdir -m 700 "$d/run"

cat >"$d/job.sh" <<EOS
#!/bin/bash
export BERTH=$BERTH PYTHONPATH=$pydir BERTH_STOP_GRACE=20
envs=\$("$BERTHD" --detach --print-env --socket $d/run/berthd.sock --state-dir $d/state) || { echo "berthd did not start: \$envs"; exit 3; }
eval "\$envs"
# the job's own steps (not batch or extern) that Slurm still shows
steps() { squeue -h -s -j "\$SLURM_JOB_ID" -o %i | grep -E '^[0-9]+\.[0-9]+\$' | tr '\n' ' '; }
seen() { for ((i = 0; i < 300; i++)); do [[ -n \$(steps) ]] && return 0; sleep 0.1; done; return 1; }

# 1. SIGTERM to berth run
"$BERTH" run -n 2 --label term -- sleep 300 > $d/term.out 2>&1 &
r=\$!
seen; echo "\$(steps)" > $d/term.before
kill -TERM \$r; wait \$r; echo \$? > $d/term.rc
echo "\$(steps)" > $d/term.after
"$BERTH" run -n 2 --label next1 -- true > $d/next1.out 2>&1; echo \$? > $d/next1.rc

# 2. the Python client's timeout
python3 - > $d/py.out 2>&1 <<'PY'
import subprocess, time, berth
with berth.acquire(ntasks=2, argv=["sleep", "300"], label="pytimeout") as lease:
    t0 = time.monotonic()
    try:
        lease.run(timeout=3)
        print("no timeout")
    except subprocess.TimeoutExpired:
        print(f"timeout {time.monotonic() - t0:.1f}")
PY
echo \$? > $d/py.rc
echo "\$(steps)" > $d/py.after
"$BERTH" run -n 2 --label next2 -- true > $d/next2.out 2>&1; echo \$? > $d/next2.rc

# 3. srun itself killed from outside (SIGKILL, as an OOM killer or a
# wrapper's kill -9 would): Slurm still runs the step it started
"$BERTH" run -n 2 --label killed -- sleep 300 > $d/kill.out 2>&1 &
r=\$!
seen
sup=\$(pgrep -P \$r | head -1); s=\$(pgrep -x srun -P "\$sup")
echo "\$s" > $d/kill.srun
kill -KILL \$s; wait \$r; echo \$? > $d/kill.rc
echo "\$(steps)" > $d/kill.after
"$BERTH" run -n 2 --label next3 -- true > $d/next3.out 2>&1; echo \$? > $d/next3.rc
"$BERTH" shutdown > $d/shutdown.out 2>&1
EOS
chmod +x "$d/job.sh"

note "submitting the job"
res=$(job_run "$d/job.out" -N1 -n2 -- "$d/job.sh")
check "the batch job succeeded ($res): $(tail -c 300 "$d/job.out" | tr '\n' ' ')" test "$res" = "COMPLETED 0:0"
check "the srun step was seen running: '$(cat "$d/term.before" 2>/dev/null)'" \
    test -n "$(tr -d ' \n' < "$d/term.before" 2>/dev/null)"
# srun's own status: its tasks were killed when it cancelled the step (137)
check "SIGTERM to berth run: it exits with srun's status for killed tasks, 128+N ($(cat "$d/term.rc" 2>/dev/null)): $(tail -c 300 "$d/term.out" 2>/dev/null | tr '\n' ' ')" \
    test "$(cat "$d/term.rc" 2>/dev/null || echo 0)" -gt 128
check "SIGTERM to berth run: no step left in squeue -s once the lease has ended: '$(cat "$d/term.after" 2>/dev/null)'" \
    test -z "$(tr -d ' \n' < "$d/term.after" 2>/dev/null)"
check "the next step ran: $(cat "$d/next1.out" 2>/dev/null | tr '\n' ' ')" test "$(cat "$d/next1.rc" 2>/dev/null)" = 0
check "the next step started without 'step creation temporarily disabled'" \
    bash -c "! grep -q 'temporarily disabled' '$d/next1.out'"
check "Python: TimeoutExpired ($(cat "$d/py.out" 2>/dev/null | tr '\n' ' '))" grep -q '^timeout ' "$d/py.out"
check "Python timeout: no step left in squeue -s once the lease has ended: '$(cat "$d/py.after" 2>/dev/null)'" \
    test -z "$(tr -d ' \n' < "$d/py.after" 2>/dev/null)"
check "the next step ran: $(cat "$d/next2.out" 2>/dev/null | tr '\n' ' ')" test "$(cat "$d/next2.rc" 2>/dev/null)" = 0
check "the next step started without 'step creation temporarily disabled'" \
    bash -c "! grep -q 'temporarily disabled' '$d/next2.out'"
check "srun killed: berth run found it ($(cat "$d/kill.srun" 2>/dev/null)) and exits 137 ($(cat "$d/kill.rc" 2>/dev/null))" \
    test "$(cat "$d/kill.rc" 2>/dev/null)" = 137 -a -n "$(cat "$d/kill.srun" 2>/dev/null)"
check "srun killed: berth run says it cancelled the step srun left: $(tail -c 300 "$d/kill.out" 2>/dev/null | tr '\n' ' ')" \
    grep -q 'died of signal 9 while Slurm still ran its step [0-9]*\.[0-9]*: cancelling' "$d/kill.out"
check "srun killed: no step left in squeue -s once the lease has ended: '$(cat "$d/kill.after" 2>/dev/null)'" \
    test -z "$(tr -d ' \n' < "$d/kill.after" 2>/dev/null)"
check "the next step ran: $(cat "$d/next3.out" 2>/dev/null | tr '\n' ' ')" test "$(cat "$d/next3.rc" 2>/dev/null)" = 0
check "the next step started without 'step creation temporarily disabled'" \
    bash -c "! grep -q 'temporarily disabled' '$d/next3.out'"
finish
