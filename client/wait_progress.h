/* SPDX-License-Identifier: MIT */
/* berth run's view of its request while it waits in berthd's queue: its
 * place, why it waits, when it could start, and a cut by --min-*. */
#ifndef BERTH_WAIT_PROGRESS_H
#define BERTH_WAIT_PROGRESS_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

/* Start the watcher for this process's request (socket NULL: the default);
 * it reports on stderr until stopped. asked_cores, asked_gpus: what the
 * request asked for, to tell a cut. Returns its pid, 0 when none started. */
pid_t wait_progress_start (const char *socket, int asked_cores, int asked_gpus);

/* Stop it (pid 0: nothing) and clear its line on a terminal. */
void wait_progress_stop (pid_t pid);

/* "cut by --min-* from 8 cores to 2" when berthd gave (or waits for) fewer
 * cores or GPUs than were asked for, else "". */
void wait_progress_cut (int cores, int gpus, int asked_cores, int asked_gpus,
                        char *buf, size_t size);

/* One line for a queue entry of berthd's status (nqueued entries in all). */
void wait_progress_line (const json_t *entry, int nqueued, int asked_cores,
                         int asked_gpus, char *buf, size_t size);

#endif
