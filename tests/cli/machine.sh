#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth machine: every shipped machine described; the localhost default; the
# allocation view with fake schedulers (no query under a local proof).
source "$(dirname "$0")/lib.sh"
M=("$BERTH" machine)

# every shipped machine and the figures of the brief's table
check_machine() {  # name compiler cores gpus max_mpi memory
    local out
    out=$("${M[@]}" --machine "$1" ${2:+--compiler "$2"} --json 2>"$TMP/stderr")
    expect_true "machine $1 ${2:-} figures" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); name, cores, gpus, mpi, mem = sys.argv[2:]
assert d["machine"] == name, d["machine"]
assert d["cores_per_node"] == int(cores), ("cores", d["cores_per_node"])
assert d["gpus_per_node"] == int(gpus), ("gpus", d["gpus_per_node"])
assert d["parallel"]["max_mpi_tasks_per_node"] == mpi, ("max mpi", d["parallel"])
assert str(d["memory_per_node"]) == mem, ("memory", d["memory_per_node"])
for k in ("parallel", "account_defaults", "targets", "chosen_why", "system"):
    assert k in d, k
' "$out" "$1" "$3" "$4" "$5" "$6"
}
check_machine pm-cpu "" 128 0 128 515100
check_machine pm-gpu "" 64 4 4 257200
check_machine pm-gpu gnu 64 0 64 257200
check_machine frontier "" 56 0 56 512000
check_machine frontier craygnu-mphipcc 56 8 8 512000
check_machine chrysalis "" 64 0 64 253000
check_machine aurora "" 102 0 102 960000
check_machine aurora oneapi-ifxgpu 96 12 12 960000
check_machine polaris "" 32 4 4 480000
check_machine polaris gnu 32 0 32 480000
# the compilers each machine knows, which is in force and why
out=$("${M[@]}" --machine frontier --json)
expect_true "frontier lists its compiler sections" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); c = {x["name"]: x for x in d["compilers"]}
assert d["compiler"] == "craygnu", d["compiler"]
assert "[build] compiler" in d["compiler_why"] and "frontier.cfg" in d["compiler_why"], d["compiler_why"]
assert c["craygnu"]["in_force"] and c["craygnu"]["section"] is None, c["craygnu"]
assert c["craygnu"]["gpus_per_node"] == 0, c["craygnu"]
g = c["craygnu-mphipcc"]
assert g["section"] == "parallel.craygnu_mphipcc" and g["gpus_per_node"] == 8 and not g["in_force"], g
assert sum(x["in_force"] for x in d["compilers"]) == 1
' "$out"
out=$("${M[@]}" --machine aurora --compiler oneapi-ifxgpu)
expect_true "aurora text view: the GPU section marked" grep -Eq '^ +\* oneapi-ifxgpu +\[parallel.oneapi_ifxgpu\] +12 GPUs per node' <<<"$out"
expect_true "aurora text view: why" grep -q 'compiler  *oneapi-ifxgpu (given (--compiler): \[parallel.oneapi_ifxgpu\] over \[parallel\])' <<<"$out"
expect_fail "unknown compiler" 1 "machine aurora has no compiler 'oneapi': it knows oneapi-ifx and oneapi-ifxgpu" \
    "${M[@]}" --machine aurora --compiler oneapi
expect_fail "unknown compiler on a machine listing none: a warning" 0 "warning: machine localhost has no \\[parallel.foo\\] section and lists no \\[build\\] compilers" \
    "${M[@]}" --machine localhost --compiler foo

for m in compy dane chicoma-cpu improv; do
    expect_true "machine $m loads" "${M[@]}" --machine "$m" --json
done

# targets and account defaults as the brief's table gives them
out=$("${M[@]}" --machine pm-cpu --json)
expect_true "pm-cpu targets and defaults" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
ad = d["account_defaults"]
assert ad == {"account": "e3sm", "partition": None, "constraint": "cpu", "qos": "regular"}, ad
q = {t["name"]: t for t in d["targets"]["qos"]}
assert q["debug"]["max_nodes"] == 8 and q["debug"]["max_wallclock"] == "00:30:00", q["debug"]
assert list(q) == ["regular", "debug", "premium"], list(q)
' "$out"
out=$("${M[@]}" --machine frontier --json)
expect_true "frontier wall-clock bins" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
b = d["targets"]["partition"][0]["max_wallclock_bins"]
assert [(x["nodes"], x["max_wallclock"]) for x in b] == [(91, "02:00:00"), (183, "06:00:00"), (9472, "12:00:00")], b
' "$out"

# the localhost default: chosen and described from this host
out=$(env -u SLURM_JOB_ID -u PBS_JOBID -u BERTH_MACHINE "${M[@]}" --json)
expect_true "localhost default" python3 -c '
import json, os, sys
d = json.loads(sys.argv[1])
assert d["machine"] == "localhost" and d["system"] == "single_node", d
assert "localhost" in d["chosen_why"], d["chosen_why"]
def core(c):
    try:
        t = open(f"/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list").read()
    except OSError:
        return c
    ids = set()
    for part in t.strip().split(","):
        a, _, b = part.partition("-"); ids.update(range(int(a), int(b or a) + 1))
    return min(ids & os.sched_getaffinity(0) | {c})
phys = {core(c) for c in os.sched_getaffinity(0)}
assert d["cores_per_node"] == len(phys), (d["cores_per_node"], phys)
assert d["memory_per_node"] and d["memory_per_node"] > 0, d["memory_per_node"]
' "$out"
out=$(env -u SLURM_JOB_ID BERTH_MACHINE=chrysalis "${M[@]}" --json)
expect_true "BERTH_MACHINE chooses" python3 -c '
import json, sys; d = json.loads(sys.argv[1]); assert d["machine"] == "chrysalis" and "BERTH_MACHINE" in d["chosen_why"], d
' "$out"
expect_true "human output names the machine first" bash -c '"$1" machine --machine pm-cpu | head -1 | grep -q "^machine *pm-cpu"' _ "$BERTH"

# layering: a user file overrides one key
printf '[parallel]\ncores_per_node = 256\nmax_mpi_tasks_per_node = 256\n' > "$TMP/ht.cfg"
out=$("${M[@]}" --machine pm-cpu --config "$TMP/ht.cfg" --json)
expect_true "user file overrides a key" python3 -c '
import json, sys; d = json.loads(sys.argv[1]); assert d["cores_per_node"] == 256 and d["memory_per_node"] == 515100, d
' "$out"

# the machine search path (issue 16): --machine-path, then BERTH_MACHINE_PATH,
# then the shipped files; berth machine says which file it read and why
mdata=${BERTH_TESTDATA:-$(dirname "$0")/../data}/machines
out=$(env -u BERTH_MACHINES_DIR BERTH_MACHINE_PATH="/no/such:$mdata/path-b:$mdata/path-a" "${M[@]}" --machine pm-cpu --json)
expect_true "BERTH_MACHINE_PATH: the first directory that has it" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["cores_per_node"] == 22 and d["file"].endswith("path-b/pm-cpu.cfg"), d
assert "BERTH_MACHINE_PATH entry 2" in d["file_why"], d["file_why"]
' "$out"
out=$(BERTH_MACHINE_PATH="$mdata/path-b" "${M[@]}" --machine-path "$mdata/path-a" --machine pm-cpu)
expect_true "--machine-path before BERTH_MACHINE_PATH, and the file line" grep -Eq \
    "^file +.*path-a/pm-cpu.cfg \(found in .*path-a \(--machine-path\)\)$" <<<"$out"
expect_true "shipped: the file line says so" bash -c '"$1" machine --machine pm-cpu | grep -Eq "^file +machines/pm-cpu.cfg \(shipped with berth"' _ "$BERTH"
expect_fail "--machine-path that is no directory" 1 "--machine-path /no/such/dir: No such file" \
    "${M[@]}" --machine-path /no/such/dir --machine pm-cpu
expect_fail "no [parallel]: the clear error, naming the file" 1 \
    "machine noparallel \(.*path-b/noparallel.cfg\): \[parallel\] system is not set" \
    "${M[@]}" --machine-path "$mdata/path-b" --machine noparallel
site=${BERTH_SRCDIR:-$(dirname "$0")/../..}/../shared/site-machines
if [[ -d $site ]]; then
    out=$(BERTH_MACHINE_PATH=$site "${M[@]}" --machine pm-cpu)
    expect_true "the site's own pm-cpu.cfg" grep -Eq "^file +$site/pm-cpu.cfg \(found in $site \(BERTH_MACHINE_PATH entry 1\)\)$" <<<"$out"
    for m in andes bebop default; do
        expect_fail "site $m.cfg: no [parallel]" 1 "machine $m \($site/$m.cfg\): \[parallel\] system is not set" \
            env BERTH_MACHINE_PATH="$site" "${M[@]}" --machine "$m"
    done
else
    echo "SKIP (part): no $site; the site files' search-path checks did not run" >&2
fi

# --config naming no system layers over the machine chosen without it
# (issue 17: it became a machine named after the file, "system is not set")
out=$(env -u SLURM_JOB_ID -u PBS_JOBID BERTH_MACHINE=pm-cpu "${M[@]}" --config "$mdata/gpu.cfg" --json)
expect_true "--config gpu.cfg over BERTH_MACHINE=pm-cpu" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["machine"] == "pm-cpu" and d["gpus_per_node"] == 2 and d["cores_per_node"] == 128, d
assert d["chosen_why"].startswith("BERTH_MACHINE=pm-cpu, with --config "), d["chosen_why"]
' "$out"
out=$(env -u SLURM_JOB_ID -u PBS_JOBID -u BERTH_MACHINE "${M[@]}" --config "$mdata/gpu.cfg" --json)
expect_true "--config gpu.cfg over the localhost default" python3 -c '
import json, sys; d = json.loads(sys.argv[1]); assert d["machine"] == "localhost" and d["gpus_per_node"] == 2, d
' "$out"

# errors
expect_fail "unknown machine lists the shipped ones" 1 "nosuch.*pm-cpu" "${M[@]}" --machine nosuch
printf '[parallel]\nsystem = slurmish\n' > "$TMP/bad.cfg"
expect_fail "bad system value names file and line" 1 "bad.cfg:2.*slurmish" "${M[@]}" --config "$TMP/bad.cfg"
printf '[parallel]\ncores_per_node = ${nope}\nsystem = slurm\nparallel_executable = srun\n' > "$TMP/undef.cfg"
expect_fail "undefined reference" 1 "undef.cfg:2.*nope" "${M[@]}" --config "$TMP/undef.cfg"
expect_fail "unknown option" 2 "unknown" "${M[@]}" --bogus
"${M[@]}" --machine nosuch --json > "$TMP/err.json" 2>/dev/null
expect_true "json error object" python3 -c '
import json, sys; d = json.load(open(sys.argv[1])); assert "nosuch" in d["error"]["message"], d
' "$TMP/err.json"

# the allocation view, with fake scheduler commands that record their calls
mkdir -p "$TMP/bin"
for c in squeue scontrol sinfo; do
    printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\n[ "$FAKE" = dead ] && [ %s = squeue ] && echo COMPLETED\nexit 0\n' \
        "$c" "$TMP" "$c" > "$TMP/bin/$c"
    chmod +x "$TMP/bin/$c"
done
host=$(hostname -s)
job=(env -i PATH="$TMP/bin:/usr/bin:/bin" HOME="$TMP" SLURM_JOB_ID=77 SLURM_JOB_NUM_NODES=2)
: > "$TMP/calls"
out=$("${job[@]}" SLURMD_NODENAME="$host" SLURM_JOB_NODELIST="$host,nid0002" \
      "${M[@]}" --machine pm-cpu --allocation --json 2>"$TMP/stderr")
expect_true "live allocation: view" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["system"] == "slurm" and d["job_id"] == "77", d
assert [n["name"] for n in d["nodes"]] == [sys.argv[2], "nid0002"], d["nodes"]
assert "SLURMD_NODENAME" in d["liveness"], d["liveness"]
assert d["placement_support"] in ("NONE", "CPU_BINDING", "SCHEDULER"), d
assert d["nodes"][0]["memory_configured_mb"] == 515100, d["nodes"][0]
' "$out" "$host"
expect_true "live allocation: no scheduler call" test ! -s "$TMP/calls"
: > "$TMP/calls"
out=$("${job[@]}" FAKE=dead SLURM_JOB_NODELIST="nid[0001-0002]" \
      "${M[@]}" --machine pm-cpu --allocation --json 2>"$TMP/stale.err")
expect_true "stale allocation: login" python3 -c '
import json, sys; d = json.loads(sys.argv[1]); assert d["system"] == "login" and d["mpi_allowed"] is False, d
' "$out"
expect_true "stale allocation: one squeue call" test "$(grep -c '^squeue' "$TMP/calls")" = 1
expect_true "stale allocation: warning names the job" grep -q "job 77 is COMPLETED" "$TMP/stale.err"
expect_true "human allocation view" bash -c '"$@" | grep -q "^liveness"' _ \
    "${job[@]}" SLURMD_NODENAME="$host" SLURM_JOB_NODELIST="$host,nid0002" "${M[@]}" --machine pm-cpu --allocation
finish
