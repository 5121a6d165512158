#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Golden launch lines for every shipped machine and compiler section,
# unplaced and placed, per launcher version, with a memory cap, compared with
# tests/data/render/golden.txt (reviewed by hand).
# BERTH_REGEN=1 rewrites the file instead (review the diff before committing).
source "$(dirname "$0")/lib.sh"
golden=$BERTH_TESTDATA/render/golden.txt
machines=(pm-cpu pm-gpu frontier chrysalis compy dane chicoma-cpu aurora polaris improv localhost)
gen() {
    local m c spec sys comps specs
    for m in "${machines[@]}"; do
        comps=("" $(sed -n 's/^\[parallel\.\(.*\)\]$/\1/p' "$BERTH_SRCDIR/machines/$m.cfg"))
        sys=$("$BERTH" machine --machine "$m" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["system"])')
        case $sys in
            slurm) specs=(slurm:25.11 slurm:20.02) ;;
            pbs) specs=(pals none) ;;
            *) specs=(openmpi mpich taskset none) ;;
        esac
        for c in "${comps[@]}"; do
            cc=(); [[ -n $c ]] && cc=(--compiler "$c")
            gpus=$("$BERTH" machine --machine "$m" "${cc[@]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus_per_node"])')
            for spec in "${specs[@]}"; do
                base=("$BERTH" render --machine "$m" "${cc[@]}" --nodes 2 --launcher-version "$spec"
                      --config "$BERTH_TESTDATA/render/mpirun.cfg")
                [[ $m == localhost ]] || base=("${base[@]:0:${#base[@]}-2}")
                run_case() {
                    local name=$1; shift
                    local out
                    out=$("${base[@]}" "$@" 2>&1) || out="ERROR: ${out#berth render: }"
                    printf '%s %s %s %s: %s\n' "$m" "${c:--}" "$spec" "$name" "$out"
                }
                run_case "unplaced 4x2" -n 4 -c 2 -- ./exe
                run_case "unplaced 4x0" -n 4 -- ./exe
                [[ $gpus -gt 0 ]] && run_case "unplaced 4x2 1gpt" -n 4 -c 2 --gpus-per-task 1 -- ./exe
                run_case "placed 2x2 cap" -n 2 -c 2 --place-nodes n1 --place-cores 0-3 --memory-cap 1000 -- ./run
                run_case "placed 2x2 unnamed" -n 2 -c 2 --place-cores 2-4,6 -- ./run
                [[ $m == localhost ]] && run_case "placed cores 2" --cores 2 --place-cores 2-3 -- ./run
                [[ $m == localhost ]] || run_case "placed 4x1 2 nodes" -n 4 -c 1 --place-nodes n1,n2 --place-cores '0-1;0-1' -- ./run
                [[ $gpus -gt 0 ]] && run_case "placed 2x2 gpu" -n 2 -c 2 --place-nodes n1 --place-cores 0-3 --place-gpus 1 --place-gpu-ids 1 -- ./run
            done
        done
    done
}
if [[ ${BERTH_REGEN:-} == 1 ]]; then
    gen > "$golden"; echo "rewrote $golden"; exit 0
fi
gen > "$TMP/now.txt"
if diff -u "$golden" "$TMP/now.txt" >"$TMP/diff"; then ok
else not_ok "rendered lines differ from $golden:"$'\n'"$(head -40 "$TMP/diff")"; fi
expect_true "golden file covers every machine" test "$(cut -d' ' -f1 "$golden" | sort -u | wc -l)" = "${#machines[@]}"
finish
