#!/usr/bin/env bash
# The main job on the embedded localhost default: install what is missing,
# build, then show what berth does on this machine and on two shipped ones.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash contrib/ci/deps.sh
bash contrib/ci/build.sh "$top/build"
berth=$top/build/client/berth
say() { printf '\n$ %s\n' "$*"; "$@"; }
say "$berth" machine
say "$berth" render -n 2 -c 1 -- ./model
say "$berth" render -n 1 -c 2 --place-nodes "$(hostname -s)" --place-cores 0-1 -- ./analysis.py
say "$berth" render --machine pm-cpu --nodes 2 --launcher-version slurm:25.11 -n 4 -c 2 -- ./exe
say "$berth" render --machine pm-cpu --nodes 2 --launcher-version slurm:25.11 -n 4 -c 2 \
    --place-nodes nid001 --place-cores 0-7 --memory-cap 8000 -- ./run
say "$berth" render --machine frontier --nodes 2 --launcher-version slurm:20.02 -n 2 -c 2 \
    --place-nodes frontier0001 --place-cores 0-3 -- ./run
