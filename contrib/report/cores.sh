#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The pictures behind cores-2.png and cores-128.png: `berth report --cores`
# on a clean 50-step log (tests/cli/gen_events.py) at 2 cores per node (4
# nodes) and at 128 cores per node (2 nodes), rendered with rsvg-convert.
# usage: contrib/report/cores.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
build=${1:-build}
out=${2:-contrib/report}
here=$(dirname "$0")
dir=$(mktemp -d /tmp/berth-cores.XXXXXX)
trap 'rm -rf "$dir"' EXIT
for shape in "4 2" "2 128"; do
    read -r nodes cores <<<"$shape"
    python3 "$here/../../tests/cli/gen_events.py" 50 "$nodes" "$cores" >"$dir/events-$cores.jsonl"
    "$build/client/berth" report "$dir/events-$cores.jsonl" --cores \
        --title "clean 50-step log, $nodes nodes of $cores cores" --svg "$out/cores-$cores.svg"
    rsvg-convert "$out/cores-$cores.svg" -o "$out/cores-$cores.png"
done
