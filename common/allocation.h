/* SPDX-License-Identifier: MIT */
/* The batch allocation the tools run in: which system,
 * whether it is alive, and what it holds: the data only. Discovery, the only
 * code that talks to the scheduler, is sys/allocation_discover.h (berthsys);
 * the JSON view is protocol/allocation_json.h. */
#ifndef BERTH_ALLOCATION_H
#define BERTH_ALLOCATION_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "machine.h"

struct allocation_node {
    char *name;
    int *core_ids;                /* usable core ids, ascending */
    int ncores;
    int gpus;                     /* GPU indices 0..gpus-1 */
    int64_t memory_configured_mb; /* memory_per_node; -1 unknown */
    int64_t memory_credited_mb;   /* what to account with; -1 unknown */
};

struct allocation {
    char *machine;              /* machine name given to discover, or NULL */
    enum berth_system system;   /* after any fallback to login */
    char *job_id;               /* NULL outside a job */
    /* "local proof: SLURMD_NODENAME", "local proof: host in node list",
     * "local proof: cgroup job_<id>", "one query", or "none" (not checked:
     * PBS, single_node, login). */
    char *liveness;
    struct allocation_node *nodes;
    int nnodes;
    int local_node;             /* index of this process's node; -1: none */
    bool mpi_allowed;
    char **warnings;            /* one line each, for stderr */
    int nwarnings;
};

void allocation_destroy (struct allocation *a);

#endif
