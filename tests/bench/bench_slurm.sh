#!/usr/bin/env bash
# On the local Slurm cluster (shared/slurm/local-cluster.sh, its own state
# directory and ports): inside one salloc allocation, an ensemble of STEPS
# one-core steps, JOBS at a time (more than the allocation's cores: the
# ensemble is oversubscribed), run two ways side by side:
#   bare:  parallel -j JOBS srun --exact -n1 -c1 --mem=M -- STEP
#   berth: berthd in the allocation, parallel -j JOBS berth run --cores 1 -- STEP
# Reported: wall time of each, and srun's "step creation temporarily
# disabled" retries counted in each one's output.
# BENCH_SLURM_KEEP=DIR keeps the outputs and cluster logs there and adds, from
# the controller's step log, Slurm's CPU time and the idle CPU time per step.
# Usage: bench_slurm.sh [--quick] [--json FILE]
# Needs root (the cluster's daemons), the Slurm and munge packages (installed
# by the cluster script when missing) and GNU parallel.
set -euo pipefail
quick=0 json=
while [[ $# -gt 0 ]]; do
    case $1 in
        --quick) quick=1 ;;
        --json) json=$2; shift ;;
        *) echo "usage: $0 [--quick] [--json FILE]" >&2; exit 2 ;;
    esac
    shift
done
: "${BERTH:?set BERTH to the berth CLI}" "${BERTHD:?set BERTHD to berthd}"
here=$(dirname "$(readlink -f "$0")")
cluster=${BERTH_LOCAL_CLUSTER:-$(readlink -f "$here/../../../shared/slurm/local-cluster.sh" 2>/dev/null || true)}
[[ -f $cluster ]] || cluster=/work/shared/slurm/local-cluster.sh
[[ -f $cluster ]] || { echo "bench_slurm: no local-cluster.sh (set BERTH_LOCAL_CLUSTER)" >&2; exit 1; }
command -v parallel >/dev/null || { echo "bench_slurm: GNU parallel is not installed" >&2; exit 1; }
if [[ $quick == 1 ]]; then steps=24 step_s=0.1; else steps=200 step_s=0.2; fi
cpus=${BENCH_SLURM_CPUS:-2}
jobs=$((cpus * 4))

t=$(mktemp -d /tmp/berth-bench-slurm.XXXXXX); chmod 755 "$t"
export LOCAL_SLURM_DIR=$t/slurm LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS=$cpus LOCAL_SLURM_MEM_MB=4000
export LOCAL_SLURM_CTLD_PORT=17117 LOCAL_SLURM_SLURMD_PORT=17118 LOCAL_SLURM_CLUSTER=berthbench
# BENCH_SLURM_KEEP=DIR: keep the outputs and the cluster's logs there (with
# the controller's step log: create and complete times of every step)
keep=${BENCH_SLURM_KEEP:-}
finish() {
    bash "$cluster" stop >/dev/null 2>&1
    [[ -n $keep ]] && { mkdir -p "$keep" && cp -r "$t"/*.out "$t"/times "$t"/launch.txt "$t"/slurm/log "$keep"/ 2>/dev/null; }
    rm -rf "$t"
}
trap finish EXIT
envs=$(bash "$cluster" start 2>"$t/start.err") || { echo "bench_slurm: local Slurm did not start: $(tail -3 "$t/start.err")" >&2; exit 1; }
eval "$envs"
binding=${LOCAL_SLURM_BINDING:-unknown}
[[ -n $keep ]] && { scontrol setdebug verbose && scontrol setdebugflags +Steps || echo "bench_slurm: no step log" >&2; }

mkdir -p "$t/state"
cat > "$t/job.sh" <<EOS
#!/bin/bash
# both ensembles in the same allocation, one after the other
export PATH=$(dirname "$BERTH"):$(dirname "$BERTHD"):\$PATH
now() { date +%s.%N; }
s=\$(now)
seq $steps | parallel -N0 -j $jobs "srun --exact -n1 -c1 --mem=100 -- sleep $step_s; echo rc=\\\$?" > $t/bare.out 2>&1
e=\$(now); echo "bare \$s \$e" > $t/times
envs=\$(berthd --detach --print-env --state-dir $t/state) || exit 3
eval "\$envs"
s=\$(now)
seq $steps | parallel -N0 -j $jobs "berth run --cores 1 -- sleep $step_s; echo rc=\\\$?" > $t/berth.out 2>&1
e=\$(now); echo "berth \$s \$e" >> $t/times
berth run --verbose --cores 1 -- true > $t/launch.txt 2>&1
s=\$(now); for i in 1 2 3 4 5; do srun --exact -n1 -c1 --mem=100 -- true; done; e=\$(now); echo "one_srun \$s \$e" >> $t/times
berth shutdown >/dev/null 2>&1
EOS
chmod +x "$t/job.sh"
# -t 15: a hung ensemble is ended by Slurm and reported
salloc -t 15 -N1 -n"$cpus" --mem=3000 "$t/job.sh" >"$t/salloc.out" 2>&1 || {
    echo "bench_slurm: the allocation failed: $(tail -5 "$t/salloc.out")" >&2; exit 1; }

python3 - "$t" "$quick" "$steps" "$jobs" "$cpus" "$step_s" "$binding" "${json:-}" "$keep" <<'PY'
import datetime, json, re, sys
t, quick, steps, jobs, cpus, step_s, binding, out, keep = sys.argv[1:10]
steps, jobs, cpus, step_s = int(steps), int(jobs), int(cpus), float(step_s)
times = {}
for line in open(f"{t}/times"):
    k, s, e = line.split()
    times[k] = float(e) - float(s)
res = {"benchmark": "slurm", "quick": quick == "1", "steps": steps, "at_once": jobs,
       "cpus": cpus, "step_seconds": step_s, "binding": binding,
       "ideal_s": steps * step_s / cpus}
problems = []
for k in ("bare", "berth"):
    text = open(f"{t}/{k}.out", errors="replace").read()
    ok = len(re.findall(r"^rc=0$", text, re.M))
    res[k] = {"wall_s": times.get(k), "steps_ok": ok,
              "srun_retries": len(re.findall(r"step creation (temporarily|still) disabled", text)),
              "steps_per_s": steps / times[k] if times.get(k) else None}
    if ok != steps:
        problems.append(f"{k}: {ok} of {steps} steps exited 0: {text[-300:]!r}")
res["launch"] = open(f"{t}/launch.txt", errors="replace").read().strip()[-400:]
res["one_srun_s"] = times["one_srun"] / 5
res["speedup_vs_bare_srun"] = res["bare"]["wall_s"] / res["berth"]["wall_s"]
res["meets"] = {"as_fast_as_srun": res["berth"]["wall_s"] <= res["bare"]["wall_s"],
                "zero_retries": res["berth"]["srun_retries"] == 0}
print(f"Slurm ({cpus} CPUs on 1 node, binding {binding}): {steps} one-core steps of sleep {step_s}, {jobs} at once")
print(f"  {'':36} {'wall s':>8} {'steps/s':>8} {'srun retries':>13}")
for k, name in (("bare", "parallel -j %d srun --exact" % jobs), ("berth", "parallel -j %d berth run" % jobs)):
    r = res[k]
    print(f"  {name:36} {r['wall_s']:8.2f} {r['steps_per_s']:8.2f} {r['srun_retries']:13d}")
print(f"  one srun --exact -n1 -c1 true alone: {res['one_srun_s']:.3f} s; berth's launch: {res['launch'][-300:]!r}")
print(f"  ideal (steps x duration / CPUs): {res['ideal_s']:.1f} s; berth / bare srun: {res['speedup_vs_bare_srun']:.2f}x faster"
      "   target: at least as fast, zero retries")
# With BENCH_SLURM_KEEP the controller logged each step's create and
# complete: how long Slurm held a CPU per step, and how long CPUs stood idle
# between steps (the launcher's share).
if keep:
    def stamp(line):
        return datetime.datetime.strptime(line[1:24], "%Y-%m-%dT%H:%M:%S.%f").timestamp()
    made, done = {}, {}
    for line in open(f"{t}/slurm/log/slurmctld.log", errors="replace"):
        m = re.search(r"_slurm_rpc_job_step_create: JobId=\d+ StepId=(\d+)", line)
        if m:
            made[int(m[1])] = stamp(line)
        m = re.search(r"_slurm_rpc_step_complete: StepId=\d+\.(\d+)", line)
        if m:
            done[int(m[1])] = stamp(line)
    for k in ("bare", "berth"):
        with open(f"{t}/times") as f:
            s, e = next((float(a), float(b)) for n, a, b in (l.split() for l in f) if n == k)
        ids = [i for i in made if s <= made[i] <= e and i in done]
        if not ids:
            continue
        held = sum(done[i] - made[i] for i in ids)
        res[k]["slurm_cpu_ms_per_step"] = 1000 * held / len(ids)
        res[k]["idle_cpu_ms_per_step"] = 1000 * (cpus * (e - s) - held) / len(ids)
        print(f"  {k}: Slurm held a CPU {res[k]['slurm_cpu_ms_per_step']:.1f} ms per step; "
              f"CPUs idle {res[k]['idle_cpu_ms_per_step']:.1f} ms per step")
for p in problems:
    print("  problem:", p)
if out:
    json.dump(res, open(out, "w"), indent=2, sort_keys=True)
sys.exit(1 if problems else 0)
PY
