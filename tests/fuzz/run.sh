#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every fuzz target (or the ones named) for SECONDS each, one after the
# other, and prints executions, corpus size and the outcome per target.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]      targets: codec config hostlist
#                                              idset journal json_scan ledger
#                                              reply
#
# Builds (once) a clang build with -Dfuzz=true in $FUZZ_BUILD (default
# build-fuzz). New inputs go to $FUZZ_BUILD/fuzz-work/<target>/corpus, seeded
# from tests/fuzz/corpus/<target>; crashes to
# $FUZZ_BUILD/fuzz-work/<target>/crash-*. A crash is fixed, then its input
# committed to tests/fuzz/corpus/<target>/ (the 'fuzz' suite replays it).
# Exit status: 0 when no target found anything.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:?usage: run.sh SECONDS [TARGET...]}
shift
targets=("$@")
((${#targets[@]})) || targets=(codec config hostlist idset journal json_scan ledger reply)
build=${FUZZ_BUILD:-$top/build-fuzz}
if [[ ! -f $build/build.ninja ]]; then
    CC=clang meson setup "$build" "$top" -Dfuzz=true -Db_lundef=false \
        -Dbuildtype=debugoptimized -Dwerror=true >"$build.setup.log" 2>&1 \
        || { cat "$build.setup.log" >&2; exit 1; }
fi
ninja -C "$build" >"$build.build.log" 2>&1 \
    || { grep -E -A5 "error" "$build.build.log" | head -40 >&2; exit 1; }
status=0
printf '%-9s %8s %12s %10s %8s  %s\n' target seconds executions exec/s corpus result
for t in "${targets[@]}"; do
    exe=$build/tests/fuzz/fuzz_$t
    [[ -x $exe ]] || { echo "run.sh: no fuzz target $t" >&2; status=1; continue; }
    work=$build/fuzz-work/$t
    mkdir -p "$work/corpus"
    log=$work/log
    # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: one that
    # needs 2 GB is a memory blow-up. Both count as findings. A small
    # quarantine: freed memory held back for use-after-free checks would
    # otherwise add 256 MB, and host lists of a million names free a lot.
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:quarantine_size_mb=32 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/" \
        "$work/corpus" "$top/tests/fuzz/corpus/$t" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    size=$(find "$work/corpus" "$top/tests/fuzz/corpus/$t" -type f | wc -l)
    if ((rc == 0)); then
        result=ok
    else
        result="FOUND (exit $rc): $(ls -t "$work"/crash-* "$work"/leak-* "$work"/timeout-* \
                "$work"/oom-* 2>/dev/null | head -1) (log: $log)"
        status=1
    fi
    printf '%-9s %8s %12s %10s %8s  %s\n' "$t" "$secs" "${execs:-?}" "${rate:-?}" "$size" "$result"
done
exit $status
