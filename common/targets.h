/* SPDX-License-Identifier: MIT */
/* Scheduler targets of a machine: the partitions, qos and queues it lists,
 * each with its node range and wall-clock limit, plus the other options a
 * job-script header needs (account, constraints, filesystems). Read once from
 * the layered config; pure data afterwards. */
#ifndef BERTH_TARGETS_H
#define BERTH_TARGETS_H


#include "config.h"
#include "error.h"
#include "wallclock.h"

struct machine;

/* One entry of max_wallclock_bins: up to `bound` nodes, `clock` applies. */
struct target_bin {
    int bound;
    char *clock;             /* HH:MM:SS, whatever form the file used */
    long long seconds;
};

struct target {
    char *name;
    int min_nodes;           /* 0: unset */
    int max_nodes;           /* 0: unset */
    char *max_wallclock;     /* HH:MM:SS, whatever form the file used;
                              * NULL: unset (or bins used) */
    long long max_wallclock_s; /* the same in seconds; -1: unset */
    struct target_bin *bins; /* sorted by bound, ascending; NULL when none */
    int nbins;
};

struct target_axis {
    const char *name;        /* "partition", "qos" or "queue" */
    struct target *targets;  /* list order; the first is the default */
    int count;
};

struct machine_targets {
    char *system;            /* effective [parallel] system; NULL: unset */
    char *account;           /* NULL: unset */
    char *gpus_per_node;     /* text; "0" when unset */
    struct target_axis partition, qos, queue;
    char **constraints;      /* list order; the first is the default */
    int nconstraints;
    char **filesystems;
    int nfilesystems;
};

/* The defaults a job script uses when nothing is asked for: borrowed strings,
 * NULL when the machine has none. */
struct account_defaults {
    const char *account;
    const char *partition;
    const char *constraint;
    const char *qos;
};

/* Read the targets from the effective [parallel] options ([parallel] overlaid
 * with [parallel.<compiler>], compiler '-' read as '_'; compiler NULL means
 * [build] compiler, if any) and the [partition.X], [qos.X], [queue.X]
 * sections. Config errors name the section and option. */
int targets_load (struct config *cfg, const char *compiler,
                  struct machine_targets **out, berth_error_t *err);

/* The same for a loaded machine (its config and compiler). */
int targets_load_machine (struct machine *m, struct machine_targets **out,
                          berth_error_t *err);

void targets_destroy (struct machine_targets *t);

/* Parse a max_wallclock_bins value ("91: 02:00:00, 183: 06:00:00") into bins
 * sorted by bound; each clock in any form the scheduler takes
 * (wallclock_read, bare numbers as dialect d reads them), kept as HH:MM:SS.
 * `section` names the section in messages. */
int target_bins_parse (const char *section, const char *text,
                       enum wallclock_dialect d, struct target_bin **bins,
                       int *count, berth_error_t *err);

/* nodes clamped into the target's [min_nodes, max_nodes]. */
int target_clamp (const struct target *t, int nodes);

/* The target's wall-clock limit at `nodes` (bins: the first bound >= nodes,
 * above every bound the last), or NULL when it has none. */
const char *target_max_wallclock (const struct target *t, int nodes);

/* The same in seconds; -1 when it has none. */
long long target_max_seconds (const struct target *t, int nodes);

/* The target called `name` on the axis, or NULL. */
const struct target *target_axis_find (const struct target_axis *axis,
                                       const char *name);

/* The axis names joined with ", " (for messages); caller frees. */
char *target_axis_names (const struct target_axis *axis);

void targets_account_defaults (const struct machine_targets *t,
                               struct account_defaults *d);

#endif
