/* SPDX-License-Identifier: MIT */
/* Holding nodes back for a waiting request (backfill reservations): which
 * nodes to hold, when the held nodes will be ready given the leases'
 * estimated ends, and when a step could start at the earliest. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "ledger_private.h"

/* How far node nd is from holding demand d: the missing share of its
 * cores plus that of its GPUs; 0 when it holds it. */
static double shortfall (const struct lnode *nd, const struct demand *d)
{
    double s = 0;
    if (nd->nfree < d->cores)
        s += (double) (d->cores - nd->nfree) / d->cores;
    if (d->gpus > 0 && nd->nfree_gpus < d->gpus)
        s += (double) (d->gpus - nd->nfree_gpus) / d->gpus;
    return s;
}

static void reserve_node (struct ledger *l, int i)
{
    struct lnode *nd = &l->nodes[i];
    ns_del (&l->bucket[nd->nfree], i);
    nd->reserved = true;
    l->resv[l->nresv++] = i;
}

/* The fewest nodes k that could hold sh and the largest demand on one of
 * them; false when it never fits the allocation's node sizes. */
static bool hold_demand (const struct ledger *l, const struct step_shape *sh,
                         enum ledger_layout layout, int *k,
                         struct demand *d)
{
    *k = 1;
    *d = (struct demand) { sh->cores, sh->gpus, 0 };
    if (sh->cores <= l->maxcores && sh->gpus <= l->maxgpus)
        return true;
    if (!sh->may_span || l->n < 2)
        return false;
    int units = sh->mpi ? sh->ntasks : sh->cores;
    int usz = sh->mpi ? sh->cpus_per_task : 1;
    int per_node = usz <= l->maxcores ? l->maxcores / usz : 0;
    if (per_node < 1)
        return false;
    *k = (units + per_node - 1) / per_node;
    if (l->maxgpus && (sh->gpus + l->maxgpus - 1) / l->maxgpus > *k)
        *k = (sh->gpus + l->maxgpus - 1) / l->maxgpus;
    if (*k < 2)
        *k = 2;
    struct span sp;
    lg_span_layout (sh, layout, *k, &sp);
    *d = sp.d[0];
    return true;
}

/* What one lease gives back on one node when it ends. */
struct freeing {
    int node;
    double end;               /* INFINITY: not known, or overran */
    int cores, gpus;
    int64_t memory;
};

static int by_node_end (const void *a, const void *b)
{
    const struct freeing *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The shares of every lease on the nodes marked, by node then estimated end.
 * A lease with no estimate is taken to end at unknown; one still held at or
 * after its estimate has overrun and may end at any moment: now. NULL (and
 * *count 0) when there are none or memory is short. */
static struct freeing *freeings (const struct ledger *l, const bool *mark,
                                 double now, double unknown, size_t *count)
{
    struct freeing *f = NULL;
    size_t n = 0, cap = 0;
    size_t pos = 0;
    for (const struct ledger_lease *ls; (ls = idmap_next (l->leases, &pos));) {
        double end = ls->est_end < 0 ? unknown
                     : ls->est_end > now ? ls->est_end : now;
        for (int i = 0; i < ls->nnodes; i++) {
            const struct ledger_lease_node *ln = &ls->nodes[i];
            if (!mark[ln->node])
                continue;
            if (n == cap) {
                size_t c = cap ? cap * 2 : 64;
                struct freeing *g = realloc (f, c * sizeof (*g));
                if (!g) {
                    free (f);
                    *count = 0;
                    return NULL;
                }
                f = g;
                cap = c;
            }
            f[n++] = (struct freeing) { ln->node, end, ln->ncores, ln->ngpus,
                                        ln->memory };
        }
    }
    if (n)
        qsort (f, n, sizeof (*f), by_node_end);
    *count = n;
    return f;
}

/* When node i holds d, given its leases' shares f[0..n) in order of end:
 * now when it holds it already, INFINITY when it never does by them. */
static double node_ready (const struct ledger *l, int i,
                          const struct demand *d, const struct freeing *f,
                          size_t n, double now)
{
    const struct lnode *nd = &l->nodes[i];
    struct lnode after = *nd;
    if (node_fits (nd, d))
        return now;
    for (size_t j = 0; j < n && f[j].end < INFINITY; j++) {
        after.nfree += f[j].cores;
        after.nfree_gpus += f[j].gpus;
        if (after.memory >= 0)
            after.unbudgeted += f[j].memory;
        if (node_fits (&after, d))
            return f[j].end;
    }
    return INFINITY;
}

/* node_ready for every node marked, into ready[] (by node index); false
 * when memory is short. */
static bool ready_times (const struct ledger *l, const struct demand *d,
                         const bool *mark, double now, double unknown,
                         double *ready)
{
    size_t n;
    struct freeing *f = freeings (l, mark, now, unknown, &n);
    if (!f && n)
        return false;
    for (int i = 0, j = 0; i < l->n; i++) {
        size_t from = j;
        while ((size_t) j < n && f[j].node == i)
            j++;
        if (mark[i])
            ready[i] = node_ready (l, i, d, f + from, j - from, now);
    }
    free (f);
    return true;
}

/* Choose and hold k nodes for demand d: the earliest ready (ready NULL: all
 * alike), then fewest missing, then most free cores, then the lowest. */
static void reserve_best (struct ledger *l, const struct demand *d, int k,
                          const double *ready, int *nodes)
{
    for (int got = 0; got < k; got++) {
        int best = -1;
        double bs = 0, br = 0;
        for (int i = 0; i < l->n; i++) {
            const struct lnode *nd = &l->nodes[i];
            if (nd->reserved)
                continue;
            double s = shortfall (nd, d), r = ready ? ready[i] : 0;
            if (best < 0 || r < br || (r == br && s < bs)
                || (r == br && s == bs && nd->nfree > l->nodes[best].nfree)) {
                best = i;
                bs = s;
                br = r;
            }
        }
        reserve_node (l, best);
        nodes[got] = best;
    }
}

int ledger_reserve_for_at (struct ledger *l, const struct step_shape *sh,
                           enum ledger_layout layout, double now, int *nodes,
                           int max)
{
    if (sh->local) {
        if (l->local < 0 || l->nodes[l->local].reserved || max < 1)
            return 0;
        reserve_node (l, l->local);
        nodes[0] = l->local;
        return 1;
    }
    int k;
    struct demand d;
    if (!hold_demand (l, sh, layout, &k, &d) || k > l->n - l->nresv
        || k > max)
        return 0;
    double *ready = NULL;
    bool *mark = NULL;
    if (idmap_count (l->leases)
        && (ready = malloc ((size_t) l->n * sizeof (*ready)))
        && (mark = malloc ((size_t) l->n * sizeof (*mark)))) {
        for (int i = 0; i < l->n; i++)
            mark[i] = !l->nodes[i].reserved;
        if (!ready_times (l, &d, mark, now, INFINITY, ready)) {
            free (ready);     /* short of memory: choose without them */
            ready = NULL;
        }
    }
    reserve_best (l, &d, k, ready, nodes);
    free (ready);
    free (mark);
    return k;
}

double ledger_ready_at (const struct ledger *l, const struct step_shape *sh,
                        enum ledger_layout layout, const int *nodes, int n,
                        double now)
{
    int k;
    struct demand d;
    if (n < 1 || (!sh->local && !hold_demand (l, sh, layout, &k, &d)))
        return -1;
    if (sh->local)
        d = (struct demand) { sh->cores, sh->gpus, sh->budget > 0
                                                   ? sh->budget : 0 };
    bool *mark = calloc ((size_t) l->n, sizeof (*mark));
    double *ready = malloc ((size_t) l->n * sizeof (*ready));
    double at = now;
    for (int j = 0; mark && ready && j < n; j++) {
        if (nodes[j] < 0 || nodes[j] >= l->n)
            at = INFINITY;
        else
            mark[nodes[j]] = true;
    }
    if (!mark || !ready || !ready_times (l, &d, mark, now, now, ready))
        at = INFINITY;
    for (int i = 0; i < l->n && at < INFINITY; i++)
        if (mark[i] && ready[i] > at)
            at = ready[i];
    free (mark);
    free (ready);
    return at < INFINITY ? at : -1;
}

static int by_time (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

double ledger_start_estimate (const struct ledger *l,
                              const struct step_shape *sh,
                              enum ledger_layout layout, double now)
{
    int k = 1;
    struct demand d;
    if (sh->local) {
        if (l->local < 0)
            return -1;
        d = (struct demand) { sh->cores, sh->gpus, sh->budget > 0 ? sh->budget : 0 };
    } else if (!hold_demand (l, sh, layout, &k, &d)) {
        return -1;
    }
    bool *mark = calloc ((size_t) l->n, sizeof (*mark));
    double *ready = malloc ((size_t) l->n * sizeof (*ready));
    double at = -1;
    int n = 0;
    for (int i = 0; mark && i < l->n; i++)
        mark[i] = !sh->local || i == l->local;
    /* a lease with no estimate never ends, as far as anyone can say */
    if (mark && ready && ready_times (l, &d, mark, now, INFINITY, ready)) {
        for (int i = 0; i < l->n; i++)
            if (mark[i])
                ready[n++] = ready[i];
        qsort (ready, (size_t) n, sizeof (*ready), by_time);
        if (k <= n && ready[k - 1] < INFINITY)
            at = ready[k - 1];
    }
    free (mark);
    free (ready);
    return at;
}

int ledger_reserve_nodes (struct ledger *l, const int *nodes, int n)
{
    for (int j = 0; j < n; j++)
        if (nodes[j] < 0 || nodes[j] >= l->n || l->nodes[nodes[j]].reserved)
            return -1;
    for (int j = 0; j < n; j++)
        reserve_node (l, nodes[j]);
    return 0;
}

void ledger_unreserve (struct ledger *l)
{
    for (int j = 0; j < l->nresv; j++) {
        struct lnode *nd = &l->nodes[l->resv[j]];
        nd->reserved = false;
        ns_add (&l->bucket[nd->nfree], l->resv[j]);
    }
    l->nresv = 0;
}
