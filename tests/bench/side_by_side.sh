#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds' benchmarks side by side, in one invocation on one machine:
#
#   bash tests/bench/side_by_side.sh BEFORE_BUILD AFTER_BUILD [--rounds N]
#        [--only NAME,...] [--out DIR]
#
# Each build directory holds client/berth, daemon/berthd and tests/bench/.
# For every benchmark (run.sh's names) and every round, the before build
# runs, then the after build, so that both see the same machine at nearly the
# same time; each round writes its results to DIR/<round>-before and
# DIR/<round>-after (default build/bench-side-by-side). The table at the end
# gives each row's figures from every round, before and after: the spread
# between rounds of one build is what a difference between the builds must
# exceed to mean anything. Timings are never asserted.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[[ $# -ge 2 ]] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd); shift 2
rounds=2 only=ledger,pack,socket,startup,cli,slurm out=$top/build/bench-side-by-side
while [[ $# -gt 0 ]]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --only) only=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "side_by_side.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
for b in "$before" "$after"; do
    for f in client/berth daemon/berthd tests/bench/bench_ledger; do
        [[ -x $b/$f ]] || { echo "side_by_side.sh: $b has no $f (build it first)" >&2; exit 2; }
    done
done
mkdir -p "$out" || exit 1
status=0
IFS=, read -r -a names <<<"$only"
for ((r = 1; r <= rounds; r++)); do
    for name in "${names[@]}"; do
        for side in before after; do
            b=$before; [[ $side == after ]] && b=$after
            echo "== round $r, $name, $side ($b)"
            BERTH=$b/client/berth BERTHD=$b/daemon/berthd BENCH_BIN=$b/tests/bench \
                bash "$here/run.sh" --only "$name" --out "$out/$r-$side/$name" \
                >"$out/$r-$side-$name.log" 2>&1 || status=1
        done
    done
done
# one results directory per round and side, as summary.py reads them
for ((r = 1; r <= rounds; r++)); do
    for side in before after; do
        d=$out/$r-$side
        cp "$d"/*/machine.json "$d/" 2>/dev/null
        for name in "${names[@]}"; do
            [[ -f $d/$name/$name.json ]] && cp "$d/$name/$name.json" "$d/"
        done
        python3 "$here/summary.py" "$d" >/dev/null || status=1
    done
done
python3 - "$out" "$rounds" <<'PY'
import json, os, sys
out, rounds = sys.argv[1], int(sys.argv[2])
table = {}
order = []
for r in range(1, rounds + 1):
    for side in ("before", "after"):
        p = os.path.join(out, f"{r}-{side}", "summary.json")
        if not os.path.exists(p):
            continue
        for row in json.load(open(p))["rows"]:
            t = row["target"]
            if t not in table:
                table[t] = {"before": [], "after": []}
                order.append(t)
            table[t][side].append(row["figure"])
lines = ["| row | before | after |", "| --- | --- | --- |"]
for t in order:
    lines.append(f"| {t} | {'; '.join(table[t]['before'])} | {'; '.join(table[t]['after'])} |")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "side_by_side.md"), "w").write(text)
print(text)
PY
exit $status
