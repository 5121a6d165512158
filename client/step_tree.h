/* SPDX-License-Identifier: MIT */
/* A step as a tree of processes, supervised by the process that started it.
 *
 * The supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER): every
 * process the step makes, also one that left the step's process group or
 * session (setsid, double forks), stays below it, since orphans are
 * reparented to it. The tree is therefore empty exactly when the
 * supervisor has no child left, and it is found for signalling by walking
 * /proc's PPid links down from the supervisor. A cgroup would also catch a
 * process that reparents itself above the supervisor (none can, short of
 * ptrace) but needs a delegated subtree that compute nodes rarely give a
 * user; this needs nothing and costs nothing on a step that ends by itself.
 *
 * Stopping is a sequence: a stopping signal (SIGINT, SIGTERM, SIGHUP) is
 * passed to every process of the tree; after the grace whatever still runs
 * gets SIGKILL; the supervisor returns only once no process of the tree
 * runs. A second stopping signal ends the grace at once. When the step's
 * first process ends by itself, what it left running gets SIGTERM and the
 * same grace.
 *
 * The supervisor must be a process of its own (being a subreaper, waiting
 * for any child, and the signal mask are process-wide). */
#ifndef BERTH_STEP_TREE_H
#define BERTH_STEP_TREE_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "error.h"

#define STEP_TREE_GRACE_DEFAULT 10.0   /* seconds; Slurm's KillWait is 30 */

struct step_tree {
    pid_t main;            /* the step's first process */
    bool main_done;
    int main_status;       /* its waitpid status, once main_done */
    int stop_sig;          /* the first stopping signal received, 0: none */
    bool killed;           /* the grace ran out: SIGKILL was sent */
    bool limited;          /* stopped by the time limit */
    struct rusage usage;   /* of the whole tree, once step_tree_wait returned */
};

/* The grace: text (a --grace value, else BERTH_STOP_GRACE, else the
 * default) as seconds, 0 to 86400. */
int step_tree_grace (const char *text, double *grace, berth_error_t *err);

/* Make the calling process the supervisor and start argv in the tree:
 * bound to cpus when not NULL, with signal mask child_mask (the caller
 * blocks the signals it waits for before calling, and passes the mask to
 * restore in the step). Blocks SIGCHLD in the caller. Exec failures exit
 * the child 126 (cannot run) or 127 (not found), said on stderr after
 * "prefix: ". Returns the first process's pid, or -1 with err. */
pid_t step_tree_start (struct step_tree *t, char *const *argv, const cpu_set_t *cpus,
                       const sigset_t *child_mask, const char *prefix,
                       berth_error_t *err);

/* Send sig to every process below the caller, except those in process
 * group skip_pgrp (0: none). Returns how many were signalled. */
int step_tree_signal (int sig, pid_t skip_pgrp);

/* Wait until no process of the tree runs, acting on the signals in
 * watched (blocked by the caller): the stopping ones start or shorten the
 * stop sequence, the others are passed on to the tree. A signal from the
 * terminal (SI_KERNEL) already reached the step's foreground process
 * group, so it is passed only to processes outside the caller's group.
 * Returns the exit status to report: the first process's (128+N when it
 * died by signal N, also of the stopping signal or the SIGKILL after the
 * grace). time_limit (seconds from the call, 0: none) starts the stop
 * sequence with SIGTERM when it passes (t->limited is set). */
int step_tree_wait (struct step_tree *t, const sigset_t *watched, double grace,
                    double time_limit);

#endif
