/* SPDX-License-Identifier: MIT */
/* The ledger: who holds which core ids, GPU indices and memory on each node.
 *
 * Built for allocations of many nodes: each node keeps its free core ids as a
 * bit set over the id space (so "the same ids on every node" is a word-wise
 * subset test), and nodes are indexed by their free core count in buckets,
 * each a two-level bit set of node indices. A single-node step looks at the
 * smallest bucket that can hold it (best fit) and the lowest nodes in it, not
 * at every node; leases are found by id in an idmap.
 *
 * This file is the book and its public entry points: creating it, granting
 * and releasing leases, and reading it back. Placement, holding nodes for a
 * waiting request, explaining a wait, restoring leases and checking the
 * invariants have a file each (ledger_*.c, sharing ledger_private.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_private.h"

#define MAX_CORE_ID (1 << 20)
#define MAX_GPUS 64

static void set_free (struct ledger *l, int i, int nfree)
{
    struct lnode *nd = &l->nodes[i];
    if (!nd->reserved)
        ns_del (&l->bucket[nd->nfree], i);
    nd->nfree = nfree;
    if (!nd->reserved)
        ns_add (&l->bucket[nfree], i);
}

void ledger_destroy (struct ledger *l)
{
    if (!l)
        return;
    int saved = errno;
    if (l->leases) {
        size_t pos = 0;
        struct ledger_lease *ls;
        while ((ls = idmap_next (l->leases, &pos)))
            free (ls);
        idmap_destroy (l->leases);
    }
    for (int i = 0; i < l->n; i++)
        free (l->nodes[i].name);
    free (l->nodes);
    free (l->bits);
    free (l->bucket);
    free (l->nsbits);
    free (l->tmp);
    free (l->sel);
    free (l->resv);
    free (l);
    errno = saved;
}

/* cores_checked: s has the core ids of a node already checked. */
static int check_spec (const struct ledger_node_spec *s, int i,
                       bool cores_checked, berth_error_t *err)
{
    if (!s->name || !*s->name)
        return errprintf (err, "node %d has no name", i);
    if (s->ncores < 1 || !s->cores)
        return errprintf (err, "node %s has no usable cores", s->name);
    if (s->gpus < 0 || s->gpus > MAX_GPUS)
        return errprintf (err, "node %s has %d GPUs: the ledger counts 0 to "
                          "%d per node", s->name, s->gpus, MAX_GPUS);
    if (s->memory < -1)
        return errprintf (err, "node %s has memory %lld MB: give a figure or "
                          "-1 for unknown", s->name, (long long) s->memory);
    for (int j = 0; j < s->ncores && !cores_checked; j++)
        if (s->cores[j] < 0 || s->cores[j] >= MAX_CORE_ID)
            return errprintf (err, "node %s: core id %d is outside 0-%d",
                              s->name, s->cores[j], MAX_CORE_ID - 1);
    return 0;
}

/* The same usable core ids as the node before (checked and set once). */
static bool same_cores (const struct ledger_node_spec *a,
                        const struct ledger_node_spec *b)
{
    return a->ncores == b->ncores && a->ncores > 0 && a->cores && b->cores
           && (a->cores == b->cores
               || !memcmp (a->cores, b->cores, a->ncores * sizeof (int)));
}

static uint64_t name_hash (const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char) *s) * 1099511628211ULL;
    return h;
}

/* Names must be unique: a placement names its nodes. A hash set, so that
 * 10,000 nodes cost 10,000 probes, not a sort. */
static int check_names (const struct ledger_node_spec *nodes, int n,
                        berth_error_t *err)
{
    size_t cap = 16;
    while (cap < (size_t) n * 2)
        cap *= 2;
    const char **set = calloc (cap, sizeof (*set));
    if (!set)
        return errprintf (err, "out of memory checking node names");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        size_t k = name_hash (nodes[i].name) & (cap - 1);
        while (set[k] && strcmp (set[k], nodes[i].name) != 0)
            k = (k + 1) & (cap - 1);
        if (set[k])
            rc = errprintf (err, "node %s is listed twice", nodes[i].name);
        set[k] = nodes[i].name;
    }
    free (set);
    return rc;
}

struct ledger *ledger_create (const struct ledger_node_spec *nodes,
                              int nnodes, int local_node, berth_error_t *err)
{
    if (nnodes < 1) {
        errprintf (err, "a ledger needs at least one node (got %d)", nnodes);
        return NULL;
    }
    if (local_node < -1 || local_node >= nnodes) {
        errprintf (err, "the daemon's node index %d is not one of the %d "
                   "nodes", local_node, nnodes);
        return NULL;
    }
    int maxid = 0;
    for (int i = 0; i < nnodes; i++) {
        /* Core ids alike (the usual case) are checked once. */
        bool alike = i > 0 && same_cores (&nodes[i], &nodes[i - 1]);
        if (check_spec (&nodes[i], i, alike, err) < 0)
            return NULL;
        for (int j = 0; j < nodes[i].ncores && !alike; j++)
            if (nodes[i].cores[j] > maxid)
                maxid = nodes[i].cores[j];
    }
    if (check_names (nodes, nnodes, err) < 0)
        return NULL;
    struct ledger *l = calloc (1, sizeof (*l));
    if (!l)
        goto nomem;
    l->n = nnodes;
    l->local = local_node;
    l->W = maxid / 64 + 1;
    l->nw = (nnodes + 63) / 64;
    l->nsw = (l->nw + 63) / 64;
    l->next_id = 1;
    l->nodes = calloc (nnodes, sizeof (*l->nodes));
    l->bits = calloc ((size_t) nnodes * 2 * l->W, sizeof (uint64_t));
    l->leases = idmap_create ();
    l->tmp = calloc (2 * l->W, sizeof (uint64_t));
    l->sel = calloc (nnodes, sizeof (int));
    l->resv = calloc (nnodes, sizeof (int));
    if (!l->nodes || !l->bits || !l->leases || !l->tmp || !l->sel || !l->resv)
        goto nomem;
    l->mincores = INT_MAX;
    l->mingpus = INT_MAX;
    l->minmemory = INT64_MAX;
    for (int i = 0; i < nnodes; i++) {
        struct lnode *nd = &l->nodes[i];
        if (!(nd->name = strdup (nodes[i].name)))
            goto nomem;
        nd->usable = l->bits + (size_t) i * 2 * l->W;
        nd->free = nd->usable + l->W;
        bool alike = i > 0 && same_cores (&nodes[i], &nodes[i - 1]);
        if (alike)
            memcpy (nd->usable, l->nodes[i - 1].usable,
                    l->W * sizeof (uint64_t));
        for (int j = 0; j < nodes[i].ncores && !alike; j++) {
            int id = nodes[i].cores[j];
            if (nd->usable[id >> 6] & bit (id)) {
                errprintf (err, "node %s lists core id %d twice", nd->name,
                           id);
                ledger_destroy (l);
                return NULL;
            }
            nd->usable[id >> 6] |= bit (id);
        }
        memcpy (nd->free, nd->usable, l->W * sizeof (uint64_t));
        nd->ncores = nd->nfree = nodes[i].ncores;
        nd->ngpus = nd->nfree_gpus = nodes[i].gpus;
        nd->gpu_free = nd->ngpus == 64 ? ~0ULL : (1ULL << nd->ngpus) - 1;
        nd->memory = nd->unbudgeted = nodes[i].memory;
        if (nd->ncores > l->maxcores)
            l->maxcores = nd->ncores;
        if (nd->ncores < l->mincores)
            l->mincores = nd->ncores;
        if (nd->ngpus > l->maxgpus)
            l->maxgpus = nd->ngpus;
        if (nd->ngpus < l->mingpus)
            l->mingpus = nd->ngpus;
        if (nd->memory < 0 || l->minmemory < 0)
            l->minmemory = -1;
        else if (nd->memory < l->minmemory)
            l->minmemory = nd->memory;
    }
    int nb = l->maxcores + 1;
    l->bucket = calloc (nb, sizeof (*l->bucket));
    l->nsbits = calloc ((size_t) nb * (l->nw + l->nsw), sizeof (uint64_t));
    if (!l->bucket || !l->nsbits)
        goto nomem;
    for (int f = 0; f < nb; f++) {
        l->bucket[f].w = l->nsbits + (size_t) f * (l->nw + l->nsw);
        l->bucket[f].sum = l->bucket[f].w + l->nw;
    }
    for (int i = 0; i < nnodes; i++) {
        ns_add (&l->bucket[l->nodes[i].nfree], i);
        l->tot.cores += l->nodes[i].ncores;
        l->tot.gpus += l->nodes[i].ngpus;
        if (l->nodes[i].memory >= 0)
            l->tot.memory += l->nodes[i].memory;
        else
            l->memory_unknown = true;
        lg_count_node (l, i, +1);
    }
    l->tot.nodes = nnodes;
    return l;
nomem:
    ledger_destroy (l);
    errprintf (err, "out of memory building a ledger of %d nodes", nnodes);
    return NULL;
}

void ledger_capacity (const struct ledger *l, struct step_capacity *cap)
{
    cap->nodes = l->n;
    cap->cores_per_node = l->mincores;
    cap->gpus_per_node = l->mingpus;
    cap->memory_per_node = l->minmemory;
    cap->mpi_allowed = true;
}

int ledger_nnodes (const struct ledger *l)
{
    return l->n;
}

void ledger_node_info (const struct ledger *l, int node,
                       struct ledger_node_info *info)
{
    const struct lnode *nd = &l->nodes[node];
    info->name = nd->name;
    info->cores = nd->ncores;
    info->free_cores = nd->nfree;
    info->gpus = nd->ngpus;
    info->free_gpus = nd->nfree_gpus;
    info->memory = nd->memory;
    info->unbudgeted = nd->unbudgeted;
    info->leases = nd->nleases;
}

void ledger_totals (const struct ledger *l, struct ledger_totals *t)
{
    *t = l->tot;
    if (l->memory_unknown)
        t->memory = t->unbudgeted = -1;
}

static int by_free_then_index (const void *a, const void *b, void *arg)
{
    const struct ledger *l = arg;
    int x = *(const int *) a, y = *(const int *) b;
    int fx = l->nodes[x].nfree, fy = l->nodes[y].nfree;
    return fx != fy ? (fx > fy) - (fx < fy) : (x > y) - (x < y);
}

int ledger_busiest (const struct ledger *l, int *nodes, int k)
{
    int n = 0;
    if (k <= 0)
        return 0;
    if (l->n <= k) {
        for (int i = 0; i < l->n; i++)
            nodes[n++] = i;
        return n;
    }
    if (l->nresv > 0) {
        /* Reserved nodes sit in no bucket (only within a round of the
         * queue, which status never sees): sort them all. */
        int *all = malloc ((size_t) l->n * sizeof (int));
        if (!all)
            return 0;
        for (int i = 0; i < l->n; i++)
            if (l->nodes[i].nleases > 0)
                all[n++] = i;
        qsort_r (all, (size_t) n, sizeof (int), by_free_then_index,
                 (void *) l);
        n = n < k ? n : k;
        memcpy (nodes, all, (size_t) n * sizeof (int));
        free (all);
        return n;
    }
    /* The buckets in ascending free count give the nodes in order; the last
     * holds only idle nodes (every lease holds a core). */
    for (int f = 0; f < l->maxcores && n < k; f++)
        for (int i = ns_next (l, &l->bucket[f], 0); i >= 0 && n < k;
             i = ns_next (l, &l->bucket[f], i + 1))
            if (l->nodes[i].nleases > 0)
                nodes[n++] = i;
    return n;
}

int ledger_lease_name (uint64_t id, char *buf, size_t size)
{
    return snprintf (buf, size, "L%llu", (unsigned long long) id);
}

/* ---- leases ---- */

/* Take what the lease's node entries name; cannot fail. */
void lg_take (struct ledger *l, struct ledger_lease *ls)
{
    for (int i = 0; i < ls->nnodes; i++) {
        struct ledger_lease_node *ln = &ls->nodes[i];
        struct lnode *nd = &l->nodes[ln->node];
        lg_count_node (l, ln->node, -1);
        for (int j = 0; j < ln->ncores; j++)
            nd->free[ln->cores[j] >> 6] &= ~bit (ln->cores[j]);
        for (int j = 0; j < ln->ngpus; j++)
            nd->gpu_free &= ~bit (ln->gpus[j]);
        nd->nfree_gpus -= ln->ngpus;
        if (nd->memory >= 0)
            nd->unbudgeted -= ln->memory;
        nd->nleases++;
        set_free (l, ln->node, nd->nfree - ln->ncores);
        lg_count_node (l, ln->node, +1);
    }
}

static void give_back (struct ledger *l, const struct ledger_lease *ls)
{
    for (int i = 0; i < ls->nnodes; i++) {
        const struct ledger_lease_node *ln = &ls->nodes[i];
        struct lnode *nd = &l->nodes[ln->node];
        lg_count_node (l, ln->node, -1);
        for (int j = 0; j < ln->ncores; j++)
            nd->free[ln->cores[j] >> 6] |= bit (ln->cores[j]);
        for (int j = 0; j < ln->ngpus; j++)
            nd->gpu_free |= bit (ln->gpus[j]);
        nd->nfree_gpus += ln->ngpus;
        if (nd->memory >= 0)
            nd->unbudgeted += ln->memory;
        nd->nleases--;
        set_free (l, ln->node, nd->nfree + ln->ncores);
        lg_count_node (l, ln->node, +1);
    }
}

int ledger_acquire (struct ledger *l, const struct step_shape *sh,
                    enum ledger_layout layout, uint64_t *id, char *why,
                    size_t whysize, berth_error_t *err)
{
    if (sh->cores < 1 || sh->ntasks < 1 || sh->cpus_per_task < 1
        || sh->gpus < 0 || (sh->mpi && sh->cores != sh->ntasks
                                                     * sh->cpus_per_task))
        return errprintf_code (err, "invalid_request", "invalid step shape: "
                               "%d cores as %d tasks x %d, %d GPUs",
                               sh->cores, sh->ntasks, sh->cpus_per_task,
                               sh->gpus);
    bool oom = false;
    struct ledger_lease *ls = NULL;
    if (sh->cores <= l->maxcores && sh->gpus <= l->maxgpus)
        ls = lg_place_one (l, sh);
    if (!ls && sh->may_span && !sh->local && l->n > 1)
        ls = lg_place_span (l, sh, layout, &oom);
    if (!ls && oom)
        return errprintf (err, "out of memory placing a step");
    if (!ls) {
        if (why && whysize) {
            l->explained++;
            lg_explain (l, sh, layout, why, whysize);
        }
        return 1;
    }
    ls->id = l->next_id;
    ls->shape = *sh;
    ls->layout = layout;
    if (idmap_put (l->leases, ls->id, ls) < 0) {
        free (ls);
        return errprintf (err, "out of memory recording a lease");
    }
    l->next_id++;
    lg_take (l, ls);
    l->gen++;
    *id = ls->id;
    if (why && whysize)
        why[0] = '\0';
    return 0;
}

int ledger_release (struct ledger *l, uint64_t id, berth_error_t *err)
{
    struct ledger_lease *ls = idmap_remove (l->leases, id);
    if (!ls) {
        char name[32];
        ledger_lease_name (id, name, sizeof (name));
        return errprintf_code (err, "not_found", "no lease %s: it was never "
                               "granted or is already released", name);
    }
    give_back (l, ls);
    free (ls);
    l->gen++;
    return 0;
}

void ledger_explain (struct ledger *l, const struct step_shape *sh,
                     enum ledger_layout layout, char *why, size_t whysize)
{
    l->explained++;
    lg_explain (l, sh, layout, why, whysize);
}

uint64_t ledger_explained (const struct ledger *l)
{
    return l->explained;
}

uint64_t ledger_generation (const struct ledger *l)
{
    return l->gen;
}

uint64_t ledger_next_id (const struct ledger *l)
{
    return l->next_id;
}

void ledger_raise_next_id (struct ledger *l, uint64_t next)
{
    if (next > l->next_id)
        l->next_id = next;
}

const struct ledger_lease *ledger_lease_find (const struct ledger *l,
                                              uint64_t id)
{
    return idmap_get (l->leases, id);
}

int ledger_lease_set_end (struct ledger *l, uint64_t id, double end)
{
    struct ledger_lease *ls = idmap_get (l->leases, id);
    if (!ls)
        return -1;
    ls->est_end = end < 0 ? -1 : end;
    l->gen++;
    return 0;
}

static int by_id (const void *a, const void *b)
{
    uint64_t x = (*(struct ledger_lease *const *) a)->id;
    uint64_t y = (*(struct ledger_lease *const *) b)->id;
    return x < y ? -1 : x > y;
}

int ledger_leases (const struct ledger *l, const struct ledger_lease ***v,
                   int *count, berth_error_t *err)
{
    const struct ledger_lease **a = malloc ((idmap_count (l->leases) + 1)
                                              * sizeof (*a));
    if (!a)
        return errprintf (err, "out of memory listing leases");
    int n = 0;
    size_t pos = 0;
    for (const struct ledger_lease *ls; (ls = idmap_next (l->leases, &pos));)
        a[n++] = ls;
    qsort (a, n, sizeof (*a), by_id);
    *v = a;
    *count = n;
    return 0;
}

int ledger_lease_placement (const struct ledger *l,
                            const struct ledger_lease *ls,
                            struct placement *p, berth_error_t *err)
{
    struct placement out = { .gpus = ls->shape.gpus };
    int ng = ls->nodes[0].ngpus;
    out.nodes = calloc (ls->nnodes, sizeof (*out.nodes));
    out.gpu_ids = ng ? malloc (ng * sizeof (int)) : NULL;
    if (!out.nodes || (ng && !out.gpu_ids))
        goto nomem;
    if (ng) {
        memcpy (out.gpu_ids, ls->nodes[0].gpus, ng * sizeof (int));
        out.ngpu_ids = ng;
    }
    for (int i = 0; i < ls->nnodes; i++) {
        const struct ledger_lease_node *ln = &ls->nodes[i];
        struct placement_node *pn = &out.nodes[out.nnodes++];
        pn->name = strdup (l->nodes[ln->node].name);
        pn->cores = malloc (ln->ncores * sizeof (int));
        if (!pn->name || !pn->cores)
            goto nomem;
        memcpy (pn->cores, ln->cores, ln->ncores * sizeof (int));
        pn->ncores = ln->ncores;
    }
    *p = out;
    return 0;
nomem:
    for (int i = 0; i < out.nnodes; i++) {
        free (out.nodes[i].name);
        free (out.nodes[i].cores);
    }
    free (out.nodes);
    free (out.gpu_ids);
    return errprintf (err, "out of memory converting a lease to a placement");
}
