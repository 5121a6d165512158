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
#include "idset.h"

static const char *cut_code (const char *code)
{
    const char *k = code ? proto_error_code (code) : NULL;
    return k ? k : PROTO_ERR_UNSATISFIABLE;
}

struct unanswered {
    struct conn *c;
    const json_t *id;
    uint64_t start;
    struct lease *found;
};

static void find_unanswered (void *value, void *arg)
{
    struct lease *ls = value;
    struct unanswered *u = arg;
    if (!u->found && !ls->conn && ls->request && ls->peer_pid == u->c->pid
        && ls->uid == u->c->uid
        && (!ls->peer_start || !u->start || ls->peer_start == u->start)
        && json_equal (ls->request, u->id))
        u->found = ls;
}

/* An acquire sent again after a restart whose grant was journaled but whose
 * reply the crash swallowed: the same process asking under the same id
 * gets that lease (bound to this connection unless detached), not a second
 * one. 1 when answered so. */
static int answer_again (struct conn *c, struct proto_request *req)
{
    struct berthd *d = c->d;
    struct unanswered u = { c, req->id, conn_peer_start (c), NULL };
    berth_error_t err;
    idmap_each (d->leases, find_unanswered, &u);
    struct lease *ls = u.found;
    if (!ls || (!ls->detached && c->nleases >= d->cfg.max_leases_per_conn)
        || lease_env (d, ls, &err) < 0)
        return 0;
    if (!ls->detached)
        lease_rebind (d, c, ls);
    log_msg (LOG_INFO, "%s answers a request sent again after the restart "
             "(its reply was lost)", ls->name);
    struct proto_lease pl;
    lease_to_proto (ls, req->acquire.env, &pl);
    conn_send (c, proto_acquire_reply (req->id, &pl));
    return 1;
}

void handle_acquire (struct conn *c, struct proto_request *req)
{
    struct berthd *d = c->d;
    struct proto_acquire *a = &req->acquire;
    struct step_shape shape;
    berth_error_t err;
    char warn[512] = "";
    if (d->draining) {
        conn_send_error (c, req->id, PROTO_ERR_SHUTTING_DOWN, "berthd is "
                         "shutting down; no new leases");
        return;
    }
    /* a stated duration is checked against the job's end: wait for it */
    if (a->duration >= 0 && conn_await_end (c))
        return;
    if (!a->detach && c->nleases >= d->cfg.max_leases_per_conn) {
        conn_send_error (c, req->id, PROTO_ERR_BUSY, "this connection holds "
                         "%d leases, the limit; release some or detach them",
                         c->nleases);
        return;
    }
    if (a->resume && answer_again (c, req))
        return;
    if (a->owner_pid > 0 && process_gone (a->owner_pid)) {
        conn_send_error (c, req->id, PROTO_ERR_INVALID_REQUEST, "acquire: "
                         "owner_pid %d is not a running process", a->owner_pid);
        return;
    }
    if (step_cut_to_fit (&a->step, &d->capacity, &shape, warn, sizeof (warn),
                         &err) < 0) {
        conn_send_error (c, req->id, cut_code (err.code), "%s", err.text);
        events_emit (d->events, proto_event_refused (now_wall (),
                                                     a->step.label, &err));
        return;
    }
    if (warn[0])
        log_msg (LOG_INFO, "%s", warn);
    if (jobend_admit (d->jobend, a, warn, sizeof (warn), &err) < 0) {
        conn_send_error (c, req->id, PROTO_ERR_UNSATISFIABLE, "%s", err.text);
        events_emit (d->events, proto_event_refused (now_wall (),
                                                     a->step.label, &err));
        return;
    }
    if (a->step.argv && !shape.local && d->caps.placement == PLACEMENT_NONE) {
        conn_send_error (c, req->id, PROTO_ERR_UNSATISFIABLE, "this machine's "
                         "launcher (%s) cannot place a step on given cores, so "
                         "berthd cannot render its launch; run it as a local "
                         "step, or acquire without argv", d->caps.desc);
        return;
    }
    struct pending *p = calloc (1, sizeof (*p));
    if (!p) {
        conn_send_error (c, req->id, PROTO_ERR_INTERNAL, "out of memory");
        return;
    }
    p->conn = c;
    p->id = json_incref (req->id);
    p->acq = *a;
    a->step.label = NULL;     /* moved into p */
    a->step.argv = NULL;
    p->shape = shape;
    p->layout = shape.local ? LEDGER_CPU_BINDING : d->layout;
    p->added = now_mono ();
    p->since = now_wall ();
    /* Sent again after a restart: its place is the one berthd recorded for
     * this process (never a time the client states); none: a new arrival. */
    struct place pl;
    if (a->resume && journal_take_place (d, c, &pl) == 0) {
        p->wait_id = pl.wait_id;
        p->resumed = true;
        p->since = pl.since < p->since ? pl.since : p->since;
        log_msg (LOG_INFO, "a request of pid %d takes back its place from "
                 "%.1f s ago", (int) c->pid, now_wall () - p->since);
    }
    queue_submit (d, p);
}

void handle_release (struct conn *c, struct proto_request *req)
{
    struct berthd *d = c->d;
    const char *name = req->release.lease;
    struct lease *ls = lease_lookup (d, name);
    if (!ls) {
        conn_send_error (c, req->id, PROTO_ERR_NOT_FOUND, "no lease '%s': it "
                         "was never granted or is already released", name);
        return;
    }
    if (ls->conn && ls->conn != c) {
        conn_send_error (c, req->id, PROTO_ERR_FORBIDDEN, "lease '%s' belongs "
                         "to another connection (pid %d); acquire it with "
                         "\"detach\": true to share it", name,
                         (int) ls->conn->pid);
        return;
    }
    char id[sizeof (ls->name)];
    snprintf (id, sizeof (id), "%s", ls->name);
    lease_end (d, ls, "released");
    size_t len = 0;
    char *line = release_reply_line (req->id, id, &len);
    if (line)
        conn_send_line (c, line, len);
    else
        conn_send (c, proto_release_reply (req->id, id));
}

/* After a restart, a connection-bound lease has no connection: its holder
 * reconnects and takes it back by id, and the lease is bound to the new
 * connection from then on (it ends when that one closes). */
void handle_reclaim (struct conn *c, struct proto_request *req)
{
    struct berthd *d = c->d;
    const char *name = req->reclaim.lease;
    struct lease *ls = lease_lookup (d, name);
    if (!ls) {
        conn_send_error (c, req->id, PROTO_ERR_NOT_FOUND, "no lease '%s': it "
                         "was never granted, is already released, or was "
                         "freed when no one reclaimed it within %.0f s of "
                         "berthd's restart", name, d->cfg.reclaim_grace);
        return;
    }
    if (ls->detached) {
        conn_send_error (c, req->id, PROTO_ERR_INVALID_REQUEST, "lease '%s' "
                         "is detached: it belongs to no connection, so there "
                         "is nothing to reclaim; release it by id when done",
                         name);
        return;
    }
    if (ls->conn && ls->conn != c) {
        conn_send_error (c, req->id, PROTO_ERR_FORBIDDEN, "lease '%s' is held "
                         "by another open connection (pid %d); only a lease "
                         "orphaned by a restart of berthd can be reclaimed",
                         name, (int) ls->conn->pid);
        return;
    }
    if (!ls->conn && c->nleases >= d->cfg.max_leases_per_conn) {
        conn_send_error (c, req->id, PROTO_ERR_BUSY, "this connection holds "
                         "%d leases, the limit; release some first",
                         c->nleases);
        return;
    }
    /* the reply carries the env: built once the reclaim is accepted, and
     * before anything changes, so that a failure changes nothing */
    berth_error_t err;
    if (lease_env (d, ls, &err) < 0) {
        conn_send_error (c, req->id, err.code, "%s", err.text);
        return;
    }
    if (!ls->conn)
        lease_rebind (d, c, ls);
    struct proto_lease pl;
    lease_to_proto (ls, true, &pl);
    conn_send (c, proto_acquire_reply (req->id, &pl));
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
void handle_placed (struct conn *c, struct proto_request *req)
{
    struct berthd *d = c->d;
    const char *name = req->placed.lease;
    struct lease *ls = lease_lookup (d, name);
    int n = req->placed.ncores, *ids = req->placed.cores;
    if (!ls) {
        conn_send_error (c, req->id, PROTO_ERR_NOT_FOUND, "no lease '%s': it "
                         "was never granted or is already released", name);
        return;
    }
    if (c->uid != 0 && c->uid != ls->uid) {
        conn_send_error (c, req->id, PROTO_ERR_FORBIDDEN, "lease '%s' belongs "
                         "to uid %d, not to this connection's uid %d", name,
                         (int) ls->uid, (int) c->uid);
        return;
    }
    if (!lease_local_launched (d, ls)) {
        conn_send_error (c, req->id, PROTO_ERR_INVALID_REQUEST, "lease '%s' is "
                         "%s: berthd chose its cores itself, so there is "
                         "nothing to report", name, ls->local
                         ? "a local step that its client binds" : "not local");
        return;
    }
    struct placement_node *pn = &ls->placement.nodes[0];
    qsort (ids, (size_t) n, sizeof (*ids), by_value);
    for (int i = 1; i < n; i++)
        if (ids[i] == ids[i - 1]) {
            conn_send_error (c, req->id, PROTO_ERR_INVALID_REQUEST, "placed: "
                             "cores names CPU %d twice", ids[i]);
            return;
        }
    if (n != pn->ncores) {
        conn_send_error (c, req->id, PROTO_ERR_INVALID_REQUEST, "placed: %d "
                         "cores reported for %s, which holds %d on %s", n, name,
                         pn->ncores, pn->name);
        return;
    }
    int ng = req->placed.ngpu_ids, *gids = req->placed.gpu_ids;
    if (ng >= 0 && ng != ls->placement.ngpu_ids) {
        conn_send_error (c, req->id, PROTO_ERR_INVALID_REQUEST, "placed: %d "
                         "GPUs reported for %s, which holds %d", ng, name,
                         ls->placement.ngpu_ids);
        return;
    }
    if (ng > 0) {
        int have = d->alloc->nodes[d->alloc->local_node].gpus;
        qsort (gids, (size_t) ng, sizeof (*gids), by_value);
        for (int i = 0; i < ng; i++)
            if ((i && gids[i] == gids[i - 1]) || gids[i] >= have) {
                conn_send_error (c, req->id, PROTO_ERR_INVALID_REQUEST, "placed: "
                                 "gpu_ids names GPU %d %s", gids[i], i && gids[i]
                                 == gids[i - 1] ? "twice" : "that the node lacks");
                return;
            }
        memcpy (ls->placement.gpu_ids, gids, (size_t) ng * sizeof (*gids));
    }
    memcpy (pn->cores, ids, (size_t) n * sizeof (*ids));
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
    conn_send (c, proto_ok_reply (req->id, NULL));
}
