/* SPDX-License-Identifier: MIT */
/* This node's evidence for the allocation: usable cores from its topology
 * and the memory it can really give. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocation_private.h"
#include "memory.h"
#include "topology.h"

/* Usable core ids for every node from this node's topology (on
 * homogeneous machines the best evidence there is), or 0..n-1 when this
 * process runs on none of the nodes. ncores holds the wanted count on entry
 * (0: unknown). */
int alloc_assign_cores (struct alloc_ctx *c, int local, berth_error_t *err)
{
    struct allocation *a = c->a;
    int *aff = NULL, naff = 0, *phys = NULL, nphys = 0, rc = -1;
    int prev_want = -1;
    if (local >= 0) {
        if (c->env->affinity_ids) {
            naff = c->env->naffinity;
        } else if (topology_affinity_ids (&aff, &naff, err) < 0)
            return -1;
        if (topology_physical_cores (c->env->sysfs_root,
                                     aff ? aff : c->env->affinity_ids, naff,
                                     &phys, &nphys, err) < 0)
            goto done;
        /* On this host itself the host is the truth: never more cores than
         * it gives, never renumbered. */
        if (a->system == BERTH_SYSTEM_SINGLE_NODE
            || a->system == BERTH_SYSTEM_LOGIN) {
            int want = a->nodes[local].ncores;
            a->nodes[local].ncores = want > 0 && want < nphys ? want : nphys;
        }
    }
    for (int i = 0; i < a->nnodes; i++) {
        struct allocation_node *nd = &a->nodes[i];
        char w[512];
        if (local < 0) {
            if (nd->ncores <= 0) {
                errprintf (err, "machine %s sets no cores_per_node and "
                           "nothing tells the cores of node %s; set "
                           "cores_per_node", c->machine, nd->name);
                goto done;
            }
            if (!(nd->core_ids = malloc (nd->ncores * sizeof (int)))) {
                errprintf (err, "out of memory");
                goto done;
            }
            for (int k = 0; k < nd->ncores; k++)
                nd->core_ids[k] = k;
            continue;
        }
        /* Every node gets what this node's topology gives for its count:
         * the same as the node before when the counts are (10,000 nodes
         * need not be worked out 10,000 times). */
        const struct allocation_node *prev = i > 0 ? &a->nodes[i - 1] : NULL;
        if (prev && i - 1 != local && i != local && prev->core_ids
            && prev_want == nd->ncores) {
            if (!(nd->core_ids = malloc (prev->ncores * sizeof (int)))) {
                errprintf (err, "out of memory");
                goto done;
            }
            memcpy (nd->core_ids, prev->core_ids, prev->ncores * sizeof (int));
            nd->ncores = prev->ncores;
            continue;
        }
        prev_want = nd->ncores;
        if (topology_usable_core_ids (phys, nphys, nd->ncores, &nd->core_ids,
                                      &nd->ncores, w, sizeof (w), err) < 0) {
            nd->ncores = 0;
            errprefix (err, "node %s: ", nd->name);
            goto done;
        }
        if (i == local && *w)
            alloc_warn (c, "node %s: %s", nd->name, w);
    }
    rc = 0;
done:
    free (aff);
    free (phys);
    return rc;
}

/* Credit nodes with what this node can really give: min(cgroup limit,
 * MemAvailable) where it is below the configured figure. */
void alloc_credit_memory (struct alloc_ctx *c, int local)
{
    struct allocation *a = c->a;
    int64_t got = -1, cfg = c->par->memory_per_node;
    if (cfg < 0)
        cfg = -1;
    if (local >= 0 && a->system != BERTH_SYSTEM_LOGIN) {
        struct memory_facts mf = { -1, -1, -1, -1 };
        berth_error_t e;
        if (memory_read_facts (c->env->proc_root, c->env->cgroup_root, &mf, &e)
            < 0)
            alloc_warn (c, "cannot read this node's memory (%s); accounting with "
                  "the configured memory_per_node", e.text);
        else
            got = mf.credited_mb;
        if (got >= 0 && cfg >= 0 && got < cfg) {
            char lim[32] = "none", avail[32] = "unknown";
            if (mf.cgroup_limit_mb >= 0)
                snprintf (lim, sizeof (lim), "%" PRId64 " MB",
                          mf.cgroup_limit_mb);
            if (mf.mem_available_mb >= 0)
                snprintf (avail, sizeof (avail), "%" PRId64 " MB",
                          mf.mem_available_mb);
            alloc_warn (c, "node %s can give %" PRId64 " MB (cgroup limit %s, "
                  "MemAvailable %s), less than memory_per_node = %" PRId64
                  " MB of machine %s; accounting with %" PRId64 " MB per node",
                  a->nodes[local].name, got, lim, avail, cfg, c->machine, got);
        }
    }
    for (int i = 0; i < a->nnodes; i++) {
        struct allocation_node *nd = &a->nodes[i];
        if (a->system == BERTH_SYSTEM_LOGIN)
            nd->memory_credited_mb = -1;
        else
            nd->memory_credited_mb = got < 0 ? cfg : cfg < 0 ? got
                                   : got < cfg ? got : cfg;
    }
}
