/* SPDX-License-Identifier: MIT */
/* Discovering the batch allocation: berthd does it once
 * at start; a CLI view may too. This is the only code that talks to the
 * scheduler, and it asks only when nothing local proves the allocation
 * live. */
#ifndef BERTH_ALLOCATION_DISCOVER_H
#define BERTH_ALLOCATION_DISCOVER_H

#include "allocation.h"

/* The edges discovery reads, injectable for tests. A NULL env, and every
 * NULL / zero field, means the real thing. */
struct allocation_env {
    char *const *envp;        /* variables read; also the environment (and
                               * PATH) of scheduler queries. NULL: environ */
    const char *hostname;     /* NULL: gethostname(); only the short form
                               * (up to the first dot) is used */
    const char *user;         /* for `squeue -u`; NULL: user_lookup's
                               * answer, else $USER, else the uid's number */
    const char *(*user_lookup) (void); /* the account database, asked only
                               * when a query needs the name (NULL: not
                               * asked; the static CLI links none) */
    const char *sysfs_root;   /* NULL: /sys */
    const char *proc_root;    /* NULL: /proc (self/cgroup, meminfo) */
    const char *cgroup_root;  /* NULL: /sys/fs/cgroup */
    const int *affinity_ids;  /* usable hardware threads; NULL:
                               * sched_getaffinity */
    int naffinity;
    double query_timeout_s;   /* each scheduler query; <= 0: 20 s */
    bool refuse_stale;        /* berthd: an allocation that is not live is an
                               * error, not a fall back to login */
};

/* Select the system from par->system and the environment, check that a Slurm
 * allocation is live, and find its nodes, usable core ids (from this node's
 * topology, applied to every node: on homogeneous machines the local node is
 * the best evidence; nodes get 0..n-1 when this process runs on none of
 * them), GPUs and memory (configured vs credited). machine_name (may be
 * NULL) is kept and used in messages. Error codes: "allocation_not_live" (only with refuse_stale;
 * berthd exits 3), "scheduler_unreachable" (berthd exits 4), "error". */
int allocation_discover (const struct machine_parallel *par,
                         const char *machine_name,
                         const struct allocation_env *env,
                         struct allocation **out, berth_error_t *err);

#endif
