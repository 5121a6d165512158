#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CLI as separate processes, side by side with what users would run
# instead, in the same invocation:
#  1. `berth acquire --cores 1 --detach --json` then `berth release ID`, ms
#     per pair; beside it the same loop starting /bin/true twice (the cost of
#     two process starts on this machine: the floor).
#  2. STEPS x `berth run --local --cores 1 -- true`, 2 at a time, against
#     `parallel -j2 true` (GNU parallel) and a plain fork/exec loop 2 at a
#     time (xargs -P2 true): steps per second.
# berthd runs on this machine's localhost default. Figures are medians of
# repeated runs. Usage: bench_cli.sh [--quick] [--json FILE]
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
command -v parallel >/dev/null || { echo "bench_cli: GNU parallel is not installed (apt-get install parallel)" >&2; exit 1; }
if [[ $quick == 1 ]]; then pairs=100 reps=3 steps=200 sreps=1; else pairs=300 reps=7 steps=5000 sreps=3; fi

t=$(mktemp -d /tmp/berth-bench-cli.XXXXXX); dpid=
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; rm -rf "$t"' EXIT
unset SLURM_JOB_ID PBS_JOBID
export BERTH_SOCKET=$t/b.sock
"$BERTHD" --socket "$BERTH_SOCKET" --foreground --state-dir "$t/state" >/dev/null 2>"$t/d.err" & dpid=$!
for _ in $(seq 100); do "$BERTH" status --json >/dev/null 2>&1 && break; sleep 0.05; done
"$BERTH" status --json >/dev/null || { echo "bench_cli: berthd does not answer: $(tail -c 300 "$t/d.err")" >&2; exit 1; }
# what is timed must really run the step and hand back its status
set +e; "$BERTH" run --local --cores 1 -- sh -c 'exit 7'; rc=$?; set -e
[[ $rc == 7 ]] || { echo "bench_cli: berth run --local did not return the step's status" >&2; exit 1; }

now() { date +%s.%N; }
re='"lease"[[:space:]]*:[[:space:]]*"([^"]+)"'
tru=$(type -P true)
pair_runs=() floor_runs=()
for _ in $(seq $reps); do
    s=$(now)
    for _ in $(seq $pairs); do
        out=$("$BERTH" acquire --cores 1 --detach --json)
        [[ $out =~ $re ]] || { echo "bench_cli: acquire --json gave no lease id: ${out:0:120}" >&2; exit 1; }
        "$BERTH" release "${BASH_REMATCH[1]}" >/dev/null
    done
    e=$(now)
    pair_runs+=("$(python3 -c "print(($e-$s)/$pairs*1e3)")")
    s=$(now)
    for _ in $(seq $pairs); do out=$("$tru"); [[ $out =~ $re ]] || true; "$tru" >/dev/null; done
    e=$(now)
    floor_runs+=("$(python3 -c "print(($e-$s)/$pairs*1e3)")")
done

run_s=() par_s=() loop_s=()
for _ in $(seq $sreps); do
    s=$(now); seq $steps | xargs -P2 -I{} "$BERTH" run --local --cores 1 -- true; e=$(now)
    run_s+=("$(python3 -c "print($e-$s)")")
    s=$(now); seq $steps | parallel -j2 true {}; e=$(now)
    par_s+=("$(python3 -c "print($e-$s)")")
    s=$(now); seq $steps | xargs -P2 -n1 "$tru"; e=$(now)
    loop_s+=("$(python3 -c "print($e-$s)")")
done
# the ledger is whole again: every step's lease ended
"$BERTH" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(len(d["leases"]) != 0)' \
    || { echo "bench_cli: leases left behind after the steps" >&2; exit 1; }

python3 - "$quick" "$pairs" "$steps" "${json:-}" "${pair_runs[*]}" "${floor_runs[*]}" \
    "${run_s[*]}" "${par_s[*]}" "${loop_s[*]}" <<'PY'
import json, statistics as st, sys
quick, pairs, steps, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
pair, floor, run, par, loop = ([float(x) for x in a.split()] for a in sys.argv[5:10])
ratios = [p / r for p, r in zip(par, run)]
res = {
    "benchmark": "cli", "quick": bool(quick), "pairs": pairs, "steps": steps,
    "pair_ms": st.median(pair), "pair_runs_ms": pair,
    "two_process_starts_ms": st.median(floor),
    "berth_run_steps_per_s": steps / st.median(run),
    "parallel_steps_per_s": steps / st.median(par),
    "fork_exec_loop_steps_per_s": steps / st.median(loop),
    "ratio_vs_parallel": st.median(ratios), "ratio_runs": ratios,
}
res["meets"] = {"pair_under_3ms": res["pair_ms"] < 3,
                "twice_parallel": res["ratio_vs_parallel"] >= 2}
print("CLI as separate processes (medians of %d and %d runs)" % (len(pair), len(run)))
print("  berth acquire + berth release: %.2f ms per pair (two bare process starts: %.2f ms)   target: < 3 ms"
      % (res["pair_ms"], res["two_process_starts_ms"]))
print("  %d x `berth run --local --cores 1 -- true`, 2 at a time: %.0f steps/s; `parallel -j2 true`: %.0f steps/s;"
      " fork/exec loop (xargs -P2): %.0f steps/s" % (steps, res["berth_run_steps_per_s"],
      res["parallel_steps_per_s"], res["fork_exec_loop_steps_per_s"]))
print("  berth run / GNU parallel: %.2fx   target: >= 2x" % res["ratio_vs_parallel"])
if out:
    json.dump(res, open(out, "w"), indent=2, sort_keys=True)
PY
