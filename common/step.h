/* SPDX-License-Identifier: MIT */
/* What one step asks for, and how it is cut to fit once against
 * the whole empty allocation. Pure logic. */
#ifndef BERTH_STEP_H
#define BERTH_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define STEP_UNSET (-1)

struct step_request {
    char *label;              /* may be NULL */
    /* MPI step: ntasks x cpus_per_task (ntasks > 0). Non-MPI: cores. */
    int ntasks, min_tasks;    /* STEP_UNSET when not given */
    int cpus_per_task, min_cpus_per_task;
    int cores, min_cores;
    int gpus, min_gpus;       /* totals for the step */
    int gpus_per_task, min_gpus_per_task;   /* deprecated, converted */
    int64_t memory, min_memory;             /* MB, STEP_UNSET when not given */
    int may_span_nodes;       /* STEP_UNSET: default (ntasks > 1); 0; 1 */
    bool local;               /* run on the daemon's own node, not launched */
    int priority;             /* higher first; default 0 */
    double timeout;           /* wait timeout in seconds; < 0: none */
    char **argv;              /* program argv (NULL-terminated) or NULL */
};

void step_request_init (struct step_request *r);      /* everything unset */
void step_request_free (struct step_request *r);      /* frees contents */

/* What the step is cut against: the whole empty allocation. */
struct step_capacity {
    int nodes;                /* >= 1 */
    int cores_per_node;       /* usable cores on each node, >= 1 */
    int gpus_per_node;        /* >= 0 */
    int64_t memory_per_node;  /* MB; -1: unknown (memory not accounted) */
    bool mpi_allowed;         /* false on a login node */
};

/* The step's final shape, decided once. An MPI step is ntasks ranks of
 * cpus_per_task cores; a non-MPI step is one process (ntasks 1) whose cores
 * may still be spread over nodes when may_span is set. */
struct step_shape {
    bool mpi;                 /* ntasks was given */
    int ntasks;               /* ranks; 1 for a non-MPI step */
    int cpus_per_task;        /* cores per rank; = cores for a non-MPI step */
    int cores;                /* ntasks x cpus_per_task */
    int gpus;                 /* total for the step */
    int64_t memory;           /* declared cap (MB) or -1 */
    int64_t budget;           /* MB accounted; -1: unknown */
    bool may_span;
    bool local;
};

/* Cut a request to fit the whole empty allocation:
 * validate it, reduce targets towards the minimums once, convert the
 * deprecated gpus_per_task (warning written to warn, "" when none; warn may
 * be NULL), derive the memory budget. Errors name the step's label, what it
 * needs and what the allocation (or one node) holds. *out is untouched on
 * error. */
int step_cut_to_fit (const struct step_request *req,
                     const struct step_capacity *cap, struct step_shape *out,
                     char *warn, size_t warnsize, berth_error_t *err);

/* "256 cores (128 x 2) on up to 2 nodes, 1 GPU, 8000 MB" style summary. */
int step_shape_describe (const struct step_shape *s, char *buf, size_t size);

#endif
