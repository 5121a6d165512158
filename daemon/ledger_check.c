/* SPDX-License-Identifier: MIT */
/* The ledger's invariants, recomputed from the leases: every core id and GPU
 * free or held exactly once, free counts and buckets agreeing, memory and
 * resident lease counts adding up. For tests and fuzzing. */
#include <stdlib.h>

#include "ledger_private.h"

int ledger_check_invariants (const struct ledger *l, berth_error_t *err)
{
    int W = l->W, rc = -1;
    uint64_t *held = calloc ((size_t) l->n * W, sizeof (uint64_t));
    uint64_t *gheld = calloc (l->n, sizeof (uint64_t));
    int64_t *mem = calloc (l->n, sizeof (int64_t));
    int *nleases = calloc (l->n, sizeof (int));
    if (!held || !gheld || !mem || !nleases) {
        errprintf (err, "out of memory checking the ledger");
        goto done;
    }
    size_t found = 0;
    size_t pos = 0;
    for (const struct ledger_lease *ls; (ls = idmap_next (l->leases, &pos));) {
        found++;
        if (idmap_get (l->leases, ls->id) != ls) {
            errprintf (err, "lease L%llu is not where its id leads",
                       (unsigned long long) ls->id);
            goto done;
        }
        for (int i = 0; i < ls->nnodes; i++) {
            const struct ledger_lease_node *ln = &ls->nodes[i];
            const struct lnode *nd = &l->nodes[ln->node];
            uint64_t *h = held + (size_t) ln->node * W;
            for (int j = 0; j < ln->ncores; j++) {
                int id = ln->cores[j];
                if (!(nd->usable[id >> 6] & bit (id))
                    || (h[id >> 6] & bit (id))) {
                    errprintf (err, "core %d of node %s is held twice or not "
                               "usable (lease L%llu)", id, nd->name,
                               (unsigned long long) ls->id);
                    goto done;
                }
                h[id >> 6] |= bit (id);
            }
            for (int j = 0; j < ln->ngpus; j++) {
                int g = ln->gpus[j];
                if (g >= nd->ngpus || (gheld[ln->node] & bit (g))) {
                    errprintf (err, "GPU %d of node %s is held twice or "
                               "absent (lease L%llu)", g, nd->name,
                               (unsigned long long) ls->id);
                    goto done;
                }
                gheld[ln->node] |= bit (g);
            }
            mem[ln->node] += ln->memory;
            nleases[ln->node]++;
        }
    }
    if (found != idmap_count (l->leases)) {
        errprintf (err, "%zu leases found, %zu counted", found,
                   idmap_count (l->leases));
        goto done;
    }
    int inbuckets = 0;
    for (int f = 0; f <= l->maxcores; f++)
        inbuckets += l->bucket[f].count;
    if (inbuckets != l->n - l->nresv) {
        errprintf (err, "%d nodes in buckets, %d nodes (%d reserved)",
                   inbuckets, l->n, l->nresv);
        goto done;
    }
    for (int i = 0; i < l->n; i++) {
        const struct lnode *nd = &l->nodes[i];
        const uint64_t *h = held + (size_t) i * W;
        for (int w = 0; w < W; w++)
            if ((h[w] & nd->free[w]) || ((h[w] | nd->free[w])
                                         != nd->usable[w])) {
                errprintf (err, "node %s: core ids in word %d are neither "
                           "free nor held exactly once", nd->name, w);
                goto done;
            }
        uint64_t all = nd->ngpus == 64 ? ~0ULL : (1ULL << nd->ngpus) - 1;
        if ((gheld[i] & nd->gpu_free) || (gheld[i] | nd->gpu_free) != all
            || __builtin_popcountll (nd->gpu_free) != nd->nfree_gpus) {
            errprintf (err, "node %s: GPUs are not free or held exactly once",
                       nd->name);
            goto done;
        }
        if (bits_count (nd->free, W) != nd->nfree
            || !(l->bucket[nd->nfree].w[i >> 6] & bit (i)) != nd->reserved) {
            errprintf (err, "node %s: free count %d disagrees with its ids or "
                       "bucket", nd->name, nd->nfree);
            goto done;
        }
        if (nd->memory >= 0 && (nd->unbudgeted < 0
                                || nd->unbudgeted + mem[i] != nd->memory)) {
            errprintf (err, "node %s: %lld MB unbudgeted + %lld MB charged "
                       "!= %lld MB credited", nd->name,
                       (long long) nd->unbudgeted, (long long) mem[i],
                       (long long) nd->memory);
            goto done;
        }
        if (nleases[i] != nd->nleases) {
            errprintf (err, "node %s: %d resident leases counted, %d found",
                       nd->name, nd->nleases, nleases[i]);
            goto done;
        }
    }
    struct ledger_totals t = { .nodes = l->n };
    for (int i = 0; i < l->n; i++) {
        const struct lnode *nd = &l->nodes[i];
        t.cores += nd->ncores;
        t.free_cores += nd->nfree;
        t.gpus += nd->ngpus;
        t.free_gpus += nd->nfree_gpus;
        t.resident += nd->nleases;
        t.full += nd->nfree == 0;
        t.idle += nd->nleases == 0;
        t.memory = t.memory < 0 || nd->memory < 0 ? -1 : t.memory + nd->memory;
        t.unbudgeted = t.unbudgeted < 0 || nd->memory < 0
                       ? -1 : t.unbudgeted + nd->unbudgeted;
    }
    struct ledger_totals kept;
    ledger_totals (l, &kept);
    if (t.cores != kept.cores || t.free_cores != kept.free_cores
        || t.gpus != kept.gpus || t.free_gpus != kept.free_gpus
        || t.resident != kept.resident || t.full != kept.full
        || t.idle != kept.idle || t.nodes != kept.nodes
        || t.memory != kept.memory || t.unbudgeted != kept.unbudgeted) {
        errprintf (err, "kept totals (free cores %lld, free GPUs %lld, "
                   "resident %lld, full %d, idle %d, unbudgeted %lld MB) "
                   "differ from the nodes' (%lld, %lld, %lld, %d, %d, %lld)",
                   (long long) kept.free_cores, (long long) kept.free_gpus,
                   (long long) kept.resident, kept.full, kept.idle,
                   (long long) kept.unbudgeted, (long long) t.free_cores,
                   (long long) t.free_gpus, (long long) t.resident, t.full,
                   t.idle, (long long) t.unbudgeted);
        goto done;
    }
    rc = 0;
done:
    free (held);
    free (gheld);
    free (mem);
    free (nleases);
    return rc;
}
