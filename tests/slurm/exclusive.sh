#!/usr/bin/env bash
# The cluster in its exclusive binding mode (as many declared CPUs as real
# ones, so Slurm confines each step to its own real CPUs): concurrent placed
# steps on one node, launched by `berth run` through srun, and --local steps
# that berth binds itself, have disjoint real CPU sets. Each rank reports its
# CPU affinity with `berth verify`.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"

real=$(nproc --all)
cluster_start LOCAL_SLURM_NODES=1 LOCAL_SLURM_CPUS="$real" LOCAL_SLURM_MEM_MB=2000
if [[ $LOCAL_SLURM_BINDING != exclusive ]]; then
    not_ok "the cluster is in binding mode $LOCAL_SLURM_BINDING, not exclusive"
    finish; exit 1
fi
d=$T/excl
mkdir -p "$d/steps"
cat >"$d/step.sh" <<EOS
#!/bin/sh
echo "start \${SLURM_PROCID:-0} \$(date +%s.%N)"
echo "verify \${SLURM_PROCID:-0} \$("$BERTH" verify --json)"
sleep 1.5
echo "end \${SLURM_PROCID:-0} \$(date +%s.%N)"
EOS
chmod +x "$d/step.sh"
# label|berth run options|ranks
{
    for i in 1 2 3 4 5 6; do echo "one$i|-n 1 -c 1|1"; done
    echo "two1|-n 2 -c 1|2"
    for i in 1 2 3; do echo "local$i|--local --cores 1|1"; done
    for i in 7 8; do echo "one$i|-n 1 -c 1|1"; done
} >"$d/steps.txt"
cat >"$d/job.sh" <<EOS
#!/bin/bash
envs=\$("$BERTHD" --detach --print-env --state-dir $d/state) || { echo "berthd did not start: \$envs"; exit 3; }
eval "\$envs"
while IFS='|' read -r label opts n; do
  { "$BERTH" run \$opts --label \$label -- "$d/step.sh" > $d/steps/\$label.out 2>&1
    echo \$? > $d/steps/\$label.rc; } &
done < $d/steps.txt
wait
"$BERTH" shutdown >/dev/null 2>&1
EOS
chmod +x "$d/job.sh"
res=$(job_run "$d/job.out" -N1 -n"$real" --mem=1500 -- "$d/job.sh")
check "the batch job succeeded ($res)" test "$res" = "COMPLETED 0:0"

python3 - "$d" <<'PY' >"$d/check.log"
import json, os, re, sys
d = sys.argv[1]
def idset(s):
    ids = set()
    for part in filter(None, (s or "").split(",")):
        a, _, b = part.partition("-")
        ids.update(range(int(a), int(b or a) + 1))
    return ids
steps, bad = [], []
for line in open(os.path.join(d, "steps.txt")):
    label, opts, n = line.strip().split("|")
    text = open(os.path.join(d, "steps", label + ".out"), errors="replace").read()
    rc = open(os.path.join(d, "steps", label + ".rc")).read().strip()
    starts = [float(x) for x in re.findall(r"^(?:\s*\d+: )?start \d+ (\S+)", text, re.M)]
    ends = [float(x) for x in re.findall(r"^(?:\s*\d+: )?end \d+ (\S+)", text, re.M)]
    cpus = [idset(json.loads(v)["cpus"]) for v in re.findall(r"^(?:\s*\d+: )?verify \d+ (\{.*\})$", text, re.M)]
    if rc != "0" or not (len(starts) == len(ends) == len(cpus) == int(n)):
        bad.append(f"{label}: exit {rc}, {len(starts)}/{len(cpus)}/{len(ends)} of {n} ranks: {text[-160:]!r}")
        continue
    steps.append(dict(label=label, t0=min(starts), t1=max(ends), cpus=cpus))
print(("ok - " if not bad else "FAIL - ") + "every step exited 0 and every rank reported" + ("" if not bad else ": " + "; ".join(bad[:3])))
wide = [f"{s['label']}: {sorted(c)}" for s in steps for c in s["cpus"] if len(c) != 1]
print(("ok - " if not wide else "FAIL - ") + "each rank was confined to one real CPU" + ("" if not wide else ": " + "; ".join(wide[:3])))
# srun steps (Slurm picks their CPUs) among themselves, and --local steps
# (berth binds them to the ledger's ids) among themselves, must never share;
# a --local step beside an srun step is judged apart: in SCHEDULER mode Slurm
# does not know the ids a --local step holds and may hand them to a step.
clash, mixed, pairs = [], [], 0
for a in steps:
    for b in steps:
        if a["label"] < b["label"] and a["t0"] < b["t1"] and b["t0"] < a["t1"]:
            ua, ub = set().union(*a["cpus"]), set().union(*b["cpus"])
            is_mixed = a["label"].startswith("local") != b["label"].startswith("local")
            pairs += not is_mixed
            if ua & ub:
                (mixed if is_mixed else clash).append(f"{a['label']} {sorted(ua)} and {b['label']} {sorted(ub)}")
inner = [s["label"] for s in steps if len(s["cpus"]) > 1 and len(set().union(*s["cpus"])) != len(s["cpus"])]
print(("ok - " if pairs and not clash else "FAIL - ") + f"{pairs} pairs of steps ran at once, on disjoint real CPUs"
      + ("" if not clash else ": " + "; ".join(clash[:3])))
if mixed:
    print("KNOWN - a --local step shared a real CPU with an srun step beside it (Slurm picks srun CPUs "
          "without knowing the --local step's): " + "; ".join(mixed[:3]))
else:
    print("# --local steps and srun steps beside them had disjoint real CPUs")
print(("ok - " if not inner else "FAIL - ") + "the ranks of a multi-rank step had disjoint CPUs" + ("" if not inner else ": " + ", ".join(inner)))
PY
status=$?
cat "$d/check.log"
grep -q "^KNOWN" "$d/check.log" && grep "^KNOWN" "$d/check.log" >&2
count_results "$d/check.log"
[[ $status == 0 ]] || not_ok "the exclusive-mode analysis failed (exit $status)"
note "finished"
finish
