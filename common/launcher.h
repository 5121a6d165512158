/* SPDX-License-Identifier: MIT */
/* What the installed launcher can do, which decides how placements and memory
 * caps are rendered. Detected at run time (never read from the config) once
 * per process (sys/launcher_detect.h), or given explicitly for previews and
 * tests. */
#ifndef BERTH_LAUNCHER_H
#define BERTH_LAUNCHER_H

#include <stdbool.h>

#include "error.h"
#include "machine.h"

enum placement_support {
    PLACEMENT_NONE,
    PLACEMENT_CPU_BINDING,
    PLACEMENT_SCHEDULER,
};

enum memcap_support {
    MEMCAP_NONE,
    MEMCAP_ENFORCED,
};

/* Which MPI a single_node machine's mpirun/mpiexec belongs to: the options
 * that give a rank its cores differ (Open MPI's -c is the process count). */
enum mpi_flavour {
    MPI_UNKNOWN,
    MPI_OPENMPI,
    MPI_MPICH,      /* MPICH's hydra (mpiexec.hydra, mpirun.mpich) */
};

struct launcher_caps {
    enum placement_support placement;
    enum memcap_support memcap;
    int slurm_major, slurm_minor, slurm_micro; /* -1 when not Slurm/unknown */
    bool pals;                                 /* PBS launcher is PALS */
    bool taskset;                              /* taskset on PATH */
    enum mpi_flavour mpi;                      /* single_node machines */
    char desc[64];                             /* "slurm 22.05.8", "pals", ... */
};

const char *placement_support_name (enum placement_support s); /* "NONE", ... */
const char *memcap_support_name (enum memcap_support s);

/* Caps implied by a Slurm version (placement and memcap per the brief's
 * table, with 20.11.0-20.11.2 treated as CPU_BINDING). */
void launcher_caps_from_slurm (int major, int minor, int micro,
                               struct launcher_caps *caps);

const char *mpi_flavour_name (enum mpi_flavour f);  /* "openmpi", "mpich", "unknown" */

/* caps that can do nothing (no placement, no memory cap, no Slurm version),
 * described as desc. */
void launcher_caps_none (struct launcher_caps *caps, const char *desc);

/* Parse a --launcher-version value: "slurm:25.11", "slurm:20.02",
 * "slurm:20.11.2", "pals", "taskset", "openmpi", "mpich", "none". The meaning
 * of "none" and "taskset" depends on the machine's system: for slurm "none"
 * means no srun. "openmpi" and "mpich" (single_node) are taskset with that
 * MPI's mpirun; "taskset" leaves the MPI unknown. */
int launcher_caps_parse (const char *spec, enum berth_system system,
                         struct launcher_caps *caps, berth_error_t *err);

/* Parse the first MAJOR.MINOR[.MICRO] out of `srun --version` output. */
int launcher_parse_srun_version (const char *text, int *major, int *minor,
                                 int *micro);

/* True when `<launcher> --version` output says PALS ("mpiexec version <digit>"). */
bool launcher_output_is_pals (const char *text);

/* The MPI that `mpirun --version` output names: "(Open MPI)" or "Open MPI"
 * for Open MPI, "HYDRA" or "MPICH" for MPICH; MPI_UNKNOWN otherwise. */
enum mpi_flavour launcher_output_mpi (const char *text);

#endif
