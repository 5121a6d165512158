/* SPDX-License-Identifier: MIT */
/* The wait queue. Entries are kept sorted (priority, then arrival) in an
 * array, found by ticket through a map and by place through a binary search.
 *
 * A round costs what the event can change, not the queue's length: a round
 * that finds the ledger as the last one left it (its generation), and no
 * entry due to be held by its wait since, tries only the entries added
 * since. The others cannot start: each failed the last round, and a
 * placement that failed still fails on a subset of the same free
 * resources, under the same held nodes, later (EASY backfill only gets
 * harder as its window closes). Should such a round grant anything, a full
 * round follows, so that every reason is fresh. Reasons are composed when
 * asked for (an entry's own failure, its place, the held entry), never for
 * the whole queue per round. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "waitqueue.h"

struct entry {
    uint64_t ticket, owner;
    struct step_shape shape;
    enum ledger_layout layout;
    char *label;
    int priority;
    double added;
    double duration;          /* < 0: not stated */
    char why[256];            /* from the last try */
    uint64_t why_gen;         /* the ledger's generation it was true of */
    bool why_fixed;           /* it cannot be placed at all: stays true */
    bool why_due;             /* tried and did not fit, not explained yet */
    char reason[320];         /* why, with its place in the queue (built
                                 when asked for) */
    bool fresh;               /* added since the last round */
};

/* Entries of the same needs (shape, layout, stated duration: backfill
 * depends on it) are one class. What a full round learnt does not fit is
 * kept by class: another entry of it, reached while neither the ledger nor
 * the hold has changed, does not fit either and is not tried (an
 * ensemble's thousands of waiters have a few shapes, so a release tries a
 * few, not all of them). Classes are kept until the queue empties. */
struct wclass {
    struct step_shape shape;
    enum ledger_layout layout;
    double duration;
    uint64_t epoch;           /* a misfit of the round whose epoch this is */
};

struct waitqueue {
    struct ledger *ledger;
    struct waitqueue_config cfg;
    /* The entries in queue order, and beside them what a round reads of
     * each, densely: a round walks these, touching an entry only when its
     * class is tried (one heap block an entry: a cache miss each). */
    struct entry **e;
    uint32_t *cls;            /* its class */
    int *over;                /* times it was overtaken */
    double *added;            /* when it arrived (as e->added) */
    int n, cap;
    uint64_t next_ticket;
    /* The nodes held for one entry, kept from round to round while it
     * waits, so that they drain for it instead of starting over. */
    uint64_t resv_ticket;     /* 0: none */
    int *resv, nresv;
    struct idmap *by_ticket;
    /* What the last round left, for the next to know what can change. */
    bool rounded;             /* a full round ran since the queue changed
                                 in a way only a full round sees */
    uint64_t gen;             /* the ledger's generation after it */
    const struct entry *held; /* its held entry; NULL: none */
    bool held_stop;           /* nothing after the held entry was tried */
    double hold_due;          /* the earliest time an entry not held then
                                 is due to be held by its wait */
    double round_at;          /* its now (the held entry's reason) */
    struct entry **fresh;     /* entries added since, in no order */
    int nfresh, capfresh;
    struct wclass *classes;
    int nclasses, capclasses;
    int *ctab, ctabsize;      /* class ids by hash (open addressing; -1) */
    uint64_t misfit_epoch;    /* every epoch a round has used */
};

struct waitqueue *waitqueue_create (struct ledger *l,
                                    const struct waitqueue_config *cfg,
                                    berth_error_t *err)
{
    struct waitqueue *q = calloc (1, sizeof (*q));
    if (!q) {
        errprintf (err, "out of memory creating the wait queue");
        return NULL;
    }
    q->ledger = l;
    q->cfg = cfg ? *cfg : (struct waitqueue_config) {
        WAITQUEUE_DEFAULT_OVERTAKES, WAITQUEUE_DEFAULT_MAX_WAIT, false };
    if (q->cfg.max_overtakes < 0)
        q->cfg.max_overtakes = 0;
    q->next_ticket = 1;
    q->hold_due = INFINITY;
    if (!(q->resv = malloc ((size_t) ledger_nnodes (l) * sizeof (int)))
        || !(q->by_ticket = idmap_create ())) {
        free (q->resv);
        free (q);
        errprintf (err, "out of memory creating the wait queue");
        return NULL;
    }
    return q;
}

static void entry_free (struct entry *e)
{
    if (e) {
        free (e->label);
        free (e);
    }
}

void waitqueue_destroy (struct waitqueue *q)
{
    if (!q)
        return;
    for (int i = 0; i < q->n; i++)
        entry_free (q->e[i]);
    free (q->e);
    free (q->cls);
    free (q->over);
    free (q->added);
    free (q->resv);
    free (q->fresh);
    free (q->classes);
    free (q->ctab);
    idmap_destroy (q->by_ticket);
    free (q);
}

static bool before (const struct entry *a, const struct entry *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->added != b->added ? a->added < b->added : a->ticket < b->ticket;
}

/* The place of e (in the queue): the first entry not before it. */
static int index_of (const struct waitqueue *q, const struct entry *e)
{
    int lo = 0, hi = q->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (before (q->e[mid], e))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool same_needs (const struct step_shape *a, const struct step_shape *b)
{
    return a->mpi == b->mpi && a->ntasks == b->ntasks
           && a->cpus_per_task == b->cpus_per_task && a->cores == b->cores
           && a->gpus == b->gpus && a->memory == b->memory
           && a->budget == b->budget && a->may_span == b->may_span
           && a->local == b->local;
}

static uint64_t class_hash (const struct step_shape *sh, enum ledger_layout lay,
                            double duration)
{
    uint64_t h = (uint64_t) sh->cores * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t) sh->ntasks * 0xc2b2ae3d27d4eb4full + (uint64_t) sh->gpus;
    h ^= (uint64_t) sh->memory * 31 + (uint64_t) sh->budget;
    uint64_t dur;
    memcpy (&dur, &duration, sizeof (dur));       /* its bits: -1 too */
    h ^= dur + (uint64_t) lay * 7 + (uint64_t) sh->cpus_per_task * 131;
    h ^= h >> 29;
    return h * 0xbf58476d1ce4e5b9ull;
}

/* Rebuild the class table at size (a power of two). */
static int class_table (struct waitqueue *q, int size)
{
    int *t = malloc ((size_t) size * sizeof (int));
    if (!t)
        return -1;
    for (int k = 0; k < size; k++)
        t[k] = -1;
    for (int c = 0; c < q->nclasses; c++) {
        const struct wclass *w = &q->classes[c];
        size_t k = class_hash (&w->shape, w->layout, w->duration) >> 32;
        while (t[k & (size_t) (size - 1)] >= 0)
            k++;
        t[k & (size_t) (size - 1)] = c;
    }
    free (q->ctab);
    q->ctab = t;
    q->ctabsize = size;
    return 0;
}

/* The class of these needs, made when new; -1 when memory is short. */
static int class_of (struct waitqueue *q, const struct step_shape *sh,
                     enum ledger_layout lay, double duration)
{
    if (q->nclasses * 2 >= q->ctabsize
        && class_table (q, q->ctabsize ? q->ctabsize * 2 : 64) < 0)
        return -1;
    size_t mask = (size_t) q->ctabsize - 1;
    size_t k = class_hash (sh, lay, duration) >> 32;
    for (;; k++) {
        int c = q->ctab[k & mask];
        if (c < 0)
            break;
        const struct wclass *w = &q->classes[c];
        if (w->layout == lay && w->duration == duration
            && same_needs (&w->shape, sh))
            return c;
    }
    if (q->nclasses == q->capclasses) {
        int cap = q->capclasses ? q->capclasses * 2 : 16;
        struct wclass *v = realloc (q->classes, (size_t) cap * sizeof (*v));
        if (!v)
            return -1;
        q->classes = v;
        q->capclasses = cap;
    }
    int c = q->nclasses++;
    q->classes[c] = (struct wclass) { *sh, lay, duration, 0 };
    q->ctab[k & mask] = c;
    return c;
}

/* Room for one more entry in the queue's arrays. */
static int grow (struct waitqueue *q)
{
    if (q->n < q->cap)
        return 0;
    size_t cap = q->cap ? (size_t) q->cap * 2 : 16;
    struct entry **e = realloc (q->e, cap * sizeof (*e));
    if (e)
        q->e = e;
    uint32_t *cls = e ? realloc (q->cls, cap * sizeof (*cls)) : NULL;
    if (cls)
        q->cls = cls;
    int *over = cls ? realloc (q->over, cap * sizeof (*over)) : NULL;
    if (over)
        q->over = over;
    double *added = over ? realloc (q->added, cap * sizeof (*added)) : NULL;
    if (!added)
        return -1;     /* the arrays that grew are kept: cap says the least */
    q->added = added;
    q->cap = (int) cap;
    return 0;
}

int waitqueue_add (struct waitqueue *q, const struct waitqueue_request *r,
                   double now, uint64_t *ticket, berth_error_t *err)
{
    if (q->nfresh == q->capfresh) {
        int cap = q->capfresh ? q->capfresh * 2 : 16;
        struct entry **f = realloc (q->fresh, cap * sizeof (*f));
        if (!f)
            return errprintf (err, "out of memory queueing a request");
        q->fresh = f;
        q->capfresh = cap;
    }
    if (grow (q) < 0)
        return errprintf (err, "out of memory queueing a request");
    double dur = r->duration > 0 ? r->duration : -1;
    int cls = class_of (q, &r->shape, r->layout, dur);
    struct entry *e = cls < 0 ? NULL : calloc (1, sizeof (*e));
    if (!e || (r->label && !(e->label = strdup (r->label)))
        || idmap_put (q->by_ticket, q->next_ticket, e) < 0) {
        entry_free (e);
        return errprintf (err, "out of memory queueing a request");
    }
    e->ticket = q->next_ticket++;
    e->owner = r->owner;
    e->shape = r->shape;
    e->layout = r->layout;
    e->priority = r->priority;
    e->added = r->since > 0 && r->since < now ? r->since : now;
    e->duration = dur;
    if (r->why && *r->why)
        snprintf (e->why, sizeof (e->why), "%s", r->why);
    int i = index_of (q, e);
    size_t after = (size_t) (q->n - i);
    memmove (q->e + i + 1, q->e + i, after * sizeof (*q->e));
    memmove (q->cls + i + 1, q->cls + i, after * sizeof (*q->cls));
    memmove (q->over + i + 1, q->over + i, after * sizeof (*q->over));
    memmove (q->added + i + 1, q->added + i, after * sizeof (*q->added));
    q->e[i] = e;
    q->cls[i] = (uint32_t) cls;
    q->over[i] = 0;
    q->added[i] = e->added;
    q->n++;
    e->fresh = true;
    q->fresh[q->nfresh++] = e;
    if (q->cfg.max_wait >= 0 && e->added + q->cfg.max_wait < q->hold_due)
        q->hold_due = e->added + q->cfg.max_wait;
    *ticket = e->ticket;
    return 0;
}

/* Out of the queue (and of the fresh ones), freed. */
static void remove_at (struct waitqueue *q, int i)
{
    struct entry *e = q->e[i];
    size_t after = (size_t) (q->n - i - 1);
    memmove (q->e + i, q->e + i + 1, after * sizeof (*q->e));
    memmove (q->cls + i, q->cls + i + 1, after * sizeof (*q->cls));
    memmove (q->over + i, q->over + i + 1, after * sizeof (*q->over));
    memmove (q->added + i, q->added + i + 1, after * sizeof (*q->added));
    q->n--;
    if (!q->n) {              /* classes are kept while anyone waits */
        q->nclasses = 0;
        for (int k = 0; k < q->ctabsize; k++)
            q->ctab[k] = -1;
    }
    idmap_remove (q->by_ticket, e->ticket);
    if (e->fresh)
        for (int k = 0; k < q->nfresh; k++)
            if (q->fresh[k] == e) {
                q->fresh[k] = q->fresh[--q->nfresh];
                break;
            }
    if (q->held == e) {
        /* what was held for it goes to whoever is next due */
        q->held = NULL;
        q->rounded = false;
    }
    entry_free (e);
}

int waitqueue_cancel (struct waitqueue *q, uint64_t ticket,
                      berth_error_t *err)
{
    struct entry *e = idmap_get (q->by_ticket, ticket);
    if (!e)
        return errprintf_code (err, "not_found", "no waiting request #%llu: it "
                               "was granted, timed out or cancelled already",
                               (unsigned long long) ticket);
    remove_at (q, index_of (q, e));
    return 0;
}

/* Overtaken often enough, or waited long enough: hold what frees for it. */
static bool is_held_for (const struct waitqueue *q, int i, double now)
{
    return q->over[i] >= q->cfg.max_overtakes
           || (q->cfg.max_wait >= 0 && now - q->added[i] >= q->cfg.max_wait);
}

static void held_text (const struct waitqueue *q, int i, double now,
                       char *buf, size_t size)
{
    if (q->over[i] >= q->cfg.max_overtakes)
        snprintf (buf, size, "overtaken %d of %d times", q->over[i],
                  q->cfg.max_overtakes);
    else
        snprintf (buf, size, "waited %.0fs of %.0fs", now - q->added[i],
                  q->cfg.max_wait);
}

/* Hold resources for e, the first entry due under the starvation bound that
 * does not fit: its nodes drain for it while the rest of the allocation is
 * still used (strict order holds everything). True when nothing more may
 * start this round. */
static bool hold_for (struct waitqueue *q, const struct entry *e, double now)
{
    if (q->cfg.max_overtakes == 0)
        return true;
    if (q->resv_ticket == e->ticket
        && ledger_reserve_nodes (q->ledger, q->resv, q->nresv) == 0)
        return false;
    q->resv_ticket = e->ticket;
    q->nresv = ledger_reserve_for_at (q->ledger, &e->shape, e->layout, now,
                                      q->resv, ledger_nnodes (q->ledger));
    return q->nresv == 0;
}

/* One round's state, as the entries are tried in queue order. */
struct round {
    double now;
    const struct entry *held;
    bool stop;
    double ready;             /* when the held nodes hold it; -2: not asked */
    bool regroup;             /* another entry became due to be held while
                                 one was: the next round decides afresh */
    struct waitqueue_result *v;
    int n;
    bool misfits;             /* classes that failed are not tried again;
                                 false: every entry tried (the reference) */
    uint64_t epoch;           /* bumped whenever the misfits stop holding */
    uint64_t misfit_gen;      /* the ledger generation they are true of */
    const struct entry *misfit_held;   /* and the hold */
};

/* True when the class of the entry at i already failed under the same
 * ledger and hold; forgets what no longer holds. */
static bool known_misfit (struct waitqueue *q, struct round *r, int i)
{
    if (!r->misfits)
        return false;
    uint64_t gen = ledger_generation (q->ledger);
    if (r->misfit_gen != gen || r->misfit_held != r->held) {
        r->epoch = ++q->misfit_epoch;
        r->misfit_gen = gen;
        r->misfit_held = r->held;
    }
    return q->classes[q->cls[i]].epoch == r->epoch;
}

static void note_misfit (const struct waitqueue *q, struct round *r, int i)
{
    if (r->misfits && r->misfit_gen == ledger_generation (q->ledger)
        && r->misfit_held == r->held)
        q->classes[q->cls[i]].epoch = r->epoch;
}

/* Try the entry at index i, as the round has reached it. True when it was
 * granted (and so removed: the entry now at i is the next). */
static bool try_at (struct waitqueue *q, int i, struct round *r)
{
    struct entry *e = q->e[i];
    uint64_t lease;
    berth_error_t lerr;
    /* A request that does not fit is explained when someone asks why
     * (reason_of), not here: an explanation scans every node, and a round
     * tries every waiter. */
    /* full_round passes over a known misfit before it gets here, and a
     * fresh round keeps none: every entry that comes here is tried */
    int rc = ledger_acquire (q->ledger, &e->shape, e->layout, &lease, NULL, 0,
                             &lerr);
    e->why_fixed = rc < 0;
    e->why_due = rc == 1;
    if (rc == 1 && !e->why[0])
        snprintf (e->why, sizeof (e->why), "does not fit yet");
    if (rc < 0) {
        snprintf (e->why, sizeof (e->why), "cannot be placed: %.200s", lerr.text);
        return false;
    }
    if (rc == 1 && r->held && e->duration >= 0) {
        /* EASY backfill: it may use the held nodes if it is expected to
         * give them back before the held entry could start there. */
        if (r->ready == -2)
            r->ready = ledger_ready_at (q->ledger, &r->held->shape, r->held->layout,
                                        q->resv, q->nresv, r->now);
        if (r->ready >= 0 && r->now + e->duration <= r->ready) {
            ledger_unreserve (q->ledger);
            rc = ledger_acquire (q->ledger, &e->shape, e->layout, &lease, NULL, 0,
                                 &lerr);
            if (ledger_reserve_nodes (q->ledger, q->resv, q->nresv) < 0)
                r->stop = true;      /* cannot happen: all were released */
            if (rc < 0) {
                snprintf (e->why, sizeof (e->why), "cannot be placed: %.200s",
                          lerr.text);
                return false;
            }
        }
    }
    if (rc == 1) {
        note_misfit (q, r, i);
        if (!r->held && is_held_for (q, i, r->now)) {
            r->held = e;
            r->stop = hold_for (q, e, r->now);
        }
        return false;
    }
    /* Granted: everything waiting before it was overtaken, except the
     * entry resources are held for (none of them were taken). */
    for (int j = 0; j < i; j++) {
        if (q->e[j] == r->held)
            continue;
        if (q->over[j]++ + 1 >= q->cfg.max_overtakes) {
            if (!r->held) {
                r->held = q->e[j];
                r->stop = hold_for (q, r->held, r->now);
            } else
                r->regroup = true;
        }
    }
    if (e->duration >= 0)
        (void) ledger_lease_set_end (q->ledger, lease, r->now + e->duration);
    r->v[r->n++] = (struct waitqueue_result) { e->ticket, e->owner, lease,
                                               r->now - e->added };
    remove_at (q, i);
    return true;
}

static void round_end (struct waitqueue *q, const struct round *r)
{
    ledger_unreserve (q->ledger);
    for (int k = 0; k < q->nfresh; k++)
        q->fresh[k]->fresh = false;
    q->nfresh = 0;
    q->held = r->held;
    q->held_stop = r->stop;
    q->round_at = r->now;
    q->gen = ledger_generation (q->ledger);
    q->rounded = !r->regroup;
}

static void full_round (struct waitqueue *q, struct round *r)
{
    r->held = NULL;
    r->stop = r->regroup = false;
    r->ready = -2;
    /* the reference (full_rounds) tries every entry */
    r->misfits = !q->cfg.full_rounds;
    r->epoch = ++q->misfit_epoch;
    r->misfit_gen = ledger_generation (q->ledger);
    r->misfit_held = NULL;
    for (int i = 0; i < q->n && !r->stop;) {
        /* a known misfit is passed over on the dense arrays alone: only
         * whether it is due to be held is asked */
        if (known_misfit (q, r, i)) {
            if (!r->held && is_held_for (q, i, r->now)) {
                r->held = q->e[i];
                r->stop = hold_for (q, r->held, r->now);
            }
            i++;
        }
        else if (!try_at (q, i, r))
            i++;
    }
    double due = INFINITY;
    if (q->cfg.max_wait >= 0)
        for (int i = 0; i < q->n; i++)
            if (!is_held_for (q, i, r->now)
                && q->added[i] + q->cfg.max_wait < due)
                due = q->added[i] + q->cfg.max_wait;
    q->hold_due = due;
    round_end (q, r);
}

static int fresh_order (const void *a, const void *b)
{
    const struct entry *x = *(struct entry *const *) a, *y = *(struct entry *const *) b;
    return before (x, y) ? -1 : before (y, x);
}

/* Only the entries added since the last round, each at its place, under
 * what that round held. Returns how many were granted. */
static int fresh_round (struct waitqueue *q, struct round *r)
{
    r->held = q->held;
    r->stop = r->regroup = false;
    r->ready = -2;
    qsort (q->fresh, (size_t) q->nfresh, sizeof (*q->fresh), fresh_order);
    bool reserved = false;
    int granted = 0;
    /* q->fresh shrinks as its entries are granted: walk a copy's worth by
     * taking the first left each time */
    for (int k = 0; k < q->nfresh && !r->stop;) {
        struct entry *e = q->fresh[k];
        if (r->held && !reserved && before (r->held, e)) {
            if (q->held_stop)
                break;      /* the last round tried nothing past it either */
            if (hold_for (q, r->held, r->now))
                break;
            reserved = true;
        }
        bool had_held = r->held != NULL;
        if (try_at (q, index_of (q, e), r)) {
            granted++;
            /* remove_at moved the last fresh entry into slot k: keep order */
            qsort (q->fresh + k, (size_t) (q->nfresh - k), sizeof (*q->fresh),
                   fresh_order);
            if (!had_held && r->held)
                reserved = true;    /* hold_for reserved it */
        } else {
            if (!had_held && r->held)
                reserved = true;
            k++;
        }
    }
    round_end (q, r);
    return granted;
}

int waitqueue_schedule (struct waitqueue *q, double now,
                        struct waitqueue_result **out, int *count,
                        berth_error_t *err)
{
    /* strict order (no overtakes) stops at the first entry that does not
     * fit: a full round is short already */
    bool quick = q->rounded && q->cfg.max_overtakes > 0 && !q->cfg.full_rounds
                 && ledger_generation (q->ledger) == q->gen && now < q->hold_due;
    /* Reserve room for every possible grant first, so that a grant once
     * taken from the ledger is always reported. */
    int room = quick ? q->nfresh : q->n;
    struct round r = { .now = now };
    if (room && !(r.v = malloc (room * sizeof (*r.v))))
        return errprintf (err, "out of memory scheduling");
    q->round_at = now;
    if (!quick)
        full_round (q, &r);
    else if (q->nfresh && fresh_round (q, &r) > 0) {
        /* What the grants took changes the other entries' reasons: a full
         * round refreshes them (it grants nothing more: each failed on
         * more than is left), with room for every entry all the same. */
        struct waitqueue_result *v = realloc (r.v, (r.n + q->n) * sizeof (*v));
        if (v) {
            r.v = v;
            full_round (q, &r);
        } else
            q->rounded = false;     /* the next round is a full one */
    }
    if (!r.n) {
        free (r.v);
        r.v = NULL;
    }
    *out = r.v;
    *count = r.n;
    return 0;
}

int waitqueue_length (const struct waitqueue *q)
{
    return q->n;
}

/* The reason of the entry at index i, composed into its buffer: its own
 * failure, and what stands before it (the held entry, the head). The
 * failure is explained again when the ledger has changed since (a grant
 * later in the same round, a release not yet scheduled): once per change
 * and entry asked about, not for the whole queue each round. */
static const char *reason_of (const struct waitqueue *q, int i)
{
    struct entry *e = q->e[i];
    uint64_t gen = ledger_generation (q->ledger);
    /* an entry a round passed over by its class was not touched: explained
     * here like one tried (only one added since the last round was not) */
    if (!e->why_fixed && !e->fresh
        && (e->why_due || e->why_gen != gen || !e->why[0])) {
        ledger_explain (q->ledger, &e->shape, e->layout, e->why, sizeof (e->why));
        e->why_gen = gen;
        e->why_due = false;
    }
    int hpos = q->held ? index_of (q, q->held) + 1 : 0;
    if (q->held && i + 1 > hpos) {
        char hold[64];
        held_text (q, hpos - 1, q->round_at, hold, sizeof (hold));
        snprintf (e->reason, sizeof (e->reason), "held for #%d (%s)", hpos, hold);
    } else if (!e->why[0])
        snprintf (e->reason, sizeof (e->reason), "not tried yet");
    else if (i == 0)
        snprintf (e->reason, sizeof (e->reason), "%s", e->why);
    else
        snprintf (e->reason, sizeof (e->reason), "%s; behind #1 (overtaken %d of %d "
                  "times)", e->why, q->over[0], q->cfg.max_overtakes);
    return e->reason;
}

static void info_of (const struct waitqueue *q, int i, struct waitqueue_entry_info *info)
{
    const struct entry *e = q->e[i];
    *info = (struct waitqueue_entry_info) {
        .ticket = e->ticket, .owner = e->owner, .position = i + 1,
        .label = e->label, .shape = &e->shape, .priority = e->priority,
        .added = e->added, .overtaken = q->over[i], .reason = reason_of (q, i),
    };
}

int waitqueue_entry (const struct waitqueue *q, int index,
                     struct waitqueue_entry_info *info)
{
    if (index < 0 || index >= q->n)
        return -1;
    info_of (q, index, info);
    return 0;
}

int waitqueue_find (const struct waitqueue *q, uint64_t ticket,
                    struct waitqueue_entry_info *info)
{
    const struct entry *e = idmap_get (q->by_ticket, ticket);
    if (!e)
        return -1;
    info_of (q, index_of (q, e), info);
    return 0;
}
