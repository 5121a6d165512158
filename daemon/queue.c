/* SPDX-License-Identifier: MIT */
/* Requests that wait (queue.h): the pure wait queue (waitqueue.c) with the
 * timers, the journaled places and the events around it. The queue knows
 * nothing of connections or replies: what it decides at submission is
 * returned, and every later decision (a grant once resources free, a
 * timeout, a drain) goes back through the waiter's callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "berthd.h"
#include "idmap.h"
#include "ops.h"
#include "queue.h"

struct queue {
    struct berthd *d;             /* the ledgers, journal, events, notify */
    struct waitqueue *wq;
    struct waiter *waiters;       /* every queued waiter */
    struct event *sched_ev;
    bool busy;                    /* queue_run is granting (no re-entry) */
    struct waiter *submitting;    /* its grant is returned, not called back */
    /* The journal could not record a grant for want of space: nothing is
     * granted but by the retry, once a second, until one is recorded. */
    double held_since;            /* wall clock; 0: grants are not held */
    char held_why[1200];
    struct event *retry_ev;
    bool retrying;                /* the retry's round: it may grant */
    /* Restored waiters (put back from the journal after a restart) by pid,
     * each a chain through same_pid, until their processes send them again
     * or the reclaim grace is over. */
    struct idmap *restored;
    struct event *restored_ev;
    struct idmap *by_pid;         /* pid -> struct pid_waiters */
};

/* A process's queued waiters, newest first. */
struct pid_waiters {
    struct waiter *first;
    int n;
};

#define QUEUE_HELD_RETRY_S 1.0
/* why a request waits while grants are held (the whole story is the
 * daemon's, in status and the log) */
#define QUEUE_HELD_REASON "grants are held: the journal cannot record them " \
                          "for want of space"

struct queue *queue_create (struct berthd *d, berth_error_t *err)
{
    struct queue *q = calloc (1, sizeof (*q));
    struct waitqueue_config qc = { d->cfg.starvation_overtakes,
                                   d->cfg.starvation_seconds, false };
    if (!q)
        return errprintf (err, "out of memory"), NULL;
    q->d = d;
    if (!(q->restored = idmap_create ()) || !(q->by_pid = idmap_create ())) {
        idmap_destroy (q->restored);
        free (q);
        return errprintf (err, "out of memory"), NULL;
    }
    if (!(q->wq = waitqueue_create (d->ledger, &qc, err))) {
        idmap_destroy (q->restored);
        idmap_destroy (q->by_pid);
        free (q);
        return NULL;
    }
    return q;
}

void queue_destroy (struct queue *q)
{
    if (!q)
        return;
    while (q->waiters) {
        struct waiter *w = q->waiters;
        queue_cancel (q, w);
        queue_free_waiter (q, w);
    }
    if (q->sched_ev)
        event_free (q->sched_ev);
    if (q->retry_ev)
        event_free (q->retry_ev);
    if (q->restored_ev)
        event_free (q->restored_ev);
    idmap_destroy (q->restored);
    idmap_destroy (q->by_pid);
    waitqueue_destroy (q->wq);
    free (q);
}

/* ---- restored waiters, by pid ---- */

static int restored_add (struct queue *q, struct waiter *w)
{
    w->same_pid = idmap_get (q->restored, (uint64_t) w->pid);
    return idmap_put (q->restored, (uint64_t) w->pid, w);
}

static void restored_drop (struct queue *q, struct waiter *w)
{
    struct waiter *head = idmap_get (q->restored, (uint64_t) w->pid);
    struct waiter **at = &head;
    while (*at && *at != w)
        at = &(*at)->same_pid;
    if (!*at)
        return;
    bool was_head = at == &head;
    *at = w->same_pid;
    w->same_pid = NULL;
    if (!was_head)
        return;
    /* removed first, so that putting the new head back cannot grow the
     * map (and fail) */
    idmap_remove (q->restored, (uint64_t) w->pid);
    if (head)
        idmap_put (q->restored, (uint64_t) w->pid, head);
}

void queue_free_waiter (struct queue *q, struct waiter *w)
{
    if (!w)
        return;
    if (w->restored)
        restored_drop (q, w);
    if (w->wait_id)
        journal_unwait (q->d->journal, w->wait_id);
    if (w->timer)
        event_free (w->timer);
    json_decref (w->id);
    step_request_free (&w->acq.step);
    free (w->answer);
    free (w);
}

/* Into its process's list; left out of it (status pid then misses it)
 * when memory runs short. */
static void pid_index_add (struct queue *q, struct waiter *w)
{
    struct pid_waiters *p = w->pid > 0 ? idmap_get (q->by_pid,
                                                    (uint64_t) w->pid) : NULL;
    if (!p && w->pid > 0 && (p = calloc (1, sizeof (*p)))
        && idmap_put (q->by_pid, (uint64_t) w->pid, p) < 0) {
        free (p);
        p = NULL;
    }
    if (!p)
        return;
    w->of_pid = p;
    w->pprev = NULL;
    w->pnext = p->first;
    if (p->first)
        p->first->pprev = w;
    p->first = w;
    p->n++;
}

static void pid_index_remove (struct queue *q, struct waiter *w)
{
    struct pid_waiters *p = w->of_pid;
    if (!p)
        return;
    if (w->pprev)
        w->pprev->pnext = w->pnext;
    else
        p->first = w->pnext;
    if (w->pnext)
        w->pnext->pprev = w->pprev;
    w->of_pid = NULL;
    w->pprev = w->pnext = NULL;
    if (--p->n == 0) {
        idmap_remove (q->by_pid, (uint64_t) w->pid);
        free (p);
    }
}

static void list_add (struct queue *q, struct waiter *w)
{
    w->prev = NULL;
    w->next = q->waiters;
    if (q->waiters)
        q->waiters->prev = w;
    q->waiters = w;
    pid_index_add (q, w);
}

/* Off the list (the wait queue has let its ticket go), its timer stopped. */
static void list_remove (struct queue *q, struct waiter *w)
{
    w->ticket = 0;
    if (w->prev)
        w->prev->next = w->next;
    else
        q->waiters = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
    pid_index_remove (q, w);
    if (w->timer)
        evtimer_del (w->timer);
}

/* Out of the wait queue and the list, its timer stopped. */
static void unlink_waiter (struct queue *q, struct waiter *w)
{
    if (w->ticket) {
        waitqueue_cancel (q->wq, w->ticket, NULL);
        list_remove (q, w);
    }
    else if (w->timer)
        evtimer_del (w->timer);
}

void queue_cancel (struct queue *q, struct waiter *w)
{
    bool queued = w->ticket != 0;
    unlink_waiter (q, w);
    if (queued)               /* the head may have held resources for it */
        queue_schedule_soon (q);
}

/* The "refused" event of a request that waited; its answer goes back. */
static void refuse_late (struct queue *q, struct waiter *w,
                         const berth_error_t *e)
{
    unlink_waiter (q, w);
    w->done (w, 0, e);
}

/* While grants are held, that is why every request waits. */
static int held_reason (const struct queue *q, int rc,
                        struct waitqueue_entry_info *info)
{
    if (rc == 0 && q->held_since)
        info->reason = QUEUE_HELD_REASON;
    return rc;
}

static int entry_of (const struct queue *q, uint64_t ticket,
                     struct waitqueue_entry_info *info)
{
    return held_reason (q, waitqueue_find (q->wq, ticket, info), info);
}

static void run (struct queue *q);

static void sched_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    run (arg);
}

void queue_schedule_soon (struct queue *q)
{
    if (!q->sched_ev)
        q->sched_ev = event_new (q->d->base, -1, 0, sched_cb, q);
    if (q->sched_ev && waitqueue_length (q->wq) > 0)
        event_active (q->sched_ev, 0, 0);
}

int queue_waiting (const struct queue *q)
{
    return q ? waitqueue_length (q->wq) : 0;
}

const char *queue_held (const struct queue *q, double *since)
{
    if (!q || !q->held_since)
        return NULL;
    *since = q->held_since;
    return q->held_why;
}

static void retry_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct queue *q = arg;
    /* room for a compaction first: without it a full disk could stop the
     * rewrite a lost release needs */
    journal_keep_reserve (q->d->journal);
    q->retrying = true;
    run (q);
    q->retrying = false;
}

/* A grant could not be recorded for want of space: grants are held (the
 * requests keep their places) and tried again in a second. */
static void hold (struct queue *q, const char *why)
{
    snprintf (q->held_why, sizeof (q->held_why), "grants are held for want "
              "of space: %s", why);
    if (!q->held_since) {
        q->held_since = now_wall ();
        log_msg (LOG_ERR, "%s; the requests keep their places, and grants "
                 "are tried again every %.0f s", q->held_why,
                 QUEUE_HELD_RETRY_S);
    }
    struct timeval tv = seconds_tv (QUEUE_HELD_RETRY_S);
    if (!q->retry_ev)
        q->retry_ev = evtimer_new (q->d->base, retry_cb, q);
    if (!q->retry_ev || evtimer_add (q->retry_ev, &tv) < 0)
        log_msg (LOG_ERR, "out of memory arming the retry of held grants; "
                 "they are tried again at the next release");
    notify_status_soon (q->d->notify);
}

static void resume (struct queue *q)
{
    log_msg (LOG_INFO, "grants resume: the journal has room again (they were "
             "held %.0f s)", now_wall () - q->held_since);
    q->held_since = 0;
    q->held_why[0] = '\0';
    notify_status_soon (q->d->notify);
}

/* A grant of the round that was not recorded: w back in the wait queue at
 * its place (its arrival waited seconds before now), its timeout running
 * on. Out of memory: it is refused. */
static void put_back (struct queue *q, struct waiter *w, double waited,
                      double now)
{
    struct waitqueue_request wr = {
        .shape = w->shape, .layout = w->layout, .label = w->acq.step.label,
        .priority = w->acq.step.priority,
        .owner = (uint64_t) (uintptr_t) w, .duration = w->acq.duration,
        .since = now - waited, .why = QUEUE_HELD_REASON,
    };
    berth_error_t err;
    if (waitqueue_add (q->wq, &wr, now, &w->ticket, &err) < 0) {
        w->ticket = 0;
        if (w != q->submitting)       /* that one is answered by submit */
            w->done (w, 0, &err);
        return;
    }
    list_add (q, w);
    if (w->timer) {
        struct timeval tv = seconds_tv (w->deadline > now ? w->deadline - now
                                                          : 0);
        evtimer_add (w->timer, &tv);
    }
}

int queue_entry (const struct queue *q, int i,
                 struct waitqueue_entry_info *info)
{
    return held_reason (q, waitqueue_entry (q->wq, i, info), info);
}

static int by_position (const void *a, const void *b)
{
    return ((const struct waitqueue_entry_info *) a)->position
           - ((const struct waitqueue_entry_info *) b)->position;
}

int queue_entries_of_pid (const struct queue *q, pid_t pid,
                          struct waitqueue_entry_info *info, int max)
{
    const struct pid_waiters *p = pid > 0 ? idmap_get (q->by_pid,
                                                       (uint64_t) pid) : NULL;
    if (!p || max <= 0)
        return 0;
    /* more than asked for: all of them, then the nearest the head */
    struct waitqueue_entry_info *all = p->n > max
        ? malloc ((size_t) p->n * sizeof (*all)) : info;
    int n = 0;
    if (!all)
        all = info;      /* short of memory: the first max found */
    int room = all == info ? max : p->n;
    for (const struct waiter *w = p->first; w && n < room; w = w->pnext)
        if (w->ticket && entry_of (q, w->ticket, &all[n]) == 0)
            n++;
    if (all != info) {
        qsort (all, (size_t) n, sizeof (*all), by_position);
        n = n < max ? n : max;
        memcpy (info, all, (size_t) n * sizeof (*info));
        free (all);
    }
    return n;
}

const struct waiter *queue_waiter_of (uint64_t owner)
{
    return (const struct waiter *) (uintptr_t) owner;
}

static int by_lease (const void *a, const void *b)
{
    uint64_t x = ((const struct waitqueue_result *) a)->lease;
    uint64_t y = ((const struct waitqueue_result *) b)->lease;
    return x < y ? -1 : x > y;
}

/* Grant what the wait queue says fits now. */
static void run (struct queue *q)
{
    struct berthd *d = q->d;
    /* nothing is granted once berthd is leaving its loop, nor while grants
     * are held but by their retry */
    if (q->busy || q->d->stopping || (q->held_since && !q->retrying))
        return;
    q->busy = true;
    struct waitqueue_result *res = NULL;
    int n = 0;
    berth_error_t err;
    double now = now_mono ();
    if (waitqueue_schedule (q->wq, now, &res, &n, &err) < 0)
        log_msg (LOG_ERR, "scheduling the wait queue: %s", err.text);
    /* Every grant of the round is recorded (journaled) in lease id order
     * first, the request being submitted included; only then is any waiter
     * answered: a crash between two lines leaves a journal that restarts.
     * Once one cannot be recorded for want of space, the rest of the round
     * is given back too: nobody overtakes a request that keeps its place. */
    bool held = false;
    if (n > 1)
        qsort (res, (size_t) n, sizeof (*res), by_lease);
    for (int i = 0; i < n; i++) {
        struct waiter *w = (struct waiter *) (uintptr_t) res[i].owner;
        if (!w || w->ticket != res[i].ticket) {
            /* Cannot happen: every ticket is its waiter's. */
            log_msg (LOG_ERR, "grant of L%llu for an unknown request; "
                     "releasing it", (unsigned long long) res[i].lease);
            ledger_release (d->ledger, res[i].lease, NULL);
            res[i].owner = 0;
            continue;
        }
        list_remove (q, w);   /* already out of the wait queue */
        if (held)
            ledger_release (d->ledger, res[i].lease, NULL);
        else if (w->record && w->record (w, res[i].lease, &err) > 0) {
            held = true;      /* its ledger grant given back by record */
            hold (q, err.text);
        }
        if (held) {
            res[i].owner = 0;
            put_back (q, w, res[i].waited, now);
            continue;
        }
        if (w == q->submitting)
            w->granted = res[i].lease;
    }
    for (int i = 0; i < n; i++) {
        struct waiter *w = (struct waiter *) (uintptr_t) res[i].owner;
        if (w && w != q->submitting)
            w->done (w, res[i].lease, NULL);
    }
    free (res);
    q->busy = false;
    if (!held && q->held_since)
        resume (q);
    notify_status_soon (d->notify);
}

static const char *who (const struct waiter *w, char *buf, size_t size)
{
    if (w->acq.step.label)
        snprintf (buf, size, "step '%s'", w->acq.step.label);
    else
        snprintf (buf, size, "the request");
    return buf;
}

static void waited_too_long (evutil_socket_t fd, short what, void *arg);

enum queue_outcome queue_submit (struct queue *q, struct waiter *w,
                                 uint64_t *lease, berth_error_t *err)
{
    struct berthd *d = q->d;
    char why[512] = "", name[300], needs[256];
    bool was_empty = waitqueue_length (q->wq) == 0;
    step_shape_describe (&w->shape, needs, sizeof (needs));
    if (was_empty && !q->held_since) {
        /* Nobody waits: nothing to be fair to. */
        int rc = ledger_acquire (d->ledger, &w->shape, w->layout, lease, why,
                                 sizeof (why), err);
        if (rc < 0)
            return QUEUE_REFUSED;
        if (rc == 0) {
            /* Its expected end lets the queue backfill around it later. */
            if (w->acq.duration > 0)
                ledger_lease_set_end (d->ledger, *lease,
                                      now_mono () + w->acq.duration);
            berth_error_t held;
            if (!w->record || w->record (w, *lease, &held) == 0)
                return QUEUE_GRANTED;
            hold (q, held.text);      /* its ledger grant given back */
        }
    }
    if (q->held_since)
        snprintf (why, sizeof (why), "%s", QUEUE_HELD_REASON);
    /* Would it fit the empty allocation? If not, waiting cannot help. */
    char never[512] = "";
    uint64_t probe;
    int rc = ledger_acquire (d->empty, &w->shape, w->layout, &probe, never,
                             sizeof (never), err);
    if (rc == 0)
        ledger_release (d->empty, probe, NULL);
    else {
        errprintf_code (err, rc < 0 ? PROTO_ERR_INVALID_REQUEST
                                    : PROTO_ERR_UNSATISFIABLE,
                        "%s needs %s; even the empty allocation cannot hold "
                        "it: %s", who (w, name, sizeof (name)), needs,
                        rc < 0 ? err->text : never);
        return QUEUE_REFUSED;
    }
    if (!w->acq.wait && was_empty)
        return errprintf_code (err, PROTO_ERR_BUSY, "%s does not fit now "
                               "(%s); not waiting because \"wait\" is false",
                               who (w, name, sizeof (name)), why),
               QUEUE_REFUSED;
    struct waitqueue_request wr = {
        .shape = w->shape, .layout = w->layout, .label = w->acq.step.label,
        .priority = w->acq.step.priority,
        .owner = (uint64_t) (uintptr_t) w, .duration = w->acq.duration,
        .since = w->resumed ? now_mono () - (now_wall () - w->since) : 0,
        .why = why,
    };
    if (waitqueue_add (q->wq, &wr, now_mono (), &w->ticket, err) < 0)
        return QUEUE_REFUSED;
    list_add (q, w);
    w->queue = q;
    /* The queue decides (backfill, starvation bound) and, where it was
     * empty, tries the request once more so that its reason is known at
     * once: "not tried yet" never shows. Its own grant comes back here. */
    w->granted = 0;
    q->submitting = w;
    run (q);
    q->submitting = NULL;
    if (w->granted) {
        *lease = w->granted;
        w->granted = 0;
        return QUEUE_GRANTED;
    }
    if (!w->ticket)               /* held, and not put back */
        return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory "
                               "queueing the request"), QUEUE_REFUSED;
    struct waitqueue_entry_info info;
    const char *reason = entry_of (q, w->ticket, &info) == 0 && info.reason
                         && *info.reason ? info.reason : why;
    if (!w->acq.wait) {
        errprintf_code (err, PROTO_ERR_BUSY, "%s does not fit now (%s); not "
                        "waiting because \"wait\" is false",
                        who (w, name, sizeof (name)), reason);
        unlink_waiter (q, w);
        return QUEUE_REFUSED;
    }
    if (w->acq.step.timeout >= 0) {
        struct timeval tv = seconds_tv (w->acq.step.timeout);
        w->deadline = now_mono () + w->acq.step.timeout;
        if (!(w->timer = evtimer_new (d->base, waited_too_long, w))
            || evtimer_add (w->timer, &tv) < 0) {
            unlink_waiter (q, w);
            return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory "
                                   "arming a wait timeout"), QUEUE_REFUSED;
        }
    }
    /* it waits: journaled, so that a restart can give its place back */
    if (!w->wait_id)
        w->wait_id = journal_wait (d->journal, w->since, w->pid, w->start,
                                   w->uid, w->line, w->line_len);
    if (w->restored && restored_add (q, w) < 0) {
        unlink_waiter (q, w);
        return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory "
                               "queueing the request"), QUEUE_REFUSED;
    }
    events_emit (d->events, proto_event_waited (now_wall (), w->acq.step.label,
                                        entry_of (q, w->ticket, &info) == 0
                                        ? info.position : 0, reason));
    notify_status_soon (d->notify);
    return QUEUE_WAITS;
}

/* Its timeout passed while it waited. */
static void waited_too_long (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct waiter *w = arg;
    struct queue *q = w->queue;
    struct waitqueue_entry_info info;
    char needs[256], why[400] = "";
    berth_error_t e;
    step_shape_describe (&w->shape, needs, sizeof (needs));
    if (w->ticket && entry_of (q, w->ticket, &info) == 0 && info.reason)
        snprintf (why, sizeof (why), "; %s", info.reason);
    errprintf_code (&e, PROTO_ERR_TIMEOUT, "%s%s%s: waited %.*f s for %s%s",
                    w->acq.step.label ? "step '" : "",
                    w->acq.step.label ? w->acq.step.label : "",
                    w->acq.step.label ? "'" : "request",
                    w->acq.step.timeout < 10 ? 1 : 0, w->acq.step.timeout,
                    needs, why);
    refuse_late (q, w, &e);
    /* The head may have held resources for it. */
    queue_schedule_soon (q);
}

void queue_refuse_all (struct queue *q, const char *code, const char *msg)
{
    berth_error_t e;
    errprintf_code (&e, code, "%s", msg);
    while (q->waiters)
        refuse_late (q, q->waiters, &e);
}

/* ---- restored waiters: taken back, or dropped after the grace ---- */

struct waiter *queue_take_restored (struct queue *q, pid_t pid, uid_t uid,
                                    uint64_t start, const json_t *id)
{
    struct waiter *best = NULL;
    if (pid <= 0)
        return NULL;
    for (struct waiter *w = idmap_get (q->restored, (uint64_t) pid); w;
         w = w->same_pid) {
        /* the same process: its uid, and its start time where both are
         * known */
        if (w->uid != uid || (w->start && start && w->start != start))
            continue;
        bool same_id = id && json_equal (w->id, id);
        if (!best || (same_id && !json_equal (best->id, id))
            || (same_id == (id && json_equal (best->id, id))
                && w->since < best->since))
            best = w;
    }
    if (best) {
        restored_drop (q, best);
        best->restored = false;
        unlink_waiter (q, best);
    }
    return best;
}

static void restored_over (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct queue *q = arg;
    size_t n = 0;
    /* every restored waiter is queued, so on the list */
    for (struct waiter *w = q->waiters, *next; w; w = next) {
        next = w->next;
        if (!w->restored)
            continue;
        unlink_waiter (q, w);
        queue_free_waiter (q, w);
        n++;
    }
    if (n) {
        log_msg (LOG_INFO, "%zu requests that waited before the restart were "
                 "not sent again within %.0f s: their places are dropped", n,
                 q->d->cfg.reclaim_grace);
        queue_schedule_soon (q);
        notify_status_soon (q->d->notify);
    }
}

int queue_restored_until (struct queue *q, double seconds, berth_error_t *err)
{
    struct timeval tv = seconds_tv (seconds);
    if (!idmap_count (q->restored))
        return 0;
    if ((!q->restored_ev
         && !(q->restored_ev = evtimer_new (q->d->base, restored_over, q)))
        || evtimer_add (q->restored_ev, &tv) < 0)
        return errprintf (err, "out of memory");
    return 0;
}
