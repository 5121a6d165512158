/* SPDX-License-Identifier: MIT */
/* What a step that srun launched needs once srun has ended, before its
 * lease may end: Slurm's own release of the step. Called by the step's
 * supervisor (berth run's, berth supervise) after the step tree is empty;
 * does nothing for any other launcher. */
#ifndef BERTH_SRUN_AFTER_H
#define BERTH_SRUN_AFTER_H

#include <stdbool.h>
#include <sys/types.h>

/* argv: the step's command (srun is argv[0]'s basename), pid: its first
 * process, status: that process's wait status (died: false when it was
 * never reaped), nnodes: the lease's nodes (0: unknown, taken as one).
 *
 * When srun died by a signal (killed from outside, or by the SIGKILL after
 * the grace) Slurm still runs the step it started: that step is found by
 * srun's host and pid in the controller's list, cancelled with scancel,
 * and waited for until Slurm has let go of it (at most 60 s; said on
 * stderr after "prefix: "). Then, for any srun step, the settle: srun can
 * return a few ms before the controller frees the step (cmd_run.c's
 * measurements), so 25 ms (250 ms for several nodes; BERTH_SRUN_SETTLE_MS
 * overrides). Returns the milliseconds this took. */
long srun_after (char *const *argv, pid_t pid, bool died, int status, int nnodes,
                 const char *prefix);

#endif
