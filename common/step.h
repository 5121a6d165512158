/* What one step asks for (60-steps.md), and how it is cut to fit once against
 * the whole empty allocation. Pure logic. */
#ifndef BERTH_STEP_H
#define BERTH_STEP_H

#include <stdbool.h>
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

#endif
