#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth size: cells in, request options (or JSON) out.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

cat >"$TMP/sizing.cfg" <<'CFG'
[sizing]
goal_cells_per_core = 2500
max_cells_per_core = 25000
goal_cells_per_gpu = 10000
CFG
printf '[sizing]\nmax_cells_per_core = lots\n' >"$TMP/bad.cfg"

json_field() {
    local key=$1; shift
    "$BERTH" size --json "$@" | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$key"
}

# GPUs: the defaults, on a GPU machine (chosen by its GPUs) or asked for.
expect_out "polaris, defaults" "--gpus 13 --min-gpus 2" \
    "$BERTH" size --cells 100000 --machine polaris
expect_out "gpus asked for" "--gpus 2 --min-gpus 1" \
    "$BERTH" size --cells 10000 --machine frontier --compiler craygnu-mphipcc --gpus
# GPUs where the compiler section has none: refused as berthd refuses them
expect_fail "gpus on a CPU machine" 1 "machine pm-cpu, compiler gnu \\[parallel\\]: .*asks for 13 GPUs, but .* no GPUs; size in cores with --cores" \
    "$BERTH" size --cells 100000 --machine pm-cpu --gpus
expect_fail "gpus on frontier's CPU section" 1 "machine frontier, compiler craygnu \\[parallel\\]: .*no GPUs.*berth machine --machine frontier lists them" \
    "$BERTH" size --cells 100000 --machine frontier --gpus
expect_fail "bogus compiler" 1 "machine pm-cpu has no compiler 'bogus': it knows gnu, intel and nvidia" \
    "$BERTH" size --cells 100000 --machine pm-cpu --compiler bogus
expect_out "gpu figures from options" "--gpus 20 --min-gpus 4" \
    "$BERTH" size --cells 100000 --machine polaris --goal-cells-per-gpu 5000 \
        --max-cells-per-gpu 25000
expect_out "gpu goal from the machine file, max default" "--gpus 10 --min-gpus 2" \
    "$BERTH" size --cells 100000 --machine polaris --config "$TMP/sizing.cfg"

# Cores: figures from [sizing] or options; a CPU machine sizes in cores.
expect_out "pm-cpu with [sizing]" "-n 40 --min-tasks 4" \
    "$BERTH" size --cells 100000 --machine pm-cpu --config "$TMP/sizing.cfg"
expect_out "options win over the file" "-n 100 --min-tasks 10" \
    "$BERTH" size --cells 100000 --machine pm-cpu --config "$TMP/sizing.cfg" \
        --goal-cells-per-core 1000 --max-cells-per-core 10000
expect_out "cores on a GPU machine" "-n 40 --min-tasks 4" \
    "$BERTH" size --cells 100000 --machine polaris --cores --config "$TMP/sizing.cfg"

# JSON: every figure, and the request in protocol terms.
expect_out "json target" "13" json_field target --cells 100000 --machine polaris
expect_out "json min" "2" json_field min --cells 100000 --machine polaris
expect_out "json resource" "cores" json_field resource --cells 100000 --machine pm-cpu \
    --config "$TMP/sizing.cfg"
expect_out "json request" "40 4" bash -c '"$0" size --json --cells 100000 --machine pm-cpu \
    --config "$1" | python3 -c "import json,sys; r=json.load(sys.stdin)[\"request\"]; print(r[\"ntasks\"], r[\"min_tasks\"])"' \
    "$BERTH" "$TMP/sizing.cfg"
expect_out "json options" "--gpus 13 --min-gpus 2" json_field options --cells 100000 \
    --machine polaris
expect_out "json goal" "8000" json_field goal_cells_per_gpu --cells 100000 --machine polaris

# The output feeds berth run's options: they parse as request options.
# shellcheck disable=SC2046
expect_fail "options are berth run's" 125 "cannot connect|BERTH_SOCKET|socket" \
    env -u BERTH_SOCKET "$BERTH" run $("$BERTH" size --cells 100000 --machine polaris) \
        --socket "$TMP/none.sock" -- true

# Errors.
expect_fail "no cells" 2 "--cells N is required" "$BERTH" size --machine polaris
expect_fail "zero cells" 2 "--cells wants a positive number of cells, got '0'" \
    "$BERTH" size --cells 0 --machine polaris
expect_fail "bad figure" 2 "--max-cells-per-gpu wants a positive number of cells, got 'x'" \
    "$BERTH" size --cells 10 --machine polaris --max-cells-per-gpu x
expect_fail "gpus and cores" 2 "--gpus and --cores contradict" \
    "$BERTH" size --cells 10 --machine polaris --gpus --cores
expect_fail "no core figures" 1 "machine pm-cpu has no goal_cells_per_core in \[sizing\]" \
    "$BERTH" size --cells 10 --machine pm-cpu
expect_fail "only a goal" 1 "has no max_cells_per_core" \
    "$BERTH" size --cells 10 --machine pm-cpu --goal-cells-per-core 100
expect_fail "goal above max" 1 "goal_cells_per_gpu \(90000\) is above max_cells_per_gpu \(80000\)" \
    "$BERTH" size --cells 10 --machine polaris --goal-cells-per-gpu 90000
expect_fail "bad machine file value" 1 "bad.cfg:2: \[sizing\] max_cells_per_core must be a positive number of cells, got 'lots'" \
    "$BERTH" size --cells 10 --machine pm-cpu --config "$TMP/bad.cfg" --goal-cells-per-core 5
expect_fail "stray argument" 2 "unexpected argument 'x'" "$BERTH" size --cells 10 x
expect_fail "unknown option" 2 "unknown or incomplete option '--bogus'" \
    "$BERTH" size --cells 10 --bogus
expect_out "help" "0" bash -c '"$0" size --help | grep -c "^Usage: berth size" >/dev/null; echo $?' "$BERTH"

finish
