/* SPDX-License-Identifier: MIT */
/* Choosing the partition / qos / queue, constraint, node count and wall time
 * for a job of N nodes on a machine. Pure logic. */
#ifndef BERTH_RESOLVE_H
#define BERTH_RESOLVE_H

#include <stdbool.h>


#include "error.h"
#include "targets.h"

enum adjustment {
    ADJUST_EXACT,
    ADJUST_DECREASE,
    ADJUST_INCREASE,
};

/* "exact", "decrease" or "increase". */
const char *adjustment_name (enum adjustment a);

/* True when text asks for nothing: NULL, empty, blank, or <<<placeholder>>>. */
bool resolve_no_request (const char *text);

/* The result on one axis. */
struct axis_resolution {
    const struct target *target; /* borrowed; NULL when the axis has none */
    int nodes;                   /* effective node count */
    enum adjustment adjustment;  /* nodes against the count asked for */
    bool honored;
    char *reason;                /* why the request was denied, else NULL */
};

/* Resolve one axis for `nodes` (min_nodes_allowed and nodes positive).
 * `request` is a target name or no request (resolve_no_request);
 * `desired_seconds` is the wall time wanted, -1 for none. A denied request
 * gives the default resolution with honored false and a reason. Errors:
 * non-positive counts, or no target of the axis keeps min_nodes_allowed
 * nodes. */
int resolve_submission (const struct target_axis *axis, int nodes,
                        int min_nodes_allowed, const char *request,
                        long long desired_seconds,
                        struct axis_resolution *out, berth_error_t *err);

void axis_resolution_clear (struct axis_resolution *r);

/* What a job asks for. Text fields may be NULL or no request. */
struct resolve_request {
    int nodes;                  /* positive */
    int min_nodes_allowed;      /* positive */
    const char *partition;      /* Slurm */
    const char *qos;            /* Slurm */
    const char *queue;          /* PBS */
    const char *constraint;
    const char *scheduler_target;
    const char *wall_time;      /* desired, any form wallclock_read takes
                                 * (a bare number as the machine's
                                 * scheduler reads it) */
    const char *account;        /* instead of the machine's default */
};

/* One thing the answer has other than as asked: a request denied (the
 * default taken instead), a request on an axis the machine does not use
 * (dropped), a node count clamped into a target's range, a wall time capped
 * at a limit. Numbers are -1 where the field has none. */
struct resolve_change {
    char *field;                /* "nodes", "wall_time", "partition", "qos",
                                 * "queue", "constraint", "scheduler_target" */
    char *kind;                 /* "denied", "dropped", "raised", "lowered",
                                 * "capped" */
    char *from;                 /* as asked */
    char *to;                   /* as answered ("" when dropped) */
    long long from_n, to_n;     /* nodes, or seconds of a wall time */
    char *why;
};

/* The answer. Strings are owned and never NULL except reason; "" where the
 * machine has nothing to say (no target on an axis, no limit, no wall time). */
struct resolution {
    char *scheduler;            /* the machine's system ("slurm", "pbs", ...) */
    bool pbs;                   /* which field set applies */
    char *partition;            /* Slurm */
    char *qos;                  /* Slurm */
    char *queue;                /* PBS */
    char *constraint;
    char *gpus_per_node;
    char *max_wallclock;
    char *filesystems;          /* PBS: the list joined with ':' */
    int requested_nodes;
    int effective_nodes;
    enum adjustment adjustment;
    long long max_wallclock_s;  /* -1: no limit */
    char *max_wallclock_from;   /* which limit: "qos regular at 4 nodes";
                                 * "" when none */
    char *wall_time;            /* desired capped at max_wallclock; the limit
                                 * itself when none was asked for; "" when
                                 * neither */
    long long wall_time_s;      /* -1 with "" */
    char *wall_time_from;       /* "requested", "capped at <limit>",
                                 * "<limit>: no wall time asked for", "" */
    char *requested_wall_time;  /* as given, "" when none */
    char *account;              /* --account, else the machine's; "" none */
    char *account_from;         /* "--account", "machine default", "" */
    int gpus;                   /* gpus_per_node as a number */
    bool honored;               /* every part of the request was honored */
    char *reason;               /* denials joined with "; ", or NULL */
    struct resolve_change *changes;
    int nchanges;
};

/* One change for people: "wall_time 100:00:00 -> 48:00:00 (capped: qos
 * regular allows at most 48:00:00 on 4 nodes)". Caller frees; NULL when out
 * of memory. */
char *resolve_change_text (const struct resolve_change *c);

/* Resolve a whole request on a machine: the Slurm scheme (partition, qos,
 * constraint) unless the system is pbs (queue, constraint, filesystems).
 * Every change from the request is listed in out->changes. A wall time in
 * none of the schedulers' forms is an error naming the forms. On error *out
 * is left cleared. */
int resolve_job (const struct machine_targets *t,
                 const struct resolve_request *req, struct resolution *out,
                 berth_error_t *err);

void resolution_clear (struct resolution *r);

/* Job-script header: a comment line saying where the time came from and one
 * per change, then #SBATCH or #PBS lines (each ending in '\n') for the
 * account, partition or queue, qos, constraint, nodes and time. Caller
 * frees; NULL when out of memory. */
char *resolution_script (const struct resolution *r);

#endif
