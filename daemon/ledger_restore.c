/* SPDX-License-Identifier: MIT */
/* Restoring a lease into the ledger (from the journal after a restart):
 * every core, GPU and MB it names checked against the book before any is
 * taken, so that a bad record changes nothing. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_private.h"

/* The checks of ledger_restore for one node of the lease; l->tmp marks the
 * core ids seen, so that a repeated id is noticed. */
static int restore_check_node (struct ledger *l, const struct ledger_lease *w,
                               int i, const bool *seen, berth_error_t *err)
{
    const struct ledger_lease_node *ln = &w->nodes[i];
    if (ln->node < 0 || ln->node >= l->n)
        return errprintf_code (err, "invalid", "L%llu: node index %d is not "
                               "one of the ledger's %d nodes",
                               (unsigned long long) w->id, ln->node, l->n);
    const struct lnode *nd = &l->nodes[ln->node];
    if (seen[ln->node])
        return errprintf_code (err, "invalid", "L%llu names node %s twice",
                               (unsigned long long) w->id, nd->name);
    if (ln->ncores < 1 || !ln->cores || ln->ngpus < 0
        || (ln->ngpus && !ln->gpus) || ln->memory < 0)
        return errprintf_code (err, "invalid", "L%llu on node %s: %d cores, "
                               "%d GPUs, %lld MB is not a holding",
                               (unsigned long long) w->id, nd->name,
                               ln->ncores, ln->ngpus, (long long) ln->memory);
    memset (l->tmp, 0, (size_t) l->W * sizeof (uint64_t));
    for (int j = 0; j < ln->ncores; j++) {
        int c = ln->cores[j];
        if (c < 0 || c >= l->W * 64 || !(nd->usable[c >> 6] & bit (c)))
            return errprintf_code (err, "invalid", "L%llu: core %d is not a "
                                   "usable core of node %s",
                                   (unsigned long long) w->id, c, nd->name);
        if (l->tmp[c >> 6] & bit (c))
            return errprintf_code (err, "invalid", "L%llu names core %d of "
                                   "node %s twice", (unsigned long long) w->id,
                                   c, nd->name);
        l->tmp[c >> 6] |= bit (c);
        if (!(nd->free[c >> 6] & bit (c)))
            return errprintf_code (err, "conflict", "L%llu: core %d of node "
                                   "%s is already held",
                                   (unsigned long long) w->id, c, nd->name);
    }
    uint64_t g = 0;
    for (int j = 0; j < ln->ngpus; j++) {
        int x = ln->gpus[j];
        if (x < 0 || x >= nd->ngpus || (g & bit (x)))
            return errprintf_code (err, "invalid", "L%llu: GPU %d of node %s "
                                   "is absent or named twice",
                                   (unsigned long long) w->id, x, nd->name);
        g |= bit (x);
        if (!(nd->gpu_free & bit (x)))
            return errprintf_code (err, "conflict", "L%llu: GPU %d of node %s "
                                   "is already held",
                                   (unsigned long long) w->id, x, nd->name);
    }
    if (nd->memory < 0 && ln->memory != 0)
        return errprintf_code (err, "invalid", "L%llu charges %lld MB on node "
                               "%s, whose memory is not accounted",
                               (unsigned long long) w->id,
                               (long long) ln->memory, nd->name);
    if (nd->memory >= 0 && ln->memory > nd->unbudgeted)
        return errprintf_code (err, "conflict", "L%llu charges %lld MB on node "
                               "%s, which has %lld MB unbudgeted",
                               (unsigned long long) w->id,
                               (long long) ln->memory, nd->name,
                               (long long) nd->unbudgeted);
    return 0;
}

int ledger_restore (struct ledger *l, const struct ledger_lease *w,
                    berth_error_t *err)
{
    if (w->id < 1 || w->nnodes < 1 || w->nnodes > l->n)
        return errprintf_code (err, "invalid", "L%llu on %d nodes cannot be "
                               "restored into a ledger of %d nodes",
                               (unsigned long long) w->id, w->nnodes, l->n);
    if (idmap_get (l->leases, w->id))
        return errprintf_code (err, "conflict", "L%llu is already held",
                               (unsigned long long) w->id);
    bool *seen = calloc ((size_t) l->n, sizeof (bool));
    if (!seen)
        return errprintf (err, "out of memory restoring a lease");
    int cores = 0, gpus = 0, rc = 0;
    for (int i = 0; i < w->nnodes && rc == 0; i++) {
        rc = restore_check_node (l, w, i, seen, err);
        if (rc == 0) {
            seen[w->nodes[i].node] = true;
            cores += w->nodes[i].ncores;
            gpus += w->nodes[i].ngpus;
        }
    }
    free (seen);
    if (rc < 0)
        return -1;
    struct ledger_lease *ls = lg_lease_new (w->nnodes, cores, gpus);
    if (!ls)
        return errprintf (err, "out of memory restoring a lease");
    int *ids = lease_ids (ls);
    for (int i = 0; i < w->nnodes; i++) {
        const struct ledger_lease_node *src = &w->nodes[i];
        struct ledger_lease_node *ln = &ls->nodes[i];
        ln->node = src->node;
        ln->cores = ids;
        ln->ncores = src->ncores;
        memcpy (ids, src->cores, (size_t) src->ncores * sizeof (int));
        ids += src->ncores;
        ln->gpus = ids;
        ln->ngpus = src->ngpus;
        if (src->ngpus)
            memcpy (ids, src->gpus, (size_t) src->ngpus * sizeof (int));
        ids += src->ngpus;
        ln->memory = src->memory;
    }
    ls->id = w->id;
    ls->shape = w->shape;
    ls->layout = w->layout;
    if (idmap_put (l->leases, ls->id, ls) < 0) {
        free (ls);
        return errprintf (err, "out of memory restoring a lease");
    }
    lg_take (l, ls);
    l->gen++;
    if (l->next_id <= w->id)
        l->next_id = w->id + 1;
    return 0;
}
