#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth's benchmarks, side by side with what users would run instead:
#
#   bash tests/bench/run.sh [--quick] [--out DIR] [--only NAME,...]
#
# Builds the project (build/, as the README's build does) unless BERTH,
# BERTHD and BENCH_BIN (the directory of the bench_* programs) are set, runs
# every benchmark, prints each one's table and writes its JSON to DIR
# (default build/bench-results), with machine.json (CPU, cores, kernel, load)
# and summary.json / summary.md: each figure against its target.
#   --quick   small counts, one run each: proves the benchmarks still work
#             (the 'bench-quick' meson suite); its figures mean nothing
#   --only    some of: ledger, pack, socket, startup, cli, slurm
# The Slurm benchmark starts a local Slurm cluster (root, ports 17117/17118)
# and is skipped where that cannot be done (not root, no Slurm packages in
# --quick mode). Timings on a shared machine are noisy: run it when the
# machine is quiet (see `uptime`), and read the medians.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
quick=0 out= only=ledger,pack,queue,socket,startup,cli,slurm
while [[ $# -gt 0 ]]; do
    case $1 in
        --quick) quick=1 ;;
        --out) out=$2; shift ;;
        --only) only=$2; shift ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z ${BERTH:-} || -z ${BERTHD:-} || -z ${BENCH_BIN:-} ]]; then
    build=$top/build
    [[ -f $build/build.ninja ]] || meson setup "$build" "$top" >/dev/null || exit 1
    ninja -C "$build" >/dev/null || { echo "run.sh: the build failed (ninja -C $build)" >&2; exit 1; }
    BERTH=$build/client/berth BERTHD=$build/daemon/berthd BENCH_BIN=$build/tests/bench
fi
export BERTH BERTHD
out=${out:-$top/build/bench-results}
mkdir -p "$out" || exit 1
q=(); [[ $quick == 1 ]] && q=(--quick)
want() { [[ ,$only, == *,$1,* ]]; }

python3 - "$out/machine.json" "$quick" "$top" <<'PY'
import json, os, platform, subprocess, sys, time
cpu = "unknown"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip(); break
try:
    commit = subprocess.run(["git", "-C", sys.argv[3], "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
except OSError:
    commit = ""
m = {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
     "load_before": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
     "commit": commit, "quick": sys.argv[2] == "1"}
json.dump(m, open(sys.argv[1], "w"), indent=2)
print(f"machine: {cpu}, {m['cores']} cores, Linux {m['kernel']}; load {m['load_before'][0]:.2f} "
      f"(1 min); commit {commit}{' (quick: figures mean nothing)' if m['quick'] else ''}")
PY

status=0
run() {  # name, command...
    local name=$1; shift
    echo
    if ! "$@"; then
        echo "run.sh: benchmark $name failed" >&2
        status=1
    fi
}
want ledger && run ledger "$BENCH_BIN/bench_ledger" "${q[@]}" --json "$out/ledger.json"
want pack && run pack "$BENCH_BIN/bench_pack" "${q[@]}" --json "$out/pack.json"
if want queue; then  # the queue at an ensemble's length (issue 25)
    if [[ $quick == 1 ]]; then
        run queue env BERTHD="$BERTHD" python3 "$here/bench_queue.py" --nodes 4 --waiting 100 \
            --json "$out/queue.json"
    else
        run queue env BERTHD="$BERTHD" python3 "$here/bench_queue.py" --nodes 16 --waiting 4000 \
            --shape mixed --json "$out/queue.json"
        # 10,000 waiting: a connection each today (one acquire at a time)
        run queue env BERTHD="$BERTHD" python3 "$here/bench_queue.py" --nodes 16 --waiting 10000 \
            --shape mixed --json "$out/queue_16n_10k.json"
        run queue env BERTHD="$BERTHD" python3 "$here/bench_queue.py" --nodes 10000 \
            --waiting 1000 --shape single --json "$out/queue_10k.json"
        # 100,000 waiting over 100 connections that pipeline 1,000 each
        run queue env BERTHD="$BERTHD" python3 "$here/bench_queue.py" --nodes 16 --waiting 100000 \
            --shape mixed --per-conn 1000 --json "$out/queue_16n_100k.json"
        run queue env BERTHD="$BERTHD" python3 "$here/bench_queue.py" --nodes 10000 \
            --waiting 100000 --shape single --per-conn 1000 --json "$out/queue_10kn_100k.json"
    fi
fi
want socket && run socket "$BENCH_BIN/bench_socket" "${q[@]}" --berthd "$BERTHD" --json "$out/socket.json"
want startup && run startup "$BENCH_BIN/bench_startup" "${q[@]}" --berthd "$BERTHD" --json "$out/startup.json"
want cli && run cli bash "$here/bench_cli.sh" "${q[@]}" --json "$out/cli.json"
if want slurm; then
    if [[ $(id -u) != 0 ]]; then
        echo; echo "slurm: skipped (the local cluster needs root)"
    elif [[ $quick == 1 ]] && ! command -v slurmctld >/dev/null; then
        echo; echo "slurm: skipped in --quick mode (Slurm is not installed)"
    else
        run slurm bash "$here/bench_slurm.sh" "${q[@]}" --json "$out/slurm.json"
    fi
fi

echo
python3 "$here/summary.py" "$out" || status=1
exit $status
