/* The ledger: who holds which core ids, GPU indices and memory on each node.
 *
 * Built for allocations of many nodes: each node keeps its free core ids as a
 * bit set over the id space (so "the same ids on every node" is a word-wise
 * subset test), and nodes are indexed by their free core count in buckets,
 * each a two-level bit set of node indices. A single-node step looks at the
 * smallest bucket that can hold it (best fit) and the lowest nodes in it, not
 * at every node; leases are found by id in a hash table. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"

#define MAX_CORE_ID (1 << 20)
#define MAX_GPUS 64
#define CONTIG_LOOKS 8     /* nodes of the best bucket checked for a run */
#define TEMPLATES 4        /* id sets tried per node count for a span */
#define SPAN_TRIES 16      /* node counts tried in full for a span */
#define BEST_SHOWN 8       /* figures listed in a "best:" explanation */

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
    struct ledger_lease **slot;    /* open addressing by id */
    size_t nslots, nleases;
    uint64_t next_id;
    uint64_t *tmp;             /* 2 * W words of scratch */
    int *sel;                  /* n node indices of scratch */
    int *resv, nresv;          /* reserved nodes */
};

/* ---- bits ---- */

static inline uint64_t bit (int i)
{
    return 1ULL << (i & 63);
}

static int bits_count (const uint64_t *x, int W)
{
    int n = 0;
    for (int i = 0; i < W; i++)
        n += __builtin_popcountll (x[i]);
    return n;
}

/* First set bit of x (or of ~x when flip) at or after from; W*64 if none. */
static int bits_next (const uint64_t *x, int W, int from, bool flip)
{
    int wi = from >> 6;
    if (wi >= W)
        return W * 64;
    uint64_t v = (flip ? ~x[wi] : x[wi]) & (~0ULL << (from & 63));
    while (!v) {
        if (++wi == W)
            return W * 64;
        v = flip ? ~x[wi] : x[wi];
    }
    return wi * 64 + __builtin_ctzll (v);
}

static bool bits_subset (const uint64_t *a, const uint64_t *b, int W)
{
    for (int i = 0; i < W; i++)
        if (a[i] & ~b[i])
            return false;
    return true;
}

/* Start of the shortest run of >= c consecutive set ids (lowest on ties), or
 * -1: contiguous ids keep the rest of the node in long runs too. */
static int bits_best_run (const uint64_t *x, int W, int c)
{
    int best = -1, bestlen = INT_MAX, end = W * 64;
    for (int i = bits_next (x, W, 0, false); i < end;) {
        int j = bits_next (x, W, i, true);
        if (j - i >= c && j - i < bestlen) {
            best = i;
            bestlen = j - i;
            if (bestlen == c)
                break;
        }
        i = bits_next (x, W, j, false);
    }
    return best;
}

/* c ids from x: a contiguous run when there is one, else the lowest. */
static void bits_choose (const uint64_t *x, int W, int c, int *ids)
{
    int start = bits_best_run (x, W, c);
    if (start >= 0) {
        for (int i = 0; i < c; i++)
            ids[i] = start + i;
        return;
    }
    for (int i = 0, id = bits_next (x, W, 0, false); i < c;
         id = bits_next (x, W, id + 1, false))
        ids[i++] = id;
}

/* ---- node sets ---- */

static void ns_add (struct nodeset *s, int i)
{
    s->w[i >> 6] |= bit (i);
    s->sum[i >> 12] |= bit (i >> 6);
    s->count++;
}

static void ns_del (struct nodeset *s, int i)
{
    if (!(s->w[i >> 6] &= ~bit (i)))
        s->sum[i >> 12] &= ~bit (i >> 6);
    s->count--;
}

static int ns_next (const struct ledger *l, const struct nodeset *s, int from)
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

static void set_free (struct ledger *l, int i, int nfree)
{
    struct lnode *nd = &l->nodes[i];
    if (!nd->reserved)
        ns_del (&l->bucket[nd->nfree], i);
    nd->nfree = nfree;
    if (!nd->reserved)
        ns_add (&l->bucket[nfree], i);
}

/* ---- lease table ---- */

static size_t slot_of (const struct ledger *l, uint64_t id)
{
    return (size_t) ((id * 0x9E3779B97F4A7C15ULL) >> 17) & (l->nslots - 1);
}

static int table_put (struct ledger *l, struct ledger_lease *ls)
{
    if ((l->nleases + 1) * 2 > l->nslots) {
        size_t n = l->nslots * 2;
        struct ledger_lease **s = calloc (n, sizeof (*s));
        if (!s)
            return -1;
        struct ledger_lease **old = l->slot;
        size_t oldn = l->nslots;
        l->slot = s;
        l->nslots = n;
        for (size_t i = 0; i < oldn; i++) {
            if (!old[i])
                continue;
            size_t j = slot_of (l, old[i]->id);
            while (s[j])
                j = (j + 1) & (n - 1);
            s[j] = old[i];
        }
        free (old);
    }
    size_t j = slot_of (l, ls->id);
    while (l->slot[j])
        j = (j + 1) & (l->nslots - 1);
    l->slot[j] = ls;
    l->nleases++;
    return 0;
}

static size_t table_find (const struct ledger *l, uint64_t id)
{
    for (size_t j = slot_of (l, id); l->slot[j]; j = (j + 1) & (l->nslots - 1))
        if (l->slot[j]->id == id)
            return j;
    return SIZE_MAX;
}

/* Delete by shifting later members of the probe run back into the hole. */
static void table_del (struct ledger *l, size_t hole)
{
    size_t mask = l->nslots - 1;
    l->slot[hole] = NULL;
    for (size_t j = (hole + 1) & mask; l->slot[j]; j = (j + 1) & mask) {
        size_t home = slot_of (l, l->slot[j]->id);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            l->slot[hole] = l->slot[j];
            l->slot[j] = NULL;
            hole = j;
        }
    }
    l->nleases--;
}

/* ---- creation ---- */

void ledger_destroy (struct ledger *l)
{
    if (!l)
        return;
    int saved = errno;
    for (size_t i = 0; i < l->nslots; i++)
        free (l->slot[i]);
    free (l->slot);
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
    l->nslots = 64;
    l->nodes = calloc (nnodes, sizeof (*l->nodes));
    l->bits = calloc ((size_t) nnodes * 2 * l->W, sizeof (uint64_t));
    l->slot = calloc (l->nslots, sizeof (*l->slot));
    l->tmp = calloc (2 * l->W, sizeof (uint64_t));
    l->sel = calloc (nnodes, sizeof (int));
    l->resv = calloc (nnodes, sizeof (int));
    if (!l->nodes || !l->bits || !l->slot || !l->tmp || !l->sel || !l->resv)
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
    for (int i = 0; i < nnodes; i++)
        ns_add (&l->bucket[l->nodes[i].nfree], i);
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

int ledger_lease_name (uint64_t id, char *buf, size_t size)
{
    return snprintf (buf, size, "L%llu", (unsigned long long) id);
}

/* ---- placing ---- */

/* What one node of a placement must hold. */
struct demand {
    int cores, gpus;
    int64_t memory;        /* MB; 0 when not accounted */
};

static bool node_fits (const struct lnode *nd, const struct demand *d)
{
    return nd->nfree >= d->cores && nd->nfree_gpus >= d->gpus
           && (d->memory <= 0 || nd->memory < 0 || nd->unbudgeted >= d->memory);
}

static struct ledger_lease *lease_new (int nnodes, int cores, int gpus)
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

/* Ids area of a lease, after its node array. */
static int *lease_ids (struct ledger_lease *ls)
{
    return (int *) (ls->nodes + ls->nnodes);
}

/* Take what the lease's node entries name; cannot fail. */
static void take (struct ledger *l, struct ledger_lease *ls)
{
    for (int i = 0; i < ls->nnodes; i++) {
        struct ledger_lease_node *ln = &ls->nodes[i];
        struct lnode *nd = &l->nodes[ln->node];
        for (int j = 0; j < ln->ncores; j++)
            nd->free[ln->cores[j] >> 6] &= ~bit (ln->cores[j]);
        for (int j = 0; j < ln->ngpus; j++)
            nd->gpu_free &= ~bit (ln->gpus[j]);
        nd->nfree_gpus -= ln->ngpus;
        if (nd->memory >= 0)
            nd->unbudgeted -= ln->memory;
        nd->nleases++;
        set_free (l, ln->node, nd->nfree - ln->ncores);
    }
}

static void give_back (struct ledger *l, const struct ledger_lease *ls)
{
    for (int i = 0; i < ls->nnodes; i++) {
        const struct ledger_lease_node *ln = &ls->nodes[i];
        struct lnode *nd = &l->nodes[ln->node];
        for (int j = 0; j < ln->ncores; j++)
            nd->free[ln->cores[j] >> 6] |= bit (ln->cores[j]);
        for (int j = 0; j < ln->ngpus; j++)
            nd->gpu_free |= bit (ln->gpus[j]);
        nd->nfree_gpus += ln->ngpus;
        if (nd->memory >= 0)
            nd->unbudgeted += ln->memory;
        nd->nleases--;
        set_free (l, ln->node, nd->nfree + ln->ncores);
    }
}

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

static struct ledger_lease *place_one (struct ledger *l,
                                       const struct step_shape *sh)
{
    struct demand d = { sh->cores, sh->gpus, sh->budget > 0 ? sh->budget : 0 };
    int i = pick_node (l, &d, sh->local);
    if (i < 0)
        return NULL;
    struct ledger_lease *ls = lease_new (1, d.cores, d.gpus);
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

/* A spanning placement on k nodes: up to three classes of node, each asking
 * less than the one before (block layout puts the extra tasks and GPUs on the
 * first nodes). */
struct span {
    int k, ncls;
    int count[3];
    struct demand d[3];
    int hi_cores, hi_gpus;     /* the largest demand: the template's size */
};

static void span_layout (const struct step_shape *sh, enum ledger_layout lay,
                         int k, struct span *sp)
{
    int units = sh->mpi ? sh->ntasks : sh->cores;
    int usz = sh->mpi ? sh->cpus_per_task : 1;
    int t_hi = (units + k - 1) / k, g_hi = (sh->gpus + k - 1) / k;
    int t_lo = t_hi, g_lo = g_hi, h_t = k, h_g = k;
    if (lay == LEDGER_CPU_BINDING) {
        t_lo = units / k;
        g_lo = sh->gpus / k;
        h_t = units % k ? units % k : k;
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
static int count_free_ge (const struct ledger *l, int f)
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
                       const int *ids, const int *gids)
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
                    || !bits_subset (mask[c], nd->free, l->W)
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
                                        const int *ids, const int *gids)
{
    int cores = 0, gpus = 0;
    for (int c = 0; c < sp->ncls; c++) {
        cores += sp->count[c] * sp->d[c].cores;
        gpus += sp->count[c] * sp->d[c].gpus;
    }
    struct ledger_lease *ls = lease_new (sp->k, cores, gpus);
    if (!ls)
        return NULL;
    int *p = lease_ids (ls), pos = 0;
    for (int c = 0; c < sp->ncls; c++) {
        for (int j = 0; j < sp->count[c]; j++, pos++) {
            struct ledger_lease_node *ln = &ls->nodes[pos];
            ln->node = l->sel[pos];
            ln->cores = p;
            ln->ncores = sp->d[c].cores;
            memcpy (p, ids, ln->ncores * sizeof (int));
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
                                      bool *oom)
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
            if (span_fill (l, sp, ids, gids)
                && !(ls = span_lease (l, sp, ids, gids)))
                *oom = true;
        }
    }
    free (ids);
    return ls;
}

static struct ledger_lease *place_span (struct ledger *l,
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
    for (int k = kmin, tries = 0; k <= kmax && tries < SPAN_TRIES; k++) {
        struct span sp;
        span_layout (sh, lay, k, &sp);
        if (sp.hi_cores > l->maxcores || sp.hi_gpus > l->maxgpus
            || count_free_ge (l, sp.d[sp.ncls - 1].cores) < k
            || count_free_ge (l, sp.hi_cores) < sp.count[0])
            continue;
        tries++;
        struct ledger_lease *ls = span_try (l, &sp, oom);
        if (ls || *oom)
            return ls;
    }
    return NULL;
}

/* ---- holding nodes for a waiting request ---- */

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
    span_layout (sh, layout, *k, &sp);
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
    for (size_t j = 0; j < l->nslots; j++) {
        const struct ledger_lease *ls = l->slot[j];
        if (!ls)
            continue;
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

static int reserve (struct ledger *l, const struct step_shape *sh,
                    enum ledger_layout layout, bool estimates, double now,
                    int *nodes, int max)
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
    if (estimates && l->nleases
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

int ledger_reserve_for (struct ledger *l, const struct step_shape *sh,
                        enum ledger_layout layout, int *nodes, int max)
{
    return reserve (l, sh, layout, false, 0, nodes, max);
}

int ledger_reserve_for_at (struct ledger *l, const struct step_shape *sh,
                           enum ledger_layout layout, double now, int *nodes,
                           int max)
{
    return reserve (l, sh, layout, true, now, nodes, max);
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

int ledger_lease_set_end (struct ledger *l, uint64_t id, double end)
{
    size_t j = table_find (l, id);
    if (j == SIZE_MAX)
        return -1;
    l->slot[j]->est_end = end < 0 ? -1 : end;
    return 0;
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

/* ---- explaining a wait ---- */

static const char *plural (int n)
{
    return n == 1 ? "" : "s";
}

/* Append "best: a, b, ..." with the top k of a node figure. */
static void best_list (const struct ledger *l, int k, int what, char *buf,
                       size_t size)
{
    int64_t top[BEST_SHOWN];
    int n = 0, want = k < BEST_SHOWN ? k : BEST_SHOWN;
    for (int i = 0; i < l->n; i++) {
        const struct lnode *nd = &l->nodes[i];
        int64_t v = what == 0 ? nd->nfree : what == 1 ? nd->nfree_gpus
                                                      : nd->unbudgeted;
        int j = n < want ? n++ : want;
        while (j > 0 && top[j - 1] < v) {
            if (j < want)
                top[j] = top[j - 1];
            j--;
        }
        if (j < want)
            top[j] = v;
    }
    size_t len = strlen (buf);
    len += snprintf (buf + len, len < size ? size - len : 0, " (best: ");
    for (int j = 0; j < n; j++)
        len += snprintf (buf + len, len < size ? size - len : 0, "%s%lld",
                         j ? ", " : "", (long long) top[j]);
    snprintf (buf + len, len < size ? size - len : 0, "%s)",
              k > BEST_SHOWN ? ", ..." : "");
}

static int count_fitting (const struct ledger *l, const struct demand *d)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += node_fits (&l->nodes[i], d);
    return n;
}

/* Why the fewest-node layout does not fit, naming the first figure short. */
static void explain (const struct ledger *l, const struct step_shape *sh,
                     enum ledger_layout lay, char *why, size_t size)
{
    if (!why || !size)
        return;
    if (sh->local) {
        if (l->local < 0) {
            snprintf (why, size, "no node for local steps: the daemon does "
                      "not run on a node of the allocation");
            return;
        }
        const struct lnode *nd = &l->nodes[l->local];
        snprintf (why, size, "the daemon's node %s has %d free core%s, %d "
                  "free GPU%s, %lld MB unbudgeted; needs %d core%s, %d GPU%s, "
                  "%lld MB", nd->name, nd->nfree, plural (nd->nfree),
                  nd->nfree_gpus, plural (nd->nfree_gpus),
                  (long long) nd->unbudgeted, sh->cores, plural (sh->cores),
                  sh->gpus, plural (sh->gpus),
                  (long long) (sh->budget > 0 ? sh->budget : 0));
        return;
    }
    /* A step that may span is explained at the fewest nodes with enough
     * free cores, so that the reason names the next obstacle. */
    struct span sp;
    span_layout (sh, lay, 1, &sp);
    if (sh->may_span) {
        int units = sh->mpi ? sh->ntasks : sh->cores;
        int kmax = units < l->n ? units : l->n, first = 0;
        for (int k = 1; k <= kmax && k <= 64; k++) {
            struct span t;
            span_layout (sh, lay, k, &t);
            if (t.hi_cores > l->maxcores)
                continue;
            if (!first)
                first = k;
            if (count_free_ge (l, t.d[t.ncls - 1].cores) >= k
                && count_free_ge (l, t.hi_cores) >= t.count[0]) {
                first = k;
                break;
            }
        }
        if (first)
            span_layout (sh, lay, first, &sp);
    }
    char nodes[32];
    if (sp.k == 1)
        snprintf (nodes, sizeof (nodes), "no node");
    else
        snprintf (nodes, sizeof (nodes), "no %d nodes", sp.k);
    struct demand d = sp.d[0];
    struct demand cores_only = { d.cores, 0, 0 }, no_mem = { d.cores, d.gpus,
                                                             0 };
    if (count_fitting (l, &cores_only) < sp.count[0]
        || count_free_ge (l, sp.d[sp.ncls - 1].cores) < sp.k) {
        snprintf (why, size, "%s with %d free core%s", nodes, d.cores,
                  plural (d.cores));
        best_list (l, sp.k, 0, why, size);
    } else if (count_fitting (l, &no_mem) < sp.count[0]) {
        snprintf (why, size, "%s with %d free core%s and %d free GPU%s",
                  nodes, d.cores, plural (d.cores), d.gpus, plural (d.gpus));
        best_list (l, sp.k, 1, why, size);
    } else if (count_fitting (l, &d) < sp.count[0]) {
        snprintf (why, size, "%s with %d free core%s and %lld MB of memory "
                  "unbudgeted", nodes, d.cores, plural (d.cores),
                  (long long) d.memory);
        best_list (l, sp.k, 2, why, size);
    } else {
        snprintf (why, size, "%s with the same %d free core id%s%s", nodes,
                  d.cores, plural (d.cores), d.gpus ? " and GPU indices" : "");
    }
}

/* ---- acquire and release ---- */

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
        ls = place_one (l, sh);
    if (!ls && sh->may_span && !sh->local && l->n > 1)
        ls = place_span (l, sh, layout, &oom);
    if (!ls && oom)
        return errprintf (err, "out of memory placing a step");
    if (!ls) {
        explain (l, sh, layout, why, whysize);
        return 1;
    }
    ls->id = l->next_id;
    ls->shape = *sh;
    ls->layout = layout;
    if (table_put (l, ls) < 0) {
        free (ls);
        return errprintf (err, "out of memory recording a lease");
    }
    l->next_id++;
    take (l, ls);
    *id = ls->id;
    if (why && whysize)
        why[0] = '\0';
    return 0;
}

int ledger_release (struct ledger *l, uint64_t id, berth_error_t *err)
{
    size_t j = table_find (l, id);
    if (j == SIZE_MAX) {
        char name[32];
        ledger_lease_name (id, name, sizeof (name));
        return errprintf_code (err, "not_found", "no lease %s: it was never "
                               "granted or is already released", name);
    }
    struct ledger_lease *ls = l->slot[j];
    give_back (l, ls);
    table_del (l, j);
    free (ls);
    return 0;
}

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
    if (table_find (l, w->id) != SIZE_MAX)
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
    struct ledger_lease *ls = lease_new (w->nnodes, cores, gpus);
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
    if (table_put (l, ls) < 0) {
        free (ls);
        return errprintf (err, "out of memory restoring a lease");
    }
    take (l, ls);
    if (l->next_id <= w->id)
        l->next_id = w->id + 1;
    return 0;
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
    size_t j = table_find (l, id);
    return j == SIZE_MAX ? NULL : l->slot[j];
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
    const struct ledger_lease **a = malloc ((l->nleases + 1) * sizeof (*a));
    if (!a)
        return errprintf (err, "out of memory listing leases");
    int n = 0;
    for (size_t i = 0; i < l->nslots; i++)
        if (l->slot[i])
            a[n++] = l->slot[i];
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

/* ---- invariants ---- */

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
    for (size_t s = 0; s < l->nslots; s++) {
        const struct ledger_lease *ls = l->slot[s];
        if (!ls)
            continue;
        found++;
        if (table_find (l, ls->id) != s) {
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
    if (found != l->nleases) {
        errprintf (err, "%zu leases found, %zu counted", found, l->nleases);
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
    rc = 0;
done:
    free (held);
    free (gheld);
    free (mem);
    free (nleases);
    return rc;
}
