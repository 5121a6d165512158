/* SPDX-License-Identifier: MIT */
/* Rendering a launch: program argv + tasks/cores/GPUs (+ placement, + memory
 * cap) -> the machine's launcher argv and an environment delta. Pure: the
 * launcher's capabilities come in as an argument. */
#ifndef BERTH_RENDER_H
#define BERTH_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "launcher.h"
#include "machine.h"
#include "placement.h"

struct launch_request {
    char *const *argv;     /* program argv, NULL-terminated */
    int ntasks;
    int cpus_per_task;     /* 0 when the caller gives none: no flag is
                              rendered (the launcher's default, one core) */
    int gpus_per_task;     /* unplaced launches only */
    const struct placement *placement;   /* NULL: unplaced */
    bool has_memory_cap;
    int64_t memory_cap;    /* MB per node, when has_memory_cap */
    bool single_process;   /* one process that is not MPI (a step of --cores):
                              a single_node machine runs it without an MPI
                              launcher (placed: under taskset alone) */
};

struct env_set_item {
    char *name;
    char *value;
};

struct launch {
    char **argv;            /* NULL-terminated */
    int argc;
    char **env_unset;       /* variables to remove before running argv */
    int n_unset;
    struct env_set_item *env_set;
    int n_set;
};

/* alloc_nodes: nodes of the allocation the launch happens in (>= 1).
 * Errors use the code "render" and say what is wrong with which figures. */
int render_launch (const struct machine_parallel *par, int alloc_nodes,
                   const struct launcher_caps *caps,
                   const struct launch_request *req, struct launch *out,
                   berth_error_t *err);

void launch_free (struct launch *l);   /* frees contents, not l */

/* Append name=value (both copied) to env, which holds *n; -1 when out of
 * memory (env as it was). */
int env_set_append (struct env_set_item **env, int *n, const char *name,
                    const char *value);
void env_set_free (struct env_set_item *env, int n);

/* ids comma separated, in their order ("2,0,1"; "" for none), as BERTH_GPUS
 * and visible-devices variables take them; NULL when out of memory. */
char *render_id_list (const int *ids, int n);

/* The BERTH_* variables of a lease, appended to env
 * in this order: BERTH_LEASE (its name), BERTH_NODES (the nodes, comma
 * separated), BERTH_CORES (the first node's cores as an id set; empty with
 * no node), BERTH_GPUS (the GPU ids, comma separated), BERTH_MEMORY_MB when
 * memory_mb >= 0, and gpu_var (a vendor's visible-devices variable) with the
 * same GPUs when it is not NULL. The one recipe for berthd's "env" and the
 * figures libberth derives. -1 when out of memory (what was appended stays
 * for the caller to free). */
int render_lease_env (const struct placement *p, const char *lease,
                      long long memory_mb, const char *gpu_var,
                      struct env_set_item **env, int *n);

/* Shell-quote argv on one line for people (POSIX single quotes where needed). */
char *render_shell_quote (char *const *argv);

#endif
