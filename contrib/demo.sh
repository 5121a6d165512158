#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job on the embedded localhost default: install what is missing,
# build, then start berthd on this machine and run a small ensemble through
# it (more steps than fit at once, of different widths), show berth status,
# and stop the daemon. Also shows what berth renders here and on two shipped
# machines.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash contrib/ci/deps.sh
bash contrib/ci/build.sh "$top/build"
export PATH=$top/build/client:$top/build/daemon:$PATH
say() { printf '\n$ %s\n' "$*"; "$@"; }

say berth machine
say berth render --machine pm-cpu --nodes 2 --launcher-version slurm:25.11 -n 4 -c 2 \
    --place-nodes nid001 --place-cores 0-7 --memory-cap 8000 -- ./model
say berth render --machine aurora --compiler oneapi-ifxgpu --nodes 1 --launcher-version pals \
    -n 2 -c 1 --place-nodes x4401c1s0b0n0 --place-cores 1,2 --place-gpus 2 --place-gpu-ids 2,3 -- ./model

# the ensemble: berthd validates this machine once and hands out its cores
state=$(mktemp -d /tmp/berth-demo.XXXXXX)
trap 'berth shutdown --force >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
printf '\n$ eval "$(berthd --detach --print-env --state-dir %s)"\n' "$state"
eval "$(berthd --detach --print-env --state-dir "$state" --socket "$state/berth.sock")"
ncores=$(berth status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocation"]["totals"]["cores"])')
echo "berthd serves $ncores cores at $BERTH_SOCKET"
step() {  # label cores seconds
    berth run --local --cores "$2" --label "$1" -- \
        sh -c 'echo "$0 on cores $BERTH_CORES (lease $BERTH_LEASE) started $(date +%T.%N | cut -c1-12)"; sleep "$1"' \
        "$1" "$3"
}
start=$(date +%s.%N)
for i in 1 2 3 4 5 6; do
    w=$(( (i % 2) + 1 )); (( w > ncores )) && w=$ncores
    step "case$i" "$w" 1 &
done
for i in 1 2 3 4; do step "analysis$i" 1 0.5 & done
sleep 0.3
say berth status
wait
end=$(date +%s.%N)
printf '\n10 steps (widths 1-2 cores) on %s cores in %.1f s\n' "$ncores" "$(python3 -c "print($end - $start)")"
say berth status
say berth shutdown
