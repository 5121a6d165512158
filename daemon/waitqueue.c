/* SPDX-License-Identifier: MIT */
/* The wait queue. Entries are kept sorted (priority, then arrival); the queue
 * is short next to the ledger, so a sorted array is enough. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waitqueue.h"

struct entry {
    uint64_t ticket, owner;
    struct step_shape shape;
    enum ledger_layout layout;
    char *label;
    int priority;
    double added;
    double duration;          /* < 0: not stated */
    int overtaken;
    char why[256];            /* from the last try */
    char reason[320];         /* why, with its place in the queue */
};

struct waitqueue {
    struct ledger *ledger;
    struct waitqueue_config cfg;
    struct entry **e;
    int n, cap;
    uint64_t next_ticket;
    /* The nodes held for one entry, kept from round to round while it
     * waits, so that they drain for it instead of starting over. */
    uint64_t resv_ticket;     /* 0: none */
    int *resv, nresv;
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
        WAITQUEUE_DEFAULT_OVERTAKES, WAITQUEUE_DEFAULT_MAX_WAIT };
    if (q->cfg.max_overtakes < 0)
        q->cfg.max_overtakes = 0;
    q->next_ticket = 1;
    if (!(q->resv = malloc ((size_t) ledger_nnodes (l) * sizeof (int)))) {
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
    free (q->resv);
    free (q);
}

static bool before (const struct entry *a, const struct entry *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->added != b->added ? a->added < b->added : a->ticket < b->ticket;
}

int waitqueue_add (struct waitqueue *q, const struct waitqueue_request *r,
                   double now, uint64_t *ticket, berth_error_t *err)
{
    if (q->n == q->cap) {
        int cap = q->cap ? q->cap * 2 : 16;
        struct entry **e = realloc (q->e, cap * sizeof (*e));
        if (!e)
            return errprintf (err, "out of memory queueing a request");
        q->e = e;
        q->cap = cap;
    }
    struct entry *e = calloc (1, sizeof (*e));
    if (!e || (r->label && !(e->label = strdup (r->label)))) {
        entry_free (e);
        return errprintf (err, "out of memory queueing a request");
    }
    e->ticket = q->next_ticket++;
    e->owner = r->owner;
    e->shape = r->shape;
    e->layout = r->layout;
    e->priority = r->priority;
    e->added = r->since > 0 && r->since < now ? r->since : now;
    e->duration = r->duration > 0 ? r->duration : -1;
    if (r->why && *r->why) {
        snprintf (e->why, sizeof (e->why), "%s", r->why);
        snprintf (e->reason, sizeof (e->reason), "%s", r->why);
    } else {
        snprintf (e->reason, sizeof (e->reason), "not tried yet");
    }
    int i = q->n;
    while (i > 0 && before (e, q->e[i - 1]))
        i--;
    memmove (q->e + i + 1, q->e + i, (q->n - i) * sizeof (*q->e));
    q->e[i] = e;
    q->n++;
    *ticket = e->ticket;
    return 0;
}

static void remove_at (struct waitqueue *q, int i)
{
    memmove (q->e + i, q->e + i + 1, (q->n - i - 1) * sizeof (*q->e));
    q->n--;
}

int waitqueue_cancel (struct waitqueue *q, uint64_t ticket,
                      berth_error_t *err)
{
    for (int i = 0; i < q->n; i++) {
        if (q->e[i]->ticket == ticket) {
            entry_free (q->e[i]);
            remove_at (q, i);
            return 0;
        }
    }
    return errprintf_code (err, "not_found", "no waiting request #%llu: it "
                           "was granted, timed out or cancelled already",
                           (unsigned long long) ticket);
}

/* Overtaken often enough, or waited long enough: hold what frees for it. */
static bool is_held_for (const struct waitqueue *q, const struct entry *e,
                         double now)
{
    return e->overtaken >= q->cfg.max_overtakes
           || (q->cfg.max_wait >= 0 && now - e->added >= q->cfg.max_wait);
}

static void held_text (const struct waitqueue *q, const struct entry *e,
                       double now, char *buf, size_t size)
{
    if (e->overtaken >= q->cfg.max_overtakes)
        snprintf (buf, size, "overtaken %d of %d times", e->overtaken,
                  q->cfg.max_overtakes);
    else
        snprintf (buf, size, "waited %.0fs of %.0fs", now - e->added,
                  q->cfg.max_wait);
}

static int push (struct waitqueue_result **v, int *n, int *cap,
                 struct waitqueue_result r)
{
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 8;
        struct waitqueue_result *a = realloc (*v, c * sizeof (*a));
        if (!a)
            return -1;
        *v = a;
        *cap = c;
    }
    (*v)[(*n)++] = r;
    return 0;
}

/* Reasons name positions after this round's grants have left the queue. */
static void set_reasons (struct waitqueue *q, const struct entry *held,
                         double now)
{
    char hold[64];
    int hpos = 0;
    for (int i = 0; i < q->n; i++)
        if (q->e[i] == held)
            hpos = i + 1;
    if (held)
        held_text (q, held, now, hold, sizeof (hold));
    for (int i = 0; i < q->n; i++) {
        struct entry *e = q->e[i];
        if (held && i + 1 > hpos)
            snprintf (e->reason, sizeof (e->reason), "held for #%d (%s)",
                      hpos, hold);
        else if (i == 0)
            snprintf (e->reason, sizeof (e->reason), "%s", e->why);
        else
            snprintf (e->reason, sizeof (e->reason), "%s; behind #1 "
                      "(overtaken %d of %d times)", e->why,
                      q->e[0]->overtaken, q->cfg.max_overtakes);
    }
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

int waitqueue_schedule (struct waitqueue *q, double now,
                        struct waitqueue_result **out, int *count,
                        berth_error_t *err)
{
    struct waitqueue_result *v = NULL;
    int n = 0, cap = 0;
    const struct entry *held = NULL;
    bool stop = false;
    double ready = -2;        /* when the held nodes hold it; -2: not asked */
    /* Reserve room for every possible grant first, so that a grant once
     * taken from the ledger is always reported. */
    if (q->n && !(v = malloc (q->n * sizeof (*v))))
        return errprintf (err, "out of memory scheduling");
    cap = q->n;
    for (int i = 0; i < q->n && !stop;) {
        struct entry *e = q->e[i];
        uint64_t lease;
        berth_error_t lerr;
        int rc = ledger_acquire (q->ledger, &e->shape, e->layout, &lease,
                                 e->why, sizeof (e->why), &lerr);
        if (rc < 0) {
            snprintf (e->why, sizeof (e->why), "cannot be placed: %.200s",
                      lerr.text);
            i++;
            continue;
        }
        if (rc == 1 && held && e->duration >= 0) {
            /* EASY backfill: it may use the held nodes if it is expected
             * to give them back before the held entry could start there. */
            if (ready == -2)
                ready = ledger_ready_at (q->ledger, &held->shape,
                                         held->layout, q->resv, q->nresv,
                                         now);
            if (ready >= 0 && now + e->duration <= ready) {
                ledger_unreserve (q->ledger);
                rc = ledger_acquire (q->ledger, &e->shape, e->layout, &lease,
                                     NULL, 0, &lerr);
                if (ledger_reserve_nodes (q->ledger, q->resv, q->nresv) < 0)
                    stop = true;      /* cannot happen: all were released */
                if (rc < 0) {
                    snprintf (e->why, sizeof (e->why), "cannot be placed: "
                              "%.200s", lerr.text);
                    i++;
                    continue;
                }
            }
        }
        if (rc == 1) {
            if (!held && is_held_for (q, e, now)) {
                held = e;
                stop = hold_for (q, e, now);
            }
            i++;
            continue;
        }
        /* Granted: everything waiting before it was overtaken, except the
         * entry resources are held for (none of them were taken). */
        for (int j = 0; j < i; j++) {
            if (q->e[j] == held)
                continue;
            if (q->e[j]->overtaken++ + 1 >= q->cfg.max_overtakes && !held) {
                held = q->e[j];
                stop = hold_for (q, held, now);
            }
        }
        if (e->duration >= 0)
            (void) ledger_lease_set_end (q->ledger, lease, now + e->duration);
        (void) push (&v, &n, &cap, (struct waitqueue_result) {
            e->ticket, e->owner, lease, now - e->added });
        entry_free (e);
        remove_at (q, i);
    }
    ledger_unreserve (q->ledger);
    set_reasons (q, held, now);
    if (!n) {
        free (v);
        v = NULL;
    }
    *out = v;
    *count = n;
    return 0;
}

int waitqueue_length (const struct waitqueue *q)
{
    return q->n;
}

int waitqueue_entry (const struct waitqueue *q, int index,
                     struct waitqueue_entry_info *info)
{
    if (index < 0 || index >= q->n)
        return -1;
    const struct entry *e = q->e[index];
    *info = (struct waitqueue_entry_info) {
        .ticket = e->ticket, .owner = e->owner, .position = index + 1,
        .label = e->label, .shape = &e->shape, .priority = e->priority,
        .added = e->added, .overtaken = e->overtaken, .reason = e->reason,
    };
    return 0;
}
