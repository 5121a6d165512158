#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the local Slurm cluster (shared/slurm/local-cluster.sh, its own state
# directory and ports): inside one salloc allocation, ensembles of STEPS
# one-core steps, JOBS at a time (more than the allocation's cores: the
# ensemble is oversubscribed), each run two ways side by side:
#   bare:  parallel -j JOBS srun --exact -n1 -c1 --mem=M -- sleep S
#   berth: berthd in the allocation, parallel -j JOBS berth run --cores 1 -- sleep S
# over a sweep of points (JOBS, S), bare first then berth at each point.
# Reported per point and method: wall time, steps/s, srun's "step creation
# temporarily disabled" retries counted in the output, the peak count and
# RSS sum of the launcher processes (srun; berth and berthd), the CPU time
# slurmctld and slurmd spent, and the load average.
# The first point is the headline: its figures keep the top-level JSON keys.
#
# Settings (environment):
#   BENCH_SLURM_CPUS=2          CPUs of the one-node cluster and allocation
#   BENCH_SLURM_STEPS=200       steps per ensemble
#   BENCH_SLURM_JOBS="8 32 128" steps at once, each with BENCH_SLURM_STEP_S
#   BENCH_SLURM_STEP_S=0.2      step length (seconds) for the JOBS sweep
#   BENCH_SLURM_LONG="8:1"      more points as JOBS:SECONDS ("" for none)
#   BENCH_SLURM_KEEP=DIR        keep the outputs and cluster logs there and add,
#                               from the controller's step log, Slurm's CPU time
#                               and the idle CPU time per step
# --quick: one point, 24 steps of 0.1 s, 4 x CPUs at once (proves it works).
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
cpus=${BENCH_SLURM_CPUS:-2}
if [[ $quick == 1 ]]; then
    steps=24 points="$((cpus * 4)):0.1"
else
    steps=${BENCH_SLURM_STEPS:-200} points=
    for n in ${BENCH_SLURM_JOBS-8 32 128}; do points+=" $n:${BENCH_SLURM_STEP_S:-0.2}"; done
    points+=" ${BENCH_SLURM_LONG-8:1}"
fi
points=$(echo $points)
[[ -n $points ]] || { echo "bench_slurm: no points (BENCH_SLURM_JOBS, BENCH_SLURM_LONG)" >&2; exit 2; }
for p in $points; do
    [[ $p =~ ^[1-9][0-9]*:[0-9]+(\.[0-9]+)?$ ]] || { echo "bench_slurm: bad point '$p' (JOBS:SECONDS)" >&2; exit 2; }
done
# the allocation's time limit: every ensemble at 3 times its ideal, plus 5
# minutes; a hung ensemble is ended by Slurm and reported
limit=$(python3 -c 'import math,sys; s,c=int(sys.argv[1]),int(sys.argv[2]); print(5 + math.ceil(sum(2 * 3 * s * float(p.split(":")[1]) / c for p in sys.argv[3:]) / 60))' "$steps" "$cpus" $points)

t=$(mktemp -d /tmp/berth-bench-slurm.XXXXXX); chmod 755 "$t"
export LOCAL_SLURM_DIR=$t/slurm LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS=$cpus LOCAL_SLURM_MEM_MB=4000
export LOCAL_SLURM_CTLD_PORT=17117 LOCAL_SLURM_SLURMD_PORT=17118 LOCAL_SLURM_CLUSTER=berthbench
# BENCH_SLURM_KEEP=DIR: keep the outputs and the cluster's logs there (with
# the controller's step log: create and complete times of every step)
keep=${BENCH_SLURM_KEEP:-}
finish() {
    bash "$cluster" stop >/dev/null 2>&1
    [[ -n $keep ]] && { mkdir -p "$keep" && cp -r "$t"/*.out "$t"/*.ps "$t"/times "$t"/launch.txt "$t"/slurm/log "$keep"/ 2>/dev/null; }
    rm -rf "$t"
}
trap finish EXIT
envs=$(bash "$cluster" start 2>"$t/start.err") || { echo "bench_slurm: local Slurm did not start: $(tail -3 "$t/start.err")" >&2; exit 1; }
eval "$envs"
binding=${LOCAL_SLURM_BINDING:-unknown}
[[ -n $keep ]] && { scontrol setdebug verbose && scontrol setdebugflags +Steps || echo "bench_slurm: no step log" >&2; }

mkdir -p "$t/state"
cat > "$t/job.sh" <<'EOS'
#!/bin/bash
# every ensemble in the same allocation, one after the other; the settings
# come in the environment (salloc passes it on)
export PATH=$(dirname "$BERTH"):$(dirname "$BERTHD"):$PATH
t=$BENCH_T
now() { date +%s.%N; }
# CPU seconds (user + system) a daemon has used, from its pid file
cpu() { local p; p=$(tr -dc 0-9 < "$1" 2>/dev/null) && [[ -n $p ]] &&
        awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$p/stat" 2>/dev/null || echo nan; }
ctld=$LOCAL_SLURM_DIR/run/slurmctld.pid
slurmd=$(ls "$LOCAL_SLURM_DIR"/run/slurmd-*.pid | head -1)
stamp() { echo "$1 $(now) $(cpu "$ctld") $(cpu "$slurmd") $(cut -d' ' -f1-3 /proc/loadavg)"; }
envs=$(berthd --detach --print-env --state-dir "$t/state") || exit 3
eval "$envs"
bpid=0
for p in $(pgrep -x berthd); do grep -qF "$t/state" "/proc/$p/cmdline" 2>/dev/null && bpid=$p; done
# every 0.5 s: how many srun and berth processes this job runs (its
# descendants; others may run Slurm on this machine) and berthd, with their
# RSS in KiB: "sruns srun_kib berths berth_kib berthd_kib"
sample() {
    while :; do
        ps -e -o pid=,ppid=,rss=,comm= | awk -v root=$$ -v d="$bpid" '
            { pp[$1] = $2; rss[$1] = $3; c[$1] = $4 }
            END {
                for (p in pp) {
                    if (c[p] != "srun" && c[p] != "berth" && p != d) continue
                    q = p; mine = (p == d)
                    while (!mine && q > 1 && (q in pp)) { if (q == root) mine = 1; q = pp[q] }
                    if (!mine) continue
                    if (p == d) dk += rss[p]
                    else if (c[p] == "srun") { sn++; sk += rss[p] }
                    else { bn++; bk += rss[p] }
                }
                printf "%d %d %d %d %d\n", sn, sk, bn, bk, dk
            }'
        sleep 0.5
    done
}
i=0
for p in $BENCH_POINTS; do
    n=${p%%:*} s=${p#*:}
    for k in bare berth; do
        if [[ $k == bare ]]; then cmd="srun --exact -n1 -c1 --mem=100 -- sleep $s"
        else cmd="berth run --cores 1 -- sleep $s"; fi
        sample > "$t/$i.$k.ps" & sp=$!
        stamp "start $i $k" >> "$t/times"
        seq "$BENCH_STEPS" | parallel -N0 -j "$n" "$cmd; echo rc=\$?" > "$t/$i.$k.out" 2>&1
        stamp "end $i $k" >> "$t/times"
        kill $sp; wait $sp 2>/dev/null
    done
    i=$((i + 1))
done
berth run --verbose --cores 1 -- true > "$t/launch.txt" 2>&1
s=$(now); for i in 1 2 3 4 5; do srun --exact -n1 -c1 --mem=100 -- true; done; e=$(now)
echo "one_srun $s $e" >> "$t/times"
berth shutdown >/dev/null 2>&1
EOS
chmod +x "$t/job.sh"
export BENCH_T=$t BENCH_POINTS=$points BENCH_STEPS=$steps BERTH BERTHD
salloc -t "$limit" -N1 -n"$cpus" --mem=3000 "$t/job.sh" >"$t/salloc.out" 2>&1 || {
    echo "bench_slurm: the allocation failed: $(tail -5 "$t/salloc.out")" >&2; exit 1; }

python3 - "$t" "$quick" "$steps" "$cpus" "$binding" "${json:-}" "$keep" "$points" <<'PY'
import datetime, json, math, re, sys
t, quick, steps, cpus, binding, out, keep, points = sys.argv[1:9]
steps, cpus = int(steps), int(cpus)
points = [(int(p.split(":")[0]), float(p.split(":")[1])) for p in points.split()]
marks, one_srun = {}, None
for line in open(f"{t}/times"):
    f = line.split()
    if f[0] == "one_srun":
        one_srun = (float(f[2]) - float(f[1])) / 5
        continue
    # start|end index kind time ctld_cpu slurmd_cpu load1 load5 load15
    marks[(f[0], int(f[1]), f[2])] = [float(x) for x in f[3:]]
problems = []


def peaks(path, kind):
    # the launcher: srun for bare srun; berth, its srun and berthd for berth
    rows = [[int(x) for x in l.split()] for l in open(path) if len(l.split()) == 5]
    if not rows:
        return {}
    own = (lambda r: r[1]) if kind == "bare" else (lambda r: r[1] + r[3] + r[4])
    return {"peak_sruns": max(r[0] for r in rows), "peak_srun_rss_mib": max(r[1] for r in rows) / 1024,
            "peak_berth_clients": max(r[2] for r in rows),
            "peak_launcher_rss_mib": max(own(r) for r in rows) / 1024,
            "berthd_rss_mib": max(r[4] for r in rows) / 1024, "samples": len(rows)}


sweep = []
for i, (jobs, step_s) in enumerate(points):
    pt = {"at_once": jobs, "step_seconds": step_s, "steps": steps,
          "oversubscription": jobs / cpus, "ideal_s": steps * step_s / cpus}
    for k in ("bare", "berth"):
        a, b = marks.get(("start", i, k)), marks.get(("end", i, k))
        if a is None or b is None:
            problems.append(f"point {jobs}x{step_s} s, {k}: did not finish (the allocation's time limit?)")
            pt[k] = {"wall_s": None, "steps_ok": 0, "srun_retries": 0, "steps_per_s": None}
            continue
        text = open(f"{t}/{i}.{k}.out", errors="replace").read()
        ok = len(re.findall(r"^rc=0$", text, re.M))
        wall = b[0] - a[0]
        r = {"wall_s": wall, "steps_ok": ok,
             "srun_retries": len(re.findall(r"step creation (temporarily|still) disabled", text)),
             "steps_per_s": steps / wall,
             "slurmctld_cpu_s": b[1] - a[1], "slurmd_cpu_s": b[2] - a[2],
             "load_start": a[3:6], "load_end": b[3:6]}
        r.update(peaks(f"{t}/{i}.{k}.ps", k))
        pt[k] = r
        if ok != steps:
            problems.append(f"point {jobs}x{step_s} s, {k}: {ok} of {steps} steps exited 0: {text[-300:]!r}")
    bw, ew = pt["bare"]["wall_s"], pt["berth"]["wall_s"]
    pt["speedup_vs_bare_srun"] = bw / ew if bw and ew else None
    pt["meets"] = {"as_fast_as_srun": bool(bw and ew and ew <= bw),
                   "zero_retries": pt["berth"]["srun_retries"] == 0 and ew is not None}
    sweep.append(pt)

# the first point keeps the keys the summary and earlier results use
h = sweep[0]
res = {"benchmark": "slurm", "quick": quick == "1", "cpus": cpus, "binding": binding,
       "steps": steps, "at_once": h["at_once"], "step_seconds": h["step_seconds"],
       "ideal_s": h["ideal_s"], "bare": h["bare"], "berth": h["berth"],
       "speedup_vs_bare_srun": h["speedup_vs_bare_srun"], "meets": h["meets"],
       "sweep": sweep}
res["launch"] = open(f"{t}/launch.txt", errors="replace").read().strip()[-400:]
res["one_srun_s"] = one_srun


def f(x, fmt):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


print(f"Slurm ({cpus} CPUs on 1 node, binding {binding}): {steps} one-core steps of sleep S, N at once;"
      " each point bare `parallel -jN srun --exact` then `parallel -jN berth run`")
print("  (sruns / MiB: peak srun processes and peak RSS of the launcher (srun; berth+srun+berthd), sampled every 0.5 s;"
      " ctld s: slurmctld CPU seconds; load: 1-min load average at the start)")
print(f"  {'N':>4} {'S':>4} {'over':>5} {'':5} {'wall s':>7} {'steps/s':>7} {'retries':>7}"
      f" {'sruns':>5} {'MiB':>6} {'ctld s':>6} {'load':>5}   {'berth/bare':>10}  target")
for pt in sweep:
    for k in ("bare", "berth"):
        r = pt[k]
        lead = (f"{pt['at_once']:4d} {pt['step_seconds']:4g} {pt['oversubscription']:4g}x"
                if k == "bare" else " " * 15)
        tail = ""
        if k == "berth":
            met = pt["meets"]["as_fast_as_srun"] and pt["meets"]["zero_retries"]
            tail = f"   {f(pt['speedup_vs_bare_srun'], '.2f'):>9}x  {'met' if met else 'missed'}"
        print(f"  {lead} {k:5} {f(r['wall_s'], '.2f'):>7} {f(r['steps_per_s'], '.2f'):>7}"
              f" {r['srun_retries']:7d} {f(r.get('peak_sruns'), 'd'):>5}"
              f" {f(r.get('peak_launcher_rss_mib'), '.1f'):>6} {f(r.get('slurmctld_cpu_s'), '.1f'):>6}"
              f" {f((r.get('load_start') or [None])[0], '.2f'):>5}{tail}")
print(f"  one srun --exact -n1 -c1 true alone: {f(one_srun, '.3f')} s; berth's launch: {res['launch'][-300:]!r}")
print("  berth/bare: bare wall / berth wall (>= 1: berth as fast);"
      " target: at least as fast, zero retries")
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
    for i, pt in enumerate(sweep):
        for k in ("bare", "berth"):
            a, b = marks.get(("start", i, k)), marks.get(("end", i, k))
            if a is None or b is None:
                continue
            s, e = a[0], b[0]
            ids = [j for j in made if s <= made[j] <= e and j in done]
            if not ids:
                continue
            held = sum(done[j] - made[j] for j in ids)
            pt[k]["slurm_cpu_ms_per_step"] = 1000 * held / len(ids)
            pt[k]["idle_cpu_ms_per_step"] = 1000 * (cpus * (e - s) - held) / len(ids)
            print(f"  N={pt['at_once']} S={pt['step_seconds']:g} {k}: Slurm held a CPU "
                  f"{pt[k]['slurm_cpu_ms_per_step']:.1f} ms per step; "
                  f"CPUs idle {pt[k]['idle_cpu_ms_per_step']:.1f} ms per step")
for p in problems:
    print("  problem:", p)
if out:
    json.dump(res, open(out, "w"), indent=2, sort_keys=True)
sys.exit(1 if problems else 0)
PY
