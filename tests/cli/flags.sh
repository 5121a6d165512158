#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Flags are taken only when spelt in full (getopt_long alone takes any unique
# prefix, so "render --gpus 4" was read as "--gpus-per-task 4"), an unknown
# or shortened flag is refused with the nearest known one, and the same thing
# has the same name in run and render (--memory).
source "$(dirname "$0")/lib.sh"
s25=(--launcher-version slurm:25.11)

# the cases the issue found
expect_fail "render --gpus is not --gpus-per-task" 2 \
    "unknown or incomplete option '--gpus'; did you mean '--gpus-per-task'\?" \
    "$BERTH" render --machine pm-gpu --nodes 1 -n 4 --gpus 4 -- ./exe
expect_fail "render --memory-c is not --memory-cap" 2 \
    "option '--memory-c'; did you mean '--memory-cap'\?" \
    "$BERTH" render --machine pm-cpu --nodes 2 "${s25[@]}" -n 4 --memory-c 8000 -- ./exe
expect_fail "a typo gets the nearest flag" 2 "did you mean '--gpus-per-task'\?" \
    "$BERTH" render --machine pm-gpu --nodes 1 -n 4 --gpus-per-tsak 1 -- ./exe
expect_fail "--name=value abbreviated is refused too" 2 \
    "option '--nod'; did you mean '--nodes'\?" \
    "$BERTH" resolve --machine aurora --nod=2
expect_fail "run: a prefix is refused before any daemon is asked" 125 \
    "option '--cpus'; did you mean '--cpus-per-task'\?" \
    "$BERTH" run --cpus 2 -- true
expect_fail "acquire: --may-span" 2 "did you mean '--may-span-nodes'\?" \
    "$BERTH" acquire --may-span
expect_fail "nothing near: no suggestion" 2 "unknown or incomplete option '--frobnicate' \(see --help\)" \
    "$BERTH" render --frobnicate -- ./exe

# full names and --name=value still work
expect_out "--nodes=2 in full" \
    "srun --label -c 2 -N 1 -n 4 --cpu-bind=cores -m plane=128 ./exe" \
    "$BERTH" render --machine=pm-cpu --nodes=2 "${s25[@]}" -n 4 -c 2 -- ./exe

# render --memory is run's --memory: same name, same units, same line as --memory-cap
want="srun --label -c 2 -N 1 -n 4 -w nid001 --exact --gres=none --cpu-bind=cores --mem=8192M ./run"
expect_out "render --memory 8G" "$want" \
    "$BERTH" render --machine pm-cpu --nodes 2 "${s25[@]}" -n 4 -c 2 \
    --place-nodes nid001 --place-cores 0-7 --memory 8G -- ./run
expect_out "render --memory-cap 8192" "$want" \
    "$BERTH" render --machine pm-cpu --nodes 2 "${s25[@]}" -n 4 -c 2 \
    --place-nodes nid001 --place-cores 0-7 --memory-cap 8192 -- ./run

# Every long flag of every subcommand, shortened by one letter, is refused and
# names the flag it was short for (unless the shortened name is itself a flag).
for cmd in render machine resolve run acquire release status events shutdown verify size report; do
    mapfile -t flags < <("$BERTH" "$cmd" --help | grep -oE -- '(^|[ ,])--[a-z][a-z-]*' | grep -v -- '-$' |
                         sed 's/^[ ,]*//' | sort -u)
    [[ ${#flags[@]} -gt 0 ]] || { not_ok "$cmd --help lists no flags"; continue; }
    for f in "${flags[@]}"; do
        short=${f%?}
        printf '%s\n' "${flags[@]}" | grep -qx -- "$short" && continue
        # a flag of another tool the help mentions (srun's --hosts)
        "$BERTH" "$cmd" "$f" x -- true 2>&1 | grep -q -- "option '$f' (see --help)" && continue
        "$BERTH" "$cmd" "$short" x -- true >"$TMP/stdout" 2>"$TMP/stderr"
        if grep -q -- "option '$short'; did you mean '$f'?" "$TMP/stderr"; then ok
        else not_ok "$cmd $short: $(cat "$TMP/stderr")"; fi
    done
done

finish
