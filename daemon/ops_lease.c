/* SPDX-License-Identifier: MIT */
/* The lease ops: acquire (refusals, the step cut, then the queue), release,
 * reclaim after a restart, and placed (a local step srun placed reports its
 * real CPUs). Each decodes nothing and writes no socket: it reads the
 * request, asks the leases and the queue, and answers. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "berthd.h"
#include "leases.h"
#include "ops.h"
#include "pidstart.h"
#include "queue.h"
#include "idset.h"
#include "journal_reserve.h"

static const char *cut_code (const char *code)
{
    const char *k = code ? proto_error_code (code) : NULL;
    return k ? k : PROTO_ERR_UNSATISFIABLE;
}

struct unanswered {
    struct lease_book *book;
    struct client *cl;
    const json_t *id;
    uint64_t start;
    struct lease *found;
};

static void find_unanswered (void *value, void *arg)
{
    struct lease *ls = value;
    struct unanswered *u = arg;
    if (!u->found && !lease_book_holder (u->book, ls->id) && ls->request
        && ls->peer_pid == u->cl->pid
        && ls->uid == u->cl->uid
        && (!ls->peer_start || !u->start || ls->peer_start == u->start)
        && json_equal (ls->request, u->id))
        u->found = ls;
}

/* An acquire sent again after a restart whose grant was journaled but whose
 * reply the crash swallowed: the same process asking under the same id
 * gets that lease (bound to this connection unless detached), not a second
 * one. 1 when answered so. */
static int answer_again (struct berthd *d, struct client *cl,
                         struct proto_request *req, struct op_reply *out)
{
    struct unanswered u = { d->book, cl, req->id, client_start (cl), NULL };
    berth_error_t err;
    size_t pos = 0;
    for (struct lease *ls; !u.found && (ls = lease_book_next (d->book, &pos));)
        find_unanswered (ls, &u);
    struct lease *ls = u.found;
    if (!ls || (!ls->detached
                && lease_book_held (d->book, cl)
                   >= (size_t) d->cfg.max_leases_per_conn)
        || lease_env (d, ls, &err) < 0
        || (!ls->detached && lease_rebind (d, cl, ls, &err) < 0))
        return 0;
    if (ls->detached && ls->reclaim_by >= 0) {
        /* granted to a restored request: its requester is back */
        lease_watch_end_grace (d->watch, ls->id);
        ls->reclaim_by = -1;
    }
    log_msg (LOG_INFO, "%s answers a request sent again after the restart "
             "(its reply was lost)", ls->name);
    struct proto_lease pl;
    lease_to_proto (ls, req->acquire.env, &pl);
    op_json (out, proto_acquire_reply (req->id, &pl));
    return 1;
}

/* A waiter's answer as a reply line: its grant, or why it was refused
 * (also an event). NULL when it cannot be encoded. */
static char *answer_line (struct berthd *d, struct waiter *w, uint64_t lease,
                          const berth_error_t *refusal, size_t *len)
{
    berth_error_t e;
    char *line = NULL;
    if (lease) {
        if (lease_grant (d, w, lease, &line, len, &e) == 0)
            return line;
        refusal = &e;
    }
    events_emit (d->events, proto_event_refused (now_wall (), w->acq.step.label,
                                         refusal));
    json_t *msg = proto_error_reply (w->id, refusal);
    line = msg ? proto_line (msg) : NULL;
    json_decref (msg);
    *len = line ? strlen (line) : 0;
    return line;
}

/* A grant of the queue's round: the lease made and journaled now, in id
 * order with the round's others; its answer is written after them. One
 * the journal has no room for is not answered: it keeps its place. */
static int waiter_record (struct waiter *w, uint64_t lease, berth_error_t *why)
{
    struct berthd *d = w->arg;
    char *line = NULL;
    size_t len = 0;
    berth_error_t e;
    if (lease_grant (d, w, lease, &line, &len, &e) < 0) {
        if (!strcmp (e.code, JOURNAL_ERR_NO_SPACE)) {
            *why = e;
            return 1;
        }
        line = answer_line (d, w, 0, &e, &len);
    }
    free (w->answer);
    w->recorded = true;
    w->answer = line;
    w->answer_len = line ? len : 0;
    return 0;
}

/* The queue's word on a request that waited: answered through its client. */
static void waiter_done (struct waiter *w, uint64_t lease,
                         const berth_error_t *err)
{
    struct berthd *d = w->arg;
    struct client *cl = w->client;
    size_t len = w->answer_len;
    char *line = w->answer;
    w->answer = NULL;
    if (!line && !(lease && w->recorded))
        line = answer_line (d, w, lease, err, &len);
    client_unwait (cl, w);
    queue_free_waiter (d->queue, w);
    cl->answer (cl, line, len);
}

/* A waiter for acquire a (its step moved into it), once the request's own
 * checks pass: the owner process, the cut to fit, the job's end and the
 * launcher. NULL with err (its code the reply's) when it is refused. */
static struct waiter *waiter_make (struct berthd *d, struct proto_acquire *a,
                                   json_t *id, berth_error_t *err)
{
    struct step_shape shape;
    char warn[512] = "";
    if (a->owner_pid > 0 && process_gone (a->owner_pid))
        return errprintf_code (err, PROTO_ERR_INVALID_REQUEST, "acquire: "
                               "owner_pid %d is not a running process",
                               a->owner_pid), NULL;
    /* who the owner is now: a pid given to a later process is not it */
    uint64_t owner_start = 0;
    if (a->owner_pid > 0 && pidstart_read (a->owner_pid, &owner_start) < 0)
        owner_start = 0;
    if (step_cut_to_fit (&a->step, &d->capacity, &shape, warn, sizeof (warn),
                         err) < 0) {
        events_emit (d->events, proto_event_refused (now_wall (),
                                                     a->step.label, err));
        err->code = cut_code (err->code);
        return NULL;
    }
    if (warn[0])
        log_msg (LOG_INFO, "%s", warn);
    if (jobend_admit (d->jobend, a, warn, sizeof (warn), err) < 0) {
        events_emit (d->events, proto_event_refused (now_wall (),
                                                     a->step.label, err));
        err->code = PROTO_ERR_UNSATISFIABLE;
        return NULL;
    }
    if (a->step.argv && !shape.local && d->caps.placement == PLACEMENT_NONE)
        return errprintf_code (err, PROTO_ERR_UNSATISFIABLE, "this machine's "
                               "launcher (%s) cannot place a step on given "
                               "cores, so berthd cannot render its launch; run "
                               "it as a local step, or acquire without argv",
                               d->caps.desc), NULL;
    struct waiter *w = calloc (1, sizeof (*w));
    if (!w)
        return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory"), NULL;
    w->record = waiter_record;
    w->arg = d;
    w->id = json_incref (id);
    w->acq = *a;
    a->step.label = NULL;     /* moved into w */
    a->step.argv = NULL;
    w->shape = shape;
    w->layout = shape.local ? LEDGER_CPU_BINDING : d->layout;
    w->since = now_wall ();
    w->owner_start = owner_start;
    return w;
}

/* Sent again after a restart: its place is the one berthd recorded for
 * this process (never a time the client states), held meanwhile by the
 * restored waiter it takes over; none: a new arrival. */
static void take_back_place (struct berthd *d, struct client *cl,
                             struct waiter *w)
{
    struct waiter *r = queue_take_restored (d->queue, cl->pid, cl->uid,
                                            client_start (cl), w->id);
    if (!r)
        return;
    w->wait_id = r->wait_id;
    r->wait_id = 0;           /* the request's wait from now on */
    w->resumed = true;
    w->since = r->since < w->since ? r->since : w->since;
    queue_free_waiter (d->queue, r);
    log_msg (LOG_INFO, "a request of pid %d takes back its place from "
             "%.1f s ago", (int) cl->pid, now_wall () - w->since);
}

OP_HANDLER (acquire)
{
    struct proto_acquire *a = &req->acquire;
    berth_error_t err;
    if (d->draining)
        return op_error (out, req->id, PROTO_ERR_SHUTTING_DOWN, "berthd is "
                         "shutting down; no new leases");
    /* a stated duration is checked against the job's end: wait for it */
    if (a->duration >= 0 && op_needs_end (d))
        return OP_AGAIN;
    if (!a->detach && lease_book_held (d->book, cl)
                      >= (size_t) d->cfg.max_leases_per_conn)
        return op_error (out, req->id, PROTO_ERR_BUSY, "this connection holds "
                         "%d leases, the limit; release some or detach them",
                         (int) lease_book_held (d->book, cl));
    /* the server reads no more while a pipelining connection is at its
     * bound; this is for a line already read past it */
    if (cl->nwaiting >= d->cfg.max_leases_per_conn)
        return op_error (out, req->id, PROTO_ERR_BUSY, "this connection has "
                         "%d acquires waiting, the limit", cl->nwaiting);
    if (a->resume && answer_again (d, cl, req, out))
        return OP_ANSWERED;
    struct waiter *w = waiter_make (d, a, req->id, &err);
    if (!w)
        return op_error (out, req->id, err.code, "%s", err.text);
    w->client = cl;
    w->pid = cl->pid;
    w->uid = cl->uid;
    w->start = client_start (cl);
    w->line = cl->line;
    w->line_len = cl->line_len;
    w->done = waiter_done;
    if (a->resume)
        take_back_place (d, cl, w);
    uint64_t lease = 0;
    enum queue_outcome o = queue_submit (d->queue, w, &lease, &err);
    w->line = NULL;
    switch (o) {
    case QUEUE_WAITS:
        w->cnext = cl->waiters;
        if (cl->waiters)
            cl->waiters->cprev = w;
        cl->waiters = w;
        cl->nwaiting++;
        return OP_WAITS;
    case QUEUE_GRANTED:
        if (w->recorded) {        /* recorded in the queue's round */
            out->line = w->answer;
            out->len = w->answer_len;
            w->answer = NULL;
        }
        else
            out->line = answer_line (d, w, lease, NULL, &out->len);
        break;
    case QUEUE_REFUSED:
        out->line = answer_line (d, w, 0, &err, &out->len);
        break;
    }
    queue_free_waiter (d->queue, w);
    return OP_ANSWERED;
}

/* ---- requests that waited when berthd went away ---- */

/* A restored waiter was granted (lease: 0 when its grant failed): the
 * lease is kept for its process, which sends the request again (resume)
 * and is answered with it, as with a grant whose reply a crash swallowed;
 * it ends if that process exits, or has not come back by the end of the
 * reclaim grace. */
static void restored_granted (struct berthd *d, struct waiter *w,
                              uint64_t lease)
{
    struct lease *ls = lease ? lease_book_find (d->book, lease) : NULL;
    if (!ls) {
        log_msg (LOG_INFO, "the request of pid %d from before the restart "
                 "could not be granted (its \"refused\" event says why)",
                 (int) w->pid);
        return;
    }
    double left = d->restored_until - now_mono ();
    ls->reclaim_by = now_wall () + (left > 0 ? left : 0);
    int gone = 0;
    if (lease_watch_grace (d->watch, ls->id, left > 0 ? left : 0) < 0
        || (!ls->detached && (gone = lease_watch_holder (d->watch, ls->id,
                                                          w->pid, w->start))
                             < 0))
        log_msg (LOG_ERR, "could not watch %s's requester (pid %d): it ends "
                 "only when released", ls->name, (int) w->pid);
    log_msg (LOG_INFO, "%s goes to the request of pid %d that waited before "
             "the restart, in its place: kept for it until it sends the "
             "request again (%.0f s at most)", ls->name, (int) w->pid,
             left > 0 ? left : 0);
    if (gone == 1)
        lease_end (d, ls, "disconnected");
}

/* The queue's later word on a restored waiter. */
static void restored_done (struct waiter *w, uint64_t lease,
                           const berth_error_t *err)
{
    struct berthd *d = w->arg;
    if (lease && !w->recorded) {
        char *line = NULL;
        size_t len;
        berth_error_t e;
        if (lease_grant (d, w, lease, &line, &len, &e) < 0)
            lease = 0;
        free (line);
    }
    if (lease)
        restored_granted (d, w, lease);
    else
        log_msg (LOG_INFO, "the request of pid %d from before the restart "
                 "is refused while it is away: %s", (int) w->pid,
                 err ? err->text : "its grant failed");
    queue_free_waiter (d->queue, w);
}

/* One request from the journal put back in its place. */
static void restore_wait (struct berthd *d, const struct place *pl)
{
    struct proto_request req;
    berth_error_t err;
    uint64_t lease = 0;
    struct waiter *w = NULL;
    if (proto_decode_request (pl->request, strlen (pl->request), &req,
                              &err) < 0
        || (req.op != PROTO_ACQUIRE
            && errprintf (&err, "it is not an acquire") < 0)
        || !(w = waiter_make (d, &req.acquire, req.id, &err))) {
        log_msg (LOG_WARNING, "the request of pid %d that waited before the "
                 "restart loses its place: %s", (int) pl->pid, err.text);
        journal_unwait (d->journal, pl->wait_id);
        proto_request_free (&req);
        return;
    }
    proto_request_free (&req);
    w->pid = pl->pid;
    w->uid = pl->uid;
    w->start = pl->start;
    w->done = restored_done;
    w->restored = true;
    w->resumed = true;
    w->wait_id = pl->wait_id;
    w->since = pl->since < w->since ? pl->since : w->since;
    switch (queue_submit (d->queue, w, &lease, &err)) {
    case QUEUE_WAITS:
        return;
    case QUEUE_GRANTED:
        restored_done (w, lease, NULL);
        return;
    case QUEUE_REFUSED:
        restored_done (w, 0, &err);
        return;
    }
}

int ops_restore_waits (struct berthd *d, berth_error_t *err)
{
    size_t n;
    const struct place *pl = journal_restored_places (d->journal, &n);
    d->restored_until = now_mono () + d->cfg.reclaim_grace;
    for (size_t i = 0; i < n; i++)
        restore_wait (d, &pl[i]);
    journal_forget_restored (d->journal);
    if (n)
        log_msg (LOG_NOTICE, "%zu requests waited when berthd went away: "
                 "they are back in their places (%d wait), and their "
                 "processes have %.0f s to send them again", n,
                 queue_waiting (d->queue), d->cfg.reclaim_grace);
    return queue_restored_until (d->queue, d->cfg.reclaim_grace, err);
}

OP_HANDLER (release)
{
    const char *name = req->release.lease;
    struct lease *ls = lease_book_lookup (d->book, name);
    if (!ls)
        return op_error (out, req->id, PROTO_ERR_NOT_FOUND, "no lease '%s': it "
                         "was never granted or is already released", name);
    struct client *holder = lease_book_holder (d->book, ls->id);
    if (holder && holder != cl)
        return op_error (out, req->id, PROTO_ERR_FORBIDDEN, "lease '%s' belongs "
                         "to another connection (pid %d); acquire it with "
                         "\"detach\": true to share it", name,
                         (int) ls->peer_pid);
    char id[sizeof (ls->name)];
    snprintf (id, sizeof (id), "%s", ls->name);
    lease_end_outcome (d, ls, "released", req->release.outcome);
    out->line = release_reply_line (req->id, id, &out->len);
    if (!out->line)
        op_json (out, proto_release_reply (req->id, id));
    return OP_ANSWERED;
}

/* After a restart, a connection-bound lease has no connection: its holder
 * reconnects and takes it back by id, and the lease is bound to the new
 * connection from then on (it ends when that one closes). */
OP_HANDLER (reclaim)
{
    const char *name = req->reclaim.lease;
    struct lease *ls = lease_book_lookup (d->book, name);
    if (!ls)
        return op_error (out, req->id, PROTO_ERR_NOT_FOUND, "no lease '%s': it "
                         "was never granted, is already released, or was "
                         "freed when no one reclaimed it within %.0f s of "
                         "berthd's restart", name, d->cfg.reclaim_grace);
    if (ls->detached)
        return op_error (out, req->id, PROTO_ERR_INVALID_REQUEST, "lease '%s' "
                         "is detached: it belongs to no connection, so there "
                         "is nothing to reclaim; release it by id when done",
                         name);
    struct client *holder = lease_book_holder (d->book, ls->id);
    if (holder && holder != cl)
        return op_error (out, req->id, PROTO_ERR_FORBIDDEN, "lease '%s' is held "
                         "by another open connection (pid %d); only a lease "
                         "orphaned by a restart of berthd can be reclaimed",
                         name, (int) ls->peer_pid);
    if (!holder && lease_book_held (d->book, cl)
                   >= (size_t) d->cfg.max_leases_per_conn)
        return op_error (out, req->id, PROTO_ERR_BUSY, "this connection holds "
                         "%d leases, the limit; release some first",
                         (int) lease_book_held (d->book, cl));
    /* the reply carries the env: built once the reclaim is accepted, and
     * before anything changes, so that a failure changes nothing */
    berth_error_t err;
    if (lease_env (d, ls, &err) < 0)
        return op_error (out, req->id, err.code, "%s", err.text);
    if (!holder && lease_rebind (d, cl, ls, &err) < 0)
        return op_error (out, req->id, PROTO_ERR_INTERNAL, "%s", err.text);
    struct proto_lease pl;
    lease_to_proto (ls, true, &pl);
    return op_json (out, proto_acquire_reply (req->id, &pl));
}

static int by_value (const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return x < y ? -1 : x > y;
}

/* A local step that srun placed reports, from inside the step, the CPU ids
 * it really got: from then on its lease shows those (status, BERTH_CORES of
 * a reclaim). The ledger keeps counting cores on the node, as for every
 * step Slurm places. */
OP_HANDLER (placed)
{
    const char *name = req->placed.lease;
    struct lease *ls = lease_book_lookup (d->book, name);
    int n = req->placed.ncores, *ids = req->placed.cores;
    if (!ls)
        return op_error (out, req->id, PROTO_ERR_NOT_FOUND, "no lease '%s': it "
                         "was never granted or is already released", name);
    if (cl->uid != 0 && cl->uid != ls->uid)
        return op_error (out, req->id, PROTO_ERR_FORBIDDEN, "lease '%s' belongs "
                         "to uid %d, not to this connection's uid %d", name,
                         (int) ls->uid, (int) cl->uid);
    if (!lease_local_launched (d, ls))
        return op_error (out, req->id, PROTO_ERR_INVALID_REQUEST, "lease '%s' is "
                         "%s: berthd chose its cores itself, so there is "
                         "nothing to report", name, ls->local
                         ? "a local step that its client binds" : "not local");
    struct placement_node *pn = &ls->placement.nodes[0];
    qsort (ids, (size_t) n, sizeof (*ids), by_value);
    for (int i = 1; i < n; i++)
        if (ids[i] == ids[i - 1])
            return op_error (out, req->id, PROTO_ERR_INVALID_REQUEST, "placed: "
                             "cores names CPU %d twice", ids[i]);
    if (n != pn->ncores)
        return op_error (out, req->id, PROTO_ERR_INVALID_REQUEST, "placed: %d "
                         "cores reported for %s, which holds %d on %s", n, name,
                         pn->ncores, pn->name);
    int ng = req->placed.ngpu_ids, *gids = req->placed.gpu_ids;
    if (ng >= 0 && ng != ls->placement.ngpu_ids)
        return op_error (out, req->id, PROTO_ERR_INVALID_REQUEST, "placed: %d "
                         "GPUs reported for %s, which holds %d", ng, name,
                         ls->placement.ngpu_ids);
    if (ng > 0) {
        int have = d->alloc->nodes[d->alloc->local_node].gpus;
        qsort (gids, (size_t) ng, sizeof (*gids), by_value);
        for (int i = 0; i < ng; i++)
            if ((i && gids[i] == gids[i - 1]) || gids[i] >= have)
                return op_error (out, req->id, PROTO_ERR_INVALID_REQUEST, "placed: "
                                 "gpu_ids names GPU %d %s", gids[i], i && gids[i]
                                 == gids[i - 1] ? "twice" : "that the node lacks");
    }
    /* journaled apart from the grant, whose ids stay the ledger's: a
     * restart shows these again */
    struct placement_node node = *pn;
    struct placement rep = ls->placement;
    node.cores = ids;
    rep.nodes = &node;
    if (ng > 0)
        rep.gpu_ids = gids;
    berth_error_t why;
    if (journal_placed (d->journal, ls, &rep, &why) < 0)
        log_msg (LOG_WARNING, "%s", why.text);
    if (ng > 0)
        memcpy (ls->placement.gpu_ids, gids, (size_t) ng * sizeof (*gids));
    memcpy (pn->cores, ids, (size_t) n * sizeof (*ids));
    ls->placed = true;
    /* BERTH_CORES follows the cores when next built */
    env_set_free (ls->env, ls->nenv);
    ls->env = NULL;
    ls->nenv = 0;
    char set[256], gset[256] = "none";
    idset_format (pn->cores, pn->ncores, set, sizeof (set));
    if (ls->placement.ngpu_ids > 0)
        idset_format (ls->placement.gpu_ids, ls->placement.ngpu_ids, gset, sizeof (gset));
    log_msg (LOG_INFO, "%s runs on cores %s and GPUs %s of %s", ls->name, set, gset,
             pn->name);
    notify_status_soon (d->notify);
    return op_json (out, proto_ok_reply (req->id, NULL));
}
