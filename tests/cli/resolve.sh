#!/usr/bin/env bash
# berth resolve against the shipped machines (30-scheduler-targets.md).
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
data=${BERTH_TESTDATA:-$(dirname "$0")/../data}/resolve

# The fields that change from case to case, on one line.
summary() {
    "$BERTH" resolve "$@" | awk '
        $1 ~ /^(partition|qos|queue|effective_nodes|adjustment|max_wallclock|wall_time|honored)$/ {
            printf "%s%s=%s", sep, $1, $2; sep = " " }
        END { print "" }'
}
reason() { "$BERTH" resolve "$@" | sed -n 's/^reason  *//p'; }
json_keys() {
    "$BERTH" resolve --json "$@" |
        python3 -c 'import json, sys; print(*sorted(json.load(sys.stdin)))'
}

# One JSON field (python3 is a build dependency already).
json_field() {
    local key=$1; shift
    "$BERTH" resolve --json "$@" | python3 -c '
import json, sys
v = json.load(sys.stdin)[sys.argv[1]]
print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)' "$key"
}

# ---- the brief's examples ----
expect_out "aurora 200" \
    "queue=capacity max_wallclock=168:00:00 effective_nodes=16 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine aurora --nodes 200
expect_out "aurora 200, at least 32" \
    "queue=prod max_wallclock=12:00:00 effective_nodes=256 adjustment=increase wall_time=(none) honored=yes" \
    summary --machine aurora --nodes 200 --min-nodes-allowed 32
expect_fail "aurora 8, at least 1024" 1 "no queue can run a job of 8 nodes on at least 1024 nodes" \
    "$BERTH" resolve --machine aurora --nodes 8 --min-nodes-allowed 1024
expect_out "compy 500" \
    "partition=slurm qos=regular max_wallclock=36:00:00 effective_nodes=440 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine compy --nodes 500
expect_out "pm-gpu 4000" \
    "partition=(none) qos=regular max_wallclock=48:00:00 effective_nodes=3072 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine pm-gpu --nodes 4000
for n in 8:02 90:02 91:02 92:06 100:06 183:06 184:12 200:12 9472:12; do
    expect_out "frontier ${n%%:*} nodes" \
        "partition=batch qos=normal max_wallclock=${n##*:}:00:00 effective_nodes=${n%%:*} adjustment=exact wall_time=(none) honored=yes" \
        summary --machine frontier --nodes "${n%%:*}"
done
expect_out "pm-cpu qos debug 16" \
    "partition=(none) qos=debug max_wallclock=00:30:00 effective_nodes=8 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine pm-cpu --nodes 16 --qos debug
expect_out "frontier debug 1h" \
    "partition=batch qos=debug max_wallclock=02:00:00 effective_nodes=100 adjustment=exact wall_time=01:00:00 honored=yes" \
    summary --machine frontier --nodes 100 --scheduler-target debug --wall-time 01:00:00
expect_out "frontier debug 3h" \
    "partition=batch qos=normal max_wallclock=06:00:00 effective_nodes=100 adjustment=exact wall_time=03:00:00 honored=no" \
    summary --machine frontier --nodes 100 --scheduler-target debug --wall-time 03:00:00
expect_out "frontier debug 3h: reason" \
    "qos 'debug' allows at most 02:00:00 on 100 nodes but 03:00:00 was requested" \
    reason --machine frontier --nodes 100 --scheduler-target debug --wall-time 03:00:00
expect_out "chrysalis debug" \
    "partition=debug qos=(none) max_wallclock=168:00:00 effective_nodes=4 adjustment=exact wall_time=(none) honored=yes" \
    summary --machine chrysalis --nodes 4 --scheduler-target debug

# ---- edges of the shipped targets ----
expect_out "pm-cpu debug 8" \
    "partition=(none) qos=debug max_wallclock=00:30:00 effective_nodes=8 adjustment=exact wall_time=00:30:00 honored=yes" \
    summary --machine pm-cpu --nodes 8 --qos debug --wall-time 00:30:00
expect_out "pm-cpu debug 00:30:01" \
    "partition=(none) qos=regular max_wallclock=48:00:00 effective_nodes=8 adjustment=exact wall_time=00:30:01 honored=no" \
    summary --machine pm-cpu --nodes 8 --qos debug --wall-time 00:30:01
expect_out "frontier extended 65" \
    "partition=extended qos=normal max_wallclock=24:00:00 effective_nodes=64 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine frontier --nodes 65 --partition extended
expect_out "frontier 9473" \
    "partition=batch qos=normal max_wallclock=12:00:00 effective_nodes=9472 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine frontier --nodes 9473
expect_out "chrysalis debug 11" \
    "partition=debug qos=(none) max_wallclock=168:00:00 effective_nodes=10 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine chrysalis --nodes 11 --partition debug
expect_out "compy short 02:00:01" \
    "partition=slurm qos=regular max_wallclock=36:00:00 effective_nodes=50 adjustment=exact wall_time=02:00:01 honored=no" \
    summary --machine compy --nodes 50 --partition short --wall-time 02:00:01
expect_out "aurora 17 (the gap)" \
    "queue=capacity max_wallclock=168:00:00 effective_nodes=16 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine aurora --nodes 17
expect_out "aurora 255 at least 17" \
    "queue=prod max_wallclock=12:00:00 effective_nodes=256 adjustment=increase wall_time=(none) honored=yes" \
    summary --machine aurora --nodes 255 --min-nodes-allowed 17
expect_out "aurora debug 3" \
    "queue=debug max_wallclock=01:00:00 effective_nodes=2 adjustment=decrease wall_time=(none) honored=yes" \
    summary --machine aurora --nodes 3 --scheduler-target debug
expect_out "polaris 513, capped wall time" \
    "queue=prod max_wallclock=24:00:00 effective_nodes=512 adjustment=decrease wall_time=24:00:00 honored=yes" \
    summary --machine polaris --nodes 513 --wall-time 30:00:00
expect_out "improv: no queues, requests ignored" \
    "queue=(none) max_wallclock=(none) effective_nodes=3 adjustment=exact wall_time=(none) honored=yes" \
    summary --machine improv --nodes 3 --queue debug --partition debug

# ---- scheduler_target on every machine ----
for c in pm-cpu:qos=debug pm-gpu:qos=debug frontier:qos=debug chrysalis:partition=debug \
         compy:partition=short dane:partition=pdebug chicoma-cpu:qos=debug \
         aurora:queue=debug polaris:queue=debug; do
    m=${c%%:*} want=${c#*:} t=${c##*=}
    got=$(summary --machine "$m" --nodes 1 --scheduler-target "$t" | tr ' ' '\n' | grep -E "^(${want%%=*}|honored)=" | paste -sd' ')
    if [[ $got == "$want honored=yes" ]]; then ok; else not_ok "$m scheduler target $t: $got"; fi
done
expect_out "improv scheduler target" \
    "scheduler target 'debug' matches nothing: this machine defines no queues" \
    reason --machine improv --nodes 1 --scheduler-target debug
expect_out "localhost scheduler target" \
    "scheduler target 'debug' matches nothing: this machine defines no targets" \
    reason --machine localhost --nodes 1 --scheduler-target debug
expect_out "frontier target on no axis" \
    "scheduler target 'premium' is neither a partition nor a qos on this machine (partitions: batch, extended, qos: normal, debug)" \
    reason --machine frontier --nodes 1 --scheduler-target premium
expect_out "explicit axis wins" "normal" \
    json_field qos --machine frontier --nodes 1 --scheduler-target debug --qos normal

# ---- denials, placeholders, ignored axes ----
expect_out "unknown partition" \
    "partition 'debug' is not available on this machine (available: batch, extended)" \
    reason --machine frontier --nodes 4 --partition debug
expect_out "below min_nodes_allowed" \
    "queue 'debug' would run on 2 nodes but at least 3 are required" \
    reason --machine aurora --nodes 3 --queue debug --min-nodes-allowed 3
expect_out "unknown constraint" \
    "constraint 'gpu' is not available on this machine (available: cpu)" \
    reason --machine pm-cpu --nodes 4 --constraint gpu
expect_out "placeholders are no request" \
    "partition=batch qos=normal max_wallclock=02:00:00 effective_nodes=4 adjustment=exact wall_time=(none) honored=yes" \
    summary --machine frontier --nodes 4 --partition '<<<partition>>>' --qos '  ' --scheduler-target '' \
    --wall-time '<<<wall>>>' --constraint '<<<c>>>'
expect_out "queue ignored on slurm" "true" \
    json_field honored --machine frontier --nodes 4 --queue anything
expect_out "honored reason is null" "null" \
    json_field reason --machine frontier --nodes 4
expect_out "json adjustment" "decrease" json_field adjustment --machine aurora --nodes 200
expect_out "json gpus_per_node" "4" json_field gpus_per_node --machine pm-gpu --nodes 1
expect_out "json gpus_per_node, gnu" "0" \
    json_field gpus_per_node --machine pm-gpu --compiler gnu --nodes 1
expect_out "json keys, slurm" \
    "adjustment constraint effective_nodes gpus_per_node honored machine max_wallclock partition qos reason requested_nodes scheduler wall_time" \
    json_keys --machine frontier --nodes 4
expect_out "json keys, pbs" \
    "adjustment constraint effective_nodes filesystems gpus_per_node honored machine max_wallclock queue reason requested_nodes scheduler wall_time" \
    json_keys --machine polaris --nodes 4
expect_out "user config overlay" \
    "partition=(none) qos=debug max_wallclock=01:00:00 effective_nodes=2 adjustment=exact wall_time=00:45:00 honored=yes" \
    summary --machine pm-cpu --config "$data/debug-longer.cfg" --nodes 2 --qos debug --wall-time 00:45:00

# ---- --script ----
pbs_lines() { "$BERTH" resolve "$@" | grep -E '^#PBS -(q|l (select|walltime))'; }
expect_out "script, frontier" \
"#SBATCH --account=cli115
#SBATCH --partition=batch
#SBATCH --qos=debug
#SBATCH --nodes=100
#SBATCH --time=01:00:00" \
    "$BERTH" resolve --machine frontier --nodes 100 --scheduler-target debug --wall-time 01:00:00 --script
expect_out "script, pm-cpu" \
"#SBATCH --account=e3sm
#SBATCH --qos=debug
#SBATCH --constraint=cpu
#SBATCH --nodes=8
#SBATCH --time=00:30:00" \
    "$BERTH" resolve --machine pm-cpu --nodes 16 --qos debug --script
expect_out "script, polaris queue and select" "#PBS -q debug
#PBS -l select=2
#PBS -l walltime=01:00:00" \
    pbs_lines --machine polaris --nodes 2 --queue debug --script
expect_fail "script notes a denial" 0 "not honored: qos 'debug' allows at most" \
    "$BERTH" resolve --machine frontier --nodes 100 --qos debug --wall-time 03:00:00 --script

# ---- errors ----
expect_fail "no --nodes" 2 "--nodes N is required" "$BERTH" resolve --machine frontier
expect_fail "zero nodes" 2 "--nodes wants a positive integer, got '0'" \
    "$BERTH" resolve --machine frontier --nodes 0
expect_fail "text nodes" 2 "--nodes wants a positive integer, got 'ten'" \
    "$BERTH" resolve --machine frontier --nodes ten
expect_fail "bad min nodes" 2 "--min-nodes-allowed wants a positive integer, got '-1'" \
    "$BERTH" resolve --machine frontier --nodes 4 --min-nodes-allowed -1
expect_fail "bad wall time" 2 "--wall-time wants HH:MM:SS \(hours may exceed 24\), got '2h'" \
    "$BERTH" resolve --machine frontier --nodes 4 --wall-time 2h
expect_fail "json and script" 2 "--json and --script exclude each other" \
    "$BERTH" resolve --machine frontier --nodes 4 --json --script
expect_fail "unknown option" 2 "unknown or incomplete option '--bogus'" \
    "$BERTH" resolve --machine frontier --nodes 4 --bogus
expect_fail "stray argument" 2 "unexpected argument 'extra'" \
    "$BERTH" resolve --machine frontier --nodes 4 extra
expect_fail "both limits" 1 "\[partition.batch\] sets both max_wallclock and max_wallclock_bins" \
    "$BERTH" resolve --machine frontier --config "$data/both-limits.cfg" --nodes 4
expect_fail "malformed bins" 1 "\[queue.prod\] max_wallclock_bins: malformed entry '512 24:00:00'" \
    "$BERTH" resolve --machine polaris --config "$data/bad-bins.cfg" --nodes 4
expect_fail "unknown machine" 1 "." "$BERTH" resolve --machine no-such-machine --nodes 4
expect_true "help" "$BERTH" resolve --help

finish
