#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, then builds and runs every test:
#  1. gcc, warnings as errors: the whole suite (unit, command line,
#     integration, Slurm integration on a local cluster, fuzz corpora, the
#     60-second soak, berthd under valgrind); then a plain meson install
#  2. clang, warnings as errors: the same but Slurm, the soak and valgrind
#  3. gcc with AddressSanitizer + UndefinedBehaviorSanitizer: the unit and
#     integration tests (a real berthd under the sanitizers) and the fuzz
#     corpora
#  4. clang with libFuzzer (-Dfuzz=true): each fuzz target for
#     $BERTH_FUZZ_SECONDS (default 60) seconds
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
bash contrib/ci/deps.sh
out=${BERTH_BUILD_ROOT:-$top/build-ci}
mkdir -p "$out"
status=0
run() {  # name, build dir, compiler, meson test args, then setup options
    local name=$1 dir=$2 compiler=$3 targs=$4; shift 4
    echo "== $name"
    local t0=$SECONDS
    CC=$compiler bash contrib/ci/build.sh "$dir" -Dwerror=true "$@"
    # shellcheck disable=SC2086
    if ! meson test -C "$dir" --print-errorlogs --num-processes 2 $targs; then
        status=1
    fi
    echo "== $name: $((SECONDS - t0)) s"
}
run "gcc: all tests" "$out/gcc" gcc ""
# the benchmarks, small: they still run (figures are not checked)
echo "== gcc: benchmarks, quick"
meson test -C "$out/gcc" --print-errorlogs --suite bench-quick || status=1
# (the cli suite's `install` test checks each installed file; this is the plain install)
echo "== meson install into a scratch DESTDIR"
dest=$(mktemp -d)
meson install -C "$out/gcc" --destdir "$dest" --no-rebuild >"$out/install.log" 2>&1 \
    || { echo "meson install failed (see $out/install.log)"; status=1; }
rm -rf "$dest"
# the Slurm suite starts real clusters, the soak and valgrind take minutes:
# once (gcc) is enough
BERTH_SKIP_SLURM=1 run "clang: all tests but Slurm, soak and valgrind" "$out/clang" clang \
    "--no-suite soak --no-suite valgrind"
# the load test at full size (4,000 clients, 100,000 grants) runs in the gcc
# stage; under the sanitizers (several times slower) a quarter of it, so that
# its per-request timeouts measure berthd, not the sanitizer
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
BERTH_LOAD_CLIENTS=1000 BERTH_LOAD_GRANTS=25000 \
    run "gcc + ASan + UBSan: unit, integration and fuzz corpus tests" "$out/asan" gcc \
    "--suite unit --suite integration --suite fuzz" \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
echo "== clang + libFuzzer: every target for ${BERTH_FUZZ_SECONDS:-60} s"
t0=$SECONDS
if ! FUZZ_BUILD="$out/fuzz" bash tests/fuzz/run.sh "${BERTH_FUZZ_SECONDS:-60}"; then
    status=1
fi
echo "== fuzzing: $((SECONDS - t0)) s"
if [[ $status == 0 ]]; then echo "test-all: every suite passed"; else echo "test-all: FAILURES (see above)"; fi
exit $status
