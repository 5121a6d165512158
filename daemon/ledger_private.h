/* SPDX-License-Identifier: MIT */
/* What the ledger's files share and nothing else sees: the book's layout
 * (nodes, free-count buckets, reserved nodes, leases by id), the node sets
 * that index nodes by free count, what one node of a placement must hold,
 * and the calls between the files. ledger.h is the public interface. */
#ifndef BERTHD_LEDGER_PRIVATE_H
#define BERTHD_LEDGER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "idmap.h"
#include "ledger.h"
#include "ledger_bitset.h"

struct nodeset {           /* node indices: words, and a word of summary bits
                              per 64 words saying which are non-zero */
    uint64_t *w, *sum;
    int count;
};

struct lnode {
    char *name;
    uint64_t *usable, *free;   /* W words each, bit = core id */
    int ncores, nfree;
    int ngpus, nfree_gpus;
    uint64_t gpu_free;
    int64_t memory, unbudgeted;    /* -1: unknown */
    int nleases;
    bool reserved;             /* held back for a waiting request: out of
                                  the buckets, so nothing is placed here */
};

struct ledger {
    int n, W, local;
    int maxcores, mincores, maxgpus, mingpus;
    int64_t minmemory;
    struct lnode *nodes;
    uint64_t *bits;            /* usable and free sets of all nodes */
    struct nodeset *bucket;    /* [maxcores + 1], by free core count */
    uint64_t *nsbits;
    int nw, nsw;               /* words of a node set, of its summary */
    struct idmap *leases;      /* struct ledger_lease by id */
    uint64_t next_id;
    uint64_t *tmp;             /* 2 * W words of scratch */
    int *sel;                  /* n node indices of scratch */
    int *resv, nresv;          /* reserved nodes */
    uint64_t gen;              /* counts changes of what is free or when
                                  it frees (ledger_generation) */
    uint64_t explained;        /* ledger_explained */
    struct ledger_totals tot;  /* kept by lg_count_node (memory and
                                  unbudgeted over known nodes only) */
    bool memory_unknown;       /* some node's memory is unknown */
};

/* Count node i into the totals (sign +1) or out of them (-1): around every
 * change of what it holds. */
static inline void lg_count_node (struct ledger *l, int i, int sign)
{
    const struct lnode *nd = &l->nodes[i];
    struct ledger_totals *t = &l->tot;
    t->free_cores += sign * nd->nfree;
    t->free_gpus += sign * nd->nfree_gpus;
    t->resident += sign * nd->nleases;
    t->full += sign * (nd->nfree == 0);
    t->idle += sign * (nd->nleases == 0);
    if (nd->memory >= 0)
        t->unbudgeted += sign * nd->unbudgeted;
}

/* Node sets, the free-count buckets' node indices (static for the reason
 * ledger_bitset.h gives). */
static BITS_FN void ns_add (struct nodeset *s, int i)
{
    s->w[i >> 6] |= bit (i);
    s->sum[i >> 12] |= bit (i >> 6);
    s->count++;
}

static BITS_FN void ns_del (struct nodeset *s, int i)
{
    if (!(s->w[i >> 6] &= ~bit (i)))
        s->sum[i >> 12] &= ~bit (i >> 6);
    s->count--;
}

static BITS_FN int ns_next (const struct ledger *l, const struct nodeset *s,
                            int from)
{
    int wi = from >> 6;
    if (wi >= l->nw)
        return -1;
    uint64_t v = s->w[wi] & (~0ULL << (from & 63));
    if (v)
        return wi * 64 + __builtin_ctzll (v);
    int next = wi + 1;     /* next non-empty word, from the summary */
    wi = bits_next (s->sum, l->nsw, next, false);
    if (wi >= l->nw)
        return -1;
    return wi * 64 + __builtin_ctzll (s->w[wi]);
}

/* What one node of a placement must hold. */
struct demand {
    int cores, gpus;
    int64_t memory;        /* MB; 0 when not accounted */
};

static inline bool node_fits (const struct lnode *nd, const struct demand *d)
{
    return nd->nfree >= d->cores && nd->nfree_gpus >= d->gpus
           && (d->memory <= 0 || nd->memory < 0 || nd->unbudgeted >= d->memory);
}

/* A spanning placement on k nodes: up to three classes of node, each asking
 * less than the one before (block layout puts the extra tasks and GPUs on the
 * first nodes). */
struct span {
    int k, ncls;
    int count[3];
    struct demand d[3];
    int hi_cores, hi_gpus;     /* the largest demand: the template's size */
};

/* Ids area of a lease, after its node array. */
static inline int *lease_ids (struct ledger_lease *ls)
{
    return (int *) (ls->nodes + ls->nnodes);
}

/* A lease record with room for its ids (inline: placing one step calls it
 * once, and a call across files showed in bench_ledger's one-node pair). */
static inline struct ledger_lease *lg_lease_new (int nnodes, int cores,
                                                 int gpus)
{
    size_t size = sizeof (struct ledger_lease)
                  + (size_t) nnodes * sizeof (struct ledger_lease_node)
                  + (size_t) (cores + gpus) * sizeof (int);
    struct ledger_lease *ls = calloc (1, size);
    if (!ls)
        return NULL;
    ls->nodes = (struct ledger_lease_node *) (ls + 1);
    ls->nnodes = nnodes;
    ls->est_end = -1;
    return ls;
}

/* ledger.c: take what a lease's node entries name from the free sets
 * (cannot fail). */
void lg_take (struct ledger *l, struct ledger_lease *ls);

/* ledger_place.c: a placement for sh, or NULL (*oom set when memory ran
 * short); the layout of a span on k nodes; nodes with >= f free cores. */
struct ledger_lease *lg_place_one (struct ledger *l,
                                   const struct step_shape *sh);
struct ledger_lease *lg_place_span (struct ledger *l,
                                    const struct step_shape *sh,
                                    enum ledger_layout lay, bool *oom);
void lg_span_layout (const struct step_shape *sh, enum ledger_layout lay,
                     int k, struct span *sp);
int lg_count_free_ge (const struct ledger *l, int f);
/* Units (tasks of usz cores, or cores of a step that is not MPI) node i has
 * room for: its free cores, and the memory its share of sh's budget (a
 * total of `total` cores) needs. */
int lg_node_room (const struct ledger *l, int i, const struct step_shape *sh,
                  int usz, int64_t total);

/* ledger_explain.c: why sh does not fit now, into why[size]. */
void lg_explain (const struct ledger *l, const struct step_shape *sh,
                 enum ledger_layout lay, char *why, size_t size);

#endif
