#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Spans fit where they fit (issue 25), with real srun on a 3-node, 4-CPU
# local cluster: a 2-core step holds half of one node; a 10-task step then
# fits only as 2 + 4 + 4 (the even layout wants 4 + 3 + 3), so berthd places
# it unevenly and berth run launches it with srun -m arbitrary, naming each
# task's node; it must run beside the holder (which ends only once the wide
# step has), with that many tasks on each node. Then 11 tasks on the empty
# job take 11 cores (4 + 4 + 3), not 12: a 1-core step runs beside them,
# started by Slurm as well as granted by berthd. Before, the first waited
# behind the holder for ever and the second held 12 cores.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"

cluster_start LOCAL_SLURM_NODE_NAMES=uev1,uev2,uev3 LOCAL_SLURM_NODES=3 LOCAL_SLURM_CPUS=4 LOCAL_SLURM_MEM_MB=2000
d=$T/uneven
mkdir -p "$d"
mkdir -m 700 "$d/run"

cat >"$d/rank.sh" <<'EOS'
#!/bin/bash
# rank.sh OUT [HOLD-UNTIL-FILE]: one line a task, then (rank 0) wait
echo "rank $SLURM_PROCID $SLURMD_NODENAME" >> "$1.$SLURM_PROCID"
if [[ -n ${2:-} ]]; then
  for ((i = 0; i < 900; i++)); do [[ -e $2 ]] && exit 0; sleep 0.1; done
  exit 9
fi
EOS
chmod +x "$d/rank.sh"

cat >"$d/job.sh" <<EOS
#!/bin/bash
envs=\$("$BERTHD" --detach --print-env --socket $d/run/berthd.sock --state-dir $d/state) || { echo "berthd did not start: \$envs"; exit 3; }
eval "\$envs"
# 1. a holder of 2 cores, until the wide step has run
"$BERTH" run -n 1 -c 2 --label hold -- $d/rank.sh $d/hold $d/wide.done > $d/hold.out 2>&1 &
h=\$!
for ((i = 0; i < 600; i++)); do [[ -e $d/hold.0 ]] && break; sleep 0.1; done
"$BERTH" status --json > $d/before.json
timeout 120 "$BERTH" run -v -n 10 --label wide -- $d/rank.sh $d/wide > $d/wide.out 2>&1; echo \$? > $d/wide.rc
touch $d/wide.done
wait \$h; echo \$? > $d/hold.rc
# 2. 11 tasks on the empty job, held until a 1-core step has run beside them
"$BERTH" run -v -n 11 --label eleven -- $d/rank.sh $d/eleven $d/one.done > $d/eleven.out 2>&1 &
e=\$!
for ((i = 0; i < 600; i++)); do [[ -e $d/eleven.0 ]] && break; sleep 0.1; done
timeout 120 "$BERTH" run -v -n 1 --label one -- $d/rank.sh $d/one > $d/one.out 2>&1; echo \$? > $d/one.rc
touch $d/one.done
wait \$e; echo \$? > $d/eleven.rc
"$BERTH" shutdown > $d/shutdown.out 2>&1
EOS
chmod +x "$d/job.sh"

# salloc: the job script runs on this host, outside the nodes, so berthd's
# ledger holds the 4 declared CPUs of every node (a batch step here may use
# only this machine's 2 real CPUs, and berthd would hold those 2 a node)
note "allocating"
timeout 300 salloc -N3 -n12 --mem=1500 "$d/job.sh" > "$d/job.out" 2>&1
rc=$?
check "the job ran (salloc exit $rc): $(tail -c 300 "$d/job.out" | tr '\n' ' ')" test "$rc" = 0

# ranks PREFIX: "node count" lines, by node
ranks() { cat "$1".[0-9]* 2>/dev/null | awk '{print $3}' | sort | uniq -c | awk '{print $2, $1}'; }
hold_node=$(awk '{print $3}' "$d/hold.0" 2>/dev/null)
check "the holder ran on one node (${hold_node:-none})" test -n "$hold_node"
# the holder exits 0 only if the wide step ended while it still held (else 9)
check "the 10-task step ran beside the holder and exited 0 (rc $(cat "$d/wide.rc" 2>/dev/null), holder rc $(cat "$d/hold.rc" 2>/dev/null)): $(tail -c 400 "$d/wide.out" | tr '\n' ' ')" \
    test "$(cat "$d/wide.rc" 2>/dev/null) $(cat "$d/hold.rc" 2>/dev/null)" = "0 0"
check "berth run launched it naming each task's node: $(grep -o -- '-m arbitrary -w [^ ]*' "$d/wide.out" | head -1)" \
    grep -q -- "-m arbitrary -w " "$d/wide.out"
want=$(for n in uev1 uev2 uev3; do [[ $n == "$hold_node" ]] && echo "$n 2" || echo "$n 4"; done)
got=$(ranks "$d/wide")
check "srun ran 2 tasks on the holder's node and 4 on each other: $(echo $got)" test "$got" = "$want"
check "the 11-task step ran and exited 0 (rc $(cat "$d/eleven.rc" 2>/dev/null)): $(tail -c 300 "$d/eleven.out" | tr '\n' ' ')" \
    test "$(cat "$d/eleven.rc" 2>/dev/null)" = 0
got=$(ranks "$d/eleven" | awk '{print $2}' | sort | tr '\n' ' ')
check "its 11 tasks ran as 3 + 4 + 4: $got" test "$got" = "3 4 4 "
check "berthd granted it 11 cores: a 1-core step ran beside it (rc $(cat "$d/one.rc" 2>/dev/null), the 11-task step rc $(cat "$d/eleven.rc" 2>/dev/null)): $(tail -c 300 "$d/one.out" | tr '\n' ' ')" \
    test "$(cat "$d/one.rc" 2>/dev/null) $(cat "$d/eleven.rc" 2>/dev/null)" = "0 0"
check "and srun started that step at once (no 'step creation temporarily disabled')" \
    bash -c "! grep -q 'temporarily disabled' '$d/one.out'"
finish
