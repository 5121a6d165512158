/* A placement: which nodes, which core ids on each node, and how many GPUs
 * (with their indices when the caller knows them). */
#ifndef BERTH_PLACEMENT_H
#define BERTH_PLACEMENT_H

#include "error.h"

struct placement_node {
    char *name;
    int *cores;      /* in the order given: tasks take them in this order */
    int ncores;
};

struct placement {
    struct placement_node *nodes;
    int nnodes;
    int gpus;        /* total for the launch */
    int *gpu_ids;    /* NULL, or the unique indices used on each node (on
                        one node exactly `gpus`; a spanning placement holds
                        the same ids, or a prefix, on every node) */
    int ngpu_ids;
};

/* Nodes unique and non-empty names; one non-empty core set per node with
 * non-negative ids unique within the node (the same id on two nodes is fine);
 * gpus >= 0; gpu_ids unique, non-negative, and when given as many as gpus on
 * one node, or on n nodes from ceil(gpus / n) to gpus of them. */
int placement_validate (const struct placement *p, berth_error_t *err);

/* How tasks are spread over the placement's nodes. */
enum split_layout {
    /* tasks per node = ceil(ntasks / nnodes), nodes filled in order (PALS
     * --ppn, and the brief's rendering rule) */
    SPLIT_BLOCK,
    /* as srun spreads -n over -N: the first ntasks % nnodes nodes take one
     * task more (800 on 13 nodes: 7 x 62 + 6 x 61) */
    SPLIT_BALANCED,
};

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
