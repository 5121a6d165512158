#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The daemon subcommands without a daemon: usage errors (exit 2), a missing
# berthd (exit 1, saying how to start one), and berth verify, which needs none.
# The behaviour against a real berthd is in tests/integration/client.py.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
data=${BERTH_TESTDATA:-$(dirname "$0")/../data}
unset SLURM_JOB_ID PBS_JOBID BERTH_LEASE BERTH_NODES BERTH_CORES BERTH_GPUS BERTH_MEMORY_MB
export BERTH_SOCKET=$TMP/none.sock

# ---- usage errors: exit 2 (berth run: 125, the status of berth's own
# failures, since its other statuses are the step's), naming the option and
# the value ----
expect_fail "run without a program" 125 "no program given" "$BERTH" run --cores 2
expect_fail "run with only --" 125 "no program given" "$BERTH" run --cores 2 --
expect_fail "cores not a number" 2 "--cores wants a positive integer, got 'x'" "$BERTH" acquire --cores x
expect_fail "cores zero" 2 "--cores wants a positive integer, got '0'" "$BERTH" acquire --cores 0
expect_fail "ntasks too large" 125 "--ntasks 2000000: .*1048576" "$BERTH" run -n 2000000 -- true
expect_fail "gpus negative" 2 "--gpus wants an integer >= 0, got '-1'" "$BERTH" acquire --gpus -1
expect_fail "memory unit" 2 "--memory wants a size in MB .*got '8X'" "$BERTH" acquire --memory 8X
expect_fail "min-memory" 2 "--min-memory wants a size" "$BERTH" acquire --min-memory ''
expect_fail "timeout negative" 2 "--timeout wants a number of seconds >= 0, got '-1'" "$BERTH" acquire --timeout -1
expect_fail "timeout too long" 2 "--timeout 1e9: .*31622400" "$BERTH" acquire --timeout 1e9
expect_fail "priority" 125 "--priority wants an integer, got 'high'" "$BERTH" run --priority high -- true
expect_fail "priority range" 125 "--priority 9999999: .*1048576" "$BERTH" run --priority 9999999 -- true
expect_fail "label control char" 2 "--label: .*control characters" "$BERTH" acquire --label $'a\tb'
expect_fail "label too long" 2 "--label: .*255 bytes" "$BERTH" acquire --label "$(printf 'x%.0s' {1..300})"
expect_fail "ttl" 2 "--ttl wants a number of seconds" "$BERTH" acquire --ttl soon
expect_fail "owner pid" 2 "--owner-pid wants a process id, got '0'" "$BERTH" acquire --owner-pid 0
expect_fail "json and env" 2 "--json and --env are two outputs" "$BERTH" acquire --json --env
expect_fail "acquire argument" 2 "unexpected argument 'true'; to run a program in a lease use berth run" "$BERTH" acquire true
expect_fail "unknown option" 125 "unknown or incomplete option '--frobnicate'" "$BERTH" run --frobnicate -- true
expect_fail "missing value" 2 "unknown or incomplete option '--cores'" "$BERTH" acquire --cores
expect_fail "release nothing" 2 "no lease given" "$BERTH" release
expect_fail "status argument" 2 "unexpected argument 'x'" "$BERTH" status x
expect_fail "status json watch" 2 "--json and --watch do not go together" "$BERTH" status --json --watch
expect_fail "shutdown both" 2 "--drain and --force contradict" "$BERTH" shutdown --drain --force
expect_fail "shutdown timeout" 2 "--timeout wants a number of seconds >= 0, got 'x'" "$BERTH" shutdown --timeout x
expect_fail "verify argument" 2 "unexpected argument 'x'" "$BERTH" verify x
expect_fail "gpus-per-task is deprecated" 2 "deprecated; give the step's total with --gpus" "$BERTH" acquire --gpus-per-task 1 --cores x

# conflicting options are refused before anything is asked of berthd
expect_fail "span both ways" 125 "--may-span-nodes and --no-span contradict each other; give one" \
    "$BERTH" run --no-span --may-span-nodes -- true
expect_fail "span both ways, acquire" 2 "--may-span-nodes and --no-span contradict" \
    "$BERTH" acquire --may-span-nodes --no-span
expect_fail "local and span" 125 "--local runs the step on this node, so it cannot span nodes: drop --local or --may-span-nodes" \
    "$BERTH" run --local --may-span-nodes -- true
# the same option twice is no conflict (it reaches the missing daemon)
expect_fail "span twice" 125 "no berthd socket" "$BERTH" run --no-span --no-span -- true

# ---- help ----
for cmd in acquire release run status shutdown verify; do
    expect_true "$cmd --help" "$BERTH" "$cmd" --help
    grep -q "^Usage: berth $cmd" "$TMP/stdout" && ok || not_ok "$cmd --help says Usage: $(head -1 "$TMP/stdout")"
done
"$BERTH" --help | grep -q "^  run " && ok || not_ok "berth --help lists run"

# ---- no berthd: say where it looked and how to start one; exit 1 (berth
# run and berth acquire: 125, berth's own failure, not a step's 1) ----
expect_fail "acquire, no socket" 125 "no berthd socket at $TMP/none.sock \\(from BERTH_SOCKET\\); start berthd first" "$BERTH" acquire --cores 1
expect_fail "run, no socket" 125 "no berthd socket at" "$BERTH" run --local --cores 1 -- true
expect_fail "status, no socket" 1 "no berthd socket at" "$BERTH" status
expect_fail "release, no socket" 1 "no berthd socket at" "$BERTH" release L1
expect_fail "shutdown, no socket" 1 "no berthd socket at" "$BERTH" shutdown
expect_fail "--socket wins" 1 "no berthd socket at $TMP/other.sock;" "$BERTH" status --socket "$TMP/other.sock"
# a socket file nobody listens on: berthd stopped and left it
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$TMP/dead.sock"
expect_fail "stale socket" 1 "berthd is not running at $TMP/dead.sock" "$BERTH" status --socket "$TMP/dead.sock"
long=$TMP/$(printf 'd%.0s' {1..120}).sock
expect_fail "path too long" 1 "over the 107 a Unix socket allows" "$BERTH" status --socket "$long"
# no BERTH_SOCKET: the job's default socket (as berthd chooses it)
expect_fail "default socket" 1 "no berthd socket at $TMP/xdg/berth/4242.sock;" \
    env -u BERTH_SOCKET XDG_RUNTIME_DIR=$TMP/xdg SLURM_JOB_ID=4242 "$BERTH" status
expect_fail "default socket outside a job" 1 "no berthd socket at $TMP/xdg/berth/local.sock;" \
    env -u BERTH_SOCKET XDG_RUNTIME_DIR=$TMP/xdg "$BERTH" status

# ---- verify: what this process was given ----
verify_json() {
    "$@" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(r["threads"], r["ncores"], r["cpus"], r["cores"], r["within_berth_cores"],
      r["devices"]["CUDA_VISIBLE_DEVICES"], r["berth"]["BERTH_LEASE"], len(r["mismatches"]))'
}
# the recorded 'interleaved' topology: threads 2k and 2k+1 are one core
if command -v taskset >/dev/null && [[ $(nproc) -ge 2 ]]; then
    expect_out "verify: two threads of one core" "2 1 0-1 0 None None None 0" \
        verify_json taskset -c 0-1 "$BERTH" verify --json --sysfs-root "$data/sysfs/interleaved"
    expect_out "verify: one thread" "1 1 1 1 True 0 L7 0" \
        verify_json env CUDA_VISIBLE_DEVICES=0 BERTH_LEASE=L7 BERTH_CORES=1 \
        taskset -c 1 "$BERTH" verify --json
    expect_out "verify: outside BERTH_CORES" "1 1 1 1 False None None 0" \
        verify_json env BERTH_CORES=0 taskset -c 1 "$BERTH" verify --json
fi
host=$(hostname)
expect_true "verify: host in BERTH_NODES" env BERTH_NODES="other,${host%%.*}" "$BERTH" verify
grep -q "^host     $host" "$TMP/stdout" && ok || not_ok "verify prints the host: $(cat "$TMP/stdout")"
grep -q "^BERTH_NODES           other,${host%%.*}" "$TMP/stdout" && ok || not_ok "verify prints BERTH_NODES"
grep -q "^ZE_AFFINITY_MASK      (unset)" "$TMP/stdout" && ok || not_ok "verify prints unset variables"
BERTH_NODES=nid0001,nid0002 "$BERTH" verify >"$TMP/out" 2>&1; rc=$?
[[ $rc == 1 ]] && grep -q "MISMATCH: host $host is not one of the placement's nodes (BERTH_NODES=nid0001,nid0002)" "$TMP/out" \
    && ok || not_ok "verify: a host outside BERTH_NODES is a mismatch (rc $rc): $(cat "$TMP/out")"
BERTH_NODES=nid0001 "$BERTH" verify --json >"$TMP/out"; rc=$?
[[ $rc == 1 ]] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(len(r["mismatches"]) != 1)' "$TMP/out" \
    && ok || not_ok "verify --json lists the mismatch (rc $rc): $(cat "$TMP/out")"
[[ $(wc -l <"$TMP/out") == 1 ]] && ok || not_ok "verify --json is one line"

# ---- berth placed: the program runs whatever becomes of the report ----
expect_fail "placed without a program" 2 "no program given" "$BERTH" placed --
expect_out "placed without BERTH_LEASE runs the program" "ran" "$BERTH" placed -- echo ran
grep -q "BERTH_LEASE is not set" "$TMP/stderr" && ok || not_ok "placed without BERTH_LEASE says so: $(cat "$TMP/stderr")"
cores=$(BERTH_LEASE=L1 BERTH_CORES=stale "$BERTH" placed -- sh -c 'echo "$BERTH_CORES"' 2>"$TMP/stderr")
[[ $cores =~ ^[0-9][0-9,-]*$ ]] && ok || not_ok "placed with no berthd runs the program, BERTH_CORES its cores: '$cores'"
grep -q "berth placed" "$TMP/stderr" && ok || not_ok "placed with no berthd says it could not report"
expect_fail "placed of a missing program" 127 "cannot run 'no-such-program'" "$BERTH" placed -- no-such-program

finish
