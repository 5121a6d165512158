#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The run behind timeline.png: a berthd on this machine (the localhost
# default), an ensemble of 24 single-core steps of several lengths started
# all at once through `berth run --local` (most of them wait for a core),
# then `berth report` on its events log.
# usage: contrib/report/ensemble.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
build=${1:-build}
out=${2:-contrib/report}
berth=$build/client/berth
dir=$(mktemp -d /tmp/berth-ensemble.XXXXXX)
chmod 700 "$dir"
export BERTH_SOCKET=$dir/s.sock
unset SLURM_JOB_ID PBS_JOBID
"$build/daemon/berthd" --foreground --socket "$BERTH_SOCKET" --state-dir "$dir/state" 2>"$dir/berthd.err" &
until [[ -S $BERTH_SOCKET ]]; do sleep 0.1; done
"$berth" status --json >"$dir/allocation.json"
kinds=(mesh init ocean_qu240 viz analysis)
for i in $(seq 1 24); do
    kind=${kinds[$((i % ${#kinds[@]}))]}
    "$berth" run --local --cores 1 --label "${kind}_$i" -- sleep "$((1 + (i * 7) % 5)).$((i % 10))" &
    sleep 0.2
done
wait $(jobs -p | tail -n +2)
"$berth" shutdown >/dev/null
wait
"$berth" report "$dir/state/events.jsonl" --allocation "$dir/allocation.json" \
    --title "24 steps through berth run --local (2 cores)" --svg "$out/timeline.svg"
cp "$dir/state/events.jsonl" "$out/events.jsonl"; chmod 644 "$out/events.jsonl"
command -v rsvg-convert >/dev/null && rsvg-convert "$out/timeline.svg" -o "$out/timeline.png"
rm -rf "$dir"
