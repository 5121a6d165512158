/* SPDX-License-Identifier: MIT */
/* Requests that wait: the wait queue (waitqueue.c) wired to connections,
 * timers and replies. A request is tried at once; one that cannot fit even
 * the empty allocation is refused at once; the rest wait, in order with
 * backfill, until a release lets the scheduler grant them, their timeout
 * passes, or their connection closes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "berthd.h"

void pending_free (struct pending *p)
{
    if (!p)
        return;
    if (p->wait_id)
        journal_unwait (p->conn->d, p);
    if (p->timer)
        event_free (p->timer);
    json_decref (p->id);
    step_request_free (&p->acq.step);
    free (p);
}

/* Take p out of the queue (if it is there) and off its connection. */
static void pending_unlink (struct berthd *d, struct pending *p)
{
    if (p->ticket) {
        waitqueue_cancel (d->queue, p->ticket, NULL);
        p->ticket = 0;
        d->npending--;
    }
    if (p->timer)
        evtimer_del (p->timer);
    if (p->conn->pending == p)
        p->conn->pending = NULL;
}

void pending_reply_error (struct berthd *d, struct pending *p,
                          const berth_error_t *e)
{
    conn_send (p->conn, proto_error_reply (p->id, e));
    events_emit (d->events, proto_event_refused (now_wall (),
                                                 p->acq.step.label, e));
}

/* The request has its answer: free it, and let its connection go on. */
static void pending_done (struct berthd *d, struct pending *p)
{
    struct conn *c = p->conn;
    pending_unlink (d, p);
    pending_free (p);
    conn_resume (c);
}

static void grant (struct berthd *d, struct pending *p, uint64_t lease)
{
    berth_error_t e;
    if (lease_grant (d, p, lease, &e) < 0)
        pending_reply_error (d, p, &e);
    pending_done (d, p);
}

static int entry_of (struct berthd *d, uint64_t ticket,
                     struct waitqueue_entry_info *info)
{
    for (int i = 0; waitqueue_entry (d->queue, i, info) == 0; i++)
        if (info->ticket == ticket)
            return 0;
    return -1;
}

static void needs_text (const struct pending *p, char *buf, size_t size)
{
    step_shape_describe (&p->shape, buf, size);
}

static void timeout_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct pending *p = arg;
    struct berthd *d = p->conn->d;
    struct waitqueue_entry_info info;
    char needs[256], why[400] = "";
    berth_error_t e;
    needs_text (p, needs, sizeof (needs));
    if (p->ticket && entry_of (d, p->ticket, &info) == 0 && info.reason)
        snprintf (why, sizeof (why), "; %s", info.reason);
    errprintf_code (&e, PROTO_ERR_TIMEOUT, "%s%s%s: waited %.*f s for %s%s",
                    p->acq.step.label ? "step '" : "",
                    p->acq.step.label ? p->acq.step.label : "",
                    p->acq.step.label ? "'" : "request",
                    p->acq.step.timeout < 10 ? 1 : 0, p->acq.step.timeout,
                    needs, why);
    pending_unlink (d, p);
    pending_reply_error (d, p, &e);
    pending_done (d, p);
    /* The head may have held resources for it. */
    queue_schedule_soon (d);
}

void queue_run (struct berthd *d)
{
    if (d->sched_busy || d->stopping)
        return;
    d->sched_busy = true;
    struct waitqueue_result *res = NULL;
    int n = 0;
    berth_error_t err;
    if (waitqueue_schedule (d->queue, now_mono (), &res, &n, &err) < 0)
        log_msg (LOG_ERR, "scheduling the wait queue: %s", err.text);
    for (int i = 0; i < n; i++) {
        struct conn *c = (struct conn *) (uintptr_t) res[i].owner;
        struct pending *p = c->pending;
        if (!p || p->ticket != res[i].ticket) {
            /* Cannot happen: every ticket is its connection's pending one. */
            log_msg (LOG_ERR, "grant of L%llu for an unknown request; "
                     "releasing it", (unsigned long long) res[i].lease);
            ledger_release (d->ledger, res[i].lease, NULL);
            continue;
        }
        p->ticket = 0;
        d->npending--;
        grant (d, p, res[i].lease);
    }
    free (res);
    d->sched_busy = false;
    notify_status_soon (d->notify);
}

static void sched_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    queue_run (arg);
}

void queue_schedule_soon (struct berthd *d)
{
    if (!d->sched_ev)
        d->sched_ev = event_new (d->base, -1, 0, sched_cb, d);
    if (d->sched_ev && waitqueue_length (d->queue) > 0)
        event_active (d->sched_ev, 0, 0);
}

static void refuse (struct berthd *d, struct pending *p, const char *code,
                    const char *msg)
{
    berth_error_t e;
    errprintf_code (&e, code, "%s", msg);
    pending_reply_error (d, p, &e);
    pending_done (d, p);
}

static const char *who (const struct pending *p, char *buf, size_t size)
{
    if (p->acq.step.label)
        snprintf (buf, size, "step '%s'", p->acq.step.label);
    else
        snprintf (buf, size, "the request");
    return buf;
}

void queue_submit (struct berthd *d, struct pending *p)
{
    struct conn *c = p->conn;
    char why[512] = "", name[300], msg[2400];
    berth_error_t err;
    uint64_t lease;
    bool was_empty = waitqueue_length (d->queue) == 0;
    c->pending = p;
    if (was_empty) {
        /* Nobody waits: nothing to be fair to. */
        int rc = ledger_acquire (d->ledger, &p->shape, p->layout, &lease,
                                 why, sizeof (why), &err);
        if (rc == 0) {
            /* Its expected end lets the queue backfill around it later. */
            if (p->acq.duration > 0)
                ledger_lease_set_end (d->ledger, lease,
                                      now_mono () + p->acq.duration);
            grant (d, p, lease);
            return;
        }
        if (rc < 0) {
            pending_reply_error (d, p, &err);
            pending_done (d, p);
            return;
        }
    }
    /* Would it fit the empty allocation? If not, waiting cannot help. */
    char never[512] = "";
    int rc = ledger_acquire (d->empty, &p->shape, p->layout, &lease, never,
                             sizeof (never), &err);
    if (rc == 0)
        ledger_release (d->empty, lease, NULL);
    else {
        char needs[256];
        needs_text (p, needs, sizeof (needs));
        snprintf (msg, sizeof (msg), "%s needs %s; even the empty "
                  "allocation cannot hold it: %s", who (p, name, sizeof (name)),
                  needs, rc < 0 ? err.text : never);
        refuse (d, p, rc < 0 ? PROTO_ERR_INVALID_REQUEST
                                : PROTO_ERR_UNSATISFIABLE, msg);
        return;
    }
    if (!p->acq.wait && was_empty) {
        snprintf (msg, sizeof (msg), "%s does not fit now (%s); not waiting "
                  "because \"wait\" is false", who (p, name, sizeof (name)), why);
        refuse (d, p, PROTO_ERR_BUSY, msg);
        return;
    }
    struct waitqueue_request wr = {
        .shape = p->shape, .layout = p->layout, .label = p->acq.step.label,
        .priority = p->acq.step.priority,
        .owner = (uint64_t) (uintptr_t) c, .duration = p->acq.duration,
        .since = p->resumed ? now_mono () - (now_wall () - p->since) : 0,
        .why = why,
    };
    if (waitqueue_add (d->queue, &wr, now_mono (), &p->ticket, &err) < 0) {
        pending_reply_error (d, p, &err);
        pending_done (d, p);
        return;
    }
    d->npending++;
    p->added = now_mono ();
    /* The queue decides (backfill, starvation bound) and, where it was
     * empty, tries the request once more so that its reason is known at
     * once: "not tried yet" never shows. */
    queue_run (d);
    if (c->pending != p)
        return;               /* granted */
    struct waitqueue_entry_info info;
    const char *reason = entry_of (d, p->ticket, &info) == 0 && info.reason
                         && *info.reason ? info.reason : why;
    if (!p->acq.wait) {
        snprintf (msg, sizeof (msg), "%s does not fit now (%s); not waiting "
                  "because \"wait\" is false", who (p, name, sizeof (name)),
                  reason);
        refuse (d, p, PROTO_ERR_BUSY, msg);
        return;
    }
    if (p->acq.step.timeout >= 0) {
        struct timeval tv = seconds_tv (p->acq.step.timeout);
        if (!(p->timer = evtimer_new (d->base, timeout_cb, p))
            || evtimer_add (p->timer, &tv) < 0) {
            errprintf_code (&err, PROTO_ERR_INTERNAL, "out of memory arming "
                            "a wait timeout");
            pending_unlink (d, p);
            pending_reply_error (d, p, &err);
            pending_done (d, p);
            return;
        }
    }
    /* it waits: journaled, so that a restart can give its place back */
    if (!p->wait_id)
        journal_wait (d, p);
    events_emit (d->events, proto_event_waited (
        now_wall (), p->acq.step.label,
        entry_of (d, p->ticket, &info) == 0 ? info.position : 0, reason));
    notify_status_soon (d->notify);
}

void queue_conn_closed (struct conn *c)
{
    struct pending *p = c->pending;
    if (!p)
        return;
    bool queued = p->ticket != 0;
    pending_unlink (c->d, p);
    pending_free (p);
    if (queued)
        queue_schedule_soon (c->d);
}

void queue_refuse_all (struct berthd *d, const char *code, const char *msg)
{
    for (struct conn *c = d->conns; c; c = c->next) {
        struct pending *p = c->pending;
        if (!p)
            continue;
        berth_error_t e;
        errprintf_code (&e, code, "%s", msg);
        pending_unlink (d, p);
        pending_reply_error (d, p, &e);
        pending_done (d, p);
    }
}
