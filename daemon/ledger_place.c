/* SPDX-License-Identifier: MIT */
/* Placing a step in the ledger: best fit on one node, or a span over k
 * nodes. Where the launcher binds (LEDGER_CPU_BINDING) the nodes of a span
 * hold the same core ids and GPU indices (an id template) and the tasks split
 * in srun's or PALS's even layout. Where the scheduler picks the cores
 * (LEDGER_SCHEDULER: srun --exact) the ids are bookkeeping, each node gives
 * its own, and a span that has no even layout may split unevenly (srun -m
 * arbitrary names each task's node). Reads the book and builds the lease;
 * ledger.c records it. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_private.h"

#define CONTIG_LOOKS 8     /* nodes of the best bucket checked for a run */
#define TEMPLATES 4        /* id sets tried per node count for a span */
#define SPAN_TRIES 16      /* node counts tried in full for a span */

static void lowest_gpus (uint64_t mask, int g, int *ids)
{
    for (int i = 0; i < g; i++) {
        ids[i] = __builtin_ctzll (mask);
        mask &= mask - 1;
    }
}

/* Best fit: the smallest free count that holds the step; in that bucket the
 * lowest node offering a contiguous run among the first few that fit, else
 * the lowest that fits. */
static int pick_node (struct ledger *l, const struct demand *d, bool local)
{
    if (local) {
        if (l->local < 0 || l->nodes[l->local].reserved
            || !node_fits (&l->nodes[l->local], d))
            return -1;
        return l->local;
    }
    for (int f = d->cores; f <= l->maxcores; f++) {
        const struct nodeset *s = &l->bucket[f];
        if (!s->count)
            continue;
        int first = -1, looked = 0;
        for (int i = ns_next (l, s, 0); i >= 0; i = ns_next (l, s, i + 1)) {
            if (!node_fits (&l->nodes[i], d))
                continue;
            if (first < 0)
                first = i;
            if (bits_best_run (l->nodes[i].free, l->W, d->cores) >= 0)
                return i;
            if (++looked == CONTIG_LOOKS)
                break;
        }
        if (first >= 0)
            return first;
    }
    return -1;
}

struct ledger_lease *lg_place_one (struct ledger *l,
                                       const struct step_shape *sh)
{
    struct demand d = { sh->cores, sh->gpus, sh->budget > 0 ? sh->budget : 0 };
    int i = pick_node (l, &d, sh->local);
    if (i < 0)
        return NULL;
    struct ledger_lease *ls = lg_lease_new (1, d.cores, d.gpus);
    if (!ls)
        return NULL;
    struct lnode *nd = &l->nodes[i];
    struct ledger_lease_node *ln = &ls->nodes[0];
    ln->node = i;
    ln->cores = lease_ids (ls);
    ln->ncores = d.cores;
    ln->gpus = ln->cores + d.cores;
    ln->ngpus = d.gpus;
    ln->memory = nd->memory >= 0 ? d.memory : 0;
    bits_choose (nd->free, l->W, d.cores, ln->cores);
    lowest_gpus (nd->gpu_free, d.gpus, ln->gpus);
    return ls;
}

void lg_span_layout (const struct step_shape *sh, enum ledger_layout lay,
                         int k, struct span *sp)
{
    int units = sh->mpi ? sh->ntasks : sh->cores;
    int usz = sh->mpi ? sh->cpus_per_task : 1;
    /* Tasks split exactly (the launch names each node's count where the
     * scheduler picks); GPUs too where the launcher binds, but srun's
     * --gpus=N spreads them as Slurm likes: ceil(N / k) on every node. */
    int t_hi = (units + k - 1) / k, g_hi = (sh->gpus + k - 1) / k;
    int t_lo = units / k, g_lo = g_hi, h_t = units % k ? units % k : k;
    int h_g = k;
    if (lay == LEDGER_CPU_BINDING) {
        g_lo = sh->gpus / k;
        h_g = sh->gpus % k ? sh->gpus % k : k;
    }
    int a = h_t < h_g ? h_t : h_g, b = h_t < h_g ? h_g : h_t;
    int bounds[4] = { 0, a, b, k };
    int64_t reserved = (int64_t) h_t * t_hi * usz + (int64_t) (k - h_t) * t_lo
                       * usz;
    sp->k = k;
    sp->ncls = 0;
    sp->hi_cores = t_hi * usz;
    sp->hi_gpus = g_hi;
    for (int c = 0; c < 3; c++) {
        if (bounds[c + 1] == bounds[c])
            continue;
        int pos = bounds[c];
        struct demand *d = &sp->d[sp->ncls];
        d->cores = (pos < h_t ? t_hi : t_lo) * usz;
        d->gpus = pos < h_g ? g_hi : g_lo;
        d->memory = sh->budget > 0 ? sh->budget * d->cores / reserved : 0;
        sp->count[sp->ncls++] = bounds[c + 1] - bounds[c];
    }
}

/* Nodes with at least f free cores. */
int lg_count_free_ge (const struct ledger *l, int f)
{
    int n = 0;
    for (int x = f < 0 ? 0 : f; x <= l->maxcores; x++)
        n += l->bucket[x].count;
    return n;
}

/* Fill the span's classes with nodes holding the template's ids (core ids
 * list ids[0..hi_cores), GPU indices gids[0..hi_gpus)); a class of smaller
 * demand needs only a prefix. On success l->sel holds the nodes in placement
 * order. */
static bool span_fill (struct ledger *l, const struct span *sp,
                       const int *ids, const int *gids, bool same_ids)
{
    uint64_t *mask[3], gmask[3];
    int filled[3] = { 0 }, start[3], need = 0;
    for (int c = 0; c < sp->ncls; c++) {
        start[c] = need;
        need += sp->count[c];
    }
    /* Distinct core demands are at most two (hi, lo): share masks. */
    uint64_t *m_hi = l->tmp, *m_lo = l->tmp + l->W;
    memset (l->tmp, 0, 2 * l->W * sizeof (uint64_t));
    int lo_cores = sp->d[sp->ncls - 1].cores;
    for (int j = 0; j < sp->hi_cores; j++) {
        m_hi[ids[j] >> 6] |= bit (ids[j]);
        if (j < lo_cores)
            m_lo[ids[j] >> 6] |= bit (ids[j]);
    }
    for (int c = 0; c < sp->ncls; c++) {
        mask[c] = sp->d[c].cores == sp->hi_cores ? m_hi : m_lo;
        gmask[c] = 0;
        for (int j = 0; j < sp->d[c].gpus; j++)
            gmask[c] |= bit (gids[j]);
    }
    int got = 0;
    for (int f = lo_cores; f <= l->maxcores && got < need; f++) {
        const struct nodeset *s = &l->bucket[f];
        for (int i = s->count ? ns_next (l, s, 0) : -1; i >= 0 && got < need;
             i = ns_next (l, s, i + 1)) {
            const struct lnode *nd = &l->nodes[i];
            for (int c = 0; c < sp->ncls; c++) {
                if (filled[c] == sp->count[c] || nd->nfree < sp->d[c].cores)
                    continue;
                if ((nd->gpu_free & gmask[c]) != gmask[c]
                    || (same_ids && !bits_subset (mask[c], nd->free, l->W))
                    || !node_fits (nd, &sp->d[c]))
                    continue;
                l->sel[start[c] + filled[c]++] = i;
                got++;
                break;
            }
        }
    }
    return got == need;
}

static struct ledger_lease *span_lease (struct ledger *l,
                                        const struct span *sp,
                                        const int *ids, const int *gids,
                                        bool same_ids)
{
    int cores = 0, gpus = 0;
    for (int c = 0; c < sp->ncls; c++) {
        cores += sp->count[c] * sp->d[c].cores;
        gpus += sp->count[c] * sp->d[c].gpus;
    }
    struct ledger_lease *ls = lg_lease_new (sp->k, cores, gpus);
    if (!ls)
        return NULL;
    int *p = lease_ids (ls), pos = 0;
    for (int c = 0; c < sp->ncls; c++) {
        for (int j = 0; j < sp->count[c]; j++, pos++) {
            struct ledger_lease_node *ln = &ls->nodes[pos];
            ln->node = l->sel[pos];
            ln->cores = p;
            ln->ncores = sp->d[c].cores;
            /* span_fill left the template's masks in l->tmp: a node that
             * has the template's ids free takes them (the common case, and
             * cheaper than choosing again) */
            const uint64_t *mask = ln->ncores == sp->hi_cores ? l->tmp
                                                              : l->tmp + l->W;
            if (same_ids || bits_subset (mask, l->nodes[ln->node].free, l->W))
                memcpy (p, ids, ln->ncores * sizeof (int));
            else
                bits_choose (l->nodes[ln->node].free, l->W, ln->ncores, p);
            p += ln->ncores;
            ln->gpus = p;
            ln->ngpus = sp->d[c].gpus;
            memcpy (p, gids, ln->ngpus * sizeof (int));
            p += ln->ngpus;
            ln->memory = l->nodes[ln->node].memory >= 0 ? sp->d[c].memory : 0;
        }
    }
    return ls;
}

/* Try a few id templates: the free ids of the first nodes that could hold the
 * largest per-node demand, skipping nodes whose free set repeats one tried. */
static struct ledger_lease *span_try (struct ledger *l, const struct span *sp,
                                      bool same_ids, bool *oom)
{
    int *ids = malloc ((sp->hi_cores + sp->hi_gpus + 1) * sizeof (int));
    if (!ids) {
        *oom = true;
        return NULL;
    }
    int *gids = ids + sp->hi_cores;
    int tried[TEMPLATES], ntried = 0;
    struct demand top = sp->d[0];
    struct ledger_lease *ls = NULL;
    for (int f = sp->hi_cores; f <= l->maxcores && ntried < TEMPLATES && !ls;
         f++) {
        const struct nodeset *s = &l->bucket[f];
        for (int i = s->count ? ns_next (l, s, 0) : -1;
             i >= 0 && ntried < TEMPLATES && !ls; i = ns_next (l, s, i + 1)) {
            const struct lnode *nd = &l->nodes[i];
            if (!node_fits (nd, &top))
                continue;
            bool seen = false;
            for (int t = 0; t < ntried && !seen; t++)
                seen = !memcmp (l->nodes[tried[t]].free, nd->free,
                                l->W * sizeof (uint64_t))
                       && l->nodes[tried[t]].gpu_free == nd->gpu_free;
            if (seen)
                continue;
            tried[ntried++] = i;
            bits_choose (nd->free, l->W, sp->hi_cores, ids);
            lowest_gpus (nd->gpu_free, sp->hi_gpus, gids);
            if (span_fill (l, sp, ids, gids, same_ids)
                && !(ls = span_lease (l, sp, ids, gids, same_ids)))
                *oom = true;
            /* with no ids or GPUs to match, one template says it all */
            if (!same_ids && !sp->hi_gpus)
                ntried = TEMPLATES;
        }
    }
    free (ids);
    return ls;
}

int lg_node_room (const struct ledger *l, int i, const struct step_shape *sh,
                  int usz, int64_t total)
{
    const struct lnode *nd = &l->nodes[i];
    int64_t r = nd->nfree / usz;
    if (sh->budget > 0 && nd->memory >= 0) {
        /* the node is charged budget * cores / total */
        int64_t by_mem = nd->unbudgeted * total / ((int64_t) sh->budget * usz);
        if (by_mem < r)
            r = by_mem;
    }
    return (int) r;
}

struct room {
    int node, room, take;
};

static int by_room (const void *a, const void *b)
{
    const struct room *x = a, *y = b;
    return x->room != y->room ? (x->room < y->room ? -1 : 1)
                              : (x->node > y->node) - (x->node < y->node);
}

static int by_node (const void *a, const void *b)
{
    const struct room *x = a, *y = b;
    return (x->node > y->node) - (x->node < y->node);
}

/* The fewest nodes, most free first, whose room adds up to the step, into
 * rm[0..k) (room for at least min(units, n) entries); 0 when the free room
 * of the whole allocation falls short (memory: lg_place_span has already
 * seen that the free cores would do). */
static int uneven_pick (const struct ledger *l, const struct step_shape *sh,
                        struct room *rm)
{
    int units = sh->mpi ? sh->ntasks : sh->cores;
    int usz = sh->mpi ? sh->cpus_per_task : 1;
    int64_t total = (int64_t) units * usz, have = 0;
    int k = 0;
    for (int f = l->maxcores; f >= usz && have < units; f--) {
        const struct nodeset *s = &l->bucket[f];
        for (int i = s->count ? ns_next (l, s, 0) : -1; i >= 0 && have < units;
             i = ns_next (l, s, i + 1)) {
            int r = lg_node_room (l, i, sh, usz, total);
            if (r < 1)
                continue;
            rm[k++] = (struct room) { i, r, 0 };
            have += r;
        }
    }
    return have >= units ? k : 0;
}

/* Tasks as even as the room allows: by ascending room each node takes
 * ceil(left / nodes left) or all it has (the later nodes have at least as
 * much room, so the last takes what is left); then in node order. */
static struct ledger_lease *uneven_lease (struct ledger *l,
                                          const struct step_shape *sh,
                                          struct room *rm, int k)
{
    int units = sh->mpi ? sh->ntasks : sh->cores;
    int usz = sh->mpi ? sh->cpus_per_task : 1;
    int64_t total = (int64_t) units * usz;
    qsort (rm, k, sizeof (*rm), by_room);
    for (int j = 0, left = units; j < k; j++) {
        int even = (left + (k - j) - 1) / (k - j);
        rm[j].take = rm[j].room < even ? rm[j].room : even;
        left -= rm[j].take;
    }
    qsort (rm, k, sizeof (*rm), by_node);
    struct ledger_lease *ls = lg_lease_new (k, units * usz, 0);
    if (!ls)
        return NULL;
    int *p = lease_ids (ls);
    for (int j = 0; j < k; j++) {
        struct ledger_lease_node *ln = &ls->nodes[j];
        const struct lnode *nd = &l->nodes[rm[j].node];
        ln->node = rm[j].node;
        ln->cores = p;
        ln->ncores = rm[j].take * usz;
        bits_choose (nd->free, l->W, ln->ncores, p);
        p += ln->ncores;
        ln->gpus = p;
        ln->memory = nd->memory >= 0 && sh->budget > 0
                         ? sh->budget * ln->ncores / total : 0;
    }
    return ls;
}

struct ledger_lease *lg_place_span (struct ledger *l,
                                        const struct step_shape *sh,
                                        enum ledger_layout lay, bool *oom)
{
    int units = sh->mpi ? sh->ntasks : sh->cores;
    int usz = sh->mpi ? sh->cpus_per_task : 1;
    int per_node = l->maxcores / usz;
    if (per_node < 1)
        return NULL;
    int kmin = (units + per_node - 1) / per_node;
    if (l->maxgpus && (sh->gpus + l->maxgpus - 1) / l->maxgpus > kmin)
        kmin = (sh->gpus + l->maxgpus - 1) / l->maxgpus;
    if (kmin < 2)
        kmin = 2;
    int kmax = units < l->n ? units : l->n;
    /* Where tasks may split unevenly, the even layout is tried on no more
     * nodes than the uneven one needs (fewer nodes first; even, on the
     * best-fitting nodes, where it does as well). */
    bool uneven = lay == LEDGER_SCHEDULER && sh->gpus == 0;
    if (uneven) {
        /* the fewest nodes by free cores alone, from the buckets (memory
         * can only make it more): no node walk before the even try */
        int k = 0;
        int64_t have = 0;
        for (int f = l->maxcores; f >= usz && have < units; f--) {
            int c = l->bucket[f].count, per = f / usz;
            int need = (int) ((units - have + per - 1) / per);
            k += need < c ? need : c;
            have += (int64_t) (need < c ? need : c) * per;
        }
        if (have < units)
            return NULL;
        if (k < kmax)
            kmax = k;
    }
    struct ledger_lease *ls = NULL;
    for (int k = kmin, tries = 0; k <= kmax && tries < SPAN_TRIES && !ls
                                  && !*oom; k++) {
        struct span sp;
        lg_span_layout (sh, lay, k, &sp);
        if (sp.hi_cores > l->maxcores || sp.hi_gpus > l->maxgpus
            || lg_count_free_ge (l, sp.d[sp.ncls - 1].cores) < k
            || lg_count_free_ge (l, sp.hi_cores) < sp.count[0])
            continue;
        tries++;
        ls = span_try (l, &sp, lay == LEDGER_CPU_BINDING, oom);
    }
    if (ls || *oom || !uneven)
        return ls;
    struct room *rm = malloc ((size_t) (units < l->n ? units : l->n)
                              * sizeof (*rm));
    if (!rm) {
        *oom = true;
        return NULL;
    }
    int k = uneven_pick (l, sh, rm);
    if (k > 1 && !(ls = uneven_lease (l, sh, rm, k)))
        *oom = true;
    free (rm);
    return ls;
}
