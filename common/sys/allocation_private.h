/* SPDX-License-Identifier: MIT */
/* Shared by the parts of allocation discovery (berthsys, not a public API):
 * allocation_discover.c (the whole, and the node table), allocation_slurm.c,
 * allocation_pbs.c and allocation_evidence.c (this node's cores and memory). */
#ifndef BERTH_ALLOCATION_PRIVATE_H
#define BERTH_ALLOCATION_PRIVATE_H

#include <stdbool.h>

#include "allocation_discover.h"

#define MAX_NODES 1000000

/* One discovery: what it reads and the allocation it fills. */
struct alloc_ctx {
    const struct machine_parallel *par;
    const char *machine; /* for messages */
    const struct allocation_env *env;
    char *const *envp;
    char host[256];      /* short host name */
    double timeout;
    bool oom;            /* a warning could not be stored */
    struct allocation *a;
};

/* A variable of the environment; empty counts as unset. */
const char *alloc_getvar (const struct alloc_ctx *c, const char *name);

/* Add a warning line to the allocation (c->oom when it cannot be stored). */
void alloc_warn (struct alloc_ctx *c, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* The index of host among names (short forms compared), -1: none. */
int alloc_find_host (char **names, int n, const char *host);

/* Names "<prefix>0".."<prefix>n-1" where the scheduler says how many nodes
 * but not which; NULL when out of memory. */
char **alloc_numbered_names (const char *prefix, int n);

/* Make the node table from names (taken over); counts and figures are
 * filled in later. */
int alloc_set_nodes (struct alloc_ctx *c, char **names, int n,
                     berth_error_t *err);

/* A node count 1..MAX_NODES, the whole of text; -1 otherwise. */
int alloc_parse_count (const char *text, int *n);

/* Run a scheduler query with the discovery's environment and timeout; its
 * stdout in *out (caller frees). */
int alloc_query (struct alloc_ctx *c, const char *const *argv, char **out,
                 berth_error_t *err);

/* This host alone: login_cores cores (never more than it has), login_gpus,
 * no memory figure, no MPI. */
int alloc_become_login (struct alloc_ctx *c, berth_error_t *err);

/* The Slurm job's liveness and nodes (allocation_slurm.c); the local node
 * index (-1: none) through *local. */
int alloc_discover_slurm (struct alloc_ctx *c, const char *job, int *local,
                          berth_error_t *err);

/* The PBS job's nodes (allocation_pbs.c), as alloc_discover_slurm. */
int alloc_discover_pbs (struct alloc_ctx *c, const char *job, int *local,
                        berth_error_t *err);

/* Usable core ids for every node from this node's topology, or 0..n-1 when
 * this process runs on none of the nodes (allocation_evidence.c). */
int alloc_assign_cores (struct alloc_ctx *c, int local, berth_error_t *err);

/* Credit nodes with what this node can really give (allocation_evidence.c). */
void alloc_credit_memory (struct alloc_ctx *c, int local);

#endif
