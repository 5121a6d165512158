#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth resolve against the shipped machines.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
data=${BERTH_TESTDATA:-$(dirname "$0")/../data}/resolve

# The fields that change from case to case, on one line.
summary() {
    "$BERTH" resolve "$@" | awk '
        /^[a-z]/ && $1 ~ /^(partition|qos|queue|effective_nodes|adjustment|max_wallclock|wall_time|honored)$/ {
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
    "queue=capacity max_wallclock=168:00:00 effective_nodes=16 adjustment=decrease wall_time=168:00:00 honored=yes" \
    summary --machine aurora --nodes 200
expect_out "aurora 200, at least 32" \
    "queue=prod max_wallclock=12:00:00 effective_nodes=256 adjustment=increase wall_time=12:00:00 honored=yes" \
    summary --machine aurora --nodes 200 --min-nodes-allowed 32
expect_fail "aurora 8, at least 1024" 1 "no queue can run a job of 8 nodes on at least 1024 nodes" \
    "$BERTH" resolve --machine aurora --nodes 8 --min-nodes-allowed 1024
expect_out "compy 500" \
    "partition=slurm qos=regular max_wallclock=36:00:00 effective_nodes=440 adjustment=decrease wall_time=36:00:00 honored=yes" \
    summary --machine compy --nodes 500
expect_out "pm-gpu 4000" \
    "partition=(none) qos=regular max_wallclock=48:00:00 effective_nodes=3072 adjustment=decrease wall_time=48:00:00 honored=yes" \
    summary --machine pm-gpu --nodes 4000
for n in 8:02 90:02 91:02 92:06 100:06 183:06 184:12 200:12 9472:12; do
    expect_out "frontier ${n%%:*} nodes" \
        "partition=batch qos=normal max_wallclock=${n##*:}:00:00 effective_nodes=${n%%:*} adjustment=exact wall_time=${n##*:}:00:00 honored=yes" \
        summary --machine frontier --nodes "${n%%:*}"
done
expect_out "pm-cpu qos debug 16" \
    "partition=(none) qos=debug max_wallclock=00:30:00 effective_nodes=8 adjustment=decrease wall_time=00:30:00 honored=yes" \
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
    "partition=debug qos=(none) max_wallclock=168:00:00 effective_nodes=4 adjustment=exact wall_time=168:00:00 honored=yes" \
    summary --machine chrysalis --nodes 4 --scheduler-target debug

# ---- edges of the shipped targets ----
expect_out "pm-cpu debug 8" \
    "partition=(none) qos=debug max_wallclock=00:30:00 effective_nodes=8 adjustment=exact wall_time=00:30:00 honored=yes" \
    summary --machine pm-cpu --nodes 8 --qos debug --wall-time 00:30:00
expect_out "pm-cpu debug 00:30:01" \
    "partition=(none) qos=regular max_wallclock=48:00:00 effective_nodes=8 adjustment=exact wall_time=00:30:01 honored=no" \
    summary --machine pm-cpu --nodes 8 --qos debug --wall-time 00:30:01
expect_out "frontier extended 65" \
    "partition=extended qos=normal max_wallclock=24:00:00 effective_nodes=64 adjustment=decrease wall_time=24:00:00 honored=yes" \
    summary --machine frontier --nodes 65 --partition extended
expect_out "frontier 9473" \
    "partition=batch qos=normal max_wallclock=12:00:00 effective_nodes=9472 adjustment=decrease wall_time=12:00:00 honored=yes" \
    summary --machine frontier --nodes 9473
expect_out "chrysalis debug 11" \
    "partition=debug qos=(none) max_wallclock=168:00:00 effective_nodes=10 adjustment=decrease wall_time=168:00:00 honored=yes" \
    summary --machine chrysalis --nodes 11 --partition debug
expect_out "compy short 02:00:01" \
    "partition=slurm qos=regular max_wallclock=36:00:00 effective_nodes=50 adjustment=exact wall_time=02:00:01 honored=no" \
    summary --machine compy --nodes 50 --partition short --wall-time 02:00:01
expect_out "aurora 17 (the gap)" \
    "queue=capacity max_wallclock=168:00:00 effective_nodes=16 adjustment=decrease wall_time=168:00:00 honored=yes" \
    summary --machine aurora --nodes 17
expect_out "aurora 255 at least 17" \
    "queue=prod max_wallclock=12:00:00 effective_nodes=256 adjustment=increase wall_time=12:00:00 honored=yes" \
    summary --machine aurora --nodes 255 --min-nodes-allowed 17
expect_out "aurora debug 3" \
    "queue=debug max_wallclock=01:00:00 effective_nodes=2 adjustment=decrease wall_time=01:00:00 honored=yes" \
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
    "partition=batch qos=normal max_wallclock=02:00:00 effective_nodes=4 adjustment=exact wall_time=02:00:00 honored=yes" \
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
expect_true "json gpus_per_node is a number" bash -c '"$1" resolve --json --machine pm-gpu --nodes 1 |
    python3 -c "import json, sys; d = json.load(sys.stdin); assert d[\"gpus_per_node\"] == 4 and type(d[\"gpus_per_node\"]) is int, d"' _ "$BERTH"
expect_out "json keys, slurm" \
    "account account_from adjustment changes constraint effective_nodes gpus_per_node honored machine max_wallclock max_wallclock_from max_wallclock_seconds partition qos reason requested_nodes requested_wall_time scheduler wall_time wall_time_from wall_time_seconds" \
    json_keys --machine frontier --nodes 4
expect_out "json keys, pbs" \
    "account account_from adjustment changes constraint effective_nodes filesystems gpus_per_node honored machine max_wallclock max_wallclock_from max_wallclock_seconds queue reason requested_nodes requested_wall_time scheduler wall_time wall_time_from wall_time_seconds" \
    json_keys --machine polaris --nodes 4
expect_out "user config overlay" \
    "partition=(none) qos=debug max_wallclock=01:00:00 effective_nodes=2 adjustment=exact wall_time=00:45:00 honored=yes" \
    summary --machine pm-cpu --config "$data/debug-longer.cfg" --nodes 2 --qos debug --wall-time 00:45:00

# ---- --script ----
pbs_lines() { "$BERTH" resolve "$@" | grep -E '^#PBS -(q|l (select|walltime))'; }
expect_out "script, frontier" \
"# berth resolve: time 01:00:00: as asked
#SBATCH --account=cli115
#SBATCH --partition=batch
#SBATCH --qos=debug
#SBATCH --nodes=100
#SBATCH --time=01:00:00" \
    "$BERTH" resolve --machine frontier --nodes 100 --scheduler-target debug --wall-time 01:00:00 --script
expect_out "script, pm-cpu" \
"# berth resolve: time 00:30:00: the limit of qos debug at 8 nodes (no wall time asked for)
# berth resolve: changed: nodes 16 -> 8 (lowered: qos debug takes at most 8 nodes)
#SBATCH --account=e3sm
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

# ---- every change said (issue 17) ----
# pm-cpu 4 nodes, 100 hours: capped to 48 h, still honored, and said so
out=$("$BERTH" resolve --machine pm-cpu --nodes 4 --wall-time 100:00:00)
expect_true "capped wall time: the change line" grep -qx \
    'changed          wall_time 100:00:00 -> 48:00:00 (capped: qos regular allows at most 48:00:00 on 4 nodes)' <<<"$out"
expect_true "capped wall time: not 'everything was honored'" \
    bash -c '! grep -q "everything asked for was honored" <<<"$1" && grep -q "^reason *none: honored, with the changes above" <<<"$1"' _ "$out"
expect_true "capped wall time: json change, numbers as numbers" bash -c '"$1" resolve --json --machine pm-cpu --nodes 4 --wall-time 100:00:00 |
    python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"honored\"] is True and d[\"wall_time\"] == \"48:00:00\" and d[\"wall_time_seconds\"] == 172800, d
assert d[\"changes\"] == [{\"field\": \"wall_time\", \"kind\": \"capped\", \"from\": \"100:00:00\", \"to\": \"48:00:00\",
    \"from_seconds\": 360000, \"to_seconds\": 172800, \"why\": \"qos regular allows at most 48:00:00 on 4 nodes\"}], d[\"changes\"]
assert d[\"max_wallclock_seconds\"] == 172800 and d[\"requested_nodes\"] == 4, d
"' _ "$BERTH"
expect_true "nodes raised: said" bash -c '"$1" resolve --machine aurora --nodes 200 --min-nodes-allowed 32 |
    grep -qx "changed          nodes 200 -> 256 (raised: queue prod takes at least 256 nodes)"' _ "$BERTH"
expect_true "dropped axis: said" bash -c '"$1" resolve --machine pm-cpu --nodes 4 --queue debug |
    grep -qx "changed          queue .debug. dropped: a slurm machine has no queues (partitions and qos instead)"' _ "$BERTH"
expect_true "nothing changed: said" bash -c '"$1" resolve --machine pm-cpu --nodes 4 --wall-time 01:00:00 |
    grep -qx "reason           none: everything asked for was honored, as asked"' _ "$BERTH"
# --script and the text view agree on the time, and the comment names the limit
for m in pm-cpu:48:00:00 aurora:168:00:00 chrysalis:168:00:00; do
    t=$("$BERTH" resolve --machine "${m%%:*}" --nodes 2 | awk '$1 == "wall_time" { print $2 }')
    if [[ $t == "${m#*:}" ]] && "$BERTH" resolve --machine "${m%%:*}" --nodes 2 --script |
        grep -Eq -- "^(#SBATCH --time=|#PBS -l walltime=)$t\$" &&
       "$BERTH" resolve --machine "${m%%:*}" --nodes 2 --script |
        grep -q "^# berth resolve: time $t: the limit of .* at 2 nodes (no wall time asked for)\$"
    then ok; else not_ok "${m%%:*}: text wall_time '$t' and --script disagree or say no limit"; fi
done
expect_out "no limit, no time: the text view" "wall_time=(none)" \
    bash -c '"$1" resolve --machine dane --nodes 2 | awk "\$1 == \"wall_time\" { print \$1 \"=\" \$2 }"' _ "$BERTH"
expect_true "no limit, no time line in the script" bash -c '! "$1" resolve --machine dane --nodes 2 --script | grep -q -- "--time"' _ "$BERTH"
# --account
expect_out "--account in the script" "#SBATCH --account=m1234" \
    bash -c '"$1" resolve --machine pm-cpu --nodes 2 --account m1234 --script | grep -- --account' _ "$BERTH"
expect_out "--account on pbs" "#PBS -A proj9" \
    bash -c '"$1" resolve --machine aurora --nodes 2 --account proj9 --script | grep -- "-A"' _ "$BERTH"
expect_out "--account in json" "m1234 --account" \
    bash -c '"$1" resolve --json --machine pm-cpu --nodes 2 --account m1234 | python3 -c "import json, sys; d = json.load(sys.stdin); print(d[\"account\"], d[\"account_from\"])"' _ "$BERTH"
expect_out "polaris: the site's account" "#PBS -A E3SMinput" \
    bash -c '"$1" resolve --machine polaris --nodes 2 --script | grep -- "-A"' _ "$BERTH"
expect_out "aurora: the file systems" "#PBS -l filesystems=home:flare" \
    bash -c '"$1" resolve --machine aurora --nodes 2 --script | grep filesystems' _ "$BERTH"
# --strict: its own exit status for a request not honored, the answer printed
expect_fail "--strict, not honored" 3 "not honored: qos 'debug' allows at most" \
    "$BERTH" resolve --machine frontier --nodes 100 --qos debug --wall-time 03:00:00 --script --strict
cp "$TMP/stdout" "$TMP/strict.out"
expect_true "--strict, not honored: the answer printed" grep -q "^#SBATCH --qos=normal" "$TMP/strict.out"
expect_true "--strict, honored: 0" "$BERTH" resolve --machine frontier --nodes 100 --qos debug --wall-time 01:00:00 --strict
expect_true "not honored without --strict: 0" "$BERTH" resolve --machine frontier --nodes 100 --qos debug --wall-time 03:00:00

# ---- wall times in the schedulers' forms (issue 16) ----
wt() { "$BERTH" resolve "$@" | awk '$1 == "wall_time" { print $2 }'; }
expect_out "D-HH:MM:SS on slurm" "24:00:00" wt --machine frontier --nodes 4 --partition extended --wall-time 1-00:00:00
expect_out "D-HH:MM:SS capped by length" "02:00:00" wt --machine frontier --nodes 4 --wall-time 1-00:00:00
expect_out "D-HH" "36:00:00" wt --machine chrysalis --nodes 4 --wall-time 1-12
expect_out "D-HH:MM" "25:30:00" wt --machine chrysalis --nodes 4 --wall-time 1-01:30
expect_out "MM on slurm is minutes" "01:30:00" wt --machine pm-cpu --nodes 1 --wall-time 90
expect_out "MM:SS" "00:45:30" wt --machine pm-cpu --nodes 1 --wall-time 45:30
expect_out "seconds on pbs" "01:30:00" wt --machine polaris --nodes 1 --wall-time 5400
expect_out "D-HH:MM:SS on pbs, written as qsub takes it" "#PBS -l walltime=20:00:00" \
    bash -c '"$1" resolve --machine polaris --nodes 1 --wall-time 0-20:00:00 --script | grep walltime' _ "$BERTH"
expect_out "a day is longer than debug's hour" \
    "queue 'debug' allows at most 01:00:00 on 1 node but 24:00:00 was requested" \
    reason --machine polaris --nodes 1 --queue debug --wall-time 1-00:00:00

# ---- errors ----
expect_fail "no --nodes" 2 "--nodes N is required" "$BERTH" resolve --machine frontier
expect_fail "zero nodes" 2 "--nodes wants a positive integer, got '0'" \
    "$BERTH" resolve --machine frontier --nodes 0
expect_fail "text nodes" 2 "--nodes wants a positive integer, got 'ten'" \
    "$BERTH" resolve --machine frontier --nodes ten
expect_fail "bad min nodes" 2 "--min-nodes-allowed wants a positive integer, got '-1'" \
    "$BERTH" resolve --machine frontier --nodes 4 --min-nodes-allowed -1
expect_fail "bad wall time" 2 "--wall-time '2h' is in no form the schedulers take: write MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS \(sbatch --time\), or HH:MM:SS or SECONDS \(qsub walltime\)" \
    "$BERTH" resolve --machine frontier --nodes 4 --wall-time 2h
expect_fail "wall time in words" 2 "'4 hours' is in no form" \
    "$BERTH" resolve --machine frontier --nodes 4 --wall-time '4 hours'
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
