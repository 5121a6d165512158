/* Choosing the partition / qos / queue, constraint, node count and wall time
 * for a job of N nodes on a machine (30-scheduler-targets.md). Pure logic. */
#ifndef BERTH_RESOLVE_H
#define BERTH_RESOLVE_H

#include <stdbool.h>

#include <jansson.h>

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
 * `desired_wall_time` may be NULL. A denied request gives the default
 * resolution with honored false and a reason. Errors: non-positive counts, or
 * no target of the axis keeps min_nodes_allowed nodes. */
int resolve_submission (const struct target_axis *axis, int nodes,
                        int min_nodes_allowed, const char *request,
                        const char *desired_wall_time,
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
    const char *wall_time;      /* desired, HH:MM:SS */
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
    char *wall_time;            /* desired capped at max_wallclock */
    bool honored;               /* every part of the request was honored */
    char *reason;               /* denials joined with "; ", or NULL */
};

/* Resolve a whole request on a machine: the Slurm scheme (partition, qos,
 * constraint) unless the system is pbs (queue, constraint, filesystems).
 * On error *out is left cleared. */
int resolve_job (const struct machine_targets *t,
                 const struct resolve_request *req, struct resolution *out,
                 berth_error_t *err);

void resolution_clear (struct resolution *r);

/* Every field of the resolution; the field set depends on the scheduler. */
json_t *resolution_to_json (const struct resolution *r);

/* Job-script header lines (#SBATCH or #PBS, each ending in '\n') for the
 * account, partition or queue, qos, constraint, nodes and time (the wall time,
 * else the limit). Caller frees; NULL when out of memory. */
char *resolution_script (const struct resolution *r,
                         const struct machine_targets *t);

#endif
