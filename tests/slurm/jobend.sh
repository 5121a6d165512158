#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The job's end from a real squeue, asked off berthd's event loop, inside a
# real sbatch job (Slurm 22.05 states no SLURM_JOB_END_TIME; it is unset to
# be sure): while squeue runs (held by a wrapper until the test lets it go),
# a status and a step without a duration are served; then the step that ends
# before the job runs, the one that outlasts its 5 min limit is refused, and
# `berth status --time-left` shows the time left. squeue is asked once.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"

cluster_start LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS=2 LOCAL_SLURM_MEM_MB=2000
d=$T/jobend
mkdir -p "$d/bin"
mkdir -m 700 "$d/run"   # a private socket: the default one (per job id) is shared by every local cluster
real=$(command -v squeue)
# the end query says it has started, waits for "go" (at most 6 s: berthd
# gives it 10), then asks the real squeue and says it has ended
cat >"$d/bin/squeue" <<EOS
#!/bin/bash
echo "\$*" >> "$d/calls"
case "\$*" in
  *%e*) touch "$d/started"
        for ((i = 0; i < 60; i++)); do [[ -f "$d/go" ]] && break; sleep 0.1; done
        out=\$("$real" "\$@"); rc=\$?
        touch "$d/ended"
        echo "\$out"; exit \$rc;;
esac
exec "$real" "\$@"
EOS
chmod +x "$d/bin/squeue"

cat >"$d/job.sh" <<EOS
#!/bin/bash
export PATH=$d/bin:\$PATH
unset SLURM_JOB_END_TIME
envs=\$("$BERTHD" --detach --print-env --socket $d/run/berthd.sock --state-dir $d/state) || { echo "berthd did not start: \$envs"; exit 3; }
eval "\$envs"
[[ -n \${BERTH_SOCKET:-} ]] || exit 4
"$BERTH" run --local --cores 1 --duration 60 -- true > $d/fits.out 2>&1 &
fits=\$!
for ((i = 0; i < 300; i++)); do [[ -f $d/started ]] && break; sleep 0.1; done
"$BERTH" run --local --cores 1 --duration 3600 -- true > $d/past.out 2>&1 &
past=\$!
"$BERTH" status --json > $d/status.json; echo \$? > $d/status.rc
[[ -f $d/ended ]] && echo ended > $d/status.after
"$BERTH" run --local --cores 1 -- true > $d/plain.out 2>&1; echo \$? > $d/plain.rc
[[ -f $d/ended ]] && echo ended > $d/plain.after
touch $d/go
wait \$fits; echo \$? > $d/fits.rc
wait \$past; echo \$? > $d/past.rc
"$BERTH" status --time-left > $d/left.out 2>&1; echo \$? > $d/left.rc
"$BERTH" shutdown > $d/shutdown.out 2>&1
EOS
chmod +x "$d/job.sh"

note "submitting the job (5 min limit)"
res=$(job_run "$d/job.out" -N1 -n1 -- "$d/job.sh")
check "the batch job succeeded ($res): $(tail -c 300 "$d/job.out" | tr '\n' ' ')" test "$res" = "COMPLETED 0:0"
check "squeue was asked for the end: $(tr '\n' ';' 2>/dev/null < "$d/calls")" test -f "$d/started"
check "a status is served while squeue runs" test "$(cat "$d/status.rc" 2>/dev/null)" = 0 -a ! -f "$d/status.after"
check "a step without a duration runs while squeue runs: $(cat "$d/plain.out" 2>/dev/null)" \
    test "$(cat "$d/plain.rc" 2>/dev/null)" = 0 -a ! -f "$d/plain.after"
check "then the step that ends before the job runs: $(cat "$d/fits.out" 2>/dev/null)" \
    test "$(cat "$d/fits.rc" 2>/dev/null)" = 0
check "the one that outlasts it is refused: $(cat "$d/past.out" 2>/dev/null)" \
    test "$(cat "$d/past.rc" 2>/dev/null)" = 125
check "with the reason" grep -q "past the end" "$d/past.out"
check "berth status --time-left shows it: $(head -n 1 "$d/left.out" 2>/dev/null)" \
    grep -q "time left [45]m" "$d/left.out"
check "squeue was asked for the end once" test "$(grep -c %e "$d/calls" 2>/dev/null)" = 1
finish
