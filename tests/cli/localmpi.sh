#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth run on the localhost default against a real berthd, once with Open
# MPI's mpirun and once with MPICH's hydra: -n N starts N ranks (counted by
# the launcher's own variables, and by a small MPI program built with that
# MPI's mpicc), -n 1 -c 2 one rank, a step of --cores runs once with no MPI
# launcher, and concurrent placed steps run on disjoint CPU sets (each
# process's Cpus_allowed_list). Skips an MPI that is not installed.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"
unset SLURM_JOB_ID PBS_JOBID BERTH_LEASE BERTH_NODES BERTH_CORES BERTH_GPUS BERTH_MEMORY_MB
unset OMPI_COMM_WORLD_SIZE PMI_SIZE BERTH_MACHINE
# Open MPI refuses to start as root without these (the CI runs as root)
if [[ $(id -u) == 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
cores=$(nproc)
show='echo "size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-none}} $(grep Cpus_allowed_list /proc/self/status | cut -f2)"'

# start_daemon NAME LAUNCHER: berthd on localhost with that mpirun
start_daemon() {
    local dir=$TMP/$1
    mkdir -m 700 "$dir"
    printf '[parallel]\nparallel_executable = %s\n' "$2" >"$dir/mpi.cfg"
    export BERTH_SOCKET=$dir/s.sock
    "$BERTHD" --machine localhost --config "$dir/mpi.cfg" --socket "$BERTH_SOCKET" \
        --state-dir "$dir/state" --detach >/dev/null 2>"$dir/berthd.err" \
        || { not_ok "$1: berthd did not start: $(cat "$dir/berthd.err")"; return 1; }
}

stop_daemon() { "$BERTH" shutdown --force >/dev/null 2>&1; }

# lines_of CMD...: the step's output lines, sorted
lines_of() { "$@" 2>"$TMP/run.err" | sort; }

check_mpi() {
    local name=$1 exe=$2 cc=$3 out
    if ! command -v "$exe" >/dev/null; then
        echo "SKIP: $name: $exe not installed"
        return
    fi
    start_daemon "$name" "$exe" || return
    expect_true "$name: berthd found the MPI" \
        grep -q "\"launcher\": \".*$name" <("$BERTH" status --json)

    out=$(lines_of "$BERTH" run -n 2 -- sh -c "$show")
    [[ $(grep -c '^size=2 ' <<<"$out") == 2 ]] && ok \
        || not_ok "$name: -n 2 did not start 2 ranks of 2: $out $(cat "$TMP/run.err")"

    # MPI itself counts the ranks
    if command -v "$cc" >/dev/null \
        && "$cc" -o "$TMP/hello-$name" "${BERTH_TESTDATA:-$(dirname "$0")/../data}/localmpi/hello.c" 2>"$TMP/cc.err"; then
        out=$(lines_of "$BERTH" run -n 2 -- "$TMP/hello-$name")
        [[ $out == $'rank 0 of 2\nrank 1 of 2' ]] && ok \
            || not_ok "$name: the MPI program did not run as 2 ranks: $out $(cat "$TMP/run.err")"
    else
        echo "SKIP: $name: no $cc to build the MPI program: $(cat "$TMP/cc.err" 2>/dev/null)"
    fi

    out=$(lines_of "$BERTH" run -n 1 -c "$cores" -- sh -c "$show")
    [[ $out == "size=1 "* && $(wc -l <<<"$out") == 1 ]] && ok \
        || not_ok "$name: -n 1 -c $cores did not start 1 rank: $out $(cat "$TMP/run.err")"

    # not MPI: once, no launcher's variables
    out=$(lines_of "$BERTH" run --cores "$cores" -- sh -c "$show")
    [[ $out == "size=none "* && $(wc -l <<<"$out") == 1 ]] && ok \
        || not_ok "$name: --cores ran other than once without MPI: $out $(cat "$TMP/run.err")"
    out=$("$BERTH" run -v --cores 1 -- true 2>&1)
    grep -q "running taskset -c [0-9]* true" <<<"$out" && ok \
        || not_ok "$name: a --cores step was wrapped: $out"

    if [[ $cores -ge 2 ]]; then
        # two steps side by side: each rank on its own core, none shared
        local a=$TMP/$name-a b=$TMP/$name-b
        "$BERTH" run -n 1 -- sh -c "$show; sleep 2" >"$a" 2>&1 &
        local pa=$!
        "$BERTH" run -n 1 -- sh -c "$show; sleep 2" >"$b" 2>&1 &
        local pb=$!
        wait $pa $pb
        local ca cb
        ca=$(sed -n 's/^size=1 //p' "$a")
        cb=$(sed -n 's/^size=1 //p' "$b")
        [[ -n $ca && -n $cb && $ca =~ ^[0-9]+$ && $cb =~ ^[0-9]+$ && $ca != "$cb" ]] && ok \
            || not_ok "$name: side-by-side steps not on disjoint single cores: '$(cat "$a")' '$(cat "$b")'"
        # MPICH binds each rank to its own cores of the placement
        if [[ $name == mpich ]]; then
            out=$(lines_of "$BERTH" run -n 2 -c 1 -- sh -c "$show")
            [[ $(cut -d' ' -f2 <<<"$out" | sort -u | wc -l) == 2 && $out != *-* && $out != *,* ]] && ok \
                || not_ok "$name: the 2 ranks did not get one core each: $out"
        fi
    fi
    stop_daemon
}

check_mpi openmpi mpirun.openmpi mpicc.openmpi
check_mpi mpich mpiexec.hydra mpicc.mpich
finish
