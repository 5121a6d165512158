/* SPDX-License-Identifier: MIT */
/* Placements: checking their shape and splitting each node's cores among
 * the tasks of a launch. */
#include <stdlib.h>
#include <string.h>

#include "placement.h"

/* Index of the first repeated value in v[0..n), -1 when none (n is small:
 * quadratic is fine). */
static int find_repeat (const int *v, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (v[i] == v[j])
                return i;
    return -1;
}

const char *placement_node_label (const struct placement *p, int i)
{
    const char *name = p && i >= 0 && i < p->nnodes ? p->nodes[i].name : NULL;
    return name ? name : "(the launcher's node)";
}

/* One node's own GPU ids: non-negative, unique. */
static int check_node_gpu_ids (const struct placement *p, int i, berth_error_t *err)
{
    const struct placement_node *n = &p->nodes[i];
    const char *name = placement_node_label (p, i);
    if (n->ngpu_ids < 0 || (n->ngpu_ids > 0 && !n->gpu_ids))
        return errprintf_code (err, "placement",
                               "placement node %s: its GPU id list is missing", name);
    for (int j = 0; j < n->ngpu_ids; j++)
        if (n->gpu_ids[j] < 0)
            return errprintf_code (err, "placement",
                                   "placement node %s: GPU id %d is negative", name,
                                   n->gpu_ids[j]);
    int r = find_repeat (n->gpu_ids, n->ngpu_ids);
    if (r >= 0)
        return errprintf_code (err, "placement",
                               "placement node %s lists GPU id %d twice", name,
                               n->gpu_ids[r]);
    return 0;
}

int placement_validate (const struct placement *p, berth_error_t *err)
{
    if (!p || p->nnodes < 1 || !p->nodes)
        return errprintf_code (err, "placement", "a placement needs at least one node");
    for (int i = 0; i < p->nnodes; i++) {
        const struct placement_node *n = &p->nodes[i];
        const char *name = placement_node_label (p, i);
        /* no name: "here, on whichever node the launcher uses", one node */
        if ((!n->name && p->nnodes > 1) || (n->name && !n->name[0]))
            return errprintf_code (err, "placement",
                                   "placement node %d has no name: only a placement "
                                   "of one node may leave its node unnamed (it has "
                                   "%d)", i, p->nnodes);
        for (int j = 0; j < i; j++)
            if (strcmp (p->nodes[j].name, n->name) == 0)
                return errprintf_code (err, "placement",
                                       "placement names node %s twice", n->name);
        if (n->ncores < 1 || !n->cores)
            return errprintf_code (err, "placement",
                                   "placement node %s has no cores", name);
        for (int j = 0; j < n->ncores; j++)
            if (n->cores[j] < 0)
                return errprintf_code (err, "placement",
                                       "placement node %s: core id %d is negative",
                                       name, n->cores[j]);
        int r = find_repeat (n->cores, n->ncores);
        if (r >= 0)
            return errprintf_code (err, "placement",
                                   "placement node %s lists core %d twice",
                                   name, n->cores[r]);
        if (!p->node_gpu_ids && (n->gpu_ids || n->ngpu_ids))
            return errprintf_code (err, "placement",
                                   "placement node %s has GPU ids of its own but the "
                                   "placement does not say its ids are per node",
                                   name);
    }
    if (p->gpus < 0)
        return errprintf_code (err, "placement",
                               "placement GPUs %d is negative", p->gpus);
    if (p->node_gpu_ids) {
        if (p->gpu_ids || p->ngpu_ids)
            return errprintf_code (err, "placement",
                                   "placement gives GPU ids both per node and for "
                                   "every node; give one of them");
        long total = 0;
        for (int i = 0; i < p->nnodes; i++) {
            if (check_node_gpu_ids (p, i, err) < 0)
                return -1;
            total += p->nodes[i].ngpu_ids;
        }
        if (total != p->gpus)
            return errprintf_code (err, "placement",
                                   "placement has %d GPUs but its nodes' GPU id lists "
                                   "hold %ld ids; give one id per GPU", p->gpus, total);
    }
    else if (p->gpu_ids || p->ngpu_ids) {
        /* gpus is the launch's total; gpu_ids are the indices on a node, the
         * same on every node of a spanning placement (a prefix of them where
         * a node holds fewer): on one node exactly gpus of them. */
        if (p->ngpu_ids > p->gpus || (long) p->ngpu_ids * p->nnodes < p->gpus
            || (p->ngpu_ids > 0 && !p->gpu_ids)) {
            if (p->nnodes == 1)
                return errprintf_code (err, "placement",
                                       "placement has %d GPUs but %d GPU ids; give "
                                       "one id per GPU", p->gpus, p->ngpu_ids);
            return errprintf_code (err, "placement",
                                   "placement has %d GPUs on %d nodes but %d GPU "
                                   "ids; give the ids of the GPUs on each node "
                                   "(from %d to %d of them)", p->gpus, p->nnodes,
                                   p->ngpu_ids, (p->gpus + p->nnodes - 1) / p->nnodes,
                                   p->gpus);
        }
        for (int i = 0; i < p->ngpu_ids; i++)
            if (p->gpu_ids[i] < 0)
                return errprintf_code (err, "placement",
                                       "placement GPU id %d is negative",
                                       p->gpu_ids[i]);
        int r = find_repeat (p->gpu_ids, p->ngpu_ids);
        if (r >= 0)
            return errprintf_code (err, "placement",
                                   "placement lists GPU id %d twice", p->gpu_ids[r]);
    }
    return 0;
}

const int *placement_node_gpus (const struct placement *p, int i, int *n)
{
    const int *ids = p->node_gpu_ids ? p->nodes[i].gpu_ids : p->gpu_ids;
    *n = p->node_gpu_ids ? p->nodes[i].ngpu_ids : p->ngpu_ids;
    if (!ids)
        *n = 0;
    return ids;
}

bool placement_gpu_ids_uniform (const struct placement *p)
{
    int n0, n;
    const int *a = placement_node_gpus (p, 0, &n0);
    for (int i = 1; i < p->nnodes; i++) {
        const int *b = placement_node_gpus (p, i, &n);
        if (n != n0 || (n && memcmp (a, b, (size_t)n * sizeof (int)) != 0))
            return false;
    }
    return true;
}

int placement_split_cores (const struct placement *p, int ntasks,
                           int cpus_per_task, enum split_layout layout,
                           int ***task_cores, int *per_task, int **task_node,
                           berth_error_t *err)
{
    if (!p || p->nnodes < 1)
        return errprintf_code (err, "placement", "a placement needs at least one node");
    if (ntasks < 1)
        return errprintf_code (err, "placement",
                               "cannot split cores among %d tasks", ntasks);
    if (cpus_per_task < 0)
        return errprintf_code (err, "placement",
                               "cpus per task %d is negative", cpus_per_task);
    int per = cpus_per_task > 0 ? cpus_per_task : 1;
    int tpn = ntasks / p->nnodes + (ntasks % p->nnodes != 0);

    /* tasks on node i: block fill takes tpn while any are left; balanced
     * gives the remainder one each to the first nodes */
    int *count = calloc ((size_t)p->nnodes, sizeof (int));
    if (!count)
        return errprintf_code (err, "placement", "out of memory splitting cores");
    for (int i = 0, left = ntasks; i < p->nnodes; i++) {
        int here = layout == SPLIT_BLOCK ? (left < tpn ? left : tpn)
                   : layout == SPLIT_BY_CORES ? p->nodes[i].ncores / per
                   : ntasks / p->nnodes + (i < ntasks % p->nnodes);
        count[i] = here;
        left -= here;
        if ((long)here * per > p->nodes[i].ncores) {
            free (count);
            return errprintf_code (err, "placement",
                                   "placement node %s has %d cores, too few for "
                                   "%d tasks x %d cpus per task = %ld",
                                   placement_node_label (p, i), p->nodes[i].ncores, here, per,
                                   (long)here * per);
        }
    }
    if (layout == SPLIT_BY_CORES) {
        long held = 0;
        for (int i = 0; i < p->nnodes; i++)
            held += count[i];
        if (held != ntasks) {
            free (count);
            return errprintf_code (err, "placement",
                                   "the placement's %d nodes hold %ld tasks of "
                                   "%d cpus, not the %d asked", p->nnodes, held,
                                   per, ntasks);
        }
    }
    int **tc = malloc ((size_t)ntasks * sizeof (*tc));
    int *ids = malloc ((size_t)ntasks * (size_t)per * sizeof (int));
    int *tn = malloc ((size_t)ntasks * sizeof (int));
    if (!tc || !ids || !tn) {
        free (tc);
        free (ids);
        free (tn);
        free (count);
        return errprintf_code (err, "placement", "out of memory splitting cores");
    }
    for (int t = 0, node = 0, local = 0; t < ntasks; t++, local++) {
        while (local >= count[node]) {
            node++;
            local = 0;
        }
        tc[t] = ids + (size_t)t * (size_t)per;
        memcpy (tc[t], p->nodes[node].cores + (size_t)local * (size_t)per,
                (size_t)per * sizeof (int));
        tn[t] = node;
    }
    free (count);
    *task_cores = tc;
    *per_task = per;
    *task_node = tn;
    return 0;
}

bool placement_uneven_tasks (const struct placement *p, int ntasks,
                             int cpus_per_task)
{
    int per = cpus_per_task > 0 ? cpus_per_task : 1;
    if (!p || p->nnodes < 2)
        return false;
    long held = 0;
    bool differ = false;
    for (int i = 0; i < p->nnodes; i++) {
        held += p->nodes[i].ncores / per;
        differ |= p->nodes[i].ncores / per != p->nodes[0].ncores / per;
    }
    return differ && held == ntasks;
}

void placement_free (struct placement *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nnodes && p->nodes; i++) {
        free (p->nodes[i].name);
        free (p->nodes[i].cores);
        free (p->nodes[i].gpu_ids);
    }
    free (p->nodes);
    free (p->gpu_ids);
    memset (p, 0, sizeof (*p));
}
