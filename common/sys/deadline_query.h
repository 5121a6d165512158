/* SPDX-License-Identifier: MIT */
/* The allocation's end learnt from outside (berthsys): the environment, or
 * one question to the scheduler. */
#ifndef BERTH_DEADLINE_QUERY_H
#define BERTH_DEADLINE_QUERY_H

#include "deadline.h"

/* The end time the environment states (envp NULL: environ), without asking
 * anyone. Returns 1 with *end set, 0 when it states none. */
int deadline_from_env (char *const *envp, double *end,
                       struct deadline_source *src);

/* Ask the scheduler once: `squeue -h -j JOB -o %e` (Slurm) or `qstat -f JOB`
 * (PBS), with envp's PATH (NULL: environ), for at most timeout_s seconds.
 * Other systems have no end: an error. */
int deadline_query (enum berth_system system, const char *job_id,
                    char *const *envp, double timeout_s, double *end,
                    struct deadline_source *src, berth_error_t *err);

#endif
