/* SPDX-License-Identifier: MIT */
/* Which Slurm step an srun process started, read from the controller's own
 * list (`scontrol show step -o`, one step a line): the step records the
 * host and pid of its srun ("SrunHost:Pid=nid001:4242"), which stays there
 * after srun has died, so the step can be named exactly, never guessed
 * from its name or start time. Pure: the text is given. */
#ifndef BERTH_SRUN_STEPS_H
#define BERTH_SRUN_STEPS_H

#include <stdbool.h>
#include <stddef.h>

/* The step of text whose srun ran as pid on host: its "JOB.STEP" into id
 * (n bytes). Hosts match when equal, or equal up to the first '.' of
 * either (srun records the short name). Returns true when found. */
bool srun_step_find (const char *text, const char *host, long pid, char *id, size_t n);

/* Whether text, squeue's steps (`squeue -h -s -o %i`: a step id a line),
 * lists step id ("JOB.STEP"). */
bool srun_step_listed (const char *text, const char *id);

#endif
