#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The PBS allocation reader against the Torque wrappers Debian ships for Slurm
# (slurm-wlm-torque, LOCAL_SLURM_PBS=1): a qsub job has PBS_JOBID but no
# PBS_NODEFILE, so with the SLURM_* variables hidden berth reads the node
# count from `qstat -f` (Resource_List.nodect), one query, and says that it
# did. A node file written the way PBS writes one (a line per slot) is read
# without any query.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"

cluster_start LOCAL_SLURM_NODES=2 LOCAL_SLURM_CPUS=2 LOCAL_SLURM_MEM_MB=1000 LOCAL_SLURM_PBS=1
command -v qsub >/dev/null || { not_ok "LOCAL_SLURM_PBS=1 installed no qsub"; finish; exit 1; }
d=$T/pbs
mkdir -p "$d/bin"
for q in qstat squeue; do
    real=$(command -v $q)
    printf '#!/bin/bash\necho "%s $*" >> %s/queries\nexec %s "$@"\n' "$q" "$d" "$real" >"$d/bin/$q"
    chmod +x "$d/bin/$q"
done
cat >"$d/job.sh" <<EOS
#!/bin/bash
export PATH=$d/bin:\$PATH
env | grep ^PBS_ | sort > $d/job.env
# as on a PBS machine: no Slurm variables
for v in \$(env | sed -n 's/^\(SLURM[A-Z_]*\)=.*/\1/p'); do [[ \$v == SLURM_CONF ]] || unset \$v; done
: > $d/queries
"$BERTH" machine --allocation --json > $d/qstat.json 2> $d/qstat.err; echo \$? > $d/qstat.rc
cp $d/queries $d/queries.qstat
: > $d/queries
# a node file as PBS writes it: a line per slot, FQDN-style names
printf '%s\n' node1.cluster node1.cluster node2.cluster node2.cluster > $d/nodefile
PBS_NODEFILE=$d/nodefile "$BERTH" machine --allocation --json > $d/nodefile.json 2> $d/nodefile.err; echo \$? > $d/nodefile.rc
cp $d/queries $d/queries.nodefile
EOS
chmod +x "$d/job.sh"
id=$(qsub -l nodes=2 -o "$d/job.out" -e "$d/job.err" "$d/job.sh" 2>"$d/qsub.err")
check "qsub accepted the job ($id $(cat "$d/qsub.err"))" test -n "$id"
for ((i = 0; i < 300; i++)); do
    [[ -f $d/nodefile.rc ]] && [[ -z $(squeue --noheader -j "$id" 2>/dev/null) ]] && break
    sleep 0.2
done
field() { python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"o": o}))' "$1" "$2" 2>/dev/null; }
check "the job has PBS_JOBID" grep -q "^PBS_JOBID=$id" "$d/job.env"
if grep -q ^PBS_NODEFILE= "$d/job.env"; then note "these wrappers set PBS_NODEFILE"; else note "these wrappers set no PBS_NODEFILE"; fi
check "qstat path: exits 0 ($(cat "$d/qstat.rc" 2>/dev/null): $(head -c 200 "$d/qstat.err" 2>/dev/null))" test "$(cat "$d/qstat.rc" 2>/dev/null)" = 0
check "qstat path: system pbs, job $id" test "$(field "$d/qstat.json" 'o["system"], o["job_id"]')" = "('pbs', '$id')"
check "qstat path: 2 nodes from qstat -f" test "$(field "$d/qstat.json" 'o["totals"]["nodes"]')" = 2
check "qstat path: says it had no node file" grep -q "PBS_NODEFILE" "$d/qstat.err"
check "qstat path: one qstat, no squeue ($(tr '\n' ';' <"$d/queries.qstat"))" test "$(cat "$d/queries.qstat")" = "qstat -f $id"
check "node file: exits 0 ($(head -c 200 "$d/nodefile.err" 2>/dev/null))" test "$(cat "$d/nodefile.rc" 2>/dev/null)" = 0
check "node file: nodes node1, node2 (short names, repeats dropped)" \
    test "$(field "$d/nodefile.json" '[n["name"] for n in o["nodes"]]')" = "['node1', 'node2']"
check "node file: no query" test ! -s "$d/queries.nodefile"
note "finished"
finish
