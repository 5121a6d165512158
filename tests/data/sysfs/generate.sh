#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates the recorded CPU topologies (thread_siblings_list per id), in
# the formats the kernel writes. Run from this directory.
set -e
sib () { # tree id text
    d=$1/devices/system/cpu/cpu$2/topology
    mkdir -p "$d" && printf '%s\n' "$3" > "$d/thread_siblings_list"
}
smt2 () { # tree threads-per-half: sibling of n is n+half
    i=0; while [ $i -lt $2 ]; do
        sib "$1" $i "$i,$(($i + $2))"; sib "$1" $(($i + $2)) "$i,$(($i + $2))"
        i=$(($i + 1)); done
}
rm -rf perlmutter frontier aurora interleaved missing quad
smt2 perlmutter 128   # AMD EPYC 7763 x2: 128 cores, 256 ids
smt2 frontier 64      # AMD EPYC 7A53: 64 cores, 128 ids
smt2 aurora 104       # Xeon Max 9470 x2: 104 cores, 208 ids
for i in 0 2 4 6; do   # siblings enumerated next to each other
    sib interleaved $i "$i-$(($i + 1))"; sib interleaved $(($i + 1)) "$i-$(($i + 1))"
done
sib missing 0 0-1; sib missing 1 0-1; sib missing 2 2-3
mkdir -p missing/devices/system/cpu/cpu3/topology   # no siblings file
for i in 0 1 4 5; do sib quad $i 0-1,4-5; done      # 4 threads a core
for i in 2 3 6 7; do sib quad $i 2-3,6-7; done
