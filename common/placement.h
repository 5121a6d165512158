/* SPDX-License-Identifier: MIT */
/* A placement: which nodes, which core ids on each node, and how many GPUs
 * (with their indices when the caller knows them). */
#ifndef BERTH_PLACEMENT_H
#define BERTH_PLACEMENT_H

#include <stdbool.h>

#include "error.h"

struct placement_node {
    char *name;      /* NULL: whichever node the launcher uses (a placement
                        of one node only) */
    int *cores;      /* in the order given: tasks take them in this order */
    int ncores;
    int *gpu_ids;    /* this node's own GPU ids, or NULL: the placement's */
    int ngpu_ids;
};

struct placement {
    struct placement_node *nodes;
    int nnodes;
    int gpus;        /* total for the launch */
    int *gpu_ids;    /* NULL, or the unique indices used on each node (on
                        one node exactly `gpus`; a spanning placement holds
                        the same ids, or a prefix, on every node) */
    int ngpu_ids;
    bool node_gpu_ids;   /* the ids are per node (placement_node.gpu_ids,
                            all of them given, summing to gpus), not gpu_ids */
};

/* Nodes unique and non-empty names (or one node with no name); one non-empty
 * core set per node with non-negative ids unique within the node (the same id
 * on two nodes is fine); gpus >= 0; gpu_ids unique, non-negative, and when
 * given as many as gpus on one node, or on n nodes from ceil(gpus / n) to gpus
 * of them; per-node ids unique within each node and gpus of them in all. */
int placement_validate (const struct placement *p, berth_error_t *err);

/* Node i's name for people: its name, or "(the launcher's node)". */
const char *placement_node_label (const struct placement *p, int i);

/* The GPU ids used on node i (its own, else the placement's; NULL with *n 0
 * when there are none or they are not known). */
const int *placement_node_gpus (const struct placement *p, int i, int *n);

/* True when every node uses the same GPU id list (always on one node). */
bool placement_gpu_ids_uniform (const struct placement *p);

/* How tasks are spread over the placement's nodes. */
enum split_layout {
    /* tasks per node = ceil(ntasks / nnodes), nodes filled in order (PALS
     * --ppn, and the brief's rendering rule) */
    SPLIT_BLOCK,
    /* as srun spreads -n over -N: the first ntasks % nnodes nodes take one
     * task more (800 on 13 nodes: 7 x 62 + 6 x 61) */
    SPLIT_BALANCED,
    /* each node runs as many tasks as its cores hold (ncores / cpus per
     * task), in order; the counts must add up to ntasks (srun -m arbitrary
     * with each task's node named) */
    SPLIT_BY_CORES,
};

/* True when the nodes' cores hold whole tasks adding up to ntasks, in
 * counts that differ between nodes: a launch that names each task's node. */
bool placement_uneven_tasks (const struct placement *p, int ntasks,
                             int cpus_per_task);

/* Split a node's cores among its tasks, spread over nodes as layout says;
 * each task takes the next
 * max(cpus_per_task,1) ids of its node's list. On success *task_cores is an
 * array of ntasks pointers into one allocation (free task_cores[0] then
 * task_cores), each of *per_task ids; task_node[i] is the node index of task i
 * (array of ntasks, caller frees). Errors name the node, its core count, and
 * tasks x cpus per task needed. */
int placement_split_cores (const struct placement *p, int ntasks,
                           int cpus_per_task, enum split_layout layout,
                           int ***task_cores,
                           int *per_task, int **task_node,
                           berth_error_t *err);

void placement_free (struct placement *p);   /* frees contents, not p */

#endif
