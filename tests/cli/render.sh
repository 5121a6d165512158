#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth render against known launch lines, its JSON
# form, its errors and exit codes, on the shipped machine files.
source "$(dirname "$0")/lib.sh"
R=("$BERTH" render)
s25=(--launcher-version slurm:25.11)
s20=(--launcher-version slurm:20.02)

# Slurm, unplaced (2-node allocation)
expect_out "pm-cpu 4x2" \
    "srun --label -c 2 -N 1 -n 4 --cpu-bind=cores -m plane=128 ./exe" \
    "${R[@]}" --machine pm-cpu --nodes 2 "${s25[@]}" -n 4 -c 2 -- ./exe
expect_out "frontier 4x2" \
    "srun -l -K --threads-per-core=1 -c 2 -N 1 -n 4 --cpu-bind=threads -m block:cyclic ./exe" \
    "${R[@]}" --machine frontier --nodes 2 "${s25[@]}" -n 4 -c 2 -- ./exe
expect_out "pm-gpu 4x16 1 GPU/task" \
    "srun --label -c 16 -N 1 -n 4 --gpus-per-task 1 --cpu-bind=cores --gpu-bind=none -m plane=4 ./exe" \
    "${R[@]}" --machine pm-gpu --nodes 2 "${s25[@]}" -n 4 -c 16 --gpus-per-task 1 -- ./exe
expect_out "unplaced ignores the launcher version" \
    "srun --label -c 2 -N 1 -n 4 --cpu-bind=cores -m plane=128 ./exe" \
    "${R[@]}" --machine pm-cpu --nodes 2 --launcher-version none -n 4 -c 2 -- ./exe

# Slurm, placed
expect_out "pm-cpu placed, SCHEDULER" \
    "srun --label -c 2 -N 1 -n 4 -w nid001 --exact --gres=none --cpu-bind=cores ./run" \
    "${R[@]}" --machine pm-cpu --nodes 2 "${s25[@]}" -n 4 -c 2 \
    --place-nodes nid001 --place-cores 0-7 -- ./run
expect_out "frontier GPU build placed with 2 GPUs" \
    "srun -l -K --threads-per-core=1 -c 2 -N 1 -n 4 -w frontier00001 --exact --gpus=2 --cpu-bind=threads --gpu-bind=closest ./run" \
    "${R[@]}" --machine frontier --compiler craygnu-mphipcc --nodes 2 "${s25[@]}" -n 4 -c 2 \
    --place-nodes frontier00001 --place-cores 0-7 --place-gpus 2 -- ./run
expect_out "chrysalis, Slurm 20.02: mask list" \
    "srun --mpi=pmi2 -l -c 2 -N 1 -n 2 -w chr-0493 --cpu-bind=mask_cpu:0x3,0xc ./run" \
    "${R[@]}" --machine chrysalis --nodes 2 "${s20[@]}" -n 2 -c 2 \
    --place-nodes chr-0493 --place-cores 0-3 -- ./run
expect_out "memory cap enforced from 20.11" \
    "srun --label -c 2 -N 1 -n 4 -w nid001 --exact --gres=none --cpu-bind=cores --mem=8000M ./run" \
    "${R[@]}" --machine pm-cpu --nodes 2 "${s25[@]}" -n 4 -c 2 \
    --place-nodes nid001 --place-cores 0-7 --memory-cap 8000 -- ./run
expect_out "memory cap not rendered before 20.11" \
    "srun --mpi=pmi2 -l -c 2 -N 1 -n 2 -w chr-0493 --cpu-bind=mask_cpu:0x3,0xc ./run" \
    "${R[@]}" --machine chrysalis --nodes 2 "${s20[@]}" -n 2 -c 2 \
    --place-nodes chr-0493 --place-cores 0-3 --memory-cap 8000 -- ./run

# PBS with PALS
expect_out "aurora GPU build placed" \
    "mpiexec --label -n 2 --ppn 2 --depth 1 --hosts x4401c1s0b0n0 --cpu-bind list:1:2 --env ZE_AFFINITY_MASK=1.0,1.1 ./run" \
    "${R[@]}" --machine aurora --compiler oneapi-ifxgpu --nodes 2 --launcher-version pals \
    -n 2 -c 1 --place-nodes x4401c1s0b0n0 --place-cores 1,2 --place-gpus 2 --place-gpu-ids 2,3 -- ./run
expect_out "polaris placed on two hosts" \
    "mpiexec --label -n 4 --ppn 2 --depth 2 --hosts a,b --cpu-bind list:1,2:3,4:1,2:3,4 --env CUDA_VISIBLE_DEVICES= ./run" \
    "${R[@]}" --machine polaris --nodes 2 --launcher-version pals \
    -n 4 -c 2 --place-nodes a,b --place-cores '1-4;1-4' -- ./run

# single node
expect_out "localhost placed with taskset" \
    "taskset -c 2-4,6 mpirun -n 1 ./run" \
    "${R[@]}" --machine localhost --config "$BERTH_TESTDATA/render/mpirun.cfg" --launcher-version taskset -n 1 -c 4 \
    --place-nodes here --place-cores 6,2,3,4 -- ./run

# JSON: argv, environment delta, supports
out=$("${R[@]}" --machine pm-cpu --nodes 2 "${s25[@]}" -n 1 -c 1 --place-nodes nid1 \
      --place-cores 0 --json -- ./a 'b c')
expect_true "json argv and env delta" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["argv"][-2:] == ["./a", "b c"], d["argv"]
assert "SLURM_MEM_PER_NODE" in d["env"]["unset"] and "SLURM_GPUS_PER_NODE" in d["env"]["unset"], d["env"]
assert d["env"]["set"] == {}
assert d["system"] == "slurm" and d["placement_support"] == "SCHEDULER" and d["memory_cap_support"] == "ENFORCED", d
' "$out"
out=$("${R[@]}" --machine pm-cpu --nodes 2 "${s25[@]}" -n 1 --json -- ./a)
expect_true "json unplaced has an empty delta" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); assert d["env"] == {"unset": [], "set": {}}, d
' "$out"
expect_out "shell quoting" "srun --label -N 1 -n 1 --cpu-bind=cores -m plane=128 ./a 'b c' 'it'\\''s'" \
    "${R[@]}" --machine pm-cpu --nodes 1 -n 1 -- ./a 'b c' "it's"

# no cpus per task given: no flag (srun refuses -c 0, PALS --depth 0)
expect_out "pm-cpu without -c" "srun --label -N 1 -n 4 --cpu-bind=cores -m plane=128 ./a.out" \
    "${R[@]}" --machine pm-cpu --nodes 1 -n 4 -- ./a.out
expect_out "polaris without -c" "mpiexec --label -n 2 --ppn 2 --cpu-bind core ./a.out" \
    "${R[@]}" --machine polaris --nodes 1 -n 2 -- ./a.out
expect_out "aurora without -c" "mpiexec --label -n 2 --ppn 2 --cpu-bind core ./a.out" \
    "${R[@]}" --machine aurora --nodes 1 -n 2 -- ./a.out

# localhost: each MPI's own spelling of cores per rank; a non-MPI process alone
lh=("${R[@]}" --machine localhost --config "$BERTH_TESTDATA/render/mpirun.cfg")
expect_out "Open MPI cores per rank" "mpirun -n 2 --map-by slot:PE=2 --bind-to core ./exe" \
    "${lh[@]}" --launcher-version openmpi -n 2 -c 2 -- ./exe
expect_out "MPICH cores per rank" "mpirun -n 2 -bind-to core:2 ./exe" \
    "${lh[@]}" --launcher-version mpich -n 2 -c 2 -- ./exe
expect_out "Open MPI placed" "taskset -c 2-4,6 mpirun -n 2 --bind-to none ./exe" \
    "${lh[@]}" --launcher-version openmpi -n 2 -c 2 --place-cores 2-4,6 -- ./exe
expect_out "MPICH placed" "taskset -c 2-4,6 mpirun -n 2 -bind-to user:2+3,4+6 ./exe" \
    "${lh[@]}" --launcher-version mpich -n 2 -c 2 --place-cores 2-4,6 -- ./exe
expect_out "not MPI: no launcher" "taskset -c 0-1 ./exe" \
    "${lh[@]}" --launcher-version openmpi --cores 2 --place-cores 0-1 -- ./exe
out=$("${lh[@]}" --launcher-version mpich -n 2 --json -- ./exe)
expect_true "json names the launcher and its MPI" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); assert d["launcher"] == "taskset, mpich", d
' "$out"
expect_out "not MPI, unplaced" "./exe" "${lh[@]}" --launcher-version mpich --cores 2 -- ./exe
expect_fail "--cores with -n" 2 "--cores .* and --ntasks/--cpus-per-task .* contradict" \
    "${lh[@]}" --cores 2 -n 2 -- ./exe

# core sets without node names: the launcher's own node
expect_out "unnamed, SCHEDULER" "srun --label -c 2 -N 1 -n 2 --exact --gres=none --cpu-bind=cores ./exe" \
    "${R[@]}" --machine pm-cpu --nodes 1 "${s25[@]}" --place-cores 2-4,6 -n 2 -c 2 -- ./exe
expect_out "unnamed, Slurm 20.02" "srun --label -c 2 -N 1 -n 2 --cpu-bind=mask_cpu:0xc,0x50 ./exe" \
    "${R[@]}" --machine pm-cpu --nodes 1 "${s20[@]}" --place-cores 2-4,6 -n 2 -c 2 -- ./exe
expect_out "unnamed, PALS" "mpiexec --label -n 2 --ppn 2 --depth 2 --cpu-bind list:2,3:4,6 --env CUDA_VISIBLE_DEVICES= ./exe" \
    "${R[@]}" --machine polaris --nodes 1 --launcher-version pals --place-cores 2-4,6 -n 2 -c 2 -- ./exe
expect_out "unnamed, taskset" "taskset -c 2-4,6 mpirun -n 2 ./exe" \
    "${lh[@]}" --launcher-version taskset --place-cores 2-4,6 -n 2 -c 2 -- ./exe
expect_fail "unnamed, two core sets" 1 "--place-cores gives 2 core sets but no --place-nodes" \
    "${R[@]}" --machine pm-cpu --nodes 1 "${s25[@]}" --place-cores '0;1' -n 2 -- ./exe
expect_fail "GPUs without cores" 1 "a placement needs --place-cores" \
    "${R[@]}" --machine pm-gpu --nodes 1 "${s25[@]}" --place-gpus 1 -n 1 -- ./exe

# GPU ids per node: one list for PALS, refused where the nodes' ids differ
expect_out "polaris, the same ids per node" \
    "mpiexec --label -n 4 --ppn 2 --depth 2 --hosts a,b --cpu-bind list:0,1:2,3:0,1:2,3 --env CUDA_VISIBLE_DEVICES=0,1 ./exe" \
    "${R[@]}" --machine polaris --nodes 2 --launcher-version pals --place-nodes a,b \
    --place-cores '0-3;0-3' --place-gpu-ids '0,1;0,1' -n 4 -c 2 -- ./exe
expect_fail "polaris, different ids per node" 1 "PALS's --env sets one CUDA_VISIBLE_DEVICES for every node of a launch, but the placement gives node a GPU ids 0-1, node b GPU ids 2-3" \
    "${R[@]}" --machine polaris --nodes 2 --launcher-version pals --place-nodes a,b \
    --place-cores '0-3;0-3' --place-gpu-ids '0,1;2,3' -n 4 -c 2 -- ./exe
expect_fail "polaris, both nodes' ids as one list" 1 "the placement lists 4 GPU ids for 4 GPUs on 2 nodes \\(at most 2 on a node\\), but PALS's --env sets one CUDA_VISIBLE_DEVICES for every node, so each node would see all 4" \
    "${R[@]}" --machine polaris --nodes 2 --launcher-version pals --place-nodes a,b \
    --place-cores '0-3;0-3' --place-gpu-ids 0,1,2,3 -n 4 -c 2 -- ./exe
expect_fail "per-node ids, wrong count" 1 "--place-gpu-ids gives 3 GPU id list\\(s\\) .* the placement has 2 node" \
    "${R[@]}" --machine polaris --nodes 2 --launcher-version pals --place-nodes a,b \
    --place-cores '0-3;0-3' --place-gpu-ids '0;1;2' -n 4 -- ./exe

# the visible-devices variable only where the compiler section has GPUs
expect_out "aurora CPU build: no ZE_AFFINITY_MASK" \
    "mpiexec --label -n 2 --ppn 2 --depth 1 --hosts x1 --cpu-bind list:1:2 ./run" \
    "${R[@]}" --machine aurora --compiler oneapi-ifx --nodes 1 --launcher-version pals \
    -n 2 -c 1 --place-nodes x1 --place-cores 1,2 -- ./run
expect_out "aurora GPU build: explicit empty mask" \
    "mpiexec --label -n 2 --ppn 2 --depth 1 --hosts x1 --cpu-bind list:1:2 --env ZE_AFFINITY_MASK= ./run" \
    "${R[@]}" --machine aurora --compiler oneapi-ifxgpu --nodes 1 --launcher-version pals \
    -n 2 -c 1 --place-nodes x1 --place-cores 1,2 -- ./run

# previews refuse what berthd refuses, naming machine, compiler section, figures
expect_fail "GPUs per task on a CPU machine" 1 "machine pm-cpu, compiler gnu \\[parallel\\]: .*asks for 4 GPUs, but .* no GPUs" \
    "${R[@]}" --machine pm-cpu --nodes 1 -n 4 --gpus-per-task 1 -- ./a
expect_fail "placed GPUs on a CPU machine" 1 "machine pm-cpu, compiler gnu \\[parallel\\]: placement gives node a 1 GPU, but a node has none \\(0 GPUs per node\\)" \
    "${R[@]}" --machine pm-cpu --nodes 1 "${s25[@]}" -n 1 --place-nodes a --place-cores 0 --place-gpus 1 -- ./a
expect_fail "-c above a node's cores" 1 "machine pm-cpu, compiler gnu \\[parallel\\]: .*needs 200 cores for each task .* a node holds 128 cores" \
    "${R[@]}" --machine pm-cpu --nodes 1 -n 1 -c 200 -- ./a
expect_fail "more GPUs than a node has" 1 "machine polaris, compiler gnugpu \\[parallel\\]: placement gives node a 9 GPUs, but a node holds 4" \
    "${R[@]}" --machine polaris --nodes 1 --launcher-version pals -n 1 --place-nodes a --place-cores 0 --place-gpus 9 -- ./a
expect_fail "GPU id out of range on Slurm" 1 "machine pm-gpu, compiler gnugpu \\[parallel\\]: placement node a: GPU id 7 is out of range: a node has 4 GPUs \\(ids 0 to 3\\)" \
    "${R[@]}" --machine pm-gpu --nodes 1 "${s25[@]}" -n 1 --place-nodes a --place-cores 0 --place-gpu-ids 7 -- ./a
expect_fail "a GPU section's GPUs on frontier's CPU build" 1 "machine frontier, compiler craygnu \\[parallel\\]" \
    "${R[@]}" --machine frontier --nodes 1 -n 1 --gpus-per-task 1 -- ./a
expect_out "the GPU section has them" \
    "srun -l -K --threads-per-core=1 -N 1 -n 1 --gpus-per-task 1 --cpu-bind=threads --gpu-bind=closest -m block:cyclic ./a" \
    "${R[@]}" --machine frontier --compiler craygnu-mphipcc --nodes 1 -n 1 --gpus-per-task 1 -- ./a
expect_fail "bogus compiler" 1 "machine pm-cpu has no compiler 'bogus': it knows gnu, intel and nvidia" \
    "${R[@]}" --machine pm-cpu --compiler bogus --nodes 1 -n 1 -- ./a
expect_out "a listed compiler without a section" "srun --label -N 1 -n 1 --cpu-bind=cores -m plane=128 ./a" \
    "${R[@]}" --machine pm-cpu --compiler intel --nodes 1 -n 1 -- ./a

# errors: a message with the figures, exit 1; JSON error object on stdout
expect_fail "too many tasks per node" 1 "300 tasks on 1 allocation nodes .* above max_mpi_tasks_per_node = 128: the allocation needs at least 3 nodes" \
    "${R[@]}" --machine pm-cpu --nodes 1 -n 300 -- ./a
expect_fail "placement on a launcher that cannot place" 1 "cannot place" \
    "${R[@]}" --machine pm-cpu --nodes 1 --launcher-version none -n 1 --place-nodes a --place-cores 0 -- ./a
expect_fail "core set too small" 1 "has 2 cores, too few for 2 tasks x 2 cpus per task = 4" \
    "${R[@]}" --machine pm-cpu --nodes 1 "${s25[@]}" -n 2 -c 2 --place-nodes a --place-cores 0-1 -- ./a
expect_fail "GPUs with Slurm 20.02" 1 "GPU" \
    "${R[@]}" --machine chrysalis --nodes 1 "${s20[@]}" -n 1 --place-nodes a --place-cores 0 --place-gpus 1 -- ./a
expect_fail "memory cap <= 0" 1 "memory" \
    "${R[@]}" --machine pm-cpu --nodes 1 "${s25[@]}" -n 1 --place-nodes a --place-cores 0 --memory-cap 0 -- ./a
expect_fail "login node refuses MPI" 1 "login" \
    env -u SLURM_JOB_ID "${R[@]}" --machine pm-cpu -n 2 -- ./a
expect_fail "repeated core in a node" 1 "0" \
    "${R[@]}" --machine pm-cpu --nodes 1 "${s25[@]}" -n 1 --place-nodes a --place-cores 0,0 -- ./a
expect_fail "node and core set counts differ" 1 "2 node\\(s\\) but --place-cores gives 1" \
    "${R[@]}" --machine pm-cpu --nodes 2 "${s25[@]}" -n 1 --place-nodes a,b --place-cores 0 -- ./a
expect_fail "unknown machine" 1 "pm-cpu" "${R[@]}" --machine nosuch -n 1 -- ./a
"${R[@]}" --machine pm-cpu --nodes 1 -n 300 --json -- ./a >"$TMP/err.json" 2>/dev/null
expect_true "json error object" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); e = d["error"]
assert e["code"] == "render" and "300" in e["message"], d
' "$TMP/err.json"
# usage errors: exit 2
expect_fail "no program" 2 "no program" "${R[@]}" --machine pm-cpu -n 1
expect_fail "bad number" 2 "--ntasks" "${R[@]}" --machine pm-cpu -n x -- ./a
expect_fail "unknown option" 2 "unknown" "${R[@]}" --bogus -- ./a
expect_fail "bad launcher version" 2 "slurm:x" "${R[@]}" --machine pm-cpu --launcher-version slurm:x -n 1 -- ./a
finish
