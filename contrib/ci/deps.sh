#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages the build and the tests need (as root).
# Does nothing when everything is already installed. The two MPIs (Open MPI
# 4.1 through PMIx, MPICH 4.0 through PMI-2) build tests/mpi/mpi_report.c,
# which tests/slurm/mpi.sh launches through berth run.
set -euo pipefail
pkgs=(build-essential clang meson ninja-build pkg-config python3
      libevent-dev libjansson-dev libjsmn-dev libsystemd-dev check
      systemd tmux parallel valgrind strace
      python3-venv python3-mypy
      slurmctld slurmd slurm-client munge slurm-wlm-torque
      openmpi-bin libopenmpi-dev mpich libmpich-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
