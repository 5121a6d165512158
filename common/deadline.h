/* SPDX-License-Identifier: MIT */
/* When the allocation ends, and whether a step that states how long it runs
 * can finish before then. The scheduler's own words are parsed here (pure);
 * sys/deadline_query.c asks for them. */
#ifndef BERTH_DEADLINE_H
#define BERTH_DEADLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "machine.h"

/* What berthd does with a request whose duration runs past the end. */
enum deadline_policy { DEADLINE_REFUSE, DEADLINE_WARN };

const char *deadline_policy_name (enum deadline_policy p);
int deadline_policy_parse (const char *text, enum deadline_policy *p,
                           berth_error_t *err);

/* SLURM_JOB_END_TIME (Slurm 23.02 and later set it in batch jobs): whole Unix
 * seconds. Returns 0, or -1 when the text is not a positive integer. */
int deadline_parse_epoch (const char *text, double *end);

/* The first line of `squeue -h -j ID -o %e` with SLURM_TIME_FORMAT=standard:
 * "2025-08-01T14:00:00", local time. "N/A", "Unknown", "NONE" (no limit) and
 * anything else that is not such a time are an error naming the text. */
int deadline_parse_squeue (const char *text, double *end, berth_error_t *err);

/* `qstat -f ID` (PBS): the start time `stime = Mon Aug  5 10:00:00 2024`
 * (local time) plus `Resource_List.walltime = HH:MM:SS`. An error names what
 * is missing (a job that has not started has no stime). */
int deadline_parse_qstat (const char *text, double *end, berth_error_t *err);

/* Whether a step of `duration` seconds started at `now` ends by `end`.
 * 0: it does (or the end is unknown: end < 0); 1: it does not, and msg says
 * by how much in words a person can act on. */
int deadline_check (double now, double end, double duration, const char *label,
                    char *msg, size_t size);

/* Where the end was learnt, for status: "SLURM_JOB_END_TIME", "squeue",
 * "qstat". */
struct deadline_source {
    char name[32];
};

/* Learning the end (the environment, the scheduler): sys/deadline_query.h. */

#endif
